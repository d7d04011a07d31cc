"""`cabench recommend` condensed: the answer at the largest budget by the best method; round robins say they have
no preference; `--all` keeps the full table."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from cabench.cli import app
from cabench.config import parse_config
from cabench.constraints import parse_constraints
from cabench.recommend import format_decisions, recommend
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
    assert d["criterion"] == f"lowest mean R_HV among methods with a preference ({best['regret_hv']:.4g})"  # not
    # Uniform's, which may be lower
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


def _modal_count(results, method: str) -> int:
    """How many repetitions of ``method`` at rho 200 (deterministic costs) returned its most frequent set."""
    sel = pd.read_csv(next((results / "id").glob("selections.csv*")))
    sel = sel[(sel["method"] == method) & (sel["rho"] == 200) & (sel["cost_mode"] == "deterministic")]
    sets = [tuple(sorted(g.loc[g["returned"] == 1, "config_id"])) for _, g in sel.groupby("rep")]
    return max(sets.count(s) for s in sets)


def test_condensed_answer_counts_repetitions_and_flags_a_set_returned_in_few(results):
    d = {i["experiment"]: i for i in recommend(results)}["id"]["decision"]
    k = _modal_count(results, d["method"])
    short = RUNNER.invoke(app, ["recommend", str(results)]).output
    assert f"returns it in {k} of 6 repetitions" in short
    assert ("no set came back in most repetitions" in short) == (k <= 3)


def test_a_set_returned_in_few_repetitions_is_flagged():
    from cabench.recommend import format_decisions

    def item(share: float) -> dict:
        return {"experiment": "x", "setting": "psi", "dataset": "d", "surrogate": False, "K": 3,
                "objectives": ["accuracy", "efficiency"], "cost_unit": "tokens", "true_pareto_set": ["a", "b"],
                "no_preference": [], "constrained": None,
                "decision": {"method": "copsi", "rho": 10.0, "budget": 1000.0, "cost_mode": "deterministic",
                             "repetitions": 200, "criterion": "c", "pareto_set": ["a", "b"], "share": share,
                             "exact_true_set": share, "members": []}}

    few, most = format_decisions([item(1 / 200)]), format_decisions([item(0.6)])
    assert "returns it in 1 of 200 repetitions" in few and "exact true set in 1)" in few
    assert "no set came back in most repetitions" in few
    assert "returns it in 120 of 200 repetitions" in most and "no set came back" not in most


def test_a_pareto_set_larger_than_its_unit_lines_counts_the_rest():
    """With three or more objectives most configurations can be Pareto: the condensed answer gives units for the
    first eight members and counts the others, never drops them unsaid."""
    from cabench.recommend import format_decisions

    def item(size: int) -> dict:
        names = [f"cfg{i}" for i in range(size)]
        members = [{"config_id": n, "accuracy": 0.5, "accuracy_ci": 0.1} for n in names]
        return {"experiment": "x", "setting": "psi", "dataset": "d", "surrogate": False, "K": 12,
                "objectives": ["accuracy", "latency", "cost"], "cost_unit": "usd", "true_pareto_set": names,
                "no_preference": [], "constrained": None,
                "decision": {"method": "copsi", "rho": 10.0, "budget": 2.0, "cost_mode": "deterministic",
                             "repetitions": 10, "criterion": "c", "pareto_set": names, "share": 0.9,
                             "exact_true_set": 0.9, "members": members}}

    nine, eight = format_decisions([item(9)]), format_decisions([item(8)])
    assert "    cfg7: accuracy 0.500 ± 0.100" in nine and "    cfg8: accuracy" not in nine
    assert "    … 1 more (--json lists all)" in nine
    assert "    cfg7: accuracy 0.500 ± 0.100" in eight and "more (--json" not in eight


def test_a_decision_made_on_realised_costs_says_so():
    """Identification with realised (stochastic) costs only: the condensed answer names the cost mode, as both
    reports' Decisions do; with deterministic costs, the usual case, it stays unsaid."""
    from cabench.recommend import format_decisions

    def item(mode: str) -> dict:
        return {"experiment": "x", "setting": "psi", "dataset": "d", "surrogate": False, "K": 3,
                "objectives": ["accuracy", "efficiency"], "cost_unit": "tokens", "true_pareto_set": ["a", "b"],
                "no_preference": [], "constrained": None,
                "decision": {"method": "copsi", "rho": 12.0, "budget": 1760.4, "cost_mode": mode,
                             "repetitions": 10, "criterion": "lowest P(error) 0.200", "pareto_set": ["a", "b"],
                             "share": 0.8, "exact_true_set": 0.8, "members": []}}

    assert ("B = 1,760 tokens (rho 12, stochastic costs; lowest P(error) 0.200; the exact true set in 8)"
            in format_decisions([item("stochastic")]))
    assert "B = 1,760 tokens (rho 12; lowest P(error) 0.200; the exact true set in 8)" in format_decisions(
        [item("deterministic")])


def test_a_weak_identification_answer_is_flagged_in_both_reports_decisions(tmp_path):
    """The full PIQA set (K = 132) at rho 10: no returned set comes back in most repetitions; REPORT.md's and
    REPORT.html's Decisions rows flag it as recommend does, after the count."""
    from cabench.html_report import write_reports

    raw = {"name": "short", "dataset": str(DATA / "piqa"), "setting": "psi", "rho": [10], "methods": ["copsi-r"],
           "repetitions": 4, "output": str(tmp_path / "short")}
    run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    d = recommend(tmp_path)[0]["decision"]
    k = round(d["share"] * 4)
    assert k <= 2
    write_reports(tmp_path)
    row = next(x for x in (tmp_path / "REPORT.md").read_text().split("## Decisions", 1)[1].splitlines()
               if x.startswith("| `short` |"))
    assert f"| {k} of 4 repetitions (the exact true set in {round(d['exact_true_set'] * 4)}); no set came back in " \
           "most repetitions" in row and row.endswith(" |")  # (then any member in the set only by a tie)
    page = (tmp_path / "REPORT.html").read_text()
    assert f"{k} of 4 repetitions (the exact true set in {round(d['exact_true_set'] * 4)}); no set came back" in page
    shown = RUNNER.invoke(app, ["recommend", str(tmp_path)]).output
    assert "no set came back in most repetitions: this budget is short" in shown
    # sets returned as often as the one shown, counted again from selections.csv: the runs do not choose among them
    sel = pd.read_csv(tmp_path / "short" / "selections.csv.gz")
    sets = sel[sel["returned"] == 1].groupby("rep")["config_id"].agg(lambda c: tuple(sorted(c)))
    sets = sets.reindex(range(4), fill_value=())  # a repetition that returned no configuration: the empty set
    counts = sets.value_counts()
    assert counts.max() == k
    tied = int((counts == k).sum()) - 1
    assert tied >= 1  # four repetitions at rho 10 on 132 configurations: no two alike
    note = (f"; {tied} other set{'s' if tied > 1 else ''} came back as often: the runs do not choose between them "
            "(this one is shown first by its members' names)")
    assert note in shown and note in row
    assert note.replace("'", "&#39;") in page


