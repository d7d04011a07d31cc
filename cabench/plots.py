"""Figures from result folders only (SPEC §7); every label, K, budget and window from the data.

For every experiment :func:`plot` draws, into ``ROOT/figures/``, its landscape (:mod:`cabench.landscape`), each
metric against budget (online: both regrets; identification: error and F1, every cost mode) and, where recorded,
its trajectories; captions name the objectives, the cost unit and every panel by its letter. The paper's layouts
(``ROOT/fig1_landscapes`` … ``fig6_cost_modes``) are drawn only from experiments recorded as the paper's own
(``paper_experiment`` in ``config.yaml``). ``ROOT/figures.csv`` (:mod:`cabench.figure_index`) lists every figure
with its caption and the hashes of the result files it was drawn from; ROOT is the nearest folder above the one
plotted that has an index, so plotting one experiment keeps the root's report whole. A figure whose result files
and drawing code are unchanged is not drawn again, and experiments that show the same configurations share one
landscape, drawn once (:func:`landscape_inputs`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt

import cabench
from cabench import figure_index, landscape, panels, raster, registry
from cabench.errors import CabenchError, first_three, os_reason
from cabench.landscape import landscape_figure as landscape_figure
from cabench.panels import finish, literal_text, marks
from cabench.paper import SURROGATE_NOTE
from cabench.results import Experiment, ResultSet, no_results
from cabench.stats import wilson
from cabench.storage import figure_bytes, remove_stale_temporaries, replaced_together, write_atomic
from cabench.units import LABELS

MODE_LINE = {"deterministic": "-", "stochastic": "--"}
FORMATS = figure_index.FORMATS
#: The modules whose code draws figures: a figure is drawn again when one of them (or the library) changes.
DRAWING = ("cabench.plots", "cabench.landscape", "cabench.panels", "cabench.methods.styles", "cabench.registry",
           "cabench.stats", "cabench.units", "cabench.raster")
#: Each format's metadata (given to ``savefig``; the PNG's to Pillow, :func:`~cabench.raster.png_of_pdf`): no date or
#: library version in a file (equal figures give equal bytes), and cabench's signature, by which ``plot`` tells a
#: figure it drew from a user's file of the same name.
_SAVE: dict[str, dict[str, Any]] = {fmt: {"metadata": metadata} for fmt, metadata in figure_index.METADATA.items()}
PNG_DPI = 200  # a PNG's resolution: its PDF's page rasterised at this many dots per inch
#: PDFium draws nothing past about 32,000 pixels along a side: a larger page's PNG is drawn by matplotlib.
RASTER_LIMIT = 32_000
#: Settings by which a PDF takes its colours or fonts from a document it is placed in: a figure's PDF is a page of
#: its own, and its PNG's picture, drawn without them (with them its PNG came out all black, or with '?' for '−').
_SELF_CONTAINED: dict[Any, Any] = {"pdf.inheritcolor": False, "pdf.use14corefonts": False}


@dataclass(frozen=True)
class Drawn:
    """A figure written: its file stem (relative to the results root), caption and the labels of its experiments."""

    stem: str
    caption: str
    parts: tuple[str, ...]


def slug(text: str) -> str:
    """A file-name-safe form of an experiment label, one per label: a label that is one already is itself, and the
    label cabench gives one of several experiments of a name, ``name [hash8]``, is ``name_hash8`` (as ever); any
    other is its safe characters with 8 hex digits of its SHA-256 ('a b' and 'a_b' drew into one file). A label
    written as another's form ('p_d_cbf89a3f' beside 'pä d', 'x_0123abcd' beside 'x [0123abcd]') has the same file
    name: :func:`plot` refuses such a pair (:func:`_one_file_name_each`)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")
    if safe and safe == text:
        return text
    twin = re.fullmatch(r"(?P<name>[A-Za-z0-9_.-]+) \[(?P<hash>[0-9a-f]{8})\]", text)
    if twin and twin["name"].strip("_") == twin["name"]:
        return f"{twin['name']}_{twin['hash']}"
    return f"{safe or 'experiment'}_{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def check_formats(formats: Sequence[str]) -> list[str]:
    formats = list(dict.fromkeys(f for f in formats if f))  # png,png draws (and counts) each figure once
    if not formats:
        raise CabenchError(f"--format: give at least one of {', '.join(FORMATS)}")
    for fmt in formats:
        if fmt not in _SAVE:
            raise CabenchError(f"--format: '{fmt}' is not one of {', '.join(FORMATS)}")
    return formats


