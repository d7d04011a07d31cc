"""Answers under constraints: the configuration or Pareto set that satisfies requirements on objectives and cost.

A requirement such as ``accuracy>=0.6``, ``latency<=2s`` (or ``1500ms``), ``usd<=0.002`` (``$0.002``) or
``tokens<=300`` bounds a per-call mean of ``arms.csv`` in real units (accuracy, seconds, dollars, tokens, on the
evaluation instances); any other name bounds that objective's normalised mean (``efficiency>=0.5``,
``objective1>=0.4``). :func:`constrained_answer` reads one experiment's results and returns

* the configurations that qualify, and those whose 95% interval straddles a bound (``borderline``);
* online: the qualifying configuration with the largest ``nu`` (paper §3.1), and per method and budget the share
  of repetitions whose most-pulled qualifying configuration is that one (several tied for the most pulls are no
  answer, unless every one of them is the answer: several configurations sharing the largest ``nu``);
* identification: the true Pareto set restricted to the qualifying configurations, ``P* ∩ F`` (paper §3.2), and
  per method, cost mode and budget the share of repetitions whose returned set restricted to them equals it; and
  the Pareto set *of* the qualifying configurations, which adds any configuration dominated only by ones that fail
  a requirement (a filtered answer never contains those).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from cabench.data.terms import BUILTIN
from cabench.errors import CabenchError, did_you_mean
from cabench.pareto import pareto_mask
from cabench.quantize import QUANTUM
from cabench.record import best_nu, measure_columns, objective_columns
from cabench.results import Experiment, ResultSet
from cabench.units import plain

#: Names a requirement may bound in real units: the ``arms.csv`` column each reads and the units its value takes
#: (how many of the unit make the column's unit, a divisor, so that 2300ms is exactly 2.3 s; the empty unit is the
#: column's own).
MEASURES: dict[str, tuple[str, dict[str, float]]] = {
    "accuracy": ("accuracy", {"": 1.0}),
    "latency": ("latency_s", {"": 1.0, "s": 1.0, "ms": 1000.0}),
    "usd": ("usd", {"": 1.0, "usd": 1.0, "$": 1.0}),
    "tokens": ("tokens", {"": 1.0, "tokens": 1.0}),
    "completion_tokens": ("completion_tokens", {"": 1.0, "tokens": 1.0, "completion_tokens": 1.0}),
}
#: A mean within this share of a bound meets it: a mean of calls that each meet a bound exactly (every call 2.3 s)
#: is their sum over their count, a rounding away from the bound (2.3000000000000007).
TOLERANCE = 1e-9


def slack(bound: float, quantised: bool = False) -> float:
    """How far past ``bound`` a mean may lie and still meet it: :data:`TOLERANCE` of the bound, and for a mean of
    quantised rewards (a normalised objective, ``mu_*``; accuracy, see :func:`qualifying`) half a
    :data:`~cabench.quantize.QUANTUM` more, as far as the rounding moves a mean (a score of 0.7 on every call is a
    reward of 0.699999988)."""
    return TOLERANCE * abs(bound) + (QUANTUM / 2 if quantised else 0.0)


ALIASES = {"latency_s": "latency", "$": "usd", "dollars": "usd", "cost_usd": "usd"}
#: What ``recommend`` and the reports say when every qualifying configuration is the online answer.
EVERY_ONE = ("every qualifying configuration is the answer: a repetition finds it whenever it pulls one of them "
             "most, so these shares do not compare the methods")
#: ``cost`` takes its measure from the unit of its value: ``cost<=$0.002``, ``cost<=300tokens``.
COST_UNIT_MEASURE = {"usd": "usd", "$": "usd", "tokens": "tokens", "completion_tokens": "completion_tokens"}
_REQUIREMENT = re.compile(r"\s*(?P<name>[A-Za-z_$][\w.]*|\$)\s*(?P<op><=|>=)\s*(?P<dollar>\$)?\s*"
                          r"(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>[A-Za-z_$]*)\s*")


class DamagedMeasure(CabenchError):
    """A bounded mean of ``arms.csv`` that is empty or not finite: the results are damaged, which refuses the whole
    command, unlike a measure an experiment does not have (that experiment alone is not answered)."""


class OutOfRange(CabenchError):
    """A bound on a normalised objective outside [0, 1], found on an experiment that has the objective: the
    requirement is wrong for every experiment, unlike an objective one experiment lacks."""


@dataclass(frozen=True)
class Constraint:
    """One requirement: ``column`` of ``arms.csv`` (a real-unit mean, or ``mu_<objective>``) ``op`` ``value``."""

    column: str
    op: str  # "<=" or ">="
    value: float  # in the column's unit: seconds, dollars, tokens, or a normalised objective
    text: str
    unit: str = ""  # the unit the requirement was written in, if any (tokens<=300tokens: per call, not an objective)

    def holds(self, values: np.ndarray, quantised: bool = False) -> np.ndarray:
        """Whether each value satisfies the requirement, a value within :func:`slack` of the bound included."""
        room = slack(self.value, quantised)
        return values <= self.value + room if self.op == "<=" else values >= self.value - room

    def describe(self, own: Collection[str] = ()) -> str:
        """The requirement as ``recommend`` prints it: ``latency <= 2 s``, ``usd <= $0.002``; a normalised objective
        whose name is also a measure per call, or one of the ``own`` columns whose means per call are recorded
        (``mu_toxicity`` where ``toxicity`` bounds its column), says so (``tokens (normalised) >= 0.5``)."""
        # the bound to twelve significant digits: tokens<=125.6987 and <=125.69875 both read 125.699, and answered
        # differently
        # (dollars in positional notation, as a price reads: usd <= $0.00004, not $4e-05)
        shown = {"latency_s": ("latency", "{:.12g} s"), "usd": ("usd", "${}"), "tokens": ("tokens", "{:.12g}")}
        name, form = shown.get(self.column, (self.column.removeprefix("mu_"), "{:.12g}"))
        bare = not _written_normalised(self)  # an own column's name bounds its mean per call
        if self.column.startswith("mu_") and (_is_measure_name(name) or (name in own and not bare)):
            name = f"{name} (normalised)"
        return f"{name} {self.op} {form.format(plain(self.value, 12) if self.column == 'usd' else self.value)}"


def _is_measure_name(name: str) -> bool:
    """Whether ``name`` written alone bounds a measure per call other than its objective (so the objective is
    bounded as ``mu_<name>``); accuracy's objective is the same number as its measure."""
    name = name.lower()
    return name != "accuracy" and (name in MEASURES or name in ALIASES or name == "cost")


