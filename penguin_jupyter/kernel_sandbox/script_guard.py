"""A Jupyter server extension: the server hands out scripts only from its own static files
(docs/security.md "The sandboxed kernel", "Is the browser hardened?").

A Content-Security-Policy's `script-src 'self'` lets JupyterLab load its bundles, but also
any file the server serves from the notebook's folder: a sandboxed kernel writes `x.js` there
and publishes `<script src="/files/x.js">`, and JupyterLab runs it in your page (measured).
CSP sources cannot name a path without a host, so this guard is the server's: a request whose
`Sec-Fetch-Dest` (set by the browser, which a page cannot forge) says it will run as a script or
worker is refused (403) unless the handler that would serve it is a static-file handler other
than the one for the contents (`/files/`); `/nbconvert/`, the contents API and any handler not
known to serve static files are refused too. A request without the header (an old browser,
curl) is served as before. Enable it in the server's config:
`c.ServerApp.jpserver_extensions = {"penguin_jupyter.kernel_sandbox.script_guard": True}`.
Loaded, it marks the web app's settings (`GUARD_SETTING`), which the provisioner
(`provisioner.py`) reads; code in a kernel cannot reach the server's memory.
"""

from __future__ import annotations

from typing import Any

from ..seams.tornado_routing import HANDLER_CLASS, refuse_routes
from .browser_judge import SCRIPT_GUARD as MODULE

GUARD_SETTING = "penguin_scripts_from_static_files_only"
# what a fetch that will run as code says (Fetch's request destinations)
SCRIPT_DESTINATIONS = frozenset({"script", "worker", "sharedworker", "serviceworker", "audioworklet", "paintworklet", "xslt"})


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": MODULE}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    if guard(serverapp.web_app):
        serverapp.log.info("penguin: scripts only from the server's static files (%s)", MODULE)
    else:
        serverapp.log.warning(
            "penguin: the script guard cannot be installed (%s); this server is not judged hardened",
            HANDLER_CLASS.reason or "tornado.handler_class is off",
        )


def guard(web_app: Any) -> bool:
    """Refuse script-like requests to anything but static files, on this tornado Application;
    False when it cannot be installed (the seam `tornado.handler_class` is off): the app is not
    marked, so the server is not judged hardened."""
    if web_app.settings.get(GUARD_SETTING) is True:
        return True
    installed = refuse_routes(
        web_app, lambda request, handler: runs_as_script(request.headers.get("Sec-Fetch-Dest")) and not serves_static(handler)
    )
    if installed:
        web_app.settings[GUARD_SETTING] = True
    return installed


def runs_as_script(destination: str | None) -> bool:
    return destination is not None and destination.strip().lower() in SCRIPT_DESTINATIONS


def serves_static(handler_class: object) -> bool:
    """Whether a handler class serves the server's own static files (not the contents')."""
    from jupyter_server.base.handlers import AuthenticatedFileHandler
    from tornado.web import StaticFileHandler

    return (
        isinstance(handler_class, type)
        and issubclass(handler_class, StaticFileHandler)
        and not issubclass(handler_class, AuthenticatedFileHandler)
    )