@literal_text
def rendered(fig, stem: Path, formats: Sequence[str]) -> list[tuple[Path, bytes]]:
    """``fig`` drawn in memory in each of ``formats``, each with the file it is for (``stem`` and the format's
    suffix); the figure is closed.

    Each format is cut to its content, as ``bbox_inches="tight"`` cuts it. The figure is drawn once for its PDF and
    PNG: the PDF's box is measured beforehand (:func:`_pdf_box`), and the PNG is the PDF's page rasterised
    (:func:`~cabench.raster.png_of_pdf`), where matplotlib drew the figure once more for each (it still draws the
    PNG of a page too large for PDFium, :data:`RASTER_LIMIT`). A PNG asked for alone is made from a PDF drawn in
    memory, so that it is the same file whatever else is asked. The layout is the one :func:`~cabench.panels.finish`
    made: no layout engine runs while the files are drawn, whatever matplotlib's settings say
    (:func:`~cabench.panels.literal_text`)."""
    fig.set_layout_engine(None)  # tight_layout leaves a placeholder engine, which makes savefig lay out again
    formats = check_formats(formats)
    drawn: dict[str, bytes] = {}
    if "png" in formats or "pdf" in formats:
        with plt.rc_context(_SELF_CONTAINED):
            box = _pdf_box(fig)
            drawn["pdf"] = figure_bytes(fig, "pdf", bbox_inches=box, **_SAVE["pdf"])
        if "png" in formats:
            drawn["png"] = (raster.png_of_pdf(drawn["pdf"], PNG_DPI, _SAVE["png"]["metadata"])
                            if max(box.width, box.height) * PNG_DPI <= RASTER_LIMIT
                            else figure_bytes(fig, "png", dpi=PNG_DPI, bbox_inches="tight", **_SAVE["png"]))
    for fmt in formats:
        if fmt not in drawn:
            drawn[fmt] = figure_bytes(fig, fmt, bbox_inches="tight", **_SAVE[fmt])
    plt.close(fig)
    return [(figure_file(stem, fmt), drawn[fmt]) for fmt in formats]


def _pdf_box(fig) -> Any:
    """The box ``savefig(bbox_inches="tight")`` cuts ``fig``'s PDF to, padded as it pads it: measured with the PDF's
    renderer (text unhinted at 72 dpi), without the draw ``savefig`` makes first to measure it. On the
    ``make reproduce`` figures the page is the same to the last digit and the drawing within 1e-6 pt."""
    from matplotlib.backend_bases import _get_renderer  # type: ignore[attr-defined]  # savefig's own (private)
    from matplotlib.backends.backend_pdf import FigureCanvasPdf

    canvas, dpi = fig.canvas, fig.dpi
    try:
        box = fig.get_tightbbox(_get_renderer(fig, FigureCanvasPdf(fig).print_pdf))
    finally:  # measuring sets the PDF's canvas and 72 dpi, and leaves them
        fig.set_canvas(canvas)
        fig.set_dpi(dpi)
    return box.padded(plt.rcParams["savefig.pad_inches"])


def figure_file(stem: Path, fmt: str) -> Path:
    """The file of the figure ``stem`` in ``fmt``: the format's suffix added to the stem, never put in place of a
    part of it (figures of experiments "run.1" and "run.2" were both drawn into run.png)."""
    return stem if stem.suffix == f".{fmt}" else stem.with_name(f"{stem.name}.{fmt}")


def _within(path: Path, folder: Path) -> bool:
    """Whether an experiment found at ``path`` is below the plotted ``folder``: as the paths go (through a link the
    walk followed), or as they lie on disk (``folder`` a link to a folder of the root)."""
    return (Path(os.path.abspath(path)).is_relative_to(os.path.abspath(folder))
            or Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder)))


def save(fig, stem: Path, formats: Sequence[str]) -> list[Path]:
    """Draw ``fig`` (:func:`rendered`) and write each file atomically; return the files."""
    files = rendered(fig, stem, formats)
    stem.parent.mkdir(parents=True, exist_ok=True)
    for path, data in files:
        write_atomic(path, data)
    return [path for path, _ in files]


