"""Without a widget frontend (terminal IPython) `%%penguin` streams plain text: a real `ipython`
subprocess, the real session stack and the scripted model server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import kernel_env
from tests.support.session import configure_model


def test_terminal_ipython_streams_plain_text(tmp_path):
    script = [
        {
            "text": "I will list the files.",
            "tool_calls": [{"name": "exec_command", "id": "c1", "arguments": {"cmd": "ls"}}],
        },
        {"text": "There is one file: data.txt"},
    ]
    (tmp_path / "data.txt").write_text("x")
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "IPython",
                "--no-banner",
                "--quick",
                "--colors=nocolor",
                "--ext=penguin_jupyter",
                "-c",
                "%%penguin --approve allow-all\nWhat files are here?",
            ],
            cwd=tmp_path,
            env=kernel_env(),
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "I will list the files." in out
    assert "🔧 exec_command $ ls" in out
    assert "data.txt" in out
    assert "There is one file: data.txt" in out
    assert f"workspace {tmp_path}" in out
    assert "sk-test-secret" not in out + proc.stderr
    assert "Traceback" not in out + proc.stderr
