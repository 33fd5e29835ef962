"""What a sandboxed process sees of the file system: bwrap's mount arguments.

Owns the view (docs/security.md "Sandbox"): the whole machine read-only; the workspace and a
private temporary folder (at /tmp) writable; every credential location of the project's list
(`secret_files.credential_locations`: the credential folders, the named files, the workspace's
`.env*`, every penguin data root) hidden — an empty read-only folder or file in its place,
so its contents are gone, not just unreadable (an empty folder, an empty file); inside the workspace (and in the git
repositories at its top level) `.git`'s config, hooks and nested git folders and `.penguin/`
read-only. When the workspace contains the home folder, the home folder's own entries are
read-only except its existing plain (not dot) folders and files, and new entries cannot be
created in it (a missing `~/.bash_profile` must not be creatable). A workspace without `.git`
gets an empty read-only `.git` folder in its place (it stays, empty: git ignores it), so a
command cannot make a repository whose hooks run later outside the sandbox.

Mounts are ordered by depth, so a more specific rule wins (a workspace inside the data root is
visible; a credential folder inside the workspace is hidden). Paths under /tmp, /run, /proc,
/dev and /sys are replaced wholesale inside and need no hiding. Which process gets this view and
with which namespaces is `bwrap.py`'s.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass

from ..secret_files import credential_locations

# Replaced wholesale inside the sandbox (their host contents are not visible there).
REPLACED_ROOTS = ("/tmp", "/run", "/var/run", "/proc", "/dev", "/sys")
# Inside `.git`: what runs code or redirects git later, outside the sandbox.
GIT_PROTECTED = ("config", "config.worktree", "hooks", "modules", "worktrees", "commondir")
# Missing ones get a read-only placeholder (an empty folder or file is what git expects there).
GIT_PLACEHOLDER_FOLDERS = ("hooks", "modules", "worktrees")
GIT_PLACEHOLDER_FILES = ("config",)
WORKSPACE_PROTECTED = (".penguin",)
# A home folder inside the workspace: its plain folders that are programs' places anyway.
HOME_READ_ONLY_FOLDERS = ("bin",)
GPU_DEVICES = ("/dev/nvidia*", "/dev/dri")

_BIND, _PROTECT, _HIDE, _EXTRA = 0, 1, 2, 3


@dataclass(frozen=True)
class ExtraMount:
    """A host path shown at `path` in the view (a sandboxed kernel's own slice of the data root,
    its sockets): mounted after what hides or protects the same path, so it replaces a hidden
    location rather than being hidden by it."""

    path: str
    source: str
    writable: bool


@dataclass(frozen=True)
class FilesystemView:
    """The bwrap arguments, and what they make writable, hidden and read-only (for the docs,
    `%penguin config` and tests)."""

    args: tuple[str, ...]
    writable: tuple[str, ...]
    hidden: tuple[str, ...]
    protected: tuple[str, ...]
    must_not_appear: tuple[str, ...] = ()  # removed after a command that made one (`remove_planted`)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _depth(path: str) -> int:
    """How many components an absolute, normalized path has (`/` is one): what orders mounts."""
    return path.rstrip("/").count("/") + 1


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _replaced(path: str, keep: Iterable[str]) -> bool:
    """Under a root the sandbox replaces, and not inside a folder bound back (the workspace)."""
    return any(_within(path, root) for root in REPLACED_ROOTS) and not any(_within(path, k) for k in keep)


def _git_protected(repo: str) -> tuple[list[str], list[str], list[str]]:
    """(entries to bind read-only, missing folders and missing files to hold with a read-only
    placeholder) of the repository at `repo`: its `.git` folder's config, hooks and nested git
    folders; the `.git` file of a worktree or submodule (read-only, so it cannot be pointed
    elsewhere); the whole `.git` when one of those entries is a symlink (a link can be replaced)."""
    dot_git = os.path.join(repo, ".git")
    if os.path.isfile(dot_git) and not os.path.islink(dot_git):
        return [dot_git], [], []
    if not os.path.isdir(dot_git):
        return [], [], []
    entries = [os.path.join(dot_git, name) for name in GIT_PROTECTED]
    if os.path.islink(dot_git) or any(os.path.islink(entry) for entry in entries):
        return [_real(dot_git)], [], []
    present = [entry for entry in entries if os.path.lexists(entry)]
    folders = [
        os.path.join(dot_git, n)
        for n in GIT_PLACEHOLDER_FOLDERS
        if not os.path.lexists(os.path.join(dot_git, n))
    ]
    files = [
        os.path.join(dot_git, n)
        for n in GIT_PLACEHOLDER_FILES
        if not os.path.lexists(os.path.join(dot_git, n))
    ]
    return present, folders, files


def _must_not_appear(repos: list[str]) -> list[str]:
    """Entries a sandboxed command must not create in the workspace's repositories and no
    placeholder can hold (git fails on an empty one): a main repository's `.git/commondir`,
    which would point git at configuration elsewhere. The command's runner removes one that
    appeared and says so (`remove_planted`)."""
    found = []
    for repo in repos:
        dot_git = os.path.join(repo, ".git")
        commondir = os.path.join(dot_git, "commondir")
        if os.path.isdir(dot_git) and not os.path.islink(dot_git) and not os.path.lexists(commondir):
            found.append(commondir)
    return found


def remove_planted(paths: Iterable[str]) -> list[str]:
    """Remove what a command created at the paths a view's `must_not_appear` names; a note for each."""
    notes = []
    for path in paths:
        if os.path.lexists(path):
            with contextlib.suppress(OSError):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            notes.append(f"[sandbox: removed {path}, which the command created (it points git elsewhere)]")
    return notes