def _pair(fig, axes, e: Experiment, titles: Sequence[str], note: str) -> None:
    """Title the two panels of an experiment's figure (a) and (b) (:func:`~cabench.panels.label_titles`) and finish
    it."""
    panels.label_titles(axes, e.label, titles, marks(2))
    finish(fig, axes, e.surrogate, note)


# --- one experiment ------------------------------------------------------------------------------------

@literal_text
def experiment_figures(e: Experiment, with_landscape: bool = True) -> list[tuple[str, object, str]]:
    """(name, figure, caption) of every figure of one experiment, each method in a style of its own
    (:func:`~cabench.registry.distinct_styles`); without the landscape's figure (None in its place, its caption
    given) where ``with_landscape`` is false: another experiment's is the same (:func:`landscape_inputs`)."""
    with registry.distinct_styles(e.methods):
        return _experiment_figures(e, with_landscape)


def landscape_inputs(e: Experiment) -> str:
    """SHA-256 of what an experiment's landscape figure is drawn from: its configurations' table without the columns
    that name the experiment, the dataset's title, the objectives, the cost unit and whether the logs are surrogate.
    Experiments of one dataset whose tables agree (the online and identification experiments of its full set, say)
    have the same landscape, and :func:`plot` draws it once for them."""
    arms = e.arms.drop(columns=["experiment", "config_hash"], errors="ignore")
    h = hashlib.sha256(repr((e.title, list(e.objectives), e.cost_unit, bool(e.surrogate))).encode())
    h.update(arms.to_csv(index=False).encode())
    return h.hexdigest()


def _experiment_figures(e: Experiment, with_landscape: bool = True) -> list[tuple[str, object, str]]:
    out: list[tuple[str, object, str]] = []
    ident = e.describe()
    terms = f"objectives: {', '.join(e.objectives)}; costs and budgets in {LABELS[e.cost_unit]}"
    front = int(e.arms["pareto"].sum())
    title = f"{e.title}: K={e.k}, |P*|={front}"
    # the figure shows the configurations alone (the caption names the experiment): experiments with the same
    # configurations share it
    fig: Any = None
    if len(e.objectives) <= 2:
        shows = "black line: Pareto front of the experiment's arms; marker size: profiling cost c_i"
        if with_landscape:
            fig, ax = plt.subplots(figsize=(3.6, 3.4))
            landscape.landscape_panel(ax, e.arms, title, e.objectives, e.cost_unit)
            finish(fig, [], e.surrogate, "marker size ~ profiling cost; black: Pareto front")
    else:
        shows = landscape.landscape_note(len(e.objectives), e.cost_unit)
        if with_landscape:
            fig, (axes,) = landscape.landscape_grid([len(landscape.objective_pairs(len(e.objectives)))], 3.0)
            landscape.landscape_panels(axes, e.arms, title, e.objectives, e.cost_unit)
            finish(fig, [], e.surrogate, shows)
    out.append(("landscape", fig, f"{e.label}: configuration landscape of {e.title} (K={e.k}, |P*|={front}; "
                                  f"{shows}); {terms}"))
    fig, grid = plt.subplots(1, 2, figsize=(6.4, 2.6), squeeze=False)
    axes = grid[0]
    if e.setting == "online":
        panels.mean_panel(axes[0], e.runs, "regret_hv", r"HV-efficiency regret $R^{HV}_B$", e.methods, unit=e.cost_unit)
        panels.mean_panel(axes[1], e.runs, "regret_std", r"standard HV regret $R^{std}_B$", e.methods, unit=e.cost_unit)
        _pair(fig, axes, e, ("R_HV", "R_std"), f"{ident}; {panels.band_note(e, 'mean')}")
        out.append(("regret", fig, f"{ident}: (a) HV-efficiency and (b) standard regret against log2 B; "
                                   f"{panels.band_note(e, 'mean')}; {terms}"))
        if e.trajectories is not None:
            fig, grid = plt.subplots(1, 2, figsize=(6.4, 2.6), squeeze=False)
            panels.trajectory_panels(grid[0], e, marks(2))
            finish(fig, grid[0], e.surrogate, "\n".join([f"{ident}; {panels.band_note(e, 'mean', 'bands')}",
                                                         *panels.cycle_note(e)]))
            out.append(("trajectories", fig, "; ".join([
                f"{e.label}: (a) cumulative R_HV and (b) the {e.window}-pull moving average of the per-pull gap at "
                + e.budget_at(panels.trajectory_rho(e)), panels.band_note(e, "mean", "bands"), *panels.cycle_note(e),
                terms])))
        return out
    if len(e.rho_grid) == 1:  # one budget: methods side by side, not a curve
        panels.categorical_panel(axes[0], e, "error")
        panels.categorical_panel(axes[1], e, "f1")
    else:
        for mode in e.cost_modes:
            runs = e.runs[e.runs["cost_mode"] == mode]
            suffix = f" ({mode})" if len(e.cost_modes) > 1 else ""
            panels.error_panel(axes[0], runs, e.methods, MODE_LINE.get(mode, "-."), suffix, e.cost_unit)
            panels.mean_panel(axes[1], runs, "f1", "Pareto F1", e.methods, MODE_LINE.get(mode, "-."), suffix,
                              e.cost_unit)
    modes = ", ".join(e.cost_modes)
    _pair(fig, axes, e, (f"P(error), K={e.k}", f"Pareto F1, K={e.k}"),
          f"{ident}; cost modes: {modes}; error: 95% Wilson interval, F1: mean ± 95% CI (normal)")
    against = "against log2 B" if len(e.rho_grid) > 1 else f"per method at {e.budget_at(e.rho_grid[0])}"
    drawn = panels.drawn_by_budget(e)
    out.append(("identification", fig, f"{ident}: (a) identification error and (b) Pareto F1 {against}, cost modes "
                                       f"{modes}; {drawn}: error 95% Wilson interval, F1 mean ± 95% CI over "
                                       f"{e.repetitions} repetitions; {terms}"))
    return out


