"""The batched identification engine: one batch of repetitions, any identification method (SPEC §6).

The engine owns the sampler (:class:`_Samples`): counts, reward sums and spend
of every repetition, read from the paired streams in the order of Algorithm 2
(arm by arm, each brought up to its target) and charged either the
deterministic profiling cost (in blocks, compiled: :mod:`cabench.kernels.blocks`) or the realised
cost, under SPEC §6's budget rule.
The method's batched rule (its entry's ``identify``, :mod:`cabench.methods`)
decides how many samples each active arm gets and which arms leave; all
repetitions of a batch advance together, so their active arms form dense
``[reps, k_r]`` blocks. The engine then scores the returned set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cabench.errors import CabenchError
from cabench.interrupts import in_kernel
from cabench.methods.configured import PsiMethod
from cabench.pareto import pareto_mask
from cabench.problem import Problem, ReplaySampler, expand_blocks

COST_MODES = ("deterministic", "stochastic")


@dataclass(frozen=True)
class PsiResult:
    """Per-repetition outcome of one method at one budget and cost mode."""

    budget: float  # B in the cost unit
    returned: np.ndarray  # [reps, K] bool: the estimate P_hat
    samples: np.ndarray  # [reps, K] samples per arm
    spend: np.ndarray  # [reps], cost unit
    error: np.ndarray  # [reps] 1[P_hat != P*]
    f1: np.ndarray  # [reps]
    removed: np.ndarray | None = None  # [reps, m] the arms removed, in order (eliminating methods)
    accepted: np.ndarray | None = None  # [reps, m] whether each was accepted

    @property
    def size(self) -> np.ndarray:
        return self.returned.sum(axis=1)


def running_total(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Cumulative sum of ``values`` restarted wherever the (sorted) ``groups`` label changes.

    Exact for quantised values, whatever their number.
    """
    first = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    total = np.cumsum(values)
    return total - np.repeat(total[first] - values[first], np.diff(np.r_[first, len(groups)]))


def _replay_quanta(problem: Problem) -> np.ndarray | None:
    """The rewards ``[K, Q, D]`` a log-replay sampler draws from, in whole quanta (its ``quanta``), else None."""
    return problem.sampler.quanta if isinstance(problem.sampler, ReplaySampler) else None


#: The most pulls of one repetition drawn at once with realised costs (:meth:`_Samples._bring_up_pulls`).
ROUND = 1 << 15


