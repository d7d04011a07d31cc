"""The command line: numbers printed, one-line errors with exit code 2, files written."""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.errors import CabenchError
from tests.conftest import DATA, ROOT, SAFETY_S, spread_logs, tiny_logs, write_dataset

runner = CliRunner()


def cabench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cabench.cli", *args], cwd=ROOT, capture_output=True, text=True)


def test_run_refuses_a_parameter_the_method_does_not_use(tmp_path):
    """`uniform` given `s_r` ran, with a config hash of its own: now one line naming the file and key, exit 2, and
    nothing written."""
    config = tmp_path / "exp.yaml"
    config.write_text(yaml.safe_dump({"dataset": str(DATA / "piqa"), "setting": "online", "rho": [2],
                                      "methods": ["cohv-ucb", {"name": "uniform", "s_r": 0.5}],
                                      "output": str(tmp_path / "out")}))
    result = runner.invoke(app, ["run", str(config)])
    assert result.exit_code == 2 and not (tmp_path / "out").exists()
    assert result.output.strip() == (f"error: {config}: methods[1].s_r: uniform does not use s_r (it uses none of "
                                     "the parameters); remove it")


PRICED = "prices given: dollars are reported beside tokens; the budget is charged in tokens (cost: tokens; cost: usd " \
         "charges dollars)"


@pytest.mark.parametrize("prices", [True, False])
def test_run_warns_when_prices_stand_in_for_the_logs_own_dollars(tmp_path, prices):
    """Logs with their own cost_usd and a price table: every dollar comes from the table, and a warning says so
    (the billed dollars are not what the report shows); without a table the logs' dollars are charged, unsaid."""
    frame = tiny_logs(3, 30)
    frame["cost_usd"] = frame["tokens"] * 2e-6
    data = write_dataset(tmp_path / "billed", frame, split={"profiling_size": 10, "seed": 0})
    config = tmp_path / "exp.yaml"
    config.write_text(yaml.safe_dump({"name": "billed", "dataset": str(data), "setting": "online", "rho": [2],
                                      "methods": ["uniform"], "repetitions": 2, "output": str(tmp_path / "out"),
                                      "cost": "usd", **({"prices": {"*": {"tokens": 0.5}}} if prices else {})}))
    result = runner.invoke(app, ["run", str(config)])
    assert result.exit_code == 0, result.output
    said = [x for x in result.output.splitlines() if "cost_usd" in x]
    assert said == ([] if not prices else ["billed: warning: the logs have their own cost_usd, and every dollar "
                                            "figure comes from the price table instead (prices take precedence); "
                                            "leave prices out to use the logs' dollars"])
    usd = pd.read_csv(tmp_path / "out" / "arms.csv")["usd"]
    tokens = pd.read_csv(tmp_path / "out" / "arms.csv")["tokens"]
    assert usd.to_numpy() == pytest.approx(tokens.to_numpy() * (0.5e-6 if prices else 2e-6))


