"""Engine scenarios D (steering and background notices) of tests/SCENARIOS.md."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from penguin_jupyter.engine import ContextEngine, NoticeQueue
from penguin_jupyter.interfaces import LLMOutcome
from penguin_jupyter.omni import assistant_text, image_url, tool_call, user_text
from tests.support.fakes import (
    FakeEnv,
    LLMFactory,
    MemoryTrace,
    ScriptedLLM,
    allow,
    collect,
    reply,
    settings,
    texts,
    types,
    usage,
)

PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()


def user_msgs(msgs):
    return [m for m in msgs if m.type == "model_msg" and getattr(m.payload, "role", None) == "user"]


def tool_turn_llm(*, during_call_1=()) -> ScriptedLLM:
    return ScriptedLLM(
        [tool_call("exec_command", {"cmd": "x"}, "call_1"), *during_call_1, usage(12)],
        [assistant_text("Done."), usage(20)],
    )


async def test_d30a_steering_delivered_with_tool_outputs():
    llm = tool_turn_llm()
    trace = MemoryTrace()
    engine = ContextEngine(llm, FakeEnv(output="tool result"), trace=trace)
    assert engine.steer([user_text("too early")]) is False
    answers: list[bool] = []

    async def approve(call):
        answers.append(engine.steer([user_text("focus on the tests")]))
        answers.append(engine.steer([user_text("also update the docs")]))
        return "allow"

    out = await collect(engine.run([user_text("go")], approve=approve))
    assert answers == [True, True]
    steering = [
        "[user_steering]\nfocus on the tests\n[/user_steering]",
        "[user_steering]\nalso update the docs\n[/user_steering]",
    ]
    assert texts(user_msgs(out)) == steering
    assert [m.payload.output for m in out if m.payload.type == "tool_call_output"] == ["tool result"]
    assert types(llm.calls[1]) == ["tool_call_output", "text", "text"]
    assert texts(llm.calls[1]) == steering
    assert [t for t in texts(trace.records) if t.startswith("[user_steering]")] == steering
    assert engine.steer([user_text("after")]) is False


async def test_d30b_unsteer():
    llm = tool_turn_llm()
    trace = MemoryTrace()
    engine = ContextEngine(llm, FakeEnv(), trace=trace)
    a, b = [user_text("A")], [user_text("B")]
    results: dict[str, bool] = {}

    async def approve(call):
        results["never"] = engine.unsteer([user_text("A")])
        engine.steer(a)
        engine.steer(b)
        results["b"] = engine.unsteer(b)
        results["b again"] = engine.unsteer(b)
        return "allow"

    out = await collect(engine.run([user_text("go")], approve=approve))
    assert results == {"never": False, "b": True, "b again": False}
    delivered = ["[user_steering]\nA\n[/user_steering]"]
    assert texts(user_msgs(out)) == delivered
    assert texts(llm.calls[1]) == delivered
    assert [t for t in texts(trace.records) if t.startswith("[user_steering]")] == delivered
    assert engine.unsteer(a) is False


async def test_steering_continues_a_turn_without_tool_calls():
    engine_box: list[ContextEngine] = []
    llm = ScriptedLLM(
        [assistant_text("first"), lambda: engine_box[0].steer([user_text("one more thing")]), usage(3)],
        [assistant_text("second"), usage(4)],
    )
    engine = ContextEngine(llm, FakeEnv())
    engine_box.append(engine)
    await collect(engine.run([user_text("go")]))
    assert len(llm.calls) == 2
    assert texts(llm.calls[1]) == ["[user_steering]\none more thing\n[/user_steering]"]


async def test_steering_queue_discarded_when_run_ends():
    box: list[ContextEngine] = []
    llm = ScriptedLLM(
        reply(
            lambda: box[0].steer([user_text("late")]),
            assistant_text("cut", "aborted"),
            outcome=LLMOutcome("aborted"),
        ),
        [assistant_text("next answer"), usage(4)],
    )
    engine = ContextEngine(llm, FakeEnv())
    box.append(engine)
    out = await collect(engine.run([user_text("go")]))
    assert out[-1].payload.type == "abort"
    await collect(engine.run([user_text("again")]))
    assert not any("late" in t for t in texts(llm.calls[1]))
    assert texts(llm.calls[1])[-1] == "again"


async def test_d32a_steering_images_on_vision_model():
    image_a, image_b = image_url(PNG), image_url("https://example.com/b.png")
    box: list[ContextEngine] = []

    def steer_both():
        box[0].steer([image_a])
        box[0].steer([user_text("this one too"), image_b])

    llm = tool_turn_llm(during_call_1=[steer_both])
    trace = MemoryTrace()
    engine = ContextEngine(llm, FakeEnv(), trace=trace)
    box.append(engine)
    out = await collect(engine.run([user_text("go")], approve=allow))
    sent = llm.calls[1][1:]
    assert [getattr(m.payload, "text", None) or m.payload.image_url for m in sent] == [
        "[user_steering]\n\n[/user_steering]",
        PNG,
        "[user_steering]\nthis one too\n[/user_steering]",
        "https://example.com/b.png",
    ]
    assert [m.payload.image_url for m in out if m.payload.type == "image_url"] == [
        PNG,
        "https://example.com/b.png",
    ]
    assert [m.payload.image_url for m in trace.records if m.payload.type == "image_url"] == [
        PNG,
        "https://example.com/b.png",
    ]


async def test_d32b_steering_images_folded_for_non_vision(tmp_path: Path):
    written: list[Path] = []

    async def fold(messages):
        lines, keep = [], []
        for msg in messages:
            if msg.payload.type == "image_url":
                path = tmp_path / f"upload-{len(written)}.png"
                path.write_bytes(base64.b64decode(msg.payload.image_url.split(",", 1)[1]))
                written.append(path)
                lines.append(f"[attached image: {path}]")
            else:
                keep.append(msg)
        user = [m for m in keep if m.payload.type == "text"]
        if user:
            last = user[-1]
            keep[keep.index(last)] = user_text(last.payload.text + "\n\n" + "\n".join(lines))
        else:
            keep.append(user_text("\n".join(lines)))
        return keep

    box: list[ContextEngine] = []

    def steer_both():
        box[0].steer([user_text("look at this"), image_url(PNG)])
        box[0].steer([image_url(PNG)])

    llm = tool_turn_llm(during_call_1=[steer_both])
    engine = ContextEngine(llm, FakeEnv(), fold_input_images=fold)
    box.append(engine)
    await collect(engine.run([user_text("go")], approve=allow))
    steering = llm.calls[1][1:]
    assert types(steering) == ["text", "text"]
    bodies = [
        re.match(r"^\[user_steering\]\n([\s\S]*)\n\[/user_steering\]$", t).group(1) for t in texts(steering)
    ]
    assert re.match(r"^look at this\n\n\[attached image: .+\]$", bodies[0])
    assert re.match(r"^\[attached image: .+\]$", bodies[1])
    assert len(written) == 2 and all(p.exists() for p in written)


@pytest.mark.parametrize(
    ("fold_result", "pattern"),
    [("raise", "ENOSPC"), ("empty", "foldInputImages must return")],
)
async def test_d33a_fold_failure_ends_the_run(fold_result, pattern):
    async def fold(messages):
        if fold_result == "raise":
            raise OSError("ENOSPC: no space left")
        return []

    box: list[ContextEngine] = []
    llm = tool_turn_llm(during_call_1=[lambda: box[0].steer([user_text("see"), image_url(PNG)])])
    engine = ContextEngine(llm, FakeEnv(), fold_input_images=fold)
    box.append(engine)
    with pytest.raises(Exception, match=pattern):
        await collect(engine.run([user_text("go")], approve=allow))
    assert len(llm.calls) == 1
    assert engine.task_running is False


async def test_d33b_blank_steering_queues_nothing():
    box: list[ContextEngine] = []
    answers: list[bool] = []
    llm = ScriptedLLM(
        [lambda: answers.append(box[0].steer([user_text("   ")])), assistant_text("final answer"), usage(3)]
    )
    engine = ContextEngine(llm, FakeEnv())
    box.append(engine)
    out = await collect(engine.run([user_text("go")]))
    assert answers == [True]
    assert len(llm.calls) == 1
    assert user_msgs(out) == []


async def test_d34_steering_during_mid_run_compaction_not_swallowed():
    box: list[ContextEngine] = []
    llm2 = ScriptedLLM([assistant_text("on staging"), usage(10)])
    llm1 = ScriptedLLM(
        [assistant_text("turn one"), usage(5000)],
        [
            lambda: box[0].steer([user_text("switch to staging")]),
            assistant_text("[summary]the gist[/summary]"),
            usage(20),
        ],
    )
    engine = ContextEngine(
        llm1,
        FakeEnv(),
        compaction=settings(max_context_length=1000, prompt="summary prompt"),
        create_llm=LLMFactory(llm2),
    )
    box.append(engine)
    out = await collect(engine.run([user_text("go")]))
    assert texts(llm2.calls[0]) == [
        "[context_summary]\nthe gist\n[/context_summary]",
        "[user_steering]\nswitch to staging\n[/user_steering]",
    ]
    assert "[user_steering]\nswitch to staging\n[/user_steering]" in texts(user_msgs(out))


async def test_d36_notices_ride_the_first_request():
    notices = NoticeQueue()
    notices.push(user_text("[notice] task one done", sender="harness"))
    llm = ScriptedLLM([assistant_text("hi"), usage(3)])
    trace = MemoryTrace()
    engine = ContextEngine(llm, FakeEnv(), background_notices=notices, trace=trace)
    out = await collect(engine.run([user_text("hello")]))
    assert len(llm.calls) == 1
    assert texts(llm.calls[0]) == ["hello", "[notice] task one done"]
    assert texts(user_msgs(out)) == ["[notice] task one done"]
    assert texts(trace.records)[:2] == ["hello", "[notice] task one done"]
    assert notices.pending() == 0


async def test_d36_notice_mid_run_extends_finished_task():
    notices = NoticeQueue()
    llm = ScriptedLLM(
        [
            assistant_text("working"),
            lambda: notices.push(user_text("[notice] finished late", sender="harness")),
            usage(3),
        ],
        [assistant_text("noted"), usage(4)],
    )
    out = await collect(ContextEngine(llm, FakeEnv(), background_notices=notices).run([user_text("hello")]))
    assert len(llm.calls) == 2
    assert texts(llm.calls[1]) == ["[notice] finished late"]
    assert "[notice] finished late" in texts(user_msgs(out))


async def test_notices_delivered_before_steering():
    notices = NoticeQueue()
    box: list[ContextEngine] = []

    def both():
        box[0].steer([user_text("steer me")])
        notices.push(user_text("[notice] bg done", sender="harness"))

    llm = tool_turn_llm(during_call_1=[both])
    engine = ContextEngine(llm, FakeEnv(), background_notices=notices)
    box.append(engine)
    await collect(engine.run([user_text("go")], approve=allow))
    assert types(llm.calls[1]) == ["tool_call_output", "text", "text"]
    assert texts(llm.calls[1]) == ["[notice] bg done", "[user_steering]\nsteer me\n[/user_steering]"]
