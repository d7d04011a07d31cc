"""Fixed-budget Pareto set identification (paper §3.2, §4.2; SPEC §6)."""

from cabench.psi.engine import PsiResult, run_psi
from cabench.psi.schedules import COST_MODES, PSI_METHODS, PsiMethod

__all__ = ["COST_MODES", "PSI_METHODS", "PsiMethod", "PsiResult", "run_psi"]
