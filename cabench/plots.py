"""Figures from result folders only (SPEC §7); every label, K, budget and window from the data.

For every experiment :func:`plot_results` draws, into ``ROOT/figures/``, its
landscape (from ``arms.csv``; a panel per pair of objectives for three or four),
each metric against budget (online: both regrets; identification: error and F1,
every cost mode) and, where recorded, its trajectories; captions name the
objectives and the cost unit. The paper's layouts (``ROOT/fig1_landscapes`` …
``fig6_cost_modes``) are drawn only from experiments recorded as the paper's
own (``paper_experiment`` in ``config.yaml``). ``ROOT/figures.csv`` lists every
file drawn with its caption; the report reads it.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from cabench import registry  # noqa: E402
from cabench.errors import CabenchError  # noqa: E402
from cabench.record import objective_columns  # noqa: E402
from cabench.results import Experiment, ResultSet  # noqa: E402
from cabench.stats import Z95, mean_se, wilson  # noqa: E402
from cabench.units import LABELS  # noqa: E402

MODE_LINE = {"deterministic": "-", "stochastic": "--"}
ERROR_FLOOR = 1e-3  # log10 error is drawn here (hollow marker) when no repetition erred
FORMATS = ("png", "pdf", "svg")

plt.rcParams.update({"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 7,
                     "xtick.labelsize": 7, "ytick.labelsize": 7, "figure.dpi": 100, "figure.titlesize": 8,
                     "svg.hashsalt": "cabench", "pdf.compression": 6})
_SAVE: dict[str, dict[str, Any]] = {"png": {"dpi": 200, "metadata": {"Software": None}},
         "pdf": {"metadata": {"Creator": None, "Producer": None, "CreationDate": None}},
         "svg": {"metadata": {"Date": None, "Creator": None}}}


def literal_text(draw: Callable) -> Callable:
    """Run ``draw`` with mathtext off: names and titles are drawn as written, ``$`` and all.

    cabench's own axis labels ask for mathtext one by one (``parse_math=True``).
    """
    @functools.wraps(draw)
    def drawn(*args, **kwargs):
        with plt.rc_context({"text.parse_math": False}):
            return draw(*args, **kwargs)
    return drawn


@dataclass(frozen=True)
class Drawn:
    """A figure written: its file stem (relative to the results root), caption and experiments."""

    stem: str
    caption: str
    experiments: str


def _style(method: str) -> dict:
    colour, marker = registry.style(method)
    return {"color": colour, "marker": marker, "label": registry.display(method), "markersize": 3.5,
            "linewidth": 1.2}


def slug(text: str) -> str:
    """A file-name-safe form of an experiment label."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "experiment"


def check_formats(formats: Sequence[str]) -> list[str]:
    formats = [f for f in formats if f]
    if not formats:
        raise CabenchError(f"--format: give at least one of {', '.join(FORMATS)}")
    for fmt in formats:
        if fmt not in _SAVE:
            raise CabenchError(f"--format: '{fmt}' is not one of {', '.join(FORMATS)}")
    return formats


@literal_text
def save(fig, stem: Path, formats: Sequence[str]) -> list[Path]:
    out = []
    stem.parent.mkdir(parents=True, exist_ok=True)
    for fmt in check_formats(formats):
        path = stem.with_suffix(f".{fmt}") if stem.suffix != f".{fmt}" else stem
        fig.savefig(path, format=fmt, bbox_inches="tight", **_SAVE[fmt])
        out.append(path)
    plt.close(fig)
    return out


def band_note(e: Experiment, kind: str) -> str:
    n = e.repetitions
    if kind == "mean":
        return f"bands: mean ± 95% CI (normal) over {n} repetitions"
    return f"bands: 95% Wilson interval over {n} repetitions"


# --- panels ------------------------------------------------------------------------------------------

def _cost_sizes(arms: pd.DataFrame) -> np.ndarray:
    """Marker areas growing with each arm's profiling cost ``c_i``."""
    cost = arms["profile_cost"].to_numpy(float)
    return 6 + 60 * (cost - cost.min()) / max(cost.max() - cost.min(), 1e-9)


def _name_arms(ax, arms: pd.DataFrame, x: np.ndarray, y: np.ndarray, which: np.ndarray) -> None:
    ids = arms["config_id"].astype(str).to_numpy()
    for i in which:
        ax.annotate(ids[i], (x[i], y[i]), fontsize=4.5, xytext=(2, 2), textcoords="offset points")


