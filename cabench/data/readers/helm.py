"""``helm``: HELM run folders (``benchmark_output/runs/<suite>/<run>/``).

Each run folder holds ``run_spec.json`` (its ``name``, e.g.
``mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt2``, and
``adapter_spec`` with the model and generation settings) and
``per_instance_stats.json``: a list of ``{instance_id, train_trial_index,
perturbation?, stats: [{name: {name, split, perturbation?}, count, sum, mean,
...}]}``, one entry per metric that scores instances (a safety run's
annotator scores apart from its runtime and token counts): an instance's
entries are read together. SOURCE may be a suite folder, ``runs/``,
``benchmark_output/`` or a single run folder: every run folder below it is
read. Perturbed copies of an instance (robustness variants) and train trials
other than the first are left out, and so are the instances of other splits
than ``--split`` (``test``, the default, as HELM's own test accuracy;
``valid``; ``all``): an instance's split is its correctness stat's
``name.split`` (MMLU runs draw some of their instances from the valid split).
Fields:

=================  ==========================================================
canonical column   source
=================  ==========================================================
model              ``adapter_spec.model`` (else ``model_deployment``); the
                   ``model_deployment`` when the source holds the model on
                   several deployments (hosts differ in latency and cost)
temperature        ``adapter_spec.temperature``
max_new_tokens     ``adapter_spec.max_tokens``
prompting          ``cot`` when the run name sets ``chain_of_thought=true``
                   or ``use_chain_of_thought=true``, else ``direct``
config_id          derived from the four above by the importer; where runs
                   of one scenario with the same four differ in another
                   ``adapter_spec`` setting (``max_train_instances``,
                   ``method``, ``instructions``), suffixed by it
                   (:func:`_adapter_variants`)
instance_id        ``instance_id``, prefixed by the scenario (``scenario_spec``
                   class and arguments, else the run name without its model
                   arguments) when the source holds several scenarios
correct            the correctness stat's ``mean`` (in [0, 1]; a fraction,
                   e.g. ``--metric f1_score``, is partial credit):
                   ``--metric NAME``, else
                   the first of ``exact_match``, ``quasi_exact_match``,
                   ``prefix_exact_match``, ``quasi_prefix_exact_match``,
                   ``math_equiv``, ``math_equiv_chain_of_thought``,
                   ``chain_of_thought_correctness`` that the run records
latency_s          ``inference_runtime`` (seconds)
tokens             ``num_prompt_tokens`` + ``num_completion_tokens`` (else
                   ``num_output_tokens``)
prompt_tokens      ``num_prompt_tokens`` (a price table's input tokens)
completion_tokens  ``num_completion_tokens`` (else ``num_output_tokens``)
=================  ==========================================================
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from cabench.data.readers.common import (
    VARIANT,
    Read,
    ReadOptions,
    check,
    correctness,
    duration,
    field_at,
    instance_keys,
    json_file,
    need,
    number,
    setting_text,
    setting_variants,
    token_count,
)
from cabench.errors import CabenchError

CORRECTNESS = ("exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match", "math_equiv",
               "math_equiv_chain_of_thought", "chain_of_thought_correctness")
_MODEL_ARGS = ("model", "model_deployment")
#: Stats HELM records for every run that are no score of the answer (counts, runtimes, costs, finish reasons, the
#: answer's log-probability): names and name prefixes left out of the --metric suggestions.
_NOT_SCORES = ("num_", "inference_", "training_", "finish_reason_", "batch_size", "prompt_truncated", "logprob",
               "max_prob")


def _run_args(name: str) -> tuple[str, dict[str, str]]:
    scenario, _, args = name.partition(":")
    pairs = dict(item.partition("=")[::2] for item in args.split(",") if item)
    return scenario, pairs


def _scenario_key(spec: dict[str, Any], name: str) -> str:
    """The scenario a run evaluates: ``scenario_spec`` (class and arguments), else the run name minus the model."""
    scenario_spec = spec.get("scenario_spec")
    if isinstance(scenario_spec, dict) and isinstance(scenario_spec.get("class_name"), str):
        given = scenario_spec.get("args")
        args: dict[str, Any] = given if isinstance(given, dict) else {}
        kept = ",".join(f"{k}={args[k]}" for k in sorted(args))
        short = scenario_spec["class_name"].rsplit(".", 1)[-1]
        return f"{short}:{kept}" if kept else short
    scenario, pairs = _run_args(name)
    kept = ",".join(f"{k}={v}" for k, v in pairs.items() if k not in _MODEL_ARGS)
    return f"{scenario}:{kept}" if kept else scenario


def _stats(entry: dict[str, Any], where: str) -> dict[str, dict[str, Any]]:
    out = {}
    for n, stat in enumerate(need(entry, "stats", list, where)):
        name = need(stat, "name", dict, f"{where}: stats[{n}]")
        if name.get("perturbation"):
            continue
        out[check(need(name, "name", str, f"{where}: stats[{n}].name"), str, where)] = stat
    return out


def _value(stat: dict[str, Any] | None, key: str, where: str) -> float | None:
    """A stat's ``key`` (``sum``, ``mean``); a missing ``mean`` is ``sum / count``."""
    if stat is None:
        return None
    value = number(stat, key, where)
    count = number(stat, "count", where) if value is None and key == "mean" else None
    if count:
        return float(check(stat.get("sum"), (int, float), f"{where}: 'sum'")) / count
    return value


