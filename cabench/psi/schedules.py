"""TRANSITIONAL, delete once cabench/plan.py and cabench/live/config.py import from cabench.methods (see the
report): the old names of this module."""

from dataclasses import dataclass

import numpy as np

from cabench import registry
from cabench.errors import CabenchError
from cabench.methods.configured import PsiMethod
from cabench.psi.engine import COST_MODES

__all__ = ["COST_MODES", "PSI_METHODS", "PsiMethod", "Schedule"]
PSI_METHODS = registry.names("psi")


@dataclass(frozen=True)
class _Given:
    budget: float
    costs: np.ndarray

    def psi_budget(self, rho: float) -> float:
        return self.budget

    def psi_profile_cost(self) -> np.ndarray:
        return self.costs


@dataclass(frozen=True)
class Schedule:
    method: PsiMethod
    given: _Given

    @classmethod
    def build(cls, method: PsiMethod, budget: float, costs: np.ndarray) -> "Schedule":
        return cls(method, _Given(budget, costs))

    def check_first_phase(self, rho: float) -> None:
        reason = self.method.entry.skip(self.given, rho)  # type: ignore[arg-type]
        if reason is not None:
            raise CabenchError(reason)
