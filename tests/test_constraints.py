"""Answers under requirements (`recommend --require`): parsing with units, the qualifying configuration or Pareto set
on a synthetic instance whose constrained answers are known by hand and on the quick GSM8K results (checked by brute
force on arms.csv), and how often each method's restricted answer is it (counted again from selections.csv)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from cabench.cli import app
from cabench.config import load_config, parse_config
from cabench.constraints import (
    EVERY_ONE,
    Constraint,
    constrained_answer,
    parse_constraint,
    parse_constraints,
    qualifying,
)
from cabench.errors import CabenchError
from cabench.recommend import recommend
from cabench.results import load_experiment
from cabench.runner import run_experiment
from tests.conftest import FIVE, ROOT, five_results, tiny_logs, write_dataset

RUNNER = CliRunner()


def test_requirements_parse_with_their_units():
    assert parse_constraint("accuracy>=0.6") == Constraint("accuracy", ">=", 0.6, "accuracy>=0.6")
    assert parse_constraint("latency<=2s").value == 2.0 and parse_constraint("latency<=2s").column == "latency_s"
    assert parse_constraint("latency <= 1500ms").value == pytest.approx(1.5)
    assert parse_constraint("latency<=2").value == 2.0
    for text in ("usd<=0.002", "usd<=$0.002", "$<=0.002", "cost<=$0.002", "cost<=0.002usd", "usd<=0.002usd"):
        found = parse_constraint(text)
        assert (found.column, found.op, found.value) == ("usd", "<=", pytest.approx(0.002)), text
    assert parse_constraint("cost<=300tokens").column == "tokens" and parse_constraint("tokens<=300").value == 300
    assert parse_constraint("efficiency>=0.5").column == "mu_efficiency"
    assert parse_constraint("latency<=2s").describe() == "latency <= 2 s"
    assert parse_constraint("usd<=0.002").describe() == "usd <= $0.002"
    assert parse_constraint("usd<=0.00004").describe() == "usd <= $0.00004"  # not $4e-05
    assert parse_constraint("usd<=0.000125698749").describe() == "usd <= $0.000125698749"
    # bounds said as given: both read "tokens <= 125.699", and qualified different configurations
    assert [parse_constraint(t).describe() for t in ("tokens<=125.6987", "tokens<=125.69875")] == [
        "tokens <= 125.6987", "tokens <= 125.69875"]
    for text, words in [("latency<=2usd", "not a unit of latency"), ("accuracy=0.6", "expected NAME<=VALUE"),
                        ("cost<=0.5", "cost needs its unit"), ("efficiency>=0.5s", "has no unit"),
                        ("usd<=$0.002usd", "not both"), ("accuracy>=60", "between 0 and 1 (for 60% write 0.6)"),
                        ("accuracy<=1.5", "between 0 and 1"), ("latency<=-1s", "latency is never negative"),
                        ("usd<=-0.01", "usd is never negative"),
                        ("mu_c<=0.5", "'mu_c' is the normalised cost the methods are charged, not an objective"),
                        ("c<=0.5", "bound the cost per call in its unit, e.g. cost<=$0.002")]:
        with pytest.raises(CabenchError, match="--require") as exc:
            parse_constraint(text)
        assert words in str(exc.value) and "\n" not in str(exc.value)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    return five_results(tmp_path_factory.mktemp("constrained"), ["cohv-ucb", "hv-ucb"])


def _online_share(folder: Path, qualifying: set[str], answer: str) -> dict[tuple[str, float], float]:
    """Per (method, rho): the share of repetitions whose most-pulled qualifying arm is ``answer`` and no other
    qualifying arm has as many pulls, counted run by run."""
    sel = pd.read_csv(next(folder.glob("selections.csv*")))
    out: dict[tuple[str, float], list[bool]] = {}
    for (method, rho, _), g in sel.groupby(["method", "rho", "rep"]):
        pulls = {n: int(p) for n, p in zip(g["config_id"], g["pulls"]) if n in qualifying}
        out.setdefault((method, rho), []).append(all(pulls[answer] > p for n, p in pulls.items() if n != answer))
    return {k: float(np.mean(v)) for k, v in out.items()}


def _psi_share(folder: Path, qualifying: set[str], answer: set[str]) -> dict[tuple[str, str, float], float]:
    """Per (method, cost mode, rho): the share of repetitions whose returned set, restricted to the qualifying
    configurations, is ``answer``."""
    sel = pd.read_csv(next(folder.glob("selections.csv*")))
    out: dict[tuple[str, str, float], list[bool]] = {}
    for (method, mode, rho, _), g in sel.groupby(["method", "cost_mode", "rho", "rep"]):
        returned = {n for n, r in zip(g["config_id"], g["returned"]) if r == 1 and n in qualifying}
        out.setdefault((method, mode, rho), []).append(returned == answer)
    return {k: float(np.mean(v)) for k, v in out.items()}


def _psi_modal_ties(folder: Path, qualifying: set[str]) -> dict[tuple[str, str, float], int]:
    """Per (method, cost mode, rho): how many other restricted returned sets came back as often as the most
    frequent (0: no tie, as the decisions count their tied sets)."""
    sel = pd.read_csv(next(folder.glob("selections.csv*")))
    counts: dict[tuple[str, str, float], dict[frozenset, int]] = {}
    for (method, mode, rho, _), g in sel.groupby(["method", "cost_mode", "rho", "rep"]):
        returned = frozenset(n for n, r in zip(g["config_id"], g["returned"]) if r == 1 and n in qualifying)
        tally = counts.setdefault((method, mode, rho), {})
        tally[returned] = tally.get(returned, 0) + 1
    return {k: sum(c == max(v.values()) for c in v.values()) - 1 for k, v in counts.items()}


@pytest.mark.parametrize("requires, online_answer, psi_answer, within", [
    (["objective1>=0.85"], "arm0", ["arm0"], ["arm0"]),
    (["objective1>=0.4"], "arm1", ["arm0", "arm1"], ["arm0", "arm1"]),
    (["objective1<=0.55"], "arm3", ["arm2"], ["arm2", "arm3"]),
    (["objective1<=0.55", "objective2>=0.5"], "arm2", ["arm2"], ["arm2"]),
])
def test_the_known_constrained_answers_of_a_synthetic_instance(synthetic, requires, online_answer, psi_answer,
                                                               within):
    items = {i["setting"]: i for i in recommend(synthetic, parse_constraints(requires))}
    online, psi = items["online"]["constrained"], items["psi"]["constrained"]
    assert online["answer"] == [online_answer] and psi["answer"] == psi_answer and psi["pareto_within"] == within
    assert psi["only_within"] == [n for n in within if n not in psi_answer]
    # the same instance online: the same configurations are Pareto among the qualifying only (its answer, the
    # largest nu, is no part of that), and when one configuration qualifies every repetition's answer is it
    assert online["only_within"] == psi["only_within"] and online["pareto_within"] == within
    assert online["every_qualifying_is_the_answer"] == (len(online["qualifying"]) == 1)
    assert not psi["every_qualifying_is_the_answer"]
    said = RUNNER.invoke(app, ["recommend", str(synthetic), *(f"--require={r}" for r in requires)]).output
    assert (EVERY_ONE in said) == (len(online["qualifying"]) == 1), said
    ties = _psi_modal_ties(synthetic / "psi", set(psi["qualifying"]))
    assert {(f["method"], f["cost_mode"], f["rho"]): f["modal_tied"] for f in psi["found"]} == ties
    qualifying = set(online["qualifying"])
    shares = _online_share(synthetic / "online", qualifying, online_answer)
    assert {(f["method"], f["rho"]): f["share"] for f in online["found"]} == pytest.approx(shares)
    shares = _psi_share(synthetic / "psi", qualifying, set(psi_answer))
    assert {(f["method"], f["cost_mode"], f["rho"]): f["share"] for f in psi["found"]} == pytest.approx(shares)
    assert max(f["share"] for f in psi["found"]) > 0  # the methods find it, at least at the larger budget


def test_qualifying_configurations_tied_for_the_most_pulls_are_no_answer(synthetic):
    """arm3 and arm4 qualify; CoHV-UCB and HV-UCB spend on arm1 and pull them once each (the initialisation) in
    repetitions 0, 2, 3, 4 and 7, and more of arm3 in 1 and 5 only: 2 of 8 repetitions find arm3, not the 7 of 8 that
    giving a tie to the first arm counted."""
    requires = parse_constraints(["objective1<=0.55", "objective2<=0.85"])
    online = next(i for i in recommend(synthetic, requires) if i["setting"] == "online")["constrained"]
    assert online["qualifying"] == ["arm3", "arm4"] and online["answer"] == ["arm3"]
    sel = pd.read_csv(next((synthetic / "online").glob("selections.csv*")))
    pulls = sel[sel["config_id"].isin(["arm3", "arm4"])].pivot_table(index=["method", "rep"], columns="config_id",
                                                                     values="pulls")
    assert int((pulls["arm3"] == pulls["arm4"]).sum()) == 10 and int((pulls["arm3"] > pulls["arm4"]).sum()) == 4
    for found in online["found"]:
        assert found["share"] == pytest.approx(2 / 8)
        assert (found["modal"], found["modal_share"]) == (["arm3", "arm4"], pytest.approx(5 / 8))


def test_when_nothing_qualifies_no_method_is_said_to_find_the_answer(synthetic):
    """objective1 >= 0.95: none of the five arms (0.9 at most) qualifies; the empty answer would equal every run's
    empty answer, so no share is given at all, in the JSON as in the text."""
    items = recommend(synthetic, parse_constraints(["objective1>=0.95"]))
    for item in items:
        c = item["constrained"]
        assert (c["qualifying"], c["answer"], c["found"]) == ([], [], [])
    result = RUNNER.invoke(app, ["recommend", str(synthetic), "--json", "--require", "objective1>=0.95"])
    assert result.exit_code == 0, result.output
    assert [i["constrained"]["found"] for i in json.loads(result.output)] == [[], []]


def test_recommend_require_prints_the_answer_and_the_share_that_found_it(synthetic):
    result = RUNNER.invoke(app, ["recommend", str(synthetic), "--require", "objective1<=0.55"])
    assert result.exit_code == 0, result.output
    assert "with objective1 <= 0.55: 3 of 5 configurations qualify" in result.output
    assert "pay for arm3 (largest nu among them)" in result.output
    assert "true Pareto set restricted to them (1): arm2" in result.output
    assert "a filtered answer never holds them): arm3" in result.output
    line = next(x for x in result.output.splitlines() if "restricted to them is it in" in x)
    share = _psi_share(synthetic / "psi", {"arm2", "arm3", "arm4"}, {"arm2"})[("copsi-r", "deterministic", 100.0)]
    assert f"CoPSI-R {100 * share:.0f}%" in line and "rho 100" in line
    bad = RUNNER.invoke(app, ["recommend", str(synthetic), "--require", "latency<=2s"])
    assert bad.exit_code == 2 and "have no latency" in bad.output and len(bad.output.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> Path:
    """The quick GSM8K configs with fewer repetitions and budgets."""
    root = tmp_path_factory.mktemp("quick_constrained")
    for name, over in (("gsm8k_psi_quick", {"repetitions": 6, "rho": [200, 2000]}),
                       ("gsm8k_online_quick", {"repetitions": 4, "rho": [8]})):
        cfg = load_config(ROOT / "configs" / f"{name}.yaml", {"output": str(root / name), "chunk_size": 10, **over})
        run_experiment(cfg, quiet=True)
    return root


def _pareto_among(arms: pd.DataFrame, names: list[str]) -> list[str]:
    """Brute force: the configurations of ``names`` no other of ``names`` strictly dominates in every objective."""
    mu = {n: arms.loc[arms["config_id"] == n, ["mu_accuracy", "mu_efficiency"]].to_numpy()[0] for n in names}
    return [a for a in names if not any(all(mu[b][d] > mu[a][d] for d in range(2)) for b in names if b != a)]


def test_the_quick_results_under_accuracy_and_latency_requirements(quick):
    requires = ("accuracy>=0.05", "latency<=2500ms")
    items = {i["setting"]: i for i in recommend(quick, parse_constraints(requires))}
    for setting, folder in (("psi", "gsm8k_psi_quick"), ("online", "gsm8k_online_quick")):
        arms = pd.read_csv(quick / folder / "arms.csv")
        qualifying = [n for n, a, t in zip(arms["config_id"], arms["accuracy"], arms["latency_s"])
                      if a >= 0.05 and t <= 2.5]
        found = items[setting]["constrained"]
        assert found["qualifying"] == qualifying and 0 < len(qualifying) < len(arms)
        if setting == "psi":
            truth = [n for n, p in zip(arms["config_id"], arms["pareto"]) if p == 1 and n in qualifying]
            assert found["answer"] == truth and found["pareto_within"] == _pareto_among(arms, qualifying)
            shares = _psi_share(quick / folder, set(qualifying), set(truth))
            assert {(f["method"], f["cost_mode"], f["rho"]): f["share"] for f in found["found"]} == pytest.approx(
                shares)
        else:
            nu = dict(zip(arms["config_id"], arms["nu"]))
            best = max(qualifying, key=lambda n: nu[n])
            assert found["answer"] == [best]
            shares = _online_share(quick / folder, set(qualifying), best)
            assert {(f["method"], f["rho"]): f["share"] for f in found["found"]} == pytest.approx(shares)
    e = load_experiment(quick / "gsm8k_psi_quick")
    table = constrained_answer(e, parse_constraints(requires)).table()
    assert list(itertools.islice(table.columns, 4)) == ["method", "rho", "budget", "repetitions"]
    assert len(table) == len(e.methods) * 2  # every method at both budgets


def test_borderline_configurations_are_those_whose_interval_holds_a_bound():
    """'a' was right on both evaluation instances: no normal interval, Wilson's (0.342, 1) holds 0.6; 'b' clears
    the bound; 'c' (a folder written before interval ends were recorded) straddles it by its half-width alone."""
    arms = pd.DataFrame({"config_id": ["a", "b"], "mu_accuracy": [1.0, 0.8], "accuracy": [1.0, 0.8],
                         "accuracy_ci": [0.0, 0.1], "accuracy_low": [0.342, 0.7], "accuracy_high": [1.0, 0.9]})
    ok, borderline = qualifying(arms, (parse_constraint("accuracy>=0.6"),))
    assert ok.tolist() == [True, True] and borderline.tolist() == [True, False]
    ok, borderline = qualifying(arms, (parse_constraint("accuracy>=0.85"),))
    assert ok.tolist() == [True, False] and borderline.tolist() == [True, True]
    older = pd.DataFrame({"config_id": ["c", "d"], "mu_accuracy": [0.62, 0.9], "accuracy": [0.62, 0.9],
                          "accuracy_ci": [0.05, 0.05]})
    ok, borderline = qualifying(older, (parse_constraint("accuracy>=0.6"),))
    assert ok.tolist() == [True, True] and borderline.tolist() == [True, False]


def test_an_interval_reaching_a_bound_by_a_rounding_alone_is_not_borderline():
    """Every call alike, so no width but a sum's rounding (results written before cabench recorded such means
    exactly): 0.6 ± 1e-17 s read borderline at latency<=0.6s, and 0.9000000000000002 ± 2.5e-17 s not at <=0.9s; a
    configuration exactly on a bound with no interval width is on it, not across it, either way."""
    arms = pd.DataFrame({"config_id": ["p", "q", "r", "s"], "mu_accuracy": [0.5] * 4, "accuracy": [0.5] * 4,
                         "latency_s": [0.6, 0.9000000000000002, 0.6, 0.6],
                         "latency_s_low": [0.6 - 1e-17, 0.9000000000000002 - 2.5e-17, 0.6, 0.55],
                         "latency_s_high": [0.6 + 1e-17, 0.9000000000000002 + 2.5e-17, 0.6, 0.65]})
    for bound in ("0.6", "0.9"):
        ok, borderline = qualifying(arms, (parse_constraint(f"latency<={bound}s"),))
        assert ok.tolist() == ([True, True, True, True] if bound == "0.9" else [True, False, True, True])
        assert borderline.tolist() == [False, False, False, bound == "0.6"]  # 's' spreads across 0.6 s


def test_a_configuration_failing_a_bound_outright_is_not_borderline_for_straddling_another():
    """'e' straddles the accuracy bound but its whole latency interval lies above 2 s: it fails whatever its
    accuracy, so it is not borderline; 'f' fails only the bound its interval straddles, and 'g' qualifies with a
    latency interval across 2 s: both are."""
    arms = pd.DataFrame({"config_id": ["e", "f", "g"], "mu_accuracy": [0.55, 0.58, 0.7], "accuracy": [0.55, 0.58, 0.7],
                         "accuracy_low": [0.41, 0.45, 0.65], "accuracy_high": [0.61, 0.7, 0.75],
                         "latency_s": [3.0, 1.0, 1.9], "latency_s_low": [2.95, 0.9, 1.8],
                         "latency_s_high": [3.05, 1.1, 2.1]})
    ok, borderline = qualifying(arms, parse_constraints(["accuracy>=0.6", "latency<=2s"]))
    assert ok.tolist() == [False, False, True] and borderline.tolist() == [False, True, True]


def test_a_name_shared_by_a_measure_and_an_objective_is_refused_unless_the_unit_or_mu_says_which():
    """An objective the user named 'tokens' (normalised) beside tokens per call: 'tokens>=0.5' bounded the raw
    tokens and ignored the objective without a word. Now it is refused as ambiguous; 'tokens>=0.5tokens' bounds the
    mean per call, 'mu_tokens>=0.5' the objective; a name a requirement cannot read says why."""
    arms = pd.DataFrame({"config_id": ["a", "b", "c"], "mu_accuracy": [0.9, 0.5, 0.2], "mu_tokens": [0.2, 0.6, 0.9],
                         "tokens": [300.0, 120.0, 40.0]})
    with pytest.raises(CabenchError, match="'tokens' is both tokens per call and an objective") as exc:
        qualifying(arms, (parse_constraint("tokens>=0.5"),))
    assert "mu_tokens>=..." in str(exc.value) and "tokens>=0.5tokens" in str(exc.value)
    assert qualifying(arms, (parse_constraint("tokens>=0.5tokens"),))[0].tolist() == [True, True, True]
    assert qualifying(arms, (parse_constraint("mu_tokens>=0.5"),))[0].tolist() == [False, True, True]
    assert qualifying(arms[["config_id", "tokens"]], (parse_constraint("tokens<=200"),))[0].tolist() == [
        False, True, True]  # no such objective: per call, as before
    with pytest.raises(CabenchError, match="'qual ity' is not a name a requirement reads"):
        parse_constraint("qual ity>=0.5")


def test_a_bound_met_exactly_qualifies_whether_written_in_seconds_or_milliseconds():
    """Every call of 'a' took 2.3 s: its mean, a sum over a count, is 2.3000000000000007, and 'latency<=2.3s' left it
    out; 'b' averages exactly 2.3 s, and 2300ms was read as 2300 * 1e-3 = 2.3000000000000003, so 'latency>=2300ms'
    left it out while 'latency>=2.3s' kept it. A mean within a relative 1e-9 of a bound meets it."""
    every = float(np.mean(np.full(800, 2.3)))
    assert every == 2.3000000000000007
    arms = pd.DataFrame({"config_id": ["a", "b", "c", "d"], "mu_accuracy": [0.5] * 4,
                         "latency_s": [every, 1840 / 800, 2.3001, 2.2999]})
    for text in ("latency<=2.3s", "latency<=2300ms", "latency<=2.3"):
        assert qualifying(arms, (parse_constraint(text),))[0].tolist() == [True, True, False, True], text
    for text in ("latency>=2.3s", "latency>=2300ms"):
        assert qualifying(arms, (parse_constraint(text),))[0].tolist() == [True, True, True, False], text
    assert parse_constraint("latency<=2300ms").value == 2.3 and parse_constraint("latency<=1500ms").value == 1.5
    zero = pd.DataFrame({"config_id": ["free", "paid"], "mu_accuracy": [0.5, 0.5], "usd": [0.0, 1e-12]})
    assert qualifying(zero, (parse_constraint("usd<=0"),))[0].tolist() == [True, False]  # no slack about 0


def test_a_bound_on_a_normalised_objective_named_like_a_measure_says_so():
    """'mu_tokens>=0.5' (the objective) and 'tokens>=0.5tokens' (per call) both read 'tokens >= 0.5' in the answer,
    its JSON and the reports; 'cost' objectives could only be bounded as mu_cost, which no message said."""
    assert parse_constraint("mu_tokens>=0.5").describe() == "tokens (normalised) >= 0.5"
    assert parse_constraint("tokens>=0.5tokens").describe() == "tokens >= 0.5"
    assert parse_constraint("mu_cost<=0.4").describe() == "cost (normalised) <= 0.4"
    assert parse_constraint("efficiency>=0.5").describe() == "efficiency >= 0.5"
    assert parse_constraint("mu_efficiency>=0.5").describe() == "efficiency >= 0.5"
    with pytest.raises(CabenchError, match="mu_cost bounds a cost objective's normalised mean"):
        parse_constraint("cost>=0.5")
    arms = pd.DataFrame({"config_id": ["a", "b"], "mu_accuracy": [0.9, 0.5], "mu_cost": [0.2, 0.6],
                         "tokens": [300.0, 120.0]})
    with pytest.raises(CabenchError) as exc:
        qualifying(arms, (parse_constraint("foo>=0.5"),))
    assert "(they have tokens, accuracy, mu_cost)" in str(exc.value)
    assert qualifying(arms, (parse_constraint("mu_cost>=0.5"),))[0].tolist() == [False, True]


def test_a_bound_out_of_range_is_said_so_whichever_experiment_comes_first(quick, synthetic, tmp_path):
    """efficiency>=1.5 over experiments with and without efficiency was refused as "have no efficiency": the first
    experiment's reason (the synthetic ones sort first and lack it), though another has it and the bound is what
    is wrong."""
    import shutil

    root = tmp_path / "both"
    shutil.copytree(quick, root / "quick")
    shutil.copytree(synthetic, root / "synthetic")
    with pytest.raises(CabenchError) as exc:
        recommend(root, parse_constraints(["efficiency>=1.5"]))
    assert str(exc.value).endswith("a normalised objective lies between 0 and 1; bound it by a number in [0, 1]")
    assert recommend(root, parse_constraints(["efficiency>=0.5"]))  # in range: answered where it applies


def test_a_folder_of_experiments_with_and_without_latency_answers_each_that_has_it(quick, synthetic, tmp_path):
    """A latency requirement over a folder where only some experiments have latency (the synthetic ones do not):
    recommend refused the whole folder in one line while the report answered per experiment. Now both answer
    where the requirement applies and say why it does not elsewhere; only a folder where it applies nowhere is
    refused."""
    import shutil

    root = tmp_path / "both"
    shutil.copytree(quick, root / "quick")
    shutil.copytree(synthetic, root / "synthetic")
    require = parse_constraints(["latency<=2500ms"])
    items = {i["experiment"]: i["constrained"] for i in recommend(root, require)}
    assert sorted(items) == ["five_online", "five_psi", "gsm8k_online", "gsm8k_psi"]
    for name in ("gsm8k_online", "gsm8k_psi"):
        alone = recommend(quick, require)
        assert items[name] == next(i["constrained"] for i in alone if i["experiment"] == name)
    for name in ("five_online", "five_psi"):
        assert items[name]["constraints"] == ["latency <= 2.5 s"]
        assert "have no latency_s" in items[name]["not_applicable"]
    result = RUNNER.invoke(app, ["recommend", str(root), "--require", "latency<=2500ms"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("with latency <= 2.5 s: cannot be applied to this experiment: --require "
                               "latency<=2500ms: the experiment's configurations have no latency_s") == 2
    listed = json.loads(RUNNER.invoke(app, ["recommend", str(root), "--require", "latency<=2500ms", "--json"]).stdout)
    assert {i["experiment"]: "not_applicable" in i["constrained"] for i in listed} == {
        "five_online": True, "five_psi": True, "gsm8k_online": False, "gsm8k_psi": False}
    refused = RUNNER.invoke(app, ["recommend", str(synthetic), "--require", "latency<=2500ms"])
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1 and "have no latency_s" in refused.stderr


def test_a_misspelt_name_is_matched_as_written_and_suggested_as_it_is_bounded():
    """With a 'cost' objective listed as mu_cost, 'cots>=0.5' lost its hint (the misspelling was compared with
    'mu_cost'), and 'mu_latncy' was offered the measure latency rather than the objective mu_latency."""
    arms = pd.DataFrame({"config_id": ["a"], "mu_accuracy": [0.9], "mu_cost": [0.2], "mu_latency": [0.4],
                         "latency_s": [1.2], "tokens": [300.0]})
    for text, meant in (("cots>=0.5", "mu_cost"), ("mu_cots>=0.5", "mu_cost"), ("mu_latncy>=0.5", "mu_latency"),
                        ("acuracy>=0.5", "accuracy"), ("tokns<=300", "tokens")):
        with pytest.raises(CabenchError) as exc:
            qualifying(arms, (parse_constraint(text),))
        assert str(exc.value).endswith(f"; did you mean '{meant}'?"), (text, str(exc.value))


def test_a_bound_on_a_normalised_objective_outside_0_1_is_refused():
    """efficiency>=1.5 and mu_accuracy>=2 were accepted (no configuration can meet them), accuracy>=1.5 refused."""
    arms = pd.DataFrame({"config_id": ["a"], "mu_accuracy": [0.9], "mu_efficiency": [0.2], "latency_s": [1.2]})
    for text in ("efficiency>=1.5", "efficiency>=-0.5", "mu_accuracy>=2", "mu_efficiency<=1.0001"):
        with pytest.raises(CabenchError) as exc:
            qualifying(arms, (parse_constraint(text),))
        assert str(exc.value) == (f"--require {text}: a normalised objective lies between 0 and 1; bound it by a "
                                  "number in [0, 1]")
    for text in ("efficiency>=0", "mu_accuracy<=1", "latency<=5s"):
        qualifying(arms, (parse_constraint(text),))
    with pytest.raises(CabenchError) as exc:  # an objective the experiment lacks, named as such
        qualifying(arms, (parse_constraint("mu_latency<=0.5"),))
    assert str(exc.value) == ("--require mu_latency<=0.5: the experiment has no objective latency (its objectives are "
                              "accuracy, efficiency); latency is a measure per call here: bound it without 'mu_' "
                              "(latency<=VALUE, in its unit)")  # it said "no objective latency (they have ... latency"


def test_an_empty_bounded_mean_in_arms_csv_is_refused_naming_the_file_row_and_configuration(quick, synthetic,
                                                                                             tmp_path):
    """A hand-emptied latency cell made that configuration fail every latency requirement silently (13 of 14
    qualified). Now recommend and report refuse in one line naming the file, row, column and configuration, with
    exit code 2, in a folder of one experiment and of several, and the report writes nothing."""
    import shutil

    root = tmp_path / "damaged"
    shutil.copytree(quick, root / "quick")
    shutil.copytree(synthetic, root / "synthetic")
    path = root / "quick" / "gsm8k_psi_quick" / "arms.csv"
    arms = pd.read_csv(path, dtype=str, keep_default_na=False)
    arms.loc[3, "latency_s"] = ""
    arms.to_csv(path, index=False)
    name = arms.loc[3, "config_id"]
    for folder in (root / "quick", root):
        for command in (["recommend"], ["report"]):
            result = RUNNER.invoke(app, [*command, str(folder), "--require", "latency<=2500ms"])
            assert result.exit_code == 2, result.output
            assert result.stderr == (f"error: {path}: line 5, column 'latency_s': empty, so --require latency<=2500ms "
                                     f"cannot be judged for {name}; run the experiment again\n")
        assert not list(folder.glob("REPORT.*"))
    ok = RUNNER.invoke(app, ["recommend", str(root / "quick"), "--require", "accuracy>=0.05"])
    assert ok.exit_code == 0, ok.output  # a requirement on another measure is judged as before
    arms.loc[3, "latency_s"] = "inf"
    arms.to_csv(path, index=False)
    with pytest.raises(CabenchError, match=r"line 5, column 'latency_s': inf is not finite"):
        constrained_answer(load_experiment(path.parent), parse_constraints(["latency<=2500ms"]))


def test_a_score_met_exactly_by_every_call_qualifies_and_is_recorded_as_the_logs_give_it(tmp_path):
    """Scores in [0, 1]: 'mid' scores 0.7 and 'low' 0.58 on every call. arms.csv gave their accuracy as the mean of
    the quantised rewards, 0.699999988 and 0.579999983, so 'accuracy>=0.7' and 'accuracy>=0.58' left them out (and
    online recommended a configuration of lower nu). Now arms.csv gives the logs' scores, and a normalised objective's
    mean (or an older arms.csv's accuracy) within half a quantum of a bound meets it."""
    frame = tiny_logs(3, 40)
    frame["correct"] = frame["config_id"].map({"cfg0": 0.58, "cfg1": 0.7, "cfg2": 0.9})
    folder = write_dataset(tmp_path / "scored", frame, split={"profiling_size": 10, "seed": 0})
    run_experiment(load_config(_config(tmp_path, folder)), quiet=True)
    arms = pd.read_csv(tmp_path / "r" / "arms.csv").set_index("config_id")
    assert arms["accuracy"].tolist() == [0.58, 0.7, 0.9]  # every call alike: the logs' value itself
    assert arms.loc["cfg1", "mu_accuracy"] == 11744051 * 2.0**-24 != 0.7  # the reward the engines see: quantised
    for text, qualify in (("accuracy>=0.7", [False, True, True]), ("accuracy>=0.58", [True, True, True]),
                          ("accuracy<=0.58", [True, False, False]), ("mu_accuracy>=0.7", [False, True, True]),
                          ("mu_accuracy<=0.58", [True, False, False])):
        assert qualifying(arms.reset_index(), (parse_constraint(text),))[0].tolist() == qualify, text
        older = arms.reset_index().assign(accuracy=arms["mu_accuracy"].to_numpy())  # as arms.csv gave it before
        assert qualifying(older, (parse_constraint(text),))[0].tolist() == qualify, text
    assert qualifying(arms.reset_index(), (parse_constraint("mu_accuracy>=0.70000003"),))[0].tolist() == [
        False, False, True]  # a quantum above the bound is not a rounding


def _config(tmp_path: Path, folder: Path) -> Path:
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"name": "scored", "dataset": str(folder), "setting": "psi", "rho": [20],
                                  "methods": ["copsi"], "repetitions": 2, "output": str(tmp_path / "r")}))
    return config


