"""The four online methods: one budgeted loop, four index functions (SPEC §5).

Each method is an :class:`OnlineMethod` (hyper-parameters) plus an index
function of the per-arm statistics. CoHV-UCB, HV-UCB and Accuracy-Cost-UCB
share the optimistic estimates of Algorithm 1 (lines 5-6); Uniform's index,
``-n_i``, makes the loop's argmax (ties to the lowest index) a round-robin
over the feasible arms.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cabench import registry
from cabench.errors import CabenchError

ONLINE_METHODS = registry.names("online")


@dataclass(frozen=True)
class OnlineMethod:
    """Hyper-parameters of an online method (SPEC §5, Appendix A).

    ``mode="theory"`` is Algorithm 1 exactly: ``s_r = s_c = 1`` and one
    initial pull per arm. ``mode="experimental"`` uses ``s_r``, ``s_c`` and
    ``n_init = max(1, floor(eta * rho))``.
    """

    name: str
    s_r: float = 0.01
    s_c: float = 0.01
    eta: float = 0.05
    alpha: float = 2.0
    mode: str = "experimental"

    def __post_init__(self) -> None:
        where = f"methods.{self.name}"
        if registry.is_user(self.name):
            registry.user_method(self.name, "online")  # a one-line error now rather than in a worker
        elif self.name not in ONLINE_METHODS:
            raise CabenchError(f"methods: unknown online method '{self.name}'; choose from "
                               f"{', '.join(ONLINE_METHODS)}, or give your own index function as module:object")
        if self.mode not in ("experimental", "theory"):
            raise CabenchError(f"{where}.mode: '{self.mode}' is not 'experimental' or 'theory'")
        for key in ("s_r", "s_c", "eta"):
            if not getattr(self, key) > 0:
                raise CabenchError(f"{where}.{key}: must be positive, got {getattr(self, key)}")
        if not self.alpha >= 2:
            raise CabenchError(f"{where}.alpha: must be at least 2 (Theorem 1), got {self.alpha}")

    @property
    def display(self) -> str:
        return registry.display(self.name)

    @property
    def radius_scales(self) -> tuple[float, float]:
        """``(s_r, s_c)`` in force: both 1 in theory mode."""
        return (1.0, 1.0) if self.mode == "theory" else (float(self.s_r), float(self.s_c))

    def n_init(self, rho: float) -> int:
        """Initial round-robin pulls per arm, ``max(1, floor(eta * rho))`` (SPEC §5)."""
        return 1 if self.mode == "theory" else max(1, math.floor(self.eta * rho))

    def params(self, rho: float) -> dict[str, float | int | str]:
        s_r, s_c = self.radius_scales
        return {"mode": self.mode, "s_r": s_r, "s_c": s_c, "eta": self.eta, "alpha": self.alpha,
                "n_init": self.n_init(rho)}


def optimistic(n: np.ndarray, reward_sum: np.ndarray, cost_sum: np.ndarray, s_r: float, s_c: float,
               log_term: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Upper confidence rewards and lower confidence costs, Algorithm 1 lines 5-6.

    ``U^(d) = min(1, rbar^(d) + s_r sqrt(alpha log T_B / n))`` and
    ``c_lcb = max(lambda / 2, cbar - s_c sqrt(alpha log T_B / n))`` with
    ``log_term = alpha log T_B``. Shapes: ``n``, ``cost_sum`` ``[...]``;
    ``reward_sum`` ``[..., D]``.
    """
    root = np.sqrt(log_term / n)
    upper = np.minimum(1.0, reward_sum / n[..., None] + (s_r * root)[..., None])
    lower_cost = np.maximum(lam / 2.0, cost_sum / n - s_c * root)
    return upper, lower_cost


def hypervolume(upper: np.ndarray) -> np.ndarray:
    """Single-point hypervolume ``HV(U) = prod_d U^(d)`` (reference point 0), left to right."""
    out = upper[..., 0]
    for d in range(1, upper.shape[-1]):
        out = out * upper[..., d]
    return out


def _cohv(n, upper, lower_cost):
    return hypervolume(upper) / lower_cost  # Algorithm 1 line 7


def _hv(n, upper, lower_cost):
    return hypervolume(upper)


def _acc_cost(n, upper, lower_cost):
    return upper[..., 0] / lower_cost


def _uniform(n, upper, lower_cost):
    return -n.astype(np.float64)


def index_function(name: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The index of a built-in method, or the user's ``module:object`` checked at every call (see
    :class:`cabench.registry.UserMethod`)."""
    return INDEX[name] if name in INDEX else registry.user_method(name, "online")


INDEX: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "cohv-ucb": _cohv,
    "hv-ucb": _hv,
    "acc-cost-ucb": _acc_cost,
    "uniform": _uniform,
}
