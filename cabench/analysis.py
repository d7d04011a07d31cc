"""The statistics of a results folder, apart from how they are shown.

Paired comparisons of a reference method with every other one, the verdicts
each experiment's claims get, per-budget paired differences, the returned sets'
relative hypervolume, the configurations that matter, and the paper's
published numbers beside ours. Every function returns tables (dicts, numbers,
plain-text statements); :mod:`cabench.report` renders them as Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from cabench import registry
from cabench.paper import GAINS, PUBLISHED, REDUCTIONS, Published
from cabench.pareto import hypervolume
from cabench.record import objective_columns
from cabench.results import Experiment, ResultSet
from cabench.stats import bootstrap_mean_ci, holm, log_growth, mcnemar_exact, mean_se

ALPHA = 0.05
ROLE_OF_METRIC = {"regret_hv": "online", "regret_std": "online", "traj_cum": "online", "traj_ma": "online",
                  "psi_error": "psi-subset", "psi_error_stochastic": "psi-stochastic", "f1": "psi-full"}


@dataclass(frozen=True)
class Verdict:
    """A claim tested on one experiment: ``holds``, ``fails``, ``inconclusive`` or ``n/a``, and the statement
    (which states the tested quantity and its numbers)."""

    state: str
    statement: str


def _show(method: str) -> str:
    return registry.display(method)


def reference_and_others(e: Experiment) -> tuple[str, list[str]]:
    """The reference method of ``e``'s comparisons and the methods it is compared with."""
    base = registry.comparison_base(e.setting, e.methods)
    return base, [m for m in e.methods if m != base]


def at(e: Experiment, method: str, rho: float, metric: str, mode: str | None = None) -> pd.Series:
    """``metric`` of ``method`` at ``rho`` (and cost ``mode``), by repetition."""
    r = e.runs[(e.runs["method"] == method) & (e.runs["rho"] == rho)]
    if mode is not None:
        r = r[r["cost_mode"] == mode]
    return r.set_index("rep")[metric].sort_index()


def comparisons(e: Experiment) -> list[dict]:
    """Paired comparisons of the reference method with every other one at the largest budget.

    Regrets and F1: mean paired difference with a percentile bootstrap 95%
    interval over repetitions. Errors: exact McNemar test; its p-values are
    Holm-adjusted over the experiment's McNemar tests.
    """
    base, others = reference_and_others(e)
    rho = max(e.rho_grid)
    rows = []
    plan: list[tuple[str, str | None, str]]
    if e.setting == "online":
        plan = [(m, None, metric) for metric in ("regret_hv", "regret_std") for m in others]
    else:
        plan = [(m, mode, metric) for mode in e.cost_modes for metric in ("error", "f1") for m in others]
    for other, mode, metric in plan:
        a, b = at(e, base, rho, metric, mode), at(e, other, rho, metric, mode)
        common = a.index.intersection(b.index)
        if not len(common):
            continue
        a, b = a.loc[common].to_numpy(float), b.loc[common].to_numpy(float)
        row = {"other": other, "mode": mode, "metric": metric, "rho": rho, "n": len(common),
               "base_mean": a.mean(), "other_mean": b.mean()}
        if metric == "error":
            row.update(test="McNemar", **mcnemar_exact(a, b))
        else:
            lo, hi = bootstrap_mean_ci(a - b)
            row.update(test="bootstrap", diff=float((a - b).mean()), low=lo, high=hi,
                       base_better=float(np.mean(a < b) if metric != "f1" else np.mean(a > b)),
                       other_better=float(np.mean(a > b) if metric != "f1" else np.mean(a < b)))
        rows.append(row)
    tests = [r for r in rows if r["test"] == "McNemar"]
    for r, adj in zip(tests, holm([r["p"] for r in tests])):
        r["p_holm"] = adj
    return rows


