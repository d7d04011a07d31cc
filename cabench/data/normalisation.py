"""What the profiling split fixes: the objectives' scales, the costs and the budgets (SPEC §2.2, §2.5, §3).

:func:`fit_normalisation` turns the profiling split of the logs (every
configuration on every profiling instance) into a :class:`Normalisation`: the
declared objectives (:mod:`cabench.data.terms`) with their bounds (the paper's
efficiency from ``tau5``, ``tau95``), the deterministic costs ``c_i``, ``c_max``
and ``lambda`` in the declared cost unit. Dataset preprocessing, the replay
problem, synthetic instances and live profiling all charge, budget and reward
through this one object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cabench.data.terms import COST_COLUMN, COST_COLUMNS, PAPER_TERMS, ObjectiveSpec, Terms
from cabench.errors import CabenchError
from cabench.quantize import quantize


@dataclass(frozen=True)
class Objective:
    """One objective: a reward in ``[0, 1]`` computed from one log column, larger is better.

    The reward maps the column's ``worst`` value to 0 and its ``best`` to 1,
    linearly in the value or, with ``inverse``, in its reciprocal, and clips
    to ``[0, 1]``. A synthetic instance's sampler draws its rewards itself;
    its objectives name the column a log of its pulls would hold.
    """

    name: str
    column: str
    worst: float = 0.0
    best: float = 1.0
    inverse: bool = False

    @property
    def direction(self) -> str:
        """``max`` when larger column values are better, else ``min``."""
        return "max" if self.best > self.worst else "min"

    def reward(self, values: Any) -> np.ndarray:
        """``clip((g(x) - g(worst)) / (g(best) - g(worst)), 0, 1)``, ``g(x) = 1/x`` if ``inverse`` else ``x``."""
        x = np.asarray(values, dtype=np.float64)
        if self.inverse:
            return np.clip((1.0 / x - 1.0 / self.worst) / (1.0 / self.best - 1.0 / self.worst), 0.0, 1.0)
        return np.clip((x - self.worst) / (self.best - self.worst), 0.0, 1.0)


def accuracy() -> Objective:
    """Accuracy reward ``r_acc = correct`` (App. A)."""
    return Objective("accuracy", "correct")


def efficiency(tau5: float, tau95: float) -> Objective:
    """Efficiency reward, normalised inverse latency ``clip((1/t - 1/tau95) / (1/tau5 - 1/tau95), 0, 1)`` (App. A)."""
    return Objective("efficiency", "latency_s", worst=tau95, best=tau5, inverse=True)


@dataclass(frozen=True, eq=False)
class Normalisation:
    """Objectives, deterministic costs and the charge and budget functions of a set of arms (SPEC §2-3).

    ``profile_cost`` holds the deterministic costs ``c_i`` (in ``cost_unit``)
    of the arms; ``c_max`` and ``lambda`` come from the whole profiling split,
    so :meth:`select` keeps them. ``tau5``/``tau95`` are the profiling latency
    percentiles (None for a synthetic instance or logs without latency).
    Budgets ``B`` and costs are in ``cost_unit`` (the paper's: tokens).
    """

    objectives: tuple[Objective, ...]
    profile_cost: np.ndarray  # [K], cost unit
    c_max: float  # cost unit; online costs are min(cost / c_max, 1)
    lam: float  # online cost lower bound lambda
    tau5: float | None = None
    tau95: float | None = None
    cost_unit: str = "tokens"

    @property
    def n_objectives(self) -> int:
        return len(self.objectives)

    @property
    def n_arms(self) -> int:
        return len(self.profile_cost)

    def select(self, arms: np.ndarray) -> Normalisation:
        """The normalisation of the arms ``arms`` (positions): their ``c_i``, the same ``c_max`` and ``lambda``."""
        return replace(self, profile_cost=self.profile_cost[arms])

    def rewards(self, log: Mapping[str, Any]) -> tuple[np.ndarray, ...]:
        """One quantised reward array per objective from the log columns ``log`` (one row or ``[K, n]``)."""
        return tuple(quantize(o.reward(log[o.column])) for o in self.objectives)

    def budget(self, rho: float) -> float:
        """``B = rho * K * cbar`` in the cost unit (SPEC §3)."""
        return float(rho) * self.n_arms * float(np.mean(self.profile_cost))

    def rho(self, budget: float) -> float:
        """The largest ``rho`` whose ``B = rho * K * cbar`` (SPEC §3) does not exceed ``budget``.

        ``budget / (K * cbar)``, moved by an ulp or two where floating point would make ``B`` exceed the budget
        (or fall short of it when a larger rho gives it exactly), so a budget stated in the cost unit is never
        overrun.
        """
        rho = budget / (self.n_arms * float(np.mean(self.profile_cost)))
        while self.budget(rho) > budget:
            rho = float(np.nextafter(rho, 0.0))
        for _ in range(4):  # a rounding may also leave B one ulp short of a budget a larger rho gives exactly
            up = float(np.nextafter(rho, np.inf))
            if self.budget(up) > budget:
                break
            rho = up
        return rho

    def online_units(self, cost: Any) -> np.ndarray:
        """Costs in the online setting's units, ``cost / c_max`` (SPEC §3)."""
        return np.asarray(cost, dtype=float) / self.c_max

    def online_budget(self, rho: float) -> float:
        """Normalised online budget ``B~ = B / c_max`` (SPEC §3)."""
        return self.budget(rho) / self.c_max

    def online_cost(self, cost: Any) -> np.ndarray:
        """Realised online cost ``c~ = min(cost / c_max, 1)`` (SPEC §2.3), quantised."""
        return quantize(np.minimum(self.online_units(cost), 1.0))

    def psi_units(self, cost: Any) -> np.ndarray:
        """Costs in the identification setting's units, ``cost / max_i c_i`` (SPEC §3)."""
        return np.asarray(cost, dtype=float) / float(self.profile_cost.max())

    def psi_profile_cost(self) -> np.ndarray:
        """Deterministic identification costs ``c_i / max_i c_i``, quantised."""
        return quantize(self.psi_units(self.profile_cost))

    def psi_budget(self, rho: float) -> float:
        """Normalised identification budget ``B~ = B / max_i c_i = rho sum_i c~_i`` (SPEC §3).

        Computed from the quantised costs the engines charge, so that ``B~ / sum_i c~_i`` is exactly
        ``rho``: at integer rho, Uniform buys exactly rho samples per arm (``B / max_i c_i`` from the
        unquantised costs can fall below ``rho sum_i c~_i`` by a rounding and lose one).
        """
        return float(rho) * float(self.psi_profile_cost().sum())

    def psi_cost(self, cost: Any) -> np.ndarray:
        """Realised identification cost ``cost / max_i c_i`` (SPEC §3), quantised."""
        return quantize(self.psi_units(cost))


def _bounded(spec: ObjectiveSpec, values: np.ndarray | None, where: str) -> Objective:
    """The objective ``spec`` with its bounds: fixed, or the 5th and 95th percentiles of its profiling values."""
    if isinstance(spec.normalise, tuple):
        lo, hi = spec.normalise
    else:
        if values is None:
            raise CabenchError(f"{where}: objective '{spec.name}' reads the column '{spec.column}', which the logs "
                               "lack; declare objectives the logs can score (objectives: [accuracy, cost] needs no "
                               "latency)")
        lo, hi = float(np.percentile(values, 5)), float(np.percentile(values, 95))
        if not hi > lo:
            raise CabenchError(
                f"{where}: {spec.column}: the 5th and 95th percentiles of the profiling values are equal ({lo:g}), "
                f"so objective '{spec.name}' cannot be normalised; give it normalise: [lo, hi], or leave it out of the "
                "objectives (advise: --objectives without it)")
    worst, best = (lo, hi) if spec.direction == "max" else (hi, lo)
    return Objective(spec.name, spec.column, worst=worst, best=best)


def _calls(latency: np.ndarray) -> str:
    """How many profiling latencies there are, and of how many configurations and instances."""
    if latency.ndim != 2:
        return f"{latency.size} profiling latencies"
    k, n = latency.shape
    return (f"{latency.size} profiling latencies ({k} configuration{'s' * (k != 1)} x {n} instance"
            f"{'s' * (n != 1)})")


def fit_normalisation(profiling: Mapping[str, np.ndarray], where: str, remedy: str,
                      terms: Terms = PAPER_TERMS,
                      names: tuple[Sequence[str], Sequence[str]] | None = None) -> Normalisation:
    """The normalisation the profiling split fixes (SPEC §2.2, §2.5; App. A).

    ``profiling`` holds ``[K, n]`` arrays of the log columns (every
    configuration on every profiling instance): those the objectives of
    ``terms`` read, and each call's cost in the cost unit (column ``cost``;
    without it, the unit's own column, e.g. ``tokens``). ``tau5``, ``tau95``:
    percentiles of the pooled latencies; ``c_i``: mean cost of configuration
    ``i``; ``c_max``: the largest cost; ``lambda``: the smallest normalised
    cost. ``where`` and ``remedy`` frame the one-line error when the latencies
    do not vary or the costs are too dispersed; ``names`` (the configurations and the profiling instances, in the
    arrays' order) name the first call that costs nothing.
    """
    latency = np.asarray(profiling["latency_s"], dtype=float) if "latency_s" in profiling else None
    tau5 = tau95 = None
    if latency is not None:
        tau5, tau95 = float(np.percentile(latency, 5)), float(np.percentile(latency, 95))
    objectives = []
    for spec in terms.objectives:
        if spec.normalise != "inverse":
            column = profiling.get(spec.column)
            objectives.append(_bounded(spec, None if column is None else np.asarray(column, dtype=float), where))
            continue
        if latency is None or tau5 is None or tau95 is None:
            raise CabenchError(f"{where}: objective '{spec.name}' needs latency_s, which the logs lack; declare "
                               "objectives without latency, e.g. objectives: [accuracy, cost] in dataset.yaml (or "
                               "in an import mapping's dataset: part)")
        if not tau95 > tau5:
            raise CabenchError(
                f"{where}: latency_s: the 5th and 95th percentiles of the {_calls(latency)} are equal ({tau5:g} s), "
                f"so the efficiency reward (App. A) is undefined; {remedy}")
        objectives.append(efficiency(tau5, tau95))
    cost = np.asarray(profiling[COST_COLUMN] if COST_COLUMN in profiling else profiling[COST_COLUMNS[terms.cost]],
                      dtype=float)
    c_max = float(cost.max())
    if not c_max > 0:
        raise CabenchError(f"{where}: every profiling call costs 0 {terms.cost}; a budget needs calls that cost "
                           "something")
    free = np.argwhere(cost == 0)
    if len(free):
        i, j = (int(v) for v in free[0])
        call = (f"configuration '{names[0][i]}' on instance '{names[1][j]}'" if names is not None
                else f"configuration {i + 1}, profiling instance {j + 1}")
        raise CabenchError(
            f"{where}: {len(free)} profiling call{'s' * (len(free) > 1)} cost{'s' * (len(free) == 1)} 0 {terms.cost} "
            f"(the first: {call}); a free call leaves the online cost bound lambda at 0, so no budget can be planned "
            f"on it: give such calls the {terms.cost} they cost (a failed call's tokens, or a price on the tokens "
            "they used), charge another cost unit (--cost, cost:), or leave them out of the logs")
    lam = float(quantize(cost.min() / c_max))
    if lam <= 0:
        raise CabenchError(f"{where}: the smallest profiling cost rounds to zero; {terms.cost} are too dispersed "
                           "(a free call leaves the online cost bound lambda at 0)")
    profile_cost = cost.mean(axis=1)
    profile_cost.setflags(write=False)
    return Normalisation(objectives=tuple(objectives), profile_cost=profile_cost, c_max=c_max, lam=lam, tau5=tau5,
                         tau95=tau95, cost_unit=terms.cost)
