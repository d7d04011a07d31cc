"""The quick pipeline end to end: run, plot, report, in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from cabench.config import load_config
from cabench.paper import GAINS, PUBLISHED, REDUCTIONS
from cabench.plots import plot_results
from cabench.report import write_report
from cabench.runner import run_experiment
from tests.conftest import ROOT

QUICK = sorted((ROOT / "configs").glob("*_quick.yaml"))


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
    names = sorted(p.name for p in written)
    for stem in ("fig1_landscapes", "fig2_online_regret", "fig3_standard_regret", "fig4_trajectories",
                 "fig5_full_f1", "fig6_cost_modes"):
        assert f"{stem}.png" in names and f"{stem}.pdf" in names
        assert (quick_results / f"{stem}.png").stat().st_size > 10_000
    again = plot_results(quick_results, ["png", "pdf"])
    assert sorted(p.name for p in again) == names
    report = write_report(quick_results).read_text()
    for p in PUBLISHED:
        assert f"| {p.text} |" in report, p
    for r in REDUCTIONS:
        assert f"| {r.text}% |" in report, r
    for g in GAINS:
        assert g.text in report
    assert "Surrogate data" in report and "![Figure 4" in report
    assert "**holds**" in report


def test_report_numbers_come_from_the_runs(quick_results):
    import pandas as pd

    runs = pd.read_csv(quick_results / "gsm8k_online_quick" / "runs.csv")
    ours = runs[(runs["method"] == "uniform") & (runs["rho"] == 32)]["regret_hv"].mean()
    report = write_report(quick_results).read_text()
    assert f"| GSM8K | R_HV | Uniform | rho=32 | 169.45 | {ours:.2f} | rho=32 |" in report
