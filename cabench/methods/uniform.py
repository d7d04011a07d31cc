"""Uniform identification: sample every arm alike, return the empirical Pareto set (the paper's baseline).

With deterministic costs every arm gets ``floor(B~ / sum_i c~_i)`` samples; with realised costs whole
rounds (one sample of every arm) are added while a whole round fits the budget (SPEC §6). Batched and
per-pull rules are written separately.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cabench.errors import CabenchError
from cabench.methods.identification import (
    Asks,
    Identification,
    IdentificationEntry,
    PhasePlan,
    Pulls,
    Samples,
    too_small,
)
from cabench.methods.spec import Spec, register
from cabench.pareto import pareto_mask
from cabench.problem import Problem


@dataclass(frozen=True)
class SampleAll(IdentificationEntry):
    """Uniform sampling."""

    def skip(self, problem: Problem, rho: float) -> str | None:
        costs = problem.psi_profile_cost()
        return too_small(rho, self.spec.display, problem.psi_budget(rho), costs, float(costs.sum()))

    def identify(self, samples: Samples) -> Identification:
        reps, k = samples.n.shape
        if samples.stochastic:
            _whole_rounds(samples)
        else:
            rounds = np.floor(samples.budget / np.full(reps, samples.costs.sum())).astype(np.int64)
            samples.bring_up(rounds, np.ones_like(samples.n, dtype=bool))
        mu_hat = samples.means(np.arange(reps)[:, None], np.broadcast_to(np.arange(k), (reps, k)))
        return Identification(pareto_mask(mu_hat))

    def per_pull(self, policy: Pulls, rho: float | None) -> PhasePlan:
        return _Sampling(self, policy, rho)


def _whole_rounds(samples: Samples) -> None:
    """Realised costs: add complete rounds while a whole round fits (SPEC §6), ``block`` rounds at a time."""
    reps, k = samples.n.shape
    all_arms = np.arange(k)
    rows = np.arange(reps)
    block = max(1, int(samples.budget / samples.costs.sum()))
    start = 0
    while rows.size:
        r = np.repeat(rows, block * k)
        a = np.tile(all_arms, rows.size * block)
        c = np.tile(np.repeat(start + np.arange(block), k), rows.size)
        rewards, tokens = samples.problem.sample(samples.keys[r, a], a, c)
        cost = samples.problem.psi_cost(tokens).reshape(rows.size, block, k)
        round_cost = cost.sum(axis=2)  # exact
        fits = samples.spend[rows, None] + np.cumsum(round_cost, axis=1) <= samples.budget  # a prefix of rounds
        rewards = rewards.reshape(rows.size, block, k, -1) * fits[:, :, None, None]
        samples.sums[rows] += rewards.sum(axis=1)
        samples.n[rows] += fits.sum(axis=1)[:, None]
        samples.spend[rows] += (round_cost * fits).sum(axis=1)
        done = ~fits.all(axis=1)
        samples.stopped[rows[done]] = True
        rows = rows[~done]
        start += block


class _Sampling(PhasePlan):
    """Uniform pull by pull: all rounds queued ahead (deterministic costs), or one round at a time, counted
    only when the whole round fits (realised costs)."""

    def __init__(self, method: SampleAll, policy: Pulls, rho: float | None) -> None:
        super().__init__(policy)
        rounds = math.floor(policy.budget / sum(policy.costs))
        if rounds < 1:
            raise CabenchError(f"rho {rho if rho is not None else policy.budget:g}: the first phase of "
                               f"{method.spec.display} cannot give every arm one sample")
        self.round: list[tuple[int, list[float], float]] = []  # realised costs: the round in progress
        if policy.stochastic:
            policy.queue = Asks((i, 1) for i in range(policy.k))
        else:
            policy.queue = Asks((i, rounds) for i in range(policy.k))

    def advance(self) -> None:
        p = self.policy
        if p.stochastic and not p.stopped:
            p.queue = Asks((i, 1) for i in range(p.k))
            return
        mu = {i: p.mean(i) for i in range(p.k)}
        p.returned = [i for i in range(p.k)
                      if not any(all(mu[i][x] < mu[j][x] for x in range(p.d)) for j in range(p.k))]

    def tell(self, arm: int, rewards: list[float], charge: float) -> None:
        p = self.policy
        if not p.stochastic:
            p.record(arm, rewards, charge)
            return
        self.round.append((arm, rewards, charge))
        if len(self.round) < p.k:
            return
        total = 0.0
        for _, _, c in self.round:
            total += c
        if p.spend + total > p.budget:  # the round does not fit: sampling ends
            p.stopped = True
        else:
            p.spend += total
            for i, r, _ in self.round:
                for x in range(p.d):
                    p.sums[i][x] += r[x]
                p.n[i] += 1
        self.round = []


register(SampleAll(Spec("uniform", "psi", "paper"), None))
