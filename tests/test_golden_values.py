"""Hand-computed values of the paper's formulas on tiny instances (numbers worked out on paper).

These pin ``T_B``, the radii and the four online indices (Algorithm 1), the three identification
schedules (Algorithm 2 and SPEC §6) and R_HV / R_std of whole runs on a noiseless instance.
"""

from __future__ import annotations

import numpy as np
import pytest

from cabench.online import OnlineMethod, run_online
from cabench.online.engine import horizon_log_term
from cabench.online.methods import INDEX, optimistic
from cabench.pareto import harmonic_l
from cabench.psi.schedules import PsiMethod, Schedule
from cabench.streams import stream_keys
from cabench.synthetic import SyntheticSpec, synthetic_problem


def test_horizon_term():
    # B~ = 10, lambda = 0.25: T_B = ceil(10 / 0.25) + 1 = 41, alpha log T_B = 2 ln 41
    assert horizon_log_term(10.0, 0.25, 2.0) == pytest.approx(7.427144133408616, rel=1e-12)
    assert horizon_log_term(10.1, 0.25, 2.0) == pytest.approx(2 * np.log(42), rel=1e-12)


def test_optimistic_estimates_and_indices():
    # n = 4, reward sums (2, 3), cost sum 1.6, s_r = s_c = 0.1, alpha log T_B = 2 ln 41, lambda = 0.25
    # beta = sqrt(2 ln 41 / 4) = 1.3626393629; U = (0.5 + 0.13626, 0.75 + 0.13626); c_lcb = 0.4 - 0.13626
    n = np.array([4])
    upper, lower = optimistic(n, np.array([[2.0, 3.0]]), np.array([1.6]), 0.1, 0.1, 7.427144133408616, 0.25)
    assert upper[0] == pytest.approx([0.6362639362910141, 0.8862639362910141], rel=1e-12)
    assert lower[0] == pytest.approx(0.26373606370898595, rel=1e-12)
    assert INDEX["cohv-ucb"](n, upper, lower)[0] == pytest.approx(2.13811404010151, rel=1e-12)
    assert INDEX["hv-ucb"](n, upper, lower)[0] == pytest.approx(0.5638977806972891, rel=1e-12)
    assert INDEX["acc-cost-ucb"](n, upper, lower)[0] == pytest.approx(2.412502588167412, rel=1e-12)
    assert INDEX["uniform"](n, upper, lower)[0] == -4
    # truncation: U at most 1, c_lcb at least lambda / 2
    upper, lower = optimistic(np.array([1]), np.array([[1.0, 1.0]]), np.array([0.1]), 1.0, 1.0, 7.4, 0.25)
    assert upper[0].tolist() == [1.0, 1.0] and lower[0] == 0.125


def test_identification_schedules():
    costs = np.array([1.0, 0.5, 0.25])  # c~_i, lambda = 0.25, C_1 = 1.75, B~ = 20
    assert harmonic_l(3, 0.25) == pytest.approx(1 + 1 / 1.25 + 1 / 1.5)
    copsi = Schedule.build(PsiMethod("copsi"), 20.0, costs)
    sr = Schedule.build(PsiMethod("psi-sr"), 20.0, costs)
    uniform = Schedule.build(PsiMethod("uniform"), 20.0, costs)
    assert copsi.l_k == pytest.approx(2.466666666666667) and sr.l_k == pytest.approx(1 + 1 / 2 + 1 / 3)
    assert int(copsi.target(np.array([1.75]), 3)[0]) == 4  # floor(20 / (2.4667 * 1.75)) = floor(4.633)
    assert int(copsi.target(np.array([0.75]), 2)[0]) == 10  # floor(20 / (2.4667 * 0.75)) = floor(10.81)
    assert int(sr.target(np.array([1.75]), 3)[0]) == 6  # floor(20 / (0.5833 * 1.8333 * 3)) = floor(6.234)
    assert int(sr.target(np.array([1.75]), 2)[0]) == 9  # floor(20 / (0.5833 * 1.8333 * 2)) = floor(9.351)
    assert int(uniform.target(np.array([1.75]), 3)[0]) == 11  # floor(20 / 1.75) = floor(11.43)


NOISELESS = SyntheticSpec("noiseless", means=((1.0, 1.0), (1.0, 1.0)), costs=(10.0, 20.0))


@pytest.mark.parametrize("name, pulls, regret_hv, regret_std", [
    # c~ = (0.5, 1.0), H = (1, 1), nu = (2, 1), Delta = (0, 1); rho = 2: B = 2 * 2 * 15 = 60 tokens, B~ = 3
    ("uniform", 4, 2.0, 2.0),  # arms 0, 1 (n_init = 1), then 0, 1: spend 3; R_std = 2 * 3 - 4
    ("cohv-ucb", 5, 1.0, 1.0),  # arms 0, 1, then arm 0 three times (index 1 / c_lcb favours arm 0)
    ("hv-ucb", 5, 1.0, 1.0),  # equal indices: ties go to arm 0
    ("acc-cost-ucb", 5, 1.0, 1.0),
])
def test_whole_runs_on_a_noiseless_instance(name, pulls, regret_hv, regret_std):
    problem = synthetic_problem(NOISELESS)
    res = run_online(problem, OnlineMethod(name), 2, stream_keys(0, np.arange(2), problem.arm_ids))
    assert res.pulls.tolist() == [pulls, pulls]
    assert res.regret_hv.tolist() == [regret_hv, regret_hv]
    assert res.regret_std.tolist() == pytest.approx([regret_std, regret_std])
    assert res.spend_tokens.tolist() == [60.0, 60.0] and res.budget_tokens == 60.0
