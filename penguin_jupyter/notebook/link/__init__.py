"""The kernel's link to its notebook frontend.

Owns the comms to the notebook's pages that have the labextension (`frontend_bridge`: the
registry of connected pages and their hellos, which page serves the Task, request/ack/reply
matching across threads) and the per-kernel `NotebookLink` (`notebook_link`: the running cell, the cells a Task
inserted, cell sources for diffs, the remembered session, the "already completed" check). What
the notebook tools ask for is `kernel_tools/`'s, when a cell runs is `runtime/`'s and the
frontend side is the labextension's.
"""
