"""`cabench advise` on a practitioner's own CSV (12 configurations x 300 instances, latency in ms, prompt and
completion tokens apart) with a mapping and a price table: the decision in at most 15 lines naming a configuration
of the logs with its dollars per call, the report, one-line errors, and a re-run that reuses every cell."""

from __future__ import annotations

import importlib.util
import io
import math
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.advise import MAX_LINES, Advice, format_advice
from cabench.advise_plan import Budget, Forecast, SettingPlan, parse_budget, predicted, reached
from cabench.answers import WEAK
from cabench.budget_plan import BudgetPlan, Planned, PlanSpec
from cabench.cli import app
from cabench.data.dataset import load_dataset
from cabench.errors import CabenchError
from cabench.planning.search import Estimate
from cabench.planning.targets import Target
from cabench.storage import folder_lock
from cabench.units import Significant, amount, fixed
from tests.conftest import ROOT, spread_logs, write_dataset

EXAMPLE = ROOT / "examples" / "practitioner"
RUNNER = CliRunner()
PRICES = yaml.safe_load((EXAMPLE / "experiment.yaml").read_text())["prices"]


def _logs(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example's generator, on 300 questions instead of 400."""
    spec = importlib.util.spec_from_file_location("make_logs", EXAMPLE / "make_logs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "QUESTIONS", 300)
    path = folder / "evals.csv"
    module.make().to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("advise")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _logs(home, monkeypatch)
    mapping = yaml.safe_load((EXAMPLE / "mapping.yaml").read_text())
    del mapping["dataset"]  # no declared split or name: the import chooses the split, the file names the dataset
    (home / "mapping.yaml").write_text(yaml.safe_dump(mapping))
    (home / "prices.yaml").write_text(yaml.safe_dump(PRICES))
    return home


def _advise(home: Path, *extra: str, budget: str = "$0.2", mapping: str = "mapping.yaml"):
    return RUNNER.invoke(app, ["advise", str(home / "evals.csv"), "--mapping", str(home / mapping), "--prices",
                               str(home / "prices.yaml"), "--budget", budget, "--repetitions", "4", "--out",
                               str(home / "advice"), *extra])


@pytest.fixture(scope="module")
def first(home):
    result = _advise(home)
    assert result.exit_code == 0, result.output
    return result


def _per_call(home: Path, name: str) -> tuple[float, float]:
    """Dollars (from the price table, by hand) and seconds per call of ``name`` over the evaluation instances."""
    logs = pd.read_csv(home / "evals.csv")
    evaluated = set(load_dataset(home / "advice" / "data" / "evals").evaluation_ids)  # the split it declares
    rows = logs[(logs["run"] == name) & logs["question"].isin(evaluated)]
    model = rows["model_name"].iloc[0]
    price = PRICES.get(model) or PRICES["atlas-*"]
    usd = (rows["input_tokens"] * price["input"] + rows["output_tokens"] * price["output"]) / 1e6
    return float(usd.mean()), float(rows["latency_ms"].mean() / 1000)


def test_the_decision_fits_in_15_lines_and_names_a_configuration_with_its_dollars(home, first):
    lines = first.stdout.strip().splitlines()
    assert len(lines) <= MAX_LINES, first.stdout
    names = set(pd.read_csv(home / "evals.csv")["run"])
    assert lines[0].startswith("evals: 12 configurations x 300 instances (150 profiling, 150 evaluation)")
    assert "cost in USD" in lines[0] and lines[2].startswith("budget $0.20 (about ")
    usd = re.search(r" tokens, \$(\S+)-\$(\S+); ", lines[1])  # the dollar range, as a price reads
    assert usd and all(fixed(float(x)) == x and "e" not in x for x in usd.groups()), lines[1]
    online = next(i for i, x in enumerate(lines) if x.startswith("online: pay for "))
    chosen = lines[online].split("online: pay for ")[1].split(" — ")[0]
    assert chosen in names and "CoHV-UCB exploits it in " in lines[online]
    usd, seconds = _per_call(home, chosen)
    assert f"${fixed(usd)} ± " in lines[online + 1] and f"{Significant().format(seconds)} ± " in lines[online + 1]
    psi = next(i for i, x in enumerate(lines) if x.startswith("identification: a set of "))
    assert " returns it as the Pareto set in " in lines[psi]  # the set returned, not the logs' own Pareto set
    arms = next((home / "advice" / "results").glob("*/arms.csv"))
    pareto = int(pd.read_csv(arms)["pareto"].sum())  # which the line names apart, by its size
    assert f" repetitions (the evaluation split's own Pareto set of {pareto} returned exactly: CoPSI-R " in lines[psi]
    members = [x for x in lines[psi + 1:-1] if not x.startswith(("  … and ", f"  {WEAK}: "))]
    assert members
    for line in members:
        name = line.strip().split(":")[0]
        usd, seconds = _per_call(home, name)
        assert name in names and f"${fixed(usd)} ± " in line and f"{Significant().format(seconds)} ± " in line
    report = home / "advice" / "results" / "REPORT.md"
    assert report.is_file() and "evals_online_0.2usd" in report.read_text()
    html = report.with_name("REPORT.html")
    assert lines[-1] == f"report: {html if html.is_file() else report}"
    if html.is_file():
        assert chosen in html.read_text()
    assert "[5/5] report" in first.stderr


def test_a_rerun_reuses_the_import_and_every_cell(home, first):
    cells = sorted((home / "advice" / "results").glob("*/cells/*.ok"))
    stamps = [p.stat().st_mtime_ns for p in cells]
    logs = home / "advice" / "data" / "evals" / "logs.csv.gz"
    imported = logs.stat().st_mtime_ns
    again = _advise(home)
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout
    assert again.stderr.count("(1 reused, 0 to run)") == 2
    assert [p.stat().st_mtime_ns for p in cells] == stamps and logs.stat().st_mtime_ns == imported


def test_another_budget_is_a_new_experiment_beside_the_first(home, first):
    other = _advise(home, "--quiet", "--methods", "cohv-ucb", budget="0.1usd")
    assert other.exit_code == 0, other.output
    assert other.stderr == "" and "budget $0.10 (about " in other.stdout
    found = {p.name for p in (home / "advice" / "results").iterdir() if p.is_dir()}
    assert found == {"evals_online_0.2usd", "evals_identification_0.2usd", "evals_online_0.1usd"}


def test_a_dataset_folder_is_used_as_it_is_with_the_imports_split_rule(home, first, tmp_path):
    dataset = tmp_path / "evals"
    shutil.copytree(home / "advice" / "data" / "evals", dataset)
    meta = yaml.safe_load((dataset / "dataset.yaml").read_text())
    del meta["split"]  # a folder made by hand: 300 instances, no split, too few for the default 200
    (dataset / "dataset.yaml").write_text(yaml.safe_dump(meta))
    out = tmp_path / "out"
    result = RUNNER.invoke(app, ["advise", str(dataset), "--prices", str(home / "prices.yaml"), "--budget", "0.1usd",
                                 "--repetitions", "2", "--methods", "cohv-ucb", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert not (out / "data").exists() and (out / "results" / "REPORT.md").is_file()
    assert [p.name for p in (out / "results").iterdir() if p.is_dir()] == ["evals_online_0.1usd"]
    assert result.stdout.startswith("evals: 12 configurations x 300 instances (150 profiling, 150 evaluation)")
    assert "identification" not in result.stdout


@pytest.mark.parametrize("budget, words", [
    ("2e6tokens", "--budget 2,000,000 tokens: the cost is in USD (prices are given); state the budget in usd"),
    ("5 euros", "--budget 5 euros: expected an amount and a unit"),
])
def test_a_bad_budget_unit_is_one_line_and_exit_2(home, first, budget, words):
    result = _advise(home, "--quiet", budget=budget)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: {words}"), result.stderr


@pytest.mark.parametrize("extra, words", [
    ((), "--budget $0.10: the cost is in tokens (no prices and no cost_usd); state the budget in tokens (--budget "
         "<amount>tokens), or pass --prices FILE (a YAML price table: {model or pattern: {input: $/1M, output: "
         "$/1M}})"),
    (("--cost", "usd"), "--cost: cost: usd: the logs as read from {logs} have no cost_usd column and no price table "
                        "is given; pass --prices FILE"),
])
def test_dollars_asked_of_logs_without_them_say_to_pass_prices(home, first, tmp_path, extra, words):
    """A dollar budget on logs with neither prices nor cost_usd said "or pass --cost usd", which was then refused
    for "a prices table in the config": advise has no config, and takes prices with --prices."""
    dataset = tmp_path / "evals"
    shutil.copytree(home / "advice" / "data" / "evals", dataset)
    result = RUNNER.invoke(app, ["advise", str(dataset), "--budget", "0.1usd", "--repetitions", "2", "--out",
                                 str(tmp_path / "out"), "--quiet", *extra])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert result.stderr.startswith(f"error: {words.replace('{logs}', str(dataset))}"), result.stderr


@pytest.mark.parametrize("text", ["", "# prices to come\n", "{}\n"])
def test_an_empty_price_file_is_said_to_be_empty(home, tmp_path, text):
    """An empty --prices file was refused as "no price for model 'alpha-s'", a model the table did not name."""
    (tmp_path / "prices.yaml").write_text(text)
    result = RUNNER.invoke(app, ["advise", str(home / "evals.csv"), "--mapping", str(home / "mapping.yaml"),
                                 "--prices", str(tmp_path / "prices.yaml"), "--budget", "1usd", "--out",
                                 str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert result.stderr.startswith(f"error: --prices {tmp_path / 'prices.yaml'}: the file is empty; give a price "
                                    "table {model or pattern: {input: $/1M, output: $/1M}}"), result.stderr
    assert not (tmp_path / "out").exists()


def test_an_objective_that_is_no_name_says_where_a_column_of_the_logs_is_declared(home, first):
    """--objectives takes names: a column of the logs is declared in the mapping's dataset: part, which the message
    says (it gave the mapping form {column: NAME, ...} that the flag cannot take)."""
    result = _advise(home, "--quiet", "--objectives", "accuracy,dollars")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert result.stderr.startswith("error: --objectives: objectives[1]: 'dollars' is not one of ")
    assert result.stderr.rstrip().endswith("a column of the logs is declared in the mapping's dataset: part "
                                           "(objectives: [accuracy, {column: NAME, direction: max|min}]), not with "
                                           "--objectives, which takes names")


@pytest.mark.parametrize("objective", ["latency", "efficiency"])
def test_an_objective_the_logs_have_no_column_for_names_the_logs_and_their_columns(tmp_path, objective):
    """Logs without latency, asked for latency (or efficiency): the error named the folder advise imported them into
    and listed columns cabench derives (cost, usd) among the user's."""
    logs = pd.read_csv(EXAMPLE / "my_evals.csv").drop(columns=["latency_ms"])
    logs.to_csv(tmp_path / "nolatency.csv", index=False)
    mapping = yaml.safe_load((EXAMPLE / "mapping.yaml").read_text())
    mapping["columns"].pop("latency_s")
    mapping.pop("scale")
    (tmp_path / "mapping.yaml").write_text(yaml.safe_dump(mapping))
    result = RUNNER.invoke(app, ["advise", str(tmp_path / "nolatency.csv"), "--mapping", str(tmp_path / "mapping.yaml"),
                                 "--budget", "2e6tokens", "--objectives", f"accuracy,{objective}", "--out",
                                 str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert result.stderr == (f"error: --objectives: objectives[1]: '{objective}' reads the column 'latency_s', which "
                             f"the logs as read from {tmp_path / 'nolatency.csv'} lack (they give correct, tokens, "
                             f"prompt_tokens, completion_tokens); map a column of theirs to latency_s (--mapping), "
                             "or leave "
                             f"'{objective}' out\n")


def test_other_methods_at_the_same_budget_are_refused_offering_only_advise_options(home, first):
    results = home / "advice" / "results"
    before = {p: p.read_bytes() for p in results.rglob("*.csv")}
    result = _advise(home, "--quiet", "--methods", "hv-ucb")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert "with config hash" in result.stderr and "--replace" in result.stderr
    assert "--force" not in result.stderr  # advise has no --force
    assert {p: p.read_bytes() for p in results.rglob("*.csv")} == before


def test_other_logs_never_replace_the_imported_dataset(home, first):
    mapping = yaml.safe_load((home / "mapping.yaml").read_text())
    mapping["scale"]["latency_s"] = 0.002
    (home / "other.yaml").write_text(yaml.safe_dump(mapping))
    folder = home / "advice" / "data" / "evals"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    result = _advise(home, "--quiet", mapping="other.yaml")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "holds another dataset than the import" in result.stderr and "--replace" in result.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_folders_of_the_users_under_out_are_refused_before_any_work_naming_what_advise_offers(home, tmp_path):
    """A REPORT.md of the user's in OUT/results is refused before the import, and a folder of the user's where the
    dataset would go is never replaced, --replace or not; each message offers another --out (advise has no --force),
    and the user's files are left as they were."""
    out = tmp_path / "mine"
    (out / "results").mkdir(parents=True)
    (out / "results" / "REPORT.md").write_text("my notes\n")
    result = RUNNER.invoke(app, ["advise", str(home / "evals.csv"), "--mapping", str(home / "mapping.yaml"),
                                 "--budget", "2e6tokens", "--out", str(out), "--quiet"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert "not a report cabench wrote" in result.stderr and "pass another --out" in result.stderr
    assert "--force" not in result.stderr and sorted(p.name for p in out.rglob("*")) == ["REPORT.md", "results"]
    (out / "results" / "REPORT.md").unlink()
    (out / "data" / "evals").mkdir(parents=True)
    (out / "data" / "evals" / "notes.txt").write_text("mine\n")
    for extra in ((), ("--replace",)):
        result = RUNNER.invoke(app, ["advise", str(home / "evals.csv"), "--mapping", str(home / "mapping.yaml"),
                                     "--budget", "2e6tokens", "--out", str(out), "--quiet", *extra])
        assert result.exit_code == 2 and "is not a cabench dataset" in result.stderr, result.output
        assert (out / "data" / "evals" / "notes.txt").read_text() == "mine\n"
        assert sorted(p.name for p in (out / "data" / "evals").iterdir()) == ["notes.txt"]
    shutil.rmtree(out / "data")  # the identification experiment's folder holds a file of the user's: refused
    mine = out / "results" / f"evals_identification_{parse_budget('2e6tokens').tag}"  # before the online run
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    result = RUNNER.invoke(app, ["advise", str(home / "evals.csv"), "--mapping", str(home / "mapping.yaml"),
                                 "--budget", "2e6tokens", "--out", str(out), "--quiet"])
    assert result.exit_code == 2 and "holds 'notes.txt' and no config.yaml" in result.stderr, result.output
    assert "--force" not in result.stderr and [p.name for p in (out / "results").iterdir()] == [mine.name]


@pytest.mark.parametrize("text, value, unit", [
    ("2e6tokens", 2e6, "tokens"), ("2e6 tokens", 2e6, "tokens"), ("5usd", 5.0, "usd"), ("$5", 5.0, "usd"),
    ("5 usd", 5.0, "usd"), ("300completion_tokens", 300.0, "completion_tokens"), ("$0.25", 0.25, "usd"),
    (".5usd", 0.5, "usd"), ("2.usd", 2.0, "usd"), ("2.e3tokens", 2000.0, "tokens"),  # a point on either side alone
    ("$1,000.00", 1000.0, "usd"), ("2,000,000 tokens", 2e6, "tokens"), ("12,345.5usd", 12345.5, "usd"),  # as written
])
def test_budgets_are_read_as_written(text, value, unit):
    assert parse_budget(text) == Budget(value, unit)


@pytest.mark.parametrize("text", ["-1usd", "0usd", "-$5", "-2e6tokens"])
def test_a_budget_of_nothing_or_less_says_it_must_be_positive(text):
    with pytest.raises(CabenchError, match=f"^--budget {re.escape(text)}: expected a positive amount$"):
        parse_budget(text)


@pytest.mark.parametrize("text", ["infusd", "nanusd", "-inf tokens", "$Infinity", "NaN"])
def test_a_budget_of_no_finite_amount_says_so(text):
    with pytest.raises(CabenchError, match=f"^--budget {re.escape(text)}: expected a finite amount$"):
        parse_budget(text)
    with pytest.raises(CabenchError, match="^--budget information: expected an amount and a unit"):
        parse_budget("information")  # a word, not an amount


def test_a_budget_beyond_a_floats_range_says_so():
    """1e400tokens was refused as 'expected a positive amount', which it is."""
    with pytest.raises(CabenchError, match=r"^--budget 1e400tokens: expected a finite amount \(1e400 is beyond a "
                                           r"float's range\)$"):
        parse_budget("1e400tokens")


@pytest.mark.parametrize("text", ["1,5usd", "1,0000tokens", "1,000,00usd", ",100usd", "1,000e,3tokens"])
def test_a_comma_outside_groups_of_three_digits_is_no_budget(text):
    """Amounts as cabench writes them ('2,000,000 tokens') are read; a decimal comma or a stray one is refused."""
    with pytest.raises(CabenchError, match=f"^--budget {re.escape(text)}: expected an amount and a unit"):
        parse_budget(text)


def test_every_amount_cabench_writes_is_read_back_as_a_budget():
    from cabench.units import amount

    for unit in ("usd", "tokens"):
        for value in (0.25, 3.0, 999.0, 1234.5, 1e6 + 1, 2.5e9):
            back = parse_budget(amount(value, unit))  # '$1,234.50', '1,000,001 tokens'
            assert back.unit == unit and back.value == pytest.approx(value, abs=0.005 if unit == "usd" else 0.5)


@pytest.mark.parametrize("text", ["--5usd", "-$-5", "+-5usd"])
def test_a_budget_signed_twice_is_no_budget(text):
    with pytest.raises(CabenchError, match="expected an amount and a unit"):
        parse_budget(text)


def test_a_long_pareto_set_is_cut_to_15_lines():
    member = {"config_id": "m", "accuracy": 0.5, "accuracy_ci": 0.01, "usd": 1e-4, "usd_ci": 1e-6}
    psi = {"decision": {"method": "copsi-r", "rho": 8.0, "budget": 2.0, "cost_mode": "deterministic",
                        "pareto_set": [f"c{i}" for i in range(20)], "share": 0.5,
                        "members": [{**member, "config_id": f"c{i}"} for i in range(20)]},
           "results": [{"method": "copsi-r", "rho": 8.0, "cost_mode": "deterministic", "repetitions": 10,
                        "exact_true_set": 0.4, "spend_share": 0.99}], "no_preference": []}
    online = {"decision": {"method": "cohv-ucb", "rho": 8.0, "budget": 2.0, "configuration": {**member, "share": 1.0},
                          "tied": []},
              "results": [{"method": "cohv-ucb", "rho": 8.0, "repetitions": 10, "spend_share": 1.0,
                           "exploited": [{"config_id": "m", "share": 0.9}]}], "no_preference": []}
    described = {"name": "d", "K": 20, "surrogate": False, "objectives": ["accuracy", "cost"], "cost_unit": "usd",
                 "pareto_size": 20, **{f"{m}_{e}": None for m in ("accuracy", "latency", "tokens", "usd")
                                        for e in ("min", "max")}}
    text = format_advice(Advice(described, (5, 45), Budget(2.0, "usd"), 10, {"online": online, "psi": psi},
                                Path("r/REPORT.md")))
    lines = text.splitlines()
    assert len(lines) == MAX_LINES and "CoHV-UCB exploits it in 90% of 10 repetitions" in lines[3]
    assert lines[6].startswith("  no set came back in most repetitions: this budget is short of identifying")
    assert lines[-2] == "  … and 14 more (the report lists them)" and lines[-3].startswith("  c5: accuracy 0.500")
    psi["decision"]["share"] = 0.6  # returned in most repetitions: no such line, one member more
    lines = format_advice(Advice(described, (5, 45), Budget(2.0, "usd"), 10, {"online": online, "psi": psi},
                                 Path("r/REPORT.md"))).splitlines()
    assert len(lines) == MAX_LINES and lines[6].startswith("  c0: ") and lines[-3].startswith("  c6: ")
    online["decision"]["tied"] = [{**member, "config_id": f"t{i}", "share": 1.0} for i in range(9)]  # ten tied
    online["results"][0]["exploited"] = [{"config_id": n, "share": 0.1} for n in ["m", *(f"t{i}" for i in range(9))]]
    lines = format_advice(Advice(described, (5, 45), Budget(2.0, "usd"), 10, {"online": online, "psi": psi},
                                 Path("r/REPORT.md"))).splitlines()
    assert len(lines) <= MAX_LINES and lines[3].startswith("online: pay for any of m, t0, t1, ")
    assert "exploits each in 10% of 10 repetitions (the 10 together in 100%" in lines[3]
    assert lines[4].startswith("  m: ") and lines[7] == "  … and 7 more (the report lists them)"
    assert lines[-2] == "  … and 16 more (the report lists them)" and lines[-3].startswith("  c3: ")


def test_a_weak_online_answer_and_the_means_note_keep_the_decision_within_its_lines(monkeypatch):
    """A weak online answer is said on its line; the note of configurations the means per call would keep takes a
    line of its own where the lines allow, else goes on the line of the Pareto set it speaks of."""
    from cabench import advise

    member = {"config_id": "m", "accuracy": 0.5, "accuracy_ci": 0.01, "usd": 1e-4, "usd_ci": 1e-6}
    psi = {"decision": {"method": "copsi-r", "rho": 8.0, "budget": 2.0, "cost_mode": "deterministic",
                        "pareto_set": [f"c{i}" for i in range(20)], "share": 0.6,
                        "members": [{**member, "config_id": f"c{i}"} for i in range(20)]},
           "results": [{"method": "copsi-r", "rho": 8.0, "cost_mode": "deterministic", "repetitions": 10,
                        "exact_true_set": 0.4, "spend_share": 0.99}], "no_preference": [],
           "undominated_on_means": ["x", "y"]}
    online = {"decision": {"method": "cohv-ucb", "rho": 8.0, "budget": 2.0, "configuration": {**member, "share": 0.3},
                           "tied": []},
              "results": [{"method": "cohv-ucb", "rho": 8.0, "repetitions": 10, "spend_share": 1.0,
                           "exploited": [{"config_id": "m", "share": 0.3}]}], "no_preference": [],
              "undominated_on_means": ["x", "y"]}
    described = {"name": "d", "K": 20, "surrogate": False, "objectives": ["accuracy", "cost"], "cost_unit": "usd",
                 "pareto_size": 18, **{f"{m}_{e}": None for m in ("accuracy", "latency", "tokens", "usd")
                                        for e in ("min", "max")}}

    def advised() -> list[str]:
        return format_advice(Advice(described, (5, 45), Budget(2.0, "usd"), 10, {"online": online, "psi": psi},
                                    Path("r/REPORT.md"))).splitlines()

    lines = advised()
    assert "max-ν" not in lines[4]  # no max_nu given
    online["max_nu"] = {"config_id": "m"}  # the logs' own answer is the runs': nothing said
    assert "max-ν" not in advised()[4]
    online["max_nu"] = {"config_id": "cheap"}  # another: named, with how often the method exploits it
    online["results"][0]["exploited"].append({"config_id": "cheap", "share": 0.2})
    assert "; the logs' own max-ν configuration is cheap (CoHV-UCB exploits it in 20%); spent " in advised()[4]
    del online["max_nu"]
    note = "note: outside the Pareto set, yet no configuration beats them on every mean per call: x, y ("
    assert len(lines) == MAX_LINES and lines[2].startswith(f"  {note}")
    assert lines[4].startswith("online: pay for m — ") and lines[4].endswith(
        "; no configuration was exploited in most repetitions (30% chose it): this budget is short of settling on "
        "one configuration")
    monkeypatch.setattr(advise, "MAX_LINES", 5)  # fewer lines than the decision's least: the note joins line 2
    lines = advised()
    assert f"the evaluation split's Pareto set: 18 of 20; {note}" in lines[1]
    assert not any(x.startswith("  note: ") for x in lines)


def test_the_plan_predicts_from_its_draws_at_the_budget_they_need_for_the_evaluation_splits():
    """Draws needing rho 1, 2, 4, 4, 8: their 80% quantile is 4, planned at 8 (the estimate's scale 2), so the
    evaluation split at rho 8 is a draw at rho 4, and at rho 4 a draw at rho 2; between grid points the curves are
    read linearly in log rho."""
    target = Target("error", 0.1)
    curves = pd.DataFrame({"method": "copsi-r", "cost_mode": "deterministic", "target": target.text,
                           "rho": [1.0, 2.0, 4.0, 8.0], "mean": [0.5, 0.3, 0.1, 0.0], "low": [0.4, 0.2, 0.0, 0.0],
                           "high": [0.7, 0.5, 0.2, 0.1]})
    needs = (1.0, 2.0, 4.0, 4.0, 8.0)
    row = Planned("copsi-r", "deterministic", target.text, Estimate(8.0, 4.0, 16.0, 1.0, 6.0, needs, scale=2.0))
    profiling = SimpleNamespace(norm=SimpleNamespace(rho=lambda budget: budget / 100))  # B = 100 rho
    plan = BudgetPlan("p", "psi", profiling, PlanSpec((target,)), np.array([1.0, 2.0, 4.0, 8.0]), curves, (row,))
    assert predicted(plan, row, 800.0) == pytest.approx((0.1, 0.0, 0.2))
    assert predicted(plan, row, 400.0) == pytest.approx((0.3, 0.2, 0.5))
    halfway = math.sqrt(2) * 400  # a draw at rho 2 * sqrt(2): halfway from 2 to 4 in log rho
    assert predicted(plan, row, halfway) == pytest.approx((0.2, 0.1, 0.35))
    assert predicted(plan, row, 50.0) == pytest.approx((0.5, 0.4, 0.7))  # below the grid: its first point


def _wilson(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval, written out."""
    z, p = 1.959963984540054, k / n
    centre, half, scale = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)), 1 + z * z / n
    return (0.0 if k == 0 else (centre - half) / scale), (1.0 if k == n else (centre + half) / scale)


#: The targets of the advise run below: metric -> whether a value meets it.
TARGETS = {"share": lambda v: v >= 0.6, "f1": lambda v: v >= 0.8, "error": lambda v: v <= 0.6}


def _reached(runs: pd.DataFrame, arms: pd.DataFrame, metric: str, epsilon: float = 0.05) -> tuple[float, float, float]:
    """A target's metric over the runs, counted from runs.csv and arms.csv, with its 95% interval."""
    n = len(runs)
    if metric == "f1":
        half = 1.96 * runs["f1"].std() / math.sqrt(n)
        return runs["f1"].mean(), max(0.0, runs["f1"].mean() - half), min(1.0, runs["f1"].mean() + half)
    if metric == "error":
        k = int(runs["error"].sum())
    else:  # the exploited configuration's nu within epsilon (5%) of the best (paper §3.1)
        nu = dict(zip(arms["config_id"], arms["nu"]))
        k = sum(nu[name] >= (1 - epsilon) * max(nu.values()) for name in runs["exploited"])
    return (k / n, *_wilson(k, n))


def test_advise_with_targets_says_what_the_plan_predicted_and_what_the_run_reached(tmp_path):
    # eight configurations, the second best's nu 0.913 of the best: outside the online target's 5%, inside 10%
    logs = spread_logs(8, n_instances=200, seed=7)
    folder = write_dataset(tmp_path / "eight", logs, split={"profiling_size": 100, "seed": 0})
    out = tmp_path / "advice"
    result = RUNNER.invoke(app, ["advise", str(folder), "--target", "share>=0.6", "--target", "f1>=0.8", "--target",
                                 "error<=0.6", "--repetitions", "12", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) <= MAX_LINES
    triple = r"(-?\d+\.\d{3}) \[(-?\d+\.\d{3}), (-?\d+\.\d{3})\]"
    for shown, metrics in (("online", ["share"]), ("identification", ["f1", "error"])):
        at = lines.index(next(x for x in lines if x.startswith(f"plan, {shown}: "))) + 1
        spent = lines[at - 1].split("; spending ")[1]
        assert lines[at].startswith(f"  at {spent} (") and "12 repetitions): " in lines[at] and lines[at].endswith(
            "(predicted: the draws' mean [20-80%]; reached: mean [95% CI])")
        results = out / "results" / f"eight_{shown}_{spent.replace(',', '').replace(' ', '')}"
        runs, arms = pd.read_csv(results / "runs.csv"), pd.read_csv(results / "arms.csv")
        curves = pd.read_csv(out / "plan" / f"eight_{shown}" / "plan_curves.csv")
        assert len(runs) == 12
        for metric in metrics:
            found = re.search(rf"{metric} predicted {triple}, reached {triple}: (met|not met)", lines[at])
            assert found, lines[at]
            mean, low, high = map(float, found.groups()[:3])  # read off the plan's curves (the test above)
            curve = curves[curves["target"].str.startswith(metric)]
            assert curve["low"].min() - 1e-3 <= low <= high <= curve["high"].max() + 1e-3
            assert curve["mean"].min() - 1e-3 <= mean <= curve["mean"].max() + 1e-3
            value = _reached(runs, arms, metric)
            assert tuple(map(float, found.groups()[3:6])) == pytest.approx(value, abs=6e-4)
            assert found.group(7) == ("met" if TARGETS[metric](value[0]) else "not met")
        if shown == "online":  # the share counts hits within the plan's epsilon: at 10% the second best is one too
            wide = SettingPlan("online", "cohv-ucb", "", Budget(1.0, "tokens"), PlanSpec((), epsilon=0.10),
                               (Forecast(Target("share", 0.6), (0.0, 0.0, 0.0)),))
            got = reached(wide, results).forecasts[0].reached
            assert got == pytest.approx(_reached(runs, arms, "share", epsilon=0.10))
            assert got[0] > _reached(runs, arms, "share")[0]


def _prices(folder: Path) -> Path:
    path = folder / "prices.yaml"
    path.write_text("'*': {tokens: 2.0}\n")
    return path


def test_a_plan_asked_otherwise_is_replaced_with_replace_and_kept_apart_with_name(tmp_path):
    """Other logs under the same dataset name with --target: refused naming --replace, which replaces the dataset's
    plan too (it used to replace nothing and stop: 'pass another --out'); --name plans into a folder of its own."""
    split = {"profiling_size": 30, "seed": 0}
    first = write_dataset(tmp_path / "a" / "three", spread_logs(3, n_instances=60, seed=3), split=split)
    other = write_dataset(tmp_path / "b" / "three", spread_logs(3, n_instances=60, seed=4), split=split)
    out = tmp_path / "advice"

    def advise(logs: Path, *extra: str):
        return RUNNER.invoke(app, ["advise", str(logs), "--target", "share>=0.6", "--methods", "cohv-ucb",
                                   "--repetitions", "4", "--out", str(out), "--quiet", *extra])

    assert advise(first).exit_code == 0
    plan = out / "plan" / "three_online" / "plan.csv"
    held = plan.read_bytes()
    refused = advise(other)
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1, refused.output
    assert refused.stderr.startswith(f"error: {plan}: holds another plan") and "--replace" in refused.stderr
    assert plan.read_bytes() == held
    replaced = advise(other, "--replace")
    assert replaced.exit_code == 0, replaced.output
    assert pd.read_csv(plan)["plan_key"].iloc[0] != pd.read_csv(io.BytesIO(held))["plan_key"].iloc[0]
    # a plan an earlier cabench wrote for this request (its key without the terms) is planned again, said so
    from cabench.advise_plan import parse_target
    from cabench.budget_plan import PlanSpec, plan_key
    from cabench.data.dataset import load_dataset

    asked = {"dataset": load_dataset(other).content_hash, "label": "three_online", "methods": ["cohv-ucb"]}
    legacy = plan_key(asked, PlanSpec((parse_target("share>=0.6"),)))
    held = pd.read_csv(plan)
    held.assign(plan_key=legacy).to_csv(plan, index=False)
    again = advise(other)
    assert again.exit_code == 0 and "(planned again: the plan there was an earlier cabench's, whose key did not " \
        "hold the objectives, cost unit and prices)" in again.stdout, again.output
    assert pd.read_csv(plan)["plan_key"].iloc[0] == held["plan_key"].iloc[0]
    for terms in (["--objectives", "accuracy,cost"], ["--prices", str(_prices(tmp_path))]):  # the same logs
        # on other terms: another plan (a plan in tokens was replaced by one in dollars, at exit 0, unsaid)
        kept = plan.read_bytes()
        refused = advise(other, *terms)
        assert refused.exit_code == 2 and refused.stderr.startswith(f"error: {plan}: holds another plan"), terms
        assert plan.read_bytes() == kept
    named = advise(first, "--name", "again")
    assert named.exit_code == 0, named.output
    assert (out / "plan" / "again_online" / "plan.csv").is_file() and pd.read_csv(plan).equals(
        pd.read_csv(out / "plan" / "three_online" / "plan.csv"))


def test_a_budget_too_small_for_one_setting_is_refused_before_any_runs_with_the_least_that_works(tmp_path):
    """At 3,000 tokens CoHV-UCB could run (rho >= 1) but CoPSI-R's first phase cannot sample 12 arms: advise
    refuses in one line before running either setting, naming the least budget that works in the budget's unit;
    that many tokens pass the check and one token fewer does not."""
    from cabench.config import parse_config
    from cabench.errors import CabenchError
    from cabench.plan import build_problem, check_budgets, with_budgets

    data = write_dataset(tmp_path / "evals", spread_logs(12, 60), split={"profiling_size": 30, "seed": 0})
    out = tmp_path / "out"
    result = RUNNER.invoke(app, ["advise", str(data), "--budget", "3000tokens", "--repetitions", "2", "--out",
                                 str(out), "--quiet"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    line = result.stderr.strip()
    assert line.startswith("error: cabench advise: budget.tokens: 3,000 tokens is too small (rho ")
    assert "is too small for CoPSI-R on 12 arms: the first phase cannot give every arm one sample" in line
    least = int(re.fullmatch(r".*\); state at least ([0-9,]+) tokens", line).group(1).replace(",", ""))
    assert least > 3000 and not (out / "results").exists()

    def check(tokens: int) -> None:
        cfg = parse_config({"name": "x", "dataset": str(data), "setting": "psi", "methods": ["copsi-r"],
                            "budget": {"tokens": tokens}, "repetitions": 2, "output": str(tmp_path / "x")}, "c.yaml")
        problem = build_problem(cfg)[0]
        check_budgets(with_budgets(cfg, problem), problem)

    check(least)
    with pytest.raises(CabenchError, match=f"state at least {least:,} tokens$"):
        check(least - 1)


def test_a_budget_too_small_for_both_settings_names_the_least_that_works_for_both(tmp_path):
    """Too small for CoHV-UCB's initial round and for CoPSI-R's first phase: the least budget advise names is the
    larger of the two, at which both settings pass the checks (it named CoHV-UCB's, which CoPSI-R then refused),
    and the reason given is that setting's (it gave CoHV-UCB's 'smallest workable rho is 1' beside CoPSI-R's
    larger budget)."""
    from cabench.config import parse_config
    from cabench.plan import build_problem, check_budgets, with_budgets

    data = write_dataset(tmp_path / "evals", spread_logs(12, 60), split={"profiling_size": 30, "seed": 0})
    result = RUNNER.invoke(app, ["advise", str(data), "--budget", "100tokens", "--out", str(tmp_path / "out"),
                                 "--quiet"])
    line = result.stderr.strip()
    assert result.exit_code == 2 and "too small for CoPSI-R on 12 arms: the first phase cannot give every arm" in (
        line), result.output
    least = int(re.fullmatch(r".*\); state at least ([0-9,]+) tokens", line).group(1).replace(",", ""))
    rho = float(re.fullmatch(r".*the smallest workable rho is ([0-9.]+)\).*", line).group(1))
    assert least == pytest.approx(load_dataset(data, terms=None).norm.budget(rho), rel=1e-3)  # rho: 3 decimals
    for setting, method in (("online", "cohv-ucb"), ("psi", "copsi-r")):
        cfg = parse_config({"name": "x", "dataset": str(data), "setting": setting, "methods": [method],
                            "budget": {"tokens": least}, "repetitions": 2, "output": str(tmp_path / "x")}, "c.yaml")
        problem = build_problem(cfg)[0]
        check_budgets(with_budgets(cfg, problem), problem)


def test_logs_of_one_configuration_are_refused_saying_so_before_any_work(tmp_path):
    """Inspect's own 3-sample log of one model: advise imports it, then says in one line that one configuration
    leaves nothing to choose (not an arm filter the user never gave, nor a normalisation the one profiling
    instance cannot fit), and runs nothing; a config on the same folder says the same."""
    log = ROOT / "tests" / "fixtures" / "third_party" / "inspect_convert" / "data_arc_qwen.eval"
    out = tmp_path / "out"
    result = RUNNER.invoke(app, ["advise", str(log), "--format", "inspect", "--set", "temperature=0", "--set",
                                 "max_new_tokens=512", "--budget", "5000tokens", "--out", str(out), "--quiet"])
    words = ("the logs have 1 configuration (ollama/qwen2.5:0.5b_t0.0_g512_direct); an experiment chooses among at "
             "least 2: add the logs of the configurations to compare (import them together), or tell runs of "
             "different settings apart with their metadata")
    assert result.exit_code == 2 and result.stderr == f"error: {out / 'data' / 'data_arc_qwen'}: {words}\n"
    assert not (out / "results").exists()
    config = tmp_path / "one.yaml"
    config.write_text(yaml.safe_dump({"name": "one", "dataset": str(out / "data" / "data_arc_qwen"),
                                      "setting": "online", "rho": [2], "methods": ["cohv-ucb"], "repetitions": 2,
                                      "objectives": ["accuracy", "cost"], "output": str(tmp_path / "res"),
                                      "split": {"profiling_size": 2, "seed": 0}}))
    result = RUNNER.invoke(app, ["run", str(config)])
    assert result.exit_code == 2 and result.stderr.strip().endswith(f"arms: {words}"), result.stderr


def test_tool_logs_that_need_metric_or_repeats_are_advised_on_with_them(tmp_path):
    """The refusals of a HELM safety suite (several scores) and of promptfoo --repeat output (each test run three
    times) name --metric and --repeats; advise takes both as data import does: the safety suite's decision is in
    its own units, and epochs keep every run, each question on one side of the split."""
    third = ROOT / "tests" / "fixtures" / "third_party"
    safety, repeated = third / "helm_safety" / "benchmark_output", third / "promptfoo_repeat" / "results.json"
    common = ["--budget", "2000tokens", "--repetitions", "3", "--methods", "cohv-ucb", "--quiet"]
    refused = RUNNER.invoke(app, ["advise", str(safety), "--format", "helm", "--out", str(tmp_path / "a"), *common])
    assert refused.exit_code == 2 and "pass --metric with one of: art_claude_score, art_gpt_score, art_score" in (
        refused.stderr)
    result = RUNNER.invoke(app, ["advise", str(safety), "--format", "helm", "--metric", "art_score", "--out",
                                 str(tmp_path / "a"), *common])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("benchmark_output: 3 configurations x 4 instances (2 profiling, 2 evaluation)")
    # both evaluation instances right: no normal interval (s = 0), Wilson's for 2 of 2 is (2 / (2 + z²), 1)
    assert "  per call: accuracy 1.000 (0.342–1.000), 1.47 ± 0.106 s, 74 ± 17 tokens\n" in result.stdout
    refused = RUNNER.invoke(app, ["advise", str(repeated), "--format", "promptfoo", "--out", str(tmp_path / "b"),
                                  *common])
    assert refused.exit_code == 2 and "pass --repeats latest, first or epochs" in refused.stderr
    result = RUNNER.invoke(app, ["advise", str(repeated), "--format", "promptfoo", "--repeats", "epochs", "--out",
                                 str(tmp_path / "b"), *common])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("results: 4 configurations x 9 instances (3 profiling, 6 evaluation)")
    meta = yaml.safe_load((tmp_path / "b" / "data" / "results" / "dataset.yaml").read_text())
    assert meta["provenance"]["options"]["repeats"] == "epochs" and meta["provenance"]["repeats"]["pairs"] == 12
    used = RUNNER.invoke(app, ["advise", str(tmp_path / "b" / "data" / "results"), "--repeats", "first", "--out",
                               str(tmp_path / "c"), *common])
    assert used.exit_code == 2 and used.stderr.endswith(
        "already a cabench dataset, used as it is; drop --mapping, --format, --set, --repeats and --metric\n")


def test_the_f1_reached_is_never_said_to_lie_beyond_1(tmp_path):
    """Four configurations, 30 profiling instances: CoPSI-R's F1 at the planned budget is 0.960 with a normal
    half-width of 0.052, whose upper end 1.012 no F1 can reach; the interval said is [mean - half, 1]."""
    data = write_dataset(tmp_path / "evals", spread_logs(4, 60), split={"profiling_size": 30, "seed": 0})
    out = tmp_path / "advice"
    result = RUNNER.invoke(app, ["advise", str(data), "--target", "f1>=0.9", "--methods", "copsi-r", "--repetitions",
                                 "10", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    found = re.search(r"f1 predicted .*, reached (\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]: met", result.stdout)
    assert found, result.stdout
    (runs_csv,) = (out / "results").glob("*/runs.csv")
    f1 = pd.read_csv(runs_csv)["f1"]
    half = 1.959963984540054 * f1.std() / math.sqrt(len(f1))
    assert f1.mean() + half > 1
    assert tuple(map(float, found.groups())) == pytest.approx((f1.mean(), f1.mean() - half, 1.0), abs=6e-4)


def test_a_target_on_a_handful_of_profiling_questions_is_refused_before_anything_runs(tmp_path):
    """promptfoo's --repeat file, its runs kept as epochs: 3 questions, 1 of them profiling. A plan resamples that
    one question into itself (a point interval every draw 'reaches'); it is refused in one line, nothing run."""
    source = ROOT / "tests" / "fixtures" / "third_party" / "promptfoo_repeat" / "results.json"
    out = tmp_path / "advice"
    result = RUNNER.invoke(app, ["advise", str(source), "--format", "promptfoo", "--repeats", "epochs", "--target",
                                 "f1>=0.9", "--repetitions", "10", "--out", str(out), "--quiet"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert ("split.profiling_size: 1 profiling question is too few to plan from (at least 20)" in result.stderr
            and "or run at a --budget" in result.stderr)
    assert not (out / "results").exists() and not list((out / "plan").glob("*/plan.csv"))


def test_a_dataset_folder_of_epochs_without_a_split_is_split_by_question(tmp_path):
    """A folder imported with --repeats epochs whose dataset.yaml has no split (made by hand): advise halves its 3
    questions, not its 9 runs (4 profiling runs would ask for 4 of 3 questions), each question's runs on one side."""
    source = ROOT / "tests" / "fixtures" / "third_party" / "promptfoo_repeat" / "results.json"
    folder = tmp_path / "runs"
    imported = RUNNER.invoke(app, ["data", "import", str(source), "--format", "promptfoo", "--repeats", "epochs",
                                   "--out", str(folder)])
    assert imported.exit_code == 0, imported.output
    meta = yaml.safe_load((folder / "dataset.yaml").read_text())
    del meta["split"]
    (folder / "dataset.yaml").write_text(yaml.safe_dump(meta))
    result = RUNNER.invoke(app, ["advise", str(folder), "--budget", "200tokens", "--repetitions", "2", "--methods",
                                 "cohv-ucb", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert ("profiling split: 1 of 3 questions (half; the default 200 needs at least 400); each question's runs "
            "<id>#k (9 instances) on one side") in result.stderr
    assert result.stdout.startswith("runs: 4 configurations x 9 instances (3 profiling, 6 evaluation)")


def _spread(folder: Path, seed: int) -> Path:
    """Four configurations x 60 instances of :func:`spread_logs` as ``folder/base.csv`` (one dataset name, whatever
    the seed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "base.csv"
    spread_logs(4, 60, seed=seed).to_csv(path, index=False)
    return path


def _advised(logs: Path, out: Path, budget: str, *extra: str):
    return RUNNER.invoke(app, ["advise", str(logs), "--budget", budget, "--repetitions", "3", "--out", str(out),
                               "--quiet", *extra])


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _replace_refused(logs: Path, out: Path) -> str:
    """``advise LOGS --replace`` into ``out``, refused in one line with every file of ``out`` as it was; the line."""
    before = _files(out)
    result = _advised(logs, out, "20000tokens", "--replace")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert _files(out) == before
    return result.stderr


def test_a_refused_replace_leaves_the_dataset_it_would_have_replaced(tmp_path):
    """--replace with a budget too small for one call: the new logs' import had already replaced OUT/data/base
    when the budget was refused, so the results no longer matched their dataset and the first command, run again,
    was refused. Now the replaced dataset comes back whatever refuses the advice, and nothing is left beside it."""
    first, other, out = _spread(tmp_path / "a", 1), _spread(tmp_path / "b", 2), tmp_path / "advice"
    few = tmp_path / "c" / "base.csv"  # 30 instances: 15 profiling, too few to plan from
    few.parent.mkdir()
    spread_logs(4, 30, seed=3).to_csv(few, index=False)
    assert _advised(first, out, "20000tokens").exit_code == 0
    before = _files(out)
    for logs, extra in ((other, ("--budget", "100tokens")), (few, ("--target", "f1>=0.9"))):
        result = RUNNER.invoke(app, ["advise", str(logs), "--repetitions", "3", "--out", str(out), "--quiet",
                                     "--replace", *extra])
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
        assert ("too small" if extra[0] == "--budget" else "15 profiling instances are too few") in result.stderr
        assert _files(out) == before and sorted(p.name for p in (out / "data").iterdir()) == ["base"]
    again = _advised(first, out, "20000tokens")
    assert again.exit_code == 0, again.output


def test_replace_removes_the_results_computed_on_the_replaced_dataset_and_says_so(tmp_path):
    """Advice at two budgets, then other logs of the same name at the first with --replace: the second budget's
    results, computed on the replaced logs, stayed and the report set them beside the new ones as the same data.
    Now --replace removes them (it says 'replace it and its results'), in a warning line naming them."""
    first, other, out = _spread(tmp_path / "a", 1), _spread(tmp_path / "b", 2), tmp_path / "advice"
    for budget in ("20000tokens", "40000tokens"):
        assert _advised(first, out, budget).exit_code == 0
    names = sorted(p.name for p in (out / "results").iterdir() if p.is_dir())
    assert names == ["base_identification_20000tokens", "base_identification_40000tokens",
                     "base_online_20000tokens", "base_online_40000tokens"]
    result = _advised(other, out, "20000tokens", "--replace")
    assert result.exit_code == 0, result.output
    assert ("warning: --replace: removed 2 result folders computed on the replaced dataset "
            f"{out / 'data' / 'base'}: base_identification_40000tokens, base_online_40000tokens\n") in result.stderr
    assert sorted(p.name for p in (out / "results").iterdir() if p.is_dir()) == [
        "base_identification_20000tokens", "base_online_20000tokens"]
    report = (out / "results" / "REPORT.md").read_text()
    assert "40000tokens" not in report and "base_online_20000tokens" in report
    kept = pd.read_csv(out / "data" / "base" / "logs.csv.gz")
    assert kept["correct"].sum() == spread_logs(4, 60, seed=2)["correct"].sum()


def test_replace_never_deletes_what_an_import_did_not_write_and_out_stays_out_of_the_source(tmp_path):
    """A user's notes in OUT/data/base went with the replaced dataset, and --out inside a dataset folder advised on
    was accepted (a later --replace of that dataset deleted the results below it). Both are refused in one line."""
    first, other, out = _spread(tmp_path / "a", 1), _spread(tmp_path / "b", 2), tmp_path / "advice"
    assert _advised(first, out, "20000tokens").exit_code == 0
    dataset = out / "data" / "base"
    inside = RUNNER.invoke(app, ["advise", str(dataset), "--budget", "20000tokens", "--repetitions", "3", "--out",
                                 str(dataset / "adv"), "--quiet"])
    assert inside.exit_code == 2 and inside.stderr == (f"error: --out {dataset / 'adv'}: inside the dataset {dataset} "
                                                       "it reads; pass another --out\n")
    assert not (dataset / "adv").exists()
    (dataset / "notes.txt").write_text("mine")
    assert _replace_refused(other, out) == (
        f"error: {dataset}: holds notes.txt beside the dataset, which an import does not write; --replace would "
        "delete them: move them, or pass another --out\n")


def test_configurations_dropped_at_import_are_said_under_quiet_and_in_both_reports(tmp_path):
    """cfg00 lacks a score on two instances; with --missing drop-configs it was dropped with a progress line that
    --quiet hid and no word in either report, though it may be the configuration to pay for. Now a warning names
    it, and both reports say what the import left out."""
    logs = spread_logs(4, 60, seed=1)
    logs["correct"] = logs["correct"].astype(float)
    logs.loc[(logs["config_id"] == "cfg00") & logs["instance_id"].isin(["q003", "q007"]), "correct"] = np.nan
    source = tmp_path / "holes.csv"
    logs.to_csv(source, index=False)
    out = tmp_path / "advice"
    result = _advised(source, out, "20000tokens", "--missing", "drop-configs")
    assert result.exit_code == 0, result.output
    said = ("dropped 1 configuration with missing instances (--missing drop-configs): cfg00 (2 of 60 instances "
            "missing)")
    assert f"warning: {said}\n" in result.stderr
    report = (out / "results" / "REPORT.md").read_text()
    line = ("- dropped at import: 1 configuration with missing instances (--missing drop-configs), not compared "
            "here: cfg00 (2 of 60 instances missing)")
    assert report.count(line) == 2  # the online and the identification experiment
    page = (out / "results" / "REPORT.html").read_text()
    assert page.count("<p class=\"dropped\">Dropped at import: 1 configuration with missing instances") == 2


def test_replace_refuses_results_it_cannot_remove_whole_and_keeps_the_reports_true(tmp_path):
    """The results --replace removes with the replaced dataset: one holding a user's notes, one another cabench
    process is writing to, and one reached through a link are refused before anything is replaced (they were
    deleted, the lock ignored); a config.yaml that is no mapping is no run of the dataset. When no budget is run
    (a target nothing reaches), the reports no longer describe the results removed."""
    first, other, out = _spread(tmp_path / "a", 1), _spread(tmp_path / "b", 2), tmp_path / "advice"
    for budget in ("20000tokens", "40000tokens"):
        assert _advised(first, out, budget).exit_code == 0
    held = out / "results" / "base_online_40000tokens"
    (held / "my_notes.md").write_text("mine")
    assert _replace_refused(other, out) == (
        f"error: {held}: results computed on the replaced dataset {out / 'data' / 'base'} that also hold my_notes.md, "
        "which a run does not write; --replace would delete them: move them, or pass another --out\n")
    (held / "my_notes.md").unlink()
    with folder_lock(held):
        assert "another cabench run is writing to this results folder" in _replace_refused(other, out)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(held, elsewhere)
    (out / "results" / "base_online_40000tokens").symlink_to(elsewhere, target_is_directory=True)
    assert "reached through a link; --replace removes only folders" in _replace_refused(other, out)
    (out / "results" / "base_online_40000tokens").unlink()
    shutil.move(elsewhere, held)
    (out / "results" / "odd").mkdir()
    (out / "results" / "odd" / "config.yaml").write_text("- a list\n- not a config\n")
    result = RUNNER.invoke(app, ["advise", str(other), "--target", "f1>=0.9999", "--methods", "copsi-r",
                                 "--repetitions", "3", "--out", str(out), "--quiet", "--replace"])
    assert result.exit_code == 0, result.output
    assert "removed 4 result folders computed on the replaced dataset" in result.stderr
    assert sorted(p.name for p in (out / "results").iterdir()) == ["odd"]  # nothing left to report on
    assert not any((out / "results" / name).exists() for name in ("REPORT.md", "REPORT.html"))


def test_logs_the_import_refuses_leave_no_folder_behind(tmp_path):
    """An empty CSV left an empty ``OUT/data`` (and ``OUT``) behind its one-line refusal; a folder that was there
    before stays."""
    logs = tmp_path / "evals.csv"
    logs.write_text("")
    for out in (tmp_path / "new" / "advice", tmp_path):
        result = RUNNER.invoke(app, ["advise", str(logs), "--budget", "1e5tokens", "--out", str(out)])
        assert result.exit_code == 2 and "evals.csv: an empty file" in result.stderr, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evals.csv"]


def test_a_target_out_of_reach_says_every_target_of_its_setting_and_how_to_run_at_the_others(tmp_path):
    """Two targets on one setting, one out of reach: only that one was said (exit 0, nothing run), though the plan
    had a budget for the other. Now each is said with its plan, and which --target to leave out to run."""
    result = RUNNER.invoke(app, ["advise", str(_spread(tmp_path, 1)), "--target", "f1>=0.9999", "--target",
                                 "f1>=0.5", "--methods", "copsi-r", "--repetitions", "3", "--out",
                                 str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("plan, identification: CoPSI-R "))
    plan = pd.read_csv(next((tmp_path / "out" / "plan").glob("*/plan.csv")))
    reach = plan.set_index("target")["rho"]
    assert not np.isfinite(reach["f1>=0.9999"]) and np.isfinite(reach["f1>=0.5"])  # the plan: one in reach
    assert "f1>=0.9999 not reached by" in line and "; f1>=0.5 at " in line
    last = float(plan["max_rho"].iloc[0]) / int(plan["instances"].iloc[0])  # the grid's last budget, under 10x
    assert last < 10 and f" ({last:.3g}x the exhaustive evaluation);" in line  # it said the cap, 10x
    assert line.endswith("; not run (leave out --target f1>=0.9999 to run at the others)")
    assert not (tmp_path / "out" / "results").exists() or not any((tmp_path / "out" / "results").glob("*/runs.csv"))


def test_a_price_table_lacking_a_model_is_named_as_given(home, first, tmp_path):
    """--prices my_prices.yaml without 'boreal-pro': the error named the dataset folder advise had imported into
    (a folder cabench wrote), not the user's file."""
    table = {k: v for k, v in PRICES.items() if k != "boreal-pro"}
    (tmp_path / "my_prices.yaml").write_text(yaml.safe_dump(table))
    result = RUNNER.invoke(app, ["advise", str(home / "advice" / "data" / "evals"), "--prices",
                                 str(tmp_path / "my_prices.yaml"), "--budget", "0.1usd", "--repetitions", "2",
                                 "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 2 and result.stderr == (
        f"error: --prices {tmp_path / 'my_prices.yaml'}: no price for model 'boreal-pro'; add it (or a pattern such "
        "as 'boreal*' matching it)\n")
    assert not (tmp_path / "out" / "results").exists()
    # the model written otherwise in case only ('Boreal-Pro'): prices match as written, and the near entry is named
    (tmp_path / "my_prices.yaml").write_text(yaml.safe_dump({**table, "Boreal-Pro": PRICES["boreal-pro"]}))
    result = RUNNER.invoke(app, ["advise", str(home / "advice" / "data" / "evals"), "--prices",
                                 str(tmp_path / "my_prices.yaml"), "--budget", "0.1usd", "--repetitions", "2",
                                 "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 2 and result.stderr.endswith(
        "as 'boreal*' matching it); the entry 'Boreal-Pro' differs from it in case only: write it as the logs do\n")


def test_a_budget_written_as_run_writes_it_says_how_advise_reads_it():
    """`advise --budget usd=2` (run's form) was refused without a word of the form advise reads."""
    with pytest.raises(CabenchError, match=r"^--budget usd=2: expected an amount and a unit, .*; one budget is its "
                                           r"amount, then its unit: 2usd$"):
        parse_budget("usd=2")
    with pytest.raises(CabenchError, match=r"; one budget is its amount, then its unit: 0.5usd$"):  # not '0.5,2usd'
        parse_budget("usd=0.5,2")


@pytest.mark.parametrize("text, meant", [("5dollars", "usd"), ("5 Token", "tokens"),
                                         ("300completion", "completion_tokens")])
def test_a_budget_in_other_words_for_its_unit_says_which_unit(text, meant):
    """One list of other words for the cost units serves a config's budget keys, cost: and --budget alike."""
    with pytest.raises(CabenchError, match=f"did you mean '{meant}'\\?$"):
        parse_budget(text)


def test_spends_charged_at_profiling_means_say_when_evaluation_calls_cost_far_more(home, first, tmp_path):
    """Identification with deterministic costs charges each call its configuration's profiling mean: with one
    configuration's evaluation calls 20 times dearer, advise said "spent 99.6% of $0.50" while the replayed calls
    cost up to twice the budget. The line, recommend and the report say so, with the ratio computed here by hand."""
    import shutil

    logs = pd.read_csv(home / "evals.csv")
    evaluated = set(load_dataset(home / "advice" / "data" / "evals").evaluation_ids)
    name = str(logs["run"].iloc[0])
    logs.loc[(logs["run"] == name) & logs["question"].isin(evaluated), "output_tokens"] *= 20
    logs.to_csv(tmp_path / "evals.csv", index=False)
    for file in ("mapping.yaml", "prices.yaml"):
        shutil.copy(home / file, tmp_path / file)
    result = _advise(tmp_path)
    assert result.exit_code == 0, result.output
    dear, _ = _per_call(tmp_path, name)
    rows = logs[(logs["run"] == name) & ~logs["question"].isin(evaluated)]
    price = PRICES.get(rows["model_name"].iloc[0]) or PRICES["atlas-*"]
    profiling = float(((rows["input_tokens"] * price["input"] + rows["output_tokens"] * price["output"]) / 1e6).mean())
    said = (f"1 configuration costs 1.25 times that or more per call (up to {dear / profiling:.3g} times: {name}, "
            f"{amount(dear, 'usd')} against c_i = {amount(profiling, 'usd')})")
    (line,) = [line for line in result.output.splitlines() if line.startswith("identification:")]
    assert f"; note: deterministic costs charge each call its configuration's profiling mean c_i; on the " \
           f"evaluation split {said}" in line.replace(" — note:", "; note:"), line
    report = (tmp_path / "advice" / "results" / "REPORT.md").read_text()
    recommended = RUNNER.invoke(app, ["recommend", str(tmp_path / "advice" / "results")])
    assert said in report and said in recommended.output
    assert "costs 1.25 times that" not in first.output  # the example's own logs: no note


def test_methods_of_your_own_run_in_the_setting_they_fit(home, first, tmp_path, monkeypatch):
    """README offers methods of your own as module:object; advise refused them as "not a method"."""
    monkeypatch.syspath_prepend(str(EXAMPLE.parent.parent / "examples"))
    dataset = tmp_path / "evals"
    shutil.copytree(home / "advice" / "data" / "evals", dataset)
    common = ["advise", str(dataset), "--prices", str(home / "prices.yaml"), "--budget", "0.2usd", "--repetitions",
              "2", "--quiet"]
    result = RUNNER.invoke(app, [*common, "--methods", "my_methods:sqrt_cost_ucb,my_methods:front_loaded",
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    for setting, method in (("online", "my_methods:sqrt_cost_ucb"), ("psi", "my_methods:front_loaded")):
        shown = "online" if setting == "online" else "identification"
        runs = pd.read_csv(tmp_path / "out" / "results" / f"evals_{shown}_0.2usd" / "runs.csv")
        assert set(runs["method"]) == {method}, (setting, set(runs["method"]))
    refused = RUNNER.invoke(app, [*common, "--methods", "my_methods:nothing_here", "--out", str(tmp_path / "no")])
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1, refused.output
    assert refused.stderr.startswith("error: --methods: methods: 'my_methods' has no 'nothing_here'")
    assert not (tmp_path / "no").exists()