def landscape_panel(ax, arms: pd.DataFrame, title: str, objectives: Sequence[str]) -> None:
    """Figure 1 panel: first objective against the second per arm; size ~ cost; Pareto front labelled."""
    cols = objective_columns(arms)
    y = arms[cols[0]].to_numpy(float)
    x = arms[cols[1]].to_numpy(float) if len(cols) > 1 else arms["arm"].to_numpy(float)
    ax.scatter(x, y, s=_cost_sizes(arms), c="#1f77b4", alpha=0.45, edgecolors="none")
    front = np.flatnonzero(arms["pareto"].to_numpy() == 1)
    order = front[np.argsort(x[front])]
    ax.plot(x[order], y[order], color="black", linewidth=1.0, marker="o", markersize=3)
    _name_arms(ax, arms, x, y, order)
    ax.set_title(title)
    names = list(objectives)
    ax.set_xlabel(f"mean {names[1]}" if len(cols) > 1 else "arm")
    ax.set_ylabel(f"mean {names[0]}")
    ax.grid(alpha=0.3)


def objective_pairs(d: int) -> list[tuple[int, int]]:
    """The (vertical, horizontal) objectives of a landscape's panels: Figure 1's one panel for D <= 2, every pair
    of objectives, D(D-1)/2 panels, for more."""
    return [(0, 1)] if d <= 2 else list(itertools.combinations(range(d), 2))


def normalised_label(name: str) -> str:
    """An axis of normalised means: every objective is scaled so that larger is better (SPEC §2)."""
    return f"{name} (normalised, ↑ better)"


def pair_panel(ax, arms: pd.DataFrame, pair: tuple[int, int], objectives: Sequence[str]) -> None:
    """One pairwise landscape panel (three or four objectives): objective ``pair[0]`` against ``pair[1]`` per arm;
    size ~ cost; the Pareto set of all objectives drawn black and labelled, not joined (a projection of it is no
    front)."""
    cols = objective_columns(arms)
    y, x = (arms[cols[d]].to_numpy(float) for d in pair)
    ax.scatter(x, y, s=_cost_sizes(arms), c="#1f77b4", alpha=0.45, edgecolors="none")
    front = np.flatnonzero(arms["pareto"].to_numpy() == 1)
    ax.plot(x[front], y[front], color="black", linestyle="none", marker="o", markersize=3)
    _name_arms(ax, arms, x, y, front)
    ax.set_ylabel(normalised_label(objectives[pair[0]]))
    ax.set_xlabel(normalised_label(objectives[pair[1]]))
    ax.grid(alpha=0.3)


def landscape_panels(axes: Sequence, arms: pd.DataFrame, title: str, objectives: Sequence[str]) -> None:
    """The landscape of ``arms`` on the first :func:`objective_pairs` of ``axes``: Figure 1's panel for two
    objectives, a panel per pair for three or four (the first titled); axes left over are hidden."""
    names = list(objectives)
    pairs = objective_pairs(len(names))
    if len(names) <= 2:
        landscape_panel(axes[0], arms, title, names)
    else:
        for ax, pair in zip(axes, pairs):
            pair_panel(ax, arms, pair, names)
        axes[0].set_title(title)
    for ax in axes[len(pairs):]:
        ax.set_visible(False)


def landscape_note(d: int, unit: str) -> str:
    """What a landscape of three or four objectives shows."""
    return (f"one panel per pair of objectives; marker size ~ profiling cost ({LABELS[unit]} per call); black: "
            f"Pareto set of all {d} objectives")


def _landscape_grid(counts: Sequence[int], height: float):
    """A figure holding landscapes of ``counts`` panels each, every landscape in rows of up to three panels;
    the figure and each landscape's axes."""
    if max(counts) == 1:  # Figure 1's layout: one panel per landscape, side by side
        fig, axes = _panels(len(counts), height)
        return fig, [[ax] for ax in axes[0]]
    width = min(max(counts), 3)
    rows = [math.ceil(c / width) for c in counts]
    fig, grid = plt.subplots(sum(rows), width, figsize=(3.0 * width, height * sum(rows)), squeeze=False)
    starts = np.cumsum([0, *rows])
    return fig, [list(grid[a:b].flat) for a, b in zip(starts[:-1], starts[1:])]


