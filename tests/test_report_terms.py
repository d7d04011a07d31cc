"""The report on the user's terms: objectives and cost unit named, budgets and spends in that unit, the
configurations that matter in real units with 95% intervals, and the returned sets' relative hypervolume."""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from cabench import registry
from cabench.analysis import exploited_at_largest, key_configurations, relative_hypervolume
from cabench.config import load_config
from cabench.report import build_report
from cabench.results import Experiment
from cabench.runner import run_experiment
from tests.conftest import ROOT

TERMS = ROOT / "configs" / "terms"
NUMBER = r"\$?([-+0-9.e,]+)"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("terms_report")
    for config, overrides in (("gsm8k_dollars_psi.yaml", {}),
                              ("gsm8k_dollars_online.yaml", {"budget": {"usd": [0.01, 0.02]},
                                                             "methods": ["cohv-ucb", "uniform"]})):
        cfg = load_config(TERMS / config, overrides={"repetitions": 3, "output": str(root / config[:-5]),
                                                     **overrides})
        run_experiment(cfg, quiet=True)
    return root


@pytest.fixture(scope="module")
def report(root) -> str:
    return build_report(root)


def section(report: str, label: str) -> str:
    start = report.index(f"## Experiment `{label}`")
    end = report.find("\n## ", start + 1)
    return report[start:end if end > 0 else None]


def table(text: str, heading: str) -> pd.DataFrame:
    """The first Markdown table after ``heading``, as text cells."""
    lines = text[text.index(heading):].splitlines()
    rows = [ln for ln in itertools.dropwhile(lambda ln: not ln.startswith("|"), lines)]
    rows = list(itertools.takewhile(lambda ln: ln.startswith("|"), rows))
    cells = [[c.strip() for c in ln.strip("|").split(" | ")] for ln in rows]
    return pd.DataFrame(cells[2:], columns=cells[0])


def plus_minus(cell: str) -> tuple[float, float]:
    mean, half = re.fullmatch(rf"{NUMBER} ± {NUMBER}", cell).groups()
    return float(mean.replace(",", "")), float(half.replace(",", ""))


def test_sections_name_objectives_cost_unit_and_budgets_in_dollars(root, report):
    for label in ("gsm8k_dollars_psi", "gsm8k_dollars_online"):
        text = section(report, label)
        assert ("- objectives: accuracy, latency, cost (each normalised on the profiling split, larger is better); "
                "costs, budgets and spends in USD") in text
    psi = section(report, "gsm8k_dollars_psi")
    assert "(B ∈ {$0.02, $0.10, $0.50})" in psi  # the budgets as the config states them
    runs = pd.read_csv(root / "gsm8k_dollars_psi" / "runs.csv")
    summary = table(psi, "### Summary")
    assert set(summary["B"]) == {"$0.02", "$0.10", "$0.50"}
    for _, row in summary.iterrows():
        spend, share = re.fullmatch(r"\$([0-9.e-]+) \(([0-9.]+)%\)", row["spent"]).groups()
        g = runs[(runs["method"].map(registry.display) == row["method"]) & (runs["cost_mode"] == row["cost mode"])
                 & (runs["rho"].map(lambda r: f"{r:g}") == row["ρ"])]
        assert len(g) == 3 and float(spend) == pytest.approx(g["spend_usd"].mean(), rel=1e-3)
        assert float(share) == pytest.approx(100 * (g["spend_usd"] / g["budget_usd"]).mean(), abs=0.05)
    table1 = next(ln for ln in report.splitlines() if ln.startswith("| GSM8K | surrogate | 108 |"))
    data = pd.read_csv(root / "gsm8k_dollars_psi" / "dataset.csv").iloc[0]
    low, high = re.search(r"\| \$([0-9.e-]+)–\$([0-9.e-]+) \|$", table1).groups()  # profiling costs c_i in dollars
    assert float(low) == pytest.approx(data["cost_min"], rel=1e-3) and float(high) == pytest.approx(data["cost_max"],
                                                                                                    rel=1e-3)
    assert "None" not in report