# --- the paper's layouts (only for experiments recorded as the paper's) ---------------------------------

def _titled(axes, titles: Sequence[str], experiments: Sequence[Experiment]) -> list[str]:
    """Title a row of panels ``{title} ({experiment's label})``, lettered when there are several, the label on a
    line of its own and shortened where the titles would overlap or leave the figure
    (:func:`~cabench.panels.fit_titles`); the letters, as the caption cites them."""
    letters = marks(len(titles))
    panels.fit_titles(axes, letters, [e.label for e in experiments], titles,
                      lambda mark, name, title: f"{mark}{title} ({name})",
                      lambda mark, name, title: f"{mark}{title}\n({name})")
    return letters


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
        shown = list(wide.values())
        fig, axes = landscape.landscape_grid([1] * len(shown), 2.9)
        letters = marks(len(shown))
        for (ax,), mark, e in zip(axes, letters, shown):
            title = f"{mark}{e.title} (K={e.k}, |P*|={int(e.arms['pareto'].sum())})"
            landscape.landscape_panel(ax, e.arms, title, e.objectives, e.cost_unit)
        finish(fig, [], any(e.surrogate for e in shown))
        out.append(("fig1_landscapes", fig, "Figure 1: configuration landscapes — "
                    + "; ".join(f"{m}{e.title}, K={e.k}" for m, e in zip(letters, shown))
                    + "; black: Pareto front; marker size: profiling cost c_i per call", shown))
    for stem, column, label, with_subset in (("fig2_online_regret", "regret_hv", r"HV-efficiency regret $R^{HV}_B$",
                                              True),
                                             ("fig3_standard_regret", "regret_std", r"standard HV regret $R^{std}_B$",
                                              False)):
        parts = online + (subset if with_subset else [])
        if not online:
            continue
        fig, axes = panels.side_by_side(len(parts))
        for ax, e in zip(axes[0], online):
            panels.mean_panel(ax, e.runs, column, label, e.methods, unit=e.cost_unit)
        for ax, e in zip(axes[0][len(online):], parts[len(online):]):
            panels.error_panel(ax, e.runs[e.runs["cost_mode"] == "deterministic"], e.methods, unit=e.cost_unit)
        letters = _titled(axes[0], [f"{e.title}: online, K={e.k}" for e in online] + [
            f"{e.title}: Pareto identification, K={e.k}" for e in parts[len(online):]], parts)
        spans = [f"{m}{e.label}" for m, e in zip(letters, parts)]
        bands = "; ".join(f"{e.label}: {panels.band_note(e, 'mean' if e.setting == 'online' else 'wilson')}"
                          for e in parts)
        finish(fig, axes[0], any(e.surrogate for e in parts), bands)
        what = "HV-efficiency regret" if column == "regret_hv" else "standard hypervolume regret"
        caption = (f"Figure {stem[3]}: {what} against log2 B" + (
            " and log10 identification error on the paper's 14-arm subset" if len(parts) > len(online) else "")
            + " — " + ", ".join(spans) + f"; {bands}")
        out.append((stem, fig, caption, parts))
    traj = [e for e in online if e.trajectories is not None]
    if traj:
        fig, axes = plt.subplots(len(traj), 2, figsize=(6.4, 2.4 * len(traj)), squeeze=False)
        letters = [f"({panels.letter(i)}) " for i in range(2 * len(traj))]
        for row, e, pair in zip(axes, traj, zip(letters[::2], letters[1::2])):
            panels.trajectory_panels(row, e, pair)
        finish(fig, axes[0], any(e.surrogate for e in traj),
               "\n".join("; ".join([f"{e.label}: {panels.band_note(e, 'mean', 'bands')}", *panels.cycle_note(e)])
                         for e in traj))
        out.append(("fig4_trajectories", fig, "Figure 4: online trajectories — " + "; ".join(
            f"{a}cumulative R_HV and {b}{e.window}-pull moving average of the gap, {e.label} at "
            f"ρ={panels.trajectory_rho(e):g}, "
            + "; ".join([panels.band_note(e, "mean", "bands"), *panels.cycle_note(e)])
            for e, a, b in zip(traj, letters[::2], letters[1::2])), traj))
    if full:
        fig, axes = panels.side_by_side(len(full))
        for ax, e in zip(axes[0], full):
            panels.mean_panel(ax, e.runs[e.runs["cost_mode"] == "deterministic"], "f1", "Pareto F1", e.methods,
                              unit=e.cost_unit)
        letters = _titled(axes[0], [f"{e.title}: full set, K={e.k}" for e in full], full)
        finish(fig, axes[0], any(e.surrogate for e in full),
               "; ".join(f"{e.label}: {panels.band_note(e, 'mean')}" for e in full))
        out.append(("fig5_full_f1", fig, "Figure 5: Pareto F1 on the full configuration sets against log2 B — "
                    + "; ".join(f"{m}{e.label} (K={e.k}), {panels.band_note(e, 'mean')}"
                                for m, e in zip(letters, full)), full))
    if stochastic:
        out.append(_cost_mode_figure(stochastic))
    return out


