"""CoPSI-R's invariants on random instances (docs/methods.md), and EGE-SH on a 5-arm Gaussian instance."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cabench.policy import PsiPolicy
from cabench.psi import PsiMethod, run_psi
from cabench.psi.reference import reference_psi
from cabench.streams import stream_keys
from cabench.synthetic import SyntheticSpec, synthetic_problem

_Q = 2.0**-24


def _instance(means, costs, spread):
    return synthetic_problem(SyntheticSpec("r", means=tuple(map(tuple, means)), costs=tuple(costs),
                                           noise="bernoulli", cost_spread=spread))


instances = st.integers(3, 8).flatmap(lambda k: st.tuples(
    st.lists(st.tuples(st.floats(0.05, 0.95), st.floats(0.05, 0.95)), min_size=k, max_size=k),
    st.lists(st.floats(0.05, 1.0), min_size=k, max_size=k),
))


@settings(max_examples=40, deadline=None)
@given(instances, st.floats(20, 400), st.sampled_from(["deterministic", "stochastic"]), st.integers(0, 10**6))
def test_never_exceeds_the_budget(instance, rho, mode, seed):
    means, costs = instance
    problem = _instance(means, costs, 0.6 if mode == "stochastic" else 0.0)
    keys = stream_keys(seed, np.arange(4), problem.arm_ids)
    try:
        result = run_psi(problem, PsiMethod("copsi-r"), rho, keys, mode)
    except Exception as exc:  # a budget too small for the first phase is refused, as for CoPSI
        assert "too small" in str(exc)
        return
    assert (result.spend <= charged_budget(problem, rho)).all()
    assert (result.spend <= result.budget * (1 + quantised_excess(problem))).all()


def charged_budget(problem, rho: float) -> float:
    """The budget the engine charges against, in the cost unit: ``rho sum_i c~_i`` times ``max_i c_i``, with the
    quantised costs ``c~_i = c_i / max_j c_j`` computed here (multiplying by the same positive number keeps ``<=``)."""
    c_top = max(float(c) for c in problem.profile_cost)
    return rho * sum(round(float(c) / c_top / _Q) * _Q for c in problem.profile_cost) * c_top


def quantised_excess(problem) -> float:
    """How far, relative to ``B = rho sum_i c_i``, the charged budget can lie above it: each ``c~_i`` is within
    half a quantum of ``c_i / max_j c_j``, so by at most ``K 2^-25 / sum_i (c_i / max_j c_j)`` (docs/decisions.md:
    "never exceeded" in the engines' units), with room for the rounding of the sums."""
    c_top = max(float(c) for c in problem.profile_cost)
    return len(problem.profile_cost) * _Q / 2 / sum(float(c) / c_top for c in problem.profile_cost) + 1e-12


@settings(max_examples=40, deadline=None)
@given(instances, st.floats(20, 400), st.integers(0, 10**6))
def test_never_fewer_samples_in_a_phase_than_copsi(instance, rho, seed):
    """In every phase each active arm has at least CoPSI's target floor(B / (L_{K,lambda} C_r)) samples."""
    means, costs = instance
    problem = _instance(means, costs, 0.0)
    c_top = max(problem.profile_cost)
    q = [round(float(c) / c_top / _Q) * _Q for c in problem.profile_cost]
    budget = rho * sum(q)
    lam = min(q)
    l_k = 1.0 + sum(1.0 / (1.0 + (ell - 1) * lam) for ell in range(2, len(q) + 1))
    if math.floor(budget / (l_k * sum(q))) < 1:
        return
    policy = PsiPolicy(PsiMethod("copsi-r"), 2, q, budget)
    keys = stream_keys(seed, np.arange(1), problem.arm_ids)[0]
    asked = [0] * len(q)
    while (i := policy.ask()) is not None:
        rewards, _ = problem.sample(keys[i:i + 1], np.array([i]), np.array([asked[i]]))
        asked[i] += 1
        policy.tell(i, [float(v) for v in rewards[0]])
    assert not policy.stopped and policy.spend <= budget
    assert len(policy.phases) == len(q) - 1
    for active, fewest in policy.phases:
        assert fewest >= math.floor(budget / (l_k * sum(q[i] for i in active))), (active, fewest)


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 10), st.floats(70, 500), st.integers(0, 10**6))
def test_equal_costs_spend_at_least_99_percent(k, rho, seed):
    rng = np.random.default_rng(seed)
    problem = _instance(rng.uniform(0.1, 0.9, (k, 2)).round(3).tolist(), [1.0] * k, 0.0)
    keys = stream_keys(seed, np.arange(3), problem.arm_ids)
    result = run_psi(problem, PsiMethod("copsi-r"), rho, keys)
    assert (result.spend >= 0.99 * result.budget).all(), result.spend / result.budget
    assert (result.spend <= result.budget).all()


GAUSS5 = SyntheticSpec("gauss5", means=((0.8, 0.2), (0.6, 0.6), (0.2, 0.8), (0.5, 0.5), (0.3, 0.3)),
                       costs=(1.0, 1.0, 1.0, 1.0, 1.0), noise="gaussian", sigma=0.5)


def test_ege_sh_error_falls_with_budget_on_five_gaussian_arms():
    problem = synthetic_problem(GAUSS5)
    keys = stream_keys(0, np.arange(400), problem.arm_ids)
    errors = [float(run_psi(problem, PsiMethod("ege-sh"), rho, keys).error.mean()) for rho in (10, 40, 160, 640)]
    assert errors[0] > errors[1] > errors[2] > errors[3], errors
    assert errors[0] > 0.5 and errors[3] < 0.1, errors
    for rho in (10, 160):  # the batched loop and the per-pull reference decide alike
        result = run_psi(problem, PsiMethod("ege-sh"), rho, keys[:5])
        for r in range(5):
            ref = reference_psi(problem, PsiMethod("ege-sh"), rho, keys[r])
            assert np.flatnonzero(result.returned[r]).tolist() == ref["returned"]
            assert result.removed[r].tolist() == ref["removed"] and result.samples[r].tolist() == ref["samples"]