def test_cells_not_run_are_listed_by_all_and_json_as_the_reports_list_them(tmp_path):
    """ρ = 2 is too small for CoPSI's and PSI-SR's first phase on the 14-arm subset (Uniform runs there), and ρ = 0.5
    for every online method's initial round: `--all` and `--json` list those cells as `not run: <reason>`, the
    reason the run recorded, at the budget summary.csv gives them, in their place in the table."""
    import json

    import yaml

    psi = {"name": "id", "dataset": str(DATA / "piqa"), "arms": {"preset": "paper-subset"}, "setting": "psi",
           "rho": [2, 20], "methods": ["copsi", "psi-sr", "uniform"], "repetitions": 3, "output": str(tmp_path / "id"),
           "cost_modes": ["deterministic", "stochastic"]}
    online = {"name": "on", "dataset": str(DATA / "piqa"), "setting": "online", "rho": [0.5, 2],
              "methods": ["cohv-ucb", "uniform"], "repetitions": 3, "output": str(tmp_path / "on")}
    for raw in (psi, online):
        run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    reasons = {(i["method"], i["rho"]): i["reason"] for name in ("id", "on")
               for i in yaml.safe_load((tmp_path / name / "config.yaml").read_text())["infeasible"]}
    assert set(reasons) == {("copsi", 2.0), ("psi-sr", 2.0), ("cohv-ucb", 0.5), ("uniform", 0.5)}
    assert reasons[("copsi", 2.0)].startswith("rho 2 is too small for CoPSI on 14 arms")

    items = {i["experiment"]: i for i in json.loads(RUNNER.invoke(app, ["recommend", str(tmp_path), "--json"]).stdout)}
    for name, setting in (("id", "psi"), ("on", "online")):
        summary = pd.read_csv(tmp_path / name / "summary.csv")
        skipped = summary[summary["status"] != "ok"]
        expected = [{"method": row.method, **({"cost_mode": row.cost_mode} if setting == "psi" else {}),
                     "rho": row.rho, "budget": row.budget_tokens,
                     "status": row.status}  # summary.csv's words are recommend's
                    for row in skipped.itertuples()]
        assert len(expected) == (4 if setting == "psi" else 2)
        assert all(row.status == f"not run: {reasons[(row.method, row.rho)]}" for row in skipped.itertuples())
        assert sorted(items[name]["not_run"], key=str) == sorted(expected, key=str)
        assert all(r["status"] == f"not run: {reasons[(r['method'], r['rho'])]}" for r in items[name]["not_run"])
        assert {(r["method"], r["rho"]) for r in items[name]["results"]}.isdisjoint(reasons)

    table = RUNNER.invoke(app, ["recommend", str(tmp_path), "--all"]).stdout.splitlines()
    rows = [line.split("rho")[0].split() + [line.split("rho")[1].split()[0]] for line in table
            if line.startswith("  ") and " rho " in line and not line.startswith("      ")]
    assert rows[:6] == [["CoPSI", "deterministic", "2"], ["CoPSI", "deterministic", "20"],
                        ["CoPSI", "stochastic", "2"], ["CoPSI", "stochastic", "20"],
                        ["PSI-SR", "deterministic", "2"], ["PSI-SR", "deterministic", "20"]]
    not_run = [line for line in table if "not run: " in line]
    assert len(not_run) == 6
    assert f"  CoPSI    deterministic rho 2      not run: {reasons[('copsi', 2.0)]}" in not_run
    assert f"  CoHV-UCB           rho 0.5    not run: {reasons[('cohv-ucb', 0.5)]}" in not_run
    assert f"  Uniform            rho 0.5    not run: {reasons[('uniform', 0.5)]}" in not_run


def test_no_configuration_is_a_decision_where_nu_cannot_tell_them_apart(tmp_path):
    """The second objective is 0 for every configuration: every ν is 0 (no hypervolume), R_HV is 0 whatever is
    pulled, so recommend, both reports and their overview name no configuration to pay for and say why; a
    configuration with a positive second objective brings the decision back."""
    means = [[0.9, 0.0], [0.6, 0.0], [0.2, 0.0]]
    raw = {"name": "flat", "dataset": {"synthetic": {"name": "flat", "means": means, "costs": [1, 1, 1],
                                                      "noise": "gaussian", "sigma": 0.3}},
           "setting": "online", "rho": [30], "methods": ["cohv-ucb", "uniform"], "repetitions": 4,
           "output": str(tmp_path / "flat")}
    run_experiment(parse_config(raw, "flat.yaml"), quiet=True)
    arms = pd.read_csv(tmp_path / "flat" / "arms.csv")
    assert (arms["nu"] == 0).all()
    runs = pd.read_csv(tmp_path / "flat" / "runs.csv")
    assert (runs["regret_hv"] == 0).all()
    item = recommend(tmp_path)[0]
    why = "no decision: every configuration has the same ν = 0 (objective2 is 0 for every configuration)"
    assert item["decision"] is None and item["undecided"].startswith(why)
    result = RUNNER.invoke(app, ["recommend", str(tmp_path)])
    assert result.exit_code == 0 and f"\n  {why}" in result.stdout and "pay for" not in result.stdout
    RUNNER.invoke(app, ["report", str(tmp_path)])
    assert f"| `flat` | {why}" in (tmp_path / "REPORT.md").read_text()
    assert why[0].upper() + why[1:] in (tmp_path / "REPORT.html").read_text()
    # under a requirement two configurations qualify, every ν alike: no answer among them either
    among = "no decision among them: every configuration has the same ν = 0"
    c = recommend(tmp_path, parse_constraints(["objective1>=0.5"]))[0]["constrained"]
    assert c["qualifying"] == ["arm0", "arm1"] and c["answer"] == [] and c["found"] == []
    assert c["undecided"].startswith(among)
    result = RUNNER.invoke(app, ["recommend", str(tmp_path), "--require", "objective1>=0.5"])
    assert result.exit_code == 0 and f"\n    {among}" in result.stdout and "largest nu among them" not in result.stdout
    RUNNER.invoke(app, ["report", str(tmp_path), "--require", "objective1>=0.5"])
    assert f"\n\n{among[0].upper()}{among[1:]}" in (tmp_path / "REPORT.md").read_text()
    raw["dataset"]["synthetic"]["means"] = [[0.9, 0.0], [0.6, 0.0], [0.2, 0.5]]
    raw["output"] = str(tmp_path / "apart" / "flat")
    run_experiment(parse_config(raw, "flat.yaml"), quiet=True)
    item = recommend(tmp_path / "apart")[0]
    assert item["undecided"] is None and item["decision"]["configuration"]["config_id"] == "arm2"


