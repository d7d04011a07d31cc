"""``every-eval-ever``: instance-level JSONL in the Every Eval Ever schema.

Each line is one scored sample (``instance_level_eval`` schema): ``model_id``,
``evaluation_name``, optional ``evaluation_result_id``, ``sample_id``,
``evaluation.is_correct`` and ``evaluation.score``, optional ``token_usage``
(``input_tokens``, ``output_tokens``, ``total_tokens``), ``performance``
(``generation_time_ms``, ``latency_ms``) and ``error``.
SOURCE is one ``*_samples.jsonl`` file or a folder of them. When the aggregate
log ``<uuid>.json`` sits beside ``<uuid>_samples.jsonl``, its
``evaluation_results[].generation_config.generation_args`` give the generation
settings. Fields:

=================  ==========================================================
canonical column   source
=================  ==========================================================
model              ``model_id``
temperature,       the aggregate's ``generation_args`` ``temperature`` /
max_new_tokens     ``max_tokens`` of the line's evaluation result (by its
                   ``evaluation_result_id``, else its ``evaluation_name``;
                   a line of no result listed takes the settings every
                   result shares), else ``--set``
prompting          ``cot`` / ``direct`` from ``generation_args.reasoning``,
                   else ``--set``
instance_id        ``sample_id``, prefixed by ``evaluation_name`` when the
                   source holds several evaluations
correct            ``evaluation.is_correct``; with ``--metric NAME.score``,
                   ``evaluation.score`` (in [0, 1]: partial credit)
latency_s          ``performance.generation_time_ms`` / 1000 when the line
                   has it, else ``performance.latency_ms`` / 1000 (the
                   project's converters write the model's time in
                   ``generation_time_ms``: HELM's request time, Inspect's
                   working time; their ``latency_ms`` is not it); the
                   provenance counts the rows read from each, and the
                   import warns where both are read
tokens             ``token_usage.total_tokens`` (never negative), else (null
                   or 0) ``input_tokens + output_tokens``; a log converted from
                   Inspect holds the final model call's alone
                   (``output.usage``), which understates a sample of
                   several calls: import the Inspect log itself to count
                   them all
prompt_tokens,     ``token_usage.input_tokens``, and the rest of the tokens
completion_tokens  (``total_tokens`` less ``input_tokens``: the output with
                   the reasoning tokens some providers count apart, billed
                   as output; ``output_tokens`` where the total is null),
                   for a price table's input and output; kept when every
                   call the import keeps (after ``--failed`` and
                   ``--unmeasured``) has both
failed             a non-empty ``error``
=================  ==========================================================

A sample scored by several metrics appears once per ``evaluation_result_id``;
``--metric NAME`` keeps one of them (by ``evaluation_result_id`` or
``evaluation_name``), ``--metric NAME.score`` reads its ``evaluation.score``.
"""

from __future__ import annotations

from array import array
from collections import Counter
from pathlib import Path
from typing import Any

from cabench.data.readers.common import (
    ORIGIN_COLUMNS,
    Read,
    ReadOptions,
    check,
    correctness,
    duration,
    field_at,
    files_under,
    instance_keys,
    json_file,
    json_lines,
    need,
    token_count,
    token_split,
)
from cabench.errors import CabenchError

#: Where a line's latency is read, first found first.
LATENCY_FIELDS = ("performance.generation_time_ms", "performance.latency_ms")
#: What ``--metric NAME.KEY`` may read of a line's ``evaluation``.
SCORE_KEYS = ("is_correct", "score")


def _generation_args(samples: Path) -> dict[str | None, dict[str, Any]]:
    """The aggregate log's generation settings, when it sits beside the samples file: each evaluation result's by
    its ``evaluation_result_id`` and its ``evaluation_name``, and under ``None`` the settings every result that
    gives some shares (a line whose result is not found takes those; none where the results differ)."""
    if not samples.name.endswith("_samples.jsonl"):
        return {}
    aggregate = samples.with_name(samples.name[: -len("_samples.jsonl")] + ".json")
    if not aggregate.is_file():
        return {}
    doc = json_file(aggregate, "Every Eval Ever aggregate log")
    found: dict[str | None, dict[str, Any]] = {}
    every: list[dict[str, Any]] = []
    for n, result in enumerate(field_at(doc, "evaluation_results", list, str(aggregate), [])):
        where = f"{aggregate}: evaluation_results[{n}]"
        args = field_at(result, "generation_config.generation_args", dict, where)
        if args is None:
            continue
        at = f"{where}: generation_config.generation_args"
        settings = {"temperature": field_at(args, "temperature", (int, float), at),
                    "max_tokens": field_at(args, "max_tokens", (int, float), at),
                    "reasoning": field_at(args, "reasoning", bool, at)}
        every.append(settings)
        for key in ("evaluation_result_id", "evaluation_name"):
            name = field_at(result, key, str, where)
            if name is not None:
                found.setdefault(name, settings)
    if every and all(settings == every[0] for settings in every):
        found[None] = every[0]
    return found


def _selected(metric: str | None, names: tuple[str, str]) -> tuple[bool, str]:
    """Whether ``--metric`` keeps a line of the evaluation ``names`` (result id, name), and the key it reads."""
    if metric is None or metric in names:
        return True, "is_correct"
    name, _, key = metric.rpartition(".")
    if name not in names:
        return False, ""
    if key not in SCORE_KEYS:
        raise CabenchError(f"--metric {metric}: an Every Eval Ever line is scored by evaluation.is_correct or "
                           f"evaluation.score; pass --metric {name} or --metric {name}.score")
    return True, key


