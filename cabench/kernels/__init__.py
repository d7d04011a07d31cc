"""Compiled kernels (numba) of the engines' inner loops (identification gaps and blocks, Algorithm 1's online
loop) and of the samplers.

Importing this package loads nothing: each kernel module imports numba itself and is imported inside
the functions that run it, so ``import cabench`` stays fast. Numba compiles a kernel on its first call
and keeps the machine code beside the module (``cache=True``), so later processes load it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType


def source_digest(module: ModuleType) -> int:
    """A 56-bit digest of ``module``'s source file. Numba keys a cached function by its own file and code only: a
    function that compiles in code of another file holds that file's digest in its key (a closure variable)."""
    return int.from_bytes(hashlib.sha256(Path(str(module.__file__)).read_bytes()).digest()[:7], "big")
