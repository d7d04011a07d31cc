"""Fixed-budget Pareto set identification (paper §3.2, §4.2; SPEC §6)."""

from cabench.methods.configured import PsiMethod
from cabench.psi.engine import COST_MODES, PsiResult, run_psi

__all__ = ["COST_MODES", "PsiMethod", "PsiResult", "run_psi"]