def _band(ax, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, mid: np.ndarray, colour: str) -> None:
    """A shaded band, or error bars where there is a single budget (a band would be invisible)."""
    if len(x) > 1:
        ax.fill_between(x, lo, hi, color=colour, alpha=0.15, linewidth=0)
    else:
        ax.errorbar(x, mid, yerr=[mid - lo, hi - mid], color=colour, capsize=2, linewidth=0.8, linestyle="none")


def _mean_panel(ax, runs: pd.DataFrame, column: str, ylabel: str, methods: Sequence[str],
                linestyle: str = "-", suffix: str = "", unit: str = "tokens") -> None:
    """Mean of ``column`` against log2 B per method, with a normal 95% band over repetitions."""
    for method in methods:
        g = runs[runs["method"] == method]
        if g.empty:
            continue
        stats = [(b, *mean_se(gg[column])) for b, gg in g.groupby("budget")]
        b, m, se = map(np.array, zip(*stats))
        x = np.log2(b)
        style = _style(method)
        ax.plot(x, m, **{**style, "label": style["label"] + suffix, "linestyle": linestyle})
        _band(ax, x, m - Z95 * se, m + Z95 * se, m, style["color"])
    ax.set_xlabel(rf"$\log_2 B$ ({LABELS[unit]})", parse_math=True)
    ax.set_ylabel(ylabel, parse_math=True)
    ax.grid(alpha=0.3)


def _error_panel(ax, runs: pd.DataFrame, methods: Sequence[str], linestyle: str = "-", suffix: str = "",
                 unit: str = "tokens") -> None:
    """log10 error probability against log2 B with 95% Wilson bands; zero errors drawn hollow at a floor."""
    for method in methods:
        g = runs[runs["method"] == method]
        if g.empty:
            continue
        points = []
        for b, gg in g.groupby("budget"):
            k, n = int(gg["error"].sum()), len(gg)
            low, high = wilson(k, n)
            points.append((math.log2(b), max(k / n, ERROR_FLOOR), max(low, ERROR_FLOOR), max(high, ERROR_FLOOR),
                           k == 0))
        x, y, lo, hi, zero = (np.array(column) for column in zip(*points))
        style = _style(method)
        ax.plot(x, np.log10(y), **{**style, "label": style["label"] + suffix, "linestyle": linestyle})
        _band(ax, x, np.log10(lo), np.log10(hi), np.log10(y), style["color"])
        if zero.any():
            ax.plot(x[zero], np.log10(y[zero]), linestyle="none", marker=style["marker"], markersize=6,
                    markerfacecolor="white", markeredgecolor=style["color"])
    ax.axhline(math.log10(ERROR_FLOOR), color="black", linewidth=0.5, linestyle=":")
    ax.set_xlabel(rf"$\log_2 B$ ({LABELS[unit]})", parse_math=True)
    ax.set_ylabel(r"$\log_{10}$ P(error)  (dotted floor: no error)", parse_math=True)
    ax.grid(alpha=0.3)


def _categorical_panel(ax, e: Experiment, metric: str) -> None:
    """Error (Wilson) or F1 (mean, normal CI) per method and cost mode at an experiment's single budget."""
    modes = e.cost_modes
    width = 0.8 / len(modes)
    for pos, method in enumerate(e.methods):
        style = _style(method)
        for j, mode in enumerate(modes):
            g = e.runs[(e.runs["method"] == method) & (e.runs["cost_mode"] == mode)]
            if g.empty:
                continue
            if metric == "error":
                k, n = int(g["error"].sum()), len(g)
                mid, (lo, hi) = k / n, wilson(k, n)
            else:
                mid, se = mean_se(g["f1"])
                lo, hi = mid - Z95 * se, mid + Z95 * se
            x = pos + (j - (len(modes) - 1) / 2) * width
            face = style["color"] if j == 0 else "white"
            label = style["label"] + (f" ({mode})" if len(modes) > 1 else "")
            ax.errorbar([x], [mid], yerr=[[mid - lo], [hi - mid]], color=style["color"], marker=style["marker"],
                        markerfacecolor=face, capsize=2, linewidth=0.8, linestyle="none", label=label)
    ax.set_xticks(range(len(e.methods)), [registry.display(m) for m in e.methods])
    ax.set_ylabel("P(error), 95% Wilson" if metric == "error" else "Pareto F1, mean ± 95% CI")
    ax.set_xlabel(f"ρ={e.rho_grid[0]:g}" + ("; filled: " + modes[0] + ", hollow: " + ", ".join(modes[1:])
                                             if len(modes) > 1 else ""))
    ax.grid(alpha=0.3, axis="y")


