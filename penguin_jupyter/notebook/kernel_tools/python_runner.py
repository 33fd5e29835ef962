"""Execute a code string in a namespace on a worker thread, notebook-style.

Owns splitting off the last expression (its repr is the result), trimming tracebacks to the
agent's own code, collecting new matplotlib figures and PIL images as PNG data URLs,
turning HTML-only reprs into text, and interrupting runaway code (an asynchronous exception
injected into the worker thread) so the kernel and its namespace stay usable. Code stuck in
native code ignores that exception: its worker is abandoned, and later runs fail at once with
`BUSY_MESSAGE` (instead of queueing behind it into their own timeout) until it returns.
"""

from __future__ import annotations

import ast
import base64
import html
import importlib.util
import io
import itertools
import re
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType

from ...seams.matplotlib_show import capture_show
from ...seams.threads import raise_in_thread

_counter = itertools.count(1)
_exec_lock = threading.Lock()
_abandoned: set[int] = set()  # workers given up on while stuck in native code; they hold _exec_lock
BUSY_MESSAGE = (
    "run_python cannot run now: an earlier run_python call is still blocked in native code that "
    "could not be interrupted (e.g. time.sleep, a blocking read or wait). Retry once it returns, "
    "or ask the user to restart the kernel."
)


class RunPythonInterrupted(BaseException):
    """Raised inside the worker thread when the tool is aborted or times out."""


@dataclass
class RunOutcome:
    value_text: str | None = None
    error: str | None = None
    images: list[str] = field(default_factory=list)
    interrupted: bool = False
    displayed_figures: set[int] = field(default_factory=set)  # already sent via display(fig)


def _split_last_expression(code: str, filename: str) -> tuple[CodeType, CodeType | None]:
    tree = ast.parse(code, filename=filename, mode="exec")
    last_expr = None
    last_stmt = tree.body[-1] if tree.body else None
    if isinstance(last_stmt, ast.Expr):
        tree.body.pop()
        last_expr = ast.Expression(last_stmt.value)
    body = compile(tree, filename, "exec")
    expr = compile(last_expr, filename, "eval") if last_expr is not None else None
    return body, expr


def _trimmed_traceback(exc: BaseException, filename: str) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    lines = traceback.format_exception(type(exc), exc, tb)
    text = "".join(lines).rstrip()
    if len(text) > 4000:
        text = "…\n" + text[-4000:]
    return text


