"""A request the provider refuses the same way twice is not retried again (issue 42, defect 1's
second half): a session whose history the provider will not take stops at once and says how to
go on, instead of spending the whole retry ladder (~60 s) on every Task. On 3758335 every such
Task retried five times over about a minute and ended with "llm request failed after 5 retries".
Real session, real engine, the scripted server answering each request with the provider's 400."""

from __future__ import annotations

import time

from penguin_jupyter import create_agent
from penguin_jupyter.llm.rejections import REPEATED_REJECTION_GUIDANCE
from penguin_jupyter.omni import user_text
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.llm import collect, scripted_model
from tests.support.session import allow, configure_model
from tests.support.session import collect as drain

HISTORY_REFUSAL = {
    "fault": {
        "kind": "http",
        "status": 400,
        "message": "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    }
}


async def test_the_same_refusal_twice_is_permanent_and_anything_else_forgets_it() -> None:
    other = {"fault": {"kind": "http", "status": 400, "message": "something else"}}
    with ScriptedModelServer([HISTORY_REFUSAL, HISTORY_REFUSAL, "fine", HISTORY_REFUSAL, other, other]) as server:
        model = scripted_model(server)
        outcomes = [(await collect(model, [user_text("go")]))[1] for _ in range(6)]
    assert [o.status for o in outcomes] == ["failed"] * 2 + ["completed"] + ["failed"] * 3
    assert [o.permanent for o in outcomes] == [False, True, False, False, False, True]
    assert outcomes[1].message.endswith(REPEATED_REJECTION_GUIDANCE)
    assert outcomes[1].message.startswith("HTTP 400: Invalid parameter: messages with role 'tool'")


async def test_auth_and_passing_errors_are_never_made_permanent_here() -> None:
    rate = {"fault": {"kind": "http", "status": 429}}
    with ScriptedModelServer([rate, rate]) as server:
        model = scripted_model(server)
        outcomes = [(await collect(model, [user_text("go")]))[1] for _ in range(2)]
    assert all(o.status == "timeout" and not o.permanent for o in outcomes)


async def test_a_session_the_provider_refuses_stops_at_once(tmp_path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModelServer([HISTORY_REFUSAL] * 12) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        started = time.monotonic()
        first = await drain(session.run([user_text("hello")], approve=allow))
        assert len(server.calls) == 2  # one retry, then the same refusal: stop (not 6 over ~60 s)
        second = await drain(session.run([user_text("again")], approve=allow))
        assert len(server.calls) == 3  # the next Task stops after its first request
        assert time.monotonic() - started < 20
        await session.aclose()
    for task in (first, second):
        (stop,) = [m.payload.reason for m in task if m.type == "event_msg" and m.payload.type == "abort"]
        assert stop.startswith("llm request error: HTTP 400: Invalid parameter")
        assert "%penguin new" in stop and "\n" not in stop


