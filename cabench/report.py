"""``cabench report``: REPORT.md from result files, set beside the paper's numbers (SPEC §8).

It reads result files (and the datasets named in their ``config.yaml``) and
never runs an experiment.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from cabench.data.dataset import load_dataset
from cabench.data.describe import describe
from cabench.errors import CabenchError
from cabench.paper import GAINS, PUBLISHED, REDUCTIONS, Published
from cabench.results import DISPLAY, ResultSet
from cabench.stats import paired_difference, wilson

ONLINE = ("cohv-ucb", "hv-ucb", "acc-cost-ucb", "uniform")
PSI = ("copsi", "psi-sr", "uniform")
FIGURES = [
    ("fig1_landscapes", "Figure 1: configuration landscapes (accuracy against efficiency; black: Pareto front)"),
    ("fig2_online_regret", "Figure 2: HV-efficiency regret (a-b), log10 identification error on the 14 arms (c-d)"),
    ("fig3_standard_regret", "Figure 3: standard hypervolume regret"),
    ("fig4_trajectories", "Figure 4: online trajectories at the largest budget"),
    ("fig5_full_f1", "Figure 5: Pareto F1 on the full configuration sets"),
    ("fig6_cost_modes", "Figure 6: deterministic against realised (stochastic) token costs"),
]


class Results(ResultSet):
    """Result tables found under a folder, and our value for each published number."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        if self.empty:
            raise CabenchError(f"{root}: no runs.csv below this folder; run `cabench run CONFIG` first")

    def datasets(self) -> dict[str, dict]:
        """describe() of every dataset folder named in the results' configs (first split seen)."""
        out: dict[str, dict] = {}
        for path, split in self.dataset_folders():
            ds = load_dataset(path, split)
            out.setdefault(ds.name, describe(ds))
        return out

    # --- our value for a published number -------------------------------------------------
    def _rho(self, frame: pd.DataFrame, rho: str) -> float | None:
        grid = sorted(frame["rho"].unique())
        if not grid:
            return None
        if rho == "max":
            return grid[-1]
        if rho == "min":
            return grid[0]
        return float(rho) if float(rho) in grid else None

    def value(self, p: Published, stats: dict[str, dict]) -> tuple[float | None, str]:
        """Our value for the published number ``p`` and the budget it was measured at."""
        if p.method is None:
            d = stats.get(p.dataset)
            return (None, "") if d is None or d.get(p.metric) is None else (float(d[p.metric]), "")
        if p.metric in ("regret_hv", "regret_std"):
            frame = self._select(self.online, p.dataset, p.method)
            rho = None if frame is None else self._rho(frame, p.rho)
            if rho is None:
                return None, ""
            return float(frame.loc[frame["rho"] == rho, p.metric].mean()), f"rho={rho:g}"
        if p.metric in ("traj_cum", "traj_ma"):
            frame = self._select(self.trajectories, p.dataset, p.method)
            if frame is None:
                return None, ""
            last = frame.loc[frame["point"].idxmax()]
            column = "cum_regret_mean" if p.metric == "traj_cum" else "moving_avg_mean"
            return float(last[column]), f"rho={last['rho']:g}"
        if p.metric in ("psi_error", "psi_error_stochastic"):
            kind, mode = ("subset", "deterministic") if p.metric == "psi_error" else ("stochastic", "stochastic")
            frame = self._select(self.psi.get(kind), p.dataset, p.method)
            if frame is None:
                return None, ""
            frame = frame[frame["cost_mode"] == mode]
            rho = self._rho(frame, p.rho)
            if rho is None:
                return None, ""
            return float(frame.loc[frame["rho"] == rho, "error"].mean()), f"rho={rho:g}"
        if p.metric == "f1":
            frame = self._select(self.psi.get("full"), p.dataset, p.method)
            rho = None if frame is None else self._rho(frame, p.rho)
            return (None, "") if rho is None else (float(frame.loc[frame["rho"] == rho, "f1"].mean()), f"rho={rho:g}")
        raise ValueError(p.metric)

    @staticmethod
    def _select(frame: pd.DataFrame | None, dataset: str, method: str) -> pd.DataFrame | None:
        if frame is None:
            return None
        out = frame[(frame["dataset"] == dataset) & (frame["method"] == method)]
        return None if out.empty else out


def _fmt(value: float | None, like: str = "0.000") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if "." not in like:
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"
    return f"{value:.{max(len(like.split('.')[1]), 1)}f}"


