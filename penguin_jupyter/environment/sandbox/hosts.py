"""Which hosts a sandboxed command may reach: the allowlist's grammar and matching.

Owns reading a host entry (`pypi.org`, `*.pythonhosted.org`, `example.com:8443`, an IP literal)
into a `HostRule`, the one-line error for a bad one, and `allows(rules, host, port)`: a name
matches exactly (case-insensitive, a trailing dot ignored) or, for `*.suffix`, any name strictly
under the suffix; an entry without a port allows 80 and 443 only. Who lists hosts (the project
config, the model's `network_hosts`, the card's click) and where the check runs (the proxy,
`proxy.py`) are others' business.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_PORTS = (80, 443)
_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")
MAX_HOSTS = 64


class BadHost(ValueError):
    """A host entry that cannot be used; the message is the one line to show."""


@dataclass(frozen=True)
class HostRule:
    host: str  # lower-case name without a trailing dot, or an IP literal; `*.x` for a suffix
    port: int | None = None  # None: 80 and 443

    def text(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return shown if self.port is None else f"{shown}:{self.port}"

    def matches(self, host: str, port: int) -> bool:
        if port not in ((self.port,) if self.port is not None else DEFAULT_PORTS):
            return False
        name = normal_host(host)
        if self.host.startswith("*."):
            return name.endswith(self.host[1:]) and len(name) > len(self.host) - 1
        return name == self.host


def normal_host(host: str) -> str:
    """Lower case, no trailing dot, no IPv6 brackets."""
    return host.strip().strip("[]").rstrip(".").lower()


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(normal_host(host))
    except ValueError:
        return False
    return True


def parse_host(entry: object) -> HostRule:
    """One allowlist entry; raises BadHost naming what is wrong."""
    if not isinstance(entry, str) or not entry.strip():
        raise BadHost(f"a host must be a non-empty string, got {entry!r}")
    text = entry.strip()
    if "/" in text or "@" in text or text.lower().startswith(("http:", "https:")):
        raise BadHost(f"{text!r} is not a host name (write pypi.org, not a URL)")
    host, port = _split_port(text)
    name = normal_host(host)
    if is_ip_literal(name):
        return HostRule(str(ipaddress.ip_address(name)), port)
    labels = name[2:].split(".") if name.startswith("*.") else name.split(".")
    if not name or not all(_LABEL.match(label) for label in labels):
        raise BadHost(f"{text!r} is not a host name (letters, digits, '-' and '.', or *.example.com)")
    if name.startswith("*.") and len(labels) < 2:
        raise BadHost(f"{text!r} is too wide: a wildcard needs a domain with a dot (*.example.com)")
    return HostRule(name, port)


def _split_port(text: str) -> tuple[str, int | None]:
    if text.startswith("["):  # [::1]:8080
        host, _, rest = text[1:].partition("]")
        return host, _port(rest[1:], text) if rest.startswith(":") else None
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        return host, _port(port, text)
    return text, None


def _port(value: str, text: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= 65535:
        raise BadHost(f"{text!r} has a bad port (1-65535)")
    return int(value)


def parse_hosts(entries: Iterable[object]) -> tuple[HostRule, ...]:
    rules = tuple(dict.fromkeys(parse_host(entry) for entry in entries))
    if len(rules) > MAX_HOSTS:
        raise BadHost(f"at most {MAX_HOSTS} hosts, got {len(rules)}")
    return rules


def allows(rules: Iterable[HostRule], host: str, port: int) -> bool:
    return any(rule.matches(host, port) for rule in rules)


def not_covered(asked: Iterable[HostRule], allowed: Iterable[HostRule]) -> tuple[HostRule, ...]:
    """The asked entries the allowed ones do not cover (an asked `*.x` is covered only by the
    same or a wider wildcard; ports must match)."""
    allowed = tuple(allowed)
    return tuple(rule for rule in asked if not any(_covers(wide, rule) for wide in allowed))


def _covers(wide: HostRule, narrow: HostRule) -> bool:
    if wide.port != narrow.port:
        return False
    if wide.host == narrow.host:
        return True
    if not wide.host.startswith("*."):
        return False
    return narrow.host.endswith(wide.host[1:]) and len(narrow.host) > len(wide.host) - 1
