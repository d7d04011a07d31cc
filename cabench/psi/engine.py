"""The batched elimination loop of CoPSI and PSI-SR, and Uniform (SPEC §6).

All repetitions of a batch advance phase by phase together: every repetition
has ``K - r + 1`` active arms in phase r, so the active arms form a dense
``[reps, k_r]`` block and the empirical gaps of paper eq. (1) are computed for
the whole batch at once. Samples are read from the paired streams in the order
of Algorithm 2 (arm by arm, each brought up to the phase target) and charged
either the deterministic profiling cost or the realised cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cabench import registry
from cabench.pareto import classification_gaps, pareto_mask, removal_choice
from cabench.problem import Problem, expand_blocks
from cabench.psi.schedules import COST_MODES, PsiMethod, Schedule, recycled_target, sh_rounds


@dataclass(frozen=True)
class PsiResult:
    """Per-repetition outcome of one method at one budget and cost mode."""

    budget_tokens: float
    returned: np.ndarray  # [reps, K] bool: the estimate P_hat
    samples: np.ndarray  # [reps, K] samples per arm
    spend_tokens: np.ndarray  # [reps]
    error: np.ndarray  # [reps] 1[P_hat != P*]
    f1: np.ndarray  # [reps]
    removed: np.ndarray | None = None  # [reps, K-1] arm removed in each phase (eliminating methods)
    accepted: np.ndarray | None = None  # [reps, K-1] whether it was accepted

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


class _Samples:
    """Per-repetition sample counts, reward sums and spend of one batch."""

    def __init__(self, problem: Problem, keys: np.ndarray, budget: float, costs: np.ndarray, stochastic: bool):
        self.problem, self.keys, self.budget = problem, keys, budget
        self.costs, self.stochastic = costs, stochastic
        reps, k = keys.shape
        self.n = np.zeros((reps, k), dtype=np.int64)
        self.sums = np.zeros((reps, k, problem.n_objectives))
        self.spend = np.zeros(reps)
        self.stopped = np.zeros(reps, dtype=bool)

    def bring_up(self, target: np.ndarray, active: np.ndarray) -> None:
        """Pull every active arm up to ``target`` samples, arm by arm in index order.

        A pull that would take the spend past the budget is not made, and the
        repetition stops sampling for good (SPEC §6).
        """
        need = np.where(active & ~self.stopped[:, None], np.maximum(target[:, None] - self.n, 0), 0)
        rows, arms = np.nonzero(need)  # row-major: per repetition, arms in index order
        if not len(rows):
            return
        lengths = need[rows, arms]
        if self.stochastic:
            self._bring_up_pulls(rows, arms, lengths)
        else:
            self._bring_up_blocks(rows, arms, lengths)

    def _bring_up_blocks(self, rows: np.ndarray, arms: np.ndarray, lengths: np.ndarray) -> None:
        """Deterministic costs: whole blocks at a time, with the per-pull budget rule applied exactly.

        ``rows``/``arms`` list the blocks in pull order (per repetition, arms in index order).
        """
        cost = self.costs[arms]
        block_cost = lengths * cost  # exact: quantised costs times whole numbers
        before = self.spend[rows] + running_total(block_cost, rows) - block_cost  # spend when the block starts
        broken = before + block_cost > self.budget
        broken_before = running_total(broken.astype(np.int64), rows) - broken  # earlier broken blocks
        fitted = np.where(broken | (broken_before > 0), 0, lengths)
        cut = np.flatnonzero(broken & (broken_before == 0))  # the block where sampling stops
        if len(cut):
            room, c, n = self.budget - before[cut], cost[cut], lengths[cut]
            k = np.clip(np.floor(room / c).astype(np.int64), 0, n)
            k += (k < n) & (before[cut] + (k + 1) * c <= self.budget)  # exact corrections of the floor
            k -= (k > 0) & (before[cut] + k * c > self.budget)
            fitted[cut] = k
            self.stopped[rows[cut]] = True
        keep = fitted > 0
        rows, arms, fitted = rows[keep], arms[keep], fitted[keep]
        if not len(rows):
            return
        starts = self.n[rows, arms]
        self.sums[rows, arms] += self.problem.reward_sums(self.keys[rows, arms], arms, starts, fitted)
        self.n[rows, arms] += fitted
        self.spend += np.bincount(rows, fitted * self.costs[arms], minlength=len(self.spend))

    def _bring_up_pulls(self, rows: np.ndarray, arms: np.ndarray, lengths: np.ndarray) -> None:
        """Realised costs: every pull's cost is read from its stream element; the pulls that fit the
        budget are a prefix of each repetition's pulls (costs are positive)."""
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

    def uniform_rounds(self, rounds: np.ndarray) -> None:
        """Deterministic costs: ``rounds`` samples of every arm."""
        self.bring_up(rounds, np.ones_like(self.n, dtype=bool))

    def uniform_stochastic(self) -> None:
        """Realised costs: add complete rounds while a whole round fits (SPEC §6)."""
        reps, k = self.n.shape
        all_arms = np.arange(k)
        rows = np.arange(reps)
        block = max(1, int(self.budget / self.costs.sum()))
        start = 0
        while rows.size:
            r = np.repeat(rows, block * k)
            a = np.tile(all_arms, rows.size * block)
            c = np.tile(np.repeat(start + np.arange(block), k), rows.size)
            rewards, tokens = self.problem.sample(self.keys[r, a], a, c)
            cost = self.problem.psi_cost(tokens).reshape(rows.size, block, k)
            round_cost = cost.sum(axis=2)  # exact
            fits = self.spend[rows, None] + np.cumsum(round_cost, axis=1) <= self.budget  # a prefix of rounds
            rewards = rewards.reshape(rows.size, block, k, -1) * fits[:, :, None, None]
            self.sums[rows] += rewards.sum(axis=1)
            self.n[rows] += fits.sum(axis=1)[:, None]
            self.spend[rows] += (round_cost * fits).sum(axis=1)
            done = ~fits.all(axis=1)
            self.stopped[rows[done]] = True
            rows = rows[~done]
            start += block

    def means(self, rows: np.ndarray, arms: np.ndarray) -> np.ndarray:
        n = self.n[rows, arms]
        return np.where(n[..., None] > 0, self.sums[rows, arms] / np.maximum(n, 1)[..., None], 0.0)