def test_qualifying_configurations_all_of_no_worth_are_no_decision(tmp_path):
    """arm1 and arm2 have objective1 0 (ν 0), arm0 is worth something: under 'objective1<=0.1' only the two
    worthless ones qualify. 'pay for any of arm1, arm2', found in every repetition that pulled either most, said
    nothing; now there is no decision among them, as where every configuration's ν is alike."""
    raw = {"name": "naught", "dataset": {"synthetic": {"name": "naught", "means": [[0.9, 0.5], [0.0, 0.6], [0.0, 0.7]],
                                                        "costs": [1, 1, 1], "noise": "gaussian", "sigma": 0.3}},
           "setting": "online", "rho": [30], "methods": ["cohv-ucb"], "repetitions": 4,
           "output": str(tmp_path / "naught")}
    run_experiment(parse_config(raw, "naught.yaml"), quiet=True)
    arms = pd.read_csv(tmp_path / "naught" / "arms.csv")
    assert arms["nu"].tolist()[1:] == [0.0, 0.0] and arms["nu"].iloc[0] > 0
    c = recommend(tmp_path, parse_constraints(["objective1<=0.1"]))[0]["constrained"]
    assert c["qualifying"] == ["arm1", "arm2"] and c["answer"] == [] and c["found"] == []
    among = ("no decision among them: every qualifying configuration has ν = 0 (no hypervolume: an objective of each "
             "is 0), so which of them a method pulls most says nothing")
    assert c["undecided"] == among
    result = RUNNER.invoke(app, ["recommend", str(tmp_path), "--require", "objective1<=0.1"])
    assert result.exit_code == 0 and f"\n    {among}" in result.stdout and "pay for any of arm1" not in result.stdout
    c = recommend(tmp_path, parse_constraints(["objective1<=0.95"]))[0]["constrained"]  # arm0 qualifies too
    assert c["answer"] == ["arm0"] and c["undecided"] is None


def _twins(root) -> None:
    """arm0 and arm1 alike (nu 0.45), arm2 worse (0.18): CoHV-UCB at rho 30, six repetitions, in ``root/twins``."""
    means = [[0.9, 0.5], [0.9, 0.5], [0.2, 0.9]]
    raw = {"name": "twins", "dataset": {"synthetic": {"name": "twins", "means": means, "costs": [1, 1, 1],
                                                       "noise": "gaussian", "sigma": 0.3}},
           "setting": "online", "rho": [30], "methods": ["cohv-ucb"], "repetitions": 6,
           "output": str(root / "twins")}
    run_experiment(parse_config(raw, "twins.yaml"), quiet=True)


def test_configurations_tied_for_the_best_are_each_an_answer_under_a_requirement(tmp_path):
    """arm0 and arm1 are alike (ν 0.45), arm2 worse (0.18): the decision names one of the two, and under a
    requirement both qualify the answer is either of them, found in every repetition whose most-pulled qualifying
    configuration is one of them."""
    _twins(tmp_path)
    item = recommend(tmp_path, parse_constraints(["objective1>=0.5"]))[0]
    assert item["undecided"] is None and item["decision"]["configuration"]["config_id"] in ("arm0", "arm1")
    c = item["constrained"]
    assert c["qualifying"] == ["arm0", "arm1"] and c["answer"] == ["arm0", "arm1"] and c["undecided"] is None
    runs = pd.read_csv(tmp_path / "twins" / "runs.csv")
    assert c["found"][0]["share"] == pytest.approx(runs["exploited"].isin(["arm0", "arm1"]).mean()) == 1.0
    result = RUNNER.invoke(app, ["recommend", str(tmp_path), "--require", "objective1>=0.5"])
    assert "    pay for any of arm0, arm1 (they share the largest nu among them)\n" in result.stdout
    assert "no decision" not in result.stdout
    RUNNER.invoke(app, ["report", str(tmp_path), "--require", "objective1>=0.5"])
    assert "Pay for any of arm0, arm1: they share the largest ν among them." in (tmp_path / "REPORT.md").read_text()


def _exploiting(folder, names: list[str]) -> None:
    """Make run ``i`` of the online results in ``folder`` exploit ``names[i]``: in runs.csv, and in the pulls
    selections.csv.gz records (that configuration given one pull more than the most any other had, taken from the
    one pulled most, so the run's pulls stay as many)."""
    runs = pd.read_csv(folder / "runs.csv")
    sel = pd.read_csv(folder / "selections.csv.gz")
    for i, name in enumerate(names):
        block = sel[(sel["method"] == runs.loc[i, "method"]) & (sel["rho"] == runs.loc[i, "rho"])
                    & (sel["rep"] == runs.loc[i, "rep"])]
        top, mine = block["pulls"].idxmax(), block.index[block["config_id"] == name][0]
        if top != mine:
            most = int(block["pulls"].max())
            sel.loc[top, "pulls"] -= most + 1 - sel.loc[mine, "pulls"]
            sel.loc[mine, "pulls"] = most + 1
    runs["exploited"] = names
    runs.to_csv(folder / "runs.csv", index=False)
    sel.to_csv(folder / "selections.csv.gz", index=False)


def test_configurations_exploited_equally_often_are_each_the_online_answer(tmp_path):
    """The best method exploits arm1 in three repetitions and arm0 in three: the runs do not choose between them,
    so every surface names both (it named arm0 alone, the first by name), and a repetition exploiting either
    finds the answer."""
    from cabench.advise import _online_lines
    from cabench.answers import brief
    from cabench.html_report import _decision
    from cabench.results import ResultSet

    _twins(tmp_path)
    _exploiting(tmp_path / "twins", ["arm1", "arm0", "arm1", "arm0", "arm1", "arm0"])
    item = recommend(tmp_path)[0]
    d = item["decision"]
    assert d["configuration"]["config_id"] == "arm0" and [x["config_id"] for x in d["tied"]] == ["arm1"]
    assert d["configuration"]["share"] == d["tied"][0]["share"] == 0.5
    shown = RUNNER.invoke(app, ["recommend", str(tmp_path)]).stdout
    assert "  pay for any of arm0, arm1: CoHV-UCB exploits each in 3 of 6 repetitions at B = " in shown
    assert _online_lines(item, "tokens")[0].startswith("online: pay for any of arm0, arm1 — CoHV-UCB exploits each "
                                                       "in 50% of 6 repetitions (the 2 together in 100%; the runs do "
                                                       "not choose")
    e = ResultSet(tmp_path).experiments[0]
    assert brief(e)["names"] == ["arm0", "arm1"]
    html = _decision(e)
    assert html["what"].startswith("pay for any of arm0, arm1") and [r["config"] for r in html["rows"]] == [
        "arm0", "arm1"]
    assert html["finders"][0]["share"]["text"] == "100%"  # every repetition exploits one of them
    RUNNER.invoke(app, ["report", str(tmp_path)])
    assert "pay for any of `arm0`, `arm1` | CoHV-UCB | " in (tmp_path / "REPORT.md").read_text()
    assert "| each in 3 of 6 repetitions |" in (tmp_path / "REPORT.md").read_text()
    page = (tmp_path / "REPORT.html").read_text()
    assert "CoHV-UCB exploits each in\n    50%" in page and "exploits one of them most in" in page


