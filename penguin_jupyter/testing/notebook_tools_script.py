"""The scripted Task behind `examples/agent-in-notebook.ipynb`: the agent works in the notebook.

Owns the model side of that notebook, along the path the run offers (`if_tools` / `unless_tools`,
testing/conditions.py), so the answer says only what happened:

* with a linked notebook page (JupyterLab, Notebook 7): `read_notebook`; `insert_cell` twice (a
  markdown heading, then a code cell that loads `data/penguins.csv`, groups it by species and
  plots body mass against flipper length); `run_cell` on that code cell (its id comes from the
  `insert_cell` result through a `{{match:…}}` placeholder, see placeholders.py); then the answer;
* headless (nbconvert, papermill: no page, so no `insert_cell` / `run_cell`): `read_notebook`
  (the saved file), the same analysis through `run_python`, then an answer that says it could not
  insert cells and why.

The numbers in the answers are those of `examples/data/penguins.csv`. Starting the server and the
notebook itself are the callers' job.
"""

from __future__ import annotations

from typing import Any

HEADING = """\
## Penguins by species

Added by the agent: load the data, average the measurements per species, and plot body mass
against flipper length."""

ANALYSIS_CODE = """\
import pandas as pd
import matplotlib.pyplot as plt

penguins = pd.read_csv("data/penguins.csv")
by_species = penguins.groupby("species").agg(
    rows=("species", "size"),
    flipper_length_mm=("flipper_length_mm", "mean"),
    body_mass_g=("body_mass_g", "mean"),
).round(1)

fig, ax = plt.subplots(figsize=(5, 3.5))
for species, group in penguins.groupby("species"):
    ax.scatter(group.flipper_length_mm, group.body_mass_g, label=species)
ax.set_xlabel("flipper length (mm)")
ax.set_ylabel("body mass (g)")
ax.legend()
plt.show()
by_species"""

# The id insert_cell returned for the code cell ("Inserted a code cell with id … at index …").
CODE_CELL_ID = "{{match:Inserted a code cell with id (\\S+) at}}"

ANSWER = """\
I added two cells below this one and ran the code cell, so the analysis is now part of the notebook:

| species | rows | flipper length (mm) | body mass (g) |
|---|---|---|---|
| Adelie | 7 | 188.0 | 3,616.7 |
| Chinstrap | 5 | 198.0 | 3,830.0 |
| Gentoo | 7 | 217.5 | 5,116.7 |

**Gentoo** are the heaviest and have the longest flippers; in the plot the two measurements
rise together across the three species. `penguins` and `by_species` are in your namespace, and
Restart & Run All recreates them from the inserted cell without asking me again.
"""


HEADLESS_ANSWER = """\
This run has no notebook page linked to the kernel (a headless run such as `jupyter nbconvert
--execute`, or the extension not loaded), so I could not insert or run cells. I ran the same
analysis in this kernel with `run_python` instead:

| species | rows | flipper length (mm) | body mass (g) |
|---|---|---|---|
| Adelie | 7 | 188.0 | 3,616.7 |
| Chinstrap | 5 | 198.0 | 3,830.0 |
| Gentoo | 7 | 217.5 | 5,116.7 |

**Gentoo** are the heaviest and have the longest flippers. `penguins` and `by_species` are in your
namespace, but no cell records how they were made: open this notebook in JupyterLab and run the
cell again to have the analysis added as cells you keep.
"""

# The notebook tools that need a linked page: their presence decides the path.
PAGE_TOOLS = ["insert_cell", "run_cell"]


def notebook_tools_entries() -> list[dict[str, Any]]:
    """The scripted turns of `examples/agent-in-notebook.ipynb` (ScriptedModelServer entries): both
    paths, each entry served only where its tools are (or are not) offered."""
    return [
        {
            "reasoning": "First see what the notebook already holds.",
            "text": "Let me read the notebook first.",
            "tool_calls": [{"name": "read_notebook", "id": "call_nb_read", "arguments": {}}],
            "usage": {"prompt_tokens": 2800, "completion_tokens": 30},
            "delay_ms": 20,
        },
        {
            "if_tools": PAGE_TOOLS,
            "reasoning": "No analysis yet. I will add it as cells the user keeps: a heading, then the code.",
            "tool_calls": [
                {
                    "name": "insert_cell",
                    "id": "call_nb_heading",
                    "arguments": {"cell_type": "markdown", "source": HEADING, "description": "Heading"},
                },
                {
                    "name": "insert_cell",
                    "id": "call_nb_code",
                    "arguments": {
                        "cell_type": "code",
                        "source": ANALYSIS_CODE,
                        "description": "Load, group by species, plot",
                    },
                },
            ],
            "usage": {"prompt_tokens": 3400, "completion_tokens": 220, "cached_tokens": 2800},
            "delay_ms": 20,
        },
        {
            "if_tools": PAGE_TOOLS,
            "text": "Now I run the code cell.",
            "tool_calls": [
                {
                    "name": "run_cell",
                    "id": "call_nb_run",
                    "arguments": {"cell_id": CODE_CELL_ID, "description": "Run the analysis cell"},
                }
            ],
            "usage": {"prompt_tokens": 3800, "completion_tokens": 40, "cached_tokens": 3400},
            "delay_ms": 20,
        },
        {
            "if_tools": PAGE_TOOLS,
            "text": ANSWER,
            "usage": {"prompt_tokens": 4600, "completion_tokens": 200, "cached_tokens": 3800},
            "delay_ms": 10,
            "chunk": 16,
        },
        # headless: the page tools are not offered, so the analysis runs in the kernel instead
        {
            "unless_tools": PAGE_TOOLS,
            "reasoning": "No notebook page is linked, so I cannot add cells; run_python does the analysis.",
            "text": "I cannot insert cells in this run, so I run the analysis in the kernel.",
            "tool_calls": [
                {
                    "name": "run_python",
                    "id": "call_nb_python",
                    "arguments": {"code": ANALYSIS_CODE, "description": "Load, group by species, plot"},
                }
            ],
            "usage": {"prompt_tokens": 3400, "completion_tokens": 220, "cached_tokens": 2800},
            "delay_ms": 20,
        },
        {
            "unless_tools": PAGE_TOOLS,
            "text": HEADLESS_ANSWER,
            "usage": {"prompt_tokens": 4300, "completion_tokens": 200, "cached_tokens": 3400},
            "delay_ms": 10,
            "chunk": 16,
        },
    ]
