"""Then-clauses of tests/SCENARIOS.md that the area test files left unasserted (see tests/SCENARIOS.md):
40b (a short output under a positive limit creates no archive directory), 79b (writer order
equals submission order, 3 MiB record included) and 88 (session totals 15 then 38 over real
requests). Real parts only: a real Environment and subprocess, the real TraceWriter on disk,
GenerativeModel over HTTP to the scripted model server."""

from __future__ import annotations

import threading

from penguin_jupyter import omni
from penguin_jupyter.omni import TokenCounts, user_text
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace import TraceWriter, read_trace
from tests.support.env import assert_well_framed, final, make_env, run_call, tool_entry
from tests.support.llm import collect, payloads, scripted_model

# --- 40b: a result that fits the visible limit creates no Session output directory -------------------


async def test_40b_short_output_under_a_positive_limit_creates_no_archive_directory(tmp_path):
    scratch = tmp_path / "scratch"
    env = make_env(
        tmp_path, tool_entry("exec_command", max_output_length=50), session_scratchpad_dir=str(scratch)
    )
    try:
        msgs = await run_call(env, "exec_command", {"cmd": "echo short"})
        assert final(msgs).output == "short\n" and final(msgs).stop_reason == "completed"
        assert_well_framed(msgs)
        exactly = await run_call(env, "exec_command", {"cmd": "printf '%050d' 0"})  # 50 chars: fits
        assert final(exactly).output == "0" * 50
        assert "[output truncated" not in final(exactly).output
        assert not scratch.exists()
    finally:
        env.dispose()


# --- 79b: lines are identical to the submission order ---------------------------------------------


def test_79b_lines_follow_submission_order_with_a_3_mib_record(tmp_path):
    writer = TraceWriter(tmp_path / "order_001.jsonl")
    big = "B" * (3 * 1024 * 1024)
    submitted = [f"small-{i}" for i in range(5)] + [big] + [f"small-{i}" for i in range(5, 20)]
    for text in submitted[:10]:
        writer.write(user_text(text))
    writer.rotate()  # submitted between writes: splits exactly here
    for text in submitted[10:]:
        writer.write(user_text(text))
    first = read_trace(tmp_path / "order_001.jsonl")
    second = read_trace(tmp_path / "order_002.jsonl")
    assert [m.payload.text for m in first] == submitted[:10]
    assert [m.payload.text for m in second] == submitted[10:]
    raw = (tmp_path / "order_001.jsonl").read_text(encoding="utf-8").split("\n")
    assert raw[-1] == "" and len(raw) == 11  # one line per record, the 3 MiB one intact
    assert omni.from_json(raw[5]).payload.text == big


def test_79b_concurrent_writers_keep_each_submitters_order_and_whole_lines(tmp_path):
    writer = TraceWriter(tmp_path / "threads_001.jsonl")
    big = "X" * (3 * 1024 * 1024)
    start = threading.Barrier(4)

    def submit(worker: int) -> None:
        start.wait()
        for i in range(25):
            writer.write(user_text(big if (worker, i) == (0, 3) else f"w{worker}-{i}"))

    threads = [threading.Thread(target=submit, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "threads_001.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 100
    texts = [omni.from_json(line).payload.text for line in lines]  # every line parses whole
    for worker in range(4):
        mine = [t for t in texts if t.startswith(f"w{worker}-") or (worker == 0 and t == big)]
        expected = [big if (worker, i) == (0, 3) else f"w{worker}-{i}" for i in range(25)]
        assert mine == expected


# --- 88: session totals accumulate across two requests (15 then 38) --------------------------------


async def test_88_session_totals_15_then_38():
    script = [
        {"text": "a", "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
        {"text": "b", "usage": {"prompt_tokens": 20, "completion_tokens": 3}},
    ]
    with ScriptedModelServer(script) as server:
        model = scripted_model(server)
        first, _ = await collect(model, [user_text("one")])
        assert payloads(first)[-1]["session"]["total"] == 15
        second, _ = await collect(model, [user_text("two")])
    assert payloads(second)[-1]["request"]["total"] == 23
    assert payloads(second)[-1]["session"]["total"] == 38
    assert model.session_tokens == TokenCounts(cache_read=0, cache_write=30, output=8, total=38)
