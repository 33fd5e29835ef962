"""What a sandboxed kernel sees of the data root: its own sessions, the configuration read-only.

The harness runs in the kernel, in the same process as the user's cells and `run_python`, so
whatever it reads there the code can read too. The data root is therefore hidden from the kernel
like every credential location (`environment/sandbox/mounts.py`), and a slice of it is shown in
its place (docs/security.md "The sandboxed kernel"):

* read-only: the default project's config and approval rules and each of its agents'
  `agent_state/` (system config, AGENTS.md, skills, the vault: what a session needs);
* writable: the day's spend ledger folder (`spend/`, shared with every kernel: the daily cap);
* writable and empty at start: each agent's `traces/`, `scratchpad/` and `undo/` — host folders
  of this kernel's own, under `<root>/.sandbox-kernels/<id>/data`, on the data root's file system.

So no earlier session's trace or scratchpad is readable, and nothing the kernel writes can
change a configuration that a kernel outside the sandbox later obeys. What the kernel's sessions
write is published into the real folders by hard links (`publish`: every few seconds while it
runs, and when it ends; only regular files under the agents' `traces/` and `scratchpad/`, opened
without following links, never replacing a file this slice did not put there). A slice whose
launcher died is published and removed by the next launcher (`sweep`). The launcher
(`launcher.py`) owns when; the mounts are `mounts.py`'s.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..environment.sandbox.mounts import ExtraMount
from ..private_files import private_dir
from ..state import paths
from ..state.ids import is_valid_id
from ..state.layout import ensure_agent_layout
from ..state.spend_ledger import SPEND_DIR

SLICES_DIR = ".sandbox-kernels"  # not a valid project id: never mistaken for a project
PUBLISHED = ("traces", "scratchpad")  # what a kernel's sessions leave behind
PRIVATE_ONLY = ("undo", "shared_env", "workspaces")  # the kernel's own, gone with it
PROJECT_FILES = (".project_config.toml", "approval_rules.toml")
MAX_DEPTH = 4  # traces/<day>/<file>, scratchpad/<session>/<folder>/<file>
MAX_ENTRIES = 20_000  # per publish: a kernel cannot make the launcher walk forever


@dataclass
class DataSlice:
    root: Path  # the real data root
    folder: Path  # <root>/.sandbox-kernels/<id>: `owner` and `data` (the slice shown at root)
    mounts: tuple[ExtraMount, ...]
    project_id: str = paths.DEFAULT_PROJECT_ID
    _linked: dict[str, tuple[int, int]] = field(default_factory=dict)  # published path → (dev, ino)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def publish(self) -> None:
        """Hard-link what the kernel's sessions wrote into the real data root."""
        budget = [MAX_ENTRIES]
        slice_agents = self.data / self.project_id / "agents"
        real_agents = paths.project_dir(self.root, self.project_id) / "agents"
        for agent in _entries(slice_agents):
            real_agent = real_agents / agent.name
            if not (is_valid_id(agent.name) and agent.is_dir(follow_symlinks=False) and _is_plain_dir(real_agent)):
                continue
            for name in PUBLISHED:
                _publish_tree(Path(agent.path) / name, real_agent / name, MAX_DEPTH, budget, self._linked)

    def dispose(self) -> None:
        """Publish one last time and remove the slice (what was published stays)."""
        with contextlib.suppress(OSError):
            self.publish()
        shutil.rmtree(self.folder, ignore_errors=True)


def prepare_slice(root: Path, owner: str) -> DataSlice:
    """The slice for a kernel whose launcher is `owner` (`pid:start time`): the real layout is
    seeded first (outside the sandbox), then the empty folders and the mounts."""
    project = paths.DEFAULT_PROJECT_ID
    ensure_agent_layout(root, project, paths.DEFAULT_AGENT_ID)
    slices = private_dir(root / SLICES_DIR)
    sweep(root)
    folder = slices / secrets.token_hex(8)
    folder.mkdir(mode=0o700)
    (folder / "owner").write_text(owner)
    data = private_dir(folder / "data")
    project_real = paths.project_dir(root, project)
    mounts = [ExtraMount(str(root.resolve()), str(data), True)]
    for name in PROJECT_FILES:
        real = project_real / name
        if _is_plain_file(real):
            placeholder = private_dir(data / project) / name
            placeholder.touch(mode=0o600)
            mounts.append(ExtraMount(str(real.resolve()), str(real.resolve()), False))
    for agent in _entries(project_real / "agents"):
        agent_real = Path(agent.path)
        if not (is_valid_id(agent.name) and _is_plain_dir(agent_real)):
            continue
        agent_slice = data / project / "agents" / agent.name
        for name in (*PUBLISHED, *PRIVATE_ONLY):
            private_dir(agent_slice / name)
        state = agent_real / "agent_state"
        if _is_plain_dir(state):
            private_dir(agent_slice / "agent_state")
            mounts.append(ExtraMount(str(state.resolve()), str(state.resolve()), False))
    spend = private_dir(root / SPEND_DIR)
    private_dir(data / SPEND_DIR)
    mounts.append(ExtraMount(str(spend.resolve()), str(spend.resolve()), True))
    return DataSlice(root, folder, tuple(mounts))


