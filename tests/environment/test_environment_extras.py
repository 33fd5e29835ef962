"""The archive unit behaviour (scenario 99), the command policy approve wrapper (docs/architecture.md "The session layer"),
read_image / describe_image (docs/tools.md "read_image and describe_image") over real files and loopback HTTP, and MCP tools through
the Environment (docs/mcp.md "Naming, permission, results")."""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import AsyncIterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from penguin_jupyter.environment import (
    Environment,
    EnvironmentConfig,
    ToolConfig,
    evaluate_command_policy,
    wrap_approve_with_command_policy,
)
from penguin_jupyter.environment.archive import (
    ARCHIVE_BYTE_BUDGET,
    ArchiveCapture,
    ArchiveFailed,
    ArchiveSaved,
)
from penguin_jupyter.interfaces import (
    EnvironmentServices,
    GenerativeModelParameters,
    LLMOutcome,
    VisionDescriberService,
)
from penguin_jupyter.omni import partial_text, tool_call
from tests.support.env import assert_well_framed, final, make_env, run_call, tool_entry
from tests.support.mcp import FIXTURE_TOOLS, fixture_children, fixture_entry
from tests.support.processes import wait_until

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24

# --- archive ---------------------------------------------------------------------------------


def test_archive_repairs_surrogates_and_sets_modes(tmp_path):
    assert ARCHIVE_BYTE_BUDGET == 8 * 1024 * 1024 - 1
    directory = tmp_path / "a" / "b" / "truncated-tool-output"
    capture = ArchiveCapture(str(directory), "tool", "call_1")
    for piece in ("hello ", "企鹅", "\ud83d", "\udc27|", "\ud83d", "x"[:0], "\ud83d", "\udc27"):
        capture.append(piece)
    saved = capture.save()
    assert isinstance(saved, ArchiveSaved) and not saved.archive_truncated
    assert Path(saved.path).read_text(encoding="utf-8") == "hello 企鹅🐧|\ufffd🐧"
    assert oct(os.stat(saved.path).st_mode & 0o777) == "0o600"
    assert oct(os.stat(directory).st_mode & 0o777) == "0o700"
    # Every directory penguin creates is private, parents included.
    assert oct(os.stat(directory.parent).st_mode & 0o777) == "0o700"
    assert capture.save() == ArchiveFailed("ALREADY_SAVED")


def test_archive_small_budget_keeps_head_and_tail(tmp_path):
    capture = ArchiveCapture(str(tmp_path / "t"), "tool", "call_2", budget=96)
    capture.append("HEAD-" + "企" * 40)
    capture.append("鹅" * 40 + "-TAIL")
    saved = capture.save()
    assert isinstance(saved, ArchiveSaved) and saved.archive_truncated
    data = Path(saved.path).read_bytes()
    assert len(data) <= 96
    text = data.decode("utf-8")
    assert text.startswith("HEAD-") and text.endswith("-TAIL") and "[archive middle truncated]" in text
    assert "\ufffd" not in text


def test_independent_captures_and_blocked_path(tmp_path, caplog):
    saves = []
    for i in range(3):
        capture = ArchiveCapture(str(tmp_path / "many"), "tool", f"call_{i}")
        capture.append(f"capture {i}")
        saves.append(capture.save())
    assert all(isinstance(s, ArchiveSaved) for s in saves) and len({s.path for s in saves}) == 3
    (tmp_path / "blocker").write_text("file")
    blocked = ArchiveCapture(str(tmp_path / "blocker" / "truncated-tool-output"), "tool", "call_x")
    blocked.append("data")
    result = blocked.save()
    assert isinstance(result, ArchiveFailed) and result.code in ("EEXIST", "ENOTDIR")
    expected = f'[penguin] tool "tool" truncated output archive write failed ({result.code}).'
    assert expected in caplog.messages
    assert blocked.save() == ArchiveFailed("ALREADY_SAVED")


def test_archive_file_name_is_sanitized(tmp_path):
    capture = ArchiveCapture(str(tmp_path), "mcp__srv.tool/x", "id")
    capture.append("x")
    saved = capture.save()
    assert os.path.basename(saved.path).startswith("mcp__srv_tool_x-") and saved.path.endswith(".log")