def _published_tables(res: Results, stats: dict[str, dict]) -> list[str]:
    groups = [
        ("Data statistics (Table 1, Appendix A)", lambda p: p.method is None),
        ("Online selection", lambda p: p.metric in ("regret_hv", "regret_std", "traj_cum", "traj_ma")),
        ("Pareto set identification", lambda p: p.metric in ("psi_error", "psi_error_stochastic", "f1")),
    ]
    names = {"regret_hv": "R_HV", "regret_std": "R_std", "traj_cum": "trajectory end, cumulative R_HV",
             "traj_ma": "trajectory end, 50-pull moving average", "psi_error": "P(error), 14 arms",
             "psi_error_stochastic": "P(error), 14 arms, realised costs", "f1": "Pareto F1, full set"}
    lines = []
    for title, keep in groups:
        lines += [f"### {title}", "", "| dataset | quantity | method | budget (paper) | paper | ours | ours at |",
                  "|---|---|---|---|---|---|---|"]
        for p in filter(keep, PUBLISHED):
            ours, where = res.value(p, stats)
            budget = "" if p.rho is None else ("largest" if p.rho == "max" else "smallest" if p.rho == "min"
                                               else f"rho={p.rho}")
            lines.append(f"| {p.dataset.upper()} | {names.get(p.metric, p.metric)} | "
                         f"{DISPLAY.get(p.method, '') if p.method else ''} | {budget} | {p.text} | "
                         f"{_fmt(ours, p.text)} | {where} |")
        lines.append("")
    return lines


def _reductions(res: Results, stats: dict[str, dict]) -> list[str]:
    lines = ["### Relative changes the paper quotes, recomputed", "",
             "| dataset | quantity | method vs baseline | paper | ours |", "|---|---|---|---|---|"]
    for r in REDUCTIONS:
        ours_m, _ = res.value(Published(r.dataset, r.metric, r.method, r.rho, "0"), stats)
        ours_b, where = res.value(Published(r.dataset, r.metric, r.baseline, r.rho, "0"), stats)
        ours = None if ours_m is None or not ours_b else 100 * (1 - ours_m / ours_b)
        lines.append(f"| {r.dataset.upper()} | reduction of {r.metric} ({where or r.rho}) | "
                     f"{DISPLAY[r.method]} vs {DISPLAY[r.baseline]} | {r.text}% | "
                     f"{'—' if ours is None else f'{ours:.1f}%'} |")
    for g in GAINS:
        a, where = res.value(Published(g.dataset, "f1", "copsi", g.rho, "0"), stats)
        b, _ = res.value(Published(g.dataset, "f1", g.baseline, g.rho, "0"), stats)
        if a is None or b is None:
            ours = "—"
        elif g.kind == "absolute":
            ours = f"{a - b:+.3f}"
        else:
            ours = f"{100 * (a / b - 1):.1f}%"
        paper = g.text + ("%" if g.kind == "relative" else "")
        lines.append(f"| {g.dataset.upper()} | {g.kind} F1 gain ({where or 'rho=' + g.rho}) | CoPSI vs "
                     f"{DISPLAY[g.baseline]} | {paper} | {ours} |")
    return lines + [""]


def _paired_at_largest(runs: pd.DataFrame, base: str, others: tuple[str, ...], metric: str):
    """Paired differences ``base - other`` of ``metric`` at the largest rho, repetition by repetition."""
    rho = runs["rho"].max()
    runs = runs[runs["rho"] == rho]
    mine = runs[runs["method"] == base].set_index("rep")
    for other in others:
        theirs = runs[runs["method"] == other].set_index("rep")
        if mine.empty or theirs.empty:
            continue
        paired = theirs.loc[mine.index, metric].to_numpy(float)
        yield rho, other, paired_difference(mine[metric].to_numpy(float), paired)