@pytest.mark.parametrize("terms, said", [
    ({"cost": "tokens", "prices": {"*": {"tokens": 0.5}}}, True),
    ({"cost": "usd", "prices": {"*": {"tokens": 0.5}}}, False),
    ({"cost": "tokens"}, False),
])
def test_run_says_when_prices_fill_dollars_beside_a_budget_in_tokens(tmp_path, terms, said):
    """A price table with `cost: tokens` fills the dollar columns while the budget is charged in tokens: one line on
    stdout says so (not an error), and only for that combination."""
    config = tmp_path / "exp.yaml"
    config.write_text(yaml.safe_dump({"name": "priced", "dataset": str(DATA / "gsm8k"), "setting": "online",
                                      "rho": [2], "methods": ["uniform"], "repetitions": 2,
                                      "output": str(tmp_path / "out"), **terms}))
    result = runner.invoke(app, ["run", str(config)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines().count(f"priced: {PRICED}") == int(said)
    assert "prices given" not in result.stderr and ("prices given" in result.stdout) == said
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    if said:  # what the line says: dollars beside, budget and spend in tokens
        assert {"budget_tokens", "spend_tokens", "spend_usd"} <= set(runs.columns)
        assert runs["spend_usd"].to_numpy() == pytest.approx(0.5e-6 * runs["spend_tokens"].to_numpy())


@pytest.mark.parametrize("name, k", [("gsm8k", 108), ("piqa", 132)])
def test_describe_json(name, k):
    result = runner.invoke(app, ["data", "describe", str(DATA / name), "--json"])
    assert result.exit_code == 0
    d = json.loads(result.stdout)
    for key in ("name", "surrogate", "K", "accuracy_min", "accuracy_max", "latency_min", "latency_max",
                "tokens_min", "tokens_max", "pareto_size", "cost_min", "cost_max", "subset_K",
                "subset_pareto_size", "subset_min_gap"):
        assert key in d
    assert d["K"] == k and d["pareto_size"] == 7 and d["surrogate"] is True and d["subset_K"] == 14
    assert len(d["subset_gaps"]) == 14 and min(d["subset_gaps"].values()) == d["subset_min_gap"]
    assert len(d["full_gaps"]) == k and d["subset_theorem2_budget_tokens"] > 0


@pytest.mark.parametrize("name", ["gsm8k", "jhu-temperature"])
def test_describe_shows_lambda_to_four_significant_figures(name):
    """jhu-temperature's lambda (5.4e-05, one cheapest call in 18,458 of the dearest) was shown as 0.0001."""
    d = json.loads(runner.invoke(app, ["data", "describe", str(DATA / name), "--json"]).stdout)
    shown = runner.invoke(app, ["data", "describe", str(DATA / name)]).stdout
    assert f"   lambda {d['lambda']:.4g}   " in shown and f"{d['lambda']:.4g}" != "0.0001"


def test_describe_names_theorem2_budget_after_the_cost_unit(tmp_path):
    """A dataset costed in dollars states Theorem 2's budget in dollars, under a name that says so (it was
    ``*_theorem2_budget_tokens`` whatever the unit), as result files name budgets (``budget_usd``)."""
    frame = spread_logs(5, 40, seed=3)
    frame["cost_usd"] = frame["tokens"] * 2e-7  # (about $0.00002 a call: printed as 2e-05 once)
    folder = write_dataset(tmp_path / "usd", frame, split={"profiling_size": 15, "seed": 0})
    (folder / "dataset.yaml").write_text((folder / "dataset.yaml").read_text() + "cost: usd\n")
    done = runner.invoke(app, ["data", "describe", str(folder), "--json"])
    assert done.exit_code == 0, done.output
    d = json.loads(done.stdout)
    assert d["cost_unit"] == "usd" and not any(key.endswith("_tokens") for key in d if "theorem2" in key)
    mean_cost = d["full_theorem2_budget_usd"] / (d["full_theorem2_rho"] * d["K"])  # B = rho K cbar
    assert d["cost_min"] <= mean_cost <= d["cost_max"] and d["cost_max"] < 1e-3  # dollars per call, not tokens
    text = runner.invoke(app, ["data", "describe", str(folder)]).output
    budget = float(text.split("Theorem 2 from B = ")[1].split(" USD")[0])
    assert budget == pytest.approx(d["full_theorem2_budget_usd"], rel=1e-3)
    low, high = (float(x) for x in text.split("profiling cost c_i ")[1].split(" USD")[0].split("-"))
    assert (low, high) == (pytest.approx(d["cost_min"], rel=1e-3), pytest.approx(d["cost_max"], rel=1e-3))
    assert "e-0" not in text  # dollars as written (0.0001436), not 1.436e-04


def test_describe_of_a_config_describes_its_dataset_on_the_configs_terms(tmp_path):
    """describe read dataset.yaml's terms only: logs run on three objectives in dollars were described on accuracy and
    efficiency in tokens. Given an experiment config, it describes the dataset as the experiment runs it."""
    from cabench.config import load_config
    from cabench.data.dataset import load_dataset
    from cabench.landscape import dataset_arms

    config = ROOT / "configs" / "terms" / "gsm8k_dollars_psi.yaml"
    d = json.loads(runner.invoke(app, ["data", "describe", str(config), "--json"]).stdout)
    plain = json.loads(runner.invoke(app, ["data", "describe", str(DATA / "gsm8k"), "--json"]).stdout)
    assert (d["objectives"], d["cost_unit"]) == (["accuracy", "latency", "cost"], "usd")
    assert (plain["objectives"], plain["cost_unit"]) == (["accuracy", "efficiency"], "tokens")
    arms = dataset_arms(load_dataset(DATA / "gsm8k", terms=load_config(config).terms))
    assert d["pareto_size"] == int(arms["pareto"].sum()) != plain["pareto_size"]
    assert d["full_min_gap"] == 0 and plain["full_min_gap"] > 0  # a tie as scored: Theorem 2's budget is infinite
    text, text_plain = (runner.invoke(app, ["data", "describe", str(p)]).stdout for p in (config, DATA / "gsm8k"))
    assert "Theorem 2 from B = inf USD (rho inf); a gap of 0 (a tie on some objective, as scored, decides whether a " \
        "configuration is in the Pareto set): no budget is enough for Theorem 2's guarantee" in text
    assert "a gap of 0" not in text_plain and "note: the config runs" not in text_plain
    subset = runner.invoke(app, ["data", "describe", str(ROOT / "configs" / "gsm8k_psi_quick.yaml")]).stdout
    assert subset.splitlines()[-1] == ("  note: the config runs 14 of these 108 configurations (arms); the statistics "
                                       "above are of all of them")
    meta = runner.invoke(app, ["data", "describe", str(DATA / "gsm8k" / "dataset.yaml"), "--json"])  # its folder's
    assert meta.exit_code == 0 and json.loads(meta.stdout) == plain, meta.output
    synthetic = tmp_path / "syn.yaml"
    synthetic.write_text(yaml.safe_dump({"dataset": {"synthetic": {"means": [[0.1, 0.2], [0.3, 0.1]],
                                                                   "costs": [1, 2]}},
                                         "setting": "psi", "rho": [4], "methods": ["copsi"]}))
    refused = runner.invoke(app, ["data", "describe", str(synthetic)])
    assert refused.exit_code == 2 and refused.stderr == (
        f"error: {synthetic}: dataset: a synthetic instance has no logs to describe\n"), refused.output


def test_describe_of_one_configuration_says_there_is_nothing_to_choose(tmp_path):
    """Logs of one configuration were described with infinite gaps and a Theorem 2 budget of 0 tokens."""
    folder = write_dataset(tmp_path / "one", spread_logs(1, 40, seed=3), split={"profiling_size": 15, "seed": 0})
    text = runner.invoke(app, ["data", "describe", str(folder)])
    assert text.exit_code == 0 and text.stdout.splitlines()[-1] == (
        "  full set: one configuration, so nothing to identify or choose between (experiments need at least 2)")
    assert "inf" not in text.stdout and "Theorem 2" not in text.stdout
    d = json.loads(runner.invoke(app, ["data", "describe", str(folder), "--json"]).stdout)  # no budget of 0 either
    assert (d["K"], d["full_H"], d["full_min_gap"], d["full_theorem2_budget_tokens"], d["full_theorem2_rho"]) == (
        1, None, None, None, None) and d["full_gaps"] == {}


def test_describe_names_every_configuration_tied_for_the_largest_hypervolume(tmp_path):
    """Configurations with the same logs tie for the largest HV and HV per cost: describe says so and names them
    (it named the first in the logs' order, an arm no better than the others)."""
    frame = spread_logs(5, 40, seed=3)
    measured = ["correct", "latency_s", "tokens"]
    same = frame[frame["config_id"] == "cfg00"][measured].to_numpy()
    for c in ("cfg01", "cfg02", "cfg03", "cfg04"):  # every configuration answers as cfg00 did
        frame.loc[frame["config_id"] == c, measured] = same
    folder = write_dataset(tmp_path / "ties", frame, split={"profiling_size": 15, "seed": 0})
    d = json.loads(runner.invoke(app, ["data", "describe", str(folder), "--json"]).stdout)
    text = runner.invoke(app, ["data", "describe", str(folder)]).output
    assert d["max_hv_arms"] == d["max_nu_arms"] == [f"cfg{c:02d}" for c in range(5)]
    for what in ("max-HV", "max-HV-per-cost"):
        assert f"  {what}: 5 arms tie (cfg00, cfg01, cfg02 and 2 more)" in text
    assert "max-HV arm" not in text
    distinct = json.loads(runner.invoke(app, ["data", "describe", str(DATA / "gsm8k"), "--json"]).stdout)
    assert distinct["max_hv_arms"] == [distinct["max_hv_arm"]]  # no tie: the one arm, named as before


def test_describe_text_says_surrogate():
    result = runner.invoke(app, ["data", "describe", str(DATA / "gsm8k")])
    assert result.exit_code == 0 and "SURROGATE" in result.stdout and "|P*| 7\n" in result.stdout


def test_pareto_members_only_by_a_tie_are_counted_where_the_set_size_is_said(tmp_path):
    """"Pareto set: 10 of 26" where the usual (weak) dominance gives 8: two members matched another on accuracy and
    were slower. Dominance stays strict (paper §3.2); describe and advise say how many members are in only by a tie.
    Here b ties a on accuracy and is slower; c is faster and less accurate: P* = {a, b, c}, one by a tie."""
    from cabench.advise import Advice, format_advice

    rows = [{"config_id": name, "model": name, "temperature": 0.0, "max_new_tokens": 64, "prompting": "direct",
             "instance_id": f"q{i:02d}", "correct": int(i % 10 < right), "latency_s": latency, "tokens": 100}
            for name, right, latency in (("a", 8, 1.0), ("b", 8, 2.0), ("c", 5, 0.5)) for i in range(40)]
    folder = write_dataset(tmp_path / "ties", pd.DataFrame(rows), split={"profiling_size": 20, "seed": 0})
    d = json.loads(runner.invoke(app, ["data", "describe", str(folder), "--json"]).stdout)
    assert d["pareto_size"] == 3 and d["pareto_by_tie"] == 1
    text = runner.invoke(app, ["data", "describe", str(folder)]).stdout
    said = "(1 of them only by a tie as scored: another configuration is as good on every objective and better on one)"
    assert f"|P*| 3 {said}\n" in text
    lines = format_advice(Advice(d, (20, 20), None, 5, {}, None)).splitlines()
    assert lines[1].endswith(f"the evaluation split's Pareto set: 3 of 3 {said}")


def _corrupt(tmp_path, how: str):
    folder = tmp_path / how
    shutil.copytree(DATA / "piqa", folder)
    frame = pd.read_csv(folder / "logs.csv.gz", dtype={"instance_id": str})
    if how == "nan":
        frame.loc[10, "latency_s"] = np.nan
    elif how == "missing":
        frame = frame.drop(columns=["correct"])
    elif how == "duplicate":
        frame = pd.concat([frame, frame.iloc[[5]]], ignore_index=True)
    frame.to_csv(folder / "logs.csv.gz", index=False)
    return folder


@pytest.mark.parametrize("how, words", [("nan", "column 'latency_s' is NaN at row 11"),
                                         ("missing", "missing column 'correct'"),
                                         ("duplicate", "duplicate (config_id, instance_id) pair")])
def test_describe_bad_logs_one_line_exit_2(tmp_path, how, words):
    done = runner.invoke(app, ["data", "describe", str(_corrupt(tmp_path, how))])
    assert done.exit_code == 2
    assert done.stderr.count("\n") == 1 and words in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ")


def test_run_prints_summary_and_bad_config_exits_2(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2],
                                      "methods": ["cohv-ucb", "uniform"], "repetitions": 4,
                                      "output": str(tmp_path / "out")}))
    result = runner.invoke(app, ["run", str(config), "--quiet"])
    assert result.exit_code == 0 and (tmp_path / "out" / "runs.csv").is_file()
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "o2")])
    assert result.exit_code == 0 and "CoHV-UCB" in result.stdout and "R_HV mean ± se" in result.stdout
    config.write_text("dataset: x\nsettings: online\n")
    done = runner.invoke(app, ["run", str(config)])
    assert done.exit_code == 2 and "settings: unknown key; did you mean 'setting'?" in done.stderr
    assert done.stderr.count("\n") == 1


