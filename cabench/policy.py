"""Ask/tell policies: a method as an object that says which configuration to evaluate next.

``ask()`` returns the next arm to pull, :data:`WAIT` while it needs outcomes
still outstanding, or ``None`` when the method is done; ``tell(arm, rewards,
cost)`` gives it one outcome (rewards in [0, 1], the cost normalised as the
method charges it). Outcomes must be told in the order the pulls were asked
(the live runner reorders concurrent calls), which keeps every decision a
function of the outcomes alone.

Each policy is one setting's loop written pull by pull from the paper's
pseudocode, computing every formula itself (Algorithm 1, paper §4.1, with
SPEC §5's radius scales and initial rounds; Algorithm 2's sampling and budget
rule, paper §4.2 and SPEC §6); what a method decides comes from its entry's
per-pull rule (:mod:`cabench.methods`), written apart from the batched rule the
engines use. The per-pull references of both engines are thin loops over these
policies, and the tests check that the batched engines make identical
decisions. They drive ``cabench live`` against real endpoints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cabench.methods.configured import OnlineMethod, PsiMethod
from cabench.methods.identification import Asks

WAIT = -1  #: ``ask()``: outcomes already asked for must be told first


class OnlinePolicy:
    """An online method under a normalised budget (Algorithm 1).

    ``budget`` is ``B~`` (tokens / ``c_max``), ``profile`` the deterministic costs ``c_i / c_max`` that
    decide feasibility, ``lam`` the cost lower bound and ``rho`` the budget multiplier (for
    ``n_init``). An arm can be withdrawn (``withdraw``) when it has nothing left to evaluate.
    """

    def __init__(self, method: OnlineMethod, n_objectives: int, budget: float, profile: Sequence[float],
                 lam: float, rho: float) -> None:
        self.method = method
        self.k, self.d = len(profile), n_objectives
        self.budget, self.profile, self.lam = float(budget), [float(c) for c in profile], float(lam)
        if not 0.0 < self.lam <= 1.0:  # T_B = ceil(B / lambda) + 1 (paper §4.1); lambda is a cost over the largest
            raise ValueError(f"lam: the cost lower bound lambda must lie in (0, 1], got {lam!r}")
        self.s_r, self.s_c = (1.0, 1.0) if method.mode == "theory" else (float(method.s_r), float(method.s_c))
        self.n_init = 1 if method.mode == "theory" else max(1, math.floor(method.eta * rho))
        t_b = math.ceil(self.budget / self.lam) + 1  # T_B (paper §4.1)
        self.log_term = method.alpha * math.log(t_b)
        self.n = [0] * self.k
        self.reward_sum = [[0.0] * self.d for _ in range(self.k)]
        self.cost_sum = [0.0] * self.k
        self.spend = 0.0
        self.pending: int | None = None
        self.last: int | None = None  # the arm the method chose last, after the initial rounds
        self.withdrawn: set[int] = set()
        self._init_position = 0
        self._before_ask: tuple[int, int | None] = (0, None)

    def feasible(self, i: int) -> bool:
        return i not in self.withdrawn and self.profile[i] <= self.budget - self.spend

    def withdraw(self, i: int) -> None:
        self.withdrawn.add(i)

    def optimistic(self, i: int) -> tuple[list[float], float]:
        """Arm ``i``'s optimistic rewards ``U`` and cost lower bound ``c_lcb`` (Algorithm 1 lines 5-6)."""
        beta = math.sqrt(self.log_term / self.n[i])  # Algorithm 1: beta_{i,t}
        upper = [min(1.0, self.reward_sum[i][j] / self.n[i] + self.s_r * beta) for j in range(self.d)]  # line 5
        lower_cost = max(self.lam / 2.0, self.cost_sum[i] / self.n[i] - self.s_c * beta)  # line 6
        return upper, lower_cost

    def ask(self) -> int | None:
        if self.pending is not None:
            return WAIT
        self._before_ask = (self._init_position, self.last)  # what a retract restores
        while self._init_position < self.n_init * self.k:  # line 1: each arm, n_init rounds
            i = self._init_position % self.k
            self._init_position += 1
            if self.feasible(i):
                self.pending = i
                return i
        candidates = [i for i in range(self.k) if self.feasible(i)]
        if not candidates:  # line 2: no arm fits what remains of the budget
            return None
        choice = self.method.entry.choose(self, candidates)  # lines 4-9: the method's choice
        self.last = self.pending = choice
        return choice

    def retract(self, arm: int) -> None:
        """The pull asked of ``arm`` gave no outcome (a failed call): the next ``ask`` decides afresh."""
        if arm != self.pending:
            raise ValueError(f"retracted arm {arm}, but arm {self.pending} was asked")
        self.pending = None
        self._init_position, self.last = self._before_ask

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


