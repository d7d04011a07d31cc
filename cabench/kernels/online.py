"""Algorithm 1's budgeted loop, compiled (numba): one repetition after another, pull by pull (paper §4.1;
SPEC §5).

It makes the pulls of the numpy loop (:mod:`cabench.online.engine`) with the same numbers: the same draws, the
same additions in the same order, the same optimistic estimates and index, the same feasibility rule, and the
same argmax — the first largest index among the feasible arms — kept in a tournament tree so that a pull costs
O(log K) rather than O(K). The index is a function called by address (:data:`INDEX`) and the sampler one of
those :mod:`cabench.kernels.streams` draws, so the loop is compiled once and kept on disk whatever the method.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import numba
import numpy as np
from numba import types

from cabench.kernels import source_digest, streams
from cabench.quantize import QUANTUM

#: The index of one arm: ``index(n, upper [D], lower_cost) -> float``.
INDEX = types.float64(types.int64, types.float64[::1], types.float64)
_PER_QUANTUM = 1.0 / QUANTUM  # a power of two: x * 2^24 is x / 2^-24 exactly


def _read(dtype: Any, ndim: int) -> Any:
    """An input array: read-only arrays pass too (a problem shared with the workers is mapped read-only)."""
    return types.Array(dtype, ndim, "C", readonly=True)


_LOOP = types.Tuple((types.boolean, types.int64[::1], types.float64[:, :]))(
    types.FunctionType(INDEX), types.int64, _read(types.uint64, 2), _read(types.float64, 3), _read(types.float64, 2),
    _read(types.float64, 1), _read(types.float64, 2), _read(types.int64, 1), types.int64, types.int64,
    _read(types.float64, 1), types.boolean, types.int64[:, ::1], types.float64[:, ::1], types.int64[::1])


@numba.njit(cache=True, nogil=True)
def _settle(values, winners, node):
    """Node ``node`` of the tree takes the winner of its children: the larger value, the left one on a tie (no
    value is NaN: the loop stops at a NaN index)."""
    left, right = 2 * node, 2 * node + 1
    if values[right] > values[left]:
        values[node], winners[node] = values[right], winners[right]
    else:
        values[node], winners[node] = values[left], winners[left]


@numba.njit(cache=True, nogil=True)
def _put(values, winners, leaves, arm, value):
    """Arm ``arm``'s leaf takes ``value``; its ancestors are settled again."""
    node = leaves + arm
    values[node] = value
    node //= 2
    while node >= 1:
        _settle(values, winners, node)
        node //= 2


@numba.njit(cache=True, nogil=True)
def _grown(log):
    """``log`` ``[rows, 4]`` with twice the rows, its rows kept."""
    out = np.empty((2 * log.shape[0], log.shape[1]))
    # element by element: a slice assignment brings in numba's shape-mismatch error (its text formatting),
    # a fifth of the first compile of the kernels (5 of 39 s of CPU, with cache files absent)
    for i in range(log.shape[0]):
        for j in range(log.shape[1]):
            out[i, j] = log[i, j]
    return out


