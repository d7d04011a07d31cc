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
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from cabench.data.terms import COST_COLUMN, USD_COLUMN
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
#: Measurements recorded where they are the experiment's cost (``cost: completion_tokens``), so that the cost a
#: budget charges is shown per call beside the others; every real-unit measure ``arms.csv`` may hold.
COST_MEASURES = (("completion_tokens", "completion_tokens"),)
ALL_REAL_UNITS = REAL_UNITS + COST_MEASURES


def real_units(measured: dict[str, np.ndarray], arms: np.ndarray, questions: np.ndarray | None = None,
               cost_unit: str = "", own: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Per-arm means of the measurements in real units over the evaluation instances, for the arms ``arms``, and
    their 95% intervals: the half-width of the normal interval (``<name>_ci``, :func:`spread`) and the interval's
    ends (``<name>_low``, ``<name>_high``).

    The ends are the normal interval's where it lies within the measurement's range (accuracy in [0, 1], the rest
    at least 0) and, for 0/1 outcomes, has a width; otherwise Wilson's score interval for 0/1 outcomes (few
    instances, or every one right or wrong; on :func:`spread`'s number of trials) and the normal interval cut at
    the range for the rest. ``questions`` (epoch logs: each evaluation instance's question, ``0 .. q-1``) makes
    the runs of a question one unit of evidence. ``own``: the log columns of objectives of the user's own (a judge's
    score), each given under its column's name, its interval not cut at any range (its scale is the user's).
    """
    out: dict[str, np.ndarray] = {}
    for name, column in (*REAL_UNITS, *((n, c) for n, c in COST_MEASURES if n == cost_unit), *((c, c) for c in own)):
        if column not in measured:
            continue
        values = np.asarray(measured[column], dtype=float)[arms]
        alike = (values == values[:, :1]).all(axis=1) if values.shape[1] else np.zeros(len(values), dtype=bool)
        # every call the same (a price per call, a constant latency): that value, not a sum's rounding of it
        # (900 ms x 0.001 over 300 calls came out 0.9000000000000002 s, ± 2.5e-17)
        mean = np.where(alike, values[:, 0] if values.shape[1] else np.nan, values.mean(axis=1))
        out[name] = mean
        half, trials = spread(values, mean, questions)
        half = np.where(alike & np.isfinite(half), 0.0, half)
        top = 1.0 if name == "accuracy" else np.inf
        low, high = mean - half, mean + half
        if name in own:  # (no range cabench knows)
            out[name], out[f"{name}_ci"], out[f"{name}_low"], out[f"{name}_high"] = mean, half, low, high
            continue
        binary = np.isin(values, (0.0, 1.0)).all(axis=1) if name == "accuracy" else np.zeros(len(arms), dtype=bool)
        outside = ~np.isfinite(half) | (low < 0.0) | (high > top) | (binary & (half == 0.0))
        replace = outside & binary
        wilson_low, wilson_high = wilson_bounds(np.where(binary, mean, 0.0) * trials, trials)
        out[f"{name}_ci"] = half
        out[f"{name}_low"] = np.where(replace, wilson_low, np.where(outside, np.maximum(low, 0.0), low))
        out[f"{name}_high"] = np.where(replace, wilson_high, np.where(outside, np.minimum(high, top), high))
    return out


def spread(values: np.ndarray, mean: np.ndarray, questions: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``values`` (``[arms, n]``, means ``mean``): the half-width of the normal 95% interval of its mean
    (NaN with one unit of evidence) and the number of independent trials behind it.

    Instances: ``1.96 s / sqrt(n)`` and ``n``. Epoch logs (``questions``: each instance's question, ``q`` of them):
    the variance clustered by question, ``q / (q - 1) sum_g S_g^2 / n^2`` with ``S_g`` the sum of a question's
    deviations from the mean (Liang and Zeger, 1986), and as trials the effective number ``p (1 - p) / var``,
    between ``n^2 / sum_g m_g^2`` (``q`` when every question has ``m_g = n / q`` runs: alike runs) and ``n`` (``n``
    where questions do not differ but runs within them do; the lower end where every run is alike).
    """
    rows, n = values.shape
    if questions is None:
        half = 1.96 * values.std(axis=1, ddof=1) / np.sqrt(n) if n > 1 else np.full(rows, np.nan)
        return half, np.full(rows, float(n))
    q = int(questions.max()) + 1
    sums = np.stack([np.bincount(questions, weights=values[a] - mean[a], minlength=q) for a in range(rows)])
    var = q / (q - 1) * (sums**2).sum(axis=1) / n**2 if q > 1 else np.full(rows, np.nan)
    var = np.where(var <= (1e-9 * np.abs(values).max(axis=1)) ** 2, 0.0, var)  # rounding's residue: no spread
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = mean * (1.0 - mean) / var  # +inf: no spread between questions, yet runs differ within them
    fewest = n**2 / float((np.bincount(questions, minlength=q) ** 2).sum())  # every question's runs alike
    trials = np.where(np.isnan(effective), fewest, np.clip(effective, fewest, n))
    return 1.96 * np.sqrt(var), trials


