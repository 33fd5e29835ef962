"""Live streaming in a real kernel: iopub bytes are linear in the answer whatever its shape, and
no iopub message carries a piece of a key, wherever the chunk boundaries fall.

A real ipykernel (jupyter_client) runs `%%penguin` cells against the ScriptedModelServer; every
iopub message of a cell is counted with its JSON size (header, parent header, metadata, content),
as benchmarks/bench_render.py does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from penguin_jupyter.state import add_model
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.answer_shapes import shape_text
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.live_text import captured_text, widget_states

pytestmark = pytest.mark.kernel
KEY = "sk-h21-Vt8qLm3XwZ9pRb6Nc2Kd7Jf4"
LEAK = 8


def _kernel(tmp_path: Path, server: ScriptedModelServer, api_key: str = "sk-test-secret") -> KernelHarness:
    add_model(
        Path(os.environ["PENGUIN_HOME"]),
        "default_project",
        provider="openai",
        model_id="scripted-model",
        base_url=server.url,
        api_key=api_key,
        client_type="openai-chat",
        context_window=10_000_000,
        default=True,
    )
    notebook_dir = tmp_path / "notebooks"
    notebook_dir.mkdir(exist_ok=True)
    env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "streaming.ipynb")})
    harness = KernelHarness(str(notebook_dir), env)
    assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return harness


def _size(msg: dict) -> int:
    return sum(
        len(json.dumps(msg[k], default=str)) for k in ("header", "parent_header", "metadata", "content")
    )


@pytest.mark.parametrize("shape", ["one long paragraph", "one code block", "a long Markdown table"])
def test_a_100_kb_answer_costs_at_most_four_times_its_size_in_iopub_bytes(tmp_path, shape):
    text = shape_text(shape, 100_000)
    deltas = [text[i : i + 5] for i in range(0, len(text), 5)]
    with ScriptedModelServer([{"text": deltas}]) as server:
        kernel = _kernel(tmp_path, server)
        try:
            result = kernel.execute("%%penguin --approve allow-all\nWrite it.", timeout=300)
        finally:
            kernel.close()
    assert result.reply["content"]["status"] == "ok", result.stderr
    captured, loose = captured_text(result.messages)
    assert "".join(captured.values()) == text and loose == ""
    streams = [m for m in result.of_type("stream") if m["content"]["name"] == "stdout"]
    assert sum(len(m["content"]["text"]) for m in streams) == len(text), "each character goes out once"
    total = sum(_size(m) for m in result.messages)
    assert total <= 4 * len(text.encode()), f"{shape}: {total / len(text):.2f}x the answer in iopub bytes"
    (final,) = [m for m in result.messages if m["msg_type"] == "update_display_data"]
    saved_html = final["content"]["data"]["text/html"]
    assert len(saved_html) < 1.25 * len(text), f"{shape}: the saved HTML is {len(saved_html) / len(text):.2f}x"


def _octal(text: str) -> str:
    """`text` as printf octal escapes (the command line itself holds no piece of the key)."""
    return "".join(f"\\{ord(ch):03o}" for ch in text)


def _key_pieces(text: str) -> list[str]:
    return [KEY[i : i + LEAK] for i in range(len(KEY) - LEAK + 1) if KEY[i : i + LEAK] in text]


def test_a_key_cut_at_every_position_never_reaches_iopub_in_pieces(tmp_path):
    """One kernel, one Task per split point of the key (0 … len(KEY): before it, at every inner
    position, after it), the two halves 0.15 s apart (longer than the 0.1 s text throttle, so the
    first half would go out on its own if it were not held back). Plus the same key split in
    thinking and in a command's output."""
    cuts = list(range(len(KEY) + 1))
    script = [
        {"text": [f"Cut {cut}: your key is {KEY[:cut]}", f"{KEY[cut:]} — keep it safe."], "delay_ms": 150}
        for cut in cuts
    ]
    half = len(KEY) // 2
    script.append(
        {
            "reasoning": [f"The key {KEY[:half]}", f"{KEY[half:]} is in the config."],
            "text": ["Checked."],
            "delay_ms": 150,
            "tool_calls": [
                {
                    "name": "exec_command",
                    "id": "split_out",
                    "arguments": {
                        "cmd": f"printf '{_octal(KEY[:half])}'; sleep 0.4; printf '{_octal(KEY[half:])}\\n'"
                    },
                }
            ],
        }
    )
    script.append({"text": "Done."})
    with ScriptedModelServer(script) as server:
        kernel = _kernel(tmp_path, server, api_key=KEY)
        try:
            results = [
                kernel.execute(f"%%penguin --approve allow-all\nSay cut {cut}.", timeout=120) for cut in cuts
            ]
            results.append(kernel.execute("%%penguin --approve allow-all\nThink, then echo.", timeout=120))
        finally:
            kernel.close()
    for cut, result in zip([*cuts, "thinking + output"], results, strict=True):
        assert result.reply["content"]["status"] == "ok", result.stderr
        for msg in result.messages:
            pieces = _key_pieces(json.dumps(msg["content"], default=str))
            assert not pieces, f"cut {cut}: a {msg['msg_type']} message carried {pieces[0]!r}"
    for cut, result in zip(cuts, results, strict=False):
        shown = "".join(captured_text(result.messages)[0].values())
        assert shown == f"Cut {cut}: your key is [redacted:openai api_key] — keep it safe.", shown
    last = "".join(captured_text(results[-1].messages)[0].values())
    assert "The key [redacted:openai api_key] is in the config." in last
    values = [str(state.get("value", "")) for state in widget_states(results[-1].messages).values()]
    assert any(v.startswith("<pre") and "[redacted:openai api_key]" in v for v in values), "the command output, redacted"
