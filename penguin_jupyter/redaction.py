"""Secret redaction: turning every configured secret into a stable `[redacted:NAME]` placeholder.

Owns the `Secret` (a name and a value), the `Redactor` built from a list of them, the minimum
secret length (`MIN_SECRET_LENGTH`) and the placeholder format. It sits at the bottom of the
package (it imports nothing from it), so the trace writer, the environment's tool close-out, the
session and the notebook all share one definition. *Which* values are secrets (API keys, vault
values, `.env` keys) is `state/secrets.py`'s job; where redaction happens is each caller's.
See docs/security.md.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Values shorter than this are not treated as secrets: a short vault value ("admin", "true", a port
# number) would otherwise blank out ordinary words everywhere. The notebook's streaming hold-back
# uses the same constant (it never sends this many consecutive characters of a secret).
MIN_SECRET_LENGTH = 8
GENERIC_NAME = "secret"
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_. -]")


def placeholder(name: str) -> str:
    """`[redacted:NAME]` (NAME keeps letters, digits, `_`, `.`, `-` and spaces)."""
    safe = _NAME_UNSAFE.sub("_", name).strip() or GENERIC_NAME
    return f"[redacted:{safe}]"


@dataclass(frozen=True)
class Secret:
    """One secret value and the name its placeholder shows (env var, vault key, `<provider> api_key`)."""

    name: str
    value: str


SecretLike = Secret | str | tuple[str, str]


def _as_secret(item: Any) -> Secret | None:
    if isinstance(item, Secret):
        return item
    if isinstance(item, str):
        return Secret(GENERIC_NAME, item)
    if isinstance(item, tuple) and len(item) == 2 and all(isinstance(x, str) for x in item):
        return Secret(item[0], item[1])
    return None


def is_secret_value(value: object) -> bool:
    """True for a string long enough to be treated as a secret (see `MIN_SECRET_LENGTH`)."""
    return isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LENGTH


class Redactor:
    """Replaces every usable secret, longest first, by its placeholder.

    `text()` replaces the raw value and its JSON-escaped form (a secret inside a JSON string,
    e.g. tool-call arguments); `markup()` also the HTML-escaped forms. `value()` walks dicts,
    lists and tuples. Calling the redactor is `text()`. Values shorter than `MIN_SECRET_LENGTH`
    are ignored; when two names share a value the first one given wins.
    """

    def __init__(self, secrets: Iterable[SecretLike] = ()) -> None:
        by_value: dict[str, Secret] = {}
        for item in secrets:
            secret = _as_secret(item)
            if secret is None or not is_secret_value(secret.value) or secret.value in by_value:
                continue
            by_value[secret.value] = secret
        self.secrets: tuple[Secret, ...] = tuple(sorted(by_value.values(), key=lambda s: -len(s.value)))
        self._text = self._compile(lambda v: {v, json.dumps(v, ensure_ascii=False)[1:-1]})
        self._markup = self._compile(
            lambda v: {
                v,
                json.dumps(v, ensure_ascii=False)[1:-1],
                json.dumps(v)[1:-1],
                html.escape(v),
                html.escape(v, quote=False),
            }
        )

    def _compile(self, forms_of: Callable[[str], set[str]]) -> tuple[re.Pattern[str], dict[str, str]] | None:
        replacement: dict[str, str] = {}
        for secret in self.secrets:
            for form in forms_of(secret.value):
                if len(form) >= MIN_SECRET_LENGTH:
                    replacement.setdefault(form, placeholder(secret.name))
        if not replacement:
            return None
        ordered = sorted(replacement, key=len, reverse=True)
        return re.compile("|".join(re.escape(form) for form in ordered)), replacement

    # --- queries -------------------------------------------------------------------------------

    @property
    def values(self) -> list[str]:
        """The raw secret values (longest first), e.g. for a streaming hold-back."""
        return [s.value for s in self.secrets]

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def __len__(self) -> int:
        return len(self.secrets)

    def found_in(self, text: str) -> bool:
        """True when any form of any secret occurs in `text`."""
        return self._markup is not None and self._markup[0].search(text) is not None

    # --- redaction -----------------------------------------------------------------------------

    def text(self, text: str) -> str:
        return _apply(self._text, text)

    __call__ = text

    def markup(self, text: str) -> str:
        """Rendered output (HTML, JSON text): the raw, JSON-escaped and HTML-escaped forms."""
        return _apply(self._markup, text)

    def value(self, value: Any) -> Any:
        """A copy of `value` with every string (dict keys too) redacted; other leaves as they are.

        A base64 `data:` URL (an image) is left alone: a secret cannot occur in it as such, and a
        coincidental match would corrupt the image."""
        if self._text is None:
            return value
        return self._value(value)

    def _value(self, value: Any) -> Any:
        if isinstance(value, str):
            if value.startswith("data:") and ";base64," in value[:100]:
                return value
            return self.text(value)
        if isinstance(value, Mapping):
            return {self._value(k): self._value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._value(item) for item in value]
        return value


def _apply(compiled: tuple[re.Pattern[str], dict[str, str]] | None, text: str) -> str:
    if compiled is None or not text:
        return text
    pattern, replacement = compiled
    return pattern.sub(lambda match: replacement[match.group(0)], text)


EMPTY = Redactor()  # no secrets: every method returns its input


__all__ = [
    "EMPTY",
    "MIN_SECRET_LENGTH",
    "Redactor",
    "Secret",
    "SecretLike",
    "is_secret_value",
    "placeholder",
]
