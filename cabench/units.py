"""Cost units and the result columns named after them.

Budgets and spends are in the declared cost unit (:mod:`cabench.data.terms`): tokens (the paper's),
completion tokens or dollars. In memory, tables name them ``budget`` and ``spend`` (and an online trajectory's grid
``spend``); result files name them after the unit (``budget_tokens``, ``spend_usd``, a trajectory grid ``tokens``
or ``usd``), so a file says what its numbers are and the paper's files keep their columns.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

COST_UNITS = ("tokens", "completion_tokens", "usd")
#: How a unit is named in table headers and sentences.
LABELS = {"tokens": "tokens", "completion_tokens": "completion tokens", "usd": "USD"}
#: Words for a cost unit (lower case, a final s dropped) that are not its name: ``budget: {dollars: 5}``.
UNIT_WORDS = {"dollar": "usd", "$": "usd", "us$": "usd", "token": "tokens", "completion_token": "completion_tokens",
              "output_token": "completion_tokens", "completion": "completion_tokens"}


def unit_meant(word: str) -> str | None:
    """The cost unit ``word`` names in other words (``dollars``, ``Token``), if any; None for a unit's own name
    and for a word that names none."""
    return None if word in COST_UNITS else UNIT_WORDS.get(word.strip().lower().rstrip("s"))


def unit_hint(word: str) -> str:
    """``; did you mean 'usd'?`` for a word that names a cost unit otherwise (:func:`unit_meant`), else nothing."""
    meant = unit_meant(word)
    return f"; did you mean '{meant}'?" if meant else ""


class Significant(str):
    """A format string for a mean said beside its interval: three significant digits with their trailing zeros
    (``4.00 ± 0.183 s``, where ``{:.3g}`` wrote ``4 ± 0.183 s``), and no trailing point (``100``, not ``100.``); a
    half-width is written :attr:`bare` (``± 0.0015``, not ``± 0.00150``)."""

    bare = "{:.3g}"

    def __new__(cls) -> Significant:
        return super().__new__(cls, "{:#.3g}")

    def format(self, *args: object, **kwargs: object) -> str:
        text = super().format(*args, **kwargs)
        return text[:-1] if text.endswith(".") else text


class TokenCount(str):
    """A format string for token counts per call, ``{:,.0f}`` say, whose :meth:`at` keeps three significant digits
    for counts below 10: counts logged in thousands of tokens (0.11-0.31 per call) showed as 0."""

    def at(self, value: float) -> str:
        """The format for ``value`` and the numbers said with it (its interval): this one, or :class:`Significant`
        below 10."""
        return Significant() if math.isfinite(value) and abs(value) < 10 else str(self)


def fixed(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits in fixed notation, as a price reads (``0.0000400``, not
    ``4e-05``, so that a column of them compares at a glance); whole numbers above, and below 10^-8 (no price: a
    budget of ``$1e-12`` given to be refused) in scientific notation."""
    if not math.isfinite(value) or value == 0 or abs(value) < 1e-8:
        return f"{value:.{digits}g}"
    rounded = float(f"{value:.{digits}g}")  # its exponent after rounding: 0.0009996 is 0.00100, not 0.001000
    return f"{value:.{max(0, digits - 1 - math.floor(math.log10(abs(rounded))))}f}"


def plain(value: float, digits: int = 4) -> str:
    """``value`` to at most ``digits`` significant digits in positional notation, trailing zeros dropped: a budget
    or a bound in dollars as written (``0.00004``, ``5``, ``123500``; not ``4e-05``); below 10^-8, as
    :func:`fixed` keeps them, in scientific notation."""
    if not math.isfinite(value) or value == 0 or abs(value) < 1e-8:
        return f"{value:.{digits}g}"
    return np.format_float_positional(value, precision=digits, unique=True, fractional=False, trim="-")


class Dollars(str):
    """A format for dollars per call (the text is its prefix, ``$`` or none): :func:`fixed`, three significant
    digits, for the mean and its interval alike."""

    def format(self, *args: Any, **kwargs: Any) -> str:  # (as str.format is called: measurement's number.format)
        return f"{self}{fixed(float(args[0]))}"


