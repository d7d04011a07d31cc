"""``cabench recommend``: the configurations worth paying for, by name, from result folders.

Per experiment, each method's answer at every budget (:func:`cabench.answers.answers`: the configuration exploited
online, the returned Pareto set in identification, and how often), the budgets each method did not run at and why
(``not_run``, :func:`cabench.answers.not_run`: ``not run: <reason>``, as the reports say), the true Pareto set and
the max-``nu`` configuration from ``arms.csv``, and the decision (:func:`cabench.answers.decision`: the answer at the
largest budget by the best method, what ``cabench recommend`` prints unless ``--all``). Given requirements
(``--require accuracy>=0.6``, :mod:`cabench.constraints`), each experiment also answers under them: the qualifying
configuration or Pareto set and how often each method's answer, restricted to the qualifying configurations,
equals it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cabench import registry
from cabench.answers import (
    SCORED_PER_CALL,
    WEAK,
    answered,
    answers,
    arm_facts,
    beaten_pairs,
    decision,
    no_decision,
    not_run,
    short_of,
    tie_note,
    tied_sets_note,
    undominated_on_means,
    unpulled_note,
    weak,
    weak_online,
)
from cabench.constraints import EVERY_ONE, ConstrainedAnswer, Constraint, answers_under
from cabench.jsonio import strict_dumps
from cabench.record import measure_columns
from cabench.report_cache import SectionCache, round_trip, section_key
from cabench.report_cells import charged_at_profiling, clipped_calls, listed, measurement, quoted_name, undominated_note
from cabench.results import Experiment, ResultSet, finite, no_results, read_selections
from cabench.units import LABELS, Dollars, Significant, TokenCount, amount, percent


def _constrained(e: Experiment, constraints: tuple[Constraint, ...], answer: ConstrainedAnswer | str | None
                 ) -> dict[str, Any] | None:
    """The answer under ``constraints`` (:func:`cabench.constraints.answers_under`) with its members' facts, or,
    where they cannot be applied to ``e`` (a measure its configurations lack), why (``not_applicable``)."""
    if answer is None:
        return None
    if isinstance(answer, str):
        return {"constraints": [c.describe() for c in constraints], "not_applicable": answer}
    found = answer.as_dict()
    return {**found, "members": [arm_facts(e.arms, name) for name in found["answer"]]}


def recommend(root: Path, constraints: tuple[Constraint, ...] = ()) -> list[dict[str, Any]]:
    """One mapping per experiment (see the module docstring); ``constrained`` holds the answer under
    ``constraints`` (None without).

    An experiment's answers without requirements are those ``cabench report`` kept with its section
    (:mod:`cabench.report_cache`: the same result files, label and code), else computed now; either way they are
    what JSON gives back (:func:`experiment_answers`), so the two print the same."""
    res = ResultSet(root, selections=False)  # an experiment's selections are read where it is computed
    if res.empty:
        raise no_results(root)
    if constraints:
        read_selections(res.experiments)  # every table checked before requirements are applied
    under = answers_under(res, constraints)  # refused only where no experiment can take them all
    cache = SectionCache(root)
    out = []
    for e in res.experiments:
        item = dict(_kept_answers(e, cache.get(section_key(e))) or experiment_answers(e))
        item["constrained"] = _constrained(e, constraints, under.get(e.label))
        out.append(item)
    return out


#: The key of an experiment's answers in its report section (:mod:`cabench.report_cache`).
KEPT = "recommend"
#: The fields of an experiment's answers (:func:`experiment_answers`), in their order.
FIELDS = ("experiment", "config_hash", "setting", "dataset", "surrogate", "K", "objectives", "cost_unit",
          "true_pareto_set", "max_nu", "decision", "undecided", "no_preference", "results", "not_run", "constrained",
          "clipped", "charged", "undominated_on_means")


def _kept_answers(e: Experiment, section: dict[str, Any] | None) -> dict[str, Any] | None:
    """``e``'s answers as its kept report section holds them, or None where there are none or they are not
    ``e``'s answers in their form (another experiment's, fields missing or added, a section written by hand whose
    digest was made to match): those are computed from the results instead."""
    kept = None if section is None else section.get(KEPT)
    if not isinstance(kept, dict) or tuple(kept) != FIELDS:
        return None
    facts = {"experiment": e.label, "config_hash": e.config_hash, "setting": e.setting, "K": e.k, "constrained": None}
    return kept if all(kept[field] == value for field, value in facts.items()) and _prints(kept) else None


def _prints(item: dict[str, Any]) -> bool:
    """Whether every form of ``recommend``'s output takes ``item``: kept answers whose fields hold other types
    (a section rewritten by hand, its digest made to match) are computed again rather than ending in a traceback.
    The text forms are tried; JSON (:func:`recommendations_json`) takes whatever JSON gave back."""
    try:
        format_decisions([item]), format_recommendations([item])
    except Exception:
        return False
    return True


def experiment_answers(e: Experiment) -> dict[str, Any]:
    """What :func:`recommend` says of ``e`` without requirements (``constrained`` None), as JSON gives it back
    (:func:`~cabench.report_cache.round_trip`): ``cabench report`` computes it too and keeps it with ``e``'s
    section, for ``recommend`` to read."""
    truth = e.arms.loc[e.arms["pareto"] == 1, "config_id"].astype(str).tolist()
    best = e.arms.loc[e.arms["optimal"] == 1, "config_id"].astype(str).iloc[0]
    results = answers(e)
    decided = decision(e, results)
    return round_trip({
        "experiment": e.label, "config_hash": e.config_hash, "setting": e.setting, "dataset": e.title,
        "surrogate": e.surrogate, "K": e.k, "objectives": e.objectives, "cost_unit": e.cost_unit,
        "true_pareto_set": truth, "max_nu": arm_facts(e.arms, best), "decision": decided,
        "undecided": no_decision(e) if decided is None else None,
        "no_preference": [m for m in e.methods if e.setting == "online" and not registry.prefers(m, "online")],
        "results": results, "not_run": not_run(e), "constrained": None,
        "clipped": clipped_calls(e.setting, e.dataset, e.cost_unit),
        "charged": charged_at_profiling(e.setting, e.arms, e.cost_unit, e.cost_modes),
        "undominated_on_means": undominated_on_means(e),
    })


def recommendations_json(items: list[dict[str, Any]]) -> str:
    """Strict JSON of :func:`recommend`'s mappings (a non-finite number is ``null``, never ``NaN``)."""
    return strict_dumps(items, indent=1)