def sweep(root: Path) -> None:
    """Publish and remove the slices whose launcher is gone (killed before it could)."""
    for entry in _entries(root / SLICES_DIR):
        folder = Path(entry.path)
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            owner = (folder / "owner").read_text().strip()
        except OSError:
            owner = ""
        if owner and alive(owner):
            continue
        DataSlice(root, folder, ()).dispose()


def owner_of_this_process() -> str:
    return f"{os.getpid()}:{_start_time(os.getpid())}"


def alive(owner: str) -> bool:
    pid, _, start = owner.partition(":")
    return pid.isdigit() and _start_time(int(pid)) == start


def _start_time(pid: int) -> str:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return ""
    return fields[19] if len(fields) > 19 else ""  # field 22 of stat, counted after the name


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as found:
            return sorted(found, key=lambda entry: entry.name)
    except OSError:
        return []


def _is_plain_dir(path: Path) -> bool:
    with contextlib.suppress(OSError):
        return stat.S_ISDIR(os.lstat(path).st_mode)
    return False


def _is_plain_file(path: Path) -> bool:
    with contextlib.suppress(OSError):
        return stat.S_ISREG(os.lstat(path).st_mode)
    return False


def _publish_tree(
    source: Path, target: Path, depth: int, budget: list[int], linked: dict[str, tuple[int, int]]
) -> None:
    if depth <= 0 or not _is_plain_dir(target):
        return
    for entry in _entries(source):
        budget[0] -= 1
        if budget[0] < 0:
            return
        if entry.name in (".", "..") or "/" in entry.name:
            continue
        destination = target / entry.name
        if entry.is_dir(follow_symlinks=False):
            with contextlib.suppress(FileExistsError, OSError):
                os.mkdir(destination, 0o700)
            _publish_tree(Path(entry.path), destination, depth - 1, budget, linked)
        elif entry.is_file(follow_symlinks=False):
            with contextlib.suppress(OSError):
                _publish_file(Path(entry.path), destination, linked)


def _publish_file(source: Path, destination: Path, linked: dict[str, tuple[int, int]]) -> None:
    """Link the file at `source` to `destination` — only the regular file opened and checked there
    (a link or another file swapped in meanwhile is dropped) — unless something this slice did
    not put there is already in its place."""
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return
        identity = (info.st_dev, info.st_ino)
        try:
            there = os.lstat(destination)
        except FileNotFoundError:
            there = None
        present = (there.st_dev, there.st_ino) if there is not None else None
        if present is not None and (present == identity or linked.get(str(destination)) != present):
            return  # published already, or not ours to replace
        temporary = destination.with_name(f".{destination.name}.{secrets.token_hex(4)}")
        try:
            os.link(source, temporary, follow_symlinks=False)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            _copy(fd, temporary)  # another file system under the data root: a copy, at each publish
        else:
            linked_now = os.lstat(temporary)
            if not stat.S_ISREG(linked_now.st_mode) or (linked_now.st_dev, linked_now.st_ino) != identity:
                os.unlink(temporary)  # swapped between the check and the link: not what was checked
                return
        os.replace(temporary, destination)
        linked[str(destination)] = (os.lstat(destination).st_dev, os.lstat(destination).st_ino)
    finally:
        os.close(fd)


def _copy(fd: int, destination: Path) -> None:
    out = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        while chunk := os.read(fd, 1 << 20):
            os.write(out, chunk)
    finally:
        os.close(out)
