"""The sandbox's small parts without bubblewrap: the host allowlist's grammar and matching, the
seccomp program's shape per machine, the grant ledger (bounded, taken once), the proxy's request
parsing, `network_hosts`' one-line errors, and the mounts' view of what a command may write."""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
from pathlib import Path

import pytest

from penguin_jupyter.environment.sandbox import (
    BadHost,
    CommandCall,
    SandboxGrant,
    SandboxGrants,
    filesystem_view,
    not_covered,
    parse_host,
    parse_hosts,
)
from penguin_jupyter.environment.sandbox import grants as grants_module
from penguin_jupyter.environment.sandbox.hosts import allows
from penguin_jupyter.environment.sandbox.proxy import _parse_request
from penguin_jupyter.environment.sandbox.seccomp import program_for
from penguin_jupyter.environment.tools.exec_command import EXEC_COMMAND


def test_hosts_match_by_name_suffix_and_port():
    rules = parse_hosts(["PyPI.org.", "*.pythonhosted.org", "example.com:8443", "10.0.0.7"])
    assert [r.text() for r in rules] == ["pypi.org", "*.pythonhosted.org", "example.com:8443", "10.0.0.7"]
    assert allows(rules, "pypi.org", 443) and allows(rules, "PYPI.ORG.", 80)
    assert not allows(rules, "pypi.org", 22) and not allows(rules, "evilpypi.org", 443)
    assert allows(rules, "files.pythonhosted.org", 443) and not allows(rules, "pythonhosted.org", 443)
    assert allows(rules, "example.com", 8443) and not allows(rules, "example.com", 443)
    assert allows(rules, "10.0.0.7", 80) and not allows(rules, "10.0.0.8", 80)
    assert parse_host("[::1]:8080").text() == "[::1]:8080"


@pytest.mark.parametrize(
    "entry",
    ["", "https://pypi.org", "pypi.org/simple", "user@host", "*", "*.com", "a..b", "-x.org", "h:0", "h:99999", 7],
)
def test_a_bad_host_is_one_line(entry):
    with pytest.raises(BadHost) as caught:
        parse_host(entry)
    assert "\n" not in str(caught.value)


def test_what_a_card_must_ask_for():
    allowed = parse_hosts(["*.pythonhosted.org", "pypi.org"])
    asked = parse_hosts(["files.pythonhosted.org", "pypi.org", "pypi.org:8080", "*.python.org", "evil.example"])
    assert [r.text() for r in not_covered(asked, allowed)] == ["pypi.org:8080", "*.python.org", "evil.example"]


def test_network_hosts_is_read_or_refused_in_one_line():
    parsed = EXEC_COMMAND.parse({"cmd": "pip install x", "network_hosts": ["pypi.org", "files.pythonhosted.org"]})
    assert not isinstance(parsed, str) and parsed.network_hosts == ("pypi.org", "files.pythonhosted.org")
    assert EXEC_COMMAND.parse({"cmd": "x", "network_hosts": "pypi.org"}) == (
        'Invalid "network_hosts" for exec_command: expected a list of host names, got "pypi.org".'
    )
    assert EXEC_COMMAND.parse({"cmd": "x", "network_hosts": ["https://pypi.org/x"]}) == (
        "Invalid \"network_hosts\" for exec_command: 'https://pypi.org/x' is not a host name (write pypi.org, not a URL)."
    )
    parsed = EXEC_COMMAND.parse({"cmd": "x", "unsandboxed": "yes"})
    assert not isinstance(parsed, str) and parsed.unsandboxed is False  # only `true` sets a flag


def test_the_seccomp_program_per_machine():
    for machine, arch, socket_nr in (("x86_64", 0xC000003E, 41), ("aarch64", 0xC00000B7, 198)):
        program = program_for(machine)
        assert program is not None and len(program) % 8 == 0
        ops = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
        assert ops[1] == (0x15, 1, 0, arch)  # a foreign architecture's entry is refused
        assert (0x15, 1, 0, socket_nr) in ops and (0x15, 0, 1, 1) in ops  # socket(AF_UNIX) → EPERM
        for index, (code, jt, jf, _) in enumerate(ops):
            if code in (0x15, 0x35):
                assert index + 1 + max(jt, jf) < len(ops)  # every jump lands inside the program
    assert program_for("riscv64") is None