def _png_data_url(raw: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(raw).decode("ascii")


def _figure_numbers() -> set[int]:
    plt = sys.modules.get("matplotlib.pyplot")
    return set(plt.get_fignums()) if plt is not None else set()


def note_displayed(value: object, outcome: RunOutcome) -> None:
    """A pyplot figure passed to display() already reached the model: don't send it again."""
    figure = sys.modules.get("matplotlib.figure")
    if figure is not None and isinstance(value, figure.Figure):
        number = getattr(value, "number", None)
        if isinstance(number, int):
            outcome.displayed_figures.add(number)


def _collect_new_figures(before: set[int], displayed: set[int] | None = None) -> list[str]:
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    images = []
    new_numbers = sorted(set(plt.get_fignums()) - before)
    try:
        for num in new_numbers:
            if displayed and num in displayed:
                continue
            buffer = io.BytesIO()
            plt.figure(num).savefig(buffer, format="png", dpi=100, bbox_inches="tight")
            images.append(_png_data_url(buffer.getvalue()))
    finally:  # even when interrupted mid-render: a figure left open would be drawn by the cell's backend
        for num in new_numbers:
            plt.close(num)
    return images


_SHOW_CALL = re.compile(r"\bshow\s*\(")


def _capture_show(code: str, before: set[int], outcome: RunOutcome) -> Callable[[], None]:
    """While `code` runs, `plt.show()` on this thread turns the new figures into images for the
    model instead of drawing them into the notebook cell (where the model never sees them;
    `seams.matplotlib_show`). Returns the undo."""
    if not _SHOW_CALL.search(code) or importlib.util.find_spec("matplotlib") is None:
        return lambda: None
    return capture_show(lambda: outcome.images.extend(_collect_new_figures(before, outcome.displayed_figures)))


def _pil_image(value: object) -> tuple[str, str] | None:
    """(its description, its PNG data URL) for a PIL image (PIL already imported), else None."""
    pil = sys.modules.get("PIL.Image")
    if pil is None or not isinstance(value, pil.Image):
        return None
    buffer = io.BytesIO()
    value.save(buffer, format="PNG")
    return f"<PIL image {value.size[0]}×{value.size[1]} {value.mode}>", _png_data_url(buffer.getvalue())


_TAG = re.compile(r"<[^>]+>")
_DEFAULT_REPR = re.compile(r"^<.* at 0x[0-9a-fA-F]+>$")


def html_to_text(markup: str) -> str:
    text = re.sub(r"(?i)<br\s*/?>|</(p|div|tr|h\d|li)>", "\n", markup)
    text = re.sub(r"(?i)</t[dh]>", "\t", text)
    text = html.unescape(_TAG.sub("", text))
    return re.sub(r"\n\s*\n+", "\n", text).strip()


def describe_value(value: object) -> tuple[str, str | None]:
    """(text for the model, optional PNG data URL) for the last expression's value."""
    image = _pil_image(value)
    if image is not None:
        return image
    text = repr(value)
    html_repr = getattr(value, "_repr_html_", None)
    if _DEFAULT_REPR.match(text) and callable(html_repr):
        try:
            markup = html_repr()
            if markup:
                text = html_to_text(markup)
        except Exception:  # a user object's broken _repr_html_ keeps the plain text
            pass
    return text, None


def run_code(code: str, namespace: dict[str, object], outcome: RunOutcome | None = None) -> RunOutcome:
    """Run `code` in `namespace` on the calling thread (the worker), filling `outcome` (whose
    `images` may already be receiving displayed images). Never raises."""
    filename = f"<run_python-{next(_counter)}>"
    outcome = outcome if outcome is not None else RunOutcome()
    _abandoned.intersection_update(t.ident for t in threading.enumerate())
    if _abandoned and _exec_lock.locked():  # waiting would only run into the timeout as well
        outcome.error = BUSY_MESSAGE
        return outcome
    try:
        _run_locked(code, namespace, filename, outcome)
    finally:
        _abandoned.discard(threading.get_ident())
    return outcome


def _run_locked(code: str, namespace: dict[str, object], filename: str, outcome: RunOutcome) -> None:
    with _exec_lock:
        before = _figure_numbers()
        restore_show = _capture_show(code, before, outcome)
        try:
            body, expr = _split_last_expression(code, filename)
            exec(body, namespace)
            if expr is not None:
                value = eval(expr, namespace)
                if value is not None:
                    outcome.value_text, image = describe_value(value)
                    if image:
                        outcome.images.append(image)
        except RunPythonInterrupted:
            outcome.interrupted = True
        except SyntaxError as exc:
            outcome.error = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
        except BaseException as exc:  # the user's code: whatever it raises (SystemExit too) is the call's error
            outcome.error = _trimmed_traceback(exc, filename)
        finally:
            restore_show()
        try:
            outcome.images.extend(_collect_new_figures(before, outcome.displayed_figures))
        except RunPythonInterrupted:
            outcome.interrupted = True
        except Exception as exc:  # figure capture is extra: its failure is a note on the result
            outcome.error = (
                outcome.error + "\n" if outcome.error else ""
            ) + f"[figure capture failed: {exc}]"


def abandon_thread(thread: threading.Thread) -> None:
    """Give up on a worker that ignored the interrupt (native code); later runs fail fast until it ends."""
    if thread.ident is not None and thread.is_alive():
        _abandoned.add(thread.ident)


def interrupt_thread(thread: threading.Thread) -> None:
    """Raise RunPythonInterrupted inside `thread` at its next bytecode."""
    if thread.ident is None or not thread.is_alive():
        return
    raise_in_thread(thread.ident, RunPythonInterrupted)
