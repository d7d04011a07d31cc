"""Figures that read well and are never stale: configuration names placed apart and inside the axes, panel letters
in caption order, the marker-size key, figures redrawn only when the result files they read change, `plot` of a
subfolder kept in the root's index, and a figure whose results changed never reported as current."""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import io
import re
from pathlib import Path

import adjustText
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import FancyArrowPatch
from PIL import Image
from typer.testing import CliRunner

from cabench import panels
from cabench.config import load_config
from cabench.errors import CabenchError
from cabench.figure_index import current_figures
from cabench.landscape import landscape_figure
from cabench.plots import _paper_figures, experiment_figures, plot, save
from cabench.results import ResultSet
from cabench.runner import run_experiment
from tests.conftest import ROOT, built_once, copied, shipped
from tests.test_torture import checksums, one_line_error

QUICK = {"online": ROOT / "configs" / "piqa_online_quick.yaml", "psi": ROOT / "configs" / "piqa_psi_quick.yaml"}


@pytest.fixture(scope="module")
def plotted(tmp_path_factory) -> Path:
    """PIQA online and identification, three repetitions each, plotted once in the test session (copy before
    changing it: :func:`results`)."""
    def build(root: Path) -> None:
        for name, config in QUICK.items():
            run_experiment(load_config(config, overrides={"repetitions": 3, "output": str(root / name)}), quiet=True)
        plot(root, ["png"])

    return built_once(tmp_path_factory, "figures", lambda folder: build(folder / "results")) / "results"


@pytest.fixture
def results(plotted, tmp_path) -> Path:
    return copied(plotted, tmp_path)


def _state(root: Path) -> dict[str, tuple[int, str]]:
    """Every figure file and the index: modification time and SHA-256."""
    files = [root / "figures.csv", *root.glob("fig*.png"), *(root / "figures").glob("*.png")]
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in files}


def _change(path: Path) -> None:
    """Change a result file's bytes, not its content: a blank line at the end."""
    path.write_bytes(path.read_bytes() + b"\n")


def _overlap(a, b) -> float:
    return max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0)) * max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0))


# --- what a figure shows -------------------------------------------------------------------------------------

@pytest.mark.parametrize("datasets", [["piqa"], ["gsm8k", "piqa"]])
def test_configuration_names_neither_overlap_nor_leave_the_axes(datasets):
    """Figure 1 on PIQA overprinted gpt-2's two names and put mistral's and tinyllama's outside the axes."""
    fig = landscape_figure([shipped(name) for name in datasets])
    renderer = fig.canvas.get_renderer()
    for ax, name in zip(fig.axes, datasets):
        arms = shipped(name)
        boxes = [t.get_window_extent(renderer) for t in ax.texts]
        assert len(boxes) == 7 and {t.get_text() for t in ax.texts} <= set(arms.configs["config_id"])
        frame = ax.get_window_extent(renderer)
        for box in boxes:
            assert frame.x0 - 0.5 <= box.x0 and box.x1 <= frame.x1 + 0.5, (box, frame)
            assert frame.y0 - 0.5 <= box.y0 and box.y1 <= frame.y1 + 0.5, (box, frame)
        overlaps = [_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]]
        assert max(overlaps) == 0.0, overlaps
    plt.close(fig)


def test_names_crowded_in_a_corner_are_set_apart_inside_the_axes():
    """The practitioner example's latency-against-cost panel: five Pareto arms within 0.05 of the top right corner.
    adjustText, keeping names inside the axes, left two of them printed over each other; each overprinted name now
    gets the nearest room around its arm, with a leader line to it."""
    from cabench.landscape import landscape_grid, landscape_panels

    names = ["cirrus-8b/direct", "cirrus-70b/direct", "boreal-mini/direct", "boreal-pro/cot", "atlas-small/direct",
             "atlas-large/direct", "atlas-large/cot", "cirrus-8b/cot", "boreal-mini/cot"]
    arms = pd.DataFrame({
        "config_id": names,
        "mu_accuracy": [0.520, 0.713, 0.577, 0.787, 0.610, 0.727, 0.820, 0.477, 0.633],
        "mu_latency": [0.9925, 0.9542, 0.9818, 0.2776, 0.9671, 0.8329, 0.0898, 0.8224, 0.7491],
        "mu_cost": [0.9999, 0.9707, 0.9926, 0.2889, 0.9406, 0.7685, 0.0191, 0.9949, 0.9607],
        "profile_cost": [1.2e-5, 1.3e-4, 4.2e-5, 2.6e-3, 2.4e-4, 9.2e-4, 3.8e-3, 3.2e-5, 1.6e-4],
        "pareto": [1, 1, 1, 1, 1, 1, 1, 0, 0]})
    fig, (axes,) = landscape_grid([3], 3.0)
    landscape_panels(axes, arms, "mine", ["accuracy", "latency", "cost"], "usd")
    panels.finish(fig, [], False)
    renderer = fig.canvas.get_renderer()
    for ax in axes:
        boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_gid() == panels.ARM_NAME]
        frame = ax.get_window_extent(renderer)
        assert len(boxes) == 7
        for box in boxes:
            assert frame.x0 - 0.5 <= box.x0 and box.x1 <= frame.x1 + 0.5, (box, frame)
            assert frame.y0 - 0.5 <= box.y0 and box.y1 <= frame.y1 + 0.5, (box, frame)
        assert max(_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]) == 0.0
    plt.close(fig)


def test_intervals_are_named_as_they_are_drawn(tmp_path_factory):
    """A curve over budgets has bands; a single budget's points, and Figure 6's bars, have error bars; the captions
    said "bands" for both. Trajectories, at one budget, are curves over pulls: bands."""
    from cabench.plots import _cost_mode_figure, _experiment_figures
    from tests.test_scorecard import quick_results

    experiments = {e.label: e for e in ResultSet(quick_results(tmp_path_factory)).experiments}
    captions = {}
    for label, e in experiments.items():
        for name, fig, caption in _experiment_figures(e):
            captions[label, name] = caption
            plt.close(fig)
    stochastic = experiments["gsm8k_psi_stochastic"]
    assert len(stochastic.rho_grid) == 1 and len(experiments["gsm8k_psi"].rho_grid) > 1
    assert "; error bars: error 95% Wilson interval, F1 mean ± 95% CI" in captions[
        "gsm8k_psi_stochastic", "identification"]
    assert "; bands: error 95% Wilson interval, F1 mean ± 95% CI" in captions["gsm8k_psi", "identification"]
    assert "; bands: mean ± 95% CI (normal)" in captions["gsm8k_online", "regret"]
    assert "; bands: mean ± 95% CI (normal)" in captions["gsm8k_online", "trajectories"]
    _, fig, caption, _ = _cost_mode_figure([stochastic])
    plt.close(fig)
    assert caption.endswith("gsm8k_psi_stochastic: error bars: 95% Wilson interval over 20 repetitions")


def test_names_too_long_for_a_panel_are_placed_without_a_warning_a_step(caplog, monkeypatch):
    """adjustText logs "Some labels are too long, can't fit inside the X axis" on each of its 400 steps where a
    name overhangs a panel: up to 416 lines on stderr a plot of 300 configurations. Its warnings are not shown while
    names are placed, and its logger is as it was after."""
    import logging

    from cabench.landscape import landscape_panel

    adjust = panels.adjust_text

    def overhanging(*args, **kwargs):  # as adjustText says it of a name wider than its axes, on every step
        for _ in range(3):
            logging.getLogger("adjustText").warning("Some labels are too long, can't fit inside the X axis")
        return adjust(*args, **kwargs)

    monkeypatch.setattr(panels, "adjust_text", overhanging)

    arms = pd.DataFrame({"config_id": ["a-configuration-name-of-forty-characters", "x" * 40, "short"],
                         "mu_accuracy": [0.9, 0.5, 0.2], "mu_efficiency": [0.1, 0.5, 0.9],
                         "profile_cost": [100.0, 150.0, 200.0], "pareto": [1, 1, 1]})
    fig, ax = plt.subplots(figsize=(1.2, 1.2))
    landscape_panel(ax, arms, "narrow", ["accuracy", "efficiency"], "tokens")
    with caplog.at_level(logging.WARNING):
        panels.finish(fig, [], False)
    assert not [r for r in caplog.records if "too long" in r.getMessage()]
    assert logging.getLogger("adjustText").level == logging.NOTSET
    plt.close(fig)


