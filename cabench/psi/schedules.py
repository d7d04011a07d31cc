"""Sampling schedules of the three identification methods (SPEC §6).

CoPSI and PSI-SR share one elimination loop and differ only in the
cumulative sampling target ``n_r`` of phase r; Uniform samples every arm
equally and returns the empirical Pareto set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cabench.errors import CabenchError
from cabench.pareto import harmonic_l

DISPLAY = {"copsi": "CoPSI", "psi-sr": "PSI-SR", "uniform": "Uniform"}
PSI_METHODS = tuple(DISPLAY)
COST_MODES = ("deterministic", "stochastic")


@dataclass(frozen=True)
class PsiMethod:
    """An identification method (no hyper-parameters beyond its name)."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in DISPLAY:
            raise CabenchError(
                f"methods: unknown identification method '{self.name}'; choose from {', '.join(DISPLAY)}")

    @property
    def display(self) -> str:
        return DISPLAY[self.name]

    @property
    def eliminates(self) -> bool:
        return self.name != "uniform"


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
        l_k = harmonic_l(k, lam if method.name == "copsi" else 1.0)
        return cls(method.name, float(budget), costs, l_k, float(np.mean(costs)))

    def target(self, active_cost: np.ndarray | float, k_active: int) -> np.ndarray:
        """Cumulative sampling target ``n_r`` of a phase.

        CoPSI: ``floor(B~ / (L_{K,lambda} C_r))`` (Algorithm 2, line 7);
        PSI-SR: ``floor(B~ / (cbar~ L_{K,1} k_r))``; Uniform:
        ``floor(B~ / sum_i c~_i)``. ``active_cost`` is ``C_r``, the exact sum
        of the active arms' costs.
        """
        if self.method == "copsi":
            return np.floor(self.budget / (self.l_k * np.asarray(active_cost))).astype(np.int64)
        if self.method == "uniform":
            return np.floor(self.budget / np.asarray(active_cost)).astype(np.int64)
        value = math.floor(self.budget / (self.mean_cost * self.l_k * k_active))
        return np.full(np.shape(active_cost), value, dtype=np.int64)

    def check_first_phase(self, rho: float) -> None:
        """Fail clearly if the first phase cannot give every arm one sample (SPEC §6)."""
        total = float(self.costs.sum())
        first = int(np.asarray(self.target(np.array([total]), len(self.costs)))[0])
        if first >= 1:
            return
        if self.method == "copsi":
            need = self.l_k * total
        elif self.method == "psi-sr":
            need = self.mean_cost * self.l_k * len(self.costs)
        else:
            need = total
        smallest = rho * need / self.budget
        raise CabenchError(
            f"rho {rho:g} is too small for {DISPLAY[self.method]} on {len(self.costs)} arms: the first phase "
            f"cannot give every arm one sample; the smallest workable rho is {math.ceil(smallest * 1000) / 1000:g}"
        )
