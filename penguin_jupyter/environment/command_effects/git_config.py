"""The git configuration a folder controls (docs/security.md "What a rule covers", git).

Owns `read_config(path)`: one repository config file read the safe way — a regular file (no
symlink, device or FIFO), at most `MAX_CONFIG_BYTES`, parsed with git's grammar (sections,
`[section "sub"]`, keys on a header's line, quoting, escapes, continuation lines) — and which of
its keys let git run a program or read a file the folder names (`RISKY_SECTIONS`, `RISKY_KEYS`:
from git-config(1)). The answer is cached per (path, device, inode, size, mtime). Anything it
cannot read or parse is a finding too: unknown means the rule does not cover it.

Finding the repository a command runs in is `git_repository.py`'s; the user's own configuration
(`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`, `/etc/gitconfig`) is the user's and is not read.
"""

from __future__ import annotations

import os
import stat

MAX_CONFIG_BYTES = 1 << 20
_MAX_CACHED = 256
_SPACE = " \t\r\f\v"
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0", ""})

# Sections every key of which can run a program, read a file or pull in more configuration.
RISKY_SECTIONS: dict[str, str] = {
    "include": "includes another config file",
    "includeif": "includes another config file",
    "alias": "defines command aliases (`!` runs a shell)",
    "filter": "a filter driver runs a program on file contents",
    "difftool": "runs a diff tool",
    "mergetool": "runs a merge tool",
    "gpg": "runs a signing program",
    "credential": "runs a credential helper",
    "man": "runs a manual viewer",
    "browser": "runs a browser",
    "help": "runs a browser or an autocorrected command",
    "sendemail": "runs a mail program",
    "trailer": "runs a trailer command",
    "trace2": "writes trace files",
    "imap": "runs a tunnel command",
    "uploadpack": "runs a pack-objects hook",
}
# (section, key) for the key in any subsection or none (`diff.<driver>.textconv`, `diff.external`).
RISKY_KEYS: dict[tuple[str, str], str] = {
    ("core", "fsmonitor"): "runs a file-system monitor program",
    ("core", "pager"): "runs a pager",
    ("core", "editor"): "runs an editor",
    ("core", "sshcommand"): "runs an ssh command",
    ("core", "askpass"): "runs a password prompt program",
    ("core", "hookspath"): "runs hooks from another folder",
    ("core", "gitproxy"): "runs a proxy command",
    ("core", "alternaterefscommand"): "runs a command for alternate refs",
    ("core", "worktree"): "points git at another folder",
    ("core", "excludesfile"): "names a file git reads",
    ("core", "attributesfile"): "names a file git reads",
    ("sequence", "editor"): "runs an editor",
    ("diff", "external"): "runs an external diff program",
    ("diff", "textconv"): "runs a text conversion program",
    ("diff", "command"): "runs a diff driver",
    ("diff", "orderfile"): "names a file git reads",
    ("merge", "driver"): "runs a merge driver",
    ("merge", "tool"): "runs a merge tool",
    ("interactive", "difffilter"): "runs a diff filter",
    ("web", "browser"): "runs a browser",
    ("submodule", "update"): "runs a submodule update command",
    ("remote", "uploadpack"): "runs an upload-pack program",
    ("remote", "receivepack"): "runs a receive-pack program",
    ("remote", "vcs"): "runs a remote helper",
    ("blame", "ignorerevsfile"): "names a file git reads",
    ("commit", "template"): "names a file git reads",
    ("mailmap", "file"): "names a file git reads",
    ("mailmap", "blob"): "names a mailmap git reads",
    ("log", "showsignature"): "runs the signature program",
}
# Sections whose keys run a program unless their value is a boolean (`pager.log = false`).
RISKY_UNLESS_BOOLEAN_SECTIONS: dict[str, str] = {"pager": "runs a pager"}
# Keys whose boolean values run nothing (`core.fsmonitor = true` is git's own daemon).
_BOOLEAN_SAFE = frozenset({("core", "fsmonitor")})

Entry = tuple[str, str | None, str, str | None]  # section, subsection, key, value (None: bare key)
_cache: dict[tuple[str, int, int, int, int], tuple[str, ...]] = {}


class ConfigSyntaxError(ValueError):
    pass


def _value(text: str, i: int) -> tuple[str, int]:
    """A value from `text[i]` (after `=`) to its end of line, as git-config(1) reads it."""
    out: list[str] = []
    quoted, pending_space = False, ""
    while i < len(text):
        c = text[i]
        i += 1
        if c == "\n":
            if quoted:
                raise ConfigSyntaxError("newline in a quoted value")
            break
        if not quoted and c in "#;":
            i = _end_of_line(text, i)
            break
        if not quoted and c in _SPACE:
            pending_space += c if any(out) else ""
            continue
        out.append(pending_space)
        pending_space = ""
        if c == "\\":
            if i >= len(text):
                raise ConfigSyntaxError("a value ends in a backslash")
            escaped = text[i]
            i += 1
            if escaped == "\n":
                continue
            if escaped not in 'tbn"\\':
                raise ConfigSyntaxError("unknown escape in a value")
            out.append({"t": "\t", "b": "\b", "n": "\n"}.get(escaped, escaped))
        elif c == '"':
            quoted = not quoted
        else:
            out.append(c)
    if quoted:
        raise ConfigSyntaxError("unterminated quote")
    return "".join(out), i