def test_a_crowded_landscape_names_its_own_front_and_keeps_off_the_nearest_markers(monkeypatch):
    """600 configurations, 40-odd in the Pareto set of three objectives: naming all of them, kept off all 600
    markers, took adjustText minutes a panel (its work grows with names x markers, each of 400 steps) and could not
    be read. A panel names at most 12, on its own front, and keeps them off the 200 markers nearest to them."""
    from cabench.landscape import landscape_grid, landscape_panels

    given = []
    adjust = panels.adjust_text

    def nearest(texts, x, y, **k):  # the markers kept clear are the 200 nearest to the names, on the panel
        ax = k["ax"]
        every = ax.transData.transform(np.asarray(ax.collections[0].get_offsets(), dtype=float))
        at = ax.transData.transform(np.array([t.get_position() for t in texts]))
        gap = np.linalg.norm(every[:, None, :] - at[None, :, :], axis=2).min(axis=1)
        kept = np.isin(every, ax.transData.transform(np.column_stack([x, y]))).all(axis=1)
        given.append(int(kept.sum()))
        assert gap[kept].max() <= gap[~kept].min()
        return adjust(texts, x=x, y=y, **k)

    monkeypatch.setattr(panels, "adjust_text", nearest)
    rng = np.random.default_rng(0)
    accuracy = rng.beta(2, 3, 600)
    latency, cost = (1 - accuracy + rng.normal(0, 0.08, 600) for _ in range(2))
    arms = pd.DataFrame({"config_id": [f"model-{i:03d}" for i in range(600)], "mu_accuracy": accuracy,
                         "mu_latency": latency, "mu_cost": cost, "profile_cost": rng.uniform(1, 4, 600)})
    means = arms[["mu_accuracy", "mu_latency", "mu_cost"]].to_numpy()
    arms["pareto"] = [int(not ((means > m).all(axis=1)).any()) for m in means]
    assert arms["pareto"].sum() > 36
    fig, (axes,) = landscape_grid([3], 3.0)
    landscape_panels(axes, arms, "crowded", ["accuracy", "latency", "cost"], "tokens")
    panels.finish(fig, [], False)
    assert given == [200, 200, 200]
    pareto = set(arms.loc[arms["pareto"] == 1, "config_id"])
    for ax in axes:
        names = [t.get_text() for t in ax.texts if t.get_gid() == panels.ARM_NAME]
        assert 0 < len(names) <= 12 and set(names) <= pareto
        assert f"named: {len(names)} of the {len(pareto)} in black" in ax.get_legend().get_title().get_text()
    plt.close(fig)


def test_a_long_configuration_name_is_shortened_to_stay_inside_the_axes():
    """A 170-character name ran across the neighbouring panels; it keeps its start and end around an ellipsis."""
    from cabench.landscape import NAME_CHARACTERS, landscape_panel
    from cabench.panels import shown_name

    long = ["run_" + "x" * 160 + "_end", "y" * 41, "short"]
    arms = pd.DataFrame({"config_id": long, "mu_accuracy": [0.9, 0.5, 0.2], "mu_efficiency": [0.1, 0.5, 0.9],
                         "profile_cost": [100.0, 150.0, 200.0], "pareto": [1, 1, 1]})
    assert shown_name(long[0]) == "run_" + "x" * 16 + "…" + "x" * 15 + "_end"
    assert len(shown_name(long[0])) == len(shown_name(long[1])) == NAME_CHARACTERS and shown_name("short") == "short"
    fig, ax = plt.subplots(figsize=(3.6, 3.4))
    landscape_panel(ax, arms, "long names", ["accuracy", "efficiency"], "tokens")
    panels.finish(fig, [], False)
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    assert sorted(t.get_text() for t in ax.texts) == sorted(map(shown_name, long))
    for box in (t.get_window_extent(renderer) for t in ax.texts):
        assert frame.x0 - 0.5 <= box.x0 and box.x1 <= frame.x1 + 0.5, (box, frame)
    plt.close(fig)


def test_names_placed_with_remembered_steps_are_placed_as_step_by_step(monkeypatch):
    """adjustText's steps looked up once the boxes cycle (GSM8K's 108 arms: a cycle from step 14) place every name
    where computing all :data:`~cabench.panels.PLACING` steps does, to the bit, with fewer steps computed."""
    computed = []
    iterate = adjustText.iterate
    monkeypatch.setattr(adjustText, "iterate", lambda *a, **k: computed.append(1) or iterate(*a, **k))

    def placed() -> list[tuple]:
        fig = landscape_figure([shipped("gsm8k")])
        (ax,) = fig.axes
        out = [(t.get_text(), *t.get_position()) for t in ax.texts]
        out += [tuple(np.ravel(p.get_path().vertices)) for p in ax.patches if isinstance(p, FancyArrowPatch)]
        plt.close(fig)
        return out

    remembered = placed()
    assert 0 < len(computed) < panels.PLACING / 4  # the steps before the cycle, once each
    computed.clear()
    monkeypatch.setattr(panels, "_steps_remembered", contextlib.nullcontext)
    step_by_step = placed()
    assert len(computed) == panels.PLACING  # the names never settle: every step is taken
    assert remembered == step_by_step and len(remembered) > 7  # names and leader lines


def test_a_landscape_says_what_marker_size_means():
    """A key below the panel: two or three costs c_i in the cost unit, each drawn at the size the scatter gives it."""
    fig = landscape_figure([shipped("piqa")])
    (ax,) = fig.axes
    key = ax.get_legend()
    assert key.get_title().get_text() == "marker size: profiling cost c_i, tokens per call"
    costs = np.array([float(t.get_text()) for t in key.get_texts()])
    areas = np.array([h.get_markersize() ** 2 for h in key.legend_handles])
    assert 2 <= len(costs) <= 3 and np.all(np.diff(costs) > 0)
    profile = shipped("piqa").profile_cost
    assert profile.min() <= costs.min() and costs.max() <= profile.max()
    slope, intercept = np.polyfit(profile, ax.collections[0].get_sizes(), 1)  # area is linear in c_i
    assert np.allclose(areas, slope * costs + intercept, rtol=1e-6)
    plt.close(fig)


@pytest.mark.parametrize("costs", [[178.1, 178.1, 178.1], [178.1, 178.1 + 1e-7, 178.1]])
def test_a_landscape_of_configurations_costing_alike_keeps_one_marker_size(costs):
    """Every arm costs the same (or all but alike): the key names that cost once, at the smallest size."""
    from cabench.landscape import MIN_AREA, landscape_panel

    arms = pd.DataFrame({"config_id": ["a", "b", "c"], "mu_accuracy": [0.9, 0.5, 0.2],
                         "mu_efficiency": [0.1, 0.5, 0.9], "profile_cost": costs, "pareto": [1, 1, 1]})
    fig, ax = plt.subplots()
    landscape_panel(ax, arms, "alike", ["accuracy", "efficiency"], "tokens")
    key = ax.get_legend()
    assert [t.get_text() for t in key.get_texts()] == ["178.1"]
    assert [h.get_markersize() ** 2 for h in key.legend_handles] == pytest.approx([MIN_AREA])
    fig.canvas.draw()  # it draws
    plt.close(fig)


def test_panel_letters_follow_the_captions(plotted):
    """Every figure of several panels letters them (a), (b), … in order, and its caption cites the same letters;
    the paper's figures name each panel's experiment after its letter."""
    res = ResultSet(plotted)
    figures = [(stem, fig, caption, [e.label for e in parts]) for stem, fig, caption, parts in
               _paper_figures(res.experiments)]
    figures += [(name, fig, caption, []) for e in res.experiments for name, fig, caption in experiment_figures(e)]
    lettered = 0
    for stem, fig, caption, parts in figures:
        titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
        plt.close(fig)
        letters = [m.group(1) if (m := re.match(r"\(([a-z])\) ", t)) else "" for t in titles]
        cited = re.findall(r"\(([a-z])\) ", caption)
        if len(titles) == 1:
            assert letters == [""] and cited == [], stem
            continue
        lettered += 1
        assert letters == cited == list("abcdefgh"[:len(titles)]), (stem, titles, caption)
        if stem == "fig2_online_regret":
            assert parts == ["piqa_online", "piqa_psi"] and "(a) piqa_online, (b) piqa_psi" in caption
            assert all(f"({letter}) " in title and f"({label})" in title
                       for letter, label, title in zip(letters, parts, titles))
    assert lettered == 5  # Figure 2 (online, subset), Figure 4 (two panels), regret, trajectories, identification


LONG_LABELS = ["piqa_online_gpt_family_temperature_sweep_with_vendor_prices_v2",  # 62 characters
               "PIQA_ONLINE_GPT_FAMILY_TEMPERATURE_SWEEP_WITH_VENDOR_PRICES_V2"]  # 40 of them leave the figure


def _titles(figures, wanted) -> dict[str, tuple[list[str], list, object]]:
    """The panel titles of the figures ``(stem, figure)`` whose stem is ``wanted``, their boxes once drawn and the
    figure's box (every figure closed)."""
    out = {}
    for stem, fig in figures:
        if wanted(stem):
            fig.canvas.draw()
            renderer = fig.canvas.get_renderer()
            titles = [ax.title for ax in fig.axes if ax.get_title()]
            out[stem] = ([t.get_text() for t in titles], [t.get_window_extent(renderer) for t in titles], fig.bbox)
        plt.close(fig)
    return out


