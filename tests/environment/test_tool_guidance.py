"""Every piece of guidance the reference harness gives the model in its builtin tool
definitions is in ours too (issue 17 point 9), checked on the definitions the model receives
(`Environment.list_tools()`), not on the source text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from penguin_jupyter.environment import Environment, EnvironmentConfig, ToolConfig
from penguin_jupyter.environment.defaults import default_tool_config


async def _definitions(tmp_path: Path, model_class: str) -> dict[str, str]:
    env = Environment(
        EnvironmentConfig(workspace_dir=str(tmp_path), tool_config=ToolConfig(), model_class=model_class)
    )
    try:
        tools = await env.list_tools()
    finally:
        env.dispose()
    # The whole definition as the model gets it: description plus every argument's text.
    return {t.name: json.dumps(t.to_spec(), ensure_ascii=False).lower() for t in tools}


@pytest.fixture
async def defs(tmp_path: Path) -> dict[str, str]:
    vision = await _definitions(tmp_path, "vision")
    text_only = await _definitions(tmp_path, "text-only")
    return {**text_only, **vision}


GUIDANCE: list[tuple[str, str, list[str]]] = [
    ("exec_command", "no backgrounding with &", ["`&`", "process group is cleaned up"]),
    (
        "exec_command",
        "yield default, minimum and cap",
        ["default 60000", "at least 250", "below the tool's timeout"],
    ),
    ("input_command", "yield defaults", ["default 250 after writing", "120000 for an empty poll"]),
    ("run_subagent", "name the caller agent first", ["start the prompt by naming yourself", "caller agent"]),
    ("run_subagent", "say what output is expected", ["exactly what output you expect back"]),
    ("run_subagent", "yield default", ["default 300000"]),
    ("input_subagent", "follow-ups only when idle", ["accepted only while the subagent is idle"]),
    ("input_subagent", "pending approvals surfaced", ["pending tool approvals are surfaced"]),
    ("input_subagent", "yield defaults", ["default 300000", "10000 for an empty poll"]),
    ("kill_subagent", "denies pending approvals", ["pending approvals are denied"]),
    ("kill_subagent", "frees the slot", ["freeing its slot"]),
    ("describe_image", "the model cannot see images", ["you cannot see images"]),
    ("describe_image", "use prompt to ask", ["use `prompt` to ask exactly what you need"]),
    (
        "read_file",
        "images and binaries elsewhere",
        ["not for images or binary files", "read_image", "exec_command"],
    ),
]


@pytest.mark.parametrize(("tool", "point", "phrases"), GUIDANCE, ids=[f"{t}: {p}" for t, p, _ in GUIDANCE])
def test_each_guidance_point_reaches_the_model(
    defs: dict[str, str], tool: str, point: str, phrases: list[str]
) -> None:
    text = defs[tool]
    missing = [p for p in phrases if p.lower() not in text]
    assert missing == [], f"{tool} lacks guidance '{point}': {missing}"


def test_every_description_argument_says_the_user_sees_it_while_the_call_runs(defs: dict[str, str]) -> None:
    with_description = [
        e
        for e in default_tool_config().builtin or []
        if "description" in (e.parameters or {}).get("properties", {})
    ]
    assert {e.name for e in with_description} >= {
        "exec_command", "input_command", "kill_command", "run_subagent", "input_subagent", "kill_subagent",
    }  # fmt: skip
    for entry in with_description:
        text = entry.parameters["properties"]["description"]["description"].lower()  # type: ignore[index]
        assert "the user sees it while the call runs" in text, entry.name
        assert "first" in text, entry.name
        assert "user sees it while the call runs" in defs[entry.name]
