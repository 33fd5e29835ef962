"""IPython extension hooks: `%%penguin` / `%penguin` and the input transformer behind them.

Owns registration only. A cell whose first line is `%%penguin …` is rewritten (before IPython's
own magic handling) into a top-level `await` of `runner.run_cell`, and a line `%penguin …`
into `await line_commands.run_line(…)`, so the cell shows `[*]` until the Task ends while
widget clicks keep arriving (ipykernel ≥ 7.4). The registered magics are a fallback for
direct `run_cell_magic` / `run_line_magic` calls.

Loading also starts the pre-warm (`prewarm.py`): a background thread that imports what the first
`%%penguin` cell needs, so the first cell sends its request at once; `%load_ext` neither waits for
it nor fails when it fails. And it checks the kernel's seams (`seams/kernel.py`): a protection
that is off is said under the `%load_ext` cell, one line each (docs/seams.md).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Coroutine
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

from .runtime.connection_file import register_connection_file
from .runtime.prewarm import start_prewarm

log = logging.getLogger(__name__)

CELL_MAGIC = re.compile(r"^%%penguin(?=\s|$)(.*)$")
LINE_MAGIC = re.compile(r"^(\s*)%penguin(?=\s|$)(.*)$")
RUNNER = "__import__('penguin_jupyter.notebook.runtime.runner', fromlist=['run_cell']).run_cell"
LINER = "__import__('penguin_jupyter.notebook.runtime.line_commands', fromlist=['run_line']).run_line"


def transform_penguin_cell(lines: list[str]) -> list[str]:
    """IPython cleanup transform: `%%penguin` cells and `%penguin` lines become awaits."""
    if not lines:
        return lines
    first = CELL_MAGIC.match(lines[0].rstrip("\n"))
    if first is not None:
        body = "".join(lines[1:])
        return [f"await {RUNNER}({first.group(1).strip()!r}, {body!r})\n"]
    out = []
    for line in lines:
        match = LINE_MAGIC.match(line.rstrip("\n"))
        out.append(f"{match.group(1)}await {LINER}({match.group(2).strip()!r})\n" if match else line)
    return out


def _run_sync(coro: Coroutine[object, object, None]) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coro)
        return
    coro.close()
    from .runtime.user_lines import tell

    tell("penguin: put %%penguin / %penguin at the start of a cell line (it must be awaited)")


def _cell_magic(line: str, cell: str) -> None:
    from .runtime.runner import run_cell

    _run_sync(run_cell(line, cell or ""))


def _line_magic(line: str) -> None:
    from .runtime.line_commands import run_line

    _run_sync(run_line(line))


def load_ipython_extension(ip: InteractiveShell) -> None:
    transforms = ip.input_transformers_cleanup
    if transform_penguin_cell not in transforms:
        transforms.append(transform_penguin_cell)
    # IPython's stubs type this method through a decorator that hides its signature.
    register = ip.register_magic_function
    register(_cell_magic, magic_kind="cell", magic_name="penguin")  # type: ignore[call-arg,arg-type]
    register(_line_magic, magic_kind="line", magic_name="penguin")  # type: ignore[call-arg,arg-type]
    register_connection_file()
    _open_notebook_link(ip)
    _check_kernel_seams()
    start_prewarm()


def _check_kernel_seams() -> None:
    """Run the kernel seams' checks now; say each rule or protection that is off (one line each)."""
    from ..seams import host_tells_user, off_lines
    from ..seams.kernel import DISPLAY_CAPTURE, DISPLAY_STREAM, SESSION_SEND
    from .runtime.user_lines import tell

    host_tells_user()
    for seam in (SESSION_SEND, DISPLAY_CAPTURE, DISPLAY_STREAM):
        seam.enabled()
    for line in off_lines():
        tell(line)


def _open_notebook_link(ip: InteractiveShell) -> None:
    """Open the comm to the notebook's frontend (the agent's notebook tools); never fails the load."""
    try:
        from .link.notebook_link import open_link

        open_link(ip)
    except Exception as exc:  # the extension still works without the notebook tools
        log.warning("penguin: notebook tools unavailable: %s", exc)


def unload_ipython_extension(ip: InteractiveShell) -> None:
    transforms = ip.input_transformers_cleanup
    while transform_penguin_cell in transforms:
        transforms.remove(transform_penguin_cell)
    magics = ip.magics_manager.magics
    magics["cell"].pop("penguin", None)
    magics["line"].pop("penguin", None)
    from .runtime.kernel_runtime import drop_kernel_runtime

    drop_kernel_runtime(ip)