def _pair_titles(e) -> dict[str, tuple[list[str], list, object]]:
    """The panel titles of an experiment's two-panel figures, their boxes once drawn and the figure's box."""
    return _titles(((stem, fig) for stem, fig, _caption in experiment_figures(e)), lambda stem: stem != "landscape")


@pytest.mark.parametrize("long", LONG_LABELS)
def test_a_long_experiment_name_keeps_the_panel_titles_apart_and_inside_the_figure(plotted, long):
    """A 62-character name ran the trajectory titles (and the regret and identification ones) into each other: the
    name goes on a line of its own, shortened around an ellipsis, and no two titles overlap or leave the figure."""
    drawn = {}
    for e in ResultSet(plotted).experiments:
        e.label = long
        drawn.update(_pair_titles(e))
    assert sorted(drawn) == ["identification", "regret", "trajectories"]
    for stem, (texts, boxes, figure) in drawn.items():
        assert len(boxes) == 2, stem
        (a, b) = sorted(boxes, key=lambda box: box.x0)
        assert a.x1 < b.x0, (stem, texts, a, b)
        assert figure.x0 <= a.x0 and b.x1 <= figure.x1, (stem, texts, a, b, figure)
        for mark, text in zip(("(a) ", "(b) "), texts):
            first, second = text.split("\n")
            name = first.removeprefix(mark).removesuffix(":")
            assert first.startswith(mark) and len(name) <= panels.NAME_CHARACTERS and "…" in name, (stem, text)
            assert long.startswith(name.split("…")[0]) and long.endswith(name.split("…")[1])
    assert drawn["trajectories"][0][1].endswith(":\n50-pull moving average of the gap (ρ=32)")


def test_a_short_experiment_name_keeps_its_panel_titles_on_one_line(plotted):
    drawn = {}
    for e in ResultSet(plotted).experiments:
        drawn.update(_pair_titles(e))
    assert {stem: texts for stem, (texts, _boxes, _figure) in drawn.items()} == {
        "regret": ["(a) piqa_online: R_HV", "(b) piqa_online: R_std"],
        "trajectories": ["(a) piqa_online: cumulative R_HV (ρ=32)",
                         "(b) piqa_online: 50-pull moving average of the gap (ρ=32)"],
        "identification": ["(a) piqa_psi: P(error), K=14", "(b) piqa_psi: Pareto F1, K=14"]}


PAPER_TITLED = ("fig2_online_regret", "fig3_standard_regret", "fig5_full_f1", "fig6_cost_modes")


def _paper_set(plotted, labels: dict[str, str]) -> list:
    """PIQA's online and subset experiments as the paper's, the subset one also as two full-set and two
    stochastic-cost experiments (Figures 5 and 6 side by side), each labelled ``labels[role]`` (``{role}2`` for the
    second)."""
    online, subset = sorted(ResultSet(plotted).experiments, key=lambda e: e.setting != "online")
    out = []
    for role, e in [("online", online), ("psi-subset", subset), ("psi-full", subset), ("psi-full2", subset),
                    ("psi-stochastic", subset), ("psi-stochastic2", subset)]:
        e = copy.copy(e)
        e.meta = {**e.meta, "paper_experiment": role.removesuffix("2")}
        e.label = labels[role]
        out.append(e)
    return out


def _paper_titles(experiments) -> dict[str, tuple[list[str], list, object]]:
    """The panel titles of Figures 2, 3, 5 and 6, their boxes once drawn and the figure's box."""
    return _titles(((stem, fig) for stem, fig, _caption, _parts in _paper_figures(experiments)),
                   lambda stem: stem in PAPER_TITLED)


def test_the_paper_figures_keep_the_shipped_names_on_one_line(plotted):
    labels = {"online": "piqa_online", "psi-subset": "piqa_psi", "psi-full": "gsm8k_psi_full",
              "psi-full2": "piqa_psi_full", "psi-stochastic": "gsm8k_psi_stochastic",
              "psi-stochastic2": "piqa_psi_stochastic"}
    drawn = _paper_titles(_paper_set(plotted, labels))
    assert {stem: texts for stem, (texts, _boxes, _figure) in drawn.items()} == {
        "fig2_online_regret": ["(a) PIQA: online, K=132 (piqa_online)",
                               "(b) PIQA: Pareto identification, K=14 (piqa_psi)"],
        "fig3_standard_regret": ["PIQA: online, K=132 (piqa_online)"],
        "fig5_full_f1": ["(a) PIQA: full set, K=14 (gsm8k_psi_full)", "(b) PIQA: full set, K=14 (piqa_psi_full)"],
        "fig6_cost_modes": ["(a) PIQA: K=14, ρ=2000 (gsm8k_psi_stochastic)",
                            "(b) PIQA: K=14, ρ=2000 (piqa_psi_stochastic)"]}


@pytest.mark.parametrize("long", LONG_LABELS)
def test_a_long_paper_experiment_name_keeps_the_paper_titles_apart_and_inside_the_figure(plotted, long):
    """A renamed paper experiment's name ran Figure 3's single title 80 points out of the figure on each side and
    Figures 2, 5 and 6's titles into each other: the name goes on a line of its own below the title, shortened
    around an ellipsis, and no two titles overlap or leave the figure."""
    roles = ["online", "psi-subset", "psi-full", "psi-full2", "psi-stochastic", "psi-stochastic2"]
    drawn = _paper_titles(_paper_set(plotted, {role: long for role in roles}))
    assert sorted(drawn) == sorted(PAPER_TITLED)
    for stem, (texts, boxes, figure) in drawn.items():
        assert len(boxes) == (1 if stem == "fig3_standard_regret" else 2), stem
        boxes = sorted(boxes, key=lambda box: box.x0)
        assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:])), (stem, texts, boxes)
        assert figure.x0 <= boxes[0].x0 and boxes[-1].x1 <= figure.x1, (stem, texts, boxes, figure)
        for text in texts:
            title, name = text.split("\n")
            name = name.removeprefix("(").removesuffix(")")
            assert len(name) <= panels.NAME_CHARACTERS and "…" in name, (stem, text)
            assert long.startswith(name.split("…")[0]) and long.endswith(name.split("…")[1])
    assert drawn["fig3_standard_regret"][0][0].startswith("PIQA: online, K=132\n(")
    assert drawn["fig6_cost_modes"][0][1].startswith("(b) PIQA: K=14, ρ=2000\n(")


def test_the_trajectory_caption_explains_the_round_robin_sawtooth(plotted):
    caption = pd.read_csv(plotted / "figures.csv").set_index("stem").loc["fig4_trajectories", "caption"]
    assert "Uniform cycles through the arms, so the moving average of the gap oscillates with period K=132" in caption


# --- drawn again only when the inputs change -----------------------------------------------------------------

def test_a_second_plot_redraws_nothing_and_a_changed_result_redraws_its_figures(results):
    before = _state(results)
    again = plot(results, ["png"])
    assert again.written == [] and "nothing redrawn" in again.message() and len(again.kept) == len(before) - 1
    assert _state(results) == before
    _change(results / "psi" / "runs.csv")
    third = plot(results, ["png"])
    after = _state(results)
    changed = {name for name in before if after[name] != before[name]}
    assert changed == {"figures.csv", "figures/piqa_psi_landscape.png", "figures/piqa_psi_identification.png",
                       "fig2_online_regret.png"}  # the one paper figure that reads it, not Figures 1, 3 and 4
    assert {str(p.relative_to(results)) for p in third.written} == changed - {"figures.csv"}
    # dataset.csv gives the title the figures show: a figure drawn before it changed is not current
    assert "figures/piqa_psi_landscape" in set(current_figures(results)["stem"])
    table = pd.read_csv(results / "psi" / "dataset.csv")
    table.assign(title="PIQA, edited").to_csv(results / "psi" / "dataset.csv", index=False)
    assert "figures/piqa_psi_landscape" not in set(current_figures(results)["stem"])


def test_a_figure_file_replaced_since_it_was_drawn_is_never_embedded_nor_drawn_over(results):
    """A file at a figure's name that is not the figure plot drew (replaced or edited since) is left out of the
    report and is not plot's to draw over: refused, naming it, with nothing written; moved away, the figure is drawn
    again."""
    damaged = results / "figures" / "piqa_psi_landscape.png"
    damaged.write_bytes(b"not the figure")
    assert "figures/piqa_psi_landscape" not in set(current_figures(results)["stem"])  # the report leaves it out
    before = checksums(results)
    with pytest.raises(CabenchError, match=f"^{re.escape(str(damaged))}: a file cabench did not draw"):
        plot(results, ["png"])
    assert checksums(results) == before
    damaged.unlink()
    done = plot(results, ["png"])
    assert [str(p.relative_to(results)) for p in done.written] == ["figures/piqa_psi_landscape.png"]
    assert damaged.read_bytes().startswith(b"\x89PNG")
    assert "figures/piqa_psi_landscape" in set(current_figures(results)["stem"])