#: How the terminal shows each real-unit measurement per call: prefix, number format, suffix.
SHOWN = {"accuracy": ("accuracy ", "{:.3f}", ""), "latency_s": ("", Significant(), " s"),
         "tokens": ("", TokenCount("{:,.0f}"), " tokens"), "usd": ("$", Dollars(""), ""),
         "completion_tokens": ("", TokenCount("{:,.0f}"), " completion tokens")}
#: How many members of a decided Pareto set the condensed answer gives units for (the rest counted, as in --json).
MEMBERS_SHOWN = 8


def _facts(a: dict[str, Any], unit: str) -> str:
    """Real units per call where known (:func:`per_call`), then the normalised objectives, ``c_i`` and nu."""
    objectives = ", ".join(f"{k[3:]} {v:.3f}" for k, v in a.items() if k.startswith("mu_") and k != "mu_c")
    real = f"per call: {per_call(a)}; " if per_call(a) else ""
    return f"{real}normalised {objectives}; cost c_i {amount(a['profile_cost'], unit)}, nu {a['nu']:.3f}"


def member_notes(a: dict[str, Any]) -> str:
    """What a Pareto member's line says of it beyond its units: that another configuration dominates it but for a
    tie, and that another beats it on every mean per call (:func:`but_for_means`); or nothing."""
    other = a.get("tie_dominated_by")
    return ("" if other is None else (f" — no better than {quoted_name(other)} on any objective as scored, worse on "
                                      "some; in the set only by a tie (dominance is strict; a tie as scored may be "
                                      "none per call: latency and cost are scored within the profiling split's "
                                      "5th-95th percentiles)")) + but_for_means(a)


def but_for_means(a: dict[str, Any]) -> str:
    """What a configuration whose means per call another configuration beats says of it, or nothing."""
    other = a.get("beaten_on_means")
    return "" if other is None else (f" — {quoted_name(other)} is as good or better on every mean per call ("
                                     f"{SCORED_PER_CALL})")


#: Objectives whose mean per call :data:`SHOWN` gives in real units (efficiency by latency, cost by its unit)
IN_REAL_UNITS = {"accuracy", "efficiency", "latency", "cost"}


