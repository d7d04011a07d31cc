"""The user's terms: which objectives, which cost unit and which prices (beyond the paper's accuracy x efficiency in
tokens).

An experiment or live config declares

* ``objectives:`` 2 to 4 of ``accuracy`` (larger is better), ``efficiency`` (the paper's normalised inverse
  latency, App. A), ``latency`` (seconds, smaller is better), ``cost`` (per call, in the cost unit, smaller is
  better), or ``{column: NAME, direction: max|min, normalise: profiling | [lo, hi], name: ...}``;
* ``cost:`` ``tokens`` (the paper's), ``completion_tokens`` or ``usd``;
* ``prices:`` ``{<model or pattern>: {input: $/1M tokens, output: $/1M tokens}}``, applied to the logs'
  ``prompt_tokens`` and ``completion_tokens``, or ``{<model or pattern>: {tokens: $/1M tokens}}``, one blended
  rate on the total (else ``usd`` comes from the logs' ``cost_usd``).

The default, :data:`PAPER_TERMS`, is the paper's pair in tokens. This module parses and checks the declaration; the
profiling split turns it into rewards and costs in :mod:`cabench.data.normalisation`.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from cabench.errors import CabenchError, did_you_mean
from cabench.units import COST_UNITS, LABELS, unit_hint

#: Log columns a cost unit reads when no price table is given.
COST_COLUMNS = {"tokens": "tokens", "completion_tokens": "completion_tokens", "usd": "cost_usd"}
#: The built-in objectives: log column, direction, how the profiling split normalises them.
BUILTIN: dict[str, tuple[str, str, str | tuple[float, float]]] = {
    "accuracy": ("correct", "max", (0.0, 1.0)),
    "efficiency": ("latency_s", "max", "inverse"),
    "latency": ("latency_s", "min", "profiling"),
    "cost": ("cost", "min", "profiling"),
}
#: The column names under which a dataset holds each call's cost in the declared unit, and its dollars where known.
COST_COLUMN = "cost"
USD_COLUMN = "usd"
OBJECTIVE_KEYS = {"name", "column", "direction", "normalise"}
#: The objective name whose column ``mu_<name>`` would be ``arms.csv``'s mean normalised cost ``mu_c``.
RESERVED_NAME = "c"
MIN_OBJECTIVES, MAX_OBJECTIVES = 2, 4


@dataclass(frozen=True)
class ObjectiveSpec:
    """One declared objective: its name, the log column it reads, its direction and its normalisation.

    ``normalise`` is ``(lo, hi)`` (fixed bounds), ``"profiling"`` (the 5th and 95th percentiles of the profiling
    values, as the paper normalises latency) or ``"inverse"`` (the paper's efficiency: the same percentiles,
    linear in the reciprocal, App. A).
    """

    name: str
    column: str
    direction: str = "max"
    normalise: str | tuple[float, float] = "profiling"

    def describe(self) -> Any:
        """Plain data for configs and cache keys: a built-in by its name, else the mapping."""
        if BUILTIN.get(self.name) == (self.column, self.direction, self.normalise):
            return self.name
        normalise = self.normalise if isinstance(self.normalise, str) else list(self.normalise)
        return {"name": self.name, "column": self.column, "direction": self.direction, "normalise": normalise}


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens of the models ``pattern`` matches: input (prompt) and output (completion) rates,
    or one blended rate on the total ``tokens`` (for logs that only count the total)."""

    pattern: str
    input: float | None = None
    output: float | None = None
    tokens: float | None = None

    def describe(self) -> dict[str, float]:
        return {k: v for k, v in (("input", self.input), ("output", self.output), ("tokens", self.tokens))
                if v is not None}


