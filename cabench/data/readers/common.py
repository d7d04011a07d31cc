"""Shared pieces of the tool-format readers: JSON reading with one-line errors, and instance keys.

Every reader returns a :class:`Read`: rows with the canonical columns it can
fill (SPEC §1) plus ``failed`` (the call itself failed: an API error, a
timeout), and ``info`` for ``dataset.yaml``'s provenance (the files read, what
was left out and why). Columns a source does not record stay missing (NaN);
the importer then asks for them with ``--set``.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from cabench.errors import CabenchError

#: Columns a reader may fill; ``config_id`` is built by the importer from the metadata when absent.
READ_COLUMNS = ("config_id", "model", "temperature", "max_new_tokens", "prompting", "instance_id", "correct",
                "latency_s", "tokens", "failed")


@dataclass
class Read:
    """What a reader found: canonical rows (plus ``failed``) and provenance facts.

    Small sources give ``rows`` (one mapping per row); large ones give
    ``columns`` (one list per column), which keeps 10^6 rows well under a
    gigabyte.
    """

    rows: list[dict[str, Any]]
    files: list[Path]
    info: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, list[Any]] | None = None

    def frame(self) -> pd.DataFrame:
        if self.columns is not None:
            frame = pd.DataFrame(self.columns)
        else:
            frame = pd.DataFrame(self.rows, columns=[c for c in READ_COLUMNS if any(c in r for r in self.rows[:1])])
        for col in READ_COLUMNS:
            if col not in frame:
                frame[col] = False if col == "failed" else None
        return frame


def json_file(path: Path, what: str) -> Any:
    """One JSON document; a cut or damaged file is one line naming the file and position."""
    try:
        with open(path, "rb") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise CabenchError(f"{path}: not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); "
                           f"a cut or damaged {what}") from None
    except UnicodeDecodeError:
        raise CabenchError(f"{path}: not UTF-8 text; expected a {what}") from None
    except OSError as exc:
        raise CabenchError(f"{path}: unreadable ({exc.strerror})") from None


def json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line of a JSON-lines file, streamed."""
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CabenchError(f"{path}: line {number}: not JSON ({exc.msg}); a cut or damaged file") \
                        from None
                if type(item) is not dict:
                    raise CabenchError(f"{path}: line {number}: expected a JSON object")
                yield number, item
    except UnicodeDecodeError:
        raise CabenchError(f"{path}: not UTF-8 text; expected JSON lines") from None
    except OSError as exc:
        raise CabenchError(f"{path}: unreadable ({exc.strerror})") from None


def zip_json(archive: zipfile.ZipFile, member: str, path: Path) -> Any:
    """One JSON member of a zip archive (an Inspect ``.eval`` log)."""
    try:
        return json.loads(archive.read(member))
    except KeyError:
        raise CabenchError(f"{path}: no {member} inside; a cut or damaged archive") from None
    except json.JSONDecodeError as exc:
        raise CabenchError(f"{path}: {member}: not valid JSON ({exc.msg})") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise CabenchError(f"{path}: {member}: unreadable ({exc})") from None


Where = str | tuple[str, int]  # a place in a file: text, or (file, line) formatted only for an error


def _place(where: Where) -> str:
    return where if isinstance(where, str) else f"{where[0]}: line {where[1]}"


def need(item: Any, key: str, kind: type | tuple[type, ...], where: Where) -> Any:
    """``item[key]``, required and of ``kind`` (``bool`` is never a number)."""
    value = item.get(key) if type(item) is dict else None
    if value is not None and type(value) in _types(kind):
        return value
    where = _place(where)
    if not isinstance(item, dict) or value is None:
        raise CabenchError(f"{where}: missing field '{key}'")
    return check(value, kind, f"{where}: '{key}'")


@cache
def _types(kind: type | tuple[type, ...]) -> frozenset[type]:
    """The exact types JSON values of ``kind`` have (an int is a float here; a bool is neither)."""
    kinds = set(kind if isinstance(kind, tuple) else (kind,))
    if float in kinds:
        kinds.add(int)
    return frozenset(kinds)


def check(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    """``value`` when its JSON type is ``kind``, else a one-line error (``bool`` is never a number)."""
    if type(value) in _types(kind):
        return value
    kinds = kind if isinstance(kind, tuple) else (kind,)
    numeric = any(k in (int, float) for k in kinds)
    want = "a number" if numeric and str not in kinds else " or ".join(k.__name__ for k in kinds)
    raise CabenchError(f"{where} is {value!r}, not {want}")


def number(item: Any, key: str, where: Where) -> float | None:
    """An optional number: ``None`` when absent or null, an error when of another type."""
    value = item.get(key) if type(item) is dict else None
    if value is None:
        return None
    if type(value) is float or type(value) is int:
        return float(value)
    return float(check(value, (int, float), f"{_place(where)}: '{key}'"))


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
