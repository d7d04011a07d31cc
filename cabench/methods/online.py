"""What every online method shares: Algorithm 1's loop and its parameters (paper §4.1; SPEC §5).

Every online method runs the same budgeted loop — initial rounds, feasibility, charging, stopping —
and only chooses the next arm among the feasible ones: batched, by the argmax of
:meth:`OnlineEntry.index` of the arms, computed arm by arm (ties to the lowest arm); pull by pull, for the
ask/tell policy, by :meth:`OnlineEntry.choose`.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from cabench.methods.spec import Method, Parameter
from cabench.problem import Problem

#: Algorithm 1's parameters (SPEC §5, Appendix A); ``mode="theory"`` is Algorithm 1 exactly
#: (``s_r = s_c = 1``, one initial round), ``"experimental"`` uses ``s_r``, ``s_c`` and ``eta``.
PARAMETERS = (
    Parameter("s_r", 0.01, positive=True, maximum=1e6, tunable=True, doc="scale of the reward radius"),
    Parameter("s_c", 0.01, positive=True, maximum=1e6, tunable=True, doc="scale of the cost radius"),
    Parameter("eta", 0.05, positive=True, maximum=1e6, tunable=True,
              doc="initial rounds n_init = max(1, floor(eta * rho))"),
    Parameter("alpha", 2.0, minimum=2, maximum=1e6, doc="exploration constant of T_B, at least 2 (Theorem 1)"),
    Parameter("mode", "experimental", choices=("experimental", "theory"), doc="theory: Algorithm 1 exactly"),
)


class Pulls(Protocol):
    """What an online per-pull rule reads of its policy: pulls so far, the arm it chose last (None
    before its first choice) and each arm's optimistic estimates (Algorithm 1 lines 5-6)."""

    k: int
    n: list[int]
    last: int | None

    def optimistic(self, i: int) -> tuple[list[float], float]: ...


@dataclass(frozen=True)
class CompiledIndex:
    """An index as the compiled loop calls it (:mod:`cabench.online.compiled`). ``per_arm``: ``function(n, upper
    [D], lower_cost) -> float`` for one arm, written in the part of Python that numba compiles; else the batched
    rule ``function(n [m], upper [m, D], lower_cost [m]) -> [m]``, compiled when numba can and called on one arm."""

    function: Callable[..., Any]
    per_arm: bool


def initial_round_fits(problem: Problem, rho: float) -> bool:
    """Whether the loop's initial round pulls every arm at ``rho`` when every call costs its mean: arm by arm in
    order, an arm is feasible while its mean cost ``c_i / c_max`` is at most ``B~ - C_t``, and each pull is charged
    its cost rounded to the 2^-24 grid (:func:`cabench.online.engine.run_online`'s test, in its order)."""
    budget = problem.online_budget(rho)
    spend = 0.0
    for mean, charged in zip(problem.profile_cost / problem.c_max, problem.online_cost(problem.profile_cost)):
        if not mean <= budget - spend:
            return False
        spend += float(charged)
    return True


def least_initial_rho(problem: Problem) -> float:
    """The least rho, written in ten significant digits and rounded up, whose initial round fits
    (:func:`initial_round_fits`): 1 where rho 1 fits."""
    if initial_round_fits(problem, 1.0):
        return 1.0
    low, step = 1.0, 2.0**-40
    while not initial_round_fits(problem, 1.0 + step):  # short by the charges' roundings: ~1e-9 above 1, or up to
        # about 2 where B~ is small beside the 2^-24 grid
        low, step = 1.0 + step, step * 2
    high = 1.0 + step
    while np.nextafter(low, np.inf) < high:  # (monotone in rho: B~ grows, the charges do not change)
        middle = (low + high) / 2
        low, high = (middle, high) if not initial_round_fits(problem, middle) else (low, middle)
    digits = 10 ** (9 - math.floor(math.log10(high)))
    steps = math.ceil(high * digits)  # as a message writes it (ten digits), never below the least
    while not initial_round_fits(problem, steps / digits):
        steps += 1
    return steps / digits


@dataclass(frozen=True)
class OnlineEntry(Method):
    """An online method: how it chooses the next arm, batched and pull by pull."""

    def skip(self, problem: Problem, rho: float) -> str | None:
        """``rho < 1`` cannot pay one initial pull of every arm (``B = rho K cbar``); nor can a ``rho`` at or just
        above 1 whose ``B~`` falls short of the initial round as the loop charges it at the arms' mean costs (each
        pull's cost rounded to the 2^-24 grid, each arm feasible while its mean fits what remains, SPEC §5): a
        configuration would go unpulled in every repetition where every call costs its mean."""
        if rho >= 1 and initial_round_fits(problem, rho):
            return None
        least = least_initial_rho(problem)
        shown = f"{rho:g}"
        for closer in (f"{rho:.10g}", repr(rho)):  # never rounded up to a rho that reads as workable
            if float(shown) < (1.0 if rho < 1 else least):
                break
            shown = closer
        if rho < 1:
            return (f"rho {shown} cannot pay one initial pull of every arm; the smallest workable rho is {least:.10g}"
                    + (" (at the arms' mean costs)" if least != 1 else ""))
        return (f"rho {shown} cannot pay one initial pull of every arm at their mean costs as charged (in steps of "
                f"2^-24 of the dearest call); at the arms' mean costs the smallest workable rho is {least:.10g}")

    @abstractmethod
    def index(self, n: np.ndarray, upper: np.ndarray, lower_cost: np.ndarray) -> np.ndarray:
        """Batched rule: the index of arms with ``n`` pulls, optimistic rewards ``upper`` ``[..., D]`` and
        cost lower bounds ``lower_cost``; the loop pulls its argmax over the feasible arms."""

    def compiled_index(self) -> CompiledIndex | None:
        """The index the compiled loop calls, or ``None``: the numpy loop calls :meth:`index`. It must give the
        numbers :meth:`index` gives, bit for bit."""
        return None

    def check_arm_by_arm(self, n_objectives: int) -> None:
        """Refuse (one line) an index that is not computed arm by arm, before a loop runs with ``n_objectives``
        objectives: the loops call it on the arms whose numbers changed, in batches of any size. A built-in's is."""

    @abstractmethod
    def choose(self, policy: Pulls, candidates: list[int]) -> int:
        """Per-pull rule: the arm to pull among ``candidates`` (the feasible arms, ascending)."""