def parse_constraint(text: str) -> Constraint:
    """``accuracy>=0.6``, ``latency<=2s``, ``latency<=500ms``, ``usd<=0.002``, ``cost<=$0.002``, ``tokens<=300`` or
    ``<objective>>=0.5`` as a :class:`Constraint` (one-line error naming the flag otherwise)."""
    where = f"--require {text}"
    found = _REQUIREMENT.fullmatch(text)
    if found is None:
        named = re.fullmatch(r"\s*(.*?)\s*(<=|>=).*", text)
        if named and named.group(1) and not re.fullmatch(r"[A-Za-z_$][\w.]*|\$", named.group(1)):
            raise CabenchError(f"{where}: '{named.group(1)}' is not a name a requirement reads (letters, digits, _ "
                               "and .); give the objective such a name in the config (name: ...)")
        raise CabenchError(f"{where}: expected NAME<=VALUE or NAME>=VALUE, e.g. accuracy>=0.6, latency<=2s, "
                           "usd<=0.002 or tokens<=300")
    name = ALIASES.get(found["name"].lower(), found["name"].lower())
    unit = ("$" if found["dollar"] else "") + found["unit"].lower()
    if found["dollar"] and found["unit"]:
        raise CabenchError(f"{where}: give the dollar sign or a unit, not both")
    if name == "cost":
        if unit not in COST_UNIT_MEASURE:
            raise CabenchError(f"{where}: cost needs its unit, e.g. cost<=$0.002 or cost<=300tokens (or bound usd "
                               "or tokens directly; mu_cost bounds a cost objective's normalised mean)")
        name = COST_UNIT_MEASURE[unit]
    if name in ("c", "mu_c"):  # arms.csv's mu_c: the cost the methods are charged, over its largest, no objective
        raise CabenchError(f"{where}: '{found['name']}' is the normalised cost the methods are charged, not an "
                           "objective; bound the cost per call in its unit, e.g. cost<=$0.002 or cost<=300tokens")
    value = float(found["value"])
    if not math.isfinite(value):
        raise CabenchError(f"{where}: expected a finite number")
    if found["name"].lower().startswith("mu_"):  # an objective's normalised mean, named as arms.csv names it
        rest = found["name"][3:]  # (a built-in's name in any case, as every requirement's; yours as written)
        name = "mu_" + (rest.lower() if rest.lower() in BUILT_IN_OBJECTIVES else rest)
        if unit:
            raise CabenchError(f"{where}: '{name}' is a normalised objective, which has no unit; drop '{unit}'")
        return Constraint(name, found["op"], value, text)
    if name not in MEASURES:
        if unit:
            raise CabenchError(f"{where}: '{name}' is bounded as its normalised objective, which has no unit; drop "
                               f"'{unit}' (units belong to {', '.join(MEASURES)})")
        own = name if name in BUILT_IN_OBJECTIVES else found["name"]  # (a built-in's name in any case)
        return Constraint(f"mu_{own}", found["op"], value, text)
    column, units = MEASURES[name]
    if unit not in units:
        allowed = ", ".join(u for u in units if u) or "none"
        raise CabenchError(f"{where}: '{unit}' is not a unit of {name} (units: {allowed})")
    if name == "accuracy" and not 0 <= value <= 1:  # a bound no configuration can meet, or every one meets
        percent = f" (for {value:g}% write {value / 100:g})" if 1 < value <= 100 else ""
        raise CabenchError(f"{where}: accuracy is a share between 0 and 1{percent}")
    if value < 0:
        raise CabenchError(f"{where}: {name} is never negative; bound it by a number >= 0")
    return Constraint(column, found["op"], value / units[unit], text, unit)


