"""Plain per-pull reference of the identification methods, one repetition at a time.

A thin loop over :class:`cabench.policy.PsiPolicy` (Algorithm 2, paper §4.2,
and SPEC §6, written pull by pull with Python loops over arms and pairs). It
is slow on purpose and exists to check that the batched loop of
:mod:`cabench.psi.engine` makes exactly the same accept/reject decisions and
returns the same sets. It computes every formula itself (normalised costs,
budget, realised costs; the policy ``L_{K,lambda}``, phase targets and gaps)
from the problem's raw token costs; it shares only the sampler, which defines
the feedback streams, and the tie tolerances.
"""

from __future__ import annotations

import numpy as np

from cabench.methods.configured import PsiMethod
from cabench.policy import PsiPolicy
from cabench.problem import Problem

_Q = 2.0**-24  # rewards and costs are multiples of 2^-24 (docs/decisions.md, exact arithmetic)


def _quantised(x: float) -> float:
    return round(x / _Q) * _Q


def reference_psi(problem: Problem, method: PsiMethod, rho: float, keys: np.ndarray,
                  cost_mode: str = "deterministic") -> dict:
    """Run one repetition (stream keys ``keys`` ``[arms]``); return decisions and the returned set."""
    c_top = max(float(c) for c in problem.profile_cost)
    costs = [_quantised(float(c) / c_top) for c in problem.profile_cost]  # c~_i = c_i / max_j c_j
    budget = float(rho) * sum(costs)  # B~ = B / max_i c_i, B = rho * K * mean_i c_i (SPEC §3)
    stochastic = cost_mode == "stochastic"
    policy = PsiPolicy(method, problem.n_objectives, costs, budget, stochastic, rho)
    asked = [0] * problem.n_arms
    while (i := policy.ask()) is not None:
        rewards, tokens = problem.sample(keys[i : i + 1], np.array([i]), np.array([asked[i]]))
        asked[i] += 1
        policy.tell(i, [float(v) for v in rewards[0]], _quantised(float(tokens[0]) / c_top))  # realised cost
    return {
        "returned": policy.returned,
        "removed": policy.removed,
        "accepted": policy.accepted_log,
        "samples": list(policy.n),
        "spend": policy.spend * float(problem.profile_cost.max()),
    }
