"""Figures: Figure 1 from datasets, Figures 2-6 from result files (SPEC §7).

Plots read result files only; they never run experiments. One colour and
marker per method across every figure, the paper's method names, Agg backend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from cabench.data.dataset import Dataset, load_dataset  # noqa: E402
from cabench.errors import CabenchError  # noqa: E402
from cabench.pareto import pareto_set  # noqa: E402
from cabench.results import DISPLAY, ResultSet  # noqa: E402
from cabench.stats import Z95, mean_se, wilson  # noqa: E402

STYLE = {
    "cohv-ucb": ("#d62728", "o"),
    "hv-ucb": ("#1f77b4", "s"),
    "acc-cost-ucb": ("#2ca02c", "^"),
    "uniform": ("#7f7f7f", "D"),
    "copsi": ("#ff7f0e", "P"),
    "psi-sr": ("#9467bd", "v"),
}
ONLINE_ORDER = ("cohv-ucb", "hv-ucb", "acc-cost-ucb", "uniform")
PSI_ORDER = ("copsi", "psi-sr", "uniform")
ERROR_FLOOR = 1e-3  # log10 error is drawn here (hollow marker) when no repetition erred

plt.rcParams.update({"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 7,
                     "xtick.labelsize": 7, "ytick.labelsize": 7, "figure.dpi": 100,
                     "svg.hashsalt": "cabench", "pdf.compression": 6})
_SAVE = {"png": {"dpi": 200, "metadata": {"Software": None}},
         "pdf": {"metadata": {"Creator": None, "Producer": None, "CreationDate": None}}}


def _style(method: str) -> dict:
    colour, marker = STYLE.get(method, ("black", "x"))
    return {"color": colour, "marker": marker, "label": DISPLAY.get(method, method), "markersize": 3.5,
            "linewidth": 1.2}


def landscape_figure(datasets: Sequence[Dataset]):
    """Figure 1: accuracy against efficiency per configuration; size ~ mean tokens; Pareto front."""
    fig, axes = plt.subplots(1, len(datasets), figsize=(3.4 * len(datasets), 2.9), squeeze=False)
    for ax, ds in zip(axes[0], datasets):
        mu = ds.mu
        tokens = ds.tokens_eval.mean(axis=1)
        size = 6 + 60 * (tokens - tokens.min()) / max(tokens.max() - tokens.min(), 1e-9)
        ax.scatter(mu[:, 1], mu[:, 0], s=size, c="#1f77b4", alpha=0.45, edgecolors="none")
        front = pareto_set(mu)
        order = front[np.argsort(mu[front, 1])]
        ax.plot(mu[order, 1], mu[order, 0], color="black", linewidth=1.0, marker="o", markersize=3)
        ids = ds.configs["config_id"].to_numpy()
        for i in order:
            ax.annotate(ids[i], (mu[i, 1], mu[i, 0]), fontsize=4.5, xytext=(2, 2), textcoords="offset points")
        title = ds.meta.get("title", ds.name)
        ax.set_title(f"{title} (K={ds.n_arms}, |P*|={len(front)})" + (" — surrogate logs" if ds.surrogate else ""))
        ax.set_xlabel("efficiency (normalised inverse latency)")
        ax.set_ylabel("accuracy")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def save(fig, stem: Path, formats: Sequence[str]) -> list[Path]:
    out = []
    for fmt in formats:
        if fmt not in _SAVE:
            raise CabenchError(f"--format: '{fmt}' is not one of {', '.join(_SAVE)}")
        path = stem.with_suffix(f".{fmt}")
        fig.savefig(path, format=fmt, bbox_inches="tight", **_SAVE[fmt])
        out.append(path)
    plt.close(fig)
    return out


def _mean_panel(ax, runs: pd.DataFrame, column: str, ylabel: str, methods: Sequence[str]) -> None:
    """Mean of ``column`` against log2 B per method, with a 95% band over repetitions."""
    for method in methods:
        g = runs[runs["method"] == method]
        if g.empty:
            continue
        stats = [(b, *mean_se(gg[column])) for b, gg in g.groupby("budget_tokens")]
        b, m, se = map(np.array, zip(*stats))
        x = np.log2(b)
        ax.plot(x, m, **_style(method))
        ax.fill_between(x, m - Z95 * se, m + Z95 * se, color=_style(method)["color"], alpha=0.18, linewidth=0)
    ax.set_xlabel(r"$\log_2 B$ (tokens)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


def _error_panel(ax, runs: pd.DataFrame) -> None:
    for method in PSI_ORDER:
        g = runs[runs["method"] == method]
        if g.empty:
            continue
        x, y, lo, hi, zero = [], [], [], [], []
        for b, gg in g.groupby("budget_tokens"):
            k, n = int(gg["error"].sum()), len(gg)
            low, high = wilson(k, n)
            x.append(math.log2(b))
            y.append(max(k / n, ERROR_FLOOR))
            lo.append(max(low, ERROR_FLOOR))
            hi.append(max(high, ERROR_FLOOR))
            zero.append(k == 0)
        x, y, lo, hi, zero = map(np.array, (x, y, lo, hi, zero))
        style = _style(method)
        ax.plot(x, np.log10(y), **style)
        ax.fill_between(x, np.log10(lo), np.log10(hi), color=style["color"], alpha=0.18, linewidth=0)
        if zero.any():
            ax.plot(x[zero], np.log10(y[zero]), linestyle="none", marker=style["marker"], markersize=6,
                    markerfacecolor="white", markeredgecolor=style["color"])
    ax.axhline(math.log10(ERROR_FLOOR), color="black", linewidth=0.5, linestyle=":")
    ax.set_xlabel(r"$\log_2 B$ (tokens)")
    ax.set_ylabel(r"$\log_{10}$ P(error)  (floor: no error)")
    ax.grid(alpha=0.3)


def _surrogate_note(fig, surrogate: bool) -> None:
    if surrogate:
        fig.text(0.5, -0.02, "surrogate logs calibrated to the paper's published statistics (not the paper's data)",
                 ha="center", fontsize=6, style="italic")


def _by_dataset(runs: pd.DataFrame | None) -> dict[str, pd.DataFrame]:
    return {} if runs is None else {name: g for name, g in runs.groupby("dataset", sort=True)}


def _row(panels: int, height: float = 2.5):
    return plt.subplots(1, panels, figsize=(3.0 * panels, height), squeeze=False)


def _title(ax, name: str, what: str) -> None:
    ax.set_title(f"{name.upper()}: {what}")


def _regret_figure(res: ResultSet, column: str, label: str, with_identification: bool):
    """Figures 2 and 3: regret against log2 B, and (Fig. 2c-d) the subset's identification error."""
    online = _by_dataset(res.online)
    subset = _by_dataset(res.psi.get("subset")) if with_identification else {}
    if not online:
        return None
    fig, axes = _row(len(online) + len(subset))
    for ax, (name, runs) in zip(axes[0], online.items()):
        _mean_panel(ax, runs, column, label, ONLINE_ORDER)
        _title(ax, name, "online selection")
    for ax, (name, runs) in zip(axes[0][len(online):], subset.items()):
        _error_panel(ax, runs[runs["cost_mode"] == "deterministic"])
        _title(ax, name, "Pareto identification (14 arms)")
    return fig, axes[0]