@dataclass(frozen=True)
class Terms:
    """Objectives, cost unit and price table of an experiment (the paper's by default)."""

    objectives: tuple[ObjectiveSpec, ...]
    cost: str = "tokens"
    prices: tuple[Price, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.objectives)

    @property
    def is_paper(self) -> bool:
        return self == PAPER_TERMS

    def describe(self) -> dict[str, Any]:
        """Plain data for ``config.yaml`` and cache keys."""
        out: dict[str, Any] = {"objectives": [o.describe() for o in self.objectives], "cost": self.cost}
        if self.prices:
            out["prices"] = {p.pattern: p.describe() for p in self.prices}
        return out

    def price_note(self) -> str | None:
        """What a run says when a price table is given but the cost is another unit: the dollars it fills in are
        reported, not charged (None otherwise)."""
        if not self.prices or self.cost == "usd":
            return None
        unit = LABELS[self.cost]
        return (f"prices given: dollars are reported beside {unit}; the budget is charged in {unit} (cost: "
                f"{self.cost}; cost: usd charges dollars)")

    def price(self, model: str) -> Price | None:
        """The price of ``model``: its own entry, else the first pattern that matches it, else None."""
        exact = next((p for p in self.prices if p.pattern == model), None)
        return exact or next((p for p in self.prices if fnmatch.fnmatchcase(model, p.pattern)), None)

    def shadowed(self, models: Any) -> tuple[str, str] | None:
        """The key and the why of a pattern of the price table that a pattern above it covers (it matches the
        pattern's own text: ``*mini*`` above ``gpt-4o-mini*``) and that so prices none of ``models`` though it
        matches some: its writer meant its rate for them. None otherwise: a default below others (``*`` last), or
        a pattern that prices none of these models only because another, not covering it, comes first, is kept."""
        names = sorted({str(m) for m in models} - {p.pattern for p in self.prices})  # (own entries win anyway)
        taken = {m: self.price(m) for m in names}
        for pattern in self.prices:
            matched = [m for m in names if fnmatch.fnmatchcase(m, pattern.pattern)]
            if not matched or any(taken[m] is pattern for m in matched):
                continue
            other = taken[matched[0]]
            assert other is not None
            if fnmatch.fnmatchcase(pattern.pattern, other.pattern):
                return (f"prices.{pattern.pattern}", f"prices none of the models, though it matches {matched[0]!r}: "
                        f"the pattern '{other.pattern}' above it matches that first (a model's own entry, else the "
                        f"first pattern matching it); list '{pattern.pattern}' first")
        return None

    def unpriced(self, models: Any) -> str:
        """Why the price table cannot price one of ``models`` (the first it lacks), or nothing."""
        model = next((str(m) for m in models if self.price(str(m)) is None), None)
        if model is None:
            return ""
        folded = next((p.pattern for p in self.prices if fnmatch.fnmatch(model.casefold(), p.pattern.casefold())),
                      None)  # model names match as written: an entry off by case only is named
        near = f"; the entry '{folded}' differs from it in case only: write it as the logs do" if folded else ""
        return f"no price for model '{model}'; add it (or a pattern such as '{model.split('-')[0]}*' matching it){near}"


#: Log columns that measure what a call takes (time, tokens, money), not how good its answer is.
SPENT_COLUMNS = frozenset({"latency_s", COST_COLUMN, USD_COLUMN, "tokens", "prompt_tokens", "completion_tokens",
                           "cost_usd"})


def quality_not_first(terms: Terms, methods: list[str]) -> str | None:
    """Why ``methods`` — methods whose index reads the first objective alone as the accuracy (Accuracy-Cost-UCB's
    ``U^(acc) / c_lcb``, SPEC §5; :func:`cabench.registry.quality_first`) — cannot run on ``terms``, else None: the
    first objective must measure the answers' quality (the accuracy, or a score column a dataset declares), not what
    a call takes (:data:`SPENT_COLUMNS`)."""
    first = terms.objectives[0]
    if first.column not in SPENT_COLUMNS or not methods:
        return None
    return (f"{methods[0]} divides the first objective's optimistic mean by the cost, as the accuracy per cost, "
            f"but the first objective is '{first.name}' (column {first.column}, what a call takes, not how good it "
            f"is); declare accuracy (or a quality score) first (objectives: [accuracy, ...]) or leave {methods[0]} out")


def builtin(name: str) -> ObjectiveSpec:
    column, direction, normalise = BUILTIN[name]
    return ObjectiveSpec(name, column, direction, normalise)


PAPER_TERMS = Terms(objectives=(builtin("accuracy"), builtin("efficiency")))


