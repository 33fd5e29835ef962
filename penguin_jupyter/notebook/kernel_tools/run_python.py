"""The `run_python` tool (rw): run code in the notebook's own namespace.

Owns the tool definition and the bridge between the worker thread (python_runner) and the
tool stream: stdout/stderr and the text of `display(...)` calls stream as deltas while the code
runs, then the last expression's repr, errors as `failed` with a trimmed traceback, figures and
displayed images as images. On abort or the
Environment's timeout the code is interrupted and the dask.distributed futures it started are
cancelled (`distributed_work`); the kernel and namespace stay usable. The
timeout is read through a getter each call (`--python-timeout` / `%penguin python-timeout`),
since the Environment takes it from `definition` when the call starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from typing import Annotated

from pydantic import Field

from ...environment.registry import declare
from ...environment.tool_arguments import DESCRIBE, CallDescription, NonBlankText, ShownInFull
from ...environment.tool_declaration import DeclaredTool, ToolArguments, ToolDeclaration
from ...environment.types import ToolDefinitionConfig, ToolExecutionContext, ToolFailed, ToolResult
from ...omni import OmniMessage, partial_tool_call_output
from ..kernel_shapes import KernelShell
from ..output.output_router import capture_current_thread, capture_refusal, release_current_thread
from ..undo.task_bracket import before_namespace_change
from .displayed import DisplayCapture
from .distributed_work import DistributedWork
from .propose_cell import NEEDS_CODE
from .python_runner import (
    RunOutcome,
    RunPythonInterrupted,
    abandon_thread,
    interrupt_thread,
    note_displayed,
    run_code,
)

_POLL_S = 0.05
_INTERRUPT_GRACE_S = 2.0



class RunPythonArguments(ToolArguments):
    description: Annotated[CallDescription, DESCRIBE] = None
    code: Annotated[
        NonBlankText,
        Field(description="Python source to execute. The value of a final bare expression is returned."),
        NEEDS_CODE,
        ShownInFull(),
    ]


DECLARATION = ToolDeclaration(
    name="run_python",
    description=(
        "Run Python code inside the user's Jupyter kernel, in the same namespace as the notebook "
        "cells: variables you create stay available to the user and to later calls. Returns "
        "printed output, what display() shows, the repr of the last expression, errors with their "
        "traceback, and matplotlib figures and displayed images as images. Prefer this over shell "
        "commands for data work."
    ),
    arguments=RunPythonArguments,
    permission="rw",
    timeout_ms=120_000,
    in_kernel=True,
    saved_rule="never",  # runs code: "Always allow (this session)" only
)
declare(DECLARATION)  # `registry.declaration_of` answers for it from import on
DEFINITION = DECLARATION.definition()


def cancelled_note(count: int, last_char: str) -> str:
    plural = "" if count == 1 else "s"
    lead = "\n" if last_char not in ("", "\n") else ""
    return f"{lead}[interrupted: cancelled {count} Dask future{plural} this call had started]\n"


def seconds_to_ms(seconds: float) -> int:
    """0 stays 0 (no limit); anything above rounds to at least 1 ms."""
    return 0 if seconds == 0 else max(1, round(seconds * 1000))


def _closing_items(outcome: RunOutcome, last_char: str, tool_call_id: str) -> list[OmniMessage | ToolResult]:
    """After a finished run: the last expression's repr and the error as one delta, then the
    result; code that raised is `ToolFailed` with that text."""
    tail = [text for text in (outcome.value_text, outcome.error) if text is not None]
    separator = "\n" if last_char not in ("", "\n") else ""
    text = separator + "\n".join(tail) if tail else ""
    if outcome.error is not None:
        raise ToolFailed(text)
    items: list[OmniMessage | ToolResult] = []
    if text:
        items.append(partial_tool_call_output("delta", text, tool_call_id))
    items.append(ToolResult(stop_reason="completed", images=outcome.images or None))
    return items


def _resolve_once(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


class RunPythonTool(DeclaredTool[RunPythonArguments]):
    declaration = DECLARATION

    def __init__(self, shell: KernelShell, timeout_ms: Callable[[], int] | None = None) -> None:
        self._shell = shell
        self._timeout_ms = timeout_ms
        self._definition = DEFINITION

    @property
    def definition(self) -> ToolDefinitionConfig:
        """DEFINITION with the current timeout (0 = none); the Environment reads it per call."""
        wanted = self._timeout_ms() if self._timeout_ms is not None else DEFINITION.timeout_ms
        if wanted != self._definition.timeout_ms:
            self._definition = DEFINITION.model_copy(update={"timeout_ms": wanted})
        return self._definition

    async def run(self, arguments: RunPythonArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        code = arguments.code
        refused = capture_refusal(self._shell)
        if refused is not None:  # what the code displays could not be made fetch-free: it does not run
            raise ToolFailed(refused)
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[str] = asyncio.Queue()
        done = loop.create_future()
        outcome = RunOutcome()  # filled by the worker; displayed images land in outcome.images
        finished: list[bool] = []
        last_sent = [""]

        def emit(text: str) -> None:
            last_sent[0] = text[-1:] or last_sent[0]
            loop.call_soon_threadsafe(chunks.put_nowait, text)

        def emit_display(text: str) -> None:  # a displayed object starts on its own line
            emit(("\n" if last_sent[0] not in ("", "\n") else "") + text)

        def worker() -> None:
            capture_current_thread(
                emit,
                self._shell,
                DisplayCapture(emit_display, outcome.images),
                lambda value: note_displayed(value, outcome),
                redactor=ctx.redactor,
            )
            try:
                run_code(code, self._shell.user_ns, outcome)
                finished.append(True)
            except RunPythonInterrupted:  # the interrupt landed just outside run_code's own handler
                outcome.interrupted = True
                finished.append(True)
            finally:
                release_current_thread()
                # the loop may be gone (a timed-out call whose code ran on after its Task ended)
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(_resolve_once, done)
                    loop.call_soon_threadsafe(chunks.put_nowait, "")  # wake the reader: no 50 ms poll wait

        before_namespace_change(self._shell)  # undo's baseline (docs/undo.md "Kernel variables")
        distributed = DistributedWork.snapshot()
        thread = threading.Thread(target=worker, name="penguin-run-python", daemon=True)
        thread.start()
        last_char = ""
        interrupted = False
        while not done.done() or not chunks.empty():
            if ctx.signal is not None and ctx.signal.aborted and not interrupted:
                interrupted = True
                interrupt_thread(thread)
                # Cancelling the call's Dask futures also frees a worker blocked on their results.
                cancelled = await asyncio.to_thread(distributed.cancel_new)
                if cancelled:
                    yield partial_tool_call_output(
                        "delta", cancelled_note(cancelled, last_char), ctx.tool_call_id
                    )
                try:
                    await asyncio.wait_for(asyncio.shield(done), _INTERRUPT_GRACE_S)
                except TimeoutError:
                    abandon_thread(thread)  # stuck in native code: leave the daemon thread behind
                    break
            try:
                text = await asyncio.wait_for(chunks.get(), _POLL_S)
            except TimeoutError:
                continue
            if not text:
                continue
            last_char = text[-1:] or last_char
            yield partial_tool_call_output("delta", text, ctx.tool_call_id)
        if not finished:
            outcome.interrupted = True
        if outcome.interrupted or interrupted:
            yield ToolResult(stop_reason="aborted")
            return
        for item in _closing_items(outcome, last_char, ctx.tool_call_id):
            yield item
