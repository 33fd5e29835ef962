"""The ScriptedModelServer on the wire (raw HTTP with httpx), its script validation and file
loading, thread safety, and the `python -m penguin_jupyter.testing` command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import httpx
import pytest

from penguin_jupyter.testing import (
    DEMO_SALES_CSV,
    ScriptedModelServer,
    ScriptError,
    copy_demo_data,
    demo_entries,
)
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT


def _post(server: ScriptedModelServer, body: dict | bytes, **kwargs) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{server.url}/chat/completions", content=content, timeout=30, **kwargs)


def _sse_payloads(response: httpx.Response) -> list[str]:
    assert response.headers["content-type"].startswith("text/event-stream")
    events = response.text.split("\n\n")
    assert events[-1] == ""
    return [event.removeprefix("data: ") for event in events[:-1]]


STREAM_REQUEST = {
    "model": "scripted-model",
    "stream": True,
    "stream_options": {"include_usage": True},
    "messages": [{"role": "user", "content": "hello"}],
}


def test_sse_wire_shape_of_a_full_response():
    entry = {
        "reasoning": "hmm",
        "text": "Hi!",
        "tool_calls": [{"name": "exec_command", "arguments": {"cmd": "ls"}, "id": "call_a"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }
    with ScriptedModelServer([entry]) as server:
        response = _post(server, STREAM_REQUEST)
    assert response.status_code == 200
    payloads = _sse_payloads(response)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert deltas[0] == {"role": "assistant", "reasoning_content": "hmm"}
    assert deltas[1] == {"content": "Hi!"}
    assert deltas[2] == {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_a",
                "type": "function",
                "function": {"name": "exec_command", "arguments": ""},
            }
        ]
    }
    assert deltas[3] == {"tool_calls": [{"index": 0, "function": {"arguments": '{"cmd":"'}}]}
    assert deltas[4] == {"tool_calls": [{"index": 0, "function": {"arguments": 'ls"}'}}]}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 0},
    }


def test_usage_chunk_only_when_requested_and_default_usage_is_estimated():
    with ScriptedModelServer(["abc", "abc"]) as server:
        without = _sse_payloads(_post(server, {**STREAM_REQUEST, "stream_options": None}))
        with_usage = _sse_payloads(_post(server, STREAM_REQUEST))
    assert all(json.loads(p)["choices"] for p in without[:-1])
    usage = json.loads(with_usage[-2])["usage"]
    assert usage["completion_tokens"] == 1
    assert usage["prompt_tokens"] >= 1
    assert usage["total_tokens"] == usage["prompt_tokens"] + 1


def test_models_endpoint_and_unknown_routes():
    with ScriptedModelServer(model="demo-model") as server:
        models = httpx.get(f"{server.url}/models", timeout=30)
        missing = httpx.get(f"{server.url}/nothing", timeout=30)
    assert models.status_code == 200
    assert models.json()["data"][0]["id"] == "demo-model"
    assert models.json()["object"] == "list"
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == "scripted model server: no route GET /v1/nothing"


def test_non_streaming_and_non_json_requests_are_refused_without_consuming_entries():
    with ScriptedModelServer(["kept"]) as server:
        plain = _post(server, {**STREAM_REQUEST, "stream": False})
        garbage = _post(server, b"{nope")
        assert server.remaining == [{"text": "kept"}]
        assert len(server.requests) == 1  # the non-streaming body is recorded; garbage is not JSON
    assert plain.status_code == 400
    assert (
        plain.json()["error"]["message"]
        == 'scripted model server: only streaming requests ("stream": true) are served'
    )
    assert garbage.status_code == 400
    assert garbage.json()["error"]["message"].startswith(
        "scripted model server: request body is not a JSON object"
    )


def test_exhausted_script_answers_500_with_no_retry_header():
    with ScriptedModelServer() as server:
        response = _post(server, STREAM_REQUEST)
    assert response.status_code == 500
    assert response.headers["x-should-retry"] == "false"
    assert response.json() == {
        "error": {
            "message": "scripted model server: script exhausted",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }


def test_http_fault_carries_custom_headers_and_type():
    fault = {"kind": "http", "status": 503, "type": "overloaded", "headers": {"retry-after": "7"}}
    with ScriptedModelServer([{"fault": fault}]) as server:
        response = _post(server, STREAM_REQUEST)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "7"
    assert response.json()["error"]["type"] == "overloaded"
    assert response.json()["error"]["message"] == "The server had an error while processing your request."


def test_malformed_fault_sends_its_data_line_then_done():
    with ScriptedModelServer(
        [{"text": "abcdefghijklmnop", "fault": {"kind": "malformed", "after": 1}}]
    ) as server:
        payloads = _sse_payloads(_post(server, STREAM_REQUEST))
    assert json.loads(payloads[0])["choices"][0]["delta"]["content"] == "abcdefgh"
    assert payloads[1:] == ["{not json", "[DONE]"]


def test_drop_fault_cuts_the_body():
    with ScriptedModelServer([{"text": "abcdefghijklmnop", "fault": {"kind": "drop", "after": 1}}]) as server:
        with pytest.raises(httpx.RemoteProtocolError):
            _post(server, STREAM_REQUEST)
        # the server keeps serving afterwards
        server.add("next")
        assert _post(server, STREAM_REQUEST).status_code == 200


def test_request_headers_are_recorded():
    with ScriptedModelServer(["a"]) as server:
        _post(server, STREAM_REQUEST, headers={"Authorization": "Bearer sk-test"})
        (headers,) = server.request_headers
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["content-length"] == str(len(json.dumps(STREAM_REQUEST).encode()))


def test_concurrent_requests_each_get_exactly_one_entry():
    count = 12
    with ScriptedModelServer([f"answer {i}" for i in range(count)]) as server:
        texts: list[str] = []
        lock = threading.Lock()

        def worker() -> None:
            payloads = _sse_payloads(_post(server, STREAM_REQUEST))
            text = "".join(
                json.loads(p)["choices"][0]["delta"].get("content", "")
                for p in payloads[:-1]
                if json.loads(p)["choices"]
            )
            with lock:
                texts.append(text)

        threads = [threading.Thread(target=worker) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert server.remaining == []
        assert len(server.requests) == count
    assert sorted(texts) == sorted(f"answer {i}" for i in range(count))


def test_stop_is_idempotent_and_url_needs_a_started_server():
    server = ScriptedModelServer()
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.url
    server.start()
    assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
    server.stop()
    server.stop()


# --- script validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"txt": "hi"}, "script entry 0: unknown key 'txt' (known: reasoning, text, tool_calls, usage,"),
        (42, "script entry 0: expected an object, got int"),
        ({"text": 5}, "script entry 0.text: expected a string or a list of strings, got int"),
        (
            {"tool_calls": [{"arguments": {}}]},
            "script entry 0.tool_calls[0]: 'name' must be a non-empty string",
        ),
        (
            {"tool_calls": [{"name": "x", "arguments": 3}]},
            "script entry 0.tool_calls[0]: 'arguments' must be an object or a JSON string, got int",
        ),
        ({"finish_reason": "done"}, "script entry 0.finish_reason: must be one of stop, tool_calls, length"),
        (
            {"fault": {"kind": "boom"}},
            "script entry 0.fault: 'kind' must be one of http, drop, malformed, stall",
        ),
        (
            {"fault": {"kind": "http", "status": 200}},
            "script entry 0.fault.status: expected an integer >= 400",
        ),
        ({"fault": {"kind": "drop", "after": -1}}, "script entry 0.fault.after: expected an integer >= 0"),
        ({"fault": {"kind": "drop", "seconds": 1}}, "script entry 0.fault: unknown key 'seconds'"),
        ({"usage": {"prompt": 1}}, "script entry 0.usage: unknown key 'prompt'"),
        ({"delay_ms": "fast"}, "script entry 0.delay_ms: expected an integer >= 0, got 'fast'"),
    ],
)
def test_bad_entries_raise_one_line_errors_at_add_time(entry, message):
    server = ScriptedModelServer()
    with pytest.raises(ScriptError) as info:
        server.add(entry)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)
    assert server.remaining == []


def test_entry_position_is_named_in_errors():
    with pytest.raises(ValueError, match=r"^script entry 2: expected an object, got list$"):
        ScriptedModelServer(["a", {"text": "b"}, []])


def test_from_file_json_and_yaml(tmp_path):
    json_file = tmp_path / "s.json"
    json_file.write_text(json.dumps([{"text": "from json"}]), encoding="utf-8")
    yaml_file = tmp_path / "s.yaml"
    yaml_file.write_text("entries:\n  - text: from yaml\n    reasoning: [a, b]\n", encoding="utf-8")
    assert ScriptedModelServer.from_file(json_file).remaining == [{"text": "from json"}]
    assert ScriptedModelServer.from_file(yaml_file).remaining == [
        {"text": "from yaml", "reasoning": ["a", "b"]}
    ]


def test_from_file_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[{", encoding="utf-8")
    with pytest.raises(ScriptError, match=r"^script file .*bad\.json is not valid json: "):
        ScriptedModelServer.from_file(bad)
    with pytest.raises(
        ScriptError, match=r"^cannot read script file .*missing\.json: No such file or directory$"
    ):
        ScriptedModelServer.from_file(tmp_path / "missing.json")
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("just text\n", encoding="utf-8")
    with pytest.raises(ScriptError, match="expected a list of entries"):
        ScriptedModelServer.from_file(scalar)


# --- demo ------------------------------------------------------------------------------------------


def test_demo_entries_and_data(tmp_path):
    entries = demo_entries()
    assert len(entries) == 4
    assert entries[0]["tool_calls"][0]["name"] == "exec_command"
    assert entries[0]["tool_calls"][0]["arguments"]["cmd"] == "ls -la"
    assert "description" in entries[0]["tool_calls"][0]["arguments"]
    assert entries[1]["tool_calls"][0] == {
        "name": "read_file",
        "id": "call_demo_read",
        "arguments": {"file_path": "sales.csv"},
    }
    assert entries[2]["tool_calls"][0]["arguments"]["file_path"] == "summary.md"
    assert "tool_calls" not in entries[3]
    rows = DEMO_SALES_CSV.read_text(encoding="utf-8").splitlines()
    assert rows[0] == "date,region,product,units,unit_price"
    assert len(rows) == 21
    revenue = sum(int(r.split(",")[3]) * float(r.split(",")[4]) for r in rows[1:])
    assert f"${revenue:,.2f}" == "$12,451.50"
    copied = copy_demo_data(tmp_path / "ws")
    assert copied == tmp_path / "ws" / "sales.csv"
    assert copied.read_text(encoding="utf-8") == DEMO_SALES_CSV.read_text(encoding="utf-8")
    ScriptedModelServer(entries)  # validates


# --- command line ----------------------------------------------------------------------------------


def _spawn_cli(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "penguin_jupyter.testing", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_cli_demo_serves_until_interrupted(tmp_path):
    proc = _spawn_cli("--demo", "--workspace", str(tmp_path / "ws"))
    try:
        line = proc.stdout.readline()
        assert line.startswith("scripted model server: http://127.0.0.1:")
        assert line.rstrip().endswith("(model scripted-model, 4 entries)")
        assert proc.stdout.readline() == f"demo data: {tmp_path / 'ws' / 'sales.csv'}\n"
        assert (tmp_path / "ws" / "sales.csv").read_bytes() == DEMO_SALES_CSV.read_bytes()
        url = line.split()[3]
        # how to use it (issue 39: it printed a URL and nothing else)
        usage = [proc.stdout.readline() for _ in range(5)]
        assert usage[0].startswith("In a notebook, `%penguin demo` starts a demo model of its own")
        assert f'base_url="{url}"' in usage[3] and 'client_type="openai-chat"' in usage[3]
        assert "Ctrl-C stops it" in usage[4]
        response = httpx.post(f"{url}/chat/completions", json=STREAM_REQUEST, timeout=30)
        assert response.status_code == 200
        assert '"name":"exec_command"' in response.text
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_script_file_and_port(tmp_path):
    script = tmp_path / "s.json"
    script.write_text('["only entry"]', encoding="utf-8")
    with socket_port() as port:
        pass
    proc = _spawn_cli("--script", str(script), "--port", str(port))
    try:
        line = proc.stdout.readline()
        assert line.startswith(f"scripted model server: http://127.0.0.1:{port}/v1 ")
        models = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=30)
        assert models.json()["data"][0]["id"] == "scripted-model"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_cli_workspace_needs_demo(tmp_path):
    proc = _spawn_cli("--script", "x.json", "--workspace", str(tmp_path))
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err.rstrip().endswith("error: --workspace only goes with --demo")


def test_cli_bad_script_is_a_one_line_error(tmp_path):
    script = tmp_path / "s.json"
    script.write_text('[{"txt": 1}]', encoding="utf-8")
    proc = _spawn_cli("--script", str(script))
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err.startswith("error: script entry 0: unknown key 'txt'")
    assert err.count("\n") == 1


class socket_port:
    """A free loopback port (bound then released)."""

    def __enter__(self) -> int:
        import socket

        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        return self._sock.getsockname()[1]

    def __exit__(self, *exc: object) -> None:
        self._sock.close()


def test_after_script_answers_every_request_once_the_script_is_done():
    with ScriptedModelServer(["first"], after_script={"text": "the task is done", "chunk": 100}) as server:
        texts = []
        for _ in range(3):
            response = httpx.post(f"{server.url}/chat/completions", json=STREAM_REQUEST, timeout=30)
            assert response.status_code == 200
            texts.append(response.text)
    assert '"first"' in texts[0]
    assert all("the task is done" in text for text in texts[1:])


def test_if_tools_and_unless_tools_follow_what_the_request_offers():
    """One script, two paths: an entry a request does not meet is dropped (conditions.py)."""
    script = [
        {"if_tools": ["insert_cell"], "text": "inserted", "chunk": 100},
        {"unless_tools": ["insert_cell"], "text": "no page here", "chunk": 100},
        "last",
    ]
    offered = {**STREAM_REQUEST, "tools": [{"type": "function", "function": {"name": "read_notebook"}}]}
    with ScriptedModelServer(script) as server:
        first = httpx.post(f"{server.url}/chat/completions", json=offered, timeout=30)
        assert "no page here" in first.text and "inserted" not in first.text
        assert server.remaining == [{"text": "last"}]
    with ScriptedModelServer(script) as server:
        with_page = {**offered, "tools": [*offered["tools"], {"type": "function", "function": {"name": "insert_cell"}}]}
        assert "inserted" in httpx.post(f"{server.url}/chat/completions", json=with_page, timeout=30).text
        assert "last" in httpx.post(f"{server.url}/chat/completions", json=with_page, timeout=30).text
    with pytest.raises(ValueError, match=r"script entry 0\.if_tools: expected a list of tool names"):
        ScriptedModelServer([{"if_tools": "insert_cell", "text": "x"}])
