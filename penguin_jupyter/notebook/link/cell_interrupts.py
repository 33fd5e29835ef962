"""Stopping a cell that `run_cell` started on a kernel subshell.

A kernel interrupt (SIGINT) reaches only the main thread, where the `%%penguin` cell awaits; the
cell the agent runs executes on a subshell thread. This module remembers which thread executes
which cell (IPython's pre/post_run_cell events carry the cell id the frontend sent) and raises
KeyboardInterrupt in that thread when the Task is stopped (`seams.threads.raise_in_thread`). Owns
nothing else.
"""

from __future__ import annotations

import threading

from ...seams.threads import raise_in_thread


class RunningCells:
    """cell id → the thread executing it, for cells run while a `%%penguin` cell awaits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: dict[str, int] = {}

    def attach(self, shell: object) -> None:
        events = getattr(shell, "events", None)
        if events is None:
            return
        events.register("pre_run_cell", self._pre_run_cell)
        events.register("post_run_cell", self._post_run_cell)

    def _pre_run_cell(self, info: object) -> None:
        cell_id = getattr(info, "cell_id", None)
        if isinstance(cell_id, str) and cell_id and threading.current_thread() is not threading.main_thread():
            with self._lock:
                self._threads[cell_id] = threading.get_ident()

    def _post_run_cell(self, result: object) -> None:
        info = getattr(result, "info", None)
        cell_id = getattr(info, "cell_id", None)
        if isinstance(cell_id, str):
            with self._lock:
                if self._threads.get(cell_id) == threading.get_ident():
                    del self._threads[cell_id]

    def is_running(self, cell_id: str) -> bool:
        with self._lock:
            return cell_id in self._threads

    def interrupt(self, cell_id: str) -> bool:
        """Raise KeyboardInterrupt in the thread running `cell_id`; False when none runs it."""
        with self._lock:
            ident = self._threads.get(cell_id)
            if ident is None:
                return False
        return raise_in_thread(ident, KeyboardInterrupt)
