"""Pareto tools with any number of objectives against brute forces written from the definitions
(paper §3.1 hypervolume with reference point 0; §3.2 dominance and eq. (1) gaps; SPEC §6)."""

from __future__ import annotations

import itertools

import moocore
import numpy as np
import pytest

from cabench.pareto import classification_gaps, hypervolume, pareto_mask

RNG_SEED = 20


def _point_sets(d: int, count: int, seed: int):
    """Sets of 1..8 points in [-0.2, 1]^d with a reference point: half on a coarse grid (ties, duplicate
    points), half continuous; some points below the reference; some references not at the origin."""
    rng = np.random.default_rng(seed)
    for case in range(count):
        n = int(rng.integers(1, 9))
        if case % 2:
            pts = rng.integers(-1, 6, size=(n, d)) / 5.0
        else:
            pts = rng.uniform(-0.2, 1.0, size=(n, d))
        if n > 1 and case % 3 == 0:
            pts[rng.integers(n)] = pts[rng.integers(n)]  # a duplicate point
        ref = None if case % 4 else rng.integers(-1, 3, size=d) / 10.0
        yield pts, ref


def _inclusion_exclusion(pts: np.ndarray, ref: np.ndarray) -> float:
    """``sum_{S != {}} (-1)^(|S|+1) prod_d (min_{p in S} p_d - ref_d)^+`` over every subset S of the points."""
    total = 0.0
    for size in range(1, len(pts) + 1):
        for subset in itertools.combinations(range(len(pts)), size):
            corner = pts[list(subset)].min(axis=0)
            total += (-1) ** (size + 1) * float(np.prod(np.clip(corner - ref, 0.0, None)))
    return total


@pytest.mark.parametrize("d", [2, 3, 4])
def test_hypervolume_matches_inclusion_exclusion_and_moocore(d):
    positive = partly_below = 0
    for pts, ref in _point_sets(d, 1000, RNG_SEED + d):
        r = np.zeros(d) if ref is None else ref
        got = hypervolume(pts) if ref is None else hypervolume(pts, ref)
        above = (pts > r).all(axis=1)
        positive += got > 0
        partly_below += above.any() and not above.all()
        assert got == pytest.approx(_inclusion_exclusion(pts, r), rel=1e-12, abs=1e-15), (pts, r)
        if d >= 3:  # moocore's own maximisation flag, not the negation hypervolume uses
            assert got == pytest.approx(moocore.hypervolume(pts, ref=r, maximise=True), rel=1e-12, abs=1e-15)
    assert positive > 700 and partly_below > 500  # the sets exercise both kinds of points


def test_hypervolume_by_hand():
    assert hypervolume(np.array([[1.0, 0.5], [0.5, 1.0]])) == pytest.approx(0.75)
    assert hypervolume(np.array([[0.5, 0.5, 0.5], [1.0, 0.2, 1.0]])) == pytest.approx(0.125 + 0.2 - 0.05)
    assert hypervolume(np.array([[0.2, 0.3, 0.5, 0.5]])) == pytest.approx(0.015)  # paper §3.1: prod_d mu^(d)
    assert hypervolume(np.array([[0.3], [0.7], [-0.1]])) == pytest.approx(0.7)
    assert hypervolume(np.array([[0.3], [0.7]]), np.array([0.5])) == pytest.approx(0.2)
    assert hypervolume(np.array([[0.9, 0.0, 0.9], [0.4, 0.6, -0.1]])) == 0.0  # none strictly above 0
    assert hypervolume(np.zeros((0, 3))) == 0.0


def _mean_matrices(d: int, count: int, seed: int):
    """Mean matrices ``[K, d]``, K = 2..8, on a coarse grid (ties, equal arms) or continuous."""
    rng = np.random.default_rng(seed)
    for case in range(count):
        k = int(rng.integers(2, 9))
        yield rng.integers(0, 4, size=(k, d)) / 3.0 if case % 2 else rng.uniform(0, 1, size=(k, d))


def brute_gaps(mu: np.ndarray):
    """Eq. (1) by loops: (dominated, Delta-, Delta+, gamma), dominance strict in every coordinate."""
    k, d = mu.shape
    dominated = [any(all(mu[i, e] < mu[j, e] for e in range(d)) for j in range(k)) for i in range(k)]

    def m(i, j):
        return min(mu[j, e] - mu[i, e] for e in range(d))

    def big_m(i, j):
        return max(mu[i, e] - mu[j, e] for e in range(d))

    minus = [max(m(i, j) for j in range(k) if j != i) for i in range(k)]
    plus = [min(min(big_m(i, j), max(big_m(j, i), 0.0) + max(minus[j], 0.0)) for j in range(k) if j != i)
            for i in range(k)]
    gamma = [minus[i] if dominated[i] else plus[i] for i in range(k)]
    return dominated, minus, plus, gamma


@pytest.mark.parametrize("d", [3, 4])
def test_pareto_set_and_gaps_match_the_definitions(d):
    seen_ties = 0
    for mu in _mean_matrices(d, 300, RNG_SEED + 10 * d):
        dominated, minus, plus, gamma = brute_gaps(mu)
        assert pareto_mask(mu).tolist() == [not x for x in dominated], mu
        dm, dp, g, dom = classification_gaps(mu)
        assert dom.tolist() == dominated
        assert dm.tolist() == minus and dp.tolist() == plus and g.tolist() == gamma, mu
        seen_ties += any(v == 0.0 for v in minus)
    assert seen_ties > 20  # the grid cases do exercise weak (non-strict) dominance


@pytest.mark.parametrize("d", [3, 4])
def test_batched_gaps_match_per_instance(d):
    rng = np.random.default_rng(d)
    batch = rng.integers(0, 4, size=(5, 6, d)) / 3.0
    masks = pareto_mask(batch)
    gaps = classification_gaps(batch)
    for b in range(5):
        assert np.array_equal(masks[b], pareto_mask(batch[b]))
        for got, want in zip(gaps, classification_gaps(batch[b])):
            assert np.array_equal(got[b], want)
