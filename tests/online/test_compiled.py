"""The compiled online loop against the numpy loop, and the compiled samplers against numpy's draws (SPEC §4-5):
the same pulls, tallies, trajectories and values, bit for bit."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cabench.methods.user import UserMethodError
from cabench.online import OnlineMethod, run_online
from cabench.online.compiled import run_compiled
from cabench.online.engine import loop_constants
from cabench.problem import ReplaySampler, replay_problem
from cabench.quantize import quantize
from cabench.streams import stream_index, stream_keys, stream_uniform
from cabench.synthetic import SyntheticSampler, SyntheticSpec, synthetic_problem
from tests.conftest import ROOT, shipped

BUILT_IN = ["cohv-ucb", "hv-ucb", "acc-cost-ucb"]
SPREAD = SyntheticSpec("spread", means=((0.5, 0.5, 0.2), (0.8, 0.7, 0.4), (0.6, 0.3, 0.9), (0.3, 0.9, 0.5),
                                        (0.7, 0.6, 0.6)), costs=(10, 120, 80, 400, 35), cost_spread=0.3)


def _same(problem, method, rho, keys, points=50, window=7):
    """Every output of the compiled loop equals the numpy loop's; the compiled loop did run."""
    loop = loop_constants(problem, method, rho)
    assert run_compiled(problem, method, loop, keys, log=False) is not None
    a = run_online(problem, method, rho, keys, trajectory_points=points, window=window, record_arms=True)
    b = run_online(problem, method, rho, keys, trajectory_points=points, window=window, record_arms=True,
                   compiled=False)
    for name in ("pulls", "spend", "regret_hv", "regret_std", "frac_optimal", "counts", "arms_pulled"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), (method.name, rho, name)
    for name in ("spend", "cum_regret", "moving_avg"):
        assert np.array_equal(a.trajectory[name], b.trajectory[name], equal_nan=True), (method.name, rho, name)


@pytest.mark.parametrize("name", BUILT_IN)
@pytest.mark.parametrize("dataset", ["gsm8k", "piqa"])
def test_compiled_loop_equals_numpy_loop_on_logs(dataset, name):
    ds = shipped(dataset)
    problem = replay_problem(ds, np.arange(0, ds.n_arms, 3))
    keys = stream_keys(3, np.arange(6), problem.arm_ids)
    for rho in (1, 4, 16):
        _same(problem, OnlineMethod(name), rho, keys)
    _same(problem, OnlineMethod(name, mode="theory"), 6, keys)


@pytest.mark.parametrize("name", BUILT_IN)
def test_compiled_loop_equals_numpy_loop_on_bernoulli_arms_leaving_one_by_one(name):
    """Costs 10 to 400 with noise: the arms leave the feasible set one by one at the end of the budget."""
    problem = synthetic_problem(SPREAD)
    keys = stream_keys(8, np.arange(12), problem.arm_ids)
    for rho in (1, 2.5, 30):
        _same(problem, OnlineMethod(name, eta=0.2), rho, keys)


def test_ties_go_to_the_lowest_feasible_arm():
    """Radii this wide make every ``U`` 1 and every ``c_lcb`` lambda / 2: all indices tie at every step, so the
    loop pulls the lowest arm that fits — the costliest first, then the next as each stops fitting."""
    spec = SyntheticSpec("ties", means=((0.5, 0.5), (0.8, 0.7), (0.6, 0.3), (0.3, 0.9), (0.7, 0.6)),
                         costs=(400, 120, 80, 10, 35), cost_spread=0.3)
    problem = synthetic_problem(spec)
    keys = stream_keys(1, np.arange(5), problem.arm_ids)
    method = OnlineMethod("cohv-ucb", s_r=1e5, s_c=1e5)
    _same(problem, method, 9, keys)
    arms = run_online(problem, method, 9, keys, record_arms=True).arms_pulled[:, 0]
    arms = arms[arms >= 0][len(spec.costs):]  # after the initial round
    assert arms[0] == 0 and arms[-1] == 3 and (np.diff(arms) >= 0).all()


@settings(max_examples=30, deadline=None)
@given(k=st.integers(2, 19), d=st.integers(1, 4), seed=st.integers(0, 2**40), rho=st.floats(1, 12),
       spread=st.floats(0, 0.6), name=st.sampled_from(BUILT_IN), eta=st.floats(0.01, 0.3))
