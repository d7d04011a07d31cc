"""Elimination schedules: Algorithm 2's loop with a phase schedule (CoPSI, PSI-SR, CoPSI-R, yours).

``K - 1`` phases: in phase r every active arm is brought up to the schedule's cumulative target
``n_r`` (lines 6-10); then the arm with the largest empirical gap leaves, accepted when it is not
empirically dominated (lines 11-21); the accepted arms and the last active one are returned (line 23).
The methods differ only in ``n_r``:

- CoPSI: ``floor(B~ / (L_{K,lambda} C_r))`` (line 7), ``C_r`` the active arms' cost;
- PSI-SR: ``floor(B~ / (cbar~ L_{K,1} k_r))``, blind to cost (SPEC §6);
- CoPSI-R: CoPSI's target plus a share of what the budget holds beyond every later CoPSI target
  (:func:`recycled_target`, docs/methods.md);
- yours: ``target(budget, l_k, spend, level, active_costs, k_active)`` per repetition, cost-aware
  (``L_{K,lambda}``) and re-planned every phase (:func:`schedule`).

Each entry holds its schedule twice, written separately: over arrays of repetitions for the batched
loop (:class:`Phase`), and over one repetition's numbers for the ask/tell policy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from cabench.errors import CabenchError
from cabench.methods.identification import (
    Identification,
    IdentificationEntry,
    PhasePlan,
    Pulls,
    Samples,
    empirical_gaps,
    too_small,
)
from cabench.methods.spec import Spec, Style, checked_display, mark_decorated, register, stamp_loaded, user_style
from cabench.methods.user import UserMethod, UserMethodError, checked
from cabench.pareto import TIE_ATOL, TIE_RTOL, classification_gaps, harmonic_l, removal_choice
from cabench.problem import Problem


@dataclass(frozen=True)
class Phase:
    """What a batched schedule sees when a phase starts (normalised units)."""

    budget: float  # B~
    l_k: float  # L_{K,lambda}, or L_{K,1} for a cost-blind schedule
    mean_cost: float  # cbar~ over all K arms
    spend: np.ndarray  # [reps] spend so far
    level: np.ndarray  # [reps] the active arms' largest sample count
    active_costs: np.ndarray  # [reps, k_r]
    active_cost: np.ndarray  # [reps] C_r, exact (quantised costs)
    k_active: int


class _LoopPhase(Phase):
    """:class:`Phase` as the batched loop gives it: ``level`` and ``active_costs`` are found only when a schedule
    reads them (CoPSI's and PSI-SR's never do)."""

    _n: np.ndarray  # [reps, K] sample counts
    _active: np.ndarray  # [reps, K]
    _costs: np.ndarray  # [K]

    def __init__(self, budget: float, l_k: float, mean_cost: float, spend: np.ndarray, n: np.ndarray,
                 active: np.ndarray, costs: np.ndarray, active_cost: np.ndarray, k_active: int) -> None:
        for name, value in (("budget", budget), ("l_k", l_k), ("mean_cost", mean_cost), ("spend", spend),
                            ("active_cost", active_cost), ("k_active", k_active), ("_n", n), ("_active", active),
                            ("_costs", costs)):
            object.__setattr__(self, name, value)  # a frozen dataclass

    @cached_property
    def _arms(self) -> np.ndarray:
        return np.nonzero(self._active)[1].reshape(len(self._active), self.k_active)

    @cached_property
    def level(self) -> np.ndarray:  # type: ignore[override]
        return self._n[np.arange(len(self._n))[:, None], self._arms].max(axis=1)

    @cached_property
    def active_costs(self) -> np.ndarray:  # type: ignore[override]
        return self._costs[self._arms]


BatchedTarget = Callable[[Phase], np.ndarray]
#: Per-pull schedule: (B~, L, cbar~, spend, level, the active arms' costs) -> n_r.
TargetOfOne = Callable[[float, float, float, float, int, list[float]], int]


@dataclass(frozen=True)
class Elimination(IdentificationEntry):
    """An elimination method.

    ``target`` and ``target_of_one`` are its batched and per-pull schedules. ``first_phase_cost``
    ``(L, cbar~, costs) -> spend`` is what its first phase needs to give every arm one sample (None:
    ask the schedule). ``floor`` is a schedule this one never falls below (CoPSI for CoPSI-R): its
    first phase decides whether a budget is workable. ``cubic`` recomputes every phase's gaps in numpy
    (:func:`cubic_rule`, O(k^2) per phase) instead of keeping them (:func:`incremental_rule`): the
    same decisions, kept as the tests' oracle and the benchmark's baseline.
    """

    cost_aware: bool
    target: BatchedTarget
    target_of_one: TargetOfOne
    first_phase_cost: Callable[[float, float, np.ndarray], float] | None = None
    floor: Elimination | None = None
    cubic: bool = False

    def l_k(self, costs: np.ndarray) -> float:
        """``L_{K,lambda}`` with ``lambda = min_i c~_i``, or ``L_{K,1}`` for a cost-blind schedule."""
        return harmonic_l(len(costs), float(costs.min()) if self.cost_aware else 1.0)

    def check_repeatable(self) -> None:
        """A schedule of your own: :func:`repeatable`."""
        if isinstance(self.target, _Batched):
            repeatable(self.target, self.spec.name)

    def skip(self, problem: Problem, rho: float) -> str | None:
        budget, costs = problem.psi_budget(rho), problem.psi_profile_cost()
        basis = self.floor or self
        l_k, mean_cost = basis.l_k(costs), float(np.mean(costs))
        if basis.first_phase_cost is not None:
            return too_small(rho, self.spec.display, budget, costs, basis.first_phase_cost(l_k, mean_cost, costs))
        k = len(costs)
        returned = _first_target(basis.target, budget, l_k, mean_cost, costs)
        if int(returned) >= 1:
            return None
        copsi = int(_copsi_of_one(budget, l_k, mean_cost, 0.0, 0, list(costs)))
        if copsi >= 1:  # CoPSI's first phase samples here: a reason, not an error (plan scans budgets with skip)
            later = _first_sampling_rho(basis.target, problem, rho, self)
            if later is None:  # no budget is enough: not "too small", a schedule that never samples
                return (f"{self.spec.display} on {k} arms gives an arm no sample in its first phase at rho {rho:g} "
                        f"(it returned {returned:g}, where CoPSI's first phase gives every arm {copsi}), nor at any "
                        f"rho up to {_LARGEST_RHO:g}: a first target is the cumulative samples each arm gets, at "
                        "least 1")
            return (f"rho {rho:g} is too small for {self.spec.display} on {k} arms: its first phase gives an arm no "
                    f"sample (it returned {returned:g}, where CoPSI's first phase gives every arm {copsi}); it samples "
                    f"from rho {later:g}")
        return (f"rho {rho:g} is too small for {self.spec.display} on {k} arms: its first phase gives an arm no "
                f"sample, as CoPSI's gives none{_copsi_from(problem, rho)}")

    def identify(self, samples: Samples) -> Identification:
        reps, k = samples.n.shape
        costs, budget = samples.costs, samples.budget
        self.check_repeatable()
        l_k, mean_cost = self.l_k(costs), float(np.mean(costs))
        rows = np.arange(reps)
        active = np.ones((reps, k), dtype=bool)
        accepted = np.zeros((reps, k), dtype=bool)
        removed = np.zeros((reps, k - 1), dtype=np.int64)
        accepted_log = np.zeros((reps, k - 1), dtype=bool)
        active_cost = np.where(active, costs, 0.0).sum(axis=1)  # C_r, exact (quantised costs), less each leaver's
        leave = (cubic_rule if self.cubic else incremental_rule)(samples)
        for phase in range(k - 1):
            k_r = k - phase
            target = self.target(_LoopPhase(budget, l_k, mean_cost, samples.spend, samples.n, active, costs,
                                            active_cost, k_r))
            samples.bring_up(target, active)  # lines 7-10
            out, keep = leave(active)  # lines 11-20
            accepted[rows, out] = keep
            active[rows, out] = False  # line 21
            active_cost = active_cost - costs[out]
            removed[:, phase], accepted_log[:, phase] = out, keep
        return Identification(accepted | active, removed, accepted_log)  # line 23

    def per_pull(self, policy: Pulls, rho: float | None) -> PhasePlan:
        return _Eliminating(self, policy, rho)


#: Lines 11-20 of a phase: the active arms ``[reps, K]`` in, the arm that leaves and whether it is accepted out.
LeaveRule = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def cubic_rule(samples: Samples) -> LeaveRule:
    """Every phase's empirical means and gaps computed anew (numpy, O(k^2) per phase and repetition)."""
    rows = np.arange(len(samples.n))

    def leave(active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        arms = np.nonzero(active)[1].reshape(len(rows), -1)
        _, _, gamma, dominated = classification_gaps(samples.means(rows[:, None], arms))  # lines 11-14, eq. (1)
        pos = removal_choice(gamma, dominated)  # line 15
        return arms[rows, pos], ~dominated[rows, pos]  # lines 16-20

    return leave


def incremental_rule(samples: Samples) -> LeaveRule:
    """The gaps kept from phase to phase (:class:`cabench.kernels.gaps.IncrementalGaps`): recomputed for a
    repetition whose active arms got samples, updated for the arm that left otherwise (O(k))."""
    from cabench.kernels.gaps import IncrementalGaps  # deferred: numba loads when a method first runs

    reps, k, d = samples.sums.shape
    gaps = IncrementalGaps(reps, k, d, atol=TIE_ATOL, rtol=TIE_RTOL)
    return lambda active: gaps.leave(samples.n, samples.sums, active)


class _Eliminating(PhasePlan):
    """Algorithm 2 pull by pull: each phase's pulls queued ahead, then one elimination."""

    def __init__(self, method: Elimination, policy: Pulls, rho: float | None) -> None:
        super().__init__(policy)
        costs = policy.costs
        lam = min(costs) if method.cost_aware else 1.0  # cost-blind (PSI-SR): L_{K,1}
        self.l_k = 1.0 + sum(1.0 / (1.0 + (ell - 1) * lam) for ell in range(2, policy.k + 1))  # L_{K,lambda}
        self.cbar = sum(costs) / policy.k
        self.schedule = method.target_of_one
        self.phase = 0
        if isinstance(method.target_of_one, _OfOne):  # a schedule of your own: refused where CoPSI samples
            returned = method.target_of_one.raw(policy.budget, self.l_k, self.cbar, policy.spend, 0, list(costs))
            copsi = _copsi_of_one(policy.budget, self.l_k, self.cbar, 0.0, 0, list(costs))
            if int(returned) < 1 and copsi >= 1:
                at = f"rho {rho:g}" if rho is not None else f"budget {policy.budget:g}"
                raise first_phase_error(method.spec.name, returned, at, policy.k, copsi)
        if self._target((method.floor or method).target_of_one) < 1:
            raise CabenchError(f"rho {rho if rho is not None else policy.budget:g}: the first phase of "
                               f"{method.spec.display} cannot give every arm one sample")
        self.bring_up(self._target(self.schedule))

    def _target(self, schedule: TargetOfOne) -> int:
        p = self.policy
        return schedule(p.budget, self.l_k, self.cbar, p.spend, max(p.n[i] for i in p.active),
                        [p.costs[i] for i in p.active])

    def advance(self) -> None:
        p = self.policy
        if self.phase < p.k - 1:  # line 5: K - 1 phases
            self._eliminate()
            self.phase += 1
        if self.phase < p.k - 1:
            self.bring_up(self._target(self.schedule))  # lines 6-7: C_r = sum of the active arms' costs
        else:
            p.returned = sorted(p.accepted | set(p.active))  # line 23

    def _eliminate(self) -> None:
        """Lines 11-21: remove the arm with the largest empirical gap, accepting it if not dominated."""
        p = self.policy
        p.phases.append((tuple(p.active), min(p.n[i] for i in p.active)))
        gamma, dominated = empirical_gaps({i: p.mean(i) for i in p.active})
        top = max(gamma.values())  # line 15, ties: dominated first, then lowest index
        tied = [i for i in p.active if abs(gamma[i] - top) <= TIE_ATOL + TIE_RTOL * abs(top)]
        p.leave(([i for i in tied if dominated[i]] or tied)[0], dominated)


# --- CoPSI and PSI-SR (the paper's) -----------------------------------------------------------------------


def _copsi(phase: Phase) -> np.ndarray:
    return np.floor(phase.budget / (phase.l_k * phase.active_cost)).astype(np.int64)  # line 7


def _copsi_of_one(budget: float, l_k: float, cbar: float, spend: float, level: int, costs: list[float]) -> int:
    return math.floor(budget / (l_k * sum(costs)))  # line 7


def _copsi_first(l_k: float, mean_cost: float, costs: np.ndarray) -> float:
    return l_k * float(costs.sum())


def _psi_sr(phase: Phase) -> np.ndarray:
    value = math.floor(phase.budget / (phase.mean_cost * phase.l_k * phase.k_active))
    return np.full(np.shape(phase.active_cost), value, dtype=np.int64)


def _psi_sr_of_one(budget: float, l_k: float, cbar: float, spend: float, level: int, costs: list[float]) -> int:
    return math.floor(budget / (cbar * l_k * len(costs)))


def _psi_sr_first(l_k: float, mean_cost: float, costs: np.ndarray) -> float:
    return mean_cost * l_k * len(costs)


COPSI = Elimination(Spec("copsi", "psi", "paper", proposed=True, comparison_rank=1), None, cost_aware=True,
                    target=_copsi, target_of_one=_copsi_of_one, first_phase_cost=_copsi_first)
register(COPSI)
register(Elimination(Spec("psi-sr", "psi", "paper"), None, cost_aware=False, target=_psi_sr,
                     target_of_one=_psi_sr_of_one, first_phase_cost=_psi_sr_first))


# --- CoPSI-R (cabench's own) --------------------------------------------------------------------------------


def phase_share(k_active: int) -> float:
    """The share of the spare budget a phase with ``k_active`` arms spends now: a successive-rejects
    profile over the phases left (this one weighs 1, a later one with m arms 1 / (m + 1))."""
    weight = 1.0
    for j in range(3, k_active + 1):
        weight = weight + 1.0 / j
    return 1.0 / weight


def recycled_target(budget: float, l_k: float, spend: np.ndarray, level: np.ndarray, active_costs: np.ndarray,
                    k_active: int) -> np.ndarray:
    """CoPSI-R's cumulative target of a phase (docs/methods.md), per repetition.

    ``base = max(floor(B / (L_{K,lambda} C_r)), level)`` is CoPSI's target: never fewer samples. Every
    later phase's CoPSI target costs at most ``R = (B / L) U - min(base, B / (L C_r)) (C_r - c_max)``
    whatever the removal order, with ``U = sum_{m=2}^{k_r - 1} t_m + t_2``, ``t_m = c_max / (c_max +
    s_{m-1})`` and ``s_j`` the sum of the ``j`` cheapest active costs. What the budget holds beyond
    ``base`` and ``R`` is spent on a successive-rejects profile: this phase takes
    :func:`phase_share` of it, the last phase all of it. ``active_costs`` is ``[reps, k_r]``, ``spend``
    and ``level`` (the active arms' common sample count) are ``[reps]``.
    """
    ordered = np.sort(active_costs, axis=1)
    total = ordered.sum(axis=1)  # C_r (exact: quantised costs)
    top = ordered[:, -1]
    cheapest = np.cumsum(ordered, axis=1)  # s_j = cheapest[:, j - 1]
    base = np.maximum(np.floor(budget / (l_k * total)).astype(np.int64), level)
    if k_active > 2:
        bound = top / (top + cheapest[:, 0])  # t_2, the last arm's share
        for m in range(2, k_active):  # one addition per term, in order (the per-pull reference's order)
            bound = bound + top / (top + cheapest[:, m - 2])
        reserve = budget / l_k * bound - np.minimum(base, budget / (l_k * total)) * (total - top)
    else:
        reserve = np.zeros_like(total)
    room = budget - spend - (base - level) * total - reserve
    extra = np.floor(np.maximum(room, 0.0) * phase_share(k_active) / total).astype(np.int64)
    return base + extra


def _recycled(phase: Phase) -> np.ndarray:
    return recycled_target(phase.budget, phase.l_k, phase.spend, phase.level, phase.active_costs, phase.k_active)


def _recycled_of_one(budget: float, l_k: float, cbar: float, spend: float, level: int, costs: list[float]) -> int:
    """CoPSI-R pull by pull: CoPSI's target, plus a successive-rejects share of what the budget holds beyond
    it and beyond a reserve that covers every later CoPSI target, whatever the order."""
    ordered = sorted(costs)
    k_r = len(ordered)
    total = 0.0
    sums = []
    for c in ordered:
        total += c  # C_r (exact: quantised costs); sums[j - 1] = s_j, the j cheapest
        sums.append(total)
    top = ordered[-1]
    base = max(math.floor(budget / (l_k * total)), level)
    reserve = 0.0
    if k_r > 2:
        bound = top / (top + sums[0])  # t_2, the last arm's share
        for m in range(2, k_r):  # U = sum_{m=2}^{k_r - 1} c_max / (c_max + s_{m-1}) + t_2
            bound = bound + top / (top + sums[m - 2])
        reserve = budget / l_k * bound - min(base, budget / (l_k * total)) * (total - top)
    weight = 1.0
    for j in range(3, k_r + 1):  # this phase weighs 1, a later one with m arms 1 / (m + 1)
        weight = weight + 1.0 / j
    room = budget - spend - (base - level) * total - reserve
    return base + math.floor(max(room, 0.0) * (1.0 / weight) / total)


register(Elimination(Spec("copsi-r", "psi", "beyond", comparison_rank=2), None, cost_aware=True, target=_recycled,
                     target_of_one=_recycled_of_one, floor=COPSI))


# --- yours --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Batched:
    """A schedule of your own over a batch of repetitions, called with the documented arguments."""

    function: UserMethod

    def state_digest(self) -> str | None:
        """The settings the schedule holds beyond its source (:meth:`UserMethod.state_digest`)."""
        return self.function.state_digest()

    def raw(self, phase: Phase) -> np.ndarray:
        """The targets as the schedule returned them (checked: finite, not negative), before truncation."""
        return self.function(phase.budget, phase.l_k, phase.spend, phase.level, phase.active_costs, phase.k_active)

    def __call__(self, phase: Phase) -> np.ndarray:
        return np.asarray(self.raw(phase), dtype=np.int64)


@dataclass(frozen=True)
class _OfOne:
    """A schedule of your own pull by pull: it works on arrays of repetitions, here one."""

    function: UserMethod

    def state_digest(self) -> str | None:
        """The settings the schedule holds beyond its source (:meth:`UserMethod.state_digest`)."""
        return self.function.state_digest()

    def raw(self, budget: float, l_k: float, cbar: float, spend: float, level: int, costs: list[float]) -> float:
        """The target as the schedule returned it (checked: finite, not negative), before truncation."""
        values = self.function(budget, l_k, np.array([spend]), np.array([level]), np.array([costs]), len(costs))
        return float(values[0])

    def __call__(self, budget: float, l_k: float, cbar: float, spend: float, level: int, costs: list[float]) -> int:
        return int(self.raw(budget, l_k, cbar, spend, level, costs))


#: The schedules :func:`repeatable` probed: id of the function -> the function, held so that its id is never another
#: function's (a schedule's checked wrapper is made anew for each config that names it).
_PROBED: dict[int, Any] = {}


def repeatable(target: _Batched, name: str) -> None:
    """Refuse a schedule of your own that returns other targets for the same phase (random draws, a count kept
    between calls), or whose target for a repetition depends on the other repetitions it is called with: the
    batched loop calls it on the repetitions of a chunk, whose size follows ``chunk_size`` and ``n_jobs``, and the
    same config and seed must give the same results whatever they are. Probed once per process, on three
    repetitions of spread numbers, twice, then each repetition alone (equal within a relative 1e-9)."""
    function = target.function.function  # the schedule itself
    if id(function) in _PROBED:
        return
    rng = np.random.Generator(np.random.PCG64(20261))  # fixed probe values, a spread of each argument
    reps, k = 3, 4
    costs = rng.uniform(0.1, 1.0, (reps, k))
    phase = Phase(4000.0, 3.0, 0.5, rng.uniform(0.0, 1500.0, reps), rng.integers(1, 6, reps).astype(np.int64), costs,
                  costs.sum(axis=1), k)  # (targets in the hundreds: a share drawn anew moves them)
    alone = [replace(phase, spend=phase.spend[r:r + 1], level=phase.level[r:r + 1],
                     active_costs=costs[r:r + 1], active_cost=phase.active_cost[r:r + 1]) for r in range(reps)]
    try:
        together = np.asarray(target.raw(phase), dtype=float)
        again = np.asarray(target.raw(phase), dtype=float)
        each = np.array([float(np.asarray(target.raw(one), dtype=float)[0]) for one in alone])
    except UserMethodError:
        _PROBED[id(function)] = function
        return  # what the schedule does wrong on these numbers, the loop that meets it names
    if not np.array_equal(together, again):
        r = int(np.flatnonzero(together != again)[0])
        raise UserMethodError(f"methods: {name}: the schedule returns other targets for the same phase "
                              f"({float(together[r])!r}, then {float(again[r])!r}); it must be a function of its "
                              "arguments alone (no random draws, nothing kept between calls), so that the same config "
                              "and seed give the same results")
    apart = ~np.isclose(together, each, rtol=1e-9, atol=0.0)
    if apart.any():
        r = int(np.flatnonzero(apart)[0])
        raise UserMethodError(f"methods: {name}: the schedule's target for a repetition depends on the other "
                              f"repetitions it is called with ({float(together[r])!r} among {reps}, "
                              f"{float(each[r])!r} alone); the "
                              "loop calls it on chunks of repetitions: it may read only each repetition's row")
    _PROBED[id(function)] = function  # passed: not probed again in this process (a refused one is, every time)


#: The largest rho a config may give: how far :func:`_first_sampling_rho` looks.
_LARGEST_RHO = 1e9


def _first_target(target: BatchedTarget, budget: float, l_k: float, mean_cost: float, costs: np.ndarray) -> float:
    """A schedule's first-phase target at budget ``B~`` (nothing spent, no samples yet), as it returned it."""
    phase = Phase(budget, l_k, mean_cost, np.zeros(1), np.zeros(1, dtype=np.int64), costs[None, :],
                  np.array([costs.sum()]), len(costs))
    return float((target.raw(phase) if isinstance(target, _Batched) else target(phase))[0])


def _first_sampling_rho(target: BatchedTarget, problem: Problem, rho: float, method: Elimination) -> float | None:
    """The first of ``2 rho, 4 rho, ...`` (up to the largest rho a config may give) at which the schedule's first
    phase gives every arm a sample; None when none does."""
    costs = problem.psi_profile_cost()
    l_k, mean_cost = method.l_k(costs), float(np.mean(costs))
    at = 2.0 * rho
    while at <= _LARGEST_RHO:
        if _first_target(target, problem.psi_budget(at), l_k, mean_cost, costs) >= 1:
            return at
        at *= 2.0
    return None


def _copsi_from(problem: Problem, rho: float) -> str:
    """`` below rho R``: the smallest rho at which CoPSI's first phase gives every arm a sample."""
    reason = COPSI.skip(problem, rho)
    smallest = reason.rpartition("the smallest workable rho is ")[2] if reason else ""
    return f" below rho {smallest}" if smallest else ""


def first_phase_error(name: str, returned: float, at: str, k: int, copsi: int) -> UserMethodError:
    """A schedule of your own whose first phase gives no arm a sample (it returned ``returned``) ``at`` the budget of
    a per-pull run, where CoPSI's gives every arm ``copsi``, as one line."""
    head = (f"methods: {name} returned {returned:g} as its first phase's target at {at} on {k} arms, so no arm gets "
            f"a sample, where CoPSI's first phase gives every arm {copsi}")
    return UserMethodError(f"{head}; a first target is the cumulative samples each arm gets, at least 1 wherever "
                           "the built-in schedules sample: fix the method or remove it from methods")


def schedule_entry(name: str, function: Callable[..., np.ndarray], *, shown: Style | None = None,
                   source: str | None = None) -> Elimination:
    """The identification method ``name`` that eliminates on the schedule ``function(budget, l_k, spend,
    level, active_costs, k_active)``, checked now (its signature) and on every call."""
    user = checked(name, "psi", function)
    return Elimination(Spec(name, "psi", "user", shown=shown), source, cost_aware=True, target=_Batched(user),
                       target_of_one=_OfOne(user))


def schedule(name: str, *, display: str | None = None, color: str | None = None, marker: str | None = None
             ) -> Callable[[Callable[..., np.ndarray]], Callable[..., np.ndarray]]:
    """Register ``target(budget, l_k, spend, level, active_costs, k_active)`` as the identification method
    ``name`` (a decorator; the function is returned unchanged)."""

    def decorate(function: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        if display is not None:
            checked_display(name, display)
        register(schedule_entry(name, function, shown=user_style(name, display, color, marker),
                                source=function.__module__))
        mark_decorated(function, name, "psi")
        stamp_loaded(function.__module__)
        return function

    return decorate
