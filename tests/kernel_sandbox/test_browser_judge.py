"""Whether the Jupyter server a sandboxed kernel starts in is hardened (docs/security.md "The
sandboxed kernel"): the pure judge (kernel_sandbox/browser_judge.py) on policies that pass and
each way one fails, and the provisioner reading a real (unstarted) ServerApp up its parent chain
and the page config of the Jupyter paths (kernel_sandbox/provisioner.py), and the kernel's side
reading the verdict it was started with (environment/sandbox/enclosing.py)."""

from __future__ import annotations

import pytest
from jupyter_client import KernelManager
from jupyter_client.multikernelmanager import MultiKernelManager

from penguin_jupyter.environment.sandbox.enclosing import BROWSER_UNKNOWN, browser_verdict
from penguin_jupyter.kernel_sandbox import provisioner
from penguin_jupyter.kernel_sandbox.browser_judge import JS_EXTENSION, JS_PLUGIN, judge
from tests.support.sandbox_kernel import HARDENED_CSP, hardened_server

STRICT = "default-src 'self'"


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
    assert judge(policy, [JS_EXTENSION]) is None
    assert judge(policy, {JS_PLUGIN}) is None


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
    verdict = judge(policy, [JS_EXTENSION])
    assert verdict is not None and reason in verdict and "\n" not in verdict


@pytest.mark.parametrize("policy", [None, "", "}{;;,", "\x00garbage", "pol\u00efcy", 42, ["default-src 'self'"], b"default-src"])
def test_no_policy_or_garbage_is_not_hardened_never_a_traceback(policy):
    verdict = judge(policy, [JS_EXTENSION])
    assert verdict is not None and "\n" not in verdict
    assert "Content-Security-Policy" in verdict


def test_the_javascript_renderer_enabled_is_not_hardened():
    assert "@jupyterlab/javascript-extension is enabled" in (judge(STRICT, []) or "")
    assert judge(STRICT, ["@jupyterlab/json-extension", "@jupyterlab/javascript"]) is not None


# --- the provisioner reading its server --------------------------------------------------------


def _manager(server: object | None) -> KernelManager:
    """A KernelManager as jupyter_server makes one: its parent the MultiKernelManager whose
    parent is the ServerApp."""
    return KernelManager(parent=MultiKernelManager(parent=server)) if server is not None else KernelManager()


def test_a_hardened_server_is_judged_hardened():
    with hardened_server() as server:
        assert provisioner.browser_verdict(_manager(server)) == "hardened"


@pytest.mark.parametrize(
    ("csp", "disable", "reason"),
    [
        (None, True, "open: its pages have no Content-Security-Policy"),
        (HARDENED_CSP, False, "open: @jupyterlab/javascript-extension is enabled"),
        ("default-src 'self' 'unsafe-inline'", True, "open: its Content-Security-Policy allows inline script"),
    ],
)
def test_a_server_short_of_it_is_open_with_the_reason(csp, disable, reason):
    with hardened_server(csp, disable_javascript=disable) as server:
        assert provisioner.browser_verdict(_manager(server)).startswith(reason)


def test_no_server_above_the_kernel_manager_is_open():
    """The Kernel Gateway, or a bare client: nothing can say what renders the outputs."""
    verdict = provisioner.browser_verdict(_manager(None))
    assert verdict.startswith("open: the kernel was not started by a Jupyter server")


def test_a_server_whose_settings_cannot_be_read_is_open_in_one_line():
    with hardened_server() as server:
        server.tornado_settings = {"headers": "not a mapping"}
        assert provisioner.browser_verdict(_manager(server)).startswith("open: its Content-Security-Policy is not a header value")
        server.tornado_settings = {"headers": {"Content-Security-Policy": "content-security-policy\nx"}}
        verdict = provisioner.browser_verdict(_manager(server))
        assert verdict.startswith("open:") and "\n" not in verdict


# --- the kernel's side ----------------------------------------------------------------------------


def test_the_kernel_believes_only_the_provisioners_hardened():
    assert browser_verdict("hardened") == ""
    assert browser_verdict("open: its pages have no Content-Security-Policy") == "its pages have no Content-Security-Policy"
    for value in (None, "", "Hardened", "yes", "open:", "open: "):  # absent, unreadable, anything else
        assert browser_verdict(value) == BROWSER_UNKNOWN
