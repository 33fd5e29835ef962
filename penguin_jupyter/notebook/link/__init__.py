"""The kernel's link to its notebook frontend.

Owns the comm to the labextension (`frontend_bridge`: hello, request/reply matching across
threads) and the per-kernel `NotebookLink` (`notebook_link`: the running cell, the cells a Task
inserted, cell sources for diffs, the remembered session, the "already completed" check). What
the notebook tools ask for is `kernel_tools/`'s, when a cell runs is `runtime/`'s and the
frontend side is the labextension's.
"""
