"""The cells both reports are made of: a table is a header and rows of cells, each cell its text and the value it
sorts by (REPORT.md shows the text, REPORT.html both), and the number formats they share."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from cabench import registry
from cabench.analysis import STATE_TEXT
from cabench.answers import SCORED_PER_CALL
from cabench.record import measure_columns
from cabench.results import finite
from cabench.units import Dollars, Significant, TokenCount, amount


def method_name(method: str) -> str:
    """A method's display name (the registry's)."""
    return registry.display(method)


def num(value, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals; n/a when not finite."""
    return f"{float(value):.{digits}f}" if finite(value) else "n/a"


def whole(value) -> str:
    """``value`` rounded to a whole number; n/a when not finite."""
    return f"{float(value):.0f}" if finite(value) else "n/a"


def mark(state: str) -> str:
    """A verdict's state in bold words, as the scorecard words it (not tested: unbolded)."""
    return STATE_TEXT[state] if state == "n/a" else f"**{STATE_TEXT[state]}**"


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table and a blank line; a ``|`` in a cell (a configuration or dataset named so) is escaped, so it
    never splits the cell, in a code span too."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
    return [line(header), "|" + "---|" * len(header), *map(line, rows), ""]


def code(text: str) -> str:
    """``text`` as a Markdown code span, fenced with more backticks than it holds in a row (a name may hold some)."""
    run = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * (run + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


#: Markdown punctuation that turns text into a link, an image, emphasis, code or an entity (``<`` is
#: :func:`inert_html`'s, ``|`` :func:`md_table`'s).
_MARKUP = re.compile(r"([\\`*_\[\]&])")


def md_text(text: str) -> str:
    """``text`` (a dataset's title, a caption naming an experiment) as Markdown text that shows it as written: its
    ``[``, ``]``, ``*``, ``_``, backticks, ``&`` and backslashes escaped, so ``[x](http://...)`` is no link,
    ``![x](...)`` no image fetched, and ``&amp;`` not read as ``&``."""
    return _MARKUP.sub(r"\\\1", text)


_TICKS = re.compile(r"`+")
#: A ``<`` that would open raw HTML in Markdown (a tag, a closing tag, a comment, a declaration or an instruction).
_OPENS_HTML = re.compile(r"<(?=[A-Za-z/!?])")


def inert_html(text: str) -> str:
    """Markdown ``text`` whose ``<`` that would start raw HTML is written ``&lt;`` outside code spans, line by line:
    a name, caption or method's display from results of unknown origin (``<img src=x onerror=...>``) shows as
    text in every viewer instead of running. Code spans keep their text as written (Markdown shows it literally),
    and ``p < 0.05`` is left alone."""
    return "\n".join(_inert_line(line) for line in text.split("\n"))


def _inert_line(line: str) -> str:
    if "<" not in line:
        return line
    out, at = [], 0
    runs = list(_TICKS.finditer(line))
    n = 0
    while n < len(runs):
        opener = runs[n]
        closer = next((m for m in runs[n + 1:] if len(m.group()) == len(opener.group())), None)
        if closer is None:  # backticks without their pair are text
            n += 1
            continue
        out.append(_OPENS_HTML.sub("&lt;", line[at:opener.start()]))
        out.append(line[opener.start():closer.end()])
        at = closer.end()
        n = runs.index(closer) + 1
    out.append(_OPENS_HTML.sub("&lt;", line[at:]))
    return "".join(out)


#: A table cell: its text and the value it sorts by (REPORT.md shows the text; REPORT.html both).
Cell = tuple[str, Any]
Table = tuple[list[str], list[list[Cell]]]


def shown(number: str, value: Any) -> Cell:
    """A cell showing ``value`` in the ``number`` format and sorting by it."""
    return number.format(value), value


def texts(table: Table) -> list[str]:
    """A table of cells as Markdown (their texts)."""
    header, rows = table
    return md_table(header, [[text for text, _ in row] for row in rows])


#: Real-unit columns of ``arms.csv``: header and number format (mean and 95% half-width alike).
REAL_UNIT_FORMATS = {"accuracy": ("accuracy", "{:.3f}"), "latency_s": ("latency (s)", Significant()),
                     "tokens": ("tokens", TokenCount("{:,.1f}")), "usd": ("USD", Dollars("$")),
                     "completion_tokens": ("completion tokens", TokenCount("{:,.1f}"))}


def unit_formats(arms: pd.DataFrame) -> dict[str, tuple[str, Any]]:
    """The measures per call of ``arms.csv`` a report shows, each with its header and number format: the real units
    it records (:data:`REAL_UNIT_FORMATS`), then each column of the user's own an objective reads, in its own scale
    (``toxicity``: a bound on it is in that scale, and its normalised objective is flipped where smaller is better)."""
    return {c: REAL_UNIT_FORMATS.get(c, (str(c), Significant())) for c in measure_columns(arms)}


def measurement(row: Any, measure: str, number: str) -> str:
    """A real-unit measurement per call of an ``arms.csv`` row (or an arm's facts): ``mean ± half`` where its 95%
    interval is the normal one, ``mean (low–high)`` where the recorded ends differ from it (Wilson's interval for
    0/1 outcomes, or the normal one cut at the range: :func:`cabench.record.real_units`); the mean alone where there
    is no interval, n/a where there is no mean."""
    mean, half = row[measure], row.get(f"{measure}_ci")
    low, high = row.get(f"{measure}_low"), row.get(f"{measure}_high")
    if isinstance(number, TokenCount) and finite(mean):  # its precision set by the mean, for the interval too
        number = number.at(mean)
    if finite(mean) and finite(low) and finite(high) and not (
            finite(half) and math.isclose(low, mean - half, rel_tol=1e-9, abs_tol=1e-12)
            and math.isclose(high, mean + half, rel_tol=1e-9, abs_tol=1e-12)):
        return f"{number.format(mean)} ({number.format(low)}–{number.format(high)})"
    if not finite(mean):
        return "n/a"
    return number.format(mean) + (f" ± {getattr(number, 'bare', number).format(half)}" if finite(half) else "")


def quoted_name(name: str) -> str:
    """A configuration's name as a list of names shows it: in double quotes (escaped as JSON) where it holds a
    comma or a quote, or begins or ends with a space, so that ``gpt 4o, mini`` never reads as two names."""
    return json.dumps(name, ensure_ascii=False) if ("," in name or '"' in name or name != name.strip()) else name


def listed(names: Iterable[str]) -> str:
    """Configuration names joined by commas, each as :func:`quoted_name` shows it."""
    return ", ".join(quoted_name(str(n)) for n in names)


def sentence(clause: str) -> str:
    """A clause as a sentence of a report: its first letter capital, a full stop after it."""
    return f"{clause[:1].upper()}{clause[1:]}."


def clipped_calls(setting: str, dataset: dict[str, Any], unit: str) -> str:
    """For online selection on logs some of whose evaluation calls cost more than the dearest profiling call
    (``dataset.csv``'s ``clipped_rows``, over all the dataset's configurations): that a replay charges each such
    call at that amount, the paper's normalised cost ``min(cost / c_max, 1)``, so the spends it reports understate
    what those calls cost; empty otherwise (identification charges costs unclipped)."""
    count = dataset.get("clipped_rows")
    if setting != "online" or count is None or not finite(count) or int(count) <= 0 \
            or not finite(dataset.get("c_max")):
        return ""
    many = int(count) > 1
    return (f"{int(count)} of the dataset's evaluation calls (of any of its configurations, this experiment's or "
            f"not) cost{'' if many else 's'} more than its dearest "
            f"profiling call, c_max = {amount(float(dataset['c_max']), unit)}; a replay charges "
            f"{'each' if many else 'it'} c_max (a call's normalised cost is min(cost / c_max, 1)), so the spends "
            "shown understate what such calls cost")


#: How much more per call than its profiling mean c_i a configuration's evaluation calls must cost, on average, for
#: the spends charged at c_i (identification with deterministic costs) to be said to understate them.
CHARGED_ABOVE = 1.25


def charged_at_profiling(setting: str, arms: Any, unit: str, modes: Iterable[str]) -> str:
    """For identification with deterministic costs (each call charged its configuration's profiling mean c_i, the
    paper's known costs), where some configuration's evaluation calls cost :data:`CHARGED_ABOVE` times that or more
    on average (``arms``' mean per call in ``unit`` against its ``profile_cost``): that the spends shown understate
    what the replayed calls cost, naming the dearest against its c_i; empty otherwise, or where ``arms`` has no mean
    in the cost unit (online charges each call its own cost, :func:`clipped_calls`)."""
    if setting == "online" or "deterministic" not in list(modes) or unit not in arms or "profile_cost" not in arms:
        return ""
    mean, charged = arms[unit].to_numpy(dtype=float), arms["profile_cost"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = mean / charged
    above = np.flatnonzero(np.isfinite(ratio) & (ratio >= CHARGED_ABOVE))
    if not len(above):
        return ""
    i = int(above[np.argmax(ratio[above])])
    many = len(above) > 1
    return (f"deterministic costs charge each call its configuration's profiling mean c_i; on the evaluation split "
            f"{len(above)} configuration{'s' if many else ''} cost{'' if many else 's'} {CHARGED_ABOVE:g} times "
            f"that or more per call (up to {ratio[i]:.3g} times: {quoted_name(str(arms['config_id'].iloc[i]))}, "
            f"{amount(mean[i], unit)} against c_i = {amount(charged[i], unit)}), so the deterministic spends shown "
            "understate what such calls cost (the stochastic cost mode charges each call its own)")


def dropped_at_import(info: dict[str, Any]) -> str:
    """What the import of an experiment's logs left out of what it compares, from the ``provenance`` its
    ``config.yaml`` records of the dataset (``dataset_info``): configurations dropped for their holes (``--missing
    drop-configs``, each with why) or instances some configuration lacked (``drop-instances``); empty when
    nothing was, or the dataset was not imported."""
    provenance = info.get("provenance")
    holes = provenance.get("holes") if isinstance(provenance, dict) else None
    if not isinstance(holes, dict):
        return ""
    gone = holes.get("configurations")
    if isinstance(gone, dict) and gone:
        named = "; ".join(f"{name} ({why})" for name, why in gone.items())
        return (f"dropped at import: {len(gone)} configuration{'s' if len(gone) > 1 else ''} with missing "
                f"instances (--missing drop-configs), not compared here: {named}")
    if holes.get("instances_dropped"):
        return (f"dropped at import: {holes['instances_dropped']} instances some configuration lacked (--missing "
                f"drop-instances); {holes.get('instances_kept')} instances kept")
    return ""


def undominated_note(names: list[str]) -> str:
    """What the answers say of the configurations outside the Pareto set that no configuration beats on every mean
    per call (:func:`cabench.answers.undominated_on_means`), or nothing."""
    if not names:
        return ""
    shown = listed(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (f"outside the Pareto set, yet no configuration beats {'it' if len(names) == 1 else 'them'} on every mean "
            f"per call: {shown} ({SCORED_PER_CALL})")
