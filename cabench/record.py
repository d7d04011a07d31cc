"""What a results folder records about its experiment: identity, code, arms and dataset.

Plots, reports and ``recommend`` read these records only, so a results folder
answers "which experiment, which arms, which code" on its own, after it is
moved or its dataset is deleted.

* :func:`config_hash` hashes an experiment's identity (resolved config, dataset
  name and content, arm set by configuration name); every result row carries it.
* ``code_hash`` (:mod:`cabench.cell_keys`) hashes the code that computes cells;
  ``config.yaml`` records it beside the git commit.
* :func:`arms_table` is ``arms.csv``: each arm by name with its metadata,
  population means, costs, ``nu``, Pareto membership and gaps (paper §3).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pandas as pd

from cabench.data.terms import USD_COLUMN
from cabench.pareto import classification_gaps, pareto_mask
from cabench.problem import Problem
from cabench.stats import wilson_bounds

ARM_COLUMNS = ["arm", "config_id", "model", "temperature", "max_new_tokens", "prompting"]


def stable_hash(payload: Any, length: int = 16) -> str:
    """SHA-256 (hex, first ``length`` characters) of ``payload`` as canonical JSON."""
    text = json.dumps(payload, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def config_hash(identity: dict[str, Any]) -> str:
    """The experiment's identity hash (resolved config, dataset content, arm names)."""
    return stable_hash(identity)


#: Measurements ``arms.csv`` gives in real units where the logs have them: (name, log column).
REAL_UNITS = (("accuracy", "correct"), ("latency_s", "latency_s"), ("tokens", "tokens"), ("usd", USD_COLUMN))


def real_units(measured: dict[str, np.ndarray], arms: np.ndarray) -> dict[str, np.ndarray]:
    """Per-arm means of the measurements in real units over the evaluation instances, for the arms ``arms``, and
    their 95% intervals: the half-width of the normal interval ``1.96 s / sqrt(n)`` (``<name>_ci``) and the
    interval's ends (``<name>_low``, ``<name>_high``).

    The ends are the normal interval's where it lies within the measurement's range (accuracy in [0, 1], the rest
    at least 0) and, for 0/1 outcomes, has a width; otherwise Wilson's score interval for 0/1 outcomes (few
    instances, or every one right or wrong) and the normal interval cut at the range for the rest.
    """
    out: dict[str, np.ndarray] = {}
    for name, column in REAL_UNITS:
        if column not in measured:
            continue
        values = np.asarray(measured[column], dtype=float)[arms]
        n = values.shape[1]
        mean = values.mean(axis=1)
        out[name] = mean
        if n < 2:
            out[f"{name}_ci"] = out[f"{name}_low"] = out[f"{name}_high"] = np.full(len(arms), np.nan)
            continue
        half = 1.96 * values.std(axis=1, ddof=1) / np.sqrt(n)
        top = 1.0 if name == "accuracy" else np.inf
        low, high = mean - half, mean + half
        binary = np.isin(values, (0.0, 1.0)).all(axis=1) if name == "accuracy" else np.zeros(len(arms), dtype=bool)
        outside = (low < 0.0) | (high > top) | (binary & (half == 0.0))
        replace = outside & binary
        wilson_low, wilson_high = wilson_bounds(np.where(binary, values.sum(axis=1), 0.0), n)
        out[f"{name}_ci"] = half
        out[f"{name}_low"] = np.where(replace, wilson_low, np.where(outside, np.maximum(low, 0.0), low))
        out[f"{name}_high"] = np.where(replace, wilson_high, np.where(outside, np.minimum(high, top), high))
    return out


def arms_table(problem: Problem, configs: pd.DataFrame | None, objectives: tuple[str, ...],
               measured: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """``arms.csv``: one row per arm of the experiment, by configuration name.

    Population means ``mu`` (one column per objective), the deterministic cost ``c_i`` in the cost unit
    (``profile_cost``), the mean normalised cost ``mu^c`` (``mu_c``), single-point hypervolume ``H`` and
    ``nu = H / mu^c`` (paper §3.1), ``Delta = nu* - nu``, Pareto membership within the experiment's arms and the
    classification gap ``gamma`` of eq. (1); then, from the evaluation rows ``measured`` (replayed logs), accuracy,
    latency in seconds, tokens and dollars per call where known, each with its 95% interval.
    """
    mu = np.asarray(problem.mu, dtype=float)
    _, _, gamma, _ = classification_gaps(mu.copy())
    nu = problem.nu
    out = pd.DataFrame({"arm": np.arange(problem.n_arms), "config_id": list(problem.arm_names)})
    if configs is not None:
        meta = configs.set_index("config_id").loc[list(problem.arm_names)]
        for col in ARM_COLUMNS[2:]:
            out[col] = meta[col].to_numpy()
    else:
        for col in ARM_COLUMNS[2:]:
            out[col] = ""
    for d, name in enumerate(objectives):
        out[f"mu_{name}"] = mu[:, d]
    out["profile_cost"] = problem.profile_cost
    out["mu_c"] = problem.mu_cost
    out["hv"] = problem.hv
    out["nu"] = nu
    out["delta"] = nu.max() - nu
    out["optimal"] = (np.arange(problem.n_arms) == int(np.argmax(nu))).astype(int)
    out["pareto"] = pareto_mask(mu).astype(int)
    out["gamma"] = gamma
    if measured is not None:
        for name, values in real_units(measured, np.asarray(problem.arm_ids)).items():
            out[name] = values
    return out


def objective_columns(arms: pd.DataFrame) -> list[str]:
    """The ``mu_<objective>`` columns of an ``arms.csv``, in objective order."""
    return [c for c in arms.columns if c.startswith("mu_") and c != "mu_c"]
