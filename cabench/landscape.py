"""Configuration landscapes (paper Figure 1): every arm's mean objectives, the Pareto set in black and named.

Marker area grows with an arm's profiling cost ``c_i``; a key below each panel gives two or three reference costs
in the cost unit. Names are placed once the figure's layout is final (:func:`cabench.panels.finish`). For three
or four objectives a landscape is a panel per pair of objectives.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from cabench.panels import ARM_NAME, ARMS, finish, literal_text, marks, shown_names, side_by_side
from cabench.panels import NAME_CHARACTERS as NAME_CHARACTERS
from cabench.paper import SURROGATE_NOTE
from cabench.pareto import pareto_mask
from cabench.record import objective_columns
from cabench.units import LABELS, axis_label

MIN_AREA, AREA_RANGE = 6.0, 60.0  # marker area (points²) of the cheapest arm, and the range up to the dearest
#: The most configurations a landscape panel names: more names than a dozen on a panel three inches wide cannot be
#: read (and placing them took minutes); of a larger Pareto set a panel names those on its own front, evenly along it.
MAX_NAMED = 12


def _area(cost: np.ndarray | float, low: float, high: float) -> np.ndarray:
    """Marker area (points²) of a profiling cost on a landscape whose arms cost from ``low`` to ``high``."""
    return MIN_AREA + AREA_RANGE * (np.asarray(cost, dtype=float) - low) / max(high - low, 1e-9)


def _cost_sizes(arms: pd.DataFrame) -> np.ndarray:
    """Marker areas growing with each arm's profiling cost ``c_i``."""
    cost = arms["profile_cost"].to_numpy(float)
    return _area(cost, cost.min(), cost.max())


def _size_legend(ax, arms: pd.DataFrame, unit: str) -> None:
    """The marker-size key below a landscape panel: two or three reference costs ``c_i`` and their sizes."""
    cost = arms["profile_cost"].to_numpy(float)
    low, high = float(cost.min()), float(cost.max())
    ticks = MaxNLocator(nbins=3, steps=[1, 2, 2.5, 5, 10]).tick_values(low, high)
    refs = list({f"{r:g}": r for r in ticks if low <= r <= high}.values())  # as many as the key can tell apart
    if len(refs) < 2:  # rounded ends, kept inside the costs (arms costing alike: one reference then)
        refs = list({f"{r:g}": r for r in sorted({min(max(float(f"{v:.3g}"), low), high) for v in (low, high)})
                     }.values())
    handles = [Line2D([], [], linestyle="none", marker="o", color="#1f77b4", alpha=0.45, markeredgewidth=0,
                      markersize=math.sqrt(max(float(_area(r, low, high)), MIN_AREA))) for r in refs]
    ax.legend(handles, [f"{r:g}" for r in refs], title=f"marker size: profiling cost c_i, {LABELS[unit]} per call",
              loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=len(refs), frameon=False, fontsize=6,
              title_fontsize=6, handletextpad=0.3, columnspacing=1.2, borderaxespad=0)


def named(x: np.ndarray, y: np.ndarray, which: np.ndarray) -> np.ndarray:
    """The arms of ``which`` a panel names: all of them, up to :data:`MAX_NAMED`; of more, those on the panel's own
    front (larger is better on both axes), at most :data:`MAX_NAMED` of them evenly along it by ``x``."""
    which = np.asarray(which)
    if len(which) <= MAX_NAMED:
        return which
    front = which[pareto_mask(np.column_stack([x[which], y[which]]))]
    front = front[np.argsort(x[front], kind="stable")]
    if len(front) > MAX_NAMED:
        front = front[np.unique(np.round(np.linspace(0, len(front) - 1, MAX_NAMED)).astype(int))]
    return front


def _name_arms(ax, arms: pd.DataFrame, x: np.ndarray, y: np.ndarray, which: np.ndarray) -> None:
    """Name the arms ``which`` at their points (:func:`shown_name`; at most :data:`MAX_NAMED`, :func:`named`);
    :func:`finish` then moves the names apart inside the axes. Where not every one is named, the marker-size key
    below the panel says how many are."""
    ids = arms["config_id"].astype(str).to_numpy()
    shown = named(x, y, which)
    for i, text in zip(shown, shown_names([ids[i] for i in shown])):
        ax.text(x[i], y[i], text, fontsize=4.5, gid=ARM_NAME)
    if len(shown) < len(which):
        key = ax.get_legend()
        key.set_title(f"{key.get_title().get_text()}\nnamed: {len(shown)} of the {len(which)} in black, on this "
                      "panel's own front")


def _scatter(ax, arms: pd.DataFrame, x: np.ndarray, y: np.ndarray, unit: str) -> np.ndarray:
    """Every arm, area ~ its profiling cost, with the size key; the indices of the Pareto arms."""
    ax.scatter(x, y, s=_cost_sizes(arms), c="#1f77b4", alpha=0.45, edgecolors="none", gid=ARMS)
    _size_legend(ax, arms, unit)
    ax.grid(alpha=0.3)
    return np.flatnonzero(arms["pareto"].to_numpy() == 1)


