"""The batched online loop against its per-pull reference, and its invariants (SPEC §5)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cabench import registry
from cabench.online import OnlineMethod, run_online
from cabench.online.reference import reference_online
from cabench.problem import replay_problem
from cabench.streams import stream_keys
from cabench.synthetic import SyntheticSpec, synthetic_problem
from tests.conftest import shipped

SYNTH = SyntheticSpec("s", means=((0.5, 0.5), (0.8, 0.7), (0.6, 0.3), (0.3, 0.9)), costs=(100, 120, 80, 150),
                      noise="bernoulli", cost_spread=0.2)


def _same_pulls(problem, method, rho, reps=3, seed=0):
    keys = stream_keys(seed, np.arange(reps), problem.arm_ids)
    res = run_online(problem, method, rho, keys, record_arms=True)
    for r in range(reps):
        arms = res.arms_pulled[:, r]
        ref = reference_online(problem, method, rho, keys[r])
        assert arms[arms >= 0].tolist() == ref["arms"], (method.name, rho, r)
        assert res.regret_hv[r] == ref["regret_hv"] and res.regret_std[r] == ref["regret_std"]
        assert res.spend[r] == ref["spend"]


@pytest.mark.parametrize("name", registry.names("online"))
@pytest.mark.parametrize("dataset", ["gsm8k", "piqa"])
def test_batched_equals_reference_on_logs(dataset, name):
    ds = shipped(dataset)
    subset = np.arange(0, ds.n_arms, 4)  # every 4th arm keeps the reference quick
    problem = replay_problem(ds, subset)
    for rho in (2, 8):
        _same_pulls(problem, OnlineMethod(name), rho)


@pytest.mark.parametrize("name", registry.names("online"))
@pytest.mark.parametrize("mode", ["experimental", "theory"])
def test_batched_equals_reference_on_synthetic(name, mode):
    problem = synthetic_problem(SYNTH)
    for rho in (3, 20, 60):
        _same_pulls(problem, OnlineMethod(name, mode=mode, eta=0.1), rho, reps=4, seed=5)


def test_batched_equals_reference_full_gsm8k_at_rho_4():
    ds = shipped("gsm8k")
    _same_pulls(replay_problem(ds, np.arange(ds.n_arms)), OnlineMethod("cohv-ucb"), 4, reps=2)


@settings(max_examples=25, deadline=None)
@given(
    means=st.lists(st.tuples(st.floats(0.05, 0.95), st.floats(0.05, 0.95)), min_size=2, max_size=5),
    costs=st.lists(st.floats(10, 200), min_size=5, max_size=5),
    spread=st.floats(0, 0.5),
    rho=st.floats(1, 30),
    name=st.sampled_from(registry.names("online")),
)
def test_spend_exceeds_budget_by_less_than_one_pull(means, costs, spread, rho, name):
    spec = SyntheticSpec("h", tuple(means), tuple(costs[: len(means)]), cost_spread=spread)
    problem = synthetic_problem(spec)
    res = run_online(problem, OnlineMethod(name), rho, stream_keys(1, np.arange(4), problem.arm_ids))
    budget = problem.budget(rho)
    assert (res.spend <= budget + problem.c_max + 1e-9).all()
    # it stops only when no arm fits: the remaining budget is below the cheapest profiling cost
    assert (budget - res.spend < problem.profile_cost.min() + 1e-9).all()


def test_equal_costs_make_cohv_and_hv_identical():
    # equal deterministic costs and a cost radius wide enough that c_lcb = lambda / 2 for every arm:
    # the CoHV index is then exactly twice the HV index, so the argmax is the same at every step
    spec = SyntheticSpec("eq", means=((0.4, 0.6), (0.7, 0.5), (0.5, 0.5), (0.2, 0.9)), costs=(1, 1, 1, 1))
    problem = synthetic_problem(spec)
    keys = stream_keys(2, np.arange(20), problem.arm_ids)
    a = run_online(problem, OnlineMethod("cohv-ucb", s_c=50), 25, keys, record_arms=True)
    b = run_online(problem, OnlineMethod("hv-ucb", s_c=50), 25, keys, record_arms=True)
    assert np.array_equal(a.arms_pulled, b.arms_pulled)
    assert np.array_equal(a.regret_hv, b.regret_hv)


def test_fraction_on_best_arm_grows_with_budget():
    spec = SyntheticSpec("clear", means=((0.3, 0.3), (0.9, 0.8), (0.4, 0.5), (0.5, 0.2)), costs=(1, 1, 1, 1))
    problem = synthetic_problem(spec)
    keys = stream_keys(0, np.arange(30), problem.arm_ids)
    method = OnlineMethod("cohv-ucb")
    fractions = [run_online(problem, method, rho, keys).frac_optimal.mean() for rho in (2, 8, 32, 128)]
    assert fractions == sorted(fractions) and fractions[-1] > 0.9 and fractions[0] < 0.6


def test_uniform_is_round_robin():
    problem = synthetic_problem(SYNTH)
    res = run_online(problem, OnlineMethod("uniform"), 10, stream_keys(0, np.arange(2), problem.arm_ids),
                     record_arms=True)
    arms = res.arms_pulled[:, 0]
    arms = arms[arms >= 0]
    assert arms[:12].tolist() == [0, 1, 2, 3] * 3


def test_regret_definitions(gsm8k):
    problem = replay_problem(gsm8k, np.arange(gsm8k.n_arms))
    res = run_online(problem, OnlineMethod("uniform"), 2, stream_keys(0, np.arange(5), problem.arm_ids),
                     record_arms=True)
    gap = problem.nu.max() - problem.nu
    budget = problem.budget(2) / problem.c_max
    for r in range(5):
        arms = res.arms_pulled[:, r]
        arms = arms[arms >= 0]
        assert res.regret_hv[r] == pytest.approx(gap[arms].sum())
        assert res.regret_std[r] == pytest.approx(problem.nu.max() * budget - problem.hv[arms].sum())
        assert res.pulls[r] == len(arms)


def test_trajectory_on_token_grid():
    problem = synthetic_problem(SYNTH)
    res = run_online(problem, OnlineMethod("cohv-ucb"), 20, stream_keys(0, np.arange(6), problem.arm_ids),
                     trajectory_points=40, window=5)
    t = res.trajectory
    assert t["spend"][-1] == pytest.approx(res.budget) and t["cum_regret"].shape == (6, 40)
    assert (np.diff(t["cum_regret"], axis=1) >= -1e-12).all()  # cumulative regret never decreases
    gap = problem.nu.max() - problem.nu
    # the last grid point (B) holds every pull but the one that may overshoot the budget
    assert (t["cum_regret"][:, -1] <= res.regret_hv + 1e-9).all()
    assert (t["cum_regret"][:, -1] >= res.regret_hv - gap.max() - 1e-9).all()
    assert np.nanmax(t["moving_avg"]) <= gap.max() + 1e-12


def test_a_budget_that_cannot_pay_the_initial_round_as_charged_is_not_run_and_the_least_that_can_pulls_every_arm():
    """Calls of 1 and 10 tokens: at rho 1, B~ = 1.1 pays both at their means, but the loop charges the cheap call
    0.1 rounded to the 2^-24 grid (0.10000002), leaving 0.99999998 for the dear one: it was never pulled, in any
    repetition, and the run said "ok". Such a budget is not run, and the least one named pulls every arm."""
    import re

    spec = SyntheticSpec("calls", means=((0.5, 0.5), (0.9, 0.9)), costs=(1, 10), noise="gaussian", sigma=0.1)
    problem = synthetic_problem(spec)
    method = OnlineMethod("uniform")
    cheap = np.round(0.1 * 2**24) / 2**24  # the cheap call as charged
    assert not 1.0 <= problem.online_budget(1.0) - cheap  # (the dear call no longer fits after the cheap one)
    said = method.entry.skip(problem, 1.0)
    least = float(re.search(r"the smallest workable rho is ([0-9.]+)", said).group(1))
    assert said.startswith("rho 1 cannot pay one initial pull of every arm at their mean costs as charged")
    assert 1 < least < 1 + 1e-7 and 1.0 <= problem.online_budget(least) - cheap
    assert method.entry.skip(problem, least) is None and method.entry.skip(problem, 2.0) is None
    keys = stream_keys(0, np.arange(4), problem.arm_ids)
    for rho in (least, 2.0):
        result = run_online(problem, method, rho, keys)
        assert result.counts is not None and (result.counts > 0).all(), (rho, result.counts)
    below = method.entry.skip(problem, 0.9999999999999998)  # it said "rho 1 cannot pay ...; the smallest ... is 1"
    assert below == ("rho 0.9999999999999998 cannot pay one initial pull of every arm; the smallest workable rho is "
                     f"{least:.10g} (at the arms' mean costs)"), below
    between = method.entry.skip(problem, (1 + least) / 2)  # a refused rho is never written rounded up to the least
    assert between is not None and float(between.split()[1]) < least, between


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(-4, 3), min_size=2, max_size=12), st.integers(0, 11))
def test_the_initial_round_is_paid_exactly_where_skip_says_and_the_least_named_pays_it(exponents, dearest_first):
    """Costs from 1e-4 to 1e3 tokens in any order: where skip lets rho 1 run, every arm is pulled at it, and the
    least rho it names otherwise is itself let run and pulls every arm (a test of B~ >= spend + mean, not the loop's
    mean <= B~ - spend, let an arm go unpulled, and the least rho, printed rounded to nearest, was refused)."""
    import re

    costs = [10.0**e for e in exponents]
    costs.insert(dearest_first % len(costs), max(costs))  # a tie for the dearest, anywhere
    spec = SyntheticSpec("calls", means=tuple((0.5, 0.5) for _ in costs), costs=tuple(costs), noise="bernoulli",
                         sigma=0.1)  # (Bernoulli rewards: the compiled loop)
    problem = synthetic_problem(spec)
    method = OnlineMethod("uniform")
    keys = stream_keys(0, np.arange(1), problem.arm_ids)
    said = method.entry.skip(problem, 1.0)
    rho = 1.0 if said is None else float(re.search(r"the smallest workable rho is ([0-9.]+)", said).group(1))
    assert method.entry.skip(problem, rho) is None and rho < 1 + 1e-6
    counts = run_online(problem, method, rho, keys).counts
    assert counts is not None and (counts > 0).all(), (costs, rho, counts)
