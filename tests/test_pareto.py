"""Pareto tools on hand-worked examples (paper §3.2, eq. (1), Theorem 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cabench.pareto import (
    classification_gaps,
    complexity,
    harmonic_l,
    margin_min,
    pareto_mask,
    removal_choice,
    theorem2_bound,
    theorem2_min_budget,
)

MU = np.array([[0.9, 0.1], [0.5, 0.5], [0.1, 0.9], [0.4, 0.3]])


def test_margins_and_pareto_set():
    m = margin_min(MU)
    assert m[3, 1] == pytest.approx(0.1)  # arm 1 beats arm 3 by at least 0.1 in every objective
    assert m[1, 3] == pytest.approx(-0.2)
    assert pareto_mask(MU).tolist() == [True, True, True, False]


def test_strict_dominance_only():
    mu = np.array([[0.5, 0.5], [0.5, 0.7]])  # equal in one coordinate: not strictly dominated
    assert pareto_mask(mu).tolist() == [True, True]


def test_gaps_by_hand():
    dm, dp, gamma, dominated = classification_gaps(MU)
    assert dominated.tolist() == [False, False, False, True]
    assert gamma[3] == pytest.approx(0.1)  # Delta-_3 = m(3, 1)
    # Delta+_1 = min_j [M(1,j) ^ (M(j,1)^+ + (Delta-_j)^+)]: j=3 gives min(0.2, 0 + 0.1) = 0.1
    assert dp[1] == pytest.approx(0.1)
    # Delta+_0: j=1: min(0.4, 0.4); j=2: min(0.8, 0.8); j=3: min(0.5, 0.1)=0.1 -> 0.1? M(3,0)=0.2 -> 0.2+0.1
    assert dp[0] == pytest.approx(min(0.4, 0.8, min(0.5, 0.2 + 0.1)))
    assert gamma[:3].tolist() == pytest.approx(dp[:3].tolist())


def test_tie_rule_prefers_dominated_then_lowest():
    gamma = np.array([0.3, 0.3 + 1e-13, 0.3, 0.1])
    dominated = np.array([False, False, True, True])
    assert removal_choice(gamma, dominated) == 2
    assert removal_choice(gamma, np.zeros(4, bool)) == 0
    assert removal_choice(np.array([0.2, 0.31, 0.3]), np.array([True, False, True])) == 1


def test_complexity_takes_most_expensive_arms():
    gamma = np.array([0.1, 0.2, 0.4])
    costs = np.array([1.0, 0.5, 0.25])
    # sizes 1..3: 1/0.01, 1.5/0.04, 1.75/0.16
    assert complexity(gamma, costs) == pytest.approx(max(100.0, 37.5, 1.75 / 0.16))


def test_l_and_theorem2():
    assert harmonic_l(1, 0.5) == 1.0
    assert harmonic_l(3, 1.0) == pytest.approx(1 + 1 / 2 + 1 / 3)
    assert harmonic_l(3, 0.5) == pytest.approx(1 + 1 / 1.5 + 1 / 2)
    assert theorem2_min_budget(2.0, 10.0) == 40.0
    assert theorem2_bound(256 * 2 * 10 * 5, 3, 2, 2.0, 10.0) == pytest.approx(2 * 9 * 2 * math.exp(-5))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=8))
def test_batched_gaps_match_per_instance(points):
    mu = np.array(points)
    batch = np.stack([mu, mu[::-1]])
    for b in range(2):
        for got, want in zip(classification_gaps(batch)[2:], classification_gaps(batch[b])[2:]):
            assert np.array_equal(got[b], want)
    # the Pareto set is exactly the arms with Delta- <= 0
    assert np.array_equal(pareto_mask(mu), classification_gaps(mu)[0] <= 0)