def test_names_with_a_comma_or_a_quote_are_quoted_in_lists_of_names():
    """'gpt 4o, mini' in a comma-joined list read as two configurations: such names (and those with a quote or an
    outer space) are shown in double quotes, escaped as JSON; plain names as they are."""
    from cabench.report_cells import listed

    assert listed(["gpt 4o, mini", "a/b c", " pad", 'say "q"', "模型/β"]) == \
        '"gpt 4o, mini", a/b c, " pad", "say \\"q\\"", 模型/β'


def test_a_budget_that_ends_with_configurations_pulled_equally_often_decides_nothing(tmp_path):
    """At a budget of about one pull per configuration every repetition ends with each pulled once, and runs.csv's
    ``exploited`` is the first of them in the logs' order: the same logs listed in another order named another
    configuration — one worse on every objective — as the one to pay for, "in 100% of the repetitions"."""
    from cabench.answers import no_decision, top_decision
    from cabench.results import load_experiment
    from tests.conftest import tiny_logs, write_dataset

    frame = tiny_logs(n_configs=4, n_instances=40).assign(tokens=100)  # B = rho K c: rho 1 pays one pull each
    for order in ("as written", "reversed"):
        logs = frame if order == "as written" else frame.iloc[::-1]
        data = write_dataset(tmp_path / order.replace(" ", "_"), logs.reset_index(drop=True),
                             split={"profiling_size": 20})
        for rho in (1, 16):
            out = tmp_path / f"{order.replace(' ', '_')}_{rho}"
            run_experiment(parse_config({"name": "tie", "dataset": str(data), "setting": "online", "rho": [rho],
                                         "methods": ["cohv-ucb"], "repetitions": 4, "output": str(out)}, "t.yaml"),
                           quiet=True)
            e = load_experiment(out)
            pulls = e.selections.groupby("rep")["pulls"].agg(["max", lambda p: int((p == p.max()).sum())])
            d = top_decision(e)
            if rho == 1:
                assert (pulls["max"] == 1).all() and (pulls.iloc[:, 1] == 4).all()  # one pull each, every rep
                assert set(e.runs["exploited"]) == {e.arms["config_id"].iloc[0]}  # the logs' first, as written
                assert d is None and ("no repetition of CoHV-UCB (lowest mean R_HV) ends with one configuration "
                                      "pulled more often") in no_decision(e)
            else:
                alone = int((pulls.iloc[:, 1] == 1).sum())
                assert alone >= 1 and d["configuration"]["share"] <= alone / 4
                assert d["no_single"] == pytest.approx(1 - alone / 4)


def test_a_pareto_member_dominated_but_for_a_tie_is_said_to_be():
    """The Pareto set dominates strictly in every objective (paper §3.2): C ties A on accuracy and is worse on the
    rest, so it stays in the set a practitioner is told to pay for; the answer now says so beside it."""
    from cabench.answers import arm_facts, dominated_but_for_ties
    from cabench.recommend import member_notes

    arms = pd.DataFrame({"config_id": ["A", "C", "E", "D"], "mu_accuracy": [0.9, 0.9, 0.2, 0.5],
                         "mu_efficiency": [0.5, 0.1, 0.9, 0.4], "mu_c": [1.0] * 4, "profile_cost": [1.0] * 4,
                         "nu": [1.0] * 4, "pareto": [1, 1, 1, 0], "optimal": [1, 0, 0, 0]})
    assert [dominated_but_for_ties(arms, n) for n in ("A", "C", "E", "D")] == [None, "A", None, None]
    assert arm_facts(arms, "C")["tie_dominated_by"] == "A" and "tie_dominated_by" not in arm_facts(arms, "A")
    assert member_notes(arm_facts(arms, "C")).startswith(" — no better than A on any objective as scored, worse on "
                                                         "some")
    assert member_notes(arm_facts(arms, "E")) == ""
    even = arms.assign(mu_efficiency=[0.5, 0.5, 0.9, 0.4])  # C equal to A everywhere: neither is better
    assert dominated_but_for_ties(even, "C") is None and dominated_but_for_ties(even, "A") is None


def test_both_reports_say_what_recommend_says_of_ties(tmp_path):
    """recommend and advise said that a Pareto member is in the set only by a tie, and how many repetitions pulled
    several configurations most; REPORT.md and REPORT.html said neither."""
    from cabench.html_report import render_html
    from cabench.report import build_report, gather
    from tests.conftest import tiny_logs, write_dataset

    frame = tiny_logs(n_configs=3, n_instances=60)
    twin = frame["config_id"] == "cfg1"
    frame.loc[twin, "correct"] = frame.loc[frame["config_id"] == "cfg2", "correct"].to_numpy()  # cfg1 ties cfg2
    frame.loc[twin, "latency_s"] = frame.loc[frame["config_id"] == "cfg2", "latency_s"].to_numpy() * 2  # and is
    frame.loc[twin, "tokens"] = frame.loc[frame["config_id"] == "cfg2", "tokens"].to_numpy() * 2  # worse on the rest
    data = write_dataset(tmp_path / "tie", frame, split={"profiling_size": 20})
    root = tmp_path / "root"
    for setting, rho, methods in (("psi", 200, ["copsi-r"]), ("online", 2, ["cohv-ucb"])):
        run_experiment(parse_config({
            "name": setting, "dataset": str(data), "setting": setting, "rho": [rho], "methods": methods,
            "objectives": ["accuracy", "latency", "cost"], "repetitions": 4, "output": str(root / setting)},
            "t.yaml"), quiet=True)
    arms = pd.read_csv(root / "psi" / "arms.csv").set_index("config_id")
    assert arms.loc["cfg1", "pareto"] == 1 and arms.loc["cfg1", "mu_accuracy"] == arms.loc["cfg2", "mu_accuracy"]
    items = {i["experiment"]: i for i in recommend(root)}
    assert items["psi"]["decision"]["members"][[m["config_id"] for m in items["psi"]["decision"]["members"]].index(
        "cfg1")]["tie_dominated_by"] == "cfg2"
    text = build_report(root)
    decisions = text.split("## Decisions")[1].split("\n## ")[0].splitlines()
    row = next(line for line in decisions if line.startswith("| `psi` |"))
    assert "in the set only by a tie as scored: cfg1" in row
    page = render_html(gather(root))
    assert "cfg1 is no better than cfg2 on any objective as scored and worse on some" in page
    online = next(line for line in decisions if line.startswith("| `online` |"))
    alone = pd.read_csv(root / "online" / "selections.csv.gz").groupby("rep")["pulls"].apply(
        lambda p: int((p == p.max()).sum()) == 1)
    tied = int((~alone).sum())
    assert 1 <= tied < 4 and items["online"]["decision"]["no_single"] == tied / 4  # some repetitions chose none
    assert f"; in {tied} no one configuration is pulled most" in online
    assert f"In {100 * tied / 4:.0f}% of its repetitions CoHV-UCB ended with several configurations pulled most" in page
    advised = format_decisions(recommend(root))
    assert f"in {tied} of 4 repetitions no one configuration is pulled most" in advised


