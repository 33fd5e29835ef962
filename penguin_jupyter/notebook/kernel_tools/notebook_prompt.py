"""The notebook note appended to the system prompt when a session runs inside a kernel.

Owns the wording that tells the model where it is and which tools see the namespace.
"""

from __future__ import annotations

from typing import Any

from .summaries import dataframe_names


def notebook_prompt(namespace: dict[str, Any]) -> str:
    frames = dataframe_names(namespace)
    frame_text = ", ".join(frames) if frames else "none yet"
    return (
        "# Jupyter notebook\n"
        "You are running inside the user's Jupyter notebook kernel; each user message comes from a "
        "%%penguin cell and the workspace is the notebook's directory. Three tools see the user's live "
        "Python namespace: `run_python` runs code in it (variables you create persist for the user), "
        "`inspect_variables` summarizes variables, and `propose_cell` puts code into a new cell for the "
        "user to run. Prefer them over shell commands for data work, keep outputs small (summaries, "
        "head(), describe()), and never print whole large DataFrames.\n"
        # The prompt is fixed when the session starts, so the list is a snapshot, not "current".
        f"DataFrames defined when this session started: {frame_text}. The namespace changes as the "
        "user runs cells; call `inspect_variables` for the current variables."
    )
