"""Today's spend on models, kept under the data root and shared by every kernel of the user
(docs/cost.md "Today's spend").

Owns one private JSON file a day, `<data root>/spend/<YYYY-MM-DD>.json` (local date):
`{"spent_usd": …, "requests": …, "unpriced_requests": …, "reserved": {ticket: {usd, pid}}}`,
read and written under the file's cross-process lock (`file_lock.exclusive`). A request about
to be sent *reserves* its estimated cost (`reserve`: admitted only when today's spend plus every
live reservation plus the estimate stays within the cap), so two kernels sending at once cannot
both slip under a shared daily cap; when it completes, its reservation is replaced by what it
cost (`settle`), or dropped when it never completed (`release`). A reservation whose process
is gone is ignored. A file that cannot be read counts as spend unknown: a cap then refuses
(fails closed). Which caps apply is the caller's (`penguin_jupyter.spending`).
"""

from __future__ import annotations

import json
import math
import os
import secrets
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TypedDict

from ..private_files import UnsafePathError, read_private_text
from .file_lock import exclusive
from .toml_writer import write_private_file

SPEND_DIR = "spend"
MAX_LEDGER_BYTES = 1_000_000


class _Reservation(TypedDict):
    usd: float
    pid: int


class _Ledger(TypedDict):
    spent_usd: float
    requests: int
    unpriced_requests: int
    reserved: dict[str, _Reservation]


class LedgerUnreadable(OSError):
    """Today's ledger exists but cannot be used; `str()` is the one line (it names the file)."""


@dataclass(frozen=True)
class DaySpend:
    day: str
    spent_usd: float
    requests: int
    unpriced_requests: int
    reserved_usd: float


def ledger_path(root: Path, day: date | None = None) -> Path:
    return root / SPEND_DIR / f"{(day or date.today()).isoformat()}.json"


def _empty() -> _Ledger:
    return {"spent_usd": 0.0, "requests": 0, "unpriced_requests": 0, "reserved": {}}


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def _read(path: Path) -> _Ledger:
    try:
        if path.stat().st_size > MAX_LEDGER_BYTES:
            raise LedgerUnreadable(f"today's spend ledger {path} is larger than {MAX_LEDGER_BYTES} bytes")
        text = read_private_text(path)
    except FileNotFoundError:
        return _empty()
    except (UnsafePathError, OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, LedgerUnreadable):
            raise
        raise LedgerUnreadable(f"today's spend ledger {path} cannot be read ({exc})") from None
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):
        raise LedgerUnreadable(f"today's spend ledger {path} is not valid JSON") from None
    spent = _number(raw.get("spent_usd")) if isinstance(raw, dict) else None
    if not isinstance(raw, dict) or spent is None:
        raise LedgerUnreadable(f"today's spend ledger {path} has no valid spent_usd")
    ledger = _empty()
    ledger["spent_usd"] = spent
    for key in ("requests", "unpriced_requests"):
        count = raw.get(key)
        ledger[key] = count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else 0
    reserved = raw.get("reserved")
    if isinstance(reserved, dict):
        for ticket, entry in reserved.items():
            usd = _number(entry.get("usd")) if isinstance(entry, dict) else None
            pid = entry.get("pid") if isinstance(entry, dict) else None
            if usd is not None and isinstance(pid, int) and not isinstance(pid, bool):
                ledger["reserved"][str(ticket)] = {"usd": usd, "pid": pid}
    return ledger


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True


def _live_reservations(ledger: _Ledger) -> dict[str, _Reservation]:
    return {ticket: entry for ticket, entry in ledger["reserved"].items() if _alive(entry["pid"])}


def _write(path: Path, ledger: _Ledger) -> None:
    write_private_file(path, json.dumps(ledger, separators=(",", ":")) + "\n")


def today(root: Path) -> DaySpend:
    """Today's spend (completed requests) and what in-flight requests have reserved."""
    path = ledger_path(root)
    with exclusive(path):
        ledger = _read(path)
    live = _live_reservations(ledger)
    return DaySpend(
        path.stem,
        ledger["spent_usd"],
        ledger["requests"],
        ledger["unpriced_requests"],
        sum(entry["usd"] for entry in live.values()),
    )


def reserve(root: Path, usd: float, cap_usd: float | None) -> tuple[str | None, DaySpend]:
    """Reserve `usd` for a request about to be sent: (ticket, today) when admitted — within
    `cap_usd` counting every live reservation, or no cap — else (None, today)."""
    path = ledger_path(root)
    with exclusive(path):
        ledger = _read(path)
        ledger["reserved"] = _live_reservations(ledger)
        reserved = sum(entry["usd"] for entry in ledger["reserved"].values())
        spend = DaySpend(
            path.stem, ledger["spent_usd"], ledger["requests"], ledger["unpriced_requests"], reserved
        )
        if cap_usd is not None and ledger["spent_usd"] + reserved + usd > cap_usd:
            return None, spend
        ticket = f"{os.getpid()}-{secrets.token_hex(4)}"
        ledger["reserved"][ticket] = {"usd": usd, "pid": os.getpid()}
        _write(path, ledger)
    return ticket, spend


def settle(root: Path, ticket: str | None, usd: float | None, day: str | None = None) -> None:
    """A request completed: drop its reservation and add what it cost (None: price unknown,
    counted as an unpriced request). `day` is the ledger the ticket was reserved in."""
    path = ledger_path(root, date.fromisoformat(day) if day else None)
    with exclusive(path):
        ledger = _read(path)
        if ticket is not None:
            ledger["reserved"].pop(ticket, None)
        ledger["requests"] += 1
        if usd is None:
            ledger["unpriced_requests"] += 1
        else:
            ledger["spent_usd"] += usd
        _write(path, ledger)


def release(root: Path, ticket: str, day: str | None = None) -> None:
    """A reserved request that did not complete: its reservation goes (its cost is unknown)."""
    path = ledger_path(root, date.fromisoformat(day) if day else None)
    with exclusive(path):
        ledger = _read(path)
        if ledger["reserved"].pop(ticket, None) is not None:
            _write(path, ledger)
