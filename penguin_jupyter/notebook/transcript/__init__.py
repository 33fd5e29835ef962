"""The static transcript: what a finished `%%penguin` cell leaves in the notebook.

Owns the bundle (`transcript_bundle`), the one grouping of wire messages into display blocks
(`transcript_model`), its HTML and plain-text renderings (`transcript_html`, `transcript_text`)
and the HTML safety every rendering passes (`markdown_html`, `no_fetch_html`). Pure rendering:
when a transcript is made and displayed is `runtime/`'s, the live widgets are `live/`'s and the
JupyterLab rendering of the bundle is the labextension's.
"""
