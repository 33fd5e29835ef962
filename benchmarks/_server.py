"""`python benchmarks/_server.py SCRIPT.json`: the ScriptedModelServer in its own process for the
benchmarks, with TCP_NODELAY on its connections.

The stock handler writes each SSE frame as its own small send with Nagle's algorithm on, so on
loopback every response stalls ~40 ms on the client's delayed ACK; a real provider does not
add that, so the benchmarks switch it off here (`disable_nagle_algorithm`, a standard
`socketserver.StreamRequestHandler` attribute) instead of measuring it.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from penguin_jupyter.testing import ScriptedModelServer, load_script_file
from penguin_jupyter.testing import server as scripted_server


def main(script_path: str) -> None:
    scripted_server._Handler.disable_nagle_algorithm = True
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
