"""OmniMessage data models: the envelope and every payload of docs/protocol.md.

Owns the shapes only (field names, field order, literals). Serialization lives in
`wire.py`, construction helpers in `builders.py`; nothing here knows about engines or tools.
Field order in each class is the wire order.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from .fidelity import json_safe_fidelity

StopReason = Literal["completed", "failed", "aborted", "timeout", "malformed", "auth"]
STOP_REASONS: tuple[str, ...] = get_args(StopReason)
Role = Literal["user", "assistant"]
EventType = Literal["start", "delta", "stop"]
Sender = Literal["parent_agent", "harness", "server"]
MessageType = Literal["session_meta", "model_msg", "event_msg"]
ApprovalDecisionValue = Literal["allow", "deny", "forbidden"]
CompactionReason = Literal["context", "turns", "manual"]
CompactionMode = Literal["summarize", "discard"]
McpStatus = Literal["completed", "failed", "aborted"]


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


def _drop_empty_dict(value: Any) -> Any:
    return None if value == {} else value


def _clean_fidelity(value: Any) -> Any:
    """An empty fidelity is absent; bytes inside it take their JSON-safe form (fidelity.py)."""
    return json_safe_fidelity(_drop_empty_dict(value))


def _drop_empty_list(value: Any) -> Any:
    return None if value == [] else value


# --- session_meta -------------------------------------------------------------------------


class SessionMetaPayload(_Payload):
    session_id: str
    provider: str
    model_id: str
    model_context_window: int | Literal["unknown"]
    system_prompt: str
    agent_state: str
    workspace: str
    source: Literal["subagent", "schedule"] | None = None

    @field_validator("source", mode="before")
    @classmethod
    def _only_known_sources(cls, value: Any) -> Any:
        return value if value in ("subagent", "schedule") else None


# --- complete model payloads --------------------------------------------------------------


class TextPayload(_Payload):
    type: Literal["text"] = "text"
    role: Role
    text: str
    stop_reason: StopReason = "completed"
    fidelity: dict[str, Any] | None = None
    sender: Sender | None = None

    _fidelity = field_validator("fidelity", mode="before")(lambda cls, v: _clean_fidelity(v))

    @field_validator("sender", mode="before")
    @classmethod
    def _user_sender_is_absent(cls, value: Any) -> Any:
        return None if value == "user" else value


class ImageUrlPayload(_Payload):
    type: Literal["image_url"] = "image_url"
    role: Literal["user"] = "user"
    image_url: str
    stop_reason: StopReason = "completed"


class InlineDataPayload(_Payload):
    type: Literal["inline_data"] = "inline_data"
    role: Role
    data: str
    mime_type: str
    stop_reason: StopReason = "completed"
    fidelity: dict[str, Any] | None = None

    _fidelity = field_validator("fidelity", mode="before")(lambda cls, v: _clean_fidelity(v))


class ThinkingPayload(_Payload):
    type: Literal["thinking"] = "thinking"
    role: Literal["assistant"] = "assistant"
    thinking: str
    stop_reason: StopReason = "completed"
    fidelity: dict[str, Any] | None = None

    _fidelity = field_validator("fidelity", mode="before")(lambda cls, v: _clean_fidelity(v))


class InlineThinkingPayload(_Payload):
    type: Literal["inline_thinking"] = "inline_thinking"
    role: Literal["assistant"] = "assistant"
    data: str
    mime_type: str
    stop_reason: StopReason = "completed"
    fidelity: dict[str, Any] | None = None

    _fidelity = field_validator("fidelity", mode="before")(lambda cls, v: _clean_fidelity(v))


class ToolCallPayload(_Payload):
    type: Literal["tool_call"] = "tool_call"
    role: Literal["assistant"] = "assistant"
    name: str
    arguments: str
    tool_call_id: str
    stop_reason: StopReason = "completed"
    fidelity: dict[str, Any] | None = None

    _fidelity = field_validator("fidelity", mode="before")(lambda cls, v: _clean_fidelity(v))


class ToolCallOutputPayload(_Payload):
    type: Literal["tool_call_output"] = "tool_call_output"
    role: Literal["user"] = "user"
    output: str
    images: list[str] | None = None
    tool_call_id: str
    stop_reason: StopReason = "completed"

    _images = field_validator("images", mode="before")(lambda cls, v: _drop_empty_list(v))


# --- streaming partials -------------------------------------------------------------------


class PartialTextPayload(_Payload):
    type: Literal["partial_text"] = "partial_text"
    role: Literal["assistant"] = "assistant"
    event_type: EventType
    text: str = ""
    stop_reason: StopReason = "completed"


class PartialThinkingPayload(_Payload):
    type: Literal["partial_thinking"] = "partial_thinking"
    role: Literal["assistant"] = "assistant"
    event_type: EventType
    thinking: str = ""
    stop_reason: StopReason = "completed"


class PartialToolCallPayload(_Payload):
    type: Literal["partial_tool_call"] = "partial_tool_call"
    role: Literal["assistant"] = "assistant"
    event_type: EventType
    name: str = ""
    arguments: str = ""
    tool_call_id: str
    stop_reason: StopReason = "completed"


class PartialToolCallOutputPayload(_Payload):
    type: Literal["partial_tool_call_output"] = "partial_tool_call_output"
    role: Literal["user"] = "user"
    event_type: EventType
    output: str = ""
    images: list[str] | None = None
    tool_call_id: str
    stop_reason: StopReason = "completed"

    _images = field_validator("images", mode="before")(lambda cls, v: _drop_empty_list(v))


# --- events -------------------------------------------------------------------------------


class TokenCounts(_Payload):
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    total: int = 0


class RequestBeginPayload(_Payload):
    type: Literal["request_begin"] = "request_begin"


class RequestEndPayload(_Payload):
    type: Literal["request_end"] = "request_end"
    status: StopReason
    error_message: str | None = None
    attempt: int | None = None
    retry_in_ms: int | None = None


class ApprovalDecisionPayload(_Payload):
    type: Literal["approval_decision"] = "approval_decision"
    decision: ApprovalDecisionValue
    tool_call_id: str


class TokenCost(_Payload):
    """What a request and the session so far cost, in USD at the model's price (docs/cost.md)."""

    request: float = 0.0
    session: float = 0.0

    @field_validator("request", "session", mode="before")
    @classmethod
    def _finite(cls, value: Any) -> Any:
        return value if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) else 0.0


