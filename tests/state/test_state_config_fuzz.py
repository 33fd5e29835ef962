"""Every configuration loader, fuzzed (issue 42, defect 7): whatever bytes a file holds — bytes
that are not UTF-8, TOML or YAML of any shape, 3,000 levels of nesting, a newline or a bidi
control in a name — loading it gives the configuration or one `ConfigError` line that names the
file, and a configuration that loads can be written back and read again unchanged. On 3758335
invalid UTF-8 in the project config, `system_config.yaml` or the vault raised
`UnicodeDecodeError` with no file name, deep nesting raised `RecursionError` in all five
loaders, and a newline in a rule's tool name gave a two-line error."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from penguin_jupyter.environment.mcp.config import InvalidServerConfig, entry_label, resolve_server
from penguin_jupyter.state import ConfigError
from penguin_jupyter.state.admin_policy import load_policy
from penguin_jupyter.state.approval_rules import read_rules
from penguin_jupyter.state.paths import project_config_path
from penguin_jupyter.state.project_config import load_project_config, save_project_config
from penguin_jupyter.state.system_config import load_system_config
from penguin_jupyter.state.toml_writer import dumps_toml
from penguin_jupyter.state.vault import load_vault, set_vault_value
from tests.support.fuzz import bounded, hostile_text, json_values, nested
from tests.support.policy import policy_named

# TOML keys and strings cannot hold lone surrogates (nor can any file); everything else goes
toml_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
toml_scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    toml_text,
    st.dates(),
    st.times(),
    st.datetimes(timezones=st.just(datetime.UTC)),
)
toml_values = st.recursive(
    toml_scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(toml_text, children, max_size=3),
    max_leaves=8,
)
model_entries = st.fixed_dictionaries(
    {"provider": toml_text.filter(bool), "model_id": toml_text.filter(bool)},
    optional={
        "base_url": toml_text,
        "context_window": st.integers(-5, 10**6),
        "vision": st.booleans(),
        "client_type": st.sampled_from(["openai", "openai-chat", "ant-messages"]),
        "pricing": toml_values,
    },
)
project_documents = st.fixed_dictionaries(
    {"models": st.lists(model_entries, max_size=3)},
    optional={
        "default_model": st.fixed_dictionaries({"provider": toml_text, "model_id": toml_text}),
        "name": toml_text,
        "command_policy": st.dictionaries(toml_text, toml_values, max_size=2),
        "extra_table": st.dictionaries(toml_text, toml_values, max_size=3),
    },
)
rule_documents = st.fixed_dictionaries(
    {
        "rule": st.lists(
            st.fixed_dictionaries(
                {"action": st.sampled_from(["allow", "ask", "deny", "maybe"]), "tool": hostile_text},
                optional={"command": toml_text, "path": toml_text},
            ),
            max_size=3,
        )
    }
)
DEEP = [
    ("a = " + "[" * 3000 + "]" * 3000).encode(),
    nested(3000).encode(),
    ("a = " + "{b = " * 3000 + "1" + "}" * 3000).encode(),
    ("a: " + "[" * 3000 + "]" * 3000).encode(),
    "".join(" " * i + "a:\n" for i in range(200)).encode(),
    ("a = " + "[" * 70 + "]" * 70).encode(),
]


def _surrogate_free(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8")


@st.composite
def file_bytes(draw: st.DrawFn, document: st.SearchStrategy, dump) -> bytes:
    """A configuration file: a valid document, perhaps damaged; or anything at all."""
    kind = draw(st.sampled_from(["valid", "valid", "damaged", "not-utf8", "deep", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=60))
    if kind == "deep":
        return draw(st.sampled_from(DEEP))
    data = dump(draw(document)).encode("utf-8", "replace")
    if kind == "valid":
        return data
    at = draw(st.integers(0, len(data)))
    if kind == "not-utf8":
        return data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"])) + data[at:]
    return data[:at] + _surrogate_free(draw(hostile_text)).encode() + data[at + draw(st.integers(0, 5)) :]


def _write_private(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _one_line_naming(error: ConfigError, path: Path) -> None:
    text = str(error)
    assert "\n" not in text and "\r" not in text and text.isprintable(), text
    assert text.startswith(str(path)), text


def _toml(data: dict) -> str:
    return dumps_toml(data)


def _yaml(data: dict) -> str:
    return yaml.safe_dump(data, allow_unicode=True)


def test_project_config(tmp_path: Path) -> None:
    path = project_config_path(tmp_path, "p")

    @bounded(150)
    @given(data=file_bytes(project_documents, _toml))
    def run(data: bytes) -> None:
        _write_private(path, data)
        try:
            config = load_project_config(tmp_path, "p")
        except ConfigError as error:
            _one_line_naming(error, path)
            return
        save_project_config(tmp_path, "p", config)  # what add_model does after reading
        assert load_project_config(tmp_path, "p") == config

    run()


def test_vault(tmp_path: Path) -> None:
    path = tmp_path / "agent_state" / ".vault.toml"
    documents = st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True) | toml_text, toml_text | toml_values)

    @bounded(120)
    @given(data=file_bytes(documents, _toml))
    def run(data: bytes) -> None:
        _write_private(path, data)
        try:
            vault = load_vault(path)
        except ConfigError as error:
            _one_line_naming(error, path)
            return
        assert all(isinstance(value, str) for value in vault.values())
        set_vault_value(path, "ADDED", "x\x7f\u202ey")  # written back with the rest
        assert load_vault(path) == {**vault, "ADDED": "x\x7f\u202ey"}

    run()


def test_system_config(tmp_path: Path) -> None:
    path = tmp_path / "agent_state" / "system_config.yaml"
    documents = st.fixed_dictionaries(
        {"system_prompt": hostile_text.map(_surrogate_free)},
        optional={
            "model": st.dictionaries(st.sampled_from(["max_tokens", "thinking_level", "timeoutMs"]), json_values),
            "tools": st.fixed_dictionaries({"mcpServers": st.lists(st.dictionaries(st.sampled_from(["name", "config"]), json_values), max_size=2)}),
            "compaction": json_values,
            "max_turns": json_values,
        },
    )

    @bounded(120)
    @given(data=file_bytes(documents, _yaml))
    def run(data: bytes) -> None:
        _write_private(path, data)
        try:
            config = load_system_config(path)
        except ConfigError as error:
            _one_line_naming(error, path)
            return
        for server in config.mcp_servers:  # each entry is usable or skipped with one line
            try:
                resolve_server(server)
            except InvalidServerConfig as reason:
                assert "\n" not in f"[penguin] MCP server {entry_label(server)}: {reason}"

    run()


def test_approval_rules(tmp_path: Path) -> None:
    path = tmp_path / ".penguin" / "approvals.toml"

    @bounded(150)
    @given(data=file_bytes(rule_documents.map(lambda d: _rules_surrogate_free(d)), _toml))
    def run(data: bytes) -> None:
        _write_private(path, data)
        try:
            rules = read_rules(path)
        except ConfigError as error:
            _one_line_naming(error, path)
            return
        for rule in rules:
            assert "\n" not in rule.text() and rule.text().isprintable()  # how `%penguin rules` lists it

    run()


def _rules_surrogate_free(document: dict) -> dict:
    return {"rule": [{k: _surrogate_free(v) for k, v in rule.items()} for rule in document["rule"]]}


def test_admin_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "policy.toml"
    policy_named(monkeypatch, path)
    documents = st.fixed_dictionaries(
        {},
        optional={
            "max_approve": st.sampled_from(["ask", "read-only", "allow-all", "never"]),
            "allowed_models": st.lists(toml_text, max_size=2),
            "deny": rule_documents.map(lambda d: _rules_surrogate_free(d)["rule"]),
            "read_dotenv": st.booleans() | toml_text,
        },
    )

    @bounded(120)
    @given(data=file_bytes(documents, _toml))
    def run(data: bytes) -> None:
        path.write_bytes(data)
        try:
            load_policy()
        except ConfigError as error:
            _one_line_naming(error, path)

    run()


@bounded(300)
@given(entry=st.fixed_dictionaries({"name": json_values | hostile_text, "config": json_values}))
def test_mcp_server_entries(entry: dict) -> None:
    try:
        resolve_server(entry)
    except InvalidServerConfig as reason:
        assert "\n" not in f"[penguin] MCP server {entry_label(entry)}: {reason}"


# --- the measured defects, one by one -----------------------------------------------------------


def test_invalid_utf8_names_the_file_in_every_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = b'name = "caf\xe9"\n'
    project = project_config_path(tmp_path, "p")
    vault = tmp_path / "a" / ".vault.toml"
    system = tmp_path / "a" / "system_config.yaml"
    rules = tmp_path / "ws" / ".penguin" / "approvals.toml"
    policy = tmp_path / "policy.toml"
    for path in (project, vault, system, rules, policy):
        _write_private(path, bad if path != system else b"system_prompt: caf\xe9\n")
    policy_named(monkeypatch, policy)
    loaders = [
        (project, lambda: load_project_config(tmp_path, "p")),
        (vault, lambda: load_vault(vault)),
        (system, lambda: load_system_config(system)),
        (rules, lambda: read_rules(rules)),
        (policy, load_policy),
    ]
    for path, load in loaders:
        with pytest.raises(ConfigError) as info:
            load()
        assert str(info.value).startswith(f"{path}: is not valid UTF-8 text (byte 0xe9 at offset ")


def test_deep_nesting_is_one_line_in_every_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep_toml = ("a = " + "[" * 3000 + "]" * 3000).encode()
    project = project_config_path(tmp_path, "p")
    vault = tmp_path / "a" / ".vault.toml"
    system = tmp_path / "a" / "system_config.yaml"
    rules = tmp_path / "ws" / ".penguin" / "approvals.toml"
    policy = tmp_path / "policy.toml"
    for path in (project, vault, rules, policy):
        _write_private(path, deep_toml)
    _write_private(system, b"system_prompt: x\nmodel: " + b"[" * 3000 + b"]" * 3000 + b"\n")
    policy_named(monkeypatch, policy)
    for path, load in [
        (project, lambda: load_project_config(tmp_path, "p")),
        (vault, lambda: load_vault(vault)),
        (system, lambda: load_system_config(system)),
        (rules, lambda: read_rules(rules)),
        (policy, load_policy),
    ]:
        with pytest.raises(ConfigError) as info:
            load()
        _one_line_naming(info.value, path)
        if path == system:  # libyaml refuses it itself (when PyYAML has it), in its words
            assert "nesting depth" in str(info.value) or str(info.value).endswith("is nested more than 64 levels deep")
        else:
            assert str(info.value) == f"{path}: is nested more than 64 levels deep"


def test_a_newline_in_a_rules_tool_name_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / ".penguin" / "approvals.toml"
    _write_private(path, b'[[rule]]\naction = "allow"\ntool = "exec\\ncommand"\ncommand = "ls"\n')
    with pytest.raises(ConfigError) as info:
        read_rules(path)
    assert str(info.value) == f"{path}: rule 1: tool: must be a tool name (got 'exec\\ncommand')"
