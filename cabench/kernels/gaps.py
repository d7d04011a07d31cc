"""Eq. (1)'s empirical gaps, compiled: recomputed, or updated when an arm leaves (paper §3.2; SPEC §6).

For the active set ``A`` and means ``mu``, with ``m(i, j) = min_d (mu_j - mu_i)`` and
``M(i, j) = max_d (mu_i - mu_j) = -m(i, j)``,

* ``Delta-_i = max_{j in A, j != i} m(i, j)``;
* ``Delta+_i = min_{j in A, j != i} t(i, j)``, ``t(i, j) = M(i, j) ^ (M(j, i)^+ + (Delta-_j)^+)``.

Both are kept with the number of arms attaining them. When arm ``e`` leaves and no mean changed
(Algorithm 2, a phase whose target brings no sample), ``Delta-_i`` changes only if ``e`` was its sole
maximiser (row ``i`` is rescanned), ``t(i, j)`` only falls, and only where ``(Delta-_j)^+`` fell, and
``Delta+_i`` is rescanned only if ``e`` was its sole minimiser, so exact ties cost nothing: O(k) per
repetition and phase plus O(k) per rescanned row, instead of O(k^2). A repetition whose active arms got
samples is recomputed row by row (O(k^2), in loops the compiler vectorises); a dominated arm's
``Delta+_i`` is ``-Delta-_i`` there (its other terms are not negative), so only the others' rows are
scanned twice.

Every value comes from the operations of :func:`cabench.pareto.classification_gaps` on the same
numbers (differences, minima and maxima, one addition), so the gaps equal its gaps exactly (as numbers:
a zero gap may carry the other sign, which no comparison sees) and every decision is the same.
"""

from __future__ import annotations

import numba
import numpy as np

_compiled = numba.njit(cache=True, nogil=True)


@_compiled
def _margins(mu, i, j):
    """``(m(i, j), M(j, i))``: the smallest and the largest ``mu_j^(d) - mu_i^(d)``."""
    x = mu[j, 0] - mu[i, 0]
    low, high = x, x
    for d in range(1, mu.shape[1]):
        x = mu[j, d] - mu[i, d]
        low = low if low < x else x
        high = high if high > x else x
    return low, high


@_compiled
def _positive(x):
    return x if x > 0.0 else 0.0


@_compiled
def _term(low, high, positive_j):
    """``t(i, j) = M(i, j) ^ (M(j, i)^+ + (Delta-_j)^+)`` from the margins of ``(i, j)``."""
    t = _positive(high) + positive_j
    big = -low
    return t if t < big else big


@_compiled
def _raise(best, count, i, value):
    """A running maximum with the number of values attaining it."""
    if value > best[i]:
        best[i] = value
        count[i] = 1
    elif value == best[i]:
        count[i] += 1


@_compiled
def _lower(best, count, i, value):
    """A running minimum with the number of values attaining it (also right when ``value`` replaces a
    larger one of the same pair: it can only be smaller)."""
    if value < best[i]:
        best[i] = value
        count[i] = 1
    elif value == best[i]:
        count[i] += 1


@_compiled
def _row(means, a, k, low, high):
    """``low[b] = m(a, b)`` and ``high[b] = M(b, a)`` for the ``k`` arms of ``means`` ``[D, k]``: loops over
    arms that the compiler vectorises."""
    for b in range(k):
        low[b] = high[b] = means[0, b] - means[0, a]
    for d in range(1, means.shape[0]):
        for b in range(k):
            x = means[d, b] - means[d, a]
            low[b] = low[b] if low[b] < x else x
            high[b] = high[b] if high[b] > x else x


@_compiled
def _recompute(mu, arms, k, minus, minus_count, plus, plus_count, means, low, high, positive):
    """Both gaps of the ``k`` arms ``arms`` from scratch, row by row: a row's margins, then its extreme
    and the number of arms attaining it (``means``, ``low``, ``high``, ``positive``: room for ``k``)."""
    for a in range(k):
        for d in range(mu.shape[1]):
            means[d, a] = mu[arms[a], d]
    for a in range(k):  # Delta-_a = max_b m(a, b)
        _row(means, a, k, low, high)
        low[a] = -np.inf
        top = -np.inf
        for b in range(k):
            top = top if top > low[b] else low[b]
        count = 0
        for b in range(k):
            count += low[b] == top
        minus[arms[a]], minus_count[arms[a]], positive[a] = top, count, _positive(top)
    for a in range(k):  # Delta+_a = min_b t(a, b)
        i = arms[a]
        if positive[a] > 0.0:  # dominated: min_b M(a, b) = -Delta-_a < 0 <= every other term
            plus[i], plus_count[i] = -minus[i], minus_count[i]
            continue
        _row(means, a, k, low, high)
        for b in range(k):
            low[b] = _term(low[b], high[b], positive[b])
        low[a] = np.inf
        bottom = np.inf
        for b in range(k):
            bottom = bottom if bottom < low[b] else low[b]
        count = 0
        for b in range(k):
            count += low[b] == bottom
        plus[i], plus_count[i] = bottom, count