def _loop_with(draw: Any) -> Any:
    """The loop with the draw of one sampler in its body (see :func:`_compiled_loop`)."""

    @numba.njit(nogil=True)  # compiled into online_loop, which is cached
    def loop(index_of, keys, table, costs, params, arms_by, by_cost, best, n_init, scalars, log, counts, totals,
             optimal):
        reps, k = keys.shape
        d = table.shape[2]
        profile, gap, hv = arms_by[0], arms_by[1], arms_by[2]
        budget, log_term, lam, s_r, s_c, c_max = scalars[0], scalars[1], scalars[2], scalars[3], scalars[4], scalars[5]
        widest = profile[by_cost[0]]
        initial = n_init * k
        leaves = 1
        while leaves < k:
            leaves *= 2
        values = np.empty(2 * leaves)
        winners = np.empty(2 * leaves, np.int64)
        rewards, upper = np.empty(d), np.empty(d)
        reward_sum, cost_sum = np.empty((k, d)), np.empty(k)
        masked = np.empty(k, np.bool_)
        offsets = np.zeros(reps + 1, np.int64)
        pulls = np.empty((1024 if log else 0, 4))
        pulled = 0
        for r in range(reps):
            n = counts[r]
            n[:] = 0
            reward_sum[:] = 0.0
            cost_sum[:] = 0.0
            masked[:] = False
            values[:] = -np.inf
            for a in range(leaves):
                winners[leaves + a] = a
            for node in range(leaves - 1, 0, -1):
                _settle(values, winners, node)
            spend, regret, hv_total, best_pulls = 0.0, 0.0, 0.0, 0
            position, decisions, gone = 0, 0, 0
            while True:
                if position < initial:  # the initial rounds, subject to feasibility
                    arm = position % k
                    step = position
                    position += 1
                    if not profile[arm] <= budget - spend:
                        continue
                else:
                    remaining = budget - spend
                    if not remaining >= widest:  # arms leave the argmax, costliest first
                        while gone < k and not profile[by_cost[gone]] <= remaining:
                            masked[by_cost[gone]] = True
                            _put(values, winners, leaves, by_cost[gone], -np.inf)
                            gone += 1
                        if gone == k:
                            break
                    arm = winners[1]
                    step = initial + decisions
                    decisions += 1
                count = n[arm]
                tokens = draw(keys[r, arm], arm, count, table, costs, params, rewards)
                cost = np.rint(np.minimum(tokens / c_max, 1.0) * _PER_QUANTUM) * QUANTUM  # c~ quantised, SPEC §2.3
                for j in range(d):
                    reward_sum[arm, j] = reward_sum[arm, j] + rewards[j]
                cost_sum[arm] = cost_sum[arm] + cost
                count += 1
                n[arm] = count
                spend += cost
                regret += gap[arm]
                hv_total += hv[arm]
                if arm == best:
                    best_pulls += 1
                root = np.sqrt(log_term / count)  # Algorithm 1 lines 5-6
                for j in range(d):
                    upper[j] = np.minimum(1.0, reward_sum[arm, j] / count + s_r * root)
                lower_cost = np.maximum(lam / 2.0, cost_sum[arm] / count - s_c * root)
                value = index_of(count, upper, lower_cost)
                if value != value or value == -np.inf:
                    return False, offsets, pulls[:0]
                if not masked[arm]:
                    _put(values, winners, leaves, arm, value)
                if log:
                    if pulled == pulls.shape[0]:
                        pulls = _grown(pulls)
                    pulls[pulled, 0], pulls[pulled, 1], pulls[pulled, 2], pulls[pulled, 3] = step, arm, spend, regret
                    pulled += 1
            totals[r, 0], totals[r, 1], totals[r, 2] = spend, regret, hv_total
            optimal[r] = best_pulls
            offsets[r + 1] = pulled
        return True, offsets, pulls[:pulled]

    return loop


_replay_loop = _loop_with(streams.replay_draw)
_bernoulli_loop = _loop_with(streams.bernoulli_draw)


def _compiled_loop(streams_digest: int) -> Any:
    """The loop, cached on disk under a key that holds ``streams_digest``: numba keys a cached function by its
    own file and code only, and this one compiles the draws of :mod:`cabench.kernels.streams` into its body."""

    @numba.njit(_LOOP, cache=True, nogil=True)
    def online_loop(index_of, sampler, keys, table, costs, params, arms_by, by_cost, best, n_init, scalars, log,
                    counts, totals, optimal):
        """Run every repetition of ``keys`` ``[reps, K]``; fill ``counts`` ``[reps, K]``, ``totals`` ``[reps, 3]``
        (normalised spend, HV-efficiency regret, sum of ``H``) and ``optimal`` (pulls of the best arm).

        ``arms_by`` holds ``c_i / c_max``, ``nu* - nu_i`` and ``H_i`` ``[3, K]``; ``by_cost`` the arms by
        decreasing cost; ``scalars`` ``(B~, alpha log T_B, lambda, s_r, s_c, c_max)``. Returns whether every index
        was a number or +inf (else the run stops there and the caller asks the numpy loop, which names the
        problem), the offsets of each repetition's pulls in the log and, when ``log``, the log: per pull, the step
        of the numpy loop that makes it (the initial round position, or ``n_init K`` plus the decision), the arm,
        the normalised spend and the regret after it.
        """
        streams_digest  # noqa: B018 - a closure variable: numba's cache key holds it
        if sampler == streams.REPLAY:
            return _replay_loop(index_of, keys, table, costs, params, arms_by, by_cost, best, n_init, scalars, log,
                                counts, totals, optimal)
        return _bernoulli_loop(index_of, keys, table, costs, params, arms_by, by_cost, best, n_init, scalars, log,
                               counts, totals, optimal)

    return online_loop