def arms_table(problem: Problem, configs: pd.DataFrame | None, objectives: tuple[str, ...],
               measured: dict[str, np.ndarray] | None = None, questions: np.ndarray | None = None) -> pd.DataFrame:
    """``arms.csv``: one row per arm of the experiment, by configuration name.

    Population means ``mu`` (one column per objective), the deterministic cost ``c_i`` in the cost unit
    (``profile_cost``), the mean normalised cost ``mu^c`` (``mu_c``), single-point hypervolume ``H`` and
    ``nu = H / mu^c`` (paper §3.1), ``Delta = nu* - nu``, Pareto membership within the experiment's arms and the
    classification gap ``gamma`` of eq. (1); then, from the evaluation rows ``measured`` (replayed logs), accuracy,
    latency in seconds, tokens, dollars (and completion tokens where they are the cost) per call where known,
    each with its 95% interval (:func:`real_units`;
    ``questions``: an epoch log's question of each evaluation instance), and the mean per call of each objective's
    column of the user's own (:func:`own_columns`), under the column's name.
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
        ends = ("", "_ci", "_low", "_high")
        taken = {*out.columns, *(f"{n}{e}" for n, _ in ALL_REAL_UNITS for e in ends)}
        own: tuple[str, ...] = ()
        for column in own_columns(problem):  # in objective order: a later column's names never overwrite an earlier's
            names = {f"{column}{e}" for e in ends}
            if not str(column).startswith("mu_") and not names & taken:
                own, taken = (*own, column), taken | names
        for name, values in real_units(measured, np.asarray(problem.arm_ids), questions,
                                       problem.norm.cost_unit, own).items():
            out[name] = values
    return out


#: Log columns the built-in objectives and measures read: no column of the user's own.
_KNOWN_COLUMNS = frozenset({"correct", "latency_s", "tokens", "prompt_tokens", "completion_tokens", "cost_usd",
                            COST_COLUMN, USD_COLUMN})


def measure_columns(arms: pd.DataFrame | Mapping[str, Any]) -> list[str]:
    """The per-call means ``arms.csv`` records with their intervals (of its columns, or of an arm's facts by name):
    the real units (:data:`ALL_REAL_UNITS`), then the columns of the user's own its objectives read
    (:func:`own_columns`), each a column with ``_ci``, ``_low`` and ``_high`` beside it."""
    names = list(arms.columns) if isinstance(arms, pd.DataFrame) else list(arms)
    known = [m for m, _ in ALL_REAL_UNITS if m in names]
    own = [c for c in names if c not in known and not str(c).startswith("mu_")
           and all(f"{c}{end}" in names for end in ("_ci", "_low", "_high"))]
    return [*known, *own]


def own_columns(problem: Problem) -> tuple[str, ...]:
    """The log columns of the experiment's objectives of the user's own (``{column: judge, ...}``), in objective
    order: their means per call are recorded in the column's units, beside the normalised ``mu_<name>``."""
    return tuple(dict.fromkeys(o.column for o in problem.norm.objectives if o.column not in _KNOWN_COLUMNS))


def best_nu(arms: pd.DataFrame, among: np.ndarray | None = None) -> np.ndarray:
    """Which rows of ``arms.csv`` have the largest ν (of the rows ``among``, a boolean mask, if given), ties
    within a relative 1e-12 included."""
    nu = arms["nu"].to_numpy(dtype=float)
    among = np.ones(len(nu), dtype=bool) if among is None else np.asarray(among, dtype=bool)
    if not among.any():
        return among
    top = float(nu[among].max())
    return among & (np.abs(nu - top) <= 1e-12 * max(1.0, abs(top)))


def objective_columns(arms: pd.DataFrame) -> list[str]:
    """The ``mu_<objective>`` columns of an ``arms.csv``, in objective order."""
    return [c for c in arms.columns if c.startswith("mu_") and c != "mu_c"]


def boundary_arms(arms: pd.DataFrame) -> list[str]:
    """The configurations of ``arms`` (an ``arms.csv`` table) with a classification gap γ of eq. (1) of 0: on the
    boundary of the Pareto set, an exact tie as scored, which no budget classifies reliably."""
    if "gamma" not in arms:
        return []
    return arms.loc[arms["gamma"].to_numpy(float) <= 0, "config_id"].astype(str).tolist()