def _cost_mode_figure(experiments: list[Experiment]):
    """Figure 6: error with deterministic against realised costs at each experiment's largest budget."""
    from matplotlib.patches import Patch

    fig, axes = panels.side_by_side(len(experiments))
    width = 0.38
    for ax, e in zip(axes[0], experiments):
        runs = e.runs[e.runs["rho"] == max(e.rho_grid)]
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
        ax.grid(alpha=0.3, axis="y")
    letters = _titled(axes[0], [f"{e.title}: K={e.k}, ρ={max(e.rho_grid):g}" for e in experiments], experiments)
    fig.legend([Patch(facecolor="white", edgecolor="black"), Patch(facecolor="white", edgecolor="black", hatch="///")],
               ["deterministic costs", "realised (stochastic) costs"], loc="lower center", ncol=2,
               bbox_to_anchor=(0.5, 1.0), frameon=False)
    notes = "; ".join(f"{e.label}: {panels.band_note(e, 'wilson', 'error bars')}" for e in experiments)
    finish(fig, [], any(e.surrogate for e in experiments), notes)
    caption = "Figure 6: deterministic against realised (stochastic) token costs — " + "; ".join(
        f"{m}{e.label} (K={e.k}, ρ={max(e.rho_grid):g})" for m, e in zip(letters, experiments)) + f"; {notes}"
    return "fig6_cost_modes", fig, caption, experiments


# --- drawing what changed -------------------------------------------------------------------------------