def _trajectory_rho(e: Experiment) -> float:
    """The budget an experiment's trajectories were recorded at."""
    assert e.trajectories is not None
    return float(e.trajectories["rho"].iloc[0])


def _trajectory_panels(axes, e: Experiment) -> None:
    t_all = e.trajectories
    assert t_all is not None  # drawn only for experiments with trajectories
    for method in e.methods:
        t = t_all[t_all["method"] == method]
        if t.empty:
            continue
        style = {**_style(method), "marker": None}
        x = t["spend"].to_numpy()
        for ax, col in zip(axes, ("cum_regret", "moving_avg")):
            m, se = t[f"{col}_mean"].to_numpy(), t[f"{col}_se"].to_numpy()
            ax.plot(x, m, **style)
            ax.fill_between(x, m - Z95 * se, m + Z95 * se, color=style["color"], alpha=0.15, linewidth=0)
    rho = _trajectory_rho(e)
    axes[0].set_title(f"{e.label}: cumulative R_HV (ρ={rho:g})")
    axes[1].set_title(f"{e.label}: {e.window}-pull moving average of the gap (ρ={rho:g})")
    for ax in axes:
        ax.set_xlabel(f"consumed {LABELS[e.cost_unit]}")
        ax.grid(alpha=0.3)


def _legend(fig, axes) -> None:
    handles, labels = {}, []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    if handles:
        fig.legend([handles[lab] for lab in labels], labels, loc="lower center", ncol=min(len(labels), 6),
                   bbox_to_anchor=(0.5, 1.0), frameon=False)


def _finish(fig, axes, surrogate: bool, title: str | None = None) -> None:
    _legend(fig, axes)
    notes = []
    if title:
        notes.append(title)
    if surrogate:
        notes.append("surrogate logs calibrated to the paper's published statistics (not the paper's data)")
    fig.tight_layout()
    if notes:
        fig.text(0.5, -0.01, "\n".join(notes), ha="center", va="top", fontsize=6, style="italic")


def dataset_arms(ds) -> pd.DataFrame:
    """An ``arms.csv``-like table of every configuration of a dataset (for ``cabench data landscape``)."""
    from cabench.pareto import pareto_mask

    mu = ds.mu
    return pd.DataFrame({"arm": np.arange(ds.n_arms), "config_id": ds.configs["config_id"].to_numpy(),
                         **{f"mu_{o.name}": mu[:, d] for d, o in enumerate(ds.norm.objectives)},
                         "profile_cost": ds.profile_cost,
                         "pareto": pareto_mask(mu).astype(int)})


@literal_text
def landscape_figure(datasets: Sequence) -> object:
    """Figure 1 from dataset folders: one landscape panel per dataset (a row of panels per pair of objectives for a
    dataset loaded on three or four)."""
    objectives = [tuple(o.name for o in ds.norm.objectives) for ds in datasets]
    fig, axes = _landscape_grid([len(objective_pairs(len(names))) for names in objectives], 2.9)
    notes = []
    for row, ds, names in zip(axes, datasets, objectives):
        arms = dataset_arms(ds)
        title = str(ds.meta.get("title", ds.name))
        landscape_panels(row, arms, f"{title} (K={ds.n_arms}, |P*|={int(arms['pareto'].sum())})", names)
        if len(names) > 2:
            notes.append(f"{title}: {landscape_note(len(names), ds.norm.cost_unit)}")
    _finish(fig, [], any(ds.surrogate for ds in datasets), "; ".join(notes) or None)
    return fig


# --- one experiment ------------------------------------------------------------------------------------

