"""The statistics of a results folder, apart from how they are shown.

Paired comparisons of a reference method with every other one, the verdicts
each experiment's claims get (each naming its tested quantity with a 95%
interval, and for a claim that does not hold a measured reason), per-budget
paired differences, the returned sets' relative hypervolume, the
configurations that matter and how often each method finds a decision (the
paper's published numbers beside ours are :mod:`cabench.paper_match`'s). Every function
returns tables (dicts, numbers, plain-text statements); :mod:`cabench.report`
renders them as Markdown and :mod:`cabench.html_report` as one HTML page.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cabench import registry
from cabench.pareto import hypervolume
from cabench.record import boundary_arms, objective_columns
from cabench.results import Experiment
from cabench.stats import MIN_PAIRED, bootstrap_mean_ci, holm, log_growth, mcnemar_exact, mean_se
from cabench.units import LABELS, amount, percent

ALPHA = 0.05
#: A mean paired difference this small against the values compared is a tie: the means are equal, the difference
#: rounding error of the sums (F1 of two methods with equal means gave -5.6e-18, "does not hold", or +5.6e-18,
#: "inconclusive", by the order of the additions).
TIE_TOLERANCE = 1e-12
#: How a verdict's state reads in the scorecard.
STATE_TEXT = {"holds": "holds", "fails": "does not hold", "inconclusive": "inconclusive", "n/a": "not tested"}
#: A regret that falls from the smallest budget to its lowest by this share of the lowest at least (and
#: significantly) is measured for growth from there on (:func:`_online_verdicts`).
FALL = 0.1
#: Below this ratio of the largest to the smallest profiling cost, weighting by cost can change little.
NARROW_COSTS = 2.0


@dataclass(frozen=True)
class Verdict:
    """A claim tested on one experiment.

    ``state`` is ``holds``, ``fails``, ``inconclusive`` or ``n/a``; ``kind`` names the test (``lowest-regret``,
    ``log-growth``, ``error-falls``, ``error-below``, ``f1-above``, ``realised-costs``); ``quantity`` names the
    tested quantity with its ``estimate`` and 95% interval [``low``, ``high``] (a paired difference, or the
    curvature of the regret curve); ``versus`` is the other method of a paired test; ``reason`` is, for a claim
    that does not hold, one sentence giving a measured reason with numbers from the results files.
    """

    state: str
    kind: str
    claim: str
    quantity: str
    estimate: float = math.nan
    low: float = math.nan
    high: float = math.nan
    versus: str | None = None
    reason: str = ""

    @property
    def statement(self) -> str:
        """The claim and its tested quantity, in one sentence."""
        return f"{self.claim}: {self.quantity}"


@dataclass(frozen=True)
class Findings:
    """What the reports say of one experiment's statistics, computed once for REPORT.md and REPORT.html: its
    summary (:meth:`~cabench.results.Experiment.summary`), paired comparisons and verdicts."""

    summary: pd.DataFrame
    comparisons: list[dict]
    verdicts: list[Verdict]


def _show(method: str) -> str:
    return registry.display(method)


def reference_and_others(e: Experiment) -> tuple[str, list[str]]:
    """The reference method of ``e``'s comparisons and the methods it is compared with."""
    base = registry.comparison_base(e.setting, e.methods)
    return base, [m for m in e.methods if m != base]


def at(e: Experiment, method: str, rho: float, metric: str, mode: str | None = None) -> pd.Series:
    """``metric`` of ``method`` at ``rho`` (and cost ``mode``), by repetition."""
    r = e.by_cell.get((method, float(rho))) if mode is None else e.by_cell_mode.get((method, float(rho), mode))
    return (e.runs.iloc[:0].set_index("rep") if r is None else r)[metric]


