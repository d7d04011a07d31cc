"""The panels every figure is built from, and the drawing basics all figures share.

Panels draw one metric of one experiment on one axes: a mean (normal 95% band) or an error probability
(95% Wilson band) against log2 B, a single budget's methods side by side, the online trajectories. The basics:
mathtext off for names (:func:`literal_text`), panel letters (:func:`marks`) that titles and captions share, the
methods' legend and notes (:func:`finish`), and the configurations' names on a landscape placed by adjustText
once the layout is final (:func:`place_names`; a name it leaves on another is set apart after), so that they
neither overprint each other nor leave the axes.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import adjustText  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from adjustText import adjust_text  # noqa: E402

from cabench import registry  # noqa: E402
from cabench.paper import SURROGATE_NOTE  # noqa: E402
from cabench.results import Experiment  # noqa: E402
from cabench.stats import Z95, mean_se, wilson  # noqa: E402
from cabench.units import LABELS  # noqa: E402

plt.rcParams.update({"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 7,
                     "xtick.labelsize": 7, "ytick.labelsize": 7, "figure.dpi": 100, "figure.titlesize": 8,
                     "svg.hashsalt": "cabench", "pdf.compression": 6})
ERROR_FLOOR = 1e-3  # log10 error is drawn here (hollow marker) when no repetition erred
ARM_NAME = "arm-name"  # the gid of a configuration's name on a landscape, placed by :func:`place_names`
ARMS = "arms"  # the gid of a landscape's scatter of arms
PLACING = 400  # adjustText iterations: a fixed count, so that a figure does not depend on the machine's speed


def literal_text(draw: Callable) -> Callable:
    """Run ``draw`` with mathtext off: names and titles are drawn as written, ``$`` and all; and with no layout
    engine, whatever matplotlib's settings say (``figure.autolayout``, ``figure.constrained_layout.use``: a
    figure's layout is :func:`finish`'s, made once, before its names are placed).

    cabench's own axis labels ask for mathtext one by one (``parse_math=True``).
    """
    @functools.wraps(draw)
    def drawn(*args, **kwargs):
        with plt.rc_context({"text.parse_math": False, "figure.autolayout": False,
                             "figure.constrained_layout.use": False}), warnings.catch_warnings():
            # a character the font lacks is drawn as a box, a warning per character and figure: plot says it once
            # (:func:`missing_glyphs`)
            warnings.filterwarnings("ignore", r"Glyph \d+ .* missing from font", UserWarning)
            return draw(*args, **kwargs)
    return drawn


def missing_glyphs(texts: Iterable[str]) -> list[str]:
    """The characters of ``texts`` the figures' font has no glyph for (drawn as boxes), in order of first use."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    font = FT2Font(font_manager.findfont(font_manager.FontProperties()))
    seen = dict.fromkeys(ch for text in texts for ch in text if ch.isprintable() and not ch.isspace())
    return [ch for ch in seen if font.get_char_index(ord(ch)) == 0]


def side_by_side(n: int, height: float = 2.5):
    """A figure of ``n`` panels side by side."""
    return plt.subplots(1, n, figsize=(3.0 * n, height), squeeze=False)


def letter(i: int) -> str:
    """The letter of the ``i``-th panel (0-based): a, b, c, …"""
    return chr(ord("a") + i)


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


def finish(fig, axes, surrogate: bool, title: str | None = None) -> None:
    """Lay a figure out: the methods' legend above, the note below, then the configurations' names placed."""
    _legend(fig, axes)
    notes = []
    if title:
        notes.append(title)
    if surrogate:
        notes.append(SURROGATE_NOTE)
    names = [t for ax in fig.axes for t in ax.texts if t.get_gid() == ARM_NAME]
    for name in names:  # still at their arms, past the axes' edge: the names go inside the axes once placed
        name.set_in_layout(False)
    fig.tight_layout()
    for name in names:
        name.set_in_layout(True)
    if notes:
        fig.text(0.5, -0.01, "\n".join(notes), ha="center", va="top", fontsize=6, style="italic")
    for ax in fig.axes:
        place_names(ax)
        title_in_place(ax)