# --- command policy --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [
        "rm -rf /",
        "sudo rm -r -f /home",
        "/bin/rm --recursive --force x",
        '"rm" -rf /',
        "r''m -fr /tmp/x",
        "sh -c 'rm -rf /'",
        "mkfs.ext4 /dev/sda1",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        ":(){ :|:& };:",
        "cat x > /dev/nvme0n1",
    ],
)
def test_policy_factory_rules_hit(cmd):
    assert evaluate_command_policy(cmd) is not None


@pytest.mark.parametrize(
    "cmd", ["rm -r build", "rm -f x.txt", "dd if=/dev/zero of=/dev/null", "ls -la", "echo --red-flag"]
)
def test_policy_ordinary_commands_pass(cmd):
    assert evaluate_command_policy(cmd) is None


async def test_wrap_approve_with_command_policy():
    asked: list[str] = []

    async def host(call):
        asked.append(call.payload.name)
        return "allow"

    approve = wrap_approve_with_command_policy(host)
    assert await approve(tool_call("exec_command", {"cmd": "rm -rf /"}, "c1")) == "forbidden"
    assert (
        await approve(tool_call("input_command", {"process_id": "p", "chars": "rm -rf ~\n"}, "c2"))
        == "forbidden"
    )
    assert await approve(tool_call("input_command", {"process_id": "p", "chars": "\u0003"}, "c3")) == "allow"
    assert await approve(tool_call("exec_command", {"cmd": "ls"}, "c4")) == "allow"
    assert await approve(tool_call("write_file", {"file_path": "rm -rf /", "content": ""}, "c5")) == "allow"
    assert await approve(tool_call("exec_command", "{broken", "c6")) == "allow"
    assert asked == ["input_command", "exec_command", "write_file", "exec_command"]
    disabled = wrap_approve_with_command_policy(host, {"enabled": False})
    assert await disabled(tool_call("exec_command", {"cmd": "rm -rf /"}, "c7")) == "allow"
    custom = wrap_approve_with_command_policy(host, {"rules": [{"name": "no-curl", "pattern": r"\bcurl\b"}]})
    assert await custom(tool_call("exec_command", {"cmd": "curl x"}, "c8")) == "forbidden"
    assert await custom(tool_call("exec_command", {"cmd": "rm -rf /"}, "c9")) == "allow"


# --- images ----------------------------------------------------------------------------------


class _ImageHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/missing.png":
            self.send_response(404)
            self.end_headers()
            return
        body = PNG if self.path != "/text" else b"hello"
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream" if self.path != "/text" else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def image_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ImageHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_read_image_file_url_and_errors(tmp_path, image_server):
    (tmp_path / "pic.png").write_bytes(PNG)
    (tmp_path / "empty.png").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("not an image")
    (tmp_path / "big.png").write_bytes(PNG + b"\0" * (5 * 1024 * 1024))
    env = make_env(tmp_path, tool_entry("read_image"))
    msgs = await run_call(env, "read_image", {"source": "pic.png"})
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert (final(msgs).output, final(msgs).images, final(msgs).stop_reason) == (
        "image/png, 32 B",
        [data_url],
        "completed",
    )
    assert_well_framed(msgs)
    remote = await run_call(env, "read_image", {"source": f"{image_server}/pic"})
    assert final(remote).images == [data_url]
    expectations = {
        "": 'Missing required argument "source" for read_image.',
        "empty.png": 'Image "empty.png" is empty.',
        "notes.txt": "Unsupported image type: only png, jpeg, gif and webp are supported.",
        "big.png": "Image too large: 5.0 MB exceeds the 5.0 MB limit.",
        str(tmp_path): f'Failed to read image "{tmp_path}": path is not a file.',
        f"{image_server}/missing.png": f'Failed to download image "{image_server}/missing.png": HTTP 404',
    }
    for source, expected in expectations.items():
        result = final(await run_call(env, "read_image", {"source": source}))
        assert (result.output, result.stop_reason) == (expected, "failed")
        assert result.images is None
    missing = final(await run_call(env, "read_image", {"source": "nope.png"}))
    assert missing.output.startswith('Failed to read image "nope.png": ')
    env.dispose()


