"""Paired streams: element n of (rep, arm) never depends on anything else (SPEC §4)."""

from __future__ import annotations

import numpy as np

from cabench.streams import stream_index, stream_keys, stream_uniform


def test_keys_do_not_depend_on_chunking_or_arm_subset():
    all_keys = stream_keys(3, np.arange(10), np.arange(20))
    assert np.array_equal(stream_keys(3, np.arange(4, 7), np.arange(20)), all_keys[4:7])
    assert np.array_equal(stream_keys(3, np.arange(10), np.array([2, 5, 19])), all_keys[:, [2, 5, 19]])
    assert not np.array_equal(stream_keys(4, np.arange(10), np.arange(20)), all_keys)


def test_elements_are_random_access():
    keys = stream_keys(0, np.arange(3), np.arange(4))
    block = stream_uniform(keys[..., None], np.arange(100)[None, None, :])
    one = stream_uniform(keys[1, 2], np.array(57))
    assert block[1, 2, 57] == one


def test_uniform_and_index_distribution():
    keys = stream_keys(1, np.arange(50), np.arange(20))
    u = stream_uniform(keys[..., None], np.arange(200)[None, None, :]).ravel()
    assert 0 <= u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    idx = stream_index(keys[..., None], np.arange(200)[None, None, :], 7).ravel()
    counts = np.bincount(idx, minlength=7) / len(idx)
    assert np.abs(counts - 1 / 7).max() < 0.01
    # different sub-draws of one element are not the same numbers
    assert not np.allclose(u[:100], stream_uniform(keys[..., None], np.arange(200)[None, None, :], 1).ravel()[:100])