def _bounds(value: Any, fail: Callable[[str, str], CabenchError], key: str) -> str | tuple[float, float]:
    if value == "profiling":
        return "profiling"
    try:
        return _finite_bounds(value, fail, key)
    except OverflowError:  # an integer beyond a float's range (400 digits)
        raise fail(key, f"expected [lo, hi] of numbers within a float's range, got {value!r}") from None


def _finite_bounds(value: Any, fail: Callable[[str, str], CabenchError], key: str) -> tuple[float, float]:
    if (isinstance(value, list) and len(value) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
            and value[0] < value[1]):
        if not math.isfinite(float(value[1]) - float(value[0])):  # every value would normalise to 0
            raise fail(key, f"expected [lo, hi] whose width hi - lo is a finite number, got {value!r}")
        return float(value[0]), float(value[1])
    raise fail(key, f"expected 'profiling' or [lo, hi] with lo < hi, got {value!r}")


def _refuse_built_in_name(name: str, column: str, direction: Any, key: str,
                          fail: Callable[[str, str], CabenchError], given_as_built: bool = False) -> None:
    """Refuse a column objective named as a built-in one (in any case) that reads another column or the other way:
    every answer, figure and requirement would call it by the built-in's name (``{column: toxicity, name:
    accuracy}``; ``{column: latency_s, name: efficiency, direction: max}``, rewarding slowness); requirements read
    names in any case, so ``Accuracy`` is the built-in's too."""
    built_column, built_direction, built_normalise = BUILTIN[name.lower()]
    if built_normalise == "inverse" and not given_as_built:  # efficiency: the reciprocal, which no column declares
        raise fail(key, f"'{name}' is the built-in objective on the reciprocal of the logs' {built_column} (larger is "
                        "better: the faster); declare it as efficiency, or a column objective under a name of its own")
    if column != built_column or direction not in (None, built_direction):
        if built_normalise == "inverse":  # efficiency the other way round
            raise fail(key, f"'{name}' is larger-is-better (the reciprocal of the logs' {built_column}: the faster); "
                            "declare latency for smaller-is-better")
        way = {"max": "larger is better", "min": "smaller is better"}
        said = f" ({way[direction]})" if direction in way else ""
        raise fail(key, f"'{name}' is the built-in objective on the logs' {built_column} ({way[built_direction]}), "
                        f"and every answer, figure and requirement would call column '{column}'{said} so; give it a "
                        "name of its own (name: ...)")
    if name != name.lower():
        raise fail(key, f"'{name}' reads as the built-in objective {name.lower()} in requirements; write it "
                        f"'{name.lower()}'")


def _objective(item: Any, key: str, fail: Callable[[str, str], CabenchError]) -> ObjectiveSpec:
    if isinstance(item, str):
        if item not in BUILTIN:
            hint = did_you_mean(item, BUILTIN)
            raise fail(key, f"'{item}' is not one of {', '.join(BUILTIN)}{hint}; a column of the logs is declared "
                            "as {column: NAME, direction: max|min}")
        return builtin(item)
    if not isinstance(item, dict):
        raise fail(key, f"expected an objective name or a mapping, got {item!r}")
    unknown = sorted(str(k) for k in item if k not in OBJECTIVE_KEYS)
    if unknown:
        raise fail(f"{key}.{unknown[0]}", f"unknown key; allowed keys: {', '.join(sorted(OBJECTIVE_KEYS))}")
    name = item.get("name", item.get("column"))
    if isinstance(name, str) and name in BUILTIN and "column" not in item:  # a built-in with its own bounds
        base = builtin(name)
        if base.normalise == "inverse" and "normalise" in item:
            raise fail(f"{key}.normalise", "efficiency is normalised by the profiling latencies (App. A); declare "
                                           "latency to give bounds in seconds")
        column = base.column
        direction: str | None = str(item.get("direction", base.direction))
        if direction in ("max", "min"):  # (another word is refused below)
            _refuse_built_in_name(name, column, direction, f"{key}.direction", fail, given_as_built=True)
        normalise = _bounds(item["normalise"], fail, f"{key}.normalise") if "normalise" in item else base.normalise
    else:
        given = item.get("column")
        if not isinstance(given, str) or not given.strip():
            raise fail(f"{key}.column", f"expected the name of a log column, got {given!r}")
        column = given
        direction = item.get("direction")
        if isinstance(name, str) and name.lower() in BUILTIN:
            _refuse_built_in_name(name, column, direction, f"{key}.name", fail)
        normalise = _bounds(item.get("normalise", "profiling"), fail, f"{key}.normalise")
    if direction is not None and direction not in ("max", "min"):
        raise fail(f"{key}.direction", f"expected max (larger is better) or min, got {direction!r}")
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        raise fail(f"{key}.name", f"expected a printable name, got {name!r}")
    if name == RESERVED_NAME:
        raise fail(f"{key}.name", f"'{name}' is taken: arms.csv's mu_{name} is the mean normalised cost mu^c; give "
                                  "the objective another name (name: ...)")
    if direction is None:  # a column's own: no default (latency_s read as larger-is-better made the slowest best)
        raise fail(f"{key}.direction", "missing; a column objective says whether larger is better (direction: max) "
                                       "or smaller (direction: min)")
    return ObjectiveSpec(name, column, direction, normalise)