def _tail_results(tmp_path, questions: int, profiling: int, repetitions: int, configurations) -> None:
    """Logs of ``configurations(q)`` (name, correct, latency in seconds per question ``q``) on ``questions``
    questions, 100 tokens a call, run online (CoHV-UCB) and for identification (CoPSI-R) at rho 60 on accuracy
    and latency into ``tmp_path/res``."""
    from tests.conftest import write_dataset

    rows = [{"config_id": name, "model": name, "temperature": 0.0, "max_new_tokens": 256, "prompting": "direct",
             "instance_id": f"q{q:02d}", "correct": int(correct), "latency_s": latency, "tokens": 100}
            for q in range(questions) for name, correct, latency in configurations(q)]
    folder = write_dataset(tmp_path / "tail", pd.DataFrame(rows), split={"profiling_size": profiling, "seed": 0})
    for setting, methods in (("online", ["cohv-ucb"]), ("psi", ["copsi-r"])):
        run_experiment(parse_config({"name": f"tail_{setting}", "dataset": str(folder), "setting": setting,
                                     "objectives": ["accuracy", "latency"], "rho": [60], "methods": methods,
                                     "repetitions": repetitions, "output": str(tmp_path / "res" / setting)},
                                    "t.yaml"), quiet=True)


def test_an_answer_another_configuration_beats_on_every_mean_per_call_says_why(tmp_path):
    """'flaky' answers in 0.25 s but times out (60 s) on one call in ten: the latency objective scores each call
    within the profiling split's 5th-95th percentiles, so it ranks 'flaky' above 'good' (3 s on every call, more
    accurate), while the means per call shown beside it (12 s against 3 s) say the opposite. The answers named it
    "pay for" and a Pareto member without a word; each now says which configuration the means prefer, and why."""
    _tail_results(tmp_path, 40, 20, 10, lambda q: (("good", q % 4 != 0, 3.0),
                                                   ("flaky", q % 10 < 7, 60.0 if q % 10 == 9 else 0.25),
                                                   ("fast", q % 2 == 0, 0.5)))
    items = {item["experiment"]: item for item in recommend(tmp_path / "res")}
    arms = pd.read_csv(tmp_path / "res" / "online" / "arms.csv").set_index("config_id")
    assert arms.loc["flaky", "latency_s"] > 2 * arms.loc["good", "latency_s"]  # the means per call
    assert arms.loc["flaky", "accuracy"] < arms.loc["good", "accuracy"]
    assert arms.loc["flaky", "mu_latency"] > arms.loc["good", "mu_latency"]  # the objective, scored per call
    assert items["tail_online"]["decision"]["configuration"]["config_id"] == "flaky"
    assert items["tail_online"]["decision"]["configuration"]["beaten_on_means"] == "good"
    members = {m["config_id"]: m.get("beaten_on_means") for m in items["tail_psi"]["decision"]["members"]}
    assert members["flaky"] == "good" and members.get("good") is None and members.get("fast") is None
    why = ("good is as good or better on every mean per call (the objectives score each call, latency and cost "
           "within the profiling split's 5th-95th percentiles, so their means can rank configurations otherwise)")
    text = format_decisions(list(items.values()))
    assert text.count(f" — {why}") == 2
    assert RUNNER.invoke(app, ["report", str(tmp_path / "res")]).exit_code == 0
    md = (tmp_path / "res" / "REPORT.md").read_text()
    assert md.count("another configuration is as good or better on every mean per call than flaky (the objectives "
                    "score each call") == 2
    html = (tmp_path / "res" / "REPORT.html").read_text()
    assert html.count("good is as good as flaky or better on every mean per call: the objectives score each "
                      "call") == 2


def test_configurations_the_objectives_leave_out_but_no_mean_per_call_beats_are_named(tmp_path):
    """'timeouts' is the most accurate and answers in 0.5 s but for one call in twenty (300 s); scored
    per call within the profiling split's 5th-95th percentiles its latency beats 'steady' (5 s) and 'quick' (1 s),
    so the Pareto set is 'timeouts' alone, while on the means per call none of the three beats another. The answers
    said "Pareto set of 1" without a word; each now names the two the means would keep, and why."""
    _tail_results(tmp_path, 80, 40, 4, lambda q: (("timeouts", q % 10 < 8, 300.0 if q % 20 == 19 else 0.5),
                                                  ("steady", q % 10 < 7, 5.0), ("quick", q % 10 < 6, 1.0)))
    arms = pd.read_csv(tmp_path / "res" / "psi" / "arms.csv").set_index("config_id")
    assert set(arms.index[arms["pareto"] == 1]) == {"timeouts"}  # the objectives
    means = arms[["accuracy", "latency_s"]]
    assert means["accuracy"].is_monotonic_decreasing and means["latency_s"].is_monotonic_decreasing  # no mean beats
    items = {item["experiment"]: item for item in recommend(tmp_path / "res")}
    assert [items[n]["undominated_on_means"] for n in ("tail_online", "tail_psi")] == [["steady", "quick"]] * 2
    why = ("note: outside the Pareto set, yet no configuration beats them on every mean per call: steady, quick (the "
           "objectives score each call, latency and cost within the profiling split's 5th-95th percentiles")
    assert format_decisions(list(items.values())).count(why) == 2
    assert RUNNER.invoke(app, ["report", str(tmp_path / "res")]).exit_code == 0
    md, html = ((tmp_path / "res" / name).read_text() for name in ("REPORT.md", "REPORT.html"))
    assert md.count(why.removeprefix("note: ")) == 2
    assert html.count("Outside the Pareto set, yet no configuration beats them on every mean per call: steady, quick "
                      "(the objectives score each call") == 2


