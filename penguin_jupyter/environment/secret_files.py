"""Files that hold credentials, recognised by identity (device + inode), not by name.

Owns the list (penguin's own stores: every project config and vault under the data root; the
workspace's `.env*`; `~/.ssh/`, `~/.aws/credentials`, `~/.config/gcloud/`, `~/.netrc`,
`~/.docker/config.json`; Jupyter's runtime files and any file registered by the host, such as
the kernel's connection file, named by `$PENGUIN_KERNEL_CONNECTION_FILE`), the check behind `read_file`'s refusal of penguin's stores
(`penguin_store_label`) and `credential_read_reason`, which an approval layer calls so that a
read-only mode asks instead of auto-approving a read of one of these files, of a file outside
the workspace, or of a remote URL. A hard link or a symlink to a listed file is the same file.
Deciding what to do with a reason (ask, show it on the card) is the approval layer's job.
See docs/security.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Extra credential files, separated by os.pathsep (e.g. set by a host before the kernel starts).
SECRET_FILES_ENV = "PENGUIN_SECRET_FILES"
# The running Jupyter kernel's connection file (set by the notebook layer at `%load_ext`).
KERNEL_CONNECTION_FILE_ENV = "PENGUIN_KERNEL_CONNECTION_FILE"
# Under a data root, the folders whose files the model is meant to read (tool-output archives, skills).
_READABLE_DATA_DIRS = ("scratchpad", "skills")
# Bound on the files compared when a hard-linked file is checked against a credential folder.
_WALK_LIMIT = 5000

_MAX_ROOTS = 32  # remembered data roots (a long-lived process rarely has more than one)
_registered: dict[str, str] = {}
_registered_roots: list[Path] = []


def register_secret_file(path: str | os.PathLike[str], label: str | None = None) -> None:
    """Treat `path` as a credential file from now on (the notebook registers the kernel's
    connection file). `label` is how a reason names it (default: the path)."""
    _registered[os.path.abspath(path)] = label or _shown(os.path.abspath(path))


def register_data_root(root: str | os.PathLike[str]) -> None:
    """A data root besides `$PENGUIN_HOME` / `~/.penguin/data` whose stores are credentials."""
    path = Path(root).expanduser().absolute()
    if path not in _registered_roots:
        _registered_roots[:] = [r for r in _registered_roots if r.exists()][-(_MAX_ROOTS - 1) :]
        _registered_roots.append(path)


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def _shown(path: str) -> str:
    home = str(_home())
    return "~" + path[len(home) :] if path == home or path.startswith(home + os.sep) else path


def data_roots() -> list[Path]:
    env = os.environ.get("PENGUIN_HOME")
    default = Path(env).expanduser() if env else _home() / ".penguin" / "data"
    return [default, *(r for r in _registered_roots if r != default)]


def _penguin_stores() -> Iterator[tuple[Path, str]]:
    for root in data_roots():
        for config in root.glob("*/.project_config.toml"):
            yield config, "the penguin project config"
        for vault in root.glob("*/agents/*/agent_state/.vault.toml"):
            yield vault, "the penguin vault"


def _runtime_dir() -> Path:
    env = os.environ.get("JUPYTER_RUNTIME_DIR")
    return Path(env) if env else _home() / ".local" / "share" / "jupyter" / "runtime"


def _credential_dirs() -> list[tuple[Path, str]]:
    home = _home()
    return [
        (home / ".ssh", "~/.ssh/"),
        (home / ".config" / "gcloud", "~/.config/gcloud/"),
        (_runtime_dir(), "a Jupyter runtime file (kernel connection or server token)"),
    ]


def _credential_files(workspace_dir: str | None) -> Iterator[tuple[Path, str]]:
    home = _home()
    yield home / ".aws" / "credentials", "~/.aws/credentials"
    yield home / ".netrc", "~/.netrc"
    yield home / ".docker" / "config.json", "~/.docker/config.json"
    for path, label in _registered.items():
        yield Path(path), label
    connection = os.environ.get(KERNEL_CONNECTION_FILE_ENV)
    if connection:
        yield Path(connection), "the kernel's connection file"
    for path in os.environ.get(SECRET_FILES_ENV, "").split(os.pathsep):
        if path:
            yield Path(path), _shown(os.path.abspath(path))
    if workspace_dir:
        for env_file in Path(workspace_dir).glob(".env*"):
            yield env_file, f"the workspace's {env_file.name}"


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def penguin_store_label(path: str) -> str | None:
    """ "the penguin vault" / "the penguin project config" when `path` is one of penguin's credential
    stores: by name (also after symlinks) or by identity (a hard link)."""
    for candidate in (os.path.basename(path), os.path.basename(os.path.realpath(path))):
        if candidate.lower() == ".vault.toml":
            return "the penguin vault"
        if candidate.lower() == ".project_config.toml":
            return "the penguin project config"
    target = _identity(path)
    if target is None:
        return None
    for store, label in _penguin_stores():
        if _identity(store) == target:
            return label
    return None


def secret_file_label(path: str, workspace_dir: str | None = None) -> str | None:
    """How the reason names the credential file `path` is (by name, location or identity), or None."""
    store = penguin_store_label(path)
    if store is not None:
        return store
    real = os.path.realpath(path)
    for candidate in (os.path.basename(path), os.path.basename(real)):
        if candidate.startswith(".env"):
            return f"a {candidate} file"
    dirs = _credential_dirs()
    for folder, label in dirs:
        if _is_within(real, os.path.realpath(folder)):
            return label
    try:
        info = os.stat(real)
    except (OSError, ValueError):
        return None
    target = (info.st_dev, info.st_ino)
    for file, label in _credential_files(workspace_dir):
        if _identity(file) == target:
            return label
    if info.st_nlink > 1:  # a hard link may point into a credential folder
        for folder, label in dirs:
            if _linked_into(folder, target):
                return label
    return None


def _linked_into(folder: Path, target: tuple[int, int]) -> bool:
    seen = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            seen += 1
            if seen > _WALK_LIMIT:
                return False
            if _identity(os.path.join(dirpath, name)) == target:
                return True
    return False


def _is_readable_data_path(real: str) -> bool:
    for root in data_roots():
        root_real = os.path.realpath(root)
        if not _is_within(real, root_real):
            continue
        parts = Path(os.path.relpath(real, root_real)).parts
        return any(part in _READABLE_DATA_DIRS for part in parts[:-1])
    return False


def _arguments(tool_call: Any) -> dict[str, Any]:
    payload = getattr(tool_call, "payload", tool_call)
    raw = getattr(payload, "arguments", None)
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def credential_read_reason(tool_call: Any, workspace_dir: str | None) -> str | None:
    """Why a file-reading tool call must not be approved automatically, or None.

    "holds credentials: ~/.aws/credentials", "outside the workspace: /etc/passwd" or "fetches a
    remote URL: https://host/…" for the arguments a builtin tool declares it reads (`file_reads`,
    and `urls` for those that may be a URL: read_file, read_image, describe_image), by resolved
    identity, so a hard link or symlink to a credential file is caught. Other tools and
    unparseable arguments give None (the tool reports its own error).
    """
    from .registry import BUILTIN_DECLARATIONS  # imported here: the tools import this module

    payload = getattr(tool_call, "payload", tool_call)
    declaration = BUILTIN_DECLARATIONS.get(getattr(payload, "name", "") or "")
    if declaration is None:
        return None
    arguments = _arguments(tool_call)
    for argument in declaration.file_reads:
        reason = _read_reason(arguments.get(argument), argument in declaration.urls, workspace_dir)
        if reason is not None:
            return reason
    return None


def _read_reason(value: Any, may_be_url: bool, workspace_dir: str | None) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    if may_be_url and value.lower().startswith(("http://", "https://")):
        return f"fetches a remote URL: {value[:120]}"
    if may_be_url and value.lower().startswith("data:"):
        return None
    workspace = workspace_dir or os.getcwd()
    path = os.path.normpath(os.path.join(workspace, value))
    label = secret_file_label(path, workspace)
    if label is not None:
        return f"holds credentials: {label}"
    real = os.path.realpath(path)
    if not _is_within(real, os.path.realpath(workspace)) and not _is_readable_data_path(real):
        return f"outside the workspace: {_shown(real)}"
    return None