def verdicts(e: Experiment, rows: list[dict]) -> list[Verdict]:
    """The claims tested on ``e``; each states the tested quantity and can fail."""
    out: list[Verdict] = []
    base, others = reference_and_others(e)
    rho = max(e.rho_grid)
    if e.setting == "online":
        boot = {r["other"]: r for r in rows if r["metric"] == "regret_hv"}
        if boot:
            means = {base: next(iter(boot.values()))["base_mean"], **{m: r["other_mean"] for m, r in boot.items()}}
            lowest = min(means, key=lambda m: means[m])
            below = [m for m, r in boot.items() if r["high"] < 0]
            state = "fails" if lowest != base else ("holds" if len(below) == len(boot) else "inconclusive")
            out.append(Verdict(state, f"{_show(base)} has the lowest mean R_HV at ρ={rho:g} and its paired 95% "
                               f"interval against every other method lies below 0 (means: "
                               + ", ".join(f"{_show(m)} {v:.2f}" for m, v in sorted(means.items(), key=lambda i: i[1]))
                               + f"; significantly below: {', '.join(map(_show, below)) or 'none'})"))
        grid = sorted(float(r) for r in e.runs.loc[e.runs["method"] == base, "rho"].unique())
        if len(grid) >= 3:
            g = e.runs[e.runs["method"] == base]
            table = g.pivot(index="rep", columns="budget", values="regret_hv").dropna()
            fit = log_growth(np.log2(table.columns.to_numpy(float)), table.to_numpy(float))
            c_lo, c_hi = fit["curvature_low"], fit["curvature_high"]
            state = "fails" if c_lo > 0 else ("holds" if c_hi <= 0 else "inconclusive")
            out.append(Verdict(state, f"{_show(base)}'s R_HV grows at most linearly in log2 B: quadratic fit in "
                               f"log2 B over {len(grid)} budgets, slope {fit['slope']:.3g} [{fit['slope_low']:.3g}, "
                               f"{fit['slope_high']:.3g}] per doubling, curvature {fit['curvature']:.3g} "
                               f"[{c_lo:.3g}, {c_hi:.3g}] (95% bootstrap over repetitions; a curvature interval "
                               "above 0 means faster than logarithmic growth, one containing 0 cannot tell)"))
        else:
            out.append(Verdict("n/a", "growth of R_HV in log2 B: needs at least 3 budgets, this experiment has "
                                      f"{len(grid)}"))
        return out
    mode = "deterministic" if "deterministic" in e.cost_modes else e.cost_modes[0]
    grid = sorted(float(r) for r in e.runs.loc[e.runs["method"] == base, "rho"].unique())  # its feasible budgets
    if len(grid) >= 2:
        lo_e, hi_e = at(e, base, grid[0], "error", mode), at(e, base, grid[-1], "error", mode)
        common = lo_e.index.intersection(hi_e.index)
        t = mcnemar_exact(hi_e.loc[common].to_numpy(), lo_e.loc[common].to_numpy())
        p_lo, p_hi = float(lo_e.mean()), float(hi_e.mean())
        state = "holds" if p_hi < p_lo and t["p"] < ALPHA else ("fails" if p_hi >= p_lo else "inconclusive")
        out.append(Verdict(state, f"{_show(base)}'s error ({mode} costs) falls from ρ={grid[0]:g} to ρ={grid[-1]:g}: "
                           f"{p_lo:.3f} → {p_hi:.3f}, exact McNemar p={t['p']:.3g} over {t['n']} paired repetitions"))
    for r in rows:
        if r["test"] == "McNemar" and r["mode"] == mode:
            a, b = r["base_mean"], r["other_mean"]
            state = "holds" if a < b and r["p_holm"] < ALPHA else ("inconclusive" if a < b else "fails")
            out.append(Verdict(state, f"{_show(base)}'s error is below {_show(r['other'])}'s at ρ={rho:g} "
                               f"({mode} costs): {a:.3f} vs {b:.3f}, Holm-adjusted McNemar p={r['p_holm']:.3g}"))
    for r in rows:
        if r["metric"] == "f1" and r["mode"] == mode:
            state = "holds" if r["low"] > 0 else ("inconclusive" if r["diff"] > 0 else "fails")
            out.append(Verdict(state, f"{_show(base)}'s Pareto F1 is above {_show(r['other'])}'s at ρ={rho:g} ({mode} "
                               f"costs): {r['diff']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}]"))
    if {"deterministic", "stochastic"} <= set(e.cost_modes):
        det, sto = at(e, base, rho, "error", "deterministic"), at(e, base, rho, "error", "stochastic")
        common = det.index.intersection(sto.index)
        t = mcnemar_exact(sto.loc[common].to_numpy(), det.loc[common].to_numpy())
        state = "holds" if t["p"] >= ALPHA else "fails"
        costs = {"tokens": "token", "completion_tokens": "completion-token", "usd": "dollar"}[e.cost_unit]
        out.append(Verdict(state, f"realised {costs} costs leave {_show(base)}'s error unchanged at ρ={rho:g}: "
                           f"{det.mean():.3f} deterministic, {sto.mean():.3f} stochastic, exact McNemar p={t['p']:.3g} "
                           "(holds = no significant difference at 5%; not a proof of equality)"))
    return out