def _repos(ws: str) -> list[str]:
    """The workspace and its top-level folders that are git repositories."""
    nested = sorted(
        os.path.join(ws, name) for name in _listdir(ws) if os.path.lexists(os.path.join(ws, name, ".git"))
    )
    return [ws, *nested]


def _home_writable(home: str) -> list[str]:
    """The entries of a home folder the workspace contains that stay writable: its plain folders
    and files (not dot entries, not links, not `bin`); the rest stays under its read-only bind."""
    writable = []
    for name in sorted(_listdir(home)):
        path = os.path.join(home, name)
        if name.startswith(".") or name in HOME_READ_ONLY_FOLDERS or os.path.islink(path):
            continue
        if os.path.isdir(path) or os.path.isfile(path):
            writable.append(path)
    return writable


def filesystem_view(
    workspace: str,
    private_tmp: str,
    empty_file: str,
    home: str | None = None,
    extra: tuple[ExtraMount, ...] = (),
) -> FilesystemView:
    """The mounts for a sandbox writing in `workspace`, with `private_tmp` (a host folder) at /tmp
    and `empty_file` (an empty read-only file) over every hidden or held file; `extra` mounts go
    on top (a hidden location they replace exactly is not hidden first)."""
    ws = _real(workspace)
    home_real = _real(home or os.path.expanduser("~"))
    ops: list[tuple[int, int, list[str]]] = [(_depth(ws), _BIND, ["--bind", ws, ws])]
    writable: list[str] = [ws]
    hidden: list[str] = []
    protected: list[str] = []
    sealed: list[str] = []  # empty folders (tmpfs) made read-only once everything is mounted
    if _within(home_real, ws):
        protected.append(home_real)
        ops.append((_depth(home_real), _PROTECT, ["--ro-bind", home_real, home_real]))
        for entry in _home_writable(home_real):
            writable.append(entry)
            ops.append((_depth(entry), _BIND, ["--bind", entry, entry]))
    keep = [ws]
    replaced = {mount.path for mount in extra}
    for mount in extra:
        ops.append((_depth(mount.path), _EXTRA, ["--bind" if mount.writable else "--ro-bind", mount.source, mount.path]))
        (writable if mount.writable else protected).append(mount.path)
    for location in credential_locations(ws):
        if not os.path.lexists(location):  # most are absent: one lstat, no realpath
            continue
        real = _real(location)
        if not os.path.lexists(real) or _replaced(real, keep):
            continue
        if any(_within(real, folder) and not _within(real, ws) for folder in hidden):
            continue  # inside a folder already hidden (the data root inside ~/.penguin)
        hidden.append(real)
        if real in replaced:
            continue  # an extra mount stands there instead
        if os.path.isdir(real):
            ops.append((_depth(real), _HIDE, ["--tmpfs", real]))
            sealed.append(real)
        else:
            ops.append((_depth(real), _HIDE, ["--ro-bind", empty_file, real]))
    repos = _repos(ws)
    _protect_workspace(ws, repos, home_real, empty_file, ops, protected, sealed)
    ops.sort(key=lambda op: (op[0], op[1]))
    base = ["--ro-bind", "/", "/", "--dev", "/dev", *_gpu_devices(), "--proc", "/proc", "--tmpfs", "/run"]
    base += ["--bind", private_tmp, "/tmp"]
    # Empty folders are sealed last: a deeper mount (a workspace inside the data root) needs its
    # mount point made in them first.
    args = base + [arg for _, _, op_args in ops for arg in op_args]
    args += [arg for path in sealed for arg in ("--remount-ro", path)]
    return FilesystemView(tuple(args), tuple(writable), tuple(hidden), tuple(protected), tuple(_must_not_appear(repos)))


def _protect_workspace(
    ws: str,
    repos: list[str],
    home_real: str,
    empty_file: str,
    ops: list[tuple[int, int, list[str]]],
    protected: list[str],
    sealed: list[str],
) -> None:
    """The read-only parts of the workspace: its repositories' (`repos`) `.git` entries,
    `.penguin/`, and an empty `.git` where there is none."""
    for repo in repos:
        present, folders, files = _git_protected(repo)
        for path in present:
            protected.append(path)
            ops.append((_depth(path), _PROTECT, ["--ro-bind", path, path]))
        for path in folders:
            protected.append(path)
            ops.append((_depth(path), _PROTECT, ["--tmpfs", path]))
            sealed.append(path)
        for path in files:
            protected.append(path)
            ops.append((_depth(path), _PROTECT, ["--ro-bind", empty_file, path]))
    for path in _workspace_protected(ws):
        protected.append(path)
        ops.append((_depth(path), _PROTECT, ["--ro-bind", path, path]))
    dot_git = os.path.join(ws, ".git")
    if not os.path.lexists(dot_git) and ws != home_real:
        protected.append(dot_git)
        ops.append((_depth(dot_git), _PROTECT, ["--tmpfs", dot_git]))
        sealed.append(dot_git)


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _workspace_protected(ws: str) -> list[str]:
    return [p for p in (os.path.join(ws, name) for name in WORKSPACE_PROTECTED) if os.path.lexists(p)]


@functools.cache
def _gpu_devices() -> tuple[str, ...]:
    """GPU device nodes passed through (looked up once per process)."""
    args: list[str] = []
    for pattern in GPU_DEVICES:
        for device in sorted(glob.glob(pattern)):
            args += ["--dev-bind", device, device]
    return tuple(args)
