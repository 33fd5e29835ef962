"""The output router (output/output_router.py) is installed for run_python code and removed
after, and patches nothing process-wide: sys.stdout / sys.stderr and the shell's publisher and
formatter are back as they were once no call runs and no thread the code started lives;
`threading.Thread.start` is never replaced. A thread the code started that prints after its call
ended is redacted; a thread the user starts afterwards is not. (On 3758335 the router replaced
`threading.Thread.start` for the whole process and left every wrapper in place for the kernel's
life.) The real-kernel side is tests/notebook/test_redaction_at_the_sink.py and test_seams_kernel.py."""

from __future__ import annotations

import io
import sys
import threading
from typing import Any

import pytest

from penguin_jupyter.notebook.output import output_router
from penguin_jupyter.notebook.output.output_router import capture_current_thread, release_current_thread
from penguin_jupyter.redaction import Redactor

pytestmark = pytest.mark.security

THREAD_START = threading.Thread.start
SECRET = "SECRET-ROUTER-VALUE-1"
REDACTOR = Redactor([("ROUTER_TOKEN", SECRET)])


class _Publisher:
    def __init__(self) -> None:
        self.published: list[dict[str, Any]] = []

    def publish(self, data: dict[str, Any], metadata: dict[str, Any] | None = None, *, transient=None, update=False):
        self.published.append(data)


class _Formatter:
    def format(self, obj: object, include: Any = None, exclude: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"text/plain": repr(obj)}, {}


class _Shell:
    def __init__(self) -> None:
        self.display_pub = _Publisher()
        self.display_formatter = _Formatter()


def _in_worker(body: Any, shell: _Shell) -> None:
    def worker() -> None:
        capture_current_thread(lambda text: None, shell, lambda data: None, lambda obj: None, redactor=REDACTOR)
        try:
            body()
        finally:
            release_current_thread()

    thread = threading.Thread(target=worker, name="penguin-run-python")
    thread.start()
    thread.join()


def test_everything_goes_back_once_the_code_and_its_threads_are_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output_router, "LOOK_INTERVAL_S", 0.0)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    stderr = sys.stderr
    shell = _Shell()
    release = threading.Event()
    later: list[threading.Thread] = []

    def linger() -> None:
        release.wait(10)
        print("late", SECRET)

    def body() -> None:
        thread = threading.Thread(target=linger, daemon=True)
        thread.start()
        later.append(thread)
        assert threading.Thread.start is THREAD_START, "Thread.start is never replaced"

    _in_worker(body, shell)
    assert sys.stdout is not out and "publish" in vars(shell.display_pub), "installed while a thread of the code lives"
    release.set()
    later[0].join()
    assert "late [redacted:ROUTER_TOKEN]" in out.getvalue(), "the code's thread is redacted after its call"
    print("a write from another thread: the next look finds nothing of the code alive")
    assert sys.stdout is out and sys.stderr is stderr
    assert "publish" not in vars(shell.display_pub) and "format" not in vars(shell.display_formatter)
    assert threading.Thread.start is THREAD_START


def test_a_thread_the_user_starts_afterwards_is_not_the_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    _in_worker(lambda: print("inside"), _Shell())
    assert sys.stdout is out, "nothing of the code lives: removed at once"
    user = threading.Thread(target=lambda: print("user", SECRET))
    user.start()
    user.join()
    assert f"user {SECRET}" in out.getvalue(), "the user's own output is untouched"
