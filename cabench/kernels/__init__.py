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
    bootstrap rows' hash and remainder: 8 lanes, not 4). Numba fixes its target's features from its config when it
    builds its CPU target, as the first function is decorated in a process; this sets them, in this process only,
    to the host's features with LLVM's ``prefer-256-bit`` tuning turned off (a worker process does the same for its
    own host when it imports the kernels). The values are the same (integer operations and correctly rounded ones,
    each lane as the scalar code); only the speed changes. Nothing is changed where numba's target is set already
    (``NUMBA_CPU_NAME`` or ``NUMBA_CPU_FEATURES``, even set after numba loaded, ``.numba_config.yaml`` or code: your
    choice stands), where numba built its target before this import (the setting would not reach it), or without
    AVX-512 (or with ``NUMBA_ENABLE_AVX=0``)."""
    from numba.core import codegen, config

    settings = vars(config)  # numba makes its settings at run time, from the environment
    if (settings.get("CPU_NAME") is not None or settings.get("CPU_FEATURES") is not None
            or "NUMBA_CPU_NAME" in os.environ or "NUMBA_CPU_FEATURES" in os.environ or _target_built()):
        return
    features = codegen.get_host_cpu_features()
    if "+avx512f" in features.split(","):
        settings["CPU_FEATURES"] = f"{features},-prefer-256-bit"


def _target_built() -> bool:
    """Whether numba built its CPU target in this process already (its features are fixed then)."""
    from numba.core import registry

    return "_toplevel_target_context" in vars(registry.cpu_target)


full_width_vectors()


def source_digest(module: ModuleType) -> int:
    """A 56-bit digest of ``module``'s source file. Numba keys a cached function by its own file and code only: a
    function that compiles in code of another file holds that file's digest in its key (a closure variable)."""
    return int.from_bytes(hashlib.sha256(Path(str(module.__file__)).read_bytes()).digest()[:7], "big")