def per_call(a: dict[str, Any]) -> str:
    """Real units per call where known, each with its 95% interval (:func:`~cabench.report_cells.measurement`), then
    the mean per call of each column of the user's own an objective reads (``judge 1.73 ± 0.12``, in the column's
    own scale), then each such objective's normalised mean, on which the decision is made (``badness 0.614
    (normalised, larger is better)``: an objective to minimise is flipped by its normalisation)."""
    columns = [f"{k} {measurement(a, k, Significant())}" for k in measure_columns(a) if k not in SHOWN]  # (as is)
    own = [f"{k[3:]} {v:.3f} (normalised, larger is better)" for k, v in a.items()
           if k.startswith("mu_") and k != "mu_c" and k[3:] not in IN_REAL_UNITS and finite(v)]
    return ", ".join([f"{prefix}{measurement(a, measure, number)}{suffix}"
                      for measure, (prefix, number, suffix) in SHOWN.items() if measure in a] + columns + own)


def _found_at(item: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """How often each method found the constrained answer at the budget (and cost mode) of ``rows``."""
    first = rows[0]
    mode = f", {first['cost_mode']} costs" if first["cost_mode"] else ""
    shares = ", ".join(f"{registry.display(r['method'])} {percent(r['share'])}" for r in rows)
    return (f"{shares} of {first['repetitions']} repetitions at B = {amount(first['budget'], item['cost_unit'])}"
            f" (rho {first['rho']:.4g}{mode})")


def constrained_lines(item: dict[str, Any], every: bool = False) -> list[str]:
    """The answer under the requirements: which configurations qualify, the configuration (online) or Pareto set
    (identification) among them, and how often each method's answer restricted to them is it — at the largest
    budget (deterministic costs first), or at every budget with ``every``."""
    c = item["constrained"]
    if c is None:
        return []
    if "not_applicable" in c:
        return [f"  with {', '.join(c['constraints'])}: cannot be applied to this experiment: {c['not_applicable']}"]
    k = item["K"]
    shown, rest = c["borderline"][:6], len(c["borderline"]) - 6
    border = (f"; borderline (95% interval across a bound): {listed(shown)}" + (f", … {rest} more (--json lists "
              "all)" if rest > 0 else "")) if shown else ""
    lines = [f"  with {', '.join(c['constraints'])}: {len(c['qualifying'])} of {k} configurations qualify{border}"]
    if not c["qualifying"]:
        return lines
    rows = [r for r in c["found"] if r["method"] not in item["no_preference"]]
    if not every and rows:
        modes = [r["cost_mode"] for r in rows]
        mode = "deterministic" if "deterministic" in modes else modes[0]
        top = max(r["rho"] for r in rows if r["cost_mode"] == mode)
        rows = [r for r in rows if r["rho"] == top and r["cost_mode"] == mode]
    groups: dict[tuple[Any, float], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["cost_mode"], r["rho"]), []).append(r)
    if c["undecided"]:
        return [*lines, f"    {c['undecided']}"]
    if item["setting"] == "online" and len(c["members"]) > 1:
        lines.append(f"    pay for any of {listed(c['answer'])} (they share the largest nu among them)")
        lines += [f"      {quoted_name(m['config_id'])}: {per_call(m)}" for m in c["members"] if per_call(m)]
        what = "the most-pulled qualifying configuration is one of them in"
    elif item["setting"] == "online":
        best = c["members"][0]
        lines.append(f"    pay for {quoted_name(best['config_id'])} (largest nu among them)" +
                     (f"; per call: {per_call(best)}" if per_call(best) else ""))
        what = "the most-pulled qualifying configuration is it in"
    else:
        lines.append(f"    true Pareto set restricted to them ({len(c['answer'])}): "
                     f"{listed(c['answer']) or '(empty)'}")
        what = "the returned set restricted to them is it in"
    lines += [f"    {what}: {_found_at(item, g)}" for g in groups.values()]
    if c["every_qualifying_is_the_answer"] and groups:
        lines.append(f"    {EVERY_ONE}")
    if item["setting"] == "psi" and c["only_within"]:
        lines.append(f"    also Pareto among the qualifying only (what dominates them fails a requirement; a filtered "
                     f"answer never holds them): {listed(c['only_within'])}")
    return lines


def any_of(d: dict[str, Any]) -> str:
    """The online decision's configuration, or ``any of`` it and those exploited as often (``tied``)."""
    names = [x["config_id"] for x in answered(d)]
    return quoted_name(names[0]) if len(names) == 1 else f"any of {listed(names)}"


