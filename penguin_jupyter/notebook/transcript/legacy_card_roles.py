"""FALLBACK ONLY for transcript bundles saved before bundles carried their tools' card roles.

A bundle made since then says how each of its cards reads (`"tools"`: each tool's
`ToolDeclaration.card_roles()`, written by `transcript_bundle.make_bundle`). An older one does
not; its cards are read with the roles the tools had when it was saved, frozen here — never
edit this table to follow a tool's declaration, and never read it for a bundle that carries its
own roles. The labextension holds the same table (`labextension/src/model.ts`
LEGACY_CARD_ROLES); tests/browser/test_labextension_model.py keeps the two equal.
"""

from __future__ import annotations

LEGACY_CARD_ROLES: dict[str, dict[str, object]] = {
    "read_file": {"headline": ["file_path"]},
    "edit_file": {
        "diff": {
            "old": "old_string",
            "new": "new_string",
            "path": "file_path",
            "notes": {"replace_all": "(replace_all: every occurrence)"},
        },
        "headline": ["file_path"],
    },
    "write_file": {"diff": {"new": "content", "path": "file_path"}, "headline": ["file_path"]},
    "exec_command": {"command": "cmd", "workdir": "workdir", "notes": {"run_in_background": " [background]"}},
    "input_command": {"body": "chars", "headline": ["process_id", "chars"]},
    "kill_command": {"headline": ["process_id"]},
    "run_subagent": {"body": "prompt", "headline": ["prompt"]},
    "input_subagent": {"body": "prompt", "headline": ["subagent_id", "prompt"]},
    "kill_subagent": {"headline": ["subagent_id"]},
    "read_image": {"headline": ["source"]},
    "describe_image": {"headline": ["source", "prompt"]},
    "run_python": {"body": "code"},
    "inspect_variables": {},
    "propose_cell": {"body": "code"},
    "read_notebook": {},
    "insert_cell": {"body": "source", "headline": ["source"]},
    "edit_cell": {"cell": "cell_id", "diff": {"new": "source"}, "headline": ["source"]},
    "run_cell": {"cell": "cell_id", "headline": ["cell_id"]},
    "delete_cell": {"cell": "cell_id", "headline": ["cell_id"]},
}
