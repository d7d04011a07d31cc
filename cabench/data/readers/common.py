"""Shared pieces of the tool-format readers: JSON reading with one-line errors, typed fields, and instance keys.

Every reader returns a :class:`Read`: rows with the canonical columns it can
fill (SPEC §1) plus ``failed`` (the call itself failed: an API error, a
timeout), where each row was read (``file`` and ``position``, for error
messages), and ``info`` for ``dataset.yaml``'s provenance (the files read, what
was left out and why). Columns a source does not record stay missing (NaN);
the importer then asks for them with ``--set``.

Sources are untrusted: JSON nested too deeply to parse, numbers of thousands of
digits, archive members that unpack to more than :data:`MAX_MEMBER_BYTES`, a
field of the wrong JSON type and a negative token count are each one
:class:`CabenchError` line naming the file and the field.

Zip archives are read with the ``zipfile`` of Python 3.14, which reads
Zstandard members (what inspect_ai writes); before 3.14 that module comes from
the ``backports.zstd`` package.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from cabench.data.schema import shown, unprintable, unprintable_error
from cabench.errors import CabenchError

if sys.version_info >= (3, 14):
    import zipfile

    from compression.zstd import ZstdError
else:
    from backports.zstd import ZstdError, zipfile

#: Columns a reader may fill; ``config_id`` is built by the importer from the metadata when absent.
READ_COLUMNS = ("config_id", "model", "temperature", "max_new_tokens", "prompting", "instance_id", "correct",
                "latency_s", "tokens", "failed")
#: A call's token counts apart, for a price table's input and output rates: kept when every call the import keeps
#: has them (:func:`cabench.data.importer.split_calls`).
TOKEN_PARTS = ("prompt_tokens", "completion_tokens")


def token_split(tokens: Sequence[Any], prompts: Sequence[Any]) -> tuple[bool, bool]:
    """Of a reader's rows (their ``tokens`` and ``prompt_tokens``): whether it keeps :data:`TOKEN_PARTS` (some call
    has them), and whether a call with tokens lacks them, which the import then decides after its drops
    (``parts_unsplit``: :func:`cabench.data.importer.split_calls`)."""
    kept = any(p is not None for p in prompts)
    return kept, kept and any(t is not None and p is None for t, p in zip(tokens, prompts))
#: A call's cost in dollars as the tool recorded it: kept when every call the import keeps has it above 0
#: (:func:`cabench.data.importer.priced_calls`).
COST_USD = "cost_usd"
#: Where each row was read: its file and its position there (a line, an entry, a sample).
ORIGIN_COLUMNS = ("file", "position")
#: When a row's run started (seconds since the epoch), for readers whose source records it; repeated runs of a
#: configuration are ordered by it, then by :data:`REPEAT`, then by file and position.
STARTED = "started"
#: Which run of its instance a row is within one run of the tool, for sources that run an instance again (Inspect's
#: ``epoch``, promptfoo's ``testIdx``): it orders an instance's repeats after :data:`STARTED`.
REPEAT = "repeat"
#: What tells a configuration apart beyond its model, temperature, generation limit and prompting, for readers whose
#: source records more settings (an Inspect log's ``reasoning_effort=high``); empty where nothing does. The importer
#: adds it to the config_id it derives from the metadata.
VARIANT = "variant"


def shown_setting(name: str, text: str) -> str:
    """A setting as a config_id's :data:`VARIANT` shows it: ``name=value``, a long or unprintable value by 8 hex
    digits of its SHA-256 (``instructions#1a2b3c4d``)."""
    plain = len(text) <= 24 and all(c.isalnum() or c in "._-+" for c in text)
    return f"{name}={text}" if plain else f"{name}#{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def setting_text(value: Any) -> str:
    """A setting's value as text, to compare and show: text as it is, anything else as sorted JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def setting_variants(runs: list[tuple[Any, str, dict[str, str]]]) -> list[str]:
    """Per run (``runs``: each run's configuration key, its task, and its settings beyond the key, as text), the
    :data:`VARIANT` that tells its configuration apart from other runs' of the same key: the settings that differ
    between such runs of one task, each run showing its own value of each (``unset`` where it has none), in name
    order; empty where no task's runs differ. A setting that differs between tasks only is the tasks' own."""
    differ: dict[Any, set[str]] = {}
    alike: dict[tuple[Any, str], list[dict[str, str]]] = {}
    for key, task, settings in runs:
        alike.setdefault((key, task), []).append(settings)
    for (key, _), group in alike.items():
        names = {k for settings in group for k in settings}
        differ.setdefault(key, set()).update(k for k in names if len({s.get(k) for s in group}) > 1)
    return [",".join(shown_setting(k, settings.get(k, "unset")) for k in sorted(differ[key]))
            for key, _, settings in runs]


#: Text columns a reader fills, whose values are written to CSV files and YAML.
_TEXT_COLUMNS = ("config_id", "model", "prompting", "instance_id")
#: pandas before 3.0 keeps text as Python objects; from 3.0 on, as strings that must encode (a lone surrogate fails).
_OBJECT_TEXT = int(pd.__version__.split(".")[0]) < 3
#: The most bytes unpacked from one member of a zip archive (an Inspect ``.eval`` log): a few megabytes of archive
#: can hold a member of gigabytes, which is refused without being unpacked.
MAX_MEMBER_BYTES = 512 * 2**20


#: The instance splits a HELM run records, and ``all`` of them.
SPLITS = ("test", "valid", "all")


@dataclass(frozen=True)
class ReadOptions:
    """What the import asks of a reader: the score to read (``--metric NAME[.KEY]``, ``None``: the source's own)
    and, for sources that record splits (HELM), the instances' split (``--split``)."""

    metric: str | None = None
    split: str = "test"

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise CabenchError(f"--split: '{self.split}' is not one of {', '.join(SPLITS)}")


@dataclass
class Read:
    """What a reader found: canonical rows (plus ``failed`` and their origin) and provenance facts.

    Small sources give ``rows`` (one mapping per row); large ones give
    ``columns`` (one list per column), which keeps 10^6 rows well under a
    gigabyte. ``at`` formats a row's ``position`` for messages (``line {}``,
    ``entry {}``).
    """

    rows: list[dict[str, Any]]
    files: list[Path]
    info: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, list[Any]] | None = None
    at: str = "line {}"

    def frame(self) -> pd.DataFrame:
        """The rows as a frame with every column of ``READ_COLUMNS`` (and the origin columns the reader gave)."""
        try:
            if self.columns is not None:
                frame = pd.DataFrame(self.columns)
            else:
                first = self.rows[:1]
                columns = (*READ_COLUMNS, *TOKEN_PARTS, COST_USD, *ORIGIN_COLUMNS, STARTED, REPEAT, VARIANT)
                frame = pd.DataFrame(self.rows, columns=[c for c in columns if any(c in r for r in first)])
            if _OBJECT_TEXT:  # text kept as Python objects, which hold a lone surrogate without complaint
                for col in (c for c in _TEXT_COLUMNS if c in frame):
                    frame[col].str.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate (a JSON escape such as \ud800): no encoding holds it
            raise self._unencodable(exc) from None
        for col in (*READ_COLUMNS, STARTED, REPEAT):
            if col not in frame:
                frame[col] = False if col == "failed" else None
        return frame

    def _unencodable(self, exc: UnicodeEncodeError) -> CabenchError:
        """The error naming the first text value that holds a character no encoding can write."""
        rows = self.rows if self.columns is None else (dict(zip(self.columns, values))
                                                       for values in zip(*self.columns.values()))
        for row in rows:
            for column, value in row.items():
                if isinstance(value, str) and unprintable(value):
                    return unprintable_error(str(row["file"]), column, value, self.at.format(row["position"]))
        return CabenchError(f"{', '.join(map(str, self.files))}: text that no encoding can write ({exc.reason})")

    def place(self, file: Any, position: Any) -> str:
        """Where a row was read, as a message names it: ``<file>: line 12``."""
        return f"{file}: {self.at.format(position)}"


_decode = json.JSONDecoder().decode  # json.loads without its per-call argument checks


def _unparsable(exc: RecursionError | ValueError, where: str) -> CabenchError:
    """The one line for JSON text that parses to no value: nested too deeply, or a number too long to convert."""
    if isinstance(exc, RecursionError):
        return CabenchError(f"{where}: JSON nested too deeply to read; a damaged or hostile file")
    return CabenchError(f"{where}: unreadable JSON ({str(exc).split(':')[0]}); a damaged or hostile file")


def json_file(path: Path, what: str, one_document: str = "") -> Any:
    """One JSON document; a cut, damaged or hostile file is one line naming the file and position, and JSON Lines
    (a document per line) says so, with ``one_document``: how the tool writes one document."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        if not data.strip():
            raise CabenchError(f"{path}: the {what} is empty ({len(data)} bytes)")
        return json.loads(data)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and exc.colno == 1:  # a second document on the next line: JSON Lines
            raise CabenchError(f"{path}: one JSON document per line (JSON Lines), where a {what} is a single "
                               f"document{'; ' + one_document if one_document else ''}") from None
        raise CabenchError(f"{path}: not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); "
                           f"a cut or damaged {what}") from None
    except UnicodeDecodeError:
        raise CabenchError(f"{path}: not UTF-8 text; expected a {what}") from None
    except (RecursionError, ValueError) as exc:
        raise _unparsable(exc, str(path)) from None
    except OSError as exc:
        raise CabenchError(f"{path}: unreadable ({exc.strerror})") from None


def json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line of a JSON-lines file, streamed."""
    try:
        with open(path, encoding="utf-8-sig") as fh:  # a byte order mark before the first line is no text
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    item = _decode(line)
                except json.JSONDecodeError as exc:
                    raise CabenchError(f"{path}: line {number}: not JSON ({exc.msg}); a cut or damaged file") \
                        from None
                except (RecursionError, ValueError) as exc:
                    raise _unparsable(exc, f"{path}: line {number}") from None
                if type(item) is not dict:
                    raise CabenchError(f"{path}: line {number}: expected a JSON object")
                yield number, item
    except UnicodeDecodeError:
        raise CabenchError(f"{path}: not UTF-8 text; expected JSON lines") from None
    except OSError as exc:
        raise CabenchError(f"{path}: unreadable ({exc.strerror})") from None


def _member(archive: zipfile.ZipFile, member: str, where: str, limit: int | None = None) -> bytes:
    """The bytes of one archive member, never unpacking more than ``limit`` (headers can lie; default
    :data:`MAX_MEMBER_BYTES`, read when called)."""
    limit = MAX_MEMBER_BYTES if limit is None else limit
    info = archive.getinfo(member)
    if info.file_size <= limit:
        with archive.open(info) as fh:
            data = fh.read(limit + 1)  # never more, whatever the stream yields (CPython's stops at the header's size)
        if len(data) <= limit:
            return data
    raise CabenchError(f"{where}: unpacks to more than {limit:,} bytes, cabench's limit for one member; "
                       "a damaged or hostile archive")


@contextmanager
def zip_archive(path: Path, what: str) -> Iterator[zipfile.ZipFile]:
    """A zip archive open for reading its members (stored, Deflate or Zstandard); one line when it is not one."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, EOFError, ValueError):
        try:
            with open(path, "rb") as fh:
                json_text = fh.read(64).lstrip().startswith((b"{", b"["))
        except OSError:
            json_text = False
        if json_text:  # a JSON document under another name: its name, not its content, is wrong
            raise CabenchError(f"{path}: holds JSON, not a zip archive; a JSON log is read by its name ending in "
                               f".json (rename it)") from None
        raise CabenchError(f"{path}: not a zip archive; a cut or damaged {what}") from None
    except OSError as exc:
        raise CabenchError(f"{path}: unreadable ({exc.strerror or exc})") from None
    with archive:
        yield archive


#: What reading a zip member raises when the member cannot be read (damaged, encrypted, a method Python lacks).
UNZIP_ERRORS = (zipfile.BadZipFile, zlib.error, ZstdError, EOFError, OSError, NotImplementedError, RuntimeError)


def _unread(where: str, exc: BaseException) -> CabenchError:
    said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "encrypted" in said:  # (Python's message shows its own object)
        said = "encrypted; cabench reads archives without a password"
    return CabenchError(f"{where}: unreadable ({said})")


def only_member(path: Path, what: str, limit: int | None = None) -> tuple[str, bytes]:
    """The name and bytes (at most ``limit``, default :data:`MAX_MEMBER_BYTES`) of the one file of a zip archive,
    folders and the ``__MACOSX`` copies a Mac adds passed over; one line when it holds another number of files or
    cannot be read."""
    with zip_archive(path, what) as archive:
        files = [m.filename for m in archive.infolist() if not m.is_dir() and not m.filename.startswith("__MACOSX/")]
        if len(files) != 1:
            raise CabenchError(f"{path}: a zip archive of {len(files)} files; cabench reads one table from a zip: "
                               "unpack it and give the log file")
        try:
            return files[0], _member(archive, files[0], f"{path}: {files[0]}", limit)
        except UNZIP_ERRORS as exc:
            raise _unread(f"{path}: {files[0]}", exc) from None


def zip_json(archive: zipfile.ZipFile, member: str, path: Path) -> Any:
    """One JSON member of a zip archive (an Inspect ``.eval`` log), in one line when it cannot be read."""
    where = f"{path}: {member}"
    try:
        return json.loads(_member(archive, member, where))
    except KeyError:
        raise CabenchError(f"{path}: no {member} inside; a cut or damaged archive") from None
    except json.JSONDecodeError as exc:
        raise CabenchError(f"{where}: not valid JSON ({exc.msg})") from None
    except UnicodeDecodeError:
        raise CabenchError(f"{where}: not UTF-8 text; a damaged archive") from None
    except (RecursionError, ValueError) as exc:
        raise _unparsable(exc, where) from None
    except UNZIP_ERRORS as exc:
        raise _unread(where, exc) from None


Where = str | tuple[str, int]  # a place in a file: text, or (file, line) formatted only for an error
_NAMES = {dict: "an object", list: "a list", str: "text", bool: "bool"}


def _place(where: Where) -> str:
    return f"{where[0]}: line {where[1]}" if isinstance(where, tuple) else str(where)


@cache
def _types(kind: type | tuple[type, ...]) -> frozenset[type]:
    """The exact types JSON values of ``kind`` have (an int is a float here; a bool is neither)."""
    kinds = set(kind if isinstance(kind, tuple) else (kind,))
    if float in kinds:
        kinds.add(int)
    return frozenset(kinds)


@cache
def _wanted(kind: type | tuple[type, ...]) -> str:
    """``kind`` as a message says it: ``an object``, ``text or a whole number``."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = [_NAMES[k] for k in kinds if k in _NAMES]
    if float in kinds or int in kinds:
        names.append("a number" if float in kinds else "a whole number")
    return " or ".join(names)


def check(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    """``value`` when its JSON type is ``kind``, else a one-line error (``bool`` is never a number)."""
    if type(value) in _types(kind):
        return value
    raise CabenchError(f"{where} is {shown(value)}, not {_wanted(kind)}")


@cache
def _steps(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def field_at(item: Any, path: str, kind: type | tuple[type, ...], where: Where, default: Any = None) -> Any:
    """The value at dotted ``path`` in ``item`` (``plan.config``), of JSON type ``kind``.

    ``default`` when a step of the path is absent or null; one line naming
    ``where`` and the path when the value, or a step on the way, has another
    type.
    """
    value = item
    for depth, key in enumerate(_steps(path)):
        if type(value) is not dict:
            if value is None:
                return default
            raise _not_object(value, path, depth, where)
        value = value.get(key)
    if value is None:
        return default
    if type(value) in _types(kind):
        return value
    return check(value, kind, f"{_place(where)}: '{path}'")


def _not_object(value: Any, path: str, depth: int, where: Where) -> CabenchError:
    """The error for a step ``depth`` of ``path`` that holds ``value`` where an object was expected."""
    if depth == 0:
        return CabenchError(f"{_place(where)}: expected an object, got {shown(value)}")
    return CabenchError(f"{_place(where)}: '{'.'.join(_steps(path)[:depth])}' is {shown(value)}, not an object")


def need(item: Any, key: str, kind: type | tuple[type, ...], where: Where) -> Any:
    """``item[key]``, required and of ``kind`` (``bool`` is never a number)."""
    value = item.get(key) if type(item) is dict else None
    if value is not None and type(value) in _types(kind):
        return value
    value = field_at(item, key, kind, where)
    if value is None:
        given = type(item) is dict and key in item  # present and null: say so, it is no missing field
        raise CabenchError(f"{_place(where)}: {f'field {key!r} is null' if given else f'missing field {key!r}'}")
    return value


def number(item: Any, path: str, where: Where) -> float | None:
    """An optional finite number at ``path``: ``None`` when absent or null, an error when of another type."""
    value = field_at(item, path, (int, float), where)
    if type(value) is float and math.isfinite(value) or value is None:
        return value
    try:
        value = float(value)
    except OverflowError:  # an integer beyond a float's range
        value = math.inf
    if not math.isfinite(value):
        raise CabenchError(f"{_place(where)}: '{path}' is {value}, not a finite number")
    return value


def duration(item: Any, path: str, where: Where) -> float | None:
    """An optional time in seconds at ``path``: a finite number that is never negative."""
    value = number(item, path, where)
    if value is not None and value < 0:
        raise CabenchError(f"{_place(where)}: '{path}' is {value:g}, a negative time; a damaged log")
    return value


def token_count(item: Any, path: str, where: Where) -> float | None:
    """An optional token count at ``path``: a finite number that is never negative."""
    value = number(item, path, where)
    if value is not None and value < 0:
        raise CabenchError(f"{_place(where)}: '{path}' is {value:g}, a negative token count; a damaged log")
    return value


#: Score texts and their value in [0, 1]: Inspect's grades (``C`` correct, ``P`` partial, ``I`` incorrect, ``N`` no
#: answer, as its ``value_to_float`` counts them) and plain words, read without regard to case.
SCORE_TEXTS = {"c": 1.0, "p": 0.5, "i": 0.0, "n": 0.0, "correct": 1.0, "incorrect": 0.0, "true": 1.0, "false": 0.0,
               "yes": 1.0, "no": 0.0, "1": 1.0, "0": 0.0}


def correctness(value: Any, where: str) -> float:
    """A score as the canonical ``correct``, a number in [0, 1] (SPEC §1), the same for every reader.

    True/false are 1/0, a number in [0, 1] is kept (a fraction is partial
    credit), and a grade text is counted as :data:`SCORE_TEXTS` says;
    anything else is one line naming ``where``.
    """
    if type(value) is bool:
        return float(value)
    if type(value) in (int, float):
        if 0 <= value <= 1:
            return float(value) + 0.0  # -0.0 is 0.0 (written as -0.0 otherwise)
        raise CabenchError(f"{where}: score {shown(value)} is outside [0, 1]; cabench's correct is a score in [0, 1] "
                           "(1 correct, 0 incorrect, a fraction for partial credit)")
    if type(value) is str and value.strip().lower() in SCORE_TEXTS:
        return SCORE_TEXTS[value.strip().lower()]
    raise CabenchError(f"{where}: score {shown(value)} is neither true/false, a number in [0, 1] nor a grade "
                       "(C, P, I, N)")


def metric_parts(metric: str | None, names: Any) -> tuple[str | None, str | None]:
    """``--metric NAME[.KEY]`` as (NAME, KEY): the whole text when the source has a score of that name, else the
    text split at its last dot (KEY picks one key of a score that holds several)."""
    if metric is None or metric in names or "." not in metric:
        return metric, None
    name, _, key = metric.rpartition(".")
    return name, key


def instance_keys(groups: list[str], ids: list[str]) -> list[str]:
    """Instance ids, prefixed by their group (task, scenario) only when the source holds several groups."""
    if len(set(groups)) <= 1:
        return ids
    return [f"{g}/{i}" for g, i in zip(groups, ids)]


def files_under(source: Path, patterns: tuple[str, ...], what: str) -> list[Path]:
    """``source`` itself when it is a file, else the files under it matching ``patterns`` (sorted)."""
    if source.is_file():
        return [source]
    if not source.is_dir():
        raise CabenchError(f"{source}: not found; give {what}")
    found = sorted({p for pattern in patterns for p in source.rglob(pattern) if p.is_file()})
    if not found:
        raise CabenchError(f"{source}: no {' or '.join(patterns)} files under it; give {what}")
    return found
