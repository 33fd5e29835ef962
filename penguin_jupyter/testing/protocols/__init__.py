"""The wire protocols the scripted model server speaks, one module each (see `base.Protocol`).

`PROTOCOLS` is the routing order; `protocol_for(path)` picks the one a POST goes to.
"""

from __future__ import annotations

from .anthropic import AnthropicMessages
from .base import Exchange, Ledger, Protocol, Rejection
from .chat import ChatCompletions
from .gemini import GeminiGenerateContent
from .responses import Responses

PROTOCOLS: tuple[Protocol, ...] = (
    ChatCompletions(),
    Responses(),
    AnthropicMessages(),
    GeminiGenerateContent(),
)
PROTOCOL_NAMES = tuple(protocol.name for protocol in PROTOCOLS)


def protocol_for(path: str) -> Protocol | None:
    for protocol in PROTOCOLS:
        if protocol.matches(path):
            return protocol
    return None


__all__ = ["PROTOCOLS", "PROTOCOL_NAMES", "Exchange", "Ledger", "Protocol", "Rejection", "protocol_for"]
