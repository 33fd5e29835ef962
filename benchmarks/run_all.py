"""`python benchmarks/run_all.py`: run every benchmark script in turn and print all their tables.

Each script runs in its own process (one at a time, so they do not compete for the cores); the
run ends with how long each took and a non-zero exit status if any script failed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
SCRIPTS = [
    "bench_engine.py",
    "bench_render.py",
    "bench_tool_latency.py",
    "bench_long_session.py",
    "bench_summaries.py",
    "bench_notebook_tools.py",
    "bench_saved_notebook.py",
    "bench_approval_rules.py",
    "bench_undo.py",
    "bench_notebook_context.py",
    "bench_browser_soak.py",
    "bench_page_guard.py",
]


def main() -> int:
    failed, timings = [], []
    print(
        f"# penguin_jupyter benchmarks ({time.strftime('%Y-%m-%d %H:%M:%S %Z')}, python {sys.version.split()[0]})"
    )
    for name in SCRIPTS:
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(BENCH_DIR / name)])
        timings.append((name, time.perf_counter() - start, code))
        if code != 0:
            failed.append(name)
    print("\n## Script run times")
    for name, seconds, code in timings:
        print(f"  {name:<24} {seconds:6.1f} s{'' if code == 0 else f'  FAILED (exit {code})'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
