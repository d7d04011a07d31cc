"""The bandit problem the engines see: arms, population means, costs, a sampler.

A :class:`Problem` is built either from a preprocessed dataset (log replay,
:func:`replay_problem`) or from a synthetic instance
(:mod:`cabench.synthetic`). Engines never read files: they get a problem and
the stream keys of their repetitions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from cabench.data.dataset import Dataset
from cabench.data.normalisation import Normalisation
from cabench.data.terms import COST_COLUMN, USD_COLUMN
from cabench.interrupts import in_kernel
from cabench.quantize import QUANTUM


class Sampler(Protocol):
    """Draws pull outcomes from paired streams.

    A sampler may offer more: ``reward_sums`` (block sums without per-pull rows), ``spent_also`` (spend in other
    units) and ``compiled_draw`` (the compiled online loop's draw, :mod:`cabench.kernels.streams`).
    """

    def sample(self, keys: np.ndarray, arms: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rewards ``[..., D]`` and costs ``[...]`` (cost unit) of element ``counts`` of the streams ``keys``.

        ``keys``, ``arms`` (positions) and ``counts`` have one shape.
        """


def expand_blocks(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-pull view of blocks of stream elements ``[start, start + length)``.

    Returns the block of every pull, the element index of every pull and the
    offset at which each block begins in the flat arrays.
    """
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    block = np.repeat(np.arange(len(lengths)), lengths)
    counts = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - offsets, lengths)
    return block, counts, offsets


def block_sums(sampler: Sampler, keys: np.ndarray, arms: np.ndarray, starts: np.ndarray,
               lengths: np.ndarray) -> np.ndarray:
    """Reward sums ``[blocks, D]`` over stream elements ``[start, start + length)`` of each block.

    Rewards are quantised, so the sums are exact whatever the order of addition.
    ``lengths`` must be positive.
    """
    block, counts, offsets = expand_blocks(starts, lengths)
    rewards, _ = sampler.sample(keys[block], arms[block], counts)
    return np.add.reduceat(rewards, offsets, axis=0)


@dataclass(frozen=True, eq=False)
class ReplaySampler:
    """Bootstrap replay of logged rows (SPEC §4): a pull returns a random logged instance.

    ``also`` holds each logged row's spend in other units than the cost's (tokens, dollars), for reporting only.
    """

    rewards: np.ndarray  # [K, Q, D], quantised
    costs: np.ndarray  # [K, Q], cost unit
    also: Mapping[str, np.ndarray] = field(default_factory=dict)  # unit -> [K, Q]

    def __post_init__(self) -> None:  # the tables as the kernels take them, made once (a pull reads them as they are)
        object.__setattr__(self, "rewards", read_only(self.rewards, np.float64))
        object.__setattr__(self, "costs", read_only(self.costs, np.float64))

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without :attr:`quanta` (derived, as large as the rewards): a worker derives it again if it
        samples blocks."""
        return {name: value for name, value in self.__dict__.items() if name != "quanta"}

    def spent_also(self, keys: np.ndarray, counts: np.ndarray) -> dict[str, np.ndarray]:
        """Exact spend ``[reps]`` in each unit of ``also`` of the first ``counts[r, i]`` pulls of every arm.

        The ``n``-th pull of arm ``i`` reads element ``n`` of its stream (SPEC §4), so the rows a repetition
        replayed are known from its counts alone; they are added repetition by repetition, arm by arm, pull by pull.
        """
        from cabench.kernels import streams as kernel  # numba loads only when sampling

        keys, counts = np.ascontiguousarray(keys, dtype=np.uint64), read_only(counts, np.int64)
        with in_kernel:
            return {unit: kernel.replay_spent(keys, counts, read_only(table, np.float64))
                    for unit, table in self.also.items()}

    def sample(self, keys: np.ndarray, arms: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from cabench.kernels import streams as kernel

        keys, arms, counts = np.broadcast_arrays(keys, arms, counts)
        with in_kernel:
            rewards, costs = kernel.replay_sample(flat(keys, np.uint64), flat(arms, np.int64),
                                                  flat(counts, np.int64), self._rewards, self._costs, np.zeros(0))
        return rewards.reshape(*keys.shape, -1), costs.reshape(keys.shape)

    def reward_sums(self, keys: np.ndarray, arms: np.ndarray, starts: np.ndarray,
                    lengths: np.ndarray) -> np.ndarray:
        """:func:`block_sums` without building per-pull reward rows: each block summed where it is drawn (in whole
        quanta where the rewards are quantised, :attr:`quanta`)."""
        from cabench.kernels import streams as kernel

        blocks = flat(keys, np.uint64), flat(arms, np.int64), flat(starts, np.int64), flat(lengths, np.int64)
        with in_kernel:
            if self.quanta is not None:
                return kernel.replay_quanta_sums(*blocks, self.quanta)
            return kernel.replay_block_sums(*blocks, self._rewards)

    @cached_property
    def quanta(self) -> np.ndarray | None:
        """The rewards as whole multiples of :data:`cabench.quantize.QUANTUM` (int64, read-only), if every reward is
        one and at most 1 in size (normalised objectives), else None. A block's sum of them, times the quantum, is
        its sum of rewards exactly, as the floating-point sum is, for blocks of fewer than 2^29 samples (the sums
        stay below 2^53 quanta; the integers cannot overflow); the kernels add integers in vector lanes, where
        floating-point additions keep their order."""
        rewards = self._rewards
        if not np.all(np.abs(rewards) <= 1.0):  # NaN and infinities too
            return None
        quanta = np.rint(rewards / QUANTUM).astype(np.int64)
        if not np.array_equal(quanta * QUANTUM, rewards):
            return None
        quanta.setflags(write=False)
        return quanta

    def compiled_draw(self) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """The compiled online loop's sampler and its tables (:func:`cabench.kernels.streams.replay_draw`)."""
        from cabench.kernels import streams as kernel

        return kernel.REPLAY, self._rewards, self._costs, np.zeros(0)

    @property
    def _rewards(self) -> np.ndarray:  # read-only from __post_init__ (a view of it where unpickled writable)
        return read_only(self.rewards, np.float64)

    @property
    def _costs(self) -> np.ndarray:
        return read_only(self.costs, np.float64)


def read_only(values: np.ndarray, dtype: type) -> np.ndarray:
    """``values`` as a contiguous array of ``dtype`` that cannot be written (``values`` itself when it is one, else a
    view where no copy is needed; the caller's array keeps its flags). The kernels take their input tables so,
    whether the problem was built here or mapped read-only into a worker: a kernel compiles once for either, not
    once for each."""
    if isinstance(values, np.ndarray) and values.dtype == dtype and values.flags.c_contiguous \
            and not values.flags.writeable:
        return values
    view: np.ndarray = np.ascontiguousarray(values, dtype=dtype).view()
    view.setflags(write=False)
    return view


def flat(values: np.ndarray, dtype: type) -> np.ndarray:
    """``values`` as one contiguous 1-D array of ``dtype``, as the kernels take them."""
    return np.ascontiguousarray(np.asarray(values).reshape(-1), dtype=dtype)


@dataclass(frozen=True, eq=False)
class Problem:
    """A cost-aware multi-objective bandit instance.

    ``norm`` says what the objectives are and how pulls are charged and budgets
    normalised; the attributes ``profile_cost``, ``c_max``, ``lam`` and the
    budget and cost methods read it.
    """

    name: str
    arm_names: tuple[str, ...]
    arm_ids: np.ndarray  # global arm ids: stream keys do not change with the arm subset
    mu: np.ndarray  # [K, D] population means, one column per objective of ``norm``
    mu_cost: np.ndarray  # [K] population mean of the online-normalised cost
    norm: Normalisation  # of these arms
    sampler: Sampler
    surrogate: bool = False

    def __post_init__(self) -> None:
        if self.mu.shape != (len(self.arm_names), self.norm.n_objectives) or self.norm.n_arms != len(self.arm_names):
            raise ValueError(f"{self.name}: means {self.mu.shape} and {self.norm.n_arms} costs for "
                             f"{len(self.arm_names)} arms and {self.norm.n_objectives} objectives")

    @property
    def n_arms(self) -> int:
        return len(self.arm_names)

    @property
    def n_objectives(self) -> int:
        return self.norm.n_objectives

    @property
    def profile_cost(self) -> np.ndarray:
        """Deterministic costs ``c_i`` (cost unit)."""
        return self.norm.profile_cost

    @property
    def c_max(self) -> float:
        """Cost unit; online costs are ``min(cost / c_max, 1)``."""
        return self.norm.c_max

    @property
    def lam(self) -> float:
        """Online cost lower bound ``lambda``."""
        return self.norm.lam

    @property
    def hv(self) -> np.ndarray:
        """Single-point hypervolumes ``H_i = prod_d mu_i^(d)`` (reference point 0)."""
        return np.prod(self.mu, axis=1)

    @property
    def nu(self) -> np.ndarray:
        """Hypervolume efficiency ``nu_i = H_i / mu^c_i``."""
        return self.hv / self.mu_cost

    def budget(self, rho: float) -> float:
        """``B = rho * K * cbar`` in the cost unit (:meth:`Normalisation.budget`)."""
        return self.norm.budget(rho)

    def online_budget(self, rho: float) -> float:
        """``B~ = B / c_max`` (:meth:`Normalisation.online_budget`)."""
        return self.norm.online_budget(rho)

    def psi_budget(self, rho: float) -> float:
        """``B~ = rho sum_i c~_i`` (:meth:`Normalisation.psi_budget`)."""
        return self.norm.psi_budget(rho)

    def online_cost(self, cost: np.ndarray) -> np.ndarray:
        """``min(cost / c_max, 1)``, quantised (:meth:`Normalisation.online_cost`)."""
        return self.norm.online_cost(cost)

    def psi_cost(self, cost: np.ndarray) -> np.ndarray:
        """``cost / max_i c_i``, quantised (:meth:`Normalisation.psi_cost`)."""
        return self.norm.psi_cost(cost)

    def psi_profile_cost(self) -> np.ndarray:
        """``c_i / max_i c_i``, quantised (:meth:`Normalisation.psi_profile_cost`)."""
        return self.norm.psi_profile_cost()

    def sample(self, keys: np.ndarray, arms: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.sampler.sample(keys, arms, counts)

    def reward_sums(self, keys: np.ndarray, arms: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Reward sums ``[blocks, D]`` of stream elements ``[start, start + length)`` (lengths > 0)."""
        fast = getattr(self.sampler, "reward_sums", None)
        if fast is not None:
            return fast(keys, arms, starts, lengths)
        return block_sums(self.sampler, keys, arms, starts, lengths)


def replay_problem(ds: Dataset, arms: np.ndarray, source: str = "evaluation") -> Problem:
    """Log-replay problem on the arms ``arms`` of ``ds``.

    ``source="evaluation"`` (experiments) samples from, and scores against, the
    evaluation split; ``source="profiling"`` (hyper-parameter tuning, Appendix
    A) uses the profiling split for both.
    """
    arms = np.asarray(arms, dtype=np.int64)
    if source == "evaluation":
        by_objective, costs = ds.rewards_eval, ds.evaluation[COST_COLUMN]
    elif source == "profiling":
        by_objective, costs = ds.rewards_prof, ds.prof[COST_COLUMN]
    else:  # pragma: no cover - programming error
        raise ValueError(source)
    rewards = np.stack([r[arms] for r in by_objective], axis=-1)
    cost = np.ascontiguousarray(costs[arms])
    logged = ds.evaluation if source == "evaluation" else ds.prof
    also = {unit: np.ascontiguousarray(logged[column][arms]) for unit, column in (("tokens", "tokens"),
                                                                                 ("usd", USD_COLUMN))
            if column in logged and unit != ds.cost_unit and not ds.terms.is_paper}
    norm = ds.norm.select(arms)
    return Problem(
        name=ds.name,
        arm_names=tuple(ds.configs["config_id"].to_numpy()[arms]),
        arm_ids=arms,
        mu=rewards.mean(axis=1),
        mu_cost=norm.online_cost(cost).mean(axis=1),
        norm=norm,
        sampler=ReplaySampler(np.ascontiguousarray(rewards), cost, also),
        surrogate=ds.surrogate,
    )
