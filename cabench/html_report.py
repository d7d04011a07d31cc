"""REPORT.html: the report as one self-contained page, beside REPORT.md.

The page opens with the scorecard (every claim the report tests, its verdict, the tested quantity with its 95%
interval, and why a claim does not hold), then gives per experiment the decision (the configuration, or the
Pareto set, by name with accuracy, latency, tokens and dollars per call where known, and how often each method
finds it), the summary, a sortable table of every configuration, the Pareto front (names on hover), the current
figures and the paired comparisons; then the paper's numbers beside ours with whether they match. Given
requirements, the page states them at the top and each experiment answers under them after its decision.

Nothing is fetched when it opens: figures are inline PNG, the data inline JSON, and plotly.js is inlined once
from the installed ``plotly`` package. The page is rendered by the jinja2 templates of ``cabench/templates``;
this module only turns :class:`cabench.report.Contents` and :func:`cabench.answers.decision` into plain rows.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd
import plotly.offline

from cabench import recommend, registry
from cabench.analysis import STATE_TEXT, Findings, found_by, reference_and_others
from cabench.answers import (
    SCORED_PER_CALL,
    WEAK,
    answered,
    beaten_pairs,
    no_decision,
    short_of,
    tie_note,
    tied_sets_note,
    top_answers,
    top_decision,
    weak,
    weak_online,
)
from cabench.constraints import ConstrainedAnswer, Constraint
from cabench.figure_index import experiment_source
from cabench.paper import SURROGATE_NOTE
from cabench.record import objective_columns
from cabench.report import (
    DECISIONS,
    Contents,
    check_reports,
    comparison_tables,
    decision_rows,
    embedded_format,
    figure_notes,
    gather,
    markdown,
    not_run_lines,
    of_the_paper,
    paper_cells,
    scorecard_counts,
    section_lines,
    summary_table,
    unpulled_lines,
    write_texts,
)
from cabench.report_cache import SectionCache, round_trip
from cabench.report_cells import (
    Table,
    charged_at_profiling,
    clipped_calls,
    dropped_at_import,
    listed,
    measurement,
    sentence,
    undominated_note,
    unit_formats,
)
from cabench.report_requirements import found_rows, requirement_sentences, requirement_tables, requirements_sentence
from cabench.results import Experiment, finite, unfinished_note
from cabench.storage import signed
from cabench.units import LABELS, amount, axis_label, percent, value_label

Cell = dict[str, str]


def _cell(text: str, value: Any = None) -> Cell:
    """A table cell: its text and the value it sorts by (the number itself where there is one)."""
    number = value if value is not None else text
    return {"text": text, "value": repr(float(number)) if finite(number) else str(number)}


#: What a measure's name may be to name a row's ``data-`` attribute (a column of the user's own named with spaces or
#: ``=`` would write attributes of its own into the page).
ATTRIBUTE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

_RHO = re.compile(r"ρ=(?P<rho>[0-9.eE+-]+)")


def _paper_row(r: dict) -> list[Cell]:
    """A row of the paper's numbers beside ours (:func:`~cabench.report.paper_cells`), each budget sorting by its ρ
    (the grid's smallest and largest before and after every number) and each number by its value."""
    cells = paper_cells(r)

    def budget(text: str) -> Cell:
        found = _RHO.fullmatch(text)
        if found:
            return _cell(text, float(found.group("rho")))
        ends = {"smallest": "-Infinity", "largest": "Infinity"}  # as JavaScript's parseFloat reads them
        return {"text": text, "value": ends.get(text, text)}

    ours = r["ours"] if r["ours"] is not None and finite(r["ours"]) else None
    return [_cell(cells[0]), _cell(cells[1]), _cell(cells[2]), budget(cells[3]), _cell(cells[4]),
            _cell(cells[5], ours), budget(cells[6]), _cell(cells[7])]


def _share(value: float) -> Cell:
    """A share as a whole percentage, never 0% or 100% for one that is neither (:func:`~cabench.units.percent`)."""
    return _cell(percent(value), value)


def _real(row: pd.Series, measure: str, number: str) -> Cell:
    """A measurement per call with its 95% interval (:func:`measurement`), sorting by the mean."""
    return _cell(measurement(row, measure, number), row[measure])


def _anchors(labels: list[str]) -> dict[str, str]:
    """A stable, unique HTML id for each experiment label."""
    out: dict[str, str] = {}
    for label in labels:
        slug = "exp-" + (re.sub(r"[^A-Za-z0-9_-]+", "-", label).strip("-") or "x")
        anchor, n = slug, 1
        while anchor in out.values():  # "run 2" then "run!" after "run": exp-run-2, exp-run-3; never one id twice
            n += 1
            anchor = f"{slug}-{n}"
        out[label] = anchor
    return out


def _scorecard(c: Contents, anchors: dict[str, str]) -> list[dict[str, Any]]:
    return [{"experiment": e.label, "anchor": anchors[e.label], "kind": v.kind, "state": v.state,
             "verdict": STATE_TEXT[v.state], "claim": v.claim, "quantity": v.quantity, "reason": v.reason,
             "versus": v.versus or "", "estimate": _cell("", v.estimate)["value"], "low": _cell("", v.low)["value"],
             "high": _cell("", v.high)["value"]}
            for e in c.results.experiments for v in c.verdicts(e.label)]


def _decision(e: Experiment) -> dict[str, Any] | None:
    """The decision at the largest budget (:func:`cabench.answers.decision`), its configurations in real units
    and how often each method finds it."""
    rows, d = top_answers(e), top_decision(e)  # the decision is the largest budget's
    if d is None:
        return None
    names = [x["config_id"] for x in answered(d)] if e.setting == "online" else list(d["pareto_set"])
    mode = d.get("cost_mode")
    shares = found_by(e, names, d["rho"], mode)
    methods = [m for m in e.methods if m in shares]
    arms = e.arms.assign(config_id=e.arms["config_id"].astype(str)).set_index("config_id")
    units = unit_formats(e.arms)
    real = list(units)
    returned = {a["method"]: {c["config_id"]: c["share"] for c in a.get("configurations", [])}
                for a in rows if a["rho"] == d["rho"] and a.get("cost_mode") == mode}
    rows = [{"config": name, "cells": [_real(arms.loc[name], m, units[m][1]) for m in real]
             + [_cell(f"{arms.loc[name, c]:.3f}", arms.loc[name, c]) for c in objective_columns(e.arms)]
             + [_share(returned[m].get(name, 0.0)) for m in methods if e.setting == "psi"],
             "measures": [{"name": m, "value": _cell("", arms.loc[name, m])["value"]} for m in real
                          if ATTRIBUTE_NAME.fullmatch(m)]}  # (an attribute's name: a column of yours may hold anything)
            for name in names]
    header = ([f"{units[m][0]} per call" for m in real]
              + [value_label(c[3:]) for c in objective_columns(e.arms)]
              + [f"returned by {registry.display(m)}" for m in methods if e.setting == "psi"])
    finders = [{"method": m, "name": registry.display(m), "share": _share(shares[m]), "chosen": m == d["method"],
                "note": "" if e.setting == "psi" or registry.prefers(m, "online")
                else f"a round robin: no preference ({registry.IN_TURN})"} for m in methods]
    notes = []
    if e.setting == "psi" and weak(d["share"]):
        notes.append(sentence(f"{WEAK}: {short_of(d)}{tied_sets_note(d)}"))
    if e.setting == "online" and weak_online(d):
        notes.append(sentence(weak_online(d)))
    if d.get("no_single"):
        notes.append(f"In {_share(d['no_single'])['text']} of its repetitions {registry.display(d['method'])} ended "
                     "with several configurations pulled most, equally often: those repetitions chose none.")
    for m in d.get("members") or []:
        if m.get("tie_dominated_by"):
            notes.append(f"{m['config_id']} is no better than {m['tie_dominated_by']} on any objective as scored and "
                         "worse on some: it is in the set only by a tie (dominance is strict, paper §3.2; latency and "
                         "cost are scored within the profiling split's 5th-95th percentiles, so a tie as scored may "
                         "be none per call).")
    if e.setting == "online" and beaten_pairs(d):
        notes.append(sentence(tie_note(beaten_pairs(d))))
    for x in d.get("same_nu") or []:
        notes.append(f"{x['config_id']} has the same ν as {names[0]} (exploited in {_share(x['share'])['text']} of "
                     "the repetitions): any of them is as good.")
    for m in (d.get("members") or []) + ([d["configuration"]] if e.setting == "online" else []):
        if m.get("beaten_on_means"):
            notes.append(f"{m['beaten_on_means']} is as good as {m['config_id']} or better on every mean per call: "
                         f"{SCORED_PER_CALL}.")
    if d.get("undominated_on_means"):
        notes.append(sentence(undominated_note(d["undominated_on_means"])))
    what = ((f"pay for {names[0]}" if len(names) == 1 else f"pay for any of {listed(names)} (exploited "
             "equally often: the runs do not choose between them)") if e.setting == "online"
            else f"the Pareto set of {len(names)} configuration{'s' if len(names) != 1 else ''}")
    return {"what": what, "tied": len(names) > 1 and e.setting == "online", "method": d["method"],
            "method_name": registry.display(d["method"]), "rho": f"{d['rho']:g}",
            "budget": amount(d["budget"], e.cost_unit), "criterion": d["criterion"], "mode": mode or "",
            "share": _share(d["configuration"]["share"] if e.setting == "online" else d["share"]),
            "exact_true_set": _share(d["exact_true_set"]) if e.setting == "psi" else None,
            "header": header, "rows": rows, "finders": finders, "notes": notes,
            "finder_header": ("exploits it most in" if len(names) == 1 else "exploits one of them most in")
            if e.setting == "online" else "returns exactly this set in"}


def _table(table: Table) -> dict[str, Any]:
    header, rows = table
    return {"header": header, "rows": [[_cell(text, value) for text, value in row] for row in rows]}


def _summary(e: Experiment, s: pd.DataFrame) -> dict[str, Any]:
    """The summary table, each row keyed by method, budget and cost mode."""
    table = _table(summary_table(e, s))
    keys = [[r.method, f"{r.rho:g}", r.get("cost_mode", "")] for _, r in s.iterrows()]
    return {"header": table["header"], "rows": [{"key": k, "cells": row} for k, row in zip(keys, table["rows"])]}


def _configurations(e: Experiment, decided: list[str]) -> dict[str, Any]:
    """Every configuration of the experiment: roles, normalised objectives, cost, ν, γ, real units."""
    objectives = objective_columns(e.arms)
    units = unit_formats(e.arms)
    real = list(units)
    header = ["configuration", "role", *(value_label(c[3:]) for c in objectives),
              f"c_i ({LABELS[e.cost_unit]})", "ν", "γ", *(f"{units[m][0]} per call" for m in real)]
    rows = []
    for _, r in e.arms.iterrows():
        name = str(r["config_id"])
        roles = [word for word, on in (("decision", name in decided), ("Pareto", r["pareto"] == 1),
                                       ("max-ν", r["optimal"] == 1)) if on]
        rows.append({"config": name, "cells": [
            _cell(name), _cell(", ".join(roles)), *(_cell(f"{r[c]:.3f}", r[c]) for c in objectives),
            _cell(amount(r["profile_cost"], e.cost_unit), r["profile_cost"]), _cell(f"{r['nu']:.4g}", r["nu"]),
            _cell(f"{r['gamma'] + 0.0:.4g}", r["gamma"]),  # (+ 0.0: no "-0")
            *(_real(r, m, units[m][1]) for m in real)]})
    return {"header": header, "rows": rows}


#: The front's marker groups: legend name, colour, symbol, size.
GROUPS = (("other configurations", "#9e9e9e", "circle", 7), ("true Pareto set", "#1f77b4", "circle", 10),
          ("decision", "#d62728", "circle-open", 16), ("max-ν", "#2ca02c", "star", 13))
GAP = 0.08  # between panels, as a share of the width


def plotly_text(text: str) -> str:
    """``text`` as plotly.js shows it as written: escaped as markup, a double quote as the numeric entity plotly
    decodes (``&quot;`` it shows as it is: a name 'say "hi"' read 'say &quot;hi&quot;' on hover)."""
    return html.escape(text).replace("&quot;", "&#34;")


def _same_point(names: pd.Series, x: np.ndarray, y: np.ndarray, hover: np.ndarray) -> np.ndarray:
    """Each arm's hover text in a panel of ``x`` against ``y``, naming the other arms drawn at its very point
    (identical means): only the one drawn on top answers the mouse there."""
    out = hover.astype(object)  # (a copy: numpy text of fixed width would cut the longer texts)
    points: dict[tuple[float, float], list[int]] = {}
    for i, key in enumerate(zip(x.tolist(), y.tolist())):
        points.setdefault(key, []).append(i)
    for alike in points.values():
        for i in alike if len(alike) > 1 else ():
            others = ", ".join(plotly_text(str(names.iloc[j])) for j in alike if j != i)
            out[i] = f"{hover[i]}<br>at the same point: {others}"
    return out


def _front(e: Experiment, decided: list[str]) -> dict[str, Any]:
    """The plotly.js figure of the arms on their normalised objectives, the first against each other one (names
    and values on hover), the true Pareto set marked and, with two objectives, its front drawn."""
    objectives = objective_columns(e.arms)
    units = unit_formats(e.arms)
    real = list(units)
    names = e.arms["config_id"].astype(str)
    # plotly reads its text as markup (and decodes &lt; and &gt;, not &quot;): an objective's name is not
    shown = {c: html.escape(c[3:], quote=False) for c in objectives}
    hover = np.array([plotly_text(name) + "".join(f"<br>{value_label(shown[c])}: {r[c]:.3f}" for c in objectives)
                      + "".join(f"<br>{units[m][0]}: {measurement(r, m, units[m][1])}" for m in real)
                      for name, (_, r) in zip(names, e.arms.iterrows())])
    masks = dict(zip([g[0] for g in GROUPS], ((e.arms["pareto"] == 0).to_numpy(), (e.arms["pareto"] == 1).to_numpy(),
                                              names.isin(decided).to_numpy(), (e.arms["optimal"] == 1).to_numpy())))
    pairs = [(objectives[0], other) for other in objectives[1:]]
    width = (1 - GAP * (len(pairs) - 1)) / len(pairs)
    data: list[dict[str, Any]] = []
    layout: dict[str, Any] = {"height": 440, "margin": {"l": 60, "r": 20, "t": 20, "b": 50}, "hovermode": "closest",
                              "legend": {"orientation": "h", "y": -0.2}}
    for i, (y, x) in enumerate(pairs):
        axes = {"xaxis": f"x{i + 1 if i else ''}", "yaxis": f"y{i + 1 if i else ''}"}
        here = _same_point(names, e.arms[x].to_numpy(float), e.arms[y].to_numpy(float), hover)
        layout[f"xaxis{i + 1 if i else ''}"] = {"title": {"text": axis_label(shown[x])}, "anchor": axes["yaxis"],
                                                "domain": [i * (width + GAP), i * (width + GAP) + width]}
        layout[f"yaxis{i + 1 if i else ''}"] = {"title": {"text": axis_label(shown[y])}, "anchor": axes["xaxis"]}
        for label, colour, symbol, size in GROUPS:
            mask = masks[label]
            if mask.any():
                data.append({"type": "scatter", **axes, "x": e.arms.loc[mask, x].tolist(),
                             "y": e.arms.loc[mask, y].tolist(), "mode": "markers", "name": label,
                             "legendgroup": label, "showlegend": i == 0, "hovertext": here[mask].tolist(),
                             "hoverinfo": "text", "marker": {"color": colour, "symbol": symbol, "size": size}})
        if len(objectives) == 2:
            front = e.arms[e.arms["pareto"] == 1].sort_values(x)
            data.append({"type": "scatter", **axes, "x": front[x].tolist(), "y": front[y].tolist(), "mode": "lines",
                         "name": "Pareto front", "hoverinfo": "skip", "line": {"color": "#1f77b4", "width": 1}})
    if e.surrogate:  # in the plot itself: plotly's own "download as PNG" keeps it
        layout["margin"]["t"] = 40
        layout["annotations"] = [{"text": f"<i>{html.escape(SURROGATE_NOTE, quote=False)}</i>", "showarrow": False,
                                  "xref": "paper", "yref": "paper", "x": 0, "y": 1, "xanchor": "left",
                                  "yanchor": "bottom", "font": {"size": 11, "color": "#555"}}]
    return {"data": data, "layout": layout}


def _image(root: Path, row: pd.Series) -> dict[str, str] | None:
    """A figure of figures.csv as an inline image: PNG where drawn, else SVG; None for a PDF-only figure."""
    fmt = embedded_format(row["formats"])
    if fmt is None:
        return None
    data = base64.b64encode((root / f"{row['stem']}.{fmt}").read_bytes()).decode("ascii")
    mime = {"png": "image/png", "svg": "image/svg+xml"}[fmt]
    return {"caption": row["caption"], "stem": row["stem"], "uri": f"data:{mime};base64,{data}"}


def _images(c: Contents, source: str) -> list[dict[str, str]]:
    rows = c.figures[c.figures["source"] == source]
    return [image for _, r in rows.iterrows() if (image := _image(c.root, r)) is not None]


def _comparisons(e: Experiment, found: Findings) -> dict[str, Any]:
    boot, mcnemar = comparison_tables(e, found.comparisons)
    return {"base": registry.display(reference_and_others(e)[0]), "rho": f"{max(e.rho_grid):g}",
            "boot": _table(boot), "mcnemar": _table(mcnemar)}


def _under(e: Experiment, a: ConstrainedAnswer | str | None) -> dict[str, Any] | None:
    """The answer under the requirements (:mod:`cabench.report_requirements`): its sentences, its configurations
    and how often each method found it, rows keyed by configuration and by method, budget and cost mode."""
    if a is None:
        return None
    out: dict[str, Any] = {"sentences": requirement_sentences(e, a), "qualifying": 0, "answer": "", "members": None,
                           "found": None}
    if isinstance(a, str) or not a.qualifying:
        return out
    members, found = (_table(t) for t in requirement_tables(e, a))
    members["rows"] = [{"config": name, "cells": row} for name, row in zip(a.answer, members["rows"])]
    found["rows"] = [{"key": [f.method, f"{f.rho:g}", f.cost_mode or ""], "cells": row}
                     for f, row in zip(found_rows(e, a), found["rows"])]
    return {**out, "qualifying": len(a.qualifying), "answer": "|".join(a.answer), "members": members, "found": found}


def experiment_data(c: Contents, e: Experiment) -> dict[str, Any]:
    """What REPORT.html shows of ``e`` but its anchor and figures (those are the page's and figures.csv's): the
    part of its section :mod:`cabench.report_cache` keeps."""
    d = _decision(e)
    decided = [r["config"] for r in d["rows"]] if d else []
    return {"label": e.label, "setting": e.setting, "title": e.title, "surrogate": e.surrogate,
            "k": e.k, "objectives": ", ".join(e.objectives), "unit": LABELS[e.cost_unit],
            "grid": ", ".join(f"{r:g}" for r in e.rho_grid), "repetitions": e.repetitions,
            "config_hash": e.config_hash, "methods": ", ".join(registry.display(m) for m in e.methods),
            "decision": d, "undecided": sentence(no_decision(e)) if d is None else "",
            "summary": _summary(e, c.found[e.label].summary),
            "not_run": not_run_lines(e), "unpulled": unpulled_lines(e), "dropped": dropped_at_import(e.info),
            "clipped": clipped_calls(e.setting, e.dataset, e.cost_unit),
            "charged": charged_at_profiling(e.setting, e.arms, e.cost_unit, e.cost_modes),
            "configurations": _configurations(e, decided), "front": _front(e, decided),
            "comparisons": _comparisons(e, c.found[e.label]), "under": _under(e, c.under.get(e.label))}


def _experiment(c: Contents, e: Experiment, anchor: str) -> dict[str, Any]:
    data = c.sections[e.label]["html"] if e.label in c.sections else experiment_data(c, e)
    # whether an experiment goes beyond the paper depends on the others beside it, which a kept section does not
    return {**data, "beyond": e in c.beyond and of_the_paper(c.results), "anchor": anchor,
            "figures": _images(c, experiment_source(e.label))}


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("cabench", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render_html(c: Contents) -> str:
    """REPORT.html's text for the contents ``c``."""
    res = c.results
    anchors = _anchors([e.label for e in res.experiments])
    return _environment().get_template("report.html.j2").render(
        experiments=[_experiment(c, e, anchors[e.label]) for e in res.experiments],
        unfinished=unfinished_note(res.root, res.unfinished),
        scorecard=_scorecard(c, anchors), counts=scorecard_counts(c),
        decisions=[{**r, "anchor": anchors[r["experiment"]]} for r in decision_rows(c)], decisions_note=DECISIONS,
        surrogate=sorted({e.title for e in res.experiments if e.surrogate}),
        versions=", ".join(sorted({str(e.meta.get("cabench_version")) for e in res.experiments})),
        commits=", ".join(sorted({str(e.meta.get("git_commit"))[:12] for e in res.experiments})),
        paper=[{"cells": _paper_row(r), "match": r["match"]} for r in c.paper], paper_figures=_images(c, "paper"),
        figure_notes=figure_notes(c),
        requirements=requirements_sentence(c.constraints, res.experiments) if c.constraints else "",
        plotly_js=plotly.offline.get_plotlyjs())


def _sections(c: Contents) -> dict[str, dict[str, Any]]:
    """Every experiment's section (:mod:`cabench.report_cache`), kept or computed now, as it is stored."""
    return {e.label: c.sections[e.label] if e.label in c.sections else round_trip(
                {"verdicts": [asdict(v) for v in c.verdicts(e.label)], "markdown": section_lines(c, e),
                 "html": experiment_data(c, e), "decision": c.decision(e.label),
                 recommend.KEPT: recommend.experiment_answers(e)})
            for e in c.results.experiments}


def _rendered(c: Contents, keeping: bool) -> tuple[Contents, tuple[str, str]]:
    """``c`` with every experiment's section as it is stored (where sections are ``keeping``), and REPORT.md's and
    REPORT.html's texts, signed."""
    if keeping:
        c = replace(c, sections=_sections(c))
    page = render_html(c)
    return c, (signed(markdown(c)), signed(page if page.endswith("\n") else page + "\n"))


def write_reports(root: Path, constraints: tuple[Constraint, ...] = (), force: bool = False) -> tuple[Path, Path]:
    """Write ``ROOT/REPORT.md`` and ``ROOT/REPORT.html`` from one reading of the results below ``root`` (each
    experiment answering under ``constraints`` too); a file of either name that cabench did not write is refused
    before any work unless ``force`` (:func:`~cabench.report.check_reports`).

    Without ``constraints``, each experiment's section is kept in ``ROOT/report_sections.json`` and computed again
    only when one of its inputs changed (:mod:`cabench.report_cache`)."""
    check_reports(root, force=force)
    cache = None if constraints else SectionCache(root)
    c = gather(root, constraints, cache)
    try:
        c, texts = _rendered(c, cache is not None)
    except Exception:
        if not c.sections:
            raise
        # a kept section that does not render (written by hand, its digest made to match): nothing kept is trusted
        # further, every section is computed again (an error then is the report's own)
        assert cache is not None
        cache.forget()
        c, texts = _rendered(gather(root, constraints, cache), True)
    md, html = write_texts({root / "REPORT.md": texts[0], root / "REPORT.html": texts[1]})
    paths = (md, html)
    if cache is not None:
        cache.save({c.keys[label]: section for label, section in c.sections.items()})
    return paths
