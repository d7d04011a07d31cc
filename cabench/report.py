"""``cabench report``: REPORT.md from result folders only.

A scorecard first: every claim the report tests, its verdict, the tested
quantity with its 95% interval and, for a claim that does not hold, a measured
reason. Then one section per experiment (never pooled): what was run, on which
objectives and in which cost unit; the summary with budgets and spends in that
unit (and, for identification, the returned sets' relative hypervolume); the
configurations that matter in real units beside their normalised means; paired
comparisons at the largest budget with tests suited to each metric; and the
verdicts. The paper's numbers (SPEC §8) appear only beside experiments
recorded as the paper's own, each with whether it lies in our 95% interval,
and Table 1's paper rows only for the paper's datasets. Figures are embedded
only while current (:func:`cabench.figure_index.current_figures`). Given
requirements (``--require``, :mod:`cabench.constraints`), both reports state
them at the top and each experiment answers under them too: the qualifying
configurations, the configuration or restricted Pareto set among them with its
real units, and how often each method's answer restricted to them is it.
:class:`Contents` is computed once for this page and REPORT.html.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from cabench import registry
from cabench.analysis import (
    STATE_TEXT,
    Findings,
    Verdict,
    findings,
    interval_text,
    key_configurations,
    mean_spend,
    per_budget,
    reference_and_others,
    relative_hypervolume,
)
from cabench.answers import (
    NOT_RUN,
    SCORED_PER_CALL,
    WEAK,
    brief,
    no_decision,
    short_of,
    tie_note,
    tied_sets_note,
    weak,
)
from cabench.constraints import ConstrainedAnswer, Constraint, answers_under
from cabench.errors import CabenchError
from cabench.figure_index import INDEX, current_figures, index_root, read_index
from cabench.paper import PUBLISHED
from cabench.paper_match import paper_rows
from cabench.record import objective_columns
from cabench.report_cache import SectionCache, section_key
from cabench.report_cells import (
    Table,
    charged_at_profiling,
    clipped_calls,
    code,
    dropped_at_import,
    inert_html,
    listed,
    mark,
    md_table,
    md_text,
    measurement,
    method_name,
    num,
    quoted_name,
    shown,
    texts,
    undominated_note,
    unit_formats,
    whole,
)
from cabench.report_requirements import requirement_lines, requirements_sentence
from cabench.results import Experiment, ResultSet, finite, no_results, read_selections, unfinished_note
from cabench.stats import Z95
from cabench.storage import refuse_unless_ours, remove_stale_temporaries, replaced_together, signed
from cabench.summaries import unpulled_text
from cabench.units import LABELS, amount, value_label

# --- paired comparisons -------------------------------------------------------------------------------

def comparison_tables(e: Experiment, rows: list[dict]) -> tuple[Table, Table]:
    """The paired comparisons of ``e`` (:func:`cabench.analysis.comparisons`): the bootstrap table (regrets, F1)
    and the McNemar table (errors)."""
    name = method_name(reference_and_others(e)[0])
    boot = [[(r["metric"], r["metric"]), (r["mode"] or "—", r["mode"] or ""), (method_name(r["other"]), r["other"]),
             shown("{:.4g}", r["base_mean"]), shown("{:.4g}", r["other_mean"]),
             (f"{r['diff']:+.4g} {interval_text(r['low'], r['high'], '+.4g')}", r["diff"]),
             shown("{:.0%}", r["base_better"]),
             shown("{:.0%}", r["other_better"]), shown("{}", r["n"])] for r in rows if r["test"] == "bootstrap"]
    mc = [[(r["mode"], r["mode"]), (method_name(r["other"]), r["other"]), shown("{:.3f}", r["base_mean"]),
           shown("{:.3f}", r["other_mean"]), shown("{}", r["only_a"]), shown("{}", r["only_b"]),
           shown("{:.3g}", r["p"]), shown("{:.3g}", r["p_holm"]), shown("{}", r["n"])]
          for r in rows if r["test"] == "McNemar"]
    return ((["metric", "cost mode", f"{name} vs", f"{name} mean", "other mean", "mean diff [95% CI]", "base better",
              "other better", "n"], boot),
            (["cost mode", f"{name} vs", f"P(error) {name}", "P(error) other", f"only {name} errs", "only other errs",
              "exact p", "Holm p", "n"], mc))


def _comparison_lines(e: Experiment, rows: list[dict]) -> list[str]:
    base, _ = reference_and_others(e)
    if not rows:
        return ["No other method to compare with.", ""]
    n_mc = sum(r["test"] == "McNemar" for r in rows)
    lines = [f"{len(rows)} paired comparisons of {method_name(base)} with each other method at the largest budget "
             f"(ρ={max(e.rho_grid):g}), repetition by repetition (every method replays the same streams). "
             "Regret and F1: mean difference with a percentile bootstrap 95% interval (2,000 resamples of "
             "repetitions; intervals are not adjusted for multiplicity)."
             + (f" Errors: exact McNemar test on the discordant repetitions; p-values Holm-adjusted over the "
                f"{n_mc} McNemar tests of this experiment." if n_mc else ""), ""]
    for table in comparison_tables(e, rows):
        lines += texts(table) if table[1] else []
    return lines


# --- one experiment -----------------------------------------------------------------------------------

def _plus_minus(mean: float, se: float, n: int, digits: str) -> str:
    """A mean over ``n`` repetitions ± its 95% half-width; one repetition has none (its standard error, recorded
    as 0, would claim a certainty one run does not give)."""
    return f"{mean:{digits}} ± {Z95 * se:{digits}}" if n > 1 else f"{mean:{digits}} (one repetition)"


def summary_table(e: Experiment, s: pd.DataFrame) -> Table:
    """The summary of ``e`` (``s``: its summary) by method, budget (and cost mode): online R_HV and R_std ± 95%
    CI, pulls, the share of pulls on i*; identification P(error) with its Wilson interval, F1 ± 95% CI, the
    returned sets' relative hypervolume, mean |P_hat|; the mean spend and its share of B (sorted by the spend)."""
    unit = e.cost_unit
    spend = mean_spend(e)
    if e.setting == "online":
        return (["method", "ρ", "B", "R_HV", "R_std", "pulls", "share of pulls on i*", "spent"],
                [[(method_name(r.method), r.method), (f"{r.rho:g}", r.rho), (amount(r.budget, unit), r.budget),
                  (_plus_minus(r.regret_hv, r.regret_hv_se, r.n, ".2f"), r.regret_hv),
                  (_plus_minus(r.regret_std, r.regret_std_se, r.n, ".2f"), r.regret_std), (f"{r.pulls:.1f}", r.pulls),
                  (f"{r.frac_optimal:.3f}", r.frac_optimal),
                  (f"{amount(spend[r.method, r.rho], unit)} ({100 * r.spend_share:.1f}%)", spend[r.method, r.rho])]
                 for _, r in s.iterrows()])
    hv = relative_hypervolume(e).set_index(["method", "cost_mode", "rho"])
    rows = []
    for _, r in s.iterrows():
        h = hv.loc[(r.method, r.cost_mode, r.rho)]
        rows.append([(method_name(r.method), r.method), (r.cost_mode, r.cost_mode), (f"{r.rho:g}", r.rho),
                     (amount(r.budget, unit), r.budget),
                     (f"{r.error:.3f} [{r.error_low:.3f}, {r.error_high:.3f}]", r.error),
                     (_plus_minus(r.f1, r.f1_se, r.n, ".3f"), r.f1),
                     (f"{num(h['mean'])} ± {num(Z95 * h['se'])}" if finite(h["mean"]) and r.n > 1
                      else f"{num(h['mean'])} (one repetition)" if finite(h["mean"]) else "n/a", h["mean"]),
                     (f"{r['size']:.2f}", r["size"]),
                     (f"{amount(spend[r.method, r.cost_mode, r.rho], unit)} ({100 * r.spend_share:.1f}%)",
                      spend[r.method, r.cost_mode, r.rho])])  # sorted by the amount, the number shown first
    return (["method", "cost mode", "ρ", "B", "P(error) [95% CI]", "F1", "H(P_hat)/H(P*)", "mean |P_hat|", "spent"],
            rows)


