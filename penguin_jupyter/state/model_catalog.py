"""Models a user can name without configuring them: agenthub's catalogue of supported models.

Owns turning `(provider, model_id)` into a ModelEntry when the project config has no entry
for it but agenthub knows the model id (context window, image input). Credentials then come
from the provider's environment variables, as for any entry without an inline key. The
project config always wins; this is only the out-of-the-box fallback.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from .project_config import ModelEntry


@cache
def _catalogue() -> dict[str, dict[str, Any]]:
    try:
        from agenthub import list_supported_models
    except ImportError:
        return {}
    entries: dict[str, dict[str, Any]] = {}
    for item in list_supported_models():
        if "Text" in item.get("output_modalities", ()):
            entries.setdefault(item["model"], dict(item))
    return entries


def catalogue_entry(provider: str, model_id: str) -> ModelEntry | None:
    """A ModelEntry for a model agenthub supports, or None when it does not know `model_id`."""
    item = _catalogue().get(model_id)
    if item is None:
        return None
    return ModelEntry(
        provider=provider,
        model_id=model_id,
        context_window=item.get("context_window"),
        vision="Image" in item.get("input_modalities", ()),
    )

