"""``inspect``: Inspect AI eval logs (``.json`` or ``.eval``), one file or a log folder.

A ``.json`` log is one document with ``eval`` (``task``, ``model``,
``model_generate_config``, ``created``), ``plan`` (``steps`` with their
``solver`` names, ``config`` with the generation settings) and ``samples``; an
``.eval`` log is a zip archive (Deflate or, from inspect_ai 0.3.2xx on,
Zstandard members) with ``header.json`` (the same without samples) and one
``samples/<id>_epoch_<n>.json`` per sample; a run stopped before its end (a
crash, an interrupt) has no ``header.json``, and its ``_journal/start.json``
(``eval`` and ``plan``) is read instead, with the samples it finished. Fields:

=================  ==========================================================
canonical column   source
=================  ==========================================================
model              ``eval.model``
temperature,       ``plan.config`` ``temperature`` / ``max_tokens``, else
max_new_tokens     ``eval.model_generate_config``; unset means the provider's
                   default, which the log does not record (give ``--set``)
prompting          ``cot`` when a plan step's solver is ``chain_of_thought``,
                   else ``direct``
config_id          derived from the four above by the importer; where logs
                   of one task with the same four differ in another
                   generation setting (not in how the run was carried
                   out: ``seed``, ``max_connections``…) or in their
                   solvers, suffixed by what differs (:func:`variants`)
instance_id        the sample ``id``; prefixed by the task when the source
                   holds several tasks. A sample's epochs (each sample run
                   again, ``eval.config.epochs``) are runs of one instance,
                   ordered by ``epoch``, kept as ``--repeats`` says (refused
                   by default; ``epochs`` numbers them ``<id>#k``)
correct            the scorer's ``value``: ``C`` / true / 1 is 1, ``P``
                   (partial) 0.5, ``I`` / ``N`` / false / 0 are 0, a number
                   in [0, 1] is kept. ``--metric NAME`` names the scorer
                   when a log has several, ``--metric NAME.KEY`` one key of
                   a scorer whose value holds several (``{accuracy: 1,
                   f1: 0.5}``)
latency_s          ``working_time`` (seconds; excludes waits for rate
                   limits), else ``total_time``, less the working time of
                   the sample's scoring (its ``scorers``/``scorer`` span or
                   ``scorer`` step events); none left: not measured
tokens             ``model_usage[<eval.model>].total_tokens`` less that
                   model's tokens in the scoring's ``model`` events (a
                   scorer grading with the evaluated model; none left:
                   the next), else ``output.usage.total_tokens``, the
                   final model call's alone (counted, said and recorded:
                   ``last_call_tokens``; grader models' tokens are not
                   the configuration's cost)
prompt_tokens,     the same ``input_tokens``, and the rest of the tokens
completion_tokens  (``total_tokens`` less ``input_tokens``: the output with
                   the reasoning tokens some providers count apart, billed
                   as output), for a price table's input and output; kept
                   when every call the import keeps has both
failed             the sample has an ``error``
=================  ==========================================================

``eval.created``, then ``epoch``, orders repeated runs of a configuration
(``--repeats``). A log of a folder with nothing to replay (no samples, or
none scored) is skipped (``skipped_runs``); a sample without a score in a
scored log is not measured (``--unmeasured``).
"""

from __future__ import annotations

import datetime
import hashlib
import math
from pathlib import Path
from typing import Any

from cabench.data.readers.common import (
    REPEAT,
    STARTED,
    VARIANT,
    Read,
    ReadOptions,
    correctness,
    duration,
    field_at,
    files_under,
    instance_keys,
    json_file,
    metric_parts,
    need,
    number,
    setting_text,
    setting_variants,
    token_count,
    token_split,
    zip_archive,
    zip_json,
)
from cabench.errors import CabenchError

#: Why an Inspect log holds a sample twice for one configuration, said where the import refuses it.
REPEATS_WHY = "an Inspect log's epochs run each sample again (its eval.config.epochs); "
_INDEXES = {"logs.json", "listing.json"}  # a log folder's own index files, not logs
_JOURNAL = "_journal/start.json"  # an .eval log's header as written when the run starts (header.json: at its end)


