"""Whether a Jupyter server's pages are hardened against what a sandboxed kernel publishes
(docs/security.md "The sandboxed kernel", "Is the browser hardened").

Owns the judgement, pure: a Content-Security-Policy header and the page config's disabled
extensions in, `None` (hardened) or the one line why not out. Hardened means: the policy lets
no script in but the server's own files — no `'unsafe-inline'`, no `'nonce-…'` (a fixed header's
nonce is known to any output), no `'strict-dynamic'`, no `data:` (a `<script src="data:…">` is
inline script) — and no fetch directive lets anything load from another host (a host, `*`, a
scheme such as `https:`, or no directive at all); `@jupyterlab/javascript-extension` (which
evaluates `application/javascript` outputs) is disabled; the server hands out scripts only from
its static files (`script_guard.py`: else `script-src 'self'` runs a `/files/x.js` the kernel
wrote); and penguin's labextension, with its guard against `<meta http-equiv="refresh">` (which
no CSP directive stops: labextension/src/no_refresh.ts), is installed and not disabled. A
source this module does not know is not hardened. Reading the server (its headers, its page config) is the provisioner's
(`provisioner.py`); what the kernel does with the verdict is the notebook's
(`notebook/runtime/sandbox_approval.py`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

JS_EXTENSION = "@jupyterlab/javascript-extension"
JS_PLUGIN = f"{JS_EXTENSION}:factory"
CSP_HEADER = "Content-Security-Policy"
LABEXTENSION = "penguin-jupyter"
NO_REFRESH_PLUGIN = f"{LABEXTENSION}:no-declarative-refresh"  # labextension/src/no_refresh.ts
SCRIPT_GUARD = "penguin_jupyter.kernel_sandbox.script_guard"  # the server extension (script_guard.py)

# each fetch directive and what it falls back to when absent (CSP level 3)
_FALLBACKS = {
    "script-src-elem": ("script-src", "default-src"),
    "script-src-attr": ("script-src", "default-src"),
    "style-src-elem": ("style-src", "default-src"),
    "style-src-attr": ("style-src", "default-src"),
    "img-src": ("default-src",),
    "connect-src": ("default-src",),
    "font-src": ("default-src",),
    "media-src": ("default-src",),
    "object-src": ("default-src",),
    "manifest-src": ("default-src",),
    "frame-src": ("child-src", "default-src"),
    "worker-src": ("child-src", "script-src", "default-src"),
}
_SCRIPT = ("script-src-elem", "script-src-attr", "worker-src")
_LOCAL = {"'self'", "'none'", "'unsafe-eval'", "'wasm-unsafe-eval'", "'report-sample'", "'unsafe-hashes'", "data:", "blob:"}
_HASH = re.compile(r"'sha(256|384|512)-[A-Za-z0-9+/_=-]+'")
_NAME = re.compile(r"[a-z0-9-]+")
_STYLE_ONLY = re.compile(r"'unsafe-inline'|'nonce-[A-Za-z0-9+/_=-]+'")  # outside script: no load from elsewhere
_NOT_IN_SCRIPT = {
    "'unsafe-inline'": "inline script",
    "'strict-dynamic'": "scripts its scripts add",
    "data:": "data: scripts",
}


def judge(
    policy: object, disabled_extensions: Collection[str], *, script_guard: bool, page_guards: Collection[str]
) -> str | None:
    """None when a page with this policy and these disabled extensions, served by a server whose
    script guard is loaded (or not), with penguin's labextension declaring `page_guards`
    (package.json `penguin.pageGuards`; empty when it is not installed), is hardened, else why
    not (one line)."""
    disabled = set(disabled_extensions)
    reason = policy_reason(policy)
    if reason is None and not {JS_EXTENSION, JS_PLUGIN} & disabled:
        reason = f"{JS_EXTENSION} is enabled (it runs application/javascript outputs)"
    if reason is None and script_guard is not True:
        reason = f"it serves the notebook folder's files as scripts (load the server extension {SCRIPT_GUARD})"
    if reason is None and NO_REFRESH_PLUGIN not in page_guards:
        reason = f"penguin's labextension with {NO_REFRESH_PLUGIN} is not installed (an output's meta refresh navigates the page)"
    if reason is None and {LABEXTENSION, NO_REFRESH_PLUGIN} & disabled:
        reason = f"{NO_REFRESH_PLUGIN} is disabled (an output's meta refresh navigates the page)"
    return reason


def policy_reason(policy: object) -> str | None:
    """Why a page with this Content-Security-Policy header value may run or load what a kernel
    publishes, or None. A header holding several policies (commas) is hardened when one is."""
    if policy is None or policy == "":
        return f"its pages have no {CSP_HEADER}"
    if not isinstance(policy, str) or not policy.isascii() or not policy.isprintable():
        return f"its {CSP_HEADER} is not a header value this check can read"
    reasons = [_one_policy_reason(part) for part in policy.split(",")]
    return None if None in reasons else reasons[0]


def _one_policy_reason(policy: str) -> str | None:
    directives: dict[str, list[str]] = {}
    for directive in policy.split(";"):
        words = directive.lower().split()
        if words and _NAME.fullmatch(words[0]):
            directives.setdefault(words[0], words[1:])  # a repeated directive is ignored, as browsers do
    for directive, fallbacks in _FALLBACKS.items():
        used = next((name for name in (directive, *fallbacks) if name in directives), None)
        if used is None:
            return f"its {CSP_HEADER} lets {directive} load from anywhere (no {fallbacks[-1]})"
        for source in directives[used]:
            if directive in _SCRIPT and (source in _NOT_IN_SCRIPT or source.startswith("'nonce-")):
                allows = _NOT_IN_SCRIPT.get(source, "any script carrying its fixed nonce")
                return f"its {CSP_HEADER} allows {allows} ({used} {source})"
            if source not in _LOCAL and not _HASH.fullmatch(source) and not _STYLE_ONLY.fullmatch(source):
                return f"its {CSP_HEADER} lets {directive} load from elsewhere ({used} {source})"
    return None