def _summary_lines(e: Experiment, s: pd.DataFrame) -> list[str]:
    n = e.repetitions
    spent = "'spent' is the mean spend and its share of B"
    if e.setting == "online":
        note = (f"Mean ± 95% CI (normal) over {n} repetitions. Regret in normalised cost units (B~ = B / c_max); "
                f"{spent}.")
    else:
        note = (f"Error probability with a 95% Wilson interval and mean F1 ± 95% CI over {n} repetitions; "
                "H(P_hat)/H(P*): hypervolume of the returned set relative to the true Pareto set's (normalised "
                f"means, reference point 0), mean ± 95% CI; {spent}.")
    return [note, "", *texts(summary_table(e, s))]


def _configuration_lines(e: Experiment) -> list[str]:
    """The configurations that matter: normalised means and cost beside accuracy, latency, tokens and dollars
    per call where the logs have them."""
    rows = key_configurations(e)
    objectives = objective_columns(e.arms)
    units = unit_formats(e.arms)
    real = [c for c in units if c in rows.columns]
    header = ["configuration", "why", *(value_label(c[3:]) for c in objectives),
              f"c_i ({LABELS[e.cost_unit]})", "ν", *(f"{units[c][0]} per call" for c in real)]
    table = [[code(str(r["config_id"])), r["why"], *(num(r[c]) for c in objectives),
              amount(r["profile_cost"], e.cost_unit), f"{float(r['nu']):.4g}",
              *(measurement(r, c, units[c][1]) for c in real)] for _, r in rows.iterrows()]
    note = ("Normalised means scale each objective to [0, 1], larger is better; c_i is the profiling cost per call"
            + ("; real units are means over the evaluation instances ± the 95% half-width (1.96 s / √n; on epoch"
               " logs clustered by question), or with the interval's ends where that interval would leave the range"
               " (or, for 0/1 outcomes, have no width): Wilson's interval for 0/1 accuracy, otherwise the normal one"
               " cut at the range ([0, 1] for accuracy, 0 for the rest)"
               if real else "; no real units are known (a synthetic instance, or a results folder written before "
               "cabench recorded them)"))
    return [note + ".", "", *md_table(header, table)]


