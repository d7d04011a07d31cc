"""Reading and writing dataset folders (SPEC §1).

A dataset is a folder holding ``logs.csv.gz`` (or ``logs.csv`` /
``logs.parquet``) and ``dataset.yaml``. Reading never repairs anything: a file
that cannot be read or parsed is a :class:`~cabench.errors.CabenchError`.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import csv
import gzip
import io
import json
import lzma
import math
import sys
import unicodedata
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

from cabench.data.holes import MISSING
from cabench.data.schema import (
    COLUMNS,
    COST_SOURCES,
    IDENTITY_COLUMNS,
    OPTIONAL_COLUMNS,
    check_extra_columns,
    data_row,
    kept_columns,
    shown,
    unprintable,
    validate_logs,
)
from cabench.errors import CabenchError, did_you_mean, first_three
from cabench.yamlio import Loader, dump_yaml, load_yaml, yaml_problem

LOG_NAMES = ("logs.csv.gz", "logs.csv", "logs.parquet")
META_NAME = "dataset.yaml"
#: What an import writes in a dataset folder: a folder holding anything else is not replaced (``--force``,
#: ``--replace``), as those files are not the import's to delete.
DATASET_FILES = frozenset({*LOG_NAMES, META_NAME})
META_KEYS = ("name", "description", "provenance", "surrogate", "licence")
#: Every key a ``dataset.yaml`` may hold: :data:`META_KEYS`, the optional ones the loader reads (the terms among
#: them: ``objectives``, ``cost``, ``prices``) and the surrogate logs' record of how they were made. Any other key is
#: refused: a misspelt ``objectivs`` or ``split.sed`` would otherwise leave the data on terms the user did not
#: declare.
DATASET_KEYS = (*META_KEYS, "title", "split", "missing", "extra_columns", "objectives", "cost", "prices",
                "generator", "calibration_targets")
#: A compressed table unpacks to at most this many bytes, or ``GZIP_RATIO`` times its own size when that is more:
#: logs compress about tenfold, while a few megabytes of gzip can unpack to gigabytes.
MAX_UNPACKED_BYTES = 512 * 2**20
GZIP_RATIO = 100
_TEXT_KEYS = ("name", "description", "licence")
#: pandas parses a CSV number to the double it was written from (``repr`` of a float reads back as itself) by default
#: from 3.0 on, which deprecates asking; before 3.0 (the pandas of Python 3.10) only when asked.
_EXACT_FLOATS = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


class _Capped(io.RawIOBase):
    """A decompressing stream that stops with an error once it has given more than ``limit`` bytes."""

    def __init__(self, stream: Any, limit: int) -> None:
        super().__init__()
        self._stream, self.limit, self.given = stream, limit, 0

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._stream.close()
        super().close()

    def readinto(self, buffer: Any) -> int:
        n = self._stream.readinto(buffer)
        self.given += n
        if self.given > self.limit:
            raise OSError(f"unpacks to more than {self.limit:,} bytes")
        return n


#: One compressed file, read as its content (each capped as a gzipped one is); a zip archive of one file is read too.
_COMPRESSED: dict[str, Callable[..., Any]] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open, ".lzma": lzma.open,
                                              ".zst": zstd.open, ".zstd": zstd.open}
#: Archives of several files, and compressions cabench does not read: refused by name (pandas guessed some of them
#: from the name, so whether such a file was read depended on whether its first bytes passed for a CSV header).
_NOT_UNPACKED = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar.zst", ".7z", ".rar", ".lz4",
                 ".z")
#: Spreadsheet workbooks: their sheets are exported as CSV, not read.
_WORKBOOKS = (".xlsx", ".xlsm", ".xlsb", ".xls", ".ods", ".numbers")
#: The tables read from a zip archive's one file, by its name.
_ZIPPED_TABLES = (".csv", ".txt", ".jsonl", ".ndjson")


def _unpacked(path: Path) -> tuple[io.BufferedReader, _Capped, str]:
    """A compressed file's content (gzip, bzip2, xz, Zstandard, or the one file of a zip archive) as a stream that
    refuses to unpack more than the limit (``MAX_UNPACKED_BYTES``, or ``GZIP_RATIO`` times the file's size), with
    the name of what it holds (the file's name less its compression; a zip's: the name of its file)."""
    limit = max(MAX_UNPACKED_BYTES, GZIP_RATIO * path.stat().st_size)
    if path.name.lower().endswith(".zip"):
        from cabench.data.readers.common import only_member

        name, data = only_member(path, "zip archive", limit)
        if not name.lower().endswith(_ZIPPED_TABLES):
            raise CabenchError(f"{path}: {name}: cabench reads a CSV or JSONL table from a zip archive; unpack it "
                               "and give the file itself (parquet and compressed files are read as they are)")
        capped = _Capped(io.BytesIO(data), limit)
        return io.BufferedReader(capped), capped, name.lower()
    suffix = compression_suffix(path.name.lower())
    capped = _Capped(_COMPRESSED[suffix](path, "rb"), limit)
    return io.BufferedReader(capped), capped, path.name.lower().removesuffix(suffix)


def compression_suffix(name: str) -> str:
    """The suffix of a compressed file cabench unpacks (:data:`_COMPRESSED`, ``.zip``); empty for another."""
    return next((suffix for suffix in (*_COMPRESSED, ".zip") if name.endswith(suffix)), "")


def find_log_file(folder: Path) -> Path:
    """Return the log file of a dataset folder."""
    if folder.exists() and not folder.is_dir():
        raise CabenchError(f"{folder}: a file, not a dataset folder (a folder with logs.csv.gz and dataset.yaml; "
                           "`cabench data import` makes one from a log file)")
    if not folder.is_dir():
        raise CabenchError(f"{folder}: dataset folder not found; pass a folder with logs.csv.gz and dataset.yaml")
    found = [name for name in LOG_NAMES if (folder / name).is_file()]
    if len(found) > 1:  # one was read and the other ignored, an edit to it without effect
        raise CabenchError(f"{folder}: holds {' and '.join(found)}; a dataset has one log file: remove the others")
    if found:
        return folder / found[0]
    raise CabenchError(f"{folder}: no log file; expected one of {', '.join(LOG_NAMES)}")


class _Written(str):
    """A JSON number in a name column, kept as the text the line holds."""


def _parse_table(source: Path | io.BufferedReader, name: str, text: Iterable[str], fields: Iterable[str] = ()
                 ) -> pd.DataFrame:
    """A CSV or JSON-lines table (by its file ``name``) from a path or a stream of its text; the ``text`` columns
    (names and ids) are read as the text the file holds; of JSON lines, the nested ``fields`` a mapping names by
    their dotted paths are read out (:func:`_with_fields`)."""
    of = "the file" if isinstance(source, Path) else "the unpacked text"
    if name.endswith((".jsonl", ".ndjson")):
        data = source.read_bytes() if isinstance(source, Path) else source.read()
        said = _not_utf8(data, of=of)  # (before the mark goes: a byte is counted as the file holds it)
        if said is not None:
            raise _Said(said)
        data = data.removeprefix(codecs.BOM_UTF8)  # as a CSV's is: a text editor's mark, not part of the first line
        if b"NaN" in data or b"Infinity" in data:  # JSON has no such number; pandas reads them as missing values
            _no_constants(data)
        try:
            frame = pd.read_json(io.BytesIO(data), lines=True, dtype=False, precise_float=True)
        except (ValueError, TypeError) as exc:  # pandas says where in bytes (or fails on a line not an object)
            raise ValueError(_bad_line(data) or str(exc)) from None
        twice = _key_twice(data)
        if twice is not None:
            raise _Said(twice)
        frame = _with_fields(frame, fields)
        return _numbers_as_written(frame, data, [c for c in text if c in frame])
    table: Path | io.BytesIO
    if isinstance(source, Path):
        with source.open("rb") as head:
            _check_header(head.read(_HEADER_BYTES), of)
        table = source
    else:  # an unpacked stream: read once, the header checked from the same bytes
        data = source.read()
        _check_header(data[:_HEADER_BYTES], of)
        table = io.BytesIO(data)
    # text stays text ("NA", "null", "None" are ids and names; "1.0" is not "1"); only an empty cell is missing
    def parsed(**index: Any) -> pd.DataFrame:
        if isinstance(table, io.BytesIO):
            table.seek(0)
        return pd.read_csv(table, dtype=dict.fromkeys(text, str), keep_default_na=False, na_values=[""],
                           **_EXACT_FLOATS, **index)

    try:
        frame = parsed()
    except UnicodeDecodeError as exc:  # pandas says where in a chunk it read, not where in the file
        raise _Said(_not_utf8(source.read_bytes() if isinstance(source, Path) else data, of=of) or str(exc)) \
            from None
    if not isinstance(frame.index, pd.RangeIndex):  # every row holds more fields than the header names: pandas took
        # the first column for an index, and every name for the column after it
        if frame.shape[1] and frame.iloc[:, -1].isna().all():  # a delimiter ending every row (some exports)
            return parsed(index_col=False)
        if len(frame.columns) and no_header(str(frame.columns[0])):  # a line above the header: said by the import
            return frame
        raise _Said(f"every row holds more fields than the header's {frame.shape[1]} names: a column without a name "
                    "(the columns would be read shifted); name it in the header, or remove it")
    read = [i for i, column in enumerate(frame.columns) if column in _READ_BY_NAME]
    if read and frame.iloc[:, read[-1]].isna().any():  # a row cut short before a column read leaves it empty
        _check_row_lengths(source.read_bytes() if isinstance(source, Path) else data, list(frame.columns), read[-1])
    return frame


def no_header(first: str) -> bool:
    """Whether a table's first name, ``first``, shows its first line to be no header: a comment (``# exported
    ...``), or a spreadsheet's ``sep=,`` line; a column named ``#`` alone (row numbers) is a header's."""
    first = first.strip()
    return first != "#" and (first.startswith("#") or first.lower().startswith("sep="))


#: The columns cabench reads by their canonical names: a row cut short before one of them is refused.
_READ_BY_NAME = frozenset({*COLUMNS, *OPTIONAL_COLUMNS, *COST_SOURCES, "latency_ms"})


def _check_row_lengths(data: bytes, header: list[str], last: int) -> None:
    """Refuse a CSV row that ends before column ``last`` of ``header`` (the last cabench reads by name): a file cut
    off, or a line broken in two, whose cells pandas fills as empty, which would read as a call not measured.
    :class:`_Said` naming the line and the columns it lacks; rows of blanks (which pandas skips) and rows lacking
    only columns cabench does not read (an optional note left out) pass."""
    def short(row: list[str]) -> bool:
        return len(row) <= last and any(cell.strip() for cell in row)

    limit = csv.field_size_limit(2**31 - 1)  # pandas reads a field of any length (a long answer kept in a note)
    try:
        _refuse_short_rows(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")), header, last, short)
    except csv.Error:  # text the csv module reads otherwise than pandas: pandas' reading stands
        pass
    finally:
        csv.field_size_limit(limit)


def _refuse_short_rows(rows: Any, header: list[str], last: int, short: Callable[[list[str]], bool]) -> None:
    """The first row ``short`` says ends before column ``last``, refused (:func:`_check_row_lengths`)."""
    next((row for row in rows if row), None)  # the header
    for row in rows:
        if short(row):
            line = rows.line_num  # the line the row ends on
            lacks = [str(c) for c in header[len(row):last + 1] if c in _READ_BY_NAME]
            more = sum(1 for rest in rows if short(rest))
            also = f"; {more} more such row{'s' if more > 1 else ''}" if more else ""
            why = "a comment? a table holds none" if row[0].lstrip().startswith("#") else (
                "a row cut short, or broken across lines")
            raise _Said(f"line {line} has {len(row)} of the header's {len(header)} fields, without "
                        f"{first_three(lacks)} ({why}{also}); complete it or remove it")


_HEADER_BYTES = 1 << 20  # a header longer than this is checked on its first MiB


class _Said(ValueError):
    """What is wrong with a table's text in cabench's own words (not UTF-8, a row cut short): said whole, where
    another reader's message is cut to a line."""