def title_in_place(ax) -> None:
    """Keep a panel's title where matplotlib placed it when the figure was laid out, if that is the axes' top.

    Matplotlib places a title on every draw, looking along the panel for what could lie above its axes (ticks or
    labels on top, none in cabench's figures; the y axis' offset text, such as ``1e6``, which large values show):
    each draw of a figure spent about a sixth of its time there. Once the layout is done, a title at the axes' top
    with no offset text beside it stays there (``set_title(..., y=1.0)``, which turns the search off for its
    axes); one lifted above an offset text keeps matplotlib's placement."""
    if ax.get_title() and not ax.yaxis.get_offset_text().get_text() and ax.title.get_position()[1] == 1.0:
        ax.set_title(ax.get_title(), y=1.0)


def place_names(ax) -> None:
    """Move the configuration names of a landscape panel apart and inside its axes (adjustText, a fixed number
    of iterations); a name moved off its arm gets a grey leader line."""
    names = [t for t in ax.texts if t.get_gid() == ARM_NAME]
    if not names:
        return
    (arms,) = [c for c in ax.collections if c.get_gid() == ARMS]
    origins = [tuple(t.get_position()) for t in names]  # each name is written at its arm
    x, y = _near(ax, np.asarray(arms.get_offsets(), dtype=float), np.asarray(origins, dtype=float)).T
    with _steps_remembered(), _quiet(logging.getLogger(adjustText.__name__)):
        _, lines = adjust_text(names, x=x, y=y, ax=ax, iter_lim=PLACING, ensure_inside_axes=True,
                               force_static=(0.05, 0.1), arrowprops=LEADER)
    # (a leader line is a FancyArrowPatch drawn from its name, or where adjustText falls back, an annotation's)
    _set_apart(ax, names, origins, {id(getattr(getattr(line, "arrow_patch", line), "patchA", None)): line
                                    for line in lines})


_QUIET = threading.Lock()


@contextlib.contextmanager
def _quiet(logger: logging.Logger) -> Iterator[None]:
    """``logger`` at ERROR, then as it was: adjustText logs "Some labels are too long" on every step a name
    overhangs its panel, hundreds of lines a figure of names kept whole up to 40 characters. One placement at a
    time holds it (the level is the process's)."""
    with _QUIET:
        level = logger.level
        logger.setLevel(logging.ERROR)
        try:
            yield
        finally:
            logger.setLevel(level)


#: The most arms whose markers the names are kept off: the nearest to the names' arms (adjustText's work grows with
#: names x markers, every one of its steps).
AVOIDED = 200


def _near(ax, points: np.ndarray, origins: np.ndarray) -> np.ndarray:
    """Of ``points`` (data coordinates), at most :data:`AVOIDED`: those nearest on the panel to any of ``origins``,
    in their order."""
    if len(points) <= AVOIDED:
        return points
    to_pixels = ax.transData.transform
    gaps = np.linalg.norm(to_pixels(points)[:, None, :] - to_pixels(origins)[None, :, :], axis=2).min(axis=1)
    return points[np.sort(np.argsort(gaps, kind="stable")[:AVOIDED])]


#: The grey line from a name moved off its arm to the arm.
LEADER: dict[str, Any] = {"arrowstyle": "-", "color": "grey", "linewidth": 0.4}
#: Where :func:`_set_apart` looks for room for a name: this many directions around its arm ...
_AROUND = 16
#: ... at these distances from it, in heights of the name's box (the nearest first).
_REACH = (1.0, 1.6, 2.2, 3.0, 4.0, 5.5, 7.5, 10.0)


