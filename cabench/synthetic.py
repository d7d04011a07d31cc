"""Synthetic instances declared in YAML (no logs needed).

Per-arm means for each objective, per-arm cost means, Bernoulli or Gaussian
reward noise, and deterministic or uniformly noisy costs. Useful for theory
checks and edge cases, and for comparing with other fixed-budget Pareto
identification code on the same instance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cabench.data.normalisation import Normalisation, Objective
from cabench.errors import CabenchError
from cabench.interrupts import in_kernel
from cabench.problem import Problem, flat
from cabench.quantize import quantize
from cabench.streams import DRAWS

NOISES = ("bernoulli", "gaussian")
#: Reference point of the single-point hypervolume ``H_i = prod_d (mu_i^(d) - r)`` (paper §3.1: r = 0).
HV_REFERENCE = 0.0


@dataclass(frozen=True)
class SyntheticSpec:
    """A synthetic instance: ``means[i][d]``, ``costs[i]`` (tokens), noise model."""

    name: str
    means: tuple[tuple[float, ...], ...]
    costs: tuple[float, ...]
    noise: str = "bernoulli"
    sigma: float = 0.1
    cost_spread: float = 0.0

    def __post_init__(self) -> None:
        where = "dataset.synthetic"
        if len(self.means) < 2:
            raise CabenchError(f"{where}.means: need at least 2 arms, got {len(self.means)}")
        width = {len(m) for m in self.means}
        if len(width) != 1 or width.pop() < 1:
            raise CabenchError(f"{where}.means: every arm needs the same number (>= 1) of objectives")
        if len(self.costs) != len(self.means):
            raise CabenchError(f"{where}.costs: {len(self.costs)} costs for {len(self.means)} arms")
        if any(not c > 0 for c in self.costs):
            raise CabenchError(f"{where}.costs: every cost must be positive")
        if self.noise not in NOISES:
            raise CabenchError(f"{where}.noise: '{self.noise}' is not one of {', '.join(NOISES)}")
        if self.noise == "bernoulli" and any(not 0 <= v <= 1 for m in self.means for v in m):
            raise CabenchError(f"{where}.means: Bernoulli means must lie in [0, 1]")
        low = [(i, v) for i, m in enumerate(self.means) for v in m if v < HV_REFERENCE]
        if low:
            i, v = low[0]
            raise CabenchError(
                f"{where}.means[{i}]: {v:g} is below the hypervolume reference point {HV_REFERENCE:g} (paper §3.1); "
                "a single-point hypervolume there would rank a dominated arm first — shift the means to be >= 0")
        if not self.sigma > 0:
            raise CabenchError(f"{where}.sigma: must be positive, got {self.sigma}")
        if not 0 <= self.cost_spread <= 0.99:
            raise CabenchError(f"{where}.cost_spread: must lie in [0, 0.99], got {self.cost_spread}")
        if max(self.costs) > 1e12 or max(self.costs) / min(self.costs) > 1e9:
            raise CabenchError(f"{where}.costs: costs must be at most 1e12 tokens and within a factor 1e9 of each "
                               f"other, got {min(self.costs):g}..{max(self.costs):g}")
        if not self.lam > 0:  # the online bound divides by lambda
            raise CabenchError(
                f"{where}.costs: the cheapest pull ({min(self.costs):g} x {1 - self.cost_spread:g}) rounds to zero "
                f"against the dearest ({max(self.costs):g} x {1 + self.cost_spread:g}): costs are counted in steps of "
                "2^-24 of the dearest pull, so the online cost bound lambda would be 0; keep the costs within a factor "
                "of about 3e7 of each other (less with cost_spread)")
        if self.sigma > 1e6 or any(abs(v) > 1e6 for m in self.means for v in m):
            raise CabenchError(f"{where}: means and sigma must be at most 1e6 in size")

    @property
    def c_max(self) -> float:
        """The largest token cost a pull can have."""
        return float(max(self.costs) * (1.0 + self.cost_spread))

    @property
    def lam(self) -> float:
        """The online cost bound lambda: the smallest cost a pull can have over :attr:`c_max`, quantised."""
        return float(quantize(min(self.costs) * (1.0 - self.cost_spread) / self.c_max))


@dataclass(frozen=True, eq=False)
class SyntheticSampler:
    means: np.ndarray  # [K, D]
    costs: np.ndarray  # [K] tokens
    noise: str
    sigma: float
    cost_spread: float

    @property
    def draws(self) -> int:
        """Sub-draws per sample: one (Bernoulli) or two (Gaussian) per objective and one for the cost,
        in the last slot; at least the default 8, so that small instances keep their streams."""
        d = self.means.shape[1]
        return max(DRAWS, (d if self.noise == "bernoulli" else 2 * d) + 1)

    def sample(self, keys: np.ndarray, arms: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rewards and costs from the sub-draws of each element (:meth:`draws`): Bernoulli ``u_j < mean`` and the
        cost ``c (1 + spread (2 u - 1))`` from the last sub-draw, compiled (:func:`cabench.kernels.streams.
        bernoulli_draw`); Gaussian by Box-Muller, ``mean + sigma sqrt(-2 log(1 - u_2j)) cos(2 pi u_2j+1)``,
        quantised, its uniforms drawn compiled and turned into rewards in numpy (see :meth:`compiled_draw`)."""
        from cabench.kernels import streams as kernel  # numba loads only when sampling

        keys, arms, counts = np.broadcast_arrays(keys, arms, counts)
        flat_keys, flat_counts = flat(keys, np.uint64), flat(counts, np.int64)
        if self.noise == "bernoulli":
            with in_kernel:
                rewards, tokens = kernel.bernoulli_sample(flat_keys, flat(arms, np.int64), flat_counts,
                                                          *self._tables())
            return rewards.reshape(*keys.shape, -1), tokens.reshape(keys.shape)
        d, w = self.means.shape[1], self.draws
        slots = np.arange(2 * d) if self.cost_spread == 0 else np.append(np.arange(2 * d), w - 1)
        with in_kernel:
            u = kernel.uniforms(flat_keys, flat_counts, slots, w).reshape(*keys.shape, len(slots))
        normal = np.sqrt(-2.0 * np.log1p(-u[..., 0 : 2 * d : 2])) * np.cos(2.0 * np.pi * u[..., 1 : 2 * d : 2])
        rewards = quantize(self.means[arms] + self.sigma * normal)
        tokens = self.costs[arms]
        if self.cost_spread > 0:
            tokens = tokens * (1.0 + self.cost_spread * (2.0 * u[..., -1] - 1.0))
        return rewards, tokens

    def compiled_draw(self) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
        """The compiled online loop's sampler and its tables (:func:`cabench.kernels.streams.bernoulli_draw`) for
        Bernoulli rewards; ``None`` for Gaussian ones, whose ``log1p`` numpy computes with its own vector routines,
        which differ from the C library's in the last bit (the numpy loop runs)."""
        if self.noise != "bernoulli":
            return None
        from cabench.kernels import streams as kernel

        return (kernel.BERNOULLI, *self._tables())

    def _tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`cabench.kernels.streams.bernoulli_draw`'s tables: means ``[K, 1, D]``, costs ``[K, 1]`` and
        ``(spread, draws)``."""
        return (np.ascontiguousarray(self.means[:, None, :], dtype=np.float64),
                np.ascontiguousarray(self.costs[:, None], dtype=np.float64),
                np.array([self.cost_spread, self.draws], dtype=np.float64))


def synthetic_problem(spec: SyntheticSpec) -> Problem:
    """Build a :class:`~cabench.problem.Problem` from a synthetic spec.

    Its objectives are ``objective1``, ..., ``objectiveD``; ``c_max`` is the
    largest token cost a pull can have and ``lambda`` the smallest over ``c_max``.
    """
    means = np.asarray(spec.means, dtype=np.float64)
    costs = np.asarray(spec.costs, dtype=np.float64)
    c_max, lam = spec.c_max, spec.lam
    k = len(costs)
    names = [f"objective{d + 1}" for d in range(means.shape[1])]
    norm = Normalisation(objectives=tuple(Objective(n, n) for n in names), profile_cost=costs, c_max=c_max, lam=lam)
    return Problem(
        name=spec.name,
        arm_names=tuple(f"arm{i}" for i in range(k)),
        arm_ids=np.arange(k),
        mu=means,
        mu_cost=norm.online_cost(costs),
        norm=norm,
        sampler=SyntheticSampler(means, costs, spec.noise, float(spec.sigma), float(spec.cost_spread)),
    )