if TYPE_CHECKING:
    online_loop: Any  # made on first use (below); declared so that the module's other names stay checked
else:
    def __getattr__(name: str) -> Any:
        """``online_loop``: the compiled loop (see :func:`_compiled_loop`); ``sampler`` is
        :data:`cabench.kernels.streams.REPLAY` or :data:`~cabench.kernels.streams.BERNOULLI`.

        Its signature is given, so numba compiles it (or loads it from its cache) where it is made: here, on its first
        use, not when this module is imported (by every command that reads results, and by identification runs, which
        never call it; on a fresh install each of them compiled it, about 6 s)."""
        if name == "online_loop":
            loop = globals()["online_loop"] = _compiled_loop(source_digest(streams))
            return loop
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def per_arm(function: Callable[..., float]) -> Any | None:
    """``function(n, upper [D], lower_cost) -> float`` compiled as the loop calls an index, kept on disk when it
    lives in a file; ``None`` when numba cannot compile it (the numpy loop runs)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return numba.njit(INDEX, cache=True, nogil=True)(function)
            except RuntimeError:  # no file to keep it beside (defined at a prompt): compiled for this process
                return numba.njit(INDEX, nogil=True)(function)
    except Exception:  # noqa: BLE001 - whatever numba cannot compile runs in the numpy loop
        return None


#: The index functions :func:`from_arrays` compiled in this process: (the function, compiled or None), by the
#: function's identity and the settings it held then.
_FROM_ARRAYS: dict[tuple[int, str | None], tuple[Any, Any]] = {}


def from_arrays(function: Callable[..., Any], settings: str | None = None) -> Any | None:
    """An index function on arrays, ``index(n [m], upper [m, D], lower_cost [m]) -> [m]``, compiled and called on
    arrays of one arm (fresh copies, as the numpy loop gives); ``None`` when numba cannot compile it, or it does
    not return a 1-D array of numbers. A result of another length than one becomes NaN, which stops the loop.
    Compiled once per function and ``settings`` (a method of your own's, :meth:`UserMethod.state_digest`): numba
    reads the globals and closure variables a function reads as constants when it compiles, so a setting changed
    in one process (``mine.SHARE = 0.9``) compiles it again. The function need not be hashable (a dataclass)."""
    found = _FROM_ARRAYS.get((id(function), settings))
    if found is not None and found[0] is function:
        return found[1]
    compiled = _compiled_from_arrays(function)
    _FROM_ARRAYS[(id(function), settings)] = (function, compiled)  # (the function kept: its id is not reused)
    return compiled


def _compiled_from_arrays(function: Callable[..., Any]) -> Any | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arrays = numba.njit(error_model="numpy")(function)
            signature = (types.int64[::1], types.float64[:, ::1], types.float64[::1])
            arrays.compile(signature)
            result = arrays.nopython_signatures[-1].return_type
            if not (isinstance(result, types.Array) and result.ndim == 1
                    and isinstance(result.dtype, (types.Integer, types.Float))):
                return None

            @numba.njit(INDEX, error_model="numpy", nogil=True)
            def one_arm(n, upper, lower_cost):
                out = arrays(np.full(1, n), upper.copy().reshape((1, upper.shape[0])), np.full(1, lower_cost))
                return out[0] if out.shape[0] == 1 else np.nan

            return one_arm
    except Exception:  # noqa: BLE001 - whatever numba cannot compile runs in the numpy loop
        return None
