"""What Algorithm 1's two loops share: their constants going in and their tallies coming out (paper §4.1;
SPEC §5).

The numpy loop (:mod:`cabench.online.engine`) and the compiled loop (:mod:`cabench.online.compiled`) read one
:class:`Loop` and each returns an :class:`Outcome`, from which the engine builds the per-run metrics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Loop:
    """Algorithm 1's constants for one problem, method and budget, costs normalised by ``c_max``."""

    budget: float  # B~ = B / c_max
    profile: np.ndarray  # [K] c_i / c_max: an arm is feasible while it fits what remains of B~
    scales: tuple[float, float]  # (s_r, s_c)
    log_term: float  # alpha log T_B
    lam: float  # lambda
    gap: np.ndarray  # [K] nu* - nu_i
    hv: np.ndarray  # [K] H_i
    best: int  # i*, the arm of largest nu
    n_init: int  # initial rounds
    c_max: float


@dataclass(frozen=True)
class Outcome:
    """A loop's tallies per repetition (normalised costs) and, when asked, its log per step.

    ``log`` holds ``"spend"``, ``"regret"`` (after the step), ``"gap"`` (NaN where a repetition did not pull)
    and ``"arm"`` (-1 there), each ``[steps, reps]``; a step is one pull of every repetition that pulls.
    """

    counts: np.ndarray  # [reps, K]
    spend: np.ndarray
    regret: np.ndarray
    hv_sum: np.ndarray
    optimal: np.ndarray  # pulls of i*
    log: dict[str, np.ndarray] | None = None