def test_missing_dataset_folder_exit_2(tmp_path):
    done = runner.invoke(app, ["data", "describe", str(tmp_path / "none")])
    assert done.exit_code == 2 and "dataset folder not found" in done.stderr
    (tmp_path / "logs.csv").write_text("config_id\n")  # a log file, not its dataset folder: named as a file
    done = runner.invoke(app, ["data", "describe", str(tmp_path / "logs.csv")])
    assert done.exit_code == 2 and done.stderr == (f"error: {tmp_path / 'logs.csv'}: a file, not a dataset folder (a "
                                                   "folder with logs.csv.gz and dataset.yaml; `cabench data import` "
                                                   "makes one from a log file)\n")


def test_configs_of_one_run_writing_one_folder_are_refused_before_any_runs(tmp_path):
    """Two configs of one `cabench run` with one output folder: the first ran to its end, then the second was
    refused as another experiment's folder. They are refused before either runs."""
    raw = {"dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4]], "costs": [10, 20]}}, "setting": "online",
           "rho": [2], "methods": ["cohv-ucb"], "repetitions": 2, "output": str(tmp_path / "res")}
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(yaml.safe_dump(raw))
    second.write_text(yaml.safe_dump({**raw, "repetitions": 3}))
    done = runner.invoke(app, ["run", str(first), str(second), "--quiet"])
    assert done.exit_code == 2 and done.stderr == (
        f"error: {second}: output {tmp_path / 'res'} is also the folder of {first}, run before it by this command; "
        "give each config its own output\n")
    assert not (tmp_path / "res").exists()
    other = tmp_path / "c.yaml"
    other.write_text(yaml.safe_dump({**raw, "output": str(tmp_path / "other")}))
    assert runner.invoke(app, ["run", str(first), str(other), "--quiet"]).exit_code == 0


