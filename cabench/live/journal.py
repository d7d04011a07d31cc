"""The files a live run appends to: ``calls.jsonl`` (the journal) and ``logs.csv`` (the outcomes).

The journal has two kinds of lines, each flushed and fsync'd before it counts:

* ``{"key", "start", "config", "instance", "worst", "worst_tokens"}``, written
  before an attempt is sent (the first, and each retry the budget admits);
* the finished call: its outcome (with ``cost``, the outcome's cost) and
  ``charged``, what every attempt of it cost against the budget
  (:mod:`cabench.live.charges`).

``worst``, ``cost`` and ``charged`` are in the run's cost unit (tokens,
completion tokens or dollars); ``worst_tokens`` and ``charged_tokens`` count
the same in tokens. Journals written before costs had units hold tokens only
(read as both). On resume, attempts started but never finished (a kill
mid-call) are charged their worst case in a ``lost`` record, and the call is
made again. A last line cut by a kill is dropped; any other line that is not a
call record is an error naming the line.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from cabench.errors import CabenchError
from cabench.jsonio import strict_dumps, strict_loads
from cabench.storage import named, write_atomic

LOG_COLUMNS = ("config_id", "model", "temperature", "max_new_tokens", "prompting", "instance_id", "correct",
               "latency_s", "tokens", "prompt_tokens", "completion_tokens")
USD_LOG_COLUMN = "cost_usd"  # logged when the cost unit is dollars
NUMBER_FIELDS = ("charged", "charged_tokens", "tokens", "prompt_tokens", "completion_tokens", "cost", "worst",
                 "worst_tokens", "correct", "latency_s")
LOG_FIELDS = (("model", "prompting"), ("temperature", "max_tokens", "correct", "latency_s", "tokens"))  # ok calls
KEY = re.compile(r"[pc]:\d+:\d+|e:\d+")  # profiling / collect (configuration, instance), or the method's n-th ask


def charged(record: dict[str, Any], tokens: bool = False) -> float:
    """What a finished record cost against the budget in the cost unit, or with ``tokens`` in tokens
    (``tokens`` in journals written before ``charged``)."""
    spent = record.get("charged", record.get("tokens"))
    return float((record.get("charged_tokens", spent) if tokens else spent) or 0.0)


class Journal:
    """``calls.jsonl``: every attempt's start and every finished call."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "calls.jsonl"
        self.done: dict[str, dict[str, Any]] = {}  # key -> its last finished record
        self.charges: dict[str, float] = {}  # key -> charged over all its finished records, in the cost unit
        self.token_charges: dict[str, float] = {}  # the same in tokens
        self.records: list[dict[str, Any]] = []  # every finished record, in order
        open_starts = self._load() if self.path.exists() else {}
        self._lock = threading.Lock()
        self._fh = open(self.path, "a", encoding="utf-8")
        for key, starts in open_starts.items():
            self.record({"key": key, "config": starts[0]["config"], "instance": starts[0]["instance"],
                         "ok": False, "lost": True, "attempts": [], "tokens": 0.0,
                         "charged": float(sum(s["worst"] for s in starts)),
                         "charged_tokens": float(sum(s.get("worst_tokens", s["worst"]) for s in starts)),
                         "error": f"{len(starts)} attempt(s) in flight when the run was killed; charged the worst "
                                  "case and made again"})

    def _load(self) -> dict[str, list[dict[str, Any]]]:
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            try:
                self._check(strict_loads(data[cut:]), data.count(b"\n") + 1)
                data += b"\n"  # a whole last record whose newline was not written
                _append_newline(self.path)
            except (ValueError, RecursionError, CabenchError):
                data = data[:cut]  # a line cut by a kill: that attempt is still open below
                os.truncate(self.path, cut)
        open_starts: dict[str, list[dict[str, Any]]] = {}
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = strict_loads(line)
            except (ValueError, RecursionError):
                raise CabenchError(f"{self.path}: line {number} is not JSON; the journal was edited or damaged "
                                   "(remove that line to resume, or pass another --out)") from None
            self._check(record, number)
            if record.get("start"):
                open_starts.setdefault(record["key"], []).append(record)
            else:
                open_starts.pop(record["key"], None)
                if record["ok"]:
                    record.setdefault("cost", record["tokens"])  # a journal from before costs had units
                self._add(record)
        return open_starts

    def _check(self, record: Any, number: int) -> None:
        """One line naming the journal line when ``record`` is not a call record."""
        def bad(why: str) -> CabenchError:
            return CabenchError(f"{self.path}: line {number} {why}; the journal was edited or damaged (remove that "
                                "line to resume, or pass another --out)")
        if not isinstance(record, dict):
            raise bad(f"is a JSON {type(record).__name__}, not a call record")
        for name in ("key", "config", "instance"):
            if not isinstance(record.get(name), str):
                raise bad(f"has no text '{name}'")
        if not KEY.fullmatch(record["key"]):
            raise bad(f"has key {record['key'][:40]!r}, not one cabench writes")
        if not record.get("start") and not isinstance(record.get("ok"), bool):
            raise bad("has no true/false 'ok'")
        texts, numbers = ((), ("worst",)) if record.get("start") else LOG_FIELDS if record["ok"] else ((), ())
        for name in texts:
            if not isinstance(record.get(name), str):
                raise bad(f"has no text '{name}'")
        for name in NUMBER_FIELDS + numbers:
            value = record.get(name)
            if value is None and name not in numbers:
                continue
            if (isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value) > 1e15
                    or not math.isfinite(value) or value < 0):
                raise bad(f"has '{name}' {str(value)[:40]!r}, not a number of 0 or more")
        attempts = record.get("attempts", [])
        if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
            raise bad("has 'attempts' that is not a list of objects")

    def _add(self, record: dict[str, Any]) -> None:
        self.done[record["key"]] = record
        key = record["key"]
        self.charges[key] = self.charges.get(key, 0.0) + charged(record)
        self.token_charges[key] = self.token_charges.get(key, 0.0) + charged(record, tokens=True)
        self.records.append(record)

    def _write(self, record: dict[str, Any]) -> None:
        _append(self._fh, self.path, strict_dumps(record) + "\n")

    def start(self, key: str, config: str, instance: str, worst: float, worst_tokens: float) -> None:
        """Journal an attempt about to be sent (charged ``worst``, ``worst_tokens`` in tokens, if it never
        finishes)."""
        with self._lock:
            self._write({"key": key, "start": True, "config": config, "instance": instance, "worst": worst,
                         "worst_tokens": worst_tokens})

    def record(self, record: dict[str, Any]) -> None:
        """Journal a finished call."""
        with self._lock:
            self._write(record)
            self._add(record)

    def total_charged(self, tokens: bool = False) -> float:
        """Every charge, in the cost unit (or in tokens)."""
        return self.charged_for("", tokens)

    def charged_for(self, phase: str, tokens: bool = False, lost: bool = True) -> float:
        """What the calls whose key starts with ``phase`` (``p:`` profiling, ``e:`` the method) were charged, in
        the cost unit (or in tokens); without ``lost``, less the worst cases charged for attempts a kill cut off."""
        if not lost:
            return float(sum(charged(r, tokens) for r in self.records
                             if r["key"].startswith(phase) and not r.get("lost")))
        return float(sum(v for k, v in (self.token_charges if tokens else self.charges).items()
                         if k.startswith(phase)))

    def close(self) -> None:
        _close(self._fh, self.path)


