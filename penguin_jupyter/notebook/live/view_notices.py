"""The notice texts of a running Task, written once for the live and the plain view.

Owns the words of the event notices a reader should see (failed requests and their retries,
compaction, MCP connects, interrupts) and their tone. Styling them is each view's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...omni import (
    AbortPayload,
    CompactionBeginPayload,
    CompactionEndPayload,
    McpConnectBeginPayload,
    McpConnectEndPayload,
    RequestEndPayload,
)
from ..transcript.transcript_model import request_label

Tone = Literal["info", "warning", "error"]


@dataclass(frozen=True)
class Notice:
    text: str
    tone: Tone


def _detail(error_message: str | None) -> str:
    return f": {error_message}" if error_message else ""


def interrupted_text(reason: str | None) -> str:
    return f"interrupted ({reason})" if reason else "interrupted"


def retry_prefix(payload: RequestEndPayload) -> str:
    """`request failed: <error> — attempt N, retrying` (the countdown follows it)."""
    return f"{request_label(payload.status)}{_detail(payload.error_message)} — attempt {payload.attempt}, retrying"


def retry_text(payload: RequestEndPayload, seconds_left: float) -> str:
    prefix = retry_prefix(payload)
    return f"{prefix} in {max(seconds_left, 0):.0f}s" if seconds_left > 0 else f"{prefix} now"


def _mcp_end_text(payload: McpConnectEndPayload) -> str:
    parts = [
        f"{r.server} {r.status}" + (f" ({r.tools} tools)" if r.tools is not None else "")
        for r in payload.results
    ]
    return f"MCP connect {payload.status}" + (": " + ", ".join(parts) if parts else "")


def notice_for(payload: object) -> Notice | None:
    """The notice for an event payload; None for events a reader need not see."""
    if isinstance(payload, RequestEndPayload):
        if payload.status == "completed":
            return None
        if payload.retry_in_ms is not None:
            return Notice(retry_text(payload, payload.retry_in_ms / 1000), "warning")
        return Notice(f"{request_label(payload.status)}{_detail(payload.error_message)}", "error")
    if isinstance(payload, CompactionBeginPayload):
        return Notice(f"compacting context ({payload.reason}, {payload.mode})…", "info")
    if isinstance(payload, CompactionEndPayload):
        tone: Tone = "info" if payload.status == "completed" else "error"
        return Notice(f"compaction {payload.status}{_detail(payload.error_message)}", tone)
    if isinstance(payload, McpConnectBeginPayload):
        return Notice(f"connecting MCP servers: {', '.join(payload.servers)}…", "info")
    if isinstance(payload, McpConnectEndPayload):
        return Notice(_mcp_end_text(payload), "info")
    if isinstance(payload, AbortPayload):
        return Notice(interrupted_text(payload.reason), "warning")
    return None