def same_nu(d: dict[str, Any]) -> str:
    """What an online decision says of configurations outside it with the same ν (any of them is as good), or
    nothing."""
    same = d.get("same_nu") or []
    if not same:
        return ""
    n = d["repetitions"]
    return ("; " + ", ".join(f"{quoted_name(x['config_id'])} (exploited in {round(x['share'] * n)})" for x in same)
            + f" {'has' if len(same) == 1 else 'have'} the same ν: any of them is as good")


def _of(share: float, n: int) -> str:
    """A share of ``n`` repetitions as the count it is: ``1 of 200 repetitions`` (a percentage would say 0%)."""
    return f"{round(share * n)} of {n} repetitions"


def _realised(d: dict[str, Any]) -> str:
    """How an identification decision names its cost mode: not at all with profiling (deterministic) costs, the only
    mode of most experiments and the first the decision looks at; ``, stochastic costs`` when it was made on
    realised costs (an experiment without deterministic ones)."""
    return "" if d["cost_mode"] == "deterministic" else f", {d['cost_mode']} costs"


#: What an item says of its spends, each a note line when it has something to say (clipped, charged costs).
SPEND_NOTES = ("clipped", "charged")


def format_decisions(items: list[dict[str, Any]]) -> str:
    """The condensed answer: per experiment, the decision at the largest budget by the best method, and the true
    Pareto set (``--all`` prints :func:`format_recommendations`)."""
    lines = []
    for item in items:
        unit = item["cost_unit"]
        lines.append(f"{item['experiment']} ({item['setting']}, {item['dataset']}"
                     f"{', surrogate logs' if item['surrogate'] else ''}, K={item['K']}; objectives "
                     f"{', '.join(item['objectives'])}; cost in {LABELS[unit]})")
        d = item["decision"]
        if d is None:
            lines.append(f"  {item['undecided']}")
        elif item["setting"] == "online":
            c = d["configuration"]
            tied = ", the runs do not choose between them" if d["tied"] else ""
            tied += f"; {tie_note(beaten_pairs(d), quoted_name)}" if beaten_pairs(d) else ""
            tied += (f"; in {_of(d['no_single'], d['repetitions'])} no one configuration is pulled most"
                     if d.get("no_single") else "") + same_nu(d)
            lines.append(f"  pay for {any_of(d)}: {registry.display(d['method'])} exploits "
                         f"{'each' if d['tied'] else 'it'} in {_of(c['share'], d['repetitions'])} at "
                         f"B = {amount(d['budget'], unit)} (rho {d['rho']:.4g}; {d['criterion']}{tied})")
            if weak_online(d):
                lines.append(f"    {weak_online(d)}")
            if unpulled_note(d, "online"):
                lines.append(f"    note: {unpulled_note(d, 'online')}")
            units = [x for x in answered(d) if per_call(x)]
            for x in units[:MEMBERS_SHOWN]:
                lines.append(f"    {'per call' if not d['tied'] else quoted_name(x['config_id'])}: {per_call(x)}"
                             f"{but_for_means(x)}")
            if len(units) > MEMBERS_SHOWN:
                lines.append(f"    … {len(units) - MEMBERS_SHOWN} more (--json lists all)")
        else:
            lines.append(f"  Pareto set ({len(d['pareto_set'])}): {listed(d['pareto_set']) or '(empty)'} — "
                         f"{registry.display(d['method'])} returns it in {_of(d['share'], d['repetitions'])} at "
                         f"B = {amount(d['budget'], unit)} (rho {d['rho']:.4g}{_realised(d)}; {d['criterion']}; "
                         f"the exact true set in {round(d['exact_true_set'] * d['repetitions'])})")
            if weak(d["share"]):
                lines.append(f"    {WEAK}: {short_of(d)} (--all: how often each configuration is returned)"
                             f"{tied_sets_note(d)}")
            if unpulled_note(d, "psi"):
                lines.append(f"    note: {unpulled_note(d, 'psi')}")
            noted = [m for m in d["members"] if per_call(m) or m.get("tie_dominated_by") or m.get("beaten_on_means")]
            for m in noted[:MEMBERS_SHOWN]:
                shown_units = f": {per_call(m)}" if per_call(m) else ""
                lines.append(f"    {quoted_name(m['config_id'])}{shown_units}{member_notes(m)}")
            if len(noted) > MEMBERS_SHOWN:
                ties = sum(1 for m in noted[MEMBERS_SHOWN:] if m.get("tie_dominated_by"))
                lines.append(f"    … {len(noted) - MEMBERS_SHOWN} more (--json lists all"
                             + (f"; {ties} of them in the set only by a tie)" if ties else ")"))
        lines.append(f"  true Pareto set ({len(item['true_pareto_set'])}): {listed(item['true_pareto_set'])}")
        if item.get("undominated_on_means"):
            lines.append(f"  note: {undominated_note(item['undominated_on_means'])}")
        lines += [f"  note: {item[key]}" for key in SPEND_NOTES if item.get(key)]
        lines += constrained_lines(item)
        if item["no_preference"]:
            shown = ", ".join(registry.display(m) for m in item["no_preference"])
            lines.append(f"  {shown}: a round robin, no preference ({registry.IN_TURN})")
        lines.append("")
    return "\n".join(lines).rstrip()