def comparisons(e: Experiment) -> list[dict]:
    """Paired comparisons of the reference method with every other one at the largest budget.

    Every metric: mean paired difference (reference minus other) with a percentile bootstrap 95% interval over
    repetitions, and the shares of repetitions where each method is better. Errors also get the exact McNemar
    test; its p-values are Holm-adjusted over the experiment's McNemar tests.
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
        lo, hi = bootstrap_mean_ci(a - b)
        better, worse = (a > b, a < b) if metric == "f1" else (a < b, a > b)
        diff = math.fsum(a - b) / len(a)
        if abs(diff) <= TIE_TOLERANCE * max(1.0, float(np.abs(a).max()), float(np.abs(b).max())):
            diff = 0.0  # equal means, whatever the order of the additions (a verdict turned on the sign of 1e-18)
        row = {"other": other, "mode": mode, "metric": metric, "rho": rho, "n": len(common),
               "base_mean": a.mean(), "other_mean": b.mean(), "diff": diff, "low": lo, "high": hi,
               "base_better": float(np.mean(better)), "other_better": float(np.mean(worse))}
        if metric == "error":
            row.update(test="McNemar", **mcnemar_exact(a, b))
        else:
            row.update(test="bootstrap")
        rows.append(row)
    tests = [r for r in rows if r["test"] == "McNemar"]
    for r, adj in zip(tests, holm([r["p"] for r in tests])):
        r["p_holm"] = adj
    return rows


def _interval(estimate: float, low: float, high: float, digits: str = "+.3f") -> str:
    return f"{estimate:{digits}} {interval_text(low, high, digits, '95% CI ')}"


def interval_text(low: float, high: float, digits: str, label: str = "") -> str:
    """``[low, high]`` (after ``label``), or why there is none: a paired interval needs :data:`MIN_PAIRED`
    repetitions (:func:`~cabench.stats.bootstrap_mean_ci`)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"[{label}n/a: fewer than {MIN_PAIRED} repetitions]"
    return f"[{label}{low:{digits}}, {high:{digits}}]"


def _times(n: int) -> str:
    return f"{n} repetition{'' if n == 1 else 's'}"


def _share(x: float, n: int, noun: str = "") -> str:
    """A share of ``n`` repetitions in whole percent (``of`` the ``noun`` given), or as a count where the percent
    would round to 0% or 100% without being either (1 of 500 read "0%")."""
    if round(100 * x) not in (0, 100) or x in (0.0, 1.0):
        return f"{100 * x:.0f}%" + (f" of {noun}" if noun else "")
    return f"{round(x * n)} of {n}" + (f" {noun}" if noun else "")


def _boundary(e: Experiment) -> str:
    """The arms of ``e`` with a classification gap γ of eq. (1) of 0 (on the boundary of the Pareto set, an exact
    tie as scored, which no budget classifies reliably), as a sentence naming the first; empty when there are
    none."""
    ties = boundary_arms(e.arms)
    if not ties:
        return ""
    more = f" and {len(ties) - 1} more" if len(ties) > 1 else ""
    return (f"{len(ties)} of the {e.k} arms {'has' if len(ties) == 1 else 'have'} a classification gap γ of eq. (1) "
            f"of 0 (arms.csv: {ties[0]}{more}), on the boundary of the Pareto set, which no budget classifies "
            "reliably")


def _summary_row(s: pd.DataFrame, method: str, rho: float, mode: str | None = None) -> pd.Series:
    rows = s[(s["method"] == method) & (s["rho"] == rho)]
    return (rows[rows["cost_mode"] == mode] if mode is not None else rows).iloc[0]


def _cost_spread(e: Experiment) -> str:
    """How far apart the arms' profiling costs are (arms.csv), and what that leaves a cost-aware method."""
    cost = e.arms["profile_cost"].to_numpy(float)
    lo, hi = float(cost.min()), float(cost.max())
    ratio = hi / lo if lo > 0 else math.inf
    span = (f"{amount(lo, e.cost_unit)}–{amount(hi, e.cost_unit)}" if e.cost_unit == "usd"
            else f"{lo:,.2f}–{hi:,.2f} {LABELS[e.cost_unit]}")
    text = f"the {e.k} arms' profiling costs lie within a factor {ratio:.2f} of each other ({span}, arms.csv)"
    return text + (", too narrow a spread for weighting by cost to change much" if ratio < NARROW_COSTS else "")


