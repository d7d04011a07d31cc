"""Sampling schedules of the three identification methods (SPEC §6).

CoPSI and PSI-SR share one elimination loop and differ only in the
cumulative sampling target ``n_r`` of phase r; Uniform samples every arm
equally and returns the empirical Pareto set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cabench import registry
from cabench.errors import CabenchError
from cabench.pareto import harmonic_l

PSI_METHODS = registry.names("psi")
COST_MODES = ("deterministic", "stochastic")


@dataclass(frozen=True)
class PsiMethod:
    """An identification method (no hyper-parameters beyond its name)."""

    name: str

    def __post_init__(self) -> None:
        if registry.is_user(self.name):
            registry.user_method(self.name, "psi")  # a one-line error now rather than in a worker
        elif self.name not in PSI_METHODS:
            raise CabenchError(
                f"methods: unknown identification method '{self.name}'; choose from {', '.join(PSI_METHODS)}, or give "
                "your own schedule as module:object")

    @property
    def display(self) -> str:
        return registry.display(self.name)

    @property
    def spec(self) -> registry.MethodEntry:
        return registry.spec(self.name, "psi")

    @property
    def eliminates(self) -> bool:
        return self.spec.eliminates


def sh_rounds(k: int) -> int:
    """Rounds of successive halving over ``k`` arms, ``ceil(log2 k)``."""
    return max(1, math.ceil(math.log2(k)))


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


@dataclass(frozen=True)
class Schedule:
    """Constants of a method's schedule for one problem and budget (normalised units)."""

    method: str
    budget: float  # B~ = B / max_i c_i
    costs: np.ndarray  # c~_i = c_i / max_i c_i (quantised)
    l_k: float  # L_{K,lambda} (CoPSI) or L_{K,1} (PSI-SR)
    mean_cost: float  # cbar~

    @classmethod
    def build(cls, method: PsiMethod, budget: float, costs: np.ndarray) -> Schedule:
        k = len(costs)
        lam = float(costs.min())
        l_k = harmonic_l(k, lam if method.spec.cost_aware else 1.0)
        return cls(method.name, float(budget), costs, l_k, float(np.mean(costs)))

    def target(self, active_cost: np.ndarray | float, k_active: int) -> np.ndarray:
        """Cumulative sampling target ``n_r`` of a phase.

        CoPSI: ``floor(B~ / (L_{K,lambda} C_r))`` (Algorithm 2, line 7);
        PSI-SR: ``floor(B~ / (cbar~ L_{K,1} k_r))``; Uniform:
        ``floor(B~ / sum_i c~_i)``. ``active_cost`` is ``C_r``, the exact sum
        of the active arms' costs.
        """
        rule = registry.spec(self.method, "psi")
        if registry.is_user(self.method):  # the first phase of a user schedule: nothing spent, nothing sampled
            reps = np.shape(active_cost)[0] if np.ndim(active_cost) else 1
            return registry.user_method(self.method, "psi")(
                self.budget, self.l_k, np.zeros(reps), np.zeros(reps, dtype=np.int64),
                np.broadcast_to(self.costs, (reps, len(self.costs))), len(self.costs)).astype(np.int64)
        if rule.rule == "uniform":
            return np.floor(self.budget / np.asarray(active_cost)).astype(np.int64)
        if rule.rule == "halving":  # first round: B / ceil(log2 K) spread over the active arms' costs
            return np.floor(self.budget / (sh_rounds(len(self.costs)) * np.asarray(active_cost))).astype(np.int64)
        if rule.cost_aware:  # CoPSI's line 7 (CoPSI-R's first phase and lower bound)
            return np.floor(self.budget / (self.l_k * np.asarray(active_cost))).astype(np.int64)
        value = math.floor(self.budget / (self.mean_cost * self.l_k * k_active))
        return np.full(np.shape(active_cost), value, dtype=np.int64)

    def check_first_phase(self, rho: float) -> None:
        """Fail clearly if the first phase cannot give every arm one sample (SPEC §6)."""
        total = float(self.costs.sum())
        first = int(np.asarray(self.target(np.array([total]), len(self.costs)))[0])
        if first >= 1:
            return
        if registry.is_user(self.method):
            raise CabenchError(f"rho {rho:g} is too small for {registry.display(self.method)} on {len(self.costs)} "
                               "arms: its first phase gives an arm no sample")
        rule = registry.spec(self.method, "psi")
        if rule.rule == "uniform":
            need = total
        elif rule.rule == "halving":
            need = sh_rounds(len(self.costs)) * total
        elif rule.cost_aware:
            need = self.l_k * total
        else:
            need = self.mean_cost * self.l_k * len(self.costs)
        smallest = rho * need / self.budget
        raise CabenchError(
            f"rho {rho:g} is too small for {registry.display(self.method)} on {len(self.costs)} arms: the first phase "
            f"cannot give every arm one sample; the smallest workable rho is {math.ceil(smallest * 1000) / 1000:g}"
        )
