"""One definition per concept: value sets are their Literal's arguments, diagnostics go through
`logging`, and every docs section a docstring or comment cites exists."""

from __future__ import annotations

from typing import get_args


def test_value_sets_are_derived_from_their_literals():
    from penguin_jupyter import interfaces
    from penguin_jupyter.environment.mcp.config import TRANSPORTS, TransportKind
    from penguin_jupyter.environment.tools.subagent import SUBAGENT_THINKING_LEVELS, SubagentThinkingLevel
    from penguin_jupyter.notebook.runtime import options
    from penguin_jupyter.omni import models

    assert models.STOP_REASONS == get_args(models.StopReason)
    assert interfaces.THINKING_LEVELS == get_args(interfaces.ThinkingLevelName)
    assert interfaces.ApprovalDecision is models.ApprovalDecisionValue
    assert interfaces.APPROVAL_DECISIONS == get_args(models.ApprovalDecisionValue)
    assert options.APPROVAL_MODES == get_args(options.ApprovalMode)
    assert not hasattr(options, "THINKING")  # parse_thinking reads THINKING_LEVELS
    assert TRANSPORTS == get_args(TransportKind)
    assert SUBAGENT_THINKING_LEVELS == get_args(SubagentThinkingLevel)
    assert set(SUBAGENT_THINKING_LEVELS) < set(interfaces.THINKING_LEVELS)