def _theorem2(e: Experiment) -> str:
    """Theorem 2's sufficient budget for the experiment's arms, where dataset.csv has it (all the dataset's
    configurations, or the paper's subset)."""
    preset = (e.meta.get("arms") or {}).get("preset") if isinstance(e.meta.get("arms"), dict) else None
    key = {"all": "full_theorem2_rho", "paper-subset": "subset_theorem2_rho"}.get(str(preset))
    value = e.dataset.get(key) if key else None
    try:
        rho = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    largest = max(e.rho_grid)
    return (f"; Theorem 2 guarantees a small error for these arms from ρ ≈ {rho:,.0f} (dataset.csv), "
            f"{rho / largest:,.0f}× the largest ρ run" if math.isfinite(rho) and rho > largest else "")


def _few_carry(base: str, boot: dict[str, dict], state: str) -> str:
    """For a lowest-regret claim that holds: the methods ``base`` is lower than in under half of the repetitions
    while the other is lower in more of them (its mean lead resting on a few repetitions of large differences),
    said; else nothing (ties in most repetitions carry no such lead)."""
    fewer = [(m, r) for m, r in boot.items() if r["base_better"] < 0.5 and r["other_better"] > r["base_better"]]
    if state != "holds" or not fewer:
        return ""
    against = ", ".join(f"{_show(m)} ({_share(r['base_better'], r['n'])} against {_show(m)}'s "
                        f"{_share(r['other_better'], r['n'])})" for m, r in fewer)
    return (f"; {_show(base)} is lower in under half of the repetitions than {against}: its lower mean rests on a "
            "few repetitions with large differences")