@_compiled
def _rescan_minus(mu, arms, k, i, minus, minus_count):
    minus[i], minus_count[i] = -np.inf, 0
    for b in range(k):
        if arms[b] != i:
            _raise(minus, minus_count, i, _margins(mu, i, arms[b])[0])


@_compiled
def _rescan_plus(mu, arms, k, i, minus, plus, plus_count):
    plus[i], plus_count[i] = np.inf, 0
    for b in range(k):
        j = arms[b]
        if j != i:
            low, high = _margins(mu, i, j)
            _lower(plus, plus_count, i, _term(low, high, _positive(minus[j])))


@_compiled
def _remove(mu, arms, k, e, minus, minus_count, plus, plus_count, fell, before):
    """Update both gaps of the ``k`` arms ``arms`` after arm ``e`` left, the means unchanged.

    ``(Delta-_j)^+`` falls only where ``e`` alone attained a positive ``Delta-_j``, and then ``t(i, j)``
    may fall for every ``i``. Algorithm 2's own choice never does this: such an ``e`` is not dominated
    (what dominates ``e`` attains ``Delta-_j`` too), so ``gamma_e = Delta+_e <= t(e, j) <= Delta-_j =
    gamma_j`` and the dominated ``j`` wins the tie; other removals (several arms at once) can.
    """
    n_fell = 0
    for a in range(k):  # Delta-: only where e attained the maximum
        i = arms[a]
        if _margins(mu, i, e)[0] == minus[i]:
            if minus_count[i] > 1:
                minus_count[i] -= 1
            else:
                old = _positive(minus[i])
                _rescan_minus(mu, arms, k, i, minus, minus_count)
                if _positive(minus[i]) != old:  # (Delta-_i)^+ fell: column i of t falls
                    fell[n_fell], before[n_fell] = i, old
                    n_fell += 1
    positive_e = _positive(minus[e])  # e's own gap, as when it left
    for a in range(k):  # Delta+: drop t(i, e), lower by the fallen columns
        i = arms[a]
        low, high = _margins(mu, i, e)
        if _term(low, high, positive_e) == plus[i]:
            if plus_count[i] == 1:
                _rescan_plus(mu, arms, k, i, minus, plus, plus_count)
                continue
            plus_count[i] -= 1
        for c in range(n_fell):
            j = fell[c]
            if j != i:
                low, high = _margins(mu, i, j)
                value = _term(low, high, _positive(minus[j]))
                if value != _term(low, high, before[c]):
                    _lower(plus, plus_count, i, value)


@_compiled
def _choose(arms, k, minus, plus, atol, rtol, gamma, dominated):
    """Algorithm 2 line 15: ``argmax gamma``; near-ties to a dominated arm first, then the lowest index."""
    top = -np.inf
    for a in range(k):
        i = arms[a]
        dominated[i] = minus[i] > 0.0
        gamma[i] = minus[i] if dominated[i] else plus[i]
        top = top if top > gamma[i] else gamma[i]
    room = atol + rtol * abs(top)
    first = -1
    for a in range(k):
        i = arms[a]
        if abs(gamma[i] - top) <= room:
            if dominated[i]:
                return i
            if first < 0:
                first = i
    return first


@_compiled
def _room(n_arms, d):
    """Working room for a repetition's arms: the active list, the kept list, the arms whose positive part
    fell and its value before, and a row's means ``[D, k]``, margins and positive parts."""
    return (np.empty(n_arms, np.int64), np.empty(n_arms, np.int64), np.empty(n_arms, np.int64), np.empty(n_arms),
            np.empty((d, n_arms)), np.empty(n_arms), np.empty(n_arms), np.empty(n_arms))


@_compiled
def _update_one(n, sums, active, mu, seen, kept, minus, minus_count, plus, plus_count, room):
    """One repetition: the gaps of its active arms (listed in ``room[0]``, their number returned),
    recomputed if an active arm's count changed since they were kept, else updated for each arm that left
    (arms only leave), one at a time in index order."""
    arms, current, fell, before, means, low, high, positive = room
    k = 0
    fresh = False
    for i in range(len(n)):
        if active[i]:
            arms[k] = i
            k += 1
            fresh = fresh or n[i] != seen[i]
    if fresh:  # new samples: new means, every gap anew
        for a in range(k):
            i = arms[a]
            seen[i] = n[i]
            for d in range(mu.shape[1]):
                mu[i, d] = sums[i, d] / n[i] if n[i] > 0 else 0.0
        _recompute(mu, arms, k, minus, minus_count, plus, plus_count, means, low, high, positive)
    else:
        size = 0
        for i in range(len(n)):
            if kept[i]:
                current[size] = i
                size += 1
        for e in range(len(n)):
            if kept[e] and not active[e]:
                size_after = 0
                for a in range(size):
                    if current[a] != e:
                        current[size_after] = current[a]
                        size_after += 1
                size = size_after
                _remove(mu, current, size, e, minus, minus_count, plus, plus_count, fell, before)
    kept[:] = active
    return k