@pytest.mark.parametrize("label", ["gsm8k_dollars_psi", "gsm8k_dollars_online"])
def test_configurations_that_matter_in_real_units(root, report, label):
    arms = pd.read_csv(root / label / "arms.csv").set_index("config_id")
    shown = table(section(report, label), "### Configurations that matter")
    shown["config_id"] = shown["configuration"].str.strip("`")
    shown = shown.set_index("config_id")
    truth = set(arms.index[arms["pareto"] == 1])
    best = arms.index[arms["optimal"] == 1][0]
    assert truth | {best} <= set(shown.index)
    assert all("Pareto" in shown.loc[c, "why"] for c in truth) and "max-ν" in shown.loc[best, "why"]
    for name in shown.index:
        for objective, heading in (("accuracy", "mean accuracy"), ("latency", "latency (normalised)"),
                                   ("cost", "cost (normalised)")):  # three decimals
            assert float(shown.loc[name, heading]) == pytest.approx(
                arms.loc[name, f"mu_{objective}"], abs=6e-4)
        for header, column, within in (("accuracy per call", "accuracy", {"abs": 6e-4}),  # three decimals
                                       ("latency (s) per call", "latency_s", {"rel": 6e-3}),  # three digits
                                       ("tokens per call", "tokens", {"abs": 0.06}),  # one decimal
                                       ("USD per call", "usd", {"rel": 6e-3})):  # three digits
            mean, half = plus_minus(shown.loc[name, header])
            assert half > 0
            assert mean == pytest.approx(arms.loc[name, column], **within)
            assert half == pytest.approx(arms.loc[name, f"{column}_ci"], **within)


def test_most_exploited_configuration_at_the_largest_budget(root, report):
    runs = pd.read_csv(root / "gsm8k_dollars_online" / "runs.csv")
    shown = table(section(report, "gsm8k_dollars_online"), "### Configurations that matter")
    last = runs[runs["rho"] == runs["rho"].max()]
    for method, g in last.groupby("method"):
        counts = g["exploited"].value_counts()
        top = sorted(counts[counts == counts.max()].index)[0]
        row = shown[shown["configuration"] == f"`{top}`"].iloc[0]
        share = 100 * counts.max() / len(g)
        said = f"exploited by {registry.display(method)} ({share:.0f}% of repetitions)"
        assert (said in row["why"]) == registry.prefers(method, "online")  # a round robin exploits nothing
    assert not shown["why"].str.contains("Uniform").any()


def _online(runs: pd.DataFrame, arms: pd.DataFrame) -> Experiment:
    """An online experiment of ``runs`` whose selections pull each repetition's ``exploited`` arm twice and every
    other once: it is the most-pulled arm alone."""
    runs = runs.assign(rep=runs.groupby(["method", "rho"]).cumcount())
    selections = pd.DataFrame([{"method": r.method, "rho": r.rho, "rep": r.rep, "config_id": a,
                                "pulls": 2 if a == r.exploited else 1}
                               for r in runs.itertuples() for a in arms["config_id"]])
    return Experiment(Path("."), {"setting": "online"}, runs, selections, arms, {}, None)


def test_most_exploited_is_counted_at_each_methods_largest_budget():
    arms = pd.DataFrame({"config_id": ["X", "Y", "Z"], "mu_accuracy": [0.9, 0.5, 0.4],
                         "mu_efficiency": [0.2, 0.6, 0.5], "pareto": [1, 1, 0], "optimal": [0, 1, 0]})
    runs = pd.DataFrame({"method": ["cohv-ucb"] * 5 + ["uniform"] * 4, "rho": [2, 2, 8, 8, 8, 2, 2, 4, 4],
                         "exploited": ["X", "X", "Z", "Y", "Z", "X", "X", "Z", "Y"]})
    e = _online(runs, arms)
    assert exploited_at_largest(e) == {"cohv-ucb": (("Z",), 2 / 3), "uniform": (("Y", "Z"), 0.5)}  # a tie: both
    rows = key_configurations(e).set_index("config_id")["why"].to_dict()
    assert rows == {"X": "Pareto", "Y": "Pareto; max-ν", "Z": "exploited by CoHV-UCB (67% of repetitions)"}
    tied = runs.assign(exploited=["X", "X", "Z", "X", "Y", "X", "X", "Z", "Y"])  # CoHV-UCB: X, Y, Z once each
    e = _online(tied, arms)
    rows = key_configurations(e).set_index("config_id")["why"].to_dict()
    assert rows == {k: f"{v}exploited by CoHV-UCB (33% of repetitions)" for k, v in
                    (("X", "Pareto; "), ("Y", "Pareto; max-ν; "), ("Z", ""))}
    even = e.selections.assign(pulls=1)  # every repetition ends with one pull of each: none is exploited
    e = Experiment(Path("."), {"setting": "online"}, e.runs, even, arms, {}, None)
    assert exploited_at_largest(e) == {}
    assert key_configurations(e).set_index("config_id")["why"].to_dict() == {"X": "Pareto", "Y": "Pareto; max-ν"}