def _online_verdicts(e: Experiment, rows: list[dict], s: pd.DataFrame) -> list[Verdict]:
    out: list[Verdict] = []
    base, _ = reference_and_others(e)
    rho = max(e.rho_grid)
    boot = {r["other"]: r for r in rows if r["metric"] == "regret_hv"}
    if boot:
        means = {base: next(iter(boot.values()))["base_mean"], **{m: r["other_mean"] for m, r in boot.items()}}
        below = [m for m, r in boot.items() if r["high"] < 0]
        # a method whose R_HV is the reference's in every repetition (the same pulls: equal costs, say) says nothing
        alike = [m for m, r in boot.items() if r["base_better"] == 0 and r["other_better"] == 0]
        # the claim is ruled out by a method whose paired difference's interval lies at or above 0
        against = [m for m, r in boot.items() if r["low"] >= 0 and m not in alike]
        state = "fails" if against else ("n/a" if len(alike) == len(boot) else
                                         "holds" if len(below) == len(boot) else "inconclusive")
        # the comparison shown: the one that rules the claim out (the one ruling it out most clearly, of several),
        # else the least favourable mean paired difference
        closest = (max((boot[m] for m in against), key=lambda r: r["low"]) if against
                   else max(boot.values(), key=lambda r: r["diff"]))
        other = closest["other"]
        reason = ""
        if state == "fails":
            won, ours = _summary_row(s, other, rho), _summary_row(s, base, rho)
            reason = (f"{_show(other)}'s mean R_HV is {won['regret_hv']:.2f} against {ours['regret_hv']:.2f} "
                      f"(the 95% interval of the paired difference lies at or above 0) and it puts "
                      f"{won['frac_optimal']:.3f} of its pulls on the max-ν configuration against {_show(base)}'s "
                      f"{ours['frac_optimal']:.3f} (summary.csv); {_cost_spread(e)}.")
        out.append(Verdict(
            state, "lowest-regret",
            f"{_show(base)} has the lowest mean R_HV at ρ={rho:g}, significantly below every other method",
            f"mean paired difference of R_HV, {_show(base)} minus {_show(other)}: "
            f"{_interval(closest['diff'], closest['low'], closest['high'], '+.4g')}; {_show(base)} lower in "
            f"{_share(closest['base_better'], closest['n'], 'repetitions')}, {_show(other)} in "
            f"{_share(closest['other_better'], closest['n'])} ("
            + (f"the closest of {len(boot)} comparisons" if not against else
               f"the one that rules the claim out of {len(boot)} comparisons" if len(against) == 1 else
               f"of the {len(against)} of {len(boot)} comparisons that rule the claim out, the one furthest above 0")
            + "; means: "
            + ", ".join(f"{_show(m)} {v:.2f}" for m, v in sorted(means.items(), key=lambda i: i[1]))
            + f"; significantly below: {', '.join(map(_show, below)) or 'none'})"
            + ("; the same R_HV as every other method in every repetition: nothing to compare" if state == "n/a"
               else f"; the same R_HV in every repetition: {', '.join(map(_show, alike))}" if alike else "")
            + _few_carry(base, boot, state), closest["diff"], closest["low"], closest["high"], other, reason))
    grid = sorted(float(r) for r in e.runs.loc[e.runs["method"] == base, "rho"].unique())
    claim = f"{_show(base)}'s R_HV grows at most linearly in log2 B"
    if len(grid) < 3:
        return out + [Verdict("n/a", "log-growth", claim, f"needs at least 3 budgets, this experiment has {len(grid)}")]
    g = e.runs[e.runs["method"] == base]
    table = g.pivot(index="rep", columns="budget", values="regret_hv").dropna()
    # growth is measured where the regret grows: from the budget of lowest mean regret on, where the regret at the
    # smallest budget is above it significantly and by a tenth of it at least (a regret that falls at first, a
    # method locked on a wrong arm at small budgets, makes a curve convex without any growth; a dip within the
    # noise, or a small one, moves nothing)
    lowest = int(np.argmin(table.mean(axis=0).to_numpy(float)))
    fall = table.iloc[:, 0].to_numpy(float) - table.iloc[:, lowest].to_numpy(float)
    f_lo, f_hi = bootstrap_mean_ci(fall) if lowest > 0 else (math.nan, math.nan)
    if not (f_lo > 0 and fall.mean() >= FALL * table.iloc[:, lowest].mean()):
        lowest = 0
    if lowest > 0:
        falls = (f"the mean R_HV falls from {table.iloc[:, 0].mean():.4g} at ρ={grid[0]:g} to "
                 f"{table.iloc[:, lowest].mean():.4g} at ρ={grid[lowest]:g} (paired difference "
                 f"{_interval(float(fall.mean()), f_lo, f_hi, '.4g')})")
        means = table.mean(axis=0).to_numpy(float)
        if lowest == len(grid) - 1 and (np.diff(means) <= 0).all():  # it falls at every budget: no growth
            return out + [Verdict("holds", "log-growth", claim, f"{falls}, the largest budget, falling at every "
                                  "budget: it does not grow", float(fall.mean()), f_lo, f_hi)]
        if lowest == len(grid) - 1:
            return out + [Verdict(
                "n/a", "log-growth", claim, f"{falls}, the largest budget, rising between: neither a fall at every "
                "budget nor growth from the lowest on to fit")]
        if len(grid) - lowest < 3:
            return out + [Verdict(
                "n/a", "log-growth", claim, f"{falls}; growth is measured from the lowest mean R_HV on, and 1 "
                "larger budget follows it (a curvature needs 3 budgets)")]
        table, grid = table.iloc[:, lowest:], grid[lowest:]
    fit = log_growth(np.log2(table.columns.to_numpy(float)), table.to_numpy(float))
    if len(table) < MIN_PAIRED:  # a bootstrap of 2 repetitions is no interval: as the paired tests say it
        fit = {**fit, **{f"{k}_{end}": math.nan for k in ("curvature", "slope") for end in ("low", "high")}}
    c, c_lo, c_hi = fit["curvature"], fit["curvature_low"], fit["curvature_high"]
    state = "fails" if c_lo > 0 else ("holds" if c_hi <= 0 else "inconclusive")
    reason = ""
    if state == "fails":
        mean = [float(_summary_row(s, base, r)["regret_hv"]) for r in grid]
        step = np.diff(mean) / np.diff(np.log2(grid))
        share = float(_summary_row(s, base, grid[-1])["frac_optimal"])
        reason = (f"the mean R_HV per doubling of B rises from {step[0]:.3g} (ρ {grid[0]:g}→{grid[1]:g}) to "
                  f"{step[-1]:.3g} (ρ {grid[-2]:g}→{grid[-1]:g}) while {_show(base)} puts {share:.3f} of its pulls "
                  f"on the max-ν configuration at ρ={grid[-1]:g} (summary.csv)"
                  + (": it is still exploring, short of the logarithmic regime of the regret bound." if share < 0.5
                     else "."))
    out.append(Verdict(
        state, "log-growth", claim,
        ("" if lowest == 0 else f"{falls}; from there, ") +
        f"quadratic fit in log2 B over {len(grid)} budgets, curvature {c:.3g} {interval_text(c_lo, c_hi, '.3g')}, "
        f"slope {fit['slope']:.3g} {interval_text(fit['slope_low'], fit['slope_high'], '.3g')} per doubling at the "
        "fitted range's centre (95% bootstrap over "
        "repetitions; a curvature interval above 0 means faster than logarithmic growth, one containing 0 cannot "
        "tell)", c, c_lo, c_hi, None, reason))
    return out