def test_plot_never_draws_over_a_file_it_did_not_draw(results):
    """With the index gone, plot tells its own figures (signed in their metadata) from a user's file of a figure's
    name: the user's file is refused in one line naming it, and nothing is written; without it every figure is
    drawn again over plot's own files."""
    from cabench.cli import app

    (results / "figures.csv").unlink()
    drawn = sorted(results.rglob("*.png"))
    assert drawn and all(b"tEXtSoftware\0cabench" in p.read_bytes() for p in drawn)
    mine = results / "fig1_landscapes.png"
    mine.write_bytes(b"\x89PNG the paper's own Figure 1, kept beside ours")
    before = checksums(results)
    refused = CliRunner().invoke(app, ["plot", str(results), "--format", "png"])
    one_line_error(refused, f"{mine}: a file cabench did not draw has the name of a figure it draws; nothing was "
                   "drawn over it")
    assert checksums(results) == before
    mine.unlink()
    again = CliRunner().invoke(app, ["plot", str(results), "--format", "png"])
    assert again.exit_code == 0, again.output
    assert sorted(results.rglob("*.png")) == drawn and len(current_figures(results)) == len(drawn)


def test_an_index_naming_files_outside_its_root_deletes_and_embeds_none(results, tmp_path):
    """A figures.csv received with someone's results whose stems named files outside the root ('../x', an absolute
    path), with those files' SHA-256 as their outputs: plot deleted them as figures no longer drawn, and report
    embedded them. The report refuses such an index in one line, and plot rebuilds it, deleting nothing outside."""
    from cabench.cli import app

    outside = tmp_path / "outside"
    outside.mkdir()
    victims = [outside / "victim.png", outside / "other.png"]
    for victim in victims:
        victim.write_bytes(b"\x89PNG someone's own picture")
    digest = hashlib.sha256(victims[0].read_bytes()).hexdigest()
    index = pd.read_csv(results / "figures.csv", dtype=str, keep_default_na=False)
    crafted = [{**index.iloc[0].to_dict(), "stem": stem, "experiments": "ghost", "source": "experiment:ghost",
                "formats": "png", "outputs": f'{{"png": "{digest}"}}'}
               for stem in (f"../{outside.name}/victim", str(outside / "other"))]
    pd.concat([index, pd.DataFrame(crafted)]).to_csv(results / "figures.csv", index=False)
    line = len(index) + 2
    refused = CliRunner().invoke(app, ["report", str(results)])
    one_line_error(refused, f"{results / 'figures.csv'}: line {line}: stem '../{outside.name}/victim' is no file "
                   f"below {results} (absolute, or through '..'): a damaged or crafted index, whose files cabench "
                   "neither deletes nor embeds; run `cabench plot` again")
    done = CliRunner().invoke(app, ["plot", str(results), "--format", "png"])
    assert done.exit_code == 0, done.output
    assert (f"; the index was damaged (line {line}: stem '../{outside.name}/victim' is no file below {results}"
            in " ".join(done.output.split()))
    assert all(v.read_bytes() == b"\x89PNG someone's own picture" for v in victims)
    assert not any(".." in stem or stem.startswith("/") for stem in pd.read_csv(results / "figures.csv")["stem"])
    assert CliRunner().invoke(app, ["report", str(results)]).exit_code == 0


def test_a_figure_listed_twice_in_the_index_is_embedded_and_counted_once(results):
    """A figures.csv row copied by hand: the report embedded that figure twice, and plot counted its files twice.
    A stem listed twice is read once, at its first row."""
    from cabench.cli import app

    assert CliRunner().invoke(app, ["report", str(results)]).exit_code == 0
    before = (results / "REPORT.md").read_text()
    index = (results / "figures.csv").read_text()
    rows = index.splitlines()
    (results / "figures.csv").write_text(index + rows[1] + "\n")
    assert CliRunner().invoke(app, ["report", str(results)]).exit_code == 0
    assert (results / "REPORT.md").read_text() == before
    done = CliRunner().invoke(app, ["plot", str(results), "--format", "png"])
    assert done.exit_code == 0 and f"nothing redrawn ({len(rows) - 1} files;" in done.output, done.output


def test_an_experiment_folder_that_is_a_link_is_plotted_reported_and_recommended(results, tmp_path):
    """Results kept elsewhere and linked into the root (``results/latest -> runs/...``) were left out of plot, report
    and recommend without a word (a root of links only: "no runs.csv below this folder"). They are read through the
    link now, and a link back up the tree is entered once."""
    from cabench.cli import app

    elsewhere = tmp_path / "elsewhere"
    (results / "psi").rename(elsewhere)
    (results / "psi").symlink_to(elsewhere, target_is_directory=True)
    (results / "online" / "up").symlink_to(results, target_is_directory=True)  # a loop
    for figure in results.glob("figures/piqa_psi_*.png"):
        figure.unlink()
    drawn = plot(results, ["png"])
    assert sorted(p.name for p in drawn.written) == ["piqa_psi_identification.png", "piqa_psi_landscape.png"]
    assert plot(results / "psi", ["png"]).written == []  # recorded in the root's index, through the link too
    (results / "alias").symlink_to(results / "online", target_is_directory=True)  # one experiment, two paths
    for folder in ("online", "alias"):  # (whichever path the walk met first was the only one known)
        assert plot(results / folder, ["png"]).written == []
    assert CliRunner().invoke(app, ["report", str(results)]).exit_code == 0
    sections = [line for line in (results / "REPORT.md").read_text().splitlines() if line.startswith("## Experiment")]
    assert len(sections) == 2 and any("piqa_psi" in line for line in sections), sections
    said = CliRunner().invoke(app, ["recommend", str(results)])
    assert said.exit_code == 0 and "piqa_psi (psi" in said.stdout and "piqa_online (online" in said.stdout


