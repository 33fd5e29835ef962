"""The part of IPython's shell the kernel tools rely on, as a Protocol.

Owns `KernelShell`: the user namespace the tools read and run code in, and `set_next_input`
(propose_cell). Whatever else a tool may find on a real shell (display publisher and formatter,
events, payload manager) it reads with `getattr` and a fallback, so a plain Python host or a
test's small shell works too. Building the shell is IPython's; which tools use it is
`kernel_tools()`'s.
"""

from __future__ import annotations

from typing import Protocol


class KernelShell(Protocol):
    """IPython's `InteractiveShell`, as far as the kernel tools are concerned."""

    user_ns: dict[str, object]

    def set_next_input(self, s: str, replace: bool = False) -> None: ...
