"""The kernel and notebook tools' declarations, declared as a kernel's session declares them
(`registry.declaration_of` answers for a tool once an Environment registered it, or its module
was imported): for tests that judge or draw calls of these tools without building a session."""

from __future__ import annotations


def declare_notebook_tools() -> None:
    import penguin_jupyter.notebook.kernel_tools.inspect_variables
    import penguin_jupyter.notebook.kernel_tools.notebook_cells
    import penguin_jupyter.notebook.kernel_tools.propose_cell
    import penguin_jupyter.notebook.kernel_tools.run_python  # noqa: F401
