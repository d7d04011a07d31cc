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
samples is recomputed (O(k^2)): row by row in loops along the arms that the compiler vectorises, where a
dominated arm's ``Delta+_i`` is ``-Delta-_i`` (its other terms are not negative), so only the others' rows
are scanned twice; or, for few arms and many such repetitions, pair by pair in loops across them.

Every value comes from the operations of :func:`cabench.pareto.classification_gaps` on the same
numbers (differences, minima and maxima, one addition), so the gaps equal its gaps exactly (as numbers:
a zero gap may carry the other sign, which no comparison sees) and every decision is the same.
"""

from __future__ import annotations

import numba
import numpy as np

from cabench.interrupts import in_kernel

_compiled = numba.njit(cache=True, nogil=True)
#: Work compiled into its caller's loop: no array views built for a call per repetition (costly at small K).
_inlined = numba.njit(cache=True, nogil=True, inline="always")


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


@_inlined
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


@_inlined
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


@_inlined
def _extreme_each(values, best, count, n, larger):
    """Running maxima (``larger``) or minima ``best[:n]`` with the number of values attaining each, taking
    ``values[:n]`` (vectorised)."""
    for f in range(n):
        value, old = values[f], best[f]
        better = value > old if larger else value < old
        count[f] = np.int64(1) if better else count[f] + np.int64(value == old)
        best[f] = value if better else old


@_inlined
def _margins_each(means, a, b, n, low, high):
    """``low[f] = m(a, b)`` and ``high[f] = M(b, a)`` in each of ``n`` repetitions, ``means`` ``[D, k, n]``."""
    for f in range(n):
        low[f] = high[f] = means[0, b, f] - means[0, a, f]
    for d in range(1, means.shape[0]):
        for f in range(n):
            x = means[d, b, f] - means[d, a, f]
            low[f] = low[f] if low[f] < x else x
            high[f] = high[f] if high[f] > x else x


@_inlined
def _across(mu, group, arms, k, minus, minus_count, plus, plus_count):
    """:func:`_recompute` for the repetitions ``group``, each with ``k >= 2`` active arms ``arms[r, :k]``, pair by
    pair in loops across the repetitions that the compiler vectorises: the same values and counts."""
    n, d = len(group), mu.shape[2]
    means, margin = np.empty((d, k, n)), np.empty((k, k, n))
    best, count, positive = np.empty((k, n)), np.empty((k, n), np.int64), np.empty((k, n))
    for a in range(k):
        for f in range(n):
            for j in range(d):
                means[j, a, f] = mu[group[f], arms[group[f], a], j]
    for a in range(k):  # margin[a, b] = m(a, b); m(b, a) = -M(b, a)
        for b in range(a + 1, k):
            _margins_each(means, a, b, n, margin[a, b], margin[b, a])
            for f in range(n):
                margin[b, a, f] = -margin[b, a, f]
    for a in range(k):  # Delta-_a = max_b m(a, b)
        best[a, :] = -np.inf
        count[a, :] = 0
        for b in range(k):
            if b != a:
                _extreme_each(margin[a, b], best[a], count[a], n, True)
        for f in range(n):
            r, i = group[f], arms[group[f], a]
            minus[r, i], minus_count[r, i], positive[a, f] = best[a, f], count[a, f], _positive(best[a, f])
    term = np.empty(n)
    for a in range(k):  # Delta+_a = min_b t(a, b): for a dominated arm, -Delta-_a, which _recompute sets
        best[a, :] = np.inf
        count[a, :] = 0
        for b in range(k):
            if b != a:
                for f in range(n):
                    term[f] = _term(margin[a, b, f], -margin[b, a, f], positive[b, f])
                _extreme_each(term, best[a], count[a], n, False)
        for f in range(n):
            plus[group[f], arms[group[f], a]], plus_count[group[f], arms[group[f], a]] = best[a, f], count[a, f]


#: Repetitions with as many active arms are recomputed together (:func:`_across`) when they have at most this many
#: and are at least half as many as their arms; else one by one (:func:`_recompute` wins then: random means, D = 2).
_FEW = 32


@_inlined
def _by_count(fresh, ks, n_arms):
    """The repetitions ``fresh`` in ascending order of their numbers of active arms ``ks``, those of one number in
    their order in ``fresh``: a stable sort by counting, in numpy's mergesort order (compiling numba's mergesort
    was a fifth of compiling the identification engine's kernels)."""
    start = np.zeros(n_arms + 2, np.int64)
    for r in fresh:
        start[ks[r] + 1] += 1
    for k in range(1, n_arms + 2):
        start[k] += start[k - 1]
    order = np.empty(len(fresh), np.int64)
    for r in fresh:
        order[start[ks[r]]] = r
        start[ks[r]] += 1
    return order