def not_run_lines(e: Experiment) -> list[str]:
    """One line per (method, budget) of ``e`` skipped as too small for the method, with its reason, as the reports
    and ``recommend`` say it (``not run: CoPSI at ρ=2 (...)``)."""
    return [f"{NOT_RUN}: {method_name(item['method'])} at ρ={float(item['rho']):g} ({item['reason']})"
            for item in e.meta.get("infeasible") or []]


def unpulled_lines(e: Experiment) -> list[str]:
    """One line per (method, budget [, cost mode]) of ``e`` some of whose repetitions left a configuration never
    pulled (sampled): at the least budgets the first round over the configurations ran out (:func:`cabench.cells.
    unpulled`)."""
    summary = e.summary()
    if "reps_unpulled" not in summary:
        return []
    def at(rho: float) -> str:  # a stated budget as stated; a rho with the digits that tell it from its neighbours
        return e.budget_at(rho) if e.stated_budgets else f"ρ={rho:.12g}"

    return [f"{method_name(r['method'])}" + (f" ({r['cost_mode']})" if "cost_mode" in r else "")
            + f" at {at(float(r['rho']))}: {unpulled_text(r, e.setting)}"
            for r in summary.to_dict("records") if r["reps_unpulled"] > 0]


def experiment_section(e: Experiment, found: Findings, under: ConstrainedAnswer | str | None = None) -> list[str]:
    """Everything the report says of one experiment; it depends on that experiment's files only (``under``: its
    answer under the requirements, :func:`~cabench.constraints.answers_under`)."""
    meta = e.meta
    source = "a synthetic instance" if e.info.get("synthetic") else (
        "**surrogate logs**, calibrated to the paper's published statistics, not real model outputs"
        if e.surrogate else "logs not marked as surrogate in their dataset.yaml")
    methods = ", ".join(method_name(m) for m in e.methods)
    front = e.arms[e.arms["pareto"] == 1]["config_id"].astype(str).tolist()
    best = e.arms[e.arms["optimal"] == 1]["config_id"].astype(str).tolist()
    budgets = ", ".join(amount(float(b), e.cost_unit) for b in e.runs.groupby("rho")["budget"].first())
    lines = [f"## Experiment {code(e.label)}", "",
             f"- setting: {'online selection' if e.setting == 'online' else 'Pareto set identification'}; "
             f"data: {md_text(e.title)}, {source}; K = {e.k} arms; config hash `{e.config_hash}`",
             f"- objectives: {', '.join(e.objectives)} (each normalised on the profiling split, larger is better); "
             f"costs, budgets and spends in {LABELS[e.cost_unit]}",
             f"- budgets ρ ∈ {{{', '.join(f'{r:g}' for r in e.rho_grid)}}} (B ∈ {{{budgets}}}); {e.repetitions} "
             f"paired repetitions; seed {meta.get('seed')}; methods: {methods}"
             + (f"; cost modes: {', '.join(e.cost_modes)}" if e.setting == "psi" else ""),
             f"- true Pareto set of these arms ({len(front)}): {', '.join(map(code, front))}; max-ν arm: "
             f"{', '.join(map(code, best))}"]
    if e.setting == "online":
        params = "; ".join(f"{method_name(m['name'])}: s_r={m.get('s_r')}, s_c={m.get('s_c')}, eta={m.get('eta')}, "
                           f"mode={m.get('mode')}" for m in meta.get("methods") or []
                           if registry.spec(m["name"], "online").tunable)
        lines.append(f"- parameters: {params}")
    if e.paper_role:
        lines.append(f"- this is the paper's experiment for {meta.get('paper_figures')} on {md_text(e.title)}")
    lines += [f"- {line}" for line in [*not_run_lines(e), *unpulled_lines(e)]]
    if dropped := dropped_at_import(e.info):
        lines.append(f"- {dropped}")
    if clipped := clipped_calls(e.setting, e.dataset, e.cost_unit):
        lines.append(f"- {clipped}")
    if charged := charged_at_profiling(e.setting, e.arms, e.cost_unit, e.cost_modes):
        lines.append(f"- {charged}")
    if e.duplicates:
        lines.append(f"- also found, identical, in: {', '.join(str(p) for p in e.duplicates)} (read once)")
    lines += [""] + requirement_lines(e, under)
    lines += ["### Summary", ""] + _summary_lines(e, found.summary)
    lines += ["### Configurations that matter", ""] + _configuration_lines(e)
    lines += ["### Paired comparisons", ""] + _comparison_lines(e, found.comparisons)
    lines += ["### Verdicts", ""]
    lines += [f"- {v.statement}: {mark(v.state)}" + (f" — why: {v.reason}" if v.reason else "")
              for v in found.verdicts] or ["No claim is tested on this experiment: each compares methods or budgets "
                                           "that it does not run."]
    return lines + [""]


# --- Table 1 and the paper's numbers ------------------------------------------------------------------