def _load(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Header and samples of one log file."""
    if path.suffix == ".json":
        log = json_file(path, "Inspect eval log")
        if not isinstance(log, dict):
            raise CabenchError(f"{path}: expected an Inspect eval log object")
        return log, field_at(log, "samples", list, str(path), [])
    with zip_archive(path, ".eval log") as archive:
        members = archive.namelist()
        unfinished = "header.json" not in members and _JOURNAL in members  # a run stopped before its end
        header = zip_json(archive, _JOURNAL if unfinished else "header.json", path)
        names = sorted(n for n in members if n.startswith("samples/") and n.endswith(".json"))
        return header, [zip_json(archive, n, path) for n in names]


def _score(scores: dict[str, Any], metric: str | None, where: str) -> tuple[float, str]:
    """The sample's ``correct`` and the score it was read from (``NAME`` or ``NAME.KEY``), as ``--metric`` says."""
    name, key = metric_parts(metric, scores)
    if name is None:
        if len(scores) > 1:
            raise CabenchError(f"{where}: several scorers ({', '.join(scores)}); choose one with --metric")
        name = next(iter(scores))
    if name not in scores:
        raise CabenchError(f"{where}: no scorer '{name}'; it has {', '.join(scores)}")
    value = need(scores[name], "value", (str, int, float, bool, dict), f"{where}: scores.{name}")
    if isinstance(value, dict):
        if key is None:
            raise CabenchError(f"{where}: scores.{name} holds several values ({', '.join(map(str, value))}); choose "
                               f"one with --metric {name}.KEY")
        if key not in value:
            raise CabenchError(f"{where}: scores.{name} has no '{key}'; it has {', '.join(map(str, value))}")
        return correctness(value[key], f"{where}: scores.{name}.{key}"), f"{name}.{key}"
    if key is not None:
        raise CabenchError(f"{where}: --metric {name}.{key}: scores.{name} holds one value, not several; pass "
                           f"--metric {name}")
    return correctness(value, f"{where}: scores.{name}"), name


def _started(spec: dict[str, Any], where: str) -> float | None:
    """When the run started (``eval.created``, seconds since the epoch; UTC when it names no zone), if recorded."""
    text = field_at(spec, "created", str, where)
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None
    except ValueError:
        raise CabenchError(f"{where}: 'created' is {text!r}, not an ISO date and time") from None
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)).timestamp()


def _generation(header: dict[str, Any], where: str) -> dict[str, Any]:
    """A log's generation settings: ``plan.config`` over ``eval.model_generate_config``, unset ones left out."""
    return {k: v for k, v in {**field_at(header, "eval.model_generate_config", dict, where, {}),
                              **field_at(header, "plan.config", dict, where, {})}.items() if v is not None}


#: Generation settings that say how a run was carried out, not what was asked of the model: logs differing only in
#: them are runs of one configuration (a run again with another seed is a repeat of it).
_HOW_RUN = frozenset({"max_retries", "timeout", "attempt_timeout", "max_connections", "batch", "cache_prompt", "seed"})


def _beyond(header: dict[str, Any], where: str) -> tuple[dict[str, str], tuple[str, str]]:
    """What a log's configuration is beyond its model, temperature, generation limit and prompting: its other
    generation settings (each as text) and its solvers (their names joined by ``+``, and the whole plan's steps as
    JSON, which tells apart solvers of one name with other parameters)."""
    other = {k: setting_text(v) for k, v in _generation(header, where).items()
             if k not in {"temperature", "max_tokens", *_HOW_RUN}}
    steps = field_at(header, "plan.steps", list, where, [])
    names = "+".join(str(s.get("solver", "")).split("/")[-1] if isinstance(s, dict) else "?" for s in steps)
    return other, (names, setting_text(steps))