def _not_utf8(data: bytes, whole: bool = True, of: str = "the file") -> str | None:
    """What is wrong with ``data`` as UTF-8 text, naming the line (UTF-16 text, or the first byte no UTF-8 text
    holds, as byte N ``of`` the file or of the unpacked text); None where it is UTF-8 (``whole=False``: the first
    bytes of a file, which may end inside a character)."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "UTF-32 text; cabench reads UTF-8: save the file as UTF-8"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\x00" in data[:4096]:
        return ("UTF-16 text (or binary data: NUL bytes, or a UTF-16 mark, at its start); cabench reads UTF-8: save "
                "the file as UTF-8 (a spreadsheet's \"CSV UTF-8\")")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data":  # a character cut where the bytes end
            if not whole:  # (where the bytes read end: the rest is read on)
                return None
            return (f"the text ends inside a character (byte {exc.start:,} of {of} begins one that never ends): a "
                    "file cut off? copy or export it again")
        line = data.count(b"\n", 0, exc.start) + 1
        return (f"not UTF-8 text: line {line} holds the byte 0x{data[exc.start]:02x} (byte {exc.start:,} of {of}), as "
                "Latin-1 or Windows-1252 write an accented letter; save the file as UTF-8")
    return None


def _check_header(data: bytes, of: str = "the file") -> None:
    """Refuse a CSV header that names a column twice (pandas would read the second as ``NAME.1``, and cabench the
    first without a word), or text not in UTF-8 (:func:`_not_utf8`, on the bytes read): ``ValueError`` naming the
    column and both places, or :class:`_Said` naming the line."""
    said = _not_utf8(data, whole=False, of=of)
    if said is not None:
        raise _Said(said)
    try:  # the header is the first line that is not empty, as pandas reads it; any line ending
        rows = csv.reader(io.StringIO(data.decode("utf-8-sig", errors="replace"), newline=None))
        first = next((row for row in rows if row), [])
    except csv.Error:  # not a header csv reads: pandas says what is wrong with the text, if anything
        return
    if len(first) == 1:  # a file of another separator (a spreadsheet's export in some locales) reads as one column
        found = [sep for sep in (";", "\t", "|") if len([c for c in first[0].split(sep) if c.strip()]) >= 2]
        if found:
            shown = "a tab" if found[0] == "\t" else f"'{found[0]}'"
            raise ValueError(f"the header reads as one column, its names separated by {shown}; cabench reads "
                             "comma-separated CSV: save the file with commas")
    seen: dict[str, int] = {}
    for place, column in enumerate(first, start=1):
        if not column:  # an unnamed column (a spreadsheet's trailing commas): pandas names each apart
            continue
        if column in seen:
            raise ValueError(f"the header names column '{column}' twice (columns {seen[column]} and {place}); keep "
                             "one, as cabench cannot tell which to read")
        seen[column] = place


def _no_constants(data: bytes) -> None:
    """Refuse a JSON-lines text with a bare ``NaN``, ``Infinity`` or ``-Infinity`` (Python writes them, JSON has no
    such number): ``ValueError`` naming the line. A missing value is ``null``; the CSV reader refuses the same
    cells."""
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not a JSON number (a missing value is null)")

    for number, line in enumerate(data.split(b"\n"), start=1):
        if b"NaN" in line or b"Infinity" in line:
            try:
                json.loads(line.decode("utf-8", errors="replace"), parse_constant=refuse)
            except ValueError as exc:
                if "is not a JSON number" in str(exc):
                    raise ValueError(f"line {number}: {exc}") from None


def _in_range(text: str) -> float:
    """A JSON number with a fraction or exponent as a double, refused where it has none (pandas cannot read it)."""
    value = float(text)
    if not math.isfinite(value):
        raise OverflowError(f"the number {text:.40} is beyond a double's range")
    return value


def _int_in_range(text: str) -> int:
    """A JSON whole number, refused beyond 64 bits (pandas cannot read it)."""
    value = int(text)
    if not -(2**63) <= value < 2**64:
        raise OverflowError(f"the number {text:.40} is beyond 64 bits")
    return value


def _bad_line(data: bytes) -> str | None:
    """Where a JSON-lines text first fails: ``line N: <what JSON says> (column C)``, a number out of range, or a
    line that is not an object; None when every line reads."""
    decode = json.JSONDecoder(parse_float=_in_range, parse_int=_int_in_range).decode
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            item = decode(line.decode("utf-8-sig"))
        except UnicodeDecodeError:
            return f"line {number}: not UTF-8 text"
        except json.JSONDecodeError as exc:
            return f"line {number}: {exc.msg} (column {exc.colno})"
        except RecursionError:
            return f"line {number}: JSON nested too deeply"
        except OverflowError as exc:
            return f"line {number}: {exc}"
        if type(item) is not dict:
            kind = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}.get(
                type(item), "a number")
            return f"line {number}: {kind}, not a JSON object"
    return None


def _key_twice(data: bytes) -> str | None:
    """Where a JSON-lines text first gives one key twice in an object (``{"correct": 0, "correct": 1}``), which
    pandas reads as its last value without a word: ``line N: ...``; None where no object does."""
    twice: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) < len(items) and not twice:
            seen: set[str] = set()
            twice.append(next(k for k, _ in items if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
        return out

    decode = json.JSONDecoder(object_pairs_hook=pairs).decode
    for number, line in enumerate(data.decode("utf-8").split("\n"), start=1):
        if line.strip():
            try:
                decode(line)
            except (ValueError, RecursionError):  # (read by pandas: not this check's to refuse)
                continue
            if twice:
                return (f"line {number}: key '{twice[0]:.60}' is given twice in one object (its values would be "
                        "read as the last); keep one")
    return None


_MISSING = object()


def _null(value: Any) -> bool:
    """A JSON null as pandas holds it (None, or NaN where a column's other cells are numbers)."""
    return value is None or (isinstance(value, float) and value != value)


class _NotObject(Exception):
    """A dotted path goes through a value that is no JSON object (``usage`` holding 5)."""


def _at(item: Any, parts: list[str]) -> Any:
    """The value at the dotted path ``parts`` in a JSON value (a key may hold dots itself: the longest key that
    matches is followed first), else :data:`_MISSING` (a key absent, or null on the way); :class:`_NotObject` where
    the path goes through a number, text or list."""
    if not parts:
        return _MISSING if item is None else item  # (a null is no value: a shorter key may lead to one)
    if _null(item) or (isinstance(item, (str, list)) and not item):
        return _MISSING  # (null, or an empty text or list where some exporters write an empty object)
    if not isinstance(item, dict):
        raise _NotObject(item)
    for cut in range(len(parts), 0, -1):
        key = ".".join(parts[:cut])
        if key in item:
            found = _at(item[key], parts[cut:])
            if found is not _MISSING:
                return found
    return _MISSING


def _with_fields(frame: pd.DataFrame, fields: Iterable[str]) -> pd.DataFrame:
    """A JSON-lines table with a column for each of ``fields`` (the source columns a mapping names) that names a
    field of a nested object by its dotted path (``usage.total_tokens``); on a line that also has a top-level field
    of that dotted name, the top-level one wins. Only what is named is read out: objects whose keys vary by line
    (log-probabilities by token) would make a column of every key."""
    named = [name for name in dict.fromkeys(fields) if "." in name]
    frame = frame.copy() if named else frame
    for name in named:
        parts = name.split(".")
        heads = [cut for cut in range(len(parts) - 1, 0, -1) if ".".join(parts[:cut]) in frame.columns]
        if not heads:
            continue
        columns = [(frame[".".join(parts[:cut])].tolist(), parts[cut:]) for cut in heads]  # the longest key first
        values = []
        for row in range(len(frame)):
            found = _MISSING
            for cells, rest in columns:  # on each line, the first top-level key that leads to the field
                try:
                    found = _at(cells[row], rest)
                except _NotObject as exc:
                    raise _Said(f"{data_row(row)}: '{name}' cannot be read: the field on its way holds "
                                f"{_short_json(exc.args[0])}, not an object") from None
                if found is not _MISSING:
                    break
            values.append(None if found is _MISSING else found)
        if name in frame.columns:  # a top-level field of this name on some lines wins there
            values = [v if _null(top) else top for top, v in zip(frame[name], values)]
        frame[name] = pd.Series(values, index=frame.index, dtype=object if any(
            isinstance(v, (str, bool, list, dict)) for v in values) else None)
    return frame


def _short_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _nested(item: dict, name: str) -> Any:
    try:
        found = _at(item, name.split("."))
    except _NotObject:
        return None
    return None if found is _MISSING else found


def _numbers_as_written(frame: pd.DataFrame, data: bytes, text: list[str]) -> pd.DataFrame:
    """``frame`` with the JSON numbers of its ``text`` columns as the lines write them (``1e3``, ``4.50``), where
    pandas holds the number (``1000.0``, ``4.5``)."""
    def number(value: Any) -> bool:
        return pd.api.types.is_number(value) and not pd.api.types.is_bool(value) and value == value

    numeric = [c for c in text if any(number(v) for v in frame[c])]
    if not numeric:
        return frame
    written: dict[str, list[str | None]] = {c: [] for c in numeric}
    for line in data.split(b"\n"):
        if line.strip():
            item = json.loads(line.decode("utf-8-sig"), parse_int=_Written, parse_float=_Written)
            for c in numeric:
                value = ((item[c] if item.get(c) is not None else _nested(item, c)) if type(item) is dict else None)
                written[c].append(str(value) if type(value) is _Written else None)
    frame = frame.copy()
    for c in numeric:
        if len(written[c]) == len(frame):
            frame[c] = pd.Series([v if w is None else w for w, v in zip(written[c], frame[c])], index=frame.index,
                                 dtype=object)
    return frame


def read_table(path: Path, text: Iterable[str] = IDENTITY_COLUMNS, fields: Iterable[str] = ()) -> pd.DataFrame:
    """Read a CSV or JSONL table (plain or compressed: :func:`_unpacked`) or a parquet table as strings/numbers
    (of JSON lines, with the nested ``fields`` named by dotted paths read out as columns);
    the ``text`` columns of a CSV or JSONL table (by default the canonical names and ids) as the text the file
    holds."""
    name = path.name.lower()
    packed = compression_suffix(name)
    if packed and name.removesuffix(packed).endswith(".parquet"):
        raise CabenchError(f"{path}: a compressed parquet file; give the parquet file itself (it compresses its own "
                           "columns)")
    if name.removesuffix(packed).endswith(".json"):  # (a compressed one too: its content is JSON)
        raise CabenchError(f"{path}: a .json file is not a log table; give CSV, CSV.gz, JSONL (one JSON "
                           "object per line) or parquet, or read a tool's JSON results with --format (inspect, "
                           "promptfoo, every-eval-ever)")
    capped = None
    text = list(text)
    with contextlib.suppress(OSError):
        if path.stat().st_size == 0:  # (a missing file is said below)
            raise CabenchError(f"{path}: an empty file; a log needs one row per (configuration, instance)")
    if name.endswith(_WORKBOOKS):
        raise CabenchError(f"{path}: a spreadsheet workbook ({next(s for s in _WORKBOOKS if name.endswith(s))}), which "
                           "cabench does not read; export the sheet as CSV (UTF-8, comma-separated) and give that")
    if name.endswith(_NOT_UNPACKED):
        raise CabenchError(f"{path}: a {next(s for s in _NOT_UNPACKED if name.endswith(s))} file, which cabench does "
                           "not unpack; give the log table as CSV or JSONL (plain, .gz, .bz2, .xz, .zst, or the one "
                           "file of a .zip) or parquet")
    try:
        if name.endswith(".parquet"):
            return pd.read_parquet(path)
        if not packed:
            return _parse_table(path, name, text, fields)
        stream, capped, inner = _unpacked(path)
        with stream:
            return _parse_table(stream, inner, text, fields)
    except ImportError as exc:
        raise CabenchError(f"{path}: reading parquet needs pyarrow: pip install 'cabench[parquet]', or use CSV") \
            from exc
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError, EOFError, zlib.error, lzma.LZMAError,
            zstd.ZstdError, RecursionError) as exc:
        if capped is not None and capped.given > capped.limit:
            raise CabenchError(f"{path}: unpacks to more than {capped.limit:,} bytes, cabench's limit for this "
                               "compressed file; a damaged or hostile file (unpack a genuine one first)") from None
        if isinstance(exc, _Said):
            raise CabenchError(f"{path}: {exc}") from None
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if len(first) > 160:
            first = first[:157] + "..."
        raise CabenchError(f"{path}: unreadable file ({first})") from exc