def _draw(subject: Experiment | list[Experiment], root: Path, formats: Sequence[str], current: dict[str, str],
          partial: dict[str, tuple[str, list[str]]], shared: frozenset[str] = frozenset(),
          ) -> list[tuple[Drawn, list[tuple[Path, bytes]] | None]]:
    """One experiment's figures, or (given the paper's experiments) the paper's figures, each with its files drawn
    in memory (:func:`rendered`): none for a figure ``current`` lists (stem: its experiments) with the same
    experiments, only the formats it lacks for one ``partial`` lists (stem: its experiments and those formats), and
    None for the landscape of an experiment in ``shared`` (labels whose landscape is another experiment's)."""
    if isinstance(subject, list):
        figures = [(stem, fig, caption, tuple(e.label for e in parts))
                   for stem, fig, caption, parts in _paper_figures(subject)]
    else:
        figures = [(figure_stem(subject.label, name), fig, caption, (subject.label,))
                   for name, fig, caption in experiment_figures(subject, subject.label not in shared)]
    surrogate = {e.label for e in (subject if isinstance(subject, list) else [subject]) if e.surrogate}
    out: list[tuple[Drawn, list[tuple[Path, bytes]] | None]] = []
    for stem, fig, caption, parts in figures:
        said = [label for label in parts if label in surrogate]  # the caption says it, as the figure's footnote does
        if said:
            caption += "; " + (SURROGATE_NOTE if len(said) == len(parts) else f"{', '.join(said)}: {SURROGATE_NOTE}")
        if fig is None:  # the same as another experiment's landscape, whose files plot gives it
            out.append((Drawn(stem, caption, parts), None))
            continue
        keep = current.get(stem) == "; ".join(parts)
        if keep:
            plt.close(fig)
        lacking = partial.get(stem, ("", []))
        drawn_in = lacking[1] if lacking[0] == "; ".join(parts) else formats
        out.append((Drawn(stem, caption, parts), [] if keep else rendered(fig, root / stem, drawn_in)))
    return out


def _one_file_name_each(experiments: Sequence[Experiment]) -> None:
    """Refuse, in one line before anything is drawn, two experiments whose figures have one file name
    (:func:`slug`): each plot drew one's over the other's, and the report showed one experiment's figures under
    both."""
    seen: dict[str, Experiment] = {}
    for e in experiments:
        other = seen.setdefault(slug(e.label), e)
        if other is not e:
            raise CabenchError(f"{e.folder}: experiment '{e.label}' would draw its figures into the files of "
                               f"'{other.label}' ({other.folder}): figures/{slug(e.label)}_*; rename one (run its "
                               "config with --name) or plot them from separate folders")


def figure_stem(label: str, name: str) -> str:
    """The stem of the experiment ``label``'s figure ``name`` (``landscape``, ``regret`` …), relative to the results
    root."""
    return f"figures/{slug(label)}_{name}"


def landscape_stem(label: str) -> str:
    """The stem of the landscape figure of the experiment ``label``."""
    return figure_stem(label, "landscape")


def _shared_landscapes(experiments: Sequence[Experiment], current: dict[str, str],
                       partial: dict[str, tuple[str, list[str]]]) -> dict[str, str]:
    """The experiments whose landscape is drawn for another (:func:`landscape_inputs`), each label with the label of
    the experiment it is drawn for, the first of its inputs. A landscape kept (``current``) or drawn in some formats
    only (``partial``) is drawn as it would be, for itself alone. Keyed by label, not file name: two labels can share
    a file name (:func:`slug`), and the second one's landscape was then another dataset's."""
    first: dict[str, str] = {}
    shared: dict[str, str] = {}
    for e in experiments:
        stem = landscape_stem(e.label)
        if current.get(stem) == e.label or partial.get(stem, ("", []))[0] == e.label:
            continue
        twin = first.setdefault(landscape_inputs(e), e.label)
        if twin != e.label:
            shared[e.label] = twin
    return shared


def _with_shared(drawn: dict[str, list[tuple[Drawn, list[tuple[Path, bytes]] | None]]], root: Path,
                 shared: dict[str, str]) -> dict[str, list[tuple[Drawn, list[tuple[Path, bytes]]]]]:
    """``drawn`` (by source, :func:`~cabench.figure_index.experiment_source`) with the files of each landscape drawn
    for another experiment (None) those of that experiment's landscape, under its own names."""
    def files_of(label: str) -> list[tuple[Path, bytes]]:
        (out,) = [out for d, out in drawn[figure_index.experiment_source(label)] if d.stem == landscape_stem(label)]
        assert out, label  # the first experiment of its inputs draws its landscape in every format asked for
        return out

    def copied(d: Drawn) -> list[tuple[Path, bytes]]:
        twin = files_of(shared[d.parts[0]])
        return [(figure_file(root / d.stem, path.name.rpartition(".")[2]), data) for path, data in twin]

    return {source: [(d, out if out is not None else copied(d)) for d, out in part] for source, part in drawn.items()}


