"""Long session: 2,000 turns in one Session (each a `user_text` and a short scripted answer),
then `resume_session` on its Trace.

Reports peak RSS growth per turn (after a warm-up), the Trace size, memory growth per Trace
byte (linear growth shows as a steady ratio across checkpoints), and how long resume takes.

The openai SDK walks the whole request body (every history message) on each request before
sending it; over 2,000 turns that is quadratic and alone would take far beyond the two-minute
budget. That walk leaves these plain messages unchanged, so this script skips it for `messages`
(every other field is still walked) and reports separately what it costs for the final
history (`sdk walk` note).
Everything else — engine, GenerativeModel, agenthub, HTTP, Trace — is the real stack.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

import openai.resources.chat.completions.completions as openai_completions  # noqa: E402
from _common import data_root, peak_rss_mb, print_table, server_process, verdict  # noqa: E402

from penguin_jupyter import create_agent, omni  # noqa: E402

TURNS = 2000
WARMUP = 100
CHECKPOINTS = (500, 1000, 1500, 2000)
_SDK_WALK = openai_completions.async_maybe_transform


async def _walk_all_but_messages(data, expected_type, *args, **kwargs):
    """The SDK's walk for every field except `messages`, which is passed through as built."""
    if not isinstance(data, dict) or "messages" not in data:
        return await _SDK_WALK(data, expected_type, *args, **kwargs)
    rest = await _SDK_WALK({k: v for k, v in data.items() if k != "messages"}, expected_type, *args, **kwargs)
    return {**rest, "messages": data["messages"]}


def current_rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def answer(turn: int) -> str:
    return f"Noted item {turn}; nothing else to do."


async def sdk_walk_seconds(session) -> tuple[int, float]:
    """How long the SDK's body walk takes for the final history (what each later request pays)."""
    from openai.types.chat import completion_create_params

    client = session.engine._llm._client._client  # agenthub's openai-chat client
    history = client.get_history()
    messages = await client.transform_uni_message_to_model_input(history)
    body = {"messages": messages, "model": "scripted-model", "stream": True}
    start = time.perf_counter()
    await _SDK_WALK(body, completion_create_params.CompletionCreateParamsStreaming)
    return len(messages), time.perf_counter() - start


async def main(turns: int) -> None:
    openai_completions.async_maybe_transform = _walk_all_but_messages
    checkpoints = [c for c in CHECKPOINTS if c <= turns] or [turns]
    with server_process([answer(n) for n in range(turns)]) as url, data_root(url) as root:
        agent = await create_agent(root=root)
        session = await agent.create_session(workspace_dir=root / "workspace")
        rows = []
        base_peak = base_rss = base_trace = 0.0
        start = time.perf_counter()
        for turn in range(1, turns + 1):
            texts = []
            async for msg in session.run([omni.user_text(f"Remember item {turn}.")]):
                if msg.type == "model_msg" and msg.payload.type == "text":
                    texts.append(msg.payload.text)
            if texts != [answer(turn - 1)]:
                raise RuntimeError(f"turn {turn}: unexpected answer {texts!r}")
            if turn == WARMUP:
                gc.collect()
                base_peak, base_rss = peak_rss_mb(), current_rss_mb()
                base_trace = session.trace_path.stat().st_size
                warm_time = time.perf_counter()
            if turn in checkpoints:
                gc.collect()
                trace_bytes = session.trace_path.stat().st_size
                grown = peak_rss_mb() - base_peak
                elapsed = time.perf_counter() - warm_time
                rows.append([
                    turn, trace_bytes / 1e6, peak_rss_mb(), current_rss_mb(),
                    1024 * grown / (turn - WARMUP), grown * 2**20 / max(1, trace_bytes - base_trace),
                    1000 * elapsed / (turn - WARMUP),
                ])  # fmt: skip
        run_time = time.perf_counter() - start
        walk_messages, walk_s = await sdk_walk_seconds(session)
        session_id, trace_path = session.session_id, session.trace_path
        session.dispose()

        gc.collect()
        before = current_rss_mb()
        t0 = time.perf_counter()
        resumed = await agent.resume_session(session_id)
        resume_s = time.perf_counter() - t0
        resumed_rss = current_rss_mb() - before
        replayed = len(resumed.render_messages)
        resumed.dispose()
        trace_mb = trace_path.stat().st_size / 1e6
    print_table(
        f"Long session: {turns:,} turns (user_text + short answer), one Session",
        ["turn", "trace MB", "peak RSS MB", "RSS MB", "peak KB/turn", "peak B/trace B", "ms/turn"],
        rows,
        [
            f"growth measured from turn {WARMUP} (peak RSS {base_peak:.1f} MB, RSS {base_rss:.1f} MB); "
            f"{turns} turns took {run_time:.1f} s",
            f"resume_session: {resume_s:.3f} s for a {trace_mb:.2f} MB Trace ({replayed:,} replayed messages, "
            f"+{resumed_rss:.1f} MB RSS) -> goal < 2 s {verdict(resume_s < 2)}",
            f"sdk walk (bypassed above): {1000 * walk_s:.0f} ms for the final {walk_messages:,}-message body, "
            "paid on every request at that length",
        ],
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=TURNS)
    asyncio.run(main(parser.parse_args().turns))
