"""Declared objectives, cost units, price tables and budgets stated in the cost unit (cabench.data.terms)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cabench.config import parse_config
from cabench.data.dataset import load_dataset
from cabench.data.normalisation import fit_normalisation
from cabench.data.terms import (
    PAPER_TERMS,
    ObjectiveSpec,
    Price,
    Terms,
    builtin,
    cost_per_call,
    parse_terms,
    usd_per_call,
)
from cabench.errors import CabenchError
from cabench.online import OnlineMethod, run_online
from cabench.plan import build_problem, check_budgets, with_budgets
from cabench.problem import replay_problem
from cabench.psi import run_psi
from cabench.psi.engine import PsiMethod
from cabench.streams import stream_keys
from tests.conftest import spread_logs, with_token_parts, write_dataset


def _fail(key: str, message: str) -> CabenchError:
    return CabenchError(f"cfg.yaml: {key}: {message}")


def _terms(**raw) -> Terms:
    return parse_terms(raw, _fail)


def _error(**raw) -> str:
    with pytest.raises(CabenchError) as info:
        parse_terms(raw, _fail)
    assert "\n" not in str(info.value)
    return str(info.value)


# --- declaring -----------------------------------------------------------------------------------------------

def test_the_default_is_the_papers_pair_in_tokens():
    assert _terms() == PAPER_TERMS and PAPER_TERMS.names == ("accuracy", "efficiency") and PAPER_TERMS.cost == "tokens"
    assert _terms(objectives=["accuracy", "efficiency"]).is_paper


def test_builtins_and_a_column_of_ones_own():
    terms = _terms(objectives=["accuracy", "latency", {"column": "judge", "direction": "max", "normalise": [0, 10]}],
                   cost="usd")
    assert terms.names == ("accuracy", "latency", "judge") and terms.cost == "usd"
    assert terms.objectives[1].column == "latency_s" and terms.objectives[1].direction == "min"
    assert terms.objectives[2].normalise == (0.0, 10.0)
    assert terms.describe()["objectives"] == ["accuracy", "latency", {"name": "judge", "column": "judge",
                                                                      "direction": "max", "normalise": [0.0, 10.0]}]


@pytest.mark.parametrize("raw, words", [
    ({"objectives": ["accuracy"]}, "objectives: expected a list of 2 to 4 objectives"),
    ({"objectives": ["accuracy", "latency", "cost", "efficiency", "accuracy"]}, "2 to 4"),
    ({"objectives": ["accuracy", "latncy"]}, "objectives[1]: 'latncy' is not one of accuracy, efficiency, latency, "
                                             "cost; did you mean 'latency'?"),
    ({"objectives": ["accuracy", "accuracy"]}, "objectives: 'accuracy' is declared twice"),
    ({"objectives": ["accuracy", {"column": "x", "direction": "up"}]}, "objectives[1].direction: expected max"),
    ({"objectives": ["accuracy", {"column": "x", "normalise": [1, 0]}]}, "objectives[1].normalise: expected"),
    ({"objectives": ["accuracy", {"colum": "x"}]}, "objectives[1].colum: unknown key"),
    # a column's direction has no default: latency_s taken as larger-is-better made the slowest configuration best
    ({"objectives": ["accuracy", {"column": "latency_s"}]}, "objectives[1].direction: missing; a column objective "
                                                            "says whether larger is better (direction: max)"),
    # a width beyond a float's range normalised every value to 0: every configuration in the Pareto set
    ({"objectives": ["accuracy", {"column": "x", "direction": "min", "normalise": [-1e308, 1e308]}]},
     "objectives[1].normalise: expected [lo, hi] whose width hi - lo is a finite number"),
    ({"objectives": ["accuracy", {"column": "x", "direction": "min", "normalise": [0, 10**400]}]},  # (a traceback)
     "objectives[1].normalise: expected [lo, hi] of numbers within a float's range"),
    ({"objectives": ["accuracy", {"name": "efficiency", "normalise": [0, 1]}]}, "objectives[1].normalise: efficiency"),
    # mu_c is arms.csv's mean normalised cost: an objective named c would lose its means to it
    ({"objectives": ["accuracy", "latency", {"column": "judge", "name": "c"}]}, "objectives[2].name: 'c' is taken"),
    ({"objectives": ["accuracy", {"column": "c"}]}, "objectives[1].name: 'c' is taken: arms.csv's mu_c is the mean"),
    # a column named as a built-in objective: 'accuracy 0.720 ... normalised accuracy 0.853', the two different columns
    ({"objectives": ["latency", {"column": "toxicity", "direction": "min", "name": "accuracy"}]},
     "objectives[1].name: 'accuracy' is the built-in objective on the logs' correct (larger is better), and every "
     "answer, figure and requirement would call column 'toxicity' (smaller is better) so; give it a name of its own "
     "(name: ...)"),
    ({"objectives": ["accuracy", {"column": "toxicity", "direction": "min", "name": "latency"}]},
     "objectives[1].name: 'latency' is the built-in objective on the logs' latency_s (smaller is better)"),
    # its column the other way round: an 'efficiency' that rewards slowness, an 'accuracy' that rewards errors
    ({"objectives": ["latency", {"column": "latency_s", "direction": "max", "name": "efficiency"}]},
     "objectives[1].name: 'efficiency' is the built-in objective on the reciprocal of the logs' latency_s (larger is "
     "better: the faster); declare it as efficiency, or a column objective under a name of its own"),
    ({"objectives": ["latency", {"column": "correct", "direction": "min", "name": "accuracy"}]},
     "objectives[1].name: 'accuracy' is the built-in objective on the logs' correct (larger is better), and every "
     "answer, figure and requirement would call column 'correct' (smaller is better) so"),
    ({"objectives": ["accuracy", {"name": "efficiency", "direction": "min"}]},
     "objectives[1].direction: 'efficiency' is larger-is-better (the reciprocal of the logs' latency_s: the faster); "
     "declare latency for smaller-is-better"),
    ({"objectives": ["accuracy", {"name": "latency", "direction": "max"}]},
     "objectives[1].direction: 'latency' is the built-in objective on the logs' latency_s (smaller is better)"),
    # requirements read names in any case: 'Accuracy' on another column was bounded as the built-in accuracy
    ({"objectives": ["latency", {"column": "toxicity", "direction": "min", "name": "Accuracy"}]},
     "objectives[1].name: 'Accuracy' is the built-in objective on the logs' correct"),
    ({"objectives": ["latency", {"column": "correct", "direction": "max", "name": "Accuracy"}]},
     "objectives[1].name: 'Accuracy' reads as the built-in objective accuracy in requirements; write it 'accuracy'"),
    ({"cost": "dollars"}, "cost: 'dollars' is not one of tokens, completion_tokens, usd; did you mean 'usd'?"),
    ({"prices": {"m": {"input": 1}}}, "prices.m: expected {input"),
    ({"prices": {"m": {"input": 1, "output": -2}}}, "prices.m.output: expected dollars per million tokens"),
    ({"prices": []}, "prices: expected a mapping"),
    # rates without a model name: 'tokens' was taken for a model, and the fix offered was what had been written
    ({"prices": {"tokens": 1.5}}, "prices.tokens: a price table maps model names or patterns to their rates: for "
                                  "every model, prices: {'*': {tokens: 1.5}}"),
])
def test_bad_declarations_are_one_line_naming_the_key(raw, words):
    assert words in _error(**raw)


def test_a_built_in_name_on_its_own_column_is_that_objective_with_other_bounds():
    terms = _terms(objectives=["accuracy", {"column": "latency_s", "name": "latency", "direction": "min",
                                            "normalise": [0, 10]}])
    assert terms.objectives[1] == ObjectiveSpec("latency", "latency_s", "min", (0.0, 10.0))


def test_a_price_names_its_model_before_a_pattern_in_order():
    terms = _terms(prices={"gpt-*": {"input": 1, "output": 2}, "gpt-4o": {"input": 5, "output": 15},
                           "*": {"tokens": 0.1}})
    assert terms.price("gpt-4o") == Price("gpt-4o", 5.0, 15.0)
    assert terms.price("gpt-3.5") == Price("gpt-*", 1.0, 2.0)
    assert terms.price("llama") == Price("*", tokens=0.1)


@pytest.mark.parametrize("prices, shadowed, by", [
    ({"*": {"tokens": 0.5}, "gam*": {"input": 3, "output": 9}}, "gam*", "*"),  # gamma was charged the '*' rate
    ({"gpt-*": {"tokens": 1}, "gpt-4o*": {"tokens": 5}}, "gpt-4o*", "gpt-*"),
    ({"a": {"tokens": 1}, "g*": {"tokens": 2}, "gpt-?o": {"tokens": 5}}, "gpt-?o", "g*"),
])
def test_a_pattern_an_earlier_pattern_covers_is_refused_naming_both(prices, shadowed, by):
    assert _error(prices=prices) == (f"cfg.yaml: prices.{shadowed}: never applies: the pattern '{by}' above it "
                                     "matches every model it matches (a model's own entry, else the first pattern "
                                     f"matching it); list '{shadowed}' first")


@pytest.mark.parametrize("prices, models, shadowed, by, model", [
    ({"*mini*": {"tokens": 1}, "gpt-4o-mini*": {"tokens": 5}}, ["gpt-4o-mini-2024", "o1-mini"], "gpt-4o-mini*",
     "*mini*", "gpt-4o-mini-2024"),
    ({"*:free": {"tokens": 0.0}, "meta-llama/*:free": {"tokens": 1}}, ["meta-llama/l3:free"], "meta-llama/*:free",
     "*:free", "meta-llama/l3:free"),
    ({"[gG]*": {"tokens": 1}, "gpt-*": {"tokens": 2}, "*": {"tokens": 3}}, ["gpt-4", "mistral"], "gpt-*", "[gG]*",
     "gpt-4")])
def test_a_pattern_that_prices_none_of_the_models_it_matches_is_refused(prices, models, shadowed, by, model):
    """Coverings the config check cannot see (a suffix, a class): '*mini*' above 'gpt-4o-mini*' charged the
    cheaper rate, unsaid. Against the models priced, a pattern that matches some and prices none is refused."""
    terms = _terms(prices=prices)
    assert terms.shadowed(models) == (
        f"prices.{shadowed}", f"prices none of the models, though it matches {model!r}: the pattern '{by}' above it "
        f"matches that first (a model's own entry, else the first pattern matching it); list '{shadowed}' first")
    frame = pd.DataFrame({"model": models, "tokens": [100.0] * len(models)})
    with pytest.raises(CabenchError, match=f"^logs: prices.{re.escape(shadowed)}: prices none of the models"):
        usd_per_call(frame, terms, "logs")
    assert terms.shadowed([m for m in models if m != model]) is None  # (matching no model it is only unused)


@pytest.mark.parametrize("prices, models", [
    ({"*-7B": {"tokens": 1}, "*": {"tokens": 2}}, ["Mistral-7B", "Falcon-7B"]),  # README's: a default below, unused
    ({"*-mini": {"tokens": 1}, "gpt-*": {"tokens": 2}}, ["gpt-4o-mini", "o1-mini"])])  # a shared table, a subset
def test_a_pattern_that_prices_none_of_these_models_without_being_covered_is_kept(prices, models):
    assert _terms(prices=prices).shadowed(models) is None


def test_a_name_holding_a_bracket_is_a_models_own_entry_not_a_covered_pattern():
    terms = _terms(prices={"*": {"tokens": 1}, "llama[8b]": {"tokens": 2}})
    assert terms.price("llama[8b]").pattern == "llama[8b]" and terms.shadowed(["llama[8b]", "gpt"]) is None


def test_patterns_that_each_price_some_model_are_kept_in_order():
    terms = _terms(prices={"gpt-4o*": {"tokens": 5}, "gpt-*": {"tokens": 1}, "*-mini": {"tokens": 0.2},
                           "gpt-4o": {"tokens": 9}, "*": {"tokens": 0.5}})
    assert [terms.price(m).pattern for m in ("gpt-4o-mini", "gpt-3.5", "o4-mini", "gpt-4o", "llama")] == [
        "gpt-4o*", "gpt-*", "*-mini", "gpt-4o", "*"]


def test_dollars_per_call_by_hand():
    frame = pd.DataFrame({"model": ["a", "b", "a"], "prompt_tokens": [100.0, 200, 0],
                          "completion_tokens": [10.0, 0, 50], "tokens": [110.0, 200, 50]})
    terms = _terms(cost="usd", prices={"a": {"input": 2, "output": 8}, "b": {"tokens": 0.5}})
    expected = [(100 * 2 + 10 * 8) / 1e6, 200 * 0.5 / 1e6, 50 * 8 / 1e6]
    assert usd_per_call(frame, terms, "logs").tolist() == pytest.approx(expected, rel=1e-15)
    assert cost_per_call(frame, terms, "logs").tolist() == pytest.approx(expected, rel=1e-15)
    assert cost_per_call(frame, _terms(cost="completion_tokens"), "logs").tolist() == [10.0, 0.0, 50.0]
    assert usd_per_call(frame, PAPER_TERMS, "logs") is None


LACK = ("which the logs lack (a table's import maps it with --mapping; a tool's logs have it where they record each "
        "call's)")


@pytest.mark.parametrize("frame, terms, words", [
    (pd.DataFrame({"model": ["x"], "tokens": [1.0]}), {"cost": "usd", "prices": {"a": {"tokens": 1}}},
     "prices: no price for model 'x'"),
    (pd.DataFrame({"model": ["a"], "tokens": [1.0]}), {"cost": "usd", "prices": {"a": {"input": 1, "output": 1}}},
     "prices.a needs the column 'prompt_tokens', " + LACK + ", or give one blended rate "
     "{tokens: $/1M} on the total"),
    # a blended rate on logs without tokens was told to give a blended rate: the logs' own dollars, where they have
    (pd.DataFrame({"model": ["a"], "cost_usd": [1.0]}), {"cost": "usd", "prices": {"a": {"tokens": 1}}},
     "prices.a needs the column 'tokens', " + LACK + "; the logs' cost_usd prices them "
     "without a table (leave prices out)"),
    (pd.DataFrame({"model": ["a"], "latency_s": [1.0]}), {"cost": "usd", "prices": {"a": {"tokens": 1}}},
     "prices.a needs the column 'tokens', " + LACK),
    (pd.DataFrame({"model": ["a"], "tokens": [1.0]}), {"cost": "usd"}, "cost: usd needs a cost_usd column"),
    (pd.DataFrame({"model": ["a"], "tokens": [1.0]}), {"cost": "completion_tokens"},
     "cost: completion_tokens needs the column 'completion_tokens'"),
])
def test_costs_the_logs_cannot_give_are_refused(frame, terms, words):
    with pytest.raises(CabenchError, match="logs: ") as info:
        cost_per_call(frame, _terms(**terms), "logs")
    assert words in str(info.value)


# --- normalising -----------------------------------------------------------------------------------------------

def test_directions_and_bounds_by_hand():
    latency = np.array([[1.0, 2, 3, 4, 5], [6, 7, 8, 9, 10]])
    judge = np.array([[0.0, 5, 10, 2, 2], [4, 4, 4, 4, 4]])
    usd = np.array([[1e-4, 2e-4, 1e-4, 2e-4, 1e-4], [4e-4, 4e-4, 4e-4, 4e-4, 4e-4]])
    terms = _terms(objectives=["latency", {"column": "judge", "direction": "max", "normalise": [0, 10]}, "cost"],
                   cost="usd")
    norm = fit_normalisation({"latency_s": latency, "judge": judge, "cost": usd}, "here", "vary", terms)
    lo, hi = np.percentile(latency, 5), np.percentile(latency, 95)
    assert [o.name for o in norm.objectives] == ["latency", "judge", "cost"] and norm.cost_unit == "usd"
    assert norm.objectives[0].reward([lo, hi, (lo + hi) / 2]).tolist() == [1.0, 0.0, 0.5]  # smaller is better
    assert norm.objectives[1].reward([0, 5, 10, 12]).tolist() == [0.0, 0.5, 1.0, 1.0]
    assert norm.objectives[2].reward([np.percentile(usd, 5)]).tolist() == [1.0]
    assert norm.profile_cost.tolist() == pytest.approx([1.4e-4, 4e-4]) and norm.c_max == 4e-4
    assert norm.lam == pytest.approx(0.25, abs=2**-24) and norm.tau5 == lo


def test_an_objective_that_does_not_vary_needs_bounds():
    flat = np.full((2, 4), 3.0)
    with pytest.raises(CabenchError, match="judge: the 5th and 95th percentiles .* give it normalise: \\[lo, hi\\]"):
        fit_normalisation({"judge": flat, "correct": flat / 3, "tokens": flat + np.arange(4)}, "here", "vary",
                          _terms(objectives=["accuracy", {"column": "judge", "direction": "max"}]))


# --- logs without latency, end to end ---------------------------------------------------------------------------

def _dollar_logs(tmp_path, latency: bool):
    frame = spread_logs(5, 80, seed=3)
    frame["cost_usd"] = frame["tokens"] * (1 + np.arange(len(frame)) // 80) * 1e-6
    if not latency:
        frame = frame.drop(columns=["latency_s"])
    return write_dataset(tmp_path / "own", frame, split={"profiling_size": 30, "seed": 0})


def test_logs_without_latency_run_on_accuracy_and_cost(tmp_path):
    folder = _dollar_logs(tmp_path, latency=False)
    with pytest.raises(CabenchError, match="objective 'efficiency' needs latency_s, which the logs lack"):
        load_dataset(folder)
    ds = load_dataset(folder, terms=_terms(objectives=["accuracy", "cost"], cost="usd"))
    assert ds.latency_eval is None and ds.norm.tau5 is None and ds.cost_unit == "usd"
    assert ds.profile_cost.tolist() == pytest.approx(ds.prof["cost_usd"].mean(axis=1).tolist())
    cfg = parse_config({"dataset": str(folder), "setting": "psi", "budget": {"usd": 0.05}, "methods": ["copsi"],
                        "objectives": ["accuracy", "cost"], "cost": "usd", "repetitions": 4}, "cfg.yaml")
    problem, identity, _ = build_problem(cfg)
    cfg = with_budgets(cfg, problem)
    assert identity["dataset"]["terms"]["cost"] == "usd"
    assert problem.budget(cfg.rho[0]) <= 0.05 and problem.budget(cfg.rho[0]) == pytest.approx(0.05, rel=1e-12)
    res = run_psi(problem, PsiMethod("copsi"), cfg.rho[0], stream_keys(0, np.arange(4), problem.arm_ids))
    assert (res.spend <= res.budget).all() and (res.spend > 0).all()


def test_a_configuration_free_on_every_evaluation_instance_is_refused(tmp_path):
    # free calls in the profiling split are refused (lambda 0); free ones on every evaluation instance would leave
    # mu^c 0, nu = H / mu^c undefined and an online run pulling that configuration forever without spending
    frame = spread_logs(4, 40, seed=7)
    frame["cost_usd"] = frame["tokens"] * 1e-6
    folder = write_dataset(tmp_path / "free", frame, split={"profiling_size": 15, "seed": 0})
    terms = _terms(objectives=["accuracy", "cost"], cost="usd")
    evaluation = list(load_dataset(folder, terms=terms).evaluation_ids)
    free = (frame["config_id"] == "cfg02") & frame["instance_id"].isin(evaluation)
    frame.loc[free, "cost_usd"] = 0.0
    write_dataset(folder, frame, split={"profiling_size": 15, "seed": 0})
    with pytest.raises(CabenchError, match="free: configuration 'cfg02' costs 0 usd .* on every one of the 25 "
                                           "evaluation instances .* nu = H / mu.c is undefined"):
        load_dataset(folder, terms=terms)
    # one paid evaluation call makes mu^c positive: nu by hand, and an online run ends
    frame.loc[(frame["config_id"] == "cfg02") & (frame["instance_id"] == evaluation[0]), "cost_usd"] = 2e-5
    write_dataset(folder, frame, split={"profiling_size": 15, "seed": 0})
    problem = replay_problem(load_dataset(folder, terms=terms), np.arange(4))
    rows = frame[frame["config_id"] == "cfg02"].set_index("instance_id")
    profiling = frame[~frame["instance_id"].isin(evaluation)]["cost_usd"]
    c_max, lo, hi = profiling.max(), np.percentile(profiling, 5), np.percentile(profiling, 95)
    cost = rows.loc[evaluation, "cost_usd"]
    mu_c = np.minimum(cost / c_max, 1).mean()
    reward = np.clip((cost - hi) / (lo - hi), 0, 1).mean()
    assert problem.mu_cost[2] == pytest.approx(mu_c, rel=1e-6)
    assert problem.nu[2] == pytest.approx(rows.loc[evaluation, "correct"].mean() * reward / mu_c, rel=1e-6)
    res = run_online(problem, OnlineMethod("cohv-ucb"), 2, stream_keys(0, np.arange(2), problem.arm_ids))
    assert (res.spend >= res.budget - problem.c_max).all()


def test_accuracy_cost_ucb_needs_accuracy_first(tmp_path):
    """SPEC §5: Accuracy-Cost-UCB's index is U^(acc) / c_lcb; it reads the first objective, so objectives that put
    another first are refused for it (they once ran it on, say, latency per cost under its name)."""
    folder = _dollar_logs(tmp_path, latency=True)
    raw = {"dataset": str(folder), "setting": "online", "rho": 2, "methods": ["cohv-ucb", "acc-cost-ucb"],
           "cost": "usd", "objectives": ["latency", "accuracy", "cost"]}
    with pytest.raises(CabenchError, match="^cfg.yaml: methods: acc-cost-ucb divides the first objective's .* the "
                                           "first objective is 'latency' .*declare accuracy \\(or a quality score"):
        build_problem(parse_config(raw, "cfg.yaml"))
    build_problem(parse_config({**raw, "methods": ["cohv-ucb", "hv-ucb"]}, "cfg.yaml"))  # products: any order
    build_problem(parse_config({**raw, "objectives": ["accuracy", "cost", "latency"]}, "cfg.yaml"))  # accuracy first
    with pytest.raises(CabenchError, match="the first objective is 'cost' \\(column cost, what a call takes"):
        build_problem(parse_config({**raw, "objectives": ["cost", "accuracy"]}, "cfg.yaml"))
    frame = spread_logs(5, 80, seed=3)
    frame["judge"] = np.round(np.random.default_rng(1).uniform(0, 10, len(frame)), 1)
    scored = write_dataset(tmp_path / "scored", frame, gz=False, split={"profiling_size": 30, "seed": 0})
    (scored / "dataset.yaml").write_text((scored / "dataset.yaml").read_text() + "extra_columns: [judge]\n")
    judged = {"dataset": str(scored), "setting": "online", "rho": 2, "methods": ["acc-cost-ucb"],
              "objectives": [{"name": "judge", "column": "judge", "direction": "max", "normalise": [0, 10]},
                             "latency"]}
    assert build_problem(parse_config(judged, "cfg.yaml"))[0].n_objectives == 2  # a quality score first: accepted
    index = OnlineMethod("acc-cost-ucb").entry.index
    upper = np.array([[[0.3, 0.9, 0.8], [0.6, 0.1, 0.2]]])
    assert index(np.ones((1, 2)), upper, np.array([[0.5, 0.4]])).tolist() == [[0.3 / 0.5, 0.6 / 0.4]]


@pytest.mark.parametrize("column, why", [
    ("judge", "the logs (dataset {folder}) lack it (a column beyond the canonical ones is kept only where "
              "dataset.yaml lists it under extra_columns)"),
    ("max_new_tokens", "'max_new_tokens' names a configuration, not a measure of each call")])
def test_an_objective_of_a_column_not_read_says_why(tmp_path, column, why):
    """'judge' is in the logs file but not kept (no extra_columns), max_new_tokens is a configuration's: both were
    said to be columns 'the logs lack'."""
    frame = spread_logs(5, 80, seed=3)
    frame["judge"] = 1.0
    folder = write_dataset(tmp_path / "scored", frame, gz=False, split={"profiling_size": 30, "seed": 0})
    raw = {"dataset": str(folder), "setting": "online", "rho": 2, "methods": ["cohv-ucb"],
           "objectives": ["accuracy", {"column": column, "direction": "max", "normalise": [0, 10]}]}
    with pytest.raises(CabenchError) as info:
        build_problem(parse_config(raw, "cfg.yaml"))
    assert str(info.value) == (f"cfg.yaml: objectives[1]: '{column}' reads the column '{column}': "
                               f"{why.format(folder=folder)}; the columns "
                               "objectives can read are correct, latency_s, tokens, cost")


def test_a_dataset_may_declare_its_terms(tmp_path):
    folder = _dollar_logs(tmp_path, latency=False)
    meta = (folder / "dataset.yaml").read_text() + "objectives: [accuracy, cost]\ncost: usd\n"
    (folder / "dataset.yaml").write_text(meta)
    assert load_dataset(folder).norm.cost_unit == "usd"
    (folder / "dataset.yaml").write_text(meta.replace("cost: usd", "cost: euros"))
    with pytest.raises(CabenchError, match="dataset.yaml: cost: 'euros' is not one of"):
        load_dataset(folder)


def test_a_budget_in_another_unit_than_the_cost_is_refused(tmp_path):
    folder = _dollar_logs(tmp_path, latency=True)
    cfg = parse_config({"dataset": str(folder), "setting": "psi", "budget": {"tokens": 5000}, "methods": ["copsi"],
                        "cost": "usd"}, "cfg.yaml")
    problem, _, _ = build_problem(cfg)
    with pytest.raises(CabenchError, match="cfg.yaml: budget.tokens: the cost is in usd; state the budget in usd"):
        with_budgets(cfg, problem)
    given = parse_config({"dataset": str(folder), "setting": "psi", "budget": {"usd": 1}, "methods": ["copsi"],
                          "cost": "usd"}, "cfg.yaml", overrides={"budget": {"tokens": [5000]}})
    with pytest.raises(CabenchError, match=r"^cfg.yaml: budget.tokens \(from --budget\): the cost is in usd; "):
        with_budgets(given, build_problem(given)[0])
    tiny = parse_config({"dataset": str(folder), "setting": "psi", "budget": {"usd": 1}, "methods": ["copsi"],
                         "cost": "usd"}, "cfg.yaml", overrides={"budget": {"usd": [1e-12]}})
    with pytest.raises(CabenchError, match=r"^cfg.yaml: budget.usd \(from --budget\): \$1e-12 is too small"):
        check_budgets(with_budgets(tiny, problem), problem)
    with pytest.raises(CabenchError, match="cfg.yaml: rho: give either rho .* or budget"):
        parse_config({"dataset": str(folder), "setting": "psi", "budget": {"usd": 1}, "rho": 2, "methods": ["copsi"]},
                     "cfg.yaml")


# --- budgets in dollars are never exceeded ----------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.floats(1e-6, 1e3, allow_nan=False), st.integers(2, 40), st.floats(1e-9, 1e-2))
def test_a_stated_budget_gives_the_B_of_its_rho_and_never_more(budget, k, scale):
    costs = np.random.default_rng(k).uniform(1, 50, (k, 6)) * scale
    norm = fit_normalisation({"correct": costs * 0, "latency_s": costs + 1, "cost": costs}, "here", "vary",
                             _terms(cost="usd"))
    rho = norm.rho(budget)
    assert norm.budget(rho) <= budget
    assert norm.budget(rho) == pytest.approx(budget, rel=1e-12)  # B = rho K cbar is the stated budget
    assert norm.budget(float(np.nextafter(rho, np.inf))) > budget or norm.budget(rho) == budget  # the largest such rho


@pytest.fixture(scope="module")
def dollar_dataset(tmp_path_factory):
    frame = with_token_parts(spread_logs(6, 60, seed=11), np.random.default_rng(5), 0.3, 0.9)
    return write_dataset(tmp_path_factory.mktemp("dollars") / "own", frame, split={"profiling_size": 20, "seed": 0})


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 20), st.floats(0.01, 60)), min_size=6, max_size=6),
       st.floats(0.5, 40), st.sampled_from(["deterministic", "stochastic"]), st.integers(0, 3))
def test_dollar_budgets_are_never_exceeded(dollar_dataset, prices, rho, mode, seed):
    terms = Terms((builtin("accuracy"), builtin("latency"), builtin("cost")), "usd",
                  tuple(Price(f"model{i:02d}", inp, out) for i, (inp, out) in enumerate(prices)))
    ds = load_dataset(dollar_dataset, terms=terms)
    problem = replay_problem(ds, np.arange(ds.n_arms))
    keys = stream_keys(seed, np.arange(3), problem.arm_ids)
    budget = problem.budget(rho)
    for name in ("copsi", "copsi-r", "psi-sr", "uniform"):
        try:
            res = run_psi(problem, PsiMethod(name), rho, keys, mode)
        except CabenchError:
            continue  # a budget below one sample of every arm
        # never above B~ in the engine's quantised units (costs are multiples of 2^-24 of max c_i, SPEC §3), so never
        # above B in dollars beyond that rounding
        assert (res.spend / problem.profile_cost.max() <= problem.psi_budget(rho)).all(), (name, res.spend, budget)
        assert (res.spend <= budget * (1 + 2**-22)).all(), (name, res.spend, budget)
    for name in ("cohv-ucb", "acc-cost-ucb"):
        res = run_online(problem, OnlineMethod(name), rho, keys)
        assert (res.spend <= budget + problem.c_max * (1 + 1e-12)).all()  # SPEC §5: by less than one pull
