"""The batched identification loop against its per-pull reference, and its invariants (SPEC §6)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cabench import registry
from cabench.data.arms import PRESETS
from cabench.pareto import classification_gaps, complexity, harmonic_l, pareto_mask, theorem2_bound
from cabench.problem import replay_problem
from cabench.psi import PsiMethod, run_psi
from cabench.psi.reference import reference_psi
from cabench.streams import stream_keys
from cabench.synthetic import SyntheticSpec, synthetic_problem
from tests.conftest import shipped
from tests.psi.test_recycling import charged_budget, quantised_excess

SYNTH = SyntheticSpec("s", means=((0.9, 0.2), (0.6, 0.6), (0.2, 0.9), (0.5, 0.45), (0.15, 0.8)),
                      costs=(1.0, 2.0, 1.5, 0.8, 1.2), noise="gaussian", sigma=0.5, cost_spread=0.3)


def _same_decisions(problem, method, rho, mode, reps=3, seed=0):
    keys = stream_keys(seed, np.arange(reps), problem.arm_ids)
    res = run_psi(problem, method, rho, keys, mode)
    for r in range(reps):
        ref = reference_psi(problem, method, rho, keys[r], mode)
        assert np.flatnonzero(res.returned[r]).tolist() == ref["returned"], (method.name, rho, mode, r)
        assert res.samples[r].tolist() == ref["samples"]
        assert res.spend[r] == ref["spend"]
        if res.removed is not None:
            assert res.removed[r].tolist() == ref["removed"]
            assert res.accepted[r].tolist() == ref["accepted"]


@pytest.mark.parametrize("name", registry.names("psi"))
@pytest.mark.parametrize("mode", ["deterministic", "stochastic"])
@pytest.mark.parametrize("dataset", ["gsm8k", "piqa"])
def test_batched_equals_reference_on_subset(dataset, mode, name):
    ds = shipped(dataset)
    problem = replay_problem(ds, PRESETS["paper-subset"].select(ds.configs))
    for rho in (20, 300):
        _same_decisions(problem, PsiMethod(name), rho, mode)


@pytest.mark.parametrize("name", ["copsi", "psi-sr", "tests.plugins_hostile.schedules:far_beyond_the_budget"])
def test_realised_costs_drawn_in_small_rounds_make_the_same_decisions(monkeypatch, name):
    """The pulls of a phase drawn at most 2 of a repetition at a time (the round is 2^15), each round the first pulls
    not yet made (a schedule asking far more than the budget pays stops within its first arm's block): the
    decisions, samples and spend of the per-pull reference, repetition by repetition."""
    from cabench.psi import engine

    monkeypatch.setattr(engine, "ROUND", 2)
    _same_decisions(synthetic_problem(SYNTH), PsiMethod(name), 40, "stochastic", reps=4)


@pytest.mark.parametrize("name", registry.names("psi"))
@pytest.mark.parametrize("mode", ["deterministic", "stochastic"])
def test_batched_equals_reference_on_synthetic(mode, name):
    problem = synthetic_problem(SYNTH)
    for rho in (5, 40, 400):
        _same_decisions(problem, PsiMethod(name), rho, mode, reps=4, seed=3)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["copsi", "psi-sr"])
def test_batched_equals_reference_on_full_set(name):
    ds = shipped("piqa")
    _same_decisions(replay_problem(ds, np.arange(ds.n_arms)), PsiMethod(name), 10, "deterministic", reps=1)



@settings(max_examples=40, deadline=None)
@given(st.integers(2, 7).flatmap(lambda k: st.tuples(
    st.lists(st.integers(0, 20), min_size=k, max_size=k, unique=True),
    st.lists(st.integers(0, 20), min_size=k, max_size=k, unique=True),
    st.lists(st.floats(0.2, 1.0), min_size=k, max_size=k),
    st.sampled_from(registry.names("psi")))))
def test_without_noise_every_method_finds_the_pareto_set(case):
    # distinct coordinates give every arm a positive gap; sigma 1e-12 is below the 2^-24 reward quantum
    xs, ys, costs, name = case
    means = [(x / 20, y / 20) for x, y in zip(xs, ys)]
    problem = synthetic_problem(SyntheticSpec("n", tuple(means), tuple(costs), noise="gaussian", sigma=1e-12))
    _, _, gamma, _ = classification_gaps(problem.mu)
    assume((gamma > 0).all())  # exact identification is ill-posed with a zero gap (paper §3.2)
    res = run_psi(problem, PsiMethod(name), 50, stream_keys(0, np.arange(2), problem.arm_ids))
    assert (res.returned == pareto_mask(problem.mu)).all()
    assert res.error.sum() == 0


@settings(max_examples=40, deadline=None)
@given(costs=st.lists(st.floats(1, 1000), min_size=2, max_size=12), rho=st.floats(20, 400))
def test_copsi_never_exceeds_the_budget(costs, rho):
    means = tuple((0.3 + 0.05 * i, 0.7 - 0.05 * i) for i in range(len(costs)))
    problem = synthetic_problem(SyntheticSpec("c", means, tuple(costs)))
    res = run_psi(problem, PsiMethod("copsi"), rho, stream_keys(0, np.arange(3), problem.arm_ids))
    budget = problem.budget(rho)
    assert (res.spend <= charged_budget(problem, rho)).all()
    assert (res.spend <= budget * (1 + quantised_excess(problem))).all()
    # Step 2 of the proof: total spend is sum_r C_r (n_r - n_{r-1}) <= B, and no pull was refused
    c = problem.psi_profile_cost() * problem.profile_cost.max()
    assert np.allclose(res.spend, (res.samples * c).sum(axis=1))


def test_equal_costs_make_copsi_and_psi_sr_identical():
    spec = SyntheticSpec("eq", SYNTH.means, (1, 1, 1, 1, 1), noise="gaussian", sigma=0.5)
    problem = synthetic_problem(spec)
    keys = stream_keys(4, np.arange(200), problem.arm_ids)
    for rho in (10, 100):
        a = run_psi(problem, PsiMethod("copsi"), rho, keys)
        b = run_psi(problem, PsiMethod("psi-sr"), rho, keys)
        assert np.array_equal(a.removed, b.removed) and np.array_equal(a.accepted, b.accepted)
        assert np.array_equal(a.samples, b.samples)


@pytest.mark.slow
def test_error_falls_with_budget():
    problem = synthetic_problem(SyntheticSpec("g", SYNTH.means, SYNTH.costs, noise="gaussian", sigma=0.5))
    keys = stream_keys(0, np.arange(300), problem.arm_ids)
    for name in registry.names("psi"):
        errors = [run_psi(problem, PsiMethod(name), rho, keys).error.mean() for rho in (10, 40, 160, 640, 2560)]
        assert errors == sorted(errors, reverse=True) and errors[0] > 0.5, (name, errors)
        assert errors[-1] < 0.02


@pytest.mark.slow
def test_observed_error_below_theorem2_bound():
    # Bernoulli instance with large gaps; budgets satisfying B >= 2 L H, the last one where the bound is < 1
    spec = SyntheticSpec("t2", ((0.9, 0.85), (0.15, 0.1), (0.5, 0.45)), (1.0, 0.5, 0.8))
    problem = synthetic_problem(spec)
    costs = problem.psi_profile_cost()
    _, _, gamma, _ = classification_gaps(problem.mu)
    l_k = harmonic_l(3, float(costs.min()))
    h = complexity(gamma, costs)
    keys = stream_keys(0, np.arange(300), problem.arm_ids)
    for factor in (1000, 1200, 1500):  # B / (L H): the bound 2 K^2 D exp(-B / (256 L H)) is below 1 from ~917
        budget = factor * l_k * h
        bound = theorem2_bound(budget, 3, 2, l_k, h)
        assert 0 < bound < 1  # informative: a method erring often would break it
        rho = budget * problem.profile_cost.max() / problem.budget(1.0)
        res = run_psi(problem, PsiMethod("copsi"), rho, keys)
        assert res.error.mean() <= bound
    assert theorem2_bound(1000 * l_k * h, 3, 2, l_k, h) == pytest.approx(36 * np.exp(-1000 / 256))


@pytest.mark.parametrize("which", ["gsm8k", "piqa", "fifty"])
def test_uniform_buys_exactly_rho_samples_at_integer_rho(which, tmp_path):
    from cabench.data.dataset import load_dataset
    from tests.conftest import shipped, spread_logs

    if which == "fifty":  # imported like a user's logs
        import yaml

        from cabench.data.importer import import_logs

        logs = spread_logs(50, seed=3)
        logs.to_csv(tmp_path / "fifty.csv", index=False)
        (tmp_path / "map.yaml").write_text(yaml.safe_dump({"columns": {c: c for c in logs.columns}, "dataset": {
            "name": "fifty", "split": {"profiling_size": 20, "seed": 0}}}))
        ds = load_dataset(import_logs(tmp_path / "fifty.csv", tmp_path / "map.yaml", tmp_path / "fifty"))
    else:
        ds = shipped(which)
    problem = replay_problem(ds, np.arange(ds.n_arms))
    keys = stream_keys(0, np.arange(3), problem.arm_ids)
    for rho in (1, 2, 10, 37):
        res = run_psi(problem, PsiMethod("uniform"), rho, keys)
        assert (res.samples == rho).all(), (which, rho, np.unique(res.samples))


def test_rewards_whose_sums_pass_2_29_are_warned_of_and_only_there_can_the_engine_part_from_its_reference():
    """Gaussian means of 999,999.33 (accepted up to 1e6): an arm's reward sum passes 2^29 after a few hundred pulls,
    where the engine's block sums round otherwise than the reference's one addition per pull, and EGE-SH removed
    the other of two tied arms in repetitions 3-5. Nothing said so; the run now warns before it starts, naming the
    pulls at the first budget concerned. Rewards in [0, 1] get no warning at any budget a run would spend."""
    from cabench.config import parse_config
    from cabench.plan import inexact_sums

    big = 999999 + 1 / 3
    spec = SyntheticSpec("big", means=((big, big), (big, big), (9 + 1 / 3, 9 + 1 / 3)), costs=(1, 1, 1),
                         noise="gaussian", sigma=1e-12, cost_spread=0.5)
    problem = synthetic_problem(spec)
    keys = stream_keys(0, np.arange(6), problem.arm_ids)[3:]
    batched = run_psi(problem, PsiMethod("ege-sh"), 2000, keys, "stochastic")
    parted = [np.flatnonzero(batched.returned[r]).tolist() != reference_psi(
        problem, PsiMethod("ege-sh"), 2000, keys[r], "stochastic")["returned"] for r in range(3)]
    assert parted == [True, True, True] and (batched.samples.max(axis=1) > 2**29 / big).all()
    synthetic = {"name": "big", "means": [[big, big], [big, big], [9 + 1 / 3, 9 + 1 / 3]], "costs": [1, 1, 1],
                 "noise": "gaussian", "sigma": 1e-12, "cost_spread": 0.5}
    raw = {"name": "big", "dataset": {"synthetic": synthetic}, "setting": "psi", "rho": [0.05, 2000, 4000],
           "methods": ["ege-sh"], "cost_modes": ["stochastic"]}
    pulls = 2000 * 3 / 0.5 + 1  # rho sum(c~) over the cheapest realised pull, c~ (1 - spread)
    assert inexact_sums(parse_config(raw, "big.yaml")) == [
        f"Gaussian rewards up to about 1e+06 in size (dataset.synthetic: means and 9 sigma), summed over up to "
        f"{pulls:,.0f} pulls of an arm at rho 2000 and above, can pass 2^29, where the batched engine's sums round "
        "otherwise than the per-pull reference's and a near-tie may be decided otherwise (docs/decisions.md, Exact "
        "arithmetic); scale the means and sigma down (rewards in [0, 1], as the paper's) to keep them exact"]
    unit = {**synthetic, "means": [[0.9, 0.2], [0.5, 0.5], [0.2, 0.9]], "sigma": 0.3}
    assert inexact_sums(parse_config({**raw, "dataset": {"synthetic": unit}, "rho": [1e5]}, "unit.yaml")) == []
    online = {**raw, "setting": "online", "rho": [2000], "methods": ["cohv-ucb"], "cost_modes": None}
    assert inexact_sums(parse_config({k: v for k, v in online.items() if v is not None}, "online.yaml")) == []