def read_metadata(folder: Path) -> dict[str, Any]:
    """Read ``dataset.yaml``; it must be a mapping with the keys of SPEC §1."""
    path = folder / META_NAME
    if not path.is_file():
        raise CabenchError(f"{path}: missing; a dataset folder needs {META_NAME} ({', '.join(META_KEYS)})")
    try:
        text = path.read_text()
        meta = load_yaml(text)
    except yaml.YAMLError as exc:
        raise CabenchError(f"{path}: not valid YAML ({yaml_problem(exc)})") from None
    except UnicodeDecodeError:
        raise CabenchError(f"{path}: not a text file; dataset.yaml is YAML") from None
    if not isinstance(meta, dict):
        raise CabenchError(f"{path}: must be a mapping with keys {', '.join(META_KEYS)}")
    missing = [k for k in META_KEYS if k not in meta]
    if missing:
        raise CabenchError(f"{path}: missing key(s) {', '.join(missing)}")
    check_dataset_keys(meta, f"{path}: ")
    _text_as_written(meta, text)
    if not isinstance(meta["surrogate"], bool):
        raise CabenchError(f"{path}: key 'surrogate' must be true or false")
    if not is_dataset_name(meta["name"]):
        raise CabenchError(f"{path}: name: expected a non-empty text on one line without '/', got "
                           f"{shown(meta['name'])}")
    check_missing(meta, f"{path}: ")
    check_title(meta, f"{path}: ")
    check_extra_columns(meta.get("extra_columns"), f"{path}: extra_columns")
    return meta


