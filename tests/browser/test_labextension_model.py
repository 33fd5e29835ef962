"""The labextension's TypeScript grouping (labextension/src/model.ts) matches build_blocks.

Runs the compiled `lib/model.js` under real Node on the same wire messages and compares the
block trees field by field with the Python `build_blocks` (same order, same grouping, same
card headers and diffs). Compiles `lib/` with tsc first when it is missing.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from penguin_jupyter.notebook.transcript.legacy_card_roles import LEGACY_CARD_ROLES
from penguin_jupyter.notebook.transcript.saved_images import with_saved_images
from penguin_jupyter.notebook.transcript.transcript_bundle import (
    TRANSCRIPT_MIME,
    make_bundle,
    read_bundle,
    transcript_mimebundle,
)
from penguin_jupyter.notebook.transcript.transcript_model import (
    build_blocks,
    card_roles_of,
    diff_preview,
    edit_cell_result,
)
from penguin_jupyter.omni import (
    abort,
    approval_decision,
    assistant_text,
    request_end,
    to_dict,
    tool_call,
    tool_call_output,
)
from tests.support.declared import declare_notebook_tools
from tests.support.transcript import REPO, child, sample_messages

declare_notebook_tools()

LABEXT = REPO / "labextension"
RUNNER = """
import { buildBlocks, diffPreview, foldText, LEGACY_CARD_ROLES, readBundle, withSavedImages } from './model.mjs';
let input = '';
process.stdin.on('data', chunk => (input += chunk));
process.stdin.on('end', () => {
  const request = JSON.parse(input);
  const tools = request.tools ?? {};
  const result = {
    blocks: buildBlocks(request.messages, tools),
    bundle: readBundle(request.bundle),
    diffs: request.diffs.map(([name, args]) => diffPreview(name, args, tools[name] ?? { body: '*' })),
    saved: request.saved ? withSavedImages(request.saved.bundle, request.saved.html) : null,
    legacy: LEGACY_CARD_ROLES,
    folds: (request.folds || []).map(foldText),
  };
  process.stdout.write(JSON.stringify(result));
});
"""


@pytest.fixture(scope="module")
def node_model(tmp_path_factory) -> Path:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    compiled = LABEXT / "lib" / "model.js"
    source = LABEXT / "src" / "model.ts"
    if not compiled.exists() or compiled.stat().st_mtime < source.stat().st_mtime:
        tsc = LABEXT / "node_modules" / "typescript" / "bin" / "tsc"
        if not tsc.exists():
            pytest.skip("labextension/node_modules is missing: run `jlpm install` in labextension/")
        subprocess.run([node, str(tsc)], cwd=LABEXT, check=True, timeout=120)
    work = tmp_path_factory.mktemp("tsmodel")
    shutil.copy(compiled, work / "model.mjs")
    (work / "run.mjs").write_text(RUNNER)
    return work


def run_ts(work: Path, request: dict) -> dict:
    done = subprocess.run(
        ["node", str(work / "run.mjs")],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def py_blocks(messages, tools=None) -> list[dict]:
    return [dataclasses.asdict(block) for block in build_blocks(messages, tools if tools is not None else {})]


EDIT_CASES = [
    ("edit_file", {"file_path": "a.py", "old_string": "x = 1\ny = 2\n", "new_string": "x = 1\ny = 20\n"}),
    ("edit_file", {"file_path": "a.py", "old_string": "const b = 2;", "new_string": "const b = 20;"}),
    (
        "edit_file",
        {
            "file_path": "long.txt",
            "old_string": "\n".join(f"l{i}" for i in range(20)),
            "new_string": "\n".join(("L0" if i == 0 else "L19" if i == 19 else f"l{i}") for i in range(20)),
            "replace_all": True,
        },
    ),
    ("edit_file", {"file_path": "e.txt", "old_string": "abc", "new_string": ""}),
    ("write_file", {"file_path": "n.txt", "content": "one\ntwo\n"}),
    ("write_file", {"file_path": "empty.txt", "content": ""}),
    ("exec_command", {"cmd": "ls"}),
]


def test_ts_blocks_equal_python_blocks(node_model):
    messages = [to_dict(m) for m in sample_messages()]
    extra = [
        to_dict(tool_call_output("early", "x1")),
        to_dict(tool_call("read_file", {"file_path": "f", "description": "Read it"}, "x1")),
        to_dict(child(assistant_text("deep"), "s1", "s2")),
        to_dict(tool_call("custom", '{"a":[1,2],"description":"d"}', "q1")),
        to_dict(tool_call("broken", "{not json", "q2")),
        to_dict(tool_call("run_cell", {"cell_id": "a49", "description": "Run it"}, "q3")),
    ]
    bundle = make_bundle(messages + extra, session_info={"session_id": "s"}, status="completed", usage=None)
    result = run_ts(node_model, {"messages": bundle["messages"], "bundle": bundle, "diffs": [], "tools": bundle["tools"]})
    assert result["blocks"] == py_blocks(bundle["messages"], bundle["tools"])


def test_a_request_that_is_not_retried_never_reads_retry_in_either_renderer(node_model):
    """An interrupt while a card waited recorded `request_end(aborted, attempt=1)`; both static
    renderers showed it as "Request aborted — retry 1" though nothing was retried (the live
    notice said "request aborted"). Only an end with a wait (`retry_in_ms`) is a retry."""
    messages = [
        to_dict(request_end("aborted", attempt=1)),
        abort("aborted by user"),
        to_dict(request_end("failed", error_message="503", attempt=3)),
        to_dict(request_end("timeout", error_message="idle", attempt=2, retry_in_ms=4000)),
    ]
    messages[1] = to_dict(messages[1])
    result = run_ts(node_model, {"messages": messages, "bundle": {}, "diffs": []})
    expected = py_blocks(messages)
    assert result["blocks"] == expected
    assert [(b["event"], b["text"]) for b in expected] == [
        ("request_error", "Request aborted"),
        ("abort", "Aborted: aborted by user"),
        ("request_error", "Request failed: 503 (attempt 3)"),
        ("retry", "Request failed: idle — retry 2 in 4.0 s"),
    ]


def test_ts_edit_cell_cards_take_the_diff_from_the_output_like_python(node_model):
    old, new = "a = 1\nvalue = 1\nprint(value)", "a = 1\nvalue = 2\nprint(value)"
    calls = [
        ("applied", edit_cell_result("v", 2, old, new), "completed"),
        ("unchanged", edit_cell_result("v", 2, old, old), "completed"),
        ("denied", "Tool call denied by user.", "completed"),
        ("failed", edit_cell_result("v", 2, old, new), "failed"),
    ]
    messages = []
    for call_id, output, stop in calls:
        messages.append(to_dict(tool_call("edit_cell", {"cell_id": "v", "source": new}, call_id)))
        messages.append(to_dict(approval_decision("deny" if call_id == "denied" else "allow", call_id)))
        messages.append(to_dict(tool_call_output(output, call_id, stop)))  # type: ignore[arg-type]
    messages.append(to_dict(tool_call_output(edit_cell_result("v", 3, new, old), "early")))  # output first
    messages.append(to_dict(tool_call("edit_cell", {"cell_id": "v", "source": old}, "early")))
    bundle = make_bundle(messages, session_info={"session_id": "s"}, status="completed", usage=None)
    result = run_ts(node_model, {"messages": bundle["messages"], "bundle": bundle, "diffs": [], "tools": bundle["tools"]})
    expected = py_blocks(bundle["messages"], bundle["tools"])
    assert result["blocks"] == expected
    diffs = {card["tool_call_id"]: card["diff"] for card in expected}
    assert diffs["applied"] == "--- before\n+++ after\n@@ -1,3 +1,3 @@\n a = 1\n-value = 1\n+value = 2\n print(value)"
    assert diffs["early"] is not None and "+value = 1" in diffs["early"]
    assert diffs["unchanged"] is None and diffs["denied"] is None and diffs["failed"] is None
    assert expected[0]["output"] == "Replaced the source of cell v (index 2)."


def test_ts_diffs_equal_difflib(node_model):
    tools = {name: dict(card_roles_of(name)) for name, _ in EDIT_CASES}
    result = run_ts(node_model, {"messages": [], "bundle": {}, "diffs": EDIT_CASES, "tools": tools})
    assert result["diffs"] == [diff_preview(name, args) for name, args in EDIT_CASES]


def test_ts_reads_older_bundles_like_python(node_model):
    old = {
        "version": 0,
        "session": {"session_id": "old-1", "model_id": "m", "extra": "x"},
        "usage": {"session": {"total": 5}},
        "messages": [json.dumps(to_dict(assistant_text("old"))), "garbage", {"no": "payload"}],
    }
    result = run_ts(node_model, {"messages": [], "bundle": old, "diffs": []})
    assert result["bundle"] == read_bundle(old)


def test_ts_reads_the_undo_state_like_python(node_model):
    """The Undo button's entry (docs/undo.md): kept as three strings, dropped when its state is unknown."""
    for undo in (
        {"task_id": "task-3-a1b2c3", "state": "undone", "note": "penguin: undone — variables removed: z", "x": 1},
        {"task_id": "task-1-000000", "state": "blocked", "note": 5},
        {"task_id": "task-1-000000", "state": "run-this"},
    ):
        bundle = {"version": 1, "status": "completed", "messages": [], "undo": undo}
        result = run_ts(node_model, {"messages": [], "bundle": bundle, "diffs": []})
        assert result["bundle"] == read_bundle(bundle)
    assert read_bundle(bundle).get("undo") is None


