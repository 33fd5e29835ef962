"""The default builtin toolset (docs/tools.md table): one ToolDefinitionConfig per tool
with its JSON Schema, permission and limits, plus the `description` argument toggle."""

from __future__ import annotations

import copy
from typing import Any

from .types import ToolConfig, ToolDefinitionConfig

DESCRIPTION_ARGUMENT = "description"
_DESCRIPTION_PROPERTY = {
    "type": "string",
    "description": (
        "Required; write it first, before every other argument: the user sees it while the call runs. "
        "One short sentence, in the user's language, saying what this call does and why."
    ),
}


def _schema(properties: dict[str, Any], required: list[str], *, describe: bool = False) -> dict[str, Any]:
    if describe:
        properties = {DESCRIPTION_ARGUMENT: dict(_DESCRIPTION_PROPERTY), **properties}
        required = [DESCRIPTION_ARGUMENT, *required]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _str(text: str) -> dict[str, Any]:
    return {"type": "string", "description": text}


def _int(text: str) -> dict[str, Any]:
    return {"type": "integer", "description": text}


def _bool(text: str) -> dict[str, Any]:
    return {"type": "boolean", "description": text}


def _entry(name: str, description: str, parameters: dict[str, Any], permission: str, timeout_ms: int,
           max_output_length: int = 16000, for_model: str | None = None) -> ToolDefinitionConfig:  # fmt: skip
    return ToolDefinitionConfig(
        name=name,
        description=description,
        parameters=parameters,
        permission=permission,  # type: ignore[arg-type]
        for_model=for_model,  # type: ignore[arg-type]
        timeout_ms=timeout_ms,
        max_output_length=max_output_length,
    )


