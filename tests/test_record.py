"""What a results folder records: the identity hash and arms.csv."""

from __future__ import annotations

import numpy as np
import pytest

from cabench.data.arms import PRESETS
from cabench.problem import replay_problem
from cabench.record import arms_table, config_hash


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
