"""Files that hold credentials or private penguin data, recognised by identity, not by name.

Owns the list (docs/security.md "Credential files, by identity": penguin's data roots, all of
them, and the stores in them; the workspace's `.env*`; `~/.ssh/`, `~/.aws/`, `~/.kube/`,
`~/.config/gh/`, `~/.config/gcloud/`, `~/.azure/`, `~/.kaggle/`, `~/.snowflake/`, `~/.gnupg/`,
`~/.git-credentials`, `~/.pgpass`, `~/.pypirc`, `~/.npmrc`, `~/.netrc`, `~/.docker/config.json`,
the Hugging Face token, rclone's, Databricks' and dbt's configs (each also where its documented
variable moves it); Jupyter's runtime files and any file registered
by the host, such as the kernel's connection file, named by `$PENGUIN_KERNEL_CONNECTION_FILE`),
the check behind `read_file`'s refusal of penguin's stores (`penguin_store_label`) and the labels
`call_reasons.credential_read_reason` gives a call that reads or writes one of these files (so
that a read-only mode or an allow rule asks instead). A hard link or a symlink to a listed file
(or `../` in the path) is the same file. The one place under a data root a session may read
without asking is its own scratchpad, which the caller names. Deciding what to do with a reason
(ask, show it on the card) is the approval layer's job.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from pathlib import Path

# Extra credential files, separated by os.pathsep (e.g. set by a host before the kernel starts).
SECRET_FILES_ENV = "PENGUIN_SECRET_FILES"
# The running Jupyter kernel's connection file (set by the notebook layer at `%load_ext`).
KERNEL_CONNECTION_FILE_ENV = "PENGUIN_KERNEL_CONNECTION_FILE"
# What a reason for a credential or private file starts with (the card shows "asked: " before it).
CREDENTIAL_READ = "read of a credential file"
# Names that are credential files wherever they are (besides `.env*`).
_CREDENTIAL_NAMES = (".git-credentials", ".pgpass", ".pypirc", ".npmrc", ".netrc", ".databrickscfg", "kaggle.json")
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


def _env_path(name: str) -> Path | None:
    """The path an environment variable names (a tool's documented override), if it is set."""
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def _named_dir(env: str, default: Path, label: str) -> list[tuple[Path, str]]:
    """A tool's folder at its default place and where its variable moves it."""
    moved = _env_path(env)
    return [(default, label)] + ([(moved, f"{label} (${env})")] if moved is not None else [])


def _credential_dirs() -> list[tuple[Path, str]]:
    home = _home()
    return [
        (home / ".ssh", "~/.ssh/"),
        (home / ".aws", "~/.aws/"),
        (home / ".kube", "~/.kube/"),
        (home / ".config" / "gh", "~/.config/gh/"),
        *_named_dir("CLOUDSDK_CONFIG", home / ".config" / "gcloud", "~/.config/gcloud/"),
        *_named_dir("AZURE_CONFIG_DIR", home / ".azure", "~/.azure/"),
        *_named_dir("KAGGLE_CONFIG_DIR", home / ".kaggle", "~/.kaggle/"),
        *_named_dir("SNOWFLAKE_HOME", home / ".snowflake", "~/.snowflake/"),
        (home / ".gnupg", "~/.gnupg/"),
        (_runtime_dir(), "a Jupyter runtime file (kernel connection or server token)"),
    ]


def _tool_files(home: Path) -> Iterator[tuple[Path, str]]:
    """Data-science tools' credential files, where each tool's documentation puts them (and where
    its variable moves them); docs/security.md "Credential files, by identity" cites each."""
    xdg_cache = _env_path("XDG_CACHE_HOME") or home / ".cache"
    xdg_config = _env_path("XDG_CONFIG_HOME") or home / ".config"
    hf_home = _env_path("HF_HOME") or xdg_cache / "huggingface"
    for token in (_env_path("HF_TOKEN_PATH"), hf_home / "token", hf_home / "stored_tokens", home / ".huggingface" / "token"):
        if token is not None:
            yield token, "a Hugging Face token"
    yield _env_path("RCLONE_CONFIG") or xdg_config / "rclone" / "rclone.conf", "the rclone config"
    yield home / ".rclone.conf", "the rclone config"
    yield _env_path("DATABRICKS_CONFIG_FILE") or home / ".databrickscfg", "the Databricks config"
    yield (_env_path("DBT_PROFILES_DIR") or home / ".dbt") / "profiles.yml", "dbt's profiles.yml"
    yield (_env_path("DOCKER_CONFIG") or home / ".docker") / "config.json", "the Docker config"
    for env in ("NETRC", "GOOGLE_APPLICATION_CREDENTIALS", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"):
        named = _env_path(env)
        if named is not None:
            yield named, f"${env}"


def _private_roots() -> list[Path]:
    """Every penguin data root this process knows, and `~/.penguin` around the default one."""
    return [_home() / ".penguin", *data_roots()]


def _credential_files(workspace_dir: str | None) -> Iterator[tuple[Path, str]]:
    yield from _home_credential_files()
    yield from _workspace_env_files(workspace_dir)


def _workspace_env_files(workspace_dir: str | None) -> Iterator[tuple[Path, str]]:
    """The workspace's `.env*` files."""
    if not workspace_dir:
        return
    try:
        names = [entry.name for entry in os.scandir(workspace_dir) if entry.name.startswith(".env")]
    except OSError:
        names = []
    for name in names:
        yield Path(workspace_dir) / name, f"the workspace's {name}"


def _home_credential_files() -> Iterator[tuple[Path, str]]:
    home = _home()
    for name in _CREDENTIAL_NAMES:
        yield home / name, f"~/{name}"
    yield home / ".config" / "git" / "credentials", "~/.config/git/credentials"
    yield home / ".docker" / "config.json", "~/.docker/config.json"
    yield from _tool_files(home)
    for path, label in _registered.items():
        yield Path(path), label
    connection = os.environ.get(KERNEL_CONNECTION_FILE_ENV)
    if connection:
        yield Path(connection), "the kernel's connection file"
    for path in os.environ.get(SECRET_FILES_ENV, "").split(os.pathsep):
        if path:
            yield Path(path), _shown(os.path.abspath(path))


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


def secret_file_label(path: str, workspace_dir: str | None = None, own: tuple[str, ...] = ()) -> str | None:
    """How a reason names the credential or private file `path` is (by name, location or
    identity), or None. `own` are the folders under a data root the caller may read (the running
    session's scratchpad, a workspace the data root holds); every other file under a data root
    is private."""
    store = penguin_store_label(path)
    if store is not None:
        return store
    real = os.path.realpath(path)
    for candidate in (os.path.basename(path), os.path.basename(real)):
        if candidate.startswith(".env"):
            return f"a {candidate} file"
        if candidate in _CREDENTIAL_NAMES:
            return _shown(real)
    dirs = _credential_dirs()
    for folder, label in dirs:
        if _is_within(real, os.path.realpath(folder)):
            return label
    own_real = [os.path.realpath(folder) for folder in own]
    private = _private_label(real, own_real)
    if private is not None:
        return private
    try:
        info = os.stat(real)
    except (OSError, ValueError):
        return None
    target = (info.st_dev, info.st_ino)
    for file, label in _credential_files(workspace_dir):
        if _identity(file) == target:
            return label
    return _hard_link_label(target, dirs, own_real) if info.st_nlink > 1 else None


def _hard_link_label(target: tuple[int, int], dirs: list[tuple[Path, str]], own_real: list[str]) -> str | None:
    """A hard link may point into a credential folder or a data root (outside `own_real`)."""
    for folder, label in dirs:
        if _linked_into(folder, target):
            return label
    for root in _private_roots():
        if _linked_into(root, target, skip=own_real):
            return f"penguin's data root ({_shown(str(root))})"
    return None


def _private_label(real: str, own_real: list[str]) -> str | None:
    """The label of `real` when it lies under a data root (or `~/.penguin`) and outside `own_real`."""
    if any(_is_within(real, folder) for folder in own_real):
        return None
    for root in _private_roots():
        root_real = os.path.realpath(root)
        if not _is_within(real, root_real):
            continue
        parts = Path(os.path.relpath(real, root_real)).parts
        if "traces" in parts[:-1]:
            return f"a penguin session trace ({_shown(str(root))})"
        if "scratchpad" in parts[:-1]:
            return f"another session's scratchpad ({_shown(str(root))})"
        return f"penguin's data root ({_shown(str(root))})"
    return None


def _linked_into(folder: Path, target: tuple[int, int], skip: list[str] | None = None) -> bool:
    seen = 0
    for dirpath, dirs, files in os.walk(folder):
        if skip:
            dirs[:] = [d for d in dirs if os.path.realpath(os.path.join(dirpath, d)) not in skip]
        for name in files:
            seen += 1
            if seen > _WALK_LIMIT:
                return False
            if _identity(os.path.join(dirpath, name)) == target:
                return True
    return False


def temporary_workspace(workspace: str) -> bool:
    """`workspace` is a folder under a data root's `*/agents/*/workspaces/` (never the root
    itself): a temporary workspace the data root holds, the session's own."""
    real = os.path.realpath(workspace)
    for root in data_roots():
        root_real = os.path.realpath(root)
        if _is_within(real, root_real) and real != root_real:
            parts = Path(os.path.relpath(real, root_real)).parts
            return len(parts) >= 5 and parts[1] == "agents" and parts[3] == "workspaces"
    return False


def session_scratchpad(session_id: str) -> Path | None:
    """The scratchpad folder of session `session_id` under a known data root (a subagent's, found
    from the session id its calls carry as their origin), or None."""
    if not session_id or os.sep in session_id or session_id in (".", ".."):
        return None
    for root in data_roots():
        for found in root.glob(f"*/agents/*/scratchpad/{glob.escape(session_id)}"):
            return found
    return None


def credential_locations(workspace_dir: str | None) -> list[Path]:
    """Every folder and file of the list, for a sandbox to hide (`environment/sandbox/`):
    the credential folders, the named files in the home folder and at the workspace's top, the
    registered ones, and every penguin data root with `~/.penguin`. Locations, not identities:
    a hard link elsewhere is not among them."""
    locations = list(_fixed_locations())
    locations += [file for file, _ in _workspace_env_files(workspace_dir)]
    if workspace_dir:
        locations += [Path(workspace_dir) / name for name in _CREDENTIAL_NAMES]
    return list(dict.fromkeys(locations))


_fixed_memo: tuple[object, tuple[Path, ...]] | None = None


def _fixed_locations() -> tuple[Path, ...]:
    """The locations that do not depend on a workspace, built again only when what they are
    built from changed (the environment, the registered files and roots): a sandbox asks for
    them before every command."""
    global _fixed_memo
    key = (tuple(os.environ.items()), tuple(_registered.items()), tuple(_registered_roots))
    memo = _fixed_memo
    if memo is not None and memo[0] == key:
        return memo[1]
    locations = [folder for folder, _ in _credential_dirs()]
    locations += [file for file, _ in _home_credential_files()]
    locations += _private_roots()
    fixed = tuple(dict.fromkeys(locations))
    _fixed_memo = (key, fixed)
    return fixed
