"""Config errors are not network errors: a base_url no request can use fails once, at once, and
is never retried; an endpoint that accepts connections and never answers ends within the
first-response budget (`llm/answer_budget.py`), with the engine's retry countdown in between,
and an interrupt still ends it at once."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest

from penguin_jupyter.engine import ContextEngine
from penguin_jupyter.interfaces import AbortSignal, LLMOutcome
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
from penguin_jupyter.llm.answer_budget import AnswerBudget
from penguin_jupyter.omni import OmniMessage, user_text
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.fakes import FakeEnv
from tests.support.llm import collect, scripted_model

pytestmark = pytest.mark.timeout(120)


class SilentServer:
    """A real TCP server on 127.0.0.1 that accepts every connection, reads, and never answers."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._connections: list[socket.socket] = []
        self._stop = threading.Event()
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def _serve(self) -> None:
        self._listener.settimeout(0.05)
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            self._connections.append(conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for conn in self._connections:
            conn.close()
        self._listener.close()


@pytest.fixture
def silent_server() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


def model_for(base_url: str, **overrides: object) -> GenerativeModel:
    fields: dict[str, object] = {
        "model_id": "scripted-model",
        "api_key": "test-key",
        "base_url": base_url,
        "client_type": "openai-chat",
    }
    fields.update(overrides)
    return GenerativeModel(GenerativeModelConfig(**fields))  # type: ignore[arg-type]


async def run_engine(model: GenerativeModel, **engine_options: int) -> list[OmniMessage]:
    engine = ContextEngine(model, FakeEnv(), **engine_options)
    return [msg async for msg in engine.run([user_text("hello")])]


def request_ends(messages: list[OmniMessage]) -> list[dict]:
    return [m.payload.model_dump(exclude_none=True) for m in messages if m.payload.type == "request_end"]


def abort_reasons(messages: list[OmniMessage]) -> list[str]:
    return [m.payload.reason for m in messages if m.payload.type == "abort"]


# --- a base_url no request can use ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "says"),
    [
        ("not a url at all", "is not a URL"),
        ("ftp://x", "unsupported scheme 'ftp'"),
        ("http://", "is not a URL"),
        ("http://host:port/v1", "is not a valid URL"),
        ("https://api.example.com /v1", "is not a valid URL"),
    ],
)
async def test_a_bad_base_url_is_one_permanent_line(base_url: str, says: str) -> None:
    _, outcome = await collect(model_for(base_url), [user_text("hi")])
    assert outcome.status == "failed" and outcome.permanent
    assert says in (outcome.message or "") and repr(base_url) in (outcome.message or "")
    assert "\n" not in (outcome.message or "")


async def test_a_bad_base_url_is_never_retried_by_the_engine() -> None:
    messages = await run_engine(model_for("not a url at all"), backoff_base_ms=0)
    ends = request_ends(messages)
    assert len(ends) == 1 and "retry_in_ms" not in ends[0]
    assert ends[0]["status"] == "failed"
    assert abort_reasons(messages) == [f"llm request error: {ends[0]['error_message']}"]
    assert "base_url 'not a url at all' is not a URL" in ends[0]["error_message"]


async def test_a_good_base_url_still_reaches_the_server() -> None:
    with ScriptedModelServer(["fine"]) as server:
        _, outcome = await collect(scripted_model(server), [user_text("hi")])
        assert outcome == LLMOutcome("completed") and len(server.requests) == 1


# --- an endpoint that never answers ---------------------------------------------------------------


async def test_a_silent_endpoint_ends_within_the_answer_budget(silent_server: SilentServer) -> None:
    model = model_for(
        silent_server.url, connect_timeout_ms=300, answer_budget_ms=1500, request_timeout_ms=60_000
    )
    messages = await run_engine(model, backoff_base_ms=400, max_reconnects=5)
    ends = request_ends(messages)
    # attempt 1 waits 0.3 s, the countdown shows 0.4 s; attempt 2 waits 0.3 s (ends at 1.0 s),
    # countdown 0.8 s; attempt 3 starts at 1.8 s, finds the 1.5 s budget spent and ends the Task
    # instead of climbing the rest of the ladder.
    assert [end["status"] for end in ends] == ["timeout", "timeout", "failed"]
    assert [end.get("retry_in_ms") for end in ends] == [400, 800, None]
    assert "connect_timeout_ms=300" in ends[0]["error_message"]
    assert silent_server.url in ends[0]["error_message"]
    final = ends[-1]["error_message"]
    assert "within 1500 ms over 3 attempts (answer_budget_ms)" in final
    assert abort_reasons(messages) == [f"llm request error: {final}"]
    assert silent_server.accepted >= 2


async def test_a_short_idle_timeout_is_named_when_it_is_the_shorter_wait(silent_server: SilentServer) -> None:
    model = model_for(silent_server.url, connect_timeout_ms=5_000, request_timeout_ms=200)
    _, outcome = await collect(model, [user_text("hi")])
    assert outcome.status == "timeout" and not outcome.permanent
    assert "(request_timeout_ms=200)" in (outcome.message or "")