class _Samples:
    """Per-repetition sample counts, reward sums and spend of one batch."""

    def __init__(self, problem: Problem, keys: np.ndarray, budget: float, costs: np.ndarray, stochastic: bool):
        self.problem, self.keys, self.budget = problem, keys, budget
        self.costs, self.stochastic = costs, stochastic
        reps, k = keys.shape
        self.replay = _replay_quanta(problem)
        self.n = np.zeros((reps, k), dtype=np.int64)
        self.sums = np.zeros((reps, k, problem.n_objectives))
        self.spend = np.zeros(reps)
        self.stopped = np.zeros(reps, dtype=bool)

    def bring_up(self, target: np.ndarray, active: np.ndarray) -> None:
        """Pull every active arm up to ``target`` samples, arm by arm in index order.

        A pull that would take the spend past the budget is not made, and the
        repetition stops sampling for good (SPEC §6).
        """
        if not self.stochastic:
            self._bring_up_blocks(np.ascontiguousarray(target, dtype=np.int64), np.ascontiguousarray(active))
            return
        need = np.where(active & ~self.stopped[:, None], np.maximum(target[:, None] - self.n, 0), 0)
        # a target far beyond any budget (level + 2**62) asks no more than a repetition's pulls can sum to in int64:
        # more than any budget pays, so the same pulls are made
        need = np.minimum(need, (2**62) // max(self.n.shape[1], 1))
        rows, arms = np.nonzero(need)  # row-major: per repetition, arms in index order
        if len(rows):
            self._bring_up_pulls(rows, arms, need[rows, arms])

    def _bring_up_blocks(self, target: np.ndarray, active: np.ndarray) -> None:
        """Deterministic costs: whole blocks at a time, with the per-pull budget rule applied exactly
        (:mod:`cabench.kernels.blocks`, compiled; in one call when the problem replays logs)."""
        from cabench.kernels import blocks  # deferred: numba loads when a method first runs

        if self.replay is not None:
            with in_kernel:
                blocks.replay_bring_up(target, active, self.n, self.stopped, self.spend, self.costs, self.budget,
                                       self.keys, self.replay, self.sums)
            return
        rows, arms, starts, lengths = np.empty((4, int(active.sum())), dtype=np.int64)  # a block per active arm
        with in_kernel:
            count = blocks.plan(target, active, self.n, self.stopped, self.spend, self.costs, self.budget, rows,
                                arms, starts, lengths)
        if count:
            rows, arms, starts, lengths = rows[:count], arms[:count], starts[:count], lengths[:count]
            sums = self.problem.reward_sums(self.keys[rows, arms], arms, starts, lengths)
            with in_kernel:
                blocks.add(rows, arms, lengths, np.ascontiguousarray(sums, dtype=np.float64), self.costs, self.n,
                           self.sums, self.spend)

    def _bring_up_pulls(self, rows: np.ndarray, arms: np.ndarray, lengths: np.ndarray) -> None:
        """Realised costs: every pull's cost is read from its stream element; the pulls that fit the
        budget are a prefix of each repetition's pulls (costs are positive). They are drawn in rounds of at
        most :data:`ROUND` pulls of each repetition, the first not yet made, in order: the same pulls as in one
        round, with memory bounded whatever a target asks (a schedule's target of 10^12 samples, say, where the
        budget pays for hundreds)."""
        while len(rows):
            done = running_total(lengths, rows) - lengths  # the pulls of its repetition before each block's
            now = np.clip(ROUND - done, 0, lengths)
            drawn = now > 0
            self._pull_blocks(rows[drawn], arms[drawn], now[drawn])
            lengths = lengths - now
            left = (lengths > 0) & ~self.stopped[rows]
            rows, arms, lengths = rows[left], arms[left], lengths[left]

    def _pull_blocks(self, rows: np.ndarray, arms: np.ndarray, lengths: np.ndarray) -> None:
        """One round of :meth:`_bring_up_pulls`: the blocks ``lengths`` (positive), in each repetition's order."""
        block, counts, offsets = expand_blocks(self.n[rows, arms], lengths)
        rewards, tokens = self.problem.sample(self.keys[rows, arms][block], arms[block], counts)
        cost = self.problem.psi_cost(tokens)
        pull_rows = rows[block]
        fits = self.spend[pull_rows] + running_total(cost, pull_rows) <= self.budget
        fitted = np.add.reduceat(fits.astype(np.int64), offsets)
        self.stopped[rows[fitted < lengths]] = True
        self.sums[rows, arms] += np.add.reduceat(rewards * fits[:, None], offsets, axis=0)
        self.n[rows, arms] += fitted
        self.spend += np.bincount(rows, np.add.reduceat(cost * fits, offsets), minlength=len(self.spend))

    def means(self, rows: np.ndarray, arms: np.ndarray) -> np.ndarray:
        n = self.n[rows, arms]
        return np.where(n[..., None] > 0, self.sums[rows, arms] / np.maximum(n, 1)[..., None], 0.0)


def run_psi(problem: Problem, method: PsiMethod, rho: float, keys: np.ndarray,
            cost_mode: str = "deterministic") -> PsiResult:
    """Run ``method`` at budget ``rho`` on every repetition of ``keys`` ``[reps, arms]``.

    Raises :class:`~cabench.errors.CabenchError` if the budget is too small for
    the method (its ``skip``: the first phase cannot give every arm a sample).
    """
    if cost_mode not in COST_MODES:
        raise ValueError(cost_mode)
    reason = method.entry.skip(problem, rho)
    if reason is not None:
        raise CabenchError(reason)
    state = _Samples(problem, keys, problem.psi_budget(rho), problem.psi_profile_cost(), cost_mode == "stochastic")
    found = method.entry.identify(state)
    truth = pareto_mask(problem.mu)
    hits = (found.returned & truth).sum(axis=1)
    f1 = 2.0 * hits / (found.returned.sum(axis=1) + truth.sum())
    return PsiResult(
        budget=problem.budget(rho),
        returned=found.returned,
        samples=state.n,
        spend=state.spend * float(problem.profile_cost.max()),
        error=(found.returned != truth).any(axis=1),
        f1=f1,
        removed=found.removed,
        accepted=found.accepted,
    )
