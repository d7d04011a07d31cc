"""Dataset statistics: Table 1, profiling costs, Pareto structure (SPEC §8).

:func:`describe` returns one flat mapping; ``cabench data describe`` prints it
as a table or as JSON.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from cabench.data.arms import PRESETS
from cabench.data.dataset import Dataset
from cabench.errors import CabenchError
from cabench.pareto import (
    classification_gaps,
    complexity,
    harmonic_l,
    pareto_mask,
    theorem2_min_budget,
)


def identification_summary(ds: Dataset, arms: np.ndarray) -> dict[str, Any]:
    """Gaps, ``H_{mu,c}``, ``L_{K,lambda}`` and Theorem 2's budget for an arm set (SPEC §6), the budget named after
    the dataset's cost unit (``theorem2_budget_usd``), as result files name budgets."""
    if len(arms) < 2:  # one configuration: no gap, nothing to identify, no budget that means anything (None)
        return {"K": int(len(arms)), "pareto_size": int(len(arms)), "pareto_by_tie": 0, "min_gap": None, "gaps": {},
                "H": None, "L": None, f"theorem2_budget_{ds.cost_unit}": None, "theorem2_rho": None}
    mu = ds.mu[arms]
    cost = ds.profile_cost[arms]
    norm = cost / cost.max()
    _, _, gamma, _ = classification_gaps(mu)
    lam = float(norm.min())
    l_k = harmonic_l(len(arms), lam)
    h = complexity(gamma, norm)
    b_norm = theorem2_min_budget(l_k, h)
    budget = b_norm * float(cost.max())  # in the cost unit
    pareto = pareto_mask(mu)
    # a member another arm matches on some objectives and beats on the rest: in P* only by a tie (dominance is strict
    # in every objective, paper §3.2), where the usual (weak) dominance would leave it out
    weakly = (mu[None, :, :] >= mu[:, None, :]).all(axis=2) & (mu[None, :, :] > mu[:, None, :]).any(axis=2)
    return {
        "K": int(len(arms)),
        "pareto_size": int(pareto.sum()),
        "pareto_by_tie": int((pareto & weakly.any(axis=1)).sum()),
        "min_gap": float(gamma.min()) + 0.0,  # + 0.0: a tie is a gap of 0, never -0
        "gaps": {str(ds.configs["config_id"].iloc[a]): float(g) + 0.0 for a, g in zip(arms, gamma)},
        "H": float(h),
        "L": float(l_k),
        f"theorem2_budget_{ds.cost_unit}": float(budget),
        "theorem2_rho": float(budget / (len(arms) * cost.mean())),
    }


def _largest(ds: Dataset, values: np.ndarray) -> list[str]:
    """Every configuration sharing the largest value (``max_hv_arm`` names the first of them, as argmax does)."""
    return [str(c) for c in ds.configs["config_id"][np.asarray(values) == np.max(values)]]


def describe(ds: Dataset) -> dict[str, Any]:
    """Table 1 row, profiling costs, Pareto sizes and gaps of a dataset."""
    means = ds.table1_means()
    full = identification_summary(ds, np.arange(ds.n_arms))
    try:
        subset_arms = PRESETS["paper-subset"].select(ds.configs)
        subset = identification_summary(ds, subset_arms)
    except CabenchError:
        subset = None
    hv, nu = ds.hv, ds.nu
    cost = ds.profile_cost
    return {
        "name": ds.name,
        "surrogate": ds.surrogate,
        # the shipped surrogate logs whose rows made a dataset said to be real surrogate (cabench.data.surrogate)
        **({"surrogate_rows": ds.meta["surrogate_source"]} if ds.meta.get("surrogate_source") else {}),
        "K": ds.n_arms,
        **{f"{name}_{end}": float(getattr(means[column], end)()) if column in means else None
           for name, column in (("accuracy", "accuracy"), ("latency", "latency_s"), ("tokens", "tokens"),
                                ("usd", "usd"))
           for end in ("min", "max")},
        "objectives": [o.name for o in ds.norm.objectives],
        "cost_unit": ds.cost_unit,
        "pareto_size": full["pareto_size"],
        "pareto_by_tie": full["pareto_by_tie"],
        "cost_min": float(cost.min()),
        "cost_max": float(cost.max()),
        "subset_K": subset["K"] if subset else None,
        "subset_pareto_size": subset["pareto_size"] if subset else None,
        "subset_min_gap": subset["min_gap"] if subset else None,
        "max_hv_arm": str(ds.configs["config_id"].iloc[int(np.argmax(hv))]),
        "max_nu_arm": str(ds.configs["config_id"].iloc[int(np.argmax(nu))]),
        "max_hv_arms": _largest(ds, hv),
        "max_nu_arms": _largest(ds, nu),
        "max_hv_is_max_nu": bool(np.argmax(hv) == np.argmax(nu)),
        "tau5": ds.tau5,
        "tau95": ds.tau95,
        "c_max": ds.c_max,
        "lambda": ds.lam,
        "clipped_rows": ds.clipped_rows,
        "full_min_gap": full["min_gap"],
        "full_median_gap": float(np.median(list(full["gaps"].values()))) if full["gaps"] else None,
        "full_gaps": full["gaps"],
        "full_H": full["H"],
        "full_L": full["L"],
        f"full_theorem2_budget_{ds.cost_unit}": full[f"theorem2_budget_{ds.cost_unit}"],
        "full_theorem2_rho": full["theorem2_rho"],
        "subset_H": subset["H"] if subset else None,
        "subset_L": subset["L"] if subset else None,
        f"subset_theorem2_budget_{ds.cost_unit}": subset[f"theorem2_budget_{ds.cost_unit}"] if subset else None,
        "subset_theorem2_rho": subset["theorem2_rho"] if subset else None,
        "subset_gaps": subset["gaps"] if subset else None,
    }


def by_tie(d: dict[str, Any]) -> str:
    """How many members of the Pareto set :func:`describe` counted are in it only by a tie, said after its size
    (``" (2 of them only by a tie)"``); empty where none is (or ``d`` does not say)."""
    n = d.get("pareto_by_tie") or 0
    return (f" ({n} of them only by a tie as scored: another configuration is as good on every objective and "
            "better on one)") if n else ""


def table1(datasets: list[Dataset]) -> pd.DataFrame:
    """Table 1 of the paper for the given datasets (configuration-level means over all instances)."""
    rows = []
    for ds in datasets:
        d = describe(ds)
        rows.append({
            "dataset": d["name"], "surrogate": d["surrogate"], "K": d["K"],
            "accuracy_min": round(d["accuracy_min"], 4), "accuracy_max": round(d["accuracy_max"], 4),
            **{key: None if d[key] is None else round(d[key], digits)
               for key, digits in (("latency_min", 4), ("latency_max", 4), ("tokens_min", 2), ("tokens_max", 2))},
            "pareto_size": d["pareto_size"], "cost_min": round(d["cost_min"], 2), "cost_max": round(d["cost_max"], 2),
            "subset_pareto_size": d["subset_pareto_size"],
            "subset_min_gap": None if d["subset_min_gap"] is None else round(d["subset_min_gap"], 5),
        })
    return pd.DataFrame(rows)
