"""Which values are secrets: the list a session's Redactor is built from.

Owns the collection: every model `api_key` in the project config, the provider API-key variables
(the ones credential resolution reads) and other credential-looking variables (`*_API_KEY`,
`*_TOKEN`, `*_SECRET`, `*_PASSWORD`, …) from the process environment and from the workspace's
`.env`, and every vault value. How values are replaced is `penguin_jupyter.redaction`'s job.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from ..redaction import Redactor, Secret
from .dotenv import read_dotenv
from .project_config import PROVIDER_ENV_VARS, ProjectConfig

# Variable names whose values are credentials whatever the provider.
_CREDENTIAL_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|TOKEN|SECRET|SECRET_KEY|SECRET_ACCESS_KEY|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY)$",
    re.IGNORECASE,
)
_PROVIDER_KEY_VARS = frozenset({"OPENAI_API_KEY", *(key for key, _ in PROVIDER_ENV_VARS.values())})


def is_credential_variable(name: str) -> bool:
    """A provider API-key variable, or a name that says it holds a credential."""
    return name in _PROVIDER_KEY_VARS or _CREDENTIAL_NAME.search(name) is not None


def environment_secrets(environ: Mapping[str, str]) -> list[Secret]:
    return [Secret(name, value) for name, value in environ.items() if is_credential_variable(name) and value]


def dotenv_secrets(workspace: str | os.PathLike[str] | None) -> list[Secret]:
    """Credential variables of `<workspace>/.env`, as parsed (quotes and comments gone), whether or
    not the model client may use them (a file that cannot be read adds nothing)."""
    if workspace is None:
        return []
    try:
        found = read_dotenv(workspace)
    except ValueError:
        return []
    return environment_secrets(found[1]) if found is not None else []


def config_secrets(cfg: ProjectConfig) -> list[Secret]:
    return [Secret(f"{entry.provider} api_key", entry.api_key) for entry in cfg.models if entry.api_key]


def vault_secrets(vault: Mapping[str, str]) -> list[Secret]:
    return [Secret(name, value) for name, value in vault.items() if value]


def collect_secrets(
    *,
    config: ProjectConfig | None = None,
    vault: Mapping[str, str] | None = None,
    workspace: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    extra: Iterable[Secret] = (),
) -> Redactor:
    """The Redactor of everything configured (names: env var, vault key, `<provider> api_key`)."""
    found: list[Secret] = [*extra]
    if config is not None:
        found += config_secrets(config)
    found += environment_secrets(os.environ if environ is None else environ)
    found += dotenv_secrets(workspace)
    found += vault_secrets(vault or {})
    return Redactor(found)
