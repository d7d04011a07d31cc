"""Identification's compiled loops: the gaps kept from phase to phase against the cubic computation,
decision by decision (paper eq. (1), Algorithm 2 lines 11-21), and the sampling in blocks under the
budget rule against the per-pull reference (SPEC §6)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from cabench.kernels.gaps import IncrementalGaps
from cabench.kernels.gaps import classification_gaps as compiled_gaps
from cabench.methods.elimination import schedule_entry
from cabench.pareto import TIE_ATOL, TIE_RTOL, classification_gaps, removal_choice
from cabench.psi import PsiMethod, run_psi
from cabench.psi.reference import reference_psi
from cabench.streams import stream_keys
from cabench.synthetic import SyntheticSpec, synthetic_problem


def _means(rng: np.random.Generator, shape: tuple[int, ...], tied: bool) -> np.ndarray:
    """Means on a grid of five values (equal coordinates, equal margins, duplicate arms) or continuous."""
    return rng.integers(0, 5, size=shape) / 4.0 if tied else rng.uniform(0.0, 1.0, size=shape)


@pytest.mark.parametrize("d", [1, 2, 3, 4])
@pytest.mark.parametrize("tied", [True, False])
@pytest.mark.parametrize("batch", [(3, 2), (5, 8)])
def test_compiled_gaps_equal_numpy_gaps(d, tied, batch):
    """Six sets (recomputed together up to 12 arms, one by one beyond) and forty (together throughout)."""
    rng = np.random.default_rng(d)
    for k in range(1, 19):
        mu = _means(rng, (*batch, k, d), tied)
        for got, want in zip(compiled_gaps(mu), classification_gaps(mu.copy())):
            assert got.shape == want.shape and np.array_equal(got, want), (k, mu)


def _check(gaps: IncrementalGaps, n: np.ndarray, sums: np.ndarray, active: np.ndarray) -> list:
    """Assert the kept gaps equal numpy's on every repetition's active means; return each one's (gamma,
    dominated)."""
    found = []
    for r in range(len(n)):
        arms = np.flatnonzero(active[r])
        minus, plus, gamma, dominated = classification_gaps(sums[r, arms] / n[r, arms][:, None])
        assert np.array_equal(gaps.delta_minus[r, arms], minus)
        assert np.array_equal(gaps.delta_plus[r, arms], plus)
        found.append((gamma, dominated))
    return found


@pytest.mark.parametrize("d", [2, 3, 4])
@pytest.mark.parametrize("tied", [True, False])
@pytest.mark.parametrize("reps", [8, 40])
def test_kept_gaps_equal_recomputed_gaps_phase_by_phase(d, tied, reps):
    """Random runs: each phase some repetitions get new samples (means moved), the others none; then either
    the arm Algorithm 2 chooses leaves (its choice, acceptance and gaps equal numpy's) or one or two arms
    chosen at random do (the gaps equal numpy's). With 40 repetitions the sampled ones are recomputed
    together, grouped by their number of active arms, which the random removals make differ."""
    rng = np.random.default_rng(10 * d + tied)
    for k in (2, 3, 6, 13):
        for _ in range(6):
            n = rng.integers(1, 4, size=(reps, k))
            sums = _means(rng, (reps, k, d), tied) * n[..., None]  # exact: small whole n, grid or float means
            active = np.ones((reps, k), dtype=bool)
            gaps = IncrementalGaps(reps, k, d, atol=TIE_ATOL, rtol=TIE_RTOL)
            while active.sum(axis=1).min() > 1:
                sampled = rng.random(reps) < 0.3
                extra = np.where(active & sampled[:, None], rng.integers(0, 3, size=(reps, k)), 0)
                sums += _means(rng, (reps, k, d), tied) * extra[..., None]
                n += extra
                if rng.random() < 0.5:
                    out, accepted = gaps.leave(n, sums, active)
                    for r, (gamma, dominated) in enumerate(_check(gaps, n, sums, active)):
                        arms = np.flatnonzero(active[r])
                        assert np.array_equal(gaps.gamma[r, arms], gamma)
                        assert np.array_equal(gaps.dominated[r, arms], dominated)
                        pos = removal_choice(gamma, dominated)
                        assert (out[r], accepted[r]) == (arms[pos], not dominated[pos])
                    active[np.arange(reps), out] = False
                else:
                    for r in range(reps):
                        arms = np.flatnonzero(active[r])
                        leaving = min(len(arms) - 2, int(rng.integers(1, 3)))
                        active[r, rng.choice(arms, size=max(leaving, 0), replace=False)] = False
                    gaps.update(n, sums, active)
                    _check(gaps, n, sums, active)


def _cubic(name: str) -> SimpleNamespace:
    """The method ``name`` with every phase's gaps recomputed in numpy."""
    return SimpleNamespace(entry=dataclasses.replace(PsiMethod(name).entry, cubic=True))


@pytest.mark.parametrize("name", ["copsi", "psi-sr", "copsi-r"])
@pytest.mark.parametrize("noise", ["bernoulli", "gaussian"])
def test_elimination_with_kept_gaps_equals_the_cubic_one(name, noise):
    """Whole runs on 40 arms, three objectives: the same removals, acceptances, sets, samples and spend."""
    rng = np.random.default_rng(7)
    means = tuple(map(tuple, rng.integers(1, 9, size=(40, 3)) / 10.0))  # many exact ties between arms
    spec = SyntheticSpec("ties", means, tuple(rng.uniform(1.0, 3.0, 40)), noise=noise, sigma=0.3)
    problem = synthetic_problem(spec)
    keys = stream_keys(2, np.arange(6), problem.arm_ids)
    for rho in (10, 60):
        kept = run_psi(problem, PsiMethod(name), rho, keys)
        cubic = run_psi(problem, _cubic(name), rho, keys)  # type: ignore[arg-type]
        for field in ("removed", "accepted", "returned", "samples", "spend"):
            assert np.array_equal(getattr(kept, field), getattr(cubic, field)), (name, rho, field)


def _greedy(budget, l_k, spend, level, active_costs, k_active):
    """Every phase asks for 40% of the budget more: the third phase runs out in the middle of an arm."""
    return level + np.floor(0.4 * budget / active_costs.sum(axis=1)).astype(np.int64)


def test_a_block_past_the_budget_is_cut_at_the_last_pull_that_fits():
    spec = SyntheticSpec("cut", ((0.9, 0.2), (0.6, 0.6), (0.2, 0.9), (0.5, 0.45), (0.15, 0.8), (0.7, 0.3)),
                         (1.0, 7.0, 2.5, 0.8, 4.0, 3.0), noise="gaussian", sigma=0.5)
    problem = synthetic_problem(spec)
    method = SimpleNamespace(entry=schedule_entry("greedy", _greedy))
    keys = stream_keys(5, np.arange(4), problem.arm_ids)
    for rho in (20, 75):
        res = run_psi(problem, method, rho, keys)  # type: ignore[arg-type]
        budget = problem.budget(rho)
        assert (res.spend <= budget).all() and (res.spend > budget - problem.profile_cost.max()).all()
        for r in range(len(keys)):
            ref = reference_psi(problem, method, rho, keys[r])  # type: ignore[arg-type]
            assert res.samples[r].tolist() == ref["samples"] and res.spend[r] == ref["spend"]
            assert res.removed[r].tolist() == ref["removed"] and res.accepted[r].tolist() == ref["accepted"]
            assert np.flatnonzero(res.returned[r]).tolist() == ref["returned"]


def test_importing_cabench_does_not_load_numba():
    code = "import sys, cabench.cli, cabench.runner, cabench.psi; print('numba' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
