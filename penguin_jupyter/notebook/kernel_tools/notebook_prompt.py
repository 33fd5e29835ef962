"""The notebook note appended to the system prompt when a session runs inside a kernel.

Owns the wording that tells the model where it is, which tools see the namespace, and which
DataFrame-like variables (pandas, polars, Dask, Spark) exist; the list comes from
`summaries.frame_labels`, which computes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from .summaries import frame_labels


def notebook_prompt(namespace: Mapping[str, object]) -> str:
    frames = frame_labels(namespace)
    frame_text = ", ".join(frames) if frames else "none yet"
    return (
        "# Jupyter notebook\n"
        "You are running inside the user's Jupyter notebook kernel; each user message comes from a "
        "%%penguin cell and the workspace is the notebook's directory. Three tools see the user's live "
        "Python namespace: `run_python` runs code in it (variables you create persist for the user), "
        "`inspect_variables` summarizes variables, and `propose_cell` puts code into a new cell for the "
        "user to run. Prefer them over shell commands for data work, keep outputs small (summaries, "
        "head(), describe()), and never print whole large DataFrames. Lazy and distributed frames "
        "(polars LazyFrame, Dask, Spark) compute on `.collect()`, `.compute()`, `len()` or actions: "
        "aggregate on the cluster and bring back only small results.\n"
        # The prompt is fixed when the session starts, so the list is a snapshot, not "current".
        f"DataFrames defined when this session started: {frame_text}. The namespace changes as the "
        "user runs cells; call `inspect_variables` for the current variables."
    )