def parse_constraints(texts: list[str] | tuple[str, ...]) -> tuple[Constraint, ...]:
    """Every ``--require`` of the command line, parsed; two that no value can meet together (``accuracy>=0.9`` and
    ``accuracy<=0.5``) are refused in one line naming both, rather than answered "no configuration qualifies". An
    objective of the user's own (``toxicity``, ``mu_toxicity``) may name a column an experiment records as well as
    its normalised mean: its bounds are compared once an experiment resolves them (:func:`qualifying`)."""
    parsed = tuple(parse_constraint(t) for t in texts)
    _refuse_contradictions([(_bounded(c.column), c) for c in parsed  # the rest once an experiment resolves them
                            if not c.column.startswith("mu_") or c.column[3:] in BUILT_IN_OBJECTIVES])
    return parsed


#: The built-in objectives' names: no column of the user's own has them (an own column is recorded under a name of
#: its own), so a bound on one is known before any experiment is read.
BUILT_IN_OBJECTIVES = tuple(BUILTIN)


def _written_normalised(c: Constraint) -> bool:
    """Whether ``c`` names an objective's normalised mean as ``arms.csv`` does (``mu_efficiency>=0.5``)."""
    return c.text.strip().lower().startswith("mu_")


def _bounded(column: str) -> str:
    """What a bound on ``column`` of ``arms.csv`` bounds: accuracy per call is its objective's mean (mu_accuracy), as
    answered."""
    return "mu_accuracy" if column in ("accuracy", "mu_accuracy") else column


