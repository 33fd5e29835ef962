"""The Session's seams for a host (the notebook): the background subagents' registry, killing
running commands, and the distinct "no model configured" error (real Agent and Sessions)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from penguin_jupyter import create_agent
from penguin_jupyter.environment.tools.subagent import SubagentSessionManager
from penguin_jupyter.state.errors import NoModelConfiguredError
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.session import configure_model


async def test_background_subagents_is_the_sessions_registry_until_dispose(tmp_path):
    with ScriptedModelServer([]) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        agent = await create_agent()
        session = await agent.create_session(workspace_dir=tmp_path)
        registry = session.background_subagents()
        assert isinstance(registry, SubagentSessionManager)
        assert registry is session.background_subagents()  # one per session
        session.kill_running_commands()  # nothing running: a no-op, never an error
        await session.aclose()
        assert session.background_subagents() is None


async def test_no_model_configured_is_its_own_error(tmp_path):
    agent = await create_agent()
    with pytest.raises(NoModelConfiguredError, match="No model is configured for project"):
        await agent.create_session(workspace_dir=tmp_path)
    with pytest.raises(NoModelConfiguredError, match="is not configured"):
        await agent.create_session(workspace_dir=tmp_path, provider="nope", model_id="no-such-model")
