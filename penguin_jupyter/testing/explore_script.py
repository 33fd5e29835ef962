"""The scripted data exploration behind `examples/explore-data.ipynb`, in five turns.

Owns the model side of that notebook: inspect the user's `penguins` DataFrame
(`examples/data/penguins.csv`), summarise it by species with `run_python`, plot bill against
flipper length, propose a cleaning cell with `propose_cell`, then answer. The numbers in the
answer are those of that CSV. Starting the server and the notebook itself are the callers' job.
"""

from __future__ import annotations

from typing import Any

SUMMARY_CODE = """\
print("sex labels:", penguins["sex"].value_counts(dropna=False).to_dict())
by_species = penguins.groupby("species").agg(
    rows=("species", "size"),
    bill_length_mm=("bill_length_mm", "mean"),
    flipper_length_mm=("flipper_length_mm", "mean"),
    body_mass_g=("body_mass_g", "mean"),
).round(1)
by_species"""

PLOT_CODE = """\
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(5, 3.5))
for species, group in penguins.groupby("species"):
    ax.scatter(group.flipper_length_mm, group.bill_length_mm, label=species)
ax.set_xlabel("flipper length (mm)")
ax.set_ylabel("bill length (mm)")
ax.legend()
ax.set_title("Bill vs flipper length by species")"""

CLEANING_CODE = """\
# Normalise the sex labels (male/MALE/Male → male) and drop the rows without measurements
penguins["sex"] = penguins["sex"].str.strip().str.lower()
penguins = penguins.dropna(subset=["bill_length_mm", "flipper_length_mm", "body_mass_g"])
penguins["sex"].value_counts()"""

ANSWER = """\
Here is what `penguins` holds: **19 rows, 3 species** (Adelie, Chinstrap, Gentoo) on three islands.

| species | rows | bill length (mm) | flipper length (mm) | body mass (g) |
|---|---|---|---|---|
| Adelie | 7 | 38.9 | 188.0 | 3,616.7 |
| Chinstrap | 5 | 48.8 | 198.0 | 3,830.0 |
| Gentoo | 7 | 47.9 | 217.5 | 5,116.7 |

- **Gentoo** are the heaviest (1.3–1.5 kg more than the others) with the longest flippers.
- **Adelie** have clearly shorter bills; Chinstrap and Gentoo bills are similar, but the plot
  separates them by flipper length.
- **Data quality:** 2 rows (one Adelie, one Gentoo) have no measurements at all, and `sex` is
  spelled five ways (`male`, `MALE`, `Male`, `female`, `Female`).

The summary is in `by_species`. I proposed a **cleaning cell** (its code is under the
`propose_cell` card above): it normalises `sex` and drops the 2 empty rows, leaving 17 rows. In
JupyterLab it appears right below this cell, not run: review it and run it when you are happy
with it. (A headless run, such as `jupyter nbconvert --execute`, has no page to put it in.)
"""


def explore_entries() -> list[dict[str, Any]]:
    """The five scripted turns of `examples/explore-data.ipynb` (ScriptedModelServer entries)."""
    return [
        {
            "reasoning": "The user has a DataFrame called penguins. I should look at its columns first.",
            "text": "Let me look at the `penguins` DataFrame first.",
            "tool_calls": [
                {
                    "name": "inspect_variables",
                    "id": "call_explore_inspect",
                    "arguments": {"description": "Summarise the penguins DataFrame", "names": ["penguins"]},
                }
            ],
            "usage": {"prompt_tokens": 2600, "completion_tokens": 40},
            "delay_ms": 20,
        },
        {
            "reasoning": "19 rows, 6 columns; 2 rows have no measurements and sex has mixed case. "
            "A per-species summary comes next.",
            "tool_calls": [
                {
                    "name": "run_python",
                    "id": "call_explore_summary",
                    "arguments": {"description": "Average measurements per species", "code": SUMMARY_CODE},
                }
            ],
            "usage": {"prompt_tokens": 3300, "completion_tokens": 90, "cached_tokens": 2600},
            "delay_ms": 20,
        },
        {
            "reasoning": "Gentoo are heavy with long flippers; bills separate Adelie. A scatter plot "
            "of bill against flipper length shows the three groups.",
            "text": "Now a plot of bill length against flipper length.",
            "tool_calls": [
                {
                    "name": "run_python",
                    "id": "call_explore_plot",
                    "arguments": {"description": "Scatter plot of bill vs flipper length", "code": PLOT_CODE},
                }
            ],
            "usage": {"prompt_tokens": 3600, "completion_tokens": 120, "cached_tokens": 3300},
            "delay_ms": 20,
        },
        {
            "reasoning": "The cleaning changes the user's data, so I propose it as a cell instead of running it.",
            "tool_calls": [
                {
                    "name": "propose_cell",
                    "id": "call_explore_propose",
                    "arguments": {
                        "description": "Clean sex labels and drop empty rows",
                        "code": CLEANING_CODE,
                    },
                }
            ],
            "usage": {"prompt_tokens": 5300, "completion_tokens": 110, "cached_tokens": 3600},
            "delay_ms": 20,
        },
        {
            "text": ANSWER,
            "usage": {"prompt_tokens": 5500, "completion_tokens": 260, "cached_tokens": 5300},
            "delay_ms": 10,
            "chunk": 16,
        },
    ]
