"""ScriptedModelServer: a real loopback HTTP server speaking OpenAI Chat Completions streaming.

Owns the HTTP side (routing, request recording, serving one script entry per request, faults,
pacing, shutdown). Entry validation is `script.py`; chunk shapes are `chunks.py`. Every test,
example and the offline demo point `agenthub.AutoLLMClient(client_type="openai-chat",
base_url=server.url)` at it. Served in a background thread; thread-safe.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from penguin_jupyter.omni import dumps_compact

from .chunks import build_chunks, error_body
from .script import Fault, ScriptEntry, load_script_file, parse_entry

EXHAUSTED_MESSAGE = "scripted model server: script exhausted"
DEFAULT_MODEL = "scripted-model"


class ScriptedModelServer:
    """Serves `script` entries in order, one per `POST /v1/chat/completions`.

    Use as a context manager or with `start()`/`stop()`. `url` is the base_url to give a client;
    `requests` holds every request body received; `add`/`extend` append entries while running.
    """

    def __init__(
        self,
        script: Iterable[Any] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = DEFAULT_MODEL,
    ) -> None:
        self.host = host
        self.model = model
        self._port = port
        self._lock = threading.Condition()
        self._pending: deque[ScriptEntry] = deque()
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._added = 0
        self._tool_calls_named = 0
        self._served = 0
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.extend(script or [])

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
        """Every chat-completions request body received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """The HTTP headers of each entry in `requests` (lower-cased names), same order."""
        with self._lock:
            return [dict(headers) for headers in self._headers]

    @property
    def served(self) -> int:
        """How many script entries have been handed to a request."""
        with self._lock:
            return self._served

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> bool:
        """Block until at least `count` requests arrived (or `timeout` seconds passed)."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self._requests) >= count, timeout)

    def _take(self, body: dict[str, Any], headers: dict[str, str]) -> ScriptEntry | None:
        with self._lock:
            self._record(body, headers)
            if not self._pending:
                return None
            self._served += 1
            return self._pending.popleft()

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self._requests.append(body)
            self._headers.append(headers)
            self._lock.notify_all()

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("ScriptedModelServer is not started")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT/v1`: the base_url for an OpenAI-compatible client."""
        return f"http://{self.host}:{self.port}/v1"

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

    def _route(self) -> str:
        return urlsplit(self.path).path.rstrip("/")

    def do_GET(self) -> None:
        if self._route() in ("/v1/models", "/models"):
            model = {
                "id": self.scripted.model,
                "object": "model",
                "created": 0,
                "owned_by": "penguin-scripted",
            }
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_error_json(404, f"scripted model server: no route GET {self._route()}")

    def do_POST(self) -> None:
        if self._route() not in ("/v1/chat/completions", "/chat/completions"):
            self._drain_body()
            self._send_error_json(404, f"scripted model server: no route POST {self._route()}")
            return
        raw = self._drain_body()
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("expected a JSON object")
        except ValueError as exc:
            self._send_error_json(400, f"scripted model server: request body is not a JSON object: {exc}")
            return
        if body.get("stream") is not True:
            self.scripted._record(body, self._header_dict())
            self._send_error_json(
                400, 'scripted model server: only streaming requests ("stream": true) are served'
            )
            return
        entry = self.scripted._take(body, self._header_dict())
        if entry is None:
            self._send_error_json(500, EXHAUSTED_MESSAGE)
            return
        fault = entry.fault
        if fault is not None and fault.kind == "http":
            error = error_body(fault.status, fault.message, fault.error_type, fault.code)
            self._send_json(fault.status, error, fault.headers)
            return
        self._stream(entry, body)

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

    def _event(self, payload: str) -> None:
        self._write_frame(b"data: " + payload.encode("utf-8") + b"\n\n")

    def _pause(self, seconds: float) -> None:
        if seconds > 0 and self.scripted._stopping.wait(seconds):
            raise _StreamClosed

    def _stream(self, entry: ScriptEntry, request: dict[str, Any]) -> None:
        completion_id = f"chatcmpl-scripted-{self.scripted.served}"
        chunks = build_chunks(entry, request, completion_id)
        fault = entry.fault
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for sent, chunk in enumerate(chunks):
                if fault is not None and sent == fault.after and self._inject(fault):
                    return
                if sent:
                    self._pause(entry.delay_ms / 1000)
                self._event(dumps_compact(chunk))
            if fault is not None and fault.after >= len(chunks) and self._inject(fault):
                return
            self._event("[DONE]")
            self._write_frame(b"")  # the zero-length frame ends the chunked body
        except _StreamClosed:
            self._drop()

    def _inject(self, fault: Fault) -> bool:
        """Apply `fault` at its position; True when the response ends here."""
        if fault.kind == "drop":
            self._drop()
            return True
        if fault.kind == "malformed":
            self._event(fault.data)
            self._event("[DONE]")
            self._write_frame(b"")
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
