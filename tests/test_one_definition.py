"""One definition per concept: value sets are their Literal's arguments, diagnostics go through
`logging`, and every docs section a docstring or comment cites exists."""

from __future__ import annotations

from typing import get_args


def test_value_sets_are_derived_from_their_literals():
    from penguin_jupyter import interfaces
    from penguin_jupyter.environment.mcp.config import TRANSPORTS, TransportKind
    from penguin_jupyter.notebook.runtime import options
    from penguin_jupyter.omni import models

    assert get_args(models.StopReason) == models.STOP_REASONS
    assert get_args(interfaces.ThinkingLevelName) == interfaces.THINKING_LEVELS
    assert interfaces.ApprovalDecision is models.ApprovalDecisionValue
    assert get_args(models.ApprovalDecisionValue) == interfaces.APPROVAL_DECISIONS
    assert get_args(options.ApprovalMode) == options.APPROVAL_MODES
    assert not hasattr(options, "THINKING")  # parse_thinking reads THINKING_LEVELS
    assert get_args(TransportKind) == TRANSPORTS
    assert get_args(interfaces.SubagentThinkingLevel) == interfaces.SUBAGENT_THINKING_LEVELS
    assert set(interfaces.SUBAGENT_THINKING_LEVELS) < set(interfaces.THINKING_LEVELS)


async def test_unless_aborted_is_the_one_abort_race():
    import asyncio

    from penguin_jupyter.interfaces import AbortSignal, unless_aborted

    assert await unless_aborted(asyncio.sleep(0, "done"), None) == (True, "done")
    signal = AbortSignal()
    slow = asyncio.ensure_future(asyncio.sleep(30))
    asyncio.get_running_loop().call_soon(signal.abort, "user")
    assert await unless_aborted(slow, signal) == (False, None)
    assert slow.cancelled()  # the loser is cancelled, not left running
    assert await unless_aborted(asyncio.sleep(0, "late"), signal) == (False, None)  # already aborted wins
    # with a grace period the awaitable may still finish after the abort
    assert await unless_aborted(asyncio.sleep(0.01, "graceful"), signal, grace_s=5) == (True, "graceful")
    assert await unless_aborted(asyncio.sleep(30), AbortSignal(), timeout_s=0.01) == (False, None)

    async def fails() -> None:
        raise ValueError("boom")

    try:
        await unless_aborted(fails(), AbortSignal())
    except ValueError as exc:
        assert str(exc) == "boom"
    else:
        raise AssertionError("the awaitable's exception must propagate")


def test_no_hand_written_abort_race_is_left():
    """Nothing but `unless_aborted` / `SignalWatch` waits on a signal, except the model's one abort
    waiter per request (llm/model.py), which the upstream pump races against each arrival so a
    streamed response costs no Task per wait (llm/upstream_pump.py)."""
    from pathlib import Path

    import penguin_jupyter

    package = Path(penguin_jupyter.__file__).parent
    found = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "signal.wait()" in path.read_text(encoding="utf-8")
    )
    assert found == ["interfaces.py", "llm/model.py"]


def test_diagnostics_go_through_logging():
    """Nothing in the package prints to stderr: diagnostics use a logger, and the notebook's lines
    for the user go through its one helper (notebook/runtime/user_lines.py)."""
    import re
    from pathlib import Path

    import penguin_jupyter

    package = Path(penguin_jupyter.__file__).parent
    writes = re.compile(r"file=sys\.(__)?stderr|sys\.(__)?stderr\.write")
    found = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if writes.search(path.read_text(encoding="utf-8"))
    )
    assert found == ["notebook/runtime/user_lines.py"]


def test_an_unconfigured_logger_still_shows_warnings_on_stderr():
    """In a kernel nobody configures logging, so a warning reaches the cell's stderr unchanged
    (logging's last-resort handler), as the old prints did."""
    import subprocess
    import sys

    code = (
        "import asyncio\n"
        "from penguin_jupyter.environment.mcp import McpManager\n"
        "from penguin_jupyter.interfaces import MCPServerConfig\n"
        "m = McpManager([MCPServerConfig(name='bad', config={'command': 'x', 'permission': 'readonly'})], workspace_dir='.')\n"
        "asyncio.run(m.connect())\n"
    )
    from tests.support.kernel import REPO_ROOT

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
        env={"PYTHONPATH": REPO_ROOT, "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert '[penguin] MCP server "bad" skipped: "permission" must be "auto", "r" or "rw", got "readonly"' in done.stderr


def _sections(markdown: str) -> dict[str, list[str]]:
    """Heading (backticks dropped) → the lines under it, for one Markdown file."""
    import re

    sections: dict[str, list[str]] = {}
    current: list[str] = []
    fence = False
    for line in markdown.splitlines():
        fence = fence != line.startswith("```")
        if not fence and re.match(r"#{1,6} ", line):
            current = sections.setdefault(re.sub(r"^#+\s*", "", line).replace("`", "").strip(), [])
        else:
            current.append(line)
    return sections


def _slug(title: str) -> str:
    import re

    return re.sub(r"[^\w\s-]", "", title.lower()).replace(" ", "-")


def test_every_cited_docs_section_and_step_exists():
    """Every `docs/x.md "Section"`, `docs/x.md#anchor`, `README "Section"` and "… step N" a
    docstring or comment of the package cites names a heading (and a numbered item) that exists."""
    import re
    from pathlib import Path

    import penguin_jupyter

    package = Path(penguin_jupyter.__file__).parent
    repo = package.parent
    docs = {p.name: _sections(p.read_text(encoding="utf-8")) for p in (repo / "docs").glob("*.md")}
    docs["README.md"] = _sections((repo / "README.md").read_text(encoding="utf-8"))
    cite = re.compile(
        r"(?:docs/)?(?P<file>[\w-]+\.md|README(?:'s)?)(?:#(?P<anchor>[\w-]+))?"
        r'(?:(?: section)?[ ,]+"(?P<title>[^"\n]+)")?(?: "(?P<sub>[^"\n]+)")?(?:\s+step\s+(?P<step>\d+))?'
    )
    unresolved: list[str] = []
    for path in sorted(package.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(package)}:{number}"
            if re.search(r"Appendix [A-Z]\b", line):
                unresolved.append(f"{where} cites an appendix")
            for match in cite.finditer(line):
                name = "README.md" if match["file"].startswith("README") else match["file"]
                sections = docs.get(name)
                if sections is None:
                    if match["file"].startswith("README") or match["title"]:
                        unresolved.append(f"{where} {name}: no such file")
                    continue
                title = match["title"]
                if title is not None and title.replace("`", "") not in sections:
                    unresolved.append(f'{where} {name} "{title}"')
                    continue
                if match["sub"] is not None and match["sub"].replace("`", "") not in sections:
                    unresolved.append(f'{where} {name} "{title}" "{match["sub"]}"')
                if match["anchor"] and match["anchor"] not in {_slug(t) for t in sections}:
                    unresolved.append(f"{where} {name}#{match['anchor']}")
                if match["step"] and title is not None:
                    items = [ln for ln in sections[title.replace("`", "")] if re.match(r"\s*\d+\. ", ln)]
                    if int(match["step"]) > len(items):
                        unresolved.append(f'{where} {name} "{title}" step {match["step"]}')
    assert unresolved == [], "\n".join(unresolved)
