"""The agent vault `agent_state/.vault.toml`: environment variables for command subprocesses.

Owns reading and writing the vault (flat `KEY = "value"` strings, keys matching
`^[A-Za-z_][A-Za-z0-9_]*$`, file mode 0600). Only key names reach the system prompt; the
Environment injects the values into `exec_command` / `input_command` children.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from ..private_files import read_private_text
from .config_files import parse_config, read_config_text
from .errors import ConfigError
from .file_lock import exclusive
from .toml_writer import dumps_toml, write_private_file

VAULT_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def load_vault(path: Path) -> dict[str, str]:
    """The vault's key → value map; a missing file is an empty vault."""
    try:
        text = read_config_text(path, read_private_text)  # under the data root: private, or refused
    except FileNotFoundError:
        return {}
    try:
        data = parse_config(str(path), tomllib.loads, text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), None, f"invalid TOML: {exc}") from None
    vault: dict[str, str] = {}
    for key, value in data.items():
        if not VAULT_KEY_RE.match(key):
            raise ConfigError(str(path), key, "is not a valid environment variable name")
        if not isinstance(value, str):
            raise ConfigError(str(path), key, f"must be a string, got {value!r}")
        vault[key] = value
    return vault


def set_vault_value(path: Path, key: str, value: str) -> dict[str, str]:
    if not VAULT_KEY_RE.match(key):
        raise ValueError(f"invalid vault key {key!r}: must match {VAULT_KEY_RE.pattern}")
    with exclusive(path):
        vault = load_vault(path)
        vault[key] = value
        write_private_file(path, dumps_toml(dict(vault)))
    return vault
