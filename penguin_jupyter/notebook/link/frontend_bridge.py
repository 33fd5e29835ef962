"""The kernel end of the notebook bridge: one comm per notebook page that has the labextension.

Owns the registry of connected pages and request/reply matching. `%load_ext` registers the kernel
target `penguin-notebook-page` and announces itself on a kernel-opened comm (`penguin-notebook`);
every page with the extension — the ones open now, and any page that attaches later (reload, a
second window, a collaborator, after `%load_ext` or a kernel restart) — opens its own comm to the
kernel target with its hello (page id, notebook path, server root, the jupyter session id of its
kernel connection, subshell support, the notebook's `penguin` metadata). A request goes to one
page only: the Task's page (the one whose session id is in the running cell's execute_request
header), else another page of the same notebook, else it fails at once. A page that goes away is
noticed by its comm's close, or by a request it does not acknowledge within `ACK_TIMEOUT_S` /
pings it stops answering during a long operation. Replies may arrive on a kernel subshell thread,
so they reach the waiting coroutine only through its loop's `call_soon_threadsafe`. What the
requests mean is left to the notebook tools (kernel_tools/notebook_cells.py) and the cell runtime;
the protocol is described in docs/notebook-tools.md ("The bridge protocol").
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..kernel_shapes import PageHello
from .waits import wait_sliced

if TYPE_CHECKING:  # (typing only: `%load_ext` imports this module and must stay light)
    from ...interfaces import AbortSignal
    from ..kernel_shapes import Comm, JsonObject

log = logging.getLogger(__name__)

COMM_TARGET = "penguin-notebook"  # kernel → pages: "the extension is loaded, connect"
PAGE_TARGET = "penguin-notebook-page"  # page → kernel: one comm per connected page
BRIDGE_VERSION = 2
HELLO_WAIT_S = 2.0  # a page that just opened or reloaded connects within this (once per page)
REQUEST_TIMEOUT_S = 30.0
ACK_TIMEOUT_S = 4.0  # a page acknowledges a request as soon as it receives it
PING_EVERY_S = 2.0  # during a long operation (run) the kernel pings the page …
GONE_AFTER_S = 10.0  # … and gives up on it when it has said nothing for this long
STEP_S = 0.1
_BRIDGE_ATTR = "_penguin_bridge"  # where `%load_ext` keeps the bridge, on the shell


class BridgeError(Exception):
    """A bridge request failed; `str()` is one line for the model or the user."""


class PageGone(BridgeError):
    """No page (or not the page asked) can carry out the request: it was closed or reloaded."""


class _NotTaken(PageGone):
    """The page went away before it acknowledged the request: nothing of it was carried out."""


@dataclass
class Page:
    """One connected notebook page (a browser window or a collaborator's tab)."""

    comm: Comm
    hello: PageHello
    last_seen: float = field(default_factory=time.monotonic)
    gone: bool = False

    @property
    def session(self) -> str:
        return str(self.hello.get("session") or "")

    @property
    def path(self) -> str:
        return str(self.hello.get("path") or "")


class NotebookBridge:
    """One kernel's comms to its notebook's pages (None of it exists outside a kernel)."""

    def __init__(self) -> None:
        self._announce: Comm | None = None
        self._pages: dict[str, Page] = {}  # comm id → page, in connection order
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[asyncio.Future[object], Page]] = {}
        self._acked: set[int] = set()
        self.task_session = ""  # the jupyter session id of the page that ran the Task's cell
        self.task_path = ""  # that page's notebook path (another page of it may take over)
        self.closed = False
        self._gave_up_on: set[str] = set()  # sessions whose page never said hello

    # --- lifecycle -----------------------------------------------------------------------
    def open(self) -> None:
        """Register the page target, then announce (pages with the labextension connect)."""
        from comm import create_comm, get_comm_manager

        get_comm_manager().register_target(PAGE_TARGET, self._on_page_open)
        self._announce = create_comm(target_name=COMM_TARGET, data={"version": BRIDGE_VERSION, "target": PAGE_TARGET})

    def close(self) -> None:
        self.closed = True
        with self._lock:
            pages = list(self._pages.values())
        for page in pages:
            try:
                page.comm.close()
            except Exception:  # closing a comm whose page is gone: nothing left to tell
                pass
            self._page_gone(page)
        if self._announce is not None:
            try:
                self._announce.close()
            except Exception:  # closing a comm whose page is gone: nothing left to tell
                pass

    def _on_page_open(self, comm: Comm, msg: JsonObject) -> None:
        data = _comm_data(msg)
        header = msg.get("header", {}) if isinstance(msg, dict) else {}
        if self.closed or not isinstance(data, dict) or data.get("op") != "hello":
            comm.close()
            return
        hello = _hello_of(data, header)
        page = Page(comm=comm, hello=hello)
        with self._lock:
            self._pages[comm.comm_id] = page
        comm.on_msg(lambda m: self._on_msg(page, m))
        comm.on_close(lambda _m: self._page_gone(page))
        self._gave_up_on.discard(hello["session"])
        log.debug("notebook page %s connected (%s)", hello.get("page_id"), hello.get("path"))

    def _page_gone(self, page: Page) -> None:
        """Forget a page; the requests it was carrying out fail at once."""
        page.gone = True
        with self._lock:
            if self._pages.get(page.comm.comm_id) is page:
                del self._pages[page.comm.comm_id]
            failed = [(rid, self._pending[rid][0]) for rid, (_f, p) in list(self._pending.items()) if p is page]
            for rid, _future in failed:
                del self._pending[rid]
            taken = {rid for rid, _future in failed if rid in self._acked}
        for rid, future in failed:
            gone = PageGone if rid in taken else _NotTaken
            _settle(future, gone("the notebook page went away (closed or reloaded) before it answered"))

    # --- incoming ------------------------------------------------------------------------
    def _on_msg(self, page: Page, msg: JsonObject) -> None:
        page.last_seen = time.monotonic()
        data = _comm_data(msg)
        if not isinstance(data, dict):
            return
        if data.get("op") == "hello":  # the page renamed its notebook or reconnected
            page.hello = _hello_of(data, msg.get("header", {}))
            return
        request_id = data.get("id")
        if not isinstance(request_id, int):
            return  # a pong: last_seen is all it carries
        with self._lock:
            if data.get("ack"):
                self._acked.add(request_id)
                return
            entry = self._pending.pop(request_id, None)
        if entry is None:
            return
        if data.get("ok"):
            _settle(entry[0], data.get("result"))
        else:
            _settle(entry[0], BridgeError(str(data.get("error") or "the frontend refused the request")))

    # --- which pages are there -----------------------------------------------------------
    def pages(self) -> list[Page]:
        with self._lock:
            return [page for page in self._pages.values() if not page.gone]

    def task_page(self) -> Page | None:
        """The page that carries out requests now: the Task's page, else the newest page of the
        same notebook, else (no Task page known) the newest page; None when no page is left."""
        pages = self.pages()
        if self.task_session:
            own = [page for page in pages if page.session == self.task_session]
            if own:
                return own[-1]
        if self.task_path:
            pages = [page for page in pages if page.path == self.task_path]
        return pages[-1] if pages else None

    def follow_task(self, session: str) -> None:
        """A Task starts in the cell whose execute_request carried `session` (its page's id)."""
        self.task_session = session
        page = self.task_page()
        self.task_path = page.path if page is not None else ""

    @property
    def connected(self) -> bool:
        return not self.closed and self.task_page() is not None

    @property
    def hello(self) -> JsonObject:
        page = self.task_page()
        return dict(page.hello) if page is not None else {}

    @property
    def can_run_cells(self) -> bool:
        return self.connected and bool(self.hello.get("subshells"))

    async def wait_connected(self, session: str = "", timeout_s: float = HELLO_WAIT_S) -> bool:
        """Wait (interruptibly) for the hello of the page whose kernel connection is `session`
        (any page when empty); whether a page is connected afterwards.

        A page that just opened or reloaded connects a moment after it attached; a kernel client
        that ignores comms (nbclient, jupyter_client) is waited for once per session only."""
        if self.closed or session in self._gave_up_on:
            return self.connected
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not self.closed and loop.time() < deadline:
            if any(page.session == session for page in self.pages()) or (not session and self.connected):
                return True
            await asyncio.sleep(0.02)
        self._gave_up_on.add(session)
        return self.connected

    # --- requests ------------------------------------------------------------------------
    async def request(
        self, op: str, signal: AbortSignal | None = None, timeout_s: float | None = REQUEST_TIMEOUT_S, **args: object
    ) -> object:
        """Send `{id, op, **args}` to the Task's page and wait for its result (BridgeError on
        failure, PageGone at once when no page is left or the page stopped answering). A request
        the page never took (closed or stale before its acknowledgement) goes once to the next
        page of the notebook, if there is one."""
        for attempt in range(2):
            page = self.task_page()
            if page is None or self.closed:
                raise PageGone("no notebook page is connected (the page was closed or reloaded; reopen the notebook)")
            try:
                return await self._send(page, op, signal, timeout_s, args)
            except _NotTaken:
                if attempt or self.task_page() is None:
                    raise
        raise AssertionError("unreachable")

    async def _send(
        self, page: Page, op: str, signal: AbortSignal | None, timeout_s: float | None, args: dict[str, object]
    ) -> object:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[object] = loop.create_future()
        request_id = next(self._ids)
        with self._lock:
            self._pending[request_id] = (future, page)
        started = time.monotonic()
        try:
            page.comm.send({"id": request_id, "op": op, **args})
            await self._wait(page, request_id, future, op, signal, timeout_s, started)
            return future.result()
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
                self._acked.discard(request_id)

    async def _wait(
        self,
        page: Page,
        request_id: int,
        future: asyncio.Future[object],
        op: str,
        signal: AbortSignal | None,
        timeout_s: float | None,
        started: float,
    ) -> None:
        last_ping = started
        while not await wait_sliced(future, signal=signal, timeout_s=STEP_S):
            if signal is not None and signal.aborted:
                raise BridgeError("aborted")
            now = time.monotonic()
            if timeout_s is not None and now - started > timeout_s:
                raise BridgeError(f"the notebook page did not answer {op!r} within {timeout_s:.0f} s")
            if request_id not in self._acked:
                if now - started > ACK_TIMEOUT_S:
                    self._drop(page)
                    raise _NotTaken(f"the notebook page did not take {op!r} within {ACK_TIMEOUT_S:.0f} s (closed or reloaded)")
                continue
            if now - page.last_seen > GONE_AFTER_S:
                self._drop(page)
                raise PageGone(f"the notebook page stopped answering during {op!r} (closed or reloaded)")
            if now - last_ping >= PING_EVERY_S:
                last_ping = now
                try:
                    page.comm.send({"op": "ping"})
                except Exception:  # a ping to a page that went away; the ack timeout tells
                    pass

    def _drop(self, page: Page) -> None:
        log.info("notebook page %s stopped answering: forgotten", page.hello.get("page_id"))
        try:
            page.comm.close()
        except Exception:  # closing a comm whose page is gone: nothing left to tell
            pass
        self._page_gone(page)


