"""Scenario 79 (writer basics, concurrency, torn tails) and 83a (tolerant parsing)."""

from __future__ import annotations

import os
import threading
from datetime import date

import pytest

from penguin_jupyter import omni
from penguin_jupyter.trace import (
    TraceParseError,
    TraceWriter,
    parse_trace_lines,
    read_trace,
    skipped_lines_diagnostic,
    trace_file_path,
)


def _meta(sid: str = "s1") -> omni.OmniMessage:
    return omni.session_meta(
        session_id=sid,
        provider="openai",
        model_id="m",
        model_context_window=1000,
        system_prompt="sp",
        agent_state="/a",
        workspace="/w",
    )


def _lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_writes_only_recordable_messages_in_order(tmp_path):
    path = trace_file_path(tmp_path, "sid", date(2026, 1, 9))
    assert path == tmp_path / "2026-01-09" / "sid_001.jsonl"
    writer = TraceWriter(path)
    usage = omni.token_usage({"total": 5}, {"total": 5})
    for msg in [_meta(), omni.assistant_text("hi"), omni.partial_text("delta", "h"), usage]:
        writer.write(msg)
    lines = _lines(path)
    assert len(lines) == 3
    types = [(m.type, getattr(m.payload, "type", None)) for m in read_trace(path)]
    assert types == [("session_meta", None), ("model_msg", "text"), ("event_msg", "token_usage")]
    assert lines[1] == omni.to_json(omni.from_json(lines[1]))  # compact, one line


def test_origin_messages_skipped_subagent_pointer_kept(tmp_path):
    writer = TraceWriter(tmp_path / "t_001.jsonl")
    writer.write(omni.with_origin(omni.assistant_text("child"), "session-child"))
    writer.write(omni.subagent_event("session-child"))
    kinds = [m.payload.type for m in read_trace(writer.path)]
    assert kinds == ["subagent"]


def test_rotate_switches_to_next_shard(tmp_path):
    path = trace_file_path(tmp_path, "sid", date(2026, 1, 9))
    writer = TraceWriter(path)
    writer.write(_meta())
    writer.write(omni.user_text("a"))
    new_path = writer.rotate()
    assert new_path.name == "sid_002.jsonl"
    writer.write(_meta())
    assert len(_lines(path)) == 2
    assert len(_lines(new_path)) == 1
    assert writer.rotate().name == "sid_003.jsonl"