def test_a_configuration_with_the_same_nu_as_the_answer_is_named_beside_it(tmp_path):
    """An identical copy of the best configuration: CoHV-UCB exploits one or the other, and the answer said "pay
    for X in 60% of repetitions" without a word of the copy exploited in the other 40%. Configurations with the same
    ν as the answer are now named beside it with their shares, in recommend, advise's lines, REPORT.md and
    REPORT.html."""
    from tests.conftest import spread_logs, write_dataset

    frame = spread_logs(4, 60, seed=5)
    probe = write_dataset(tmp_path / "probe", frame, split={"profiling_size": 20, "seed": 0})
    run_experiment(parse_config({"name": "probe", "dataset": str(probe), "setting": "online", "rho": [8],
                                 "methods": ["cohv-ucb"], "repetitions": 2, "output": str(tmp_path / "p")}, "p.yaml"),
                   quiet=True)
    best = pd.read_csv(tmp_path / "p" / "arms.csv").query("optimal == 1")["config_id"].iloc[0]
    twin = frame[frame["config_id"] == best].assign(config_id="twin", model="twin")
    folder = write_dataset(tmp_path / "twins", pd.concat([frame, twin]), split={"profiling_size": 20, "seed": 0})
    run_experiment(parse_config({"name": "twins", "dataset": str(folder), "setting": "online", "rho": [16],
                                 "methods": ["cohv-ucb"], "repetitions": 20, "output": str(tmp_path / "res" / "t")},
                                "t.yaml"), quiet=True)
    (item,) = recommend(tmp_path / "res")
    d = item["decision"]
    pair = {d["configuration"]["config_id"], *(x["config_id"] for x in d["same_nu"])}
    assert pair == {best, "twin"} and not d["tied"]
    other = d["same_nu"][0]
    runs = pd.read_csv(tmp_path / "res" / "t" / "runs.csv")
    assert round(other["share"] * 20) == int((runs["exploited"].astype(str) == other["config_id"]).sum()) > 0
    said = f"; {other['config_id']} (exploited in {round(other['share'] * 20)}) has the same ν: any of them is as good"
    assert said in format_decisions([item])
    assert RUNNER.invoke(app, ["report", str(tmp_path / "res")]).exit_code == 0
    assert f"; the same ν: {other['config_id']}, as good" in (tmp_path / "res" / "REPORT.md").read_text()
    assert f"{other['config_id']} has the same ν as {d['configuration']['config_id']} (exploited in " in \
        (tmp_path / "res" / "REPORT.html").read_text()


def test_a_tied_answer_puts_the_largest_nu_first_and_names_a_member_another_beats(tmp_path):
    """PIQA's quick online experiment: CoHV-UCB exploits two TinyLlama configurations in 3 of 10 repetitions each,
    and every surface said "pay for any of" both, the first by name, though on the evaluation split one beats the
    other on every objective and on cost per call (0.496 against 0.492 accuracy, 0.539 against 0.581 s, 93 against
    95 tokens). The tie is ordered by ν, and the member the other beats is named, in recommend, REPORT.md and
    REPORT.html."""
    from cabench.answers import answered, beaten_pairs
    from cabench.config import load_config
    from tests.conftest import ROOT

    out = tmp_path / "res" / "piqa_online"
    run_experiment(load_config(ROOT / "configs" / "piqa_online_quick.yaml", overrides={"output": str(out)}),
                   quiet=True)
    (item,) = recommend(tmp_path / "res")
    d = item["decision"]
    arms = pd.read_csv(out / "arms.csv").set_index("config_id")
    names = [x["config_id"] for x in answered(d)]
    assert names == sorted(names, key=lambda n: (-arms.loc[n, "nu"], n)) and len(names) == 2
    low, high = "tinyllama-11b_t0.5_g128_direct", "tinyllama-11b_t0.0_g128_direct"
    assert beaten_pairs(d) == [(low, high)] and names == [high, low]
    better = arms.loc[high, ["mu_accuracy", "mu_efficiency"]] > arms.loc[low, ["mu_accuracy", "mu_efficiency"]]
    assert better.all() and arms.loc[high, "mu_c"] < arms.loc[low, "mu_c"]
    said = (f"{high} is as good as {low} or better on every objective and on the cost per call, and better on one "
            "(on the evaluation split): of the two, pay for the former")
    assert said in format_decisions([item])
    assert RUNNER.invoke(app, ["report", str(tmp_path / "res")]).exit_code == 0
    assert said in (tmp_path / "res" / "REPORT.md").read_text()
    assert said[0].upper() + said[1:] + "." in (tmp_path / "res" / "REPORT.html").read_text()


def test_an_objective_of_the_users_own_column_is_shown_beside_the_units_per_call(tmp_path):
    """Objectives accuracy-free (`helpfulness`, a column of the logs, to maximise): the decision's line per call
    showed accuracy, no objective here, and never the number the configuration was chosen on. Such an objective's
    normalised mean is now shown after the units per call."""
    from tests.conftest import spread_logs, write_dataset

    frame = spread_logs(4, 40, seed=2)
    frame["helpfulness"] = (frame["config_id"].str[-1].astype(int) + 1) / 5.0  # 0.2 .. 0.8 by configuration
    folder = write_dataset(tmp_path / "own", frame, gz=False, split={"profiling_size": 15, "seed": 0})
    (folder / "dataset.yaml").write_text((folder / "dataset.yaml").read_text() + "extra_columns: [helpfulness]\n")
    objectives = [{"column": "helpfulness", "direction": "max", "normalise": [0, 1], "name": "helpfulness"},
                  "latency"]
    run_experiment(parse_config({"name": "own", "dataset": str(folder), "setting": "online", "rho": [8],
                                 "objectives": objectives, "methods": ["cohv-ucb"], "repetitions": 4,
                                 "output": str(tmp_path / "res" / "own")}, "own.yaml"), quiet=True)
    (item,) = recommend(tmp_path / "res")
    chosen = item["decision"]["configuration"]
    value = (int(chosen["config_id"][-1]) + 1) / 5.0
    line = next(x for x in format_decisions([item]).splitlines() if x.startswith("    per call: "))
    assert line.endswith(f" tokens, helpfulness {value:#.3g} ± 0, helpfulness {value:.3f} (normalised, larger is "
                         "better)"), line
    assert "latency (normalised)" not in line  # latency is shown in seconds already


