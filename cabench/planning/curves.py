"""A method's metrics against budget on one drawn problem, by the batched engines (Algorithms 1 and 2).

:func:`metric_curve` runs the method on a rising grid of budgets with the engines the experiments use, and stops
once every target has been met at two budgets in a row (the later budgets keep those values: more budget does not
undo an identification or a choice the method has settled on).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cabench.methods.configured import OnlineMethod, PsiMethod
from cabench.online import run_online
from cabench.planning.targets import Target
from cabench.problem import Problem
from cabench.psi import run_psi


def good_enough(nu: np.ndarray, best: float, epsilon: float) -> np.ndarray:
    """Whether each ``nu`` counts toward a share target: within the relative ``epsilon`` of the ``best`` nu (paper
    §3.1)."""
    return nu >= (1.0 - epsilon) * best


def metrics_at(problem: Problem, method: OnlineMethod | PsiMethod, rho: float, keys: np.ndarray,
               cost_mode: str | None, epsilon: float) -> dict[str, float]:
    """The setting's metrics at budget ``rho`` over the repetitions of ``keys``: identification, P(error) and mean
    F1 (SPEC §6); online, the share of repetitions whose most-pulled configuration has ``nu >= (1 - epsilon) max
    nu`` (paper §3.1) — every one of them where several are pulled most, so that a tie (the initial round alone) is
    no hit for the configuration that happens to come first in the logs."""
    if isinstance(method, PsiMethod):
        found = run_psi(problem, method, rho, keys, cost_mode or "deterministic")
        return {"error": float(found.error.mean()), "f1": float(found.f1.mean())}
    ran = run_online(problem, method, rho, keys)
    assert ran.counts is not None  # the engine always returns the pulls per arm
    nu = problem.nu
    most = ran.counts == ran.counts.max(axis=1, keepdims=True)
    worst = np.where(most, nu[None, :], np.inf).min(axis=1)  # the least nu among the most-pulled
    return {"share": float(np.mean(good_enough(worst, float(nu.max()), epsilon)))}


def metric_curve(problem: Problem, method: OnlineMethod | PsiMethod, grid: np.ndarray, keys: np.ndarray,
                 cost_mode: str | None, epsilon: float, targets: Sequence[Target]) -> np.ndarray:
    """``[len(grid), len(targets)]``: each target's metric at each budget of ``grid`` (ascending); NaN where the
    budget is too small for the method (its ``skip``).

    A target's column stops where it is met at two budgets in a row, its later budgets keeping that value (the
    simulation stops once every target has); so each target's column is the one it gets when asked alone, whatever
    other targets are asked with it (a later dip of a noisy curve, simulated only for another target, moved its
    plan)."""
    out = np.full((len(grid), len(targets)), np.nan)
    streaks = np.zeros(len(targets), dtype=int)
    stopped = np.zeros(len(targets), dtype=bool)
    for g, rho in enumerate(grid):
        if method.entry.skip(problem, float(rho)) is not None:
            continue
        values = metrics_at(problem, method, float(rho), keys, cost_mode, epsilon)
        for i, t in enumerate(targets):
            if stopped[i]:
                continue
            out[g:, i] = values[t.metric]  # (kept at later budgets once stopped)
            streaks[i] = streaks[i] + 1 if t.met(out[g, i]) else 0
            stopped[i] = streaks[i] == 2
        if stopped.all():
            break
    return out
