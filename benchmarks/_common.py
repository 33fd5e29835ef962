"""Shared plumbing for the benchmark scripts: a scripted model server in its own process, a
private data root with a model entry pointing at it, a trivial instant tool, and table printing.

Owns nothing the package needs; each `bench_*.py` script measures one thing and prints a table.
The server runs as `benchmarks/_server.py FILE` (the ScriptedModelServer, TCP_NODELAY on) in a
subprocess so its Python work does not share the benchmark process's GIL.
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from penguin_jupyter import omni
from penguin_jupyter.environment.types import ToolDefinitionConfig, ToolResult
from penguin_jupyter.state import add_model

REPO_ROOT = Path(__file__).resolve().parent.parent
PROVIDER = "openai"
MODEL_ID = "scripted-model"


def subprocess_env(**extra: str) -> dict[str, str]:
    """This environment with the repo root on PYTHONPATH (the package need not be installed)."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    return env


@contextmanager
def server_process(
    entries: list[Any], events_per_s: float | None = None, command: list[str] | None = None
) -> Iterator[str]:
    """Serve `entries` from a separate process; yields its base URL and stops it on exit.
    With `events_per_s`, responses are paced to that many SSE events a second. `command` (the
    script file's path is appended) replaces the default server, `_server.py`."""
    with tempfile.TemporaryDirectory(prefix="penguin-bench-script-") as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps(entries), encoding="utf-8")
        base = command or [sys.executable, str(Path(__file__).with_name("_server.py"))]
        proc = subprocess.Popen(
            [*base, str(script)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(**({"PENGUIN_BENCH_EVENTS_PER_S": str(events_per_s)} if events_per_s else {})),
        )
        try:
            line = proc.stdout.readline() if proc.stdout else ""
            if "http://" not in line:
                err = proc.stderr.read() if proc.stderr else ""
                raise RuntimeError(f"scripted model server did not start: {line.strip()} {err.strip()}")
            yield line.split()[3]
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def data_root(base_url: str) -> Iterator[Path]:
    """A throwaway PENGUIN_HOME whose default model entry talks to `base_url`; yields the root
    (a `workspace/` directory inside it is created for sessions)."""
    with tempfile.TemporaryDirectory(prefix="penguin-bench-root-") as tmp:
        root = Path(tmp)
        (root / "workspace").mkdir()
        add_model(
            root,
            "default_project",
            provider=PROVIDER,
            model_id=MODEL_ID,
            base_url=base_url,
            api_key="sk-bench",
            client_type="openai-chat",
            context_window=10_000_000,
            default=True,
        )
        yield root


class NoopTool:
    """An extra tool that answers at once: one output delta `ok`, then the result (permission r)."""

    name = "noop"
    definition = ToolDefinitionConfig(
        name="noop",
        description="Do nothing and answer ok.",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
        permission="r",
    )

    async def execute(self, args: dict[str, Any], ctx: Any) -> AsyncIterator[Any]:
        yield omni.partial_tool_call_output("delta", "ok", ctx.tool_call_id)
        yield ToolResult()


async def allow(_call: Any) -> str:
    return "allow"


class Stopwatch:
    """Wall time and this process's CPU time (all threads) between `start` and `stop`."""

    def __enter__(self) -> Stopwatch:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MB (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def print_table(title: str, header: list[str], rows: list[list[Any]], notes: list[str] = ()) -> None:
    """A plain fixed-width table with a title line and optional note lines below it."""
    cells = [[str(c) for c in header]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    print(f"\n## {title}")
    for n, row in enumerate(cells):
        print(
            "  ".join(
                cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
            )
        )
        if n == 0:
            print("  ".join("-" * w for w in widths))
    for note in notes:
        print(f"  {note}")
    sys.stdout.flush()


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value >= 100:
            return f"{value:,.0f}"
        if value >= 1:
            return f"{value:.2f}"
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


os.environ.setdefault("PYTHONUNBUFFERED", "1")


def module_at_revision(rev: str, module_path: str) -> Any:
    """`module_path` (a file of this repo) as it was at git revision `rev`, loaded as a standalone
    module under a temporary name (for before/after figures of one function)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:{module_path}"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout
    name = "baseline_" + Path(module_path).stem
    path = Path(tempfile.mkdtemp(prefix="bench-baseline-")) / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
