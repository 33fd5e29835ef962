"""The escape suite of the sandboxed kernel: "Python 3 (penguin sandbox)" started through its
kernelspec with jupyter_client's KernelManager under a hardened (unstarted) Jupyter server,
`--approve auto`, the scripted model calling
`run_python` with hostile code (and `write_file` outside, `exec_command` once inside and once
asking to leave).

Reuses the command suite's fixtures (`sandbox_suite.py`: the home folder with credentials, the
data root with another session's trace, the git workspace whose `.git/config` runs a program,
the kubeconfig plugin, the 127.0.0.1 counting server). What happened is gathered into one
JSON-able dict the tests assert on; `python -m tests.support.sandbox_kernel_suite BASE` prints it
(the ordinary-user run). BASE must not be under /tmp (the sandbox has its own /tmp).
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.support.sandbox_suite import (
    DAEMON_SECONDS,
    TRANSCRIPT_MIME,
    CountingServer,
    _card_texts,
    _clicker,
    _daemon_alive,
    _decisions,
    _layout,
    _outputs,
    observe_marks,
)


def _attempt(statement: str) -> str:
    """Code that runs `statement` and prints WROTE, or the error's class and text."""
    return f"try:\n    {statement}\n    print('WROTE')\nexcept OSError as e:\n    print(type(e).__name__, e)\n"


def _codes(port: int, layout: dict[str, Path], mark: str = "000000") -> list[tuple[str, str]]:
    """(call id, run_python code): each one an escape attempt or the write that works."""
    home, data = layout["home"], layout["data"]
    trace = data / "default_project" / "agents" / "default_agent" / "traces" / "2020" / "01" / "01" / "session-other.jsonl"
    url = f"http://127.0.0.1:{port}"
    return [
        ("inside", "open('inside.txt', 'w').write('written')\nprint(open('inside.txt').read())"),
        ("home", _attempt(f"open({str(home / 'pwned.txt')!r}, 'w').write('x')")),
        ("startup", _attempt(f"open({str(home / '.ipython/profile_default/startup/00-evil.py')!r}, 'w').write('import os')")),
        ("hook", _attempt("open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\necho hook\\n')")),
        ("gitconfig", _attempt("open('.git/config', 'a').write('[alias]\\n\\tst = !touch /tmp/x\\n')")),
        (
            "ssh",
            "import os\n"
            + _attempt(f"print(open({str(home / '.ssh/id_rsa')!r}).read())")
            + f"print('ssh folder:', os.listdir({str(home / '.ssh')!r}))\n"
            + _attempt(f"print(open({str(home / '.aws/credentials')!r}).read())"),
        ),
        (
            "data_root",
            f"import os\nfor folder, _, files in os.walk({str(data)!r}):\n    print(folder, sorted(files))\n"
            + _attempt(f"print(open({str(trace)!r}).read())"),
        ),
        (
            "network",
            "import socket, subprocess, urllib.request\n"
            + _attempt(f"print(urllib.request.urlopen({url + '/urllib'!r}, timeout=3).read())")
            + _attempt(f"socket.create_connection(('127.0.0.1', {port}), timeout=3).sendall(b'GET /raw HTTP/1.0\\r\\n\\r\\n')")
            + f"print(subprocess.run(['curl', '-s', '-m', '3', {url + '/curl'!r}], capture_output=True, text=True))\n",
        ),
        ("unix", "import socket\n" + _attempt("socket.socket(socket.AF_UNIX).connect('/run/docker.sock')")),
        (
            "daemon",
            "import os, subprocess, sys, time\n"
            # each beat replaces its file whole: a reader never sees it truncated and not yet written
            "subprocess.Popen(\"setsid sh -c 'while :; do date +%s%N > beat.tmp; mv -f beat.tmp heartbeat.txt; echo x > $HOME/daemon-wrote; "
            f"sleep 0.2{mark}; done' >/dev/null 2>&1 < /dev/null & (sleep {DAEMON_SECONDS.format(mark)} &)\", shell=True)\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        beat = 'import os, time\\nwhile True:\\n    open(\"beat-py.tmp\", \"w\").write(str(time.time()))\\n"
            "    os.replace(\"beat-py.tmp\", \"heartbeat-py.txt\")\\n"
            f"    time.sleep(0.2{mark})'\n"
            "        os.execv(sys.executable, [sys.executable, '-c', beat])\n"
            "    os._exit(0)\n"
            "time.sleep(1)\nprint('started')",
        ),
        (
            "symlink",
            "import os\n"
            f"os.symlink({str(home / '.ssh/id_rsa')!r}, 'key_link')\n"
            + _attempt("print(open('key_link').read())")
            + f"os.symlink({str(home)!r}, 'home_link')\n"
            + _attempt("open('home_link/via-link.txt', 'w').write('x')"),
        ),
        ("fsmonitor", "import subprocess\nprint(subprocess.run(['git', 'status', '--short'], capture_output=True, text=True))"),
        (
            "blame",
            "import subprocess\nprint(subprocess.run(['git', 'blame', "
            f"'--output={home / '.ssh/authorized_keys'}', 'README.md'], capture_output=True, text=True))",
        ),
        (
            "pip",
            "import subprocess, sys\nprint(subprocess.run([sys.executable, '-m', 'pip', 'list', '-o', '--index-url', "
            f"{url + '/pip/'!r}, '--retries', '0', '--timeout', '3', '--disable-pip-version-check'], "
            "capture_output=True, text=True).stdout[-300:])",
        ),
        ("kube", "import subprocess\nprint(subprocess.run(['./kubectl', 'get', 'pods', '--kubeconfig=./k.yaml'], capture_output=True, text=True))"),
    ]


