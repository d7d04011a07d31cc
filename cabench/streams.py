"""Paired replay streams (SPEC §4).

For repetition ``r`` and arm ``i`` there is one stream of uniform draws; the
``n``-th pull of arm ``i`` in repetition ``r`` reads element ``n`` of it,
whatever the method, the budget, the chunking of repetitions or the worker.
Every method in a repetition therefore sees identical feedback (common random
numbers).

The stream of (r, i) is keyed by ``numpy.random.SeedSequence(seed,
spawn_key=(r,))``, whose state word ``arm_id`` is the stream key. Element
``n`` (sub-draw ``j``) is a counter-based hash of ``(key, n, j)``, so any
block of any stream is computed directly, vectorised, without generating its
prefix.
"""

from __future__ import annotations

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
DRAWS = 8  # default room for sub-draws per sample; a sampler needing more passes ``draws``
_U53 = 2.0**-53


def stream_keys(seed: int, reps: np.ndarray, arm_ids: np.ndarray) -> np.ndarray:
    """Stream keys ``[len(reps), len(arm_ids)]`` (uint64) for repetitions and global arm ids."""
    reps = np.asarray(reps, dtype=np.int64)
    arm_ids = np.asarray(arm_ids, dtype=np.int64)
    width = int(arm_ids.max()) + 1 if len(arm_ids) else 0
    keys = np.empty((len(reps), len(arm_ids)), dtype=np.uint64)
    for row, rep in enumerate(reps):
        state = np.random.SeedSequence(int(seed), spawn_key=(int(rep),)).generate_state(width, np.uint64)
        keys[row] = state[arm_ids]
    return keys


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser (a bijection of uint64 with full avalanche), in place on ``x``."""
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


def stream_bits(keys: np.ndarray, counts: np.ndarray, draw: int = 0, draws: int = DRAWS) -> np.ndarray:
    """64 random bits of element ``counts`` (sub-draw ``draw``) of the streams ``keys``.

    Each element owns ``draws`` sub-draws (counter ``draws * n + draw + 1``), so ``draw`` must be below
    ``draws``: a larger one would read a sub-draw of the next element. ``keys`` and ``counts``
    broadcast together.
    """
    if not 0 <= draw < draws:
        raise ValueError(f"sub-draw {draw} outside the {draws} sub-draws of an element")
    keys = np.asarray(keys, dtype=np.uint64)
    counts = np.asarray(counts)
    shape = keys.shape
    if counts.shape != shape:
        shape = np.broadcast_shapes(shape, counts.shape)
        keys, counts = np.broadcast_to(keys, shape), np.broadcast_to(counts, shape)
    counter = counts.astype(np.uint64).reshape(-1)  # a fresh array: mixed in place below
    with np.errstate(over="ignore"):
        counter *= np.uint64(draws)
        counter += np.uint64(draw + 1)
        counter *= _GOLDEN
        mixed = _mix(counter)
        mixed ^= keys.reshape(-1)
        out = _mix(mixed)
    return out.reshape(shape)


def stream_uniform(keys: np.ndarray, counts: np.ndarray, draw: int = 0, draws: int = DRAWS) -> np.ndarray:
    """Uniform draws in [0, 1) with 53 random bits (see :func:`stream_bits`)."""
    return (stream_bits(keys, counts, draw, draws) >> np.uint64(11)).astype(np.float64) * _U53


def stream_index(keys: np.ndarray, counts: np.ndarray, size: int) -> np.ndarray:
    """Bootstrap indices in ``[0, size)``: which evaluation instance a pull replays."""
    return (stream_bits(keys, counts) % np.uint64(size)).astype(np.int64)
