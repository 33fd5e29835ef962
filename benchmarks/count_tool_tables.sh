#!/usr/bin/env bash
# Counts what issue 37 "the declaration is the tool" measures, for the repository at $1 (default:
# this one): tables keyed by a tool's name and branches on one (outside the legacy-bundle
# fallback tables), parsers of a tool call's JSON arguments, and the ways tools report failure.
# Before (3758335): `git -C . archive 3758335 | tar -x -C /tmp/before && bash benchmarks/count_tool_tables.sh /tmp/before`.
set -u
cd "${1:-$(dirname "$0")/..}"
NAMES='read_file|edit_file|write_file|exec_command|input_command|kill_command|run_subagent|input_subagent|kill_subagent|read_image|describe_image|run_python|inspect_variables|propose_cell|read_notebook|insert_cell|edit_cell|run_cell|delete_cell'
tables=$(grep -rnE "name\s*(==|!=|===|!==)\s*['\"]($NAMES)['\"]|name (not )?in [A-Z_(]|^(const )?[A-Z_]+(: [^=]+)? = (frozenset\(\{|\{)\s*['\"]?($NAMES)|^\s+['\"]?($NAMES)['\"]?\s*:\s*['\"][a-z_]+['\"],?$" \
  penguin_jupyter labextension/src --include=*.py --include=*.ts \
  | grep -E "$NAMES|_TOOLS|_ARGUMENTS?\b" \
  | grep -v "for \(module_\)\?name in\|penguin_jupyter/testing/\|penguin_jupyter/labextension/\|legacy_card_roles\|LEGACY_CARD_ROLES")
echo "lines keying behaviour on a tool's name: $(printf '%s' "$tables" | grep -c . ) in $(printf '%s' "$tables" | cut -d: -f1 | sort -u | grep -c .) files"
[ -n "$tables" ] && printf '%s\n' "$tables" | cut -d: -f1 | sort | uniq -c | sed 's/^/  /'
echo "parsers of a tool call's arguments (the issue's grep: json.loads … argument): $(grep -rn 'json.loads' penguin_jupyter --include=*.py | grep -ci argument)"
echo "failure reports in tools: yield ToolResult(failed) $(grep -rn 'ToolResult(stop_reason="failed"' penguin_jupyter/environment/tools penguin_jupyter/notebook/kernel_tools penguin_jupyter/environment/tool_declaration.py | wc -l)," \
  "return text/(text, ok) $(grep -rnE '\) -> tuple\[str, bool\]|-> [A-Za-z_\[\], ]+ \| str:' penguin_jupyter/environment/tools penguin_jupyter/notebook/kernel_tools | wc -l)," \
  "raise _Refused $(grep -rn 'raise _Refused' penguin_jupyter | wc -l)," \
  "raise ToolFailed $(grep -rn 'raise ToolFailed' penguin_jupyter | wc -l)"
