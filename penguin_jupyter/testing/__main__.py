"""`python -m penguin_jupyter.testing --script FILE | --demo [--workspace DIR] [--port N] [--api-key KEY]`: serve until Ctrl-C.

Owns the command line only; prints the base URL and model id to pass to a client, and how to use them.
"""

from __future__ import annotations

import argparse
import sys
import threading

from .demo import DEMO_DONE_ENTRY, copy_demo_data, demo_entries
from .script import ScriptError, load_script_file
from .server import DEFAULT_MODEL, ScriptedModelServer


def how_to_use(server: ScriptedModelServer) -> str:
    """What to do with the printed URL (the demo inside a notebook needs none of it)."""
    return (
        "In a notebook, `%penguin demo` starts a demo model of its own; nothing here is needed.\n"
        "To point penguin at this server instead (in a notebook cell, or any Python):\n"
        "    from penguin_jupyter.state import add_model\n"
        f'    add_model(None, "default_project", provider="local", model_id="{server.model}", '
        f'base_url="{server.url}", api_key="sk-any", client_type="openai-chat", default=True)\n'
        "then `%%penguin` cells use it (it answers each request with the next script entry, in "
        "every protocol: OpenAI Chat / Responses, Anthropic Messages, Gemini). Ctrl-C stops it."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m penguin_jupyter.testing",
        description=(
            "Serve a scripted streaming model on 127.0.0.1 (OpenAI Chat Completions and Responses, "
            "Anthropic Messages, Gemini: point any agenthub client's base_url at the printed URL)."
        ),
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--script", metavar="FILE", help="JSON or YAML list of script entries")
    source.add_argument("--demo", action="store_true", help="serve the bundled demo script")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: any free port)")
    parser.add_argument("--workspace", metavar="DIR", help="with --demo: copy the demo sales.csv into DIR")
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"model id to report (default: {DEFAULT_MODEL})"
    )
    parser.add_argument(
        "--api-key", metavar="KEY", help="accept only this key (others get the provider's bad-key answer)"
    )
    args = parser.parse_args(argv)
    if args.workspace and not args.demo:
        parser.error("--workspace only goes with --demo")
    try:
        entries = demo_entries() if args.demo else load_script_file(args.script)
        copied = copy_demo_data(args.workspace) if args.workspace else None
        server = ScriptedModelServer(
            entries,
            port=args.port,
            model=args.model,
            api_key=args.api_key,
            after_script=DEMO_DONE_ENTRY if args.demo else None,
        ).start()
    except (ScriptError, ValueError, OSError) as exc:
        parser.exit(2, f"error: {exc}\n")
    print(f"scripted model server: {server.url} (model {server.model}, {len(entries)} entries)", flush=True)
    if copied is not None:
        print(f"demo data: {copied}", flush=True)
    print(how_to_use(server), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