def _range(d: dict, key: str, digits: int) -> str:
    lo, hi = d.get(f"{key}_min"), d.get(f"{key}_max")
    if lo is None or hi is None or not (finite(lo) and finite(hi)):
        return "n/a"
    return f"{float(lo):.{digits}f}–{float(hi):.{digits}f}"


def _cost_range(d: dict) -> str:
    """The range of the profiling costs ``c_i``, in the cost unit the experiment declared."""
    unit = str(d.get("cost_unit") or "tokens")
    if unit == "tokens" or not (finite(d.get("cost_min")) and finite(d.get("cost_max"))):
        return _range(d, "cost", 2)
    return f"{amount(float(d['cost_min']), unit)}–{amount(float(d['cost_max']), unit)}"


def _table1(res: ResultSet) -> list[str]:
    rows = [(name, d) for name, d in res.datasets().items() if not d.get("synthetic")]
    if not rows:
        return []
    paper_sets = {e.dataset_name for e in res.experiments if e.paper_role}
    with_subset = any(finite(d.get("subset_min_gap")) for name, d in rows if d.get("dataset") in paper_sets)
    head = ["data", "source", "K", "accuracy", "latency (s)", "tokens", "|P*|", "profiling cost c_i"]
    if with_subset:
        head += ["14-arm |P*|", "14-arm min gap"]
    table = []
    published = {(p.dataset, p.metric): p.text for p in PUBLISHED if p.method is None}
    for name, d in rows:
        source = "surrogate" if d["_experiment"].surrogate else "logs"  # (as every other surface labels it)
        title = str(d.get("title", name))  # a second row of one dataset (other terms, split) names its experiment
        shown = md_text(title) if name == d.get("dataset", name) else \
            f"{md_text(title)} ({code(d['_experiment'].label)})"
        cells = [shown, source, whole(d.get("K")), _range(d, "accuracy", 3),
                 _range(d, "latency", 3), _range(d, "tokens", 1), whole(d.get("pareto_size")), _cost_range(d)]
        paper = d.get("dataset") in paper_sets and d["_experiment"].on_paper_terms  # compared as the paper's
        if with_subset:
            cells += ([whole(d.get("subset_pareto_size")), f"{float(d['subset_min_gap']):.4f}"]
                      if paper and finite(d.get("subset_min_gap")) else ["n/a", "n/a"])
        table.append(cells)
        ds = d.get("dataset")
        if paper and (ds, "K") in published:
            g = {metric: text for (dd, metric), text in published.items() if dd == ds}
            cells = [md_text(str(d.get("title", name))), "paper", g["K"], f"{g['accuracy_min']}–{g['accuracy_max']}",
                     f"{g['latency_min']}–{g['latency_max']}", f"{g['tokens_min']}–{g['tokens_max']}",
                     g["pareto_size"], f"{g['cost_min']}–{g['cost_max']}"]
            if with_subset:
                cells += [g["subset_pareto_size"], g["subset_min_gap"]]
            table.append(cells)
    heading = "Table 1: the data" if of_the_paper(res) else "The data"  # the paper's table where it has a say
    return [f"## {heading}", "", "Configuration-level means over all instances (|P*| and gaps on the "
            "evaluation split).", "", *md_table(head, table)]