def run_psi(problem: Problem, method: PsiMethod, rho: float, keys: np.ndarray,
            cost_mode: str = "deterministic") -> PsiResult:
    """Run ``method`` at budget ``rho`` on every repetition of ``keys`` ``[reps, arms]``.

    Raises :class:`~cabench.errors.CabenchError` if the budget cannot give
    every arm a first sample.
    """
    if cost_mode not in COST_MODES:
        raise ValueError(cost_mode)
    reps, k = keys.shape
    budget_tokens = problem.budget_tokens(rho)
    budget = problem.psi_budget(rho)
    costs = problem.psi_profile_cost()
    schedule = Schedule.build(method, budget, costs)
    schedule.check_first_phase(rho)
    state = _Samples(problem, keys, budget, costs, cost_mode == "stochastic")
    rows = np.arange(reps)[:, None]
    removed = accepted_log = None

    if not method.eliminates:
        if cost_mode == "stochastic":
            state.uniform_stochastic()
        else:
            state.uniform_rounds(schedule.target(np.full(reps, costs.sum()), k))
        mu_hat = state.means(rows, np.broadcast_to(np.arange(k), (reps, k)))
        returned = pareto_mask(mu_hat)
    elif method.spec.rule == "halving":
        returned, removed, accepted_log = _halving(state, costs, reps, k)
    else:
        active = np.ones((reps, k), dtype=bool)
        accepted = np.zeros((reps, k), dtype=bool)
        removed = np.zeros((reps, k - 1), dtype=np.int64)
        accepted_log = np.zeros((reps, k - 1), dtype=bool)
        plan = registry.user_method(method.name, "psi") if registry.is_user(method.name) else recycled_target
        for phase in range(k - 1):
            k_r = k - phase
            active_cost = np.where(active, costs, 0.0).sum(axis=1)  # C_r, exact
            if method.spec.replans:  # planned from the state reached
                arms = np.nonzero(active)[1].reshape(reps, k_r)
                level = state.n[rows, arms].max(axis=1)
                target = np.asarray(plan(budget, schedule.l_k, state.spend, level, costs[arms], k_r), dtype=np.int64)
            else:
                target = schedule.target(active_cost, k_r)
            state.bring_up(target, active)  # lines 7-10
            arms = np.nonzero(active)[1].reshape(reps, k_r)
            mu_hat = state.means(rows, arms)  # line 11
            _, _, gamma, dominated = classification_gaps(mu_hat)  # lines 13-14, eq. (1)
            pos = removal_choice(gamma, dominated)  # line 15
            out = arms[np.arange(reps), pos]
            keep = ~dominated[np.arange(reps), pos]  # lines 16-20
            accepted[np.arange(reps), out] = keep
            active[np.arange(reps), out] = False  # line 21
            removed[:, phase], accepted_log[:, phase] = out, keep
        returned = accepted | active  # line 23

    truth = pareto_mask(problem.mu)
    hits = (returned & truth).sum(axis=1)
    f1 = 2.0 * hits / (returned.sum(axis=1) + truth.sum())
    return PsiResult(
        budget_tokens=budget_tokens,
        returned=returned,
        samples=state.n,
        spend_tokens=state.spend * float(problem.profile_cost.max()),
        error=(returned != truth).any(axis=1),
        f1=f1,
        removed=removed,
        accepted=accepted_log,
    )


