"""Test and demo support: the scripted OpenAI-compatible model server and the bundled demo.

Owns `ScriptedModelServer` (a real loopback HTTP server that agenthub's `openai-chat` client
consumes unchanged) and the demo script/data. Used by tests, examples and the offline demo;
nothing in the runtime package depends on it.
"""

from .demo import DEMO_DATA_DIR, DEMO_SALES_CSV, DEMO_SCRIPT_PATH, copy_demo_data, demo_entries
from .explore_script import explore_entries
from .script import ScriptError, load_script_file, parse_entry
from .server import DEFAULT_MODEL, EXHAUSTED_MESSAGE, ScriptedModelServer

__all__ = [
    "DEFAULT_MODEL",
    "DEMO_DATA_DIR",
    "DEMO_SALES_CSV",
    "DEMO_SCRIPT_PATH",
    "EXHAUSTED_MESSAGE",
    "ScriptError",
    "ScriptedModelServer",
    "copy_demo_data",
    "demo_entries",
    "explore_entries",
    "load_script_file",
    "parse_entry",
]
