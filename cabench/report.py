"""``cabench report``: REPORT.md from result folders only.

One section per experiment (never pooled): what was run, the summary with the
share of the budget spent, paired comparisons at the largest budget with tests
suited to each metric, and verdicts that state the tested quantity. The
paper's numbers (SPEC §8) appear only beside experiments recorded as the
paper's own, and Table 1's paper rows only for the paper's datasets.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from cabench import registry
from cabench.errors import CabenchError
from cabench.paper import GAINS, PUBLISHED, REDUCTIONS, Published
from cabench.results import Experiment, ResultSet, finite, read_csv
from cabench.stats import Z95, bootstrap_mean_ci, holm, log_growth, mcnemar_exact

ALPHA = 0.05
ROLE_OF_METRIC = {"regret_hv": "online", "regret_std": "online", "traj_cum": "online", "traj_ma": "online",
                  "psi_error": "psi-subset", "psi_error_stochastic": "psi-stochastic", "f1": "psi-full"}


def _show(method: str) -> str:
    return registry.display(method)


def _num(value, digits: int = 3) -> str:
    return f"{float(value):.{digits}f}" if finite(value) else "n/a"


def _whole(value) -> str:
    return f"{float(value):.0f}" if finite(value) else "n/a"


def _mark(state: str) -> str:
    return {"holds": "**holds**", "fails": "**does not hold**", "inconclusive": "**inconclusive**",
            "n/a": "n/a"}[state]


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table and a blank line."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows), ""]


# --- paired comparisons -------------------------------------------------------------------------------

def _pairs(e: Experiment) -> tuple[str, list[str]]:
    base = ("cohv-ucb" if e.setting == "online" else "copsi-r" if "copsi-r" in e.methods else "copsi")
    methods = e.methods
    base = base if base in methods else methods[0]
    return base, [m for m in methods if m != base]


def _at(e: Experiment, method: str, rho: float, metric: str, mode: str | None = None) -> pd.Series:
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
    base, others = _pairs(e)
    rho = max(e.rho_grid)
    rows = []
    if e.setting == "online":
        plan = [(m, None, metric) for metric in ("regret_hv", "regret_std") for m in others]
    else:
        plan = [(m, mode, metric) for mode in e.cost_modes for metric in ("error", "f1") for m in others]
    for other, mode, metric in plan:
        a, b = _at(e, base, rho, metric, mode), _at(e, other, rho, metric, mode)
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


def _comparison_lines(e: Experiment, rows: list[dict]) -> list[str]:
    base, _ = _pairs(e)
    if not rows:
        return ["No other method to compare with.", ""]
    n_mc = sum(r["test"] == "McNemar" for r in rows)
    lines = [f"{len(rows)} paired comparisons of {_show(base)} with each other method at the largest budget "
             f"(ρ={max(e.rho_grid):g}), repetition by repetition (every method replays the same streams). "
             "Regret and F1: mean difference with a percentile bootstrap 95% interval (2,000 resamples of "
             "repetitions; intervals are not adjusted for multiplicity)."
             + (f" Errors: exact McNemar test on the discordant repetitions; p-values Holm-adjusted over the "
                f"{n_mc} McNemar tests of this experiment." if n_mc else ""), ""]
    boot = [r for r in rows if r["test"] == "bootstrap"]
    if boot:
        lines += _md_table(
            ["metric", "cost mode", f"{_show(base)} vs", f"{_show(base)} mean", "other mean", "mean diff [95% CI]",
             "base better", "other better", "n"],
            [[r["metric"], r["mode"] or "—", _show(r["other"]), f"{r['base_mean']:.4g}", f"{r['other_mean']:.4g}",
              f"{r['diff']:+.4g} [{r['low']:+.4g}, {r['high']:+.4g}]", f"{100 * r['base_better']:.0f}%",
              f"{100 * r['other_better']:.0f}%", str(r["n"])] for r in boot])
    mc = [r for r in rows if r["test"] == "McNemar"]
    if mc:
        lines += _md_table(
            ["cost mode", f"{_show(base)} vs", f"P(error) {_show(base)}", "P(error) other", f"only {_show(base)} errs",
             "only other errs", "exact p", "Holm p", "n"],
            [[r["mode"], _show(r["other"]), f"{r['base_mean']:.3f}", f"{r['other_mean']:.3f}", str(r["only_a"]),
              str(r["only_b"]), f"{r['p']:.3g}", f"{r['p_holm']:.3g}", str(r["n"])] for r in mc])
    return lines


# --- verdicts -----------------------------------------------------------------------------------------

def verdicts(e: Experiment, rows: list[dict]) -> list[tuple[str, str]]:
    """(state, statement) pairs; each states the tested quantity and can fail."""
    out: list[tuple[str, str]] = []
    base, others = _pairs(e)
    rho = max(e.rho_grid)
    if e.setting == "online":
        boot = {r["other"]: r for r in rows if r["metric"] == "regret_hv"}
        if boot:
            means = {base: next(iter(boot.values()))["base_mean"], **{m: r["other_mean"] for m, r in boot.items()}}
            lowest = min(means, key=lambda m: means[m])
            below = [m for m, r in boot.items() if r["high"] < 0]
            state = "fails" if lowest != base else ("holds" if len(below) == len(boot) else "inconclusive")
            out.append((state, f"{_show(base)} has the lowest mean R_HV at ρ={rho:g} and its paired 95% interval "
                               f"against every other method lies below 0 (means: "
                               + ", ".join(f"{_show(m)} {v:.2f}" for m, v in sorted(means.items(), key=lambda i: i[1]))
                               + f"; significantly below: {', '.join(map(_show, below)) or 'none'})"))
        grid = sorted(float(r) for r in e.runs.loc[e.runs["method"] == base, "rho"].unique())
        if len(grid) >= 3:
            g = e.runs[e.runs["method"] == base]
            table = g.pivot(index="rep", columns="budget_tokens", values="regret_hv").dropna()
            fit = log_growth(np.log2(table.columns.to_numpy(float)), table.to_numpy(float))
            c_lo, c_hi = fit["curvature_low"], fit["curvature_high"]
            state = "fails" if c_lo > 0 else ("holds" if c_hi <= 0 else "inconclusive")
            out.append((state, f"{_show(base)}'s R_HV grows at most linearly in log2 B: quadratic fit in log2 B over "
                               f"{len(grid)} budgets, slope {fit['slope']:.3g} [{fit['slope_low']:.3g}, "
                               f"{fit['slope_high']:.3g}] per doubling, curvature {fit['curvature']:.3g} "
                               f"[{c_lo:.3g}, {c_hi:.3g}] (95% bootstrap over repetitions; a curvature interval "
                               "above 0 means faster than logarithmic growth, one containing 0 cannot tell)"))
        else:
            out.append(("n/a", f"growth of R_HV in log2 B: needs at least 3 budgets, this experiment has {len(grid)}"))
        return out
    mode = "deterministic" if "deterministic" in e.cost_modes else e.cost_modes[0]
    grid = sorted(float(r) for r in e.runs.loc[e.runs["method"] == base, "rho"].unique())  # its feasible budgets
    if len(grid) >= 2:
        lo_e, hi_e = _at(e, base, grid[0], "error", mode), _at(e, base, grid[-1], "error", mode)
        common = lo_e.index.intersection(hi_e.index)
        t = mcnemar_exact(hi_e.loc[common].to_numpy(), lo_e.loc[common].to_numpy())
        p_lo, p_hi = float(lo_e.mean()), float(hi_e.mean())
        state = "holds" if p_hi < p_lo and t["p"] < ALPHA else ("fails" if p_hi >= p_lo else "inconclusive")
        out.append((state, f"{_show(base)}'s error ({mode} costs) falls from ρ={grid[0]:g} to ρ={grid[-1]:g}: "
                           f"{p_lo:.3f} → {p_hi:.3f}, exact McNemar p={t['p']:.3g} over {t['n']} paired repetitions"))
    for r in rows:
        if r["test"] == "McNemar" and r["mode"] == mode:
            a, b = r["base_mean"], r["other_mean"]
            state = "holds" if a < b and r["p_holm"] < ALPHA else ("inconclusive" if a < b else "fails")
            out.append((state, f"{_show(base)}'s error is below {_show(r['other'])}'s at ρ={rho:g} ({mode} costs): "
                               f"{a:.3f} vs {b:.3f}, Holm-adjusted McNemar p={r['p_holm']:.3g}"))
    for r in rows:
        if r["metric"] == "f1" and r["mode"] == mode:
            state = "holds" if r["low"] > 0 else ("inconclusive" if r["diff"] > 0 else "fails")
            out.append((state, f"{_show(base)}'s Pareto F1 is above {_show(r['other'])}'s at ρ={rho:g} ({mode} "
                               f"costs): {r['diff']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}]"))
    if {"deterministic", "stochastic"} <= set(e.cost_modes):
        det, sto = _at(e, base, rho, "error", "deterministic"), _at(e, base, rho, "error", "stochastic")
        common = det.index.intersection(sto.index)
        t = mcnemar_exact(sto.loc[common].to_numpy(), det.loc[common].to_numpy())
        state = "holds" if t["p"] >= ALPHA else "fails"
        out.append((state, f"realised token costs leave {_show(base)}'s error unchanged at ρ={rho:g}: "
                           f"{det.mean():.3f} deterministic, {sto.mean():.3f} stochastic, exact McNemar p={t['p']:.3g} "
                           "(holds = no significant difference at 5%; not a proof of equality)"))
    return out


# --- one experiment -----------------------------------------------------------------------------------

def _summary_lines(e: Experiment) -> list[str]:
    s = e.summary()
    n = e.repetitions
    if e.setting == "online":
        note = (f"Mean ± 95% CI (normal) over {n} repetitions. Regret in normalised cost units (B~ = B / c_max); "
                "'spent' is the mean share of B used.")
        header = ["method", "ρ", "B (tokens)", "R_HV", "R_std", "pulls", "share of pulls on i*", "spent"]
        rows = [[_show(r.method), f"{r.rho:g}", f"{r.budget_tokens:.0f}",
                 f"{r.regret_hv:.2f} ± {Z95 * r.regret_hv_se:.2f}", f"{r.regret_std:.2f} ± {Z95 * r.regret_std_se:.2f}",
                 f"{r.pulls:.1f}", f"{r.frac_optimal:.3f}", f"{100 * r.spend_share:.1f}%"] for _, r in s.iterrows()]
    else:
        note = (f"Error probability with a 95% Wilson interval and mean F1 ± 95% CI over {n} repetitions; "
                "'spent' is the mean share of B used.")
        header = ["method", "cost mode", "ρ", "B (tokens)", "P(error) [95% CI]", "F1", "mean |P_hat|", "spent"]
        rows = [[_show(r.method), r.cost_mode, f"{r.rho:g}", f"{r.budget_tokens:.0f}",
                 f"{r.error:.3f} [{r.error_low:.3f}, {r.error_high:.3f}]", f"{r.f1:.3f} ± {Z95 * r.f1_se:.3f}",
                 f"{r['size']:.2f}", f"{100 * r.spend_share:.1f}%"] for _, r in s.iterrows()]
    return [note, "", *_md_table(header, rows)]


def experiment_section(e: Experiment) -> list[str]:
    """Everything the report says of one experiment; it depends on that experiment's files only."""
    meta = e.meta
    source = "a synthetic instance" if e.info.get("synthetic") else (
        "**surrogate logs**, calibrated to the paper's published statistics, not real model outputs"
        if e.surrogate else "logs not marked as surrogate in their dataset.yaml")
    methods = ", ".join(_show(m) for m in e.methods)
    front = e.arms[e.arms["pareto"] == 1]["config_id"].astype(str).tolist()
    best = e.arms[e.arms["optimal"] == 1]["config_id"].astype(str).tolist()
    lines = [f"## Experiment `{e.label}`", "",
             f"- setting: {'online selection' if e.setting == 'online' else 'Pareto set identification'}; "
             f"data: {e.title}, {source}; K = {e.k} arms; config hash `{e.config_hash}`",
             f"- budgets ρ ∈ {{{', '.join(f'{r:g}' for r in e.rho_grid)}}}; {e.repetitions} paired repetitions; "
             f"seed {meta.get('seed')}; methods: {methods}"
             + (f"; cost modes: {', '.join(e.cost_modes)}" if e.setting == "psi" else ""),
             f"- true Pareto set of these arms ({len(front)}): {', '.join(front)}; max-ν arm: {', '.join(best)}"]
    if e.setting == "online":
        params = "; ".join(f"{_show(m['name'])}: s_r={m.get('s_r')}, s_c={m.get('s_c')}, eta={m.get('eta')}, "
                           f"mode={m.get('mode')}" for m in meta.get("methods") or [] if m["name"] != "uniform")
        lines.append(f"- parameters: {params}")
    if e.paper_role:
        lines.append(f"- this is the paper's experiment for {meta.get('paper_figures')} on {e.title}")
    for item in meta.get("infeasible") or []:
        lines.append(f"- not run: {_show(item['method'])} at ρ={float(item['rho']):g} ({item['reason']})")
    if e.duplicates:
        lines.append(f"- also found, identical, in: {', '.join(str(p) for p in e.duplicates)} (read once)")
    lines += ["", "### Summary", ""] + _summary_lines(e)
    rows = comparisons(e)
    lines += ["### Paired comparisons", ""] + _comparison_lines(e, rows)
    lines += ["### Verdicts", ""]
    lines += [f"- {text}: {_mark(state)}" for state, text in verdicts(e, rows)]
    return lines + [""]


