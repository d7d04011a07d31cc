"""What a results folder records: the identity hash and arms.csv."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from cabench.config import parse_config
from cabench.data.arms import PRESETS
from cabench.data.dataset import load_dataset
from cabench.problem import replay_problem
from cabench.record import arms_table, config_hash, real_units
from cabench.report_cells import measurement
from cabench.runner import run_experiment
from tests.conftest import spread_logs, tiny_logs, write_dataset


def test_config_hash_is_canonical():
    assert config_hash({"a": 1, "b": [1, 2]}) == config_hash({"b": [1, 2], "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2}) and len(config_hash({})) == 16


def test_arms_table_by_name(gsm8k):
    arms = PRESETS["paper-subset"].select(gsm8k.configs)
    problem = replay_problem(gsm8k, arms)
    table = arms_table(problem, gsm8k.configs, ("accuracy", "efficiency"))
    assert len(table) == 14 and list(table["config_id"]) == list(problem.arm_names)
    assert table["pareto"].sum() == 2 and table["optimal"].sum() == 1  # SPEC §8: 2 Pareto arms on the subset
    row = table.iloc[3]
    mu = gsm8k.mu[arms[3]]
    assert row["mu_accuracy"] == pytest.approx(mu[0]) and row["hv"] == pytest.approx(mu[0] * mu[1])
    assert row["nu"] == pytest.approx(mu[0] * mu[1] / gsm8k.mu_cost[arms[3]])
    assert np.isclose(table["delta"], table["nu"].max() - table["nu"]).all()
    assert table.loc[table["pareto"] == 1, "gamma"].min() >= 0
    assert table["gamma"].min() == pytest.approx(0.005, abs=1e-9)
    assert set(table["model"]) == {"GPT-2", "CodeLlama-7B", "Tulu-7B", "Tulu-2-7B", "Gemma-7B", "LLaMA-7B",
                                   "Mistral-7B"}


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's score interval written out here (not the helper the record uses)."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def test_real_unit_intervals_stay_within_their_range():
    """Five evaluation instances: every one right (no normal interval), four and three of five (0.8 ± 0.39 and
    0.6 ± 0.48 would pass 1) get Wilson's interval; fractional scores and a latency with one slow call get the
    normal interval cut at the range; 250 of 500 right keeps the normal interval."""
    correct = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 1, 1], [0.9, 1, 0.95, 1, 1], [1, 0, 1, 0, 1]], dtype=float)
    latency = np.array([[0.1, 0.1, 0.1, 0.1, 5.0], [1.0, 1.1, 0.9, 1.0, 1.0], [2.0] * 5, [1, 2, 3, 4, 5]])
    out = real_units({"correct": correct, "latency_s": latency}, np.arange(4))
    half = 1.96 * correct.std(axis=1, ddof=1) / np.sqrt(5)
    assert out["accuracy_ci"] == pytest.approx(half)
    for arm, k in ((0, 5), (1, 4)):
        assert (out["accuracy_low"][arm], out["accuracy_high"][arm]) == pytest.approx(_wilson(k, 5))
    assert out["accuracy_low"][0] == pytest.approx(5 / (5 + 1.959963984540054**2))  # k = n: n / (n + z²)
    assert (out["accuracy_low"][2], out["accuracy_high"][2]) == pytest.approx((0.97 - half[2], 1.0))
    assert 0.6 + half[3] > 1 and (out["accuracy_low"][3], out["accuracy_high"][3]) == pytest.approx(_wilson(3, 5))
    slow = 1.96 * latency[0].std(ddof=1) / np.sqrt(5)
    assert slow > latency[0].mean() and out["latency_s_low"][0] == 0.0
    assert out["latency_s_high"][0] == pytest.approx(latency[0].mean() + slow)
    assert (out["latency_s_low"][2], out["latency_s_high"][2]) == (2.0, 2.0)  # equal latencies: no width
    many = real_units({"correct": np.tile([0.0, 1.0], (1, 250))}, np.arange(1))
    wide = 1.96 * np.tile([0.0, 1.0], 250).std(ddof=1) / np.sqrt(500)
    assert (many["accuracy_low"][0], many["accuracy_high"][0]) == pytest.approx((0.5 - wide, 0.5 + wide))


def test_a_measurement_alike_on_every_call_is_that_value_with_no_width():
    """900 ms on each of 300 calls, in seconds: the mean is the calls' value, not their sum's rounding over 300
    (0.9000000000000002 s, printed "0.9 ± 2.52e-17 s"), and its interval has no width."""
    latency = np.full((2, 300), 900 * 0.001)
    latency[1, 0] = 0.8  # one call apart: a mean and an interval as before
    assert latency[0].mean() != latency[0, 0]  # the rounding this guards against
    out = real_units({"latency_s": latency, "tokens": np.full((2, 300), 290.0)}, np.arange(2))
    assert out["latency_s"][0] == latency[0, 0] and out["latency_s_ci"][0] == 0.0
    assert out["latency_s_low"][0] == out["latency_s_high"][0] == latency[0, 0]
    assert out["latency_s"][1] == latency[1].mean() and out["latency_s_ci"][1] == pytest.approx(
        1.96 * latency[1].std(ddof=1) / np.sqrt(300))
    assert out["tokens"].tolist() == [290.0, 290.0] and out["tokens_ci"].tolist() == [0.0, 0.0]


def test_measurements_show_the_interval_they_have():
    row = {"accuracy": 1.0, "accuracy_ci": 0.0, "accuracy_low": 0.566, "accuracy_high": 1.0}
    assert measurement(row, "accuracy", "{:.3f}") == "1.000 (0.566–1.000)"
    row = {"accuracy": 0.5, "accuracy_ci": 0.0439, "accuracy_low": 0.5 - 0.0439, "accuracy_high": 0.5 + 0.0439}
    assert measurement(row, "accuracy", "{:.3f}") == "0.500 ± 0.044"
    assert measurement({"usd": 0.002, "usd_ci": 0.0001}, "usd", "${:.3g}") == "$0.002 ± $0.0001"  # older folders
    row = {"latency_s": 1.08, "latency_s_ci": 1.92, "latency_s_low": 0.0, "latency_s_high": 3.0}  # cut at 0
    assert measurement(row, "latency_s", "{:.3g}") == "1.08 (0–3)"
    assert measurement({"tokens": float("nan")}, "tokens", "{:,.1f}") == "n/a"
    row = {"accuracy": 1.0, "accuracy_ci": float("nan"), "accuracy_low": 0.207, "accuracy_high": 1.0}  # n = 1
    assert measurement(row, "accuracy", "{:.3f}") == "1.000 (0.207–1.000)"


def test_one_evaluation_instance_gives_wilsons_interval_for_right_or_wrong():
    out = real_units({"correct": np.array([[1.0], [0.0], [0.5]]), "tokens": np.array([[10.0], [12.0], [9.0]])},
                     np.arange(3))
    assert np.isnan(out["accuracy_ci"]).all() and np.isnan(out["tokens_low"]).all()
    assert (out["accuracy_low"][0], out["accuracy_high"][0]) == pytest.approx(_wilson(1, 1))  # (1 / (1 + z²), 1)
    assert (out["accuracy_low"][1], out["accuracy_high"][1]) == pytest.approx(_wilson(0, 1))
    assert np.isnan(out["accuracy_low"][2])  # a fractional score: no interval from one instance


def test_runs_of_a_question_are_one_unit_of_evidence():
    """Epoch logs, 20 questions × 3 runs: alike runs give the interval of 20 question means, not of 60 runs; a
    configuration right on every run gets Wilson's interval for 20 of 20; runs unlike within a question (one of
    three right on every question) give no spread between questions, and as many trials as runs."""
    rng = np.random.default_rng(3)
    per_question = rng.integers(0, 2, 20).astype(float)
    alike = np.repeat(per_question, 3)
    unlike = np.tile([1.0, 0.0, 0.0], 20)
    questions = np.repeat(np.arange(20), 3)
    out = real_units({"correct": np.stack([alike, np.ones(60), unlike])}, np.arange(3), questions)
    assert out["accuracy_ci"][0] == pytest.approx(1.96 * per_question.std(ddof=1) / np.sqrt(20))
    assert out["accuracy_ci"][0] > 1.5 * 1.96 * alike.std(ddof=1) / np.sqrt(60)
    assert (out["accuracy_low"][1], out["accuracy_high"][1]) == pytest.approx(_wilson(20, 20))
    assert out["accuracy_ci"][2] == pytest.approx(0.0, abs=1e-12)  # every question's mean is 1/3
    assert (out["accuracy_low"][2], out["accuracy_high"][2]) == pytest.approx(_wilson(20, 60))  # trials: all 60


def test_a_run_on_epoch_logs_records_intervals_over_questions(tmp_path):
    """arms.csv of a run on epoch logs: the accuracy's half-width is that of the evaluation questions' means."""
    base = spread_logs(3, n_instances=40)
    logs = pd.concat([base.assign(instance_id=base["instance_id"] + f"#{k}") for k in (1, 2)], ignore_index=True)
    folder = write_dataset(tmp_path / "d", logs, split={"profiling_size": 10, "seed": 0})
    meta = yaml.safe_load((folder / "dataset.yaml").read_text())
    meta["provenance"] = {"repeats": {"policy": "epochs"}}
    (folder / "dataset.yaml").write_text(yaml.safe_dump(meta))
    run_experiment(parse_config({"name": "ep", "dataset": str(folder), "setting": "online", "rho": [2],
                                 "methods": ["cohv-ucb"], "repetitions": 2, "output": str(tmp_path / "r")}, "e.yaml"),
                   quiet=True)
    arms = pd.read_csv(tmp_path / "r" / "arms.csv").set_index("config_id")
    evaluated = set(load_dataset(folder).evaluation_ids)
    for name, rows in logs[logs["instance_id"].isin(evaluated)].groupby("config_id"):
        means = rows.groupby(rows["instance_id"].str.split("#").str[0])["correct"].mean()  # alike runs: 0 or 1
        assert len(means) == 30 and arms.loc[name, "accuracy_ci"] == pytest.approx(
            1.96 * means.std(ddof=1) / np.sqrt(30))


def test_epoch_intervals_use_the_effective_number_of_trials():
    """20 questions × 3 runs, right on every run of question 0 and on one run of question 1: p = 4/60, the
    variance clustered by question gives an interval below 0, so Wilson's interval is used on p (1 - p) / var
    trials, between the 20 questions and the 60 runs."""
    values = np.zeros(60)
    values[[0, 1, 2, 3]] = 1.0
    questions = np.repeat(np.arange(20), 3)
    out = real_units({"correct": values[None, :]}, np.arange(1), questions)
    p = 4 / 60
    deviations = np.array([3 * (1 - p), 1 - 3 * p] + [-3 * p] * 18)  # each question's sum of deviations
    var = 20 / 19 * (deviations**2).sum() / 60**2
    assert out["accuracy_ci"][0] == pytest.approx(1.96 * var**0.5) and p - 1.96 * var**0.5 < 0
    trials = p * (1 - p) / var
    assert 20 < trials < 60
    assert (out["accuracy_low"][0], out["accuracy_high"][0]) == pytest.approx(_wilson(p * trials, trials))
    # every run right, one question of one run and one of three: n² / Σ m² = 16 / 10 trials, not the 2 questions
    uneven = real_units({"correct": np.ones((1, 4))}, np.arange(1), np.array([0, 1, 1, 1]))
    assert uneven["accuracy_low"][0] == pytest.approx(1.6 / (1.6 + 1.959963984540054**2))


def test_completion_tokens_are_recorded_per_call_where_they_are_the_cost(tmp_path):
    """Charged completion tokens, arms.csv gives each configuration's completion tokens per call on the evaluation
    instances with its interval (the budget's unit, shown beside accuracy, latency and tokens); charged total
    tokens, it does not; a requirement bounds them as completion_tokens<=N or cost<=Ncompletion_tokens."""
    from cabench.constraints import parse_constraint, qualifying

    frame = tiny_logs(3, 40)
    frame["completion_tokens"] = frame["tokens"] // 3 + frame.index % 7
    data = write_dataset(tmp_path / "parts", frame, split={"profiling_size": 10, "seed": 0})
    arms = {}
    for cost in ("completion_tokens", "tokens"):
        cfg = parse_config({"name": cost, "dataset": str(data), "setting": "online", "rho": [4], "cost": cost,
                            "methods": ["uniform"], "repetitions": 2, "output": str(tmp_path / cost)}, "c.yaml")
        run_experiment(cfg, quiet=True)
        arms[cost] = pd.read_csv(tmp_path / cost / "arms.csv")
    ds = load_dataset(data)
    rows = frame[frame["instance_id"].isin(ds.evaluation_ids)]
    expected = rows.groupby("config_id")["completion_tokens"].agg(["mean", "std", "count"])
    got = arms["completion_tokens"].set_index("config_id")
    assert got["completion_tokens"].to_dict() == pytest.approx(expected["mean"].to_dict())
    half = 1.96 * expected["std"] / np.sqrt(expected["count"])
    assert got["completion_tokens_ci"].to_dict() == pytest.approx(half.to_dict(), rel=0.05)
    assert {"completion_tokens_low", "completion_tokens_high"} <= set(got.columns)
    assert not any(c.startswith("completion_tokens") for c in arms["tokens"].columns)
    bound = float(expected["mean"].median())
    for text in (f"completion_tokens<={bound}", f"cost<={bound}completion_tokens"):
        ok, _ = qualifying(arms["completion_tokens"], (parse_constraint(text),))
        assert ok.tolist() == (arms["completion_tokens"]["completion_tokens"] <= bound).tolist()
