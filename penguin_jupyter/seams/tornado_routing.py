"""Which handler the Jupyter server's tornado app routes a request to, and a refusal placed in
front of that routing (docs/seams.md).

Owns `refuse_routes`: the sandboxed kernel's script guard (`kernel_sandbox/script_guard.py`)
refuses script requests to anything but static files. tornado's `Application.find_handler` is
public, but what it returns (`_HandlerDelegate`) is a private class whose `handler_class` says
which handler would serve the request, and the guard replaces `find_handler` on the server's
own app object. The seam `tornado.handler_class` (protection) checks both on a throwaway app
before the first use. Off: the guard is not installed and the app is not marked, so the
provisioner judges the server not hardened and `auto` in the sandboxed kernel keeps
`run_python`'s card (the protection fails closed; JupyterLab itself keeps working).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import NotInUse, declare


def _check() -> str | None:
    try:
        from tornado import httputil, web
    except ImportError as exc:
        raise NotInUse("tornado not installed") from exc
    app = web.Application([(r"/static/(.*)", web.StaticFileHandler, {"path": "/"})])
    request = httputil.HTTPServerRequest(
        start_line=httputil.RequestStartLine("GET", "/static/x.js", "HTTP/1.1"),
        headers=httputil.HTTPHeaders({"Host": "127.0.0.1"}),
    )
    delegate = app.find_handler(request)
    if getattr(delegate, "handler_class", None) is not web.StaticFileHandler:
        return "tornado's find_handler no longer says which handler class serves a request"
    if not callable(getattr(app, "get_handler_delegate", None)):
        return "tornado's Application has no get_handler_delegate"
    return None


HANDLER_CLASS = declare(
    "tornado.handler_class",
    what="tornado Application.find_handler(...).handler_class, and find_handler replaced on the Jupyter server's app",
    kind="protection",
    when_off="the script guard is not installed: the server is not judged hardened, and auto in the sandboxed "
    "kernel keeps run_python's card",
    check=_check,
)


def refuse_routes(web_app: Any, refused: Callable[[Any, object], bool], status: int = 403) -> bool:
    """Answer `status` to every request for which `refused(request, handler_class)` is true, in
    front of `web_app`'s routing; False (nothing installed) when the seam is off."""
    if not HANDLER_CLASS.enabled():
        return False
    from tornado import web

    find_handler = web_app.find_handler

    def guarded(request: Any, **kwargs: Any) -> Any:
        delegate = find_handler(request, **kwargs)
        if refused(request, getattr(delegate, "handler_class", None)):
            return web_app.get_handler_delegate(request, web.ErrorHandler, {"status_code": status})
        return delegate

    web_app.find_handler = guarded
    return True
