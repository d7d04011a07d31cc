"""Plain per-pull reference of the identification methods, one repetition at a time.

Written line by line from Algorithm 2 (paper §4.2) and SPEC §6, with Python
loops over arms, pairs and pulls. It is slow on purpose and exists to check
that the batched loop of :mod:`cabench.psi.engine` makes exactly the same
accept/reject decisions and returns the same sets. It computes every formula
itself (normalised costs, budget, ``L_{K,lambda}``, phase targets, realised
costs) from the problem's raw token costs; it shares only the sampler, which
defines the feedback streams, and the tie tolerances.
"""

from __future__ import annotations

import math

import numpy as np

from cabench.errors import CabenchError
from cabench.pareto import TIE_ATOL, TIE_RTOL
from cabench.problem import Problem
from cabench.psi.schedules import PsiMethod

_Q = 2.0**-24  # rewards and costs are multiples of 2^-24 (docs/decisions.md, exact arithmetic)


def _quantised(x: float) -> float:
    return round(x / _Q) * _Q


def _empirical_gaps(mu: dict[int, list[float]]) -> tuple[dict[int, float], dict[int, bool]]:
    """Empirical classification gaps of eq. (1) over the active arms ``mu``."""
    arms = sorted(mu)
    d = len(next(iter(mu.values())))

    def m(i: int, j: int) -> float:  # m_hat(i, j) = min_d (mu_j - mu_i)
        return min(mu[j][x] - mu[i][x] for x in range(d))

    def big_m(i: int, j: int) -> float:  # M_hat(i, j) = max_d (mu_i - mu_j)
        return max(mu[i][x] - mu[j][x] for x in range(d))

    delta_minus = {i: max(m(i, j) for j in arms if j != i) for i in arms}
    dominated = {i: any(all(mu[i][x] < mu[j][x] for x in range(d)) for j in arms if j != i) for i in arms}
    gamma = {}
    for i in arms:
        if dominated[i]:
            gamma[i] = delta_minus[i]
        else:
            gamma[i] = min(
                min(big_m(i, j), max(big_m(j, i), 0.0) + max(delta_minus[j], 0.0)) for j in arms if j != i
            )
    return gamma, dominated


def reference_psi(problem: Problem, method: PsiMethod, rho: float, keys: np.ndarray,
                  cost_mode: str = "deterministic") -> dict:
    """Run one repetition (stream keys ``keys`` ``[arms]``); return decisions and the returned set."""
    k = problem.n_arms
    d = problem.n_objectives
    c_top = max(float(c) for c in problem.profile_cost)
    costs = [_quantised(float(c) / c_top) for c in problem.profile_cost]  # c~_i = c_i / max_j c_j
    budget = float(rho) * sum(costs)  # B~ = B / max_i c_i, B = rho * K * mean_i c_i (SPEC §3)
    lam = min(costs) if method.name == "copsi" else 1.0  # PSI-SR: the cost-blind L_{K,1}
    l_k = 1.0 + sum(1.0 / (1.0 + (ell - 1) * lam) for ell in range(2, k + 1))  # L_{K,lambda}
    cbar = sum(costs) / k

    def target(active: list[int]) -> int:
        if method.name == "copsi":
            return math.floor(budget / (l_k * sum(costs[i] for i in active)))  # line 7
        return math.floor(budget / (cbar * l_k * len(active)))  # PSI-SR

    first = math.floor(budget / sum(costs)) if method.name == "uniform" else target(list(range(k)))
    if first < 1:
        raise CabenchError(f"rho {rho:g}: the first phase cannot give every arm one sample")
    stochastic = cost_mode == "stochastic"

    n = [0] * k
    sums = [[0.0] * d for _ in range(k)]
    spend = 0.0
    stopped = False

    def draw(i: int) -> tuple[list[float], float]:
        rewards, tokens = problem.sample(keys[i : i + 1], np.array([i]), np.array([n[i]]))
        cost = _quantised(float(tokens[0]) / c_top) if stochastic else costs[i]  # realised tokens / max_j c_j
        return [float(v) for v in rewards[0]], cost

    def pull(i: int) -> bool:
        """One pull of arm i, unless it would exceed the budget (then sampling stops)."""
        nonlocal spend, stopped
        if stopped:
            return False
        rewards, cost = draw(i)
        if spend + cost > budget:
            stopped = True
            return False
        spend += cost
        for x in range(d):
            sums[i][x] += rewards[x]
        n[i] += 1
        return True

    def mean(i: int) -> list[float]:
        return [sums[i][x] / n[i] if n[i] else 0.0 for x in range(d)]

    removed, accepted_log = [], []
    if method.name == "uniform":
        if stochastic:  # add complete rounds while a whole round fits
            while True:
                outcomes = [draw(i) for i in range(k)]
                round_cost = 0.0
                for _, c in outcomes:
                    round_cost += c
                if spend + round_cost > budget:
                    break
                spend += round_cost
                for i, (rewards, _) in enumerate(outcomes):
                    for x in range(d):
                        sums[i][x] += rewards[x]
                    n[i] += 1
        else:
            rounds = math.floor(budget / sum(costs))
            for i in range(k):
                for _ in range(rounds):
                    pull(i)
        mu = {i: mean(i) for i in range(k)}
        returned = {i for i in range(k) if not any(all(mu[i][x] < mu[j][x] for x in range(d)) for j in range(k))}
    else:
        active = list(range(k))  # line 1
        accepted: set[int] = set()
        for _phase in range(k - 1):  # line 5
            n_r = target(active)  # lines 6-7: C_r = sum of the active arms' costs
            for i in active:  # lines 8-10
                while n[i] < n_r and pull(i):
                    pass
            mu = {i: mean(i) for i in active}  # line 11
            gamma, dominated = _empirical_gaps(mu)  # lines 13-14
            top = max(gamma.values())  # line 15, ties: dominated first, then lowest index
            tied = [i for i in active if abs(gamma[i] - top) <= TIE_ATOL + TIE_RTOL * abs(top)]
            tied_dominated = [i for i in tied if dominated[i]]
            out = (tied_dominated or tied)[0]
            keep = not dominated[out]
            if keep:  # lines 16-20
                accepted.add(out)
            active.remove(out)  # line 21
            removed.append(out)
            accepted_log.append(keep)
        returned = accepted | set(active)  # line 23
    return {
        "returned": sorted(returned),
        "removed": removed,
        "accepted": accepted_log,
        "samples": list(n),
        "spend_tokens": spend * float(problem.profile_cost.max()),
    }
