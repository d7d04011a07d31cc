"""Algorithm 2's sampling in blocks under SPEC §6's budget rule, deterministic costs, compiled.

Every active arm of a repetition is brought up to the repetition's target, arm by arm in index order;
a block of ``n`` samples of arm ``i`` costs ``n c~_i``, exact because the costs are quantised. A pull
that would take the spend past the budget is not made: the block it is in is cut to the pulls that
fit, and the repetition stops sampling for good. The arithmetic is that of the numpy rule it replaces
(the same products, sums and corrections of the floor), so the counts are the same.
"""

from __future__ import annotations

import numba
import numpy as np

from cabench.kernels import source_digest, streams

_compiled = numba.njit(cache=True, nogil=True)


@_compiled
def _fitting(before, c, length, budget):
    """The pulls of a block of ``length`` costing ``c`` each that fit in ``budget`` from ``before`` on."""
    k = min(max(np.int64(np.floor((budget - before) / c)), 0), length)
    if k < length and before + (k + 1) * c <= budget:  # exact corrections of the floor
        k += 1
    if k > 0 and before + k * c > budget:
        k -= 1
    return k


@_compiled
def plan(target, active, n, stopped, spend, costs, budget, rows, arms, starts, lengths):
    """The blocks that bring every active arm up to ``target`` ``[reps]`` within the budget, in pull order,
    written to ``rows``, ``arms``, ``starts`` and ``lengths``; their number is returned. A repetition whose
    block is cut is marked in ``stopped``."""
    blocks = 0
    for r in range(n.shape[0]):
        if stopped[r]:
            continue
        before = spend[r]  # spend when the next block starts
        for i in range(n.shape[1]):
            length = target[r] - n[r, i]
            if not active[r, i] or length <= 0:
                continue
            cost = length * costs[i]
            if before + cost > budget:
                length = _fitting(before, costs[i], length, budget)
                stopped[r] = True
            if length > 0:
                rows[blocks], arms[blocks], starts[blocks], lengths[blocks] = r, i, n[r, i], length
                blocks += 1
            if stopped[r]:
                break
            before += cost
    return blocks


@_compiled
def add(rows, arms, lengths, block_sums, costs, n, sums, spend):
    """Count the planned blocks: samples, reward sums and spend (each repetition's blocks summed in pull
    order, then added to its spend)."""
    total, r = 0.0, -1
    for b in range(len(rows)):
        if rows[b] != r:
            if r >= 0:
                spend[r] += total
            total, r = 0.0, rows[b]
        i = arms[b]
        n[r, i] += lengths[b]
        for d in range(sums.shape[2]):
            sums[r, i, d] += block_sums[b, d]
        total += lengths[b] * costs[i]
    if r >= 0:
        spend[r] += total


def _replay_bring_up(streams_digest: int):
    """:func:`replay_bring_up`, cached under a key that holds ``streams_digest`` (it compiles in the block sums of
    :mod:`cabench.kernels.streams`)."""

    @_compiled
    def replay_bring_up(target, active, n, stopped, spend, costs, budget, keys, table, sums):
        """:func:`plan`, the blocks' reward sums (:func:`cabench.kernels.streams.replay_quanta_sums` on the replay
        table in whole quanta, ``table``) and :func:`add` in one call: a phase's sampling for a log-replay
        problem."""
        streams_digest  # noqa: B018 - a closure variable: numba's cache key holds it
        blocks = active.sum()  # at most a block per active arm; four arrays, not the rows of one, so that plan and
        rows, arms = np.empty(blocks, np.int64), np.empty(blocks, np.int64)  # add compile once, for contiguous
        starts, lengths = np.empty(blocks, np.int64), np.empty(blocks, np.int64)  # arrays, as Python passes them
        count = plan(target, active, n, stopped, spend, costs, budget, rows, arms, starts, lengths)
        rows, arms, starts, lengths = rows[:count], arms[:count], starts[:count], lengths[:count]
        block_keys = np.empty(count, dtype=np.uint64)
        for b in range(count):
            block_keys[b] = keys[rows[b], arms[b]]
        sums_of_blocks = streams.replay_quanta_sums(block_keys, arms, starts, lengths, table)
        add(rows, arms, lengths, sums_of_blocks, costs, n, sums, spend)

    return replay_bring_up


replay_bring_up = _replay_bring_up(source_digest(streams))
