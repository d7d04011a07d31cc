"""The statistics behind the report, computed on a results folder and checked against its runs.csv by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml

from cabench.analysis import comparisons, per_budget, reference_and_others, verdicts
from cabench.results import ResultSet
from tests.conftest import DATA
from tests.test_torture import cli

PSI = {"name": "small_psi", "dataset": str(DATA / "gsm8k"), "setting": "psi", "arms": {"preset": "paper-subset"},
       "rho": [10, 60], "methods": ["copsi", "psi-sr", "uniform"], "repetitions": 40}


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    root = tmp_path_factory.mktemp("analysis")
    config = root / "small.yaml"
    config.write_text(yaml.safe_dump({**PSI, "output": str(root / "small_psi")}))
    assert cli("run", config, "--quiet").exit_code == 0
    return ResultSet(root).experiments[0]


def _errors(runs: pd.DataFrame, method: str, rho: float) -> np.ndarray:
    r = runs[(runs["method"] == method) & (runs["rho"] == rho) & (runs["cost_mode"] == "deterministic")]
    return r.sort_values("rep")["error"].to_numpy(int)


def test_mcnemar_rows_match_a_hand_count(experiment):
    base, others = reference_and_others(experiment)
    assert base == "copsi" and others == ["psi-sr", "uniform"]
    rows = [r for r in comparisons(experiment) if r["test"] == "McNemar"]
    assert [r["other"] for r in rows] == others
    a = _errors(experiment.runs, "copsi", 60)
    for row in rows:
        b = _errors(experiment.runs, row["other"], 60)
        only_a, only_b = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
        m = only_a + only_b  # two-sided exact binomial tail at 1/2 over the discordant pairs
        p = min(1.0, 2 * sum(math.comb(m, i) for i in range(min(only_a, only_b) + 1)) / 2**m) if m else 1.0
        assert (row["only_a"], row["only_b"], row["n"]) == (only_a, only_b, 40)
        assert row["p"] == pytest.approx(p) and row["base_mean"] == pytest.approx(a.mean())
    holm = sorted(r["p"] for r in rows)
    assert sorted(r["p_holm"] for r in rows)[0] == pytest.approx(min(1.0, 2 * holm[0]))


def test_verdicts_follow_their_numbers(experiment):
    rows = comparisons(experiment)
    found = verdicts(experiment, rows)
    falls = next(v for v in found if "falls from" in v.statement)
    lo, hi = _errors(experiment.runs, "copsi", 10).mean(), _errors(experiment.runs, "copsi", 60).mean()
    assert f"{lo:.3f} → {hi:.3f}" in falls.statement
    assert falls.state == ("fails" if hi >= lo else falls.state)
    for v in found:
        assert v.state in ("holds", "fails", "inconclusive", "n/a") and "**" not in v.statement


def test_per_budget_rows_are_paired_f1_differences(experiment):
    base, mode, rows = per_budget(experiment)
    assert (base, mode) == ("copsi", "deterministic") and len(rows) == 4
    runs = experiment.runs[experiment.runs["cost_mode"] == "deterministic"]
    for row in rows:
        f1 = {m: runs[(runs["method"] == m) & (runs["rho"] == row["rho"])].sort_values("rep")["f1"].to_numpy()
              for m in (base, row["other"])}
        assert row["diff"] == pytest.approx((f1[base] - f1[row["other"]]).mean())
        assert row["low"] <= row["diff"] <= row["high"]
        assert row["verdict"] == ("higher" if row["low"] > 0 else "lower" if row["high"] < 0 else "not different")


def test_a_metric_by_cost_mode_is_that_mode_s_runs_by_repetition(tmp_path):
    """``at`` with a cost mode gives the runs of that mode only, indexed by repetition in order, as filtered by hand;
    a mode or budget the runs lack gives nothing."""
    from cabench.analysis import at

    config = tmp_path / "modes.yaml"
    config.write_text(yaml.safe_dump({**PSI, "name": "modes", "rho": [10], "methods": ["copsi", "psi-sr"],
                                      "repetitions": 12, "cost_modes": ["deterministic", "stochastic"],
                                      "output": str(tmp_path / "modes")}))
    assert cli("run", config, "--quiet").exit_code == 0
    e = ResultSet(tmp_path).experiments[0]
    runs = e.runs
    for method in ("copsi", "psi-sr"):
        for mode in ("deterministic", "stochastic"):
            mine = runs[(runs["method"] == method) & (runs["rho"] == 10) & (runs["cost_mode"] == mode)]
            expected = mine.sort_values("rep")
            got = at(e, method, 10, "spend", mode)
            assert list(got.index) == list(expected["rep"]) == list(range(12))
            assert got.to_numpy().tolist() == expected["spend"].tolist()
    assert at(e, "copsi", 10, "spend", "deterministic").tolist() != at(e, "copsi", 10, "spend", "stochastic").tolist()
    assert at(e, "copsi", 10, "spend").shape == (24,)
    assert at(e, "copsi", 20, "spend", "stochastic").empty and at(e, "copsi", 10, "spend", "realised").empty


def test_equal_mean_f1_is_a_difference_of_zero_whatever_the_order_of_the_sums(tmp_path):
    """CoPSI and PSI-SR with equal mean F1 (0.733 each, 10 repetitions): the mean paired difference came out
    -5.6e-18 or +5.6e-18 by the order of the sums; it is 0, and with an interval on both sides of 0 the claim is
    neither shown nor ruled out."""
    from cabench.analysis import comparisons, verdicts
    from cabench.config import parse_config
    from cabench.results import load_experiment
    from cabench.runner import run_experiment
    from tests.conftest import DATA

    raw = {"name": "tie", "dataset": str(DATA / "gsm8k"), "arms": {"preset": "paper-subset"}, "setting": "psi",
           "rho": [20, 200], "methods": ["copsi", "psi-sr"], "cost_modes": ["deterministic"], "repetitions": 10,
           "seed": 0, "chunk_size": 5, "output": str(tmp_path / "tie")}
    run_experiment(parse_config(raw, "tie.yaml"), quiet=True)
    e = load_experiment(tmp_path / "tie")
    rows = comparisons(e)
    row = next(r for r in rows if r["metric"] == "f1")
    assert row["base_mean"] == pytest.approx(row["other_mean"], abs=1e-12) and row["diff"] == 0.0
    assert row["low"] < 0 < row["high"]
    f1 = next(v for v in verdicts(e, rows) if v.kind == "f1-above")
    assert f1.state == "inconclusive" and f1.estimate == 0.0 and "+0.000 [95% CI" in f1.quantity
