"""The heap that existed when a Task started stays out of garbage collections until it ends
(penguin_jupyter/seams/task_heap.py, docs/model-requests.md "Garbage collection during a Task").

A real ContextEngine over a real GenerativeModel and the scripted model server; the tool is a
FakeEnv handler standing in for code the agent runs in the kernel (dropping the last reference to
an object the user made before the Task, running a collection)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from penguin_jupyter.engine import ContextEngine
from penguin_jupyter.interfaces import AbortSignal, ToolExecutionRequest
from penguin_jupyter.omni import OmniMessage, tool_call_output, user_text
from penguin_jupyter.seams.task_heap import TASK_HEAP, TaskHeap
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.fakes import FakeEnv, allow, collect, types
from tests.support.llm import scripted_model

TOOL_TURN = {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "x"}, "id": "call_1"}]}


class Cycle:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def heap(monkeypatch: pytest.MonkeyPatch) -> Iterator[TaskHeap]:
    """TASK_HEAP with a full collection observed and the threshold at 0: every Task freezes."""
    monkeypatch.setattr(TASK_HEAP, "freeze_at_pause_s", 0.0)
    TASK_HEAP.watch()  # (the first Task adds the timer; these tests need a collection timed before it)
    gc.collect()
    assert TASK_HEAP.last_full_pause_s is not None
    yield TASK_HEAP
    assert not TASK_HEAP.frozen and gc.get_freeze_count() == 0


def dropping_tool(holder: list[Any], seen: list[dict[str, Any]], *, collect_now: bool) -> FakeEnv:
    """A tool that drops the last reference to what `holder` holds, optionally runs a full
    collection, and notes what it saw."""

    async def handler(request: ToolExecutionRequest) -> AsyncIterator[OmniMessage]:
        ref = weakref.ref(holder[0])
        holder.clear()
        if collect_now:
            gc.collect()
        seen.append({"frozen": gc.get_freeze_count() > 0, "alive": ref() is not None, "ref": ref})
        yield tool_call_output("done", request.tool_call.payload.tool_call_id)

    return FakeEnv(handler=handler)


async def served(server: ScriptedModelServer) -> None:
    """Until the server has answered a request (the Task is under way)."""
    async with asyncio.timeout(30):
        while not server.served:
            await asyncio.sleep(0.01)


async def run_task(server: ScriptedModelServer, env: FakeEnv, **kwargs: Any) -> list[OmniMessage]:
    engine = ContextEngine(scripted_model(server), env)
    return await collect(engine.run([user_text("go")], approve=allow, **kwargs))


async def test_garbage_of_the_frozen_heap_is_collected_right_after_the_task(heap: TaskHeap):
    holder: list[Any] = [Cycle()]  # made before the Task, like the user's objects in the kernel
    seen: list[dict[str, Any]] = []
    owed = heap.owed_collections
    with ScriptedModelServer([TOOL_TURN, {"text": "ok"}]) as server:
        out = await run_task(server, dropping_tool(holder, seen, collect_now=True))
    assert "tool_call_output" in types(out)
    # during the Task a full collection did not reach it: it was frozen
    assert [(s["frozen"], s["alive"]) for s in seen] == [(True, True)]
    # the collection it missed ran as the Task ended
    assert seen[0]["ref"]() is None
    assert heap.owed_collections == owed + 1
    assert gc.get_freeze_count() == 0


async def test_without_a_full_collection_in_the_task_its_garbage_waits_for_the_next_one(heap: TaskHeap):
    holder: list[Any] = [Cycle()]
    seen: list[dict[str, Any]] = []
    with ScriptedModelServer([TOOL_TURN, {"text": "ok"}]) as server:
        await run_task(server, dropping_tool(holder, seen, collect_now=False))
    assert [s["frozen"] for s in seen] == [True]
    assert gc.get_freeze_count() == 0  # back in the collector's oldest generation
    gc.collect()
    assert seen[0]["ref"]() is None


async def test_cheap_full_collections_leave_the_heap_alone(monkeypatch: pytest.MonkeyPatch):
    """A process whose full collections cost less than the threshold runs as before."""
    monkeypatch.setattr(TASK_HEAP, "freeze_at_pause_s", 3600.0)
    gc.collect()
    holder: list[Any] = [Cycle()]
    seen: list[dict[str, Any]] = []
    with ScriptedModelServer([TOOL_TURN, {"text": "ok"}]) as server:
        await run_task(server, dropping_tool(holder, seen, collect_now=True))
    assert [(s["frozen"], s["alive"]) for s in seen] == [(False, False)]


async def test_failed_aborted_and_abandoned_tasks_unfreeze(heap: TaskHeap):
    during: list[bool] = []

    async def probe(request: ToolExecutionRequest) -> AsyncIterator[OmniMessage]:
        during.append(heap.frozen)
        yield tool_call_output("done", request.tool_call.payload.tool_call_id)

    # a request that fails for good (the provider's bad-key answer: auth, no retry)
    with ScriptedModelServer([{"fault": {"kind": "http", "status": 401}}]) as server:
        out = await run_task(server, FakeEnv())
    assert types(out)[-1] == "abort"
    assert not heap.frozen and gc.get_freeze_count() == 0

    # aborted by the user while the model streams
    signal = AbortSignal()
    with ScriptedModelServer([{"text": ["a", "b"], "fault": {"kind": "stall", "after": 1, "seconds": 5}}]) as server:
        engine = ContextEngine(scripted_model(server), FakeEnv())
        run = asyncio.ensure_future(collect(engine.run([user_text("go")], approve=allow, signal=signal)))
        await served(server)
        assert heap.frozen
        signal.abort("aborted by user")
        out = await asyncio.wait_for(run, 30)
    assert "abort" in types(out)
    assert not heap.frozen and gc.get_freeze_count() == 0

    # the host stops iterating mid-Task (an exception in its loop)
    with ScriptedModelServer([TOOL_TURN, {"text": "ok"}]) as server:
        engine = ContextEngine(scripted_model(server), FakeEnv(handler=probe))
        stream = engine.run([user_text("go")], approve=allow)
        with pytest.raises(RuntimeError, match="host failed"):
            async for msg in stream:
                if getattr(msg.payload, "type", None) == "tool_call_output":
                    raise RuntimeError("host failed")
        await stream.aclose()
    assert during == [True]
    assert not heap.frozen and gc.get_freeze_count() == 0


async def test_concurrent_tasks_unfreeze_when_the_last_one_ends(heap: TaskHeap):
    release = asyncio.Event()

    async def waiting(request: ToolExecutionRequest) -> AsyncIterator[OmniMessage]:
        await release.wait()
        yield tool_call_output("done", request.tool_call.payload.tool_call_id)

    with (
        ScriptedModelServer([TOOL_TURN, {"text": "ok"}]) as slow_server,
        ScriptedModelServer([{"text": "quick"}]) as quick_server,
    ):
        slow = asyncio.ensure_future(run_task(slow_server, FakeEnv(handler=waiting)))
        await served(slow_server)
        assert heap.frozen
        await run_task(quick_server, FakeEnv())
        assert heap.frozen  # the other Task still runs
        release.set()
        await asyncio.wait_for(slow, 30)
    assert not heap.frozen and gc.get_freeze_count() == 0


async def test_a_freeze_made_by_someone_else_is_left_to_them(heap: TaskHeap):
    gc.freeze()
    try:
        with ScriptedModelServer([{"text": "ok"}]) as server:
            await run_task(server, FakeEnv())
        assert not heap.frozen
        assert gc.get_freeze_count() > 0  # still theirs
    finally:
        gc.unfreeze()
