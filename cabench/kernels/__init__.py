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
from pathlib import Path
from types import ModuleType


def full_width_vectors() -> None:
    """Let LLVM vectorise the kernels' loops at the processor's whole width where it has 512-bit vectors (the
    bootstrap rows' hash and remainder: 8 lanes, not 4). Numba reads its target's features from its config when it
    first compiles or loads a function in a process; this sets them, in this process only, to the host's features
    with LLVM's ``prefer-256-bit`` tuning turned off (a worker process does the same for its own host when it
    imports the kernels). The values are the same (integer operations and correctly rounded ones, each lane as the
    scalar code); only the speed changes. Nothing is changed where numba's target is already set (``NUMBA_CPU_NAME``
    or ``NUMBA_CPU_FEATURES``, ``.numba_config.yaml`` or code: your choice stands), or without AVX-512 (or with
    ``NUMBA_ENABLE_AVX=0``). Where numba compiled before this import, its target is set already and stays."""
    from numba.core import codegen, config

    settings = vars(config)  # numba makes its settings at run time, from the environment
    if settings.get("CPU_NAME") is not None or settings.get("CPU_FEATURES") is not None:
        return
    features = codegen.get_host_cpu_features()
    if "+avx512f" in features.split(","):
        settings["CPU_FEATURES"] = f"{features},-prefer-256-bit"


full_width_vectors()


def source_digest(module: ModuleType) -> int:
    """A 56-bit digest of ``module``'s source file. Numba keys a cached function by its own file and code only: a
    function that compiles in code of another file holds that file's digest in its key (a closure variable)."""
    return int.from_bytes(hashlib.sha256(Path(str(module.__file__)).read_bytes()).digest()[:7], "big")
