"""Landscapes on the user's terms: a panel per pair of objectives for three or four, the Pareto set of all objectives
marked and named, axes naming each objective and its direction; Figure 1's single panel kept for two."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from cabench.config import load_config
from cabench.data.dataset import load_dataset
from cabench.plots import experiment_figures, landscape_figure
from cabench.results import ResultSet
from cabench.runner import run_experiment
from tests.conftest import DATA, ROOT

TERMS = ROOT / "configs" / "terms"
FOUR = ["accuracy", "latency", "cost", {"column": "tokens", "direction": "min"}]


def _run(config: Path, out: Path, **overrides) -> Path:
    cfg = load_config(config, overrides={"repetitions": 3, "output": str(out), **overrides})
    run_experiment(cfg, quiet=True)
    return out


@pytest.fixture(scope="module")
def experiments(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("terms_plots")
    _run(TERMS / "gsm8k_dollars_psi.yaml", root / "three")
    _run(TERMS / "gsm8k_dollars_psi.yaml", root / "four", name="four", objectives=FOUR, methods=["copsi", "uniform"],
         cost_modes=["deterministic"])
    return {e.name: e for e in ResultSet(root).experiments}


def _landscape(e):
    name, fig, caption = experiment_figures(e)[0]
    assert name == "landscape"
    return fig, caption


def _panels(fig) -> list:
    return [ax for ax in fig.axes if ax.get_visible()]


def _check_pairs(panels, arms: pd.DataFrame, names: list[str]) -> None:
    """Each panel plots objective i (vertical) against j (horizontal), i < j in declared order; its black markers
    are exactly the Pareto arms' means and its labels their names."""
    expected = [(a, b) for k, a in enumerate(names) for b in names[k + 1:]]
    # accuracy's normalised mean is the share of right answers, as Figure 1 says; another objective is scaled
    said = {"accuracy": "mean accuracy", "efficiency": "mean efficiency"}
    assert [(ax.get_ylabel(), ax.get_xlabel()) for ax in panels] == [
        (said.get(a, f"{a} (normalised, ↑ better)"), said.get(b, f"{b} (normalised, ↑ better)")) for a, b in expected]
    front = arms[arms["pareto"] == 1]
    for ax, (a, b) in zip(panels, expected):
        (line,) = [ln for ln in ax.get_lines() if ln.get_color() == "black"]
        assert line.get_linestyle() == "None"  # marked, not joined: a projection of the set is no front
        assert np.allclose(line.get_xdata(), front[f"mu_{b}"]) and np.allclose(line.get_ydata(), front[f"mu_{a}"])
        assert sorted(t.get_text() for t in ax.texts) == sorted(front["config_id"].astype(str))
        scatter = ax.collections[0]
        assert len(scatter.get_offsets()) == len(arms)
        sizes = scatter.get_sizes()  # marker size grows with the profiling cost
        assert np.argmax(sizes) == np.argmax(arms["profile_cost"].to_numpy())
        assert np.argmin(sizes) == np.argmin(arms["profile_cost"].to_numpy())
    plt.close(panels[0].figure)


def test_three_objectives_draw_three_pairwise_panels(experiments):
    e = experiments["gsm8k_dollars_psi"]
    fig, caption = _landscape(e)
    panels = _panels(fig)
    assert len(panels) == 3 and e.objectives == ["accuracy", "latency", "cost"]
    assert panels[0].get_title() == f"GSM8K: K=14, |P*|={int(e.arms['pareto'].sum())}"
    assert "objectives: accuracy, latency, cost" in caption and "USD" in caption
    assert "Pareto set of all 3 objectives" in caption
    _check_pairs(panels, e.arms, e.objectives)


def test_four_objectives_draw_six_pairwise_panels(experiments):
    e = experiments["four"]
    fig, caption = _landscape(e)
    panels = _panels(fig)
    assert len(panels) == 6 and e.objectives == ["accuracy", "latency", "cost", "tokens"]
    assert "objectives: accuracy, latency, cost, tokens" in caption and "all 4 objectives" in caption
    _check_pairs(panels, e.arms, e.objectives)


def test_every_figure_caption_names_objectives_and_cost_unit(experiments):
    for e in experiments.values():
        for _, fig, caption in experiment_figures(e):
            assert f"objectives: {', '.join(e.objectives)}; costs and budgets in USD" in caption
            plt.close(fig)


def test_dataset_landscape_on_three_objectives_and_on_two():
    terms = load_config(TERMS / "gsm8k_dollars_psi.yaml").terms
    three = landscape_figure([load_dataset(DATA / "gsm8k", terms=terms)])
    panels = _panels(three)
    assert len(panels) == 3
    assert [ax.get_xlabel() for ax in panels] == ["latency (normalised, ↑ better)", "cost (normalised, ↑ better)",
                                                  "cost (normalised, ↑ better)"]
    from cabench.landscape import dataset_arms

    arms = dataset_arms(load_dataset(DATA / "gsm8k", terms=terms))
    front = arms[arms["pareto"] == 1]
    assert len(front) == 16
    for ax, (a, b) in zip(panels, [(0, 1), (0, 2), (1, 2)]):  # more than 12 in black: a panel names its own front
        y, x = (front[f"mu_{n}"].to_numpy() for n in (["accuracy", "latency", "cost"][a], ["accuracy", "latency",
                                                                                         "cost"][b]))
        own = [i for i in range(len(front))
               if not any(x[j] > x[i] and y[j] > y[i] for j in range(len(front)))]  # (dominance is strict, §3.2)
        shown = {t.get_text() for t in ax.texts}  # of more than 12 on the panel's front, 12 along it
        assert shown <= set(front["config_id"].iloc[own].astype(str)) and len(shown) == min(len(own), 12)
        assert ax.get_legend().get_title().get_text().endswith(
            f"\nnamed: {len(shown)} of the 16 in black, on this panel's own front")
    plt.close(three)
    two = landscape_figure([load_dataset(DATA / "gsm8k")])  # Figure 1: one panel, the front joined
    (ax,) = _panels(two)
    assert (ax.get_ylabel(), ax.get_xlabel()) == ("mean accuracy", "mean efficiency")
    (front,) = [ln for ln in ax.get_lines() if ln.get_color() == "black"]
    assert front.get_linestyle() == "-" and len(front.get_xdata()) == len(ax.texts)
    plt.close(two)
    # a minimised objective is drawn normalised, larger for the faster configuration: "mean latency" said the reverse
    fast = load_config(TERMS / "gsm8k_dollars_psi.yaml", overrides={"objectives": ["accuracy", "latency"]}).terms
    dataset = load_dataset(DATA / "gsm8k", terms=fast)
    (ax,) = _panels(pair := landscape_figure([dataset]))
    assert (ax.get_ylabel(), ax.get_xlabel()) == ("mean accuracy", "latency (normalised, ↑ better)")
    from cabench.landscape import dataset_arms

    arms = dataset_arms(dataset)
    (front,) = [ln for ln in ax.get_lines() if ln.get_color() == "black"]
    assert sorted(front.get_xdata()) == sorted(arms.loc[arms["pareto"] == 1, "mu_latency"])  # the objective drawn
    plt.close(pair)