@functools.cache
def drawing_version() -> str:
    """SHA-256 (16 hex digits) of the drawing code (:data:`DRAWING`), cabench's and the drawing libraries'
    versions: part of every figure's key."""
    h = hashlib.sha256(" ".join([cabench.__version__, matplotlib.__version__, *map(importlib.metadata.version, (
        "adjustText", "pypdfium2", "pillow"))]).encode())
    for module in DRAWING:
        h.update(Path(str(importlib.import_module(module).__file__)).read_bytes())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Plotted:
    """What :func:`plot` did: where the figure index is, the files drawn now, those kept (inputs unchanged)."""

    index: Path
    written: list[Path]
    kept: list[Path]
    left: list[Path] = field(default_factory=list)  # out-of-date figure files plot did not write: not deleted
    boxes: list[str] = field(default_factory=list)  # characters of the names drawn that the font has no glyph for
    removed: list[Path] = field(default_factory=list)  # files of figures no longer drawn (their results went away)
    damaged: str = ""  # why the index read was damaged (rebuilt from the figures drawn now), if it was

    def message(self) -> str:
        """One line saying what was drawn and what was up to date (and which old files were not cabench's to
        delete)."""
        where = self.index / "figures.csv"
        left = "" if not self.left else (
            f"; left {len(self.left)} out-of-date file{'s' if len(self.left) > 1 else ''} it did not write as they "
            f"are ({first_three([str(p) for p in self.left])}; no report "
            "shows them)")
        left += "" if not self.damaged else f"; the index was damaged ({self.damaged}) and is rebuilt"
        left += "" if not self.removed else (
            f"; removed {len(self.removed)} file{'s' if len(self.removed) > 1 else ''} of figures no longer drawn, "
            f"their results gone or changed ({first_three([str(p) for p in self.removed])})")
        if not self.written:
            return (f"figures up to date, nothing redrawn ({len(self.kept)} files; their result files and the "
                    f"drawing code are unchanged); index {where}{left}")
        boxes = "" if not self.boxes else (
            f"; the figures' font has no glyph for {', '.join(repr(c) for c in self.boxes[:5])}"
            f"{' and more' if len(self.boxes) > 5 else ''} (drawn as boxes; the reports write the names in full)")
        return f"drew {len(self.written)} files, kept {len(self.kept)} up to date; index {where}{left}{boxes}"


