"""Long session: 2,000 turns in one Session (each a `user_text` and a short scripted answer),
then `resume_session` on its Trace, then what one request costs at that history length.

Reports, with the whole real stack and NO bypass of the SDK's request-body walk:

* time per turn in windows of 100 turns (wall and this process's CPU), and last ÷ first window;
* peak RSS growth per turn (after a warm-up), Trace size, memory per Trace byte, resume time;
* at 4,000 history messages: the client-side cost of one request (CPU of this process — the
  model server runs in its own process) and the longest event-loop stall during the request,
  seen by a loop-lag probe (a task sleeping 1 ms in a loop), both as shipped and with both
  shortcuts taken out for the before figure (the SDK client agenthub holds unwrapped, so the SDK
  walks and encodes the whole body; agenthub converting the whole history on each request). The
  stall is also given less the time the loop's thread spent runnable but waiting for a CPU
  (Linux `/proc/thread-self/schedstat`): on a machine with more runnable work than cores the OS
  preempts the process, and that part of a stall is the machine's, not the request's. The
  requests run inside the scope a Task runs in (`seams/task_heap.py`).

The server is the ScriptedModelServer in its own process (`--serve`, TCP_NODELAY on) with its
request log switched off (it keeps every request body for tests, which over 2,000 growing
requests would make the server's own memory and garbage collection the thing measured) and the
usage of each answer given in the script (else it re-encodes the whole request to estimate it).
It still parses every request body, as a provider does: that part of the wall time grows with
the history by nature, which is why the time per turn is also given as this process's CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import inspect
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

from _common import (  # noqa: E402
    MODEL_ID,
    data_root,
    peak_rss_mb,
    print_table,
    server_process,
    verdict,
)

from penguin_jupyter import create_agent, omni  # noqa: E402
from penguin_jupyter.interfaces import GenerativeModelParameters  # noqa: E402
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig  # noqa: E402
from penguin_jupyter.seams.task_heap import TASK_HEAP  # noqa: E402

TURNS = 2000
WARMUP = 100
WINDOW = 100
CHECKPOINTS = (500, 1000, 1500, 2000)
PROBE_REQUESTS = 5  # per variant, at the final history length
SDK_WALK_REQUESTS = 2


def current_rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def answer(turn: int) -> str:
    return f"Noted item {turn}; nothing else to do."


def scripted(text: str) -> dict[str, Any]:
    """A script entry with its usage given, so the server does not re-encode the whole request to
    estimate it (its own O(history) work, which a provider does on its own hardware)."""
    return {"text": [text], "usage": {"prompt_tokens": 1000, "completion_tokens": 10}}


# --- the model server, without its request log --------------------------------------------------


def serve(script_path: str) -> None:
    from penguin_jupyter.testing import ScriptedModelServer, load_script_file
    from penguin_jupyter.testing import server as scripted_server

    scripted_server._Handler.disable_nagle_algorithm = True
    server = ScriptedModelServer(load_script_file(script_path), log_requests=False).start()
    print(f"scripted model server: {server.url}", flush=True)
    threading.Event().wait()


def unlogged_server(entries: list[Any]) -> AbstractContextManager[str]:
    """This file's `--serve` mode (no request log) in a separate process; yields its base URL."""
    return server_process(entries, command=[sys.executable, __file__, "--serve"])


# --- one request at a long history --------------------------------------------------------------


@functools.cache
def _run_queue_wait_s() -> Callable[[], float]:
    """This (the loop's) thread's total time spent runnable but waiting for a CPU (Linux
    schedstat), or 0 where there is none; the file is opened once."""
    try:
        fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
    except OSError:
        return lambda: 0.0
    return lambda: int(os.pread(fd, 100, 0).split()[1]) / 1e9


