"""Canonical evaluation-log schema and its validation (SPEC §1).

One row per (configuration, instance). :func:`validate_logs` checks a frame
against the schema and raises :class:`~cabench.errors.CabenchError` naming the
file, the column and the first offending rows. Nothing is silently dropped.
"""

from __future__ import annotations

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

#: Columns that describe a configuration (constant within a config_id).
CONFIG_COLUMNS = ("model", "temperature", "max_new_tokens", "prompting")

_SHOW = 3


def _rows(mask: np.ndarray | pd.Series) -> str:
    """Describe the first offending rows (1-based data rows, header excluded)."""
    idx = np.flatnonzero(np.asarray(mask))
    shown = ", ".join(str(i + 1) for i in idx[:_SHOW])
    more = f" and {len(idx) - _SHOW} more" if len(idx) > _SHOW else ""
    return f"row{'s' if len(idx) > 1 else ''} {shown}{more}"


def validate_logs(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """Validate a log frame and return it with canonical dtypes.

    Parameters
    ----------
    frame:
        Raw frame with at least the canonical columns.
    source:
        File name used in error messages.

    Raises
    ------
    CabenchError
        On a missing column, a NaN or empty cell, a non-numeric value,
        correctness outside [0, 1], non-positive latency or tokens, a duplicate
        (config_id, instance_id) pair, a configuration whose metadata varies,
        or configurations with different instance sets.
    """
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise CabenchError(
            f"{source}: missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(c) for c in missing)}; expected columns {', '.join(COLUMNS)} "
            "(`cabench data import` maps other names)"
        )
    if len(frame) == 0:
        raise CabenchError(f"{source}: no rows; a log needs one row per (config, instance)")
    out = pd.DataFrame(index=frame.index)
    for col, kind in COLUMNS.items():
        values = frame[col]
        na = values.isna().to_numpy().copy()
        if kind == "str":
            text = values.astype(str).str.strip()
            na |= (text == "").to_numpy()
            if na.any():
                raise CabenchError(f"{source}: column '{col}' is empty or NaN at {_rows(na)}; fill in or remove "
                                   "those rows")
            out[col] = text
            continue
        if na.any():
            raise CabenchError(f"{source}: column '{col}' is NaN at {_rows(na)}; fill in or remove those rows")
        numbers = pd.to_numeric(values, errors="coerce")
        bad = numbers.isna().to_numpy() | ~np.isfinite(numbers.to_numpy(dtype=float))
        if bad.any():
            raise CabenchError(f"{source}: column '{col}' is not a finite number at {_rows(bad)}; fix those values")
        if kind == "int":
            frac = (numbers % 1 != 0).to_numpy()
            if frac.any():
                raise CabenchError(f"{source}: column '{col}' is not a whole number at {_rows(frac)}; "
                                   "generation limits are token counts")
            big = (numbers.abs() > 2**31).to_numpy()
            if big.any():
                raise CabenchError(f"{source}: column '{col}' is above {2**31:g} at {_rows(big)}; check the units")
            out[col] = numbers.astype(np.int64)
        else:
            out[col] = numbers.astype(np.float64)
    outside = ((out["correct"] < 0) | (out["correct"] > 1)).to_numpy()
    if outside.any():
        raise CabenchError(f"{source}: column 'correct' is outside [0, 1] at {_rows(outside)}; correctness is 0/1 "
                           "or a score in [0, 1]")
    for col, top in (("latency_s", 1e7), ("tokens", 1e12)):
        big = (out[col] > top).to_numpy()
        if big.any():
            raise CabenchError(f"{source}: column '{col}' is above {top:g} at {_rows(big)}; check the units")
    tiny = ((out["latency_s"] > 0) & (out["latency_s"] < 1e-6)).to_numpy()
    if tiny.any():
        raise CabenchError(f"{source}: column 'latency_s' is below a microsecond at {_rows(tiny)}; latencies are "
                           "in seconds (scale them in the import mapping)")
    for col in ("latency_s", "tokens"):
        nonpos = (out[col] <= 0).to_numpy()
        if nonpos.any():
            raise CabenchError(f"{source}: column '{col}' is not positive at {_rows(nonpos)}; every evaluation "
                               "takes some time and some tokens")
    dup = out.duplicated(["config_id", "instance_id"], keep="first").to_numpy()
    if dup.any():
        first = int(np.flatnonzero(dup)[0])
        cid, iid = out["config_id"].iloc[first], out["instance_id"].iloc[first]
        raise CabenchError(
            f"{source}: duplicate (config_id, instance_id) pair ('{cid}', '{iid}') at "
            f"{_rows(dup)}; each configuration is evaluated once per instance"
        )
    for col in CONFIG_COLUMNS:
        varying = out.groupby("config_id", sort=False)[col].nunique()
        varying = varying[varying > 1]
        if len(varying):
            cid = varying.index[0]
            bad = ((out["config_id"] == cid) & (out[col] != out.loc[out["config_id"] == cid, col].iloc[0])).to_numpy()
            raise CabenchError(
                f"{source}: column '{col}' varies within config_id '{cid}' at {_rows(bad)}; "
                "configuration metadata must be constant per config_id"
            )
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

