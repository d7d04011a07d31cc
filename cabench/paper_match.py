"""The paper's published numbers beside ours (SPEC §8), for the experiments recorded as the paper's own (SPEC §7):
each value with our 95% interval at the paper's budget, each reduction and gain with a paired bootstrap interval,
and whether they match."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np
import pandas as pd

from cabench.paper import GAINS, PAPER_GRID_ENDS, PUBLISHED, REDUCTIONS, Published
from cabench.results import Experiment, ResultSet
from cabench.stats import Z95, mean_se, wilson

#: The paper's experiment (SPEC §7) each published metric belongs to.
ROLE_OF_METRIC = {"regret_hv": "online", "regret_std": "online", "traj_cum": "online", "traj_ma": "online",
                  "psi_error": "psi-subset", "psi_error_stochastic": "psi-stochastic", "f1": "psi-full"}


def _budget(frame: pd.DataFrame, rho: str) -> float | None:
    grid = sorted(frame["rho"].unique())
    if not grid:
        return None
    if rho == "max":
        return float(grid[-1])
    if rho == "min":
        return float(grid[0])
    return float(rho) if float(rho) in grid else None


def _per_repetition(e: Experiment, p: Published) -> tuple[pd.Series | None, str]:
    """Our values, by repetition, of the metric the published number ``p`` reports, and the budget taken."""
    runs = e.runs[e.runs["method"] == p.method]
    if "cost_mode" in runs:
        runs = runs[runs["cost_mode"] == ("stochastic" if p.metric == "psi_error_stochastic" else "deterministic")]
    if runs.empty:
        return None, "method not run"
    rho = _budget(runs, p.rho or "max")
    if rho is None:
        return None, f"ρ={p.rho} not in this experiment's grid"
    column = {"psi_error": "error", "psi_error_stochastic": "error"}.get(p.metric, p.metric)
    return runs[runs["rho"] == rho].set_index("rep")[column].sort_index(), f"ρ={rho:g}"


def paper_value(e: Experiment, p: Published) -> tuple[float | None, float, float, str]:
    """Our value, in experiment ``e``, of the published number ``p``, its 95% interval (Wilson for an error
    probability, mean ± 1.96 se otherwise) and the budget it was taken at."""
    if p.metric in ("traj_cum", "traj_ma"):
        t = e.trajectories
        t = None if t is None else t[t["method"] == p.method]
        if t is None or t.empty:
            return None, math.nan, math.nan, "no trajectories recorded"
        last = t.loc[t["point"].idxmax()]
        name = "cum_regret" if p.metric == "traj_cum" else "moving_avg"
        mean, se = float(last[f"{name}_mean"]), float(last[f"{name}_se"])
        return mean, mean - Z95 * se, mean + Z95 * se, f"ρ={float(last['rho']):g}"
    values, where = _per_repetition(e, p)
    if values is None:
        return None, math.nan, math.nan, where
    if p.metric.startswith("psi_error"):
        return float(values.mean()), *wilson(int(values.sum()), len(values)), where
    mean, se = mean_se(values.to_numpy(float))
    return mean, mean - Z95 * se, mean + Z95 * se, where


#: The largest share of bootstrap resamples whose statistic may be undefined (a ratio whose baseline's mean is 0 in
#: that resample) for a percentile interval to be given: its ends are the 2.5% tails of all resamples, and where
#: more than that are undefined, where the tail lies is not known. (One discordant repetition in 500 leaves it
#: out of about 37% of resamples; the interval of the rest said 100% to 100%.)
UNDEFINED_SHARE = 0.025


def _paired_bootstrap(a: np.ndarray, b: np.ndarray, statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
                      resamples: int = 2000, seed: int = 0) -> tuple[float, float, str]:
    """Percentile 95% interval of ``statistic(mean a, mean b)``, resampling paired repetitions (seeded), and why
    there is none (NaN ends): one repetition, or the statistic undefined in more than :data:`UNDEFINED_SHARE` of
    the resamples."""
    if len(a) < 2:
        return math.nan, math.nan, "one repetition"
    index = np.random.default_rng(seed).integers(0, len(a), size=(resamples, len(a)))
    with np.errstate(divide="ignore", invalid="ignore"):
        values = statistic(a[index].mean(axis=1), b[index].mean(axis=1))
    defined = np.isfinite(values)
    if defined.mean() < 1.0 - UNDEFINED_SHARE:
        return math.nan, math.nan, (f"the baseline's mean is 0 in {100 * (1 - defined.mean()):.0f}% of the paired "
                                    "bootstrap resamples, where the ratio is undefined")
    lo, hi = np.quantile(values[defined], [0.025, 0.975])
    return float(lo), float(hi), ""


def _relative(e: Experiment, dataset: str, metric: str, rho: str, method: str, baseline: str,
              statistic: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> tuple[float | None, float, float, str, str]:
    """``statistic(mean of method, mean of baseline)`` on their common repetitions, with a paired bootstrap 95%
    interval, the budget taken, and why there is no interval (:func:`_paired_bootstrap`)."""
    a, where = _per_repetition(e, Published(dataset, metric, method, rho, "0"))
    b, _ = _per_repetition(e, Published(dataset, metric, baseline, rho, "0"))
    if a is None or b is None:
        return None, math.nan, math.nan, where, ""
    common = a.index.intersection(b.index)
    x, y = a.loc[common].to_numpy(float), b.loc[common].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ours = float(statistic(np.array([x.mean()]), np.array([y.mean()]))[0])
    low, high, why = _paired_bootstrap(x, y, statistic)
    return (ours if math.isfinite(ours) else None), low, high, where, why


def other_budget(role: str, rho: str | None, where: str) -> str:
    """For a number the paper gives at a budget (``rho``: a number, or ``min``/``max``, the ends of its grid) and ours
    taken at another (``where``, ``ρ=...``: a quick grid's end, trajectories recorded at another budget): the paper's
    budget, else nothing. Numbers at two budgets are not compared."""
    taken = re.fullmatch(r"ρ=([0-9.e+-]+)", where)  # (not "ρ=200 not in this experiment's grid")
    if rho is None or taken is None:
        return ""
    theirs = PAPER_GRID_ENDS[role][0 if rho == "min" else 1] if rho in ("min", "max") else float(rho)
    return "" if float(taken.group(1)) == theirs else f"{theirs:g}"


def match(paper: float, ours: float | None, low: float, high: float, signed: bool) -> str:
    """Whether our number matches the paper's: ``yes`` when the paper's lies in our 95% interval, ``direction``
    when it does not but a ``signed`` quantity (a reduction or gain) has the paper's sign over our whole interval,
    else ``no``; ``n/a`` when we did not measure it."""
    if ours is None or not (math.isfinite(low) and math.isfinite(high)):
        return "n/a"
    if low <= paper <= high:
        return "yes"
    return "direction" if signed and (low > 0 if paper > 0 else high < 0) else "no"


def paper_rows(res: ResultSet) -> list[dict]:
    """The paper's published numbers beside ours, for experiments recorded as the paper's own (SPEC §7):
    rows of ``experiment``, ``kind`` (value, reduction, absolute or relative gain), ``metric``, ``method``,
    ``baseline``, ``rho`` (the paper's), ``paper`` (its text), ``ours`` (None when not measured), our 95% interval
    ``low``–``high``, ``where``, ``match`` (:func:`match`; ``other budget`` where the paper's number is at its
    smallest or largest budget and ours at another, :func:`other_budget`) and ``paper_rho`` (that budget)."""
    rows: list[dict] = []

    def add(e: Experiment, kind: str, metric: str, method: str | None, baseline: str | None, rho: str | None,
            text: str, measured: tuple[float | None, float, float, str, str]) -> None:
        ours, low, high, where, why = measured  # (why: there is no interval)
        theirs = other_budget(ROLE_OF_METRIC[metric], rho, where) if ours is not None else ""
        rows.append({"experiment": e.label, "kind": kind, "metric": metric, "method": method, "baseline": baseline,
                     "rho": rho, "paper": text, "ours": ours, "low": low, "high": high, "where": where,
                     "match": "other budget" if theirs else match(float(text), ours, low, high, kind != "value"),
                     "no_interval": why if ours is not None else "",
                     "paper_rho": theirs})

    for p in PUBLISHED:
        role = ROLE_OF_METRIC.get(p.metric)
        for e in res.paper(role) if role else []:
            if e.dataset_name == p.dataset:
                add(e, "value", p.metric, p.method, None, p.rho, p.text, (*paper_value(e, p), ""))
    for r in REDUCTIONS:
        for e in res.paper(ROLE_OF_METRIC[r.metric]):
            if e.dataset_name == r.dataset:
                add(e, "reduction", r.metric, r.method, r.baseline, r.rho, r.text,
                    _relative(e, r.dataset, r.metric, r.rho, r.method, r.baseline, lambda a, b: 100 * (1 - a / b)))
    for g in GAINS:
        for e in res.paper("psi-full"):
            if e.dataset_name == g.dataset:
                gain = (lambda a, b: a - b) if g.kind == "absolute" else (lambda a, b: 100 * (a / b - 1))
                add(e, f"{g.kind} gain", "f1", g.method, g.baseline, g.rho, g.text,
                    _relative(e, g.dataset, "f1", g.rho, g.method, g.baseline, gain))
    return rows
