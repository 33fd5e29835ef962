"""ScriptedModelServer: a real loopback HTTP server speaking every protocol agenthub routes to.

Owns the HTTP side (routing each POST to its protocol, the API-key check, request recording,
serving one script entry per accepted request, faults, pacing, shutdown). Entry validation is
`script.py`; each protocol's events, error bodies and request rules are `protocols/`. Tests,
examples and the offline demo point `agenthub.AutoLLMClient(..., base_url=server.url)` at it —
OpenAI Chat Completions and Responses, Anthropic Messages and Gemini alike. Served in a
background thread; thread-safe.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from penguin_jupyter.omni import dumps_compact

from .chunks import error_body
from .conditions import meets, offered_tools
from .protocols import Exchange, Ledger, Protocol, Rejection, protocol_for
from .protocols.gemini import model_of
from .script import Fault, ScriptEntry, load_script_file, parse_entry

EXHAUSTED_MESSAGE = "scripted model server: script exhausted"
DEFAULT_MODEL = "scripted-model"


@dataclass
class ServedRequest:
    """One generation request as the server saw it: which protocol, and what it answered.

    `status` is the HTTP status sent (200 for a served stream, None while in flight); `error` the
    one-line reason of a refusal (bad key, a broken validation rule, not streaming).
    """

    protocol: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    status: int | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class ScriptedModelServer:
    """Serves `script` entries in order, one per accepted generation request, in every protocol.

    Use as a context manager or with `start()`/`stop()`. `url` is the base_url to give any
    agenthub client; `requests` holds every request body received, `calls` the same requests
    with their protocol and outcome; `add`/`extend` append entries while running. With
    `api_key` set, any other key gets the provider's own bad-key answer; `validate=False` turns
    the providers' request rules off (see docs/model.md); `log_requests=False` keeps no request
    log (`requests`/`calls` stay empty: a benchmark's server holding no history copies).
    `after_script` is an entry served to every request once the script is exhausted (the
    interactive demo's "the scripted task is done" answer) instead of the HTTP 500.
    """

    def __init__(
        self,
        script: Iterable[Any] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        validate: bool = True,
        log_requests: bool = True,
        after_script: Any = None,
    ) -> None:
        self.host = host
        self.model = model
        self.api_key = api_key
        self.validate = validate
        self.log_requests = log_requests
        self.ledger = Ledger()
        self._port = port
        self._lock = threading.Condition()
        self._pending: deque[ScriptEntry] = deque()
        self._calls: list[ServedRequest] = []
        self._added = 0
        self._tool_calls_named = 0
        self._served = 0
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.extend(script or [])
        self._after_script = parse_entry(after_script, -1) if after_script is not None else None

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> ScriptedModelServer:
        """A server for the entries of a JSON or YAML script file (not started)."""
        return cls(load_script_file(path), **kwargs)

    # --- script ----------------------------------------------------------------------------

    def add(self, entry: Any) -> None:
        """Append one entry (validated now: a bad entry raises ValueError here, not mid-request)."""
        with self._lock:
            parsed = parse_entry(entry, self._added)
            calls = []
            for call in parsed.tool_calls:
                if not call.id:
                    call = replace(call, id=f"call_{self._tool_calls_named}")
                self._tool_calls_named += 1
                calls.append(call)
            self._pending.append(replace(parsed, tool_calls=tuple(calls)))
            self._added += 1

    def extend(self, entries: Iterable[Any]) -> None:
        if isinstance(entries, str | bytes | dict):
            raise ValueError("script must be a list of entries")
        for entry in entries:
            self.add(entry)

    @property
    def remaining(self) -> list[dict[str, Any]]:
        """The entries not served yet, as written."""
        with self._lock:
            return [dict(entry.source) for entry in self._pending]

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every generation request body received so far (any protocol), in arrival order (a copy)."""
        with self._lock:
            return [call.body for call in self._calls]

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """The HTTP headers of each entry in `requests` (lower-cased names), same order."""
        with self._lock:
            return [dict(call.headers) for call in self._calls]

    @property
    def calls(self) -> list[ServedRequest]:
        """Every generation request with its protocol, path and outcome, in arrival order (copies)."""
        with self._lock:
            return [replace(call, headers=dict(call.headers)) for call in self._calls]

    @property
    def protocols(self) -> list[str]:
        """The protocol of each entry in `requests` ("openai-chat", "openai-responses", …)."""
        with self._lock:
            return [call.protocol for call in self._calls]

    @property
    def served(self) -> int:
        """How many script entries have been handed to a request."""
        with self._lock:
            return self._served

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> bool:
        """Block until at least `count` requests arrived (or `timeout` seconds passed)."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self._calls) >= count, timeout)

    def _take(self, call: ServedRequest) -> tuple[ScriptEntry | None, int]:
        """Record `call` and hand it the next entry (None when exhausted) and its serial number."""
        with self._lock:
            self._record(call)
            offered = offered_tools(call.body)
            while self._pending and not meets(self._pending[0].if_tools, self._pending[0].unless_tools, offered):
                self._pending.popleft()  # an entry for a path this run did not take
            if not self._pending:
                if self._after_script is None:
                    return None, self._served
                self._served += 1
                return self._after_script, self._served
            self._served += 1
            return self._pending.popleft(), self._served

    def _record(self, call: ServedRequest) -> None:
        with self._lock:
            if self.log_requests:
                self._calls.append(call)
            self._lock.notify_all()

    def _finish(self, call: ServedRequest, status: int, error: str | None = None) -> None:
        with self._lock:
            call.status = status
            call.error = error

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("ScriptedModelServer is not started")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT/v1`: the base_url for every client (routes are matched by suffix)."""
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        """`http://127.0.0.1:PORT`: the provider-style base_url (Anthropic and Gemini SDKs add their own prefix)."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> ScriptedModelServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _QuietThreadingHTTPServer((self.host, self._port), _Handler)
        httpd.scripted = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="scripted-model-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and drop open connections (stalled responses end at once). Idempotent."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self._httpd is not None else "stopped"
        return f"<ScriptedModelServer {where} served={self.served} remaining={len(self._pending)}>"


class _QuietThreadingHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up mid-request is routine here; anything else is still reported."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _StreamClosed(Exception):
    """The client went away, or the server is stopping, mid-response."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Every SSE frame is a small write: with Nagle on, loopback adds ~45 ms to each request.
    disable_nagle_algorithm = True
    server_version = "ScriptedModelServer/1.0"

    @property
    def scripted(self) -> ScriptedModelServer:
        return self.server.scripted  # type: ignore[attr-defined]

    def setup(self) -> None:
        super().setup()
        with self.scripted._lock:
            self.scripted._connections.add(self.connection)

    def finish(self) -> None:
        with self.scripted._lock:
            self.scripted._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `requests` instead
        return

    # --- plain JSON responses --------------------------------------------------------------

    def _send_json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = dumps_compact(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error_json(self, status: int, message: str, **headers: str) -> None:
        self._send_json(status, error_body(status, message), {"x-should-retry": "false", **headers})

    def _refuse(self, call: ServedRequest, rejection: Rejection) -> None:
        self.scripted._finish(call, rejection.status, rejection.reason)
        self._send_json(rejection.status, rejection.body, {"x-should-retry": "false"})

    def _route(self) -> str:
        return urlsplit(self.path).path.rstrip("/")

    def _query(self) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(self.path).query))

    def do_GET(self) -> None:
        route = self._route()
        model = self.scripted.model
        entry: dict[str, Any]
        if route.endswith("/models") and "x-goog-api-key" in self.headers:
            entry = {"name": f"models/{model}", "displayName": model, "supportedGenerationMethods": ["generateContent"]}
            self._send_json(200, {"models": [entry]})
        elif route.endswith("/models") and "anthropic-version" in self.headers:
            entry = {
                "type": "model",
                "id": model,
                "display_name": model,
                "created_at": "2026-01-01T00:00:00Z",
            }
            self._send_json(200, {"data": [entry], "has_more": False, "first_id": model, "last_id": model})
        elif route.endswith("/models"):
            entry = {"id": model, "object": "model", "created": 0, "owned_by": "penguin-scripted"}
            self._send_json(200, {"object": "list", "data": [entry]})
        else:
            self._send_error_json(404, f"scripted model server: no route GET {route}")

    def do_POST(self) -> None:
        route = self._route()
        protocol = protocol_for(route)
        raw = self._drain_body()
        if protocol is None:
            self._send_error_json(404, f"scripted model server: no route POST {route}")
            return
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("expected a JSON object")
        except ValueError as exc:
            message = f"scripted model server: request body is not a JSON object: {exc}"
            self._send_json(400, protocol.error_body(400, message, None, None), {"x-should-retry": "false"})
            return
        headers = self._header_dict()
        call = ServedRequest(protocol.name, route, body, headers)
        model = str(body.get("model") or (model_of(route) if protocol.name == "gemini" else self.scripted.model))
        probe = Exchange(body, route, 0, model)
        rejection = self._check(protocol, probe, headers)
        if rejection is not None:
            self.scripted._record(call)
            self._refuse(call, rejection)
            return
        entry, serial = self.scripted._take(call)
        if entry is None:
            self.scripted._finish(call, 500, EXHAUSTED_MESSAGE)
            self._send_json(500, protocol.error_body(500, EXHAUSTED_MESSAGE, None, None), {"x-should-retry": "false"})
            return
        fault = entry.fault
        if fault is not None and fault.kind == "http":
            self.scripted._finish(call, fault.status, f"scripted fault: HTTP {fault.status}")
            error = protocol.error_body(fault.status, fault.message, fault.error_type, fault.code)
            self._send_json(fault.status, error, fault.headers)
            return
        exchange = replace(probe, serial=serial)
        try:
            events = protocol.events(entry, exchange, self.scripted.ledger)
        except ValueError as exc:
            message = f"scripted model server: cannot serve entry {serial - 1} as {protocol.name}: {exc}"
            self.scripted._finish(call, 500, message)
            self._send_json(500, protocol.error_body(500, message, None, None), {"x-should-retry": "false"})
            return
        self.scripted._finish(call, 200)
        self._stream(protocol, entry, events)

    def _check(self, protocol: Protocol, exchange: Exchange, headers: dict[str, str]) -> Rejection | None:
        """The refusal a request gets before any entry is spent: bad key, not streaming, a broken rule."""
        scripted = self.scripted
        if scripted.api_key is not None:
            key = protocol.credential(headers, self._query())
            if key != scripted.api_key:
                return protocol.bad_key(key)
        if not protocol.streaming(exchange):
            return protocol.reject(400, f"scripted model server: only streaming requests {protocol.stream_hint} are served")
        if scripted.validate:
            return protocol.validate(exchange, scripted.ledger)
        return None

    def _header_dict(self) -> dict[str, str]:
        return {key.lower(): value for key, value in self.headers.items()}

    def _drain_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    # --- SSE streaming ---------------------------------------------------------------------

    def _write_frame(self, data: bytes) -> None:
        """One HTTP/1.1 chunked-transfer frame."""
        if self.scripted._stopping.is_set():
            raise _StreamClosed
        try:
            self.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))
        except OSError as exc:
            raise _StreamClosed from exc

    def _pause(self, seconds: float) -> None:
        if seconds > 0 and self.scripted._stopping.wait(seconds):
            raise _StreamClosed

    def _stream(self, protocol: Protocol, entry: ScriptEntry, events: list[bytes]) -> None:
        fault = entry.fault
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for sent, event in enumerate(events):
                if fault is not None and sent == fault.after and self._inject(protocol, fault):
                    return
                if sent:
                    self._pause(entry.delay_ms / 1000)
                self._write_frame(event)
            if fault is not None and fault.after >= len(events) and self._inject(protocol, fault):
                return
            self._end(protocol)
        except _StreamClosed:
            self._drop()

    def _end(self, protocol: Protocol) -> None:
        for event in protocol.closing():
            self._write_frame(event)
        self._write_frame(b"")  # the zero-length frame ends the chunked body

    def _inject(self, protocol: Protocol, fault: Fault) -> bool:
        """Apply `fault` at its position; True when the response ends here."""
        if fault.kind == "drop":
            self._drop()
            return True
        if fault.kind in ("malformed", "error_event"):
            frames = [protocol.malformed(fault.data)] if fault.kind == "malformed" else protocol.error_event(fault)
            for frame in frames:
                self._write_frame(frame)
            self._end(protocol)
            return True
        self._pause(fault.seconds)  # stall, then carry on
        return False

    def _drop(self) -> None:
        """Cut the connection without ending the chunked body (a transport-level failure)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
