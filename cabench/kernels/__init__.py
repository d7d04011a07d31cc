"""Compiled kernels (numba) of the engines' inner loops (identification gaps and blocks, Algorithm 1's online
loop) and of the samplers.

Importing this package loads numba (each kernel module is imported inside the functions that run it, so ``import
cabench`` stays fast). Numba compiles a kernel on its first call and keeps the machine code beside the module
(``cache=True``), so later processes load it.

On a processor with 512-bit vectors (AVX-512), LLVM's tuning for most of them prefers 256-bit ones; the kernels are
compiled with the whole width instead (:func:`full_width_vectors`, ``docs/decisions.md``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from types import ModuleType


def full_width_vectors() -> None:
    """Let LLVM vectorise the kernels' loops at the processor's whole width where it has 512-bit vectors (the
    bootstrap rows' hash and remainder: 8 lanes, not 4). Numba reads its target's features from
    ``NUMBA_CPU_FEATURES`` when it first compiles or loads a function; this sets that variable, for this process and
    the workers it starts, to the host's features with LLVM's ``prefer-256-bit`` tuning turned off. The values are
    the same (integer operations and correctly rounded ones, each lane as the scalar code); only the speed changes.
    Nothing is changed where ``NUMBA_CPU_NAME`` or ``NUMBA_CPU_FEATURES`` is set (your choice stands), or without
    AVX-512."""
    if os.environ.get("NUMBA_CPU_NAME") or os.environ.get("NUMBA_CPU_FEATURES"):
        return
    from numba.core import codegen, config

    features = codegen.get_host_cpu_features()
    if "+avx512f" not in features.split(","):
        return
    os.environ["NUMBA_CPU_FEATURES"] = f"{features},-prefer-256-bit"
    config.reload_config()


full_width_vectors()


def source_digest(module: ModuleType) -> int:
    """A 56-bit digest of ``module``'s source file. Numba keys a cached function by its own file and code only: a
    function that compiles in code of another file holds that file's digest in its key (a closure variable)."""
    return int.from_bytes(hashlib.sha256(Path(str(module.__file__)).read_bytes()).digest()[:7], "big")