def per_budget(e: Experiment) -> tuple[str, str, list[dict]]:
    """Paired differences of the reference method with each other one at every budget (identification):
    (reference, cost mode, rows of ``rho``, ``other``, F1 means, difference and 95% bootstrap interval, the
    verdict on F1, error means with the exact McNemar p, the reference's share of the budget spent, ``n``)."""
    base, others = reference_and_others(e)
    rows: list[dict] = []
    if e.setting != "psi":
        return base, "", rows
    mode = "deterministic" if "deterministic" in e.cost_modes else e.cost_modes[0]
    for rho in e.rho_grid:
        a_f1 = at(e, base, rho, "f1", mode)
        if not len(a_f1):
            continue
        spend = at(e, base, rho, "spend", mode) / at(e, base, rho, "budget", mode)
        for other in others:
            b_f1 = at(e, other, rho, "f1", mode)
            common = a_f1.index.intersection(b_f1.index)
            if not len(common):
                continue
            a, b = a_f1.loc[common].to_numpy(float), b_f1.loc[common].to_numpy(float)
            lo, hi = bootstrap_mean_ci(a - b)
            err_a = at(e, base, rho, "error", mode).loc[common]
            err_b = at(e, other, rho, "error", mode).loc[common]
            t = mcnemar_exact(err_a.to_numpy(), err_b.to_numpy())
            rows.append({"rho": rho, "other": other, "f1_base": a.mean(), "f1_other": b.mean(),
                         "diff": (a - b).mean(), "low": lo, "high": hi,
                         "verdict": "higher" if lo > 0 else ("lower" if hi < 0 else "not different"),
                         "error_base": err_a.mean(), "error_other": err_b.mean(), "p": t["p"],
                         "spend_share": float(spend.mean()), "n": len(common)})
    return base, mode, rows


def relative_hypervolume(e: Experiment) -> pd.DataFrame:
    """Hypervolume of each returned set relative to the true Pareto set's, ``H(P_hat) / H(P*)`` (the set
    hypervolume of paper §3.1, reference point 0, on the arms' normalised means), by method, cost mode and budget
    (identification): columns ``method``, ``cost_mode``, ``rho``, ``n``, ``mean`` and ``se`` over repetitions; a
    repetition that returns nothing counts 0."""
    keys = ["method", "cost_mode", "rho"]
    columns = [*keys, "n", "mean", "se"]
    if e.setting != "psi":
        return pd.DataFrame(columns=columns)
    mu = e.arms[objective_columns(e.arms)].to_numpy(float)
    arm_of = {name: i for i, name in enumerate(e.arms["config_id"].astype(str))}
    truth = hypervolume(mu[e.arms["pareto"].to_numpy() == 1])
    chosen = e.selections[e.selections["returned"] == 1]
    returned = chosen.groupby([*keys, "rep"], sort=False)["config_id"].agg(
        lambda names: frozenset(arm_of[str(n)] for n in names))
    volume: dict[frozenset, float] = {frozenset(): 0.0}
    rows = []
    for (method, mode, rho), g in e.runs.groupby(keys, sort=False):
        sets = [returned.get((method, mode, rho, rep), frozenset()) for rep in g["rep"]]
        for arms in sets:
            if arms not in volume:
                volume[arms] = hypervolume(mu[sorted(arms)])
        ratio = np.array([volume[arms] for arms in sets]) / truth if truth > 0 else np.full(len(sets), np.nan)
        mean, se = mean_se(ratio)
        rows.append({"method": method, "cost_mode": mode, "rho": float(rho), "n": len(sets), "mean": mean,
                     "se": se})
    return pd.DataFrame(rows, columns=columns)


def exploited_at_largest(e: Experiment) -> dict[str, tuple[str, float]]:
    """Online: each method's most exploited configuration at its largest budget — the configuration most often
    the most-pulled one of a repetition (ties to the first name) — and the share of repetitions it was."""
    out = {}
    for method, g in e.runs.groupby("method", sort=False):
        last = g[g["rho"] == g["rho"].max()]
        counts = last["exploited"].astype(str).value_counts()
        name, count = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0]
        out[str(method)] = (str(name), count / len(last))
    return out


