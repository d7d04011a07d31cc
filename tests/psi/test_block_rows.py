"""The bootstrap rows of Algorithm 2's blocks, drawn without a division (SPEC §4): ``bits % Q`` exactly, for every
table size up to 4,096 rows (the shipped logs have 70 to 1,500) and larger ones, on the values where an estimated
quotient is closest to being off by one; and the rows of runs of pulls equal numpy's stream index."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from cabench.kernels import streams
from cabench.streams import stream_index, stream_keys


@numba.njit
def _remainders(values, size):
    """``streams._remainder`` of every value, with the reciprocals :func:`cabench.kernels.streams.rows` takes
    (computed here, not by :func:`cabench.kernels.streams.reciprocals`)."""
    scale, inverse = 2048.0 / size, 1.0 / size
    out = np.empty(len(values), np.int64)
    for p in range(len(values)):
        out[p] = streams._remainder(values[p], size, scale, inverse)
    return out


def _hard_values(size: int, rng: np.random.Generator) -> np.ndarray:
    """Multiples of ``size`` and their neighbours at 0, about 2^53 and 2^63 (where a double stops holding every
    integer and where the sign bit is) and at the top of uint64, every power of two and its neighbours, and random
    words."""
    top = 2**64 - 1
    near = [0, 1, 2, 2**53 // size - 1, 2**53 // size, 2**63 // size, 2**63 // size + 1, top // size - 1, top // size]
    values = {m * size + step for m in near for step in (-1, 0, 1, size - 1)}
    values |= {2**e + step for e in range(64) for step in (-1, 0, 1)} | {top}
    values |= set(int(v) for v in rng.integers(0, 2**64, 64, dtype=np.uint64))
    return np.array(sorted(v for v in values if 0 <= v <= top), dtype=np.uint64)


def test_remainder_without_division_is_the_remainder():
    rng = np.random.default_rng(0)
    sizes = [*range(1, 4097), 10**6 + 3, 2**31 - 1, 2**32, 2**32 + 15, 2**40 + 9, 2**49 - 1]
    for size in sizes:
        values = _hard_values(size, rng)
        want = (values % np.uint64(size)).astype(np.int64)  # numpy's unsigned 64-bit division
        got = _remainders(values, size)
        assert np.array_equal(got, want), (size, values[got != want][:5])


@numba.njit
def _rows(keys, starts, lengths, size):
    out = np.zeros((len(keys), lengths.max() + 8), np.int64)  # room for whole groups of 8
    scale, inverse = streams.reciprocals(size)
    for b in range(len(keys)):
        streams.rows(keys[b], starts[b], lengths[b], size, scale, inverse, out[b])
    return out


@pytest.mark.parametrize("size", [1, 7, 70, 800, 1500, 2**20 + 7])
def test_rows_of_a_run_of_pulls_are_numpy_stream_indices(size):
    keys = stream_keys(3, np.arange(20), np.arange(4)).reshape(-1)
    rng = np.random.default_rng(size)
    starts, lengths = rng.integers(0, 10**6, len(keys)), rng.integers(0, 40, len(keys))
    got = _rows(keys, starts, lengths, size)
    for b in range(len(keys)):
        want = stream_index(np.full(lengths[b], keys[b]), starts[b] + np.arange(lengths[b]), size)
        assert np.array_equal(got[b, : lengths[b]], want)
