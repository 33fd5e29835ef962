"""Test and demo support: the scripted model server and the bundled demo.

Owns `ScriptedModelServer` (a real loopback HTTP server speaking OpenAI Chat Completions and
Responses, Anthropic Messages and Gemini, which every agenthub client consumes unchanged) and
the demo script/data. Used by tests, examples and the offline demo;
nothing in the runtime package depends on it.
"""

from .demo import DEMO_DATA_DIR, DEMO_SALES_CSV, DEMO_SCRIPT_PATH, copy_demo_data, demo_entries
from .explore_script import explore_entries
from .protocols import PROTOCOL_NAMES
from .script import ScriptError, load_script_file, parse_entry
from .server import DEFAULT_MODEL, EXHAUSTED_MESSAGE, ScriptedModelServer, ServedRequest

__all__ = [
    "DEFAULT_MODEL",
    "DEMO_DATA_DIR",
    "DEMO_SALES_CSV",
    "DEMO_SCRIPT_PATH",
    "EXHAUSTED_MESSAGE",
    "PROTOCOL_NAMES",
    "ScriptError",
    "ScriptedModelServer",
    "ServedRequest",
    "copy_demo_data",
    "demo_entries",
    "explore_entries",
    "load_script_file",
    "parse_entry",
]
