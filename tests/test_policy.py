"""The ask/tell policies: a retracted pull (a failed call) is asked again and changes no decision."""

from __future__ import annotations

import numpy as np
import pytest

from cabench.methods.configured import OnlineMethod, PsiMethod
from cabench.online.reference import reference_online
from cabench.policy import WAIT, OnlinePolicy, PsiPolicy
from cabench.psi.reference import reference_psi
from cabench.streams import stream_keys
from cabench.synthetic import SyntheticSpec, synthetic_problem

_Q = 2.0**-24
PROBLEM = synthetic_problem(SyntheticSpec("p", means=((0.9, 0.2), (0.6, 0.6), (0.2, 0.9), (0.5, 0.45), (0.15, 0.8)),
                                          costs=(1.0, 2.0, 1.5, 0.8, 1.2), noise="gaussian", sigma=0.5))


def _outcome(arm, count, keys):
    rewards, tokens = PROBLEM.sample(keys[arm:arm + 1], np.array([arm]), np.array([count]))
    return [float(v) for v in rewards[0]], float(tokens[0])


@pytest.mark.parametrize("name", ["copsi", "copsi-r", "ege-sh", "psi-sr", "uniform"])
def test_identification_retract_changes_nothing(name):
    keys = stream_keys(4, np.arange(1), PROBLEM.arm_ids)[0]
    c_top = float(PROBLEM.profile_cost.max())
    costs = [round(float(c) / c_top / _Q) * _Q for c in PROBLEM.profile_cost]
    policy = PsiPolicy(PsiMethod(name), 2, costs, 60 * sum(costs))
    counts, asks, retracted = [0] * PROBLEM.n_arms, 0, None
    while (arm := policy.ask()) is not None:
        assert arm != WAIT and retracted in (None, arm)  # a retracted pull is asked again next
        asks, retracted = asks + 1, None
        if asks % 5 == 0:  # every fifth call fails: no outcome, asked again
            policy.retract(arm)
            retracted = arm
            continue
        rewards, _ = _outcome(arm, counts[arm], keys)
        counts[arm] += 1
        policy.tell(arm, rewards)
    assert asks > 10
    assert policy.returned == reference_psi(PROBLEM, PsiMethod(name), 60, keys)["returned"]


@pytest.mark.parametrize("name", ["cohv-ucb", "uniform"])
def test_online_retract_changes_nothing(name):
    keys = stream_keys(4, np.arange(1), PROBLEM.arm_ids)[0]
    c_max = float(PROBLEM.c_max)
    budget = 20 * PROBLEM.n_arms * float(np.mean(PROBLEM.profile_cost)) / c_max
    policy = OnlinePolicy(OnlineMethod(name), 2, budget, [float(c) / c_max for c in PROBLEM.profile_cost],
                          float(PROBLEM.lam), 20)
    counts, arms, asks = [0] * PROBLEM.n_arms, [], 0
    while (arm := policy.ask()) is not None:
        asks += 1
        if asks % 4 == 0:  # every fourth call fails, in the initial rounds too
            policy.retract(arm)
            continue
        rewards, tokens = _outcome(arm, counts[arm], keys)
        counts[arm] += 1
        policy.tell(arm, rewards, round(min(tokens / c_max, 1.0) / _Q) * _Q)
        arms.append(arm)
    assert arms == reference_online(PROBLEM, OnlineMethod(name), 20, keys)["arms"]


@pytest.mark.parametrize("lam", [0.0, -0.1, 1.5, float("nan")])
def test_a_cost_bound_outside_0_1_is_refused_naming_lam(lam):
    """``lam`` is the smallest cost over the largest, in (0, 1]: 0 ended in a ZeroDivisionError deep in T_B."""
    with pytest.raises(ValueError, match=r"^lam: the cost lower bound lambda must lie in \(0, 1\], got"):
        OnlinePolicy(OnlineMethod("cohv-ucb"), 2, 40.0, [0.5, 1.0], lam, 4)
