"""Interval computations used by summaries, plots and the report."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cabench.stats import mean_se, wilson


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


def test_mcnemar_exact_by_hand():
    from cabench.stats import mcnemar_exact

    out = mcnemar_exact(np.array([1, 1, 1, 0, 0, 1]), np.array([0, 0, 0, 0, 1, 1]))
    assert (out["only_a"], out["only_b"], out["n"]) == (3, 1, 6)
    assert out["p"] == pytest.approx(2 * (1 + 4) / 16)  # two-sided binomial tail of 1 in 4 at p = 1/2
    assert mcnemar_exact(np.zeros(5), np.zeros(5))["p"] == 1.0
    assert mcnemar_exact(np.ones(10), np.zeros(10))["p"] == pytest.approx(2 / 2**10)


def test_holm_by_hand():
    from cabench.stats import holm

    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_log_growth_recovers_slope_and_curvature():
    from cabench.stats import log_growth

    x = np.array([0.0, 1.0, 2.0, 3.0])
    y = 1 + 2 * x + 3 * x**2  # about xbar = 1.5: slope 2 + 6 * 1.5 = 11, curvature 3
    fit = log_growth(x, np.tile(y, (7, 1)))
    assert fit["slope"] == pytest.approx(11) and fit["curvature"] == pytest.approx(3)
    assert fit["curvature_low"] == pytest.approx(3) and fit["curvature_high"] == pytest.approx(3)
    rng = np.random.default_rng(0)
    noisy = log_growth(x, 5 + 4 * x + rng.normal(0, 1, (200, 4)))  # linear: curvature interval covers 0
    assert noisy["curvature_low"] < 0 < noisy["curvature_high"] and 3.5 < noisy["slope"] < 4.5


def test_bootstrap_interval_is_seeded_and_covers_the_mean():
    from cabench.stats import bootstrap_mean_ci

    d = np.arange(20, dtype=float)
    assert bootstrap_mean_ci(d) == bootstrap_mean_ci(d)
    lo, hi = bootstrap_mean_ci(d)
    assert lo < 9.5 < hi and hi - lo < 8
    assert bootstrap_mean_ci(np.full(5, 2.0)) == (2.0, 2.0)


@pytest.mark.parametrize("n", [5, 37, 500])
def test_bootstrap_interval_equals_resampling_afresh_each_time(n):
    """Resamples drawn once per size give every interval exactly what drawing them for that interval gives:
    percentiles of the means of ``n`` draws with replacement, from a generator seeded 0."""
    from cabench.stats import bootstrap_mean_ci

    rng = np.random.default_rng(n)
    for d in (rng.normal(0, 1, n), rng.integers(-1, 2, n).astype(float), rng.exponential(3.0, n)):
        draws = np.random.default_rng(0).integers(0, n, size=(2000, n))
        expected = np.quantile(d[draws].mean(axis=1), [0.025, 0.975])
        assert bootstrap_mean_ci(d) == (float(expected[0]), float(expected[1]))
    assert bootstrap_mean_ci(d, seed=1) != bootstrap_mean_ci(d)
