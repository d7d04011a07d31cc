"""``cabench recommend``: the configurations worth paying for, by name, from result folders.

Per experiment, method and budget:

* online selection — the configuration each method ends up exploiting (the
  most-pulled arm at the end of the budget, ties to the lowest arm), how often
  across repetitions, with its population accuracy, efficiency, cost and ``nu``;
* identification — the returned Pareto set by configuration name: how often
  each configuration is returned, the most frequent returned set, and the share
  of repetitions returning exactly the true set;

and, from ``arms.csv``, the true Pareto set and the max-``nu`` configuration.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from cabench import registry
from cabench.errors import CabenchError
from cabench.jsonio import strict_dumps
from cabench.record import REAL_UNITS, objective_columns
from cabench.results import Experiment, ResultSet
from cabench.units import LABELS, amount


def _arm_facts(arms: pd.DataFrame, name: str) -> dict[str, Any]:
    """An arm's normalised means, cost ``c_i``, ``nu``, and its real-unit means with 95% intervals where known."""
    row = arms[arms["config_id"].astype(str) == name].iloc[0]
    out: dict[str, Any] = {"config_id": name}
    for col in objective_columns(arms):
        out[col] = float(row[col])
    out.update({"profile_cost": float(row["profile_cost"]), "nu": float(row["nu"]), "pareto": bool(row["pareto"]),
                "optimal": bool(row["optimal"])})
    for measure, _ in REAL_UNITS:
        if measure in arms:
            out[measure] = float(row[measure])
            out[f"{measure}_ci"] = float(row[f"{measure}_ci"])
    return out


def _online(e: Experiment) -> list[dict[str, Any]]:
    out = []
    for (method, rho), g in e.runs.groupby(["method", "rho"], sort=False):
        counts = g["exploited"].astype(str).value_counts()
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        n = len(g)
        out.append({
            "method": method, "rho": float(rho), "budget": float(g["budget"].iloc[0]),
            "repetitions": n, "spend_share": float((g["spend"] / g["budget"]).mean()),
            "exploited": [{**_arm_facts(e.arms, name), "share": c / n} for name, c in ranked],
        })
    return out


def _psi(e: Experiment) -> list[dict[str, Any]]:
    truth = frozenset(e.arms.loc[e.arms["pareto"] == 1, "config_id"].astype(str))
    keys = ["method", "cost_mode", "rho"]
    returned = {k: g for k, g in e.selections[e.selections["returned"] == 1].groupby(keys, sort=False)}
    out = []
    for (method, mode, rho), g in e.runs.groupby(keys, sort=False):
        chosen = returned.get((method, mode, rho), e.selections.iloc[:0])
        sets = chosen.groupby("rep")["config_id"].apply(lambda c: frozenset(c.astype(str)))
        sets = sets.reindex(sorted(g["rep"].unique()), fill_value=frozenset())
        n = len(sets)
        freq = chosen["config_id"].astype(str).value_counts()
        by_set = sets.value_counts()
        modal_set, modal_count = sorted(by_set.items(), key=lambda item: (-item[1], sorted(item[0])))[0]
        out.append({
            "method": method, "cost_mode": mode, "rho": float(rho),
            "budget": float(g["budget"].iloc[0]), "repetitions": n,
            "spend_share": float((g["spend"] / g["budget"]).mean()),
            "exact_true_set": float(sum(st == truth for st in sets)) / n,
            "modal_set": sorted(modal_set), "modal_set_share": modal_count / n,
            "configurations": [{"config_id": name, "share": c / n, "pareto": name in truth}
                               for name, c in sorted(freq.items(), key=lambda item: (-item[1], item[0]))],
        })
    return out


