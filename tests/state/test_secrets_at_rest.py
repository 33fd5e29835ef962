"""No secret at rest, none in the notebook: after Tasks that echo the configured API key, vault
values, a provider key from the environment and one from the workspace `.env` (in model text,
tool arguments and tool output, long enough to be archived), a byte search of the whole data root
and of a saved .ipynb finds none of them raw; everything under the data root is private; the model
itself sees placeholders; resume works on the redacted trace; a short vault value is documented
behaviour. Real parts: the scripted model server over HTTP, real commands, a real kernel."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import nbformat
import pytest

from penguin_jupyter import create_agent
from penguin_jupyter.omni import user_text
from penguin_jupyter.redaction import MIN_SECRET_LENGTH, Redactor, Secret, placeholder
from penguin_jupyter.state import paths, set_vault_value
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import allow, collect, configure_model

pytestmark = pytest.mark.security

API_KEY = "sk-test-secret"  # configure_model's api_key
VAULT_VALUE = "vault-VALUE-7f3e9a1c"
ENV_KEY = "sk-ant-ENV-5b8d2e0f4a"
DOTENV_KEY = "sk-ds-DOTENV-c4d1e8b7"
SECRETS = {
    API_KEY: "openai api_key",
    VAULT_VALUE: "DB_TOKEN",
    ENV_KEY: "ANTHROPIC_API_KEY",
    DOTENV_KEY: "DEEPSEEK_API_KEY",
}
ECHO_ALL = " ".join(SECRETS)


def _script() -> list[dict]:
    # One command prints every secret 3,000 times (past exec_command's output limit, so the full
    # output goes to the scratchpad archive); the raw API key also sits in the tool arguments.
    loop = 'for i in $(seq 1 3000); do echo "$DB_TOKEN $ANTHROPIC_API_KEY $DEEPSEEK_API_KEY %s $i"; done'
    return [
        {
            "reasoning": f"The user gave me {API_KEY}.",
            "text": f"Echoing {ECHO_ALL} now.",
            "tool_calls": [
                {"name": "exec_command", "id": "call_1", "arguments": {"cmd": loop % API_KEY}},
                {"name": "exec_command", "id": "call_2", "arguments": {"cmd": f"echo {API_KEY}; cat .env"}},
            ],
        },
        {"text": f"Done: {ECHO_ALL}."},
        {"text": "Resumed fine."},
    ]


def _byte_hits(root: Path, needles: list[str]) -> list[str]:
    hits = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            hits += [f"{path}: {n}" for n in needles if n.encode() in data]
    return hits


def _loose_modes(root: Path) -> list[str]:
    loose = []
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        want = 0o700 if path.is_dir() else 0o600
        if not path.is_symlink() and mode != want:
            loose.append(f"{oct(mode)} {path}")
    return loose


@pytest.fixture
def secret_workspace(tmp_path, monkeypatch):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".env").write_text(f"DEEPSEEK_API_KEY={DOTENV_KEY}\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_KEY)
    return workspace


async def test_no_raw_secret_anywhere_under_the_data_root_and_the_model_sees_placeholders(secret_workspace):
    agent = await create_agent()
    set_vault_value(paths.vault_path(agent.root, agent.project_id, agent.agent_id), "DB_TOKEN", VAULT_VALUE)
    with ScriptedModelServer(_script()) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=secret_workspace)
        assert sorted(session.redactor.values) == sorted(SECRETS)
        out = await collect(session.run([user_text(f"Echo my key {API_KEY} and the vault")], approve=allow))
        assert out[-1].payload.type == "request_end"
        outputs = [m.payload.output for m in out if m.kind == "tool_call_output"]
        assert len(outputs) == 2 and any("[output archived: " in o for o in outputs)
        # The model itself sees placeholders in tool outputs (its second request).
        tool_messages = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
        seen = json.dumps(tool_messages)
        for value, name in SECRETS.items():
            assert value not in seen
            assert placeholder(name) in seen
        trace_path = session.trace_path
        await session.aclose()

        root = Path(os.environ["PENGUIN_HOME"])
        stores = {
            paths.vault_path(root, agent.project_id, agent.agent_id),
            paths.project_config_path(root, agent.project_id),
        }
        hits = [h for h in _byte_hits(root, list(SECRETS)) if not any(h.startswith(f"{s}:") for s in stores)]
        assert hits == [], "raw secrets at rest outside the two credential stores"
        archives = list(root.rglob("truncated-tool-output/*.log"))
        assert archives and placeholder("DB_TOKEN") in archives[0].read_text()
        assert _loose_modes(root) == []

        trace_text = trace_path.read_text()
        for name in SECRETS.values():
            assert placeholder(name) in trace_text
        for line in trace_text.splitlines():
            json.loads(line)  # still valid JSON after redaction

        # Resume replays the redacted trace; the model is given placeholders, never a raw value.
        resumed = await agent.resume_session(session.session_id)
        again = await collect(resumed.run([user_text("still there?")], approve=allow))
        assert again[-1].payload.type == "request_end"
        history = json.dumps(server.requests[-1]["messages"])
        for value in SECRETS:
            assert value not in history
        assert placeholder("openai api_key") in history
        await resumed.aclose()

        # The session list's first prompt is redacted too.
        (info,) = agent.list_sessions()
        assert info.first_prompt == f"Echo my key {placeholder('openai api_key')} and the vault"
        hits = [h for h in _byte_hits(root, list(SECRETS)) if not any(h.startswith(f"{s}:") for s in stores)]
        assert hits == []


async def test_an_older_loose_trace_file_is_tightened_when_appended(tmp_path):
    from penguin_jupyter.omni import assistant_text
    from penguin_jupyter.trace import TraceWriter

    old = tmp_path / "traces" / "2025-01-01" / "s_001.jsonl"
    old.parent.mkdir(parents=True)
    old.write_text("")
    os.chmod(old, 0o644)
    writer = TraceWriter(old, redactor=Redactor([Secret("K", "abcdefgh-secret")]))
    writer.write(assistant_text('quote " and abcdefgh-secret in one'))
    writer.close()
    assert stat.S_IMODE(old.stat().st_mode) == 0o600
    line = json.loads(old.read_text())
    assert line["payload"]["text"] == 'quote " and [redacted:K] in one'


def test_a_short_common_word_vault_value_is_not_a_secret_by_design():
    # Shorter than MIN_SECRET_LENGTH: treated as ordinary text (documented in docs/security.md),
    # neither a crash nor every "admin" in the transcript blanked out.
    assert MIN_SECRET_LENGTH == 8
    redactor = Redactor([Secret("DB_USER", "admin"), Secret("DB_PASS", "password"), Secret("K", "x" * 7)])
    assert redactor.values == ["password"]
    assert redactor("log in as admin with password") == "log in as admin with [redacted:DB_PASS]"
    mixed = Redactor([Secret("EMPTY", ""), ("PAIR", "pair-value-1"), "bare-secret-1"])
    assert mixed.values == ["bare-secret-1", "pair-value-1"]  # longest first
    assert mixed("pair-value-1 bare-secret-1") == "[redacted:PAIR] [redacted:secret]"


async def test_short_vault_value_runs_a_task_normally(tmp_path):
    agent = await create_agent()
    set_vault_value(paths.vault_path(agent.root, agent.project_id, agent.agent_id), "DB_USER", "admin")
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "c1", "arguments": {"cmd": "echo user=$DB_USER"}}]},
        {"text": "The user is admin."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=tmp_path)
        assert "admin" not in session.redactor.values
        out = await collect(session.run([user_text("who?")], approve=allow))
        await session.aclose()
    assert [m.payload.output for m in out if m.kind == "tool_call_output"] == ["user=admin\n"]
    assert "The user is admin." in session.trace_path.read_text()


@pytest.mark.kernel
def test_saved_notebook_and_data_root_hold_no_raw_secret(tmp_path, secret_workspace):
    root = Path(os.environ["PENGUIN_HOME"])
    script = _script()[:2]
    # run_python's display() goes to the cell directly (not only to the tool output).
    shown = (
        "import os\nfrom IPython.display import Markdown, display\n"
        "display(Markdown('env key ' + os.environ['ANTHROPIC_API_KEY']))\nprint(os.environ['ANTHROPIC_API_KEY'])"
    )
    script[0]["tool_calls"].append({"name": "run_python", "id": "call_3", "arguments": {"code": shown}})
    with ScriptedModelServer(script) as server:
        configure_model(root, server)
        set_vault_value(
            paths.vault_path(root, paths.DEFAULT_PROJECT_ID, paths.DEFAULT_AGENT_ID), "DB_TOKEN", VAULT_VALUE
        )
        env = kernel_env({"JPY_SESSION_NAME": str(secret_workspace / "analysis.ipynb")})
        kernel = KernelHarness(str(secret_workspace), env)
        try:
            cells = [
                "%load_ext penguin_jupyter",
                f"%%penguin --approve allow-all\nEcho my key {API_KEY} and the vault",
                "%penguin sessions",
                "%penguin status",
                "%penguin trace",
                "%penguin config",
            ]
            results = [kernel.execute(code, timeout=180) for code in cells]
        finally:
            kernel.close()
    for result in results:
        assert result.reply["content"]["status"] == "ok", result.stderr
    assert placeholder("openai api_key") in results[2].stdout  # the first prompt, redacted

    nb = nbformat.v4.new_notebook()
    for code, result in zip(cells, results, strict=True):
        cell = nbformat.v4.new_code_cell(code)
        # Every display the cell published (a superset of what the notebook keeps).
        for msg in result.of_type("display_data", "update_display_data"):
            cell.outputs.append(nbformat.v4.new_output("display_data", data=msg["content"]["data"]))
        for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
            if text:
                cell.outputs.append(nbformat.v4.new_output("stream", name=name, text=text))
        nb.cells.append(cell)
    # The saved notebook keeps what the user typed in the cell source; the outputs must not add
    # any secret, so the search skips the one prompt the user wrote by hand.
    nb.cells[1].source = "%%penguin --approve allow-all\nEcho my key and the vault"
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nb, saved)
    data = saved.read_bytes()
    assert placeholder("DB_TOKEN") in data.decode()
    assert f"env key {placeholder('ANTHROPIC_API_KEY')}" in data.decode()  # the display() output
    for value in SECRETS:
        assert value.encode() not in data, f"raw {SECRETS[value]} in the saved notebook"
    # Nothing that reached the browser live carried a secret either.
    live = json.dumps([m["content"] for r in results for m in r.messages], default=str)
    for value in SECRETS:
        assert value not in live.replace(f"Echo my key {API_KEY} and the vault", "")

    stores = {
        str(paths.vault_path(root, paths.DEFAULT_PROJECT_ID, paths.DEFAULT_AGENT_ID)),
        str(paths.project_config_path(root, paths.DEFAULT_PROJECT_ID)),
    }
    hits = [h for h in _byte_hits(root, list(SECRETS)) if h.split(": ")[0] not in stores]
    assert hits == []
    assert _loose_modes(root) == []


async def test_sessions_list_redacts_a_first_prompt_recorded_raw_by_an_older_version(tmp_path):
    from datetime import date

    from penguin_jupyter.omni import session_meta
    from penguin_jupyter.trace import TraceWriter
    from penguin_jupyter.trace.writer import trace_file_path

    agent = await create_agent()
    set_vault_value(paths.vault_path(agent.root, agent.project_id, agent.agent_id), "DB_TOKEN", VAULT_VALUE)
    old = TraceWriter(trace_file_path(agent.traces_dir, "session-old", date.today()))  # no redactor
    meta = session_meta(
        session_id="session-old",
        provider="openai",
        model_id="m",
        model_context_window="unknown",
        system_prompt="",
        agent_state=str(agent.agent_state_dir),
        workspace=str(tmp_path),
    )
    old.write(meta)
    old.write(user_text(f"use {VAULT_VALUE} please"))
    old.close()
    (info,) = agent.list_sessions()
    assert info.first_prompt == "use [redacted:DB_TOKEN] please"


def test_redactor_forms_and_leaves():
    quoted = 'pa"ss\\word-123'
    redactor = Redactor([Secret("Q", quoted), Secret("bad name!", "abcdefgh-1")])
    arguments = json.dumps({"cmd": f"echo {quoted}"})  # the JSON-escaped form, inside tool arguments
    assert quoted not in redactor(arguments) and json.loads(redactor(arguments)) == {
        "cmd": "echo [redacted:Q]"
    }
    assert redactor("x abcdefgh-1") == "x [redacted:bad name_]"
    html_form = "pa&quot;ss\\word-123"
    assert redactor.markup(html_form) == "[redacted:Q]"
    image = "data:image/png;base64,abcdefgh-1abcdefgh-1"
    assert redactor.value({"url": image, "n": 3, "t": ("abcdefgh-1",)}) == {
        "url": image,
        "n": 3,
        "t": ["[redacted:bad name_]"],
    }
    assert redactor.values == [quoted, "abcdefgh-1"] and len(redactor) == 2  # longest first
    with pytest.raises(TypeError):  # a Redactor is not a list of secret strings
        iter(redactor)  # type: ignore[call-overload]


def test_collected_secrets_name_their_source(tmp_path):
    from penguin_jupyter.state import ModelEntry, ProjectConfig
    from penguin_jupyter.state.secrets import collect_secrets, is_credential_variable

    (tmp_path / ".env").write_text("export HF_TOKEN='hf-dotenv-token-1'\nPLAIN=not-a-secret-value\n")
    cfg = ProjectConfig(models=[ModelEntry("local", "m", api_key="local-config-key-1")])
    environ = {
        "GITHUB_TOKEN": "ghp-env-token-0001",
        "HOME": "/home/someone-long",
        "OPENAI_API_KEY": "sk-env-1234567",
    }
    redactor = collect_secrets(
        config=cfg, vault={"DB_TOKEN": VAULT_VALUE}, workspace=tmp_path, environ=environ
    )
    assert {s.name: s.value for s in redactor.secrets} == {
        "local api_key": "local-config-key-1",
        "GITHUB_TOKEN": "ghp-env-token-0001",
        "OPENAI_API_KEY": "sk-env-1234567",
        "HF_TOKEN": "hf-dotenv-token-1",
        "DB_TOKEN": VAULT_VALUE,
    }
    assert is_credential_variable("AWS_SECRET_ACCESS_KEY") and not is_credential_variable(
        "TOKENIZERS_PARALLELISM"
    )


async def test_a_background_command_report_reaches_the_model_redacted(tmp_path):
    from penguin_jupyter.environment.notices import BackgroundEvent

    agent = await create_agent()
    set_vault_value(paths.vault_path(agent.root, agent.project_id, agent.agent_id), "DB_TOKEN", VAULT_VALUE)
    with ScriptedModelServer([{"text": "ok"}]) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=tmp_path)
        session.environment.notices.emit(
            BackgroundEvent("command", "proc-1", "echo", "completed", "exit 0", f"token {VAULT_VALUE}\n")
        )
        await asyncio.sleep(0.05)
        (notice,) = session.take_background_notices()
        await session.aclose()
    assert VAULT_VALUE not in notice.payload.text and "token [redacted:DB_TOKEN]" in notice.payload.text
