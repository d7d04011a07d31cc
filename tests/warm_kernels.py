"""Compile cabench's kernels into numba's cache (beside their sources) by running small experiments that call
each with the argument types the suite gives it: ``python -m tests.warm_kernels online|psi``, one group per core.

The two groups compile about the same amount: the online group the online loop and its indices, after the
identification engine's sampling of logged rows (a run of Uniform, which takes no gaps); the identification group
the gaps, the sampling of synthetic instances and what is left. Each group starts with what the other does not
compile, so the two processes fill the cache in about half the time of compiling it in one; a kernel the other
process has cached by the time it is called is loaded, not compiled again.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

#: Per group, the configs whose runs, two repetitions each, call every compiled kernel of the group.
#: A config given with methods runs only those.
GROUPS = {"online": (("gsm8k_psi_beyond", ["uniform"]), "gsm8k_online_quick", "synthetic_online",
                     "terms/gsm8k_dollars_online"),
          "psi": ("synthetic_psi_beyond_l01", "gsm8k_psi_beyond", "gsm8k_psi_stochastic_quick", "gsm8k_psi_full_beyond",
                  "terms/gsm8k_dollars_psi")}


def warm(group: str) -> None:
    """Run the configs of ``group`` (:data:`GROUPS`); for ``psi`` also CoPSI-R on a Bernoulli instance (the configs'
    synthetic instances are Gaussian), with both cost modes."""
    from cabench.config import load_config
    from cabench.runner import run_experiment

    with tempfile.TemporaryDirectory() as out:
        for entry in GROUPS[group]:
            name, methods = entry if isinstance(entry, tuple) else (entry, None)
            overrides = {"output": f"{out}/{name}", "repetitions": 2, "n_jobs": 1, "backend": "sequential"}
            if methods is not None:
                overrides["methods"] = methods
            run_experiment(load_config(ROOT / "configs" / f"{name}.yaml", overrides=overrides), quiet=True,
                           echo=lambda line: None)
    if group == "psi":
        from cabench.psi import PsiMethod, run_psi
        from cabench.streams import stream_keys
        from cabench.synthetic import SyntheticSpec, synthetic_problem

        problem = synthetic_problem(SyntheticSpec("w", ((0.5, 0.5), (0.6, 0.4), (0.3, 0.7)), (1.0, 0.5, 0.8),
                                                  noise="bernoulli", cost_spread=0.5))
        for mode in ("deterministic", "stochastic"):
            run_psi(problem, PsiMethod("copsi-r"), 30, stream_keys(0, np.arange(2), problem.arm_ids), mode)


if __name__ == "__main__":
    warm(sys.argv[1])
