"""Raising an exception in another thread: CPython's `PyThreadState_SetAsyncExc`, called through
`ctypes` (docs/seams.md).

Owns `raise_in_thread`: `run_python`'s interrupt (a Stop, a timeout, a kernel interrupt) lands in
the worker thread running the agent's code, and a Task's stop lands in the kernel subshell thread
running a cell the agent started. The function is part of CPython's C API (documented, not
Python's): the seam `cpython.async_exc` (rule) checks it is there before the first use. Off (an
interpreter without it): the interrupt is not raised; the caller leaves the thread to finish on
its own, as it does with one stuck in native code.
"""

from __future__ import annotations

from . import declare


def _check() -> str | None:
    import ctypes

    api = getattr(ctypes, "pythonapi", None)
    return None if callable(getattr(api, "PyThreadState_SetAsyncExc", None)) else "no ctypes.pythonapi.PyThreadState_SetAsyncExc"


ASYNC_EXC = declare(
    "cpython.async_exc",
    what="CPython's C API PyThreadState_SetAsyncExc through ctypes (interrupting a run_python "
    "worker or a cell the agent started)",
    kind="rule",
    when_off="an interrupted run_python call or agent-started cell is left to finish on its own",
    check=_check,
)


def raise_in_thread(ident: int, exc_type: type[BaseException]) -> bool:
    """Raise `exc_type` in the thread `ident` at its next bytecode; False when that cannot be done."""
    if not ASYNC_EXC.enabled():
        return False
    import ctypes

    return ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc_type)) == 1