def plot(folder: Path, formats: Sequence[str], n_jobs: int = 1) -> Plotted:
    """Draw the figures of the results below ``folder`` whose result files or drawing code changed, in ``n_jobs``
    processes (the files do not depend on it), into the folder of :func:`~cabench.figure_index.index_root`, and
    record them in its index; the figures of the paper's layouts are redrawn when one of their inputs changed."""
    from cabench.backends import Backend, parallel_map

    formats = check_formats(formats)
    root = figure_index.index_root(folder)
    figure_index.check_index_is_ours(root)  # a user's figures.csv is never rebuilt over
    res = ResultSet(root, selections=False)  # labels and paper experiments as the report sees them; no selections
    mine = [e for e in res.experiments if any(_within(f, folder) for f in (e.folder, *e.duplicates))]
    if not mine:
        raise no_results(folder)
    _one_file_name_each(res.experiments)
    subjects: dict[str, Experiment | list[Experiment]] = {
        figure_index.experiment_source(e.label): e for e in mine}
    paper = [e for e in res.experiments if e.paper_role]
    if any(e.paper_role for e in mine):
        subjects[figure_index.PAPER] = paper
    hashes = {e.label: figure_index.experiment_inputs(e.folder, root) for e in (*mine, *paper)}

    def inputs(labels: Sequence[str]) -> dict[str, str]:
        return {path: digest for label in labels for path, digest in hashes[label].items()}

    try:
        index, damaged = figure_index.read_index(root), ""
    except CabenchError as exc:  # every figure drawn again, and the index written anew: said
        index, damaged = figure_index.read_index(root, damaged_as_empty=True), str(exc).split(": ", 1)[-1]
        damaged = damaged.split("; run `cabench plot` again")[0]
    version = drawing_version()
    current: dict[str, str] = {}  # stem: experiments, of every figure that needs no drawing
    partial: dict[str, tuple[str, list[str]]] = {}  # stem: experiments and the formats of a figure current in others
    for _, row in index.iterrows():
        labels = row["experiments"].split("; ")
        lacking = (figure_index.to_draw(root, row, inputs(labels), version, formats)
                   if set(labels) <= hashes.keys() else None)
        if lacking == []:
            current[row["stem"]] = row["experiments"]
        elif lacking:
            partial[row["stem"]] = (row["experiments"], lacking)
    stale = []
    for source, subject in subjects.items():
        rows = index[index["source"] == source]
        labels = {e.label for e in subject} if isinstance(subject, list) else {subject.label}
        drawn_from = {label for names in rows["experiments"] for label in names.split("; ")}
        if rows.empty or drawn_from != labels or not rows["stem"].isin(current).all():
            stale.append(source)  # drawn again; its figures still current are not written
    first = sorted(stale, key=lambda s: s != figure_index.PAPER)  # the longest task first: no tail on one worker
    shared = _shared_landscapes([e for e in map(subjects.get, stale) if isinstance(e, Experiment)], current, partial)
    done = dict(zip(first, parallel_map(_draw, [(subjects[s], root, formats, current, partial, frozenset(shared))
                                                for s in first], Backend("loky", n_jobs))))
    filled = _with_shared(done, root, shared)
    drawn = [filled[s] for s in stale]
    written = _write(root, [file for part in drawn for _, files in part for file in files],
                     figure_index.recorded_outputs(index))
    ours = index[index["source"].isin(subjects) & index["stem"].isin(current)]
    kept = [root / f"{stem}.{fmt}" for stem in ours["stem"] for fmt in formats]
    old = index.drop_duplicates("stem", keep="last").set_index("stem", drop=False)
    rows, carried = [], []  # carried: files of other formats, drawn before from the same inputs by the same code
    for source, part in zip(stale, drawn):
        for d, files in part:
            if not files:
                rows.append({"stem": d.stem, **old.loc[d.stem].to_dict()})
                continue
            before, read = old.loc[d.stem] if d.stem in old.index else None, inputs(d.parts)
            # the formats of files kept: those not asked for, and those asked for that were current (not drawn)
            also = figure_index.carried_formats(root, before, read, version, [p.suffix[1:] for p, _ in files])
            carried += [root / f"{d.stem}.{fmt}" for fmt in also]
            rows.append(figure_index.figure_row(d.stem, d.caption, d.parts, source, formats, read, version, files,
                                                also))
    replaced = set(stale) | (set(index["source"]) - set(subjects) if root == folder else set())
    gone = index[index["source"].isin(replaced) & ~index["stem"].isin(current)]
    removed, left = figure_index.remove_figures(root, gone, keep=[*written, *carried])
    figure_index.record_figures(root, rows, replaced)
    names = [text for e in mine for text in (e.label, *e.arms["config_id"].astype(str))] if written else []
    return Plotted(root, written, [*kept, *carried], left, panels.missing_glyphs(names), removed, damaged)


def _write(root: Path, files: list[tuple[Path, bytes]], recorded: dict[str, str]) -> list[Path]:
    """Write the figures drawn, all or none (:func:`~cabench.storage.replaced_together`): refused, before any is
    written, where a file that is not a figure cabench drew (:func:`~cabench.figure_index.drawn_by_cabench`) has a
    figure's name (``recorded``: the files the index records); a file system's error (a full disk) leaves every file
    as it was."""
    theirs = [path for path, _ in files if path.is_file() and not figure_index.drawn_by_cabench(path, root, recorded)]
    if theirs:
        more = f" (and {len(theirs) - 1} more)" if len(theirs) > 1 else ""
        raise CabenchError(f"{theirs[0]}{more}: a file cabench did not draw has the name of a figure it draws; "
                           "nothing was drawn over it: move it away, or plot into another folder")
    remove_stale_temporaries([path for path, _ in files])  # left by a plot killed while it renamed them
    try:
        with replaced_together() as batch:
            for path, data in files:
                path.parent.mkdir(parents=True, exist_ok=True)
                batch.write(path, data)
    except OSError as exc:
        raise CabenchError(f"{exc.filename or root}: cannot write figures ({os_reason(exc)}); pass a writable "
                           "results folder, or make room") from None
    return [path for path, _ in files]


def plot_results(root: Path, formats: Sequence[str], n_jobs: int = 1) -> list[Path]:
    """Bring every figure of the results below ``root`` up to date (:func:`plot`); return their files, drawn now
    or kept."""
    done = plot(root, formats, n_jobs)
    return [*done.written, *done.kept]
