"""The kernel end of the notebook bridge: a comm to the labextension in the notebook's frontend.

Owns the comm (target `penguin-notebook`, opened at `%load_ext`), the frontend's `hello` (which
frontend, the notebook's path, whether the kernel has subshells, the notebook's `penguin`
metadata) and request/reply matching. Replies may arrive on a kernel subshell thread, so they
reach the waiting coroutine only through its loop's `call_soon_threadsafe`. What the requests
mean is left to the notebook tools (kernel_tools/notebook_cells.py) and the cell runtime; the
protocol is described in docs/notebook-tools.md.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (typing only: `%load_ext` imports this module and must stay light)
    from ...interfaces import AbortSignal
from ..runtime.waits import SLICE_S, wait_sliced

COMM_TARGET = "penguin-notebook"
BRIDGE_VERSION = 1
HELLO_WAIT_S = 1.0
REQUEST_TIMEOUT_S = 30.0


class BridgeError(Exception):
    """A bridge request failed; `str()` is one line for the model or the user."""


class NotebookBridge:
    """One kernel's comm to its notebook's frontend (None of it exists outside a kernel)."""

    def __init__(self) -> None:
        self._comm: Any = None
        self._hello: dict[str, Any] | None = None
        self._hello_seen = threading.Event()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.closed = False
        self._gave_up = False

    # --- lifecycle -----------------------------------------------------------------------
    def open(self) -> None:
        """Open the comm (a frontend with the labextension answers with `hello`)."""
        from comm import create_comm

        self._comm = create_comm(target_name=COMM_TARGET, data={"version": BRIDGE_VERSION})
        self._comm.on_msg(self._on_msg)
        self._comm.on_close(self._on_close)

    def close(self) -> None:
        if self._comm is not None and not self.closed:
            try:
                self._comm.close()
            except Exception:
                pass
        self._on_close(None)

    def _on_close(self, _msg: Any) -> None:
        self.closed = True
        self._hello = None
        self._hello_seen.clear()
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            _settle(future, BridgeError("the notebook frontend went away"))

    # --- incoming ------------------------------------------------------------------------
    def _on_msg(self, msg: dict[str, Any]) -> None:
        data = msg.get("content", {}).get("data", {}) if isinstance(msg, dict) else {}
        if not isinstance(data, dict):
            return
        if data.get("op") == "hello":
            self._gave_up = False
            self._hello = data
            self._hello_seen.set()
            return
        request_id = data.get("id")
        with self._lock:
            future = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if future is None:
            return
        if data.get("ok"):
            _settle(future, data.get("result"))
        else:
            _settle(future, BridgeError(str(data.get("error") or "the frontend refused the request")))

    # --- what the frontend said ----------------------------------------------------------
    @property
    def connected(self) -> bool:
        return self._hello is not None and not self.closed

    @property
    def hello(self) -> dict[str, Any]:
        return dict(self._hello or {})

    @property
    def can_run_cells(self) -> bool:
        return self.connected and bool(self.hello.get("subshells"))

    async def wait_connected(self, timeout_s: float = HELLO_WAIT_S) -> bool:
        """Wait (interruptibly) for the frontend's hello; False when none came in time.

        A frontend without the extension closes the comm at once, so this ends early there; a
        kernel client that ignores comms (nbclient, jupyter_client) is waited for once only."""
        if self._comm is None or self.closed or self._gave_up:
            return self.connected
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not self._hello_seen.is_set() and not self.closed and loop.time() < deadline:
            await asyncio.sleep(min(0.02, SLICE_S))
        self._gave_up = not self.connected
        return self.connected

    # --- requests ------------------------------------------------------------------------
    async def request(
        self, op: str, signal: AbortSignal | None = None, timeout_s: float | None = REQUEST_TIMEOUT_S, **args: Any
    ) -> Any:
        """Send `{id, op, **args}` and wait for the reply's result (BridgeError on failure)."""
        if not self.connected:
            raise BridgeError("no notebook frontend with the penguin extension is connected")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        request_id = next(self._ids)
        with self._lock:
            self._pending[request_id] = future
        try:
            self._comm.send({"id": request_id, "op": op, **args})
            if not await wait_sliced(future, signal=signal, timeout_s=timeout_s):
                if signal is not None and signal.aborted:
                    raise BridgeError("aborted")
                raise BridgeError(f"the notebook frontend did not answer {op!r} within {timeout_s:.0f} s")
            return future.result()
        finally:
            with self._lock:
                self._pending.pop(request_id, None)


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    def apply() -> None:
        if future.done():
            return
        if isinstance(value, BaseException):
            future.set_exception(value)
        else:
            future.set_result(value)

    try:
        future.get_loop().call_soon_threadsafe(apply)
    except RuntimeError:  # the loop is closed: nobody waits any more
        pass


def bridge_of(shell: Any) -> NotebookBridge | None:
    """The bridge opened for this shell at `%load_ext`, if any."""
    bridge = getattr(shell, "_penguin_bridge", None) if shell is not None else None
    return bridge if isinstance(bridge, NotebookBridge) else None


def open_bridge(shell: Any) -> NotebookBridge | None:
    """Open (once per kernel) the comm to the frontend; None outside a kernel or on failure."""
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    existing = bridge_of(shell)
    if existing is not None and not existing.closed:
        return existing
    bridge = NotebookBridge()
    try:
        bridge.open()
    except Exception:
        return None
    shell._penguin_bridge = bridge
    return bridge
