"""`python benchmarks/_server.py SCRIPT.json`: the ScriptedModelServer in its own process for the
benchmarks, with TCP_NODELAY on its connections.

The stock handler writes each SSE frame as its own small send with Nagle's algorithm on, so on
loopback every response stalls ~40 ms on the client's delayed ACK; a real provider does not
add that, so the benchmarks switch it off here (`disable_nagle_algorithm`, a standard
`socketserver.StreamRequestHandler` attribute) instead of measuring it.

With `PENGUIN_BENCH_EVENTS_PER_S=N` in the environment, every response is paced to N SSE
events a second (a model generating at a steady rate) instead of as fast as the socket allows.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from penguin_jupyter.testing import ScriptedModelServer, load_script_file
from penguin_jupyter.testing import server as scripted_server


def pace(events_per_s: float) -> None:
    """Make every response send its SSE events at `events_per_s` (sleeping when ahead)."""
    original = scripted_server._Handler._pause

    def paced(self: Any, seconds: float) -> None:
        original(self, seconds)
        now = time.monotonic()
        start, sent = getattr(self, "_pace", (now, 0))
        if now - start - sent / events_per_s > 1.0:  # a new response on a kept-alive connection
            start, sent = now, 0
        sent += 1
        self._pace = (start, sent)
        ahead = start + sent / events_per_s - now
        if ahead > 0.002:
            time.sleep(ahead)

    scripted_server._Handler._pause = paced  # type: ignore[method-assign]


def main(script_path: str) -> None:
    scripted_server._Handler.disable_nagle_algorithm = True
    if os.environ.get("PENGUIN_BENCH_EVENTS_PER_S"):
        pace(float(os.environ["PENGUIN_BENCH_EVENTS_PER_S"]))
    server = ScriptedModelServer(load_script_file(script_path)).start()
    print(f"scripted model server: {server.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main(sys.argv[1])