def halving_order(gamma: np.ndarray, dominated: np.ndarray) -> np.ndarray:
    """Positions ``[..., k]`` from first to last removed: largest gap first, then dominated, then position."""
    k = gamma.shape[-1]
    position = np.broadcast_to(np.arange(k), gamma.shape)
    return np.lexsort((position, ~dominated, -gamma), axis=-1)


def _halving(state: _Samples, costs: np.ndarray, reps: int, k: int):
    """EGE-SH: ``ceil(log2 K)`` rounds, each with budget ``B / ceil(log2 K)`` spread evenly (in samples) over
    the active arms' costs; after each, the ``floor(k_r / 2)`` arms with the largest empirical gaps leave,
    accepted when not empirically dominated among the active arms."""
    rounds = sh_rounds(k)
    active = np.ones((reps, k), dtype=bool)
    accepted = np.zeros((reps, k), dtype=bool)
    removed = np.zeros((reps, k - 1), dtype=np.int64)
    kept_log = np.zeros((reps, k - 1), dtype=bool)
    rows = np.arange(reps)[:, None]
    done = 0
    level = np.zeros(reps, dtype=np.int64)
    for _ in range(rounds):
        k_r = int(active[0].sum())
        if k_r == 1:
            break
        active_cost = np.where(active, costs, 0.0).sum(axis=1)
        level = level + np.floor(state.budget / (rounds * active_cost)).astype(np.int64)
        state.bring_up(level, active)
        arms = np.nonzero(active)[1].reshape(reps, k_r)
        _, _, gamma, dominated = classification_gaps(state.means(rows, arms))
        order = halving_order(gamma, dominated)[:, : k_r // 2]
        out = arms[rows, order]
        keep = ~dominated[rows, order]
        accepted[rows, out] = keep
        active[rows, out] = False
        removed[:, done:done + k_r // 2], kept_log[:, done:done + k_r // 2] = out, keep
        done += k_r // 2
    return accepted | active, removed[:, :done], kept_log[:, :done]