def test_a_round_robins_most_pulled_configuration_is_not_a_configuration_that_matters():
    """Uniform pulls every configuration in turn, so its most-pulled one is the first in the turn order (here W,
    in every repetition): no reason to list W, and no 'exploited by Uniform'."""
    arms = pd.DataFrame({"config_id": ["W", "X", "Y"], "mu_accuracy": [0.1, 0.9, 0.5],
                         "mu_efficiency": [0.1, 0.2, 0.6], "pareto": [0, 1, 1], "optimal": [0, 0, 1]})
    runs = pd.DataFrame({"method": ["cohv-ucb"] * 2 + ["uniform"] * 2, "rho": [4, 4, 4, 4],
                         "exploited": ["Y", "Y", "W", "W"]})
    e = _online(runs, arms)
    assert exploited_at_largest(e)["uniform"] == (("W",), 1.0)
    rows = key_configurations(e).set_index("config_id")["why"].to_dict()
    assert rows == {"X": "Pareto", "Y": "Pareto; max-ν; exploited by CoHV-UCB (100% of repetitions)"}


def _volume(points: np.ndarray) -> float:
    """Union of the boxes [0, p] by inclusion-exclusion (reference point 0)."""
    total = 0.0
    for k in range(1, len(points) + 1):
        for subset in itertools.combinations(points, k):
            total += (-1) ** (k + 1) * float(np.prod(np.min(subset, axis=0).clip(min=0)))
    return total


def _nondominated(points: np.ndarray) -> np.ndarray:
    keep = [p for p in points if not any((q >= p).all() and (q > p).any() for q in points)]
    return np.unique(np.array(keep).reshape(-1, points.shape[1]), axis=0)


def test_relative_hypervolume_by_hand_on_a_tiny_case():
    # A and B are the true Pareto set; C is dominated by both; H(P*) = 0.12 + 0.18 - 0.5*0.3*0.5 = 0.225
    arms = pd.DataFrame({"config_id": ["A", "B", "C"], "mu_accuracy": [0.8, 0.5, 0.4],
                         "mu_latency": [0.3, 0.6, 0.2], "mu_cost": [0.5, 0.6, 0.4], "pareto": [1, 1, 0]})
    returned = {0: ["A"], 1: ["A", "C"], 2: ["B", "C"], 3: []}  # repetition 3 returns nothing
    runs = pd.DataFrame({"method": "copsi", "cost_mode": "deterministic", "rho": 8.0, "rep": list(returned)})
    selections = pd.DataFrame([{"method": "copsi", "cost_mode": "deterministic", "rho": 8.0, "rep": rep,
                                "config_id": name, "returned": int(name in names)}
                               for rep, names in returned.items() for name in "ABC"])
    e = Experiment(Path("."), {"setting": "psi"}, runs, selections, arms, {}, None)
    (row,) = relative_hypervolume(e).to_dict("records")
    by_hand = [0.12 / 0.225, 0.12 / 0.225, 0.18 / 0.225, 0.0]
    assert row["n"] == 4 and row["mean"] == pytest.approx(np.mean(by_hand), abs=1e-12)
    assert row["se"] == pytest.approx(np.std(by_hand, ddof=1) / 2, abs=1e-12)
    # computed once per experiment (both reports read it): a caller's change does not reach the next caller, and a
    # new experiment (dataclasses.replace: other runs) computes its own
    first = relative_hypervolume(e)
    first.loc[0, "mean"] = -1.0
    assert relative_hypervolume(e).loc[0, "mean"] == pytest.approx(np.mean(by_hand), abs=1e-12)
    fewer = dataclasses.replace(e, runs=runs[runs["rep"] < 2], given_selections=selections[selections["rep"] < 2])
    assert relative_hypervolume(fewer).loc[0, "mean"] == pytest.approx(0.12 / 0.225, abs=1e-12)


def test_report_relative_hypervolume_is_the_returned_sets(root, report):
    arms = pd.read_csv(root / "gsm8k_dollars_psi" / "arms.csv").set_index("config_id")
    mu = arms[["mu_accuracy", "mu_latency", "mu_cost"]]
    truth = _volume(_nondominated(mu[arms["pareto"] == 1].to_numpy()))
    selections = pd.read_csv(root / "gsm8k_dollars_psi" / "selections.csv.gz")
    summary = table(section(report, "gsm8k_dollars_psi"), "### Summary")
    assert len(summary) == 4 * 2 * 3
    for _, row in summary.iterrows():
        s = selections[(selections["method"].map(registry.display) == row["method"])
                       & (selections["cost_mode"] == row["cost mode"])
                       & (selections["rho"].map(lambda r: f"{r:g}") == row["ρ"])]
        ratios = []
        for _, rep in s.groupby("rep"):
            chosen = mu.loc[rep.loc[rep["returned"] == 1, "config_id"]].to_numpy()
            ratios.append(_volume(_nondominated(chosen)) / truth if len(chosen) else 0.0)
        mean, _ = plus_minus(row["H(P_hat)/H(P*)"])
        assert len(ratios) == 3 and mean == pytest.approx(np.mean(ratios), abs=5e-4)


