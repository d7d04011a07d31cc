"""Paired replay streams (SPEC §4).

For repetition ``r`` and arm ``i`` there is one stream of uniform draws; the
``n``-th pull of arm ``i`` in repetition ``r`` reads element ``n`` of it,
whatever the method, the budget, the chunking of repetitions or the worker.
Every method in a repetition therefore sees identical feedback (common random
numbers).

The stream of (r, i) is keyed by ``numpy.random.SeedSequence(seed,
spawn_key=(r,))``, whose state word ``arm_id`` is the stream key; the keys of
all repetitions are computed at once by :func:`stream_keys`, which repeats
``SeedSequence``'s hashing on arrays (the same keys, without one
``SeedSequence`` per repetition). Element ``n`` (sub-draw ``j``) is a
counter-based hash of ``(key, n, j)``, so any block of any stream is computed
directly, vectorised, without generating its prefix.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
DRAWS = 8  # default room for sub-draws per sample; a sampler needing more passes ``draws``
_U53 = 2.0**-53


# numpy.random.SeedSequence's constants (numpy/random/bit_generator.pyx): a pool of four 32-bit words
_POOL = 4
_WORD = 0xFFFFFFFF
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715


def stream_keys(seed: int, reps: np.ndarray, arm_ids: np.ndarray) -> np.ndarray:
    """Stream keys ``[len(reps), len(arm_ids)]`` (uint64) for repetitions and global arm ids.

    Key ``(r, i)`` is ``SeedSequence(seed, spawn_key=(r,)).generate_state(i + 1, np.uint64)[i]``: the seed's
    words are hashed into the pool once, then each repetition's words and the output hash are applied to
    all repetitions at once (:func:`_spawned_pools`, :func:`_state_words`).
    """
    reps = np.asarray(reps, dtype=np.int64).reshape(-1)
    arm_ids = np.asarray(arm_ids, dtype=np.int64).reshape(-1)
    if int(seed) < 0 or (reps < 0).any() or (arm_ids < 0).any():
        raise ValueError("a seed, repetition and arm id is a non-negative integer")
    pools = _spawned_pools(int(seed), reps)
    low = _state_words(pools, 2 * arm_ids).astype(np.uint64)
    high = _state_words(pools, 2 * arm_ids + 1).astype(np.uint64)
    return np.ascontiguousarray(low | (high << np.uint64(32)))  # pairs of words as little-endian uint64


def _words(value: int) -> list[int]:
    """An integer as SeedSequence reads it: 32-bit words, least significant first (0 is one word)."""
    out = [value & _WORD]
    while value := value >> 32:
        out.append(value & _WORD)
    return out


class _Hash:
    """SeedSequence's ``hashmix``, whose constant advances with each call, on Python ints or uint32 arrays
    (``& _WORD`` keeps an int to 32 bits; uint32 arithmetic wraps by itself)."""

    def __init__(self, const: int = _INIT_A) -> None:
        self.const = const

    def hashmix(self, value: Any) -> Any:
        value = value ^ self.const
        self.const = (self.const * _MULT_A) & _WORD
        value = (value * self.const) & _WORD
        return value ^ (value >> 16)

    def mix_in(self, mixer: list[Any], word: Any) -> list[Any]:
        """Every pool word mixed with ``word`` hashed (``mix_entropy``'s loop over words beyond the pool)."""
        return [_mix32(m, self.hashmix(word)) for m in mixer]


def _mix32(x: Any, y: Any) -> Any:
    result = (_MIX_L * x - _MIX_R * y) & _WORD
    return result ^ (result >> 16)


def _spawned_pools(seed: int, reps: np.ndarray) -> np.ndarray:
    """The entropy pools ``[reps, 4]`` (uint32) of ``SeedSequence(seed, spawn_key=(r,))`` (its ``mix_entropy``).

    The entropy is the seed's words padded with zeros to the pool size, then the repetition's words (one, or
    two from 2^32). The pool after the seed's words is the same for every repetition: it is computed once, on
    Python ints, and only the repetitions' words are hashed, on arrays.
    """
    run = _words(seed)
    run += [0] * (_POOL - len(run))
    hash_ = _Hash()
    mixer = [hash_.hashmix(w) for w in run[:_POOL]]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                mixer[dst] = _mix32(mixer[dst], hash_.hashmix(mixer[src]))
    for word in run[_POOL:]:
        mixer = hash_.mix_in(mixer, word)
    pools = np.empty((len(reps), _POOL), dtype=np.uint32)
    two_words = reps >> 32 > 0
    for rows, count in ((np.flatnonzero(~two_words), 1), (np.flatnonzero(two_words), 2)):
        if not len(rows):
            continue
        rep_hash, mixed = _Hash(hash_.const), [np.full(len(rows), m, dtype=np.uint32) for m in mixer]
        for w in range(count):
            mixed = rep_hash.mix_in(mixed, ((reps[rows] >> (32 * w)) & _WORD).astype(np.uint32))
        pools[rows] = np.stack(mixed, axis=1)
    return pools


def _state_words(pools: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Words ``positions`` of ``generate_state`` as uint32 words: ``[reps, len(positions)]``.

    Word ``j`` hashes pool word ``j % 4`` with the ``j``-th and ``j + 1``-th powers of the output constant.
    """
    top = int(positions.max()) + 2 if len(positions) else 1
    powers = np.full(top, _MULT_B, dtype=np.uint32)
    powers[0] = _INIT_B
    consts = np.cumprod(powers, dtype=np.uint32)  # INIT_B * MULT_B^j, wrapping at 2^32
    value = pools[:, positions % _POOL] ^ consts[positions]
    value *= consts[positions + 1]
    return value ^ (value >> np.uint32(16))


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