def _tokens(stats: dict[str, dict[str, Any]], where: str) -> dict[str, float | None]:
    """An instance's ``tokens`` (prompt plus completion), ``prompt_tokens`` and ``completion_tokens`` (a price table's
    input and output); either part negative is refused, either missing leaves all three empty."""
    completion = "num_completion_tokens" if stats.get("num_completion_tokens") else "num_output_tokens"
    prompt, done = (token_count(stats.get(name), "sum", f"{where}: {name}")
                    for name in ("num_prompt_tokens", completion))
    if prompt is None or done is None:
        return {"tokens": None, "prompt_tokens": None, "completion_tokens": None}
    return {"tokens": prompt + done, "prompt_tokens": prompt, "completion_tokens": done}


def _instances(entries: list[Any], trials: list[int], first_trial: int, stats_path: Path,
               left: dict[str, set[tuple[Any, ...]]]) -> list[tuple[int, str | int, dict[str, dict[str, Any]]]]:
    """(first entry, instance id, stats) of each unperturbed instance of the first train trial: HELM writes one entry
    per metric that scores instances (a safety run's annotator scores apart from its runtime and token counts), so
    the entries of one instance are merged; a stat two of them give differently is refused. The variants passed
    over (instance, perturbation, trial: each once, however many metric entries it has) are added to ``left`` by
    why."""
    merged: dict[str | int, tuple[int, dict[str, dict[str, Any]]]] = {}
    for n, (entry, trial) in enumerate(zip(entries, trials)):
        where = f"{stats_path}: entry {n + 1}"
        instance = need(entry, "instance_id", (str, int), where)
        if entry.get("perturbation") or trial != first_trial:
            why = ("perturbed copies of instances (robustness variants)" if entry.get("perturbation")
                   else "instances of train trials after the first")
            left.setdefault(why, set()).add((stats_path, instance, repr(entry.get("perturbation")), trial))
            continue
        stats = _stats(entry, where)
        if instance not in merged:
            merged[instance] = (n, stats)
            continue
        first, known = merged[instance]
        for name, stat in stats.items():
            if name in known and known[name] != stat:
                raise CabenchError(f"{where}: stat '{name}' of instance {instance} differs from entry {first + 1}'s; "
                                   "a damaged or merged file")
            known.setdefault(name, stat)
    return [(n, instance, stats) for instance, (n, stats) in merged.items()]


#: A row's run (its place among the runs read), while the runs' adapter settings are compared.
_RUN = "_run"
#: adapter_spec fields that are no setting of a configuration: the four of its key, and how many instances or
#: trials a run took and its seed.
_NOT_SETTINGS = frozenset({"model", "model_deployment", "temperature", "max_tokens", "max_eval_instances",
                           "num_train_trials", "num_trials", "random", "eval_splits"})


def _adapter_settings(adapter: dict[str, Any]) -> dict[str, str]:
    """A run's adapter settings beyond its configuration's key, each as text (``max_train_instances``: ``5``)."""
    return {k: setting_text(v) for k, v in adapter.items() if k not in _NOT_SETTINGS and v is not None}