def test_grants_are_taken_once_keyed_by_the_call_as_approved_and_bounded(monkeypatch):
    ledger = SandboxGrants()
    ls = CommandCall("c1", "ls")
    ledger.give(ls, SandboxGrant(True))
    ledger.give(ls, SandboxGrant(True))  # the same call twice (a parent's and a subagent's)
    ledger.give(CommandCall("c1", "ls", unsandboxed=True), SandboxGrant(False))
    assert ledger.take(ls) == SandboxGrant(True) and ledger.take(ls) == SandboxGrant(True)
    assert ledger.take(ls) is None and ledger.take(CommandCall("c1", "other")) is None
    assert ledger.take(CommandCall("c1", "ls", hosts=("pypi.org",))) is None  # not the call approved
    assert ledger.take(CommandCall("c1", "ls", unsandboxed=True)) == SandboxGrant(False)
    monkeypatch.setattr(grants_module, "MAX_GRANTS", 3)
    for number in range(5):
        ledger.give(CommandCall(f"c{number}", "ls"), SandboxGrant(True))
    assert ledger.take(CommandCall("c0", "ls")) is None and ledger.take(CommandCall("c4", "ls")) is not None


def test_the_proxy_reads_connect_and_absolute_requests_only():
    assert _parse_request(b"CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443") == ("CONNECT", "pypi.org", 443, b"")
    method, host, port, first = _parse_request(
        b"GET http://example.com:8080/a?b=1 HTTP/1.1\r\nHost: example.com\r\nProxy-Authorization: x\r\nConnection: keep-alive"
    )  # type: ignore[misc]
    assert (method, host, port) == ("GET", "example.com", 8080)
    assert first == b"GET /a?b=1 HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"
    assert _parse_request(b"GET /local HTTP/1.1\r\nHost: x") is None
    assert _parse_request(b"CONNECT nohost HTTP/1.1") is None


def test_the_view_hides_the_credentials_and_seals_empty_folders_last(monkeypatch):
    base = Path(tempfile.mkdtemp(prefix="pj-view-", dir="/var/tmp"))  # /tmp is replaced inside
    home = base / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".pgpass").write_text("x")
    (home / ".penguin" / "data").mkdir(parents=True)
    workspace = home / ".penguin" / "data" / "p" / "agents" / "a" / "workspaces" / "w"
    workspace.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PENGUIN_HOME", str(home / ".penguin" / "data"))
    view = filesystem_view(str(workspace), "/p/tmp", "/p/empty")
    args = list(view.args)
    assert str(home / ".aws") in view.hidden and str(home / ".pgpass") in view.hidden
    assert str(home / ".penguin") in view.hidden and str(home / ".penguin" / "data") not in view.hidden
    assert args.index("--bind") < args.index(str(workspace))  # the workspace comes back inside the hidden root
    assert args.index(str(home / ".penguin")) < args.index(str(workspace))
    sealed = [args[i + 1] for i, a in enumerate(args) if a == "--remount-ro"]
    assert args.index("--remount-ro") > args.index(str(workspace)) and str(home / ".penguin") in sealed
    shutil.rmtree(base)


def test_the_kernels_own_code_cannot_point_the_sandbox_at_another_program(monkeypatch, tmp_path):
    """PENGUIN_BWRAP and PATH count as the process was started with them (/proc/self/environ):
    a cell that sets them later (a fake `bwrap` that runs the command outside) changes nothing."""
    from penguin_jupyter.environment.sandbox import support

    fake = tmp_path / "bwrap"
    fake.write_text('#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PENGUIN_BWRAP", str(fake))
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    found = support._probe()
    assert found.bwrap != str(fake)
    if shutil.which("bwrap", path="/usr/bin:/bin"):
        assert found.available and found.bwrap.endswith("/bwrap") and str(tmp_path) not in found.bwrap