def test_restricted_answers_tied_for_the_most_frequent_are_said_to_tie(tmp_path):
    """PSI-SR at rho 3, 4 repetitions: the four returned sets restricted to arm1..arm4 all differ. The report named
    one of them (the empty set sorts first when there is one) as the most frequent at 25%, with no word of the tie;
    now it says how many tie, as the JSON does (modal_tied), counted here from selections.csv."""
    cfg = {"name": "tiny_psi", "dataset": FIVE, "setting": "psi", "rho": [3, 5], "methods": ["psi-sr"],
           "repetitions": 4, "output": str(tmp_path / "psi")}
    run_experiment(parse_config(cfg, "t.yaml"), quiet=True)
    requires = parse_constraints(["objective1<=0.65"])
    found = recommend(tmp_path, requires)[0]["constrained"]["found"]
    ties = _psi_modal_ties(tmp_path / "psi", {"arm1", "arm2", "arm3", "arm4"})
    assert {(f["method"], f["cost_mode"], f["rho"]): f["modal_tied"] for f in found} == ties
    assert ties == {("psi-sr", "deterministic", 3.0): 3, ("psi-sr", "deterministic", 5.0): 0}
    result = RUNNER.invoke(app, ["report", str(tmp_path), "--require", "objective1<=0.65"])
    assert result.exit_code == 0, result.output
    rows = [line for line in (tmp_path / "REPORT.md").read_text().splitlines() if line.startswith("| PSI-SR |")]
    assert rows[0].endswith("| 4 answers tied (25% each) |") and "tied" not in rows[1], rows


