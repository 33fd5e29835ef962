"""Undo restores a symlink as a symlink, and the data-science tools' credential files are
credential files (issue 36, defect 7).

As an attacker: a cloned folder ships `notes.txt -> ~/.cache/huggingface/token`; the model
overwrites `notes.txt` (one approved `write_file`) and the user undoes the Task. On 3758335 the
journal saved the link's *target* bytes and undo wrote them back as a regular file: the token sat
in the workspace, readable without a card. Now the journal keeps the link and undo puts the link
back — the token's bytes are never read, copied to the journal or written to the workspace.

With the notebook in `~`, on 3758335 `read-only` read the Hugging Face token, Kaggle's
`kaggle.json`, rclone's config, `~/.databrickscfg`, the Azure CLI's token cache, Snowflake's
connections, dbt's profiles and the files the tools' variables name without asking; each now
asks "read of a credential file", by path, through `../` and through a symlink.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from penguin_jupyter.environment.call_reasons import credential_read_reason
from penguin_jupyter.environment.file_journal import FILE_JOURNAL_KEY, open_file_journal
from penguin_jupyter.interfaces import EnvironmentServices
from penguin_jupyter.omni import tool_call
from tests.support.env import final, make_env, run_call, tool_entry

TOKEN = "hf_attacker-wants-this-0123456789"


def test_undo_puts_a_symlink_back_as_a_symlink_never_its_targets_bytes(tmp_path):
    home = Path(os.environ["HOME"])
    token = home / ".cache" / "huggingface" / "token"
    token.parent.mkdir(parents=True)
    token.write_text(TOKEN)
    workspace = tmp_path / "cloned"
    workspace.mkdir()
    os.symlink(token, workspace / "notes.txt")
    journals = tmp_path / "undo"
    journal = open_file_journal(journals, "session-1")
    journal.begin("task-1")
    env = make_env(workspace, tool_entry("write_file"), services=EnvironmentServices(extra={FILE_JOURNAL_KEY: journal}))
    written = final(asyncio.run(run_call(env, "write_file", {"file_path": "notes.txt", "content": "my notes\n"})))
    journal.end()
    assert written.stop_reason == "completed"
    assert not any(TOKEN.encode() in p.read_bytes() for p in journals.rglob("*") if p.is_file())
    done = journal.restore("task-1")
    assert done.restored == [str(workspace / "notes.txt")] and done.not_restored == []
    assert (workspace / "notes.txt").is_symlink() and os.readlink(workspace / "notes.txt") == str(token)
    assert token.read_text() == TOKEN
    assert not any(TOKEN in p.read_text() for p in workspace.iterdir() if not p.is_symlink())


def _read(path: str):
    return tool_call("read_file", json.dumps({"file_path": path}), "call_r")


DATA_SCIENCE_FILES = {
    ".cache/huggingface/token": "Hugging Face",
    ".cache/huggingface/stored_tokens": "Hugging Face",
    ".huggingface/token": "Hugging Face",
    ".kaggle/kaggle.json": "kaggle",
    ".config/rclone/rclone.conf": "rclone",
    ".databrickscfg": "databrickscfg",
    ".azure/msal_token_cache.json": "~/.azure/",
    ".snowflake/connections.toml": "~/.snowflake/",
    ".dbt/profiles.yml": "dbt",
    ".config/gcloud/application_default_credentials.json": "~/.config/gcloud/",
    ".docker/config.json": "docker",
}


@pytest.mark.parametrize("relative", sorted(DATA_SCIENCE_FILES))
def test_with_the_notebook_in_home_data_science_credentials_ask(relative):
    home = Path(os.environ["HOME"])
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("secret\n")
    (home / "project").mkdir(exist_ok=True)
    link = home / "project" / f"innocent-{relative.replace('/', '_')}.txt"
    os.symlink(path, link)
    for argument in (relative, str(path), f"project/../{relative}", os.path.relpath(link, home)):
        reason = credential_read_reason(_read(argument), str(home))
        assert reason is not None and reason.startswith("read of a credential file: "), (argument, reason)
        assert DATA_SCIENCE_FILES[relative] in reason, reason
    assert credential_read_reason(_read("project"), str(home)) is None


def test_the_locations_the_tools_variables_name_ask(tmp_path, monkeypatch):
    home = Path(os.environ["HOME"])
    elsewhere = tmp_path / "configs"
    named = {
        "HF_TOKEN_PATH": elsewhere / "hf-token",
        "RCLONE_CONFIG": elsewhere / "rclone.conf",
        "DATABRICKS_CONFIG_FILE": elsewhere / "databricks.cfg",
        "GOOGLE_APPLICATION_CREDENTIALS": elsewhere / "service-account.json",
        "NETRC": elsewhere / "netrc",
        "KAGGLE_CONFIG_DIR": elsewhere / "kaggle",
        "AZURE_CONFIG_DIR": elsewhere / "azure",
    }
    for variable, path in named.items():
        monkeypatch.setenv(variable, str(path))
        target = path / "kaggle.json" if variable == "KAGGLE_CONFIG_DIR" else path / "token.json" if variable == "AZURE_CONFIG_DIR" else path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("secret\n")
        reason = credential_read_reason(_read(str(target)), str(home))
        assert reason is not None and reason.startswith("read of a credential file: "), (variable, reason)
    (elsewhere / "report.csv").write_text("a,b\n")
    assert credential_read_reason(_read("report.csv"), str(elsewhere)) is None