async def test_interrupt_ends_a_silent_wait_at_once(silent_server: SilentServer) -> None:
    model = model_for(silent_server.url)  # the defaults: 10 s per attempt, 30 s in all
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.2, signal.abort)
    _, outcome = await asyncio.wait_for(collect(model, [user_text("hi")], signal=signal), timeout=5)
    assert outcome == LLMOutcome("aborted")


async def test_headers_count_as_the_answer_a_slow_first_chunk_is_the_idle_timers() -> None:
    # the server sends its headers at once, then stalls 3 s before the first chunk: longer than
    # the 1 s first-response window, shorter than the idle timer (a 0.2 s window was missed by the
    # headers themselves on a loaded CI machine)
    entry = {"text": ["late"], "fault": {"kind": "stall", "after": 0, "seconds": 3.0}}
    with ScriptedModelServer([entry]) as server:
        model = scripted_model(server, connect_timeout_ms=1_000, request_timeout_ms=10_000)
        messages, outcome = await collect(model, [user_text("hi")])
    assert outcome == LLMOutcome("completed")
    assert any(getattr(m.payload, "text", None) == "late" for m in messages)


def test_answer_budget_arithmetic() -> None:
    now = [0.0]
    budget = AnswerBudget(10_000, 30_000, clock=lambda: now[0])
    assert budget.begin_attempt() == 10.0
    now[0] = 10.0
    assert budget.unanswered() is False
    now[0] = 12.0  # the 2 s reconnect wait
    assert budget.begin_attempt() == 10.0
    now[0] = 22.0
    assert budget.unanswered() is False
    now[0] = 26.0  # the 4 s reconnect wait: 4 s of the budget left
    assert budget.begin_attempt() == 4.0 and budget.attempts == 3
    now[0] = 30.0
    assert budget.unanswered() is True  # spent: the caller ends the Task
    now[0] = 31.0
    assert budget.begin_attempt() == 10.0 and budget.attempts == 1  # a later Task starts afresh
    budget.answered()
    now[0] = 200.0
    assert budget.begin_attempt() == 10.0
    now[0] = 210.0
    budget.unanswered()
    now[0] = 300.0  # long after: not the next rung of the ladder
    assert budget.begin_attempt() == 10.0 and budget.attempts == 1


async def test_without_the_sdks_response_signal_only_the_idle_timer_applies(
    silent_server: SilentServer,
) -> None:
    # a client whose SDK calls are not observed (agenthub's Gemini client) cannot tell a slow first
    # token from silence: the first-response window stays off and the idle timer decides
    model = model_for(silent_server.url, connect_timeout_ms=100, request_timeout_ms=400)
    assert model._client is not None
    model._client.without_shortcuts().reports_responses = False
    _, outcome = await collect(model, [user_text("hi")])
    assert outcome == LLMOutcome("timeout", "no event from the model for 400 ms (request_timeout_ms)")


# --- the limits from the agent's system_config.yaml ---------------------------------------------


async def test_system_config_sets_the_connect_timeout_and_answer_budget(silent_server: SilentServer, tmp_path) -> None:
    """`model.connectTimeoutMs` / `model.answerBudgetMs` reach the session's model: a silent
    endpoint ends the Task naming the configured values (not the 10 s / 30 s defaults)."""
    import yaml

    from penguin_jupyter import create_agent
    from penguin_jupyter.state import add_model, paths

    agent = await create_agent()
    add_model(
        None, "default_project", provider="local", model_id="m", base_url=silent_server.url,
        api_key="sk-test-key-123", client_type="openai-chat", default=True,
    )  # fmt: skip
    file = paths.system_config_path(agent.root, agent.project_id, agent.agent_id)
    doc = yaml.safe_load(file.read_text())
    doc["model"].update(connectTimeoutMs=300, answerBudgetMs=1000)
    file.write_text(yaml.safe_dump(doc, sort_keys=False))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = await agent.create_session(workspace_dir=workspace)
    try:
        messages = [m async for m in session.run([user_text("hello")])]
    finally:
        session.dispose()
    ends = request_ends(messages)
    assert "connect_timeout_ms=300" in ends[0]["error_message"]
    assert "within 1000 ms over 2 attempts (answer_budget_ms)" in ends[-1]["error_message"]


async def test_a_bad_limit_in_system_config_is_one_line(tmp_path) -> None:
    import yaml

    from penguin_jupyter import create_agent
    from penguin_jupyter.state import ConfigError, add_model, paths

    agent = await create_agent()
    add_model(None, "default_project", provider="local", model_id="m", base_url="http://127.0.0.1:9/v1", default=True)
    file = paths.system_config_path(agent.root, agent.project_id, agent.agent_id)
    doc = yaml.safe_load(file.read_text())
    doc["model"]["answerBudgetMs"] = "a minute"
    file.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(ConfigError, match=r"model\.answerBudgetMs: must be an integer, got 'a minute'$"):
        await agent.create_session(workspace_dir=tmp_path)


# --- failures waiting cannot fix (docs/model-requests.md "Failures waiting cannot fix") -----------


