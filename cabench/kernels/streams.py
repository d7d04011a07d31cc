"""Stream draws and the samplers, compiled (numba): the values of :mod:`cabench.streams` and of the samplers'
numpy rules, bit for bit (SPEC §4).

Element ``n`` (sub-draw ``j`` of ``w``) of the stream ``key`` is ``mix(mix(GOLDEN (w n + j + 1)) ^ key)``, the
SplitMix64 finaliser in uint64 arithmetic; its uniform takes the top 53 bits, its bootstrap index the bits
modulo the number of logged rows. :func:`replay_draw` and :func:`bernoulli_draw` are one pull of the samplers
the compiled online loop knows, each reading its sampler's tables.
"""

from __future__ import annotations

import numba
import numpy as np

_compiled = numba.njit(cache=True, nogil=True)
_inlined = numba.njit(cache=True, nogil=True, inline="always")  # the online loop's per-pull work, in its body

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_U53 = 2.0**-53
_INDEX_DRAWS = 8  # a bootstrap index reads sub-draw 0 of 8 (cabench.streams.stream_index)

#: The samplers the compiled online loop knows: their draws of one pull, ``draw(key, arm, count, table, costs,
#: params, rewards_out) -> cost``.
REPLAY, BERNOULLI = 0, 1


@_inlined
def _mix(x):
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


@_inlined
def bits(key, count, draw, draws):
    """64 random bits of element ``count``, sub-draw ``draw`` of ``draws`` (:func:`cabench.streams.stream_bits`)."""
    counter = (np.uint64(count) * np.uint64(draws) + np.uint64(draw + 1)) * _GOLDEN
    return _mix(_mix(counter) ^ key)


@_inlined
def uniform(key, count, draw, draws):
    """A uniform in [0, 1) with 53 random bits (:func:`cabench.streams.stream_uniform`)."""
    return np.float64(bits(key, count, draw, draws) >> np.uint64(11)) * _U53


@_inlined
def row(key, count, size):
    """The logged row a pull replays (:func:`cabench.streams.stream_index`)."""
    return np.int64(bits(key, count, 0, _INDEX_DRAWS) % np.uint64(size))


@_inlined
def replay_draw(key, arm, count, table, costs, params, rewards_out):
    """Bootstrap replay: writes the rewards of a random logged row of ``arm`` into ``rewards_out`` and returns its
    cost (cost unit); ``table`` ``[K, Q, D]`` and ``costs`` ``[K, Q]`` are the logged rewards and costs."""
    q = row(key, count, table.shape[1])
    for j in range(table.shape[2]):
        rewards_out[j] = table[arm, q, j]
    return costs[arm, q]


@_inlined
def bernoulli_draw(key, arm, count, table, costs, params, rewards_out):
    """Bernoulli rewards ``u_j < mean`` (sub-draw ``j``) into ``rewards_out``, and the cost ``c (1 + spread (2 u -
    1))`` (the last sub-draw); ``table`` ``[K, 1, D]`` holds the means, ``costs`` ``[K, 1]`` the mean costs and
    ``params`` ``(spread, draws)`` (:meth:`cabench.synthetic.SyntheticSampler.sample`)."""
    spread, draws = params[0], np.int64(params[1])
    for j in range(table.shape[2]):
        rewards_out[j] = 1.0 if uniform(key, count, j, draws) < table[arm, 0, j] else 0.0
    tokens = costs[arm, 0]
    if spread > 0:
        tokens = tokens * (1.0 + spread * (2.0 * uniform(key, count, draws - 1, draws) - 1.0))
    return tokens


@_compiled
def replay_sample(keys, arms, counts, table, costs, params):
    """Rewards ``[N, D]`` and costs ``[N]`` of the pulls ``(keys, arms, counts)`` (flat arrays of one length), each
    drawn by :func:`replay_draw`."""
    rewards = np.empty((keys.shape[0], table.shape[2]))
    cost = np.empty(keys.shape[0])
    for p in range(keys.shape[0]):
        cost[p] = replay_draw(keys[p], arms[p], counts[p], table, costs, params, rewards[p])
    return rewards, cost


@_compiled
def bernoulli_sample(keys, arms, counts, table, costs, params):
    """:func:`replay_sample` for :func:`bernoulli_draw`."""
    rewards = np.empty((keys.shape[0], table.shape[2]))
    cost = np.empty(keys.shape[0])
    for p in range(keys.shape[0]):
        cost[p] = bernoulli_draw(keys[p], arms[p], counts[p], table, costs, params, rewards[p])
    return rewards, cost


@_compiled
def replay_block_sums(keys, arms, starts, lengths, table):
    """Reward sums ``[blocks, D]`` of stream elements ``[start, start + length)`` of each block."""
    sums = np.zeros((keys.shape[0], table.shape[2]))
    for b in range(keys.shape[0]):
        for n in range(starts[b], starts[b] + lengths[b]):
            q = row(keys[b], n, table.shape[1])
            for d in range(table.shape[2]):
                sums[b, d] += table[arms[b], q, d]
    return sums


@_compiled
def replay_spent(keys, counts, values):
    """Per repetition, the sum of ``values[i, q]`` over the rows the first ``counts[r, i]`` pulls of every arm
    replayed, added rep by rep, arm by arm, pull by pull (``values`` ``[K, Q]``)."""
    out = np.zeros(keys.shape[0])
    for r in range(keys.shape[0]):
        total = 0.0
        for i in range(keys.shape[1]):
            for n in range(counts[r, i]):
                total += values[i, row(keys[r, i], n, values.shape[1])]
        out[r] = total
    return out


@_compiled
def uniforms(keys, counts, slots, draws):
    """Uniforms ``[N, len(slots)]``: sub-draws ``slots`` of ``draws`` of elements ``counts`` of the streams ``keys``."""
    out = np.empty((keys.shape[0], slots.shape[0]))
    for p in range(keys.shape[0]):
        for s in range(slots.shape[0]):
            out[p, s] = uniform(keys[p], counts[p], slots[s], draws)
    return out
