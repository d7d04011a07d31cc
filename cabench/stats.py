"""Interval estimates used by summaries, plots and reports."""

from __future__ import annotations

import functools
import math

import numpy as np

Z95 = 1.959963984540054


def mean_se(values: np.ndarray) -> tuple[float, float]:
    """Mean and standard error (``std / sqrt(n)``, ``ddof=1``); se is 0 for one value."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if not len(v):
        return math.nan, math.nan
    se = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0
    return float(v.mean()), se


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default)."""
    if n <= 0:
        return math.nan, math.nan
    low, high = wilson_bounds(np.array([successes]), n, z)
    return float(low[0]), float(high[0])


def wilson_bounds(successes: np.ndarray, n: float | np.ndarray, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score intervals of binomial proportions ``successes / n`` (``n >= 1``; an effective number of trials
    may be fractional), elementwise: the interval of :func:`wilson` for each count; ``[0, ...]`` at no success and
    ``[..., 1]`` at ``n``."""
    k = np.asarray(successes, dtype=float)
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = np.where(k == 0, 0.0, np.maximum(0.0, centre - half))
    high = np.where(k == n, 1.0, np.minimum(1.0, centre + half))
    return low, high


def mcnemar_exact(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Exact McNemar test of paired 0/1 outcomes (e.g. errors of two methods on the same repetitions).

    ``n_a`` counts pairs where only ``a`` is 1, ``n_b`` where only ``b`` is 1; the
    two-sided p-value is the exact binomial probability of a split at least as
    uneven as observed among the ``n_a + n_b`` discordant pairs, under p = 1/2.
    """
    a, b = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
    n_a, n_b = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    n = n_a + n_b
    if n == 0:
        return {"only_a": 0, "only_b": 0, "p": 1.0, "n": int(len(a))}
    tail = sum(math.comb(n, i) for i in range(min(n_a, n_b) + 1)) / 2.0**n
    return {"only_a": n_a, "only_b": n_b, "p": min(1.0, 2.0 * tail), "n": int(len(a))}


#: The fewest paired differences a percentile bootstrap interval is computed from: over two it is their range
#: (both of one sign "excludes 0" whatever their size), and over a handful it covers far less than 95%.
MIN_PAIRED = 5


@functools.lru_cache(maxsize=8)
def _resampled(n: int, resamples: int, seed: int) -> np.ndarray:
    """The repetitions each of ``resamples`` bootstrap resamples of ``n`` draws (seeded: the same for every
    interval of ``n`` differences), drawn once per size: a report computes hundreds of intervals of a few sizes,
    and drawing the indices was most of each."""
    drawn = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    drawn.setflags(write=False)
    return drawn


def bootstrap_mean_ci(diff: np.ndarray, resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Percentile 95% interval of the mean of paired differences, resampling repetitions (seeded); NaN (no
    interval, so no test holds on it) from fewer than :data:`MIN_PAIRED` differences."""
    d = np.asarray(diff, dtype=float)
    if len(d) < MIN_PAIRED:
        return math.nan, math.nan
    means = d[_resampled(len(d), resamples, seed)].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def holm(pvalues: list[float]) -> list[float]:
    """Holm step-down adjusted p-values (family-wise error control over the list)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def log_growth(x: np.ndarray, per_rep: np.ndarray, resamples: int = 2000, seed: int = 0) -> dict[str, float]:
    """Slope and curvature of a quadratic in ``x`` (e.g. log2 B) fitted to the mean over repetitions.

    ``per_rep`` is ``[reps, len(x)]`` (paired: one row per repetition). The
    fit ``y = a + b (x - xbar) + c (x - xbar)^2`` is made to the column means;
    95% intervals come from resampling whole repetitions, so the pairing across
    budgets is kept. ``c > 0`` means faster than linear growth in ``x``.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(per_rep, dtype=float)
    xc = x - x.mean()
    design = np.stack([np.ones_like(xc), xc, xc**2], axis=1)
    pinv = np.linalg.pinv(design)
    coef = pinv @ y.mean(axis=0)
    rng = np.random.default_rng(seed)
    boot = y[rng.integers(0, len(y), size=(resamples, len(y)))].mean(axis=1)  # [resamples, len(x)]
    coefs = boot @ pinv.T
    lo, hi = np.quantile(coefs, [0.025, 0.975], axis=0)
    return {"slope": float(coef[1]), "slope_low": float(lo[1]), "slope_high": float(hi[1]),
            "curvature": float(coef[2]), "curvature_low": float(lo[2]), "curvature_high": float(hi[2])}
