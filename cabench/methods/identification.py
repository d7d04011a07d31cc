"""What every identification method shares (paper §3.2, §4.2; SPEC §6).

An identification method samples arms under a normalised budget ``B~`` and returns an estimate of the
Pareto set. Its batched rule (:meth:`IdentificationEntry.identify`) drives a batch of repetitions
through the engine's sampler (:class:`Samples`); its per-pull rule
(:meth:`IdentificationEntry.per_pull`) plans the phases of one ask/tell policy (:class:`Pulls`). Both
samplers apply SPEC §6's budget rule: a pull that would take the spend past the budget is not made,
and sampling stops for good.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from cabench.methods.spec import Method
from cabench.problem import Problem


@dataclass(frozen=True)
class Identification:
    """What a batched rule decided, per repetition."""

    returned: np.ndarray  # [reps, K] bool: the estimate P_hat
    removed: np.ndarray | None = None  # [reps, m] the arms that left, in order (eliminating methods)
    accepted: np.ndarray | None = None  # [reps, m] whether each was accepted


class Samples(Protocol):
    """The engine's sampler of one batch: counts ``n`` and reward sums ``[reps, K(, D)]``, spend ``[reps]``."""

    problem: Problem
    keys: np.ndarray
    budget: float
    costs: np.ndarray
    stochastic: bool
    n: np.ndarray
    sums: np.ndarray
    spend: np.ndarray
    stopped: np.ndarray

    def bring_up(self, target: np.ndarray, active: np.ndarray) -> None: ...

    def means(self, rows: np.ndarray, arms: np.ndarray) -> np.ndarray: ...


class Asks:
    """The asks of a phase not yet given out, in order, as runs of one arm: ``(arm, count)``. A schedule's target
    far above what the budget pays (``level + 2**62``) is a count here, never a list of that many asks; the budget
    rule ends the sampling at the first pull that does not fit."""

    def __init__(self, runs: Iterable[tuple[int, int]] = ()) -> None:
        self._runs: deque[list[int]] = deque([arm, int(count)] for arm, count in runs if count > 0)

    def __bool__(self) -> bool:
        return bool(self._runs)

    def __iter__(self) -> Iterator[int]:
        """Every ask, one by one (to read a short queue: a test's)."""
        return (arm for arm, count in self._runs for _ in range(count))

    def popleft(self) -> int:
        """The next ask."""
        head = self._runs[0]
        head[1] -= 1
        if head[1] == 0:
            self._runs.popleft()
        return head[0]

    def push_front(self, arm: int) -> None:
        """Ask ``arm`` next (a pull that gave no outcome, asked again)."""
        self._runs.appendleft([arm, 1])


class Pulls(Protocol):
    """The state of one ask/tell policy that a per-pull rule reads and plans."""

    k: int
    d: int
    costs: list[float]
    budget: float
    stochastic: bool
    n: list[int]
    sums: list[list[float]]
    spend: float
    stopped: bool
    queue: Asks
    active: list[int]
    accepted: set[int]
    returned: list[int] | None
    phases: list[tuple[tuple[int, ...], int]]

    def mean(self, i: int) -> list[float]: ...

    def leave(self, out: int, dominated: dict[int, bool]) -> None: ...

    def record(self, arm: int, rewards: Sequence[float], charge: float) -> None: ...


class PhasePlan(ABC):
    """A per-pull rule bound to one policy: it fills the policy's queue phase by phase."""

    def __init__(self, policy: Pulls) -> None:
        self.policy = policy

    @abstractmethod
    def advance(self) -> None:
        """Nothing is queued or outstanding: decide, then queue the next phase or set ``returned``."""

    def tell(self, arm: int, rewards: list[float], charge: float) -> None:
        """One outcome, charged ``charge``: counted under the budget rule."""
        self.policy.record(arm, rewards, charge)

    def bring_up(self, n_r: int) -> None:
        """Queue what brings every active arm up to ``n_r`` samples (Algorithm 2 lines 7-10), arm by arm."""
        p = self.policy
        p.queue = Asks() if p.stopped else Asks((i, max(0, n_r - p.n[i])) for i in p.active)


@dataclass(frozen=True)
class IdentificationEntry(Method):
    """An identification method: its batched rule and its per-pull rule."""

    @abstractmethod
    def identify(self, samples: Samples) -> Identification:
        """Batched rule: sample every repetition of ``samples`` and decide."""

    @abstractmethod
    def per_pull(self, policy: Pulls, rho: float | None) -> PhasePlan:
        """Per-pull rule bound to ``policy``; a one-line :class:`~cabench.errors.CabenchError` (naming
        ``rho``, else the budget) when the first phase cannot give every arm one sample."""

    def check_repeatable(self) -> None:
        """Refuse, in one line, a rule of your own whose choices depend on more than its arguments (the built-ins'
        never do)."""


def too_small(rho: float, display: str, budget: float, costs: np.ndarray, need: float) -> str | None:
    """``skip``'s reason when the first phase, which needs ``need`` of the budget ``B~`` to give every arm
    one sample, cannot (SPEC §6); None when it can."""
    if math.floor(budget / need) >= 1:
        return None
    smallest = rho * need / budget
    return (f"rho {rho:g} is too small for {display} on {len(costs)} arms: the first phase cannot give every arm "
            f"one sample; the smallest workable rho is {math.ceil(smallest * 1000) / 1000:g}")


def empirical_gaps(mu: dict[int, list[float]]) -> tuple[dict[int, float], dict[int, bool]]:
    """Empirical classification gaps of eq. (1) over the active arms ``mu`` (and who is dominated), one
    repetition at a time (the per-pull rules')."""
    arms = sorted(mu)
    d = len(next(iter(mu.values())))

    def m(i: int, j: int) -> float:  # m_hat(i, j) = min_d (mu_j - mu_i)
        return min(mu[j][x] - mu[i][x] for x in range(d))

    def big_m(i: int, j: int) -> float:  # M_hat(i, j) = max_d (mu_i - mu_j)
        return max(mu[i][x] - mu[j][x] for x in range(d))

    delta_minus = {i: max(m(i, j) for j in arms if j != i) for i in arms}
    dominated = {i: any(all(mu[i][x] < mu[j][x] for x in range(d)) for j in arms if j != i) for i in arms}
    gamma = {}
    for i in arms:
        if dominated[i]:
            gamma[i] = delta_minus[i]
        else:
            gamma[i] = min(
                min(big_m(i, j), max(big_m(j, i), 0.0) + max(delta_minus[j], 0.0)) for j in arms if j != i
            )
    return gamma, dominated