def test_links_up_or_across_the_tree_are_walked_once_whatever_the_root_is_written_as(results):
    """Links inside the results to a folder that holds them (``up -> ../..``) or to a sibling (``prev -> ../online``):
    with the root written as '.', each experiment was found under dozens of paths and a second such link made
    recommend run on past a minute; a chain of 'prev' links read each experiment once per path. Each real folder
    is walked once: by its own path, and through a link only to a place outside the root."""
    import os
    import subprocess
    import sys

    from tests.conftest import SAFETY_S

    (results / "online" / "up").symlink_to("../..", target_is_directory=True)
    (results / "online" / "upper").symlink_to("../../..", target_is_directory=True)
    (results / "psi" / "prev").symlink_to("../online", target_is_directory=True)
    probe = (  # in its own process: a walk that loops is ended by the safety timeout, not left to hang the suite
        "from pathlib import Path\n"
        "from cabench.results import ResultSet, below\n"
        f"for root in (Path('.'), Path({str(results)!r})):\n"
        "    print([str(p.relative_to(root)) for p in below(root, 'runs.csv')])\n"
        "    found = ResultSet(root, selections=False)\n"
        "    print([e.name for e in found.experiments], sum(len(e.duplicates) for e in found.experiments))\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=results, capture_output=True, text=True,
                          timeout=SAFETY_S, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["['online/runs.csv', 'psi/runs.csv']", "['piqa_online', 'piqa_psi'] 0"] * 2


def test_plot_of_a_subfolder_keeps_the_root_index(results):
    root_rows = pd.read_csv(results / "figures.csv")
    assert plot(results / "online", ["png"]).written == []  # nothing changed: nothing drawn, below or above
    _change(results / "online" / "arms.csv")
    done = plot(results / "online", ["png"])
    assert done.index == results and not (results / "online" / "figures.csv").exists()
    assert {str(p.relative_to(results)) for p in done.written} >= {"figures/piqa_online_landscape.png",
                                                                   "fig1_landscapes.png"}
    index = pd.read_csv(results / "figures.csv")
    assert list(index["stem"]) == list(root_rows["stem"])  # every figure of the root kept, in its place
    assert len(current_figures(results)) == len(index)  # and every one current
    psi = index["source"] == "experiment:piqa_psi"
    assert index[psi].equals(root_rows[psi])


def test_a_subfolder_with_an_index_of_its_own_reports_the_figures_plot_redraws_above(results):
    """A subfolder plotted before the root had an index keeps one of its own; once its results change, `plot` of
    the subfolder redraws into the root's index, and the subfolder's report embeds those figures (it left them out
    as not current, however often it was plotted)."""
    from cabench.html_report import write_reports

    (results / "figures.csv").rename(results / "root-index.csv")
    assert plot(results / "online", ["png"]).index == results / "online"  # no index above: one of its own
    (results / "root-index.csv").rename(results / "figures.csv")
    _change(results / "online" / "arms.csv")
    assert plot(results / "online", ["png"]).index == results
    own = pd.read_csv(results / "online" / "figures.csv")
    assert len(own) >= 2 and len(current_figures(results / "online")) == 0  # its own index: every figure stale
    text = write_reports(results / "online")[0].read_text()
    assert "left out" not in text
    index = pd.read_csv(results / "figures.csv")
    mine = index.loc[index["experiments"] == "piqa_online", "stem"]
    assert len(mine) >= 2  # its landscape and regret at least, and the paper's layouts of this experiment alone
    embedded = re.findall(r"!\[[^]]*\]\(([^)]*)\.png\)", text)
    assert sorted(embedded) == sorted(f"../{stem}" for stem in mine)


def test_a_subfolders_own_current_figures_are_embedded_when_the_index_above_lacks_them(results):
    """A subfolder plotted on its own keeps an index of its own; when the root's index has none of the subfolder's
    figures, its report embeds its own current ones (from its own figures/ folder), and leaves none out."""
    from cabench.html_report import write_reports

    (results / "figures.csv").rename(results / "root-index.csv")
    assert plot(results / "online", ["png"]).index == results / "online"  # an index of its own
    root = pd.read_csv(results / "root-index.csv")
    root[~root["experiments"].str.contains("piqa_online")].to_csv(results / "figures.csv", index=False)
    own = current_figures(results / "online")
    assert len(own) >= 2
    text = write_reports(results / "online")[0].read_text()
    assert "left out" not in text
    embedded = re.findall(r"!\[[^]]*\]\(([^)]*)\.png\)", text)
    assert sorted(embedded) == sorted(own["stem"])


def test_a_report_of_a_subfolder_embeds_its_figures_from_the_root_index(results):
    from cabench.html_report import write_reports

    md, page = write_reports(results / "online")
    text = md.read_text()
    index = pd.read_csv(results / "figures.csv")
    mine = index[index["experiments"] == "piqa_online"]  # drawn from this experiment alone, the paper's layouts too
    assert (mine["source"] == "experiment:piqa_online").sum() >= 2 and "left out" not in text
    for stem in mine["stem"]:
        assert f"](../{stem}.png)" in text  # a path from the subfolder's REPORT.md to the root's figure
    for stem in index.loc[index["experiments"] != "piqa_online", "stem"]:
        assert f"{stem}.png" not in text  # no figure of another experiment
    html = page.read_text()
    for stem in index["stem"]:  # the page holds this experiment's figures inline, no other
        inline = base64.b64encode((results / f"{stem}.png").read_bytes()).decode("ascii")
        assert (inline in html) == (stem in set(mine["stem"])), stem


def test_current_figures_drop_a_figure_whose_results_changed(results):
    index = pd.read_csv(results / "figures.csv")
    assert list(current_figures(results)["stem"]) == list(index["stem"])
    _change(results / "online" / "runs.csv")
    shows_online = index["experiments"].str.split("; ").apply(lambda labels: "piqa_online" in labels)
    assert shows_online.sum() >= 4 and (~shows_online).sum() >= 2
    assert list(current_figures(results)["stem"]) == list(index.loc[~shows_online, "stem"])
    (results / "figures" / "piqa_psi_landscape.png").unlink()
    assert "figures/piqa_psi_landscape" not in set(current_figures(results)["stem"])


def test_no_index_means_no_current_figures(tmp_path):
    table = current_figures(tmp_path)
    assert table.empty and {"stem", "caption", "inputs"} <= set(table.columns)


def test_a_second_plot_says_nothing_was_redrawn(tmp_path):
    from cabench.cli import app
    from cabench.config import parse_config
    from cabench.runner import run_experiment
    from tests.conftest import DATA

    raw = {"name": "again", "dataset": str(DATA / "piqa"), "setting": "online", "rho": [2], "methods": ["uniform"],
           "repetitions": 2, "output": str(tmp_path / "r" / "again")}
    run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    first = CliRunner().invoke(app, ["plot", str(tmp_path / "r"), "--format", "png"])
    second = CliRunner().invoke(app, ["plot", str(tmp_path / "r"), "--format", "png"])
    assert first.exit_code == 0 and "wrote " in first.output, first.output
    assert second.exit_code == 0 and second.output.strip().count("\n") == 0 and "nothing redrawn" in second.output


def test_an_f1_band_never_leaves_zero_to_one_and_a_regret_band_is_not_cut():
    """Pareto F1 of 1, 1, 0.4 at one budget: the normal band's upper end (1.19) is drawn at 1; a regret column of
    the same numbers keeps its band whole."""
    runs = pd.DataFrame({"method": ["copsi"] * 6, "budget": [100.0] * 3 + [200.0] * 3,
                         "f1": [1.0, 1.0, 0.4, 1.0, 0.9, 0.2], "regret_hv": [1.0, 1.0, 0.4, 1.0, 0.9, 0.2]})
    highs = {}
    for column in ("f1", "regret_hv"):
        fig, ax = plt.subplots()
        panels.mean_panel(ax, runs, column, column, ["copsi"])
        (band,) = ax.collections
        ys = np.concatenate([path.vertices[:, 1] for path in band.get_paths()])
        highs[column] = (ys.min(), ys.max())
        plt.close(fig)
    assert highs["f1"][1] == 1.0 and highs["f1"][0] >= 0.0
    assert highs["regret_hv"][1] == pytest.approx(1.1932, abs=1e-3)


def _wide_legend_figure():
    """Two panels and a legend of twelve long names in six columns, as the identification figures with both cost
    modes have."""
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.6))
    for i, name in enumerate(("CoPSI", "CoPSI-R", "PSI-SR", "EGE-SH", "Uniform", "EGE-SR")):
        for mode, style in (("deterministic", "-"), ("stochastic", "--")):
            for ax in axes:
                ax.plot([0, 1], [i, i + 1], style, label=f"{name} ({mode})")
    panels.finish(fig, axes, surrogate=True, title="a note below the panels")
    return fig


def _page(pdf: bytes) -> tuple[float, float]:
    page = re.search(rb"MediaBox \[ 0 0 ([0-9.]+) ([0-9.]+) \]", pdf)
    assert page is not None
    return float(page.group(1)), float(page.group(2))


def test_a_pdf_is_cut_to_its_own_content_with_the_padding_around_it(tmp_path):
    """Text in a PDF is measured unhinted at 72 dpi, wider than matplotlib draws it in a PNG: this legend reaches
    about 7 pt further on each side. The PDF's page (of which the PNG is a picture) holds all of it and the padding;
    a box measured for a PNG and given to the PDF left 0.2 pt of the 7.2 pt padding here, and cut wider legends."""
    saved = save(_wide_legend_figure(), tmp_path / "fig", ["png", "pdf"])
    content = io.BytesIO()
    fig = _wide_legend_figure()
    fig.savefig(content, format="pdf", bbox_inches="tight", pad_inches=0)
    plt.close(fig)
    pad = 72 * plt.rcParams["savefig.pad_inches"]
    width, height = _page(saved[1].read_bytes())
    inner_width, inner_height = _page(content.getvalue())
    assert width == pytest.approx(inner_width + 2 * pad, abs=0.5)
    assert height == pytest.approx(inner_height + 2 * pad, abs=0.5)


def _blocks(pixels: np.ndarray, size: int = 8) -> np.ndarray:
    """Grey levels averaged over ``size`` × ``size`` blocks: two drawings of one figure by different rasterisers
    differ in their glyphs' and lines' edges, not in what each block holds."""
    height, width = (n - n % size for n in pixels.shape)
    return pixels[:height, :width].reshape(height // size, size, width // size, size).mean(axis=(1, 3))


def test_a_png_is_its_pdfs_page_and_the_figure_is_drawn_once(plotted, monkeypatch):
    """Each of an experiment's figures is drawn once, for its PDF: the PNG is the PDF's page at 200 dpi
    (its pixels the page's size), signed and with its resolution, and shows what matplotlib's own PNG of the figure
    cut to the PDF's box shows: block by block the two differ by under 0.4 of what a blank page would (about 0.2;
    the same drawing moved 12 pixels differs by about 0.8)."""
    from matplotlib.backend_bases import _get_renderer
    from matplotlib.backends.backend_pdf import FigureCanvasPdf
    from matplotlib.figure import Figure

    from cabench.plots import rendered

    draws = []
    drawn = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda fig, renderer: draws.append(fig) or drawn(fig, renderer))
    for e in ResultSet(plotted).experiments:
        for (name, fig, _caption), (_name, reference, _caption2) in zip(experiment_figures(e), experiment_figures(e),
                                                                        strict=True):
            draws.clear()
            (_png_path, png), (_pdf_path, pdf) = rendered(fig, Path(name), ["png", "pdf"])
            assert draws == [fig], name
            image = Image.open(io.BytesIO(png))
            width, height = _page(pdf)
            assert abs(image.width - width * 200 / 72) <= 1 and abs(image.height - height * 200 / 72) <= 1, name
            assert image.info["Software"] == "cabench", name
            assert image.info["dpi"] == pytest.approx((200, 200), abs=0.01), name
            box = reference.get_tightbbox(_get_renderer(reference, FigureCanvasPdf(reference).print_pdf))
            theirs = io.BytesIO()
            reference.savefig(theirs, format="png", dpi=200,
                              bbox_inches=box.padded(plt.rcParams["savefig.pad_inches"]))
            plt.close(reference)
            ours, agg = (np.asarray(Image.open(io.BytesIO(b)).convert("L"), dtype=float)
                         for b in (png, theirs.getvalue()))
            assert abs(ours.shape[0] - agg.shape[0]) <= 1 and abs(ours.shape[1] - agg.shape[1]) <= 1, name
            rows, columns = min(ours.shape[0], agg.shape[0]), min(ours.shape[1], agg.shape[1])
            ours, agg = _blocks(ours[:rows, :columns]), _blocks(agg[:rows, :columns])
            assert np.abs(ours - agg).mean() < 0.4 * np.abs(agg - 255).mean(), name


