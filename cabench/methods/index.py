"""Index methods: pull the feasible arm of largest index (Algorithm 1 line 7 and two baselines).

CoHV-UCB, HV-UCB and Accuracy-Cost-UCB read the optimistic rewards ``U`` and the cost lower bound
``c_lcb`` of Algorithm 1 (lines 5-6). Each entry holds its index twice, written separately: over
arrays of arms for the numpy loop, and over one arm's numbers for the ask/tell policy and the compiled
loop (in the part of Python numba compiles, so the same function reads a list or an array). An index
function of your own (arm by arm: :func:`arm_by_arm`) registers through the same constructor —
:func:`index_method` as a decorator, or ``module:object`` in a config (:func:`index_entry`) — and the policy
calls it on one arm at a time; the compiled loop runs it when numba can compile it, else the numpy loop does.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from cabench.methods.online import PARAMETERS, CompiledIndex, OnlineEntry, Pulls
from cabench.methods.spec import Spec, Style, checked_display, mark_decorated, register, stamp_loaded, user_style
from cabench.methods.user import UserMethod, UserMethodError, checked

IndexFunction = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
IndexOfOne = Callable[[int, list[float], float], float]


@dataclass(frozen=True)
class IndexMethod(OnlineEntry):
    """An online method that pulls the argmax of an index. ``of_one`` is its per-pull index of one arm
    (``n``, ``U`` as a list, ``c_lcb``); without it the policy calls the batched ``of_arrays`` on arrays
    of one repetition."""

    of_arrays: IndexFunction
    of_one: IndexOfOne | None = None

    def index(self, n: np.ndarray, upper: np.ndarray, lower_cost: np.ndarray) -> np.ndarray:
        return self.of_arrays(n, upper, lower_cost)

    def compiled_index(self) -> CompiledIndex:
        """A built-in's index of one arm; else the batched rule (a function of your own: its own ``of_one``, if
        any, is the policy's)."""
        if self.of_one is not None and not isinstance(self.of_one, UserMethod):
            return CompiledIndex(self.of_one, per_arm=True)
        function = self.of_arrays.function if isinstance(self.of_arrays, UserMethod) else self.of_arrays
        return CompiledIndex(function, per_arm=False)

    def check_arm_by_arm(self, n_objectives: int) -> None:
        if isinstance(self.of_arrays, UserMethod):
            arm_by_arm(self.of_arrays, n_objectives)

    def choose(self, policy: Pulls, candidates: list[int]) -> int:
        choice, best = -1, -math.inf
        for i in candidates:  # lines 4-9: argmax of the index, ties to the lowest arm
            upper, lower_cost = policy.optimistic(i)
            if self.of_one is not None:
                value = self.of_one(policy.n[i], upper, lower_cost)
            else:
                value = float(self.of_arrays(np.array([policy.n[i]]), np.array([upper]), np.array([lower_cost]))[0])
            if value > best:
                choice, best = i, value
        return choice


#: The probes :func:`arm_by_arm` ran: (id of the function, number of objectives) -> the function, held so that its
#: id is never another function's.
_PROBED: dict[tuple[int, int], Any] = {}
PROBE_ARMS = 5  # arms per repetition of the probe, two repetitions


def arm_by_arm(index: UserMethod, n_objectives: int) -> None:
    """Refuse an index of your own whose value for an arm depends on the other arms it is called with, or that
    returns other values when called again with the same arguments (random draws, state kept between calls).

    Algorithm 1's indices are functions of one arm's numbers (line 7), and the loops rely on it: the numpy loop
    computes the index of the arms just pulled, one per repetition of the batch, the compiled loop and the policy
    one arm at a time. An index that reduces over what it is given (a total of pulls over the arms) would change
    with the batch's size, and so with ``chunk_size`` and ``n_jobs``. Probed once per process and number of
    objectives, on two repetitions of :data:`PROBE_ARMS` arms with spread numbers, and on the same ten arms in a row
    (one per repetition, as the numpy loop calls it), against each arm alone (equal within a relative 1e-9, so that
    rounding in a vectorised library routine is not taken for a dependence)."""
    if (id(index.function), n_objectives) in _PROBED:
        return
    rng = np.random.Generator(np.random.PCG64(20260))  # fixed probe values, a spread of each argument
    shape = (2, PROBE_ARMS)
    n = rng.integers(1, 60, shape).astype(np.int64)
    upper = rng.uniform(0.05, 1.5, (*shape, n_objectives))
    lower_cost = rng.uniform(0.05, 1.0, shape)
    try:
        together = index(n, upper, lower_cost)
        again = index(n, upper, lower_cost)
        # as the numpy loop calls it: one arm per repetition of a batch, here all ten in a row
        in_a_row = index(n.reshape(-1), upper.reshape(-1, n_objectives), lower_cost.reshape(-1)).reshape(shape)
        each = {(r, a): index(n[r, a:a + 1], upper[r, a:a + 1], lower_cost[r, a:a + 1])[0]
                for r, a in np.ndindex(shape)}
    except UserMethodError:
        _PROBED[id(index.function), n_objectives] = index.function
        return  # what the method does wrong on these numbers, the loop that meets it names
    if not np.array_equal(together, again, equal_nan=True):
        r, a = np.argwhere(~((together == again) | (np.isnan(together) & np.isnan(again))))[0]
        raise UserMethodError(f"methods: {index.name}: the index returns other values for the same arguments "
                              f"({float(together[r, a])!r}, then {float(again[r, a])!r}); it must be a function of "
                              "n, upper and lower_cost alone (no random draws, nothing kept between calls), so that "
                              "the same config and seed give the same results")
    for (batch, calls), ((r, a), alone) in itertools.product(((PROBE_ARMS, together), (n.size, in_a_row)),
                                                             each.items()):
        value = calls[r, a]
        same = alone == value or abs(alone - value) <= 1e-9 * max(abs(alone), abs(value))
        if not same:
            among, single = float(value), float(alone)
            raise UserMethodError(f"methods: {index.name}: the index of an arm depends on the other arms it is called "
                                  f"with ({among!r} among {batch} arms, {single!r} alone); the loops compute it "
                                  "arm by arm, on the arms just pulled: it may read only that arm's n, upper and "
                                  "lower_cost")
    _PROBED[id(index.function), n_objectives] = index.function  # passed: not probed again in this process


