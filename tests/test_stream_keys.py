"""Stream keys are numpy's ``SeedSequence(seed, spawn_key=(rep,))`` state words, computed for all repetitions at once
(SPEC §4), and the compiled draws are the numpy draws of :mod:`cabench.streams`."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cabench.kernels import streams as kernel
from cabench.streams import stream_bits, stream_index, stream_keys, stream_uniform

SEEDS = [0, 1, 7, 2**31 - 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 2**64, 2**96 + 5, 2**128 - 1, 2**128, 2**160 + 3,
         12345678901234567890123456789012345678901234567890]
REPS = [0, 1, 2, 99, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**40 + 17, 2**63 - 1]


def _seed_sequence(seed: int, reps, arm_ids) -> np.ndarray:
    """One SeedSequence per repetition, as the keys were first made."""
    arm_ids = np.asarray(arm_ids)
    width = int(arm_ids.max()) + 1
    return np.stack([np.random.SeedSequence(seed, spawn_key=(int(r),)).generate_state(width, np.uint64)[arm_ids]
                     for r in reps])


@pytest.mark.parametrize("seed", SEEDS)
def test_keys_are_seed_sequence_state_words(seed):
    for arm_ids in (np.arange(1), np.arange(5), np.array([131, 0, 7, 2]), np.arange(1000)):
        keys = stream_keys(seed, np.array(REPS), arm_ids)
        assert keys.dtype == np.uint64 and keys.flags.c_contiguous
        assert np.array_equal(keys, _seed_sequence(seed, REPS, arm_ids))


@settings(max_examples=200, deadline=None)
@given(seed=st.one_of(st.integers(0, 2**64), st.integers(2**128, 2**200)),  # up to 7 words: past the pool of 4
       reps=st.lists(st.integers(0, 2**63 - 1), min_size=1, max_size=6), width=st.integers(1, 300))
def test_keys_match_seed_sequence_anywhere(seed, reps, width):
    arm_ids = np.arange(width)
    assert np.array_equal(stream_keys(seed, np.array(reps), arm_ids), _seed_sequence(seed, reps, arm_ids))


def test_keys_refuse_negative_numbers_as_seed_sequence_does():
    with pytest.raises(ValueError):
        np.random.SeedSequence(-1, spawn_key=(0,))
    for seed, reps, arms in ((-1, [0], [0]), (0, [-1], [0]), (0, [0], [-1])):
        with pytest.raises(ValueError):
            stream_keys(seed, np.array(reps), np.array(arms))


def test_compiled_draws_are_the_numpy_draws():
    keys = stream_keys(11, np.arange(40), np.arange(25)).reshape(-1)
    counts = np.random.default_rng(0).integers(0, 2**40, keys.shape)
    for draw, draws in ((0, 8), (5, 8), (16, 17)):
        bits = np.array([kernel.bits(k, c, draw, draws) for k, c in zip(keys, counts)], dtype=np.uint64)
        assert np.array_equal(bits, stream_bits(keys, counts, draw, draws))
        u = kernel.uniforms(keys, counts, np.array([draw]), draws)[:, 0]
        assert np.array_equal(u, stream_uniform(keys, counts, draw, draws))
    for size in (1, 7, 1319, 2**33 + 1):
        rows = np.array([kernel.row(k, c, size) for k, c in zip(keys, counts)])
        assert np.array_equal(rows, stream_index(keys, counts, size))
