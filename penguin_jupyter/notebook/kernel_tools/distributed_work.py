"""Cancel the distributed computations a `run_python` call started when it is interrupted.

Owns the dask.distributed side of interrupting `run_python` (timeout, Stop, kernel interrupt):
`DistributedWork.snapshot()` notes which futures every live Client holds when the call starts;
`cancel_new()` cancels, on the scheduler, every future a Client gained since (the tasks behind a
`.compute()`, `client.submit`, `persist` or `dask.compute` in the agent's code), so the cluster
stops working for a call nobody waits on any more, and the worker thread blocked in the gather
returns. Interrupting the thread itself is `python_runner`'s. Finding every Client is a seam
(`seams/dask_clients.py`). Nothing here imports distributed: without it in sys.modules there is
nothing to track.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

from ...seams.dask_clients import live_clients


class DistributedWork:
    """The futures held by each dask.distributed Client at one moment."""

    def __init__(self, held: weakref.WeakKeyDictionary[object, set[object]]) -> None:
        self._held = held

    @classmethod
    def snapshot(cls) -> DistributedWork:
        held: weakref.WeakKeyDictionary[object, set[object]] = weakref.WeakKeyDictionary()
        for client in live_clients():
            try:
                held[client] = set(list(client.futures))
            except Exception:  # a dask client in any state is skipped, never fails the tool
                continue
        return cls(held)

    def new_keys(self, client: Any) -> list[object]:  # a dask.distributed Client (untyped)
        before = self._held.get(client, set())
        return [key for key in list(client.futures) if key not in before]

    def cancel_new(self) -> int:
        """Cancel every future created since the snapshot; returns how many. Never raises. Blocks
        while the cancel reaches each scheduler: call it off the kernel's event loop."""
        cancelled = 0
        future_class = getattr(sys.modules.get("distributed.client"), "Future", None)
        if future_class is None:
            return 0
        for client in live_clients():
            if getattr(client, "asynchronous", False):
                continue  # its futures belong to an event loop we must not block on
            try:
                keys = self.new_keys(client)
                if not keys:
                    continue
                # A Future bound to a key the client already holds shares that key's state.
                futures = [future_class(key, client) for key in keys]
                client.cancel(futures, force=True)
                cancelled += len(keys)
            except Exception:  # a dask client in any state is skipped, never fails the tool
                continue
        return cancelled