def closed_local_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_host_name_that_does_not_resolve_ends_the_task_at_once() -> None:
    """RFC 6761's `.invalid` never resolves. Before: five retries over 61 s, each called
    "Request timeout". A resolver that cannot answer at all (EAI_AGAIN, an offline machine) is
    given one retry; a name that does not exist none."""
    messages = await run_engine(model_for("http://nonexistent.invalid/v1"), max_reconnects=5)
    ends = request_ends(messages)
    assert 1 <= len(ends) <= 2
    assert all(end["status"] in ("failed", "timeout") for end in ends)
    assert ends[-1]["status"] == "failed" and "retry_in_ms" not in ends[-1]
    final = ends[-1]["error_message"]
    assert final.startswith("the host name nonexistent.invalid ")
    assert "Connection error" not in final
    assert abort_reasons(messages) == [f"llm request error: {final}"]


async def test_a_refused_local_port_ends_the_task_at_the_first_attempt() -> None:
    port = closed_local_port()
    messages = await run_engine(model_for(f"http://127.0.0.1:{port}/v1"), max_reconnects=5)
    ends = request_ends(messages)
    assert ends == [
        {
            "type": "request_end",
            "status": "failed",
            "attempt": 1,
            "error_message": f"connection refused by 127.0.0.1:{port} (Connection refused); is the model server running?",
        }
    ]
    assert abort_reasons(messages) == [f"llm request error: {ends[0]['error_message']}"]


async def test_a_refused_remote_port_stays_on_the_ladder_naming_its_cause() -> None:
    """Only a local port is certain to stay closed; a remote one may be restarting."""
    from penguin_jupyter.llm.classify import classify_error

    refused = ConnectionRefusedError(111, "Connect call failed ('203.0.113.7', 443)")
    wrapped = OSError("All connection attempts failed")
    wrapped.__cause__ = refused
    outcome = classify_error(RuntimeError("Connection error."), base_url="https://203.0.113.7/v1")
    assert outcome.status == "failed"  # no socket error in it: not a connection failure
    error = RuntimeError("Connection error.")
    error.__cause__ = wrapped
    outcome = classify_error(error, base_url="https://203.0.113.7/v1")
    assert outcome == LLMOutcome("timeout", "connection refused by 203.0.113.7:443 (Connection refused)")


def test_a_temporary_resolver_failure_is_retried_once() -> None:
    from penguin_jupyter.llm.classify import classify_error

    error = RuntimeError("Connection error.")
    error.__cause__ = socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    first = classify_error(error, base_url="https://api.example.com/v1")
    assert (first.status, first.permanent) == ("timeout", False)
    assert first.message == (
        "the host name api.example.com could not be resolved right now (Temporary failure in name resolution)"
    )
    second = classify_error(error, base_url="https://api.example.com/v1", previous_connect="dns_temporary")
    assert (second.status, second.permanent) == ("failed", True)


@pytest.mark.parametrize(
    ("fault", "asked"),
    [
        # the provider's word: not asked again
        ({"kind": "http", "status": 500, "message": "quota gone for good", "headers": {"x-should-retry": "false"}}, 1),
        # a 4xx: one retry, then refused the same way again (llm/rejections.py)
        ({"kind": "http", "status": 404, "message": "no such model"}, 2),
    ],
)
async def test_an_answer_waiting_cannot_fix_is_asked_at_most_twice(fault: dict, asked: int) -> None:
    """Counted at the server: the Task ends naming the answer, the ladder not climbed."""
    with ScriptedModelServer([{"fault": fault}] * asked + ["never served"]) as server:
        messages = await run_engine(scripted_model(server), backoff_base_ms=10, max_reconnects=5)
        assert len(server.requests) == asked
        assert server.remaining == [{"text": "never served"}]
    ends = request_ends(messages)
    assert len(ends) == asked and "retry_in_ms" not in ends[-1]
    assert ends[-1]["error_message"].startswith(f"HTTP {fault['status']}: {fault['message']}")


async def test_the_scripted_servers_exhaustion_is_asked_once() -> None:
    """Before: an HTTP 500 "script exhausted" (sent with x-should-retry: false) took 64 s."""
    with ScriptedModelServer([]) as server:
        messages = await run_engine(scripted_model(server), max_reconnects=5)
        assert len(server.requests) == 1
    assert abort_reasons(messages) == [
        "llm request error: HTTP 500: scripted model server: script exhausted (server_error)"
    ]


async def test_a_transient_answer_still_climbs_the_ladder_with_its_countdown() -> None:
    entries = [{"fault": {"kind": "http", "status": 503}}, {"fault": {"kind": "http", "status": 429}}, "ok"]
    with ScriptedModelServer(entries) as server:
        messages = await run_engine(scripted_model(server), backoff_base_ms=10, max_reconnects=5)
        assert len(server.requests) == 3
    ends = request_ends(messages)
    assert [(end["status"], end.get("retry_in_ms")) for end in ends] == [
        ("timeout", 10),
        ("timeout", 20),
        ("completed", None),
    ]