def _adapter_variants(runs: list[tuple[str, dict[str, str]]], rows: list[dict[str, Any]]) -> list[str]:
    """Per run, what tells its configuration apart from another run's of the same model, temperature, generation
    limit, prompting and deployment (:func:`~cabench.data.readers.common.setting_variants`, a scenario its task): a
    0-shot and a 5-shot run of MMLU, ``max_train_instances=0``; a scenario's own instructions and prefixes tell
    nothing apart. A run that gave no row has none."""
    key_of = {row[_RUN]: tuple(row[k] for k in ("model", "temperature", "max_new_tokens", "prompting", "deployment"))
              for row in rows}
    read = [n for n in range(len(runs)) if n in key_of]
    found = dict(zip(read, setting_variants([(key_of[n], *runs[n]) for n in read])))
    return [found.get(n, "") for n in range(len(runs))]


def _split_only_configurations(runs: list[tuple[str, dict[str, str]]], run_keys: list[tuple[Any, ...]],
                               read: set[int], split_only: dict[int, int]) -> dict[str, int]:
    """The configurations of the runs ``split_only`` (each run's instances all of another split than asked, and
    how many) that no run ``read`` (those that gave rows) is of, by name, and the instances left out of each. A
    configuration is a run's key (``run_keys``) and what tells it apart from other runs of that key
    (:func:`~cabench.data.readers.common.setting_variants` over every run, read or not): a 5-shot run of valid
    instances only is a configuration of its own beside the 0-shot run of test instances, and named. A model no
    run read is named alone; another configuration of a read model by its key, deployment and settings."""
    variant = setting_variants([(key, *run) for key, run in zip(run_keys, runs)])
    kept = {(run_keys[n], variant[n]) for n in read}
    models = {run_keys[n][0] for n in read}
    gone: dict[str, int] = {}
    for n, left in sorted(split_only.items()):
        if (run_keys[n], variant[n]) in kept:
            continue
        model, temperature, limit, prompting, deployment = run_keys[n]
        name = model if model not in models else ", ".join(
            [f"{model} at temperature {temperature}", f"max_tokens {limit}", prompting,
             *([f"deployment {deployment}"] if deployment != model else []), *([variant[n]] if variant[n] else [])])
        gone[name] = gone.get(name, 0) + left
    return dict(sorted(gone.items()))