def test_tune_writes_choice(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({
        "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2], "methods": ["cohv-ucb", "hv-ucb", "uniform"],
        "output": str(tmp_path / "tuned"), "tune": {"s_r": [0.01, 0.1], "s_c": [0.01], "eta": [0.05],
                                                    "repetitions": 3}}))
    result = runner.invoke(app, ["tune", str(config), "--quiet"])
    assert result.exit_code == 0, result.output
    # which method the choice is for, and that the config's other method with parameters is not tuned (Uniform has none)
    assert result.output.splitlines()[-3:] == [
        f"chosen for CoHV-UCB: s_r=0.01 s_c=0.01 eta=0.05 (written to {tmp_path / 'tuned'})",
        f"run uses the parameters its config gives: to run with these, write them in {config}'s methods, e.g. - "
        "{name: cohv-ucb, s_r: 0.01, s_c: 0.01, eta: 0.05}",  # (run never reads tune.yaml)
        "tune chooses CoHV-UCB's parameters only; HV-UCB runs with the parameters the config gives"]
    table = pd.read_csv(tmp_path / "tuned" / "tune.csv")
    assert len(table) == 2 and table["mean_regret_hv"].is_monotonic_increasing
    chosen = yaml.safe_load((tmp_path / "tuned" / "tune.yaml").read_text())
    assert chosen["chosen"]["s_r"] == table["s_r"].iloc[0] and chosen["scored_on"] == "profiling split"
    assert chosen["tied_at_best"] == 1 and "note:" not in result.output  # scores apart: a choice
    # the shipped GSM8K logs are surrogate: the choice says so, as the reports do
    assert chosen["surrogate"] is True and result.output.splitlines()[-4] == (
        "scored on surrogate logs calibrated to the paper's published statistics (not the paper's data)")
    again = runner.invoke(app, ["tune", str(config), "--quiet"])  # its own folder: tuned again, then run into it
    assert again.exit_code == 0, again.output
    # a tune.csv edited since (its header kept, notes added) was replaced: tune.yaml records its SHA-256
    written = (tmp_path / "tuned" / "tune.csv").read_text()
    (tmp_path / "tuned" / "tune.csv").write_text(written + "# my notes\n")
    edited = runner.invoke(app, ["tune", str(config), "--quiet"])
    assert edited.exit_code == 2 and edited.stderr == (
        f"error: {tmp_path / 'tuned' / 'tune.csv'}: edited since cabench tune wrote it (its SHA-256 is not the one "
        "tune.yaml records); move it, or pass another --out\n")
    assert (tmp_path / "tuned" / "tune.csv").read_text() == written + "# my notes\n"
    (tmp_path / "tuned" / "tune.csv").write_text(written)
    assert runner.invoke(app, ["run", str(config), "--quiet"]).exit_code == 0
    # a tune.csv or tune.yaml tune did not write is kept (they were replaced), and no --force is offered (tune has
    # none): a folder of a user's notes is refused naming another --out
    for name, text in (("tune.csv", "my own grid notes\n"), ("tune.yaml", "mine: 1\n")):
        mine = tmp_path / f"mine_{name}"
        mine.mkdir()
        (mine / name).write_text(text)
        refused = runner.invoke(app, ["tune", str(config), "--quiet", "--out", str(mine)])
        mark = "s_r,s_c,eta,mean_regret_hv" if name == "tune.csv" else "chosen:"
        assert refused.exit_code == 2 and refused.stderr == (
            f"error: {mine / name}: not a file cabench tune wrote (it does not begin with '{mark}'); move it, or "
            "pass another --out\n")
        assert [p.name for p in mine.iterdir()] == [name] and (mine / name).read_text() == text
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "notes.txt").write_text("x")
    refused = runner.invoke(app, ["tune", str(config), "--quiet", "--out", str(tmp_path / "notes")])
    assert refused.exit_code == 2 and "pass another --out" in refused.stderr and "--force" not in refused.stderr


def test_tune_scores_cohv_ucb_as_the_config_runs_it_and_refuses_its_theory_mode(tmp_path):
    """tune scored CoHV-UCB with its default alpha whatever the config gave (a tune.csv byte for byte the default
    config's), and its snippet then ran the method at the default when pasted; in theory mode, which uses none of
    s_r, s_c and eta, it scored a grid of identical runs."""
    def tuned(name: str, entry: dict) -> tuple:
        config = tmp_path / f"{name}.yaml"
        config.write_text(yaml.safe_dump({
            "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [4], "methods": [entry],
            "output": str(tmp_path / name), "tune": {"s_r": [0.01, 0.1], "s_c": [0.01], "eta": [0.05],
                                                     "repetitions": 3}}))
        return config, runner.invoke(app, ["tune", str(config), "--quiet"])

    _, plain = tuned("plain", {"name": "cohv-ucb"})
    config, wide = tuned("wide", {"name": "cohv-ucb", "alpha": 4})
    assert plain.exit_code == wide.exit_code == 0, (plain.output, wide.output)
    assert (tmp_path / "plain" / "tune.csv").read_text() != (tmp_path / "wide" / "tune.csv").read_text()
    chosen = yaml.safe_load((tmp_path / "wide" / "tune.yaml").read_text())
    assert chosen["alpha"] == 4 and chosen["mode"] == "experimental"
    assert wide.output.splitlines()[-1].endswith(f"eta: {chosen['chosen']['eta']:g}, alpha: 4}}")
    assert plain.output.splitlines()[-1].endswith(f"eta: {chosen['chosen']['eta']:g}}}")
    config, theory = tuned("theory", {"name": "cohv-ucb", "mode": "theory"})
    assert theory.exit_code == 2 and theory.stderr == (
        f"error: {config}: methods.cohv-ucb.mode: theory uses none of s_r, s_c and eta (Algorithm 1 exactly); "
        "tuning applies to mode: experimental\n")
    assert not (tmp_path / "theory" / "tune.csv").exists()