@literal_text
def experiment_figures(e: Experiment) -> list[tuple[str, object, str]]:
    """(name, figure, caption) of every figure of one experiment."""
    out: list[tuple[str, object, str]] = []
    ident = e.describe()
    terms = f"objectives: {', '.join(e.objectives)}; costs and budgets in {LABELS[e.cost_unit]}"
    front = int(e.arms["pareto"].sum())
    title = f"{e.title}: K={e.k}, |P*|={front}"
    if len(e.objectives) <= 2:
        fig, ax = plt.subplots(figsize=(3.6, 3.0))
        landscape_panel(ax, e.arms, title, e.objectives)
        _finish(fig, [], e.surrogate, f"{e.label}: marker size ~ profiling cost; black: Pareto front")
        shows = "black line: Pareto front of the experiment's arms"
    else:
        shows = landscape_note(len(e.objectives), e.cost_unit)
        fig, (axes,) = _landscape_grid([len(objective_pairs(len(e.objectives)))], 3.0)
        landscape_panels(axes, e.arms, title, e.objectives)
        _finish(fig, [], e.surrogate, f"{e.label}: {shows}")
    out.append(("landscape", fig, f"{e.label}: configuration landscape of {e.title} (K={e.k}, |P*|={front}; "
                                  f"{shows}); {terms}"))
    if e.setting == "online":
        fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.6), squeeze=False)
        _mean_panel(axes[0][0], e.runs, "regret_hv", r"HV-efficiency regret $R^{HV}_B$", e.methods, unit=e.cost_unit)
        _mean_panel(axes[0][1], e.runs, "regret_std", r"standard HV regret $R^{std}_B$", e.methods, unit=e.cost_unit)
        axes[0][0].set_title(f"{e.label}: R_HV")
        axes[0][1].set_title(f"{e.label}: R_std")
        _finish(fig, axes[0], e.surrogate, f"{ident}; {band_note(e, 'mean')}")
        out.append(("regret", fig, f"{ident}: HV-efficiency and standard regret against log2 B; "
                                   f"{band_note(e, 'mean')}; {terms}"))
        if e.trajectories is not None:
            rho = float(e.trajectories["rho"].iloc[0])
            fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.6), squeeze=False)
            _trajectory_panels(axes[0], e)
            _finish(fig, axes[0], e.surrogate, f"{ident}; {band_note(e, 'mean')}")
            out.append(("trajectories", fig, f"{e.label}: cumulative R_HV and the {e.window}-pull moving average "
                                             f"of the per-pull gap at ρ={rho:g}; {band_note(e, 'mean')}; {terms}"))
    else:
        fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.6), squeeze=False)
        if len(e.rho_grid) == 1:  # one budget: methods side by side, not a curve
            _categorical_panel(axes[0][0], e, "error")
            _categorical_panel(axes[0][1], e, "f1")
        else:
            for mode in e.cost_modes:
                runs = e.runs[e.runs["cost_mode"] == mode]
                suffix = f" ({mode})" if len(e.cost_modes) > 1 else ""
                _error_panel(axes[0][0], runs, e.methods, MODE_LINE.get(mode, "-."), suffix, e.cost_unit)
                _mean_panel(axes[0][1], runs, "f1", "Pareto F1", e.methods, MODE_LINE.get(mode, "-."), suffix,
                            e.cost_unit)
        axes[0][0].set_title(f"{e.label}: P(error), K={e.k}")
        axes[0][1].set_title(f"{e.label}: Pareto F1, K={e.k}")
        modes = ", ".join(e.cost_modes)
        _finish(fig, axes[0], e.surrogate, f"{ident}; cost modes: {modes}; error: 95% Wilson interval, "
                                           f"F1: mean ± 95% CI (normal)")
        against = "against log2 B" if len(e.rho_grid) > 1 else f"per method at ρ={e.rho_grid[0]:g}"
        out.append(("identification", fig, f"{ident}: identification error and Pareto F1 {against}, "
                                           f"cost modes {modes}; error bands: 95% Wilson interval, F1 bands: "
                                           f"mean ± 95% CI over {e.repetitions} repetitions; {terms}"))
    return out


# --- the paper's layouts (only for experiments recorded as the paper's) ---------------------------------

def _panels(n: int, height: float = 2.5):
    return plt.subplots(1, n, figsize=(3.0 * n, height), squeeze=False)