def test_a_pdf_is_cut_as_savefigs_tight_box_cuts_it_without_its_measuring_draw(plotted):
    """Each of an experiment's PDFs has the page ``savefig(bbox_inches="tight")`` gives the same figure, which
    draws it once more to measure it first; the drawing is the same but for the last digit of a coordinate (a
    number of the page's content moves by at most 1e-5 pt)."""
    from cabench.plots import _SAVE, rendered

    with plt.rc_context({"pdf.compression": 0}):
        for e in ResultSet(plotted).experiments:
            for (name, fig, _caption), (_name, reference, _caption2) in zip(experiment_figures(e),
                                                                            experiment_figures(e), strict=True):
                ((_path, ours),) = rendered(fig, Path(name), ["pdf"])
                theirs = io.BytesIO()
                reference.savefig(theirs, format="pdf", bbox_inches="tight", **_SAVE["pdf"])
                plt.close(reference)
                assert _page(ours) == _page(theirs.getvalue()), name
                numbers = [re.findall(rb"-?[0-9]+[.][0-9]+", pdf) for pdf in (ours, theirs.getvalue())]
                assert len(numbers[0]) == len(numbers[1]) > 100, name
                assert max(abs(float(a) - float(b)) for a, b in zip(*numbers)) <= 1e-5, name


def test_measuring_a_pdfs_box_leaves_the_figure_as_it_was():
    """Measuring sets the PDF's canvas and 72 dpi on the figure, which matplotlib leaves so: both are put back (a
    figure drawn after, on screen or in another format, kept a PDF canvas at 72 dpi)."""
    from cabench.plots import _pdf_box

    fig, ax = plt.subplots(figsize=(3, 2), dpi=100)
    ax.set_title("a title")
    canvas = fig.canvas
    box = _pdf_box(fig)
    assert fig.canvas is canvas and fig.dpi == 100
    assert 0 < box.width < 3 + 2 * plt.rcParams["savefig.pad_inches"] + 0.5
    plt.close(fig)


def test_a_page_too_large_for_pdfium_is_drawn_whole_by_matplotlib():
    """PDFium draws nothing past about 32,000 pixels along a side: a figure's PNG over 160 inches (a dataset's title
    of some 1,800 characters) came out blank past it, its title cut. Such a page's PNG is matplotlib's, whole."""
    from cabench.plots import rendered

    fig, ax = plt.subplots(figsize=(220, 1.2))
    ax.plot([0, 1], [0, 1])
    ax.text(0.999, 0.5, "END", transform=ax.transAxes, ha="right", va="center", fontsize=40)
    (_png_path, png), (_pdf_path, pdf) = rendered(fig, Path("wide"), ["png", "pdf"])
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    assert pixels.shape[1] > 33_000 and _page(pdf)[0] * 200 / 72 > 33_000
    assert (pixels[:, -1_500:] < 128).sum() > 1_000  # "END" and the axes' right edge, past PDFium's reach


def test_results_whose_title_holds_u_feff_are_drawn_without_it(results):
    """A dataset title with U+FEFF (refused in dataset.yaml since) made matplotlib's PDF writer raise IndexError on
    every plot of results written before: their figures and reports show the title without it."""
    from cabench.plots import rendered

    for table in results.glob("*/dataset.csv"):
        frame = pd.read_csv(table)
        table.write_text(frame.assign(title="\ufeff" + frame["title"].astype(str)).to_csv(index=False))
    e = ResultSet(results).experiments[0]
    assert e.dataset["title"].startswith("\ufeff") and "\ufeff" not in e.title
    name, fig, _caption = experiment_figures(e)[0]
    ((_path, pdf),) = rendered(fig, Path(name), ["pdf"])
    assert pdf.startswith(b"%PDF")


def test_settings_that_take_a_pdfs_look_from_its_reader_change_no_file():
    """``pdf.inheritcolor`` (colours left to the document a PDF is placed in) made every PNG black, and
    ``pdf.use14corefonts`` drew '?' for '−' and 'ρ': a figure's PDF is a page of its own and its PNG's picture,
    drawn without them, the files the same as without them."""
    from cabench.plots import rendered

    def figure():
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([-10, 10], [0, 1], color="red")
        ax.set_title("ρ ∈ {2, 4}")
        return fig

    default = rendered(figure(), Path("f"), ["png", "pdf"])
    with plt.rc_context({"pdf.inheritcolor": True, "pdf.use14corefonts": True}):
        assert rendered(figure(), Path("f"), ["png", "pdf"]) == default


def test_a_broken_pypdfium2_stops_pngs_only_in_one_line(results, monkeypatch):
    """pypdfium2 is needed for PNGs alone: cabench's drawing modules import without it, and without it (not
    installed, or its library there but unloadable) PDFs and SVGs are drawn and a PNG is refused in one line naming
    it, where every plot ended in a traceback."""
    import os
    import shutil
    import subprocess
    import sys

    from cabench.cli import app
    from cabench.plots import rendered

    code = "import cabench.plots, cabench.raster; print('imported')"  # no pypdfium2 needed to import either
    shadow = results.parent / "shadow"
    shadow.mkdir()
    (shadow / "pypdfium2.py").write_text("raise OSError('libpdfium.so: cannot open shared object file')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), str(ROOT)])}
    imported = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert imported.stdout == "imported\n", imported.stderr
    monkeypatch.delitem(sys.modules, "pypdfium2", raising=False)  # imported only once a PNG was made
    monkeypatch.syspath_prepend(str(shadow))  # its library there but unloadable: OSError
    fig, ax = plt.subplots(figsize=(3, 2))
    with pytest.raises(CabenchError, match=r"pypdfium2 cannot be imported \(libpdfium\.so: cannot open"):
        rendered(fig, Path("f"), ["png"])
    plt.close(fig)
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # importing it raises ImportError
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1])
    assert [path.name for path, _ in rendered(fig, Path("f"), ["pdf", "svg"])] == ["f.pdf", "f.svg"]
    fig, ax = plt.subplots(figsize=(3, 2))
    with pytest.raises(CabenchError, match="pypdfium2 cannot be imported") as refusal:
        rendered(fig, Path("f"), ["png"])
    assert "\n" not in str(refusal.value)
    plt.close(fig)
    shutil.rmtree(results / "figures")
    (results / "figures.csv").unlink()
    shown = CliRunner().invoke(app, ["plot", str(results), "--format", "png", "--n-jobs", "1"])
    assert shown.exit_code == 2 and shown.output.count("\n") == 1 and "pypdfium2 cannot be imported" in shown.output
    assert not (results / "figures").exists()


def test_a_title_stays_above_the_offset_text_of_large_values():
    """Values in the millions show the y axis' offset text (``1e7``) above the axes' top left, where matplotlib
    lifts a long title clear of it; the panel beside it, with small values, has its title at the axes' top."""
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.6))
    axes[0].plot([1, 2, 3], [1.2e7, 3.4e7, 2.2e7])
    axes[1].plot([1, 2, 3], [0.2, 0.4, 0.3])
    for ax in axes:
        ax.set_title("(a) a long title of a panel, as an experiment's name makes it")
    panels.finish(fig, axes, surrogate=False)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    offset = axes[0].yaxis.get_offset_text()
    assert offset.get_text() and axes[1].yaxis.get_offset_text().get_text() == ""
    title, top = axes[0].title.get_window_extent(renderer), offset.get_window_extent(renderer)
    assert title.y0 >= top.y1 - 0.5  # clear of the offset text
    assert axes[1].title.get_position()[1] == 1.0
    # the title beside it is pinned there (matplotlib's own flag: no search on later draws); the lifted one is not
    assert axes[1]._autotitlepos is False and axes[0]._autotitlepos is True
    plt.close(fig)


@pytest.mark.parametrize("setting", ["figure.autolayout", "figure.constrained_layout.use"])
def test_a_users_automatic_layout_setting_changes_no_figure(setting):
    """With a layout engine turned on in matplotlib's settings (a user's matplotlibrc), clearing the figure's engine
    installed one, which laid the landscape out again after its names were placed: every format is the same file
    as with matplotlib's defaults."""
    from cabench.plots import rendered

    formats = ["png", "pdf", "svg"]
    default = [data for _, data in rendered(landscape_figure([shipped("piqa")]), Path("landscape"), formats)]
    with plt.rc_context({setting: True}):
        files = [data for _, data in rendered(landscape_figure([shipped("piqa")]), Path("landscape"), formats)]
    assert files == default