def _refuse_contradictions(bounds: list[tuple[str, Constraint]], own: Collection[str] = ()) -> None:
    """Refuse a lower and an upper bound on the same quantity (``bounds``: what each bounds, :func:`_bounded`) that
    no value meets together, beyond the slack an answer allows (quantised rewards: accuracy, objectives): refused
    at once for measures and built-in objectives; for an objective of one's own, in each experiment where they
    resolve to one mean."""
    for bounded, low in ((b, c) for b, c in bounds if c.op == ">="):
        room = slack(low.value, quantised=bounded.startswith("mu_"))
        for high in (c for b, c in bounds if c.op == "<=" and b == bounded):
            if low.value - room > high.value + slack(high.value, quantised=bounded.startswith("mu_")):
                raise CabenchError(f"--require {low.text} and --require {high.text} contradict each other: no "
                                   f"configuration has {low.describe(own)} and {high.describe(own)}; drop or change "
                                   "one of them")


#: Measures a user's column objective may share a name with (the built-in objectives are documented apart).
_SHARED = {"tokens", "usd", "completion_tokens"}


def _values(arms: pd.DataFrame, c: Constraint) -> tuple[str, np.ndarray]:
    """The column of ``arms.csv`` and the per-arm means a requirement bounds (accuracy falls back on its objective,
    the same number up to the rewards' rounding); a name that is both a measure per call and an objective of the
    experiment is refused as ambiguous."""
    if c.column in _SHARED and f"mu_{c.column}" in arms and not c.unit:
        raise CabenchError(f"--require {c.text}: '{c.column}' is both {c.column} per call and an objective of the "
                           f"experiment; write mu_{c.column}{c.op}... for the objective's normalised mean, or give the "
                           f"unit ({c.column}{c.op}{c.value:g}{c.column}) for the "
                           "mean per call")
    column = c.column if c.column in arms or c.column != "accuracy" else "mu_accuracy"
    raw = c.column.removeprefix("mu_")
    if not _written_normalised(c) and raw in measure_columns(arms):
        column = raw  # a column of the user's own an objective reads (judge), bounded in its own scale; so is an
        # objective named as its column ({column: toxicity}), as the built-in latency is: mu_toxicity its objective
    if column not in arms:
        measures = {name: name for name, (col, _) in MEASURES.items() if col in arms}
        measures |= {m: m for m in measure_columns(arms) if m not in {col for col, _ in MEASURES.values()}}
        objectives = {col.removeprefix("mu_"): col if _is_measure_name(col.removeprefix("mu_")) else
                      col.removeprefix("mu_") for col in objective_columns(arms)}  # as each is bounded
        have = [*measures.values(), *objectives.values()]
        pool = objectives if _written_normalised(c) else {**objectives, **measures}
        hint = did_you_mean(c.column.removeprefix("mu_"), pool, shown=pool.get)  # by name, as written
        if _written_normalised(c):  # mu_latency: no such objective, though latency is a measure
            measured = (f"; {raw} is a measure per call here: bound it without 'mu_' ({raw}{c.op}VALUE, in its "
                        "unit)") if raw in measures else ""
            raise CabenchError(f"--require {c.text}: the experiment has no objective {raw} (its objectives are "
                               f"{', '.join(objectives)}){measured or hint}")
        raise CabenchError(f"--require {c.text}: the experiment's configurations have no {raw} (they have "
                           f"{', '.join(dict.fromkeys(have))}){hint}")
    if column.startswith("mu_") and not 0 <= c.value <= 1:  # rewards are clipped to [0, 1] (SPEC §1.3): every
        # configuration, or none, would meet it
        raise OutOfRange(f"--require {c.text}: a normalised objective lies between 0 and 1; bound it by a number "
                           "in [0, 1]")
    return column, arms[column].to_numpy(dtype=float)


