"""Compact table markup and the bundle's slim tool list: the bytes a saved `%%penguin` cell carries.

Tables are written without the end tags HTML does not need (`</td>`, `</th>`, `</tr>`) and with
`align` instead of a `style` per cell; the allow-list pass (`safe_html`) reads that form as a
browser does (a new cell or row ends the open one), so its canonical output is the full table.
How chromium and JupyterLab's own sanitizer read the compact form: tests/browser/test_browser_tables.py.
"""

from __future__ import annotations

from penguin_jupyter.notebook.transcript.markdown_html import compact_tables, markdown_html
from penguin_jupyter.notebook.transcript.no_fetch_html import safe_html
from penguin_jupyter.notebook.transcript.replay_bundle import validate_replay_bundle
from penguin_jupyter.notebook.transcript.transcript_bundle import make_bundle, transcript_mimebundle
from penguin_jupyter.omni import assistant_text, to_dict, tool_list_ready, user_text

ALIGNED = "| name | n |\n|:--|--:|\n| `a\\|b` *x* | 1 |\n| c | |\n\nafter"


def long_table(rows: int) -> str:
    body = "".join(f"| {n:05d} | word{n % 7} | {n * 37 % 1000:>4} | note {n % 3} |\n" for n in range(rows))
    return "| id | word | value | note |\n|---|---|---|---|\n" + body


def test_markdown_tables_drop_optional_end_tags_and_use_align():
    assert markdown_html(ALIGNED) == (
        '<table><thead><tr><th align=left>name<th align=right>n</thead><tbody>'
        '<tr><td align=left><code>a|b</code> <em>x</em><td align=right>1'
        '<tr><td align=left>c<td align=right></tbody></table>\n<p>after</p>\n'
    )


def test_the_allow_list_pass_reads_the_compact_form_as_the_full_table():
    assert safe_html(markdown_html(ALIGNED)) == (
        '<table><thead><tr><th align="left">name</th><th align="right">n</th></tr></thead><tbody>'
        '<tr><td align="left"><code>a|b</code> <em>x</em></td><td align="right">1</td></tr>'
        '<tr><td align="left">c</td><td align="right"></td></tr></tbody></table>\n<p>after</p>\n'
    )


def test_cells_and_rows_never_nest_in_the_allow_list_pass():
    """`<td>a<td>b` is two cells (as in a browser), whoever wrote it; a new section ends the rows."""
    assert safe_html("<table><tr><td>a<td><b>b<tr><th>c<tbody><tr><td>d</table>") == (
        "<table><tr><td>a</td><td><b>b</b></td></tr><tr><th>c</th></tr>"
        "<tbody><tr><td>d</td></tr></tbody></table>"
    )
    # a nested table's cells end inside it, not the outer cell
    assert safe_html("<table><tr><td><table><tr><td>x<td>y</table>z<td>w</table>") == (
        "<table><tr><td><table><tr><td>x</td><td>y</td></tr></table>z</td><td>w</td></tr></table>"
    )


def test_compaction_is_idempotent_and_leaves_other_markup_alone():
    once = compact_tables(safe_html(markdown_html(ALIGNED)))
    assert compact_tables(once) == once == markdown_html(ALIGNED)
    text = "<pre>&lt;/td&gt;\n</pre>\n<p>a</p>\n"
    assert compact_tables(text) == text


def test_a_long_tables_saved_html_is_close_to_its_markdown():
    text = long_table(2_000)
    bundle = make_bundle([user_text("t"), assistant_text(text)], session_info=None, status="completed")
    html_out = transcript_mimebundle(bundle)["text/html"]
    table = html_out[html_out.index("<table>") : html_out.index("</table>")]
    assert len(table) < 1.15 * len(text)  # the full form is ~2×
    assert table.count("<tr>") == 2_001 and "</td>" not in table


def test_the_bundle_keeps_no_tool_list_and_an_older_one_still_replays():
    tools = [
        {"name": "read_file", "description": "Read a file. " * 50, "input_schema": {"type": "object"}},
        {"name": "exec_command", "description": "Run a command.", "input_schema": {"type": "object"}},
    ]
    event = tool_list_ready(tools)
    bundle = make_bundle([user_text("hi"), event], session_info=None, status="completed")
    assert [m["payload"]["type"] for m in bundle["messages"]] == ["text"]
    assert "description" in str(event.payload.model_dump())  # the message itself is not changed
    older = {
        **bundle,
        "messages": [
            *bundle["messages"],
            {
                **to_dict(event),
                "payload": {
                    "type": "tool_list_ready",
                    "tools": [{"name": "read_file"}, {"name": "exec_command"}],
                },
            },
        ],
    }
    assert len(validate_replay_bundle(older).messages) == 2  # saved before tool lists were left out