def index_entry(name: str, function: IndexFunction, *, shown: Style | None = None, origin: str = "user",
                of_one: IndexOfOne | None = None, proposed: bool = False, comparison_rank: int = 0,
                source: str | None = None, quality_first: bool = False) -> IndexMethod:
    """The online method ``name`` that pulls the argmax of ``function(n, upper, lower_cost)``.

    A function of your own (``origin="user"``) is checked now (its signature) and on every call
    (:class:`cabench.methods.user.UserMethod`); ``source`` names its module.
    """
    if origin == "user":
        function = checked(name, "online", function)
        if of_one is not None:  # one arm: arguments and result of shape ()
            of_one = cast(IndexOfOne, checked(name, "online", of_one))
    spec = Spec(name, "online", origin, PARAMETERS, proposed, comparison_rank, shown, quality_first=quality_first)
    return IndexMethod(spec, source, function, of_one)


def index_method(name: str, *, display: str | None = None, color: str | None = None, marker: str | None = None,
                 origin: str = "user", of_one: IndexOfOne | None = None, proposed: bool = False,
                 comparison_rank: int = 0, quality_first: bool = False) -> Callable[[IndexFunction], IndexFunction]:
    """Register ``index(n, upper, lower_cost)`` as the online method ``name`` (a decorator; the function is
    returned unchanged). ``display``, ``color`` and ``marker`` set how figures show a method of your own
    (a built-in's style is in :mod:`cabench.methods.styles`); ``quality_first``: the index reads the first
    objective as the answers' quality (:attr:`~cabench.methods.spec.Spec.quality_first`)."""

    def decorate(function: IndexFunction) -> IndexFunction:
        user = origin == "user"
        if user and display is not None:
            checked_display(name, display)
        register(index_entry(name, function, shown=user_style(name, display, color, marker) if user else None,
                             origin=origin, of_one=of_one, proposed=proposed, comparison_rank=comparison_rank,
                             source=function.__module__ if user else None, quality_first=quality_first))
        mark_decorated(function, name, "online")
        if user:
            stamp_loaded(function.__module__)
        return function

    return decorate


def hypervolume(upper: np.ndarray) -> np.ndarray:
    """Single-point hypervolume ``HV(U) = prod_d U^(d)`` (reference point 0), left to right."""
    out = upper[..., 0]
    for d in range(1, upper.shape[-1]):
        out = out * upper[..., d]
    return out


def _cohv_of_one(n: int, upper: list[float], lower_cost: float) -> float:
    volume = upper[0]
    for d in range(1, len(upper)):  # HV(U), left to right
        volume = volume * upper[d]
    return volume / lower_cost  # line 7


def _hv_of_one(n: int, upper: list[float], lower_cost: float) -> float:
    volume = upper[0]
    for d in range(1, len(upper)):
        volume = volume * upper[d]
    return volume


def _acc_cost_of_one(n: int, upper: list[float], lower_cost: float) -> float:
    return upper[0] / lower_cost


@index_method("cohv-ucb", origin="paper", of_one=_cohv_of_one, proposed=True, comparison_rank=1)
def cohv_ucb(n: np.ndarray, upper: np.ndarray, lower_cost: np.ndarray) -> np.ndarray:
    """CoHV-UCB: the optimistic hypervolume per unit of the cost's lower bound, ``HV(U) / c_lcb``."""
    return hypervolume(upper) / lower_cost  # Algorithm 1 line 7


@index_method("hv-ucb", origin="paper", of_one=_hv_of_one)
def hv_ucb(n: np.ndarray, upper: np.ndarray, lower_cost: np.ndarray) -> np.ndarray:
    """HV-UCB: the optimistic hypervolume alone, blind to cost."""
    return hypervolume(upper)


@index_method("acc-cost-ucb", origin="paper", of_one=_acc_cost_of_one, quality_first=True)
def acc_cost_ucb(n: np.ndarray, upper: np.ndarray, lower_cost: np.ndarray) -> np.ndarray:
    """Accuracy-Cost-UCB: the optimistic accuracy (first objective) per unit of cost lower bound."""
    return upper[..., 0] / lower_cost
