"""Every dask.distributed Client of the process (docs/seams.md).

Owns `live_clients`: `run_python`'s interrupt cancels the futures its code started on every
Client (`notebook/kernel_tools/distributed_work.py`). distributed keeps its Clients in the
private class attribute `Client._instances` (a WeakSet) and has no public listing: the seam
`dask.client_instances` (rule) checks that shape before the first use. Off: only the default
Client (`distributed.default_client()`, public) is found, so work on other Clients goes on after
an interrupt. Nothing here imports distributed: without it in sys.modules there is nothing to find.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from . import NotInUse, declare


def _check() -> str | None:
    client_module = sys.modules.get("distributed.client")
    if client_module is None:
        raise NotInUse("distributed not imported")
    instances = getattr(client_module.Client, "_instances", None)
    return None if isinstance(instances, Iterable) else "distributed's Client._instances is not a collection"


CLIENT_INSTANCES = declare(
    "dask.client_instances",
    what="distributed Client._instances (every Client of the process)",
    kind="rule",
    when_off="an interrupt cancels the work of the default Client only",
    check=_check,
)


def live_clients() -> list[Any]:
    """The running (or connecting) Clients of this process."""
    client_module = sys.modules.get("distributed.client")
    if client_module is None:
        return []
    if CLIENT_INSTANCES.enabled():
        found = list(client_module.Client._instances)
    else:
        try:
            found = [client_module.default_client()]
        except ValueError:  # no default Client
            found = []
    return [c for c in found if getattr(c, "status", None) in ("running", "connecting")]