def _end_of_line(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end + 1


def _header(text: str, i: int) -> tuple[str, str | None, int]:
    """`[section]`, `[section "sub"]` or `[section.sub]` from `text[i]` (after `[`)."""
    start = i
    while i < len(text) and (text[i].isascii() and (text[i].isalnum() or text[i] in "-.")):
        i += 1
    name = text[start:i].lower()
    if not name:
        raise ConfigSyntaxError("empty section name")
    if i < len(text) and text[i] == "]":
        section, _, dotted = name.partition(".")
        return section, (dotted or None), i + 1
    while i < len(text) and text[i] in " \t":
        i += 1
    if i >= len(text) or text[i] != '"' or "." in name:
        raise ConfigSyntaxError("bad section header")
    i += 1
    sub: list[str] = []
    while i < len(text) and text[i] != '"':
        if text[i] == "\n":
            raise ConfigSyntaxError("newline in a section header")
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        sub.append(text[i])
        i += 1
    if i + 1 >= len(text) or text[i + 1] != "]":
        raise ConfigSyntaxError("bad section header")
    return name, "".join(sub), i + 2


def parse_config(text: str) -> list[Entry]:
    """Every key of a git config text; ConfigSyntaxError where git's grammar is not followed."""
    entries: list[Entry] = []
    section: tuple[str, str | None] | None = None
    i = 1 if text.startswith("\ufeff") else 0
    while i < len(text):
        c = text[i]
        if c == "\n" or c in _SPACE:
            i += 1
        elif c in "#;":
            i = _end_of_line(text, i)
        elif c == "[":
            name, sub, i = _header(text, i + 1)
            section = (name, sub)
        elif c.isascii() and c.isalpha():
            start = i
            while i < len(text) and text[i].isascii() and (text[i].isalnum() or text[i] == "-"):
                i += 1
            key = text[start:i].lower()
            while i < len(text) and text[i] in " \t":
                i += 1
            if section is None:
                raise ConfigSyntaxError("a key before any section")
            if i < len(text) and text[i] == "=":
                value, i = _value(text, i + 1)
                entries.append((*section, key, value))
            elif i >= len(text) or text[i] in "\n#;\r":
                entries.append((*section, key, None))
            else:
                raise ConfigSyntaxError(f"bad line after {key}")
        else:
            raise ConfigSyntaxError("a line git cannot read")
    return entries


def _risk(entry: Entry) -> str | None:
    section, sub, key, value = entry
    name = f"{section}.{sub + '.' if sub is not None else ''}{key}"
    boolean = value is None or value.strip().lower() in _TRUE | _FALSE
    if section in RISKY_SECTIONS:
        return f"{name} ({RISKY_SECTIONS[section]})"
    if section in RISKY_UNLESS_BOOLEAN_SECTIONS and not boolean:
        return f"{name} ({RISKY_UNLESS_BOOLEAN_SECTIONS[section]})"
    if (section, key) in RISKY_KEYS and not ((section, key) in _BOOLEAN_SAFE and boolean):
        return f"{name} ({RISKY_KEYS[section, key]})"
    return None


def risky_keys(text: str) -> tuple[str, ...]:
    """The keys of a config text that run a program or read a file the folder names."""
    try:
        entries = parse_config(text)
    except ConfigSyntaxError as exc:
        return (f"a line git reads differently from penguin ({exc})",)
    return tuple(found for entry in entries if (found := _risk(entry)) is not None)


def read_config(path: str) -> tuple[str, ...]:
    """The findings of one config file ((): none, or it does not exist); cached."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return ()
    except OSError as exc:
        return (f"cannot read it ({type(exc).__name__})",)
    key = (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    found = _read_uncached(path, info)
    while len(_cache) >= _MAX_CACHED:
        _cache.pop(next(iter(_cache)))
    _cache[key] = found
    return found


def _read_uncached(path: str, info: os.stat_result) -> tuple[str, ...]:
    if not stat.S_ISREG(info.st_mode):
        return ("it is not a regular file",)
    if info.st_size > MAX_CONFIG_BYTES:
        return (f"it is larger than {MAX_CONFIG_BYTES} bytes",)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return (f"cannot read it ({type(exc).__name__})",)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            return ("it is not a regular file",)
        data = os.read(fd, MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        return (f"cannot read it ({type(exc).__name__})",)
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        return (f"it is larger than {MAX_CONFIG_BYTES} bytes",)
    return risky_keys(data.decode("utf-8", errors="replace"))
