"""The offline demo inside a kernel: a scripted model server plus a throwaway model config.

Owns `start_demo_model()` (what `%penguin demo` and the example notebooks call): start
`ScriptedModelServer(demo_entries())` on loopback, point a temporary data root (PENGUIN_HOME) at
it with one default model entry, copy the demo `sales.csv` into the workspace and reset the
notebook's session so the next `%%penguin` cell uses the demo model. One demo runs per kernel:
starting another stops the first, and the kernel's exit stops the last one (its server and its
temporary data root), so a notebook that fails half-way leaves nothing behind. Used by
`%penguin demo`, `examples/*.ipynb` and `scripts/demo.sh`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..testing import ScriptedModelServer

DEMO_PROVIDER = "openai"
DEMO_MODEL_ID = "scripted-demo"
DEMO_API_KEY = "sk-demo-not-a-real-key"

# A cell that shows how the demo goes (its scripted task answers whatever is asked).
DEMO_CELL = "%%penguin\nList the files here, read sales.csv and write a short revenue summary to summary.md."


@dataclass
class DemoModel:
    server: ScriptedModelServer
    root: Path
    workspace: Path
    previous_home: str | None
    copied_sales: bool = True

    def __repr__(self) -> str:
        copied = f"; sales.csv copied to {self.workspace}" if self.copied_sales else ""
        return (
            f"demo model {DEMO_PROVIDER}/{DEMO_MODEL_ID} at {self.server.url} (data root {self.root}{copied})"
        )

    @property
    def running(self) -> bool:
        return _current is self

    def usage(self) -> str:
        """What `%penguin demo` prints: what started and how to use it."""
        copied = f"; sales.csv copied to {self.workspace}" if self.copied_sales else ""
        indented = "\n".join(f"    {line}" for line in DEMO_CELL.splitlines())
        return (
            "penguin: offline demo started — a scripted model on 127.0.0.1 (no key; nothing leaves "
            f"this machine) that replays one short data task whatever you ask{copied}. Try a cell:\n"
            f"{indented}\n"
            "Each tool call asks Approve / Deny. `%penguin demo` replays it from the start, "
            "`%penguin demo stop` ends it (so does the kernel's exit)."
        )

    def stop(self) -> None:
        """Stop the server, restore PENGUIN_HOME and remove the temporary data root. Idempotent."""
        global _current
        self.server.stop()
        if _current is self:
            _current = None
            if self.previous_home is None:
                os.environ.pop("PENGUIN_HOME", None)
            else:
                os.environ["PENGUIN_HOME"] = self.previous_home
            _reset_notebook_session()
        shutil.rmtree(self.root, ignore_errors=True)


_current: DemoModel | None = None
_exit_hook_registered = False


def running_demo() -> DemoModel | None:
    """The demo this kernel runs, if any."""
    return _current


def stop_demo_model() -> bool:
    """Stop the running demo; False when none runs."""
    demo = _current
    if demo is None:
        return False
    demo.stop()
    return True


def _stop_at_exit() -> None:
    stop_demo_model()


_ROOT_PREFIX = "penguin-demo-"
_OWNER_FILE = "demo-owner.pid"


def _remove_orphaned_roots() -> None:
    """The temporary data roots of demos whose kernel was killed (no exit hook ran): removed when
    the next demo starts. Only this user's, only those whose owning process is gone."""
    for root in Path(tempfile.gettempdir()).glob(f"{_ROOT_PREFIX}*"):
        try:
            if root.is_symlink() or not root.is_dir() or root.stat().st_uid != os.getuid():
                continue
            pid = int((root / _OWNER_FILE).read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(root, ignore_errors=True)
        except OSError:
            continue


def _reset_notebook_session() -> None:
    """The next cell starts a new session on whatever model is the default now."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        from .runtime.kernel_runtime import kernel_runtime

        sessions = kernel_runtime(shell).sessions
        sessions.drop_session()
        sessions.agent = None
        sessions.model = None  # a `%penguin model` choice would bypass the demo's default


def start_demo_model(
    workspace: str | os.PathLike[str] | None = None, entries: list[dict[str, object]] | None = None
) -> DemoModel:
    """Start the demo model and make it this kernel's default model (see module docstring).

    `entries` serve another script instead (e.g. `explore_entries()`); sales.csv is then not copied.
    """
    global _current, _exit_hook_registered
    from ..state import add_model, paths
    from ..testing import ScriptedModelServer, copy_demo_data, demo_entries
    from ..testing.demo import DEMO_DONE_ENTRY
    from .runtime.workspace import resolve_workspace

    stop_demo_model()  # one demo per kernel: its PENGUIN_HOME is the one to restore
    if workspace is None:
        try:
            from IPython import get_ipython

            namespace = getattr(get_ipython(), "user_ns", {}) or {}
        except ImportError:
            namespace = {}
        workspace = resolve_workspace(None, namespace)
    target = Path(workspace)
    if entries is None:
        copy_demo_data(target)
    server = ScriptedModelServer(
        demo_entries() if entries is None else entries, after_script=DEMO_DONE_ENTRY
    ).start()
    _remove_orphaned_roots()
    root = Path(tempfile.mkdtemp(prefix=_ROOT_PREFIX))
    (root / _OWNER_FILE).write_text(str(os.getpid()), encoding="utf-8")
    previous = os.environ.get("PENGUIN_HOME")
    demo = DemoModel(
        server=server, root=root, workspace=target, previous_home=previous, copied_sales=entries is None
    )
    _current = demo
    if not _exit_hook_registered:
        atexit.register(_stop_at_exit)
        _exit_hook_registered = True
    os.environ["PENGUIN_HOME"] = str(root)
    add_model(
        root,
        paths.DEFAULT_PROJECT_ID,
        provider=DEMO_PROVIDER,
        model_id=DEMO_MODEL_ID,
        base_url=server.url,
        api_key=DEMO_API_KEY,
        client_type="openai-chat",
        context_window=32768,
        default=True,
    )
    _reset_notebook_session()
    return demo
