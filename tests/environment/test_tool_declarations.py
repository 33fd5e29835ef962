"""Each tool is declared once (docs/tools.md "Adding a tool"): the schemas the model sees stay
byte-identical to the snapshot (tests/fixtures/tool_schemas.json, taken before the declarations
were introduced; one deliberate change since: the kernel and notebook tools' `description`
argument now reads the one text every tool gives it, `tool_arguments.DESCRIBE`), bad arguments
keep their one-line errors, and each tool's roles — what the approval layer and the card read —
are declared on its argument fields."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

from penguin_jupyter.environment import Environment, EnvironmentConfig, ToolConfig, default_tool_config
from penguin_jupyter.notebook.kernel_tools import kernel_tools
from penguin_jupyter.notebook.kernel_tools.notebook_cells import (
    DeleteCellTool,
    EditCellTool,
    InsertCellTool,
    ReadNotebookTool,
    RunCellTool,
)
from tests.support.paths import FIXTURES_DIR

SNAPSHOT = FIXTURES_DIR / "tool_schemas.json"


def _notebook_tools() -> list:
    link = SimpleNamespace(live=True, can_run_cells=True)
    return [cls(link) for cls in (ReadNotebookTool, InsertCellTool, EditCellTool, RunCellTool, DeleteCellTool)]


def model_facing_tools(workspace: str) -> dict[str, str]:
    """Every tool the model can be offered, as the Environment lists it, one JSON text per view."""

    def listed(config: EnvironmentConfig) -> str:
        env = Environment(config)
        try:
            tools = asyncio.run(env.list_tools())
        finally:
            env.dispose()
        limits = {
            name: [t.definition.permission, t.definition.timeout_ms, t.definition.max_output_length, t.definition.for_model]
            for name, t in env._tools.items()
        }
        return json.dumps(
            {
                "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools],
                "limits": limits,
            },
            ensure_ascii=False,
            indent=1,
        )

    shell = SimpleNamespace(user_ns={})
    without_description = [e.model_copy(update={"call_description": False}) for e in default_tool_config().builtin or []]
    return {
        "builtin": listed(EnvironmentConfig(workspace_dir=workspace)),
        "builtin_call_description_off": listed(
            EnvironmentConfig(workspace_dir=workspace, tool_config=ToolConfig(builtin=without_description))
        ),
        "kernel_and_notebook": listed(
            EnvironmentConfig(
                workspace_dir=workspace, tool_config=ToolConfig(builtin=[]),
                extra_tools=[*kernel_tools(shell), *_notebook_tools()],
            )
        ),
    }  # fmt: skip


def test_model_facing_schemas_are_byte_identical_to_the_snapshot(tmp_path):
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert model_facing_tools(str(tmp_path)) == expected


if __name__ == "__main__":  # regenerate the snapshot (only for a deliberate schema change)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        SNAPSHOT.write_text(json.dumps(model_facing_tools(folder), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


# The one-line errors for bad arguments, as the tools answered them before the declarations (838a3dd).
BAD_ARGUMENTS: list[tuple[str, dict, str]] = [
    ("read_file", {}, 'Missing required argument "file_path" for read_file.'),
    ("read_file", {"file_path": ""}, 'Missing required argument "file_path" for read_file.'),
    ("read_file", {"file_path": 7}, 'Missing required argument "file_path" for read_file.'),
    ("read_file", {"file_path": "a.txt", "offset": "abc"}, 'Invalid "offset": expected a number (got "abc").'),
    ("read_file", {"file_path": "a.txt", "offset": [1]}, 'Invalid "offset": expected a number (got [1]).'),
    ("read_file", {"file_path": "a.txt", "limit": 0}, 'Invalid "limit": expected a positive number (got 0).'),
    ("read_file", {"file_path": "a.txt", "limit": True}, 'Invalid "limit": expected a positive number (got true).'),
    ("edit_file", {}, 'Missing required argument "file_path" for edit_file.'),
    ("edit_file", {"file_path": "a.txt"}, 'Missing required argument "old_string" for edit_file.'),
    (
        "edit_file", {"file_path": "a.txt", "old_string": ""},
        "old_string must not be empty — edit_file replaces existing text. "
        "To create a file or rewrite it wholesale, use write_file.",
    ),
    ("edit_file", {"file_path": "a.txt", "old_string": "x"}, 'Missing required argument "new_string" for edit_file.'),
    ("write_file", {}, 'Missing required argument "file_path" for write_file.'),
    ("write_file", {"file_path": "a.txt"}, 'Missing required argument "content" for write_file.'),
    ("write_file", {"file_path": "a.txt", "content": 5}, 'Missing required argument "content" for write_file.'),
    ("exec_command", {}, 'Missing required argument "cmd" for exec_command.'),
    ("exec_command", {"cmd": ""}, 'Missing required argument "cmd" for exec_command.'),
    ("input_command", {}, 'Missing required argument "process_id" for input_command.'),
    ("kill_command", {"process_id": ""}, 'Missing required argument "process_id" for kill_command.'),
    ("run_subagent", {}, "[run_subagent error: missing required string argument `prompt`]"),
    ("run_subagent", {"prompt": "  "}, "[run_subagent error: missing required string argument `prompt`]"),
    (
        "run_subagent", {"prompt": "go", "thinking_level": "huge"},
        '[run_subagent error: invalid `thinking_level` "huge"; use one of low / medium / high / xhigh / max, '
        "or omit it to inherit the parent session's level]",
    ),
    (
        "run_subagent", {"prompt": "go", "thinking_level": 2.0},
        "[run_subagent error: invalid `thinking_level` 2; use one of low / medium / high / xhigh / max, "
        "or omit it to inherit the parent session's level]",
    ),
    (
        "run_subagent", {"prompt": "go", "model_id": "m"},
        "[run_subagent error: `model_id` and `provider` must be given together (a model reference is the pair), "
        "or both omitted to inherit the parent session's model]",
    ),
    ("input_subagent", {}, 'Missing required argument "subagent_id" for input_subagent.'),
    ("kill_subagent", {"subagent_id": 3}, 'Missing required argument "subagent_id" for kill_subagent.'),
    ("read_image", {"source": "  "}, 'Missing required argument "source" for read_image.'),
    ("describe_image", {}, 'Missing required argument "source" for describe_image.'),
    ("run_python", {}, "run_python needs a non-empty `code` string."),
    ("run_python", {"code": "  "}, "run_python needs a non-empty `code` string."),
    ("propose_cell", {"code": ""}, "propose_cell needs a non-empty `code` string."),
    ("inspect_variables", {"names": "df"}, "`names` must be a list of variable names."),
    ("inspect_variables", {"names": ["df", 3]}, "`names` must be a list of variable names."),
    ("read_notebook", {"start": -1}, "Invalid 'start': expected a cell index ≥ 0 (got -1)."),
    ("read_notebook", {"end": True}, "Invalid 'end': expected a cell index ≥ 0 (got True)."),
    ("insert_cell", {"cell_type": "python", "source": "x"}, "Invalid \"cell_type\": expected \"code\" or \"markdown\" (got 'python')."),
    ("insert_cell", {}, 'Invalid "cell_type": expected "code" or "markdown" (got None).'),
    ("insert_cell", {"cell_type": "code"}, 'Missing required argument "source" for insert_cell.'),
    ("insert_cell", {"cell_type": "code", "source": "x", "index": 1.0}, 'Invalid "index": expected a cell index ≥ 0 (got 1.0).'),
    ("edit_cell", {}, 'Missing required argument "cell_id" for edit_cell.'),
    ("edit_cell", {"cell_id": "c1"}, 'Missing required argument "source" for edit_cell.'),
    ("run_cell", {"cell_id": "  "}, 'Missing required argument "cell_id" for run_cell.'),
    ("delete_cell", {}, 'Missing required argument "cell_id" for delete_cell.'),
]  # fmt: skip


class _Runner:
    async def spawn(self, **_kwargs):  # never reached: every call below is refused first
        raise AssertionError("spawned")


def test_bad_arguments_keep_their_one_line_errors(tmp_path):
    from penguin_jupyter.interfaces import EnvironmentServices
    from tests.support.env import final, run_call

    shell = SimpleNamespace(user_ns={})
    link = SimpleNamespace(live=True, can_run_cells=True, task=SimpleNamespace(running_cell_id="running"))
    notebook = [cls(link) for cls in (ReadNotebookTool, InsertCellTool, EditCellTool, RunCellTool, DeleteCellTool)]
    env = Environment(
        EnvironmentConfig(
            workspace_dir=str(tmp_path), services=EnvironmentServices(subagent_runner=_Runner()),
            extra_tools=[*kernel_tools(shell), *notebook],
        )
    )  # fmt: skip

    async def answers() -> list[tuple[str, str | None]]:
        return [
            (final(msgs).output, final(msgs).stop_reason)
            for msgs in [await run_call(env, name, args) for name, args, _ in BAD_ARGUMENTS]
        ]

    try:
        got = asyncio.run(answers())
    finally:
        env.dispose()
    assert got == [(line, "failed") for _, _, line in BAD_ARGUMENTS]


def test_every_offered_tool_derives_its_entry_from_one_declaration(tmp_path):
    from penguin_jupyter.environment.registry import BUILTIN_DECLARATIONS, BUILTIN_TOOL_FACTORIES
    from penguin_jupyter.environment.tool_declaration import DeclaredTool

    shell = SimpleNamespace(user_ns={})
    offered = [r.factory(r.declaration.definition(), None) for r in kernel_tools(shell)] + _notebook_tools()
    env = Environment(EnvironmentConfig(workspace_dir=str(tmp_path)))
    try:
        offered += list(env._tools.values())
    finally:
        env.dispose()
    for tool in offered:
        assert isinstance(tool, DeclaredTool), tool.name
        declaration = type(tool).declaration
        assert tool.name == declaration.name
        assert tool.definition.parameters == declaration.arguments.model_facing_schema()
        assert tool.definition.permission == declaration.permission
    assert set(BUILTIN_TOOL_FACTORIES) == set(BUILTIN_DECLARATIONS)
    assert len(offered) == 19


def _all_declarations() -> dict:
    from penguin_jupyter.environment.registry import BUILTIN_DECLARATIONS

    shell = SimpleNamespace(user_ns={})
    declared = {r.name: r.declaration for r in kernel_tools(shell)}
    declared.update({type(t).declaration.name: type(t).declaration for t in _notebook_tools()})
    return {**BUILTIN_DECLARATIONS, **declared}


def test_declared_argument_roles_are_what_the_approval_layer_reads():
    """The roles each tool declares on its argument fields: what the rules, the credential check
    and the card read (no table keyed by a tool's name anywhere else)."""
    roles = {
        name: (r.command, r.shell_input, r.workdir, r.reads, r.urls, r.writes, d.saved_rule_kind)
        for name, d in _all_declarations().items()
        for r in [d.roles]
    }
    assert roles == {
        "read_file": (None, None, None, ("file_path",), (), (), "path"),
        "edit_file": (None, None, None, (), (), ("file_path",), "path"),
        "write_file": (None, None, None, (), (), ("file_path",), "path"),
        "exec_command": ("cmd", None, "workdir", (), (), (), "command"),
        "input_command": (None, "chars", None, (), (), (), "never"),
        "kill_command": (None, None, None, (), (), (), "tool"),
        "run_subagent": (None, None, None, (), (), (), "tool"),
        "input_subagent": (None, None, None, (), (), (), "tool"),
        "kill_subagent": (None, None, None, (), (), (), "tool"),
        "read_image": (None, None, None, ("source",), ("source",), (), "path"),
        "describe_image": (None, None, None, ("source",), ("source",), (), "path"),
        "run_python": (None, None, None, (), (), (), "never"),
        "inspect_variables": (None, None, None, (), (), (), "tool"),
        "propose_cell": (None, None, None, (), (), (), "tool"),
        "read_notebook": (None, None, None, (), (), (), "tool"),
        "insert_cell": (None, None, None, (), (), (), "never"),
        "edit_cell": (None, None, None, (), (), (), "never"),
        "run_cell": (None, None, None, (), (), (), "never"),
        "delete_cell": (None, None, None, (), (), (), "never"),
    }


def test_every_tool_has_a_declared_card_body_or_a_tested_default():
    """Each of the 19 tools' approval card shows what the call does: its command, code, prompt,
    text typed, a diff, a cell's source — or, for the reads and the process and subagent
    controls, its header (the path, the id, the arguments as JSON) by the tested default."""
    from penguin_jupyter.notebook.transcript.cell_sources import CellPreview
    from penguin_jupyter.notebook.transcript.transcript_model import approval_body, tool_card_summary
    from penguin_jupyter.omni import tool_call

    calls = {
        "read_file": ({"file_path": "a.txt"}, None, "a.txt"),
        "edit_file": ({"file_path": "a.txt", "old_string": "x", "new_string": "y"}, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y", "a.txt"),
        "write_file": ({"file_path": "a.txt", "content": "y"}, "--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1 @@\n+y", "a.txt"),
        "exec_command": ({"cmd": "ls -la"}, "$ ls -la", "$ ls -la"),
        "input_command": ({"process_id": "proc-1", "chars": "yes\n"}, "yes\n", "proc-1: yes …"),
        "kill_command": ({"process_id": "proc-1"}, None, "proc-1"),
        "run_subagent": ({"prompt": "count the files"}, "count the files", "count the files"),
        "input_subagent": ({"subagent_id": "sub-1", "prompt": "more"}, "more", "sub-1: more"),
        "kill_subagent": ({"subagent_id": "sub-1"}, None, "sub-1"),
        "read_image": ({"source": "plot.png"}, None, "plot.png"),
        "describe_image": ({"source": "plot.png", "prompt": "axes?"}, None, "plot.png: axes?"),
        "run_python": ({"code": "df.head()"}, "df.head()", '{"code":"df.head()"}'),
        "inspect_variables": ({"names": ["df"]}, None, '{"names":["df"]}'),
        "propose_cell": ({"code": "df.plot()"}, "df.plot()", '{"code":"df.plot()"}'),
        "read_notebook": ({"start": 0}, None, '{"start":0}'),
        "insert_cell": ({"cell_type": "code", "source": "1+1"}, "1+1", "1+1"),
        "edit_cell": ({"cell_id": "c1", "source": "new"}, "--- cell c1\n+++ cell c1\n@@ -1 +1 @@\n-old\n+new", "new"),
        "run_cell": ({"cell_id": "c1"}, "old", "cell c1"),
        "delete_cell": ({"cell_id": "c1"}, "old", "cell c1"),
    }
    declarations = _all_declarations()
    assert set(calls) == set(declarations)
    preview = CellPreview("c1", "old", live=True)
    for name, (arguments, body, header) in calls.items():
        roles = declarations[name].card_roles()
        assert approval_body(name, arguments, preview, roles) == body, name
        assert tool_card_summary(tool_call(name, arguments, "c"), roles) == (name, header), name


def test_a_tool_nobody_declared_shows_every_argument_readably():
    """An MCP tool (or a host's own BuiltinTool) has no declaration: its approval card shows every
    argument in full, one per line, strings as written — never a 200-character JSON preview."""
    from penguin_jupyter.environment.registry import declaration_of
    from penguin_jupyter.notebook.transcript.transcript_model import approval_body

    declaration = declaration_of("mcp__db__query")
    assert not declaration.declared and declaration.card_roles() == {"body": "*"}
    assert declaration.saved_rule_kind == "tool" and declaration.effect({"path": "/etc/passwd"}, "/w").paths() == ()
    long_sql = "SELECT *\nFROM t\nWHERE " + " OR ".join(f"c{i} = {i}" for i in range(100))
    body = approval_body(
        "mcp__db__query", {"description": "d", "sql": long_sql, "limit": 10, "opts": {"a": [1]}}, roles=declaration.card_roles()
    )
    assert body == f"sql: {long_sql}\nlimit: 10\nopts: {{\"a\":[1]}}"
    assert len(body) > 600


def test_parsing_is_lenient_where_the_tools_always_were():
    from penguin_jupyter.environment.registry import BUILTIN_DECLARATIONS

    read = BUILTIN_DECLARATIONS["read_file"].parse({"file_path": "a", "offset": " 3.7", "limit": 2.5, "extra": 1})
    assert (read.file_path, read.offset, read.limit) == ("a", 3, 2)  # type: ignore[union-attr]
    command = BUILTIN_DECLARATIONS["exec_command"].parse(
        {"cmd": "ls", "workdir": 5, "yield_time_ms": "soon", "run_in_background": "true"}
    )
    assert (command.workdir, command.yield_time_ms, command.run_in_background) == (None, None, False)  # type: ignore[union-attr]
    assert BUILTIN_DECLARATIONS["exec_command"].parse({"cmd": "ls", "yield_time_ms": 1500.9}).yield_time_ms == 1500  # type: ignore[union-attr]
    # the call description is asked for in the schema but a call without it still runs
    assert "description" in BUILTIN_DECLARATIONS["exec_command"].definition().parameters["required"]  # type: ignore[index]
    assert not isinstance(BUILTIN_DECLARATIONS["exec_command"].parse({"cmd": "ls"}), str)
    # a renamed entry names itself in the error line
    assert BUILTIN_DECLARATIONS["exec_command"].parse({}, "shell") == 'Missing required argument "cmd" for shell.'
