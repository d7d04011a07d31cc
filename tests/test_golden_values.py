"""Hand-computed values of the paper's formulas on tiny instances (numbers worked out on paper).

These pin ``T_B``, the radii and the four online indices (Algorithm 1), the identification schedules
of CoPSI, PSI-SR, Uniform (Algorithm 2 and SPEC §6), CoPSI-R and EGE-SH (docs/methods.md), each in
both of its rules (batched and per pull), and whole runs on noiseless instances.
"""

from __future__ import annotations

import numpy as np
import pytest

from cabench.methods.elimination import Phase
from cabench.methods.lookup import get
from cabench.online import OnlineMethod, run_online
from cabench.online.engine import horizon_log_term, optimistic
from cabench.pareto import harmonic_l
from cabench.policy import PsiPolicy
from cabench.psi import PsiMethod, run_psi
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
    for name, value in [("cohv-ucb", 2.13811404010151), ("hv-ucb", 0.5638977806972891),
                        ("acc-cost-ucb", 2.412502588167412)]:
        method = get(name, "online")
        assert method.index(n, upper, lower)[0] == pytest.approx(value, rel=1e-12)  # batched
        assert method.of_one(4, upper[0].tolist(), float(lower[0])) == pytest.approx(value, rel=1e-12)  # per pull
    assert get("uniform", "online").index(n, upper, lower)[0] == -4
    # truncation: U at most 1, c_lcb at least lambda / 2
    upper, lower = optimistic(np.array([1]), np.array([[1.0, 1.0]]), np.array([0.1]), 1.0, 1.0, 7.4, 0.25)
    assert upper[0].tolist() == [1.0, 1.0] and lower[0] == 0.125


COSTS = [1.0, 0.5, 0.25]  # c~_i, lambda = 0.25, C_1 = 1.75, B~ = 20
L_LAMBDA = 1 + 1 / 1.25 + 1 / 1.5  # L_{3,0.25} = 2.4667
L_ONE = 1 + 1 / 2 + 1 / 3  # L_{3,1} = 1.8333


def _targets(name: str, l_k: float, spend: float, level: int, active: list[float]) -> tuple[int, int]:
    """A schedule's cumulative target of one phase, by its batched rule and by its per-pull rule."""
    method = get(name, "psi")
    phase = Phase(20.0, l_k, float(np.mean(COSTS)), np.array([spend]), np.array([level]), np.array([active]),
                  np.array([sum(active)]), len(active))
    return int(method.target(phase)[0]), method.target_of_one(20.0, l_k, float(np.mean(COSTS)), spend, level, active)


def test_identification_schedules():
    assert harmonic_l(3, 0.25) == pytest.approx(L_LAMBDA) and get("copsi", "psi").l_k(np.array(COSTS)) == L_LAMBDA
    assert get("psi-sr", "psi").l_k(np.array(COSTS)) == pytest.approx(L_ONE)
    assert _targets("copsi", L_LAMBDA, 0.0, 0, COSTS) == (4, 4)  # floor(20 / (2.4667 * 1.75)) = floor(4.633)
    assert _targets("copsi", L_LAMBDA, 7.0, 4, [0.5, 0.25]) == (10, 10)  # floor(20 / (2.4667 * 0.75)) = floor(10.81)
    assert _targets("psi-sr", L_ONE, 0.0, 0, COSTS) == (6, 6)  # floor(20 / (0.5833 * 1.8333 * 3)) = floor(6.234)
    assert _targets("psi-sr", L_ONE, 0.0, 6, [0.5, 0.25]) == (9, 9)  # floor(20 / (0.5833 * 1.8333 * 2)) = floor(9.351)
    uniform = PsiPolicy(PsiMethod("uniform"), 2, COSTS, 20.0)
    assert list(uniform.queue) == [0] * 11 + [1] * 11 + [2] * 11  # floor(20 / 1.75) = floor(11.43) rounds