def _prices(raw: Any, fail: Callable[[str, str], CabenchError]) -> tuple[Price, ...]:
    if not isinstance(raw, dict) or not raw:
        raise fail("prices", "expected a mapping {model or pattern: {input: $/1M tokens, output: $/1M tokens}}")
    out: list[Price] = []
    for pattern, entry in raw.items():
        where = f"prices.{pattern}"
        if not isinstance(pattern, str) or not pattern.strip():
            raise fail("prices", f"expected model names or patterns as keys, got {pattern!r}")
        if pattern in ("input", "output", "tokens") and not isinstance(entry, dict):  # rates without a model
            raise fail(where, f"a price table maps model names or patterns to their rates: for every model, "
                              f"prices: {{'*': {{{pattern}: {entry}{', ...' if pattern != 'tokens' else ''}}}}}")
        if not isinstance(entry, dict) or set(entry) not in ({"input", "output"}, {"tokens"}):
            raise fail(where, "expected {input: $/1M tokens, output: $/1M tokens}, or {tokens: $/1M tokens} (one "
                              "blended rate on the total)")
        values = {}
        for side, v in entry.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or v > 1e6:
                raise fail(f"{where}.{side}", f"expected dollars per million tokens in [0, 1e6], got {v!r}")
            values[side] = float(v)
        if (covers := _covering(pattern, [p.pattern for p in out])) is not None:
            raise fail(where, f"never applies: the pattern '{covers}' above it matches every model it matches (a "
                              f"model's own entry, else the first pattern matching it); list '{pattern}' first")
        out.append(Price(pattern, **values))
    return tuple(out)


_WILD = "*?["


def _covering(pattern: str, earlier: list[str]) -> str | None:
    """The first of the ``earlier`` patterns that matches every model name ``pattern`` matches, so that ``pattern``
    could price no model (an exact name never: its own entry wins): one of the form ``PREFIX*`` whose prefix begins
    ``pattern``'s text before its first wildcard ('*' before anything, 'gpt-*' before 'gpt-4o*')."""
    if "*" not in pattern and "?" not in pattern:  # a name holding '[' alone is a model's own entry ('llama[8b]')
        return None
    cut = min(pattern.index(c) for c in _WILD if c in pattern)
    for other in earlier:
        prefix = other[:-1]
        if other.endswith("*") and not any(c in prefix for c in _WILD) and pattern[:cut].startswith(prefix):
            return other
    return None


TERM_KEYS = ("objectives", "cost", "prices")