def _set_apart(ax, names: list, origins: list[tuple[float, float]], lines: dict[int, Any]) -> None:
    """Names adjustText left overprinting one another (a few arms in a corner: it keeps names inside the axes and
    pushes them together) each get the nearest place around their arm that is inside the axes and clear of every
    other name (and, where there is one, of every arm's marker too), with a leader line to the arm. Pure geometry
    on the final layout: the same figure every time."""
    from matplotlib.patches import FancyArrowPatch

    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    boxes = [t.get_window_extent(renderer) for t in names]
    extents = np.array([b.extents for b in boxes], dtype=float).reshape(-1, 4)  # x0, y0, x1, y1 of each name
    (arms,) = [c for c in ax.collections if c.get_gid() == ARMS]
    points = ax.transData.transform(np.asarray(arms.get_offsets(), dtype=float))
    marker = 0.5 * math.sqrt(float(np.max(arms.get_sizes(), initial=36.0))) * ax.figure.dpi / 72.0

    def overlapping(box: np.ndarray, i: int) -> bool:
        """Whether ``box`` (x0, y0, x1, y1) overlaps the box of a name other than the ``i``-th (as Bbox.overlaps)."""
        hit = ((extents[:, 0] < box[2]) & (box[0] < extents[:, 2]) & (extents[:, 1] < box[3])
               & (box[1] < extents[:, 3]))
        hit[i] = False
        return bool(hit.any())

    def clear(box: np.ndarray, i: int, of_points: bool) -> bool:
        inside = frame.x0 <= box[0] and box[2] <= frame.x1 and frame.y0 <= box[1] and box[3] <= frame.y1
        return inside and not overlapping(box, i) and not (of_points and bool((
            (box[0] - marker < points[:, 0]) & (points[:, 0] < box[2] + marker)
            & (box[1] - marker < points[:, 1]) & (points[:, 1] < box[3] + marker)).any()))

    for i, name in enumerate(names):
        if not overlapping(extents[i], i):
            continue
        width, height = extents[i, 2] - extents[i, 0], extents[i, 3] - extents[i, 1]
        target = ax.transData.transform(origins[i])
        places = [(target[0] + r * height * math.cos(a) * (width / height if abs(math.cos(a)) > 0.7 else 1.0),
                   target[1] + r * height * math.sin(a))
                  for r in _REACH for a in (2 * math.pi * k / _AROUND for k in range(_AROUND))]
        found = None
        for of_points in (True, False):
            for cx, cy in places:
                box = np.array([cx - width / 2, cy - height / 2, cx + width / 2, cy + height / 2])
                if clear(box, i, of_points):
                    found = (cx, cy, box)
                    break
            if found:
                break
        if found is None:
            continue  # no room anywhere near: adjustText's place stays
        cx, cy, extents[i] = found
        name.set_horizontalalignment("center")
        name.set_verticalalignment("center")
        name.set_position(ax.transData.inverted().transform((cx, cy)))
        line = lines.get(id(name))
        if line is not None:
            line.remove()
        ax.add_patch(FancyArrowPatch(posA=name.get_position(), posB=ax.transData.inverted().transform(target),
                                     patchA=name, transform=ax.transData, **LEADER))


#: adjustText's two steps of an iteration, each a function of the names' boxes alone within one placement (the
#: targets, the arms, the forces and the axes stay fixed; its random shifts are seeded afresh on every call).
_STEPS = ("iterate", "remove_crossings")
_ONE_PLACEMENT = threading.Lock()


@contextlib.contextmanager
def _steps_remembered() -> Iterator[None]:
    """During one placement, each step computed once per distinct state of the boxes and looked up after.

    The boxes of a crowded landscape do not settle (some name stays on an arm, so adjustText never reaches zero
    overlap) but fall into a short cycle early — GSM8K's 108 arms from step 14 (period 6), PIQA's 132 from step 34,
    the function-calling logs' 149 from step 131 — and repeat it until :data:`PLACING` steps are done. Looking a
    state up returns what computing it would, so the placement is the same to the bit; it is the 400 steps' time
    that shrinks to that of the steps before the cycle. (adjustText calls the steps by their module names, which
    are replaced for the placement only, one placement at a time.)"""
    if not all(callable(getattr(adjustText, name, None)) for name in _STEPS):
        yield  # another adjustText: every step computed
        return
    with _ONE_PLACEMENT:
        computed = {name: getattr(adjustText, name) for name in _STEPS}
        for name in _STEPS:
            setattr(adjustText, name, _remembered(computed[name]))
        try:
            yield
        finally:
            for name, step in computed.items():
                setattr(adjustText, name, step)


def _remembered(step: Callable) -> Callable:
    """``step`` keyed by its first argument's bytes (the boxes; the other arguments are those of the placement). A
    step changes the array it is given, so it is given a copy: what the table holds is never changed."""
    table: dict[bytes, Any] = {}

    def looked_up(coords: np.ndarray, *args, **kwargs):
        key = coords.tobytes()
        if key not in table:
            table[key] = step(coords.copy(), *args, **kwargs)
        return table[key]

    return looked_up


#: The longest name written whole: a configuration's on a landscape (the paper's longest, 30 characters, fits beside
#: it), an experiment's in a panel title broken onto a line of its own (:func:`label_titles`).
NAME_CHARACTERS = 40
_FEWEST_CHARACTERS = 10  # a title's label is shortened no further than this, fit or not


