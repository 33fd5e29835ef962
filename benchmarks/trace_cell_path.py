"""A `%%penguin` cell's path, traced in a real kernel: from `runner.run_cell` (what the magic line
becomes) until the Task starts (`Session.run`), the package's functions it enters, in order.

A fresh kernel (jupyter_client, the scripted model server in its own process, a throwaway data
root) runs `%load_ext penguin_jupyter`, then a cell that puts a `sys.setprofile` hook on the
kernel's main thread, then a plain `%%penguin` cell sent as JupyterLab sends it (with a cell id),
then reads what the hook recorded. Each first entry of a package function is a call (a coroutine
resumed is not); `testing/` (the scripted server) is left out.

Reported:
* **calls**: package functions entered between the two, and the modules they are in;
* **the path** — what a reader follows from `run_cell`: the calls made by `run_cell` and, below
  it, by the cell runtime's functions (`notebook/runtime/`, but `cell.py`: the Task's own life is
  one stop, entered, not followed), into a function of another module of the host layer
  (`notebook/`, `session.py`, `agent.py`; the core below is a library to the cell). Consecutive
  calls into one module are one **stop** (a reader reads two functions of an open file in a
  row); **modules** counts the modules stopped at, **returns** the stops at a module the path
  already stopped at (the reader opens that file again).

`--repo PATH` measures another checkout (its package is put first on the kernel's PYTHONPATH);
`--list` prints the path's stops. Before → after for issue 37:
  git -C . worktree add /tmp/before <rev> && python benchmarks/trace_cell_path.py --repo /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]

from _common import data_root, server_process, subprocess_env  # noqa: E402
from jupyter_client import KernelManager  # noqa: E402

FOLLOWED = "notebook.runtime."  # and run_cell; notebook/runtime/cell.py is a stop, not followed
NOT_FOLLOWED = "notebook.runtime.cell"
HOST = ("notebook.", "session", "agent")

TRACER = r"""
import dis as _pj_dis, json as _pj_json, os as _pj_os, sys as _pj_sys
import penguin_jupyter as _pj
_pj_root = _pj_os.path.dirname(_pj.__file__) + _pj_os.sep
_pj_events, _pj_first, _pj_state = [], {}, {"on": False, "done": False}
_pj_frames = []  # kept alive while tracing, so no two frames share an id

def _pj_module(filename):
    return filename[len(_pj_root):-3].replace(_pj_os.sep, ".").removesuffix(".__init__")

def _pj_first_offset(code):
    offset = _pj_first.get(code)
    if offset is None:
        offset = next((i.offset for i in _pj_dis.get_instructions(code) if i.opname == "RESUME"), 0)
        _pj_first[code] = offset
    return offset

def _pj_profile(frame, event, arg):
    if event != "call" or _pj_state["done"]:
        return
    code = frame.f_code
    if not code.co_filename.startswith(_pj_root) or frame.f_lasti != _pj_first_offset(code):
        return
    module = _pj_module(code.co_filename)
    if module.startswith("testing"):
        return
    if not _pj_state["on"]:
        if module != "notebook.runtime.runner" or code.co_name != "run_cell":
            return
        _pj_state["on"] = True
    if module == "session" and code.co_name == "run":
        _pj_state["done"] = True
    caller = frame.f_back
    while caller is not None and not caller.f_code.co_filename.startswith(_pj_root):
        caller = caller.f_back
    _pj_frames.append(frame)
    _pj_events.append([
        id(frame), module, code.co_qualname,
        id(caller) if caller is not None else None,
    ])

_pj_sys.setprofile(_pj_profile)
"""

DUMP = "import sys as _pj_sys\n_pj_sys.setprofile(None)\n_pj_frames.clear()\nprint(_pj_json.dumps(_pj_events))"


class Kernel:
    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self._sockets = tempfile.mkdtemp(prefix="pjt-")
        self.km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(self._sockets, "k"))
        self.km.start_kernel(cwd=str(cwd), env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=90)

    def run(self, code: str, cell_id: str | None = None, timeout: float = 120.0) -> str:
        """The cell's stdout; raises when it fails."""
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": True}
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id} if cell_id else {})
        self.kc.shell_channel.send(msg)
        msg_id, out, deadline = msg["header"]["msg_id"], [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reply = self.kc.get_iopub_msg(timeout=1.0)
            except Exception:
                continue
            if reply.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if reply["msg_type"] == "stream" and reply["content"]["name"] == "stdout":
                out.append(reply["content"]["text"])
            if reply["msg_type"] == "error":
                raise RuntimeError("\n".join(reply["content"]["traceback"]))
            if reply["msg_type"] == "status" and reply["content"]["execution_state"] == "idle":
                return "".join(out)
        raise TimeoutError(code[:60])

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def trace(repo: Path) -> list[list]:
    with server_process([{"text": "Hello."}]) as base_url, data_root(base_url) as root:
        env = subprocess_env(PENGUIN_HOME=str(root), HOME=str(root))
        env["PYTHONPATH"] = os.pathsep.join([str(repo), env["PYTHONPATH"]])
        env["JPY_SESSION_NAME"] = str(root / "workspace" / "trace.ipynb")
        kernel = Kernel(root / "workspace", env)
        try:
            kernel.run("%load_ext penguin_jupyter")
            time.sleep(3)  # the pre-warm's imports done: the trace is the cell's own path
            kernel.run(TRACER)
            kernel.run("%%penguin\nSay hello.", cell_id="cell-1")
            return json.loads(kernel.run(DUMP).strip().splitlines()[-1])
        finally:
            kernel.close()


def path(events: list[list]) -> list[tuple[str, str, list[str]]]:
    """(caller's module, module, functions) of each stop on the path (see the docstring)."""
    frames = {event[0]: event for event in events}
    followed: set[int] = set()
    stops: list[tuple[str, str, list[str]]] = []
    for frame_id, module, qualname, caller_id in events:
        caller = frames.get(caller_id)
        if caller is None:
            if module == "notebook.runtime.runner" and qualname == "run_cell":
                followed.add(frame_id)
            continue
        if caller_id not in followed or qualname.endswith("<module>"):  # an import is not a call
            continue
        if module.startswith(FOLLOWED) and module != NOT_FOLLOWED:
            followed.add(frame_id)
        if module == caller[1] or not module.startswith(HOST):
            continue
        if stops and stops[-1][1] == module:
            stops[-1][2].append(qualname)
        else:
            stops.append((caller[1], module, [qualname]))
    return stops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default=str(BENCH_DIR.parent), help="the checkout whose package the kernel runs")
    parser.add_argument("--list", action="store_true", help="print the path's stops")
    parser.add_argument("--save", help="write the recorded calls to this JSON file")
    parser.add_argument("--load", help="read recorded calls from this JSON file instead of running a kernel")
    args = parser.parse_args()
    events = json.loads(Path(args.load).read_text()) if args.load else trace(Path(args.repo).resolve())
    if args.save:
        Path(args.save).write_text(json.dumps(events))
    stops = path(events)
    visited = ["notebook.runtime.runner"]
    returns = 0
    for caller, module, names in stops:
        again = module in visited
        returns += again
        if args.list:
            print(f"  {caller:34} -> {module}: {', '.join(dict.fromkeys(names))}{'  (return)' if again else ''}")
        if not again:
            visited.append(module)
    print(f"load: {Path('/proc/loadavg').read_text().split()[0]}")
    print(f"calls from run_cell to Session.run: {len(events)} in {len({event[1] for event in events})} modules")
    print(f"the path: {len(stops)} stops in {len(visited) - 1} modules, {returns} returns to a module already visited")

if __name__ == "__main__":
    main()
