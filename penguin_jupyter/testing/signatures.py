"""Opaque provider tokens the scripted server issues and later checks: thinking signatures,
redacted-thinking data, `encrypted_content` and Gemini `thoughtSignature`s.

Owns the token format only: a binary blob (deliberately not valid UTF-8, as real Gemini
signatures are not) carrying a random nonce and an HMAC over its kind, the nonce and an optional
binding (say, the thinking text it signs). A token echoed back unchanged verifies; any edit —
to the token or to what it is bound to — does not. Which tokens a request must echo is the
protocol's rule (`protocols/`); the HMAC key is fixed so a second server (a resumed session
against a fresh server) accepts the first one's tokens, as a real provider does.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os

_KEY = b"penguin-jupyter scripted model server"
_MAGIC = b"\x8fPJ"  # 0x8f first: a decoder that assumes UTF-8 fails at byte 0, as with Gemini
_NONCE = 8
_MAC = 16


def _mac(kind: str, nonce: bytes, binding: str) -> bytes:
    message = kind.encode() + b"\x00" + nonce + b"\x00" + binding.encode("utf-8", "surrogatepass")
    return hmac.new(_KEY, message, hashlib.sha256).digest()[:_MAC]


def issue_bytes(kind: str, binding: str = "") -> bytes:
    """A fresh token of `kind` bound to `binding`, as raw bytes."""
    nonce = os.urandom(_NONCE)
    return _MAGIC + nonce + _mac(kind, nonce, binding)


def issue(kind: str, binding: str = "") -> str:
    """A fresh token as standard base64 text (how every protocol puts it on the wire)."""
    return base64.b64encode(issue_bytes(kind, binding)).decode("ascii")


def verify(kind: str, token: object, binding: str = "") -> bool:
    """True when `token` (base64 text) is one this server issued for `kind` and `binding`."""
    if not isinstance(token, str) or not token:
        return False
    try:
        raw = base64.b64decode(token.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        try:  # Gemini clients may send the URL-safe alphabet
            raw = base64.urlsafe_b64decode(token.encode("ascii"))
        except (binascii.Error, UnicodeEncodeError, ValueError):
            return False
    if len(raw) != len(_MAGIC) + _NONCE + _MAC or not raw.startswith(_MAGIC):
        return False
    nonce = raw[len(_MAGIC) : len(_MAGIC) + _NONCE]
    return hmac.compare_digest(raw[len(_MAGIC) + _NONCE :], _mac(kind, nonce, binding))