def shown_name(name: str, characters: int = NAME_CHARACTERS) -> str:
    """``name`` whole up to ``characters`` characters, else its start and end around an ellipsis in that many (a
    longer name cannot stay inside its panel)."""
    if len(name) <= characters:
        return name
    end = (characters - 1) // 2
    return f"{name[:characters - 1 - end]}…{name[-end:]}"


def shown_names(names: Sequence[str], characters: int = NAME_CHARACTERS) -> list[str]:
    """:func:`shown_name` of each of ``names``, but two long names cut to the same start and end are shown around
    where they differ instead (``super-long-model-n…7b-v2…-instruct/direct``), and any left alike are numbered: two
    configurations never read as one."""
    shown = [shown_name(n, characters) for n in names]
    for text in {t for t in shown if shown.count(t) > 1}:
        group = [i for i, t in enumerate(shown) if t == text]
        full = [names[i] for i in group]
        common = len(os.path.commonprefix(full))
        edge = max((characters - 2) // 4, 1)
        middle = characters - 2 * edge - 2
        start = max(min(common - middle // 3, min(len(n) for n in full) - edge - middle), edge)
        for i, name in zip(group, full):
            shown[i] = f"{name[:edge]}…{name[start:start + middle]}…{name[-edge:]}" if len(name) > characters else name
    for text in {t for t in shown if shown.count(t) > 1}:  # still alike: numbered in order, within the length
        group = [i for i, t in enumerate(shown) if t == text]
        for k, i in enumerate(group):
            mark = f" ({k + 1})"
            shown[i] = (text if len(text) + len(mark) <= characters else
                        shown_name(names[i], characters - len(mark))) + mark
    return shown


def label_titles(axes, label: str, titles: Sequence[str], letters: Sequence[str]) -> None:
    """Title a row of panels ``{letter}{label}: {title}``, one line each while they fit (:func:`fit_titles`);
    otherwise the label goes on a line of its own above each title."""
    fit_titles(axes, letters, [label] * len(titles), titles, lambda mark, name, title: f"{mark}{name}: {title}",
               lambda mark, name, title: f"{mark}{name}:\n{title}")


def fit_titles(axes, letters: Sequence[str], labels: Sequence[str], titles: Sequence[str],
               one_line: Callable[[str, str, str], str], broken: Callable[[str, str, str], str]) -> None:
    """Title a row of panels ``one_line(letter, label, title)`` while no two of them overlap and none reaches past
    the figure's edge by more than a tenth of a panel's width (:data:`OVERHANG`; saved files are cut to their
    content, so such a title shows whole). Otherwise each is titled ``broken(letter, label, title)`` (the label on a
    line of its own), its label shortened like a landscape's names (:func:`shown_name`) and, should that still not
    fit, five characters at a time until no two titles overlap and none leaves the figure."""
    for ax, mark, label, title in zip(axes, letters, labels, titles):
        ax.set_title(one_line(mark, label, title))
    if _titles_fit(axes, OVERHANG):
        return
    characters = NAME_CHARACTERS
    while True:
        for ax, mark, label, title in zip(axes, letters, labels, titles):
            ax.set_title(broken(mark, shown_name(label, characters), title))
        if characters <= _FEWEST_CHARACTERS or _titles_fit(axes, 0.0):
            return
        characters -= 5


#: How far past the figure's edge a title on one line may reach, as a share of a panel's width: the shipped
#: experiments' longest, the trajectories' moving-average title, reaches about 0.07 of its panel past the edge.
OVERHANG = 0.1


def _titles_fit(axes, overhang: float) -> bool:
    """Whether the titles of a row of panels, laid out as :func:`finish` lays them, leave a gap between each other
    and reach past the figure's edge by no more than ``overhang`` of a panel's width."""
    fig = axes[0].figure
    fig.tight_layout()
    renderer = fig.canvas.get_renderer()
    boxes = sorted((ax.title.get_window_extent(renderer) for ax in axes), key=lambda box: box.x0)
    if any(left.x1 >= right.x0 for left, right in zip(boxes, boxes[1:])):
        return False
    room = overhang * fig.bbox.width / len(axes)
    return boxes[0].x0 >= fig.bbox.x0 - room and boxes[-1].x1 <= fig.bbox.x1 + room


def marks(n: int) -> list[str]:
    """The panel letters of a figure of ``n`` panels as titles and captions cite them (none for one panel)."""
    return [f"({letter(i)}) " for i in range(n)] if n > 1 else [""]


# --- panels ------------------------------------------------------------------------------------------

def _style(method: str) -> dict:
    colour, marker = registry.style(method)
    return {"color": colour, "marker": marker, "label": registry.display(method), "markersize": 3.5,
            "linewidth": 1.2}


def drawn_by_budget(e: Experiment) -> str:
    """How :func:`_band` draws an experiment's intervals over its budgets: bands, or error bars at a single budget."""
    return "error bars" if len(e.rho_grid) == 1 else "bands"


def band_note(e: Experiment, kind: str, drawn: str = "by budget") -> str:
    """What a figure's intervals are: ``kind`` ``mean`` (normal) or ``wilson``; drawn as bands over budgets (error
    bars where the experiment has one budget, as :func:`_band` draws them), or always as ``bands`` (trajectories)
    or ``error bars`` (bars of one budget)."""
    n = e.repetitions
    word = drawn if drawn != "by budget" else drawn_by_budget(e)
    if kind == "mean":
        return f"{word}: mean ± 95% CI (normal) over {n} repetitions"
    return f"{word}: 95% Wilson interval over {n} repetitions"


def _band(ax, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, mid: np.ndarray, colour: str) -> None:
    """A shaded band, or error bars where there is a single budget (a band would be invisible)."""
    if len(x) > 1:
        ax.fill_between(x, lo, hi, color=colour, alpha=0.15, linewidth=0)
    else:
        ax.errorbar(x, mid, yerr=[mid - lo, hi - mid], color=colour, capsize=2, linewidth=0.8, linestyle="none")


#: Columns whose every value lies in a known range: a normal band is cut at its ends (a Pareto F1 above 1 is none).
BOUNDED = {"f1": (0.0, 1.0)}


def mean_panel(ax, runs: pd.DataFrame, column: str, ylabel: str, methods: Sequence[str],
                linestyle: str = "-", suffix: str = "", unit: str = "tokens") -> None:
    """Mean of ``column`` against log2 B per method, with a normal 95% band over repetitions (cut to the column's
    range, :data:`BOUNDED`)."""
    low, high = BOUNDED.get(column, (-np.inf, np.inf))
    for method in methods:
        g = runs[runs["method"] == method]
        if g.empty:
            continue
        stats = [(b, *mean_se(gg[column])) for b, gg in g.groupby("budget")]
        b, m, se = map(np.array, zip(*stats))
        x = np.log2(b)
        style = _style(method)
        ax.plot(x, m, **{**style, "label": style["label"] + suffix, "linestyle": linestyle})
        _band(ax, x, np.clip(m - Z95 * se, low, high), np.clip(m + Z95 * se, low, high), m, style["color"])
    ax.set_xlabel(rf"$\log_2 B$ ({LABELS[unit]})", parse_math=True)
    ax.set_ylabel(ylabel, parse_math=True)
    ax.grid(alpha=0.3)


def error_panel(ax, runs: pd.DataFrame, methods: Sequence[str], linestyle: str = "-", suffix: str = "",
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


def categorical_panel(ax, e: Experiment, metric: str) -> None:
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
    ax.set_xlabel(e.budget_at(e.rho_grid[0]) + ("; filled: " + modes[0] + ", hollow: " + ", ".join(modes[1:])
                                             if len(modes) > 1 else ""))
    ax.grid(alpha=0.3, axis="y")


def trajectory_rho(e: Experiment) -> float:
    """The budget an experiment's trajectories were recorded at."""
    assert e.trajectories is not None
    return float(e.trajectories["rho"].iloc[0])


def trajectory_panels(axes, e: Experiment, letters: Sequence[str]) -> None:
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
    rho = trajectory_rho(e)
    for ax in axes:
        ax.set_xlabel(f"consumed {LABELS[e.cost_unit]}")
        ax.grid(alpha=0.3)
    label_titles(axes, e.label, [f"cumulative R_HV ({e.budget_at(rho)})",
                                 f"{e.window}-pull moving average of the gap ({e.budget_at(rho)})"], letters)


def cycle_note(e: Experiment) -> list[str]:
    """Why a round robin's moving average of the gap is a sawtooth (said beside every trajectory figure); none
    without a round robin."""
    cycling = [registry.display(m) for m in e.methods if not registry.prefers(m, "online")]
    return [f"{' and '.join(cycling)} cycle{'s' if len(cycling) == 1 else ''} through the arms, so the moving "
            f"average of the gap oscillates with period K={e.k} pulls (one round)"] if cycling else []