@literal_text
def _paper_figures(experiments: list[Experiment]) -> list[tuple[str, object, str, list[Experiment]]]:
    def paper(role: str) -> list[Experiment]:
        return sorted((e for e in experiments if e.paper_role == role), key=lambda e: (e.dataset_name, e.name))

    out = []
    online, subset = paper("online"), paper("psi-subset")
    full, stochastic = paper("psi-full"), paper("psi-stochastic")
    wide: dict[str, Experiment] = {}
    for e in online + full:
        wide.setdefault(e.dataset_name, e)
    if wide:
        fig, axes = _panels(len(wide), 2.9)
        for ax, e in zip(axes[0], wide.values()):
            landscape_panel(ax, e.arms, f"{e.title} (K={e.k}, |P*|={int(e.arms['pareto'].sum())})", e.objectives)
        _finish(fig, [], any(e.surrogate for e in wide.values()))
        out.append(("fig1_landscapes", fig, "Figure 1: configuration landscapes ("
                    + "; ".join(f"{e.title}, K={e.k}" for e in wide.values()) + "); black: Pareto front",
                    list(wide.values())))
    for stem, column, label, with_subset in (("fig2_online_regret", "regret_hv", r"HV-efficiency regret $R^{HV}_B$",
                                              True),
                                             ("fig3_standard_regret", "regret_std", r"standard HV regret $R^{std}_B$",
                                              False)):
        parts = online + (subset if with_subset else [])
        if not online:
            continue
        fig, axes = _panels(len(parts))
        for ax, e in zip(axes[0], online):
            _mean_panel(ax, e.runs, column, label, e.methods, unit=e.cost_unit)
            ax.set_title(f"{e.title}: online, K={e.k} ({e.label})")
        for ax, e in zip(axes[0][len(online):], parts[len(online):]):
            _error_panel(ax, e.runs[e.runs["cost_mode"] == "deterministic"], e.methods, unit=e.cost_unit)
            ax.set_title(f"{e.title}: Pareto identification, K={e.k} ({e.label})")
        letters = "abcdefghijklmnop"
        spans = [f"({letters[i]}) {e.label}" for i, e in enumerate(parts)]
        bands = "; ".join(f"{e.label}: {band_note(e, 'mean' if e.setting == 'online' else 'wilson')}" for e in parts)
        _finish(fig, axes[0], any(e.surrogate for e in parts), bands)
        what = "HV-efficiency regret" if column == "regret_hv" else "standard hypervolume regret"
        caption = (f"Figure {stem[3]}: {what} against log2 B" + (
            " and log10 identification error on the paper's 14-arm subset" if len(parts) > len(online) else "")
            + " — " + ", ".join(spans) + f"; {bands}")
        out.append((stem, fig, caption, parts))
    traj = [e for e in online if e.trajectories is not None]
    if traj:
        fig, axes = plt.subplots(len(traj), 2, figsize=(6.4, 2.4 * len(traj)), squeeze=False)
        for row, e in zip(axes, traj):
            _trajectory_panels(row, e)
        _finish(fig, axes[0], any(e.surrogate for e in traj),
                "; ".join(f"{e.label}: {band_note(e, 'mean')}" for e in traj))
        out.append(("fig4_trajectories", fig, "Figure 4: online trajectories — " + "; ".join(
            f"{e.label} at ρ={_trajectory_rho(e):g}, {e.window}-pull moving average, "
            f"{band_note(e, 'mean')}" for e in traj), traj))
    if full:
        fig, axes = _panels(len(full))
        for ax, e in zip(axes[0], full):
            _mean_panel(ax, e.runs[e.runs["cost_mode"] == "deterministic"], "f1", "Pareto F1", e.methods,
                        unit=e.cost_unit)
            ax.set_title(f"{e.title}: full set, K={e.k} ({e.label})")
        _finish(fig, axes[0], any(e.surrogate for e in full),
                "; ".join(f"{e.label}: {band_note(e, 'mean')}" for e in full))
        out.append(("fig5_full_f1", fig, "Figure 5: Pareto F1 on the full configuration sets against log2 B — "
                    + "; ".join(f"{e.label} (K={e.k}), {band_note(e, 'mean')}" for e in full), full))
    if stochastic:
        out.append(_cost_mode_figure(stochastic))
    return out


