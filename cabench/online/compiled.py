"""Algorithm 1 compiled: the loop of :mod:`cabench.kernels.online` on a problem and a method (paper §4.1;
SPEC §5).

It runs when the method's index compiles (:meth:`cabench.methods.online.OnlineEntry.compiled_index`: a built-in's
index of one arm, or a function of your own that numba can compile) and the sampler has a compiled draw
(``compiled_draw``: log replay, Bernoulli rewards). Otherwise, or when an index of your own fails or returns
what the loop cannot use, :func:`run_compiled` returns ``None`` and the numpy loop runs (and names the problem).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cabench.interrupts import in_kernel
from cabench.methods.configured import OnlineMethod
from cabench.online.loop import Loop, Outcome
from cabench.problem import Problem


def run_compiled(problem: Problem, method: OnlineMethod, loop: Loop, keys: np.ndarray, log: bool) -> Outcome | None:
    """The compiled loop's tallies for the repetitions of ``keys``, or ``None`` where it does not apply."""
    index = method.entry.compiled_index()
    compiled_draw = getattr(problem.sampler, "compiled_draw", None)
    drawn = compiled_draw() if index is not None and compiled_draw is not None else None
    if index is None or drawn is None:
        return None
    from cabench.kernels import online as kernel  # numba loads only when a loop runs

    index_of = (kernel.per_arm(index.function) if index.per_arm
                else kernel.from_arrays(index.function, method.entry.state_digest()))
    if index_of is None:
        return None
    reps, k = keys.shape
    counts = np.zeros((reps, k), dtype=np.int64)
    totals = np.zeros((reps, 3))
    optimal = np.zeros(reps, dtype=np.int64)
    sampler, table, costs, params = drawn
    s_r, s_c = loop.scales
    scalars = np.array([loop.budget, loop.log_term, loop.lam, s_r, s_c, loop.c_max], dtype=np.float64)
    arms_by = np.ascontiguousarray(np.stack([loop.profile, loop.gap, loop.hv]), dtype=np.float64)
    by_cost = np.argsort(-arms_by[0], kind="stable")
    online_loop = kernel.online_loop  # compiled or loaded on first use: outside the held interrupts and the fallback
    try:
        with in_kernel:
            fine, offsets, pulls = online_loop(index_of, sampler, np.ascontiguousarray(keys, dtype=np.uint64),
                                               table, costs, params, arms_by, by_cost, loop.best,
                                               loop.n_init, scalars, log, counts, totals, optimal)
    except Exception:
        if index.per_arm:
            raise
        return None  # a function of one's own raised: the numpy loop names it
    if not fine:
        return None
    logged = _by_step(loop, offsets, pulls) if log else None
    return Outcome(counts, totals[:, 0].copy(), totals[:, 1].copy(), totals[:, 2].copy(), optimal, logged)


def _by_step(loop: Loop, offsets: np.ndarray, pulls: np.ndarray) -> dict[str, Any]:
    """The compiled loop's log (pull by pull, repetition after repetition: step, arm, spend, regret) laid out as
    the numpy loop's, ``[steps, reps]``: an initial round position is a step when some repetition pulls there,
    and every decision after the initial rounds is one."""
    reps = len(offsets) - 1
    rep = np.repeat(np.arange(reps), np.diff(offsets))
    steps, arms = pulls[:, 0].astype(np.int64), pulls[:, 1].astype(np.int64)
    initial = loop.n_init * len(loop.profile)
    used = np.unique(steps[steps < initial])
    row = np.where(steps < initial, np.searchsorted(used, steps), len(used) + steps - initial)
    n_steps = int(row.max()) + 1 if len(row) else 0
    out: dict[str, Any] = {"spend": np.full((n_steps, reps), np.nan), "regret": np.full((n_steps, reps), np.nan),
                           "gap": np.full((n_steps, reps), np.nan), "arm": np.full((n_steps, reps), -1)}
    out["spend"][row, rep] = pulls[:, 2]
    out["regret"][row, rep] = pulls[:, 3]
    out["gap"][row, rep] = loop.gap[arms]
    out["arm"][row, rep] = arms
    return out