def is_dataset(path: Path) -> bool:
    """Whether ``path`` is a cabench dataset folder (it has ``dataset.yaml``)."""
    return path.is_dir() and (path / META_NAME).is_file()


def check_only_dataset_files(folder: Path, option: str) -> None:
    """Refuse, in one line naming the first three, files in dataset folder ``folder`` that an import does not write
    (:data:`DATASET_FILES`): replacing the folder (``option``: ``--force``, ``--replace``) would delete them."""
    others = sorted(p.name for p in folder.iterdir() if p.name not in DATASET_FILES)
    if others:
        raise CabenchError(f"{folder}: holds {first_three(others)} beside the "
                           f"dataset, which an import does not write; {option} would delete them: move them, or "
                           "pass another --out")


def check_missing(meta: dict[str, Any], where: str) -> None:
    """Refuse a ``missing`` of ``meta`` that is not one of the policies for holes in the logs (:data:`MISSING`), in
    one line starting with ``where``."""
    value = meta.get("missing", "error")
    if value not in MISSING:
        raise CabenchError(f"{where}missing: expected {', '.join(MISSING[:-1])} or {MISSING[-1]}, got {shown(value)}")


#: Unicode categories a dataset's title may not hold: control characters (a line break, a tab), line and paragraph
#: separators, and lone surrogates, which no file encoding can write. Spaces that print as nothing or as a space
#: (no-break, zero-width) may stand in a title, unlike a name: two titles that read alike name no two things.
_NOT_IN_A_TITLE = ("Cc", "Zl", "Zp", "Cs")


