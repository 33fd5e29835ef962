"""Shared fixtures for the transcript and labextension tests: a realistic Task stream.

`sample_messages()` is one finished Task as the live notebook sees it: thinking, text, two
parallel tool calls whose outputs arrive in reverse order, an approval denial, a retry, a
compaction, an MCP connect, a subagent (origin-tagged, with its own session_meta), partials
(which the bundle must drop) and an abort. `REPO` is the project root.
"""

from __future__ import annotations

from penguin_jupyter.omni import (
    OmniMessage,
    abort,
    approval_decision,
    assistant_text,
    compaction_begin,
    compaction_end,
    mcp_connect_begin,
    mcp_connect_end,
    partial_text,
    request_begin,
    request_end,
    session_meta,
    thinking,
    token_usage,
    tool_call,
    tool_call_output,
    user_text,
    with_origin,
)
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT
SECRET = "sk-test-SECRET-0123456789"
SESSION_INFO = {
    "session_id": "sess-1234",
    "provider": "openai",
    "model_id": "gpt-test",
    "workspace": "/work/space",
    "approval_mode": "ask",
    "trace_path": "/work/space/trace.jsonl",
}
LONG_OUTPUT = "\n".join(f"line {i}" for i in range(1, 31))


def child(msg: OmniMessage, *hops: str) -> OmniMessage:
    """`msg` tagged with the origin chain `hops` (outermost first)."""
    for hop in reversed(hops):
        msg = with_origin(msg, hop)
    return msg


def sample_messages() -> list[OmniMessage]:
    meta = session_meta(
        session_id="child-1",
        provider="anthropic",
        model_id="claude-test",
        model_context_window=1000,
        system_prompt="sys",
        agent_state="/state",
        workspace="/work/space",
        source="subagent",
    )
    return [
        mcp_connect_begin(["files"]),
        mcp_connect_end(
            "completed",
            [{"server": "files", "transport": "stdio", "status": "completed", "duration_ms": 12, "tools": 3}],
        ),
        request_begin(),
        request_end("timeout", error_message="idle timeout", attempt=1, retry_in_ms=2000),
        request_begin(),
        partial_text("start", ""),
        partial_text("delta", "Let me look"),
        partial_text("stop", ""),
        thinking("I should list the files first."),
        assistant_text("Let me **look** at the files. <b>raw</b>"),
        tool_call(
            "exec_command",
            {"description": "List the workspace", "cmd": "ls -la", "workdir": "/work/space"},
            "c1",
        ),
        tool_call(
            "edit_file",
            {"file_path": "src/a.py", "old_string": "x = 1\ny = 2\n", "new_string": "x = 1\ny = 20\n"},
            "c2",
        ),
        request_end("completed"),
        approval_decision("allow", "c1"),
        approval_decision("deny", "c2"),
        tool_call_output("Denied by user.", "c2", stop_reason="aborted"),
        tool_call_output(LONG_OUTPUT, "c1"),
        token_usage(
            {"cache_read": 1, "cache_write": 2, "output": 30, "total": 100}, {"output": 30, "total": 100}
        ),
        tool_call("run_subagent", {"description": "Ask a helper", "prompt": "count the files"}, "c3"),
        child(meta, "child-1"),
        child(user_text("count the files", sender="parent_agent"), "child-1"),
        child(tool_call("exec_command", {"cmd": "ls | wc -l"}, "c1"), "child-1"),
        child(tool_call_output("7", "c1"), "child-1"),
        child(assistant_text(f"There are 7 files. key={SECRET}"), "child-1"),
        tool_call_output("There are 7 files.", "c3"),
        compaction_begin("context", "summarize", 120000, 14),
        compaction_end("context", "summarize", "completed"),
        assistant_text("[reached max turns (3); stopping]", stop_reason="failed"),
        abort("aborted by user"),
    ]