class TokenUsagePayload(_Payload):
    """The reference's three fields, plus — only when the model's price is known — an extra
    `cost_usd` ({request, session} in USD, written after them; docs/cost.md): an addition the
    reference's readers ignore, kept out of the declared fields so the payload's shape is the
    reference's."""

    model_config = ConfigDict(frozen=True, extra="allow")

    type: Literal["token_usage"] = "token_usage"
    session: TokenCounts
    request: TokenCounts

    @property
    def cost_usd(self) -> TokenCost | None:
        raw = (self.model_extra or {}).get("cost_usd")
        if isinstance(raw, TokenCost):
            return raw
        try:
            return TokenCost.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            return None


class AbortPayload(_Payload):
    """`reason` is serialized even when null (the one nullable wire field)."""

    type: Literal["abort"] = "abort"
    reason: str | None = None


class CompactionBeginPayload(_Payload):
    type: Literal["compaction_begin"] = "compaction_begin"
    reason: CompactionReason
    mode: CompactionMode
    context: int
    turns: int


class CompactionEndPayload(_Payload):
    type: Literal["compaction_end"] = "compaction_end"
    reason: CompactionReason
    mode: CompactionMode
    status: StopReason
    attempt: int | None = None
    error_message: str | None = None


class SubagentPayload(_Payload):
    type: Literal["subagent"] = "subagent"
    session_id: str


class ToolSpec(_Payload):
    name: str
    description: str
    parameters: dict[str, Any] | None = None


class ToolListReadyPayload(_Payload):
    type: Literal["tool_list_ready"] = "tool_list_ready"
    tools: list[ToolSpec]


class McpConnectBeginPayload(_Payload):
    type: Literal["mcp_connect_begin"] = "mcp_connect_begin"
    servers: list[str]


class McpServerResult(_Payload):
    server: str
    transport: Literal["stdio", "http", "sse"]
    status: McpStatus
    duration_ms: int
    tools: int | None = None
    error: str | None = None