def read_helm(source: Path, options: ReadOptions) -> Read:
    """Canonical rows of HELM run folders (see the module docstring)."""
    metric = options.metric
    if not source.is_dir():
        raise CabenchError(f"{source}: not a folder; give a HELM suite folder (benchmark_output/runs/<suite>)")
    specs = sorted(source.rglob("run_spec.json"))
    if not specs:
        raise CabenchError(f"{source}: no run_spec.json below it; give a HELM suite folder "
                           "(benchmark_output/runs/<suite>) or one run folder")
    rows: list[dict[str, Any]] = []
    groups: list[str] = []
    files: list[Path] = []
    skipped: dict[str, str] = {}
    chosen: set[str] = set()
    left_out: Counter[str] = Counter()  # instances of other splits, by split
    passed_over: dict[str, set[tuple[Any, ...]]] = {}  # variants that are no instance's first unperturbed trial
    runs: list[tuple[str, dict[str, str]]] = []  # each run read: its scenario and adapter settings
    split_only: dict[int, int] = {}  # runs (their place in runs) of other splits' instances only: instances left out
    run_keys: list[tuple[Any, ...]] = []  # each run's model, temperature, generation limit, prompting, deployment
    for stats_path in sorted(source.rglob("per_instance_stats.json")):
        if not (stats_path.parent / "run_spec.json").exists():
            skipped[str(stats_path.parent.relative_to(source))] = "no run_spec.json (its configuration is not recorded)"
    for spec_path in specs:
        stats_path = spec_path.parent / "per_instance_stats.json"
        if not stats_path.is_file():
            skipped[str(spec_path.parent.relative_to(source))] = "no per_instance_stats.json (an unfinished run)"
            continue
        spec = json_file(spec_path, "HELM run_spec.json")
        name = need(spec, "name", str, str(spec_path))
        adapter = need(spec, "adapter_spec", dict, str(spec_path))
        model = adapter.get("model") or adapter.get("model_deployment")
        if not isinstance(model, str) or not model:
            raise CabenchError(f"{spec_path}: adapter_spec has no 'model'")
        _, args = _run_args(name)
        cot = any(args.get(k, "").lower() == "true" for k in ("chain_of_thought", "use_chain_of_thought"))
        deployment = adapter.get("model_deployment") or model
        if not isinstance(deployment, str):
            raise CabenchError(f"{spec_path}: adapter_spec 'model_deployment' is {deployment!r}, not text")
        meta = {"model": model, "temperature": adapter.get("temperature"), "max_new_tokens": adapter.get("max_tokens"),
                "prompting": "cot" if cot else "direct", "deployment": deployment,
                _RUN: len(runs)}  # (the run's place in runs: its adapter settings, see _adapter_variants)
        for key in ("temperature", "max_new_tokens"):
            if meta[key] is not None:
                said = f"{spec_path}: adapter_spec '{'max_tokens' if key[0] == 'm' else key}'"
                check(meta[key], (int, float), said)
                if not math.isfinite(meta[key]):  # NaN read as "not recorded" and asked for with --set
                    raise CabenchError(f"{said} is {meta[key]}, not a finite number")
        entries = json_file(stats_path, "HELM per_instance_stats.json")
        if not isinstance(entries, list):
            raise CabenchError(f"{stats_path}: expected a list of per-instance entries")
        files += [spec_path, stats_path]
        if not entries:
            skipped[str(spec_path.parent.relative_to(source))] = "per_instance_stats.json holds no entry"
            continue
        scenario = _scenario_key(spec, name)
        runs.append((scenario, _adapter_settings(adapter)))
        run_keys.append(tuple(meta[k] for k in ("model", "temperature", "max_new_tokens", "prompting", "deployment")))
        trials = [field_at(e, "train_trial_index", int, f"{stats_path}: entry {n + 1}", 0)
                  for n, e in enumerate(entries)]
        first_trial = min(trials, default=0)
        before, other_splits = len(rows), sum(left_out.values())
        for n, instance, stats in _instances(entries, trials, first_trial, stats_path, passed_over):
            where = f"{stats_path}: entry {n + 1}"
            found = metric or next((m for m in CORRECTNESS if m in stats), None)
            if found is None or found not in stats:
                known = ", ".join(sorted(s for s in stats if not s.startswith(_NOT_SCORES) and s not in _NOT_SCORES))
                raise CabenchError(f"{where}: no correctness stat {found or 'among ' + ', '.join(CORRECTNESS[:3])}"
                                   f"...; pass --metric with one of: {known}")
            split = field_at(stats[found], "name.split", str, f"{where}: {found}", "unrecorded")
            if options.split not in ("all", split):
                left_out[split] += 1
                continue
            chosen.add(found)
            value = _value(stats[found], "mean", f"{where}: {found}")
            rows.append({**meta, "instance_id": str(instance),
                         "correct": None if value is None else correctness(value, f"{where}: {found}"),
                         "latency_s": duration(stats.get("inference_runtime"), "sum", f"{where}: inference_runtime"),
                         **_tokens(stats, where), "file": stats_path, "position": n + 1,
                         "failed": False})
            groups.append(scenario)
        if len(rows) == before and sum(left_out.values()) > other_splits:  # every instance of another split
            split_only[meta[_RUN]] = sum(left_out.values()) - other_splits
    if not rows and left_out:
        raise CabenchError(f"{source}: no instance of the {options.split} split (it has "
                           f"{', '.join(f'{n} {k}' for k, n in sorted(left_out.items()))}); pass --split all or "
                           f"--split {sorted(left_out)[0]}")
    if not rows:
        raise CabenchError(f"{source}: no HELM run with per-instance stats")
    split_gone = _split_only_configurations(runs, run_keys, {row[_RUN] for row in rows}, split_only)
    hosts: dict[str, set[str]] = {}
    for row in rows:
        hosts.setdefault(row["model"], set()).add(row["deployment"])
    variant = _adapter_variants(runs, rows)
    for row, key in zip(rows, instance_keys(groups, [r["instance_id"] for r in rows])):
        row["instance_id"] = key
        row[VARIANT] = variant[row.pop(_RUN)]
        deployment = row.pop("deployment")
        if len(hosts[row["model"]]) > 1:  # one model on several deployments: each is a configuration of its own
            row["model"] = deployment
    info: dict[str, Any] = {"metric": sorted(chosen)[0] if len(chosen) == 1 else sorted(chosen)}
    if skipped:
        info["skipped_runs"] = dict(sorted(skipped.items()))
    if left_out:
        info["other_splits"] = dict(sorted(left_out.items()))
    gone = {name: f"every instance of its runs is of another split than --split {options.split} ({n}); "
            "--split all keeps them" for name, n in split_gone.items()}
    if gone:  # a model the source holds that the dataset will not: said, not only counted among the rows left out
        info["dropped_configurations"] = gone
    if passed_over:
        info["other_entries"] = {why: len(keys) for why, keys in sorted(passed_over.items())}
    return Read(rows, files, info, at="entry {}")
