"""The normalisation the profiling split fixes (SPEC §2.2, §2.5, §3), on numbers worked out by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cabench.data.normalisation import Objective, accuracy, efficiency, fit_normalisation
from cabench.errors import CabenchError
from cabench.problem import replay_problem
from cabench.quantize import QUANTUM
from cabench.synthetic import SyntheticSpec, synthetic_problem

# 3 configurations x 7 profiling instances. Pooled latencies 1..21: numpy's linear percentiles sit at
# positions 0.05 * 20 = 1 and 0.95 * 20 = 19, so tau5 = 2 s and tau95 = 20 s.
LATENCY = np.arange(1.0, 22.0).reshape(3, 7)
TOKENS = np.array([[100.0] * 7,
                   [100, 200, 200, 200, 200, 200, 300],  # mean 200
                   [200, 400, 300, 300, 300, 300, 300]])  # mean 300
NORM = fit_normalisation({"latency_s": LATENCY, "tokens": TOKENS}, "hand", "vary them")


def test_fit_by_hand():
    assert (NORM.tau5, NORM.tau95) == (2.0, 20.0)
    assert NORM.profile_cost.tolist() == [100.0, 200.0, 300.0]  # c_i: profiling mean tokens
    assert NORM.c_max == 400.0  # the largest profiling token count
    assert NORM.lam == 0.25  # 100 / 400, the smallest normalised profiling cost
    assert [o.name for o in NORM.objectives] == ["accuracy", "efficiency"] and NORM.n_objectives == 2
    assert [(o.column, o.direction) for o in NORM.objectives] == [("correct", "max"), ("latency_s", "min")]


def test_rewards_of_log_rows():
    acc, eff = NORM.rewards({"correct": np.array([[1.0, 0.0], [0.5, 1.0]]),
                             "latency_s": np.array([[2.0, 4.0], [20.0, 1.0]])})
    assert acc.tolist() == [[1.0, 0.0], [0.5, 1.0]]
    # (1/4 - 1/20) / (1/2 - 1/20) = 0.2 / 0.45 = 4/9; t <= tau5 gives 1, t >= tau95 gives 0
    assert eff[0, 0] == 1.0 and eff[1, 0] == 0.0 and eff[1, 1] == 1.0
    assert eff[0, 1] == pytest.approx(4 / 9, abs=QUANTUM)
    assert np.array_equal(eff / QUANTUM, np.round(eff / QUANTUM))  # quantised
    one_row = NORM.rewards({"correct": True, "latency_s": 4.0, "tokens": 10})  # a live call's record
    assert [float(r) for r in one_row] == [1.0, pytest.approx(4 / 9, abs=QUANTUM)]


def test_objective_reward_is_linear_or_inverse_between_worst_and_best():
    assert accuracy().reward([0.0, 0.25, 1.0]).tolist() == [0.0, 0.25, 1.0]
    assert efficiency(0.5, 4.0).reward([0.25, 1.0, 8.0]).tolist() == pytest.approx([1.0, 0.75 / 1.75, 0.0])
    latency = Objective("latency", "latency_s", worst=20.0, best=2.0)  # smaller is better, linear
    assert latency.direction == "min"
    assert latency.reward([2.0, 11.0, 30.0]).tolist() == [1.0, 0.5, 0.0]


def test_charges_and_budgets_by_hand():
    assert NORM.budget(2) == 1200.0  # rho K cbar = 2 * 3 * 200
    assert NORM.rho(1200.0) == 2.0
    assert NORM.online_budget(2) == 3.0  # 1200 / c_max
    assert NORM.online_units(NORM.profile_cost).tolist() == [0.25, 0.5, 0.75]
    assert NORM.online_cost(np.array([100.0, 300.0, 800.0])).tolist() == [0.25, 0.75, 1.0]  # min(t / 400, 1)
    assert NORM.psi_profile_cost().tolist() == pytest.approx([1 / 3, 2 / 3, 1.0], abs=QUANTUM)  # c_i / max c_i
    assert NORM.psi_budget(2) == 2 * float(NORM.psi_profile_cost().sum())
    assert NORM.psi_budget(2) == pytest.approx(4.0, abs=4 * QUANTUM)
    assert NORM.psi_cost(np.array([150.0, 600.0])).tolist() == [0.5, 2.0]  # t / 300, not clipped
    assert float(NORM.psi_units(450.0)) == 1.5


def test_a_subset_keeps_c_max_and_lambda():
    sub = NORM.select(np.array([2, 0]))
    assert sub.profile_cost.tolist() == [300.0, 100.0]
    assert (sub.c_max, sub.lam, sub.tau5, sub.tau95) == (400.0, 0.25, 2.0, 20.0)
    assert sub.budget(1) == 400.0  # 1 * 2 * 200
    assert sub.psi_profile_cost().tolist() == pytest.approx([1.0, 1 / 3], abs=QUANTUM)
    assert sub.online_cost(np.array([200.0])).tolist() == [0.5]


def test_latencies_that_do_not_vary_are_one_line():
    with pytest.raises(CabenchError, match=r"^here: latency_s: the 5th and 95th percentiles .* equal \(3 s\).*; "
                                           r"profile more$"):
        fit_normalisation({"latency_s": np.full((2, 5), 3.0), "tokens": TOKENS[:2, :5]}, "here", "profile more")
    with pytest.raises(CabenchError, match="^here: the smallest profiling cost rounds to zero"):
        fit_normalisation({"latency_s": LATENCY[:, :2], "tokens": np.array([[1.0, 2], [3, 1e9], [4, 5]])},
                          "here", "")


def test_dataset_problem_and_synthetic_share_the_normalisation(gsm8k):
    arms = np.array([4, 1, 7])
    problem = replay_problem(gsm8k, arms)
    assert problem.profile_cost.tolist() == gsm8k.profile_cost[arms].tolist()
    assert (problem.c_max, problem.lam) == (gsm8k.norm.c_max, gsm8k.norm.lam)
    assert problem.n_objectives == gsm8k.norm.n_objectives == problem.mu.shape[1] == 2
    assert problem.mu.tolist() == gsm8k.mu[arms].tolist()
    assert problem.mu_cost.tolist() == gsm8k.mu_cost[arms].tolist()
    tokens = gsm8k.tokens_eval[arms]
    assert problem.online_cost(tokens).tolist() == np.minimum(
        np.round(tokens / gsm8k.c_max / QUANTUM) * QUANTUM, 1.0).tolist()
    top = gsm8k.profile_cost[arms].max()
    assert problem.psi_cost(tokens).tolist() == (np.round(tokens / top / QUANTUM) * QUANTUM).tolist()
    spec = SyntheticSpec("s", means=((0.5, 0.2, 0.1), (0.4, 0.3, 0.2)), costs=(100.0, 400.0), cost_spread=0.5)
    synthetic = synthetic_problem(spec)
    assert [o.name for o in synthetic.norm.objectives] == ["objective1", "objective2", "objective3"]
    assert synthetic.c_max == 600.0 and synthetic.lam == pytest.approx(50 / 600, abs=QUANTUM)
    assert synthetic.mu_cost.tolist() == pytest.approx([1 / 6, 2 / 3], abs=QUANTUM)


def test_a_problem_has_one_mean_per_declared_objective(gsm8k):
    problem = replay_problem(gsm8k, np.array([0, 1]))
    with pytest.raises(ValueError, match=r"means \(2, 3\) and 2 costs for 2 arms and 2 objectives"):
        dataclasses.replace(problem, mu=np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"means \(2, 2\) and 3 costs for 2 arms"):
        dataclasses.replace(problem, norm=gsm8k.norm.select(np.array([0, 1, 2])))
