"""From predicted curves to a budget: where a curve meets its target, and how sure the draws are of it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cabench.planning.targets import Target


def crossing(grid: np.ndarray, values: np.ndarray, target: Target) -> float:
    """The smallest budget from which ``values`` (on the ascending ``grid``) meets ``target`` at every later grid
    point, interpolated linearly in ``log rho`` from the grid point before it; ``inf`` if the last point misses."""
    met = target.met(values)
    if not met[-1]:
        return math.inf
    first = len(met) - int(np.argmin(met[::-1])) if not met.all() else 0  # the start of the last run of met points
    if first == 0 or np.isnan(values[first - 1]):
        return float(grid[first])
    below, above = float(values[first - 1]), float(values[first])
    share = (target.bound - below) / (above - below) if above != below else 1.0
    lo, hi = math.log(grid[first - 1]), math.log(grid[first])
    return float(math.exp(lo + min(max(share, 0.0), 1.0) * (hi - lo)))


@dataclass(frozen=True)
class Estimate:
    """A planned budget (rho) and how the draws spread about it."""

    rho: float  # the planned budget (inf: beyond the grid)
    low: float  # the interval's ends
    high: float
    reach: float  # share of draws that meet the target within the grid
    plugin: float = math.inf  # the budget the profiling rows themselves need
    needs: tuple[float, ...] = ()  # the budget each draw needs, ascending
    scale: float = math.inf  # a draw's budget times scale is the evaluation split's (the extrapolated level)


def estimate(grid: np.ndarray, plugin: np.ndarray, curves: np.ndarray, target: Target, confidence: float,
             level: float, beyond: float) -> Estimate:
    """The plan of one method for one target from the profiling rows' curve (``plugin``) and the draws' (``curves``,
    ``[draws, len(grid)]``).

    The draws carry the uncertainty — how much more or less a problem the profiling split leaves possible needs —
    but not its level: each adds a sampling error to the profiling split's, so its configurations are more spread
    out, its gaps wider, and it needs less than the profiling rows do; the evaluation split, with more instances,
    carries less sampling error than the profiling rows and needs more. The level is therefore extrapolated in
    ``log`` need from the profiling rows' need (the :func:`crossing` of ``plugin``) away from the draws' median,
    ``beyond`` times their distance (:func:`~cabench.planning.draws.extrapolation`); the planned budget is that
    level times the draws' ``confidence`` quantile over their median, the interval the same for their central
    ``level`` (quantiles are actual draws: nothing is interpolated past a draw that never meets the target, a
    budget beyond the grid is ``inf``, never extrapolated, and none is below the smallest budget the method runs at,
    the first of the profiling rows' curve that is not NaN)."""
    needs = np.sort([crossing(grid, c, target) for c in curves])
    need = crossing(grid, plugin, target)
    median = float(np.quantile(needs, 0.5, method="inverted_cdf"))
    scaled, scale = np.full(len(needs), math.inf), math.inf
    runs = np.flatnonzero(~np.isnan(plugin))
    least = float(grid[runs[0]] if len(runs) else grid[0])  # below it the method cannot run (a run refuses it)
    if math.isfinite(need) and math.isfinite(median):
        scale = (need / median) ** (1.0 + beyond)
        moved = needs * scale  # need * (need / median)^beyond * needs / median
        # no budget beyond those simulated, none below the least the method runs at
        scaled = np.where(moved <= grid[-1] * (1 + 1e-12), np.maximum(moved, least), math.inf)
    planned, low, high = np.quantile(scaled, [confidence, (1 - level) / 2, (1 + level) / 2], method="inverted_cdf")
    return Estimate(float(planned), float(low), float(high), float(np.isfinite(needs).mean()), need,
                    tuple(float(x) for x in needs), float(scale))
