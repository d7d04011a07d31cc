"""Stream draws and the samplers, compiled (numba): the values of :mod:`cabench.streams` and of the samplers'
numpy rules, bit for bit (SPEC §4).

Element ``n`` (sub-draw ``j`` of ``w``) of the stream ``key`` is ``mix(mix(GOLDEN (w n + j + 1)) ^ key)``, the
SplitMix64 finaliser in uint64 arithmetic; its uniform takes the top 53 bits, its bootstrap index the bits
modulo the number of logged rows. :func:`replay_draw` and :func:`bernoulli_draw` are one pull of the samplers
the compiled online loop knows, each reading its sampler's tables. A run of consecutive elements of one
stream (a block of Algorithm 2's samples, a repetition's pulls of an arm) takes its bootstrap indices from
:func:`rows`, the same integers computed without a division, so that the compiler vectorises them.
"""

from __future__ import annotations

import numba
import numpy as np

from cabench.quantize import QUANTUM

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
def _remainder(x, size, scale, inverse):
    """``x % size`` for a uint64 ``x`` and ``1 <= size < 2^50``, from two floating-point estimates of the
    quotient (``scale = 2^11 / size`` and ``inverse = 1 / size``, rounded); exact for every ``x``.

    With ``y = x >> 11`` (below 2^53, so a double holds it exactly), ``t = trunc(y scale)`` is below 2^64
    (``size = 1``: ``y 2^11`` exactly; else ``scale <= 2^10``). The two roundings move ``y scale`` from
    ``2^11 y / size`` by less than ``2^64 / size 2^-52 = 2^12 / size``, and ``x / size - 2^11 y / size`` is in
    ``[0, 2047 / size]``, so ``s = x - t size`` (wrapped to 64 bits, read signed) is the integer in
    ``(-2^12 - 1, 2^13 + size)``. ``s size^-1`` is rounded twice, each time by a relative ``2^-53``, so it is
    within ``(2^13 + size) / size 2^-52 < 1 / size`` of ``s / size``: if ``size`` does not divide ``s`` its floor
    is ``floor(s / size)``, else it may be one less; ``r = s - floor(fl(s / size)) size`` is the remainder or,
    then, ``size``, which the last step takes back to 0.
    """
    s = np.int64(x - np.uint64(np.float64(x >> np.uint64(11)) * scale) * np.uint64(size))
    r = s - np.int64(np.floor(np.float64(s) * inverse)) * size
    return r - size if r >= size else r


#: :func:`rows` draws whole groups of this many (the 64-bit lanes of a 512-bit vector), so no pull falls to the
#: compiler's scalar remainder loop, where :func:`_remainder`'s dependent steps are slower than a division.
_GROUP = 8


@_inlined
def reciprocals(size):
    """``(2^11 / size, 1 / size)``: what :func:`_remainder` multiplies by, found once for many rows."""
    return 2048.0 / size, 1.0 / size


@_inlined
def rows(key, start, length, size, scale, inverse, out):
    """``out[n] = row(key, start + n, size)`` for ``n < length``: the rows of a run of pulls of one stream, each
    with :func:`_remainder` (multiplications, which the compiler vectorises, instead of a 64-bit division), given
    the :func:`reciprocals` of ``size`` (found once for the many runs a kernel draws from one table). ``out`` needs
    room for ``length`` rounded up to a multiple of :data:`_GROUP`: the rows after ``length`` are drawn too."""
    for n in range((length + _GROUP - 1) // _GROUP * _GROUP):
        out[n] = _remainder(bits(key, start + n, 0, _INDEX_DRAWS), size, scale, inverse)


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


@_inlined
def _sum_of_rows(table, arm, q, length, d):
    """``table[arm, q[n], d]`` summed over ``n < length`` in four interleaved running sums (chains of additions that
    do not wait for each other): exact whatever the order, the rewards being quantised (:mod:`cabench.quantize`)."""
    s0 = s1 = s2 = s3 = 0.0
    n = 0
    while n + 4 <= length:
        s0 += table[arm, q[n], d]
        s1 += table[arm, q[n + 1], d]
        s2 += table[arm, q[n + 2], d]
        s3 += table[arm, q[n + 3], d]
        n += 4
    while n < length:
        s0 += table[arm, q[n], d]
        n += 1
    return (s0 + s1) + (s2 + s3)


@_compiled
def replay_block_sums(keys, arms, starts, lengths, table):
    """Reward sums ``[blocks, D]`` of stream elements ``[start, start + length)`` of each block."""
    sums = np.zeros((keys.shape[0], table.shape[2]))
    q = np.empty((lengths.max() if keys.shape[0] else 0) + _GROUP, np.int64)
    scale, inverse = reciprocals(table.shape[1])
    for b in range(keys.shape[0]):
        rows(keys[b], starts[b], lengths[b], table.shape[1], scale, inverse, q)
        for d in range(table.shape[2]):
            sums[b, d] = _sum_of_rows(table, arms[b], q, lengths[b], d)
    return sums


@_compiled
def replay_quanta_sums(keys, arms, starts, lengths, quanta):
    """:func:`replay_block_sums` of a table held as whole multiples of :data:`cabench.quantize.QUANTUM`
    (``quanta`` ``[K, Q, D]`` int64): each block's sum in integers, which the compiler adds in vector lanes (a
    floating-point sum keeps its order), then scaled, exactly (below 2^53 quanta), to the same sums."""
    sums = np.zeros((keys.shape[0], quanta.shape[2]))
    q = np.empty((lengths.max() if keys.shape[0] else 0) + _GROUP, np.int64)
    scale, inverse = reciprocals(quanta.shape[1])
    for b in range(keys.shape[0]):
        rows(keys[b], starts[b], lengths[b], quanta.shape[1], scale, inverse, q)
        arm = arms[b]
        for d in range(quanta.shape[2]):
            total = np.int64(0)
            for n in range(lengths[b]):
                total += quanta[arm, q[n], d]
            sums[b, d] = np.float64(total) * QUANTUM
    return sums


@_compiled
def replay_spent(keys, counts, values):
    """Per repetition, the sum of ``values[i, q]`` over the rows the first ``counts[r, i]`` pulls of every arm
    replayed, added rep by rep, arm by arm, pull by pull (``values`` ``[K, Q]``)."""
    out = np.zeros(keys.shape[0])
    q = np.empty((counts.max() if counts.size else 0) + _GROUP, np.int64)
    scale, inverse = reciprocals(values.shape[1])
    for r in range(keys.shape[0]):
        total = 0.0
        for i in range(keys.shape[1]):
            rows(keys[r, i], 0, counts[r, i], values.shape[1], scale, inverse, q)
            for n in range(counts[r, i]):
                total += values[i, q[n]]
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
