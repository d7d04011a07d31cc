"""Plain per-pull reference of the online methods, one repetition at a time.

Written line by line from Algorithm 1 (paper §4.1) with the experimental
additions of SPEC §5 (radius scales, ``n_init`` initial rounds, feasibility).
It is slow on purpose and exists to check that the batched loop of
:mod:`cabench.online.engine` makes exactly the same pulls. It computes every
formula itself (budget, ``T_B``, radii, indices, normalised costs, ``H``,
``nu``, regrets) from the problem's data (population means, costs, ``c_max``,
``lambda``); it shares only the sampler, which defines the feedback streams.
"""

from __future__ import annotations

import math

import numpy as np

from cabench.online.methods import OnlineMethod
from cabench.problem import Problem

_Q = 2.0**-24  # rewards and costs are multiples of 2^-24 (docs/decisions.md, exact arithmetic)


def reference_online(problem: Problem, method: OnlineMethod, rho: float, keys: np.ndarray) -> dict:
    """Run one repetition (stream keys ``keys`` ``[arms]``); return pulls and metrics."""
    k, d = problem.n_arms, problem.n_objectives
    c_max, lam = float(problem.c_max), float(problem.lam)
    budget = float(rho) * k * float(np.mean(problem.profile_cost)) / c_max  # B~ = rho K cbar / c_max (SPEC §3)
    profile = [float(c) / c_max for c in problem.profile_cost]  # deterministic costs c_i / c_max
    s_r, s_c = (1.0, 1.0) if method.mode == "theory" else (float(method.s_r), float(method.s_c))
    n_init = 1 if method.mode == "theory" else max(1, math.floor(method.eta * rho))
    t_b = math.ceil(budget / lam) + 1  # T_B (paper §4.1)
    log_term = method.alpha * math.log(t_b)
    hv = []
    for i in range(k):  # H_i = prod_d mu_i^(d), reference point 0 (paper §3.1)
        volume = float(problem.mu[i][0])
        for j in range(1, d):
            volume = volume * float(problem.mu[i][j])
        hv.append(volume)
    nu = [hv[i] / float(problem.mu_cost[i]) for i in range(k)]  # nu_i = H_i / mu^c_i
    nu_star = max(nu)

    n = [0] * k
    reward_sum = [[0.0] * d for _ in range(k)]
    cost_sum = [0.0] * k
    spend = 0.0
    arms: list[int] = []
    regret, hv_total = 0.0, 0.0

    def pull(i: int) -> None:
        nonlocal spend, regret, hv_total
        rewards, tokens = problem.sample(keys[i : i + 1], np.array([i]), np.array([n[i]]))
        cost = round(min(float(tokens[0]) / c_max, 1.0) / _Q) * _Q  # c~ = min(tokens / c_max, 1), quantised
        for j in range(d):
            reward_sum[i][j] += float(rewards[0, j])
        cost_sum[i] += cost
        n[i] += 1
        spend += cost
        regret += nu_star - nu[i]
        hv_total += hv[i]
        arms.append(i)

    def feasible(i: int) -> bool:
        return profile[i] <= budget - spend

    def index(i: int) -> float:
        beta = math.sqrt(log_term / n[i])  # Algorithm 1: beta_{i,t}
        upper = [min(1.0, reward_sum[i][j] / n[i] + s_r * beta) for j in range(d)]  # line 5
        lower_cost = max(lam / 2.0, cost_sum[i] / n[i] - s_c * beta)  # line 6
        volume = upper[0]
        for j in range(1, d):
            volume = volume * upper[j]
        if method.name == "cohv-ucb":
            return volume / lower_cost  # line 7
        if method.name == "hv-ucb":
            return volume
        return upper[0] / lower_cost  # acc-cost-ucb

    for _ in range(n_init):  # line 1: pull each arm (n_init rounds)
        for i in range(k):
            if feasible(i):
                pull(i)
    pointer = 0
    while True:  # line 2: while budget remains
        candidates = [i for i in range(k) if feasible(i)]
        if not candidates:
            break
        if method.name == "uniform":  # round-robin over the feasible arms
            choice = next(i for i in [*range(pointer, k), *range(pointer)] if feasible(i))
            pointer = (choice + 1) % k
        else:
            choice, best = -1, -math.inf
            for i in candidates:  # lines 4-9: argmax of the index, ties to the lowest arm
                value = index(i)
                if value > best:
                    choice, best = i, value
        pull(choice)
    return {
        "arms": arms,
        "pulls": len(arms),
        "spend_tokens": spend * c_max,
        "regret_hv": regret,
        "regret_std": nu_star * budget - hv_total,
    }
