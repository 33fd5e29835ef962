"""Whether the Jupyter server a sandboxed kernel starts in is hardened (docs/security.md "The
sandboxed kernel"): the pure judge (kernel_sandbox/browser_judge.py) on policies that pass and
each way one fails, the script guard and the labextension's meta refresh guard missing, the
provisioner reading a real (unstarted) ServerApp up its parent chain, the page config and the
labextensions of the Jupyter paths (kernel_sandbox/provisioner.py), the script guard on a real
tornado server (kernel_sandbox/script_guard.py), and the kernel's side reading the verdict it
was started with (environment/sandbox/enclosing.py)."""

from __future__ import annotations

import pytest
from jupyter_client import KernelManager
from jupyter_client.multikernelmanager import MultiKernelManager

from penguin_jupyter.environment.sandbox.enclosing import BROWSER_UNKNOWN, browser_verdict
from penguin_jupyter.kernel_sandbox import provisioner
from penguin_jupyter.kernel_sandbox.browser_judge import (
    JS_EXTENSION,
    JS_PLUGIN,
    LABEXTENSION,
    NO_REFRESH_PLUGIN,
    judge,
)
from tests.support.sandbox_kernel import HARDENED_CSP, hardened_server

STRICT = "default-src 'self'"
GUARDED = {"script_guard": True, "page_guards": [NO_REFRESH_PLUGIN]}


@pytest.mark.parametrize(
    "policy",
    [
        HARDENED_CSP,
        STRICT,
        "default-src 'none'; script-src 'self' 'unsafe-eval' 'sha256-AbC+/9='; style-src 'self' 'unsafe-inline'; img-src data:",
        f"default-src *, {STRICT}",  # two policies: a load must pass both
        "DEFAULT-SRC 'SELF'; script-src 'self'; script-src 'unsafe-inline'",  # a repeated directive is ignored
    ],
)
def test_policies_that_allow_no_inline_script_and_no_remote_load_pass(policy):
    assert judge(policy, [JS_EXTENSION], **GUARDED) is None
    assert judge(policy, {JS_PLUGIN}, **GUARDED) is None


@pytest.mark.parametrize(
    ("policy", "reason"),
    [
        (HARDENED_CSP.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'"),
         "allows inline script (script-src 'unsafe-inline')"),
        (STRICT + "; script-src-elem 'self' 'unsafe-inline'", "allows inline script (script-src-elem 'unsafe-inline')"),
        ("default-src 'self' 'unsafe-inline'", "allows inline script (default-src 'unsafe-inline')"),
        ("default-src 'self' data:", "allows data: scripts (default-src data:)"),  # <script src="data:…">
        (STRICT + "; script-src 'nonce-r4nd0m'", "allows any script carrying its fixed nonce"),
        (STRICT + "; script-src 'self' 'strict-dynamic'", "allows scripts its scripts add"),
        (HARDENED_CSP.replace("img-src 'self'", "img-src 'self' https://cdn.example.com"),
         "lets img-src load from elsewhere (img-src https://cdn.example.com)"),
        (HARDENED_CSP.replace("connect-src 'self'", "connect-src 'self' *"), "lets connect-src load from elsewhere (connect-src *)"),
        (STRICT + "; font-src https:", "lets font-src load from elsewhere (font-src https:)"),
        ("default-src *", "lets script-src-elem load from elsewhere (default-src *)"),
        ("img-src 'self'; connect-src 'self'", "lets script-src-elem load from anywhere (no default-src)"),
        ("frame-ancestors 'self'", "lets script-src-elem load from anywhere (no default-src)"),
        (STRICT + "; img-src 'self' 'unknown-keyword'", "lets img-src load from elsewhere"),
    ],
)
def test_each_way_a_policy_fails_is_one_line(policy, reason):
    verdict = judge(policy, [JS_EXTENSION], **GUARDED)
    assert verdict is not None and reason in verdict and "\n" not in verdict


