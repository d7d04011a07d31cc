"""What each method answered in an experiment's results, and the decision they support.

Per method and budget (:func:`answers`): online, the configuration each repetition ends up exploiting (the
most-pulled arm at the end of the budget; a repetition that ends with several pulled most, equally often, exploits
none of them: ``Experiment.exploited_alone``) and how often; identification, the returned Pareto
set by configuration name — how often each configuration is returned, the most frequent returned set and the share
of repetitions returning exactly the true set (Algorithm 2, line 14). :func:`decision` condenses them to the answer
at the largest budget by the best method there, and :func:`brief` to the few fields the reports' overview of
decisions shows. ``cabench recommend``, REPORT.md and REPORT.html all state the decision made here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from cabench import registry
from cabench.plan import NOT_RUN as NOT_RUN  # how recommend, the reports and summary.csv name a skipped cell
from cabench.plan import not_run_status
from cabench.record import best_nu, boundary_arms, measure_columns, objective_columns
from cabench.results import Experiment
from cabench.summaries import unpulled_text


def row_facts(arms: pd.DataFrame, name: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """The facts of the arm ``name`` whose row of ``arms`` is ``row`` (:func:`arm_facts`)."""
    out: dict[str, Any] = {"config_id": name}
    for col in objective_columns(arms):
        out[col] = float(row[col])
    out.update({"profile_cost": float(row["profile_cost"]), "nu": float(row["nu"]), "pareto": bool(row["pareto"]),
                "optimal": bool(row["optimal"])})
    for measure in measure_columns(arms):
        out[measure] = float(row[measure])
        for end in ("ci", "low", "high"):  # (no ends in a folder written before cabench recorded them)
            if f"{measure}_{end}" in arms:
                out[f"{measure}_{end}"] = float(row[f"{measure}_{end}"])
    return out


def arm_facts(arms: pd.DataFrame, name: str) -> dict[str, Any]:
    """An arm's normalised means, cost ``c_i``, ``nu``, and its real-unit means with 95% intervals where known; for
    one no other arm dominates that one would dominate but for a tie, ``tie_dominated_by`` names that arm
    (:func:`dominated_but_for_ties`)."""
    facts = row_facts(arms, name, arms[arms["config_id"].astype(str) == name].iloc[0])
    better = dominated_but_for_ties(arms, name)
    return {**facts, "tie_dominated_by": better} if better is not None else facts


def weakly_above(values: np.ndarray, i: int) -> np.ndarray:
    """Which rows of ``values`` (``[arms, D]``, larger is better) are at least as good as row ``i`` in every column
    and better in one (weak dominance)."""
    return (values >= values[i]).all(axis=1) & (values > values[i]).any(axis=1)


def dominated_but_for_ties(arms: pd.DataFrame, name: str) -> str | None:
    """The first arm of ``arms`` at least as good as ``name`` on every objective and better on one (weak dominance),
    for an arm that no arm dominates strictly; None for any other. The Pareto set dominates strictly in every
    objective (paper §3.2): an arm that ties the better one on accuracy (k/n with few instances) and is worse on
    the rest stays in it, which the answers say beside its name."""
    means = arms[objective_columns(arms)].to_numpy(float)
    i = int(np.flatnonzero(arms["config_id"].astype(str).to_numpy() == name)[0])
    if ((means > means[i]).all(axis=1)).any():
        return None  # dominated outright
    weak = weakly_above(means, i)
    return str(arms["config_id"].iloc[int(np.flatnonzero(weak)[0])]) if weak.any() else None


#: The mean per call in ``arms.csv`` a built-in objective stands for, and whether larger is better. The objective
#: scores each call on its own (latency and cost within the profiling split's 5th-95th percentiles), so its mean
#: can rank two configurations otherwise than their means per call do. (Efficiency, the paper's inverse latency, is
#: a mean of inverses by definition: no mean per call stands for it.)
MEANS_OF = {"accuracy": ("accuracy", True), "latency": ("latency_s", False)}
#: Why a configuration another beats on its means per call can still be the answer
SCORED_PER_CALL = ("the objectives score each call, latency and cost within the profiling split's 5th-95th "
                   "percentiles, so their means can rank configurations otherwise")


def _means_per_call(e: Experiment, with_cost: bool = False) -> np.ndarray | None:
    """``[arms, D]``: each objective's mean per call in ``arms.csv`` (and with ``with_cost`` the cost per call),
    larger better; None where an objective has none (efficiency, a column of the user's own) or one is not
    finite."""
    spent = (e.cost_unit, False)  # the cost per call: arms.csv names its mean after the unit
    columns = [spent if o == "cost" else MEANS_OF.get(str(o)) for o in e.objectives] + ([spent] if with_cost else [])
    if any(c is None or c[0] not in e.arms for c in columns):
        return None
    means = np.column_stack([e.arms[c].to_numpy(float) * (1.0 if up else -1.0)
                             for c, up in dict(c for c in columns if c is not None).items()])
    return means if np.isfinite(means).all() else None


def undominated_on_means(e: Experiment) -> list[str]:
    """The configurations outside the evaluation split's Pareto set that no configuration beats on the objectives'
    means per call (as good on every one and better on one): the objectives, which score each call on its own,
    leave out configurations those means would keep (a configuration that times out now and then has a large mean
    latency and can still dominate on the latency objective). Empty where an objective has no mean per call.
    Computed once per experiment (the decision and recommend's item both say it)."""
    def derive() -> list[str]:
        means = _means_per_call(e)
        if means is None or "pareto" not in e.arms:
            return []
        outside = np.flatnonzero(e.arms["pareto"].to_numpy() != 1)
        names = e.arms["config_id"].astype(str).to_numpy()
        return [str(names[i]) for i in outside if not weakly_above(means, int(i)).any()]

    return list(e.kept("undominated on means", derive))


def beaten_on_means(e: Experiment, name: str, with_cost: bool = False) -> str | None:
    """The first configuration whose means per call are as good as ``name``'s on every objective (and, with
    ``with_cost``, on the cost per call) and better on one, where no configuration is so on the objectives
    themselves (their normalised means, and ``mu_c``): the objectives and the means per call rank it otherwise.
    None where there is none, where the objectives rank it below another too, or where an objective has no mean
    per call in ``arms.csv`` (efficiency, or an objective of the user's own column)."""
    means = _means_per_call(e, with_cost)
    if means is None:
        return None
    i = int(np.flatnonzero(e.arms["config_id"].astype(str).to_numpy() == name)[0])
    scored = e.arms[objective_columns(e.arms)].to_numpy(float)
    if with_cost:
        scored = np.column_stack([scored, -e.arms["mu_c"].to_numpy(float)])
    if weakly_above(scored, i).any():
        return None  # the objectives rank another above it too: nothing for the means to explain
    better = weakly_above(means, i)
    return str(e.arms["config_id"].iloc[int(np.flatnonzero(better)[0])]) if better.any() else None


def _online(e: Experiment, rho: float | None = None) -> list[dict[str, Any]]:
    names = e.arms["config_id"].astype(str)
    first = ~names.duplicated()
    facts = {name: row_facts(e.arms, name, row)
             for name, row in zip(names[first], e.arms[first].to_dict("records"))}  # each arm's, once
    runs = e.runs.assign(alone=e.exploited_alone)
    if rho is not None:
        runs = runs[runs["rho"] == rho]
    out = []
    for (method, r), g in runs.groupby(["method", "rho"], sort=False):
        alone = g["alone"].to_numpy()
        counts = g.loc[alone, "exploited"].astype(str).value_counts()
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        n = len(g)
        out.append({
            "method": method, "rho": float(r), "budget": float(g["budget"].iloc[0]),
            "repetitions": n, "spend_share": float((g["spend"] / g["budget"]).mean()),
            "exploited": [{**facts[name], "share": c / n} for name, c in ranked],
            "no_single": float(n - alone.sum()) / n,
        })
    return out


def _psi(e: Experiment, rho: float | None = None) -> list[dict[str, Any]]:
    returned = e.returned
    truth = returned.index_of(frozenset(e.arms.loc[e.arms["pareto"] == 1, "config_id"].astype(str)))
    budget, share = e.runs["budget"].to_numpy(float), (e.runs["spend"] / e.runs["budget"]).to_numpy(float)
    pareto = (e.arms["pareto"] == 1).to_numpy()
    out = []
    for (method, mode, r), at in e.runs.groupby(["method", "cost_mode", "rho"], sort=False).indices.items():
        if rho is not None and r != rho:
            continue
        set_of, n = returned.set_of[at], len(at)
        counts = np.bincount(set_of, minlength=len(returned.sets))
        # the set returned most often, ties by their members' names (named only for the sets that tie)
        modal = int(min(np.flatnonzero(counts == counts.max()), key=lambda s: sorted(returned.names_of(int(s)))))
        freq = returned.member[at].sum(axis=0)
        listed = sorted(np.flatnonzero(freq), key=lambda i: (-freq[i], returned.names[i]))
        out.append({
            "method": method, "cost_mode": mode, "rho": float(r),
            "budget": float(budget[at[0]]), "repetitions": n, "spend_share": float(share[at].mean()),
            "exact_true_set": float(np.sum(set_of == truth)) / n if truth is not None else 0.0,
            "modal_set": sorted(returned.names_of(modal)), "modal_set_share": counts[modal] / n,
            "modal_tied": int(np.sum(counts == counts[modal])) - 1,
            "configurations": [{"config_id": returned.names[i], "share": freq[i] / n,
                                "pareto": bool(pareto[i])} for i in listed],
        })
    return out


def _unpulled_keys(best: pd.Series) -> dict[str, int]:
    """The decision's ``reps_unpulled`` and ``unpulled_max`` (summary.csv) where some of its repetitions left a
    configuration never pulled (sampled): its answer then rests on fewer configurations in those."""
    if "reps_unpulled" not in best or not best["reps_unpulled"] > 0:
        return {}
    return {"reps_unpulled": int(best["reps_unpulled"]), "unpulled_max": int(best["unpulled_max"])}


def unpulled_note(d: dict[str, Any], setting: str) -> str:
    """What :func:`recommend` and ``advise`` say of a decision some of whose repetitions left configurations never
    pulled, else nothing."""
    if not d.get("reps_unpulled"):
        return ""
    return unpulled_text({**d, "n": d["repetitions"]}, setting)


def answers(e: Experiment, rho: float | None = None) -> list[dict[str, Any]]:
    """Every method's answer at every budget (and cost mode) of an experiment; at budget ``rho`` only if given."""
    if e.setting == "online":
        return _online(e, rho)
    return _psi(e, rho)


def not_run(e: Experiment) -> list[dict[str, Any]]:
    """The (method, budget [, cost mode]) cells the run skipped as too small a budget for the method (``infeasible``
    in ``config.yaml``), keyed as :func:`answers` keys its rows, each with the status ``not run: <reason>``; the
    budget is ``B = rho K cbar`` of the experiment's arms, as the run computed it."""
    per_call = float(np.mean(e.arms["profile_cost"]))
    modes: list[str | None] = [None] if e.setting == "online" else list(e.meta.get("cost_modes") or e.cost_modes)
    return [{"method": str(item["method"]), **({} if mode is None else {"cost_mode": mode}), "rho": float(item["rho"]),
             "budget": float(item["rho"]) * e.k * per_call, "status": not_run_status(item["reason"])}
            for item in e.meta.get("infeasible") or [] for mode in modes]


def indifferent(e: Experiment) -> str | None:
    """Online, where every configuration has the same ν = H / mu^c (paper §3.1): why no configuration is a decision
    — every pull's hypervolume gap is 0, so R_HV is 0 whatever a method pulls (an objective that is 0 for every
    configuration leaves no hypervolume at all); None where ν separates them, and for identification."""
    nu = e.arms["nu"].to_numpy(dtype=float)
    if e.setting != "online" or not len(nu) or not best_nu(e.arms).all():
        return None
    flat = [c[3:] for c in objective_columns(e.arms) if not e.arms[c].to_numpy(dtype=float).any()]
    why = f" ({', '.join(flat)} {'is' if len(flat) == 1 else 'are'} 0 for every configuration)" if flat else ""
    return (f"no decision: every configuration has the same ν = {nu[0]:.4g}{why}, so no pull has any regret "
            "and which configuration a method pulls most says nothing")


def no_decision(e: Experiment) -> str:
    """What the answers say where :func:`decision` gives none: :func:`indifferent`'s reason, that no repetition of
    the best method at the largest budget ended pulling one configuration most, or that only round robins were
    run."""
    reason = indifferent(e)
    best = None if reason is not None or e.setting != "online" else _best_online(e)
    row = None if best is None else next(r for r in top_answers(e) if r["method"] == best["method"])
    if best is not None and row is not None and not row["exploited"]:
        reason = (f"no decision: at the largest budget no repetition of {registry.display(best['method'])} (lowest "
                  "mean R_HV) ends with one configuration pulled more often than every other (the budget is spent "
                  "before it tells the configurations apart); give a larger budget")
    return reason or "no method with a preference was run"


def _best_online(e: Experiment) -> Any:
    """The summary row of the method with a preference and the lowest mean R_HV at the largest budget, or None."""
    summary = e.summary()
    top = summary[summary["rho"] == summary["rho"].max()]
    top = top[[registry.prefers(m, "online") for m in top["method"]]]
    return None if top.empty else top.sort_values("regret_hv", kind="stable").iloc[0]


def decision(e: Experiment, results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The answer at the largest budget by the best method there: online, the configuration the method with the
    lowest mean R_HV exploits most often (round robins have no preference; none where ν cannot tell the
    configurations apart, :func:`indifferent`), with ``tied`` the others it exploits as often (any of them is the
    answer: the runs do not choose between them); identification, the set the method
    with the lowest error (then the highest F1) returns most often, deterministic costs first."""
    summary = e.summary()
    if e.setting == "psi" and "deterministic" in set(summary["cost_mode"]):
        summary = summary[summary["cost_mode"] == "deterministic"]
    top = summary[summary["rho"] == summary["rho"].max()]
    if e.setting == "online":
        best = _best_online(e)
        if best is None or indifferent(e):
            return None
        row = next(r for r in results if r["method"] == best["method"] and r["rho"] == best["rho"])
        if not row["exploited"]:  # no repetition pulled one configuration most: no_decision says so
            return None
        chosen, tied = _tie_ordered(e, row["exploited"][0],
                                    [x for x in row["exploited"][1:] if x["share"] == row["exploited"][0]["share"]])
        beaten = beaten_on_means(e, chosen["config_id"], with_cost=True)
        return {"method": best["method"], "rho": float(best["rho"]), "budget": float(best["budget"]),
                "repetitions": row["repetitions"],
                "criterion": f"lowest mean R_HV among methods with a preference ({best['regret_hv']:.4g})",
                "configuration": chosen if beaten is None else {**chosen, "beaten_on_means": beaten},
                "tied": tied, "same_nu": _same_nu(e, row, [chosen, *tied]),
                "no_single": row["no_single"], "undominated_on_means": undominated_on_means(e),
                **_unpulled_keys(best)}
    best = top.sort_values(["error", "f1"], ascending=[True, False], kind="stable").iloc[0]
    row = next(r for r in results if r["method"] == best["method"] and r["rho"] == best["rho"]
               and r["cost_mode"] == best["cost_mode"])
    return {"method": best["method"], "rho": float(best["rho"]), "budget": float(best["budget"]),
            "cost_mode": best["cost_mode"], "repetitions": row["repetitions"],
            "criterion": f"lowest P(error) {best['error']:.3f} [{best['error_low']:.3f}, {best['error_high']:.3f}], "
                         f"F1 {best['f1']:.3f}",
            "pareto_set": row["modal_set"], "share": row["modal_set_share"], "tied_sets": row["modal_tied"],
            "exact_true_set": row["exact_true_set"],
            "members": [_with_means(e, arm_facts(e.arms, name)) for name in row["modal_set"]],
            "undominated_on_means": undominated_on_means(e),
            # an arm on the Pareto set's boundary (gap 0: it ties one across it exactly): no budget classifies it
            "gap_zero": bool(boundary_arms(e.arms)), **_unpulled_keys(best)}


def _tie_ordered(e: Experiment, first: dict[str, Any], tied: list[dict[str, Any]]
                 ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An online answer's configurations exploited equally often (the runs do not choose between them), the one of
    largest ν on the evaluation split first (then by name), each that another of them is as good as or better than
    on every objective and on the cost per call, and better on one, marked ``beaten_in_tie`` with that one: the
    evaluation split's own facts, beside what the runs found."""
    if not tied:
        return first, tied
    names = e.arms["config_id"].astype(str).to_numpy()
    nu = dict(zip(names, e.arms["nu"].astype(float)))
    answer = sorted([first, *tied], key=lambda x: (-nu[x["config_id"]], x["config_id"]))
    rows = [int(np.flatnonzero(names == x["config_id"])[0]) for x in answer]
    scored = np.column_stack([e.arms[objective_columns(e.arms)].to_numpy(float), -e.arms["mu_c"].to_numpy(float)])
    marked = []
    for x, i in zip(answer, rows):
        better = weakly_above(scored, i)
        above = [answer[k]["config_id"] for k, j in enumerate(rows) if better[j]]
        marked.append({**x, "beaten_in_tie": above[0]} if above else x)
    return marked[0], marked[1:]


def _same_nu(e: Experiment, row: dict[str, Any], answer: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The configurations outside the online ``answer`` whose ν equals its (identical configurations, say), each
    with the share of repetitions that exploit it: the answer is any of them, whatever the shares."""
    nu = dict(zip(e.arms["config_id"].astype(str), e.arms["nu"].astype(float)))
    named = {x["config_id"] for x in answer}
    shares = {x["config_id"]: x["share"] for x in row["exploited"]}
    return [{"config_id": name, "share": float(shares.get(name, 0.0))} for name, value in nu.items()
            if name not in named and value == nu[answer[0]["config_id"]]]


def _with_means(e: Experiment, facts: dict[str, Any]) -> dict[str, Any]:
    """An arm's facts with ``beaten_on_means`` where another configuration's means beat it (:func:`beaten_on_means`)."""
    beaten = beaten_on_means(e, facts["config_id"])
    return facts if beaten is None else {**facts, "beaten_on_means": beaten}


#: An identification answer its method returns in at most this share of the repetitions is a weak one.
WEAK_SHARE = 0.5
#: What ``recommend`` and both reports say of a weak identification answer.
WEAK = "no set came back in most repetitions"


def tied_sets_note(d: dict[str, Any]) -> str:
    """For an identification decision (:func:`decision`, or :func:`brief`'s fields) where other sets came back
    exactly as often as the one shown (``tied_sets``; only a weak answer can tie): that the runs do not choose
    between them, the one shown being first only by its members' names; else nothing."""
    tied = int(d.get("tied_sets") or 0)
    return "" if not tied else (f"; {tied} other set{'s' if tied > 1 else ''} came back as often: the runs do not "
                                "choose between them (this one is shown first by its members' names)")


#: What ``recommend``, ``advise`` and both reports say of a weak online answer.
WEAK_ONLINE = "no configuration was exploited in most repetitions"


def weak_online(d: dict[str, Any]) -> str:
    """For an online decision (:func:`decision`) whose configurations (the answer, any exploited as often, and any
    of the same ν) are exploited in at most :data:`WEAK_SHARE` of the repetitions between them: what the answers
    say of it (the budget is short of settling on one); else nothing."""
    named = [*answered(d), *(d.get("same_nu") or [])]
    share = sum(x["share"] for x in named)
    chose = "it" if len(named) == 1 else f"one of these {len(named)}"
    return "" if share > WEAK_SHARE else (f"{WEAK_ONLINE} ({round(100 * share)}% chose {chose}): this budget is "
                                          "short of settling on one configuration")


def short_of(d: dict[str, Any]) -> str:
    """Why a weak identification answer (:func:`weak`) is weak: the budget, and where configurations tie exactly on
    the Pareto set's boundary (``gap_zero``), that no budget separates them."""
    short = "this budget is short of identifying the Pareto set"
    if d.get("gap_zero"):
        return (f"{short}, and no budget identifies it exactly: configurations tie on its boundary (a classification "
                "gap of 0 in arms.csv), and sampling noise decides on which side each falls")
    return short


def weak(share: float) -> bool:
    """Whether an identification answer returned in ``share`` of the repetitions is a weak one (:data:`WEAK_SHARE`):
    the budget is short of identifying the Pareto set."""
    return share <= WEAK_SHARE


def top_answers(e: Experiment) -> list[dict[str, Any]]:
    """Every method's answer at the largest budget, computed once per experiment (both reports read it)."""
    return e.kept("top answers", lambda: answers(e, max(e.rho_grid)))


def top_decision(e: Experiment) -> dict[str, Any] | None:
    """:func:`decision` at the largest budget, computed once per experiment."""
    return e.kept("top decision", lambda: decision(e, top_answers(e)))


def beaten_pairs(d: dict[str, Any]) -> list[tuple[str, str]]:
    """The members of an online decision's tie that another member beats, each with the one that beats it."""
    return [(x["config_id"], x["beaten_in_tie"]) for x in answered(d) if x.get("beaten_in_tie")]


def tie_note(pairs: list[tuple[str, str]], shown: Any = str) -> str:
    """What a tied online answer's members another of them beats say (:func:`_tie_ordered`; ``pairs``: the beaten,
    the better; ``shown``: how a name is written), or nothing."""
    return "; ".join(f"{shown(high)} is as good as {shown(low)} or better on every objective and on the cost per "
                     "call, and better on one (on the evaluation split): of the two, pay for the former"
                     for low, high in pairs)


def answered(d: dict[str, Any]) -> list[dict[str, Any]]:
    """An online decision's configurations (:func:`decision`): the one exploited most, then any exploited as
    often (``tied``), each with its facts and share."""
    return [d["configuration"], *d["tied"]]


def brief(e: Experiment) -> dict[str, Any] | None:
    """The decision at the largest budget (:func:`decision`) in the few plain fields the reports' overview shows:
    the method, budget, cost mode, the configuration names (online: the one exploited most, and any exploited as
    often; identification: the returned set), how often that method gives it and in how many repetitions, and for
    identification how often it returns the exact true set; online, the share of repetitions that pulled several
    configurations most (``no_single``), identification, the members in the set only by a tie (``tie_only``). None
    where :func:`decision` gives none (:func:`no_decision`)."""
    d = top_decision(e)
    if d is None:
        return None
    online = e.setting == "online"
    return {"method": d["method"], "rho": d["rho"], "budget": d["budget"], "cost_mode": d.get("cost_mode") or "",
            "names": [x["config_id"] for x in answered(d)] if online else list(d["pareto_set"]),
            "share": float(d["configuration"]["share"] if online else d["share"]), "repetitions": d["repetitions"],
            "exact_true_set": None if online else float(d["exact_true_set"]),
            "tied_sets": 0 if online else int(d["tied_sets"]),
            "no_single": float(d.get("no_single") or 0.0),
            "tie_only": [] if online else [m["config_id"] for m in d["members"] if m.get("tie_dominated_by")],
            "means_only": [x["config_id"] for x in (answered(d) if online else d["members"])
                           if x.get("beaten_on_means")],
            "same_nu": [x["config_id"] for x in d.get("same_nu") or []],
            "beaten_in_tie": beaten_pairs(d) if online else [],
            "weak_online": weak_online(d) if online else "",
            "gap_zero": bool(d.get("gap_zero")),
            "undominated_on_means": list(d.get("undominated_on_means") or [])}