@_compiled
def _update(n, sums, active, mu, seen, kept, minus, minus_count, plus, plus_count):
    room = _room(n.shape[1], mu.shape[2])
    for r in range(n.shape[0]):
        _update_one(n[r], sums[r], active[r], mu[r], seen[r], kept[r], minus[r], minus_count[r], plus[r],
                    plus_count[r], room)


@_compiled
def _leave(n, sums, active, mu, seen, kept, minus, minus_count, plus, plus_count, atol, rtol, gamma, dominated,
           out, accepted):
    room = _room(n.shape[1], mu.shape[2])
    for r in range(n.shape[0]):
        k = _update_one(n[r], sums[r], active[r], mu[r], seen[r], kept[r], minus[r], minus_count[r], plus[r],
                        plus_count[r], room)
        out[r] = _choose(room[0], k, minus[r], plus[r], atol, rtol, gamma[r], dominated[r])
        accepted[r] = not dominated[r, out[r]]


@_compiled
def _all_pairs(mu, minus, minus_count, plus, plus_count):
    room = _room(mu.shape[1], mu.shape[2])
    arms = np.arange(mu.shape[1])
    for r in range(mu.shape[0]):
        _recompute(mu[r], arms, len(arms), minus[r], minus_count[r], plus[r], plus_count[r], *room[4:])


def classification_gaps(mu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`cabench.pareto.classification_gaps` compiled: ``(delta_minus, delta_plus, gamma, dominated)``
    of the arm sets ``mu`` ``[..., K, D]``, equal to its."""
    mu = np.ascontiguousarray(mu, dtype=np.float64)
    flat = mu.reshape(-1, *mu.shape[-2:])
    minus, plus = np.empty(flat.shape[:2]), np.empty(flat.shape[:2])
    _all_pairs(flat, minus, np.empty(minus.shape, np.int64), plus, np.empty(plus.shape, np.int64))
    minus, plus = minus.reshape(mu.shape[:-1]), plus.reshape(mu.shape[:-1])
    dominated = minus > 0
    return minus, plus, np.where(dominated, minus, plus), dominated


class IncrementalGaps:
    """The gaps of a batch of elimination runs ``[reps, K]``, kept from one call to the next.

    Each call takes the counts ``n``, reward sums ``sums`` and active arms ``active`` of every repetition;
    a repetition whose active arms got samples since the last call is recomputed, any other is updated for
    the arms that left. ``delta_minus`` and ``delta_plus`` hold the active arms' gaps, ``gamma`` and
    ``dominated`` the active arms' values at the last :meth:`leave` (other entries are stale).
    """

    def __init__(self, reps: int, k: int, d: int, atol: float, rtol: float) -> None:
        self.atol, self.rtol = atol, rtol
        self.mu = np.zeros((reps, k, d))
        self.seen = np.full((reps, k), -1, dtype=np.int64)  # the counts the means were taken at
        self.kept = np.ones((reps, k), dtype=bool)  # the arms the gaps are kept for
        self.delta_minus, self.delta_plus = np.zeros((reps, k)), np.zeros((reps, k))
        self.minus_count = np.zeros((reps, k), dtype=np.int64)
        self.plus_count = np.zeros((reps, k), dtype=np.int64)
        self.gamma = np.zeros((reps, k))
        self.dominated = np.zeros((reps, k), dtype=bool)

    def update(self, n: np.ndarray, sums: np.ndarray, active: np.ndarray) -> None:
        """The gaps of the active arms."""
        _update(n, sums, active, self.mu, self.seen, self.kept, self.delta_minus, self.minus_count, self.delta_plus,
                self.plus_count)

    def leave(self, n: np.ndarray, sums: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Algorithm 2 lines 11-20: the gaps of the active arms, then the arm that leaves each repetition
        ``[reps]`` and whether it is accepted (not empirically dominated)."""
        out, accepted = np.empty(len(n), dtype=np.int64), np.empty(len(n), dtype=bool)
        _leave(n, sums, active, self.mu, self.seen, self.kept, self.delta_minus, self.minus_count, self.delta_plus,
               self.plus_count, self.atol, self.rtol, self.gamma, self.dominated, out, accepted)
        return out, accepted