def _trajectory_figure(res: ResultSet):
    """Figure 4: cumulative regret and the moving-average gap against consumed tokens."""
    data = _by_dataset(res.trajectories)
    if not data:
        return None
    fig, axes = plt.subplots(len(data), 2, figsize=(6.4, 2.4 * len(data)), squeeze=False)
    for row, (name, g) in zip(axes, data.items()):
        for method in ONLINE_ORDER:
            t = g[g["method"] == method]
            if t.empty:
                continue
            style = {**_style(method), "marker": None}
            x = t["tokens"].to_numpy()
            for ax, col in ((row[0], "cum_regret"), (row[1], "moving_avg")):
                m, se = t[f"{col}_mean"].to_numpy(), t[f"{col}_se"].to_numpy()
                ax.plot(x, m, **style)
                ax.fill_between(x, m - Z95 * se, m + Z95 * se, color=style["color"], alpha=0.15, linewidth=0)
        rho = g["rho"].iloc[0]
        row[0].set_title(f"{name.upper()} (rho={rho:g}): cumulative regret")
        row[1].set_title(f"{name.upper()} (rho={rho:g}): 50-pull moving average of the gap")
        for ax in row:
            ax.set_xlabel("consumed tokens")
            ax.grid(alpha=0.3)
    return fig, axes[0]


