"""Engine overhead: deltas/s consumed by the bare gateway stream, by GenerativeModel, and by a
full Session (engine + Environment + Trace), on one scripted Task.

The Task: 40 model requests, each streaming 500 text deltas and five calls of the extra tool
`noop` (answers `ok` at once, see `_common.NoopTool`), then a final request of text: 20,000 text
deltas and 200 tool calls in all. (Five calls a request, not one: before the model's request
shortcuts, the openai SDK re-walked the whole request body on every request, and 200 one-call
requests spent most of their time in that quadratic walk; the Task is kept for comparable
figures.) Every layer replays the same conversation against its own scripted-server process, so
the wire work per request is the same (the Session also sends its system prompt and full
toolset). The baseline (a) gets the same client shortcuts `open_provider` installs (SDK
retries off, the conversation past the SDK's body walk, agenthub's history conversion on new
messages only), so (b) and (c) are measured against the same gateway work, not against a slower
one. Ratios are what matter; absolute rates depend on the machine.

`--profile` adds a cProfile of the Session run (top functions by own time, file:line).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

from _common import NoopTool, Stopwatch, allow, data_root, print_table, server_process, verdict  # noqa: E402

from penguin_jupyter import create_agent, omni  # noqa: E402
from penguin_jupyter.interfaces import GenerativeModelParameters, LLMOutcome  # noqa: E402
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig  # noqa: E402
from penguin_jupyter.llm.config import tool_schema  # noqa: E402
from penguin_jupyter.llm.provider import open_provider  # noqa: E402

TOOL_TURNS = 40
CALLS_PER_TURN = 5
DELTAS_PER_TURN = 500
DELTA = "word "
TOTAL_DELTAS = TOOL_TURNS * DELTAS_PER_TURN  # the final request's one-delta answer is extra
TOTAL_CALLS = TOOL_TURNS * CALLS_PER_TURN


def script() -> list[dict]:
    entries: list[dict] = [
        {
            "text": [DELTA] * DELTAS_PER_TURN,
            "tool_calls": [
                {"name": "noop", "arguments": {}, "id": f"call_{turn}_{n}"} for n in range(CALLS_PER_TURN)
            ],
        }
        for turn in range(TOOL_TURNS)
    ]
    entries.append({"text": ["done."]})
    return entries


def tools_config() -> dict:
    return {"tools": [tool_schema(NoopTool.definition)]}


async def bare_client(url: str) -> tuple[int, int]:
    """(a) agenthub's stateful stream with the model's client shortcuts; tool results sent back by
    hand. Returns (deltas, calls)."""
    client = open_provider(
        GenerativeModelConfig(model_id="scripted-model", client_type="openai-chat", base_url=url, api_key="sk-bench")
    ).protocol_client
    config = tools_config()
    message: dict = {"role": "user", "content_items": [{"type": "text", "text": "go"}]}
    deltas = calls = 0
    while True:
        call_ids: list[str] = []
        async for event in client.streaming_response_stateful(message=message, config=config):
            for item in event["content_items"]:
                if item["type"] == "text":
                    deltas += 1
                elif item["type"] == "tool_call":
                    call_ids.append(item["tool_call_id"])
        if not call_ids:
            return deltas, calls
        calls += len(call_ids)
        message = {
            "role": "user",
            "content_items": [{"type": "tool_result", "text": "ok", "tool_call_id": cid} for cid in call_ids],
        }


async def generative_model(url: str) -> tuple[int, int]:
    """(b) GenerativeModel.stream_generate, partial text messages counted; outputs sent by hand."""
    model = GenerativeModel(
        GenerativeModelConfig(
            model_id="scripted-model",
            api_key="sk-bench",
            base_url=url,
            client_type="openai-chat",
            tools=[NoopTool.definition],
        )
    )
    new_messages = [omni.user_text("go")]
    deltas = calls = 0
    while True:
        call_ids: list[str] = []
        async for item in model.stream_generate(GenerativeModelParameters(new_messages)):
            if isinstance(item, LLMOutcome):
                if item.status != "completed":
                    raise RuntimeError(f"stream_generate ended {item.status}: {item.message}")
                continue
            payload = item.payload
            if payload.type == "partial_text" and payload.event_type == "delta":
                deltas += 1
            elif payload.type == "tool_call":
                call_ids.append(payload.tool_call_id)
        if not call_ids:
            return deltas, calls
        calls += len(call_ids)
        new_messages = [omni.tool_call_output("ok", cid) for cid in call_ids]


async def session_run(url: str, profile: cProfile.Profile | None = None) -> tuple[int, int, int]:
    """(c) Session.run end to end: engine, real Environment with the noop tool, Trace on disk.
    Returns (deltas, tool outputs, trace bytes)."""
    with data_root(url) as root:
        agent = await create_agent(root=root)
        session = await agent.create_session(workspace_dir=root / "workspace", extra_tools=[NoopTool()])
        deltas = outputs = 0
        if profile is not None:
            profile.enable()
        async for msg in session.run([omni.user_text("go")], approve=allow):
            payload = msg.payload
            if payload.type == "partial_text" and payload.event_type == "delta":
                deltas += 1
            elif payload.type == "tool_call_output":
                outputs += 1
        if profile is not None:
            profile.disable()
        trace_bytes = session.trace_path.stat().st_size
        session.dispose()
        return deltas, outputs, trace_bytes


async def measure(label: str, runner, *args):
    with server_process(script()) as url, Stopwatch() as watch:
        result = await runner(url, *args)
    deltas = result[0]
    if deltas < TOTAL_DELTAS:
        raise RuntimeError(f"{label}: consumed {deltas} text deltas, expected {TOTAL_DELTAS}")
    return result, watch


def top_costs(profile: cProfile.Profile, limit: int = 15) -> list[list]:
    stats = pstats.Stats(profile, stream=io.StringIO())
    rows = []
    entries = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:limit]  # type: ignore[attr-defined]
    total = sum(v[2] for v in stats.stats.values()) or 1  # type: ignore[attr-defined]
    for (filename, line, func), (_cc, ncalls, tottime, cumtime, _callers) in entries:
        short = filename.split("site-packages/")[-1].split("/work/main/")[-1]
        rows.append([f"{short}:{line} {func}", ncalls, tottime, cumtime, f"{100 * tottime / total:.1f}%"])
    return rows


async def main(rounds: int, profile_session: bool) -> None:
    layers = {"a": bare_client, "b": generative_model, "c": session_run}
    best: dict[str, tuple] = {}
    for _ in range(rounds):  # interleaved, best of `rounds` per layer: a load spike hits one run only
        for key, runner in layers.items():
            result, watch = await measure(f"({key})", runner)
            kept = best.get(key)
            best[key] = (
                result,
                min(watch.wall, kept[1]) if kept else watch.wall,
                min(watch.cpu, kept[2]) if kept else watch.cpu,
            )
    rate = {k: TOTAL_DELTAS / v[1] for k, v in best.items()}
    cpu = {k: TOTAL_DELTAS / v[2] for k, v in best.items()}
    names = {
        "a": "(a) bare AutoLLMClient stream",
        "b": "(b) GenerativeModel.stream_generate",
        "c": "(c) session.run + Trace",
    }
    rows = [
        [
            names[k],
            best[k][0][0],
            best[k][0][1],
            best[k][1],
            rate[k],
            rate[k] / rate["a"],
            cpu[k],
            cpu[k] / cpu["a"],
        ]
        for k in layers
    ]
    trace_bytes = best["c"][0][2]
    print_table(
        f"Engine overhead: {TOTAL_DELTAS:,} text deltas + {TOTAL_CALLS} noop tool calls, one Task "
        f"(best of {rounds} interleaved runs)",
        ["layer", "deltas", "tools", "wall s", "deltas/s", "x (a)", "deltas/cpu-s", "cpu x (a)"],
        rows,
        [
            f"goal (c) >= 0.8 x (a) by wall deltas/s: {rate['c'] / rate['a']:.2f} -> "
            f"{verdict(rate['c'] / rate['a'] >= 0.8)}; by CPU: {cpu['c'] / cpu['a']:.2f} -> "
            f"{verdict(cpu['c'] / cpu['a'] >= 0.8)}",
            "deltas/cpu-s = deltas per CPU second of this process (the server runs in its own process)",
            f"tool: extra tool 'noop' (instant, one 'ok' delta); Trace of (c): {trace_bytes:,} bytes",
        ],
    )
    if profile_session:
        profile = cProfile.Profile()
        await measure("(c) profiled", session_run, profile)
        print_table(
            "cProfile of (c) session.run, top own time",
            ["function (file:line)", "calls", "own s", "cum s", "own %"],
            top_costs(profile),
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="interleaved runs per layer (best kept)")
    parser.add_argument("--profile", action="store_true", help="also profile the session run")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.profile))