def qualifying(arms: pd.DataFrame, constraints: tuple[Constraint, ...], where: str = "arms.csv"
               ) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks over the rows of ``arms.csv``: the configurations that satisfy every requirement, and those
    whose qualifying could go either way within their 95% intervals (where recorded: :func:`_straddles`) — a
    qualifying configuration whose interval straddles a bound, or one failing only bounds its intervals straddle
    (one failing a bound its whole interval fails is not borderline, whatever its other intervals).

    A bounded mean that is empty or not finite (a hand-edited ``arms.csv``; cabench writes every mean it records)
    is refused in one line naming ``where``, the line and the configuration: the configuration would otherwise
    silently fail every requirement on it."""
    ok = np.ones(len(arms), dtype=bool)
    may_qualify = np.ones(len(arms), dtype=bool)
    may_fail = np.zeros(len(arms), dtype=bool)
    resolved = [(c, *_values(arms, c)) for c in constraints]
    _refuse_contradictions([(_bounded(column), c) for c, column, _ in resolved], measure_columns(arms))
    for c, column, values in resolved:
        unknown = np.flatnonzero(~np.isfinite(values))
        if len(unknown):
            row = int(unknown[0])
            shown = "empty" if np.isnan(values[row]) else f"{values[row]:g} is not finite"
            raise DamagedMeasure(f"{where}: line {row + 2}, column '{column}': {shown}, so "
                               f"--require {c.text} cannot be judged for {arms['config_id'].iloc[row]}; run the "
                               "experiment again")
        # accuracy too: an arms.csv written before cabench kept the logs' scores unrounded gives their quantised mean
        quantised = column.startswith("mu_") or column == "accuracy"
        holds, straddles = c.holds(values, quantised), _straddles(arms, column, values, c.value, quantised)
        ok &= holds
        may_qualify &= holds | straddles
        may_fail |= ~holds | straddles
    return ok, may_qualify & may_fail


def _straddles(arms: pd.DataFrame, column: str, values: np.ndarray, bound: float, quantised: bool = False
               ) -> np.ndarray:
    """Whether each configuration's 95% interval of ``column`` reaches across ``bound``, further than a rounding
    on each side (one of no width, every call alike, never does): its recorded ends
    (``<column>_low``, ``<column>_high``), or ``values`` ± the half-width ``<column>_ci`` in a folder written
    before cabench recorded ends; no interval, no straddling."""
    if f"{column}_low" in arms and f"{column}_high" in arms:
        low, high = arms[f"{column}_low"].to_numpy(dtype=float), arms[f"{column}_high"].to_numpy(dtype=float)
    else:
        half = arms[f"{column}_ci"].to_numpy(dtype=float) if f"{column}_ci" in arms else np.zeros(len(arms))
        low, high = values - half, values + half
    room = slack(bound, quantised)  # as a mean within it meets the bound: an interval that reaches no further
    # than a rounding past the bound (a constant latency's 0.9000000000000002 ± 2.5e-17) does not straddle it
    return (np.nan_to_num(low, nan=np.inf) < bound - room) & (bound + room < np.nan_to_num(high, nan=-np.inf))


@dataclass(frozen=True)
class Found:
    """How often one method, at one budget (and cost mode), found the constrained answer."""

    method: str
    rho: float
    budget: float
    repetitions: int
    share: float  # of repetitions whose answer restricted to the qualifying configurations is the true one
    modal: tuple[str, ...]  # the most frequent restricted answer
    modal_share: float
    cost_mode: str | None = None
    modal_tied: int = 0  # how many other restricted answers came back as often as the most frequent (as answers.py)


@dataclass(frozen=True)
class ConstrainedAnswer:
    """The answer of one experiment under requirements (see the module docstring)."""

    constraints: tuple[str, ...]  # as described
    qualifying: tuple[str, ...]
    borderline: tuple[str, ...]
    answer: tuple[str, ...]  # online: the qualifying ones of largest nu (ties: any); identification: P* ∩ F
    pareto_within: tuple[str, ...]  # the Pareto set of the qualifying configurations
    found: tuple[Found, ...]
    undecided: str | None = None  # online: why no qualifying configuration is the answer (every nu alike)
    true_within: tuple[str, ...] = ()  # P* ∩ F: the qualifying configurations of the true Pareto set
    # online: every qualifying configuration is the answer (one qualifies, or all share the largest nu), so every
    # repetition's most-pulled qualifying configuration is it and the shares do not compare the methods
    every_one: bool = False

    @property
    def only_within(self) -> tuple[str, ...]:
        """Configurations Pareto among the qualifying ones only because what dominates them fails a requirement."""
        return tuple(n for n in self.pareto_within if n not in self.true_within)

    def as_dict(self) -> dict[str, Any]:
        return {"constraints": list(self.constraints), "qualifying": list(self.qualifying),
                "borderline": list(self.borderline), "answer": list(self.answer),
                "pareto_within": list(self.pareto_within), "only_within": list(self.only_within),
                "every_qualifying_is_the_answer": self.every_one,
                "found": [{**vars(f), "modal": list(f.modal)} for f in self.found], "undecided": self.undecided}

    def table(self) -> pd.DataFrame:
        """One row per method, budget (and cost mode): the share of repetitions that found the answer."""
        return pd.DataFrame([{**vars(f), "modal": ", ".join(f.modal)} for f in self.found])


def _restricted_answers(e: Experiment, allowed: set[str]) -> pd.DataFrame:
    """Per run (method, [cost mode,] rho, rep): its answer restricted to the ``allowed`` configurations — online the
    most-pulled of them (all of those that tie for the most pulls, in arm order: a tie, such as qualifying
    configurations pulled only by the initialisation, is no preference for any one), identification the returned ones
    — as a tuple."""
    keys = ["method", "cost_mode", "rho", "rep"] if e.setting == "psi" else ["method", "rho", "rep"]
    runs = e.runs.set_index(keys)
    if e.setting == "psi":  # the returned sets (cabench.returned), restricted to the allowed configurations
        returned = e.returned
        kept = returned.sets & np.isin(np.asarray(returned.names, dtype=object), list(allowed))
        by_set = [tuple(returned.names[i] for i in np.flatnonzero(row)) for row in kept]
        return pd.DataFrame({"answer": [by_set[s] for s in returned.set_of], "budget": runs["budget"]},
                            index=runs.index).reset_index()
    sel = e.selections[e.selections["config_id"].astype(str).isin(allowed)]
    order = {name: i for i, name in enumerate(e.arms["config_id"].astype(str))}
    top = sel[sel["pulls"] == sel.groupby(keys, sort=False)["pulls"].transform("max")]
    ranked = top.assign(order=top["config_id"].astype(str).map(order)).sort_values("order", kind="stable")
    answers = ranked.groupby(keys, sort=False)["config_id"].agg(lambda names: tuple(names.astype(str)))
    return pd.DataFrame({"answer": answers.reindex(runs.index).map(lambda a: a if isinstance(a, tuple) else ()),
                         "budget": runs["budget"]}).reset_index()


def _is(restricted: tuple[str, ...], answer: tuple[str, ...], setting: str) -> bool:
    """Whether a run's restricted answer is ``answer``: identification, the same set; online, most-pulled
    configurations all among the answer's (several where they share the largest ν: any of them is it)."""
    if setting == "psi":
        return restricted == answer
    return bool(restricted) and set(restricted) <= set(answer)


