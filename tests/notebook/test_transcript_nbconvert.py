"""A saved notebook with a transcript output reads well through nbconvert (HTML and Markdown)."""

from __future__ import annotations

import nbformat
from nbconvert import HTMLExporter, MarkdownExporter

from penguin_jupyter.notebook.transcript.transcript_bundle import make_bundle, transcript_mimebundle
from penguin_jupyter.redaction import Redactor
from tests.support.transcript import SECRET, SESSION_INFO, sample_messages


def notebook_with_transcript(tmp_path):
    bundle = make_bundle(sample_messages(), session_info=SESSION_INFO, status="completed", usage=None)
    cell = nbformat.v4.new_code_cell("%%penguin\nlist the files")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data=transcript_mimebundle(bundle, redactor=Redactor([SECRET])))
    ]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    path = tmp_path / "t.ipynb"
    nbformat.write(notebook, path)
    return nbformat.read(path, as_version=4)


def test_nbconvert_html_uses_the_self_contained_fallback(tmp_path):
    body, _ = HTMLExporter().from_notebook_node(notebook_with_transcript(tmp_path))
    assert body.count('<div class="penguin-transcript-html">') == 1
    assert body.count("penguin-tool-card") == 4
    assert "subagent child-1 · anthropic/claude-test" in body
    assert SECRET not in body


def test_nbconvert_markdown_keeps_the_transcript(tmp_path):
    body, _ = MarkdownExporter().from_notebook_node(notebook_with_transcript(tmp_path))
    assert "penguin-transcript-html" in body and "Aborted: aborted by user" in body
    assert SECRET not in body