def key_configurations(e: Experiment) -> pd.DataFrame:
    """The configurations that matter in ``e``: the rows of ``arms.csv`` of the true Pareto set, the max-``nu``
    configuration and (online) each method's most exploited one at its largest budget, in ``arms.csv`` order,
    with a column ``why`` listing each one's roles."""
    why: dict[str, list[str]] = {}
    arms = e.arms.assign(config_id=e.arms["config_id"].astype(str))
    for name in arms.loc[arms["pareto"] == 1, "config_id"]:
        why.setdefault(name, []).append("Pareto")
    why.setdefault(arms.loc[arms["optimal"] == 1, "config_id"].iloc[0], []).append("max-ν")
    if e.setting == "online":
        for method, (name, share) in exploited_at_largest(e).items():
            why.setdefault(name, []).append(f"exploited by {_show(method)} ({100 * share:.0f}% of repetitions)")
    rows = arms[arms["config_id"].isin(why)]
    return rows.assign(why=["; ".join(why[name]) for name in rows["config_id"]])


def mean_spend(e: Experiment) -> dict[tuple, float]:
    """Mean spend over repetitions, in the cost unit, by (method, rho) online and (method, cost mode, rho) in
    identification (the keys of the summary's rows)."""
    keys = ["method", "rho"] if e.setting == "online" else ["method", "cost_mode", "rho"]
    return {k: float(v) for k, v in e.runs.groupby(keys, sort=False)["spend"].mean().items()}


def _budget(frame: pd.DataFrame, rho: str) -> float | None:
    grid = sorted(frame["rho"].unique())
    if not grid:
        return None
    if rho == "max":
        return float(grid[-1])
    if rho == "min":
        return float(grid[0])
    return float(rho) if float(rho) in grid else None


def paper_value(e: Experiment, p: Published) -> tuple[float | None, str]:
    """Our value, in experiment ``e``, of the published number ``p`` and the budget it was taken at."""
    if p.metric in ("traj_cum", "traj_ma"):
        t = e.trajectories
        t = None if t is None else t[t["method"] == p.method]
        if t is None or t.empty:
            return None, "no trajectories recorded"
        last = t.loc[t["point"].idxmax()]
        return float(last["cum_regret_mean" if p.metric == "traj_cum" else "moving_avg_mean"]), \
            f"ρ={float(last['rho']):g}"
    runs = e.runs[e.runs["method"] == p.method]
    if "cost_mode" in runs:
        runs = runs[runs["cost_mode"] == ("stochastic" if p.metric == "psi_error_stochastic" else "deterministic")]
    if runs.empty:
        return None, "method not run"
    rho = _budget(runs, p.rho or "max")
    if rho is None:
        return None, f"ρ={p.rho} not in this experiment's grid"
    column = {"psi_error": "error", "psi_error_stochastic": "error"}.get(p.metric, p.metric)
    return float(runs.loc[runs["rho"] == rho, column].mean()), f"ρ={rho:g}"


def paper_rows(res: ResultSet) -> list[dict]:
    """The paper's published numbers beside ours, for experiments recorded as the paper's own (SPEC §7):
    rows of ``experiment``, ``kind`` (value, reduction, absolute or relative gain), ``metric``, ``method``,
    ``baseline``, ``rho`` (the paper's), ``paper`` (its text), ``ours`` (None when not measured) and ``where``."""
    rows: list[dict] = []
    for p in PUBLISHED:
        role = ROLE_OF_METRIC.get(p.metric)
        if role is None:
            continue
        for e in res.paper(role):
            if e.dataset_name == p.dataset:
                ours, where = paper_value(e, p)
                rows.append({"experiment": e.label, "kind": "value", "metric": p.metric, "method": p.method,
                             "baseline": None, "rho": p.rho, "paper": p.text, "ours": ours, "where": where})
    for r in REDUCTIONS:
        for e in res.paper(ROLE_OF_METRIC[r.metric]):
            if e.dataset_name == r.dataset:
                a, where = paper_value(e, Published(r.dataset, r.metric, r.method, r.rho, "0"))
                b, _ = paper_value(e, Published(r.dataset, r.metric, r.baseline, r.rho, "0"))
                rows.append({"experiment": e.label, "kind": "reduction", "metric": r.metric, "method": r.method,
                             "baseline": r.baseline, "rho": r.rho, "paper": r.text,
                             "ours": 100 * (1 - a / b) if a is not None and b else None, "where": where})
    for g in GAINS:
        for e in res.paper("psi-full"):
            if e.dataset_name == g.dataset:
                a, where = paper_value(e, Published(g.dataset, "f1", g.method, g.rho, "0"))
                b, _ = paper_value(e, Published(g.dataset, "f1", g.baseline, g.rho, "0"))
                ours = None if a is None or b is None else (a - b if g.kind == "absolute" else 100 * (a / b - 1))
                rows.append({"experiment": e.label, "kind": f"{g.kind} gain", "metric": "f1", "method": g.method,
                             "baseline": g.baseline, "rho": g.rho, "paper": g.text, "ours": ours, "where": where})
    return rows
