"""Plain per-pull reference of the online methods, one repetition at a time.

Written line by line from Algorithm 1 (paper §4.1) with the experimental
additions of SPEC §5 (radius scales, ``n_init`` initial rounds, feasibility).
It is slow on purpose and exists to check that the batched loop of
:mod:`cabench.online.engine` makes exactly the same pulls.
"""

from __future__ import annotations

import math

import numpy as np

from cabench.online.engine import horizon_log_term
from cabench.online.methods import OnlineMethod
from cabench.problem import Problem


def reference_online(problem: Problem, method: OnlineMethod, rho: float, keys: np.ndarray) -> dict:
    """Run one repetition (stream keys ``keys`` ``[arms]``); return pulls and metrics."""
    k, d = problem.n_arms, problem.n_objectives
    budget = problem.online_budget(rho)  # B~
    profile = [float(c) / problem.c_max for c in problem.profile_cost]
    lam = problem.lam
    s_r, s_c = method.radius_scales
    log_term = horizon_log_term(budget, lam, method.alpha)  # alpha log T_B
    nu = [float(v) for v in problem.nu]
    hv = [float(v) for v in problem.hv]
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
        cost = float(problem.online_cost(tokens)[0])
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

    for _ in range(method.n_init(rho)):  # line 1: pull each arm (n_init rounds)
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
        "spend_tokens": spend * problem.c_max,
        "regret_hv": regret,
        "regret_std": nu_star * budget - hv_total,
    }