def test_compiled_loop_equals_numpy_loop_anywhere(k, d, seed, rho, spread, name, eta):
    rng = np.random.default_rng(seed)
    spec = SyntheticSpec("h", tuple(map(tuple, rng.uniform(0, 1, (k, d)))), tuple(rng.uniform(1, 50, k)),
                         cost_spread=spread)
    problem = synthetic_problem(spec)
    _same(problem, OnlineMethod(name, eta=eta), rho, stream_keys(seed, np.arange(3), problem.arm_ids), points=20)


def test_gaussian_rewards_run_in_the_numpy_loop():
    spec = SyntheticSpec("g", means=((0.5, 0.5), (0.8, 0.7)), costs=(1, 2), noise="gaussian")
    problem = synthetic_problem(spec)
    keys = stream_keys(0, np.arange(3), problem.arm_ids)
    method = OnlineMethod("cohv-ucb")
    assert run_compiled(problem, method, loop_constants(problem, method, 5), keys, log=False) is None
    assert run_online(problem, method, 5, keys).pulls.sum() > 0


# Index functions of one's own: numba compiles these three; their problems show only after a few pulls.
def late_nan(n, upper, lower_cost):
    out = upper[:, 0] / lower_cost
    if n[0] > 3:
        out[:] = np.nan
    return out


def late_raise(n, upper, lower_cost):
    if n[0] > 3:
        raise ValueError("no index after three pulls")
    return upper[:, 0] / lower_cost


def two_values(n, upper, lower_cost):
    return np.ones(2)


@pytest.fixture
def problem():
    return replay_problem(shipped("piqa"), np.arange(0, 132, 11))


def test_compiled_index_of_ones_own_decides_as_in_numpy(problem, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    method = OnlineMethod("my_methods:sqrt_cost_ucb")
    assert not method.entry.compiled_index().per_arm
    _same(problem, method, 5, stream_keys(2, np.arange(4), problem.arm_ids))


@pytest.mark.parametrize("function, words", [("late_nan", "returned nan"),
                                             ("late_raise", "raised ValueError: no index after three pulls"),
                                             ("two_values", re.escape("returned shape (2,) for arguments of"))])
def test_index_of_ones_own_that_fails_compiled_is_named_by_the_numpy_loop(problem, function, words):
    method = OnlineMethod(f"{__name__}:{function}")
    keys = stream_keys(0, np.arange(3), problem.arm_ids)
    from cabench.kernels.online import from_arrays

    assert from_arrays(method.entry.compiled_index().function) is not None  # it compiles: the compiled loop tries
    with pytest.raises(UserMethodError, match=words):
        run_online(problem, method, 4, keys)
    assert run_compiled(problem, method, loop_constants(problem, method, 4), keys, log=False) is None


def _replay_numpy(sampler: ReplaySampler, keys, arms, counts):
    q = stream_index(keys, counts, sampler.rewards.shape[1])
    return sampler.rewards[arms, q], sampler.costs[arms, q]


def test_compiled_replay_sampler_is_numpy_replay():
    problem = replay_problem(shipped("gsm8k"), np.arange(0, 108, 5))
    sampler = problem.sampler
    keys = stream_keys(4, np.arange(30), problem.arm_ids)
    arms = np.broadcast_to(np.arange(problem.n_arms), keys.shape)
    counts = np.random.default_rng(1).integers(0, 10**6, keys.shape)
    for got, want in zip(sampler.sample(keys, arms, counts), _replay_numpy(sampler, keys, arms, counts)):
        assert got.shape == want.shape and np.array_equal(got, want)
    flat_keys, flat_arms = keys.reshape(-1), arms.reshape(-1)
    starts, lengths = counts.reshape(-1) % 500, counts.reshape(-1) % 37 + 1
    pulls = np.repeat(np.arange(len(starts)), lengths)
    elements = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths) + starts[pulls]
    rewards, _ = _replay_numpy(sampler, flat_keys[pulls], flat_arms[pulls], elements)
    want = np.add.reduceat(rewards, np.cumsum(lengths) - lengths, axis=0)
    assert np.array_equal(sampler.reward_sums(flat_keys, flat_arms, starts, lengths), want)