class McpConnectEndPayload(_Payload):
    type: Literal["mcp_connect_end"] = "mcp_connect_end"
    status: McpStatus
    results: list[McpServerResult]


class GoalFinishedPayload(_Payload):
    type: Literal["goal_finished"] = "goal_finished"
    outcome: str
    rounds: int
    tokens_used: int


COMPLETE_MODEL_PAYLOADS = (
    TextPayload,
    ImageUrlPayload,
    InlineDataPayload,
    ThinkingPayload,
    InlineThinkingPayload,
    ToolCallPayload,
    ToolCallOutputPayload,
)
PARTIAL_PAYLOADS = (
    PartialTextPayload,
    PartialThinkingPayload,
    PartialToolCallPayload,
    PartialToolCallOutputPayload,
)
EVENT_PAYLOADS = (
    RequestBeginPayload,
    RequestEndPayload,
    ApprovalDecisionPayload,
    TokenUsagePayload,
    AbortPayload,
    CompactionBeginPayload,
    CompactionEndPayload,
    SubagentPayload,
    ToolListReadyPayload,
    McpConnectBeginPayload,
    McpConnectEndPayload,
    GoalFinishedPayload,
)
PAYLOAD_TYPES: dict[str, type[_Payload]] = {
    cls.model_fields["type"].default: cls
    for cls in (*COMPLETE_MODEL_PAYLOADS, *PARTIAL_PAYLOADS, *EVENT_PAYLOADS)
}
MODEL_PAYLOAD_TYPES = frozenset(
    cls.model_fields["type"].default for cls in (*COMPLETE_MODEL_PAYLOADS, *PARTIAL_PAYLOADS)
)
EVENT_PAYLOAD_TYPES = frozenset(cls.model_fields["type"].default for cls in EVENT_PAYLOADS)


def _payload_tag(value: Any) -> str:
    if isinstance(value, dict):
        return value.get("type", "session_meta")
    return getattr(value, "type", "session_meta")


Payload = Annotated[
    Annotated[SessionMetaPayload, Tag("session_meta")]
    | Annotated[TextPayload, Tag("text")]
    | Annotated[ImageUrlPayload, Tag("image_url")]
    | Annotated[InlineDataPayload, Tag("inline_data")]
    | Annotated[ThinkingPayload, Tag("thinking")]
    | Annotated[InlineThinkingPayload, Tag("inline_thinking")]
    | Annotated[ToolCallPayload, Tag("tool_call")]
    | Annotated[ToolCallOutputPayload, Tag("tool_call_output")]
    | Annotated[PartialTextPayload, Tag("partial_text")]
    | Annotated[PartialThinkingPayload, Tag("partial_thinking")]
    | Annotated[PartialToolCallPayload, Tag("partial_tool_call")]
    | Annotated[PartialToolCallOutputPayload, Tag("partial_tool_call_output")]
    | Annotated[RequestBeginPayload, Tag("request_begin")]
    | Annotated[RequestEndPayload, Tag("request_end")]
    | Annotated[ApprovalDecisionPayload, Tag("approval_decision")]
    | Annotated[TokenUsagePayload, Tag("token_usage")]
    | Annotated[AbortPayload, Tag("abort")]
    | Annotated[CompactionBeginPayload, Tag("compaction_begin")]
    | Annotated[CompactionEndPayload, Tag("compaction_end")]
    | Annotated[SubagentPayload, Tag("subagent")]
    | Annotated[ToolListReadyPayload, Tag("tool_list_ready")]
    | Annotated[McpConnectBeginPayload, Tag("mcp_connect_begin")]
    | Annotated[McpConnectEndPayload, Tag("mcp_connect_end")]
    | Annotated[GoalFinishedPayload, Tag("goal_finished")],
    Discriminator(_payload_tag),
]


class OmniMessage(BaseModel):
    """The envelope. `origin` is None for the main Session, never an empty list."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    timestamp: str
    type: MessageType
    payload: Payload
    origin: list[str] | None = Field(default=None)

    _origin = field_validator("origin", mode="before")(lambda cls, v: _drop_empty_list(v))

    @property
    def kind(self) -> str:
        """`payload.type`, or "session_meta" for the meta payload (which has no type)."""
        return _payload_tag(self.payload)
