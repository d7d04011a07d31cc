"""Two methods of your own, as ``cabench`` runs them from a config (``methods: [my_methods:front_loaded]``).

Put this folder on your Python path (``PYTHONPATH=examples cabench run ...``). See docs/methods.md.
"""

from __future__ import annotations

import numpy as np


def front_loaded(budget, l_k, spend, level, active_costs, k_active):
    """An identification schedule: each phase spends half of what is left (the last phase all of it).

    Arguments, per repetition: the normalised budget ``B~``, CoPSI's ``L_{K,lambda}``, the spend so far,
    the active arms' common sample count, their normalised costs ``[reps, k_active]`` and ``k_active``.
    Returns the cumulative number of samples every active arm should have after this phase.
    """
    total = active_costs.sum(axis=1)
    share = 1.0 if k_active == 2 else 0.5
    return level + np.floor(np.maximum(budget - spend, 0.0) * share / total).astype(np.int64)


front_loaded.display = "Front-loaded SR"


def sqrt_cost_ucb(n, upper, lower_cost):
    """An online index: the optimistic hypervolume divided by the square root of the cost's lower bound,
    halfway between HV-UCB (cost-blind) and CoHV-UCB (cost per hypervolume)."""
    return upper[..., 0] * upper[..., 1] / np.sqrt(lower_cost)


sqrt_cost_ucb.display = "sqrt-cost HV-UCB"