@pytest.mark.parametrize("quantised", [True, False])
@pytest.mark.parametrize("objectives", [1, 2, 3])
def test_block_sums_of_any_number_of_objectives_are_sums_of_pulls(objectives, quantised):
    """Quantised rewards are summed in whole quanta (integers), exactly the sums of the pulls' rewards; other
    rewards in floating point, in another order than numpy's, so to rounding."""
    rng = np.random.default_rng(objectives)
    raw = rng.uniform(0, 1, (5, 70, objectives))
    rewards = quantize(raw) if quantised else raw
    sampler = ReplaySampler(rewards, np.ones((5, 70)))
    assert (sampler.quanta is not None) == quantised
    keys = stream_keys(7, np.arange(40), np.arange(5)).reshape(-1)
    arms = np.tile(np.arange(5), 40)
    starts, lengths = rng.integers(0, 10**5, len(keys)), rng.integers(1, 30, len(keys))
    pulls = np.repeat(np.arange(len(keys)), lengths)
    elements = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths) + starts[pulls]
    drawn = rewards[arms[pulls], stream_index(keys[pulls], elements, 70)]
    want = np.add.reduceat(drawn, np.cumsum(lengths) - lengths, axis=0)
    got = sampler.reward_sums(keys, arms, starts, lengths)
    if quantised:
        assert np.array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_quanta_only_of_quantised_finite_rewards():
    rewards = quantize(np.linspace(0, 1, 24).reshape(2, 4, 3))
    quanta = ReplaySampler(rewards, np.ones((2, 4))).quanta
    assert quanta is not None and quanta.dtype == np.int64 and not quanta.flags.writeable
    assert np.array_equal(quanta, np.round(rewards * 2**24)) and quanta[1, 3, 2] == 2**24
    for bad in (0.5 + 2.0**-30, np.nan, np.inf, 1.0 + 2.0**-24, -2.0):
        other = rewards.copy()
        other[1, 2, 0] = bad
        assert ReplaySampler(other, np.ones((2, 4))).quanta is None, bad
    negative = ReplaySampler(-rewards, np.ones((2, 4))).quanta
    assert negative is not None and negative[1, 3, 2] == -(2**24)


def test_a_pickled_replay_sampler_leaves_its_quanta_behind():
    sampler = ReplaySampler(quantize(np.linspace(0, 1, 24).reshape(2, 4, 3)), np.ones((2, 4)))
    assert sampler.quanta is not None and "quanta" in vars(sampler)
    copy = pickle.loads(pickle.dumps(sampler))
    assert "quanta" not in vars(copy) and np.array_equal(copy.rewards, sampler.rewards)
    assert np.array_equal(copy.quanta, sampler.quanta)


def test_spend_in_other_units_is_added_pull_by_pull():
    tokens = np.random.default_rng(2).uniform(1, 900, (4, 50))
    sampler = ReplaySampler(np.zeros((4, 50, 2)), np.ones((4, 50)), {"tokens": tokens})
    keys = stream_keys(6, np.arange(5), np.arange(4))
    counts = np.array([[0, 3, 1, 7], [2, 2, 2, 2], [0, 0, 0, 0], [11, 0, 5, 1], [1, 1, 40, 9]])
    want = np.zeros(5)
    for r in range(5):
        for i in range(4):
            for n in range(counts[r, i]):
                want[r] += tokens[i, stream_index(keys[r, i], np.array(n), 50)]
    assert np.array_equal(sampler.spent_also(keys, counts)["tokens"], want)


@pytest.mark.parametrize("noise", ["bernoulli", "gaussian"])
@pytest.mark.parametrize("d, spread", [(1, 0.0), (2, 0.4), (5, 0.1), (9, 0.2)])
def test_compiled_synthetic_sampler_is_numpy_synthetic(noise, d, spread):
    rng = np.random.default_rng(d)
    sampler = SyntheticSampler(rng.uniform(0, 1, (6, d)), rng.uniform(1, 9, 6), noise, 0.3, spread)
    keys = stream_keys(9, np.arange(50), np.arange(6))
    arms = np.broadcast_to(np.arange(6), keys.shape)
    counts = rng.integers(0, 10**5, keys.shape)
    w = sampler.draws
    if noise == "bernoulli":
        u = np.stack([stream_uniform(keys, counts, j, w) for j in range(d)], axis=-1)
        rewards = (u < sampler.means[arms]).astype(np.float64)
    else:
        u1 = np.stack([stream_uniform(keys, counts, 2 * j, w) for j in range(d)], axis=-1)
        u2 = np.stack([stream_uniform(keys, counts, 2 * j + 1, w) for j in range(d)], axis=-1)
        normal = np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
        rewards = quantize(sampler.means[arms] + 0.3 * normal)
    tokens = sampler.costs[arms]
    if spread > 0:
        tokens = tokens * (1.0 + spread * (2.0 * stream_uniform(keys, counts, w - 1, w) - 1.0))
    got_rewards, got_tokens = sampler.sample(keys, arms, counts)
    assert np.array_equal(got_rewards, rewards) and np.array_equal(got_tokens, tokens)
