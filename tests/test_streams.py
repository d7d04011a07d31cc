"""Paired streams: element n of (rep, arm) never depends on anything else (SPEC §4)."""

from __future__ import annotations

import numpy as np
import pytest

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


@pytest.mark.parametrize("noise", ["gaussian", "bernoulli"])
@pytest.mark.parametrize("d", range(2, 9))
def test_synthetic_objectives_and_cost_draw_independent_streams(noise, d):
    """No objective (or the noisy cost) reads the uniform of another, at any counter shift."""
    from cabench.synthetic import SyntheticSampler

    sampler = SyntheticSampler(np.full((2, d), 0.5), np.array([1.0, 2.0]), noise, 0.1, 0.5)
    w = sampler.draws
    slots = [[2 * j, 2 * j + 1] if noise == "gaussian" else [j] for j in range(d)] + [[w - 1]]
    used = [s for group in slots for s in group]
    assert len(set(used)) == len(used) and max(used) < w
    keys = stream_keys(0, np.arange(2), np.arange(2))
    n = np.arange(50)
    draws = {s: stream_uniform(keys[..., None], n[None, None, :], s, w) for s in used}
    for a in used:
        for b in used:
            for shift in (0, 1, 2):
                if a == b and shift == 0:
                    continue
                same = np.isclose(draws[a][..., shift:], draws[b][..., : 50 - shift]).mean()
                assert same < 0.05, (a, b, shift)
    with pytest.raises(ValueError):
        stream_uniform(keys, np.zeros((2, 2), dtype=np.int64), 8)
