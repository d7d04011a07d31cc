"""Plain per-pull reference of the online methods, one repetition at a time.

A thin loop over :class:`cabench.policy.OnlinePolicy` (Algorithm 1, paper
§4.1, with SPEC §5's radius scales and initial rounds, written pull by pull).
It is slow on purpose and exists to check that the batched loop of
:mod:`cabench.online.engine` makes exactly the same pulls. It computes every
formula itself (budget, normalised costs, ``H``, ``nu``, regrets; the policy
its radii and indices) from the problem's data (population means, costs,
``c_max``, ``lambda``); it shares only the sampler, which defines the feedback
streams.
"""

from __future__ import annotations

import numpy as np

from cabench.methods.configured import OnlineMethod
from cabench.policy import OnlinePolicy
from cabench.problem import Problem

_Q = 2.0**-24  # rewards and costs are multiples of 2^-24 (docs/decisions.md, exact arithmetic)


def reference_online(problem: Problem, method: OnlineMethod, rho: float, keys: np.ndarray) -> dict:
    """Run one repetition (stream keys ``keys`` ``[arms]``); return pulls and metrics."""
    k, d = problem.n_arms, problem.n_objectives
    c_max = float(problem.c_max)
    budget = float(rho) * k * float(np.mean(problem.profile_cost)) / c_max  # B~ = rho K cbar / c_max (SPEC §3)
    policy = OnlinePolicy(method, d, budget, [float(c) / c_max for c in problem.profile_cost],
                          float(problem.lam), rho)
    hv = []
    for i in range(k):  # H_i = prod_d mu_i^(d), reference point 0 (paper §3.1)
        volume = float(problem.mu[i][0])
        for j in range(1, d):
            volume = volume * float(problem.mu[i][j])
        hv.append(volume)
    nu = [hv[i] / float(problem.mu_cost[i]) for i in range(k)]  # nu_i = H_i / mu^c_i
    nu_star = max(nu)
    pulls = [0] * k
    arms: list[int] = []
    spend, regret, hv_total = 0.0, 0.0, 0.0
    while (arm := policy.ask()) is not None:
        rewards, tokens = problem.sample(keys[arm : arm + 1], np.array([arm]), np.array([pulls[arm]]))
        cost = round(min(float(tokens[0]) / c_max, 1.0) / _Q) * _Q  # c~ = min(tokens / c_max, 1), quantised
        policy.tell(arm, [float(r) for r in rewards[0]], cost)
        pulls[arm] += 1
        spend += cost
        regret += nu_star - nu[arm]
        hv_total += hv[arm]
        arms.append(arm)
    return {
        "arms": arms,
        "pulls": len(arms),
        "spend": spend * c_max,
        "regret_hv": regret,
        "regret_std": nu_star * budget - hv_total,
    }