def _f1_figure(res: ResultSet):
    """Figure 5: Pareto F1 on the full sets against log2 B."""
    full = _by_dataset(res.psi.get("full"))
    if not full:
        return None
    fig, axes = _row(len(full))
    for ax, (name, runs) in zip(axes[0], full.items()):
        _mean_panel(ax, runs, "f1", "Pareto F1", PSI_ORDER)
        _title(ax, name, f"full set (K={len(str(runs['samples'].iloc[0]).split(';'))})")
    return fig, axes[0]


def _cost_mode_figure(res: ResultSet):
    """Figure 6: error with deterministic against realised costs at the largest budget, Wilson intervals."""
    from matplotlib.patches import Patch

    stochastic = _by_dataset(res.psi.get("stochastic"))
    if not stochastic:
        return None
    fig, axes = _row(len(stochastic))
    width = 0.38
    for ax, (name, runs) in zip(axes[0], stochastic.items()):
        rho = runs["rho"].max()
        runs = runs[runs["rho"] == rho]
        for pos, method in enumerate(PSI_ORDER):
            for shift, mode, hatch in ((-width / 2, "deterministic", None), (width / 2, "stochastic", "///")):
                g = runs[(runs["method"] == method) & (runs["cost_mode"] == mode)]
                if g.empty:
                    continue
                k, n = int(g["error"].sum()), len(g)
                lo, hi = wilson(k, n)
                p = k / n
                ax.bar(pos + shift, p, width, color=STYLE[method][0], alpha=0.85 if hatch is None else 0.45,
                       hatch=hatch, edgecolor="black", linewidth=0.4)
                ax.errorbar(pos + shift, p, yerr=[[max(p - lo, 0.0)], [max(hi - p, 0.0)]], color="black",
                            capsize=2, linewidth=0.8)
        ax.set_xticks(range(len(PSI_ORDER)), [DISPLAY[m] for m in PSI_ORDER])
        ax.set_ylabel("P(error), 95% Wilson")
        _title(ax, name, f"14 arms, rho={rho:g}")
        ax.grid(alpha=0.3, axis="y")
    fig.legend([Patch(facecolor="white", edgecolor="black"), Patch(facecolor="white", edgecolor="black", hatch="///")],
               ["deterministic costs", "realised (stochastic) costs"], loc="lower center", ncol=2,
               bbox_to_anchor=(0.5, 1.0), frameon=False)
    return fig, []  # its legend is drawn above


def plot_results(root: Path, formats: Sequence[str]) -> list[Path]:
    """Draw every figure the result files under ``root`` allow; return the files written."""
    for fmt in formats:
        if fmt not in _SAVE:
            raise CabenchError(f"--format: '{fmt}' is not one of {', '.join(_SAVE)}")
    res = ResultSet(root)
    written: list[Path] = []
    datasets = res.dataset_folders()
    if datasets:
        written += save(landscape_figure([load_dataset(path, split) for path, split in datasets]),
                        root / "fig1_landscapes", formats)
    figures = {
        "fig2_online_regret": _regret_figure(res, "regret_hv", r"HV-efficiency regret $R^{HV}_B$", True),
        "fig3_standard_regret": _regret_figure(res, "regret_std", r"standard HV regret $R^{std}_B$", False),
        "fig4_trajectories": _trajectory_figure(res),
        "fig5_full_f1": _f1_figure(res),
        "fig6_cost_modes": _cost_mode_figure(res),
    }
    for stem, drawn in figures.items():
        if drawn is None:
            continue
        fig, legend_axes = drawn
        _legend(fig, legend_axes)
        _surrogate_note(fig, res.surrogate)
        fig.tight_layout()
        written += save(fig, root / stem, formats)
    return written


def _legend(fig, axes) -> None:
    handles, labels = {}, []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    if handles:
        fig.legend([handles[lab] for lab in labels], labels, loc="lower center", ncol=len(labels),
                   bbox_to_anchor=(0.5, 1.0), frameon=False)