def test_tune_says_when_the_grid_ties_at_its_best(tmp_path):
    """Settings scoring the same mean R_HV were reported as a choice, the grid's first, without a word."""
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({
        "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2], "methods": ["cohv-ucb"],
        "output": str(tmp_path / "tuned"), "tune": {"s_r": [0.1], "s_c": [0.1], "eta": [0.05, 0.1, 0.2],
                                                    "repetitions": 3}}))
    result = runner.invoke(app, ["tune", str(config), "--quiet"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "tuned" / "tune.csv")
    assert table["mean_regret_hv"].nunique() == 1  # (eta does not move CoHV-UCB's pulls here)
    assert (f"note: every setting scores the same mean R_HV ({table['mean_regret_hv'].iloc[0]:g}): the profiling rows "
            "tell them apart by none of their pulls, so the first in the table's order (smallest s_r, s_c, eta) is "
            "named") in result.stdout
    assert yaml.safe_load((tmp_path / "tuned" / "tune.yaml").read_text())["tied_at_best"] == 3


def test_tune_of_real_logs_says_nothing_of_surrogate_logs(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({
        "dataset": str(DATA / "jhu-temperature"), "setting": "online", "rho": [2], "methods": ["cohv-ucb"],
        "output": str(tmp_path / "tuned"), "tune": {"s_r": [0.1], "s_c": [0.1], "eta": [0.1], "repetitions": 2}}))
    result = runner.invoke(app, ["tune", str(config), "--quiet"])
    assert result.exit_code == 0, result.output
    assert yaml.safe_load((tmp_path / "tuned" / "tune.yaml").read_text())["surrogate"] is False
    assert "surrogate" not in result.output


def test_tune_keeps_the_tuning_and_results_of_other_logs_and_refuses_a_rho_below_one(tmp_path):
    """tune into a folder whose results or tuning come from other logs under the same experiment name is refused,
    and both files are kept; a config that changes only what tune does not use (the methods' parameters, the run's
    repetitions) keeps its folder. The tune grid's own rho is checked as the config's is (at rho 0.1 every triple
    had no regret, and the 'choice' was the grid's first)."""
    raw = {"name": "t", "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2], "methods": ["cohv-ucb"],
           "output": str(tmp_path / "t"), "tune": {"s_r": [0.01, 0.1], "s_c": [0.01], "eta": [0.05],
                                                   "repetitions": 2}}
    first, other, tuned = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.yaml"
    first.write_text(yaml.safe_dump(raw))
    other.write_text(yaml.safe_dump({**raw, "dataset": str(DATA / "piqa")}))
    tuned.write_text(yaml.safe_dump({**raw, "repetitions": 3, "methods": [{"name": "cohv-ucb", "s_r": 0.1}]}))
    assert runner.invoke(app, ["tune", str(first), "--quiet"]).exit_code == 0
    before = (tmp_path / "t" / "tune.csv").read_bytes(), (tmp_path / "t" / "tune.yaml").read_bytes()
    for results in (False, True):  # the other logs' tuning, then their results too
        if results:
            assert runner.invoke(app, ["run", str(first), "--quiet"]).exit_code == 0
        refused = runner.invoke(app, ["tune", str(other), "--quiet"])
        name = "config.yaml" if results else "tune.yaml"
        assert refused.exit_code == 2 and refused.stderr.startswith(
            f"error: {tmp_path / 't'}: holds the {'results' if results else 'tuning'} of this experiment's name on "
            "other logs (SHA-256 "), refused.stderr
        assert f"… in {name}, this config's " in refused.stderr and len(refused.stderr.splitlines()) == 1
        assert ((tmp_path / "t" / "tune.csv").read_bytes(), (tmp_path / "t" / "tune.yaml").read_bytes()) == before
    assert runner.invoke(app, ["tune", str(first), "--quiet"]).exit_code == 0  # its own config: tuned again
    assert runner.invoke(app, ["tune", str(tuned), "--quiet"]).exit_code == 0  # its chosen parameters written in
    low = tmp_path / "low.yaml"
    low.write_text(yaml.safe_dump({**raw, "output": str(tmp_path / "low"), "tune": {**raw["tune"], "rho": [0.1]}}))
    refused = runner.invoke(app, ["tune", str(low), "--quiet"])
    assert refused.exit_code == 2 and refused.stderr.startswith(f"error: {low}: tune.rho: rho 0.1 cannot pay one "
                                                                "initial pull of every arm")
    assert not (tmp_path / "low" / "tune.csv").exists()


def test_tune_of_a_config_stating_its_budgets_tunes_at_them_and_keeps_to_its_own_folder(tmp_path):
    """A config stating budget: {tokens: [...]} left tune's grid unresolved (rho NaN), and the replay never ended;
    it is tuned at the budgets the config states, in the folder its run writes (on the same logs)."""
    config = tmp_path / "stated.yaml"
    config.write_text(yaml.safe_dump({
        "name": "stated", "dataset": str(DATA / "gsm8k"), "setting": "online", "budget": {"tokens": [3e4, 6e4]},
        "methods": ["cohv-ucb"], "repetitions": 2, "output": str(tmp_path / "stated"),
        "tune": {"s_r": [0.01, 0.1], "s_c": [0.01], "eta": [0.05], "repetitions": 2}}))
    assert runner.invoke(app, ["run", str(config), "--quiet"]).exit_code == 0
    done = subprocess.run([sys.executable, "-m", "cabench.cli", "tune", str(config), "--quiet"], cwd=ROOT,
                          capture_output=True, text=True, timeout=SAFETY_S)  # (a bound on a hang only)
    assert done.returncode == 0, done.stderr
    tuned = yaml.safe_load((tmp_path / "stated" / "tune.yaml").read_text())
    runs = pd.read_csv(tmp_path / "stated" / "runs.csv")
    assert tuned["rho"] == sorted(runs["rho"].unique().tolist()) and all(math.isfinite(r) for r in tuned["rho"])
    dataset = yaml.safe_load((tmp_path / "stated" / "config.yaml").read_text())["dataset_info"]
    assert tuned["dataset_sha256"] == dataset["sha256"]


def test_landscape_and_table1(tmp_path):
    out = tmp_path / "fig1.png"
    both = [str(DATA / "gsm8k"), str(DATA / "piqa")]
    assert runner.invoke(app, ["data", "landscape", *both, "-o", str(out)]).exit_code == 0
    assert out.stat().st_size > 20000
    table = tmp_path / "t1.csv"
    assert runner.invoke(app, ["data", "table1", *both, "-o", str(table)]).exit_code == 0
    t1 = pd.read_csv(table)
    assert t1["K"].tolist() == [108, 132] and t1["pareto_size"].tolist() == [7, 7]


def test_version():
    from cabench import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"cabench {__version__}"


def test_a_copied_config_never_replaces_the_originals_results(tmp_path):
    """`cp configs/piqa_psi_quick.yaml my.yaml`, edit rho, run: the same name with another config is refused in one
    line naming both hashes, and the original results stay as they were."""
    original = yaml.safe_load((ROOT / "configs" / "piqa_psi_quick.yaml").read_text())
    original.update({"dataset": str(DATA / "piqa"), "output": str(tmp_path / "piqa_psi"), "repetitions": 3,
                     "rho": [20]})
    (tmp_path / "orig.yaml").write_text(yaml.safe_dump(original))
    assert runner.invoke(app, ["run", str(tmp_path / "orig.yaml"), "--quiet"]).exit_code == 0
    before = (tmp_path / "piqa_psi" / "runs.csv").read_bytes()
    again = runner.invoke(app, ["run", str(tmp_path / "orig.yaml")])  # every cell reused: nothing written
    assert again.exit_code == 0 and "up to date, nothing written" in again.output and "wrote " not in again.output
    (tmp_path / "my.yaml").write_text(yaml.safe_dump({**original, "rho": [40]}))
    result = runner.invoke(app, ["run", str(tmp_path / "my.yaml"), "--quiet"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    old_hash = yaml.safe_load((tmp_path / "piqa_psi" / "config.yaml").read_text())["config_hash"]
    assert f"config hash {old_hash}, and this config's hash is " in result.output and "--replace" in result.output
    assert "(rho differs);" in result.output  # what changed, named
    assert "--force recomputes every cell" in result.output
    assert (tmp_path / "piqa_psi" / "runs.csv").read_bytes() == before
    assert runner.invoke(app, ["run", str(tmp_path / "my.yaml"), "--quiet", "--replace"]).exit_code == 0
    assert pd.read_csv(tmp_path / "piqa_psi" / "runs.csv")["rho"].unique().tolist() == [40]


@pytest.mark.parametrize("changed, said", [({"objectives": ["accuracy", "latency"]}, "(objectives differs);"),
                                            ({"objectives": ["efficiency", "accuracy"]}, "(objectives differs);")])
def test_a_config_run_again_on_other_terms_names_them(tmp_path, changed, said):
    """The same config but for its objectives (others, or the same in another order) is refused naming them; it said
    "no key config.yaml shows as given differs: another dataset content, arm set, objectives or costs"."""
    raw = yaml.safe_load((ROOT / "configs" / "piqa_psi_quick.yaml").read_text())
    raw.update({"dataset": str(DATA / "piqa"), "output": str(tmp_path / "piqa_psi"), "repetitions": 2, "rho": [20],
                "objectives": ["accuracy", "efficiency"], "cost": "tokens"})
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(raw))
    assert runner.invoke(app, ["run", str(tmp_path / "a.yaml"), "--quiet"]).exit_code == 0
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({**raw, **changed}))
    result = runner.invoke(app, ["run", str(tmp_path / "b.yaml"), "--quiet"])
    assert result.exit_code == 2 and said in result.output, result.output


@pytest.mark.parametrize("args, line", [
    (["recommend", "results", "--top", "-1"],
     "error: Invalid value for '--top': Input should be greater than or equal to 1 (see `cabench recommend --help`)"),
    (["run", "--bogus"], "error: No such option: --bogus (Possible options: --out) (see `cabench run --help`)"),
    (["data", "import"], "error: Missing argument 'source'. (see `cabench data import --help`)"),
], ids=["out of range", "unknown option", "missing argument"])
def test_usage_errors_are_one_line_exit_2(args, line):
    """An option or argument the command cannot take is bad input like any other: one line naming it, exit 2, in a
    process of its own (as a shell runs it) and in this one."""
    done = cabench(*args)
    assert done.returncode == 2 and done.stderr.splitlines() == [line] and done.stdout == ""
    inside = runner.invoke(app, args, prog_name="cabench")
    assert inside.exit_code == 2 and inside.stderr.splitlines() == [line]


def test_help_and_version_still_exit_0():
    assert cabench("--version").stdout.startswith("cabench ") and cabench("--version").returncode == 0
    shown = runner.invoke(app, ["run", "--help"], prog_name="cabench")
    assert shown.exit_code == 0 and "Usage: cabench run" in shown.output


def test_a_refusal_names_only_the_keys_that_differ_with_objectives_of_ones_own():
    """config.yaml holds the objectives by name (the experiment record's form), and a config with an objective of its
    own holds a mapping: every refusal said 'objectives differ' beside what did."""
    from cabench.config import load_config
    from cabench.runner import _differing

    own = ["accuracy", "latency", "cost", {"column": "tokens", "direction": "min"}]
    cfg = load_config(ROOT / "configs" / "terms" / "gsm8k_dollars_psi.yaml", {"objectives": own})
    assert cfg.resolved()["objectives"][-1] != "tokens"  # held as a mapping in the config
    held = {**cfg.resolved(), "objectives": ["accuracy", "latency", "cost", "tokens"],
            "repetitions": cfg.repetitions + 1}
    assert _differing(held, cfg) == "repetitions differs"
    assert _differing({**held, "repetitions": cfg.repetitions}, cfg).startswith("no key config.yaml shows as given")


@pytest.mark.parametrize("command, name", [("table1", "mine.csv"), ("landscape", "mine.png")])
def test_data_outputs_never_replace_a_file_cabench_did_not_write(tmp_path, command, name):
    """``data table1 -o`` and ``data landscape -o`` replaced any file, a results folder's runs.csv too; ``-o .``
    ended in a traceback. A file of the user's is refused in one line (--force replaces it); cabench's own is
    written again."""
    runner = CliRunner()
    mine = tmp_path / name
    mine.write_text("my precious data\n")
    refused = runner.invoke(app, ["data", command, str(DATA / "gsm8k"), "-o", str(mine)])
    what = "a Table 1 cabench wrote (its header differs)" if command == "table1" else "an image cabench drew"
    assert refused.exit_code == 2 and refused.stderr == (
        f"error: {mine}: exists and is not {what}; nothing was written (--force replaces it)\n")
    assert mine.read_text() == "my precious data\n"
    ours = tmp_path / f"ours{mine.suffix}"
    for _ in range(2):  # written, then written again over itself
        assert runner.invoke(app, ["data", command, str(DATA / "gsm8k"), "-o", str(ours)]).exit_code == 0
    assert runner.invoke(app, ["data", command, str(DATA / "gsm8k"), "-o", str(mine), "--force"]).exit_code == 0
    assert mine.read_bytes() == ours.read_bytes()
    folder = runner.invoke(app, ["data", command, str(DATA / "gsm8k"), "-o", str(tmp_path)])
    assert folder.exit_code == 2 and "not a folder" in folder.stderr and len(folder.stderr.splitlines()) == 1


def test_a_table_1_edited_since_cabench_wrote_it_is_not_replaced(tmp_path):
    """``data table1 -o`` checked only the header: a Table 1 the user had edited (a value changed, a row of their
    own added) was replaced, unsaid. cabench records the SHA-256 of what it wrote beside the table: written again
    over itself, it is replaced; edited, it is refused in one line and kept (--force replaces it)."""
    runner = CliRunner()
    table = tmp_path / "table1.csv"
    for _ in range(2):
        assert runner.invoke(app, ["data", "table1", str(DATA / "gsm8k"), "-o", str(table)]).exit_code == 0
    written = table.read_bytes()
    assert (tmp_path / ".table1.csv.sha256").read_text() == hashlib.sha256(written).hexdigest() + "\n"
    edited = written + b"my own row,1,2,3\n"
    table.write_bytes(edited)
    refused = runner.invoke(app, ["data", "table1", str(DATA / "gsm8k"), "-o", str(table)])
    assert refused.exit_code == 2 and refused.stderr == (
        f"error: {table}: edited since cabench wrote it (its SHA-256 no longer matches .table1.csv.sha256); nothing "
        "was written (--force replaces it)\n")
    assert table.read_bytes() == edited
    assert runner.invoke(app, ["data", "table1", str(DATA / "gsm8k"), "-o", str(table), "--force"]).exit_code == 0
    assert table.read_bytes() == written
    # stopped between renaming the table and its record: the table is the one it would write, so not edited
    (tmp_path / ".table1.csv.sha256").write_text("0" * 64 + "\n")
    assert runner.invoke(app, ["data", "table1", str(DATA / "gsm8k"), "-o", str(table)]).exit_code == 0
    assert (tmp_path / ".table1.csv.sha256").read_text() == hashlib.sha256(written).hexdigest() + "\n"


def test_a_config_path_that_is_no_file_says_what_it_is(tmp_path):
    """A folder, a pipe or /dev/null given as the config was "config file not found", though it is there."""
    import os

    (tmp_path / "conf.yaml").mkdir()
    os.mkfifo(tmp_path / "pipe.yaml")
    for path, said in ((tmp_path / "conf.yaml", "a folder, not a config file"),
                       (tmp_path / "pipe.yaml", "a named pipe, not a config file"),
                       (Path("/dev/null"), "a character device, not a config file"),
                       (tmp_path / "none.yaml", "config file not found")):
        done = runner.invoke(app, ["run", str(path)])
        assert done.exit_code == 2 and done.stderr.startswith(f"error: {path}: {said}") and \
            done.stderr.count("\n") == 1, done.stderr
    # the same for a mapping and a price table (read as YAML files too)
    logs = tmp_path / "logs.csv"
    logs.write_text("config_id,instance_id,correct,latency_s,tokens\na,q1,1,1.0,10\n")
    for command, option in ((["data", "import"], "--mapping"), (["advise"], "--prices")):
        for path, said in ((Path("/dev/null"), "not a file (a device, pipe or socket)"),
                           (tmp_path / "conf.yaml", "not a file (a folder)")):
            done = runner.invoke(app, [*command, str(logs), option, str(path), "--out", str(tmp_path / "d"),
                                       *(["--budget", "2usd"] if command == ["advise"] else [])])
            assert done.exit_code == 2 and f"{path}: {said}; a " in done.stderr.partition("\n")[0], done.stderr


def test_an_empty_figure_index_is_rebuilt_by_plot_as_report_says(tmp_path):
    """An emptied figures.csv: report said "run `cabench plot` again", and plot refused it as not an index cabench
    wrote ("move it"). An empty file holds nothing to lose: plot replaces it, and report then reads it."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"name": "e", "dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4]],
                                                                           "costs": [10, 20]}},
                                   "setting": "online", "rho": [2], "methods": ["cohv-ucb"], "repetitions": 2,
                                   "output": str(tmp_path / "res" / "e")}))
    assert runner.invoke(app, ["run", str(cfg), "--quiet"]).exit_code == 0
    assert runner.invoke(app, ["plot", str(tmp_path / "res"), "--format", "png"]).exit_code == 0
    (tmp_path / "res" / "figures.csv").write_text("")
    report = runner.invoke(app, ["report", str(tmp_path / "res")])
    assert report.exit_code == 2 and "run `cabench plot` again" in report.stderr
    replotted = runner.invoke(app, ["plot", str(tmp_path / "res"), "--format", "png"])
    assert replotted.exit_code == 0 and "; the index was damaged (unreadable figure index" in replotted.output
    assert (tmp_path / "res" / "figures.csv").read_text().startswith("stem,")
    assert runner.invoke(app, ["report", str(tmp_path / "res")]).exit_code == 0


@pytest.mark.parametrize("text, budget", [("5usd", {"usd": [5]}), ("$0.5", {"usd": [0.5]}),
                                          ("2e6tokens", {"tokens": [2000000]}), ("usd=0.5,2", {"usd": [0.5, 2]}),
                                          ("tokens=100000", {"tokens": [100000]}), ("USD=5", {"usd": [5]}),
                                          ("usd=1,500", {"usd": [1, 500]}), ("2,000,000 tokens", {"tokens": [2e6]})])
def test_run_takes_one_budget_as_advise_states_it(text, budget):
    """`advise --budget 5usd` and `run --budget usd=5` were two forms, each refused by the other command."""
    from cabench.cli import _budget_option

    assert _budget_option(text) == budget


@pytest.mark.parametrize("text, items, one", [("usd=1,000", "1, 000", "usd=1000"),
                                              ("tokens=2,000,000", "2, 000, 000", "tokens=2000000"),
                                              ("usd=0.5,1,000", "0.5, 1, 000", "usd=0.5,1000"),
                                              ("usd=1,000.50", "1, 000.50", "usd=1000.50"),
                                              ("usd=2,1,050", "2, 1, 050", "usd=2,1050"),
                                              ("usd=1,00", "1, 00", "a point, not a comma, before decimals")])
def test_a_budget_list_with_a_comma_in_a_number_says_commas_separate_budgets(text, items, one):
    """usd=1,000 was refused as 'must be positive, got 0', a number never typed."""
    from cabench.cli import _budget_option

    with pytest.raises(CabenchError) as exc:
        _budget_option(text)
    assert str(exc.value) == (f"--budget {text}: commas separate budgets, so this reads as {items}; write each "
                              f"budget without a comma in it ({one})")


def test_run_names_both_budget_forms_for_one_it_cannot_read():
    from cabench.cli import _budget_option

    with pytest.raises(CabenchError) as exc:
        _budget_option("5dollars")
    assert str(exc.value) == ("--budget 5dollars: expected UNIT=VALUES or one amount with its unit, e.g. --budget "
                              "usd=0.5,2, --budget tokens=100000 or --budget 5usd; did you mean 'usd'?")
    with pytest.raises(CabenchError, match=r"--budget 5usd; did you mean 'tokens'\?$"):  # advise's hint kept
        _budget_option("5tokns")
    # what is wrong with an amount is said as advise says it (it offered 5usd as the fix for -5usd)
    for text, said in (("-5usd", "expected a positive amount"), ("0usd", "expected a positive amount"),
                       ("1e400usd", "expected a finite amount")):
        with pytest.raises(CabenchError, match=f"^--budget {re.escape(text)}: {said}"):
            _budget_option(text)
    # every item a number as written: an empty item was dropped, 1_0 read as 10
    for text in ("usd=0.5,,2", "usd=1_0", "usd=2,"):
        with pytest.raises(CabenchError, match=f"^--budget: expected comma-separated numbers, got '{text[4:]}'$"):
            _budget_option(text)


def test_a_loop_of_symbolic_links_is_one_line_wherever_it_is_given(tmp_path):
    """A loop of symbolic links as the logs, the output folder, a mapping or advise's logs ended in a traceback
    (pathlib's RuntimeError before Python 3.13, exit 1); it is one line naming a link of the loop, exit 2, and
    nothing is written, in a folder whose name holds a quote too."""
    home = tmp_path / "it's"
    home.mkdir()
    (home / "l1").symlink_to(home / "l2")
    (home / "l2").symlink_to(home / "l1")
    logs = home / "logs.csv"
    tiny_logs().to_csv(logs, index=False)
    said = re.compile(re.escape(f"error: {home}/") + r"l[12]: a loop of symbolic links \(the link leads back to "
                      r"itself\); point it at a file or folder; nothing already written was changed\n")
    for args in (["data", "import", str(home / "l1"), "--out", str(home / "a")],
                 ["data", "import", str(logs), "--out", str(home / "l1")],
                 ["data", "import", str(logs), "--mapping", str(home / "l1"), "--out", str(home / "b")],
                 ["advise", str(home / "l1"), "--budget", "2e4tokens", "--out", str(home / "c"), "--quiet"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and said.fullmatch(result.stderr), (args, result.output)
    assert sorted(p.name for p in home.iterdir()) == ["l1", "l2", "logs.csv"]


def test_a_file_where_a_folder_is_needed_is_said_so(tmp_path):
    """-o into a path through a file, or a results folder whose figures/ is a file: the system's own "File exists"
    was the whole reason given."""
    (tmp_path / "afile").write_text("mine")
    done = runner.invoke(app, ["data", "table1", str(ROOT / "data" / "gsm8k"), "-o", str(tmp_path / "afile" / "x.csv")])
    assert done.exit_code == 2 and done.stderr == (
        f"error: {tmp_path / 'afile'}: a file is there, where a folder is needed; nothing already written was changed "
        "(check the path, its permissions and free space)\n"), done.output
    assert (tmp_path / "afile").read_text() == "mine"


def test_a_symbolic_link_loop_without_a_name_or_with_a_line_break_is_one_line(capsys):
    """An ELOOP error carrying no file name printed 'error: None: ...'; a name holding a line break printed two
    lines."""
    import typer

    from cabench.cli import _symlink_loop

    for path, shown in ((None, "a path given"), ("in/a\nb", "in/a\\nb")):
        with pytest.raises(typer.Exit) as ended:
            _symlink_loop(path)
        assert ended.value.exit_code == 2
        assert capsys.readouterr().err == (f"error: {shown}: a loop of symbolic links (the link leads back to itself); "
                                           "point it at a file or folder; nothing already written was changed\n")


@pytest.mark.parametrize("command", [[], ["run"], ["recommend"], ["report"], ["advise"], ["data", "import"], ["live"]])
def test_help_shows_switches_without_a_value(command):
    """typer's help gave every switch a type, `--all <bool>`, which reads as `--all true` (refused as an extra
    argument); options that take a value keep theirs."""
    shown = runner.invoke(app, [*command, "--help"], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "<bool>" not in shown.stdout and re.search(r"--help +Show this message", shown.stdout), shown.stdout
    if command == ["recommend"]:
        assert re.search(r"--all +Every method", shown.stdout) and re.search(r"--top +<int range>", shown.stdout)