def _paired(res: Results) -> list[str]:
    lines = ["## Paired comparisons", "",
             "Every method in a repetition replays the same feedback stream, so differences are paired by "
             "repetition. Mean difference (method − baseline) with a normal 95% interval, and how often each side "
             "is strictly lower.", ""]
    if res.online is not None:
        lines += ["| dataset | rho | metric | CoHV-UCB vs | mean diff [95% CI] | CoHV lower | baseline lower | n |",
                  "|---|---|---|---|---|---|---|---|"]
        for dataset, g in res.online.groupby("dataset", sort=True):
            for metric in ("regret_hv", "regret_std"):
                for rho, other, d in _paired_at_largest(g, "cohv-ucb", ONLINE[1:], metric):
                    lines.append(f"| {dataset.upper()} | {rho:g} | {metric} | {DISPLAY[other]} | "
                                 f"{d['mean_diff']:.2f} [{d['ci_low']:.2f}, {d['ci_high']:.2f}] | "
                                 f"{100 * d['a_lower']:.0f}% | {100 * d['b_lower']:.0f}% | {d['n']} |")
        lines.append("")
    rows = []
    for kind, frame in sorted(res.psi.items()):
        metric = "f1" if kind == "full" else "error"
        for (dataset, mode), g in frame.groupby(["dataset", "cost_mode"], sort=True):
            for rho, other, d in _paired_at_largest(g, "copsi", PSI[1:], metric):
                better = "a_lower" if metric == "error" else "b_lower"
                worse = "b_lower" if metric == "error" else "a_lower"
                rows.append(f"| {dataset.upper()} | {kind}, {mode} | {rho:g} | {metric} | {DISPLAY[other]} | "
                            f"{d['mean_diff']:+.4f} [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}] | "
                            f"{100 * d[better]:.1f}% | {100 * d[worse]:.1f}% | {d['n']} |")
    if rows:
        lines += ["| dataset | experiment | rho | metric | CoPSI vs | mean diff [95% CI] | CoPSI better | baseline "
                  "better | n |", "|---|---|---|---|---|---|---|---|---|", *rows, ""]
    return lines


def _findings(res: Results) -> list[str]:
    out = ["## Qualitative findings on these data", ""]

    def say(ok: bool | None, text: str) -> None:
        mark = "n/a (no data)" if ok is None else ("**holds**" if ok else "**does not hold**")
        out.append(f"- {text}: {mark}")

    if res.online is not None:
        for dataset, g in res.online.groupby("dataset", sort=True):
            top = g[g["rho"] == g["rho"].max()].groupby("method")["regret_hv"].mean()
            order = sorted(top.index, key=lambda m: top[m])
            say(order[0] == "cohv-ucb",
                f"{dataset.upper()}: CoHV-UCB has the lowest mean R_HV at the largest budget "
                f"(order: {', '.join(f'{DISPLAY[m]} {top[m]:.1f}' for m in order)})")
            cohv = g[g["method"] == "cohv-ucb"].groupby("budget_tokens")["regret_hv"].mean()
            if len(cohv) >= 3:
                x, y = np.log2(cohv.index.to_numpy(float)), cohv.to_numpy()
                fit = np.polyfit(x, y, 1)
                r2 = 1 - np.sum((y - np.polyval(fit, x)) ** 2) / max(np.sum((y - y.mean()) ** 2), 1e-300)
                uni = g[g["method"] == "uniform"].groupby("budget_tokens")["regret_hv"].mean()
                growth = y[-1] / y[0]
                budget_growth = cohv.index[-1] / cohv.index[0]
                say(r2 >= 0.9 and growth < budget_growth,
                    f"{dataset.upper()}: CoHV-UCB's regret grows roughly linearly in log2 B (R² of a line in "
                    f"log2 B = {r2:.3f}; it grows x{growth:.1f} while B grows x{budget_growth:.0f}"
                    + (f" and Uniform's x{uni.iloc[-1] / uni.iloc[0]:.1f})" if len(uni) == len(cohv) else ")"))
    subset = res.psi.get("subset")
    if subset is not None:
        det = subset[subset["cost_mode"] == "deterministic"]
        for dataset, g in det.groupby("dataset", sort=True):
            err = g.groupby(["method", "rho"])["error"].mean()
            if "copsi" in err.index.get_level_values(0):
                c = err["copsi"]
                say(bool(c.iloc[-1] < c.iloc[0] and np.corrcoef(np.log(c.index), c.to_numpy())[0, 1] < 0)
                    if len(c) > 1 else None,
                    f"{dataset.upper()}: CoPSI's identification error falls with the budget "
                    f"({c.iloc[0]:.3f} at rho={c.index[0]:g} to {c.iloc[-1]:.3f} at rho={c.index[-1]:g})")
            if {"copsi", "uniform"} <= set(err.index.get_level_values(0)) and len(err["copsi"]) > 1:
                gap = err["uniform"] - err["copsi"]
                say(bool(gap.iloc[-1] > 0 and gap.iloc[-1] >= gap.iloc[0]),
                    f"{dataset.upper()}: CoPSI beats Uniform at the largest budget and the difference widens with B "
                    f"(Uniform − CoPSI: {gap.iloc[0]:+.3f} at the smallest, {gap.iloc[-1]:+.3f} at the largest budget)")
            if {"copsi", "psi-sr"} <= set(err.index.get_level_values(0)):
                a, b = err["copsi"].iloc[-1], err["psi-sr"].iloc[-1]
                say(bool(a < b), f"{dataset.upper()}: CoPSI's error is below PSI-SR's at the largest budget "
                                 f"({a:.3f} vs {b:.3f})")
    full = res.psi.get("full")
    if full is not None:
        for dataset, g in full.groupby("dataset", sort=True):
            f1 = g.groupby(["method", "rho"])["f1"].mean()
            if {"copsi", "uniform"} <= set(f1.index.get_level_values(0)):
                diff = f1["copsi"] - f1["uniform"]
                say(bool((diff > 0).all()), f"{dataset.upper()}: CoPSI's full-set F1 is above Uniform's at every "
                                            f"budget (differences {', '.join(f'{v:+.3f}' for v in diff)})")
    stoch = res.psi.get("stochastic")
    if stoch is not None:
        for dataset, g in stoch.groupby("dataset", sort=True):
            e = g[g["rho"] == g["rho"].max()].groupby(["method", "cost_mode"])["error"].mean()
            if ("copsi", "deterministic") in e.index and ("copsi", "stochastic") in e.index:
                n = int(len(g) / max(g.groupby(["method", "cost_mode"]).ngroups, 1))
                lo, hi = wilson(int(round(e["copsi", "deterministic"] * n)), n)
                say(bool(lo <= e["copsi", "stochastic"] <= hi),
                    f"{dataset.upper()}: realised token costs change CoPSI's error only within its 95% interval "
                    f"({e['copsi', 'deterministic']:.3f} deterministic, {e['copsi', 'stochastic']:.3f} stochastic)")
    return out + [""]


