"""The static bundle: shape, redaction, tolerant reading, the HTML and plain-text renderings."""

from __future__ import annotations

import json
import re

import pytest

from penguin_jupyter.notebook.transcript.transcript_bundle import (
    TRANSCRIPT_MIME,
    make_bundle,
    read_bundle,
    transcript_mimebundle,
)
from penguin_jupyter.notebook.transcript.transcript_html import render_html
from penguin_jupyter.notebook.transcript.transcript_model import session_label
from penguin_jupyter.omni import (
    assistant_text,
    from_dict,
    thinking,
    to_dict,
    to_json,
    token_usage,
    tool_call,
    tool_call_output,
)
from penguin_jupyter.redaction import Redactor
from tests.support.transcript import SECRET, SESSION_INFO, sample_messages

USAGE = {
    "session": {"cache_read": 1, "cache_write": 2, "output": 30, "total": 100},
    "request": {"output": 5, "total": 9},
}


def _without_default_stop(payload: dict) -> dict:
    return {k: v for k, v in payload.items() if not (k == "stop_reason" and v == "completed")}


def sample_bundle(**kwargs):
    options = {"session_info": SESSION_INFO, "status": "aborted", "usage": USAGE, "redactor": Redactor([SECRET])}
    options.update(kwargs)
    return make_bundle(sample_messages(), **options)


def _unshown(payload: dict) -> bool:
    """What a bundle leaves out: partials and the events no renderer shows."""
    kind = payload.get("type", "")
    return (
        kind.startswith("partial_")
        or kind in ("request_begin", "token_usage", "tool_list_ready")
        or (kind == "request_end" and payload.get("status") == "completed")
    )


def test_bundle_shape_and_partials_dropped():
    bundle = make_bundle(sample_messages(), session_info=SESSION_INFO, status="completed", usage=None)
    assert list(bundle) == ["version", "session", "status", "usage", "messages", "tools"]
    assert bundle["version"] == 1
    # each tool the Task called, with the card roles its declaration gives (the labextension's only source)
    assert bundle["tools"]["edit_file"]["diff"] == {
        "old": "old_string",
        "new": "new_string",
        "path": "file_path",
        "notes": {"replace_all": "(replace_all: every occurrence)"},
    }
    assert {name: roles for name, roles in bundle["tools"].items() if name != "edit_file"} == {
        "exec_command": {
            "command": "cmd",
            "workdir": "workdir",
            "notes": {"run_in_background": " [background]"},
        },
        "run_subagent": {"body": "prompt", "headline": ["prompt"]},
    }
    # The author's workspace and trace paths are not saved: a notebook travels.
    assert bundle["session"] == {k: v for k, v in SESSION_INFO.items() if k not in ("workspace", "trace_path")}
    assert bundle["usage"] is None
    wire = [to_dict(m) for m in sample_messages()]
    expected = [m for m in wire if not _unshown(m["payload"])]
    # "completed" is the wire's default stop_reason: saved without it, read back with it.
    assert [m["payload"] for m in bundle["messages"]] == [_without_default_stop(m["payload"]) for m in expected]
    assert "completed" not in {m["payload"].get("stop_reason") for m in bundle["messages"]}
    assert [to_dict(from_dict(m))["payload"] for m in bundle["messages"]] == [m["payload"] for m in expected]
    assert len(bundle["messages"]) == len(wire) - 7  # 3 partials, 2 request_begin, 1 completed end, 1 token_usage
    assert [m.get("origin") for m in bundle["messages"]].count(["child-1"]) == 5
    json.dumps(bundle)  # plain JSON all the way down


def test_usage_from_token_usage_message_and_full_counts():
    usage = token_usage({"output": 3, "total": 10}, {"total": 4})
    bundle = make_bundle([], session_info=None, status="completed", usage=usage)
    assert bundle["usage"] == {
        "session": {"cache_read": 0, "cache_write": 0, "output": 3, "total": 10},
        "request": {"cache_read": 0, "cache_write": 0, "output": 0, "total": 4},
    }
    assert bundle["session"] == {}