def _correct(evaluation: dict[str, Any], key: str, failed: bool, where: tuple[str, int]) -> float | None:
    """The line's ``correct``: ``evaluation.is_correct`` (true/false) or ``evaluation.score`` (in [0, 1])."""
    value = evaluation.get(key)
    if type(value) is bool:
        return float(value)
    at = f"{where[0]}: line {where[1]}"
    if value is None and not failed:
        raise CabenchError(f"{at}: field 'evaluation.{key}' is null" if key in evaluation
                           else f"{at}: missing field 'evaluation.{key}'")
    if value is None:
        return None
    if key == "is_correct":
        check(value, bool, f"{at}: 'evaluation.is_correct'")
    return correctness(value, f"{at}: 'evaluation.{key}'")


def read_eee(source: Path, options: ReadOptions) -> Read:
    """Canonical rows of Every Eval Ever instance-level files (see the module docstring)."""
    metric = options.metric
    paths = files_under(source, ("*.jsonl",), "an Every Eval Ever *_samples.jsonl file or a folder of them")
    names = ("model", "temperature", "max_new_tokens", "prompting", "instance_id", "correct", "latency_s", "tokens",
             "prompt_tokens", "completion_tokens", "failed", *ORIGIN_COLUMNS)
    cols: dict[str, Any] = {name: [] for name in names}
    cols["position"] = array("q")  # line numbers: 8 bytes a row
    groups: list[str] = []
    results: list[str] = []
    files: list[Path] = []
    seen_text: dict[str, str] = {}
    latency_from: Counter[str] = Counter()
    other_metrics: Counter[str] = Counter()  # lines left out by --metric, by evaluation_result_id
    empty: list[str] = []  # files without a sample: whose they are, no line says

    def intern(text: str) -> str:  # one string object per distinct model, evaluation and sample id
        return seen_text.setdefault(text, text)

    for path in paths:
        by_result = _generation_args(path)
        if by_result:
            files.append(path.with_name(path.name[: -len("_samples.jsonl")] + ".json"))
        files.append(path)
        text = str(path)
        lines_before = len(groups) + sum(other_metrics.values())
        for line, item in json_lines(path):
            where = (text, line)  # formatted only for an error
            name = intern(need(item, "evaluation_name", str, where))
            result_id = intern(field_at(item, "evaluation_result_id", str, where) or name)
            kept, score_key = _selected(metric, (result_id, name))
            if not kept:
                other_metrics[result_id] += 1
                continue
            evaluation = need(item, "evaluation", dict, where)
            failed = bool(item.get("error"))
            correct = _correct(evaluation, score_key, failed, where)
            latency = None
            for latency_field in LATENCY_FIELDS:
                latency = duration(item, latency_field, where)
                if latency is not None:
                    latency_from[latency_field] += 1
                    break
            args = by_result.get(result_id) or by_result.get(name) or by_result.get(None) or {}
            reasoning = args.get("reasoning")  # (each result its own settings: a result at temperature 1 is another
            cols["model"].append(intern(need(item, "model_id", str, where)))  # configuration than one at 0)
            cols["temperature"].append(args.get("temperature"))
            cols["max_new_tokens"].append(args.get("max_tokens"))
            cols["prompting"].append(None if reasoning is None else ("cot" if reasoning else "direct"))
            cols["instance_id"].append(intern(str(need(item, "sample_id", (str, int), where))))
            cols["correct"].append(correct)
            cols["latency_s"].append(None if latency is None else latency / 1000.0)
            prompt, output = (token_count(item, f"token_usage.{k}_tokens", where) for k in ("input", "output"))
            tokens = token_count(item, "token_usage.total_tokens", where)
            if not tokens and prompt is not None and output is not None:
                tokens = prompt + output
            completion = None if tokens is None or prompt is None or prompt > tokens else tokens - prompt
            cols["tokens"].append(tokens)
            cols["prompt_tokens"].append(None if completion is None else prompt)
            cols["completion_tokens"].append(completion)
            cols["failed"].append(failed)
            cols["file"].append(path)
            cols["position"].append(line)
            groups.append(name)
            results.append(result_id)
        if len(groups) + sum(other_metrics.values()) == lines_before:
            empty.append(str(path))
    if not groups:
        why = f" for --metric {metric}" if metric else " (its *_samples.jsonl files hold no line)"
        raise CabenchError(f"{source}: no samples{why}")
    if metric is None and len(set(results)) > 1:  # a sample scored by several metrics is there once per metric
        seen: dict[tuple, set[str]] = {}
        for n, (group, result) in enumerate(zip(groups, results)):
            key = (*(cols[c][n] for c in ("model", "temperature", "max_new_tokens", "prompting")), group,
                   cols["instance_id"][n])
            seen.setdefault(key, set()).add(result)
        several = next((k for k, v in seen.items() if len(v) > 1), None)
        if several is not None:
            raise CabenchError(f"{source}: sample '{several[-1]}' of {several[0]} is scored by several metrics "
                               f"({', '.join(sorted(seen[several]))}); keep one with --metric")
    cols["instance_id"] = instance_keys(groups, cols["instance_id"])
    parts, unsplit = token_split(cols["tokens"], cols["prompt_tokens"])
    if not parts:
        del cols["prompt_tokens"], cols["completion_tokens"]
    info = {"latency_fields": dict(latency_from), **({"metric": metric} if metric else {}),
            **({"parts_unsplit": True} if unsplit else {}),
            **({"other_metrics": dict(sorted(other_metrics.items()))} if other_metrics else {}),
            **({"empty_files": empty} if empty else {})}
    return Read([], files, info, columns=cols)