def declared_keys(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The ``objectives``, ``cost`` and ``prices`` a config or ``dataset.yaml`` mapping gives (keys left empty
    aside)."""
    return {key: raw[key] for key in TERM_KEYS if raw.get(key) is not None}


def declares_terms(raw: Mapping[str, Any]) -> bool:
    """Whether a config or ``dataset.yaml`` mapping declares objectives, a cost unit or prices."""
    return any(raw.get(key) is not None for key in TERM_KEYS)


def parse_terms(raw: Mapping[str, Any], fail: Callable[[str, str], CabenchError]) -> Terms:
    """The terms a config mapping declares (keys ``objectives``, ``cost``, ``prices``); ``fail(key, message)``
    makes the one-line error."""
    objectives = PAPER_TERMS.objectives
    if raw.get("objectives") is not None:
        items = raw["objectives"]
        if not isinstance(items, list) or not MIN_OBJECTIVES <= len(items) <= MAX_OBJECTIVES:
            raise fail("objectives", f"expected a list of {MIN_OBJECTIVES} to {MAX_OBJECTIVES} objectives, got "
                                     f"{items!r}")
        objectives = tuple(_objective(item, f"objectives[{i}]", fail) for i, item in enumerate(items))
        names = [o.name for o in objectives]
        twice = next((n for n in names if names.count(n) > 1), None)
        if twice is not None:
            raise fail("objectives", f"'{twice}' is declared twice; give each objective once (a name: key tells "
                                     "two objectives of one column apart)")
    cost = raw.get("cost", "tokens")
    if cost not in COST_UNITS:
        hint = unit_hint(str(cost)) or did_you_mean(str(cost), COST_UNITS)
        raise fail("cost", f"'{cost}' is not one of {', '.join(COST_UNITS)}{hint}")
    prices = _prices(raw["prices"], fail) if raw.get("prices") is not None else ()
    return Terms(objectives, str(cost), prices)


def usd_per_call(frame: Any, terms: Terms, source: str) -> np.ndarray | None:
    """Each row's dollars: from the price table (prompt and completion tokens of the row's model), else the logs'
    ``cost_usd``, else None."""
    if terms.prices:
        models = frame["model"].astype(str)
        rates = {}
        if missing := terms.unpriced(models.unique()):
            raise CabenchError(f"{source}: prices: {missing} to prices")
        if shadowed := terms.shadowed(models.unique()):
            raise CabenchError(f"{source}: {shadowed[0]}: {shadowed[1]}")
        for model in models.unique():
            price = terms.price(model)
            assert price is not None
            needs = ("tokens",) if price.tokens is not None else ("prompt_tokens", "completion_tokens")
            lacking = [c for c in needs if c not in frame]
            if lacking:
                if price.tokens is None:  # input and output rates: one rate on the total needs the total only
                    other = ", or give one blended rate {tokens: $/1M} on the total"
                else:  # a blended rate already: the logs' own dollars, where they have them
                    other = "; the logs' cost_usd prices them without a table (leave prices out)" if \
                        "cost_usd" in frame else ""
                raise CabenchError(f"{source}: prices.{price.pattern} needs the column '{lacking[0]}', which the logs "
                                   f"lack (a table's import maps it with --mapping; a tool's logs have it where they "
                                   f"record each call's){other}")
            rates[model] = price
        usd = np.zeros(len(frame))
        for side, column in (("input", "prompt_tokens"), ("output", "completion_tokens"), ("tokens", "tokens")):
            rate = models.map({m: getattr(p, side) or 0.0 for m, p in rates.items()}).to_numpy(dtype=float)
            if rate.any():
                usd += frame[column].to_numpy(dtype=float) * rate
        return usd / 1e6
    if "cost_usd" in frame:
        return frame["cost_usd"].to_numpy(dtype=float)
    return None


def cost_per_call(frame: Any, terms: Terms, source: str) -> np.ndarray:
    """Each row's cost in the declared unit (``terms.cost``)."""
    if terms.cost == "usd":
        usd = usd_per_call(frame, terms, source)
        if usd is None:
            raise CabenchError(f"{source}: cost: usd needs a cost_usd column in the logs or a prices table in the "
                               "config")
        return usd
    column = COST_COLUMNS[terms.cost]
    if column not in frame:
        other = "cost: usd (with cost_usd or prices)" if "cost_usd" in frame or terms.prices else "another cost"
        raise CabenchError(f"{source}: cost: {terms.cost} needs the column '{column}', which the logs lack; "
                           f"declare {other}, or map the column at import")
    return frame[column].to_numpy(dtype=float)
