"""The shipped surrogate logs known by their rows, so that a copy of them is surrogate wherever it lies.

``data/gsm8k`` and ``data/piqa`` hold surrogate logs (``scripts/make_surrogate_logs.py``), not real model outputs.
Logs imported from their folder are marked surrogate by where they lie (:func:`cabench.data.importer.surrogate_source`);
a copy elsewhere is recognised by its rows: the SHA-256 of the canonical columns, sorted and written one way
(:func:`rows_digest`), so a copy in any file format, compression, encoding, row order or number format is found, and
so is the ``logs.csv.gz`` an import of them writes. Logs with any value changed, or only some of the rows, are not.
``surrogate_logs.json`` beside this module records each shipped dataset's rows; the generator writes it with the
logs, and a test checks it against them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

RECORD = Path(__file__).with_name("surrogate_logs.json")
#: The columns that make a row of logs: what a configuration was, on which instance, and what it did.
ROW = ("config_id", "model", "temperature", "max_new_tokens", "prompting", "instance_id", "correct", "latency_s",
       "tokens")
_TEXT = ("config_id", "model", "prompting", "instance_id")


def rows_digest(frame: pd.DataFrame) -> str:
    """SHA-256 of ``frame``'s :data:`ROW` columns, rows sorted by configuration and instance, text as UTF-8 and every
    number as the little-endian float64 it is: the same rows give the same digest whatever file they came from."""
    rows = frame.loc[:, list(ROW)].astype({column: str for column in _TEXT})
    rows = rows.sort_values(["config_id", "instance_id"], kind="mergesort")
    h = hashlib.sha256()
    for column in ROW:
        values = rows[column].to_numpy()
        h.update(column.encode() + b"\0")
        if column in _TEXT:
            h.update("\0".join(values).encode("utf-8", "surrogatepass") + b"\0")
        else:
            h.update(np.ascontiguousarray(values.astype("<f8")).tobytes())
    return h.hexdigest()


def shape(frame: pd.DataFrame) -> dict[str, int]:
    """The rows and configurations of ``frame``: compared before any digest is computed."""
    return {"rows": int(len(frame)), "configurations": int(frame["config_id"].nunique())}


def record(frames: dict[str, pd.DataFrame]) -> dict[str, dict[str, Any]]:
    """Each shipped surrogate dataset's name: its rows' :func:`shape` and :func:`rows_digest`, as RECORD holds it."""
    return {name: {**shape(frame), "rows_sha256": rows_digest(frame)} for name, frame in frames.items()}


def write_record(frames: dict[str, pd.DataFrame], path: Path = RECORD) -> None:
    """Write RECORD for the shipped surrogate datasets' logs (``scripts/make_surrogate_logs.py``)."""
    path.write_text(json.dumps(record(frames), indent=2, sort_keys=True) + "\n")


def shipped() -> dict[str, dict[str, Any]]:
    """RECORD's content; empty where it is missing or unreadable (nothing is then recognised)."""
    try:
        data = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return {}
    return {name: v for name, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def copy_of(frame: pd.DataFrame) -> str | None:
    """The name of the shipped surrogate logs (``gsm8k``, ``piqa``) whose rows ``frame`` holds, if any. Only logs of
    their shape are digested (a few tenths of a second for theirs); any other costs nothing."""
    if not set(ROW) <= set(frame.columns):
        return None
    candidates = {name: v for name, v in shipped().items()
                  if {k: v.get(k) for k in ("rows", "configurations")} == shape(frame)}
    if not candidates:
        return None
    digest = rows_digest(frame)
    return next((name for name, v in candidates.items() if v.get("rows_sha256") == digest), None)


def is_surrogate(meta: dict[str, Any], frame: pd.DataFrame) -> bool:
    """Whether logs are surrogate: their ``dataset.yaml`` says so, or they hold the rows of shipped surrogate logs
    (:func:`copy_of`; a folder given them with ``surrogate: false`` by hand is surrogate all the same)."""
    return meta.get("surrogate") is True or copy_of(frame) is not None