def percent(share: float) -> str:
    """A share as a whole percentage, but never 0% or 100% for one that is neither (1 of 200 repetitions is
    ``<1%``, 499 of 500 ``>99%``): a count it rounds away would read as none or all."""
    text = f"{100 * share:.0f}%"
    if text == "0%" and share > 1e-9:  # (a share summed from parts is none or all up to its roundings)
        return "<1%"
    if text == "100%" and share < 1 - 1e-9:
        return ">99%"
    return text


def file_columns(unit: str) -> dict[str, str]:
    """In-memory column names to the names result files give them in ``unit``."""
    return {"budget": f"budget_{unit}", "spend": f"spend_{unit}", "profile_cost": f"cost_{unit}",
            "budget_stated": f"budget_stated_{unit}", "spend_grid": unit}


def to_files(frame: pd.DataFrame, unit: str, trajectory: bool = False) -> pd.DataFrame:
    """``frame`` with its ``budget``/``spend`` columns named as files name them in ``unit``."""
    names = file_columns(unit)
    if trajectory:
        return frame.rename(columns={"spend": names["spend_grid"]})
    return frame.rename(columns={k: v for k, v in names.items() if k != "spend_grid"})


def from_files(frame: pd.DataFrame, unit: str, trajectory: bool = False) -> pd.DataFrame:
    """``frame`` read from a result file in ``unit``, its unit-named columns back to ``budget``/``spend``."""
    names = file_columns(unit)
    if trajectory:
        return frame.rename(columns={names["spend_grid"]: "spend"})
    return frame.rename(columns={v: k for k, v in names.items() if k != "spend_grid"})


def amount(value: float, unit: str) -> str:
    """A budget or a spend as a sentence says it: ``12,345 tokens`` or ``$1.23``; an amount below ten of another
    unit keeps three significant digits, as :class:`TokenCount` keeps them (a budget of ``1e-9tokens`` said "0
    tokens")."""
    if unit == "usd":  # cents from a dollar on; below, four significant digits (unless they round up to $1), and
        # whole cents as cents ($0.50, as $2.00 is written; not $0.5)
        shown = float(f"{value:.4g}")
        if abs(shown) >= 1 or round(shown, 2) == shown:
            return f"${value:,.2f}"
        return f"${plain(value, 4)}"  # ($0.00004222, as a price reads; not $4.222e-05)
    if value and math.isfinite(value) and abs(float(f"{value:.3g}")) < 10:
        return f"{value:.3g} {LABELS[unit]}"
    return f"{value:,.0f} {LABELS[unit]}"


def amount_up(value: float, unit: str) -> float:
    """``value`` rounded up to the precision :func:`amount` shows it at (whole tokens from ten on, three significant
    digits below; cents from a dollar on, four significant digits below), so that the amount said is never less
    than ``value``."""
    if unit != "usd":
        if not 0 < value < 10:
            return math.ceil(value)
        return min(_up(value, 2 - math.floor(math.log10(value))), 10.0)
    if value >= 1:
        return _up(value, 2)
    return _up(value, 3 - math.floor(math.log10(value)))


def _up(value: float, digits: int) -> float:
    """``value`` rounded up to ``digits`` decimals, never below it: ``ceil(value * 10^d) / 10^d`` in floats can land a
    hair under (0.013000000000000001 gave 0.013), so it is taken one step up then."""
    scale = 10.0 ** digits
    up = math.ceil(value * scale) / scale
    return up if up >= value else (math.ceil(value * scale) + 1) / scale


def normalised_label(name: str) -> str:
    """An axis of normalised means: every objective is scaled so that larger is better (SPEC §2)."""
    return f"{name} (normalised, ↑ better)"


#: Objectives whose normalised mean is the quantity their name says (Figure 1's axes): the share of correct answers,
#: and the paper's efficiency, a normalised index itself. Any other (latency, cost, a column of the user's own) is
#: scaled, and flipped where smaller is better, so that its axis is no mean of what it names.
AS_NAMED = ("accuracy", "efficiency")


def axis_label(name: str) -> str:
    """An axis of an objective's normalised means, in the figures and REPORT.html: ``mean accuracy`` (Figure 1),
    else :func:`normalised_label`."""
    return f"mean {name}" if name in AS_NAMED else normalised_label(name)


def value_label(name: str) -> str:
    """What one normalised mean of an objective is called beside its value (REPORT.html's hover): as its axis
    (:func:`axis_label`) says it, without the direction."""
    return f"mean {name}" if name in AS_NAMED else f"{name} (normalised)"
