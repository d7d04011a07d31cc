"""``inspect``: Inspect AI eval logs (``.json`` or ``.eval``), one file or a log folder.

A ``.json`` log is one document with ``eval`` (``task``, ``model``,
``model_generate_config``), ``plan`` (``steps`` with their ``solver`` names,
``config`` with the generation settings) and ``samples``; an ``.eval`` log is a
zip archive with ``header.json`` (the same without samples) and one
``samples/<id>_epoch_<n>.json`` per sample. Fields:

=================  ==========================================================
canonical column   source
=================  ==========================================================
model              ``eval.model``
temperature,       ``plan.config`` ``temperature`` / ``max_tokens``, else
max_new_tokens     ``eval.model_generate_config``; unset means the provider's
                   default, which the log does not record (give ``--set``)
prompting          ``cot`` when a plan step's solver is ``chain_of_thought``,
                   else ``direct``
instance_id        the sample ``id``; prefixed by the task when the source
                   holds several tasks, suffixed ``#<epoch>`` when it holds
                   several epochs
correct            the scorer's ``value``: ``C`` / true / 1 is 1; ``I``, ``N``,
                   ``P`` (partial), false, 0 are 0. ``--metric`` names the
                   scorer when a log has several
latency_s          ``working_time`` (seconds; excludes waits for rate
                   limits), else ``total_time``
tokens             ``model_usage[<eval.model>].total_tokens``, else
                   ``output.usage.total_tokens`` (grader models' tokens are
                   not the configuration's cost)
failed             the sample has an ``error``
=================  ==========================================================
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from cabench.data.readers.common import (
    Read,
    field_at,
    files_under,
    instance_keys,
    json_file,
    need,
    number,
    token_count,
    zip_json,
)
from cabench.errors import CabenchError

_INDEXES = {"logs.json", "listing.json"}  # a log folder's own index files, not logs
_TRUE = {"C", "1", "true", "yes", "correct"}
_FALSE = {"I", "N", "P", "0", "false", "no", "incorrect"}


def _load(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Header and samples of one log file."""
    if path.suffix == ".json":
        log = json_file(path, "Inspect eval log")
        if not isinstance(log, dict):
            raise CabenchError(f"{path}: expected an Inspect eval log object")
        return log, field_at(log, "samples", list, str(path), [])
    try:
        with zipfile.ZipFile(path) as archive:
            header = zip_json(archive, "header.json", path)
            names = sorted(n for n in archive.namelist() if n.startswith("samples/") and n.endswith(".json"))
            return header, [zip_json(archive, n, path) for n in names]
    except zipfile.BadZipFile:
        raise CabenchError(f"{path}: not a zip archive; a cut or damaged .eval log") from None
    except OSError as exc:
        raise CabenchError(f"{path}: unreadable ({exc.strerror})") from None


def _correct(value: Any, where: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        if value in (0, 1):
            return float(value)
        raise CabenchError(f"{where}: score value {value!r} is not 0/1; cabench replays correct/incorrect outcomes")
    if isinstance(value, str) and (value in _TRUE or value.lower() in _TRUE):
        return 1.0
    if isinstance(value, str) and (value in _FALSE or value.lower() in _FALSE):
        return 0.0
    raise CabenchError(f"{where}: score value {value!r} is neither correct (C) nor incorrect (I)")


def _settings(header: dict[str, Any], where: str) -> dict[str, Any]:
    """Temperature, generation limit and prompting of a log: ``plan.config`` over ``eval.model_generate_config``."""
    config = {**field_at(header, "eval.model_generate_config", dict, where, {}),
              **{k: v for k, v in field_at(header, "plan.config", dict, where, {}).items() if v is not None}}
    steps = field_at(header, "plan.steps", list, where, [])
    cot = any(isinstance(s, dict) and str(s.get("solver", "")).split("/")[-1] == "chain_of_thought" for s in steps)
    return {"temperature": field_at(config, "temperature", (int, float), f"{where}: generation config"),
            "max_new_tokens": field_at(config, "max_tokens", (int, float), f"{where}: generation config"),
            "prompting": "cot" if cot else "direct"}


def read_inspect(source: Path, metric: str | None = None) -> Read:
    """Canonical rows of Inspect eval logs (see the module docstring)."""
    paths = [p for p in files_under(source, ("*.eval", "*.json"), "an Inspect log (.eval or .json) or a log folder")
             if p == source or p.name not in _INDEXES]
    rows: list[dict[str, Any]] = []
    groups: list[str] = []
    scorers: set[str] = set()
    for path in paths:
        header, samples = _load(path)
        spec = need(header, "eval", dict, str(path))
        model = need(spec, "model", str, f"{path}: eval")
        task = need(spec, "task", str, f"{path}: eval")
        meta = {"model": model, **_settings(header, str(path))}
        if not samples:
            raise CabenchError(f"{path}: no samples (a log written with --no-log-samples cannot be replayed)")
        for n, sample in enumerate(samples):
            where = f"{path}: sample {n + 1}"
            if not isinstance(sample, dict):
                raise CabenchError(f"{where}: expected a sample object")
            sample_id = need(sample, "id", (str, int), where)
            where = f"{path}: sample {sample_id!r}"
            failed = bool(sample.get("error"))
            scores = field_at(sample, "scores", dict, where, {})
            correct = None
            if scores:
                name = metric or (next(iter(scores)) if len(scores) == 1 else None)
                if name is None:
                    raise CabenchError(f"{where}: several scorers ({', '.join(scores)}); choose one with --metric")
                if name not in scores:
                    raise CabenchError(f"{where}: no scorer '{name}'; it has {', '.join(scores)}")
                scorers.add(name)
                correct = _correct(need(scores[name], "value", (str, int, float, bool), f"{where}: scores.{name}"),
                                   f"{where}: scores.{name}")
            elif not failed:
                raise CabenchError(f"{where}: no scores; score the log first (inspect score)")
            usage = field_at(sample, "model_usage", dict, where, {})
            tokens = token_count(usage.get(model), "total_tokens", f"{where}: model_usage.{model}")
            if tokens is None:
                tokens = token_count(sample, "output.usage.total_tokens", where)
            latency = number(sample, "working_time", where)
            if latency is None:
                latency = number(sample, "total_time", where)
            epoch = field_at(sample, "epoch", int, where, 1)
            rows.append({**meta, "instance_id": str(sample_id), "epoch": epoch, "correct": correct,
                         "latency_s": latency, "tokens": tokens, "failed": failed, "file": path,
                         "position": n + 1})
            groups.append(task)
    keys = instance_keys(groups, [r["instance_id"] for r in rows])
    several_epochs = len({r["epoch"] for r in rows}) > 1
    for row, key in zip(rows, keys):
        row["instance_id"] = f"{key}#{row['epoch']}" if several_epochs else key
        del row["epoch"]
    return Read(rows, paths, {"metric": sorted(scorers)[0] if len(scorers) == 1 else sorted(scorers)},
                at="sample {}")
