"""The batched budgeted loop shared by every online method (Algorithm 1, paper §4.1; SPEC §5).

The loop owns initialisation, the optimistic estimates, feasibility, charging,
stopping and bookkeeping; a method only gives the index whose argmax is pulled
(its entry's batched rule, :mod:`cabench.methods`). It runs compiled, one
repetition after another (:mod:`cabench.online.compiled`), when the method's
index and the sampler compile; else in numpy, where a whole batch of
repetitions advances together: state arrays are ``[reps, arms]`` and only the
pulled arm's statistics (and index) change per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cabench.methods.configured import OnlineMethod
from cabench.online.compiled import run_compiled
from cabench.online.loop import Loop, Outcome
from cabench.problem import Problem


@dataclass(frozen=True)
class OnlineResult:
    """Per-repetition metrics of one method at one budget (arrays of length ``reps``)."""

    budget: float  # B in the cost unit
    pulls: np.ndarray
    spend: np.ndarray  # cost unit
    regret_hv: np.ndarray
    regret_std: np.ndarray
    frac_optimal: np.ndarray
    trajectory: dict[str, np.ndarray] | None = None  # grid "spend" [G]; "cum_regret", "moving_avg" [reps, G]
    arms_pulled: np.ndarray | None = None  # [steps, reps], -1 where a repetition did not pull
    counts: np.ndarray | None = None  # [reps, K] pulls per arm at the end of the budget


def horizon_log_term(budget: float, lam: float, alpha: float) -> float:
    """``alpha log T_B`` with ``T_B = ceil(B / lambda) + 1`` (paper §4.1), normalised budget."""
    return alpha * math.log(math.ceil(budget / lam) + 1)


def optimistic(n: np.ndarray, reward_sum: np.ndarray, cost_sum: np.ndarray, s_r: float, s_c: float,
               log_term: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Upper confidence rewards and lower confidence costs, Algorithm 1 lines 5-6.

    ``U^(d) = min(1, rbar^(d) + s_r sqrt(alpha log T_B / n))`` and
    ``c_lcb = max(lambda / 2, cbar - s_c sqrt(alpha log T_B / n))`` with
    ``log_term = alpha log T_B``. Shapes: ``n``, ``cost_sum`` ``[...]``;
    ``reward_sum`` ``[..., D]``.
    """
    root = np.sqrt(log_term / n)
    upper = np.minimum(1.0, reward_sum / n[..., None] + (s_r * root)[..., None])
    lower_cost = np.maximum(lam / 2.0, cost_sum / n - s_c * root)
    return upper, lower_cost


def run_online(problem: Problem, method: OnlineMethod, rho: float, keys: np.ndarray, *,
               trajectory_points: int = 0, window: int = 50, record_arms: bool = False,
               compiled: bool = True) -> OnlineResult:
    """Run ``method`` at budget ``rho`` on every repetition of ``keys`` ``[reps, arms]``.

    Costs are normalised by ``c_max`` (``B~ = B / c_max``). An arm is feasible
    while its profiling cost ``c_i / c_max`` fits in the remaining budget; a
    repetition stops when no arm is feasible. Ties go to the lowest arm index.
    The compiled loop runs when the method's index and the problem's sampler
    compile (:mod:`cabench.online.compiled`), else (or with ``compiled=False``)
    the numpy loop; both make the same pulls with the same numbers.
    """
    method.entry.check_arm_by_arm(problem.n_objectives)
    loop = loop_constants(problem, method, rho)
    log = bool(trajectory_points or record_arms)
    outcome = run_compiled(problem, method, loop, keys, log) if compiled else None
    if outcome is None:
        outcome = numpy_loop(problem, method, loop, keys, log)
    pulls = outcome.counts.sum(axis=1)
    budget_stated = problem.budget(rho)
    trajectory = None
    if trajectory_points and outcome.log is not None:
        trajectory = _trajectory(outcome.log["spend"] * problem.c_max, outcome.log["regret"], outcome.log["gap"],
                                 budget_stated, trajectory_points, window)
    return OnlineResult(
        budget=budget_stated,
        pulls=pulls,
        spend=outcome.spend * problem.c_max,
        regret_hv=outcome.regret,
        regret_std=problem.nu.max() * loop.budget - outcome.hv_sum,
        frac_optimal=outcome.optimal / np.maximum(pulls, 1),
        trajectory=trajectory,
        arms_pulled=outcome.log["arm"] if record_arms and outcome.log is not None else None,
        counts=outcome.counts,
    )


def loop_constants(problem: Problem, method: OnlineMethod, rho: float) -> Loop:
    """Algorithm 1's constants for ``problem``, ``method`` and budget ``rho`` (costs normalised by ``c_max``)."""
    budget = problem.online_budget(rho)
    return Loop(budget=budget, profile=problem.profile_cost / problem.c_max, scales=method.radius_scales,
                log_term=horizon_log_term(budget, problem.lam, method.alpha), lam=problem.lam,
                gap=problem.nu.max() - problem.nu, hv=problem.hv, best=int(np.argmax(problem.nu)),
                n_init=method.n_init(rho), c_max=problem.c_max)


