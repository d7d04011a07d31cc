"""Ctrl-C (SIGINT) and SIGTERM while a compiled kernel runs in this process.

A compiled (numba) kernel runs without the interpreter, so Python runs a signal's handler when the kernel hands
back: in numba's own callback that builds the arrays it returns. A handler that raises there leaves numba with an
exception it does not expect (``SystemError``, a lost interrupt, or a crash). While a kernel runs in the main
thread (``with in_kernel:``), cabench's handler (:func:`handling`) only records the signal, and the kernel's
return raises it as :class:`KeyboardInterrupt`; elsewhere it raises at once. A signal therefore takes effect
when the running kernel call ends.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from _thread import get_ident
from collections.abc import Iterator
from types import FrameType, TracebackType
from typing import Any

_MAIN = threading.main_thread().ident
_depth = 0  # how deep the main thread is in kernel calls
_pending = 0  # the signal recorded meanwhile (0: none)


def _handler(signum: int, frame: FrameType | None) -> None:
    """Record ``signum`` while the main thread is in a kernel call; else stop as Ctrl-C does."""
    global _pending
    if _depth:
        _pending = signum
        return
    raise KeyboardInterrupt


class _InKernel:
    """``with in_kernel:`` around a compiled kernel's call: a signal meanwhile is raised when it returns.

    No system call: a counter of the main thread's calls (Python runs signal handlers in that thread only)."""

    __slots__ = ()

    def __enter__(self) -> None:
        global _depth
        if get_ident() == _MAIN:
            _depth += 1

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        global _depth, _pending
        if get_ident() == _MAIN:
            _depth -= 1
            if _pending and not _depth:
                _pending = 0
                raise KeyboardInterrupt


#: The context of a compiled kernel's call (see the module's note).
in_kernel = _InKernel()


@contextlib.contextmanager
def signals_set(handler: Any, *signums: int) -> Iterator[None]:
    """``handler`` (a function, ``SIG_IGN``) for ``signums`` while the block runs, the previous handlers back
    after; in the main thread only, where handlers can be set (elsewhere nothing changes)."""
    if threading.get_ident() != _MAIN:
        yield
        return
    previous = {signum: signal.signal(signum, handler) for signum in signums}
    try:
        yield
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)


@contextlib.contextmanager
def handling(*signums: int) -> Iterator[None]:
    """cabench's handler for ``signums`` (default: SIGINT while its handler is Python's own, which raises
    :class:`KeyboardInterrupt`), the previous handlers back after. An ignored signal stays ignored; only in the
    main thread, where handlers can be set."""
    wanted = signums or ((signal.SIGINT,) if signal.getsignal(signal.SIGINT) is signal.default_int_handler else ())
    with signals_set(_handler, *(s for s in wanted if signal.getsignal(s) not in (_handler, signal.SIG_IGN, None))):
        yield