class LoopLagProbe:
    """The longest time the event loop was late waking a task that sleeps 1 ms in a loop (wall),
    and the longest such lateness less the time the loop's thread spent waiting for a CPU (on a
    loaded machine the OS preempts the process; that part of a stall is the machine's)."""

    def __init__(self) -> None:
        self.max_stall_s = 0.0
        self.max_own_stall_s = 0.0
        self._task: asyncio.Task[None] | None = None
        self._waited = _run_queue_wait_s()

    async def _run(self) -> None:
        while True:
            before, waited = time.perf_counter(), self._waited()
            await asyncio.sleep(0.001)
            late = time.perf_counter() - before - 0.001
            self.max_stall_s = max(self.max_stall_s, late)
            self.max_own_stall_s = max(self.max_own_stall_s, late - (self._waited() - waited))

    def __enter__(self) -> LoopLagProbe:
        self._task = asyncio.ensure_future(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()


class FullCollections:
    """The generation-2 (full) garbage collections that ran while it was entered, and their pauses."""

    def __init__(self) -> None:
        self.pauses_s: list[float] = []
        self._started = 0.0

    def _observe(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") == 2:
            if phase == "start":
                self._started = time.perf_counter()
            else:
                self.pauses_s.append(time.perf_counter() - self._started)

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._observe)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._observe)

    def summary(self) -> str:
        """`count / longest ms`, or `0`."""
        return f"{len(self.pauses_s)} / {1000 * max(self.pauses_s):.0f}" if self.pauses_s else "0"


async def one_request(model: GenerativeModel) -> tuple[float, float, float, float]:
    """Wall s, CPU s of this process, longest loop stall s, the same less CPU waits — for one request."""
    await asyncio.sleep(0.01)  # let the probe start
    with LoopLagProbe() as probe:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        outcome = None
        async for item in model.stream_generate(GenerativeModelParameters([omni.user_text("And now?")])):
            outcome = item
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        await asyncio.sleep(0.005)
    if getattr(outcome, "status", None) != "completed":
        raise RuntimeError(f"request at long history did not complete: {outcome!r}")
    return wall, cpu, probe.max_stall_s, probe.max_own_stall_s


def long_history_model(url: str, history: list[omni.OmniMessage], sdk_walk: bool) -> GenerativeModel:
    model = GenerativeModel(
        GenerativeModelConfig(model_id=MODEL_ID, api_key="sk-bench", base_url=url, client_type="openai-chat")
    )
    if sdk_walk:  # before: the SDK client agenthub holds unwrapped (its walk and its own body
        # encoding) and agenthub's whole-history conversion
        assert model._client is not None
        model._client.without_shortcuts()
    model.set_history(history)
    return model


async def request_costs(url: str, history: list[omni.OmniMessage]) -> list[list[Any]]:
    rows = []
    for label, sdk_walk, runs in (
        ("as shipped", False, PROBE_REQUESTS),
        ("before: SDK walk, encoding, whole-history conversion", True, SDK_WALK_REQUESTS),
    ):
        model = long_history_model(url, history, sdk_walk)
        with TASK_HEAP.task():  # as a Task runs its requests
            await one_request(model)  # warm-up: connection, imports
            samples = [await one_request(model) for _ in range(runs)]
        walls, cpus, stalls, own = zip(*samples, strict=True)
        rows.append([
            label, len(history), runs, 1000 * statistics.median(walls), 1000 * statistics.median(cpus),
            1000 * max(stalls), 1000 * max(own),
        ])  # fmt: skip
    return rows


# --- one request at 4,000 messages, per protocol ---------------------------------------------------

# (label, model_id, client_type, base_url relative to the server root)
PROTOCOL_CLIENTS = (
    ("openai-chat", MODEL_ID, "openai-chat", "/v1"),
    ("openai-responses", MODEL_ID, "openai-responses", "/v1"),
    ("anthropic messages (claude-sonnet-4-6)", "claude-sonnet-4-6", None, ""),
    ("ant-messages", MODEL_ID, "ant-messages", ""),
    ("gemini (gemini-3-flash)", "gemini-3-flash", None, ""),
)
PROTOCOL_HISTORY = 4000
PROTOCOL_REQUESTS = 20  # per client: enough for an occasional full collection to land in one
PROTOCOL_COLUMNS = [
    "client", "history msgs", "runs", "wall ms", "client cpu ms", "max loop stall ms", "less cpu waits ms",
    "full gc n / max ms",
]  # fmt: skip


