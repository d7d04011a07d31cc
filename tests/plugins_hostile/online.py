"""Online index functions ``index(n, upper, lower_cost)`` that misbehave, and a few that are fine."""

from __future__ import annotations

import sys

import numpy as np


class Abort(BaseException):
    """Neither an Exception nor KeyboardInterrupt."""


def hv_per_cost(n, upper, lower_cost):
    return upper[..., 0] * upper[..., 1] / lower_cost


def raises_value_error(n, upper, lower_cost):
    raise ValueError("no index today")


def exits_zero(n, upper, lower_cost):
    sys.exit(0)


def raises_base_exception(n, upper, lower_cost):
    raise Abort("abort\nwith a second line")


def nan(n, upper, lower_cost):
    return np.full(np.shape(n), np.nan)


def nan_after_five_pulls(n, upper, lower_cost):
    """Fine on the first calls, NaN once an arm has five pulls."""
    return np.where(n >= 5, np.nan, hv_per_cost(n, upper, lower_cost))


def minus_inf(n, upper, lower_cost):
    return np.full(np.shape(n), -np.inf)


def scalar(n, upper, lower_cost):
    return 1.0


def per_objective(n, upper, lower_cost):
    return upper  # [..., D], not [...]


def text(n, upper, lower_cost):
    return np.full(np.shape(n), "high")


def none(n, upper, lower_cost):
    return None


def ragged(n, upper, lower_cost):
    return [[1.0], [1.0, 2.0]]


def explore_first(n, upper, lower_cost):
    """+inf until an arm has three pulls: pull it first (ties to the lowest arm), then CoHV-UCB's index."""
    return np.where(n < 3, np.inf, hv_per_cost(n, upper, lower_cost))


def two_parameters(n, upper):
    return n


def extra_required(n, upper, lower_cost, scale):
    return n * scale


def keyword_required(n, upper, lower_cost, *, scale):
    return n * scale


def extra_default(n, upper, lower_cost, scale=1.0):
    return hv_per_cost(n, upper, lower_cost) * scale


def extra_keywords(n, upper, lower_cost, **options):
    return hv_per_cost(n, upper, lower_cost)


def any_arguments(*args):
    return hv_per_cost(*args)


def total_pulls(n, upper, lower_cost):
    """UCB1's bonus on the pulls of every arm it is given: a reduction over the arms, so the value of an arm changed
    with the batch it was computed in (and the results with chunk_size and n_jobs)."""
    t = np.sum(n, axis=-1, keepdims=True)
    return upper[..., 0] + np.sqrt(np.log(t + 1.0) / n)


def own_pulls(n, upper, lower_cost):
    """The same bonus on the arm's own pulls: arm by arm."""
    return upper[..., 0] + np.sqrt(np.log(n + 1.0) / n)


class HoldsALock:
    """A callable index object holding a lock, which no worker process can be sent."""

    def __init__(self):
        import threading

        self.lock = threading.Lock()

    def __call__(self, n, upper, lower_cost):
        with self.lock:
            return hv_per_cost(n, upper, lower_cost)


holds_a_lock = HoldsALock()


#: An attribute that exists but holds no method.
unset = None


def changes_with_a_long_batch(n, upper, lower_cost):
    """HV per cost, but otherwise once it is called with three or more rows: alike on a 2 x 5 grid and on one arm,
    unlike on the arms just pulled of a batch of repetitions."""
    bonus = 0.5 if np.ndim(n) == 1 and np.shape(n)[0] >= 3 else 0.0
    return hv_per_cost(n, upper, lower_cost) + bonus


_RNG = np.random.default_rng(0)


def random_tie_break(n, upper, lower_cost):
    """HV per cost with a random tie-break far below the probe's tolerance: the same seed gave other results."""
    return hv_per_cost(n, upper, lower_cost) * (1.0 + 1e-12 * _RNG.random(np.shape(n)))


_CALLS = [0]


def counts_its_calls(n, upper, lower_cost):
    """HV per cost plus a bonus that grows with every call: state kept between calls."""
    _CALLS[0] += 1
    return hv_per_cost(n, upper, lower_cost) + 1e-3 * _CALLS[0]