def check_title(meta: dict[str, Any], where: str) -> None:
    """Refuse a text ``title`` of ``meta`` that holds a character of :data:`_NOT_IN_A_TITLE` or U+FEFF (a zero-width
    no-break space, which matplotlib cannot write into a PDF), in one line starting with ``where``: it titles the
    figures and reports."""
    title = meta.get("title")
    bad = next((c for c in title if c == "\ufeff" or unicodedata.category(c) in _NOT_IN_A_TITLE), None) \
        if isinstance(title, str) else None
    if bad is not None:
        raise CabenchError(f"{where}title: holds {bad!r} ({shown(title)}); a title is text on one line, without "
                           "control characters or U+FEFF: it titles the figures and the reports")


def check_dataset_keys(meta: dict[str, Any], where: str) -> None:
    """Refuse a key of ``meta`` (a ``dataset.yaml``, or the ``dataset`` part of an import's mapping) that is not one
    of :data:`DATASET_KEYS`, in one line starting with ``where`` and naming the nearest key."""
    for key in meta:
        if key not in DATASET_KEYS:
            hint = did_you_mean(str(key), DATASET_KEYS, f"; allowed keys: {', '.join(DATASET_KEYS)} (a note of your "
                                "own goes under description or provenance)")
            raise CabenchError(f"{where}{key}: unknown key{hint}")


