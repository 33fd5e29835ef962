"""Where things are, for every test folder: the repository, the tests' fixture files and the
MCP fixture server."""

from __future__ import annotations

from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = TESTS_DIR.parent
FIXTURES_DIR = TESTS_DIR / "fixtures"
MCP_FIXTURE_SERVER = str(TESTS_DIR / "mcp_servers" / "fixture_server.py")
