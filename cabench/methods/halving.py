"""Successive halving by empirical gaps: EGE-SH (Kone et al., 2024; docs/methods.md).

``R = ceil(log2 K)`` rounds; in each, every active arm is brought up by ``floor(B~ / (R C_r))``
samples (the round's budget ``B~ / R`` spread evenly, in samples, over the active arms' costs), then
the ``floor(k_r / 2)`` arms with the largest empirical gaps leave, accepted when not empirically
dominated among the active arms (ties: dominated first, then the lowest index). The arms still
active after the last round are accepted. Batched and per-pull rules are written separately.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cabench.errors import CabenchError
from cabench.methods.identification import (
    Identification,
    IdentificationEntry,
    PhasePlan,
    Pulls,
    Samples,
    empirical_gaps,
    too_small,
)
from cabench.methods.spec import Spec, register
from cabench.problem import Problem


def sh_rounds(k: int) -> int:
    """Rounds of successive halving over ``k`` arms, ``ceil(log2 k)``."""
    return max(1, math.ceil(math.log2(k)))


def halving_order(gamma: np.ndarray, dominated: np.ndarray) -> np.ndarray:
    """Positions ``[..., k]`` from first to last removed: largest gap first, then dominated, then position."""
    k = gamma.shape[-1]
    position = np.broadcast_to(np.arange(k), gamma.shape)
    return np.lexsort((position, ~dominated, -gamma), axis=-1)


@dataclass(frozen=True)
class Halving(IdentificationEntry):
    """EGE-SH."""

    def skip(self, problem: Problem, rho: float) -> str | None:
        costs = problem.psi_profile_cost()
        need = sh_rounds(len(costs)) * float(costs.sum())  # the first round's B~ / R covers C_1
        return too_small(rho, self.spec.display, problem.psi_budget(rho), costs, need)

    def identify(self, samples: Samples) -> Identification:
        from cabench.kernels.gaps import classification_gaps  # deferred: numba loads when a method first runs

        reps, k = samples.n.shape
        rounds = sh_rounds(k)
        active = np.ones((reps, k), dtype=bool)
        accepted = np.zeros((reps, k), dtype=bool)
        removed = np.zeros((reps, k - 1), dtype=np.int64)
        kept_log = np.zeros((reps, k - 1), dtype=bool)
        rows = np.arange(reps)[:, None]
        done = 0
        level = np.zeros(reps, dtype=np.int64)
        for _ in range(rounds):
            k_r = int(active[0].sum())
            if k_r == 1:
                break
            active_cost = np.where(active, samples.costs, 0.0).sum(axis=1)
            level = level + np.floor(samples.budget / (rounds * active_cost)).astype(np.int64)
            samples.bring_up(level, active)
            arms = np.nonzero(active)[1].reshape(reps, k_r)
            _, _, gamma, dominated = classification_gaps(samples.means(rows, arms))
            order = halving_order(gamma, dominated)[:, : k_r // 2]
            out = arms[rows, order]
            keep = ~dominated[rows, order]
            accepted[rows, out] = keep
            active[rows, out] = False
            removed[:, done:done + k_r // 2], kept_log[:, done:done + k_r // 2] = out, keep
            done += k_r // 2
        return Identification(accepted | active, removed[:, :done], kept_log[:, :done])

    def per_pull(self, policy: Pulls, rho: float | None) -> PhasePlan:
        return _Halving(self, policy, rho)


class _Halving(PhasePlan):
    """EGE-SH pull by pull: each round's pulls queued ahead, then half the active arms leave."""

    def __init__(self, method: Halving, policy: Pulls, rho: float | None) -> None:
        super().__init__(policy)
        self.rounds = max(1, math.ceil(math.log2(policy.k)))  # ceil(log2 K) halving rounds
        self.round = 0
        self.level = 0
        if math.floor(policy.budget / (self.rounds * sum(policy.costs))) < 1:
            raise CabenchError(f"rho {rho if rho is not None else policy.budget:g}: the first phase of "
                               f"{method.spec.display} cannot give every arm one sample")
        self._plan()

    def _plan(self) -> None:
        p = self.policy
        self.level = self.level + math.floor(p.budget / (self.rounds * sum(p.costs[i] for i in p.active)))
        self.bring_up(self.level)

    def advance(self) -> None:
        """After a round: the floor(k_r / 2) largest empirical gaps leave (accepted when not dominated)."""
        p = self.policy
        gamma, dominated = empirical_gaps({i: p.mean(i) for i in p.active})
        ranked = sorted(p.active, key=lambda i: (-gamma[i], not dominated[i], i))
        for out in ranked[: len(p.active) // 2]:
            p.leave(out, dominated)
        self.round += 1
        if self.round < self.rounds and len(p.active) > 1:
            self._plan()
        else:
            p.returned = sorted(p.accepted | set(p.active))


register(Halving(Spec("ege-sh", "psi", "beyond"), None))
