"""Ask/tell policies: each method as an object that says which configuration to evaluate next.

``ask()`` returns the next arm to pull, :data:`WAIT` while it needs outcomes
still outstanding, or ``None`` when the method is done; ``tell(arm, rewards,
cost)`` gives it one outcome (rewards in [0, 1], the cost normalised as the
method charges it). Outcomes must be told in the order the pulls were asked
(the live runner reorders concurrent calls), which keeps every decision a
function of the outcomes alone.

They are written pull by pull from the paper's pseudocode (Algorithm 1,
paper §4.1, with SPEC §5's radius scales and initial rounds; Algorithm 2,
paper §4.2, with SPEC §6's baselines), computing every formula themselves:
the per-pull references of both engines are thin loops over them, and the
tests check that the batched engines make identical decisions. They drive
``cabench live`` against real endpoints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from cabench import registry
from cabench.errors import CabenchError
from cabench.online.methods import OnlineMethod
from cabench.pareto import TIE_ATOL, TIE_RTOL
from cabench.psi.schedules import PsiMethod

WAIT = -1  #: ``ask()``: outcomes already asked for must be told first


class OnlinePolicy:
    """CoHV-UCB, HV-UCB, Accuracy-Cost-UCB or Uniform under a normalised budget (Algorithm 1).

    ``budget`` is ``B~`` (tokens / ``c_max``), ``profile`` the deterministic costs ``c_i / c_max`` that
    decide feasibility, ``lam`` the cost lower bound and ``rho`` the budget multiplier (for
    ``n_init``). An arm can be withdrawn (``withdraw``) when it has nothing left to evaluate.
    """

    def __init__(self, method: OnlineMethod, n_objectives: int, budget: float, profile: Sequence[float],
                 lam: float, rho: float) -> None:
        self.method = method
        self.k, self.d = len(profile), n_objectives
        self.budget, self.profile, self.lam = float(budget), [float(c) for c in profile], float(lam)
        self.s_r, self.s_c = (1.0, 1.0) if method.mode == "theory" else (float(method.s_r), float(method.s_c))
        self.n_init = 1 if method.mode == "theory" else max(1, math.floor(method.eta * rho))
        t_b = math.ceil(self.budget / self.lam) + 1  # T_B (paper §4.1)
        self.log_term = method.alpha * math.log(t_b)
        self.n = [0] * self.k
        self.reward_sum = [[0.0] * self.d for _ in range(self.k)]
        self.cost_sum = [0.0] * self.k
        self.spend = 0.0
        self.pending: int | None = None
        self.round_robin = registry.spec(method.name, "online").rule == "round-robin"
        self.user = registry.user_method(method.name, "online") if registry.is_user(method.name) else None
        self.withdrawn: set[int] = set()
        self._init_position = 0
        self._pointer = 0
        self._before_ask = (0, 0)

    def feasible(self, i: int) -> bool:
        return i not in self.withdrawn and self.profile[i] <= self.budget - self.spend

    def withdraw(self, i: int) -> None:
        self.withdrawn.add(i)

    def index(self, i: int) -> float:
        beta = math.sqrt(self.log_term / self.n[i])  # Algorithm 1: beta_{i,t}
        upper = [min(1.0, self.reward_sum[i][j] / self.n[i] + self.s_r * beta) for j in range(self.d)]  # line 5
        lower_cost = max(self.lam / 2.0, self.cost_sum[i] / self.n[i] - self.s_c * beta)  # line 6
        volume = upper[0]
        for j in range(1, self.d):
            volume = volume * upper[j]
        if self.method.name == "cohv-ucb":
            return volume / lower_cost  # line 7
        if self.method.name == "hv-ucb":
            return volume
        if self.method.name == "acc-cost-ucb":
            return upper[0] / lower_cost
        # a user index function (module:object) works on arrays of repetitions: here one
        return float(self.user(np.array([self.n[i]]), np.array([upper]), np.array([lower_cost]))[0])

    def ask(self) -> int | None:
        if self.pending is not None:
            return WAIT
        self._before_ask = (self._init_position, self._pointer)  # what a retract restores
        while self._init_position < self.n_init * self.k:  # line 1: each arm, n_init rounds
            i = self._init_position % self.k
            self._init_position += 1
            if self.feasible(i):
                self.pending = i
                return i
        candidates = [i for i in range(self.k) if self.feasible(i)]
        if not candidates:  # line 2: no arm fits what remains of the budget
            return None
        if self.round_robin:  # Uniform: round-robin over the feasible arms
            choice = next(i for i in [*range(self._pointer, self.k), *range(self._pointer)] if self.feasible(i))
            self._pointer = (choice + 1) % self.k
        else:
            choice, best = -1, -math.inf
            for i in candidates:  # lines 4-9: argmax of the index, ties to the lowest arm
                value = self.index(i)
                if value > best:
                    choice, best = i, value
        self.pending = choice
        return choice

    def retract(self, arm: int) -> None:
        """The pull asked of ``arm`` gave no outcome (a failed call): the next ``ask`` decides afresh."""
        if arm != self.pending:
            raise ValueError(f"retracted arm {arm}, but arm {self.pending} was asked")
        self.pending = None
        self._init_position, self._pointer = self._before_ask

    def tell(self, arm: int, rewards: Sequence[float], cost: float) -> None:
        if arm != self.pending:
            raise ValueError(f"told arm {arm}, but arm {self.pending} was asked")
        for j in range(self.d):
            self.reward_sum[arm][j] += float(rewards[j])
        self.cost_sum[arm] += float(cost)
        self.n[arm] += 1
        self.spend += float(cost)
        self.pending = None

    def decision(self) -> int:
        """The configuration the method would commit to: the most pulled, ties to the lowest arm."""
        return max(range(self.k), key=lambda i: (self.n[i], -i))

    def estimates(self, i: int) -> dict[str, float]:
        n = max(self.n[i], 1)
        return {"pulls": self.n[i], **{f"reward_{j}": self.reward_sum[i][j] / n for j in range(self.d)},
                "cost": self.cost_sum[i] / n}


def empirical_gaps(mu: dict[int, list[float]]) -> tuple[dict[int, float], dict[int, bool]]:
    """Empirical classification gaps of eq. (1) over the active arms ``mu`` (and who is dominated)."""
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


class PsiPolicy:
    """CoPSI, PSI-SR or Uniform under a normalised budget (Algorithm 2 and SPEC §6).

    ``costs`` are the deterministic costs ``c~_i = c_i / max_j c_j``, ``budget`` is ``B~``. With
    ``stochastic`` costs a pull is charged what it realised (told), else ``c~_i``. A pull whose cost
    would exceed the budget is not counted and ends all sampling; the eliminations continue on what
    was observed. Pulls of a phase are asked ahead (they can run concurrently).
    """

    def __init__(self, method: PsiMethod, n_objectives: int, costs: Sequence[float], budget: float,
                 stochastic: bool = False, rho: float | None = None) -> None:
        self.method, self.d = method, n_objectives
        self.costs = [float(c) for c in costs]
        self.k = len(self.costs)
        self.budget, self.stochastic = float(budget), stochastic
        self.spec = method.spec  # the registry's rule for this method
        self.user = registry.user_method(method.name, "psi") if self.spec.origin == "user" else None
        lam = min(self.costs) if self.spec.cost_aware else 1.0  # cost-blind (PSI-SR): L_{K,1}
        self.l_k = 1.0 + sum(1.0 / (1.0 + (ell - 1) * lam) for ell in range(2, self.k + 1))  # L_{K,lambda}
        self.cbar = sum(self.costs) / self.k
        self.rounds = max(1, math.ceil(math.log2(self.k)))  # EGE-SH: ceil(log2 K) halving rounds
        self.level = 0
        self.n = [0] * self.k
        self.sums = [[0.0] * self.d for _ in range(self.k)]
        self.spend = 0.0
        if self.spec.rule == "uniform":
            first = math.floor(self.budget / sum(self.costs))
        elif self.spec.rule == "halving":
            first = math.floor(self.budget / (self.rounds * sum(self.costs)))
        else:
            first = math.floor(self.budget / (self.l_k * sum(self.costs))) if self.spec.replans \
                and self.spec.origin != "user" else self.target(list(range(self.k)))
            if self.spec.origin == "user" and first < 1:
                raise CabenchError(f"rho {rho if rho is not None else self.budget:g}: the first phase of "
                                   f"{method.name} gives an arm no sample")
        if first < 1:
            raise CabenchError(f"rho {rho if rho is not None else self.budget:g}: the first phase cannot give every "
                               "arm one sample")
        self.stopped = False
        self.queue: list[int] = []  # asks of the current phase (or round) not yet given out
        self.outstanding = 0
        self.round: list[tuple[int, list[float], float]] = []  # Uniform with stochastic costs
        self.active = list(range(self.k))
        self.accepted: set[int] = set()
        self.removed: list[int] = []
        self.accepted_log: list[bool] = []
        self.returned: list[int] | None = None
        self.phases: list[tuple[tuple[int, ...], int]] = []  # (active arms, fewest samples) at each elimination
        self._phase = 0
        if self.spec.rule == "uniform":
            if stochastic:
                self.queue = list(range(self.k))
            else:
                rounds = math.floor(self.budget / sum(self.costs))
                self.queue = [i for i in range(self.k) for _ in range(rounds)]
        else:
            self._plan_phase()

    def target(self, active: list[int]) -> int:
        if self.spec.rule == "halving":
            return self.level + math.floor(self.budget / (self.rounds * sum(self.costs[i] for i in active)))
        if self.spec.origin != "user":
            if self.spec.replans:
                return self.recycled(active)
            if self.spec.cost_aware:
                return math.floor(self.budget / (self.l_k * sum(self.costs[i] for i in active)))  # line 7
            return math.floor(self.budget / (self.cbar * self.l_k * len(active)))  # PSI-SR
        level = max(self.n[i] for i in active)  # a user schedule works on arrays of repetitions: here one
        return int(self.user(self.budget, self.l_k, np.array([self.spend]), np.array([level]),
                             np.array([[self.costs[i] for i in active]]), len(active))[0])

    def recycled(self, active: list[int]) -> int:
        """CoPSI-R (docs/methods.md): CoPSI's target, plus a successive-rejects share of what the budget
        holds beyond it and beyond a reserve that covers every later CoPSI target, whatever the order."""
        ordered = sorted(self.costs[i] for i in active)
        k_r = len(ordered)
        total = 0.0
        sums = []
        for c in ordered:
            total += c  # C_r (exact: quantised costs); sums[j - 1] = s_j, the j cheapest
            sums.append(total)
        top = ordered[-1]
        level = max(self.n[i] for i in active)
        base = max(math.floor(self.budget / (self.l_k * total)), level)
        reserve = 0.0
        if k_r > 2:
            bound = top / (top + sums[0])  # t_2, the last arm's share
            for m in range(2, k_r):  # U = sum_{m=2}^{k_r - 1} c_max / (c_max + s_{m-1}) + t_2
                bound = bound + top / (top + sums[m - 2])
            reserve = self.budget / self.l_k * bound - min(base, self.budget / (self.l_k * total)) * (total - top)
        weight = 1.0
        for j in range(3, k_r + 1):  # this phase weighs 1, a later one with m arms 1 / (m + 1)
            weight = weight + 1.0 / j
        room = self.budget - self.spend - (base - level) * total - reserve
        return base + math.floor(max(room, 0.0) * (1.0 / weight) / total)

    def _plan_phase(self) -> None:
        n_r = self.target(self.active)  # lines 6-7: C_r = sum of the active arms' costs
        if self.spec.rule == "halving":
            self.level = n_r
        self.queue = [] if self.stopped else [i for i in self.active for _ in range(max(0, n_r - self.n[i]))]

    def _mean(self, i: int) -> list[float]:
        return [self.sums[i][x] / self.n[i] if self.n[i] else 0.0 for x in range(self.d)]

    def _eliminate(self) -> None:
        """Lines 11-21: remove the arm with the largest empirical gap, accepting it if not dominated."""
        self.phases.append((tuple(self.active), min(self.n[i] for i in self.active)))
        mu = {i: self._mean(i) for i in self.active}
        gamma, dominated = empirical_gaps(mu)
        top = max(gamma.values())  # line 15, ties: dominated first, then lowest index
        tied = [i for i in self.active if abs(gamma[i] - top) <= TIE_ATOL + TIE_RTOL * abs(top)]
        self._leave(([i for i in tied if dominated[i]] or tied)[0], dominated)

    def _leave(self, out: int, dominated: dict[int, bool]) -> None:
        """Lines 16-21: an arm leaves the active set, accepted when not empirically dominated."""
        keep = not dominated[out]
        if keep:
            self.accepted.add(out)
        self.active.remove(out)
        self.removed.append(out)
        self.accepted_log.append(keep)

    def _halve(self) -> int | None:
        """EGE-SH after a round: the floor(k_r / 2) largest empirical gaps leave (accepted when not dominated)."""
        mu = {i: self._mean(i) for i in self.active}
        gamma, dominated = empirical_gaps(mu)
        ranked = sorted(self.active, key=lambda i: (-gamma[i], not dominated[i], i))
        for out in ranked[: len(self.active) // 2]:
            self._leave(out, dominated)
        self._phase += 1
        if self._phase < self.rounds and len(self.active) > 1:
            self._plan_phase()
            if self.queue:
                return self.ask()
            return self._halve()
        self.returned = sorted(self.accepted | set(self.active))
        return None

    def _finish_uniform(self) -> None:
        mu = {i: self._mean(i) for i in range(self.k)}
        self.returned = [i for i in range(self.k)
                         if not any(all(mu[i][x] < mu[j][x] for x in range(self.d)) for j in range(self.k))]

    def ask(self) -> int | None:
        if self.returned is not None:
            return None
        if self.queue and not self.stopped:
            self.outstanding += 1
            return self.queue.pop(0)
        if self.outstanding:
            return WAIT
        if self.spec.rule == "uniform":
            if self.stochastic and not self.stopped:
                self.queue = list(range(self.k))
                return self.ask()
            self._finish_uniform()
            return None
        if self.spec.rule == "halving":
            return self._halve()
        while self._phase < self.k - 1:  # line 5: K - 1 phases
            self._eliminate()
            self._phase += 1
            if self._phase < self.k - 1:
                self._plan_phase()
                if self.queue:
                    return self.ask()
        self.returned = sorted(self.accepted | set(self.active))  # line 23
        return None

    def retract(self, arm: int) -> None:
        """A pull asked of ``arm`` gave no outcome (a failed call): it is asked again, next."""
        self.outstanding -= 1
        self.queue.insert(0, arm)

    def stop(self) -> None:
        """End all sampling now (a budget outside the method ran out) and finish on what was observed."""
        self.stopped, self.queue, self.outstanding, self.round = True, [], 0, []
        while self.ask() is not None:
            pass

    def tell(self, arm: int, rewards: Sequence[float], cost: float | None = None) -> None:
        """One outcome, in ask order; ``cost`` is used with stochastic costs."""
        self.outstanding -= 1
        charge = float(cost) if self.stochastic else self.costs[arm]
        if self.spec.rule == "uniform" and self.stochastic:  # whole rounds, while a round fits
            self.round.append((arm, [float(v) for v in rewards], charge))
            if len(self.round) == self.k:
                total = 0.0
                for _, _, c in self.round:
                    total += c
                if self.spend + total > self.budget:
                    self.stopped = True
                else:
                    self.spend += total
                    for i, r, _ in self.round:
                        for x in range(self.d):
                            self.sums[i][x] += r[x]
                        self.n[i] += 1
                self.round = []
            return
        if self.stopped:
            return
        if self.spend + charge > self.budget:  # the pull is not counted; sampling ends
            self.stopped = True
            self.queue = []
            return
        self.spend += charge
        for x in range(self.d):
            self.sums[arm][x] += float(rewards[x])
        self.n[arm] += 1