def test_table_1_compares_the_paper_with_the_experiment_on_its_terms(tmp_path):
    """GSM8K on three objectives in dollars beside GSM8K on the paper's terms: Table 1's surrogate row came from the
    dollar experiment (first by name: 16 Pareto configurations, dollar costs) right under the paper's row (7,
    tokens). The row on the paper's terms stands under the paper's now, and the other is named by its experiment."""
    from cabench.report import build_report

    for name, path, over in (("gsm8k_dollars_psi", ROOT / "configs" / "terms" / "gsm8k_dollars_psi.yaml",
                              {"repetitions": 2}),
                             ("gsm8k_online", ROOT / "configs" / "gsm8k_online_quick.yaml",
                              {"repetitions": 2, "rho": [2]})):
        run_experiment(load_config(path, overrides={"output": str(tmp_path / name), **over}), quiet=True)
    report = build_report(tmp_path)
    table = report[report.index("## Table 1"):].split("\n## ")[0]
    rows = [line for line in table.splitlines() if line.startswith("| GSM8K")]
    assert rows[0].startswith("| GSM8K | surrogate | 108 |") and "| 7 |" in rows[0]
    assert rows[1].startswith("| GSM8K | paper | 108 |")
    assert len(rows) == 3 and "gsm8k_dollars_psi" in report[report.index("## Table 1"):].split("\n## ")[0]


def test_the_data_has_a_row_per_price_table_of_one_dataset(tmp_path):
    """Two experiments of one dataset in dollars at other prices (GPT-2 ten times dearer) shared one row of the
    data, its profiling costs c_i the first's, wrong for the other; each price table now has its row, named by its
    experiment, with its own range."""
    path = ROOT / "configs" / "terms" / "gsm8k_dollars_online.yaml"
    prices = load_config(path).terms.describe()["prices"]
    for name, gpt2 in (("cheap", 0.02), ("dear", 0.2)):
        cfg = load_config(path, overrides={"name": name, "output": str(tmp_path / name), "repetitions": 2,
                                           "budget": {"usd": [0.05]},
                                           "methods": ["uniform"], "trajectories": None,
                                           "prices": {**prices, "GPT-2": {"tokens": gpt2}}})
        run_experiment(cfg, quiet=True)
    report = build_report(tmp_path)
    data = table(report, next(h for h in ("## The data", "## Table 1: the data") if h in report))
    assert len(data) == 2 and data["data"].iloc[1].endswith("(`dear`)"), data
    for (_, row), name in zip(data.iterrows(), ("cheap", "dear")):
        c = pd.read_csv(tmp_path / name / "arms.csv")["cost_usd"]  # each experiment's own profiling costs c_i
        low, high = (float(x.lstrip("$")) for x in row["profiling cost c_i"].split("–"))
        assert low == pytest.approx(c.min(), rel=1e-3) and high == pytest.approx(c.max(), rel=1e-3), name


def test_the_data_has_a_row_per_price_table_a_dataset_declares(tmp_path):
    """Prices a dataset.yaml declares never reach config.yaml: two copies of one dataset at other prices shared the
    first's row of the data, as two configs' price tables did."""
    import shutil

    from cabench.config import parse_config

    prices = load_config(ROOT / "configs" / "terms" / "gsm8k_dollars_online.yaml").terms.describe()["prices"]
    for name, gpt2 in (("cheap", 0.02), ("dear", 0.2)):
        folder = shutil.copytree(ROOT / "data" / "gsm8k", tmp_path / "data" / name)
        terms = {"objectives": ["accuracy", "latency", "cost"], "cost": "usd",
                 "prices": {**prices, "GPT-2": {"tokens": gpt2}}}
        (folder / "dataset.yaml").write_text((folder / "dataset.yaml").read_text() + yaml.safe_dump(terms))
        cfg = parse_config({"name": name, "dataset": str(folder), "setting": "online", "budget": {"usd": [0.05]},
                            "methods": ["uniform"], "repetitions": 2, "output": str(tmp_path / "out" / name)},
                           "c.yaml")
        run_experiment(cfg, quiet=True)
    report = build_report(tmp_path / "out")
    data = table(report, next(h for h in ("## The data", "## Table 1: the data") if h in report))
    assert len(data) == 2, data
    for (_, row), name in zip(data.iterrows(), ("cheap", "dear")):
        c = pd.read_csv(tmp_path / "out" / name / "arms.csv")["cost_usd"]
        low, high = (float(x.lstrip("$")) for x in row["profiling cost c_i"].split("–"))
        assert low == pytest.approx(c.min(), rel=1e-3) and high == pytest.approx(c.max(), rel=1e-3), name
