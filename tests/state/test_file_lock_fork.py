"""A child forked while a data-root lock is held (run_python code calling `os.fork` for a daemon,
issue 40's escape suite) does not keep the lock: the parent's next `exclusive` gets it at once.
Before the fix the flock, which belongs to the open file the child shared, stayed held by the
daemon and the harness waited forever (the sandboxed kernel's suite hung on it)."""

from __future__ import annotations

import os
import signal
import threading
import time

from penguin_jupyter.state.file_lock import exclusive


def test_a_child_forked_under_a_lock_does_not_hold_it(tmp_path):
    target = tmp_path / "ledger.json"
    child = 0
    with exclusive(target):
        child = os.fork()
        if child == 0:  # the daemon: lives on, holding whatever it inherited
            time.sleep(30)
            os._exit(0)
    try:
        got = threading.Event()

        def take() -> None:
            with exclusive(target):
                got.set()

        threading.Thread(target=take, daemon=True).start()
        assert got.wait(5.0), "the parent could not take the lock again while the forked child lives"
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