def variants(logs: list[tuple[str, tuple[Any, ...], dict[str, str], tuple[str, str]]]) -> list[str]:
    """What tells apart each log's configuration from the others' of the same model, temperature, generation limit
    and prompting (``logs``: each log's task, those four, :func:`_beyond`'s settings and solvers), as a config_id's
    suffix (:func:`~cabench.data.readers.common.setting_variants`): the generation settings and the solvers that
    differ among the logs of one task (``reasoning_effort=high``, ``solvers=system_message+generate``). Solvers are
    shown by their names, or where two plans of those names differ among the logs of a key, with 8 hex digits of
    the plan's SHA-256 too. How a run was carried out (``seed``, ``max_connections``) tells nothing apart."""
    plans: dict[tuple[Any, ...], dict[str, set[str]]] = {}
    for _, key, _, (names, plan) in logs:
        plans.setdefault(key, {}).setdefault(names, set()).add(plan)
    return setting_variants([
        (key, task, {**other, "solvers": names if len(plans[key][names]) == 1 and len(names) <= 24
                     else f"{names}#{hashlib.sha256(plan.encode()).hexdigest()[:8]}"})
        for task, key, other, (names, plan) in logs])


def _settings(header: dict[str, Any], where: str) -> dict[str, Any]:
    """Temperature, generation limit and prompting of a log: ``plan.config`` over ``eval.model_generate_config``."""
    config = _generation(header, where)
    steps = field_at(header, "plan.steps", list, where, [])
    cot = any(isinstance(s, dict) and str(s.get("solver", "")).split("/")[-1] == "chain_of_thought" for s in steps)
    out = {"temperature": field_at(config, "temperature", (int, float), f"{where}: generation config"),
           "max_new_tokens": field_at(config, "max_tokens", (int, float), f"{where}: generation config"),
           "prompting": "cot" if cot else "direct"}
    for key, value in (("temperature", out["temperature"]), ("max_tokens", out["max_new_tokens"])):
        if value is not None and not math.isfinite(value):  # NaN was read as "not recorded"
            raise CabenchError(f"{where}: generation config: '{key}' is {value}, not a finite number")
    return out


_SCORING = ("scorer", "scorers")  # the span (and, before spans, step) types of a sample's scoring


def _scoring(sample: dict[str, Any], model: str, where: str) -> tuple[float, list[float]]:
    """Working seconds and ``model`` tokens (total, input) a sample spent scoring: its events between the
    beginning and end of its scoring spans (or steps), which ``working_time`` and ``model_usage`` count but the
    configuration does not cost."""
    seconds, tokens = 0.0, [0.0] * len(_COUNTS)
    depth, start, spans = 0, None, set()
    for n, event in enumerate(field_at(sample, "events", list, where, [])):
        kind = event.get("event") if isinstance(event, dict) else None
        at = f"{where}: events[{n}]"
        step = kind == "step" and event.get("type") == "scorer"
        if kind == "span_begin" and event.get("type") in _SCORING or step and event.get("action") == "begin":
            spans.add(event.get("id"))
            start = number(event, "working_start", at) if depth == 0 else start
            depth += 1
        elif depth and (kind == "span_end" and event.get("id") in spans or step and event.get("action") == "end"):
            depth -= 1
            end = number(event, "working_start", at) if depth == 0 else None
            seconds += end - start if end is not None and start is not None else 0.0
        elif depth and kind == "model" and event.get("model") == model:
            tokens = [n + (spent or 0.0) for n, spent in zip(tokens, _usage(event, "output.usage.", at))]
    return seconds, tokens


_COUNTS = ("total", "input")  # a usage's token counts read: the total, and the input (the rest is priced as output)


def _usage(item: Any, prefix: str, where: str) -> list[float | None]:
    """The token counts (:data:`_COUNTS`) of the usage at ``prefix`` in ``item``, None where it has none."""
    return [token_count(item, f"{prefix}{k}_tokens", where) for k in _COUNTS]


def _nothing_to_replay(samples: list[Any]) -> str:
    """Why a log's samples give nothing to replay (none, or none scored nor failed), else nothing."""
    if not samples:
        return ("no samples (a log written with --no-log-samples, or of a run that finished none, cannot be "
                "replayed)")
    if not any(isinstance(s, dict) and (s.get("scores") or s.get("error")) for s in samples):
        return "no sample is scored; score the log first (inspect score)"
    return ""