def test_figures_of_results_that_went_away_are_deleted_only_where_plot_wrote_them(results):
    """The figures of an experiment whose results went away are deleted with its rows of the index, but a file of
    such a name that plot did not write — one edited since it was drawn, one in a format never drawn — is left as
    it is, and plot says so."""
    import shutil

    edited = results / "figures" / "piqa_psi_landscape.png"
    edited.write_bytes(b"my annotated copy")
    mine = results / "figures" / "piqa_psi_identification.svg"
    mine.write_text("<svg/>")
    drawn = results / "figures" / "piqa_psi_identification.png"
    assert drawn.is_file()
    shutil.rmtree(results / "psi")
    done = plot(results, ["png"])
    assert not drawn.exists()  # plot's own file: deleted with the experiment, and said to be
    assert drawn in done.removed and all(not p.exists() for p in done.removed)
    assert f"; removed {len(done.removed)} file{'s' if len(done.removed) > 1 else ''} of figures no longer drawn, " \
        "their results gone or changed (" in done.message()
    assert edited.read_bytes() == b"my annotated copy" and mine.read_text() == "<svg/>"
    assert sorted(done.left) == sorted([edited, mine])
    assert "left 2 out-of-date files it did not write as they are" in done.message()
    index = pd.read_csv(results / "figures.csv")
    assert not index["experiments"].str.contains("piqa_psi").any()
    assert str(edited) in done.message() and "no report shows them" in done.message()


def test_experiments_whose_names_share_a_file_name_keep_figures_of_their_own(tmp_path):
    """'a b' and 'a_b' both drew into figures/a_b_*.png: each plot redrew one over the other, the index handed the
    files from one to the other, and the report showed one experiment's figures. Each label has its own file name
    now ('a_b' stays as it is; 'a b' gets a hash of its label), and a second plot draws nothing."""
    from cabench.plots import slug

    for name in ("a b", "a_b"):
        cfg = load_config(QUICK["psi"], overrides={"repetitions": 2, "rho": [20, 200], "name": name,
                                                   "output": str(tmp_path / name.replace(" ", "-"))})
        run_experiment(cfg, quiet=True)
    assert slug("a_b") == "a_b" and slug("a b").startswith("a_b_") and len({slug("a b"), slug("a|b")}) == 2
    assert slug("gsm8k_psi [0123abcd]") == "gsm8k_psi_0123abcd"  # cabench's own label of one of two namesakes
    first = plot(tmp_path, ["png"])
    assert len(first.written) == 4 and len({p.name for p in first.written}) == 4
    again = plot(tmp_path, ["png"])
    assert again.written == [] and len(again.kept) == 4
    index = pd.read_csv(tmp_path / "figures.csv")
    assert sorted(index["experiments"]) == ["a b", "a b", "a_b", "a_b"]
    assert all(Path(stem).name.startswith(slug(e)) for stem, e in zip(index["stem"], index["experiments"]))


def test_a_figure_is_known_by_cabench_as_its_creator_not_by_the_word_anywhere(tmp_path):
    """An SVG of the user's titled "cabench" carried the bytes the SVG signature was; each format's signature is
    the creator's field as plot writes it, and a file of the user's is neither recorded nor signed."""
    from cabench.figure_index import METADATA, drawn_by_cabench

    for fmt, theirs in (("svg", {"Title": "cabench"}), ("pdf", {"Title": "cabench"}), ("png", {"Title": "cabench"})):
        fig, _ = plt.subplots()
        ours, mine = tmp_path / f"ours.{fmt}", tmp_path / f"mine.{fmt}"
        fig.savefig(ours, format=fmt, metadata=METADATA[fmt])
        fig.savefig(mine, format=fmt, metadata=theirs)
        plt.close(fig)
        assert drawn_by_cabench(ours, tmp_path, {}) and not drawn_by_cabench(mine, tmp_path, {}), fmt
        recorded = {mine.name: hashlib.sha256(mine.read_bytes()).hexdigest()}
        assert drawn_by_cabench(mine, tmp_path, recorded)  # the file the index records, signed or not


def test_a_format_given_twice_is_drawn_and_counted_once():
    """plot --format png,png said it drew 6 files where it wrote 3."""
    from cabench.plots import check_formats

    assert check_formats(["png", "png", "", "pdf", "png"]) == ["png", "pdf"]


def test_a_figure_drawn_in_another_format_keeps_its_files_of_the_first(tmp_path):
    """plot --format pdf after plot --format png deleted the PNGs (the report's figures), though the results and the
    drawing code had not changed: the index recorded one set of formats per figure. The PNGs stay, the index records
    both formats, a third plot in both draws nothing; once the results change, a PNG not drawn again goes."""
    from cabench.config import parse_config
    from tests.conftest import DATA

    raw = {"name": "formats", "dataset": str(DATA / "piqa"), "setting": "online", "rho": [2],
           "methods": ["uniform"], "repetitions": 2, "output": str(tmp_path / "r" / "formats")}
    run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    root = tmp_path / "r"
    first = plot(root, ["png"])
    pngs = {path: path.read_bytes() for path in first.written}
    assert pngs and all(path.suffix == ".png" for path in pngs)
    second = plot(root, ["pdf"])
    assert {path.with_suffix(".png") for path in second.written} == set(pngs)
    assert all(path.read_bytes() == data for path, data in pngs.items())
    assert sorted(second.kept) == sorted(pngs)
    index = pd.read_csv(root / "figures.csv")
    assert set(index["formats"]) == {"pdf;png"}
    assert len(current_figures(root)) == len(pngs)
    third = plot(root, ["png", "pdf"])
    assert third.written == [] and len(third.kept) == 2 * len(pngs)
    gone = second.written[0]
    gone.unlink()  # a recorded file gone: drawn again, not taken as current (the report would drop the figure)
    fourth = plot(root, ["png"])
    assert fourth.written == [gone.with_suffix(".png")]
    assert len(current_figures(root)) == len(pngs)
    plot(root, ["pdf"])
    _change(root / "formats" / "runs.csv")
    fifth = plot(root, ["pdf"])
    assert sorted(fifth.written) == sorted(second.written)
    assert not any(path.exists() for path in pngs)
    assert set(pd.read_csv(root / "figures.csv")["formats"]) == {"pdf"}
    pdfs = {path: path.read_bytes() for path in fifth.written}
    both = plot(root, ["png", "pdf"])  # (the default) after --format pdf: only the PNGs are drawn, the PDFs kept
    assert sorted(both.written) == sorted(pngs) and sorted(both.kept) == sorted(pdfs), both
    assert all(path.read_bytes() == data for path, data in pdfs.items())
    assert set(pd.read_csv(root / "figures.csv")["formats"]) == {"png;pdf"}
    assert plot(root, ["png", "pdf"]).written == []


def test_a_dot_in_a_figures_name_keeps_its_files_apart(tmp_path):
    """The format's suffix was put in place of what followed a dot: figures of experiments "run.1" and "run.2" (and
    both figures of "gauss.v1.5") were all drawn into one file."""
    written = []
    for stem in ("run.1_landscape", "run.2_landscape", "gauss.v1.5_regret", "plain"):
        fig, _ = plt.subplots()
        written += save(fig, tmp_path / "figures" / stem, ["png", "pdf"])
    assert [p.name for p in written] == [
        "run.1_landscape.png", "run.1_landscape.pdf", "run.2_landscape.png", "run.2_landscape.pdf",
        "gauss.v1.5_regret.png", "gauss.v1.5_regret.pdf", "plain.png", "plain.pdf"]
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == sorted(p.name for p in written)
    fig, _ = plt.subplots()
    assert [p.name for p in save(fig, tmp_path / "landscape.pdf", ["pdf"])] == ["landscape.pdf"]  # -o's own name


def test_characters_the_font_lacks_are_said_once_not_warned_per_figure(tmp_path):
    """A name in CJK or with an emoji printed matplotlib's "Glyph ... missing" warning per character and figure, with
    cabench's and adjustText's paths; plot now says once which characters are drawn as boxes."""
    import warnings

    assert panels.missing_glyphs(["plain-name_1.0", "名前 🚀", "名"]) == ["名", "前", "🚀"]  # DejaVu Sans: matplotlib's
    fig, ax = plt.subplots()
    ax.set_title("名前 🚀")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save(fig, tmp_path / "boxes", ["png", "pdf"])


def test_a_landscape_of_surrogate_and_real_logs_notes_which_are_surrogate():
    """`data landscape data/piqa data/jhu-temperature` put one surrogate note under both panels, the real JHU
    logs' too: the note names the surrogate datasets when the others are real, and stands alone when all are."""
    from cabench.paper import SURROGATE_NOTE

    def notes(names: list[str]) -> list[str]:
        fig = landscape_figure([shipped(name) for name in names])
        said = [t.get_text() for t in fig.texts]
        plt.close(fig)
        return said

    assert notes(["piqa", "jhu-temperature"]) == [f"PIQA: {SURROGATE_NOTE}"]
    assert notes(["piqa", "gsm8k"]) == [SURROGATE_NOTE] and notes(["jhu-temperature"]) == []


