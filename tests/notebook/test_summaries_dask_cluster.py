"""`run_python` on a real dask.distributed LocalCluster (threads): a call waiting on a long
computation that is stopped, times out or meets the kernel interrupt cancels the futures it
started (the scheduler forgets their tasks at once), its worker returns instead of being
abandoned, and the next call and the next cell run. In process (the tool's real path) and in a
real ipykernel."""

from __future__ import annotations

import asyncio
import json

import pytest

from penguin_jupyter.environment.types import ToolExecutionContext, ToolResult
from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.notebook.kernel_tools import RunPythonTool
from penguin_jupyter.notebook.kernel_tools.python_runner import BUSY_MESSAGE
from penguin_jupyter.testing import ScriptedModelServer
from tests.notebook.test_kernel_tools import _call, _ok, _outputs, _start, _transcript

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

BLOCKS = 400  # 400 tasks of 0.2 s on 2 threads: about 40 s if nothing cancelled them
CANCELLED = "[interrupted: cancelled 1 Dask future this call had started]\n"
CLUSTER_CELL = """\
import time
import numpy as np
import dask.array as da
from distributed import Client, LocalCluster

cluster = LocalCluster(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None)
client = Client(cluster)
worker = next(iter(cluster.workers.values()))

def slow(block):
    time.sleep(0.2)
    return block

def executed():
    return worker.state.executed_count"""
COMPUTE_CODE = (
    "print('computing', flush=True)\n"
    f"total = da.ones({BLOCKS}, chunks=1).map_blocks(slow, meta=np.empty(0)).sum().compute()"
)
# The same wait through an explicit future, printed once submitted: the kernel interrupt below is
# sent on that line, so it always lands while the cluster is computing.
SUBMIT_CODE = (
    f"future = client.compute(da.ones({BLOCKS}, chunks=1).map_blocks(slow, meta=np.empty(0)).sum())\n"
    "print('computing', flush=True)\n"
    "total = future.result()"
)
# What the cluster holds right after the interrupted call (no waiting: the cancel already happened).
STATE_CODE = f"print(len(client.futures), executed() < {BLOCKS}, 'total' in globals())"
# After the scheduler settled: no task left, nothing of the cancelled graph ran on, a new one runs.
CHECK_CELL = (
    "deadline = time.monotonic() + 30  # tasks already running finish their 0.2 s sleep first\n"
    "while (cluster.scheduler.tasks or worker.state.tasks) and time.monotonic() < deadline:\n"
    "    time.sleep(0.05)\n"
    "ran = executed()\n"
    "time.sleep(0.5)\n"
    f"print(len(client.futures), len(cluster.scheduler.tasks), executed() == ran < {BLOCKS})\n"
    "print(float(da.ones(10, chunks=5).sum().compute()))"
)


class Shell:
    def __init__(self, namespace):
        self.user_ns = namespace


async def _run(shell, code, signal=None):
    text, result = [], None
    async for item in RunPythonTool(shell).execute(
        {"code": code}, ToolExecutionContext("/tmp", "c", signal=signal)
    ):
        if isinstance(item, ToolResult):
            result = item
        else:
            text.append(item.payload.output)
    return "".join(text), result


async def test_stopped_run_python_cancels_its_dask_futures_in_process():
    namespace: dict = {}
    exec(CLUSTER_CELL, namespace)
    client, cluster = namespace["client"], namespace["cluster"]
    try:
        shell = Shell(namespace)
        signal = AbortSignal()

        async def stop_once_computing():  # once the cluster holds the call's futures and runs them
            while not client.futures or namespace["executed"]() < 2:
                await asyncio.sleep(0.02)
            signal.abort()

        stopper = asyncio.create_task(stop_once_computing())
        out, result = await _run(shell, COMPUTE_CODE, signal)
        await stopper
        assert result.stop_reason == "aborted"
        assert out == "computing\n" + CANCELLED
        # Right away: the call's futures are gone and its worker returned (no BUSY_MESSAGE).
        out, result = await _run(shell, STATE_CODE)
        assert (out, result.stop_reason) == ("0 True False\n", "completed"), BUSY_MESSAGE
        out, result = await _run(shell, CHECK_CELL)
        assert (out, result.stop_reason) == ("0 0 True\n10.0\n", "completed")
    finally:
        client.close()
        cluster.close()


@pytest.mark.kernel
def test_timeout_and_kernel_interrupt_cancel_cluster_work_in_a_real_kernel(tmp_path):
    script = [
        _call("call_compute", "run_python", description="Sum on the cluster", code=COMPUTE_CODE),
        _call("call_state", "run_python", description="Cluster state", code=STATE_CODE),
        {"text": "The computation ran out of time and was cancelled."},
        _call("call_compute_2", "run_python", description="Sum on the cluster", code=SUBMIT_CODE),
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, server)
        try:
            _ok(kernel.execute(CLUSTER_CELL, timeout=120))
            timed_out = kernel.execute(
                "%%penguin --approve allow-all --python-timeout 2\nSum it", timeout=180
            )
            after_timeout = kernel.execute(CHECK_CELL, timeout=120)
            state = {"interrupted": False}

            def on_message(msg, result):
                data = json.dumps(msg["content"], default=str)
                if not state["interrupted"] and msg["msg_type"] == "comm_msg" and "computing" in data:
                    state["interrupted"] = True
                    kernel.interrupt()

            interrupted = kernel.execute(
                "%%penguin --approve allow-all\nSum it again", on_message=on_message, timeout=180
            )
            after_interrupt = kernel.execute(CHECK_CELL, timeout=120)
            kernel.execute("client.close(); cluster.close()", timeout=60)
        finally:
            kernel.close()

    _ok(timed_out)
    outputs = _outputs(_transcript(timed_out))
    compute = outputs["call_compute"]
    assert compute["stop_reason"] == "failed"
    assert compute["output"].startswith("computing\n" + CANCELLED)
    assert compute["output"].endswith("[tool timeout: exceeded 2000ms]")
    # The next run_python in the same turn ran at once: the worker was not left blocked.
    assert (outputs["call_state"]["stop_reason"], outputs["call_state"]["output"]) == (
        "completed",
        "0 True False\n",
    )
    _ok(after_timeout)
    assert after_timeout.stdout == "0 0 True\n10.0\n"

    assert state["interrupted"], "the run_python output never reached the live view"
    assert interrupted.reply["content"]["ename"] == "TaskInterrupted"
    second = _outputs(_transcript(interrupted))["call_compute_2"]
    assert second["stop_reason"] == "aborted"
    assert second["output"].startswith("computing\n" + CANCELLED)
    _ok(after_interrupt)
    assert after_interrupt.stdout == "0 0 True\n10.0\n"