def _paired(e: Experiment, a: tuple[str, float, str], b: tuple[str, float, str],
            metric: str) -> tuple[np.ndarray, np.ndarray]:
    """``metric`` of two (method, rho, mode) cells on their common repetitions."""
    x, y = at(e, a[0], a[1], metric, a[2]), at(e, b[0], b[1], metric, b[2])
    common = x.index.intersection(y.index)
    return x.loc[common].to_numpy(float), y.loc[common].to_numpy(float)


def _spends(s: pd.DataFrame, base: str, other: str, rho: float, mode: str) -> str:
    return (f"{_show(base)} spent {_summary_row(s, base, rho, mode)['spend_share']:.3f} of B against "
            f"{_show(other)}'s {_summary_row(s, other, rho, mode)['spend_share']:.3f} (summary.csv)")


def _why_not_below(e: Experiment, s: pd.DataFrame, r: dict, base: str, rho: float, mode: str,
                   boundary: str) -> str:
    """Why ``base``'s error is not below another's (``r``, their paired comparison; ``boundary``: :func:`_boundary`
    of ``e``): arms of classification gap 0 where both err in most repetitions; both erring in the same
    repetitions, where none tells them apart; else what each spent and how far the profiling costs spread (and any
    arm of gap 0)."""
    other = r["other"]
    if boundary and min(r["base_mean"], r["other_mean"]) > 0.5:
        return f"{boundary}, so both err in most repetitions."
    if r["only_a"] + r["only_b"] == 0:  # (the same outcome in every repetition)
        return (f"both err in the same {round(r['base_mean'] * r['n'])} of the {r['n']} repetitions, so none tells "
                "them apart at this budget" + (f"; {boundary}." if boundary else "."))
    return f"{_spends(s, base, other, rho, mode)}, and {_cost_spread(e)}" + (f"; {boundary}." if boundary else ".")


