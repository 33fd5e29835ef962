"""The cell runtime: what runs a `%%penguin` cell and a `%penguin` line command inside the kernel.

Owns the cell and its Task (`runner`: the steps in order; `cell_start`: what the cell runs in —
options, replay, workspace, rules, the session; `cell`, `cell_record`), the per-kernel state and
Sessions (`kernel_runtime`, `kernel_sessions`, `prewarm`, `connection_file`), the approval policy
and how a cell asks a human (`approval_router`, `approval`), background subagents' live feed,
option parsing, line commands, workspace resolution, the prompt a cell sends (`cell_prompt`:
`{name}` and `{cell:…}`; `cell_history`: the running cell and the one before it) and re-showing a
saved transcript (`saved_transcript`). How a cell looks while it runs is `live/`'s, the finished
transcript is `transcript/`'s, the talk with the notebook frontend is `link/`'s, what a Task
publishes through the kernel is `output/`'s and the kernel-aware tools live in `kernel_tools/`.
"""