def test_concurrent_writes_keep_submission_order(tmp_path):
    writer = TraceWriter(tmp_path / "c_001.jsonl")
    big = omni.user_text("x" * (3 * 1024 * 1024))
    order: list[str] = []
    lock = threading.Lock()

    def submit(msg):
        with lock:  # submission order == call order under this lock
            order.append(msg.payload.text[:10])
        writer.write(msg)

    threads = [threading.Thread(target=submit, args=(omni.user_text(f"small-{i}"),)) for i in range(20)]
    threads.insert(5, threading.Thread(target=submit, args=(big,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    texts = [m.payload.text[:10] for m in read_trace(writer.path)]
    assert sorted(texts) == sorted(order)
    assert all(len(line) > 0 for line in _lines(writer.path))
    assert len(_lines(writer.path)) == 21


def test_rotation_splits_at_its_submission_point(tmp_path):
    writer = TraceWriter(tmp_path / "r_001.jsonl")
    writer.write(omni.user_text("one"))
    writer.write(omni.user_text("two"))
    writer.rotate()
    writer.write(omni.user_text("three"))
    assert [m.payload.text for m in read_trace(tmp_path / "r_001.jsonl")] == ["one", "two"]
    assert [m.payload.text for m in read_trace(tmp_path / "r_002.jsonl")] == ["three"]


def test_failed_write_rejects_only_its_caller(tmp_path, monkeypatch):
    writer = TraceWriter(tmp_path / "f_001.jsonl")
    writer.write(omni.user_text("before"))
    real_write = os.write
    calls = {"n": 0}

    def flaky(fd, data):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", flaky)
    with pytest.raises(OSError):
        writer.write(omni.user_text("lost"))
    writer.write(omni.user_text("after"))
    monkeypatch.setattr(os, "write", real_write)
    assert [m.payload.text for m in read_trace(writer.path)] == ["before", "after"]


def test_zero_progress_write_raises_and_leaves_tail_clean(tmp_path, monkeypatch):
    writer = TraceWriter(tmp_path / "z_001.jsonl")
    writer.write(omni.user_text("a"))
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    with pytest.raises(OSError, match="Trace append made no progress"):
        writer.write(omni.user_text("b"))
    monkeypatch.setattr(os, "write", real_write)
    writer.write(omni.user_text("c"))
    assert (tmp_path / "z_001.jsonl").read_text().count("\n\n") == 0


def test_partial_write_marks_tail_torn_and_next_record_heals(tmp_path, monkeypatch):
    writer = TraceWriter(tmp_path / "p_001.jsonl")
    writer.write(omni.user_text("a"))
    real_write = os.write
    state = {"n": 0}

    def partial_then_fail(fd, data):
        state["n"] += 1
        if state["n"] == 1:
            return real_write(fd, data[:7])
        raise OSError(5, "I/O error")

    monkeypatch.setattr(os, "write", partial_then_fail)
    with pytest.raises(OSError):
        writer.write(omni.user_text("torn"))
    monkeypatch.setattr(os, "write", real_write)
    writer.write(omni.user_text("healed"))
    texts = [m.payload.text for m in read_trace(writer.path)]
    assert texts == ["a", "healed"]


def test_resumed_torn_file_gets_one_newline_prefix(tmp_path):
    path = tmp_path / "h_001.jsonl"
    path.write_text(omni.to_json(omni.user_text("ok")) + "\n" + '{"timestamp":"x","ty', encoding="utf-8")
    writer = TraceWriter(path)
    writer.write(omni.user_text("one"))
    writer.write(omni.user_text("two"))
    raw = path.read_text()
    assert raw.endswith(
        '"ty\n' + omni.to_json(omni.from_json(raw.splitlines()[2])) + "\n" + raw.splitlines()[3] + "\n"
    )
    assert [m.payload.text for m in read_trace(path)] == ["ok", "one", "two"]
    # a rotated shard never inherits the heal
    rotated = writer.rotate()
    writer.write(omni.user_text("three"))
    assert not rotated.read_text().startswith("\n")


def test_clean_and_empty_files_get_no_prefix(tmp_path):
    clean = tmp_path / "c_001.jsonl"
    clean.write_text(omni.to_json(omni.user_text("ok")) + "\n")
    TraceWriter(clean).write(omni.user_text("next"))
    assert "\n\n" not in clean.read_text()
    empty = tmp_path / "e_001.jsonl"
    empty.write_text("")
    TraceWriter(empty).write(omni.user_text("first"))
    assert not empty.read_text().startswith("\n")


# --- tolerant parsing (83a) ---------------------------------------------------------------------


def test_torn_last_line_ignored_silently(tmp_path, capsys, caplog):
    path = tmp_path / "t.jsonl"
    path.write_text(omni.to_json(omni.user_text("a")) + "\n" + '{"broken', encoding="utf-8")
    assert [m.payload.text for m in read_trace(path)] == ["a"]
    assert capsys.readouterr().err == "" and caplog.messages == []


def test_malformed_middle_line_skipped_with_diagnostic(tmp_path, caplog):
    path = tmp_path / "m.jsonl"
    good = omni.to_json(omni.user_text("a"))
    path.write_text("\n".join([good, "garbage", "", good]) + "\n", encoding="utf-8")
    assert len(read_trace(path)) == 2
    assert caplog.messages == [f"[trace] skipped 1 malformed line(s) [2] in {path}"]
    with pytest.raises(TraceParseError):
        read_trace(path, strict=True)


def test_thousands_of_bad_lines_listed_at_most_twenty():
    good = omni.to_json(omni.user_text("a"))
    text = "\n".join(["bad"] * 5000 + [good])
    parsed = parse_trace_lines(text)
    assert len(parsed.messages) == 1
    assert len(parsed.skipped_lines) == 5000
    diag = skipped_lines_diagnostic("/x", parsed.skipped_lines)
    assert diag.startswith("[trace] skipped 5000 malformed line(s) [1, 2, 3,")
    assert diag.endswith("19, 20, …] in /x")