INVISIBLE = "x = 1  # \u202e } \u2066if admin\u2069 \u200b\u00ad\ufeff\x1b[2K\r\U000e0041"
LONG_SOURCE = "\n".join(["## Summary", "", "fine", "", "![c](http://h.example/x?d=1)", *[f"l{n}" for n in range(6, 21)]])


def test_ts_cards_show_the_whole_body_and_invisible_characters_like_python(node_model):
    """Both renderers' cards carry the full command / code / cell source and make the same
    characters visible (title, detail, body, arguments, edit_cell's diff from its output)."""
    calls = [
        tool_call("insert_cell", {"cell_type": "markdown", "source": LONG_SOURCE}, "c1"),
        tool_call("run_python", {"code": INVISIBLE}, "c2"),
        tool_call("exec_command", {"cmd": "echo \u202eevil\u202c\nrm -rf data", "workdir": "w\u200b"}, "c3"),
        tool_call("edit_cell", {"cell_id": "v", "source": INVISIBLE}, "c4"),
    ]
    outputs = [tool_call_output(edit_cell_result("v", 2, "x = 1", INVISIBLE), "c4")]
    bundle = make_bundle([*calls, *outputs], session_info={"session_id": "s"}, status="completed", usage=None)
    result = run_ts(node_model, {"messages": bundle["messages"], "bundle": bundle, "diffs": [], "tools": bundle["tools"]})
    python = py_blocks(bundle["messages"], bundle["tools"])
    assert result["blocks"] == python
    insert, code, command, edit = python
    assert insert["body"] == LONG_SOURCE
    assert code["body"] == (
        "x = 1  # ⟨U+202E⟩ } ⟨U+2066⟩if admin⟨U+2069⟩ ⟨U+200B⟩⟨U+00AD⟩⟨U+FEFF⟩⟨U+001B⟩[2K⟨U+000D⟩⟨U+E0041⟩"
    )
    assert command["command"] == "echo ⟨U+202E⟩evil⟨U+202C⟩\nrm -rf data" and command["workdir"] == "w⟨U+200B⟩"
    assert "⟨U+202E⟩" in edit["diff"] and "\u202e" not in json.dumps(python, ensure_ascii=False)


PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_ts_puts_back_the_images_saved_in_the_html_like_python(node_model):
    messages = [
        tool_call("run_python", {"code": "plot()"}, "p1"),
        tool_call_output("[no output]", "p1", images=[PNG, PNG]),
        tool_call("run_python", {"code": "plot()"}, "p2"),
        tool_call_output("", "p2", images=["penguin:html-image:7", "penguin:html-image:x"]),  # forged
    ]
    saved = transcript_mimebundle(make_bundle(messages, session_info=None, status="completed"))
    payloads = [m["payload"] for m in saved[TRANSCRIPT_MIME]["messages"]]
    assert PNG not in json.dumps(payloads) and saved["text/html"].count(PNG) == 2
    html_lines = saved["text/html"].splitlines(keepends=True)  # as nbformat saves it
    request = {"messages": [], "bundle": {}, "diffs": [], "saved": {"bundle": saved[TRANSCRIPT_MIME], "html": html_lines}}
    python = with_saved_images(saved[TRANSCRIPT_MIME], html_lines)
    assert run_ts(node_model, request)["saved"] == python
    images = [m["payload"].get("images") for m in python["messages"] if m["payload"]["type"] == "tool_call_output"]
    assert images == [[PNG, PNG], []]  # a reference without its image is left out


def test_ts_renders_cards_from_the_bundles_roles_not_from_tool_names(node_model):
    """The labextension knows no tool: a card reads as the bundle's `tools` say. A tool it never
    heard of renders from its roles (command, body, cell, diff, header); one the bundle gives no
    roles (an MCP tool) shows every argument in full — both exactly as the Python renderer."""
    script = "make all && ./deploy --to prod\n" + "x" * 300
    messages = [
        to_dict(tool_call("shell_runner", {"script": script, "dir": "build", "bg": True}, "t1")),
        to_dict(tool_call("notes_tool", {"target": "n.md", "text": "new line", "old": "old line"}, "t2")),
        to_dict(tool_call("mcp__db__query", {"sql": "SELECT *\nFROM t", "limit": 5, "description": "d"}, "t3")),
    ]
    tools = {
        "shell_runner": {"command": "script", "workdir": "dir", "notes": {"bg": " [bg]"}},
        "notes_tool": {"diff": {"old": "old", "new": "text", "path": "target"}, "headline": ["target"]},
    }
    bundle = {"version": 1, "status": "completed", "messages": messages, "tools": tools}
    read = read_bundle(bundle)
    result = run_ts(node_model, {"messages": read["messages"], "bundle": bundle, "diffs": [], "tools": read["tools"]})
    python = py_blocks(read["messages"], read["tools"])
    assert result["blocks"] == python and result["bundle"]["tools"] == read["tools"]
    shell, notes, query = python
    assert (shell["command"], shell["workdir"], shell["detail"]) == (script, "build", "$ make all && ./deploy --to prod …")
    assert notes["diff"] == "--- a/n.md\n+++ b/n.md\n@@ -1 +1 @@\n-old line\n+new line" and notes["detail"] == "n.md"
    assert query["body"] == "sql: SELECT *\nFROM t\nlimit: 5"  # every argument, never a 200-char preview