def _cost_mode_figure(experiments: list[Experiment]):
    """Figure 6: error with deterministic against realised costs at each experiment's largest budget."""
    from matplotlib.patches import Patch

    fig, axes = _panels(len(experiments))
    width = 0.38
    for ax, e in zip(axes[0], experiments):
        rho = max(e.rho_grid)
        runs = e.runs[e.runs["rho"] == rho]
        for pos, method in enumerate(e.methods):
            for shift, mode, hatch in ((-width / 2, "deterministic", None), (width / 2, "stochastic", "///")):
                g = runs[(runs["method"] == method) & (runs["cost_mode"] == mode)]
                if g.empty:
                    continue
                k, n = int(g["error"].sum()), len(g)
                lo, hi = wilson(k, n)
                p = k / n
                ax.bar(pos + shift, p, width, color=registry.style(method)[0],
                       alpha=0.85 if hatch is None else 0.45, hatch=hatch, edgecolor="black", linewidth=0.4)
                ax.errorbar(pos + shift, p, yerr=[[max(p - lo, 0.0)], [max(hi - p, 0.0)]], color="black",
                            capsize=2, linewidth=0.8)
        ax.set_xticks(range(len(e.methods)), [registry.display(m) for m in e.methods])
        ax.set_ylabel("P(error), 95% Wilson")
        ax.set_title(f"{e.title}: K={e.k}, ρ={rho:g} ({e.label})")
        ax.grid(alpha=0.3, axis="y")
    fig.legend([Patch(facecolor="white", edgecolor="black"), Patch(facecolor="white", edgecolor="black", hatch="///")],
               ["deterministic costs", "realised (stochastic) costs"], loc="lower center", ncol=2,
               bbox_to_anchor=(0.5, 1.0), frameon=False)
    notes = "; ".join(f"{e.label}: {band_note(e, 'wilson')}" for e in experiments)
    _finish(fig, [], any(e.surrogate for e in experiments), notes)
    caption = "Figure 6: deterministic against realised (stochastic) token costs — " + "; ".join(
        f"{e.label} (K={e.k}, ρ={max(e.rho_grid):g})" for e in experiments) + f"; {notes}"
    return "fig6_cost_modes", fig, caption, experiments


def _draw_experiment(e: Experiment, root: Path, formats: Sequence[str]) -> list[tuple[Drawn, list[Path]]]:
    out = []
    for name, fig, caption in experiment_figures(e):
        stem = f"figures/{slug(e.label)}_{name}"
        out.append((Drawn(stem, caption, e.label), save(fig, root / stem, formats)))
    return out


def _draw_paper(experiments: list[Experiment], root: Path, formats: Sequence[str]) -> list[tuple[Drawn, list[Path]]]:
    return [(Drawn(stem, caption, "; ".join(e.label for e in parts)), save(fig, root / stem, formats))
            for stem, fig, caption, parts in _paper_figures(experiments)]


def _draw(subject: Experiment | list[Experiment], root: Path, formats: Sequence[str]
          ) -> list[tuple[Drawn, list[Path]]]:
    """One experiment's figures, or (given every experiment) the paper's figures."""
    if isinstance(subject, list):
        return _draw_paper(subject, root, formats)
    return _draw_experiment(subject, root, formats)


def plot_results(root: Path, formats: Sequence[str], n_jobs: int = 1) -> list[Path]:
    """Draw every figure the results under ``root`` allow; return the files written.

    Figures are drawn by ``n_jobs`` processes (the files do not depend on it).
    Writes ``ROOT/figures.csv`` (file stem, caption, experiments) beside them.
    """
    import dataclasses

    from cabench.backends import Backend, parallel_map

    formats = check_formats(formats)
    res = ResultSet(root)
    if res.empty:
        raise CabenchError(f"{root}: no results below this folder; run `cabench run CONFIG` first")
    light = [dataclasses.replace(e, selections=e.selections.iloc[:0]) for e in res.experiments]  # not drawn
    subjects: list[Experiment | list[Experiment]] = [*light, light]
    try:
        drawn = list(parallel_map(_draw, [(s, root, formats) for s in subjects], Backend("loky", n_jobs)))
    except OSError as exc:
        raise CabenchError(f"{root}: cannot write figures ({exc.strerror}); pass a writable results folder") \
            from None
    written = [p for part in drawn for _, paths in part for p in paths]
    index = [d for part in drawn for d, _ in part]
    from cabench.storage import to_csv, write_atomic

    table = pd.DataFrame([vars(d) for d in index], columns=["stem", "caption", "experiments"])
    write_atomic(root / "figures.csv", to_csv(table))
    return written
