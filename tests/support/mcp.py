"""Shared helpers for the MCP tests: fixture-server entries, child-process probes via /proc,
and a fixture server over real loopback HTTP/SSE."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from penguin_jupyter.interfaces import MCPServerConfig
from tests.support.paths import MCP_FIXTURE_SERVER
from tests.support.processes import wait_until

FIXTURE_SERVER = MCP_FIXTURE_SERVER
FIXTURE_TOOLS = [
    "mcp__fx__echo",
    "mcp__fx__fail",
    "mcp__fx__pic",
    "mcp__fx__slow",
    "mcp__fx__probe",
    "mcp__fx__spam",
]


def fixture_entry(name: str = "fx", *mode: str, **extra: Any) -> MCPServerConfig:
    """A stdio `tools.mcpServers` entry spawning the fixture server (with optional mode flags).

    The connect budget is raised to 60 s: the SDK's import alone is slow on a loaded CI box."""
    config = {"command": sys.executable, "args": [FIXTURE_SERVER, *mode], "connectTimeoutMs": 60_000, **extra}
    return MCPServerConfig(name=name, config=config)


def fixture_children() -> list[int]:
    """Live (non-zombie) child processes of this test process running the fixture server."""
    me = os.getpid()
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == me and state != "Z" and FIXTURE_SERVER.encode() in cmdline:
            found.append(int(entry))
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def remote_fixture(kind: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Run the fixture server over `--http` or `--sse` on 127.0.0.1; yields (url, header log)."""
    port = free_port()
    header_log = tmp_path / f"headers-{kind.strip('-')}.log"
    header_log.touch()
    proc = subprocess.Popen(
        [sys.executable, FIXTURE_SERVER, kind, str(port), "--header-log", str(header_log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        if not wait_until(lambda: _port_open(port), 60):
            raise RuntimeError(f"fixture server {kind} did not start")
        path = "/mcp" if kind == "--http" else "/sse"
        yield f"http://127.0.0.1:{port}{path}", header_log
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0
