"""The rows a cell writes (cabench.cells): the arms each repetition never pulled, from the runs to the report."""

from __future__ import annotations

import pandas as pd
import pytest

from cabench.config import parse_config
from cabench.report import write_report
from cabench.runner import run_experiment
from cabench.summaries import format_summary
from tests.conftest import DATA


@pytest.mark.parametrize(("setting", "extra", "count", "what"), [
    ("online", {"methods": ["cohv-ucb", "uniform"]}, "pulls", "pulled"),
    ("psi", {"methods": ["uniform"], "cost_modes": ["stochastic"]}, "samples", "sampled"),
])
def test_repetitions_that_leave_an_arm_unpulled_are_counted_and_said(tmp_path, setting, extra, count, what):
    """At a budget just past the least, with costs that vary by call, the initial round of SPEC §5 ran out before
    its last arm in some repetitions, and summary.csv said `ok` with nothing counting them."""
    raw = {"name": "least", "dataset": str(DATA / "gsm8k"), "setting": setting, "rho": [1.01, 4],
           "repetitions": 20, "output": str(tmp_path / "least"), **extra}
    outcome = run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    runs = pd.read_csv(tmp_path / "least" / "runs.csv")
    selections = pd.read_csv(tmp_path / "least" / "selections.csv.gz")
    keys = ["method", "rho", "rep"]
    zero = selections.assign(zero=selections[count] == 0).groupby(keys)["zero"].sum().rename("expected")
    joined = runs.join(zero, on=keys)
    assert (joined["unpulled"] == joined["expected"]).all() and len(joined) == 20 * len(extra["methods"]) * 2
    short = joined[joined["unpulled"] > 0]
    assert set(short["rho"]) == {1.01} and 5 <= short.groupby("method").size().min() <= 15
    assert short["unpulled"].max() >= 1
    summary = pd.read_csv(tmp_path / "least" / "summary.csv")
    reps = short.groupby("method").size()
    for _, row in summary.iterrows():
        assert row["reps_unpulled"] == (reps.get(row["method"], 0) if row["rho"] == 1.01 else 0)
    said = format_summary(outcome.summary, outcome.cost_unit).splitlines()
    mode = " (stochastic)" if setting == "psi" else ""
    expected = [f"{name}{mode} at rho 1.01: {reps[m]} of 20 repetitions left a configuration never {what} (the "
                "budget ran out in the initial round)" for m, name in (("cohv-ucb", "CoHV-UCB"), ("uniform", "Uniform"))
                if m in reps]
    assert [line for line in said if "never" in line] == expected
    write_report(tmp_path)
    report = (tmp_path / "REPORT.md").read_text()
    assert [line for line in report.splitlines() if "never" in line] == [
        "- " + line.replace("rho 1.01", "ρ=1.01") for line in expected]