def _psi_verdicts(e: Experiment, rows: list[dict], s: pd.DataFrame) -> list[Verdict]:
    out: list[Verdict] = []
    base, _ = reference_and_others(e)
    rho = max(e.rho_grid)
    boundary = _boundary(e)  # arms of classification gap 0, named in reasons
    mode = "deterministic" if "deterministic" in e.cost_modes else e.cost_modes[0]
    grid = sorted(float(r) for r in e.runs.loc[e.runs["method"] == base, "rho"].unique())  # its feasible budgets
    if len(grid) >= 2:
        hi_e, lo_e = _paired(e, (base, grid[-1], mode), (base, grid[0], mode), "error")
        t = mcnemar_exact(hi_e, lo_e)
        p_lo, p_hi = float(lo_e.mean()), float(hi_e.mean())
        d_lo, d_hi = bootstrap_mean_ci(hi_e - lo_e)
        state = "holds" if p_hi < p_lo and t["p"] < ALPHA else ("fails" if d_lo >= 0 else "inconclusive")
        if p_lo == p_hi == 0.0:  # no error at either budget: nothing to fall
            state = "n/a"
        reason = "" if state != "fails" else (
            (boundary or f"the smallest classification gap γ of eq. (1) among these {e.k} arms is "
                         f"{float(np.nanmin(e.arms['gamma'].to_numpy(float))):.5f} (arms.csv)")
            + f"{_theorem2(e)}"
            f"; at ρ={grid[-1]:g} {_show(base)} spent {_summary_row(s, base, grid[-1], mode)['spend_share']:.3f} of "
            "B (summary.csv).")
        out.append(Verdict(
            state, "error-falls", f"{_show(base)}'s error ({mode} costs) falls from ρ={grid[0]:g} to ρ={grid[-1]:g}",
            f"P(error) {p_lo:.3f} → {p_hi:.3f}, paired difference {_interval(p_hi - p_lo, d_lo, d_hi)}, exact "
            f"McNemar p={t['p']:.3g} over {t['n']} paired repetitions"
            + ("; no repetition errs at either budget: nothing to fall" if state == "n/a" else ""),
            p_hi - p_lo, d_lo, d_hi, None, reason))
    for r in rows:
        if r["mode"] != mode:
            continue
        other, a, b = r["other"], r["base_mean"], r["other_mean"]
        if r["test"] == "McNemar":
            state = "holds" if a < b and r["p_holm"] < ALPHA else ("fails" if r["low"] >= 0 else "inconclusive")
            perfect = a == b == 0.0  # neither errs at this budget: no error to be below
            hopeless = a == b == 1.0  # both err in every repetition: no success to tell them apart by
            state = "n/a" if perfect or hopeless else state
            reason = "" if state != "fails" else (
                f"{_show(other)} errs no more often ({b:.3f} against {a:.3f}; only {_show(base)} errs in "
                f"{_times(r['only_a'])}, only {_show(other)} in {r['only_b']}); "
                + _why_not_below(e, s, r, base, rho, mode, boundary))
            out.append(Verdict(
                state, "error-below", f"{_show(base)}'s error is below {_show(other)}'s at ρ={rho:g} ({mode} costs)",
                f"P(error) {a:.3f} vs {b:.3f}, paired difference {_interval(r['diff'], r['low'], r['high'])}, "
                f"Holm-adjusted exact McNemar p={r['p_holm']:.3g} (only {_show(base)} errs in "
                f"{_times(r['only_a'])}, only {_show(other)} in {r['only_b']})"
                + ("; neither errs at this budget: nothing to compare" if perfect else "")
                + (f"; both err in every repetition at this budget{f' ({boundary})' if boundary else ''}: "
                   "nothing to compare" if hopeless else ""), r["diff"], r["low"],
                r["high"], other, reason))
        else:
            state = "holds" if r["low"] > 0 else ("fails" if r["high"] <= 0 else "inconclusive")
            perfect = a == b == 1.0  # both return the true set in every repetition: no F1 to be above
            state = "n/a" if perfect else state
            reason = "" if state != "fails" else (
                f"{_show(other)}'s mean F1 is at least {_show(base)}'s ({b:.3f} against {a:.3f}, summary.csv); "
                f"{_spends(s, base, other, rho, mode)}, and {_cost_spread(e)}.")
            out.append(Verdict(
                state, "f1-above", f"{_show(base)}'s Pareto F1 is above {_show(other)}'s at ρ={rho:g} ({mode} costs)",
                f"mean paired difference of F1, {_show(base)} minus {_show(other)}: "
                f"{_interval(r['diff'], r['low'], r['high'])}; {_show(base)} higher in "
                f"{_share(r['base_better'], r['n'], 'repetitions')}, {_show(other)} in "
                f"{_share(r['other_better'], r['n'])}"
                + ("; both return the true Pareto set in every repetition: nothing to compare" if perfect else ""),
                r["diff"], r["low"], r["high"],
                other, reason))
    if {"deterministic", "stochastic"} <= set(e.cost_modes):
        sto, det = _paired(e, (base, rho, "stochastic"), (base, rho, "deterministic"), "error")
        t = mcnemar_exact(sto, det)
        d_lo, d_hi = bootstrap_mean_ci(sto - det)
        state = "holds" if t["p"] >= ALPHA else "fails"
        never = sto.mean() == det.mean() == 0.0  # neither cost mode errs: no error to change
        always = sto.mean() == det.mean() == 1.0  # both err in every repetition: no success to change
        state = "n/a" if never or always else state
        shares = {m: _summary_row(s, base, rho, m)["spend_share"] for m in ("deterministic", "stochastic")}
        reason = "" if state != "fails" else (
            f"with realised costs {_show(base)} spent {shares['stochastic']:.3f} of B against "
            f"{shares['deterministic']:.3f} with profiling costs (summary.csv), and its error moved from "
            f"{det.mean():.3f} to {sto.mean():.3f}.")
        costs = {"tokens": "token", "completion_tokens": "completion-token", "usd": "dollar"}[e.cost_unit]
        out.append(Verdict(
            state, "realised-costs", f"realised {costs} costs leave {_show(base)}'s error unchanged at ρ={rho:g}",
            f"P(error) {det.mean():.3f} deterministic, {sto.mean():.3f} stochastic, paired difference "
            f"{_interval(sto.mean() - det.mean(), d_lo, d_hi)}, exact McNemar p={t['p']:.3g} (holds = no "
            "significant difference at 5%; not a proof of equality)"
            + ("; neither cost mode errs at this budget: nothing to compare" if never else
               "; both cost modes err in every repetition at this budget: nothing to compare" if always else
               f"; the same outcome in every one of the {t['n']} repetitions" if t["only_a"] + t["only_b"] == 0
               else ""), float(sto.mean() - det.mean()), d_lo, d_hi, None, reason))
    return out


