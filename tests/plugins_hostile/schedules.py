"""Identification schedules ``target(budget, l_k, spend, level, active_costs, k_active)`` that misbehave."""

from __future__ import annotations

import numpy as np


def front_loaded(budget, l_k, spend, level, active_costs, k_active):
    """Each phase spends half of what is left (the last phase all of it)."""
    share = 1.0 if k_active == 2 else 0.5
    return level + np.floor(np.maximum(budget - spend, 0.0) * share / active_costs.sum(axis=1)).astype(np.int64)


def raises_in_first_phase(budget, l_k, spend, level, active_costs, k_active):
    raise RuntimeError("no plan")


def raises_in_last_phase(budget, l_k, spend, level, active_costs, k_active):
    if k_active == 2:
        raise RuntimeError("no plan for the last phase")
    return front_loaded(budget, l_k, spend, level, active_costs, k_active)


def nan_in_second_phase(budget, l_k, spend, level, active_costs, k_active):
    target = front_loaded(budget, l_k, spend, level, active_costs, k_active).astype(np.float64)
    return target if spend.max() == 0 else np.full_like(target, np.nan)


def infinite(budget, l_k, spend, level, active_costs, k_active):
    return np.full(np.shape(spend), np.inf)


def beyond_int64(budget, l_k, spend, level, active_costs, k_active):
    return np.full(np.shape(spend), 1.0e30)


def scalar(budget, l_k, spend, level, active_costs, k_active):
    return 3


def column(budget, l_k, spend, level, active_costs, k_active):
    return front_loaded(budget, l_k, spend, level, active_costs, k_active)[:, None]


def spends_nothing(budget, l_k, spend, level, active_costs, k_active):
    """Writes into its arguments: if that reached the loop, the spend would restart at 0 every phase."""
    spend[:] = 0.0
    return front_loaded(budget, l_k, spend, level, active_costs, k_active)


def negative(budget, l_k, spend, level, active_costs, k_active):
    return np.full(np.shape(spend), -3)


def negative_in_second_phase(budget, l_k, spend, level, active_costs, k_active):
    target = front_loaded(budget, l_k, spend, level, active_costs, k_active)
    return target if spend.max() == 0 else np.full_like(target, -1)


def zero(budget, l_k, spend, level, active_costs, k_active):
    return np.zeros(np.shape(spend), dtype=np.int64)


def below_one(budget, l_k, spend, level, active_costs, k_active):
    return np.full(np.shape(spend), 0.5)


def needs_twice_copsi(budget, l_k, spend, level, active_costs, k_active):
    """CoPSI's target at half the budget: a schedule that keeps half back, whose first phase gives no sample
    below twice CoPSI's smallest budget."""
    return level + np.floor(budget / 2 / (l_k * active_costs.sum(axis=1))).astype(np.int64)


def far_beyond_the_budget(budget, l_k, spend, level, active_costs, k_active):
    """Every phase asks 10^5 more samples of each arm than it has: the budget pays for a few hundred."""
    return level + 10**5


_DRAWS = np.random.default_rng(0)  # a generator kept between calls: another share at every call
_CALLS = [0]


def drawn_share(budget, l_k, spend, level, active_costs, k_active):
    """front_loaded with a share drawn at every call: the targets depend on the order of the calls, so on n_jobs."""
    share = 1.0 if k_active == 2 else float(_DRAWS.uniform(0.3, 0.7))
    return level + np.floor(np.maximum(budget - spend, 0.0) * share / active_costs.sum(axis=1)).astype(np.int64)


def counts_its_calls(budget, l_k, spend, level, active_costs, k_active):
    """front_loaded, a sample more every other call."""
    _CALLS[0] += 1
    return front_loaded(budget, l_k, spend, level, active_costs, k_active) + _CALLS[0] % 2


def pooled(budget, l_k, spend, level, active_costs, k_active):
    """front_loaded on the mean spend of the repetitions it is given: a chunk's, which n_jobs and chunk_size set."""
    left = np.maximum(budget - np.mean(spend), 0.0)
    share = 1.0 if k_active == 2 else 0.5
    return level + np.floor(left * share / active_costs.sum(axis=1)).astype(np.int64)


def far_beyond(budget, l_k, spend, level, active_costs, k_active):
    """A target no budget pays (documented as allowed: the budget rule ends the sampling)."""
    return level + 2**62


def beyond(budget, l_k, spend, level, active_costs, k_active):
    """A target beyond the budget, but by far less than far_beyond's."""
    return level + 10**9
