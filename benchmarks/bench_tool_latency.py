"""Tool latency: one `exec_command("true")` round trip through `Environment.execute_tool`
against a bare `asyncio.create_subprocess_exec("bash", "-lc", "true")`, and the same call in the
sandbox (docs/security.md "Sandbox": bubblewrap, the seccomp filter, the mounts) against the
unsandboxed one — without network, and with an allowed host (the proxy and the in-sandbox bridge).

Every path starts a login bash and waits for it to end; the Environment adds its tool pipeline
(argument check, command session, output framing, close-out), the sandbox bwrap's namespaces and
mounts. Runs alternate between the paths so a load spike hits all; the table reports medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

from _common import print_table, verdict  # noqa: E402

from penguin_jupyter.environment import Environment, EnvironmentConfig, ToolConfig  # noqa: E402
from penguin_jupyter.environment.sandbox import SandboxConfig, SandboxGrants, parse_hosts, sandbox_support  # noqa: E402
from penguin_jupyter.interfaces import EnvironmentServices, ToolExecutionRequest  # noqa: E402
from penguin_jupyter.omni import tool_call  # noqa: E402

ITERATIONS = 80
WARMUP = 5


async def bare_true() -> None:
    proc = await asyncio.create_subprocess_exec("bash", "-lc", "true")
    if await proc.wait() != 0:
        raise RuntimeError("bash -lc true failed")


async def tool_true(env: Environment, n: int) -> None:
    request = ToolExecutionRequest(tool_call("exec_command", json.dumps({"cmd": "true"}), f"call_{n}"))
    last = None
    async for msg in env.execute_tool(request):
        last = msg
    if last is None or last.payload.type != "tool_call_output" or last.payload.stop_reason != "completed":
        raise RuntimeError(f"exec_command true did not complete: {last}")


async def timed(coro) -> float:
    start = time.perf_counter()
    await coro
    return time.perf_counter() - start


def _environment(workspace: str, sandbox: SandboxConfig | None) -> Environment:
    services = EnvironmentServices(extra={"sandbox": sandbox}) if sandbox is not None else None
    return Environment(EnvironmentConfig(workspace_dir=workspace, tool_config=ToolConfig(), services=services))


async def main(iterations: int) -> None:
    support = sandbox_support()
    with tempfile.TemporaryDirectory(prefix="penguin-bench-tool-") as workspace:
        envs = {"plain": _environment(workspace, None)}
        if support.available:  # a ledger with no grant: every command runs sandboxed
            envs["sandboxed"] = _environment(workspace, SandboxConfig(grants=SandboxGrants()))
            hosts = parse_hosts(["pypi.org"])
            envs["sandboxed+host"] = _environment(workspace, SandboxConfig(grants=SandboxGrants(), allowed_hosts=hosts))
        for env in envs.values():
            await env.list_tools()
        bare: list[float] = []
        times: dict[str, list[float]] = {name: [] for name in envs}
        try:
            for n in range(WARMUP + iterations):
                b = await timed(bare_true())
                measured = {name: await timed(tool_true(env, n)) for name, env in envs.items()}
                if n >= WARMUP:
                    bare.append(b)
                    for name, value in measured.items():
                        times[name].append(value)
        finally:
            for env in envs.values():
                env.dispose()
    med_bare = statistics.median(bare)
    med = {name: statistics.median(values) for name, values in times.items()}
    ratio = med["plain"] / med_bare
    rows = [
        ['bare create_subprocess_exec("bash","-lc","true")', iterations, 1000 * med_bare,
         1000 * min(bare), 1000 * _p90(bare), 1.0, ""],
        ['Environment.execute_tool exec_command "true"', iterations, 1000 * med["plain"],
         1000 * min(times["plain"]), 1000 * _p90(times["plain"]), ratio, 1.0],
    ]  # fmt: skip
    notes = [f"goal ratio <= 1.5: {ratio:.2f} -> {verdict(ratio <= 1.5)}"]
    for name, label in (("sandboxed", "in the sandbox (no network)"), ("sandboxed+host", "in the sandbox, an allowed host")):
        if name in med:
            vs_plain = med[name] / med["plain"]
            rows.append([f'exec_command "true" {label}', iterations, 1000 * med[name], 1000 * min(times[name]),
                         1000 * _p90(times[name]), med[name] / med_bare, vs_plain])  # fmt: skip
    if "sandboxed" in med:
        sandboxed = med["sandboxed"] / med["plain"]
        notes.append(f"goal sandboxed / unsandboxed <= 1.5: {sandboxed:.2f} -> {verdict(sandboxed <= 1.5)}")
    else:
        notes.append(f"no sandbox here ({support.reason}): the sandboxed rows are left out")
    print_table(
        "Tool round trip: exec_command true vs a bare subprocess, and in the sandbox",
        ["path", "runs", "median ms", "min ms", "p90 ms", "x bare", "x unsandboxed"],
        rows,
        notes,
    )
def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    asyncio.run(main(parser.parse_args().iterations))
