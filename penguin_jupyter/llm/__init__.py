"""The LLM side: `GenerativeModel` over agenthub's stateful gateway (docs/model.md "Tool-call ids" to docs/model.md).

Re-exports the public names of the README's "The core, from Python" (the model) plus the pieces other layers and tests
use (the translator, the outbound conversion, the side-LLM configs). Imports only `omni`,
`interfaces` and agenthub.
"""

from .classify import classify_error, describe_error
from .config import GenerativeModelConfig
from .limits import effective_max_tokens, estimate_messages_tokens, estimate_text_tokens
from .model import GenerativeModel
from .outbound import group_history, merge_to_uni_message
from .provider import ProviderClient, open_provider
from .side import title_model_config, vision_model_config
from .tool_call_ids import ToolCallIdAllocator, strip_tool_call_id_suffix
from .translator import EventTranslator, usage_to_token_counts

__all__ = [
    "EventTranslator",
    "GenerativeModel",
    "GenerativeModelConfig",
    "ProviderClient",
    "ToolCallIdAllocator",
    "classify_error",
    "describe_error",
    "effective_max_tokens",
    "estimate_messages_tokens",
    "estimate_text_tokens",
    "group_history",
    "merge_to_uni_message",
    "open_provider",
    "strip_tool_call_id_suffix",
    "title_model_config",
    "usage_to_token_counts",
    "vision_model_config",
]