def numpy_loop(problem: Problem, method: OnlineMethod, loop: Loop, keys: np.ndarray, log: bool) -> Outcome:
    """The batched loop in numpy: every repetition of the batch advances one pull per step (state ``[reps, K]``).

    It calls the method's batched index (:meth:`cabench.methods.online.OnlineEntry.index`) on the pulled arms
    of all repetitions at once, so any index runs here; it is also the compiled loop's oracle.
    """
    k, d = problem.n_arms, problem.n_objectives
    reps = keys.shape[0]
    budget, profile, gap, hv, best = loop.budget, loop.profile, loop.gap, loop.hv, loop.best
    s_r, s_c = loop.scales
    index_of = method.entry.index

    n = np.zeros((reps, k), dtype=np.int64)
    reward_sum = np.zeros((reps, k, d))
    cost_sum = np.zeros((reps, k))
    spend = np.zeros(reps)
    regret = np.zeros(reps)
    hv_sum = np.zeros(reps)
    optimal = np.zeros(reps, dtype=np.int64)
    index = np.full((reps, k), -np.inf)
    log_spend, log_regret, log_gap, log_arm = [], [], [], []

    # flat views: one 1-D gather and scatter per array and step
    n_flat, keys_flat, index_flat = n.reshape(-1), keys.reshape(-1), index.reshape(-1)
    reward_flat, cost_flat = reward_sum.reshape(-1, d), cost_sum.reshape(-1)

    def pull(rows: np.ndarray, arms: np.ndarray) -> None:
        flat = rows * k + arms
        count = n_flat[flat]
        rewards, tokens = problem.sample(keys_flat[flat], arms, count)
        cost = problem.online_cost(tokens)
        reward_total = reward_flat[flat] + rewards
        cost_total = cost_flat[flat] + cost
        count += 1
        reward_flat[flat], cost_flat[flat], n_flat[flat] = reward_total, cost_total, count
        spend[rows] += cost
        regret[rows] += gap[arms]
        hv_sum[rows] += hv[arms]
        optimal[rows] += arms == best
        upper, lower_cost = optimistic(count, reward_total, cost_total, s_r, s_c, loop.log_term, loop.lam)
        index_flat[flat] = index_of(count, upper, lower_cost)
        if log:
            step_gap = np.full(reps, np.nan)
            step_gap[rows] = gap[arms]
            step_arm = np.full(reps, -1)
            step_arm[rows] = arms
            log_spend.append(spend.copy())
            log_regret.append(regret.copy())
            log_gap.append(step_gap)
            log_arm.append(step_arm)

    all_rows = np.arange(reps)
    for _ in range(loop.n_init):  # initial round-robin, subject to feasibility
        for arm in range(k):
            rows = all_rows[profile[arm] <= budget - spend]
            if len(rows):
                pull(rows, np.full(len(rows), arm))
    widest = profile.max()
    while True:
        remaining = budget - spend
        if (remaining >= widest).all():
            rows, arms = all_rows, index.argmax(axis=1)
        else:
            feasible = profile[None, :] <= remaining[:, None]
            alive = feasible.any(axis=1)
            if not alive.any():
                break
            rows = all_rows[alive]
            arms = np.where(feasible[rows], index[rows], -np.inf).argmax(axis=1)
        pull(rows, arms)

    logged = None
    if log:
        logged = {"spend": np.array(log_spend).reshape(-1, reps), "regret": np.array(log_regret).reshape(-1, reps),
                  "gap": np.array(log_gap).reshape(-1, reps), "arm": np.array(log_arm).reshape(-1, reps)}
    return Outcome(n, spend, regret, hv_sum, optimal, logged)


def _trajectory(spend: np.ndarray, regret: np.ndarray, gaps: np.ndarray, budget: float,
                points: int, window: int) -> dict[str, np.ndarray]:
    """Cumulative regret and the ``w``-pull moving average of the gap on a grid of spend (cost unit).

    ``spend``, ``regret``, ``gaps``: ``[steps, reps]`` logged after every step
    (``gaps`` NaN where a repetition did not pull). Paper Appendix A: the moving
    average at pull t is the mean of the last ``min(w, t)`` gaps.
    """
    grid = budget * np.arange(1, points + 1) / points
    reps = spend.shape[1]
    cum = np.zeros((reps, points))
    moving = np.full((reps, points), np.nan)
    for r in range(reps):
        pulled = ~np.isnan(gaps[:, r])
        s, g, c = spend[pulled, r], gaps[pulled, r], regret[pulled, r]
        if not len(s):
            continue
        csum = np.concatenate([[0.0], np.cumsum(g)])
        t = np.arange(1, len(g) + 1)
        lo = np.maximum(t - window, 0)
        ma = (csum[t] - csum[lo]) / (t - lo)
        last = np.searchsorted(s, grid, side="right") - 1  # last pull with spend <= grid point
        seen = last >= 0
        cum[r, seen] = c[last[seen]]
        moving[r, seen] = ma[last[seen]]
    return {"spend": grid, "cum_regret": cum, "moving_avg": moving}
