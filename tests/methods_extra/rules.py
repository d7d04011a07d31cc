"""An index method and an elimination schedule, registered by importing this module."""

from __future__ import annotations

import numpy as np

from cabench.methods.elimination import schedule
from cabench.methods.index import index_method


@index_method("acc-sqrt-cost-ucb", display="accuracy per sqrt-cost", quality_first=True)
def acc_sqrt_cost_ucb(n, upper, lower_cost):
    """The optimistic first objective, read as the answers' quality, per square root of the cost's lower bound."""
    return upper[..., 0] / np.sqrt(lower_cost)


@index_method("sqrt-cost-ucb", display="sqrt-cost HV-UCB", color="#444444", marker="8")
def sqrt_cost_ucb(n, upper, lower_cost):
    """The optimistic hypervolume per square root of the cost's lower bound."""
    return upper[..., 0] * upper[..., 1] / np.sqrt(lower_cost)


@schedule("half-left", display="Half of what is left")
def half_left(budget, l_k, spend, level, active_costs, k_active):
    """Each phase spends half of what the budget still holds (the last phase all of it)."""
    share = 1.0 if k_active == 2 else 0.5
    return level + np.floor(np.maximum(budget - spend, 0.0) * share / active_costs.sum(axis=1)).astype(np.int64)