def test_bad_status_is_a_one_line_error():
    with pytest.raises(
        ValueError,
        match=r"^transcript status must be one of completed, failed, aborted, timeout, malformed, auth, got 'done'$",
    ):
        make_bundle([], session_info=SESSION_INFO, status="done", usage=None)


def redact(value: object, secrets: list) -> object:  # type: ignore[type-arg]
    return Redactor(secrets).value(value)


def test_redact_recurses_and_ignores_short_secrets():
    value = {"a": ["xx-abcd1234-yy", ("abcd1234",)], "abcd1234": 5, "n": None, "t": "abcd123"}
    assert redact(value, [("KEY", "abcd1234"), "abcd123", ""]) == {
        "a": ["xx-[redacted:KEY]-yy", ["[redacted:KEY]"]],
        "[redacted:KEY]": 5,
        "n": None,
        "t": "abcd123",  # shorter than MIN_SECRET_LENGTH: not a secret
    }
    assert (
        redact("long secret! inside secret!", [("A", "secret!!"), ("B", "long secret!"), ("C", "e secret!")])
        == "[redacted:B] insid[redacted:C]"
    )
    assert redact({"k": "v"}, []) == {"k": "v"}


def test_secrets_absent_from_every_representation():
    secret_with_html = "pa<ss>&word"
    messages = [*sample_messages(), tool_call_output(f"token {secret_with_html}", "c9")]
    bundle = make_bundle(messages, session_info=SESSION_INFO, status="completed", usage=None)
    mime = transcript_mimebundle(bundle, redactor=Redactor([SECRET, secret_with_html]))
    dumped = json.dumps(mime[TRANSCRIPT_MIME], ensure_ascii=False)
    for text in (dumped, mime["text/html"], mime["text/plain"]):
        assert SECRET not in text
        assert secret_with_html not in text and "pa&lt;ss&gt;&amp;word" not in text
    assert "key=[redacted:secret]" in dumped and "key=[redacted:secret]" in mime["text/html"]
    # make_bundle(redactor=...) alone already redacts the saved bundle.
    assert SECRET not in json.dumps(sample_bundle())


def test_mimebundle_has_exactly_three_representations():
    bundle = sample_bundle()
    mime = transcript_mimebundle(bundle)
    assert set(mime) == {TRANSCRIPT_MIME, "text/html", "text/plain"}
    assert mime[TRANSCRIPT_MIME] == bundle


def test_html_is_self_contained_and_escaped():
    html = transcript_mimebundle(sample_bundle())["text/html"]
    assert html.startswith('<div class="penguin-transcript-html">')
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert "<b>raw</b>" not in html and "&lt;b&gt;raw&lt;/b&gt;" in html
    assert "<strong>look</strong>" in html
    # no emoji in the header: a missing-glyph box where no colour-emoji font is installed (issue 39)
    assert '<div class="pg-header">penguin · openai/gpt-test · ' in html and "🐧" not in html
    assert "session sess-1234 · approve ask" in html and "workspace /work/space" not in html
    assert (
        '<details class="pg-thinking"><summary>thinking</summary><pre>I should list the files first.</pre></details>'
        in html
    )
    assert html.count('class="pg-tool penguin-tool-card"') == 4
    assert "<pre>$ ls -la</pre>" in html and "in /work/space" in html
    assert '<span class="pg-diff-del">-y = 2</span>\n<span class="pg-diff-add">+y = 20</span>' in html
    assert "approval: deny" in html and "output (aborted)" in html
    assert "<summary>… 18 more lines</summary>" in html
    assert "Request failed: idle timeout — retry 1 in 2.0 s" in html
    assert "subagent child-1 · anthropic/claude-test" in html
    assert "Compaction (context, summarize) at 120000 context tokens, 14 turns — completed" in html
    assert "Aborted: aborted by user" in html
    assert "tokens: session 100 total (2 input, 1 cached input, 30 output) · last request 9" in html