def verdicts(e: Experiment, rows: list[dict], summary: pd.DataFrame | None = None) -> list[Verdict]:
    """The claims tested on ``e`` (``rows`` are its :func:`comparisons`, ``summary`` its summary when at hand);
    each states its tested quantity and can fail, and one that fails says why with numbers of the results files."""
    s = e.summary() if summary is None else summary
    tested = _online_verdicts(e, rows, s) if e.setting == "online" else _psi_verdicts(e, rows, s)
    n = int(e.runs.groupby(["method", "rho"] if e.setting == "online" else ["method", "cost_mode", "rho"]).size().min())
    if n >= MIN_PAIRED:
        return tested
    few = f"; inconclusive on {n} repetition{'s' if n != 1 else ''} (a test needs {MIN_PAIRED})"
    return [dataclasses.replace(v, state="inconclusive", reason="", quantity=v.quantity + few)
            if v.state in ("holds", "fails") else v for v in tested]


def findings(e: Experiment) -> Findings:
    """The summary, paired comparisons and verdicts of ``e``, computed once for every renderer."""
    summary, rows = e.summary(), comparisons(e)
    return Findings(summary, rows, verdicts(e, rows, summary))


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
    repetition that returns nothing counts 0. Computed once per experiment (a copy each call)."""
    return e.kept("relative_hypervolume", lambda: _relative_hypervolume(e)).copy()


def _relative_hypervolume(e: Experiment) -> pd.DataFrame:
    keys = ["method", "cost_mode", "rho"]
    columns = [*keys, "n", "mean", "se"]
    if e.setting != "psi":
        return pd.DataFrame(columns=columns)
    mu = e.arms[objective_columns(e.arms)].to_numpy(float)
    truth = hypervolume(mu[e.arms["pareto"].to_numpy() == 1])
    returned = e.returned
    volume = np.array([hypervolume(mu[row]) if row.any() else 0.0 for row in returned.sets])
    ratio = volume[returned.set_of] / truth if truth > 0 else np.full(len(e.runs), np.nan)
    rows = []
    for (method, mode, rho), at in e.runs.groupby(keys, sort=False).indices.items():
        mean, se = mean_se(ratio[at])
        rows.append({"method": method, "cost_mode": mode, "rho": float(rho), "n": len(at), "mean": mean, "se": se})
    return pd.DataFrame(rows, columns=columns)


def exploited_at_largest(e: Experiment) -> dict[str, tuple[tuple[str, ...], float]]:
    """Online: each method's most exploited configurations at its largest budget — the configuration most often
    the most-pulled one of a repetition, with any as often (in name order) — and the share of repetitions each
    was. A repetition that ends with several configurations pulled most exploits none (``Experiment.
    exploited_alone``); a method none of whose repetitions exploits one is left out."""
    out = {}
    for method, g in e.runs.assign(alone=e.exploited_alone).groupby("method", sort=False):
        last = g[g["rho"] == g["rho"].max()]
        counts = last.loc[last["alone"], "exploited"].astype(str).value_counts()
        if counts.empty:
            continue
        top = int(counts.max())
        out[str(method)] = (tuple(sorted(str(n) for n in counts.index[counts == top])), top / len(last))
    return out


def key_configurations(e: Experiment) -> pd.DataFrame:
    """The configurations that matter in ``e``: the rows of ``arms.csv`` of the true Pareto set, the max-``nu``
    configuration and (online) the most exploited ones of each method with a preference at its largest budget (a
    round robin's most-pulled configuration is its turn order, not a preference), in ``arms.csv`` order, with a
    column ``why`` listing each one's roles."""
    why: dict[str, list[str]] = {}
    arms = e.arms.assign(config_id=e.arms["config_id"].astype(str))
    for name in arms.loc[arms["pareto"] == 1, "config_id"]:
        why.setdefault(name, []).append("Pareto")
    why.setdefault(arms.loc[arms["optimal"] == 1, "config_id"].iloc[0], []).append("max-ν")
    if e.setting == "online":
        for method, (names, share) in exploited_at_largest(e).items():
            if not registry.prefers(method, "online"):
                continue
            for name in names:  # (several exploited as often: each is an answer)
                why.setdefault(name, []).append(f"exploited by {_show(method)} ({percent(share)} of repetitions)")
    rows = arms[arms["config_id"].isin(why)]
    return rows.assign(why=["; ".join(why[name]) for name in rows["config_id"]])


def mean_spend(e: Experiment) -> dict[tuple, float]:
    """Mean spend over repetitions, in the cost unit, by (method, rho) online and (method, cost mode, rho) in
    identification (the keys of the summary's rows)."""
    keys = ["method", "rho"] if e.setting == "online" else ["method", "cost_mode", "rho"]
    return {k: float(v) for k, v in e.runs.groupby(keys, sort=False)["spend"].mean().items()}


def found_by(e: Experiment, names: list[str], rho: float, mode: str | None = None) -> dict[str, float]:
    """How often each method finds a decision at budget ``rho``: online, the share of repetitions whose most
    exploited configuration is one of ``names`` (configurations exploited equally often: any of them);
    identification (cost ``mode``), the share returning exactly the set ``names``. Methods not run at ``rho`` are
    left out."""
    if e.setting == "online":  # a repetition that pulled several configurations most finds none of them
        runs = e.runs.assign(alone=e.exploited_alone)
        runs = runs[runs["rho"] == rho]
        return {str(m): float((g["exploited"].astype(str).isin(names) & g["alone"]).mean())
                for m, g in runs.groupby("method", sort=False)}
    target = e.returned.index_of(names)
    same = e.returned.set_of == target if target is not None else np.zeros(len(e.runs), dtype=bool)
    here = ((e.runs["rho"] == rho) & (e.runs["cost_mode"] == mode)).to_numpy()
    methods, hit = e.runs["method"].to_numpy()[here], same[here]
    return {str(m): float(hit[methods == m].mean()) for m in dict.fromkeys(methods)}
