"""Interval estimates used by summaries, plots and reports."""

from __future__ import annotations

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
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def paired_difference(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Mean of ``a - b`` over paired repetitions with a normal 95% interval, and win rates."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diff = a - b
    mean, se = mean_se(diff)
    return {
        "mean_diff": mean,
        "ci_low": mean - Z95 * se,
        "ci_high": mean + Z95 * se,
        "a_lower": float(np.mean(diff < 0)),
        "b_lower": float(np.mean(diff > 0)),
        "ties": float(np.mean(diff == 0)),
        "n": int(len(diff)),
    }