def test_html_escapes_hostile_tool_names_and_markdown_images_are_off():
    messages = [
        tool_call('x"><script>alert(1)</script>', {"a": "<img src=x onerror=alert(1)>"}, "c1"),
        assistant_text("![pic](https://example.com/p.png) and [link](javascript:alert(1))"),
        thinking("</pre><script>bad()</script>"),
    ]
    html = render_html(read_bundle(make_bundle(messages, session_info=None, status="completed", usage=None)))
    assert "<script" not in html and "<img src=x" not in html
    assert "<img" not in html  # markdown images are disabled: nothing is loaded from the network
    assert 'src="https://example.com' not in html
    assert 'href="javascript' not in html


def test_plain_summary_exact():
    assert transcript_mimebundle(sample_bundle())["text/plain"] == "\n".join(
        [
            "penguin transcript — openai/gpt-test — aborted",
            "session sess-1234",
            "4 tool calls: exec_command ×2, edit_file, run_subagent",
            "1 subagent",
            "MCP connect: files — completed: files completed in 12 ms, 3 tools",
            "Request failed: idle timeout — retry 1 in 2.0 s",
            "Compaction (context, summarize) at 120000 context tokens, 14 turns — completed",
            "[reached max turns (3); stopping]",
            "Aborted: aborted by user",
            "reply: Let me **look** at the files. <b>raw</b>",
            "tokens: 100 total, 30 output",
        ]
    )


def test_older_bundle_version_still_renders():
    old = {
        "version": 0,
        "session": {"session_id": "old-1", "model_id": "m"},
        "messages": [
            to_json(assistant_text("from an old notebook")),
            to_dict(tool_call("read_file", {"file_path": "a.txt"}, "r1")),
            to_dict(tool_call_output("contents", "r1")),
            "not json at all",
            {"no": "payload"},
        ],
    }
    normalized = read_bundle(old)
    assert normalized["version"] == 0 and normalized["status"] == "completed" and normalized["usage"] is None
    assert len(normalized["messages"]) == 3
    mime = transcript_mimebundle(old)
    assert mime[TRANSCRIPT_MIME] == old
    assert "from an old notebook" in mime["text/html"] and "penguin-tool-card" in mime["text/html"]
    assert mime["text/plain"].splitlines()[:3] == [
        "penguin transcript — m — completed",
        "session old-1",
        "1 tool call: read_file",
    ]


def test_unreadable_bundle_is_a_one_line_error():
    with pytest.raises(ValueError, match=r"^transcript bundle must be a JSON object, got list$"):
        read_bundle([1, 2])
    with pytest.raises(ValueError, match=r"^transcript bundle is not JSON: "):
        read_bundle("{oops")


def test_headers_name_a_generated_session_id_once():
    bundle = sample_bundle()
    bundle["session"]["session_id"] = "session-2026-12-02-10-00-00-abcd1234"
    mime = transcript_mimebundle(bundle)
    for text in (mime["text/html"], mime["text/plain"]):
        assert "session-2026-12-02-10-00-00-abcd1234" in text
        assert "session session-" not in text
    assert session_label("sess-1234") == "session sess-1234"


def test_the_html_carries_the_style_rules_its_markup_uses():
    plain = render_html(read_bundle(make_bundle([assistant_text("Just text.")], session_info=SESSION_INFO, status="completed")))
    full = render_html(read_bundle(sample_bundle()))
    style = lambda markup: re.search(r"<style>(.*?)</style>", markup).group(1)  # noqa: E731
    assert ".penguin-transcript-html{" in style(plain) and ".penguin-transcript-html pre{" not in style(plain)
    assert ".pg-tool{" not in style(plain) and ".pg-diff-add{" not in style(plain)
    assert ".pg-tool{" in style(full) and ".pg-subagent{" in style(full) and ".pg-thinking{" in style(full)
    assert len(style(plain)) < len(style(full))