# --- Table 1 and the paper's numbers ------------------------------------------------------------------

def _range(d: dict, key: str, digits: int) -> str:
    lo, hi = d.get(f"{key}_min"), d.get(f"{key}_max")
    return f"{float(lo):.{digits}f}–{float(hi):.{digits}f}" if finite(lo) and finite(hi) else "n/a"


def _table1(res: ResultSet) -> list[str]:
    rows = [(name, d) for name, d in res.datasets().items() if not d.get("synthetic")]
    if not rows:
        return []
    paper_sets = {e.dataset_name for e in res.experiments if e.paper_role}
    with_subset = any(finite(d.get("subset_min_gap")) for name, d in rows if d.get("dataset") in paper_sets)
    head = "| data | source | K | accuracy | latency (s) | tokens | |P*| | profiling cost c_i |"
    rule = "|---|---|---|---|---|---|---|---|"
    if with_subset:
        head += " 14-arm |P*| | 14-arm min gap |"
        rule += "---|---|"
    lines = ["## Table 1: the data", "", "Configuration-level means over all instances (|P*| and gaps on the "
             "evaluation split).", "", head, rule]
    published = {(p.dataset, p.metric): p.text for p in PUBLISHED if p.method is None}
    for name, d in rows:
        source = "surrogate" if str(d.get("surrogate")) == "True" else "logs"
        line = (f"| {d.get('title', name)} | {source} | {_whole(d.get('K'))} | {_range(d, 'accuracy', 3)} | "
                f"{_range(d, 'latency', 3)} | {_range(d, 'tokens', 1)} | {_whole(d.get('pareto_size'))} | "
                f"{_range(d, 'cost', 2)} |")
        paper = d.get("dataset") in paper_sets
        if with_subset:
            line += (f" {_whole(d.get('subset_pareto_size'))} | {float(d['subset_min_gap']):.4f} |"
                     if paper and finite(d.get("subset_min_gap")) else " n/a | n/a |")
        lines.append(line)
        ds = d.get("dataset")
        if paper and (ds, "K") in published:
            g = {metric: text for (dd, metric), text in published.items() if dd == ds}
            line = (f"| {d.get('title', name)} | paper | {g['K']} | {g['accuracy_min']}–{g['accuracy_max']} | "
                    f"{g['latency_min']}–{g['latency_max']} | {g['tokens_min']}–{g['tokens_max']} | "
                    f"{g['pareto_size']} | {g['cost_min']}–{g['cost_max']} |")
            if with_subset:
                line += f" {g['subset_pareto_size']} | {g['subset_min_gap']} |"
            lines.append(line)
    return lines + [""]


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
    rho = _budget(runs, p.rho)
    if rho is None:
        return None, f"ρ={p.rho} not in this experiment's grid"
    column = {"psi_error": "error", "psi_error_stochastic": "error"}.get(p.metric, p.metric)
    return float(runs.loc[runs["rho"] == rho, column].mean()), f"ρ={rho:g}"