def _in_grid(results: list[dict[str, Any]], skipped: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of ``results`` with each skipped cell placed among its method's (and cost mode's) rows by budget."""
    rows = list(results)
    for cell in skipped:
        same = [i for i, r in enumerate(rows)
                if r["method"] == cell["method"] and r.get("cost_mode") == cell.get("cost_mode")]
        later = [i for i in same if rows[i]["rho"] > cell["rho"]]
        rows.insert(later[0] if later else same[-1] + 1 if same else len(rows), cell)
    return rows


def format_recommendations(items: list[dict[str, Any]], top: int = 10) -> str:
    """Every method, budget and cost mode, in plain text (``top`` configurations per identification row)."""
    lines = []
    for item in items:
        lines.append(f"{item['experiment']} ({item['setting']}, {item['dataset']}"
                     f"{', surrogate logs' if item['surrogate'] else ''}, K={item['K']}, config {item['config_hash']})")
        unit = item["cost_unit"]
        lines.append(f"  objectives: {', '.join(item['objectives'])}; cost in {LABELS[unit]}")
        lines.append(f"  true Pareto set ({len(item['true_pareto_set'])}): {listed(item['true_pareto_set'])}")
        if item.get("undominated_on_means"):
            lines.append(f"  note: {undominated_note(item['undominated_on_means'])}")
        lines += [f"  note: {item[key]}" for key in SPEND_NOTES if item.get(key)]
        best = item["max_nu"]
        lines.append(f"  max-nu configuration: {quoted_name(best['config_id'])} ({_facts(best, unit)})")
        for r in _in_grid(item["results"], item.get("not_run") or []):
            method = registry.display(r["method"])
            if "status" in r:
                mode = "" if item["setting"] == "online" else f"{r['cost_mode']:<13} "
                lines.append(f"  {method:<{18 if item['setting'] == 'online' else 8}} {mode}rho {r['rho']:<6g} "
                             f"{r['status']}")
            elif item["setting"] == "online" and r["method"] in item["no_preference"]:
                lines.append(f"  {method:<18} rho {r['rho']:<6g} a round robin: no preference; spent "
                             f"{100 * r['spend_share']:.1f}% of B")
            elif item["setting"] == "online" and not r["exploited"]:
                lines.append(f"  {method:<18} rho {r['rho']:<6g} no configuration pulled most alone in any of "
                             f"{r['repetitions']} repetitions; spent {100 * r['spend_share']:.1f}% of B")
            elif item["setting"] == "online":
                first = r["exploited"][0]
                others = "; ".join(f"{quoted_name(x['config_id'])} {percent(x['share'])}"
                                   for x in r["exploited"][1:4])
                lines.append(f"  {method:<18} rho {r['rho']:<6g} exploits {quoted_name(first['config_id'])} in "
                             f"{percent(first['share'])} of {r['repetitions']} repetitions ({_facts(first, unit)})"
                             f"; spent {100 * r['spend_share']:.1f}% of B" + (f"; also {others}" if others else ""))
            else:
                lines.append(f"  {method:<8} {r['cost_mode']:<13} rho {r['rho']:<6g} exact true set in "
                             f"{100 * r['exact_true_set']:.1f}% of {r['repetitions']} repetitions; most frequent set "
                             f"({percent(r['modal_set_share'])}): {listed(r['modal_set']) or '(empty)'}; "
                             f"spent {100 * r['spend_share']:.1f}% of B")
                shown = r["configurations"][:top]
                rest = len(r["configurations"]) - len(shown)
                lines.append("      returned: " + ", ".join(
                    f"{quoted_name(c['config_id'])}{'*' if c['pareto'] else ''} {percent(c['share'])}" for c in shown)
                    + (f", … {rest} more (--json lists all)" if rest > 0 else "") + "   (* = in the true set)")
        lines += constrained_lines(item, every=True)
        lines.append("")
    return "\n".join(lines).rstrip()