@_compiled
def _recompute_fresh(mu, fresh, arms, ks, minus, minus_count, plus, plus_count):
    """Both gaps of the repetitions ``fresh`` (their active arms ``arms[r, :ks[r]]``) from scratch. Called once per
    kernel call, so not inlined: :func:`_keep` and :func:`_all_pairs` share its compiled code."""
    reps, n_arms, d = mu.shape
    means, low, high, positive = np.empty((d, n_arms)), np.empty(n_arms), np.empty(n_arms), np.empty(n_arms)
    order = _by_count(fresh, ks, n_arms)
    start = 0
    while start < len(order):
        k = ks[order[start]]
        stop = start
        while stop < len(order) and ks[order[stop]] == k:
            stop += 1
        if 2 <= k <= _FEW and 2 * (stop - start) >= k:
            _across(mu, order[start:stop], arms, k, minus, minus_count, plus, plus_count)
        else:
            for r in order[start:stop]:
                _recompute(mu[r], arms[r], k, minus[r], minus_count[r], plus[r], plus_count[r], means, low, high,
                           positive)
        start = stop


@_compiled
def _keep(n, sums, active, mu, seen, kept, minus, minus_count, plus, plus_count, arms, ks):
    """The gaps of every repetition's active arms (listed in ``arms[r, :ks[r]]``): recomputed where an active
    arm's count changed since they were kept (new means), else updated for the arms that left."""
    reps, n_arms, d = mu.shape
    current, fell, before = np.empty(n_arms, np.int64), np.empty(n_arms, np.int64), np.empty(n_arms)
    fresh = np.empty(reps, np.int64)
    n_fresh = 0
    for r in range(reps):
        k, new = 0, False
        for i in range(n_arms):
            if active[r, i]:
                arms[r, k] = i
                k += 1
                new = new or n[r, i] != seen[r, i]
        ks[r] = k
        if new:
            for a in range(k):
                i = arms[r, a]
                seen[r, i] = n[r, i]
                for j in range(d):
                    mu[r, i, j] = sums[r, i, j] / n[r, i] if n[r, i] > 0 else 0.0
            fresh[n_fresh] = r
            n_fresh += 1
        else:  # the means did not change: each arm that left since the gaps were kept, in index order
            size = 0
            for i in range(n_arms):
                if kept[r, i]:
                    current[size] = i
                    size += 1
            for e in range(n_arms):
                if kept[r, e] and not active[r, e]:
                    size_after = np.int64(0)  # not a literal 0: _remove compiles once, for an int64 size
                    for a in range(size):
                        if current[a] != e:
                            current[size_after] = current[a]
                            size_after += 1
                    size = size_after
                    _remove(mu[r], current, size, e, minus[r], minus_count[r], plus[r], plus_count[r], fell, before)
        for i in range(n_arms):  # a loop: a slice assignment costs more than the copy at this size
            kept[r, i] = active[r, i]
    _recompute_fresh(mu, fresh[:n_fresh], arms, ks, minus, minus_count, plus, plus_count)


@_compiled
def _leave(n, sums, active, mu, seen, kept, minus, minus_count, plus, plus_count, atol, rtol, gamma, dominated,
           out, accepted):
    arms, ks = np.empty(n.shape, np.int64), np.empty(len(n), np.int64)
    _keep(n, sums, active, mu, seen, kept, minus, minus_count, plus, plus_count, arms, ks)
    for r in range(len(n)):
        out[r] = _choose(arms[r], ks[r], minus[r], plus[r], atol, rtol, gamma[r], dominated[r])
        accepted[r] = not dominated[r, out[r]]


@_compiled
def _all_pairs(mu, minus, minus_count, plus, plus_count):
    reps, n_arms, _ = mu.shape
    arms = np.empty((reps, n_arms), np.int64)
    for r in range(reps):  # element by element: an array assignment compiles numba's shape-mismatch error
        for i in range(n_arms):
            arms[r, i] = i
    _recompute_fresh(mu, np.arange(reps), arms, np.full(reps, n_arms), minus, minus_count, plus, plus_count)


def classification_gaps(mu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`cabench.pareto.classification_gaps` compiled: ``(delta_minus, delta_plus, gamma, dominated)``
    of the arm sets ``mu`` ``[..., K, D]``, equal to its."""
    mu = np.ascontiguousarray(mu, dtype=np.float64)
    flat = mu.reshape(-1, *mu.shape[-2:])
    minus, plus = np.empty(flat.shape[:2]), np.empty(flat.shape[:2])
    with in_kernel:
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
        with in_kernel:
            _keep(n, sums, active, self.mu, self.seen, self.kept, self.delta_minus, self.minus_count,
                  self.delta_plus, self.plus_count, np.empty(n.shape, np.int64), np.empty(len(n), np.int64))

    def leave(self, n: np.ndarray, sums: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Algorithm 2 lines 11-20: the gaps of the active arms, then the arm that leaves each repetition
        ``[reps]`` and whether it is accepted (not empirically dominated)."""
        out, accepted = np.empty(len(n), dtype=np.int64), np.empty(len(n), dtype=bool)
        with in_kernel:
            _leave(n, sums, active, self.mu, self.seen, self.kept, self.delta_minus, self.minus_count,
                   self.delta_plus, self.plus_count, self.atol, self.rtol, self.gamma, self.dominated, out, accepted)
        return out, accepted
