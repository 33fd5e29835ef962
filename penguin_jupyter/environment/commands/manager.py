"""The per-Environment registry of long-running command sessions (docs/tools.md "Command sessions").

Owns spawning (refused after dispose), `proc-<8 hex>` ids, the cap of 64 with eviction (first
exited session, else the least-recently-used running one, killed), idle reaping, kill-all, and a
process-exit hook that hard-kills whatever is still alive. Every child carries this registry's
owner marker (`owner_marker.py`), so kill-all and dispose also reap what escaped the process
group (`setsid`, double forks), and the owner's watchdog reaps them if the process dies. Background completion reports are
armed here and delivered through the Environment's NoticeHub. A command whose `SandboxPlan` says
so runs in the Environment's sandbox (`environment/sandbox/`), which this registry owns and
disposes with it.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import secrets
import shutil
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable

from ..child_env import ProxyPolicy, build_child_env
from ..notices import BackgroundEvent, NoticeHub, report_label, report_output
from ..sandbox import CommandSandbox, SandboxPlan
from .owner_marker import OWNER_ENV_VAR, ensure_watchdog, new_owner_token, process_prefix, reap_marked
from .session import CommandSession

COMMAND_SESSION_CAP = 64
IDLE_REAP_S = 10 * 24 * 3600
IDLE_SWEEP_EVERY_S = 3600

_LIVE_MANAGERS: weakref.WeakSet[CommandSessionManager] = weakref.WeakSet()
_REAPERS: list[threading.Thread] = []  # sweeps started by kill_all, joined by wait_reaped
_REAPERS_LOCK = threading.Lock()


class ManagerDisposedError(RuntimeError):
    def __init__(self) -> None:
        super().__init__("command session manager disposed")


class CommandSessionManager:
    def __init__(
        self,
        notices: NoticeHub | None = None,
        vault: dict[str, str] | None = None,
        cap: int = COMMAND_SESSION_CAP,
        proxy_policy: Callable[[], ProxyPolicy | None] | None = None,
        sandbox: CommandSandbox | None = None,
    ):
        self.notices = notices
        self.sandbox = sandbox
        self.vault = vault
        self.proxy_policy = proxy_policy  # re-read at every spawn
        self.cap = cap
        self._sessions: OrderedDict[str, CommandSession] = OrderedDict()
        self._live: set[CommandSession] = set()
        self._disposed = False
        self._last_sweep = time.monotonic()
        # Marker of the current generation; kill_all retires it, so a command started right
        # after an interrupt is never caught by the sweep of the previous generation.
        self._owner_base = new_owner_token()
        self._generation = 0
        _LIVE_MANAGERS.add(self)

    @property
    def owner_token(self) -> str:
        """The `PENGUIN_OWNER` value the next command (and all it starts) carries."""
        return f"{self._owner_base}-{self._generation}"

    @property
    def disposed(self) -> bool:
        return self._disposed

    def spawn(self, cmd: str, cwd: str, plan: SandboxPlan | None = None) -> CommandSession:
        """Start `cmd`; in the sandbox when `plan` says so (a plan with a refusal never gets here)."""
        if self._disposed:
            raise ManagerDisposedError()
        policy = self.proxy_policy() if self.proxy_policy is not None else None
        ensure_watchdog()  # once per process, at its first command: off the hot path after that
        env = build_child_env(self.vault, policy)
        env[OWNER_ENV_VAR] = self.owner_token
        launch = None
        child = None
        if plan is not None and plan.sandboxed:
            if self.sandbox is None or plan.refusal is not None:
                raise RuntimeError(plan.refusal or "no sandbox configured for this environment")
            argv = [_bash(env), "-lc", cmd]
            child = self.sandbox.warm_start(argv, cwd, env, plan, _warm_host_env())
            if child is None:
                launch = self.sandbox.launch(argv, cwd, env, plan)
        session = CommandSession(cmd, cwd, env, launch, child)
        self._live = {s for s in self._live if not s.exited}
        self._live.add(session)
        return session

    def register(self, session: CommandSession) -> str:
        self._sweep_idle()
        if len(self._sessions) >= self.cap:
            self._evict_one()
        while True:
            process_id = f"proc-{secrets.token_hex(4)}"
            if process_id not in self._sessions:
                break
        self._sessions[process_id] = session
        session.last_used = time.monotonic()
        return process_id

    def _evict_one(self) -> None:
        for process_id, session in self._sessions.items():
            if session.exited:
                self.remove(process_id)
                return
        lru_id = min(self._sessions, key=lambda pid: self._sessions[pid].last_used)
        victim = self._sessions[lru_id]
        victim.disarm_report()
        victim.kill()
        self.remove(lru_id)

    def get(self, process_id: str) -> CommandSession | None:
        self._sweep_idle()
        session = self._sessions.get(process_id)
        if session is not None:
            session.last_used = time.monotonic()
        return session

    def remove(self, process_id: str) -> CommandSession | None:
        return self._sessions.pop(process_id, None)

    def ids(self) -> list[str]:
        return list(self._sessions)

    def arm_report(self, process_id: str, session: CommandSession) -> None:
        label = report_label(session.cmd)

        def settled(done: CommandSession) -> None:
            if self._disposed or self.notices is None:
                return
            output = report_output(done.take_output())
            event = BackgroundEvent(
                kind="command",
                id=process_id,
                label=label,
                status="failed" if done.exit_failed() else "completed",
                detail=done.exit_description(),
                output=output,
            )
            self.notices.emit(event)

        session.arm_report(settled)

    def _sweep_idle(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < IDLE_SWEEP_EVERY_S:
            return
        self._last_sweep = now
        for process_id, session in list(self._sessions.items()):
            if now - session.last_used >= IDLE_REAP_S:
                session.disarm_report()
                session.kill()
                self.remove(process_id)

    def kill_all(self) -> None:
        """Kill every running process group (registered or in flight), without disposing, and
        reap (on a worker thread) every process that left its group but carries the marker."""
        for session in list(self._live) + list(self._sessions.values()):
            session.disarm_report()
            session.kill()  # also reaps background children of an already-exited shell
        self._sessions.clear()
        retired = self.owner_token
        self._generation += 1
        reaper = threading.Thread(target=reap_marked, args=(retired,), name="penguin-reaper", daemon=True)
        reaper.start()
        with _REAPERS_LOCK:
            _REAPERS[:] = [t for t in _REAPERS if t.is_alive()] + [reaper]

    def wait_reaped(self, timeout_s: float = 10.0) -> None:
        """Block (bounded) until every reap started so far in this process finished: this
        registry's, and those of the subagents disposed with it."""
        deadline = time.monotonic() + timeout_s
        with _REAPERS_LOCK:
            reapers = list(_REAPERS)
        for reaper in reapers:
            reaper.join(max(0.0, deadline - time.monotonic()))

    def dispose(self) -> None:
        if self._disposed:
            return
        self._disposed = True
        self.kill_all()
        if self.sandbox is not None:
            self.sandbox.dispose()

    def hard_kill_all(self) -> None:
        for session in list(self._live) + list(self._sessions.values()):
            with contextlib.suppress(Exception):
                session.hard_kill()


def _bash(env: dict[str, str]) -> str:
    """bash by its path, found on the command's PATH: a warm sandbox starts a command with no
    search of its own (remembered per PATH whose folders are all absolute)."""
    path = env.get("PATH")
    if path is not None and not all(os.path.isabs(folder) for folder in path.split(os.pathsep) if folder):
        return shutil.which("bash", path=path) or "/bin/bash"
    return _bash_on(path)


@functools.lru_cache(maxsize=8)
def _bash_on(path: str | None) -> str:
    return shutil.which("bash", path=path) or "/bin/bash"


def _warm_host_env() -> dict[str, str]:
    """A warm sandbox's own environment: this process's owner marker (its watchdog ends the
    sandbox if this process dies), never a generation's (an interrupt ends commands, not it)."""
    return {OWNER_ENV_VAR: f"{process_prefix()}sandbox", "PATH": os.defpath}


@atexit.register
def _kill_everything_at_exit() -> None:
    for manager in list(_LIVE_MANAGERS):
        manager.hard_kill_all()
    # Whatever escaped a process group; the watchdog would do it too once this process is gone.
    with contextlib.suppress(Exception):
        reap_marked(process_prefix(), prefix=True, grace_s=0.0)
