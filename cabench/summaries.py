"""Summaries of a run's rows (SPEC §6): per method, budget (and cost mode), the mean regrets with their standard
errors (online), the error probability with its Wilson interval and the mean F1 (identification), the share of the
budget spent; trajectories averaged over repetitions; and the terminal's table of a summary."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cabench import registry
from cabench.stats import mean_se, wilson
from cabench.units import LABELS, plain


def online_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error of R_HV and R_std, and the share of B spent, per (method, rho)."""
    rows = []
    keys = [c for c in ["experiment", "config_hash", "dataset", "method", "rho"] if c in runs]
    for values, g in runs.groupby(keys, sort=False):
        hv, hv_se = mean_se(g["regret_hv"])
        std, std_se = mean_se(g["regret_std"])
        rows.append({**dict(zip(keys, values)), "budget": g["budget"].iloc[0], "n": len(g), **_unpulled(g),
                     "regret_hv": hv, "regret_hv_se": hv_se, "regret_std": std, "regret_std_se": std_se,
                     "pulls": g["pulls"].mean(), "frac_optimal": g["frac_optimal"].mean(),
                     "spend_share": float((g["spend"] / g["budget"]).mean()), **_spent_also(g)})
    return pd.DataFrame(rows)


def _unpulled(g: pd.DataFrame) -> dict[str, int]:
    """``reps_unpulled``, the repetitions that left an arm unpulled (unsampled), and ``unpulled_max``, the most arms
    one of them left, where runs.csv says (the runs.csv of an older cabench has no ``unpulled`` column)."""
    if "unpulled" not in g:
        return {}
    return {"reps_unpulled": int((g["unpulled"] > 0).sum()), "unpulled_max": int(g["unpulled"].max())}


def unpulled_text(row: dict | pd.Series, setting: str) -> str:
    """What a summary row's ``reps_unpulled`` and ``unpulled_max`` say, as ``run`` and the reports write it:
    ``9 of 20 repetitions left configurations never pulled, up to 3 in one (...)``."""
    most, what = int(row["unpulled_max"]), "pulled" if setting == "online" else "sampled"
    left = f"a configuration never {what}" if most == 1 else f"configurations never {what}, up to {most} in one"
    return (f"{int(row['reps_unpulled'])} of {int(row['n'])} repetitions left {left} (the budget ran out within the "
            "first round)")


def _spent_also(g: pd.DataFrame) -> dict[str, float]:
    """Mean spend in the other units runs.csv records (``spend_tokens``, ``spend_usd`` beside a cost in another)."""
    return {c: float(g[c].mean()) for c in g.columns if c.startswith("spend_")}


def psi_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Error probability (95% Wilson interval), mean F1 and share of B spent per (method, cost mode, rho)."""
    rows = []
    keys = [c for c in ["experiment", "config_hash", "dataset", "method", "cost_mode", "rho"] if c in runs]
    for values, g in runs.groupby(keys, sort=False):
        k, n = int(g["error"].sum()), len(g)
        lo, hi = wilson(k, n)
        f1, f1_se = mean_se(g["f1"])
        rows.append({**dict(zip(keys, values)), "budget": g["budget"].iloc[0], "n": n, **_unpulled(g),
                     "error": k / n, "error_low": lo, "error_high": hi, "f1": f1, "f1_se": f1_se,
                     "size": g["size"].mean(), "spend_share": float((g["spend"] / g["budget"]).mean()),
                     **_spent_also(g)})
    return pd.DataFrame(rows)


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """The summary of a run's rows, of its setting."""
    return online_summary(runs) if runs["setting"].iloc[0] == "online" else psi_summary(runs)