def _fmt_like(value: float | None, like: str, why: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return f"not measured ({why})"
    if "." not in like:
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"
    return f"{value:.{max(len(like.split('.')[1]), 1)}f}"


def _shown_number(r: dict, value: float) -> str:
    """A number of a paper row as the row shows ``ours``: like the paper's digits, a percentage or a signed gain."""
    if r["kind"] == "value":
        return _fmt_like(value, r["paper"], "")
    return f"{value:.1f}%" if r["kind"] != "absolute gain" else f"{value:+.3f}"


def match_text(r: dict) -> str:
    """The match cell of a paper row: whether the paper's number lies in our 95% interval, which it states."""
    if r["match"] == "n/a":  # not measured, or measured without an interval (paper_match._paired_bootstrap)
        return f"n/a (no 95% interval: {r['no_interval']})" if r.get("no_interval") else "n/a"
    if r["match"] == "other budget":  # a quick grid's largest budget is not the paper's
        return f"n/a (the paper's number is at ρ={r['paper_rho']}, ours at {r['where']})"
    word = {"yes": "yes", "direction": "direction only", "no": "no"}[r["match"]]
    return f"{word} (our 95% CI {_shown_number(r, r['low'])} to {_shown_number(r, r['high'])})"


QUANTITIES = {"regret_hv": "R_HV", "regret_std": "R_std", "traj_cum": "trajectory end, cumulative R_HV",
              "traj_ma": "trajectory end, moving average of the gap", "psi_error": "P(error), 14 arms",
              "psi_error_stochastic": "P(error), 14 arms, realised costs", "f1": "Pareto F1, full set"}


def paper_cells(r: dict) -> list[str]:
    """A row of the paper's numbers beside ours: experiment, quantity, method, budget, paper, ours, ours at, match."""
    budget = "largest" if r["rho"] == "max" else "smallest" if r["rho"] == "min" else f"ρ={r['rho']}"
    measured = r["ours"] is not None
    if r["kind"] == "value":
        quantity, who, paper = QUANTITIES[r["metric"]], method_name(r["method"]), r["paper"]
        ours = _fmt_like(r["ours"], r["paper"], r["where"])
    else:
        reduction = r["kind"] == "reduction"
        quantity = f"reduction of {QUANTITIES[r['metric']]}" if reduction else f"{r['kind'].split()[0]} F1 gain"
        who = f"{method_name(r['method'])} vs {method_name(r['baseline'])}"
        paper = f"{r['paper']}{'%' if r['kind'] != 'absolute gain' else ''}"
        ours = _shown_number(r, r["ours"]) if measured else f"not measured ({r['where']})"
        budget = "largest" if reduction and r["rho"] == "max" else f"ρ={r['rho']}"
    return [r["experiment"], quantity, who, budget, paper, ours, r["where"] if measured else "", match_text(r)]


def _paper_section(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    agree = sum(r["match"] == "yes" for r in rows)
    return ["## The paper's numbers beside ours", "",
            "Only for experiments recorded as the paper's own (SPEC §7). Ours are means over the repetitions of "
            "that experiment at the same metric, method and budget; 'largest'/'smallest' are the ends of its ρ "
            "grid. The paper's numbers come from its private logs. Match: 'yes' when the paper's number lies in "
            "our 95% interval (Wilson for an error probability, mean ± 1.96 se for a mean, a paired bootstrap over "
            "repetitions for a reduction or gain), 'direction only' when a reduction or gain has the paper's sign "
            "over our whole interval but not its size, else 'no'; 'n/a' where it was not measured, where it has no "
            "interval (a ratio undefined in over 2.5% of the resamples), or where the "
            "paper's number is at its largest (or smallest) budget and ours at another (a quick grid's); "
            f"{agree} of {len(rows)} match.", "",
            *md_table(["experiment", "quantity", "method", "budget (paper)", "paper", "ours", "ours at", "match"],
                       [[code(cells[0]), *cells[1:]] for cells in map(paper_cells, rows)])]  # a name as written


#: The formats of a figure a report embeds, in order of preference (a PDF is not an image a page shows).
EMBEDDED = ("png", "svg")
#: What both reports say of the figures of figures.csv they leave out, by the note's id: what comes before the
#: command that mends it, the command, what comes after.
FIGURE_NOTES = {
    "pdf-only-figures": ("figure(s) of figures.csv are drawn as PDF only, which a report does not embed; run",
                         "cabench plot --format png", "on this folder to embed them."),
    "stale-figures": ("figure(s) of figures.csv are left out: drawn from results that have changed since, or missing; "
                      "run", "cabench plot", "on this folder to redraw them."),
}


def embedded_format(formats: str) -> str | None:
    """The format of a figure (its ``formats`` in figures.csv) that a report embeds; None for a PDF-only one."""
    return next((fmt for fmt in EMBEDDED if fmt in formats.split(";")), None)


def figure_notes(c: Contents) -> list[dict[str, str | int]]:
    """The notes (:data:`FIGURE_NOTES`) on the figures a report leaves out, those with any: how many are drawn as PDF
    only (current, but in no format a report embeds) and how many are not current."""
    counts = {"pdf-only-figures": sum(embedded_format(formats) is None for formats in c.figures["formats"]),
              "stale-figures": c.stale}
    return [{"id": key, "count": n, "before": before, "command": command, "after": after}
            for key, (before, command, after) in FIGURE_NOTES.items() if (n := counts[key])]


def _figures(c: Contents) -> list[str]:
    lines = ["## Figures", ""]
    for _, r in c.figures.iterrows():
        if fmt := embedded_format(r["formats"]):
            caption = md_text(r["caption"])
            lines += [f"**{caption}.**", "", f"![{caption}]({r['stem']}.{fmt})", ""]
    for note in figure_notes(c):
        lines += [f"{note['count']} {note['before']} `{note['command']}` {note['after']}", ""]
    return lines if len(lines) > 2 else []


def of_the_paper(res: ResultSet) -> bool:
    """Whether the results hold an experiment of the paper's, or one on the paper's data: their report speaks of
    the paper (Table 1, "beyond the paper"); a user's own experiments on their own logs are just experiments."""
    published = {p.dataset for p in PUBLISHED}
    return any(e.paper_role or e.dataset_name in published for e in res.experiments)


def is_beyond(e: Experiment) -> bool:
    """An experiment with a method the paper does not have (cabench's own or a user's)."""
    return any(registry.origin(m) != "paper" for m in e.methods)


def _per_budget(e: Experiment) -> list[str]:
    """The reference method against each other one at every budget (identification)."""
    base, mode, table = per_budget(e)
    if not table:
        return []
    rows = [[f"{r['rho']:g}", method_name(r["other"]), f"{r['f1_base']:.3f}", f"{r['f1_other']:.3f}",
             f"{r['diff']:+.3f} {interval_text(r['low'], r['high'], '+.3f')}", r["verdict"],
             f"{r['error_base']:.3f} vs {r['error_other']:.3f} (p={r['p']:.3g})", f"{100 * r['spend_share']:.1f}%",
             str(r["n"])] for r in table]
    return [f"#### {method_name(base)} against each method at every budget ({mode} costs)", "",
            "F1: mean paired difference with a percentile bootstrap 95% interval over repetitions; error: exact "
            "McNemar p (not adjusted); spend: the share of the budget the reference method spent.", "",
            *md_table(["ρ", "vs", f"F1 {method_name(base)}", "F1 other", "F1 diff [95% CI]",
                       f"{method_name(base)}'s F1 is", "error (base vs other)", f"{method_name(base)} spend", "n"],
                      rows)]


@dataclass(frozen=True)
class Contents:
    """What both renderings of the report (REPORT.md, REPORT.html) read, computed once: the results below
    ``root``, each experiment's findings by label, the paper's numbers beside ours, the figures of figures.csv
    that are current (drawn from the results as they are now) and how many of its figures are not; the
    requirements, if any, and each experiment's answer under them by label
    (:func:`~cabench.constraints.answers_under`).

    ``sections`` holds, by label, the sections kept from an earlier report whose inputs are unchanged
    (:mod:`cabench.report_cache`: ``verdicts``, ``markdown`` lines, ``html`` data); ``found`` holds the findings of
    every other experiment, and ``keys`` each experiment's section key when sections are kept."""

    root: Path
    results: ResultSet
    found: dict[str, Findings]
    paper: list[dict]
    figures: pd.DataFrame
    stale: int
    constraints: tuple[Constraint, ...] = ()
    under: dict[str, ConstrainedAnswer | str] = field(default_factory=dict)
    sections: dict[str, dict] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    decided: dict[str, dict | None] = field(default_factory=dict)

    @property
    def beyond(self) -> list[Experiment]:
        return [e for e in self.results.experiments if is_beyond(e)]

    def verdicts(self, label: str) -> list[Verdict]:
        """The verdicts of the experiment ``label``, found now or kept."""
        if label in self.found:
            return self.found[label].verdicts
        return [Verdict(**v) for v in self.sections[label]["verdicts"]]

    def decision(self, label: str) -> dict | None:
        """The decision of the experiment ``label`` (:func:`cabench.answers.brief`), found now or kept."""
        if label in self.decided:
            return self.decided[label]
        return self.sections[label]["decision"]


def gather(root: Path, constraints: tuple[Constraint, ...] = (), cache: SectionCache | None = None) -> Contents:
    """Read the results below ``root`` and compute what the report says of them (under ``constraints`` too).

    With a ``cache`` (and no ``constraints``) an experiment whose section is kept there is not read beyond what the
    report's overview shows (its selections are not read); every other one is read in full now, before anything is
    written."""
    keep = cache is not None and not constraints
    res = ResultSet(root, selections=not keep)
    if res.empty:
        raise no_results(root)
    keys = {e.label: section_key(e) for e in res.experiments} if keep else {}
    kept = {label: s for label, key in keys.items() if cache is not None and (s := cache.get(key)) is not None}
    todo = [e for e in res.experiments if e.label not in kept]
    read_selections(todo)  # before anything is computed or written
    under = answers_under(res, constraints)
    figures, stale = report_figures(root, {e.label for e in res.experiments})
    return Contents(root, res, {e.label: findings(e) for e in todo}, paper_rows(res), figures,
                    stale, constraints, under, kept, keys,
                    {e.label: brief(e) for e in todo})


def report_figures(root: Path, labels: set[str]) -> tuple[pd.DataFrame, int]:
    """The current figures a report of ``root`` embeds (their stems relative to ``root``) and how many of its
    figures are not current. With an index above ``root`` (:func:`~cabench.figure_index.index_root`: where
    ``cabench plot ROOT/sub`` records), ``root`` reads the figures of its own experiments there, and the current
    ones of its own index too if it has one (drawn before the folder above had an index; a figure, by its source
    and file name, embedded once); the figures not current are those of the index above, which `plot` redraws."""
    above = index_root(root)
    if above == root:
        current = current_figures(root)
        return current, len(read_index(root)) - len(current)

    def ours(table: pd.DataFrame, index: Path) -> pd.DataFrame:
        keep = [set(names.split("; ")) <= labels for names in table["experiments"]]
        table = table[pd.Series(keep, index=table.index, dtype=bool)]
        return table.assign(stem=[os.path.relpath(index / stem, root) for stem in table["stem"]])

    def figures(table: pd.DataFrame) -> list[tuple[str, str]]:
        return [(source, Path(stem).name) for source, stem in zip(table["source"], table["stem"])]

    indexes = [above, root] if (root / INDEX).is_file() else [above]
    current = pd.concat([ours(current_figures(index), index) for index in indexes], ignore_index=True)
    current = current[~pd.Series(figures(current), dtype=object).duplicated().to_numpy()].reset_index(drop=True)
    every = ours(read_index(above), above)
    return current, len(set(figures(every)) - set(figures(current)))


def section_lines(c: Contents, e: Experiment) -> list[str]:
    """``e``'s part of REPORT.md (:func:`experiment_section`, and beyond the paper its per-budget comparisons),
    kept or computed now."""
    if e.label in c.sections:
        return list(c.sections[e.label]["markdown"])
    lines = experiment_section(e, c.found[e.label], c.under.get(e.label))
    return lines + _per_budget(e) if is_beyond(e) else lines


def scorecard_counts(c: Contents) -> str:
    """How many claims hold, do not hold, are inconclusive or were not tested."""
    states = [v.state for e in c.results.experiments for v in c.verdicts(e.label)]
    return ", ".join(f"{text}: {states.count(k)}" for k, text in STATE_TEXT.items() if states.count(k))


def _scorecard(c: Contents) -> list[str]:
    rows = [[code(e.label), v.claim, STATE_TEXT[v.state], v.quantity, v.reason or "—"]
            for e in c.results.experiments for v in c.verdicts(e.label)]
    return ["## Scorecard", "",
            f"Each claim the report tests, experiment by experiment ({scorecard_counts(c)}): the verdict, the "
            "tested quantity with its 95% interval, and for a claim that does not hold a reason measured in the "
            "results files" + (" (surrogate logs: see the note below)" if c.results.surrogate else "") + ". A claim "
            "holds when the results show it at the 5% level, does not hold when the interval rules it out, and is "
            "inconclusive otherwise (that realised costs leave the error unchanged holds while no difference is "
            "significant, and does not hold when one is); not tested where there is nothing to test. Where an "
            "error probability is compared, the exact McNemar test named beside the interval decides: with few "
            "repetitions where one method errs and the other not, the bootstrap interval can leave out 0 where the "
            "test does not reach 5%.", "",
            *md_table(["experiment", "claim", "verdict", "tested quantity [95% CI]", "why it does not hold"], rows)]


#: How many configurations of a returned set the overview names before saying how many more there are.
NAMED = 5
#: What the overview of decisions shows, in both reports.
DECISIONS = ("Per experiment, at its largest budget: the answer of the method that did best there (online: the lowest "
             "mean R_HV among methods with a preference; identification: the lowest error, then the highest F1, "
             "deterministic costs first) and how often that method gives it. Each experiment's section has the "
             "details.")


def decision_rows(c: Contents) -> list[dict]:
    """One row per experiment for the overview of decisions (REPORT.md and REPORT.html): the answer at its largest
    budget (``lead`` then the first :data:`NAMED` configuration ``names`` and how many ``more``), the method giving
    it, the budget and how often that method gives it (a weak identification answer flagged,
    :func:`cabench.answers.weak`)."""
    out = []
    for e in c.results.experiments:
        d = c.decision(e.label)
        if d is None:
            out.append({"experiment": e.label, "lead": no_decision(e), "names": [],
                        "more": 0, "by": "", "at": "", "often": ""})
            continue
        names = d["names"]
        mode = f", {d['cost_mode']} costs" if d["cost_mode"] else ""
        n = d["repetitions"]
        psi = d["exact_true_set"] is not None
        each = "each in " if len(names) > 1 and not psi else ""  # online configurations exploited equally often
        often = f"{each}{round(d['share'] * n)} of {n} repetitions" + (
            f" (the exact true set in {round(d['exact_true_set'] * n)})" if psi else "") + (
            f"; {WEAK}" + (f": {short_of(d)}" if d.get("gap_zero") else "") + tied_sets_note(d)
            if psi and weak(d["share"]) else "") + (
            f"; {d['weak_online']}" if d.get("weak_online") else "") + (
            f"; in {round(d['no_single'] * n)} no one configuration is pulled most" if d.get("no_single") else "") + (
            f"; in the set only by a tie as scored: {listed(d['tie_only'])}" if d.get("tie_only") else "") + (
            f"; the same ν: {listed(d['same_nu'])}, as good" if d.get("same_nu") else "") + (
            f"; {tie_note(d['beaten_in_tie'], quoted_name)}" if d.get("beaten_in_tie") else "") + (
            f"; another configuration is as good or better on every mean per call than {listed(d['means_only'])} "
            f"({SCORED_PER_CALL})" if d.get("means_only") else "") + (
            f"; {undominated_note(d['undominated_on_means'])}" if d.get("undominated_on_means") else "")
        out.append({"experiment": e.label, "names": names[:NAMED], "more": max(len(names) - NAMED, 0),
                    "lead": ("pay for" if len(names) == 1 else "pay for any of") if e.setting == "online"
                    else f"the Pareto set of {len(names)}:",
                    "by": registry.display(d["method"]),
                    "at": f"B = {amount(d['budget'], e.cost_unit)} (ρ {d['rho']:g}{mode})", "often": often})
    return out


def _decisions(c: Contents) -> list[str]:
    rows = [[code(r["experiment"]), " ".join([r["lead"], ", ".join(code(n) for n in r["names"])]).strip()
             + (f" and {r['more']} more" if r["more"] else ""), r["by"], r["at"], r["often"]]
            for r in decision_rows(c)]
    return ["## Decisions", "", DECISIONS, "",
            *md_table(["experiment", "the decision", "by", "at", "how often"], rows)]


def markdown(c: Contents) -> str:
    """REPORT.md: the scorecard first, then the experiments, the paper's numbers and the figures."""
    res = c.results
    versions = sorted({str(e.meta.get("cabench_version")) for e in res.experiments})
    commits = sorted({str(e.meta.get("git_commit"))[:12] for e in res.experiments})
    said = [f"**{requirements_sentence(c.constraints, res.experiments)}**", ""] if c.constraints else []
    lines = ["# cabench report", "", *said, *_scorecard(c), *_decisions(c)]
    surrogate = sorted({md_text(e.title) for e in res.experiments if e.surrogate})
    if surrogate:
        lines += [f"> **Surrogate data.** The logs of {', '.join(surrogate)} behind these results are *surrogate* "
                  "logs, generated by `scripts/make_surrogate_logs.py` and calibrated to the statistics the paper "
                  "publishes (its raw evaluation logs are not public). Their numbers are not the paper's "
                  "measurements: what should reproduce is the qualitative behaviour (method ordering, the growth "
                  "of regret with log B, the decay of the identification error), not the values.", ""]
    n = len(res.experiments)
    found = (f"{n} experiment{'s' if n != 1 else ''} found below this folder; cabench {', '.join(versions)}, commit "
             f"{', '.join(commits)}. Each experiment is reported on its own; none is pooled with another.")
    lines += [" ".join(filter(None, [found, unfinished_note(res.root, res.unfinished)])),
              "", *md_table(["experiment", "setting", "data", "K", "ρ grid", "repetitions", "config hash"],
                            [[code(e.label), e.setting, f"{md_text(e.title)}{' (surrogate)' if e.surrogate else ''}",
                              str(e.k),
                              ", ".join(f"{r:g}" for r in e.rho_grid), str(e.repetitions), code(e.config_hash)]
                             for e in res.experiments])]
    lines += _table1(res)
    beyond = c.beyond if of_the_paper(res) else []  # a user's own experiments on their own logs: nothing beyond
    for e in res.experiments:
        if e not in beyond:
            lines += section_lines(c, e)
    if beyond:
        extra = list(dict.fromkeys(m for e in beyond for m in e.methods if registry.origin(m) != "paper"))
        lines += ["## Beyond the paper", "",
                  f"Experiments with methods the paper does not have: {', '.join(method_name(m) for m in extra)} "
                  "(docs/methods.md states each rule and what of Theorem 2 carries over; methods of your own are "
                  "`module:object`)."
                  + (" These results are kept apart from the paper's experiments above and from its figures."
                     if any(e.paper_role for e in res.experiments if e not in beyond) else ""), ""]
        for e in beyond:
            lines += section_lines(c, e)
    lines += _paper_section(c.paper)
    lines += _figures(c)
    return inert_html("\n".join(lines).rstrip() + "\n")


def build_report(root: Path, constraints: tuple[Constraint, ...] = ()) -> str:
    """REPORT.md's text for the results below ``root`` (under ``constraints`` too)."""
    return markdown(gather(root, constraints))


def write_texts(texts: dict[Path, str]) -> tuple[Path, ...]:
    """Write report files (path: text) together: every one, or (a full disk, a folder not writable) none, in one line
    naming the file that could not be written."""
    remove_stale_temporaries(list(texts))  # left by a report killed while it renamed them (6 MB each)
    try:
        with replaced_together() as files:
            for path, text in texts.items():
                files.write(path, text)
    except OSError as exc:
        raise CabenchError(f"{exc.filename}: cannot write the report ({exc.strerror}); the reports there are kept; "
                           "make room, or pass a writable results folder") from None
    return tuple(texts)


def write_text(path: Path, text: str) -> Path:
    """Write a report file atomically; one line when it cannot be written."""
    return write_texts({path: text})[0]


#: How each report cabench writes begins (REPORT.md: its first line; REPORT.html: within its head), since its first
#: version: a file of that name that begins otherwise is a user's own, never replaced without ``--force``.
REPORT_MARKS = {"REPORT.md": "# cabench report\n", "REPORT.html": "<title>cabench report</title>",
                "report_sections.json": '{"sections":'}


def check_reports(root: Path, names: tuple[str, ...] = tuple(REPORT_MARKS), force: bool = False,
                  remedy: str = "move it, or pass --force to replace it") -> None:
    """Refuse, in one line and before any work, to replace a file ``names`` of ``root`` that cabench did not write
    (:data:`REPORT_MARKS`), saying the ``remedy`` the command offers; ``force`` replaces it."""
    for name in names if not force else ():
        what = "the reports' cache" if name.endswith(".json") else "a report"
        refuse_unless_ours(root / name, REPORT_MARKS[name], f"{what} cabench wrote", remedy,
                           within=name.endswith(".html"))


def write_report(root: Path) -> Path:
    """Write ``ROOT/REPORT.md`` (``cabench report`` also writes REPORT.html: :mod:`cabench.html_report`); a file of
    that name cabench did not write is refused (:func:`check_reports`)."""
    check_reports(root, ("REPORT.md",))
    return write_text(root / "REPORT.md", signed(build_report(root)))
