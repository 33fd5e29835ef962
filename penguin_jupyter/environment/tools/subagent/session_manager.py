"""SubagentSessionManager: the per-Environment registry of managed subagent sessions
(docs/subagents.md "Spawn rules" concurrency, docs/environment.md "Background completion reports" reports, docs/subagents.md "Rounds" live tap).

Owns `subagent-<last 8 of child session id>` ids, the admission cap of 8 (only idle sessions
are evicted; running ones never), kill/dispose, the per-round completion reports of
background launches (through the Environment's NoticeHub) and the single listener for live
background child messages (buffered until a listener attaches, dropped after dispose).
`ensure_subagent_sessions` gives an Environment's services their one manager.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from ....interfaces import EnvironmentServices
from ....omni import OmniMessage
from ...notices import BackgroundEvent, NoticeHub, report_label, report_output
from .limits import IDLE_REAP_S, MAX_BACKGROUND_SUBAGENTS, MESSAGE_BUFFER_CAP, SUBAGENT_ID_PREFIX
from .session import ManagedSubagentSession

log = logging.getLogger(__name__)

MessageListener = Callable[[OmniMessage], None]
NOTICES_EXTRA_KEY = "notices"  # where the Environment puts its NoticeHub in services.extra


class RegistryDisposedError(RuntimeError):
    def __init__(self) -> None:
        super().__init__("background session registry disposed")


class SubagentSessionManager:
    def __init__(self, notices: NoticeHub | None = None, cap: int = MAX_BACKGROUND_SUBAGENTS) -> None:
        self.notices = notices
        self.cap = cap
        self._sessions: OrderedDict[str, ManagedSubagentSession] = OrderedDict()
        self._live: set[ManagedSubagentSession] = set()  # every spawned child, registered or not
        self._disposed = False
        self._killed_at_dispose: list[ManagedSubagentSession] = []
        self._lock = threading.Lock()
        self._listener: MessageListener | None = None
        self._backlog: deque[OmniMessage] = deque(maxlen=MESSAGE_BUFFER_CAP)

    @property
    def disposed(self) -> bool:
        return self._disposed

    def __len__(self) -> int:
        return len(self._sessions)

    # --- registry ----------------------------------------------------------------------------

    def make_room(self) -> bool:
        """True when a new session fits, after evicting the first idle one if full."""
        self._reap_idle()
        if len(self._sessions) < self.cap:
            return True
        for subagent_id, session in self._sessions.items():
            if not session.running:
                self.kill(subagent_id)
                return True
        return False

    def adopt(self, session: ManagedSubagentSession) -> None:
        """Track a freshly spawned child (a foreground window's too) so `dispose` reaches it."""
        self._live = {live for live in self._live if not live.killed}
        self._live.add(session)
        if self._disposed:
            session.kill()

    def register(self, session: ManagedSubagentSession) -> str:
        """Register (briefly exceeding the cap rather than dropping a running child)."""
        if self._disposed:
            raise RegistryDisposedError()
        self.make_room()
        subagent_id = f"{SUBAGENT_ID_PREFIX}-{session.session_id[-8:]}"
        while subagent_id in self._sessions:
            subagent_id = f"{SUBAGENT_ID_PREFIX}-{secrets.token_hex(4)}"
        session.last_used = time.monotonic()
        self._sessions[subagent_id] = session
        return subagent_id

    def get(self, subagent_id: str) -> ManagedSubagentSession | None:
        if self._disposed:
            return None
        session = self._sessions.get(subagent_id)
        if session is not None:
            session.last_used = time.monotonic()
        return session

    def ids(self) -> list[str]:
        return list(self._sessions)

    def has_running(self) -> bool:
        """Whether a managed subagent is mid-round (a host keeps its session alive meanwhile)."""
        return any(session.running for session in self._sessions.values())

    def kill(self, subagent_id: str) -> bool:
        session = self._sessions.pop(subagent_id, None)
        if session is None:
            return False
        session.kill()
        return True

    def dispose(self) -> None:
        """Kill every child, registered or in a window (pending approvals denied); idempotent."""
        if self._disposed:
            return
        self._disposed = True
        sessions = [*self._sessions.values(), *self._live]
        self._sessions.clear()
        self._live.clear()
        for session in sessions:
            session.kill()
        self._killed_at_dispose = sessions
        with self._lock:
            self._listener = None
            self._backlog.clear()

    async def wait_closed(self, timeout_s: float = 10.0) -> None:
        """After `dispose`: wait (bounded) until the rounds it aborted have ended, so every child
        session is disposed (its commands killed) when this returns."""
        tasks = [t for s in self._killed_at_dispose if (t := s.pump_task) is not None and not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)

    def _reap_idle(self) -> None:
        cutoff = time.monotonic() - IDLE_REAP_S
        for subagent_id, session in list(self._sessions.items()):
            if session.last_used <= cutoff:
                self.kill(subagent_id)

    # --- background launches -----------------------------------------------------------------

    def arm_report(self, session: ManagedSubagentSession, subagent_id: str, prompt: str) -> None:
        """Report the end of every round of `session` to the NoticeHub (until disarmed)."""
        notices = self.notices
        if notices is None:
            return

        def report() -> None:
            exit_info = session.exit
            notices.emit(
                BackgroundEvent(
                    kind="subagent",
                    id=subagent_id,
                    label=report_label(prompt),
                    status=exit_info.status if exit_info is not None else "completed",
                    detail=(exit_info.note or "") if exit_info is not None else "",
                    output=report_output(session.drain_text()),
                )
            )

        session.on_settled(report)

    def set_message_listener(self, listener: MessageListener | None) -> None:
        """The single consumer of live background child messages; the backlog flushes to it."""
        with self._lock:
            self._listener = listener
            backlog = list(self._backlog) if listener is not None else []
            if listener is not None:
                self._backlog.clear()
        for message in backlog:
            self._deliver(listener, message)  # type: ignore[arg-type]

    def forward(self, message: OmniMessage) -> None:
        """The live tap of background-launched sessions."""
        with self._lock:
            if self._disposed:
                return
            listener = self._listener
            if listener is None:
                self._backlog.append(message)
                return
        self._deliver(listener, message)

    @staticmethod
    def _deliver(listener: MessageListener, message: OmniMessage) -> None:
        try:
            listener(message)
        except Exception as exc:  # a listener's bug must not stop the subagent
            log.warning("[penguin] background subagent message listener failed: %s", exc)


def ensure_subagent_sessions(services: EnvironmentServices | None) -> SubagentSessionManager | None:
    """The services' manager, created on first use (one per Environment; the Environment
    disposes `services.subagent_sessions`). None without services."""
    if services is None:
        return None
    if services.subagent_sessions is None:
        notices = services.extra.get(NOTICES_EXTRA_KEY)
        services.subagent_sessions = SubagentSessionManager(
            notices if isinstance(notices, NoticeHub) else None
        )
    manager = services.subagent_sessions
    return manager if isinstance(manager, SubagentSessionManager) else None