@pytest.mark.parametrize("policy", [None, "", "}{;;,", "\x00garbage", "pol\u00efcy", 42, ["default-src 'self'"], b"default-src"])
def test_no_policy_or_garbage_is_not_hardened_never_a_traceback(policy):
    verdict = judge(policy, [JS_EXTENSION], **GUARDED)
    assert verdict is not None and "\n" not in verdict
    assert "Content-Security-Policy" in verdict


def test_the_javascript_renderer_enabled_is_not_hardened():
    assert "@jupyterlab/javascript-extension is enabled" in (judge(STRICT, [], **GUARDED) or "")
    assert judge(STRICT, ["@jupyterlab/json-extension", "@jupyterlab/javascript"], **GUARDED) is not None


def test_without_the_script_guard_or_the_meta_refresh_guard_it_is_not_hardened():
    """script-src 'self' runs a /files/x.js the kernel wrote; no CSP directive stops a meta
    refresh: each guard missing, or the labextension's disabled, is one line why not."""
    no_scripts = judge(STRICT, [JS_EXTENSION], script_guard=False, page_guards=[NO_REFRESH_PLUGIN]) or ""
    assert "serves the notebook folder's files as scripts" in no_scripts and "script_guard" in no_scripts
    for guards in ([], ["penguin-jupyter:something-else"]):
        verdict = judge(STRICT, [JS_EXTENSION], script_guard=True, page_guards=guards) or ""
        assert f"{NO_REFRESH_PLUGIN} is not installed" in verdict
    for disabled in (LABEXTENSION, NO_REFRESH_PLUGIN):
        verdict = judge(STRICT, [JS_EXTENSION, disabled], **GUARDED) or ""
        assert f"{NO_REFRESH_PLUGIN} is disabled" in verdict


# --- the provisioner reading its server --------------------------------------------------------


def _manager(server: object | None) -> KernelManager:
    """A KernelManager as jupyter_server makes one: its parent the MultiKernelManager whose
    parent is the ServerApp."""
    return KernelManager(parent=MultiKernelManager(parent=server)) if server is not None else KernelManager()


def test_a_hardened_server_is_judged_hardened():
    with hardened_server() as server:
        assert provisioner.browser_verdict(_manager(server)) == "hardened"


@pytest.mark.parametrize(
    ("csp", "options", "reason"),
    [
        (None, {}, "open: its pages have no Content-Security-Policy"),
        (HARDENED_CSP, {"disable_javascript": False}, "open: @jupyterlab/javascript-extension is enabled"),
        ("default-src 'self' 'unsafe-inline'", {}, "open: its Content-Security-Policy allows inline script"),
        (HARDENED_CSP, {"script_guard": False}, "open: it serves the notebook folder's files as scripts"),
        (HARDENED_CSP, {"page_guard": False}, f"open: {NO_REFRESH_PLUGIN} is disabled"),
    ],
)
def test_a_server_short_of_it_is_open_with_the_reason(csp, options, reason):
    with hardened_server(csp, **options) as server:
        assert provisioner.browser_verdict(_manager(server)).startswith(reason)


def test_a_started_server_counts_the_script_guard_only_once_it_is_loaded():
    """Started, the config's promise is not enough: the web app must carry the guard's mark."""
    from types import SimpleNamespace

    from penguin_jupyter.kernel_sandbox.script_guard import guard

    with hardened_server() as server:
        server.web_app = SimpleNamespace(settings={"headers": {"Content-Security-Policy": HARDENED_CSP}})  # type: ignore[attr-defined]
        assert provisioner.browser_verdict(_manager(server)).startswith("open: it serves the notebook folder's files")
        app = _tornado_app()
        app.settings["headers"] = {"Content-Security-Policy": HARDENED_CSP}
        guard(app)
        server.web_app = app  # type: ignore[attr-defined]
        assert provisioner.browser_verdict(_manager(server)) == "hardened"