def recommend(root: Path) -> list[dict[str, Any]]:
    """One mapping per experiment (see the module docstring)."""
    res = ResultSet(root)
    if res.empty:
        raise CabenchError(f"{root}: no results below this folder; run `cabench run CONFIG` first")
    out = []
    for e in res.experiments:
        truth = e.arms.loc[e.arms["pareto"] == 1, "config_id"].astype(str).tolist()
        best = e.arms.loc[e.arms["optimal"] == 1, "config_id"].astype(str).iloc[0]
        out.append({
            "experiment": e.label, "config_hash": e.config_hash, "setting": e.setting, "dataset": e.title,
            "surrogate": e.surrogate, "K": e.k, "objectives": e.objectives, "cost_unit": e.cost_unit,
            "true_pareto_set": truth, "max_nu": _arm_facts(e.arms, best),
            "results": _online(e) if e.setting == "online" else _psi(e),
        })
    return out


def recommendations_json(items: list[dict[str, Any]]) -> str:
    """Strict JSON of :func:`recommend`'s mappings (a non-finite number is ``null``, never ``NaN``)."""
    return strict_dumps(items, indent=1)


#: How the terminal shows each real-unit measurement per call: prefix, number format, suffix.
SHOWN = {"accuracy": ("accuracy ", "{:.3f}", ""), "latency_s": ("", "{:.3g}", " s"),
         "tokens": ("", "{:,.0f}", " tokens"), "usd": ("$", "{:.3g}", "")}


def _facts(a: dict[str, Any], unit: str) -> str:
    """Real units per call where known (mean ± 95% half-width), then the normalised objectives, ``c_i`` and nu."""
    real = []
    for measure, (prefix, number, suffix) in SHOWN.items():
        if measure in a:
            half = a.get(f"{measure}_ci")
            spread = f" ± {number.format(half)}" if half is not None and math.isfinite(half) else ""
            real.append(f"{prefix}{number.format(a[measure])}{spread}{suffix}")
    objectives = ", ".join(f"{k[3:]} {v:.3f}" for k, v in a.items() if k.startswith("mu_") and k != "mu_c")
    per_call = f"per call: {', '.join(real)}; " if real else ""
    return f"{per_call}normalised {objectives}; cost c_i {amount(a['profile_cost'], unit)}, nu {a['nu']:.3f}"


def format_recommendations(items: list[dict[str, Any]], top: int = 10) -> str:
    """Plain text for the terminal (``top`` configurations per identification row)."""
    lines = []
    for item in items:
        lines.append(f"{item['experiment']} ({item['setting']}, {item['dataset']}"
                     f"{', surrogate logs' if item['surrogate'] else ''}, K={item['K']}, config {item['config_hash']})")
        unit = item["cost_unit"]
        lines.append(f"  objectives: {', '.join(item['objectives'])}; cost in {LABELS[unit]}")
        lines.append(f"  true Pareto set ({len(item['true_pareto_set'])}): {', '.join(item['true_pareto_set'])}")
        lines.append(f"  max-nu configuration: {item['max_nu']['config_id']} ({_facts(item['max_nu'], unit)})")
        for r in item["results"]:
            method = registry.display(r["method"])
            if item["setting"] == "online":
                first = r["exploited"][0]
                others = "; ".join(f"{x['config_id']} {100 * x['share']:.0f}%" for x in r["exploited"][1:4])
                lines.append(f"  {method:<18} rho {r['rho']:<6g} exploits {first['config_id']} in "
                             f"{100 * first['share']:.0f}% of {r['repetitions']} repetitions ({_facts(first, unit)})"
                             f"; spent {100 * r['spend_share']:.1f}% of B" + (f"; also {others}" if others else ""))
            else:
                lines.append(f"  {method:<8} {r['cost_mode']:<13} rho {r['rho']:<6g} exact true set in "
                             f"{100 * r['exact_true_set']:.1f}% of {r['repetitions']} repetitions; most frequent set "
                             f"({100 * r['modal_set_share']:.0f}%): {', '.join(r['modal_set']) or '(empty)'}; "
                             f"spent {100 * r['spend_share']:.1f}% of B")
                shown = r["configurations"][:top]
                rest = len(r["configurations"]) - len(shown)
                lines.append("      returned: " + ", ".join(
                    f"{c['config_id']}{'*' if c['pareto'] else ''} {100 * c['share']:.0f}%" for c in shown)
                    + (f", … {rest} more (--json lists all)" if rest > 0 else "") + "   (* = in the true set)")
        lines.append("")
    return "\n".join(lines).rstrip()
