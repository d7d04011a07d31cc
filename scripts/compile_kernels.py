"""Compile cabench's kernels once, before many processes need them at the same time.

Numba compiles a kernel on its first call and keeps the machine code beside its module (``cache=True``); processes
started together before that happened (the test suite's workers and the ``cabench`` processes its tests start, or
a run's worker processes) would each compile the same kernels, about 20 s of one core each. This script runs two
repetitions of small experiments that call every engine kernel (online and identification, deterministic and
stochastic costs, replayed and synthetic rewards, spends in dollars) into a temporary folder, so that every kernel is
compiled once and cached; a later call loads it. Run it again at any time: with the kernels cached it takes about a
second.

    python scripts/compile_kernels.py            # every kernel
    python scripts/compile_kernels.py online     # the online engine's kernels only (or: psi)

The Makefile runs the online and identification halves side by side, beside the linters, before the test suite.
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from pathlib import Path

from cabench.config import load_config
from cabench.runner import run_experiment

ROOT = Path(__file__).resolve().parent.parent
#: Per engine, the shipped configs whose smallest runs call its kernels between them.
CONFIGS = {
    "online": ("gsm8k_online_quick", "synthetic_online", "terms/gsm8k_dollars_online"),
    "psi": ("gsm8k_psi_quick", "gsm8k_psi_stochastic_quick", "synthetic_psi_beyond_l01", "terms/gsm8k_dollars_psi"),
}


def compile_kernels(engines: list[str]) -> float:
    """Run two repetitions of each config of ``engines`` (at a small budget, where budgets are given as rho);
    return the seconds taken."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cabench-kernels-") as tmp:
        for engine in engines:
            for name in CONFIGS[engine]:
                path = ROOT / "configs" / f"{name}.yaml"
                smaller = {"output": str(Path(tmp) / name), "repetitions": 2, "chunk_size": 2, "n_jobs": 1}
                rho = load_config(path).rho
                if not any(math.isnan(r) for r in rho):
                    smaller["rho"] = [min(*rho, 20.0)]  # a small budget: the kernels are those of any budget
                cfg = load_config(path, overrides=smaller)
                run_experiment(cfg, quiet=True)
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    engines = argv or list(CONFIGS)
    unknown = [e for e in engines if e not in CONFIGS]
    if unknown:
        print(f"compile_kernels: '{unknown[0]}' is not one of {', '.join(CONFIGS)}", file=sys.stderr)
        return 2
    seconds = compile_kernels(engines)
    print(f"kernels of {' and '.join(engines)} compiled or loaded in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
