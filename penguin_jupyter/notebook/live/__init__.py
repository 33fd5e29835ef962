"""The live view: what a `%%penguin` cell shows while its Task runs.

Owns the view contract (`cell_view`), the ipywidgets view (`live_view` and its `live_*` parts:
header, tool cards, streamed and split text blocks, secret hold-back, throttled updates, shared
layouts, paced teardown), the approval card's row of buttons (`approval_row`), the plain-text view for terminals (`plain_view`) and the notice texts
both share (`view_notices`). When the cell runs and what it keeps is `runtime/`'s; the static
transcript that replaces the view (and the Markdown / no-fetch HTML it borrows) is `transcript/`'s.
"""
