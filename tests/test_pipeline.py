"""The quick pipeline end to end: run, plot, report, recommend, in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from cabench.config import load_config
from cabench.paper import GAINS, PUBLISHED, REDUCTIONS, SURROGATE_NOTE
from cabench.plots import plot_results
from cabench.recommend import recommend
from cabench.report import write_report
from cabench.runner import run_experiment
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # the whole quick pipeline: about half a minute

QUICK = sorted((ROOT / "configs").glob("*_quick.yaml"))
PAPER_FIGURES = ("fig1_landscapes", "fig2_online_regret", "fig3_standard_regret", "fig4_trajectories",
                 "fig5_full_f1", "fig6_cost_modes")


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("quick")
    assert len(QUICK) == 8
    for path in QUICK:
        cfg = load_config(path, overrides={"output": str(root / path.stem)})
        run_experiment(cfg, quiet=True)
    return root


def test_every_figure_and_the_report(quick_results):
    written = plot_results(quick_results, ["png", "pdf"])
    names = sorted(str(p.relative_to(quick_results)) for p in written)
    for stem in PAPER_FIGURES:
        assert f"{stem}.png" in names and f"{stem}.pdf" in names
        assert (quick_results / f"{stem}.png").stat().st_size > 10_000
    for path in QUICK:  # every experiment has its own landscape and metric figures
        cfg = load_config(path)
        kinds = ("landscape", "regret", "trajectories") if cfg.setting == "online" else ("landscape", "identification")
        for kind in kinds:
            assert f"figures/{cfg.name}_{kind}.png" in names
    again = plot_results(quick_results, ["png", "pdf"])
    assert sorted(str(p.relative_to(quick_results)) for p in again) == names
    report = write_report(quick_results).read_text()
    for p in PUBLISHED:
        if p.method is None:
            assert p.text in report, p
        elif p.rho in ("max", "min", "32", "200"):  # budgets every quick grid has
            assert f"| {p.text} |" in report, p
    for r in REDUCTIONS:
        assert f"| {r.text}% |" in report, r
    for g in GAINS:
        assert g.text in report
    assert "Surrogate data" in report and "![Figure 4" in report and "None" not in report
    # each figure's caption says its logs are surrogate, as its footnote does
    embedded = [line for line in report.splitlines() if line.startswith("![")]
    assert len(embedded) >= 6 and all(SURROGATE_NOTE in line for line in embedded), embedded
    assert report.count("## Experiment `") == 8 and "**holds**" in report


def test_report_numbers_come_from_the_runs(quick_results):
    runs = pd.read_csv(quick_results / "gsm8k_online_quick" / "runs.csv")
    ours = runs[(runs["method"] == "uniform") & (runs["rho"] == 32)]["regret_hv"].mean()
    report = write_report(quick_results).read_text()
    assert f"| `gsm8k_online` | R_HV | Uniform | ρ=32 | 169.45 | {ours:.2f} | ρ=32 |" in report


def test_recommend_names_and_exact_set_frequency(quick_results):
    items = {i["experiment"]: i for i in recommend(quick_results)}
    assert len(items) == 8
    psi = items["gsm8k_psi"]
    arms = pd.read_csv(quick_results / "gsm8k_psi_quick" / "arms.csv")
    assert set(psi["true_pareto_set"]) == set(arms.loc[arms["pareto"] == 1, "config_id"])
    summary = pd.read_csv(quick_results / "gsm8k_psi_quick" / "summary.csv")
    for r in psi["results"]:
        row = summary[(summary["method"] == r["method"]) & (summary["rho"] == r["rho"])
                      & (summary["cost_mode"] == r["cost_mode"])].iloc[0]
        assert r["exact_true_set"] == pytest.approx(1 - row["error"], abs=1e-12)
        assert {c["config_id"] for c in r["configurations"]} <= set(arms["config_id"])
    online = items["piqa_online"]
    arms = pd.read_csv(quick_results / "piqa_online_quick" / "arms.csv")
    for r in online["results"]:
        # every repetition exploits one configuration, or none where several are pulled most, equally often
        assert sum(x["share"] for x in r["exploited"]) + r["no_single"] == pytest.approx(1.0)
        assert {x["config_id"] for x in r["exploited"]} <= set(arms["config_id"])
    assert online["max_nu"]["config_id"] == arms.loc[arms["nu"].idxmax(), "config_id"]