class _VisionLLM:
    def __init__(self, texts: list[str], outcome: LLMOutcome):
        self.texts, self.outcome = texts, outcome
        self.seen: list[GenerativeModelParameters] = []

    async def stream_generate(self, parameters: GenerativeModelParameters) -> AsyncIterator:
        self.seen.append(parameters)
        yield partial_text("start")
        for text in self.texts:
            yield partial_text("delta", text)
        yield self.outcome


def _vision_env(tmp_path, llm):
    services = EnvironmentServices(
        vision_describer=VisionDescriberService(model_id="vis-1", create_llm=lambda: llm)
    )
    return make_env(tmp_path, tool_entry("describe_image"), services=services)


async def test_describe_image(tmp_path):
    (tmp_path / "pic.png").write_bytes(PNG)
    llm = _VisionLLM(["A tiny ", "black square."], LLMOutcome("completed"))
    env = _vision_env(tmp_path, llm)
    msgs = await run_call(env, "describe_image", {"source": "pic.png"})
    assert final(msgs).output == "image/png, 32 B — described by vis-1:\nA tiny black square."
    assert final(msgs).stop_reason == "completed"
    (prompt, image) = llm.seen[0].new_messages
    assert prompt.payload.text.startswith("Describe this image in detail")
    assert image.payload.image_url.startswith("data:image/png;base64,")
    failing = _vision_env(tmp_path, _VisionLLM(["partial"], LLMOutcome("failed", "quota")))
    result = final(await run_call(failing, "describe_image", {"source": "pic.png"}))
    assert result.output.endswith("partial\nVision model (vis-1) request failed: quota")
    assert result.stop_reason == "failed"
    silent = _vision_env(tmp_path, _VisionLLM([], LLMOutcome("completed")))
    assert final(await run_call(silent, "describe_image", {"source": "pic.png"})).output.endswith(
        "[vision model returned no text]"
    )
    none = make_env(tmp_path, tool_entry("describe_image"))
    result = final(await run_call(none, "describe_image", {"source": "pic.png"}))
    assert result.stop_reason == "failed" and result.output.startswith(
        "No vision model is configured for this project."
    )


# --- MCP through the Environment -------------------------------------------------------------


async def test_mcp_tools_through_the_environment(tmp_path):
    env = Environment(
        EnvironmentConfig(
            workspace_dir=str(tmp_path),
            tool_config=ToolConfig(builtin=[tool_entry("read_file")], mcp_servers=[fixture_entry()]),
            vault={"PENGUIN_VAULT_TEST_KEY": "v"},
        )
    )
    results = await env.connect_mcp()
    assert [(r.server, r.status, r.tools) for r in results] == [("fx", "completed", 6)]
    names = [t.name for t in await env.list_tools()]
    assert names == ["read_file", *FIXTURE_TOOLS]
    msgs = await run_call(env, "mcp__fx__echo", {"text": "hi"})
    assert final(msgs).output == "echo: hi" and final(msgs).stop_reason == "completed"
    assert_well_framed(msgs)
    assert env.tool_permission("mcp__fx__echo") == "r"
    assert env.tool_permission("mcp__fx__nope") is None
    unknown = await run_call(env, "mcp__fx__nope", {})
    assert final(unknown).output == "Unknown tool: mcp__fx__nope"
    await env.aclose()
    assert wait_until(lambda: not fixture_children(), timeout_s=10)


async def test_mcp_lazy_connect_on_first_call(tmp_path):
    env = Environment(
        EnvironmentConfig(
            workspace_dir=str(tmp_path), tool_config=ToolConfig(builtin=[], mcp_servers=[fixture_entry()])
        )
    )
    msgs = await run_call(env, "mcp__fx__echo", {"text": "lazy"})
    assert final(msgs).output == "echo: lazy"
    await env.aclose()