def _builtin_entries() -> list[ToolDefinitionConfig]:
    cap = "at least 250, and at most 1 s below the tool's timeout"
    return [
        _entry(
            "read_file",
            "Read a text file as numbered lines (cat -n style); the preferred way to look at a file. Reads up "
            "to 2000 lines from `offset`; call again with a later offset to continue. Relative paths resolve "
            "against the workspace. Not for images or binary files: look at images with read_image or "
            "describe_image (whichever you have) and inspect binaries with exec_command.",
            _schema(
                {
                    "file_path": _str("Path of the file (absolute, or relative to the workspace)."),
                    "offset": _int("1-based line number to start from (default 1)."),
                    "limit": _int("Maximum number of lines to return (default 2000)."),
                },
                ["file_path"],
            ),
            "r",
            30000,
            64000,
        ),
        _entry(
            "edit_file",
            "Replace an exact string in an existing file and show the resulting diff. `old_string` must "
            "match the file exactly (whitespace included) and be unique unless `replace_all` is true.",
            _schema(
                {
                    "file_path": _str("Path of the file to edit."),
                    "old_string": _str("The exact text to replace."),
                    "new_string": _str("The replacement text."),
                    "replace_all": _bool("Replace every occurrence instead of requiring a unique match."),
                },
                ["file_path", "old_string", "new_string"],
            ),
            "rw",
            30000,
        ),
        _entry(
            "write_file",
            "Create a file or overwrite it with the given content (parent directories are created).",
            _schema(
                {
                    "file_path": _str("Path of the file to write."),
                    "content": _str("The complete new content of the file."),
                },
                ["file_path", "content"],
            ),
            "rw",
            30000,
        ),
        _entry(
            "exec_command",
            "Run a shell command (bash -lc) in the workspace without a TTY: programs, searches, installs and "
            "anything the file tools do not cover. Output streams back. Start long-running commands (servers, "
            "watchers, builds) in the foreground: once the yield window passes they keep running and you get a "
            "process_id for input_command / kill_command. Never put them in the background with `&`: when the "
            "foreground command exits its whole process group is cleaned up, killing them too. Set "
            "run_in_background for long jobs: their completion arrives as a message.",
            _schema(
                {
                    "cmd": _str("The shell command to run."),
                    "workdir": _str("Working directory (default: the workspace)."),
                    "yield_time_ms": _int(
                        "Milliseconds to wait for the command before returning. If it is still running then, "
                        "you get its output so far and a process_id, and it keeps running (continue with "
                        f"input_command). Default 60000; {cap}."
                    ),
                    "run_in_background": _bool(
                        "Return a process_id at once without waiting; when the command exits, its result "
                        "arrives as a user message by itself (no polling). Default false."
                    ),
                },
                ["cmd"],
                describe=True,
            ),
            "rw",
            120000,
        ),
        _entry(
            "input_command",
            "Send characters to a running command's stdin (or poll it with empty chars) and return new "
            'output. Send "\\u0003" alone to interrupt it with Ctrl-C.',
            _schema(
                {
                    "process_id": _str("The process_id returned by exec_command."),
                    "chars": _str("Text to write to stdin; empty to just poll for output."),
                    "yield_time_ms": _int(
                        "Milliseconds to wait for new output or the exit before returning (it returns early "
                        "on exit). Default 250 after writing characters and 120000 for an empty poll, so one "
                        f"poll waits out most builds (pass less to just peek); {cap}."
                    ),
                },
                ["process_id"],
                describe=True,
            ),
            "rw",
            130000,
        ),
        _entry(
            "kill_command",
            "Stop a running command session (its whole process group) and return its pending output.",
            _schema({"process_id": _str("The process_id to stop.")}, ["process_id"], describe=True),
            "rw",
            30000,
        ),
        _entry(
            "run_subagent",
            "Delegate a self-contained task to a subagent that works on its own in the same workspace and "
            "returns its final answer. Start the prompt by naming yourself, the caller agent, with your own "
            'agent id from the Environment section (e.g. "Caller agent: default_agent"): the subagent cannot '
            "otherwise tell who called it.",
            _schema(
                {
                    "prompt": _str(
                        "The complete task: all the context the subagent needs, and exactly what output you "
                        "expect back."
                    ),
                    "agent_id": _str("Which agent to run (default: this agent)."),
                    "provider": _str("Provider of the subagent's model; give it together with model_id."),
                    "model_id": _str("The subagent's model (default: this session's model); needs provider."),
                    "thinking_level": {
                        "type": "string",
                        "enum": ["low", "medium", "high", "xhigh", "max"],
                        "description": "The subagent's thinking level (default: this session's level).",
                    },
                    "yield_time_ms": _int(
                        "Milliseconds to wait for the subagent before returning. If it is still working then, "
                        "you get its output so far and a subagent_id, and it keeps working (continue with "
                        f"input_subagent). Default 300000; {cap}."
                    ),
                    "run_in_background": _bool(
                        "Return a subagent_id at once without waiting; its answer arrives as a user message "
                        "by itself when it finishes (no polling). Default false."
                    ),
                },
                ["prompt"],
                describe=True,
            ),
            "rw",
            600000,
        ),
        _entry(
            "input_subagent",
            "Poll a background subagent for new output, or, once it is idle (its last run finished), send it "
            "a follow-up prompt that continues the same session. The subagent's pending tool approvals are "
            "surfaced while this call waits.",
            _schema(
                {
                    "subagent_id": _str("The subagent_id returned by run_subagent."),
                    "prompt": _str(
                        "A follow-up task, accepted only while the subagent is idle; empty (the default) only "
                        "polls for new output and status."
                    ),
                    "yield_time_ms": _int(
                        "Milliseconds to wait for new output or the end before returning. Default 300000 "
                        f"after a follow-up prompt and 10000 for an empty poll; {cap}."
                    ),
                },
                ["subagent_id"],
                describe=True,
            ),
            "rw",
            600000,
        ),
        _entry(
            "kill_subagent",
            "Stop a background subagent: its run is aborted (its pending approvals are denied), any answer "
            "text not yet delivered is returned, and it is removed, freeing its slot. Also removes an idle "
            "subagent.",
            _schema({"subagent_id": _str("The subagent_id to stop.")}, ["subagent_id"], describe=True),
            "rw",
            30000,
        ),
        _entry(
            "read_image",
            "Look at an image file or http(s) URL (png, jpeg, gif or webp, up to 5 MB).",
            _schema({"source": _str("Image path or http(s) URL.")}, ["source"]),
            "r",
            60000,
            for_model="vision",
        ),
        _entry(
            "describe_image",
            "Get a text description of an image file or http(s) URL (png, jpeg, gif or webp, up to 5 MB). You "
            "cannot see images yourself: the project's vision model looks at it and answers in text. Use "
            "`prompt` to ask exactly what you need (transcribe the text, read a chart, find a button...).",
            _schema(
                {
                    "source": _str("Image path or http(s) URL."),
                    "prompt": _str("What to ask the vision model about the image (default: a detailed description)."),
                },
                ["source"],
            ),
            "r",
            90000,
            for_model="text-only",
        ),
    ]


def default_tool_config() -> ToolConfig:
    """A fresh ToolConfig holding the full builtin toolset (callers may mutate it freely)."""
    return ToolConfig(builtin=_builtin_entries())


def model_facing_parameters(entry: ToolDefinitionConfig) -> dict[str, Any] | None:
    """The schema handed to the model: without the `description` argument when the entry sets
    `call_description: false` (the entry itself is left untouched)."""
    if entry.parameters is None or entry.call_description is not False:
        return entry.parameters
    schema = copy.deepcopy(entry.parameters)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        properties.pop(DESCRIPTION_ARGUMENT, None)
    required = schema.get("required")
    if isinstance(required, list):
        schema["required"] = [r for r in required if r != DESCRIPTION_ARGUMENT]
    return schema
