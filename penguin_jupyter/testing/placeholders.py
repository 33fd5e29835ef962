"""`{{match:REGEX}}` in scripted tool-call arguments: values the script cannot know in advance.

A script is written before it runs, but some arguments depend on what the harness answered — the
id of a notebook cell the previous call inserted, say. A placeholder `{{match:REGEX}}` in a tool
call's arguments is replaced, when the entry is served, by the first capture group of REGEX
searched in the request's message texts, newest first. No match leaves the placeholder as written (the
call then fails visibly in the test). Owns nothing else.
"""

from __future__ import annotations

import json
import re
from typing import Any

PLACEHOLDER = re.compile(r"\{\{match:(.+?)\}\}")


def _message_texts(request: dict[str, Any]) -> list[str]:
    texts = []
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        if isinstance(content, str):
            texts.append(content)
    return texts[::-1]


def resolve(arguments: str, request: dict[str, Any], texts: list[str] | None = None) -> str:
    """`arguments` with every placeholder replaced (JSON-escaped) where its pattern matches.

    `texts` are the history's message texts newest first (each protocol knows where its texts
    live); without them the Chat Completions `messages` are read.
    """
    if "{{match:" not in arguments:
        return arguments
    if texts is None:
        texts = _message_texts(request)

    def replace(found: re.Match[str]) -> str:
        pattern = re.compile(json.loads(f'"{found.group(1)}"'))
        for text in texts:
            hit = pattern.search(text)
            if hit:
                return json.dumps(hit.group(1) if hit.groups() else hit.group(0))[1:-1]
        return found.group(0)

    return PLACEHOLDER.sub(replace, arguments)
