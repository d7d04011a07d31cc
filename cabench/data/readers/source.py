"""The rows an import reads: a canonical table or a tool's results, with where each row was read and its run.

:func:`read_source` is the one entry point for ``cabench data import``'s
``--format``: a table (``canonical``) is read as it is, a tool's results by its
reader (:data:`READERS`). Either way each row keeps where it was read (for
one-line errors) and its rank by run (for ``--repeats``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cabench.data.io import compression_suffix, read_table
from cabench.data.readers.bfcl import read_bfcl
from cabench.data.readers.common import REPEAT, STARTED, Read, ReadOptions
from cabench.data.readers.eee import read_eee
from cabench.data.readers.helm import read_helm
from cabench.data.readers.inspect_logs import read_inspect
from cabench.data.readers.promptfoo import read_promptfoo
from cabench.data.schema import IDENTITY_COLUMNS, data_row
from cabench.errors import CabenchError

#: ``--format`` name -> reader(source, options) (``canonical`` is read as a table).
READERS: dict[str, Callable[[Path, ReadOptions], Read]] = {
    "bfcl": read_bfcl,
    "helm": read_helm,
    "inspect": read_inspect,
    "promptfoo": read_promptfoo,
    "every-eval-ever": read_eee,
}
#: The formats whose sources record each instance's split (``--split``).
SPLIT_FORMATS = ("helm",)


@dataclass(frozen=True)
class Source:
    """What was read: the rows, the files, where each row was read (``place``), their run order and reader facts."""

    frame: pd.DataFrame
    files: list[Path]
    place: Callable[[int], str]
    order: np.ndarray
    info: dict[str, Any]


def read_source(source: Path, fmt: str, options: ReadOptions, text: Iterable[str] = IDENTITY_COLUMNS,
                fields: Iterable[str] = ()) -> Source:
    """The rows of ``source``: a table (``canonical``), its ``text`` columns as the text the file holds and the
    nested ``fields`` a mapping names read out (JSON lines), or a tool's results read by its reader."""
    if fmt == "canonical":
        if source.is_dir():
            raise CabenchError(f"{source}: a folder, and the canonical format reads one log table; a tool's results "
                               f"folder is read with --format ({', '.join(READERS)})")
        if not source.is_file():
            raise CabenchError(f"{source}: source log file not found")
        if source.name.lower().endswith(".eval"):
            raise CabenchError(f"{source}: an Inspect log (.eval), not a log table; pass --format inspect")
        if options.metric is not None:
            raise CabenchError("--metric: a canonical table has its 'correct' column; --metric is for tool formats")
        frame = read_table(source, text, fields)
        return Source(frame, [source], data_row, np.arange(len(frame)), {})
    if not source.exists():
        raise CabenchError(f"{source}: not found; give the {fmt} results to import")
    table = _table_suffix(source.name.lower()) if source.is_file() else ""
    if table and (fmt, table) not in (("promptfoo", "CSV"), ("promptfoo", "JSON lines"), ("every-eval-ever",
                                                                                       "JSON lines")):
        # (promptfoo names its own CSV and JSON lines outputs; Every Eval Ever writes JSON lines)
        raise CabenchError(f"{source}: a {table} table (by its name), not {fmt} results; a log table is read without "
                           "--format (the canonical format; --mapping names other columns)")
    read = READERS[fmt](source, options)
    frame = read.frame()
    origin_files, positions = frame["file"].to_numpy(), frame["position"].to_numpy()

    def read_at(row: int) -> str:  # the file and line (entry, sample) a row was read from
        return read.place(origin_files[row], positions[row])

    return Source(frame, read.files, read_at, run_order(frame), read.info)


#: The names of the log tables ``cabench data import`` reads without ``--format``, before any compression suffix.
TABLE_SUFFIXES = {".csv": "CSV", ".jsonl": "JSON lines", ".ndjson": "JSON lines", ".parquet": "parquet"}


def _table_suffix(name: str) -> str:
    """The kind of log table a file's (lower-case) name says it is (``logs.csv.gz``: CSV), else empty."""
    name = name.removesuffix(compression_suffix(name))
    return next((kind for suffix, kind in TABLE_SUFFIXES.items() if name.endswith(suffix)), "")


def run_order(frame: pd.DataFrame) -> np.ndarray:
    """Each row's rank by run: when its run started (unrecorded first), then which run of its instance it is within
    that run (an Inspect epoch, a promptfoo repeat), then its file, then its position there."""
    started, repeat = (pd.to_numeric(frame[col], errors="coerce").fillna(-np.inf).to_numpy()
                       for col in (STARTED, REPEAT))
    files = pd.factorize(frame["file"].astype(str), sort=True)[0]
    ranks = np.empty(len(frame), dtype=np.int64)
    ranks[np.lexsort((np.asarray(frame["position"], dtype=np.int64), files, repeat, started))] = np.arange(len(frame))
    return ranks
