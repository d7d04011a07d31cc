"""What the profiling split fixes: the objectives' scales, the costs and the budgets (SPEC §2.2, §2.5, §3).

:func:`fit_normalisation` turns the profiling split of the logs (every
configuration on every profiling instance) into a :class:`Normalisation`: the
declared objectives with their bounds (``tau5``, ``tau95``), the deterministic
costs ``c_i``, ``c_max`` and ``lambda``. Dataset preprocessing, the replay
problem, synthetic instances and live profiling all charge, budget and reward
through this one object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

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

    ``profile_cost`` holds the deterministic costs ``c_i`` (tokens) of the
    arms; ``c_max`` and ``lambda`` come from the whole profiling split, so
    :meth:`select` keeps them. ``tau5``/``tau95`` are the profiling latency
    percentiles (None for a synthetic instance).
    """

    objectives: tuple[Objective, ...]
    profile_cost: np.ndarray  # [K] tokens
    c_max: float  # tokens; online costs are min(tokens / c_max, 1)
    lam: float  # online cost lower bound lambda
    tau5: float | None = None
    tau95: float | None = None

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

    def budget_tokens(self, rho: float) -> float:
        """``B = rho * K * cbar`` (SPEC §3)."""
        return float(rho) * self.n_arms * float(np.mean(self.profile_cost))

    def rho(self, budget_tokens: float) -> float:
        """``rho = B / (K * cbar)`` (SPEC §3)."""
        return budget_tokens / (self.n_arms * float(np.mean(self.profile_cost)))

    def online_units(self, tokens: Any) -> np.ndarray:
        """Tokens in the online setting's units, ``tokens / c_max`` (SPEC §3)."""
        return np.asarray(tokens, dtype=float) / self.c_max

    def online_budget(self, rho: float) -> float:
        """Normalised online budget ``B~ = B / c_max`` (SPEC §3)."""
        return self.budget_tokens(rho) / self.c_max

    def online_cost(self, tokens: Any) -> np.ndarray:
        """Realised online cost ``c~ = min(tokens / c_max, 1)`` (SPEC §2.3), quantised."""
        return quantize(np.minimum(self.online_units(tokens), 1.0))

    def psi_units(self, tokens: Any) -> np.ndarray:
        """Tokens in the identification setting's units, ``tokens / max_i c_i`` (SPEC §3)."""
        return np.asarray(tokens, dtype=float) / float(self.profile_cost.max())

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

    def psi_cost(self, tokens: Any) -> np.ndarray:
        """Realised identification cost ``tokens / max_i c_i`` (SPEC §3), quantised."""
        return quantize(self.psi_units(tokens))


def fit_normalisation(profiling: Mapping[str, np.ndarray], where: str, remedy: str) -> Normalisation:
    """The normalisation the profiling split fixes (SPEC §2.2, §2.5; App. A).

    ``profiling`` holds the columns ``latency_s`` and ``tokens`` as ``[K, n]``
    arrays (every configuration on every profiling instance). ``tau5``,
    ``tau95``: percentiles of the pooled latencies; ``c_i``: mean tokens of
    configuration ``i``; ``c_max``: the largest token count; ``lambda``: the
    smallest normalised cost. ``where`` and ``remedy`` frame the one-line error
    when the latencies do not vary or the costs are too dispersed.
    """
    latency = np.asarray(profiling["latency_s"], dtype=float)
    tokens = np.asarray(profiling["tokens"], dtype=float)
    tau5 = float(np.percentile(latency, 5))
    tau95 = float(np.percentile(latency, 95))
    if not tau95 > tau5:
        raise CabenchError(
            f"{where}: latency_s: the 5th and 95th percentiles of the profiling latencies are equal ({tau5:g} s), so "
            f"the efficiency reward (App. A) is undefined; {remedy}")
    c_max = float(tokens.max())
    lam = float(quantize(tokens.min() / c_max))
    if lam <= 0:
        raise CabenchError(f"{where}: the smallest profiling cost rounds to zero; tokens are too dispersed")
    profile_cost = tokens.mean(axis=1)
    profile_cost.setflags(write=False)
    return Normalisation(objectives=(accuracy(), efficiency(tau5, tau95)), profile_cost=profile_cost, c_max=c_max,
                         lam=lam, tau5=tau5, tau95=tau95)
