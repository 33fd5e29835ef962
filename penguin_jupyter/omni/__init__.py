"""OmniMessage: the one message protocol every layer speaks (docs/protocol.md).

Re-exports the models, wire functions, builders, guards, the PartialAggregator, the marker
helpers and the one parser of a tool call's arguments (`read_call_arguments`). Nothing here depends on any other penguin_jupyter module.
"""

from . import markers
from .aggregator import PartialAggregator
from .builders import (
    abort,
    add_token_counts,
    approval_decision,
    assistant_text,
    compaction_begin,
    compaction_end,
    empty_token_counts,
    goal_finished,
    image_url,
    inline_data,
    inline_thinking,
    mcp_connect_begin,
    mcp_connect_end,
    now_iso,
    partial_text,
    partial_thinking,
    partial_tool_call,
    partial_tool_call_output,
    request_begin,
    request_end,
    session_meta,
    subagent_event,
    text_message,
    thinking,
    token_usage,
    tool_call,
    tool_call_output,
    tool_list_ready,
    user_text,
    with_origin,
)
from .call_arguments import EMPTY_ARGUMENTS, UnreadableArguments, read_call_arguments
from .fidelity import BYTES_TAG, fidelity_for_provider, json_safe_fidelity
from .guards import (
    is_complete_model_message,
    is_event,
    is_event_message,
    is_model_message,
    is_partial_payload,
    is_session_meta,
    model_role,
    payload_as,
    payload_of,
)
from .models import (
    STOP_REASONS,
    AbortPayload,
    ApprovalDecisionPayload,
    CompactionBeginPayload,
    CompactionEndPayload,
    CompactionReason,
    ImageUrlPayload,
    InlineDataPayload,
    InlineThinkingPayload,
    McpConnectBeginPayload,
    McpConnectEndPayload,
    McpServerResult,
    McpStatus,
    OmniMessage,
    PartialTextPayload,
    PartialThinkingPayload,
    PartialToolCallOutputPayload,
    PartialToolCallPayload,
    RequestBeginPayload,
    RequestEndPayload,
    SessionMetaPayload,
    StopReason,
    SubagentPayload,
    TextPayload,
    ThinkingPayload,
    TokenCost,
    TokenCounts,
    TokenUsagePayload,
    ToolCallOutputPayload,
    ToolCallPayload,
    ToolListReadyPayload,
    ToolSpec,
)
from .unicode import is_valid_unicode, repair_in_place, repair_strings, repair_surrogates
from .wire import (
    dumps_compact,
    from_dict,
    from_json,
    loads_strict,
    parse_wire_line,
    to_dict,
    to_json,
    with_valid_unicode,
)

__all__ = [name for name in dir() if not name.startswith("_")]