def _table1(stats: dict[str, dict]) -> list[str]:
    paper = {p.dataset + p.metric: p.text for p in PUBLISHED if p.method is None}
    lines = ["## Table 1: the data used", "",
             "| data | source | K | accuracy | latency (s) | tokens | |P*| | profiling cost | 14-arm |P*| | "
             "14-arm min gap |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, d in sorted(stats.items()):
        lines.append(
            f"| {name.upper()} | {'surrogate' if d['surrogate'] else 'logs'} | {d['K']} | "
            f"{d['accuracy_min']:.3f}–{d['accuracy_max']:.3f} | {d['latency_min']:.3f}–{d['latency_max']:.3f} | "
            f"{d['tokens_min']:.1f}–{d['tokens_max']:.1f} | {d['pareto_size']} | "
            f"{d['cost_min']:.2f}–{d['cost_max']:.2f} | {d['subset_pareto_size']} | "
            f"{_fmt(d['subset_min_gap'], '0.0000')} |")
        if name + "K" in paper:
            g = {k[len(name):]: v for k, v in paper.items() if k.startswith(name)}
            lines.append(f"| {name.upper()} | paper | {g['K']} | {g['accuracy_min']}–{g['accuracy_max']} | "
                         f"{g['latency_min']}–{g['latency_max']} | {g['tokens_min']}–{g['tokens_max']} | "
                         f"{g['pareto_size']} | {g['cost_min']}–{g['cost_max']} | {g['subset_pareto_size']} | "
                         f"{g['subset_min_gap']} |")
    return lines + [""]


def build_report(root: Path) -> str:
    res = Results(root)
    stats = res.datasets()
    versions = sorted({str(m.get("cabench_version")) for m in res.metas})
    commits = sorted({str(m.get("git_commit"))[:12] for m in res.metas})
    lines = ["# cabench report", ""]
    if res.surrogate:
        lines += ["> **Surrogate data.** The GSM8K and PIQA logs behind these results are *surrogate* logs, "
                  "generated by `scripts/make_surrogate_logs.py` and calibrated to the statistics the paper publishes "
                  "(its raw evaluation logs are not public). Numbers below are therefore not the paper's "
                  "measurements: what should reproduce is the qualitative behaviour (method ordering, the growth of "
                  "regret with log B, the decay of the identification error), not the values.", ""]
    lines += [f"Results under `{root}` ({len(res.metas)} experiments); cabench {', '.join(versions)}, "
              f"commit {', '.join(commits)}.", ""]
    lines += _table1(stats)
    lines += ["## The paper's numbers beside ours", "",
              "Ours are means over the repetitions of our runs for the same metric, method and budget. "
              "'largest'/'smallest' budget means the ends of each rho grid.", ""]
    lines += _published_tables(res, stats)
    lines += _reductions(res, stats)
    lines += _paired(res)
    lines += _findings(res)
    lines += ["## Figures", ""]
    for stem, caption in FIGURES:
        if (root / f"{stem}.png").is_file():
            lines += [f"**{caption}.**", "", f"![{caption}]({stem}.png)", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_report(root: Path) -> Path:
    text = build_report(root)
    path = root / "REPORT.md"
    path.write_text(text)
    return path


