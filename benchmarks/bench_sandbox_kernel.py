"""The sandboxed kernel's cost (docs/security.md "The sandboxed kernel"): how long "Python 3
(penguin sandbox)" takes to be ready against the ordinary `python3` kernel, and what one
execute round trip (`1`, the reply and the idle status back) costs through the server's two
routes to it — its Unix sockets directly (the provisioner asks for ipc) and the launcher's TCP
relay (a client that launches the kernelspec's argv itself) — against `python3` over ipc.

Kernels start through jupyter_client's KernelManager exactly as a server starts them; runs
alternate between the kernels so a load spike hits all; the table reports medians (min).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

from _common import print_table, subprocess_env  # noqa: E402
from jupyter_client import KernelManager  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402

from penguin_jupyter.environment.sandbox import sandbox_support  # noqa: E402
from tests.support.sandbox_kernel import KERNEL_NAME, KERNELS_DIR, sandbox_spec_manager  # noqa: E402


def _tcp_spec(folder: Path) -> KernelSpecManager:
    spec = json.loads((KERNELS_DIR / KERNEL_NAME / "kernel.json").read_text())
    spec["metadata"].pop("kernel_provisioner")
    (folder / "tcp-sandbox").mkdir(parents=True)
    (folder / "tcp-sandbox" / "kernel.json").write_text(json.dumps(spec))
    return KernelSpecManager(kernel_dirs=[str(folder)])


def _start(kind: str, workspace: str, scratch: Path) -> tuple[KernelManager, Any, float]:
    if kind == "python3":
        km = KernelManager(kernel_name="python3", transport="ipc", ip=str(scratch / f"k{time.monotonic_ns()}"))
    elif kind == "sandbox (ipc)":
        km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=sandbox_spec_manager())
    else:
        km = KernelManager(kernel_name="tcp-sandbox", kernel_spec_manager=_tcp_spec(scratch / f"s{time.monotonic_ns()}"))
    started = time.perf_counter()
    km.start_kernel(cwd=workspace, env=subprocess_env())
    client = km.client()
    client.start_channels()
    client.wait_for_ready(timeout=120)
    return km, client, time.perf_counter() - started


def _round_trips(client: Any, count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        reply = client.execute_interactive("1", timeout=30, output_hook=lambda _m: None)
        times.append(time.perf_counter() - started)
        assert reply["content"]["status"] == "ok"
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--executes", type=int, default=40)
    args = parser.parse_args()
    support = sandbox_support()
    if not support.available:
        print(f"no sandbox here: {support.reason}")
        return
    kinds = ("python3", "sandbox (ipc)", "sandbox (TCP relay)")
    starts: dict[str, list[float]] = {kind: [] for kind in kinds}
    trips: dict[str, list[float]] = {kind: [] for kind in kinds}
    workspace = tempfile.mkdtemp(prefix="pj-bench-kernel-", dir="/var/tmp")
    scratch = Path(tempfile.mkdtemp(prefix="pj-bench-"))
    for _ in range(args.starts):
        for kind in kinds:
            km, client, ready = _start(kind, workspace, scratch)
            try:
                starts[kind].append(ready)
                trips[kind] += _round_trips(client, args.executes)
            finally:
                client.stop_channels()
                km.shutdown_kernel(now=False)
    with open("/proc/loadavg") as handle:
        load = handle.read().split()[0]
    rows = [
        [
            kind,
            f"{statistics.median(starts[kind]):.2f} ({min(starts[kind]):.2f})",
            f"{statistics.median(trips[kind]) * 1000:.2f} ({min(trips[kind]) * 1000:.2f})",
        ]
        for kind in kinds
    ]
    print_table(
        f"Sandboxed kernel: start to ready (s) and one execute round trip (ms), medians (min); load {load}",
        ["kernel", "start → ready", "execute `1`"],
        rows,
    )


if __name__ == "__main__":
    main()