def test_a_column_objective_to_minimise_is_shown_in_its_own_scale_and_bounded_in_it(tmp_path):
    """An objective on a judge's score to minimise, named badness, was shown only as "badness 0.614 (normalised)",
    largest for the configuration of the lowest score (its normalisation flips it), and the score itself could not
    be bounded (--require judge<=2.5: "no judge"). Its mean per call is recorded (arms.csv), shown, and bounded."""
    from cabench.data.dataset import load_dataset
    from tests.conftest import spread_logs, write_dataset

    frame = spread_logs(4, 40, seed=2)
    frame["judge"] = 1.0 + frame["config_id"].str[-1].astype(int) * 0.5 + (frame.index % 3) * 0.1  # 1.1 .. 2.6
    folder = write_dataset(tmp_path / "own", frame, gz=False, split={"profiling_size": 15, "seed": 0})
    (folder / "dataset.yaml").write_text((folder / "dataset.yaml").read_text() + "extra_columns: [judge]\n")
    objectives = ["accuracy", {"column": "judge", "direction": "min", "normalise": [1, 3], "name": "badness"}]
    run_experiment(parse_config({"name": "own", "dataset": str(folder), "setting": "online", "rho": [8],
                                 "objectives": objectives, "methods": ["cohv-ucb"], "repetitions": 4,
                                 "output": str(tmp_path / "res" / "own")}, "own.yaml"), quiet=True)
    arms = pd.read_csv(tmp_path / "res" / "own" / "arms.csv").set_index("config_id")
    ds = load_dataset(folder)
    logs = frame[frame["instance_id"].isin(ds.evaluation_ids)].groupby("config_id")["judge"]
    assert arms["judge"].to_dict() == pytest.approx(logs.mean().to_dict(), rel=1e-12)
    assert arms["judge_ci"].to_dict() == pytest.approx((1.96 * logs.std() / logs.count() ** 0.5).to_dict())
    assert arms["mu_badness"].to_dict() == pytest.approx(((3 - logs.mean()) / 2).to_dict(), abs=1e-6)  # flipped
    (item,) = recommend(tmp_path / "res")
    chosen = item["decision"]["configuration"]["config_id"]
    line = next(x for x in format_decisions([item]).splitlines()  # (tied configurations: a line each)
                if x.startswith("    per call: ") or x.startswith(f"    {chosen}: "))
    assert (f", judge {arms.loc[chosen, 'judge']:.3g} ± {arms.loc[chosen, 'judge_ci']:.3g}, badness "
            f"{arms.loc[chosen, 'mu_badness']:.3f} (normalised, larger is better)") in line, line
    (bounded,) = recommend(tmp_path / "res", parse_constraints(["judge<=2"]))
    qualify = set(arms.index[arms["judge"] <= 2])
    assert 0 < len(qualify) < 4 and set(bounded["constrained"]["qualifying"]) == qualify, bounded["constrained"]
    refused = RUNNER.invoke(app, ["recommend", str(tmp_path / "res"), "--require", "score<=2"])
    assert refused.exit_code == 2 and "(they have accuracy, latency, tokens, judge, badness)" in refused.stderr


def test_an_objective_named_as_its_column_is_bounded_in_the_columns_scale_and_as_mu_in_its_own(tmp_path):
    """{column: judge, direction: min} (no name: the objective is named judge) turned --require judge<=2 into a
    bound on the normalised objective, larger for the lower score: it kept the worst judged configurations, exit 0.
    The name bounds the column's mean per call, as the built-in latency does, and mu_judge the objective, said to be
    normalised."""
    from tests.conftest import spread_logs, write_dataset

    frame = spread_logs(4, 40, seed=2)
    frame["judge"] = 1.0 + frame["config_id"].str[-1].astype(int) * 0.5 + (frame.index % 3) * 0.1  # 1.1 .. 2.6
    folder = write_dataset(tmp_path / "own", frame, gz=False, split={"profiling_size": 15, "seed": 0})
    (folder / "dataset.yaml").write_text((folder / "dataset.yaml").read_text() + "extra_columns: [judge]\n")
    objectives = ["accuracy", {"column": "judge", "direction": "min", "normalise": [1, 3]}]
    run_experiment(parse_config({"name": "own", "dataset": str(folder), "setting": "online", "rho": [8],
                                 "objectives": objectives, "methods": ["cohv-ucb"], "repetitions": 4,
                                 "output": str(tmp_path / "res" / "own")}, "own.yaml"), quiet=True)
    arms = pd.read_csv(tmp_path / "res" / "own" / "arms.csv").set_index("config_id")
    for text, qualify, said in (("judge<=2", arms.index[arms["judge"] <= 2], "judge <= 2"),
                                ("mu_judge>=0.6", arms.index[arms["mu_judge"] >= 0.6], "judge (normalised) >= 0.6")):
        (bounded,) = recommend(tmp_path / "res", parse_constraints([text]))
        assert 0 < len(qualify) < 4 and set(bounded["constrained"]["qualifying"]) == set(qualify), text
        assert bounded["constrained"]["constraints"] == [said]
    assert set(arms.index[arms["judge"] <= 2]) != set(arms.index[arms["mu_judge"] <= 2])  # (every one: the old bound)
    both = RUNNER.invoke(app, ["recommend", str(tmp_path / "res"), "--require", "judge>=1.5", "--require",
                               "mu_judge<=0.5"])  # other quantities: no contradiction, though 1.5 > 0.5
    assert both.exit_code == 0 and "with judge >= 1.5, judge (normalised) <= 0.5: " in both.stdout, both.output
    for texts, said in ((["accuracy>=0.5", "mu_accuracy<=0.4"], "accuracy >= 0.5 and accuracy <= 0.4"),
                        (["mu_judge<=0.1", "mu_judge>=0.9"], "judge (normalised) >= 0.9 and judge (normalised) <= 0.1"),
                        (["judge>=2.5", "judge<=1.5"], "judge >= 2.5 and judge <= 1.5")):
        refused = RUNNER.invoke(app, ["recommend", str(tmp_path / "res"), "--require", texts[0], "--require",
                                      texts[1]])
        assert refused.exit_code == 2 and f"no configuration has {said};" in refused.stderr, refused.output
    from cabench.report import build_report

    report = build_report(tmp_path / "res", parse_constraints(["judge<=2", "mu_judge>=0.6"]))
    assert "**Requirements (--require): judge <= 2, judge (normalised) >= 0.6, on the per-call means" in report
    # the reports show the column in its own scale beside the normalised objective (only recommend did)
    qualify = arms[(arms["judge"] <= 2) & (arms["mu_judge"] >= 0.6)]
    row = next(line for line in report.splitlines() if line.startswith(f"| `{qualify.index[0]}` |"))
    assert f"| {qualify['judge'].iloc[0]:#.3g} ± {qualify['judge_ci'].iloc[0]:.3g} |" in row, row
    assert "judge per call" in report and "judge (normalised)" in report
    # beside it, an experiment whose objective judge reads another column: there judge and mu_judge are one mean, so
    # the two bounds contradict each other in it alone; the first still answers (the root was refused, exit 2)
    (folder / "dataset.yaml").write_text((folder / "dataset.yaml").read_text().replace("extra_columns: [judge]",
                                                                                       "extra_columns: [judge, score]"))
    frame.assign(score=frame["judge"]).to_csv(folder / "logs.csv", index=False)
    run_experiment(parse_config({"name": "other", "dataset": str(folder), "setting": "online", "rho": [8],
                                 "objectives": ["accuracy", {"column": "score", "direction": "min",
                                                             "normalise": [1, 3], "name": "judge"}],
                                 "methods": ["cohv-ucb"], "repetitions": 4,
                                 "output": str(tmp_path / "res" / "other")}, "other.yaml"), quiet=True)
    split = RUNNER.invoke(app, ["recommend", str(tmp_path / "res"), "--require", "judge>=0.9", "--require",
                                "mu_judge<=0.1", "--json"])
    assert split.exit_code == 0, split.output
    by_name = {item["experiment"]: item["constrained"] for item in json.loads(split.stdout)}
    assert "qualifying" in by_name["own"] and "contradict each other" in by_name["other"]["not_applicable"]


