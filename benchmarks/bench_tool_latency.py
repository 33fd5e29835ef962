"""Tool latency: one `exec_command("true")` round trip through `Environment.execute_tool`
against a bare `asyncio.create_subprocess_exec("bash", "-lc", "true")`.

Both sides start a login bash and wait for it to end; the Environment adds its tool pipeline
(argument check, command session, output framing, close-out). Runs alternate between the two
so a load spike hits both; the table reports medians over many iterations.
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
from penguin_jupyter.interfaces import ToolExecutionRequest  # noqa: E402
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


async def main(iterations: int) -> None:
    with tempfile.TemporaryDirectory(prefix="penguin-bench-tool-") as workspace:
        env = Environment(EnvironmentConfig(workspace_dir=workspace, tool_config=ToolConfig()))
        await env.list_tools()
        bare: list[float] = []
        tool: list[float] = []
        try:
            for n in range(WARMUP + iterations):
                b = await timed(bare_true())
                t = await timed(tool_true(env, n))
                if n >= WARMUP:
                    bare.append(b)
                    tool.append(t)
        finally:
            env.dispose()
    med_bare, med_tool = statistics.median(bare), statistics.median(tool)
    ratio = med_tool / med_bare
    rows = [
        ['bare create_subprocess_exec("bash","-lc","true")', iterations, 1000 * med_bare,
         1000 * min(bare), 1000 * _p90(bare), 1.0],
        ['Environment.execute_tool exec_command "true"', iterations, 1000 * med_tool,
         1000 * min(tool), 1000 * _p90(tool), ratio],
    ]  # fmt: skip
    print_table(
        "Tool round trip: exec_command true vs a bare subprocess",
        ["path", "runs", "median ms", "min ms", "p90 ms", "x bare (median)"],
        rows,
        [f"goal ratio <= 1.5: {ratio:.2f} -> {verdict(ratio <= 1.5)}"],
    )


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    asyncio.run(main(parser.parse_args().iterations))
