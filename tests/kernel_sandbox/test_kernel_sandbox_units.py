"""The sandboxed kernel's parts outside a kernel (penguin_jupyter/kernel_sandbox/): the hosts its
proxy lets through, the data root's slice and what is published from it, the marker a kernel
believes only with its walls up, the kernelspec and provisioner the package ships, and how
commands run inside a sandboxed kernel. The kernel-level suites are
tests/notebook/test_sandbox_kernel_escape.py and test_sandbox_kernel.py."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from penguin_jupyter.environment.sandbox import CommandCall, SandboxConfig, parse_hosts
from penguin_jupyter.environment.sandbox import command_sandbox as command_sandbox_module
from penguin_jupyter.environment.sandbox.enclosing import KernelSandbox, _read, kernel_sandbox, marker_text
from penguin_jupyter.environment.sandbox.launch import KernelLaunch
from penguin_jupyter.kernel_sandbox import KERNEL_SPEC_NAME, PROVISIONER_NAME
from penguin_jupyter.kernel_sandbox.data_slice import SLICES_DIR, DataSlice, prepare_slice, sweep
from penguin_jupyter.kernel_sandbox.endpoints import catalogue_hosts, kernel_hosts, url_host
from penguin_jupyter.state import paths
from penguin_jupyter.state.errors import ConfigError
from penguin_jupyter.state.project_config import parse_project_config
from tests.support.paths import REPO_ROOT

CONFIG = "/data/default_project/.project_config.toml"


def _cfg(**data):  # type: ignore[no-untyped-def]
    return parse_project_config(CONFIG, data)


# --- the hosts -------------------------------------------------------------------------------


def test_each_base_url_gives_exactly_its_host_and_port():
    assert url_host("http://127.0.0.1:8123/v1").text() == "127.0.0.1:8123"
    assert url_host("https://api.example.com/v1").text() == "api.example.com:443"
    assert url_host("http://[::1]:11434").text() == "[::1]:11434"
    assert url_host("ftp://x") is None and url_host("not a url") is None


def test_the_kernel_reaches_its_models_and_the_allowed_hosts_only():
    cfg = _cfg(
        models=[{"provider": "openai", "model_id": "m", "base_url": "http://127.0.0.1:8123/v1"},
                {"provider": "openai", "model_id": "n", "base_url": "https://gw.example.com/v1"}],
        sandbox={"allowed_hosts": ["pypi.org"]},
    )  # fmt: skip
    hosts = [rule.text() for rule in kernel_hosts(cfg, CONFIG, {})]
    assert hosts == ["127.0.0.1:8123", "gw.example.com:443", "pypi.org"]


def test_a_model_on_its_providers_default_endpoint_adds_the_catalogue_hosts():
    defaults = [rule.text() for rule in catalogue_hosts()]
    assert "api.openai.com:443" in defaults and "api.anthropic.com:443" in defaults
    without_url = _cfg(models=[{"provider": "anthropic", "model_id": "claude-opus-5"}])
    assert set(defaults) <= {rule.text() for rule in kernel_hosts(without_url, CONFIG, {})}
    # a provider key and no model configured: the same; neither: nothing but the config's own
    assert set(defaults) <= {rule.text() for rule in kernel_hosts(_cfg(), CONFIG, {"OPENAI_API_KEY": "k"})}
    assert kernel_hosts(_cfg(), CONFIG, {}) == ()
    # a provider's base URL variable names the host instead
    via_env = _cfg(models=[{"provider": "openai", "model_id": "m"}])
    assert [r.text() for r in kernel_hosts(via_env, CONFIG, {"OPENAI_BASE_URL": "http://10.0.0.5:9000/v1"})] == ["10.0.0.5:9000"]


def test_a_bad_sandbox_table_is_one_line():
    with pytest.raises(ConfigError, match="allowed_hosts"):
        kernel_hosts(_cfg(sandbox={"allowed_hosts": ["http://x"]}), CONFIG, {})


# --- the data root's slice -------------------------------------------------------------------


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    traces = paths.traces_dir(root, "default_project", "default_agent") / "2020-01-01"
    traces.mkdir(parents=True, mode=0o700)
    (traces / "session-other_001.jsonl").write_text('{"text": "OTHER"}\n')
    return root


def test_the_slice_shows_configuration_read_only_and_this_kernels_own_folders(tmp_path):
    root = _root(tmp_path)
    (paths.project_dir(root, "default_project") / ".project_config.toml").write_text("")
    os.chmod(paths.project_dir(root, "default_project") / ".project_config.toml", 0o600)
    piece = prepare_slice(root, "1:1")
    by_path = {mount.path: mount for mount in piece.mounts}
    real = root.resolve()
    assert by_path[str(real)].source == str(piece.data) and by_path[str(real)].writable
    assert not by_path[str(real / "default_project" / ".project_config.toml")].writable
    assert not by_path[str(real / "default_project" / "agents" / "default_agent" / "agent_state")].writable
    assert by_path[str(real / "spend")].writable
    agent = piece.data / "default_project" / "agents" / "default_agent"
    assert [p.name for p in (agent / "traces").iterdir()] == []  # no earlier session
    assert piece.folder.parent == root / SLICES_DIR


def test_publish_links_the_sessions_files_and_nothing_else(tmp_path):
    root = _root(tmp_path)
    piece = prepare_slice(root, "1:1")
    slice_traces = piece.data / "default_project" / "agents" / "default_agent" / "traces" / "2026-01-01"
    slice_traces.mkdir()
    (slice_traces / "session-new_001.jsonl").write_text("mine\n")
    secret = tmp_path / "id_rsa"
    secret.write_text("KEY")
    (slice_traces / "planted_001.jsonl").symlink_to(secret)  # a link the kernel planted
    other = piece.data / "default_project" / "agents" / "default_agent" / "traces" / "2020-01-01"
    other.mkdir()
    (other / "session-other_001.jsonl").write_text("forged\n")  # the name of a file it cannot see
    piece.publish()
    real_traces = paths.traces_dir(root, "default_project", "default_agent")
    published = real_traces / "2026-01-01" / "session-new_001.jsonl"
    assert published.read_text() == "mine\n"
    assert os.stat(published).st_ino == os.stat(slice_traces / "session-new_001.jsonl").st_ino  # a link: live
    assert not (real_traces / "2026-01-01" / "planted_001.jsonl").exists()
    assert (real_traces / "2020-01-01" / "session-other_001.jsonl").read_text() == '{"text": "OTHER"}\n'
    with open(slice_traces / "session-new_001.jsonl", "a") as handle:
        handle.write("more\n")
    assert published.read_text() == "mine\nmore\n"
    piece.dispose()
    assert published.read_text() == "mine\nmore\n" and not piece.folder.exists()


def test_a_slice_whose_launcher_died_is_published_by_the_next_one(tmp_path):
    root = _root(tmp_path)
    dead = prepare_slice(root, "999999999:1")
    folder = dead.data / "default_project" / "agents" / "default_agent" / "traces" / "2026-01-02"
    folder.mkdir()
    (folder / "session-late_001.jsonl").write_text("late\n")
    alive = prepare_slice(root, f"{os.getpid()}:{_start_time()}")  # sweeps as it starts
    sweep(root)
    assert not dead.folder.exists() and alive.folder.exists()
    real = paths.traces_dir(root, "default_project", "default_agent") / "2026-01-02" / "session-late_001.jsonl"
    assert real.read_text() == "late\n"
    DataSlice(root, alive.folder, ()).dispose()


def _start_time() -> str:
    from penguin_jupyter.kernel_sandbox.data_slice import _start_time as start_time

    return start_time(os.getpid())


# --- the marker ------------------------------------------------------------------------------


def test_a_marker_is_believed_only_with_the_walls_up(tmp_path):
    assert kernel_sandbox() is None  # the test process was not started in a kernel sandbox
    marker = tmp_path / "kernel.json"
    marker.write_text(marker_text("/w", parse_hosts(["api.openai.com"])))
    found = _read(marker)
    assert found is not None and not found.confined and "writable" in found.problem
    marker.write_text("{not json")
    assert "not one this version writes" in _read(marker).problem  # type: ignore[union-attr]


# --- commands in a sandboxed kernel ----------------------------------------------------------


def test_commands_in_a_sandboxed_kernel_run_as_they_are_and_cannot_leave(monkeypatch, tmp_path):
    kernel = KernelSandbox(str(tmp_path), parse_hosts(["127.0.0.1:8123", "pypi.org"]))
    monkeypatch.setattr(command_sandbox_module, "kernel_sandbox", lambda: kernel)
    sandbox = command_sandbox_module.CommandSandbox(SandboxConfig(), str(tmp_path))
    plan = sandbox.plan(CommandCall("c1", "ls"))
    assert plan.sandboxed and plan.in_kernel and plan.refusal is None
    assert plan.note() == "[sandboxed: writes only in the workspace and /tmp; network: 127.0.0.1:8123, pypi.org]"
    launch = sandbox.launch(["bash", "-lc", "ls"], str(tmp_path), {"A": "1"}, plan)
    assert isinstance(launch, KernelLaunch) and launch.argv == ["bash", "-lc", "ls"] and launch.pass_fds == ()
    assert "nothing it starts can leave it" in (sandbox.plan(CommandCall("c2", "ls", unsandboxed=True)).refusal or "")
    refused = sandbox.plan(CommandCall("c3", "curl x", hosts=("evil.example",))).refusal or ""
    assert "reaches only 127.0.0.1:8123, pypi.org; evil.example cannot be added" in refused
    assert sandbox.plan(CommandCall("c4", "pip download x", hosts=("pypi.org",))).refusal is None


# --- what the package ships ------------------------------------------------------------------


def test_the_kernelspec_and_provisioner_are_declared_for_installation():
    spec = json.loads((REPO_ROOT / "penguin_jupyter/kernel_sandbox/kernels" / KERNEL_SPEC_NAME / "kernel.json").read_text())
    assert spec["display_name"] == "Python 3 (penguin sandbox)"
    assert spec["argv"] == ["python", "-m", "penguin_jupyter.kernel_sandbox", "-f", "{connection_file}"]
    assert spec["metadata"]["kernel_provisioner"]["provisioner_name"] == PROVISIONER_NAME
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    shared = project["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    assert shared["penguin_jupyter/kernel_sandbox/kernels/penguin-sandbox"] == f"share/jupyter/kernels/{KERNEL_SPEC_NAME}"
    entry = project["project"]["entry-points"]["jupyter_client.kernel_provisioners"][PROVISIONER_NAME]
    assert entry == "penguin_jupyter.kernel_sandbox.provisioner:SandboxProvisioner"


def test_a_model_on_localhost_is_reached_through_the_proxy_by_name_only_when_listed(tmp_path):
    """A base_url of http://localhost:PORT (a local model server): the proxy connects when the
    rule names `localhost` itself, and still refuses it when only another host is listed."""
    import socket

    from penguin_jupyter.environment.sandbox.proxy import HostProxy
    from tests.support.sandbox_suite import CountingServer

    counting = CountingServer()
    try:
        for rules, expected in ((f"localhost:{counting.port}", b"200"), ("example.com", b"403")):
            proxy = HostProxy(parse_hosts([rules]), str(tmp_path / f"p{len(rules)}.sock"))
            proxy.start()
            try:
                with socket.socket(socket.AF_UNIX) as client:
                    client.connect(proxy.socket_path)
                    client.sendall(f"GET http://localhost:{counting.port}/m HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
                    assert expected in client.recv(4096).split(b"\r\n", 1)[0]
            finally:
                proxy.close()
    finally:
        counting.close()
    assert counting.hits == ["/m"]
