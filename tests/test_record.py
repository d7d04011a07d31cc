"""What a results folder records: the identity hash and arms.csv."""

from __future__ import annotations

import numpy as np
import pytest

from cabench.data.arms import PRESETS
from cabench.problem import replay_problem
from cabench.record import arms_table, config_hash, real_units
from cabench.report_cells import measurement


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


def test_measurements_show_the_interval_they_have():
    row = {"accuracy": 1.0, "accuracy_ci": 0.0, "accuracy_low": 0.566, "accuracy_high": 1.0}
    assert measurement(row, "accuracy", "{:.3f}") == "1.000 (0.566–1.000)"
    row = {"accuracy": 0.5, "accuracy_ci": 0.0439, "accuracy_low": 0.5 - 0.0439, "accuracy_high": 0.5 + 0.0439}
    assert measurement(row, "accuracy", "{:.3f}") == "0.500 ± 0.044"
    assert measurement({"usd": 0.002, "usd_ci": 0.0001}, "usd", "${:.3g}") == "$0.002 ± $0.0001"  # older folders
    assert measurement({"tokens": float("nan")}, "tokens", "{:,.1f}") == "n/a"