def aggregate_trajectories(per_rep: pd.DataFrame, dataset: str, window: int) -> pd.DataFrame:
    """Mean and standard error over repetitions at every grid point; ``window`` is the moving average's."""
    # the groups in the order grouping meets them, each a run of rows in their own order (a stable sort): the
    # numbers of pandas' group-by loop, without its per-group cost (a trajectory has a row per point and method)
    group = per_rep.groupby(["method", "rho", "point"], sort=False).ngroup().to_numpy()
    order = np.argsort(group, kind="stable")
    order = order[group[order] >= 0]  # (a row with an empty key belongs to no group)
    starts = np.flatnonzero(np.diff(group[order], prepend=-1))
    ends = np.append(starts[1:], len(order))
    method, rho, point, spend = (per_rep[c].to_numpy()[order] for c in ("method", "rho", "point", "spend"))
    cum_regret, moving_avg = (per_rep[c].to_numpy(dtype=float)[order] for c in ("cum_regret", "moving_avg"))
    rows = []
    for start, end in zip(starts, ends):
        cm, cs = mean_se(cum_regret[start:end])
        mm, ms = mean_se(moving_avg[start:end])
        rows.append({"dataset": dataset, "method": method[start], "rho": rho[start], "point": point[start],
                     "spend": spend[start], "cum_regret_mean": cm, "cum_regret_se": cs,
                     "moving_avg_mean": mm, "moving_avg_se": ms,
                     "n_reps": int(np.count_nonzero(~np.isnan(moving_avg[start:end]))),
                     "window": int(window)})
    return pd.DataFrame(rows)


def format_summary(summary: pd.DataFrame, unit: str = "tokens") -> str:
    """A plain-text table for the terminal, budgets in the cost ``unit``."""
    head = f"B ({LABELS[unit]})"
    lines = []
    skipped = summary[summary["status"] != "ok"] if "status" in summary else summary.iloc[:0]
    summary = summary.drop(skipped.index)
    shown = [registry.display(m) for m in summary["method"]]
    wide = max([len(d) + 1 for d in shown], default=0)  # a method's name of its own may be longer than the column
    bw = max([13, len(head) + 2, *(len(budget_text(b, unit)) + 2 for b in summary["budget"])])  # 'B (completion
    # tokens)' ran into rho's column
    if "regret_hv" in summary:
        w = max(19, wide)
        lines.append(f"{'method':<{w}}{'rho':>9}{head:>{bw}}{'R_HV mean ± se':>24}{'R_std mean ± se':>24}"
                     f"{'spent':>8}")
        for i, (_, r) in enumerate(summary.iterrows()):
            one = r.get("n", 2) < 2  # one repetition: no standard error (recorded as 0)
            hv_se, std_se = ("n/a", "n/a") if one else (f"{r.regret_hv_se:<7.2f}", f"{r.regret_std_se:<7.2f}")
            lines.append(f"{shown[i]:<{w}}{r.rho:>9.4g}{budget_text(r.budget, unit):>{bw}}"
                         f"{r.regret_hv:>14.2f} ± {hv_se:<7}"
                         f"{r.regret_std:>14.2f} ± {std_se:<7}{100 * r.spend_share:>7.1f}%")
    else:
        w = max(10, wide)
        lines.append(f"{'method':<{w}}{'cost':>14}{'rho':>9}{head:>{bw}}{'P(error) [95% Wilson]':>26}"
                     f"{'F1':>8}{'|P_hat|':>9}{'spent':>8}")
        for i, (_, r) in enumerate(summary.iterrows()):
            lines.append(f"{shown[i]:<{w}}{r.cost_mode:>14}{r.rho:>9.4g}"
                         f"{budget_text(r.budget, unit):>{bw}}"
                         f"{r.error:>9.3f} [{r.error_low:.3f}, {r.error_high:.3f}]{r.f1:>8.3f}{r['size']:>9.2f}"
                         f"{100 * r.spend_share:>7.1f}%")
    for _, r in skipped.iterrows():
        mode = f" ({r.cost_mode})" if "cost_mode" in r and isinstance(r.cost_mode, str) else ""
        lines.append(f"{registry.display(r.method)}{mode} at rho {r.rho:g}: {r.status}")
    short = summary[summary["reps_unpulled"] > 0] if "reps_unpulled" in summary else summary.iloc[:0]
    stated = "budget_stated" in summary.columns  # the config's budgets, as it gave them
    for _, r in short.iterrows():  # the first round as far as B allows
        mode = f" ({r.cost_mode})" if "cost_mode" in r and isinstance(r.cost_mode, str) else ""
        at = f"B = {budget_text(r.budget_stated, unit)} {LABELS[unit]}" if stated else f"rho {r.rho:.12g}"
        lines.append(f"{registry.display(r.method)}{mode} at {at}: "
                     + unpulled_text(r, "online" if "regret_hv" in summary else "psi"))
    return "\n".join(lines)


def budget_text(value: float, unit: str) -> str:
    """A budget in a table cell: whole tokens, or dollars to four significant digits (:func:`~cabench.units.plain`:
    ``0.00004``, not ``4e-05``)."""
    return plain(value) if unit == "usd" else f"{value:.0f}"