def test_an_installed_labextension_without_the_guard_is_open(tmp_path, monkeypatch):
    """An older build of penguin's labextension first on the data path: no guard declared."""
    old = tmp_path / "labextensions" / LABEXTENSION
    old.mkdir(parents=True)
    (old / "package.json").write_text('{"name": "penguin-jupyter", "version": "0.0.9"}')
    with hardened_server() as server:
        monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
        assert provisioner.browser_verdict(_manager(server)).startswith(f"open: penguin's labextension with {NO_REFRESH_PLUGIN} is not installed")


# --- the script guard on tornado's own routing -------------------------------------------------


def _tornado_app():  # type: ignore[no-untyped-def]
    """A tornado app routing to jupyter_server's /files/ handler class, its static one and a
    plain handler (as /nbconvert/ or the contents API)."""
    from jupyter_server.base.handlers import AuthenticatedFileHandler, FileFindHandler
    from tornado import web

    class Plain(web.RequestHandler):
        def get(self) -> None:
            self.write("window.pwned = 1")

    return web.Application([
        (r"/files/(.*)", AuthenticatedFileHandler, {"path": "/nonexistent"}),
        (r"/static/(.*)", FileFindHandler, {"path": ["/nonexistent"]}),
        (r"/plain", Plain),
    ])


def _served_by(app, path: str, destination: str | None) -> str:  # type: ignore[no-untyped-def]
    from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

    headers = HTTPHeaders({"Host": "127.0.0.1"}, **({"Sec-Fetch-Dest": destination} if destination is not None else {}))
    request = HTTPServerRequest(start_line=RequestStartLine("GET", path, "HTTP/1.1"), headers=headers)
    return app.find_handler(request).handler_class.__name__


def test_the_script_guard_serves_scripts_only_from_static_files():
    from penguin_jupyter.kernel_sandbox.script_guard import GUARD_SETTING, guard

    app = _tornado_app()
    assert _served_by(app, "/files/evil.js", "script") == "AuthenticatedFileHandler"  # without it: served
    guard(app)
    guard(app)  # twice is once
    assert app.settings[GUARD_SETTING] is True
    for destination in ("script", "worker", "SharedWorker", "serviceworker", " script "):
        assert _served_by(app, "/files/evil.js", destination) == "ErrorHandler"
        assert _served_by(app, "/plain", destination) == "ErrorHandler"
        assert _served_by(app, "/static/lab/main.js", destination) == "FileFindHandler"
    for destination in (None, "image", "document", "iframe", "empty", "style"):  # what is not run as code
        assert _served_by(app, "/files/data.csv", destination) == "AuthenticatedFileHandler"
        assert _served_by(app, "/plain", destination) == "Plain"


# --- the kernel's side ----------------------------------------------------------------------------


def test_the_kernel_believes_only_the_provisioners_hardened():
    assert browser_verdict("hardened") == ""
    assert browser_verdict("open: its pages have no Content-Security-Policy") == "its pages have no Content-Security-Policy"
    for value in (None, "", "Hardened", "yes", "open:", "open: "):  # absent, unreadable, anything else
        assert browser_verdict(value) == BROWSER_UNKNOWN


def test_when_tornado_moves_the_guard_is_not_installed_and_the_server_is_not_hardened(monkeypatch):
    """The seam `tornado.handler_class` off (tornado no longer says which handler serves a
    request): nothing is installed, the app is not marked, the provisioner's judge says open."""
    from penguin_jupyter.kernel_sandbox.script_guard import GUARD_SETTING, guard
    from penguin_jupyter.seams.tornado_routing import HANDLER_CLASS

    monkeypatch.setattr(HANDLER_CLASS, "on", False)
    monkeypatch.setattr(HANDLER_CLASS, "reason", "tornado's find_handler no longer says which handler class serves a request")
    app = _tornado_app()
    assert guard(app) is False
    assert GUARD_SETTING not in app.settings
    assert _served_by(app, "/files/evil.js", "script") == "AuthenticatedFileHandler"  # routing untouched
    reason = judge(STRICT, [JS_EXTENSION], script_guard=bool(app.settings.get(GUARD_SETTING)), page_guards=[NO_REFRESH_PLUGIN])
    assert reason is not None and "script_guard" in reason