def test_bundles_saved_before_the_roles_read_with_the_frozen_legacy_roles(node_model):
    """FALLBACK ONLY: a bundle saved without `tools` reads with the legacy roles, the same table in
    both renderers, and shows its run_python code and exec_command command as it always did."""
    messages = [
        to_dict(tool_call("run_python", {"code": "df.head()"}, "a")),
        to_dict(tool_call("exec_command", {"cmd": "ls", "workdir": "w"}, "b")),
        to_dict(tool_call("mcp__x__y", {"q": 1}, "c")),
    ]
    old = {"version": 1, "status": "completed", "messages": messages}
    read = read_bundle(old)
    result = run_ts(node_model, {"messages": read["messages"], "bundle": old, "diffs": [], "tools": read["tools"]})
    assert result["legacy"] == LEGACY_CARD_ROLES == read["tools"] == result["bundle"]["tools"]
    python = py_blocks(read["messages"], read["tools"])
    assert result["blocks"] == python
    assert [python[0]["body"], python[1]["command"], python[1]["workdir"], python[2]["body"]] == ["df.head()", "ls", "w", "q: 1"]
    # a stranger's roles are data: anything but the known keys and shapes is dropped
    forged = {**old, "tools": {"run_python": {"body": 5, "script": "x", "headline": ["code", 7]}, "x": "y"}}
    assert read_bundle(forged)["tools"] == {"run_python": {"headline": ["code"]}, "x": {"body": "*"}}
    assert run_ts(node_model, {"messages": [], "bundle": forged, "diffs": []})["bundle"]["tools"] == read_bundle(forged)["tools"]


FOLD_CASES = [
    "a short prompt",
    "\n".join(f"line {n}" for n in range(12)),  # exactly the head: nothing folds
    "\n".join(f"line {n}" for n in range(13)),
    "\n".join(f"line {n}" for n in range(40)) + "\n",
    "x" * 1_500,
    "x" * 98_500,  # one long line: folds by characters
    "🐧" * 1_400 + "\n" + "é" * 300 + "\n" + "tail",  # characters as Python counts them
    "\n".join("ж" * 200 for _ in range(10)),
    "",
]


def test_ts_folds_long_user_messages_like_python(node_model):
    """The labextension folds a long user message where the HTML and the live view do
    (transcript/long_prompts.py `fold`: head, rest, the "… N more lines" label)."""
    long_prompts = pytest.importorskip("penguin_jupyter.notebook.transcript.long_prompts")
    result = run_ts(node_model, {"messages": [], "bundle": {}, "diffs": [], "folds": FOLD_CASES})
    python = []
    for text in FOLD_CASES:
        folded = long_prompts.fold(text)
        python.append({"head": folded.head, "rest": folded.rest, "label": folded.label if folded.rest else ""})
    assert result["folds"] == python
    assert [bool(f["rest"]) for f in python] == [False, False, True, True, False, True, True, True, False]