def landscape_panel(ax, arms: pd.DataFrame, title: str, objectives: Sequence[str], unit: str) -> None:
    """Figure 1 panel: first objective against the second per arm; size ~ cost; Pareto front joined and named."""
    cols = objective_columns(arms)
    y = arms[cols[0]].to_numpy(float)
    x = arms[cols[1]].to_numpy(float) if len(cols) > 1 else arms["arm"].to_numpy(float)
    front = _scatter(ax, arms, x, y, unit)
    order = front[np.argsort(x[front])]
    ax.plot(x[order], y[order], color="black", linewidth=1.0, marker="o", markersize=3)
    _name_arms(ax, arms, x, y, order)
    ax.set_title(title)
    names = list(objectives)
    ax.set_xlabel(axis_label(names[1]) if len(cols) > 1 else "arm")
    ax.set_ylabel(axis_label(names[0]))


def objective_pairs(d: int) -> list[tuple[int, int]]:
    """The (vertical, horizontal) objectives of a landscape's panels: Figure 1's one panel for D <= 2, every pair
    of objectives, D(D-1)/2 panels, for more."""
    return [(0, 1)] if d <= 2 else list(itertools.combinations(range(d), 2))


def pair_panel(ax, arms: pd.DataFrame, pair: tuple[int, int], objectives: Sequence[str], unit: str) -> None:
    """One pairwise landscape panel (three or four objectives): objective ``pair[0]`` against ``pair[1]`` per arm;
    size ~ cost; the Pareto set of all objectives drawn black and named, not joined (a projection of it is no
    front)."""
    cols = objective_columns(arms)
    y, x = (arms[cols[d]].to_numpy(float) for d in pair)
    front = _scatter(ax, arms, x, y, unit)
    ax.plot(x[front], y[front], color="black", linestyle="none", marker="o", markersize=3)
    _name_arms(ax, arms, x, y, front)
    ax.set_ylabel(axis_label(objectives[pair[0]]))
    ax.set_xlabel(axis_label(objectives[pair[1]]))


def landscape_panels(axes: Sequence, arms: pd.DataFrame, title: str, objectives: Sequence[str], unit: str
                     ) -> None:
    """The landscape of ``arms`` on the first :func:`objective_pairs` of ``axes``: Figure 1's panel for two
    objectives, a panel per pair for three or four (the first titled); axes left over are hidden."""
    names = list(objectives)
    pairs = objective_pairs(len(names))
    if len(names) <= 2:
        landscape_panel(axes[0], arms, title, names, unit)
    else:
        for ax, pair in zip(axes, pairs):
            pair_panel(ax, arms, pair, names, unit)
        axes[0].set_title(title)
    for ax in axes[len(pairs):]:
        ax.set_visible(False)


def landscape_note(d: int, unit: str) -> str:
    """What a landscape of three or four objectives shows."""
    return (f"one panel per pair of objectives; marker size ~ profiling cost ({LABELS[unit]} per call); black: "
            f"Pareto set of all {d} objectives")


def landscape_grid(counts: Sequence[int], height: float):
    """A figure holding landscapes of ``counts`` panels each, every landscape in rows of up to three panels;
    the figure and each landscape's axes."""
    height += 0.4  # the marker-size key below each row
    if max(counts) == 1:  # Figure 1's layout: one panel per landscape, side by side
        fig, axes = side_by_side(len(counts), height)
        return fig, [[ax] for ax in axes[0]]
    width = min(max(counts), 3)
    rows = [math.ceil(c / width) for c in counts]
    fig, grid = plt.subplots(sum(rows), width, figsize=(3.0 * width, height * sum(rows)), squeeze=False)
    starts = np.cumsum([0, *rows])
    return fig, [list(grid[a:b].flat) for a, b in zip(starts[:-1], starts[1:])]


def dataset_arms(ds) -> pd.DataFrame:
    """An ``arms.csv``-like table of every configuration of a dataset (for ``cabench data landscape``)."""
    mu = ds.mu
    return pd.DataFrame({"arm": np.arange(ds.n_arms), "config_id": ds.configs["config_id"].to_numpy(),
                         **{f"mu_{o.name}": mu[:, d] for d, o in enumerate(ds.norm.objectives)},
                         "profile_cost": ds.profile_cost,
                         "pareto": pareto_mask(mu).astype(int)})


@literal_text
def landscape_figure(datasets: Sequence) -> object:
    """Figure 1 from dataset folders: one landscape panel per dataset, lettered when there are several (a row of
    panels per pair of objectives for a dataset loaded on three or four)."""
    objectives = [tuple(o.name for o in ds.norm.objectives) for ds in datasets]
    fig, axes = landscape_grid([len(objective_pairs(len(names))) for names in objectives], 2.9)
    titles = [f"{ds.meta.get('title', ds.name)} (K={ds.n_arms}, |P*|={int(pareto_mask(ds.mu).sum())})"
              for ds in datasets]
    notes = []
    for row, ds, names, mark, title in zip(axes, datasets, objectives, marks(len(titles)), titles):
        landscape_panels(row, dataset_arms(ds), f"{mark}{title}", names, ds.norm.cost_unit)
        if len(names) > 2:
            notes.append(f"{ds.meta.get('title', ds.name)}: {landscape_note(len(names), ds.norm.cost_unit)}")
    surrogate = [ds.meta.get("title", ds.name) for ds in datasets if ds.surrogate]
    if surrogate and len(surrogate) < len(datasets):  # the note names the panels it is true of
        notes.append(f"{', '.join(surrogate)}: {SURROGATE_NOTE}")
    finish(fig, [], len(surrogate) == len(datasets), "; ".join(notes) or None)
    return fig