def is_dataset_name(name: Any) -> bool:
    """A dataset name is non-empty one-line text without '/' (it is part of every experiment's identity)."""
    return isinstance(name, str) and bool(name.strip()) and "/" not in name and not unprintable(name)


def _text_as_written(meta: dict[str, Any], text: str) -> None:
    """Text keys (``name: 1e3``) that YAML reads as numbers, as the text the file holds.

    Earlier cabench versions wrote such names unquoted; the characters in the
    file say what was meant, where the number would not (``1e3`` and ``1000.0``
    are the same number).
    """
    if not any(type(meta.get(key)) in (int, float) for key in _TEXT_KEYS):
        return
    for key_node, value_node in yaml.compose(text, Loader=Loader).value:
        if key_node.value in _TEXT_KEYS and type(meta.get(key_node.value)) in (int, float):
            meta[key_node.value] = value_node.value


def read_logs(folder: Path, missing: str = "error", extra: tuple[str, ...] = ()) -> tuple[pd.DataFrame, Path]:
    """Read and validate the logs of a dataset folder; ``missing`` says what to do with holes.

    The optional columns the logs have and the ``extra`` ones the dataset declares are kept, validated.
    """
    from cabench.data.holes import fill_holes

    path = find_log_file(folder)
    frame = read_table(path)
    if missing != "error":
        frame, _ = fill_holes(frame, missing, str(path))
    return validate_logs(frame, str(path), extra), path


def write_logs(frame: pd.DataFrame, path: Path, compresslevel: int = 6, extra: tuple[str, ...] = ()) -> None:
    """Write canonical logs as a byte-reproducible gzipped CSV (mtime 0).

    The canonical columns come first, then the optional ones the frame has and the declared ``extra`` ones.

    Level 6 compresses 10^6 rows three times faster than 9 for a 3% larger
    file; the shipped surrogate logs were written at 9 (``make surrogate`` still is).
    """
    buffer = io.StringIO()
    frame[kept_columns(frame.columns, extra)].to_csv(buffer, index=False, lineterminator="\n")
    data = buffer.getvalue().encode()
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                                compresslevel=compresslevel) as gz:
        gz.write(data)


def write_metadata(meta: dict[str, Any], path: Path) -> None:
    """Write ``dataset.yaml`` with keys in insertion order, every text quoted where YAML would read a number."""
    path.write_text(dump_yaml(meta))