def _fmt_like(value: float | None, like: str, why: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return f"not measured ({why})"
    if "." not in like:
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"
    return f"{value:.{max(len(like.split('.')[1]), 1)}f}"


def _paper_section(res: ResultSet) -> list[str]:
    names = {"regret_hv": "R_HV", "regret_std": "R_std", "traj_cum": "trajectory end, cumulative R_HV",
             "traj_ma": "trajectory end, moving average of the gap", "psi_error": "P(error), 14 arms",
             "psi_error_stochastic": "P(error), 14 arms, realised costs", "f1": "Pareto F1, full set"}
    rows = []
    for p in PUBLISHED:
        role = ROLE_OF_METRIC.get(p.metric)
        if role is None:
            continue
        for e in res.paper(role):
            if e.dataset_name != p.dataset:
                continue
            ours, where = paper_value(e, p)
            budget = "largest" if p.rho == "max" else "smallest" if p.rho == "min" else f"ρ={p.rho}"
            rows.append(f"| {e.label} | {names[p.metric]} | {_show(p.method)} | {budget} | {p.text} | "
                        f"{_fmt_like(ours, p.text, where)} | {where if ours is not None else ''} |")
    for r in REDUCTIONS:
        for e in res.paper(ROLE_OF_METRIC[r.metric]):
            if e.dataset_name != r.dataset:
                continue
            a, where = paper_value(e, Published(r.dataset, r.metric, r.method, r.rho, "0"))
            b, _ = paper_value(e, Published(r.dataset, r.metric, r.baseline, r.rho, "0"))
            ours = f"{100 * (1 - a / b):.1f}%" if a is not None and b else f"not measured ({where})"
            rows.append(f"| {e.label} | reduction of {names[r.metric]} | {_show(r.method)} vs {_show(r.baseline)} | "
                        f"{'largest' if r.rho == 'max' else 'ρ=' + r.rho} | {r.text}% | {ours} | "
                        f"{where if a is not None and b else ''} |")
    for g in GAINS:
        for e in res.paper("psi-full"):
            if e.dataset_name != g.dataset:
                continue
            a, where = paper_value(e, Published(g.dataset, "f1", "copsi", g.rho, "0"))
            b, _ = paper_value(e, Published(g.dataset, "f1", g.baseline, g.rho, "0"))
            if a is None or b is None:
                ours = f"not measured ({where})"
            else:
                ours = f"{a - b:+.3f}" if g.kind == "absolute" else f"{100 * (a / b - 1):.1f}%"
            rows.append(f"| {e.label} | {g.kind} F1 gain | CoPSI vs {_show(g.baseline)} | ρ={g.rho} | "
                        f"{g.text}{'%' if g.kind == 'relative' else ''} | {ours} | "
                        f"{where if a is not None and b is not None else ''} |")
    if not rows:
        return []
    return ["## The paper's numbers beside ours", "",
            "Only for experiments recorded as the paper's own (SPEC §7). Ours are means over the repetitions of "
            "that experiment at the same metric, method and budget; 'largest'/'smallest' are the ends of its ρ "
            "grid. The paper's numbers come from its private logs.", "",
            "| experiment | quantity | method | budget (paper) | paper | ours | ours at |",
            "|---|---|---|---|---|---|---|", *rows, ""]


def _figures(root: Path) -> list[str]:
    index = root / "figures.csv"
    if not index.is_file():
        return []
    table = read_csv(index)
    for col in ("stem", "caption"):
        if col not in table.columns:
            raise CabenchError(f"{index}: column '{col}' is missing (a damaged file); run `cabench plot` again")
    lines = ["## Figures", ""]
    for _, r in table.iterrows():
        if (root / f"{r['stem']}.png").is_file():
            lines += [f"**{r['caption']}.**", "", f"![{r['caption']}]({r['stem']}.png)", ""]
    return lines if len(lines) > 2 else []


def is_beyond(e: Experiment) -> bool:
    """An experiment with a method the paper does not have (cabench's own or a user's)."""
    return any(registry.origin(m) != "paper" for m in e.methods)


def _per_budget(e: Experiment) -> list[str]:
    """Paired differences of the reference method with each other one at every budget (F1, error, spend)."""
    if e.setting != "psi":
        return []
    base, others = _pairs(e)
    mode = "deterministic" if "deterministic" in e.cost_modes else e.cost_modes[0]
    rows = []
    for rho in e.rho_grid:
        a_f1 = _at(e, base, rho, "f1", mode)
        if not len(a_f1):
            continue
        spend = _at(e, base, rho, "spend_tokens", mode) / _at(e, base, rho, "budget_tokens", mode)
        for other in others:
            b_f1 = _at(e, other, rho, "f1", mode)
            common = a_f1.index.intersection(b_f1.index)
            if not len(common):
                continue
            a, b = a_f1.loc[common].to_numpy(float), b_f1.loc[common].to_numpy(float)
            lo, hi = bootstrap_mean_ci(a - b)
            t = mcnemar_exact(_at(e, base, rho, "error", mode).loc[common].to_numpy(),
                              _at(e, other, rho, "error", mode).loc[common].to_numpy())
            verdict = "higher" if lo > 0 else ("lower" if hi < 0 else "not different")
            rows.append([f"{rho:g}", _show(other), f"{a.mean():.3f}", f"{b.mean():.3f}",
                         f"{(a - b).mean():+.3f} [{lo:+.3f}, {hi:+.3f}]", verdict,
                         f"{_at(e, base, rho, 'error', mode).loc[common].mean():.3f} vs "
                         f"{_at(e, other, rho, 'error', mode).loc[common].mean():.3f} (p={t['p']:.3g})",
                         f"{100 * float(spend.mean()):.1f}%", str(len(common))])
    if not rows:
        return []
    return [f"#### {_show(base)} against each method at every budget ({mode} costs)", "",
            "F1: mean paired difference with a percentile bootstrap 95% interval over repetitions; error: exact "
            "McNemar p (not adjusted); spend: the share of the budget the reference method spent.", "",
            *_md_table(["ρ", "vs", f"F1 {_show(base)}", "F1 other", "F1 diff [95% CI]", f"{_show(base)}'s F1 is",
                        "error (base vs other)", f"{_show(base)} spend", "n"], rows)]


def build_report(root: Path) -> str:
    res = ResultSet(root)
    if res.empty:
        raise CabenchError(f"{root}: no runs.csv below this folder; run `cabench run CONFIG` first")
    versions = sorted({str(e.meta.get("cabench_version")) for e in res.experiments})
    commits = sorted({str(e.meta.get("git_commit"))[:12] for e in res.experiments})
    lines = ["# cabench report", ""]
    surrogate = sorted({e.title for e in res.experiments if e.surrogate})
    if surrogate:
        lines += [f"> **Surrogate data.** The logs of {', '.join(surrogate)} behind these results are *surrogate* "
                  "logs, generated by `scripts/make_surrogate_logs.py` and calibrated to the statistics the paper "
                  "publishes (its raw evaluation logs are not public). Their numbers are not the paper's "
                  "measurements: what should reproduce is the qualitative behaviour (method ordering, the growth "
                  "of regret with log B, the decay of the identification error), not the values.", ""]
    lines += [f"{len(res.experiments)} experiments found below this folder; cabench {', '.join(versions)}, "
              f"commit {', '.join(commits)}. Each experiment is reported on its own; none is pooled with another.",
              "", "| experiment | setting | data | K | ρ grid | repetitions | config hash |",
              "|---|---|---|---|---|---|---|"]
    for e in res.experiments:
        lines.append(f"| `{e.label}` | {e.setting} | {e.title}{' (surrogate)' if e.surrogate else ''} | {e.k} | "
                     f"{', '.join(f'{r:g}' for r in e.rho_grid)} | {e.repetitions} | `{e.config_hash}` |")
    lines.append("")
    lines += _table1(res)
    beyond = [e for e in res.experiments if is_beyond(e)]
    for e in res.experiments:
        if e not in beyond:
            lines += experiment_section(e)
    if beyond:
        extra = list(dict.fromkeys(m for e in beyond for m in e.methods if registry.origin(m) != "paper"))
        lines += ["## Beyond the paper", "",
                  f"Experiments with methods the paper does not have: {', '.join(_show(m) for m in extra)} "
                  "(docs/methods.md states each rule and what of Theorem 2 carries over; methods of your own are "
                  "`module:object`). These results are kept apart from the paper's experiments above and from its "
                  "figures.", ""]
        for e in beyond:
            lines += experiment_section(e)
            lines += _per_budget(e)
    lines += _paper_section(res)
    lines += _figures(root)
    return "\n".join(lines).rstrip() + "\n"


def write_report(root: Path) -> Path:
    from cabench.storage import write_atomic

    text = build_report(root)
    path = root / "REPORT.md"
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise CabenchError(f"{path}: cannot write the report ({exc.strerror}); pass a writable results folder") \
            from None
    return path
