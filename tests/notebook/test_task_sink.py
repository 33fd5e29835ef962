"""The kernel-sink filters of output/task_sink.py, unit level (the real kernel is in
tests/notebook/test_redaction_at_the_sink.py): which messages are redacted, what of them, and the stream
hold-back across the messages of a stream."""

from __future__ import annotations

import html
from typing import Any

import pytest

from penguin_jupyter.notebook.output import task_sink
from penguin_jupyter.redaction import Redactor, Secret

pytestmark = pytest.mark.security

KEY = "tok-unit-Zq8Wm3Xr6Tb1"
REDACTOR = Redactor([Secret("UNIT_TOKEN", KEY)])
PLACEHOLDER = "[redacted:UNIT_TOKEN]"


class _Kernel:
    session = None

    def __init__(self, msg_id: str) -> None:
        self.msg_id = msg_id

    def get_parent(self) -> dict[str, Any]:
        return {"header": {"msg_id": self.msg_id, "msg_type": "execute_request"}}


def test_published_content_is_redacted_in_every_string_but_base64_images():
    png = "iVBORw0KGgo" + KEY  # (a coincidence inside base64 data is left alone)
    content = {
        "data": {"text/plain": f"a {KEY}", "text/html": f"<b>{html.escape(KEY + '&')}</b>", "image/png": png},
        "metadata": {KEY: {"note": [f"in a list {KEY}"]}},
        "state": {"value": f'<img src="data:image/png;base64,{KEY}">', "url": f"data:image/png;base64,{KEY}"},
    }
    out = task_sink.redact_published(content, REDACTOR)
    assert out["data"]["text/plain"] == f"a {PLACEHOLDER}"
    assert PLACEHOLDER in out["data"]["text/html"] and KEY not in out["data"]["text/html"]
    assert out["data"]["image/png"] == png
    assert out["metadata"] == {PLACEHOLDER: {"note": [f"in a list {PLACEHOLDER}"]}}
    assert out["state"]["url"] == content["state"]["url"], "a data: URL is an image"
    assert PLACEHOLDER in out["state"]["value"], "HTML holding an image is still text"


def test_only_messages_for_a_tasks_cell_are_redacted():
    sent: list[dict[str, Any]] = []

    def send(stream: Any, msg_or_type: Any, content: Any = None, parent: Any = None, **kwargs: Any) -> None:
        sent.append({"msg": msg_or_type, "content": content, "parent": parent, **kwargs})

    task_sink.open_task(_Kernel("task-cell"), REDACTOR)
    filtered = task_sink._redacting_send(send, _Session())
    filtered(None, {"parent_header": {"msg_id": "task-cell"}, "content": {"text": KEY}, "metadata": {}})
    filtered(None, "display_data", {"data": {"text/plain": KEY}}, {"header": {"msg_id": "task-cell"}})
    filtered(None, "stream", {"text": KEY}, parent={"header": {"msg_id": "users-own-cell"}})
    assert sent[0]["msg"]["content"] == {"text": PLACEHOLDER}
    assert sent[1]["content"] == {"data": {"text/plain": PLACEHOLDER}}
    assert sent[2]["content"] == {"text": KEY}, "the user's own cell is the notebook's"


class _Session:
    """A `Session` as the filter sees it: `msg` builds a message, `send` is what the filter wraps."""

    def msg(self, msg_type: str, content: dict[str, Any], parent: dict[str, Any]) -> dict[str, Any]:
        return {"header": {"msg_type": msg_type}, "parent_header": parent, "content": content, "metadata": {}}


def test_the_stream_holds_a_tail_that_could_become_a_secret_until_it_is_known_or_the_task_ends():
    sink = task_sink.open_task(_Kernel("held-cell"), REDACTOR)
    assert sink is not None
    session = _Session()
    sent: list[tuple[str, str]] = []

    def send(stream: Any, msg_or_type: Any, content: Any = None, parent: Any = None, **kwargs: Any) -> None:
        sent.append((msg_or_type["parent_header"]["msg_id"], msg_or_type["content"]["text"]))

    filtered = task_sink._redacting_send(send, session)
    cell, other = {"msg_id": "held-cell"}, {"msg_id": "another-cell"}

    def flush(*batch: tuple[dict[str, Any], str]) -> list[tuple[str, str]]:
        sent.clear()
        for parent, text in batch:  # what an OutStream flush sends: one message per parent
            filtered("iopub", session.msg("stream", {"name": "stdout", "text": text}, parent))
        return list(sent)

    assert flush((cell, "key: " + KEY[:6]), (other, "x " + KEY[:6])) == [
        ("held-cell", "key: "),
        ("another-cell", "x " + KEY[:6]),
    ]
    assert flush((cell, KEY[6:] + " end\n")) == [("held-cell", PLACEHOLDER + " end\n")], "the whole key, redacted"
    assert flush((cell, "again " + KEY[:3])) == [("held-cell", "again ")]
    assert flush((cell, KEY[3:5])) == [], "nothing of it may go yet: nothing is sent"
    sent.clear()
    sink.close()
    assert sent == [("held-cell", KEY[:5])], "the cell ended: what is held goes out"


def test_widget_comms_are_redacted_and_the_notebook_bridges_comm_is_not(monkeypatch):
    from types import SimpleNamespace

    from comm import get_comm_manager

    comms = get_comm_manager().comms
    monkeypatch.setitem(comms, "nb", SimpleNamespace(target_name="penguin-notebook"))
    monkeypatch.setitem(comms, "w1", SimpleNamespace(target_name="jupyter.widget"))
    sent: list[Any] = []

    def send(stream: Any, msg_or_type: Any, content: Any = None, parent: Any = None, **kwargs: Any) -> None:
        sent.append(content)

    task_sink.open_task(_Kernel("comm-cell"), REDACTOR)
    filtered = task_sink._redacting_send(send, _Session())
    parent = {"header": {"msg_id": "comm-cell"}}
    source = f"API_TOKEN = '{KEY}'  # the user's own cell, edited by the agent"
    filtered(None, "comm_open", {"comm_id": "w1", "target_name": "jupyter.widget", "data": {"state": {"value": KEY}}}, parent)
    filtered(None, "comm_msg", {"comm_id": "w1", "data": {"state": {"value": KEY}}}, parent)
    filtered(None, "comm_open", {"comm_id": "nb", "target_name": "penguin-notebook", "data": {}}, parent)
    filtered(None, "comm_msg", {"comm_id": "nb", "data": {"op": "edit_cell", "source": source}}, parent)
    filtered(None, "comm_msg", {"comm_id": "opened-before", "data": {"state": {"value": KEY}}}, parent)
    assert sent[0]["data"]["state"]["value"] == PLACEHOLDER and sent[1]["data"]["state"]["value"] == PLACEHOLDER
    assert sent[3]["data"]["source"] == source, "the notebook's own source reaches it as it is"
    assert sent[4]["data"]["state"]["value"] == PLACEHOLDER, "a comm the kernel does not know is redacted"

