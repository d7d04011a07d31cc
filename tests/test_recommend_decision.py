"""`cabench recommend` condensed: the answer at the largest budget by the best method; round robins say they have
no preference; `--all` keeps the full table."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from cabench.cli import app
from cabench.config import parse_config
from cabench.recommend import recommend
from cabench.runner import run_experiment
from tests.conftest import DATA

RUNNER = CliRunner()


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("decide")
    online = {"name": "on", "dataset": str(DATA / "piqa"), "setting": "online", "rho": [2, 8],
              "methods": ["cohv-ucb", "hv-ucb", "uniform"], "repetitions": 6, "output": str(root / "on")}
    psi = {"name": "id", "dataset": str(DATA / "piqa"), "arms": {"preset": "paper-subset"}, "setting": "psi",
           "rho": [20, 200], "methods": ["copsi", "psi-sr", "uniform"], "repetitions": 6, "output": str(root / "id"),
           "cost_modes": ["deterministic", "stochastic"]}
    for raw in (online, psi):
        run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    return root


def test_the_decision_is_the_best_method_at_the_largest_budget(results):
    items = {i["experiment"]: i for i in recommend(results)}
    summary = pd.read_csv(results / "on" / "summary.csv")
    top = summary[(summary["rho"] == 8) & (summary["method"] != "uniform")]
    best = top.loc[top["regret_hv"].idxmin()]
    d = items["on"]["decision"]
    assert (d["method"], d["rho"]) == (best["method"], 8.0)
    runs = pd.read_csv(results / "on" / "runs.csv")
    exploited = runs[(runs["method"] == best["method"]) & (runs["rho"] == 8)]["exploited"].value_counts()
    assert d["configuration"]["config_id"] == exploited.index[0]
    assert d["configuration"]["share"] == pytest.approx(exploited.iloc[0] / 6)
    assert items["on"]["no_preference"] == ["uniform"]
    summary = pd.read_csv(results / "id" / "summary.csv")
    top = summary[(summary["rho"] == 200) & (summary["cost_mode"] == "deterministic")]
    best = top.sort_values(["error", "f1"], ascending=[True, False], kind="stable").iloc[0]
    d = items["id"]["decision"]
    assert (d["method"], d["cost_mode"]) == (best["method"], "deterministic")
    assert d["exact_true_set"] == pytest.approx(1 - best["error"])


def test_condensed_by_default_and_everything_with_all(results):
    short = RUNNER.invoke(app, ["recommend", str(results)])
    full = RUNNER.invoke(app, ["recommend", str(results), "--all"])
    assert short.exit_code == 0 and full.exit_code == 0
    assert len(short.output.splitlines()) <= 30 < len(full.output.splitlines())
    assert "pay for " in short.output and "Uniform: a round robin, no preference" in short.output
    assert "a round robin: no preference" in full.output and "Uniform            rho 8" in full.output
    assert "exploits" not in next(x for x in full.output.splitlines() if x.strip().startswith("Uniform"))
