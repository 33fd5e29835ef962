"""The kernel's link to its notebook frontend.

Owns the comms to the notebook's pages that have the labextension (`frontend_bridge`: the
registry of connected pages and their hellos, which page serves the Task, request/ack/reply
matching across threads) and the per-kernel `NotebookLink` (`notebook_link`: the running cell, the cells a Task
inserted, cell sources for diffs, the remembered session, the "already completed" check), and
its plumbing: where the notebook is (`notebook_place`), the saved .ipynb (`notebook_file`, read
once per version by `saved_notebook_cache`) and which thread runs an agent-run cell
(`cell_interrupts`). What the notebook tools ask for is `kernel_tools/`'s, when a cell runs is
`runtime/`'s and the frontend side is the labextension's.
"""
