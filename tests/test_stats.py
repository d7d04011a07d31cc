"""Interval computations used by summaries, plots and the report."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cabench.stats import mean_se, paired_difference, wilson


def test_wilson_known_values():
    lo, hi = wilson(0, 500)
    assert lo == 0.0 and hi == pytest.approx(0.0076, abs=1e-4)  # 1.96^2 / (500 + 1.96^2)
    lo, hi = wilson(50, 100)
    assert (lo, hi) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    lo, hi = wilson(2, 500)
    assert lo < 0.004 < hi and hi == pytest.approx(0.01446, abs=1e-4)
    assert all(math.isnan(v) for v in wilson(0, 0))


def test_mean_se():
    m, se = mean_se(np.array([1.0, 2.0, 3.0, 4.0]))
    assert m == 2.5 and se == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    assert mean_se(np.array([5.0])) == (5.0, 0.0)
    assert mean_se(np.array([np.nan, 1.0, 3.0])) == (2.0, pytest.approx(1.0))


def test_paired_difference():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    b = np.array([2.0, 2.0, 5.0, 3.0])
    d = paired_difference(a, b)
    assert d["mean_diff"] == pytest.approx(-0.5)
    half = 1.959963984540054 * np.std(a - b, ddof=1) / 2
    assert (d["ci_low"], d["ci_high"]) == pytest.approx((-0.5 - half, -0.5 + half))
    assert (d["a_lower"], d["b_lower"], d["ties"], d["n"]) == (0.5, 0.25, 0.25, 4)