class LogFile:
    """``logs.csv``: canonical rows of the successful calls, appended and fsync'd; rebuilt from the journal.

    Each row keeps the call's prompt and completion tokens and, with ``usd``, its dollars (``cost_usd``), so
    that ``cabench run`` replays the folder on the same terms. Calls finish in any order when several are in
    flight; with ``order`` (a journal key's place in the run) :meth:`close` rewrites the file in that order, so
    the same run writes the same file whatever the concurrency."""

    def __init__(self, folder: Path, records: list[dict[str, Any]], usd: bool = False,
                 order: Callable[[str], Any] | None = None) -> None:
        self.path = folder / "logs.csv"
        self.seen: dict[tuple[str, str], int] = {}
        self.usd = usd
        self.order = order
        self.records = [r for r in records if r.get("ok")]
        if order is not None:
            self.records.sort(key=lambda r: order(r["key"]))
        self.header = ",".join((*LOG_COLUMNS, USD_LOG_COLUMN) if usd else LOG_COLUMNS)
        write_atomic(self.path, "\n".join([self.header, *map(self._line, self.records)]) + "\n")
        self._lock = threading.Lock()
        self._fh = open(self.path, "a", encoding="utf-8")

    def _line(self, r: dict[str, Any]) -> str:
        key = (r["config"], r["instance"])
        n = self.seen.get(key, 0)
        self.seen[key] = n + 1
        instance = r["instance"] if n == 0 else f"{r['instance']}#{n + 1}"  # a repeated evaluation
        cells = [r["config"], r["model"], repr(float(r["temperature"])), str(int(r["max_tokens"])), r["prompting"],
                 instance, *(repr(float(r[c])) if c in r else "" for c in (
                     "correct", "latency_s", "tokens", "prompt_tokens", "completion_tokens",
                     *(("cost",) if self.usd else ())))]
        return ",".join(_csv_cell(c) for c in cells)

    def append(self, record: dict[str, Any]) -> None:
        with self._lock:
            self.records.append(record)
            _append(self._fh, self.path, self._line(record) + "\n")

    def close(self) -> None:
        """Close the file; with ``order``, rewrite it (atomically) with its rows in the run's order."""
        _close(self._fh, self.path)
        if self.order is not None:
            order = self.order
            self.seen = {}
            rows = [self._line(r) for r in sorted(self.records, key=lambda r: order(r["key"]))]
            write_atomic(self.path, "\n".join([self.header, *rows]) + "\n")


def _append(fh: TextIO, path: Path, line: str) -> None:
    """Append ``line`` to the open file ``fh`` of ``path`` and sync it to disk; a failure (a full disk) is an OSError
    naming ``path`` (a failed write names no file of its own)."""
    try:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    except OSError as exc:
        raise named(exc, path) from exc


def _close(fh: TextIO, path: Path) -> None:
    """Close the open file ``fh`` of ``path``. An append that failed (a full disk) leaves its line in the file's
    buffer, which closing writes again: that failure, too, is an OSError naming ``path``, not one without a file."""
    try:
        fh.close()
    except OSError as exc:
        raise named(exc, path) from exc


def _append_newline(path: Path) -> None:
    """Append a newline to ``path`` and sync it to disk, unbuffered (a failed write is not tried again on close); a
    failure (a full disk) is an OSError naming ``path``."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise named(exc, path) from exc


def _csv_cell(text: str) -> str:
    return f'"{text.replace(chr(34), chr(34) * 2)}"' if any(c in text for c in ',"\n\r') else text
