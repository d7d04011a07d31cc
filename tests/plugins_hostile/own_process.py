"""Online index functions (CoHV-UCB's index) that signal or end their own process while a cell computes.

:func:`signals_in_kernel` compiles (numba), so the online loop's kernel runs it: with ``CABENCH_TEST_SIGNAL`` set to
a signal's number when its module is imported, it sends its process that signal from inside the kernel, on an
arm's third pull (several times a cell), and never from Python (the numpy loop, the compiled loop's fallback).
:func:`killed` and :func:`exits` do not compile (the numpy loop runs them): with ``CABENCH_TEST_KILL`` set, they end
their process abruptly, by SIGKILL (as the out-of-memory killer does) or ``os._exit(3)``.
"""

from __future__ import annotations

import ctypes
import os
import signal

from numba.extending import overload

_libc = ctypes.CDLL(None)
_kill = _libc.kill
_kill.argtypes = (ctypes.c_int, ctypes.c_int)
_kill.restype = ctypes.c_int
_getpid = _libc.getpid
_getpid.argtypes = ()
_getpid.restype = ctypes.c_int

_SIGNAL = int(os.environ.get("CABENCH_TEST_SIGNAL", "0"))  # compiled in as a constant


def _compiled() -> bool:
    """False in Python; True in code numba compiles."""
    return False


@overload(_compiled)
def _compiled_in_numba():
    return lambda: True


def signals_in_kernel(n, upper, lower_cost):
    if _SIGNAL and _compiled() and n[0] == 3:
        _kill(_getpid(), _SIGNAL)
    return upper[:, 0] * upper[:, 1] / lower_cost


def killed(n, upper, lower_cost):
    if os.environ.get("CABENCH_TEST_KILL"):
        os.kill(os.getpid(), signal.SIGKILL)
    return upper[..., 0] * upper[..., 1] / lower_cost


def exits(n, upper, lower_cost):
    if os.environ.get("CABENCH_TEST_KILL"):
        os._exit(3)
    return upper[..., 0] * upper[..., 1] / lower_cost