def protocol_history(messages: int) -> list[omni.OmniMessage]:
    """A resumed history every protocol accepts: questions, answers, tool calls with their outputs."""
    history: list[omni.OmniMessage] = []
    for n in range(messages // 4):
        history += [
            omni.user_text(f'Remember item {n}: "quoted", é 中文.'),
            omni.tool_call("exec_command", f'{{"cmd": "echo {n}"}}', f"call_{n}"),
            omni.tool_call_output(f"{n}\n", f"call_{n}"),
            omni.assistant_text(f"Noted {n}."),
        ]
    return history


async def protocol_costs(root_url: str) -> list[list[Any]]:
    history = protocol_history(PROTOCOL_HISTORY)
    rows = []
    for label, *_ in PROTOCOL_CLIENTS:
        model = protocol_model(label, root_url)
        model.set_history(history)
        with TASK_HEAP.task():  # as a Task runs its requests
            await one_request(model)  # the resume's first request converts the whole history once
            with FullCollections() as full:
                samples = [await one_request(model) for _ in range(PROTOCOL_REQUESTS)]
        walls, cpus, stalls, own = zip(*samples, strict=True)
        rows.append([
            label, len(history), PROTOCOL_REQUESTS, 1000 * statistics.median(walls),
            1000 * statistics.median(cpus), 1000 * max(stalls), 1000 * max(own), full.summary(),
        ])  # fmt: skip
    return rows


# --- the first request after a resume, in a fresh process per client --------------------------------

FIRST_USE_HISTORY = 4  # the first request of a process: a short history, so it is the first use alone
FIRST_REQUEST_COLUMNS = [
    "client", "first use cpu ms", "first use stall ms", "pre-warmed: cpu ms", "pre-warmed: stall ms",
    "set_history ms", "resume 1st wall ms", "resume 1st cpu ms", "resume 1st stall ms", "less cpu waits ms",
]  # fmt: skip


def protocol_model(label: str, root_url: str, history: int = 0) -> GenerativeModel:
    """A model of the protocol client `label` (PROTOCOL_CLIENTS), with `history` messages set."""
    _, model_id, client_type, suffix = next(client for client in PROTOCOL_CLIENTS if client[0] == label)
    tools = [
        {"name": "exec_command", "description": "Run.", "parameters": {"type": "object", "properties": {}}}
    ]
    model = GenerativeModel(
        GenerativeModelConfig(
            model_id=model_id,
            api_key="sk-bench",
            base_url=root_url + suffix,
            client_type=client_type,
            tools=tools,
        )
    )
    if history:
        model.set_history(protocol_history(history))
    return model


def prewarm_off_the_loop(model: GenerativeModel) -> None:
    """What the kernel's pre-warm thread does after `%load_ext` for the default model's client
    (notebook/runtime/prewarm.py), here for `model`'s client, in a thread, to its end."""
    from penguin_jupyter.notebook.runtime import prewarm

    assert model._client is not None
    client_class = type(model._client.protocol_client)
    takes_class = bool(inspect.signature(prewarm.warm_sdk).parameters)  # older: no argument
    thread = threading.Thread(target=prewarm.warm_sdk, args=(client_class,) if takes_class else ())
    thread.start()
    thread.join()


async def first_request(label: str, root_url: str, prewarmed: bool) -> dict[str, Any]:
    """In this (fresh) process: the first request of the process on a short history (the first
    use: lazy imports and SDK parsers), optionally after the pre-warm; then a resume — a new
    model, `set_history` of PROTOCOL_HISTORY messages — and its first request, as a Task does."""
    first_model = protocol_model(label, root_url, FIRST_USE_HISTORY)
    if prewarmed:
        prewarm_off_the_loop(first_model)
    with TASK_HEAP.task():
        first_use = await one_request(first_model)
        resumed, history = protocol_model(label, root_url), protocol_history(PROTOCOL_HISTORY)
        began = time.perf_counter()
        resumed.set_history(history)  # on the loop, as a resume does
        set_history_s = time.perf_counter() - began
        first = await one_request(resumed)
    return {"first_use": first_use, "set_history_s": set_history_s, "first": first}


def first_request_in_fresh_process(label: str, root_url: str, prewarmed: bool) -> dict[str, Any]:
    command = [sys.executable, __file__, "--first-request", label, "--root-url", root_url]
    done = subprocess.run(
        [*command, *(["--prewarmed"] if prewarmed else [])], capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(f"{label}: the fresh process failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def first_request_rows(root_url: str) -> list[list[Any]]:
    rows = []
    for label, *_ in PROTOCOL_CLIENTS:
        cold = first_request_in_fresh_process(label, root_url, prewarmed=False)
        warm = first_request_in_fresh_process(label, root_url, prewarmed=True)
        firsts = [cold["first"], warm["first"]]
        rows.append([
            label, 1000 * cold["first_use"][1], 1000 * cold["first_use"][3],
            1000 * warm["first_use"][1], 1000 * warm["first_use"][3],
            1000 * max(cold["set_history_s"], warm["set_history_s"]),
            1000 * max(f[0] for f in firsts), 1000 * max(f[1] for f in firsts),
            1000 * max(f[2] for f in firsts), 1000 * max(f[3] for f in firsts),
        ])  # fmt: skip
    return rows


def print_first_request_table(rows: list[list[Any]]) -> None:
    worst_stall, worst_own = max(row[8] for row in rows), max(row[9] for row in rows)
    worst_warm = max(row[4] for row in rows)
    print_table(
        f"The first request after a resume with {PROTOCOL_HISTORY:,} history messages, a fresh process "
        "per client (worst of two processes)",
        FIRST_REQUEST_COLUMNS,
        rows,
        [
            f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus",
            f"first use: the process's first request ({FIRST_USE_HISTORY} messages): lazy imports and SDK "
            "parsers, on the loop; pre-warmed: after the kernel's pre-warm (prewarm.warm_sdk) ran in a thread; "
            "stall columns are less the time the loop's thread waited for a cpu",
            f"first use after the pre-warm, worst stall: {worst_warm:.1f} ms -> goal <= 50 ms "
            f"{verdict(worst_warm <= 50)}",
            f"the resume's first request, worst event-loop stall: {worst_stall:.1f} ms -> goal <= 50 ms "
            f"{verdict(worst_stall <= 50)}; less cpu waits {worst_own:.1f} ms -> {verdict(worst_own <= 50)}",
        ],
    )


async def main_protocols(first_only: bool = False) -> None:
    entries = [scripted("Fine.")] * (len(PROTOCOL_CLIENTS) * (PROTOCOL_REQUESTS + 1 + 4))
    with unlogged_server(entries) as url:
        first_rows = await asyncio.to_thread(first_request_rows, url.removesuffix("/v1"))
        print_first_request_table(first_rows)
        if first_only:
            return
        rows = await protocol_costs(url.removesuffix("/v1"))
    worst_cpu, worst_stall = max(row[4] for row in rows), max(row[5] for row in rows)
    worst_own = max(row[6] for row in rows)
    print_table(
        f"One request after a resume with {PROTOCOL_HISTORY:,} history messages, per protocol (median of runs)",
        PROTOCOL_COLUMNS,
        rows,
        [
            f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus",
            f"worst client cpu per request: {worst_cpu:.1f} ms -> goal <= 50 ms {verdict(worst_cpu <= 50)}",
            f"worst event-loop stall: {worst_stall:.1f} ms -> goal <= 50 ms {verdict(worst_stall <= 50)}",
            f"worst event-loop stall less the time the loop's thread waited for a cpu: {worst_own:.1f} ms "
            f"-> goal <= 50 ms {verdict(worst_own <= 50)}",
        ],
    )


# --- the session --------------------------------------------------------------------------------


async def main(turns: int) -> None:
    checkpoints = [c for c in CHECKPOINTS if c <= turns] or [turns]
    extra = 2 * (1 + PROBE_REQUESTS + 1 + SDK_WALK_REQUESTS)
    entries = [scripted(answer(n)) for n in range(turns)] + [scripted("Fine.")] * extra
    with unlogged_server(entries) as url, data_root(url) as root:
        agent = await create_agent(root=root)
        session = await agent.create_session(workspace_dir=root / "workspace")
        rows, windows = [], []
        base_peak = base_rss = base_trace = 0.0
        start = time.perf_counter()
        window_wall, window_cpu = time.perf_counter(), time.process_time()
        for turn in range(1, turns + 1):
            texts = []
            async for msg in session.run([omni.user_text(f"Remember item {turn}.")]):
                if msg.type == "model_msg" and msg.payload.type == "text":
                    texts.append(msg.payload.text)
            if texts != [answer(turn - 1)]:
                raise RuntimeError(f"turn {turn}: unexpected answer {texts!r}")
            if turn % WINDOW == 0:
                now_wall, now_cpu = time.perf_counter(), time.process_time()
                windows.append((turn, (now_wall - window_wall) / WINDOW, (now_cpu - window_cpu) / WINDOW))
                window_wall, window_cpu = now_wall, now_cpu
            if turn == WARMUP:
                gc.collect()
                base_peak, base_rss = peak_rss_mb(), current_rss_mb()
                base_trace = session.trace_path.stat().st_size
            if turn in checkpoints:
                gc.collect()
                trace_bytes = session.trace_path.stat().st_size
                grown = peak_rss_mb() - base_peak
                _, wall_s, cpu_s = windows[-1]
                rows.append([
                    turn, trace_bytes / 1e6, peak_rss_mb(), current_rss_mb(),
                    1024 * grown / (turn - WARMUP), grown * 2**20 / max(1, trace_bytes - base_trace),
                    1000 * wall_s, 1000 * cpu_s,
                ])  # fmt: skip
        run_time = time.perf_counter() - start
        session_id, trace_path = session.session_id, session.trace_path
        session.dispose()

        gc.collect()
        before = current_rss_mb()
        t0 = time.perf_counter()
        resumed = await agent.resume_session(session_id)
        resume_s = time.perf_counter() - t0
        resumed_rss = current_rss_mb() - before
        replayed = [m for m in resumed.render_messages if omni.is_complete_model_message(m)]
        resumed.dispose()
        trace_mb = trace_path.stat().st_size / 1e6
        costs = await request_costs(url, replayed)

    first, last = windows[1] if len(windows) > 1 else windows[0], windows[-1]
    ratio_wall, ratio_cpu = last[1] / first[1], last[2] / first[2]
    print_table(
        f"Long session: {turns:,} turns (user_text + short answer), one Session, no bypass",
        [
            "turn",
            "trace MB",
            "peak RSS MB",
            "RSS MB",
            "peak KB/turn",
            "peak B/trace B",
            "ms/turn",
            "cpu ms/turn",
        ],
        rows,
        [
            f"ms/turn and cpu ms/turn: the {WINDOW} turns ending at that turn (cpu = this process; the model "
            "server runs in its own)",
            f"growth measured from turn {WARMUP} (peak RSS {base_peak:.1f} MB, RSS {base_rss:.1f} MB); "
            f"{turns} turns took {run_time:.1f} s",
            f"time per turn, last window / first window (turns {first[0] - WINDOW + 1}-{first[0]}): "
            f"client cpu {ratio_cpu:.2f} -> goal <= 1.5 {verdict(ratio_cpu <= 1.5)}; wall {ratio_wall:.2f} "
            f"-> {verdict(ratio_wall <= 1.5)} (wall includes the server parsing the whole conversation)",
            f"resume_session: {resume_s:.3f} s for a {trace_mb:.2f} MB Trace ({len(replayed):,} replayed "
            f"messages, +{resumed_rss:.1f} MB RSS) -> goal < 2 s {verdict(resume_s < 2)}",
        ],
    )
    shipped, walked = costs
    print_table(
        "One request at the final history length (median of runs; stall = the worst run)",
        [
            "path",
            "history msgs",
            "runs",
            "wall ms",
            "client cpu ms",
            "max loop stall ms",
            "less cpu waits ms",
        ],
        costs,
        [
            f"client-side cost per request: {shipped[4]:.1f} ms (SDK walk: {walked[4]:.0f} ms) "
            f"-> goal <= 50 ms {verdict(shipped[4] <= 50)}",
            f"longest event-loop stall during a request: {shipped[5]:.1f} ms (SDK walk: {walked[5]:.0f} ms) "
            f"-> goal <= 50 ms {verdict(shipped[5] <= 50)}; less the time the loop's thread waited for a cpu: "
            f"{shipped[6]:.1f} ms -> {verdict(shipped[6] <= 50)} (load average {os.getloadavg()[0]:.2f})",
        ],
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--serve", metavar="SCRIPT", help=argparse.SUPPRESS)
    parser.add_argument(
        "--protocols",
        action="store_true",
        help="only one request at 4,000 messages for each protocol's client (and the first request after a "
        "resume, a fresh process per client)",
    )
    parser.add_argument("--first-only", action="store_true", help="with --protocols: only the first request")
    parser.add_argument("--first-request", metavar="CLIENT", help=argparse.SUPPRESS)
    parser.add_argument("--root-url", help=argparse.SUPPRESS)
    parser.add_argument("--prewarmed", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
    elif args.first_request:
        print(json.dumps(asyncio.run(first_request(args.first_request, args.root_url, args.prewarmed))))
    elif args.protocols:
        asyncio.run(main_protocols(args.first_only))
    else:
        asyncio.run(main(args.turns))
