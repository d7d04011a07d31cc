"""The engines with three and four objectives: batched loops make the same decisions as their per-pull
references (SPEC §5, §6), and the true Pareto set is the one of paper §3.2's definition."""

from __future__ import annotations

import numpy as np
import pytest

from cabench import registry
from cabench.online import OnlineMethod, run_online
from cabench.online.reference import reference_online
from cabench.pareto import pareto_mask
from cabench.psi import PsiMethod, run_psi
from cabench.psi.reference import reference_psi
from cabench.streams import stream_keys
from cabench.synthetic import SyntheticSpec, synthetic_problem
from tests.test_pareto_nd import brute_gaps

# THREE: arm 3 is Pareto only through the last objective; arm 4 only ties arm 0 in the first (weakly
# dominated, so Pareto); arm 5 is strictly dominated by arm 1
THREE = ((0.8, 0.3, 0.5), (0.5, 0.6, 0.6), (0.2, 0.9, 0.4), (0.4, 0.5, 0.7), (0.8, 0.2, 0.1), (0.3, 0.4, 0.3))
# FOUR: arm 3 is Pareto only through the last objective; arm 4 < arm 5 in every objective; arm 5 ties arm 1 in two
FOUR = ((0.8, 0.3, 0.5, 0.6), (0.5, 0.6, 0.6, 0.5), (0.2, 0.9, 0.4, 0.7), (0.4, 0.5, 0.3, 0.8),
        (0.3, 0.4, 0.2, 0.3), (0.6, 0.6, 0.5, 0.5))
PARETO = {THREE: [True, True, True, True, True, False], FOUR: [True, True, True, True, False, True]}
COSTS = (100.0, 140.0, 80.0, 120.0, 90.0, 110.0)
SPECS = {
    "3d-bernoulli-noisy-costs": SyntheticSpec("b3", THREE, COSTS, noise="bernoulli", cost_spread=0.2),
    "3d-gaussian": SyntheticSpec("g3", THREE, COSTS, noise="gaussian", sigma=0.4),
    "4d-bernoulli": SyntheticSpec("b4", FOUR, COSTS, noise="bernoulli"),
    "4d-gaussian-noisy-costs": SyntheticSpec("g4", FOUR, COSTS, noise="gaussian", sigma=0.3, cost_spread=0.3),
}


@pytest.mark.parametrize("which", SPECS)
def test_true_pareto_set_is_the_definitions(which):
    problem = synthetic_problem(SPECS[which])
    assert problem.n_objectives == len(SPECS[which].means[0]) and problem.mu.shape[1] in (3, 4)
    truth = [not x for x in brute_gaps(problem.mu)[0]]
    assert truth == PARETO[SPECS[which].means]
    assert pareto_mask(problem.mu).tolist() == truth


@pytest.mark.parametrize("name", registry.names("online"))
@pytest.mark.parametrize("which", SPECS)
def test_online_batched_equals_reference(which, name):
    problem = synthetic_problem(SPECS[which])
    keys = stream_keys(7, np.arange(3), problem.arm_ids)
    for method in (OnlineMethod(name), OnlineMethod(name, mode="theory")):
        for rho in (3, 25):
            res = run_online(problem, method, rho, keys, record_arms=True)
            assert res.pulls.min() > problem.n_arms  # past the initial round: the index chose
            for r in range(len(keys)):
                arms = res.arms_pulled[:, r]
                ref = reference_online(problem, method, rho, keys[r])
                assert arms[arms >= 0].tolist() == ref["arms"], (which, name, method.mode, rho, r)
                assert res.pulls[r] == ref["pulls"]
                assert np.bincount(ref["arms"], minlength=problem.n_arms).tolist() == res.counts[r].tolist()
                assert res.regret_hv[r] == ref["regret_hv"] and res.regret_std[r] == ref["regret_std"]


@pytest.mark.parametrize("name", registry.names("psi"))
@pytest.mark.parametrize("mode", ["deterministic", "stochastic"])
@pytest.mark.parametrize("which", SPECS)
def test_psi_batched_equals_reference(which, mode, name):
    problem = synthetic_problem(SPECS[which])
    truth = [not x for x in brute_gaps(problem.mu)[0]]
    keys = stream_keys(3, np.arange(2), problem.arm_ids)
    for rho in (8, 40, 200):
        res = run_psi(problem, PsiMethod(name), rho, keys, mode)
        for r in range(len(keys)):
            ref = reference_psi(problem, PsiMethod(name), rho, keys[r], mode)
            assert np.flatnonzero(res.returned[r]).tolist() == ref["returned"], (which, name, mode, rho, r)
            assert res.samples[r].tolist() == ref["samples"]
            if res.removed is not None:
                assert res.removed[r].tolist() == ref["removed"]
                assert res.accepted[r].tolist() == ref["accepted"]
            assert res.error[r] == (res.returned[r].tolist() != truth)


@pytest.mark.parametrize("name", registry.names("psi"))
@pytest.mark.parametrize("means", [THREE[:4] + THREE[5:], FOUR], ids=["3d", "4d"])  # THREE[4] has a zero gap
def test_without_noise_every_method_finds_the_pareto_set(means, name):
    # sigma 1e-12 is below the 2^-24 reward quantum: the empirical means are the population means
    spec = SyntheticSpec("n", means, COSTS[: len(means)], noise="gaussian", sigma=1e-12)
    problem = synthetic_problem(spec)
    assert all(g > 0 for g in brute_gaps(problem.mu)[3])  # every gap positive: identification is well posed
    res = run_psi(problem, PsiMethod(name), 50, stream_keys(0, np.arange(2), problem.arm_ids))
    assert (res.returned == [not x for x in brute_gaps(problem.mu)[0]]).all()
