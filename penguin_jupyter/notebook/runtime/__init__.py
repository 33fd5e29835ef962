"""The cell runtime: what runs a `%%penguin` cell and a `%penguin` line command inside the kernel.

Owns the cell and its Task (`runner`, `cell`, `cell_record`), the per-kernel state and Sessions
(`kernel_runtime`, `kernel_sessions`, `prewarm`, `connection_file`), the approval policy and how
a cell asks a human (`approval_router`, `approval`), background subagents' live feed, option
parsing, line commands, workspace resolution, the prompt a cell sends (`expand`: `{name}` and
`{cell:…}`; `cell_history`: the running cell and the one before it), re-showing a saved
transcript and the redaction at the kernel's sink for a Task's cell (`task_sink`).
How a cell looks while it runs is `live/`'s, the finished transcript is `transcript/`'s, the
talk with the notebook frontend is `link/`'s and the kernel-aware tools live in `kernel_tools/`.
"""