def test_copsi_r_phase_targets():
    # phase 1: CoPSI's base = floor(20 / (L 1.75)) = 4. Reserve R = (B / L)(t_2 + t_2) - min(4, 4.633)(C - c_max)
    # with t_2 = c_max / (c_max + s_1) = 1 / 1.25 = 0.8: 8.1081 * 1.6 - 4 * 0.75 = 9.9730. Room = 20 - 4 * 1.75 - 9.9730
    # = 3.0270; the phase's share 1 / (1 + 1/3) = 0.75: target 4 + floor(3.0270 * 0.75 / 1.75) = 4 + floor(1.297) = 5
    assert _targets("copsi-r", L_LAMBDA, 0.0, 0, COSTS) == (5, 5)
    # phase 2 after 5 samples of each (spend 8.75), the last phase (no reserve, the whole room):
    # arm 0 left: base = max(floor(20 / (L 0.75)), 5) = 10, room = 20 - 8.75 - 5 * 0.75 = 7.5, 10 + floor(7.5 / 0.75)
    assert _targets("copsi-r", L_LAMBDA, 8.75, 5, [0.5, 0.25]) == (20, 20)
    # arm 2 left: base = max(floor(20 / (L 1.5)) = 5, 5) = 5, room = 20 - 8.75 = 11.25, 5 + floor(11.25 / 1.5) = 5 + 7
    assert _targets("copsi-r", L_LAMBDA, 8.75, 5, [1.0, 0.5]) == (12, 12)


# arm 0 dominated with the largest gap (0.5), arms 1 and 2 the Pareto set, both with gap 0.05
NOISELESS_PSI = ((0.1, 0.1), (0.9, 0.5), (0.85, 0.6))


@pytest.mark.parametrize("name, samples, spend", [
    # c~ = (1, 0.5, 0.25), rho = 16: B~ = 16 * 1.75 = 28, B = 16 * 3 * 70 / 3 = 1120 tokens
    ("copsi", [6, 15, 15], 17.25),  # floor(28 / 4.3167) = 6; then floor(28 / (2.4667 * 0.75)) = floor(15.14) = 15
    # CoPSI-R: base 6, R = 11.3514 * 1.6 - 6 * 0.75 = 13.6622, room = 28 - 10.5 - 13.6622 = 3.8378: 6 + floor(3.8378 *
    # 0.75 / 1.75) = 6 + floor(1.645) = 7 (the whole room would buy 2); then base max(15, 7) = 15, room = 28 - 12.25
    # - 8 * 0.75 = 9.75: 15 + floor(9.75 / 0.75) = 28; spend 12.25 + 21 * 0.75 = 28, the whole budget
    ("copsi-r", [7, 28, 28], 28.0),
])
def test_whole_elimination_runs_on_a_noiseless_instance(name, samples, spend):
    spec = SyntheticSpec("n3", NOISELESS_PSI, (40.0, 20.0, 10.0), noise="gaussian", sigma=1e-12)
    problem = synthetic_problem(spec)
    res = run_psi(problem, PsiMethod(name), 16, stream_keys(0, np.arange(2), problem.arm_ids))
    assert res.samples.tolist() == [samples, samples]
    assert res.spend.tolist() == [spend * 40, spend * 40] and res.budget == 1120
    assert res.removed.tolist() == [[0, 1], [0, 1]] and res.accepted.tolist() == [[False, True], [False, True]]
    assert res.returned.tolist() == [[False, True, True]] * 2


def test_ege_sh_rounds_on_a_noiseless_instance():
    # c~ = (1, 0.5, 0.25, 0.25), rho = 10: B~ = 20; R = ceil(log2 4) = 2 rounds, each with budget B~ / 2 = 10.
    # Round 1: C_1 = 2, every arm floor(10 / 2) = 5 samples; arms 0 (gap 0.5) and 1 (0.3), both dominated, leave.
    # Round 2: C_2 = 0.5, arms 2 and 3 each floor(10 / 0.5) = 20 more (25); the tie goes to arm 2, accepted.
    spec = SyntheticSpec("n4", ((0.1, 0.1), (0.3, 0.3), (0.9, 0.5), (0.85, 0.6)), (40.0, 20.0, 10.0, 10.0),
                         noise="gaussian", sigma=1e-12)
    problem = synthetic_problem(spec)
    res = run_psi(problem, PsiMethod("ege-sh"), 10, stream_keys(0, np.arange(2), problem.arm_ids))
    assert res.samples.tolist() == [[5, 5, 25, 25]] * 2
    assert res.spend.tolist() == [800.0, 800.0] and res.budget == 800  # 5 * 2 + 20 * 0.5 = B~
    assert res.removed.tolist() == [[0, 1, 2]] * 2 and res.accepted.tolist() == [[False, False, True]] * 2
    policy = PsiPolicy(PsiMethod("ege-sh"), 2, [1.0, 0.5, 0.25, 0.25], 20.0)
    assert list(policy.queue) == [0] * 5 + [1] * 5 + [2] * 5 + [3] * 5  # round 1 of the per-pull rule


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
    assert res.spend.tolist() == [60.0, 60.0] and res.budget == 60.0