def test_captions_say_where_the_logs_are_surrogate(plotted, tmp_path):
    """figures.csv and the reports' captions never said "surrogate" (0 of 41 on the full results); only the images'
    footnote did. A figure of surrogate logs says so in its caption; one of real logs does not."""
    from cabench.paper import SURROGATE_NOTE

    captions = pd.read_csv(plotted / "figures.csv")["caption"]
    assert len(captions) >= 6 and all(c.endswith(f"; {SURROGATE_NOTE}") for c in captions), list(captions)
    cfg = load_config(ROOT / "configs" / "real" / "jhu_online.yaml",
                      overrides={"repetitions": 2, "rho": [2], "output": str(tmp_path / "jhu")})
    run_experiment(cfg, quiet=True)
    plot(tmp_path / "jhu", ["png"])
    real = pd.read_csv(tmp_path / "jhu" / "figures.csv")["caption"]
    assert len(real) >= 2 and not any("surrogate" in c for c in real), list(real)


def test_a_paper_figure_of_surrogate_and_real_logs_names_the_surrogate_experiments(plotted, tmp_path):
    """Figure 2 drawn from a surrogate online experiment and a real identification one says which is surrogate; a
    figure of the surrogate one alone says it plainly."""
    from cabench.paper import SURROGATE_NOTE
    from cabench.plots import _draw

    paper = [e for e in ResultSet(plotted).experiments if e.paper_role]
    real = next(e for e in paper if e.setting == "psi")
    real.meta["dataset_info"] = {**real.info, "surrogate": False}  # (in memory only)
    online = next(e for e in paper if e.setting == "online")
    captions = {d.stem: (d.caption, d.parts) for d, _ in _draw(paper, tmp_path, ["png"], {}, {})}
    caption, parts = captions["fig2_online_regret"]
    assert set(parts) == {online.label, real.label} and caption.endswith(f"; {online.label}: {SURROGATE_NOTE}")
    caption, parts = captions["fig3_standard_regret"]
    assert parts == (online.label,) and caption.endswith(f"; {SURROGATE_NOTE}")


def test_experiments_of_the_same_configurations_share_a_landscape_drawn_once(tmp_path, monkeypatch):
    """Two identification experiments on PIQA's subset (two seeds) show the same configurations: plot draws their
    landscape once and writes it for both, the bytes each would draw alone; GSM8K's subset gets its own."""
    from cabench import landscape
    from cabench.plots import landscape_stem, rendered

    for name, config, seed in (("a", "piqa_psi_quick", 1), ("b", "piqa_psi_quick", 2), ("c", "gsm8k_psi_quick", 1)):
        run_experiment(load_config(ROOT / "configs" / f"{config}.yaml", overrides={
            "name": name, "seed": seed, "repetitions": 2, "rho": [200], "output": str(tmp_path / name)}), quiet=True)
    drawn = []
    panel = landscape.landscape_panel
    monkeypatch.setattr(landscape, "landscape_panel", lambda ax, arms, *rest: (drawn.append(len(arms)),
                                                                              panel(ax, arms, *rest))[1])
    done = plot(tmp_path, ["png", "pdf"])
    assert sorted(drawn) == [14, 14]  # PIQA's subset once, GSM8K's once
    files = {p.name: p.read_bytes() for p in done.written if "_landscape." in p.name}
    assert len(files) == 6 and files["a_landscape.png"] == files["b_landscape.png"] != files["c_landscape.png"]
    assert files["a_landscape.pdf"] == files["b_landscape.pdf"] != files["c_landscape.pdf"]
    monkeypatch.setattr(landscape, "landscape_panel", panel)
    for e in ResultSet(tmp_path).experiments:  # each as it would be drawn alone
        _, fig, caption = experiment_figures(e)[0]
        for path, data in rendered(fig, tmp_path / landscape_stem(e.label), ["png", "pdf"]):
            assert data == files[path.name], path.name
        assert caption.startswith(f"{e.label}: configuration landscape of PIQA" if e.name != "c" else "c: ")
    index = pd.read_csv(tmp_path / "figures.csv").set_index("stem")
    assert index.loc["figures/b_landscape", "experiments"] == "b"


def test_a_landscape_shared_by_label_never_takes_another_datasets_picture(tmp_path, monkeypatch):
    """A literal name equal to the file name another label is drawn under ('p_d_cbf89a3f', the safe form of 'pä d';
    plot now refuses the pair, and is let through here) on GSM8K, after an experiment on the same GSM8K
    configurations: the landscapes to share were keyed by file name, so 'pä d' (PIQA) got GSM8K's picture under its
    PIQA caption. The file holds the picture of the experiment the index names for it."""
    from cabench import plots
    from cabench.paper import SURROGATE_NOTE
    from cabench.plots import landscape_stem, rendered

    monkeypatch.setattr(plots, "_one_file_name_each", lambda experiments: None)  # (plot refuses such names)

    for name, dataset in (("ga", "gsm8k"), ("p_d_cbf89a3f", "gsm8k"), ("pä d", "piqa")):
        folder = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        run_experiment(load_config(ROOT / "configs" / f"{dataset}_psi_quick.yaml", overrides={
            "name": name, "repetitions": 2, "rho": [20], "methods": ["uniform"], "output": str(folder)}), quiet=True)
    assert landscape_stem("pä d") == landscape_stem("p_d_cbf89a3f")
    plot(tmp_path, ["png"])
    index = pd.read_csv(tmp_path / "figures.csv").set_index("stem")
    stem = landscape_stem("pä d")
    named = index.loc[stem, "experiments"]
    (e,) = [e for e in ResultSet(tmp_path).experiments if e.label == named]
    _, fig, caption = experiment_figures(e)[0]
    ((_, data),) = rendered(fig, tmp_path / "alone" / "x", ["png"])
    assert (tmp_path / f"{stem}.png").read_bytes() == data and index.loc[stem, "caption"] == caption + (
        f"; {SURROGATE_NOTE}" if e.surrogate else "")


def test_two_experiments_with_one_figure_file_name_are_refused_before_anything_is_drawn(tmp_path):
    """'p_d_cbf89a3f' is the file name 'pä d' is drawn under: each plot drew one experiment's figures over the
    other's. plot refuses the pair in one line naming both, and draws nothing."""
    from cabench.plots import slug

    for name in ("pä d", slug("pä d")):
        run_experiment(load_config(QUICK["psi"], overrides={
            "name": name, "repetitions": 2, "rho": [20], "methods": ["uniform"],
            "output": str(tmp_path / f"run{len(list(tmp_path.iterdir()))}")}), quiet=True)
    with pytest.raises(CabenchError, match=r"experiment '(pä d|p_d_cbf89a3f)' would draw its figures into the files "
                                           r"of '(pä d|p_d_cbf89a3f)' .*figures/p_d_cbf89a3f_\*; rename one"):
        plot(tmp_path, ["png"])
    assert not (tmp_path / "figures").exists() and not (tmp_path / "figures.csv").exists()


def test_long_names_cut_alike_are_shown_where_they_differ():
    """Two configurations whose names share their first and last 20 characters were both labelled
    'super-long-model-nam…-instruct-ft/direct' in the landscape: shown around where they differ, and numbered where
    even that is alike; names that fit are kept whole."""
    from cabench.panels import NAME_CHARACTERS, shown_names

    a = "super-long-model-name-for-testing-v1-instruct-ft/direct"
    b = a.replace("-v1-", "-v2-")
    shown = shown_names([a, b, "short"])
    assert shown[2] == "short" and shown[0] != shown[1] and all(len(s) <= NAME_CHARACTERS for s in shown)
    assert "v1" in shown[0] and "v2" in shown[1] and shown[0].startswith("super") and shown[0].endswith("direct")
    twins = shown_names(["x" * 60, "x" * 60, "short", "short"])
    assert twins[0].endswith(" (1)") and twins[1].endswith(" (2)") and twins[2:] == ["short (1)", "short (2)"]
    assert all(len(s) <= NAME_CHARACTERS for s in twins)
    import matplotlib.pyplot as plt

    from cabench.landscape import landscape_panel

    arms = pd.DataFrame({"arm": [0, 1, 2], "config_id": [a, b, "short"], "mu_accuracy": [0.9, 0.5, 0.1],
                         "mu_efficiency": [0.1, 0.5, 0.9], "profile_cost": [1.0, 2.0, 3.0], "pareto": [1, 1, 1]})
    fig, ax = plt.subplots()
    landscape_panel(ax, arms, "t", ["accuracy", "efficiency"], "tokens")
    assert sorted(t.get_text() for t in ax.texts if t.get_text() in shown) == sorted(shown)  # as the panel names them
    plt.close(fig)
