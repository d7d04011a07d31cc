"""The rows a cell writes (cabench.cells): the arms each repetition never pulled, from the runs to the report."""

from __future__ import annotations

import pandas as pd
import pytest

from cabench.config import parse_config
from cabench.html_report import write_reports
from cabench.runner import run_experiment
from cabench.summaries import format_summary
from tests.conftest import DATA


@pytest.mark.parametrize(("setting", "extra", "count", "what"), [
    ("online", {"methods": ["cohv-ucb", "uniform"]}, "pulls", "pulled"),
    ("psi", {"methods": ["uniform", "copsi"], "cost_modes": ["stochastic"]}, "samples", "sampled"),  # CoPSI: not run
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
    assert (joined["unpulled"] == joined["expected"]).all() and len(joined) == 20 * 2 * 2 ** (setting == "online")
    short = joined[joined["unpulled"] > 0]
    assert set(short["rho"]) == {1.01} and 5 <= short.groupby("method").size().min() <= 15
    assert short["unpulled"].max() >= 1
    summary = pd.read_csv(tmp_path / "least" / "summary.csv")
    reps, most = short.groupby("method").size(), short.groupby("method")["unpulled"].max()
    assert summary["reps_unpulled"].dtype == summary["unpulled_max"].dtype == "int64"
    assert (summary["status"] != "ok").sum() == 2 * (setting == "psi")
    for _, row in summary.iterrows():
        assert row["reps_unpulled"] == (reps.get(row["method"], 0) if row["rho"] == 1.01 else 0)
        assert row["unpulled_max"] == (most.get(row["method"], 0) if row["rho"] == 1.01 else 0)
    said = format_summary(outcome.summary, outcome.cost_unit).splitlines()
    mode = " (stochastic)" if setting == "psi" else ""
    left = {m: f"a configuration never {what}" if most[m] == 1 else
            f"configurations never {what}, up to {most[m]} in one" for m in most.index}
    expected = [f"{name}{mode} at rho 1.01: {reps[m]} of 20 repetitions left {left[m]} (the budget ran out within the "
                "first round)" for m, name in (("cohv-ucb", "CoHV-UCB"), ("uniform", "Uniform")) if m in reps]
    assert [line for line in said if "never" in line] == expected
    write_reports(tmp_path)
    report = (tmp_path / "REPORT.md").read_text()
    assert [line for line in report.splitlines() if "never" in line] == [
        "- " + line.replace("rho 1.01", "ρ=1.01") for line in expected]
    page = (tmp_path / "REPORT.html").read_text()
    assert all(f'<p class="unpulled">{line.replace("rho 1.01", "ρ=1.01")}</p>' in page for line in expected)


def test_an_edited_count_of_unpulled_configurations_is_refused(tmp_path):
    """runs.csv's `unpulled`, which the reports state, is checked as the other counts are, and against the zero
    counts of selections.csv.gz (a damaged cell was a traceback)."""
    from cabench.errors import CabenchError
    from cabench.results import load_experiment

    raw = {"name": "least", "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [1.01], "repetitions": 6,
           "methods": ["uniform"], "output": str(tmp_path / "least")}
    run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    path = tmp_path / "least" / "runs.csv"
    runs = pd.read_csv(path)
    assert runs["unpulled"].sum() > 0
    load_experiment(tmp_path / "least")
    for value, said in (("x", "column 'unpulled': 'x' is not a number"), ("-1", "is not a count"),
                        ("999", "is more than the 108 configurations"),
                        (str(runs["unpulled"].iloc[0] + 1), "column 'unpulled' counts")):
        edited = runs.astype({"unpulled": object})
        edited.loc[0, "unpulled"] = value
        edited.to_csv(path, index=False)
        with pytest.raises(CabenchError, match=said):
            load_experiment(tmp_path / "least")


def test_a_stated_budget_is_named_as_stated_where_repetitions_left_configurations_unpulled(tmp_path):
    """With budgets stated in tokens, the line gave rho to twelve digits (ρ=1.0100018...) rather than the budget."""
    raw = {"name": "stated", "dataset": str(DATA / "gsm8k"), "setting": "online", "budget": {"tokens": [14661]},
           "repetitions": 20, "methods": ["uniform"], "output": str(tmp_path / "stated")}
    outcome = run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    said = [line for line in format_summary(outcome.summary, outcome.cost_unit).splitlines() if "never" in line]
    assert len(said) == 1 and said[0].startswith("Uniform at B = 14661 tokens: "), said  # as `cabench run` says it
    write_reports(tmp_path)
    lines = [line for line in (tmp_path / "REPORT.md").read_text().splitlines() if "never pulled" in line]
    assert len(lines) == 1 and lines[0].startswith("- Uniform at B=14,661 tokens: "), lines