def _comm_data(msg: object) -> object:
    """The `data` a comm message carries (`{}` when it carries none)."""
    content = msg.get("content", {}) if isinstance(msg, dict) else {}
    return content.get("data", {}) if isinstance(content, dict) else {}


def _hello_of(data: JsonObject, header: object) -> PageHello:
    """The hello's documented fields; the session id from the message header when the page's
    kernel connection put it there (the hello's own field otherwise)."""
    session = header.get("session") if isinstance(header, dict) else None
    if not (isinstance(session, str) and session):
        session = data.get("session")
    metadata = data.get("metadata")
    return PageHello(
        page_id=str(data.get("page_id") or ""),
        path=str(data.get("path") or ""),
        server_root=str(data.get("server_root") or ""),
        session=str(session or ""),
        frontend=str(data.get("frontend") or ""),
        subshells=bool(data.get("subshells")),
        metadata=metadata if isinstance(metadata, dict) else None,
    )


def _settle(future: asyncio.Future[object], value: object) -> None:
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


def parent_session(shell: object) -> str:
    """The jupyter session id in the header of the execution in progress (which page sent it)."""
    kernel = getattr(shell, "kernel", None)
    try:
        parent = kernel.get_parent() if kernel is not None else None
    except Exception:  # a kernel without a parent message: no page session
        return ""
    header = parent.get("header") if isinstance(parent, dict) else None
    value = header.get("session") if isinstance(header, dict) else None
    return value if isinstance(value, str) else ""


def bridge_of(shell: object) -> NotebookBridge | None:
    """The bridge opened for this shell at `%load_ext`, if any."""
    bridge = getattr(shell, _BRIDGE_ATTR, None) if shell is not None else None
    return bridge if isinstance(bridge, NotebookBridge) else None


def current_hello(shell: object = None) -> JsonObject | None:
    """The hello of the page that serves this kernel's Task now (see docs/notebook-tools.md,
    "The bridge protocol"): page_id, path (relative to the server root), server_root (absolute,
    may be empty), session, frontend, subshells, metadata; None when no page is connected."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return None
        shell = get_ipython()
    bridge = bridge_of(shell)
    if bridge is None or not bridge.connected:
        return None
    return bridge.hello


def open_bridge(shell: object) -> NotebookBridge | None:
    """Open (once per kernel) the bridge; None outside a kernel or on failure."""
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    existing = bridge_of(shell)
    if existing is not None and not existing.closed:
        return existing
    bridge = NotebookBridge()
    try:
        bridge.open()
    except Exception:  # without the bridge the extension still works (headless tools); logged
        log.warning("penguin: the notebook bridge could not open", exc_info=True)
        return None
    setattr(shell, _BRIDGE_ATTR, bridge)
    return bridge