def read_inspect(source: Path, options: ReadOptions) -> Read:
    """Canonical rows of Inspect eval logs (see the module docstring)."""
    paths = [p for p in files_under(source, ("*.eval", "*.json"), "an Inspect log (.eval or .json) or a log folder")
             if p == source or p.name not in _INDEXES]
    rows: list[dict[str, Any]] = []
    groups: list[str] = []
    scorers: set[str] = set()
    last_call = 0  # samples whose tokens are their final model call's (output.usage): no model_usage
    skipped: dict[str, str] = {}  # logs of a folder that hold nothing to replay, and why
    logs: list[tuple[str, tuple[Any, ...], dict[str, str], tuple[str, str]]] = []  # each log read: see variants()
    first_row: list[int] = []  # where each log's rows begin
    for path in paths:
        header, samples = _load(path)
        spec = need(header, "eval", dict, str(path))
        model = need(spec, "model", str, f"{path}: eval")
        task = need(spec, "task", str, f"{path}: eval")
        meta = {"model": model, **_settings(header, str(path)), STARTED: _started(spec, f"{path}: eval")}
        why = _nothing_to_replay(samples)
        if why:
            if len(paths) == 1:
                raise CabenchError(f"{path}: {why}")
            skipped[str(path.relative_to(source))] = why
            continue
        logs.append((task, tuple(meta[k] for k in ("model", "temperature", "max_new_tokens", "prompting")),
                     *_beyond(header, str(path))))
        first_row.append(len(rows))
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
                correct, name = _score(scores, options.metric, where)
                scorers.add(name)
            # (in a scored log, a sample without a score is not measured: --unmeasured)
            usage = field_at(sample, "model_usage", dict, where, {})
            scoring_time, scoring_tokens = _scoring(sample, model, where)
            counts = _usage(usage.get(model), "", f"{where}: model_usage.{model}")
            if counts[0] is not None and scoring_tokens[0]:  # all of it the scoring's (inconsistent): its own output's
                counts = [None if n is None or n < spent or (k == 0 and n == spent) else n - spent
                          for k, (n, spent) in enumerate(zip(counts, scoring_tokens))]
            if counts[0] is None:
                counts = _usage(sample, "output.usage.", where)
                last_call += counts[0] is not None
            tokens, prompt = counts
            completion = None if tokens is None or prompt is None or prompt > tokens else tokens - prompt
            latency = duration(sample, "working_time", where)
            if latency is None:
                latency = duration(sample, "total_time", where)
            if latency is not None and scoring_time:  # all of it the scoring's: its own time unknown (not measured)
                latency = latency - scoring_time if latency > scoring_time else None
            epoch = field_at(sample, "epoch", int, where, 1)
            rows.append({**meta, "instance_id": str(sample_id), REPEAT: epoch, "correct": correct,
                         "latency_s": latency, "tokens": tokens, "completion_tokens": completion,
                         "prompt_tokens": None if completion is None else prompt, "failed": failed, "file": path,
                         "position": n + 1})
            groups.append(task)
    if not rows:  # (a folder: each log skipped)
        first = next(iter(skipped))
        raise CabenchError(f"{source}: no log holds scored samples ({first}: {skipped[first]}"
                           + (f"; and {len(skipped) - 1} more" if len(skipped) > 1 else "") + ")")
    for row, key in zip(rows, instance_keys(groups, [r["instance_id"] for r in rows])):
        row["instance_id"] = key
    parts, unsplit = token_split([r["tokens"] for r in rows], [r["prompt_tokens"] for r in rows])
    if not parts:
        for r in rows:
            del r["prompt_tokens"], r["completion_tokens"]
    for begin, end, variant in zip(first_row, [*first_row[1:], len(rows)], variants(logs)):
        for row in rows[begin:end]:
            row[VARIANT] = variant
    info: dict[str, Any] = {"metric": sorted(scorers)[0] if len(scorers) == 1 else sorted(scorers)}
    if unsplit:
        info["parts_unsplit"] = True
    if last_call:
        info["last_call_tokens"] = last_call
    if skipped:
        info["skipped_runs"] = dict(sorted(skipped.items()))
    if any(row[REPEAT] != 1 for row in rows):
        info["repeats_why"] = REPEATS_WHY
    return Read(rows, paths, info, at="the file's sample number {}")  # its place, not its id (sample 1 may be id 2)