class PsiPolicy:
    """An identification method under a normalised budget (Algorithm 2 and SPEC §6).

    ``costs`` are the deterministic costs ``c~_i = c_i / max_j c_j``, ``budget`` is ``B~``. With
    ``stochastic`` costs a pull is charged what it realised (told), else ``c~_i``. A pull whose cost
    would exceed the budget is not counted and ends all sampling; the decisions continue on what was
    observed. The method's per-pull rule plans the phases; the pulls of a phase are asked ahead (they
    can run concurrently). A budget whose first phase cannot give every arm a sample is refused in one
    line naming ``rho``.
    """

    def __init__(self, method: PsiMethod, n_objectives: int, costs: Sequence[float], budget: float,
                 stochastic: bool = False, rho: float | None = None) -> None:
        self.method, self.d = method, n_objectives
        self.costs = [float(c) for c in costs]
        self.k = len(self.costs)
        self.budget, self.stochastic = float(budget), stochastic
        self.n = [0] * self.k
        self.sums = [[0.0] * self.d for _ in range(self.k)]
        self.spend = 0.0
        self.stopped = False
        self.queue = Asks()  # asks of the current phase (or round) not yet given out
        self.outstanding = 0
        self.active = list(range(self.k))
        self.accepted: set[int] = set()
        self.removed: list[int] = []
        self.accepted_log: list[bool] = []
        self.returned: list[int] | None = None
        self.phases: list[tuple[tuple[int, ...], int]] = []  # (active arms, fewest samples) at each elimination
        self.plan = method.entry.per_pull(self, rho)  # queues the first phase

    def mean(self, i: int) -> list[float]:
        return [self.sums[i][x] / self.n[i] if self.n[i] else 0.0 for x in range(self.d)]

    def leave(self, out: int, dominated: dict[int, bool]) -> None:
        """Algorithm 2 lines 16-21: an arm leaves the active set, accepted when not empirically dominated."""
        keep = not dominated[out]
        if keep:
            self.accepted.add(out)
        self.active.remove(out)
        self.removed.append(out)
        self.accepted_log.append(keep)

    def ask(self) -> int | None:
        while self.returned is None:
            if self.queue and not self.stopped:
                self.outstanding += 1
                return self.queue.popleft()
            if self.outstanding:
                return WAIT
            self.plan.advance()  # decide, then queue the next phase (or finish)
        return None

    def retract(self, arm: int) -> None:
        """A pull asked of ``arm`` gave no outcome (a failed call): it is asked again, next."""
        self.outstanding -= 1
        self.queue.push_front(arm)

    def stop(self) -> None:
        """End all sampling now (a budget outside the method ran out) and finish on what was observed."""
        self.stopped, self.queue, self.outstanding = True, Asks(), 0
        while self.ask() is not None:
            pass

    def tell(self, arm: int, rewards: Sequence[float], cost: float | None = None) -> None:
        """One outcome, in ask order; ``cost`` is used with stochastic costs."""
        if not self.stochastic:
            charge = self.costs[arm]
        elif cost is None:
            raise ValueError(f"told arm {arm} without its cost; with stochastic costs every outcome carries one")
        else:
            charge = float(cost)
        self.outstanding -= 1
        self.plan.tell(arm, [float(v) for v in rewards], charge)

    def record(self, arm: int, rewards: Sequence[float], charge: float) -> None:
        """SPEC §6's budget rule: a pull that would take the spend past the budget is not counted, and
        sampling ends."""
        if self.stopped:
            return
        if self.spend + charge > self.budget:
            self.stopped = True
            self.queue = Asks()
            return
        self.spend += charge
        for x in range(self.d):
            self.sums[arm][x] += rewards[x]
        self.n[arm] += 1