def test_an_own_column_named_as_anothers_interval_end_never_overwrites_it(tmp_path):
    """Objectives on two columns of the logs, `judge` and `judge_low`: the mean of `judge_low` (10 .. 13) was written
    over `judge`'s lower interval end (`judge_low`, 1 .. 2.5) in arms.csv, a silent wrong bound. The first column in
    objective order keeps its names; the other is recorded normalised only."""
    from tests.conftest import spread_logs, write_dataset

    frame = spread_logs(4, 40, seed=2)
    frame["judge"] = 1.0 + frame["config_id"].str[-1].astype(int) * 0.5 + (frame.index % 3) * 0.1
    frame["judge_low"] = 10.0 + frame["config_id"].str[-1].astype(int)
    folder = write_dataset(tmp_path / "own", frame, gz=False, split={"profiling_size": 15, "seed": 0})
    (folder / "dataset.yaml").write_text((folder / "dataset.yaml").read_text() + "extra_columns: [judge, judge_low]\n")
    objectives = ["accuracy", {"column": "judge", "direction": "min", "normalise": [1, 3], "name": "badness"},
                  {"column": "judge_low", "direction": "max", "normalise": [10, 14], "name": "low"}]
    run_experiment(parse_config({"name": "own", "dataset": str(folder), "setting": "online", "rho": [8],
                                 "objectives": objectives, "methods": ["cohv-ucb"], "repetitions": 2,
                                 "output": str(tmp_path / "res" / "own")}, "own.yaml"), quiet=True)
    arms = pd.read_csv(tmp_path / "res" / "own" / "arms.csv").set_index("config_id")
    assert [c for c in arms.columns if c.startswith("judge")] == ["judge", "judge_ci", "judge_low", "judge_high"]
    assert (arms["judge_low"] - (arms["judge"] - arms["judge_ci"])).abs().max() < 1e-9
    assert arms["judge_low"].max() < 3 and arms["mu_low"].to_dict() == pytest.approx(
        {f"cfg0{i}": i / 4 for i in range(4)})


def test_a_weak_answer_among_configurations_that_tie_exactly_says_no_budget_separates_them(tmp_path):
    """arm0 and arm1 alike, both on the Pareto set's boundary (a gap of 0): the returned sets differ by which of the
    two sampling noise puts ahead, at any budget. The weak answer said only "this budget is short of identifying the
    Pareto set"; it says that no budget separates them."""
    means = [[0.9, 0.5], [0.9, 0.5], [0.2, 0.9]]
    raw = {"name": "twins", "dataset": {"synthetic": {"name": "twins", "means": means, "costs": [1, 1, 1],
                                                       "noise": "gaussian", "sigma": 0.3}},
           "setting": "psi", "rho": [30], "methods": ["copsi"], "repetitions": 10, "cost_modes": ["deterministic"],
           "output": str(tmp_path / "twins")}
    run_experiment(parse_config(raw, "twins.yaml"), quiet=True)
    arms = pd.read_csv(tmp_path / "twins" / "arms.csv")
    assert (arms["gamma"] <= 0).any()
    (item,) = recommend(tmp_path)
    d = item["decision"]
    assert d["gap_zero"] and d["share"] <= 0.5, d["share"]
    said = ("no set came back in most repetitions: this budget is short of identifying the Pareto set, and no budget "
            "identifies it exactly: configurations tie on its boundary (a classification gap of 0 in arms.csv)")
    assert said in format_decisions([item])
    assert RUNNER.invoke(app, ["report", str(tmp_path)]).exit_code == 0
    assert said in (tmp_path / "REPORT.md").read_text()  # the decisions overview says it too


@pytest.mark.parametrize(("setting", "extra", "what"), [
    ("online", {"methods": ["cohv-ucb"]}, "pulled"),
    ("psi", {"methods": ["uniform"], "cost_modes": ["stochastic"]}, "sampled"),
])
def test_a_decision_some_of_whose_repetitions_left_configurations_unpulled_says_so(tmp_path, setting, extra, what):
    """At a budget just past the least, some repetitions never pulled every configuration: the decision at that
    budget (recommend, advise's line) said nothing of it."""
    from cabench.advise import _identification_lines, _online_lines

    raw = {"name": "least", "dataset": str(DATA / "gsm8k"), "setting": setting, "rho": [1.01], "repetitions": 20,
           "output": str(tmp_path / "least"), **extra}
    run_experiment(parse_config(raw, "t.yaml"), quiet=True)
    runs = pd.read_csv(tmp_path / "least" / "runs.csv")
    short = runs[runs["unpulled"] > 0]
    left = (f"a configuration never {what}" if short["unpulled"].max() == 1 else
            f"configurations never {what}, up to {short['unpulled'].max()} in one")
    said = (f"{len(short)} of 20 repetitions left {left} (the budget ran out within the first round)")
    (item,) = recommend(tmp_path)
    assert item["decision"]["reps_unpulled"] == len(short) > 0
    assert f"    note: {said}" in format_decisions([item]).splitlines()
    line = (_online_lines(item, "tokens") if setting == "online" else _identification_lines(item, "tokens", 9, 1))[0]
    assert f"; {said}" in line


def test_each_identification_row_names_the_set_returned_most_often_ties_by_their_names(results):
    """Every (method, cost mode, rho) row's modal set, counted here from selections.csv: the set returned in most
    repetitions, of those tied the first by its sorted names, with its share and how many other sets tie."""
    from collections import Counter

    item = {i["experiment"]: i for i in recommend(results)}["id"]
    sel = pd.read_csv(next((results / "id").glob("selections.csv*")))
    assert len(item["results"]) == len(sel.groupby(["method", "cost_mode", "rho"])) > 0
    for r in item["results"]:
        rows = sel[(sel["method"] == r["method"]) & (sel["cost_mode"] == r["cost_mode"]) & (sel["rho"] == r["rho"])]
        counts = Counter(tuple(sorted(g.loc[g["returned"] == 1, "config_id"])) for _, g in rows.groupby("rep"))
        top = max(counts.values())
        modal = min(s for s, c in counts.items() if c == top)
        assert (r["modal_set"], r["modal_set_share"], r["modal_tied"]) == (
            list(modal), pytest.approx(top / sum(counts.values())), sum(c == top for c in counts.values()) - 1), r
