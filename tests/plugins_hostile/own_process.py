"""An online index function (CoHV-UCB's index) that signals its own process while a cell computes.

:func:`signals_in_kernel` compiles (numba), so the online loop's kernel runs it: with ``CABENCH_TEST_SIGNAL`` set to
a signal's number when its module is imported, it sends its process that signal from inside the kernel, on an
arm's third pull (several times a cell), and never from Python (the numpy loop, the compiled loop's fallback).
"""

from __future__ import annotations

import ctypes
import os

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

