"""The offline demo inside a kernel: a scripted model server plus a throwaway model config.

Owns `start_demo_model()`: start `ScriptedModelServer(demo_entries())` on loopback, point a
temporary data root (PENGUIN_HOME) at it with one default model entry, copy the demo
`sales.csv` into the workspace and reset the notebook's session so the next `%%penguin` cell
uses the demo model. Used by `examples/quickstart.ipynb` and `scripts/demo.sh`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..testing import ScriptedModelServer

DEMO_PROVIDER = "openai"
DEMO_MODEL_ID = "scripted-demo"
DEMO_API_KEY = "sk-demo-not-a-real-key"


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

    def stop(self) -> None:
        """Stop the server, restore PENGUIN_HOME and remove the temporary data root."""
        self.server.stop()
        if self.previous_home is None:
            os.environ.pop("PENGUIN_HOME", None)
        else:
            os.environ["PENGUIN_HOME"] = self.previous_home
        _reset_notebook_session()
        shutil.rmtree(self.root, ignore_errors=True)


def _reset_notebook_session() -> None:
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


def start_demo_model(
    workspace: str | os.PathLike[str] | None = None, entries: list[dict[str, Any]] | None = None
) -> DemoModel:
    """Start the demo model and make it this kernel's default model (see module docstring).

    `entries` serve another script instead (e.g. `explore_entries()`); sales.csv is then not copied.
    """
    from ..state import add_model, paths
    from ..testing import ScriptedModelServer, copy_demo_data, demo_entries
    from .runtime.workspace import resolve_workspace

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
    server = ScriptedModelServer(demo_entries() if entries is None else entries).start()
    root = Path(tempfile.mkdtemp(prefix="penguin-demo-"))
    previous = os.environ.get("PENGUIN_HOME")
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
    return DemoModel(
        server=server, root=root, workspace=target, previous_home=previous, copied_sales=entries is None
    )