def _beats(workspace: Path) -> dict[str, str]:
    return {name: (workspace / name).read_text() if (workspace / name).exists() else "" for name in ("heartbeat.txt", "heartbeat-py.txt")}


def run_kernel_suite(base: Path) -> dict[str, Any]:
    """Everything the escape suite observed in the sandboxed kernel (see the module docstring)."""
    import os

    from penguin_jupyter.testing import ScriptedModelServer
    from tests.support.kernel import KernelHarness, kernel_env
    from tests.support.sandbox_kernel import KERNEL_NAME, hardened_server, sandbox_spec_manager
    from tests.support.session import configure_model

    counting = CountingServer()
    layout = _layout(base, counting.port)
    home, data, workspace = layout["home"], layout["data"], layout["workspace"]
    mark = str(secrets.randbelow(10**6)).zfill(6)  # unique: other runs may be on this machine
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "run_python", "id": call_id, "arguments": {"code": code}}]}
        for call_id, code in _codes(counting.port, layout, mark)
    ]
    script += [
        {"tool_calls": [{"name": "write_file", "id": "wf_home", "arguments": {"file_path": str(home / "wf.txt"), "content": "x"}}]},
        {"tool_calls": [{"name": "write_file", "id": "wf_hook", "arguments": {"file_path": ".git/hooks/post-checkout", "content": "x"}}]},
        {"tool_calls": [{"name": "exec_command", "id": "command", "arguments": {"cmd": "echo c > command.txt; echo x > $HOME/command-pwned.txt"}}]},
        {"tool_calls": [{"name": "exec_command", "id": "unsandboxed", "arguments": {"cmd": "touch outside-ok", "unsandboxed": True}}]},
        {"tool_calls": [{"name": "exec_command", "id": "hosts", "arguments": {"cmd": "true", "network_hosts": ["evil.example"]}}]},
        {"text": "Tried everything."},
    ]
    env = {"HOME": str(home), "PENGUIN_HOME": str(data), "JPY_SESSION_NAME": str(workspace / "analysis.ipynb")}
    os.environ.update({"HOME": str(home), "PENGUIN_HOME": str(data)})
    observed: dict[str, Any] = {"user": os.getuid()}
    try:
        with ScriptedModelServer(script) as server:
            configure_model(data, server)
            started = time.monotonic()
            with hardened_server() as jupyter:  # its provisioner judges the browser hardened: auto asks nothing
                harness = KernelHarness(
                    str(workspace), kernel_env(env), kernel_name=KERNEL_NAME, spec_manager=sandbox_spec_manager(), parent=jupyter
                )
            observed["start_s"] = round(time.monotonic() - started, 2)
            observed["transport"] = harness.km.transport
            try:
                assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
                clicks = {"cards": 0, "approved": 0}
                first = harness.execute(
                    "%%penguin --approve auto\nTry to escape.", on_message=_clicker(harness, clicks), timeout=400
                )
                observed["first_status"] = first.reply["content"]["status"]
                observed["first_stderr"] = first.stderr
                observed["notes"] = first.notes
                observed["cards_in_auto"] = clicks["cards"]
                observed["widget_texts"] = "\n".join(_card_texts(first.messages))
                bundle = first.final_bundles()[-1][TRANSCRIPT_MIME]
                observed["outputs"] = _outputs(bundle)
                observed["decisions"] = _decisions(bundle)
                observed["answer"] = [
                    m["payload"].get("text", "") for m in bundle["messages"] if m["payload"].get("type") == "text"
                ]
                observed["model_requests"] = len(server.requests)
                observed["beats_running"] = _beats(workspace)
                user = harness.execute(
                    "import os\n" + _attempt("open(os.path.expanduser('~/user-cell.txt'), 'w').write('x')")
                    + _attempt("print(open(os.path.expanduser('~/.ssh/id_rsa')).read())")
                )
                observed["user_cell"] = user.stdout
                timer = threading.Timer(2.0, harness.interrupt)
                timer.start()
                interrupted = harness.execute("import time\ntime.sleep(60)", timeout=60)
                observed["interrupt"] = {
                    "status": interrupted.reply["content"]["status"],
                    "ename": interrupted.reply["content"].get("ename", ""),
                    "elapsed": round(interrupted.elapsed, 1),
                }
                observed["config"] = harness.execute("%penguin config").stdout
            finally:
                harness.close()
            time.sleep(1.0)  # a daemon that outlived the kernel would beat in this second
            observed["beats_after"] = _beats(workspace)
            time.sleep(1.0)
            observed["beats_later"] = _beats(workspace)
            observed["daemon_processes"] = _daemon_alive(mark)
    finally:
        counting.close()
    observed["hits"] = list(counting.hits)
    observe_marks(
        observed,
        workspace,
        home,
        {
            "command": workspace / "command.txt",
            "command_pwned": home / "command-pwned.txt",
            "user_cell": home / "user-cell.txt",
            "wf_home": home / "wf.txt",
            "wf_hook": workspace / ".git" / "hooks" / "post-checkout",
        },
    )
    traces = data / "default_project" / "agents" / "default_agent" / "traces"
    observed["traces"] = sorted(str(p.relative_to(traces)) for p in traces.rglob("*.jsonl"))
    observed["published_has_outputs"] = any("WROTE" in p.read_text() or "written" in p.read_text() for p in traces.rglob("session-2*.jsonl"))
    observed["slices_left"] = sorted(p.name for p in (data / ".sandbox-kernels").glob("*"))
    return observed


def main() -> None:
    result = run_kernel_suite(Path(sys.argv[1]))
    sys.stdout.write("SUITE-RESULT " + json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
