"""The shapes of the kernel's objects that notebook/ reads, as Protocols and TypedDicts.

Owns the typing of what IPython, ipykernel, jupyter_client and the comm package hand the
notebook layer — the shell (`KernelShell`), a jupyter_client `Session` (`MessageSession`), a
comm (`Comm`), the frontend's hello (`PageHello`) — and of the JSON a stranger wrote that the
layer reads (`JsonObject`: read with isinstance before use). Only what the code actually reads is
declared; whatever else it may find on a real kernel object it reads with `getattr` and a
fallback, so a plain Python host or a test's small stand-in works too. Building these objects is
the kernel's; what they mean is the modules' that use them. Imports nothing of the package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, TypedDict

JsonObject = dict[str, object]
"""A JSON object from outside (a frontend's reply, a saved notebook, a bundle): every value is
checked with isinstance where it is read."""


def json_objects(value: object) -> list[JsonObject]:
    """The objects of a JSON list from outside (anything else in it, or a `value` that is no
    list, is left out)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


class KernelShell(Protocol):
    """IPython's `InteractiveShell`, as far as the notebook layer reads it directly."""

    user_ns: dict[str, object]

    def set_next_input(self, s: str, replace: bool = False) -> None: ...


class MessageSession(Protocol):
    """jupyter_client's `Session` (public API): builds a message and sends it on a socket."""

    send: Callable[..., object]

    def msg(self, msg_type: str, content: object = None, parent: object = None) -> JsonObject: ...


class Comm(Protocol):
    """A `comm.base_comm.BaseComm` (one side of a Jupyter comm)."""

    comm_id: str

    def send(self, data: JsonObject | None = None) -> None: ...

    def close(self) -> None: ...

    def on_msg(self, callback: Callable[[JsonObject], None]) -> None: ...

    def on_close(self, callback: Callable[[JsonObject], None]) -> None: ...


class PageHello(TypedDict):
    """A notebook page's hello over the bridge (docs/notebook-tools.md, "The bridge protocol"),
    each field checked as it arrived (`link/frontend_bridge._hello_of`)."""

    page_id: str
    path: str
    server_root: str
    session: str
    frontend: str
    subshells: bool
    metadata: JsonObject | None


Hello = Mapping[str, object]
"""A hello as its readers take it: a `PageHello`, or a host's own mapping (read with isinstance)."""


class DisplayPublisher(Protocol):
    """IPython's `DisplayPublisher`: `publish(data, metadata=None, …)` (an instance attribute may replace it)."""

    publish: Callable[..., object]


class DisplayFormatter(Protocol):
    """IPython's `DisplayFormatter`: `format(obj, include=None, exclude=None)`."""

    format: Callable[..., object]