def answers_under(res: ResultSet, constraints: tuple[Constraint, ...]) -> dict[str, ConstrainedAnswer | str]:
    """Each experiment's answer under ``constraints`` (:func:`constrained_answer`) by label, or why it has none (a
    requirement on a measure its configurations lack, or bounds that contradict each other there); the error itself
    when no experiment can take them all."""
    out: dict[str, ConstrainedAnswer | str] = {}
    for e in res.experiments if constraints else []:
        try:
            out[e.label] = constrained_answer(e, constraints)
        except (DamagedMeasure, OutOfRange):  # wrong whichever experiment says it: said as such, not "not here"
            raise
        except CabenchError as exc:  # a measure it lacks; or bounds that contradict each other here (an own column)
            out[e.label] = str(exc)
    if out and all(isinstance(a, str) for a in out.values()):
        label, why = next(iter(out.items()))
        raise CabenchError(str(why) if len(out) == 1 else f"{why} (experiment {label}; none of the {len(out)} "
                           "experiments can take every requirement)")
    return out


def constrained_answer(e: Experiment, constraints: tuple[Constraint, ...]) -> ConstrainedAnswer:
    """The configuration (online) or Pareto set (identification) of ``e`` that satisfies ``constraints``, from its
    ``arms.csv`` (the evaluation split's means), and how often each method's answer restricted to the qualifying
    configurations equals it, from ``selections.csv`` (nothing, when no configuration qualifies)."""
    arms = e.arms
    names = arms["config_id"].astype(str).to_numpy()
    ok, borderline = qualifying(arms, constraints, str(e.folder / "arms.csv"))
    mu = arms[objective_columns(arms)].to_numpy(dtype=float)
    within = np.zeros(len(arms), dtype=bool)
    if ok.any():
        within[ok] = pareto_mask(mu[ok])
    undecided = None
    if e.setting == "online":
        answer: tuple[str, ...] = tuple(map(str, names[best_nu(arms, ok)]))  # configurations tied at it: any of them
        if len(answer) > 1 and best_nu(arms).all():  # every nu alike: no pull has any regret, nothing to choose
            undecided = (f"no decision among them: every configuration has the same ν = {arms['nu'].iloc[0]:.4g}, so "
                         "which qualifying configuration a method pulls most says nothing")
            answer = ()
        elif len(answer) > 1 and not arms["nu"].to_numpy(dtype=float)[ok].any():  # every qualifying one worthless
            undecided = ("no decision among them: every qualifying configuration has ν = 0 (no hypervolume: an "
                         "objective of each is 0), so which of them a method pulls most says nothing")
            answer = ()
    true_within = tuple(names[ok & (arms["pareto"].to_numpy() == 1)])
    if e.setting == "psi":
        answer = true_within
    keys = ["method", "cost_mode", "rho"] if e.setting == "psi" else ["method", "rho"]
    found = []  # none when nothing qualifies: an empty answer would equal every run's, found by none of them
    runs = (_restricted_answers(e, set(names[ok])) if ok.any() and not undecided
            else pd.DataFrame(columns=[*keys, "answer", "budget"]))
    for values, g in runs.groupby(keys, sort=False):
        labels = dict(zip(keys, values))
        counts = g["answer"].value_counts()
        modal = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0]
        tied = int((counts == modal[1]).sum()) - 1
        share = float(g["answer"].map(lambda a: _is(a, answer, e.setting)).mean())
        found.append(Found(method=str(labels["method"]), rho=float(labels["rho"]), budget=float(g["budget"].iloc[0]),
                           repetitions=len(g), share=share, modal=modal[0], modal_share=modal[1] / len(g),
                           cost_mode=labels.get("cost_mode"), modal_tied=tied))
    own = measure_columns(arms)
    return ConstrainedAnswer(tuple(c.describe(own) for c in constraints), tuple(names[ok]), tuple(names[borderline]),
                             answer, tuple(names[within]), tuple(found), undecided, true_within,
                             e.setting == "online" and bool(answer) and len(answer) == int(ok.sum()))
