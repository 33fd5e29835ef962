"""What a Task publishes through the kernel: captured, redacted, made fetch-free.

Owns the two places output is caught. `task_sink`: the kernel-wide filter on `Session.send`
that redacts every message whose parent is a Task's cell and holds back a stream's tail that
could still grow into a secret (switched on per cell by `runtime/kernel_runtime.py`).
`output_router`: while `run_python` code runs, its thread's stdout/stderr and displays go to
the tool (and the threads the code starts are redacted even after the cell ended), each display
made fetch-free by `display_no_fetch` first. Where the tool puts what it caught is
`kernel_tools/`'s; the kernel's seams these stand on are `seams/kernel.py`'s (docs/seams.md).
"""
