"""The bundled offline demo: a short data task over `demo_data/sales.csv`, scripted in four turns.

Owns where the demo script and its data live, and what the demo model says once its task is done. The README demo, `examples/quickstart.ipynb` and
`python -m penguin_jupyter.testing --demo` serve these entries; workspace setup is the caller's.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from .script import load_script_file

DEMO_SCRIPT_PATH = Path(__file__).with_name("demo_script.json")
DEMO_DATA_DIR = Path(__file__).with_name("demo_data")
DEMO_SALES_CSV = DEMO_DATA_DIR / "sales.csv"


# What the demo model answers once its scripted task is done (ScriptedModelServer `after_script`).
DEMO_DONE_TEXT = (
    "This is penguin's **offline demo model**: it replays a pre-written task whatever you ask, "
    "and that task is done, so there is nothing more it can answer.\n\n"
    "- `%penguin demo` starts the demo again from the beginning.\n"
    "- To use a real model: `%penguin demo stop`, then set a provider key "
    "(`export OPENAI_API_KEY=…` before starting Jupyter, or an `OPENAI_API_KEY=…` line in a `.env` "
    "file next to the notebook) and run your cell again."
)
DEMO_DONE_ENTRY: dict[str, Any] = {"text": DEMO_DONE_TEXT, "chunk": 40}


def demo_entries() -> list[dict[str, Any]]:
    """The four demo turns: `ls -la`, `read_file sales.csv`, `write_file summary.md`, the answer."""
    return load_script_file(DEMO_SCRIPT_PATH)


def copy_demo_data(workspace: str | Path) -> Path:
    """Copy `sales.csv` into `workspace` (created if needed); returns the copied file's path."""
    workspace = Path(workspace)
    workspace.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(DEMO_SALES_CSV, workspace / DEMO_SALES_CSV.name))
