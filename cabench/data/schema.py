"""Canonical evaluation-log schema and its validation (SPEC §1).

One row per (configuration, instance). :func:`validate_logs` checks a frame
against the schema and raises :class:`~cabench.errors.CabenchError` naming the
file, the column and the first offending rows. Nothing is silently dropped.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cabench.errors import CabenchError

#: Canonical columns, in file order, with their kind.
COLUMNS: dict[str, str] = {
    "config_id": "str",
    "model": "str",
    "temperature": "float",
    "max_new_tokens": "int",
    "prompting": "str",
    "instance_id": "str",
    "correct": "float",
    "latency_s": "float",
    "tokens": "float",
}

#: Canonical measurements a log may lack: logs without latency (or token counts, when they carry dollars) are
#: scored on the objectives and cost they have (``objectives: [accuracy, cost]``).
MEASURE_COLUMNS = ("latency_s", "tokens")
#: Optional canonical columns: kept in the logs when the source has them (numbers >= 0), unused by the engines.
OPTIONAL_COLUMNS = ("prompt_tokens", "completion_tokens", "cost_usd")
#: Columns a log needs to charge a call: one of them at least.
COST_SOURCES = ("tokens", "completion_tokens", "cost_usd")

#: Medians that suggest a column holds another unit: (column, above or below, bound, the warning).
UNIT_HINTS = (
    ("latency_s", ">", 60.0, "latency_s looks like milliseconds? (scale: {latency_s: 0.001} converts)"),
    ("latency_s", "<", 0.005, "latency_s looks scaled twice, or another measure? (it is in seconds, and a model call "
                              "rarely answers in under 5 ms)"),
    ("tokens", "<", 1.0, "tokens looks like dollars or thousands of tokens? (map token counts to tokens)"),
    ("cost_usd", ">", 1.0, "cost_usd looks like cents or micro-dollars? (scale.cost_usd converts to dollars)"),
)

#: Columns that describe a configuration (constant within a config_id).
CONFIG_COLUMNS = ("model", "temperature", "max_new_tokens", "prompting")

#: Columns whose text names a configuration or an instance; it is written into CSV files, YAML and figure labels.
IDENTITY_COLUMNS = ("model", "prompting", "instance_id", "config_id")

_SHOW = 3


def _rows(mask: np.ndarray | pd.Series, place: Callable[[int], str] | None = None) -> str:
    """Describe the first offending rows: where each was read (``place``: a tool log's file and line or sample, a
    table's row), by default the 1-based data row (header excluded), and how many more there are."""
    idx = np.flatnonzero(np.asarray(mask))
    more = f" and {len(idx) - _SHOW} more" if len(idx) > _SHOW else ""
    places = [(place or data_row)(int(i)) for i in idx[:_SHOW]]
    if all(p.startswith("row ") for p in places):  # rows of a table: 'rows 1, 2, 3'
        return f"row{'s' if len(idx) > 1 else ''} {', '.join(p[4:] for p in places)}{more}"
    return "; ".join(places) + more


def unprintable(text: str) -> str | None:
    """The first character of ``text`` that is not printable (``str.isprintable``), if any: control characters (a
    newline, a tab...), which break a line of a CSV file or a YAML scalar; line and paragraph separators; lone
    surrogates, which no file encoding can write; and characters that print as nothing or as a space — a zero-width
    space, a right-to-left override (which reverses the rest of a terminal's line), a no-break space — with which
    two different names would read alike in every table."""
    if text.isprintable():
        return None
    return next(c for c in text if not c.isprintable())


def shown(value: object) -> str:
    """A value as a message shows it: a container by its kind (never its content), else cut to 40 characters."""
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    if isinstance(value, np.generic):  # a cell of a column read by pandas: -3, not np.int64(-3)
        value = value.item()
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def unprintable_error(source: str, column: str, value: str, where: str) -> CabenchError:
    """The one line refusing ``value`` of a name or id column, read from ``source`` at ``where``."""
    return CabenchError(f"{source}: column '{column}' holds {unprintable(value)!r} at {where} ({shown(value)}); "
                        "names and ids must be printable text on one line")


def check_text(values: pd.Series, column: str, source: str, place: Callable[[int], str]) -> None:
    """Refuse a name or id in ``values`` that is not printable one-line text.

    ``place`` names the row at a position (``row 3``, or the line of the file it was read from).
    """
    try:
        codes, uniques = pd.factorize(values)
    except TypeError:  # a list or an object (a JSON-lines source) where text belongs
        row, value = next((n, v) for n, v in enumerate(values) if not isinstance(v, Hashable))
        raise CabenchError(f"{source}: column '{column}' holds a {type(value).__name__} at {place(row)}; names and "
                           "ids are text") from None
    bad = next((n for n, value in enumerate(uniques) if isinstance(value, str) and unprintable(value)), None)
    if bad is not None:
        raise unprintable_error(source, column, uniques[bad], place(int(np.flatnonzero(codes == bad)[0])))
    composed: dict[str, int] = {}
    for n, value in enumerate(uniques):  # (ASCII text, nearly every name and id, is its own composed form)
        if not isinstance(value, str) or value.isascii():
            continue
        first = composed.setdefault(unicodedata.normalize("NFC", value), n)
        if first != n:
            at = [place(int(np.flatnonzero(codes == k)[0])) for k in (first, n)]
            raise CabenchError(f"{source}: column '{column}' holds {ascii(uniques[first])} at {at[0]} and "
                               f"{ascii(value)} at {at[1]}, which read alike (the same letters, their accents "
                               "composed differently); write them alike, or name them apart")


def check_identity_text(frame: pd.DataFrame, source: str, place: Callable[[int], str]) -> None:
    """Refuse names and ids (``IDENTITY_COLUMNS``) that are not printable one-line text."""
    for col in IDENTITY_COLUMNS:
        if col in frame:
            check_text(frame[col], col, source, place)


#: What would fix a (config_id, instance_id) pair given twice in a dataset's logs.
DUPLICATE_FIX = "remove the repeated rows, or tell configurations apart by their metadata"


def check_duplicates(frame: pd.DataFrame, source: str, place: Callable[[int], str], fix: str = DUPLICATE_FIX) -> None:
    """Refuse a (config_id, instance_id) pair given twice, naming where both rows are (``place`` of a position) and
    what would ``fix`` it."""
    repeated = frame.duplicated(["config_id", "instance_id"], keep="first").to_numpy()
    if not repeated.any():
        return
    again = int(np.flatnonzero(repeated)[0])
    cid, iid = frame["config_id"].iloc[again], frame["instance_id"].iloc[again]
    named = [c for c in ("instance_id", *CONFIG_COLUMNS, "config_id")
             if c in frame and pd.isna(frame[c].iloc[again])]  # (a config_id built from empty metadata, or empty)
    if named:  # empty cells are alike to duplicated(): said as the empty cells they are
        empty = np.flatnonzero(frame[named[0]].isna().to_numpy())
        more = len(empty) - 1
        raise CabenchError(f"{source}: column '{named[0]}' is empty or NaN at {place(int(empty[0]))}"
                           + (f" ({more} more such row{'s' if more > 1 else ''})" if more else "")
                           + "; fill in or remove those rows")
    first = int(np.flatnonzero(((frame["config_id"] == cid) & (frame["instance_id"] == iid)).to_numpy())[0])
    more = int(repeated.sum()) - 1
    raise CabenchError(
        f"{source}: duplicate (config_id, instance_id) pair ('{cid}', '{iid}') at {place(first)} and again at "
        f"{place(again)}" + (f" ({more} more repeated rows)" if more else "") + "; each configuration is evaluated "
        f"once per instance: {fix}")


def check_constant_metadata(frame: pd.DataFrame, source: str, place: Callable[[int], str] | None = None,
                            why: str = "configuration metadata must be constant per config_id") -> None:
    """Refuse, in one line naming the rows, a config_id whose rows differ in a metadata column (model, temperature,
    generation limit, prompting): they are runs of other configurations."""
    for col in (c for c in CONFIG_COLUMNS if c in frame):
        varying = frame.groupby("config_id", sort=False)[col].nunique()
        varying = varying[varying > 1]
        if len(varying):
            cid = varying.index[0]
            mine = frame["config_id"] == cid
            bad = (mine & (frame[col] != frame.loc[mine, col].iloc[0])).to_numpy()
            raise CabenchError(f"{source}: column '{col}' varies within config_id '{cid}' at {_rows(bad, place)}; "
                               + why)


def kept_columns(present: Iterable[Hashable], extra: Sequence[str] = ()) -> list[str]:
    """The columns a dataset's logs keep, in file order: the canonical ones, then the optional and the declared
    extra ones among ``present``."""
    have = set(present)
    return [*(c for c in COLUMNS if c in have or c not in MEASURE_COLUMNS),
            *(c for c in (*OPTIONAL_COLUMNS, *extra) if c in have)]


def check_extra_columns(declared: Any, where: str) -> tuple[str, ...]:
    """The further numeric columns a dataset declares (``extra_columns``): distinct printable names, none of them
    canonical."""
    if declared is None:
        return ()
    if not isinstance(declared, list) or not all(isinstance(n, str) and n.strip() for n in declared):
        raise CabenchError(f"{where}: expected a list of column names, got {shown(declared)}")
    for name in declared:
        if unprintable(name):
            raise CabenchError(f"{where}: {shown(name)} holds {unprintable(name)!r}; column names are printable "
                               "text on one line")
        if name in COLUMNS or name in OPTIONAL_COLUMNS:
            raise CabenchError(f"{where}: '{name}' is a canonical column; list only further columns")
    if len(set(declared)) < len(declared):
        twice = next(n for n in declared if declared.count(n) > 1)
        raise CabenchError(f"{where}: '{twice}' is listed twice; list each column once")
    return tuple(declared)


def _finite(values: pd.Series, col: str, source: str, place: Callable[[int], str] | None = None) -> pd.Series:
    """A numeric column's values as numbers, refusing a NaN, an empty cell or a value that is not a finite number."""
    na = values.isna().to_numpy()
    if na.any():
        raise CabenchError(f"{source}: column '{col}' is NaN at {_rows(na, place)}; fill in or remove those rows")
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna().to_numpy() | ~np.isfinite(numbers.to_numpy(dtype=float))
    if bad.any():
        raise CabenchError(f"{source}: column '{col}' is not a finite number at {_rows(bad, place)}; fix those "
                           "values")
    return numbers


def _kept_numbers(frame: pd.DataFrame, source: str, extra: Sequence[str],
                  place: Callable[[int], str] | None = None) -> dict[str, pd.Series]:
    """The optional columns the frame has (numbers >= 0) and the declared extra ones (finite numbers)."""
    lacking = [c for c in extra if c not in frame.columns]
    if lacking:
        raise CabenchError(f"{source}: missing column '{lacking[0]}', declared in extra_columns; add it to the logs "
                           "or remove it from the declaration")
    out = {}
    for col in (c for c in kept_columns(frame.columns, extra) if c not in COLUMNS):
        numbers = _finite(frame[col], col, source, place).astype(np.float64)
        negative = (numbers < 0).to_numpy()
        if col in OPTIONAL_COLUMNS and negative.any():
            raise CabenchError(f"{source}: column '{col}' is negative at {_rows(negative, place)}; token counts and "
                               "costs are numbers >= 0")
        out[col] = numbers
    return out


def unit_warnings(logs: pd.DataFrame) -> list[str]:
    """One line for each column whose median suggests another unit (``UNIT_HINTS``), e.g. latencies in ms."""
    out = []
    for col, side, bound, hint in UNIT_HINTS:
        if col in logs:
            median = float(logs[col].median())
            if median > bound if side == ">" else median < bound:
                out.append(f"median {col} is {median:g}; {hint}")
    return out


def data_row(position: int) -> str:
    """A row of a log file at a 0-based position, as messages name it (1-based, header excluded)."""
    return f"row {position + 1}"


#: The generation limit of a configuration that had none (as Ollama's and llama.cpp's ``num_predict`` write it).
NO_LIMIT = -1


def validate_logs(frame: pd.DataFrame, source: str, extra: Sequence[str] = (),
                  place: Callable[[int], str] | None = None) -> pd.DataFrame:
    """Validate a log frame and return it with canonical dtypes.

    Parameters
    ----------
    frame:
        Raw frame with at least the canonical columns.
    source:
        File name used in error messages.
    extra:
        Further numeric columns the dataset declares (``extra_columns``); they
        are kept with the optional columns (``OPTIONAL_COLUMNS``) the frame
        has, and any other column is left out.

    Raises
    ------
    CabenchError
        On a missing column, a NaN or empty cell, a non-numeric value,
        correctness outside [0, 1], non-positive latency or tokens, a name or
        id that is not printable one-line text, a duplicate (config_id,
        instance_id) pair, a configuration whose metadata varies, or
        configurations with different instance sets; a kept column with a NaN
        or a value that is not a finite number, a negative optional column, or
        a declared column the frame lacks.
    """
    missing = [c for c in COLUMNS if c not in frame.columns and c not in MEASURE_COLUMNS]
    if missing:
        raise CabenchError(
            f"{source}: missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(c) for c in missing)}; expected columns {', '.join(COLUMNS)} "
            "(`cabench data import` maps other names)"
        )
    if not any(c in frame.columns for c in COST_SOURCES):
        raise CabenchError(f"{source}: no cost column; the logs need {', '.join(COST_SOURCES[:-1])} or "
                           f"{COST_SOURCES[-1]} to charge a call (`cabench data import` maps other names)")
    if len(frame) == 0:
        raise CabenchError(f"{source}: no rows; a log needs one row per (config, instance)")
    out = pd.DataFrame(index=frame.index)
    for col, kind in COLUMNS.items():
        if col not in frame.columns:
            continue  # a measurement the logs lack
        values = frame[col]
        if kind == "str":
            na = values.isna().to_numpy().copy()
            text = values.astype(str)
            check_text(text, col, source, data_row)
            text = text.str.strip()
            na |= (text == "").to_numpy()
            if na.any():
                raise CabenchError(f"{source}: column '{col}' is empty or NaN at {_rows(na, place)}; fill in or remove "
                                   "those rows")
            out[col] = text
            continue
        numbers = _finite(values, col, source, place)
        if kind == "int":
            frac = (numbers % 1 != 0).to_numpy()
            if frac.any():
                raise CabenchError(f"{source}: column '{col}' is not a whole number at {_rows(frac, place)}; "
                                   "generation limits are token counts")
            big = (numbers.abs() > 2**31).to_numpy()
            if big.any():
                raise CabenchError(f"{source}: column '{col}' is above {2**31:g} at {_rows(big, place)}; check the "
                                   "units")
            out[col] = numbers.astype(np.int64)
        else:
            out[col] = numbers.astype(np.float64)
    cold = (out["temperature"] < 0).to_numpy()
    if cold.any():
        raise CabenchError(f"{source}: column 'temperature' is negative at {_rows(cold, place)}; a sampling "
                           "temperature is 0 or more")
    short = ((out["max_new_tokens"] < 0) & (out["max_new_tokens"] != NO_LIMIT)).to_numpy()
    if short.any():  # 0: a call scored on its prompt's log-probabilities (HELM's multiple_choice_separate_*)
        raise CabenchError(f"{source}: column 'max_new_tokens' is negative at {_rows(short, place)}; a generation "
                           f"limit is a token count ({NO_LIMIT}: none)")
    out["correct"] = out["correct"] + 0.0  # a score of -0.0 is 0.0 (it was written as -0.0)
    outside = ((out["correct"] < 0) | (out["correct"] > 1)).to_numpy()
    if outside.any():
        raise CabenchError(f"{source}: column 'correct' is outside [0, 1] at {_rows(outside, place)}; correctness is "
                           "0/1 or a score in [0, 1]")
    for col, top in (("latency_s", 1e7), ("tokens", 1e12)):
        big = (out[col] > top).to_numpy() if col in out else None
        if big is not None and big.any():
            raise CabenchError(f"{source}: column '{col}' is above {top:g} at {_rows(big, place)}; check the units")
    tiny = ((out["latency_s"] > 0) & (out["latency_s"] < 1e-6)).to_numpy() if "latency_s" in out else None
    if tiny is not None and tiny.any():
        raise CabenchError(f"{source}: column 'latency_s' is below a microsecond at {_rows(tiny, place)}; latencies "
                           "are in seconds (scale them in the import mapping)")
    for col in (c for c in MEASURE_COLUMNS if c in out):
        nonpos = (out[col] <= 0).to_numpy()
        if nonpos.any():
            raise CabenchError(f"{source}: column '{col}' is not positive at {_rows(nonpos, place)}; every evaluation "
                               "takes some time and some tokens")
    for col, numbers in _kept_numbers(frame, source, extra, place).items():
        out[col] = numbers
    check_duplicates(out, source, data_row)
    check_constant_metadata(out, source, place)
    counts = out.groupby("config_id", sort=False)["instance_id"].size()
    n_instances = out["instance_id"].nunique()
    ragged = counts[counts != n_instances]
    if len(ragged):
        cid = ragged.index[0]
        all_ids = set(out["instance_id"])
        have = set(out.loc[out["config_id"] == cid, "instance_id"])
        lacking = sorted(all_ids - have)[:_SHOW]
        raise CabenchError(
            f"{source}: ragged instance sets: config_id '{cid}' has {int(ragged.iloc[0])} of "
            f"{n_instances} instances (missing e.g. {', '.join(map(repr, lacking))}); every "
            "configuration must be evaluated on the same instances"
        )
    return out.reset_index(drop=True)