def test_requirements_no_configuration_can_meet_together_are_refused_naming_both(synthetic):
    """accuracy>=0.9 with accuracy<=0.5 was answered "0 of 8 configurations qualify" (exit 0), as if the logs lacked
    such a configuration; two bounds on one measure that no value meets together are refused in one line naming
    both, in any units, while bounds met by one value (a bound met exactly from both sides) stand."""
    refused = [(["accuracy>=0.9", "accuracy<=0.5"], "accuracy >= 0.9 and accuracy <= 0.5"),
               (["latency<=1500ms", "latency>=2s"], "latency >= 2 s and latency <= 1.5 s"),
               (["usd>=0.01", "cost<=$0.002"], "usd >= $0.01 and usd <= $0.002"),
               (["accuracy>=0.9", "mu_accuracy<=0.5"], "accuracy >= 0.9 and accuracy <= 0.5")]  # one mean
    for texts, said in refused:
        with pytest.raises(CabenchError, match="contradict each other") as err:
            parse_constraints(texts)
        assert f"no configuration has {said}; drop or change one of them" in str(err.value)
    assert len(parse_constraints(["accuracy>=0.6", "accuracy<=0.6", "latency>=2s", "latency<=2000ms"])) == 4
    # 0.699999995 meets both as an answer judges a quantised mean (within half of 2^-24 more): not contradictory
    assert len(parse_constraints(["accuracy>=0.7", "accuracy<=0.69999999"])) == 2
    assert len(parse_constraints(["accuracy>=0.9", "latency<=0.5s", "tokens>=400", "usd<=0.001"])) == 4  # apart
    result = RUNNER.invoke(app, ["recommend", str(synthetic), "--require", "objective1>=0.7", "--require",
                                 "objective1<=0.2"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "--require objective1>=0.7 and --require objective1<=0.2 contradict each other" in result.output
    # an objective's bare name and its mu_ name are one mean where the experiment has no column of that name: refused
    # once the results say so (a bare name may bound a column of the user's own: toxicity)
    assert len(parse_constraints(["objective1>=0.7", "mu_objective1<=0.2"])) == 2
    assert len(parse_constraints(["objective1>=0.7", "objective1<=0.2"])) == 2  # (an objective of one's own)
    for texts in (["efficiency>=0.9", "mu_efficiency<=0.1"], ["EFFICIENCY>=0.9", "MU_Efficiency<=0.1"]):
        with pytest.raises(CabenchError, match="no configuration has efficiency >= 0.9 and efficiency <= 0.1"):
            parse_constraints(texts)  # a built-in's, in any case: refused before anything
    result = RUNNER.invoke(app, ["recommend", str(synthetic), "--require", "objective1>=0.7", "--require",
                                 "mu_objective1<=0.2"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "no configuration has objective1 >= 0.7 and objective1 <= 0.2" in result.output
