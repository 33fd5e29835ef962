"""Pre-warming after `%load_ext`: import in the background what the first `%%penguin` cell needs.

Owns `start_prewarm` and `prewarm`. A fresh kernel's first cell used to spend most of its first
second importing the harness, agenthub and the provider SDK before the request could leave. Here
a daemon thread does those imports right after `%load_ext` (Python's import lock makes a cell
that starts meanwhile simply wait for the module being imported, never import it twice), plus
the agenthub client of the project's default model, found from the project config. Anything that
fails here is remembered in `PREWARM.error` and otherwise ignored: the first cell will meet the
same problem and report it properly. What the cell does with the modules is the runner's.
"""

from __future__ import annotations

import os
import ssl
import sys
import threading
import time
from dataclasses import dataclass
from importlib import import_module

# What the first cell imports, heaviest first (agenthub and pydantic models come in through these).
MODULES = (
    "penguin_jupyter.agent",
    "penguin_jupyter.notebook.runtime.runner",
    "penguin_jupyter.notebook.live.live_view",
    "penguin_jupyter.notebook.kernel_tools.run_python",
    "penguin_jupyter.notebook.kernel_tools.inspect_variables",
    "penguin_jupyter.notebook.kernel_tools.propose_cell",
    "penguin_jupyter.notebook.kernel_tools.notebook_prompt",
    "penguin_jupyter.notebook.runtime.line_commands",
    "penguin_jupyter.notebook.transcript.transcript_html",
    "penguin_jupyter.notebook.transcript.transcript_text",
)


# Modules an SDK imports only when its client sends the first request (its resources, the HTTP
# transport): imported when the SDK is in use and they exist; a missing one is skipped.
LAZY_SDK_MODULES = {
    "openai": (
        "openai.resources.chat.completions.completions",
        "openai.resources.responses.responses",
        "openai.lib.streaming.chat",
    ),
    "anthropic": ("anthropic.resources.messages.messages", "anthropic.lib.streaming"),
}
# The thread starts this long after `%load_ext`, so the `%load_ext` cell finishes first rather
# than sharing the interpreter with the imports.
START_DELAY_S = 0.05
TRANSPORT_MODULES = ("httpcore", "httpcore2", "h11", "anyio._backends._asyncio", "jiter", "truststore")


@dataclass
class PrewarmState:
    thread: threading.Thread | None = None
    done: bool = False
    error: str | None = None


PREWARM = PrewarmState()


def default_client_class() -> type | None:
    """Build (and drop) an agenthub client for the default project's default model, which
    imports its SDK and sets up its HTTP transport and TLS context once; returns its class, or
    None when there is no default model (or agenthub's routing seam is off). Nothing is sent."""
    from ...seams.llm_sdk import ROUTING, protocol_client_class
    from ...state import load_project_config

    config = load_project_config(None, "default_project")
    ref = config.default_model
    entry = config.get_model(ref.provider, ref.model_id) if ref is not None else None
    if entry is None or not ROUTING.enabled():
        return None
    client_type = (entry.client_type or os.getenv("CLIENT_TYPE") or entry.model_id).lower()
    cls = protocol_client_class(client_type)
    if cls is None:
        return None
    try:  # a placeholder key: the client is never used
        cls(model=entry.model_id, api_key="penguin-prewarm", base_url=entry.base_url or "http://127.0.0.1:9/v1")
    except Exception:  # (agenthub's ant-messages client refuses its own arguments: its SDK is imported)
        pass
    return cls


def warm_sdk(client_class: type | None = None) -> None:
    """Import the request-path modules of the SDKs the client brought in, build what the SDK
    builds on the first stream event of `client_class` (an agenthub protocol client class: the
    OpenAI Responses event parser, ≈ 0.5 s, `seams/llm_sdk.py` item 8), and create one more
    TLS context (OpenSSL's first ones in a process cost about twice the later ones)."""
    wanted = [name for sdk, names in LAZY_SDK_MODULES.items() if sdk in sys.modules for name in names]
    for name in [*wanted, *TRANSPORT_MODULES]:
        try:
            import_module(name)
        except ImportError:
            continue
    if client_class is not None:
        from ...seams.llm_sdk import build_stream_event_parser

        build_stream_event_parser(client_class)
    ssl.create_default_context()


def prewarm(delay_s: float = 0.0) -> None:
    """Do the imports (in the calling thread) after `delay_s`; never raises."""
    try:
        time.sleep(delay_s)
        for name in MODULES:
            import_module(name)
        warm_sdk(default_client_class())
    except BaseException as exc:  # a broken config or SDK is the first cell's to report
        PREWARM.error = f"{type(exc).__name__}: {exc}"
    finally:
        PREWARM.done = True


def start_prewarm() -> threading.Thread | None:
    """Start the pre-warm thread once per process (a daemon: it never keeps the kernel alive)."""
    if PREWARM.thread is not None:
        return PREWARM.thread
    try:
        thread = threading.Thread(target=prewarm, args=(START_DELAY_S,), name="penguin-prewarm", daemon=True)
        thread.start()
    except RuntimeError as exc:  # no threads available: the first cell imports as before
        PREWARM.error = f"could not start: {exc}"
        return None
    PREWARM.thread = thread
    return thread
