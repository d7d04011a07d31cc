"""``cabench data import`` on logs as real tools and people write them: Zstandard archives, other latency fields,
HELM splits, unlabelled promptfoo prompts, fractional and several-valued scores, repeated runs, metadata given on
the command line, unmeasured rows in a table, and logs too small for the default profiling split.

Sources are the small logs of ``test_tool_readers`` (and ``tiny_logs``), changed here; expected values are
computed here from what was written.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from cabench.cli import app
from tests.conftest import tiny_logs
from tests.data.test_hostile_readers import RUNNER, edit_json, edit_line, first, imported, refused, stat_of
from tests.data.test_tool_readers import (
    CONFIGS,
    IDS,
    _inspect_log,
    write_eee,
    write_helm,
    write_inspect,
    write_promptfoo,
)

if sys.version_info >= (3, 14):
    import zipfile
else:
    from backports.zstd import zipfile


def logs_of(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / "logs.csv.gz", dtype={"instance_id": str, "config_id": str})


def provenance(folder: Path) -> dict[str, Any]:
    return yaml.safe_load((folder / "dataset.yaml").read_text())["provenance"]


def ok(result: Any) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


# --- 1. Zstandard .eval members --------------------------------------------------------------------------------------

def _zstd_eval(path: Path, c: int = 0) -> tuple[dict, list[dict]]:
    """An Inspect .eval log of configuration ``c`` whose members are Zstandard-compressed, as inspect_ai writes."""
    model, temperature, limit, rows = CONFIGS[c]
    header, samples = _inspect_log(model, temperature, limit, rows, c)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_ZSTANDARD) as archive:
        archive.writestr("header.json", json.dumps(header))
        for s in samples:
            archive.writestr(f"samples/{s['id']}_epoch_1.json", json.dumps(s))
    return header, samples


def test_zstandard_eval_is_read(tmp_path):
    (tmp_path / "logs").mkdir()
    _, samples = _zstd_eval(tmp_path / "logs" / "run.eval")
    ok(imported("inspect", tmp_path / "logs", tmp_path / "ds"))
    logs = logs_of(tmp_path / "ds")
    assert list(logs["latency_s"]) == [s["working_time"] for s in samples]
    assert list(logs["tokens"]) == [s["model_usage"]["openai/m-small"]["total_tokens"] for s in samples]
    assert list(logs["correct"]) == [float(s["scores"]["match"]["value"] == "C") for s in samples]


def test_eval_log_of_a_run_stopped_before_its_end(tmp_path):
    """inspect_ai writes header.json when a run ends; a run stopped early has only _journal/start.json (eval, plan)
    and the samples it finished."""
    model, temperature, limit, rows = CONFIGS[1]
    header, samples = _inspect_log(model, temperature, limit, rows, 1)
    with zipfile.ZipFile(tmp_path / "stopped.eval", "w", zipfile.ZIP_ZSTANDARD) as archive:
        archive.writestr("_journal/start.json", json.dumps({k: header[k] for k in ("version", "eval", "plan")}))
        for s in samples[:3]:
            archive.writestr(f"samples/{s['id']}_epoch_1.json", json.dumps(s))
    ok(imported("inspect", tmp_path / "stopped.eval", tmp_path / "ds"))
    logs = logs_of(tmp_path / "ds")
    assert list(logs["instance_id"]) == ["q0", "q1", "q2"] and set(logs["temperature"]) == {temperature}
    assert list(logs["latency_s"]) == [s["working_time"] for s in samples[:3]]
    assert list(logs["tokens"]) == [s["model_usage"][f"openai/{model}"]["total_tokens"] for s in samples[:3]]
    with zipfile.ZipFile(tmp_path / "neither.eval", "w") as archive:
        archive.writestr("samples/q0_epoch_1.json", json.dumps(samples[0]))
    refused(imported("inspect", tmp_path / "neither.eval", tmp_path / "ds2"), "neither.eval: no header.json inside")


def _scored_by_itself(sample: dict, model: str, spans: bool) -> tuple[float, float]:
    """Add to ``sample`` a scorer grading with the evaluated model, counted in its working time and model usage as
    inspect_ai counts it (a ``scorers`` span, or before spans a ``scorer`` step); the grading's seconds and tokens."""
    seconds, usage = 2.5, {"input_tokens": 300, "output_tokens": 200, "total_tokens": 500}
    start = sample["working_time"] - 0.25
    grade = {"event": "model", "model": model, "working_start": start + 0.5, "output": {"usage": usage}}
    if spans:
        events = [{"event": "span_begin", "id": "s1", "type": "scorers", "name": "scorers", "working_start": start},
                  {"event": "span_begin", "id": "s2", "parent_id": "s1", "type": "scorer", "name": "graded",
                   "working_start": start}, {**grade, "span_id": "s2"},
                  {"event": "span_end", "id": "s2", "working_start": start + seconds},
                  {"event": "span_end", "id": "s1", "working_start": start + seconds}]
    else:
        events = [{"event": "step", "action": "begin", "type": "scorer", "name": "graded", "working_start": start},
                  grade, {"event": "step", "action": "end", "type": "scorer", "name": "graded",
                          "working_start": start + seconds}]
    solver = {"event": "model", "model": model, "working_start": 0.1, "output": {"usage": {"total_tokens": 1}}}
    sample["events"] = [solver, *events]
    sample["working_time"] += seconds
    sample["model_usage"][model] = {**sample["model_usage"][model]}
    sample["model_usage"][model]["total_tokens"] += usage["total_tokens"]
    return seconds, usage["total_tokens"]


@pytest.mark.parametrize("spans", [True, False])
def test_inspect_scoring_with_the_evaluated_model_is_not_its_cost(tmp_path, spans):
    model, temperature, limit, rows = CONFIGS[0]
    header, samples = _inspect_log(model, temperature, limit, rows, 0)
    expected = [(s["working_time"], s["model_usage"][f"openai/{model}"]["total_tokens"]) for s in samples]
    graded = [_scored_by_itself(s, f"openai/{model}", spans) for s in samples]
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.json").write_text(json.dumps({**header, "samples": samples}))
    ok(imported("inspect", tmp_path / "logs" / "run.json", tmp_path / "ds"))
    logs = logs_of(tmp_path / "ds")
    assert graded == [(2.5, 500)] * len(samples) and [s["working_time"] for s in samples] != [e[0] for e in expected]
    assert list(logs["latency_s"]) == pytest.approx([e[0] for e in expected], abs=1e-12)
    assert list(logs["tokens"]) == [e[1] for e in expected]


def test_inspect_scoring_that_takes_all_of_a_sample_leaves_it_unmeasured_not_negative(tmp_path):
    """A sample whose scoring span is longer than its working time, and whose model usage is all the scoring's: its own
    time is unknown (the row is dropped as not measured, the rest imported) and its tokens are its output's."""
    model, temperature, limit, rows = CONFIGS[0]
    header, samples = _inspect_log(model, temperature, limit, rows, 0)
    for s in samples:
        _scored_by_itself(s, f"openai/{model}", True)
    first = samples[0]
    first["working_time"] = 2.0  # shorter than its scoring span (2.5 s): nothing left for the sample itself
    first["model_usage"][f"openai/{model}"]["total_tokens"] = 500  # the scoring's tokens, all of them
    (tmp_path / "run.json").write_text(json.dumps({**header, "samples": samples}))
    done = imported("inspect", tmp_path / "run.json", tmp_path / "ds")
    ok(done)
    assert "1 row dropped (latency_s empty or 0: 1)" in done.output
    logs = logs_of(tmp_path / "ds")
    assert list(logs["instance_id"]) == [s["id"] for s in samples[1:]] and (logs["latency_s"] > 0).all()
    header2, again = _inspect_log(model, temperature, limit, rows, 0)
    again[0]["model_usage"][f"openai/{model}"]["total_tokens"] = 500
    _scored_by_itself(again[0], f"openai/{model}", True)  # 1,000 tokens, 500 of them the scoring's: 500 its own
    again[0]["model_usage"][f"openai/{model}"]["total_tokens"] = 500  # ... now all of them the scoring's
    again[0]["output"]["usage"] = {"total_tokens": 42}
    (tmp_path / "run2.json").write_text(json.dumps({**header2, "samples": again}))
    ok(imported("inspect", tmp_path / "run2.json", tmp_path / "ds2"))
    assert logs_of(tmp_path / "ds2")["tokens"].iloc[0] == 42


def _corrupt_zstd(path: Path) -> None:
    """Overwrite bytes in the middle of the first sample's compressed data (its CRC no longer matches either)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("samples/q0_epoch_1.json")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + 4:start + 14] = b"\xff" * 10
    path.write_bytes(bytes(data))


def _unknown_method(path: Path) -> None:
    """Mark every member as compressed by a method no zipfile reads (99, AE-x encryption)."""
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x01\x02", 10), (b"PK\x03\x04", 8)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            data[start + offset:start + offset + 2] = (99).to_bytes(2, "little")
            start += 4
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage, words", [
    (_corrupt_zstd, ["run.eval: samples/q0_epoch_1.json: unreadable"]),
    (_unknown_method, ["run.eval: header.json: unreadable", "compression method"]),
    (lambda p: p.write_bytes(p.read_bytes()[:300]), ["run.eval: not a zip archive"]),
], ids=["damaged-zstd-frame", "unknown-method", "cut"])
def test_archive_errors_are_one_line(tmp_path, damage, words):
    (tmp_path / "logs").mkdir()
    _zstd_eval(tmp_path / "logs" / "run.eval")
    damage(tmp_path / "logs" / "run.eval")
    refused(imported("inspect", tmp_path / "logs", tmp_path / "ds"), *words)


def test_a_json_log_under_another_name_is_said_to_be_json(tmp_path):
    """An Inspect JSON log saved as log.txt: its name is what is wrong, not its content (a cut archive is still
    called one, above)."""
    model, temperature, limit, rows = CONFIGS[0]
    header, samples = _inspect_log(model, temperature, limit, rows, 0)
    (tmp_path / "log.txt").write_text("\n  " + json.dumps({**header, "samples": samples}))
    refused(imported("inspect", tmp_path / "log.txt", tmp_path / "ds"),
            "log.txt: holds JSON, not a zip archive; a JSON log is read by its name ending in .json (rename it)")


def _inspect_folder(root: Path) -> Path:
    """The three configurations' Inspect logs (:func:`write_inspect`), and beside them a log of a fourth written
    with --no-log-samples and one of a fifth never scored."""
    logs = write_inspect(root)
    model, temperature, limit, rows = CONFIGS[0]
    header, samples = _inspect_log("m-empty", temperature, limit, rows, 3)
    (logs / "no_samples.json").write_text(json.dumps({**header, "samples": []}))
    header, samples = _inspect_log("m-unscored", temperature, limit, rows, 4)
    (logs / "unscored.json").write_text(json.dumps({**header, "samples": [{**x, "scores": {}} for x in samples]}))
    return logs


def test_an_inspect_log_with_nothing_to_replay_is_skipped_in_a_folder_and_refused_alone(tmp_path):
    """A log of a folder without samples, or never scored, stopped the whole import (logs folders hold such logs
    beside scored ones): each is now skipped, said and recorded; alone it is refused, saying why."""
    logs = _inspect_folder(tmp_path)
    said = ok(imported("inspect", logs, tmp_path / "ds"))
    assert ("skipped run no_samples.json: no samples (a log written with --no-log-samples, or of a run that "
            "finished none, cannot be replayed)") in said
    assert "skipped run unscored.json: no sample is scored; score the log first (inspect score)" in said
    assert sorted(logs_of(tmp_path / "ds")["config_id"].unique()) == sorted(IDS["inspect"])
    assert provenance(tmp_path / "ds")["skipped_runs"] == {
        "no_samples.json": "no samples (a log written with --no-log-samples, or of a run that finished none, cannot "
                           "be replayed)",
        "unscored.json": "no sample is scored; score the log first (inspect score)"}
    refused(imported("inspect", logs / "unscored.json", tmp_path / "one"),
            "unscored.json: no sample is scored; score the log first (inspect score)")
    for name in [p.name for p in logs.iterdir() if p.name.startswith("2026")]:
        (logs / name).unlink()
    refused(imported("inspect", logs, tmp_path / "none"), f"{logs}: no log holds scored samples (no_samples.json: "
                                                          "no samples (a log written with --no-log-samples, or of a "
                                                          "run that finished none, cannot be "
                                                          "replayed); and 1 more)")
    assert not (tmp_path / "one").exists() and not (tmp_path / "none").exists()


def test_a_sample_of_a_scored_inspect_log_without_a_score_is_not_measured(tmp_path):
    """README: rows without a score are dropped by default (--unmeasured drop), refused with --unmeasured refuse;
    an Inspect sample without one stopped the import instead."""
    logs = write_inspect(tmp_path)
    log = logs / "2026-01-01_demo_1.json"
    data = json.loads(log.read_text())
    data["samples"][3]["scores"] = {}
    log.write_text(json.dumps(data))
    said = ok(imported("inspect", logs, tmp_path / "ds", "--missing", "drop-instances"))
    assert "1 row dropped (no score: 1)" in said
    assert sorted(logs_of(tmp_path / "ds")["instance_id"].unique()) == ["q0", "q1", "q2", "q4"]
    refused(imported("inspect", logs, tmp_path / "strict", "--unmeasured", "refuse"),
            "1 row is not measured", "2026-01-01_demo_1.json")


def test_inspect_logs_scored_by_several_scorers_say_that_the_accuracy_mixes_them(tmp_path):
    """Tasks of one folder scored by 'match' and 'includes' were merged with only dataset.yaml saying so."""
    logs = write_inspect(tmp_path)
    log = logs / "2026-01-01_demo_2.json"
    data = json.loads(log.read_text())
    for sample in data["samples"]:
        sample["scores"] = {"includes": sample["scores"]["match"]} if sample["scores"] else {}
    log.write_text(json.dumps(data))
    said = ok(imported("inspect", logs, tmp_path / "ds"))
    assert ("scores from 2 scorers (includes, match): each row's correct is its own scorer's, so an accuracy mixes "
            "them (recorded in dataset.yaml's provenance.metric)") in said
    assert provenance(tmp_path / "ds")["metric"] == ["includes", "match"]
    assert "scorers" not in ok(imported("inspect", logs / "2026-01-01_demo_1.json", tmp_path / "one"))


# --- 2. Every Eval Ever latency: generation_time_ms before latency_ms -------------------------------------------------

def test_eee_latency_from_generation_time(tmp_path):
    src = write_eee(tmp_path / "src")
    path = first(src, "*_samples.jsonl")  # m-small: its converters' fields, and one line with latency_ms alone
    for n in range(1, 5):
        edit_line(path, n, lambda i: i["performance"].update(generation_time_ms=i["performance"]["latency_ms"],
                                                             latency_ms=7.0))
    ok(imported("every-eval-ever", src, tmp_path / "ds"))
    logs = logs_of(tmp_path / "ds")
    small = logs[logs["model"] == "org/m-small"]
    assert list(small["latency_s"]) == [r[1] for r in CONFIGS[0][3]]  # the table's seconds, never 7 ms
    assert provenance(tmp_path / "ds")["latency_fields"] == {"performance.generation_time_ms": 4,
                                                             "performance.latency_ms": 11}


# --- 3. HELM splits ---------------------------------------------------------------------------------------------------

def _valid_split(root: Path, instances: tuple[str, ...] = ("id1", "id3")) -> None:
    """Move two instances of every run to HELM's valid split, as MMLU runs draw a few of theirs from it."""
    for stats in root.rglob("per_instance_stats.json"):
        entries = json.loads(stats.read_text())
        for entry in entries:
            if entry["instance_id"] in instances:
                for stat in entry["stats"]:
                    stat["name"]["split"] = "valid"
        stats.write_text(json.dumps(entries))


@pytest.mark.parametrize("split, kept", [(None, ["id0", "id2", "id4"]), ("test", ["id0", "id2", "id4"]),
                                         ("valid", ["id1", "id3"]), ("all", ["id0", "id1", "id2", "id3", "id4"])])
def test_helm_split(tmp_path, split, kept):
    src = write_helm(tmp_path / "src")
    _valid_split(src)
    ok(imported("helm", src, tmp_path / "ds", *(["--split", split] if split else [])))
    logs = logs_of(tmp_path / "ds")
    assert sorted(logs["instance_id"].unique()) == kept
    for cid, (_, _, _, rows) in zip(IDS["helm"], CONFIGS):
        mine = logs[logs["config_id"] == cid].sort_values("instance_id")
        assert list(mine["correct"]) == [rows[int(i[2:])][0] for i in kept]
    prov = provenance(tmp_path / "ds")
    assert prov["options"]["split"] == (split or "test")
    assert prov.get("other_splits") == ({"test": 9} if split == "valid" else None if split == "all" else {"valid": 6})


def test_helm_model_on_two_deployments_is_two_configurations(tmp_path):
    """HELM names a model (``meta/llama-3-70b``) and where it ran (``model_deployment``); the same model on two hosts
    differs in latency and cost, so each deployment is a configuration, instead of a repeated pair."""
    suite = write_helm(tmp_path / "src") / "runs" / "v1"
    runs = sorted(p for p in suite.iterdir() if (p / "per_instance_stats.json").is_file())
    for run, host in zip(runs[:2], ("together", "groq")):
        spec = json.loads((run / "run_spec.json").read_text())
        spec["adapter_spec"].update(model="meta/llama-3-70b", model_deployment=f"{host}/llama-3-70b",
                                    temperature=0.0, max_tokens=64)
        (run / "run_spec.json").write_text(json.dumps(spec))
    ok(imported("helm", suite, tmp_path / "ds"))
    logs = logs_of(tmp_path / "ds")
    assert sorted(set(logs["model"])) == ["groq/llama-3-70b", "org/m-small", "together/llama-3-70b"]
    for host, c in (("together", 1), ("groq", 2)):  # the runs of m-large at 0.0 and at 0.7, in that order
        rows = logs[logs["model"] == f"{host}/llama-3-70b"].sort_values("instance_id")
        assert list(rows["latency_s"]) == [r[1] for r in CONFIGS[c][3]]
        assert list(rows["config_id"].unique()) == [f"{host}/llama-3-70b_t0.0_g64_direct"]


def test_split_is_for_helm_only(tmp_path):
    refused(imported("inspect", write_inspect(tmp_path / "src"), tmp_path / "ds", "--split", "valid"),
            "--split: only helm sources record")
    refused(imported("helm", write_helm(tmp_path / "h"), tmp_path / "ds", "--split", "dev"),
            "--split: 'dev' is not one of test, valid, all")


# --- 4. promptfoo prompts without a label --------------------------------------------------------------------------

def test_promptfoo_prompt_without_label(tmp_path):
    src = write_promptfoo(tmp_path / "src")
    templates = ["You are careful.\nAnswer: {{question}}", "Answer: {{question}}"]

    def unlabelled(doc: dict) -> None:  # two prompts, labelled by promptfoo with their raw template
        doc["results"]["prompts"] = [{"raw": t, "label": t} for t in templates]
        second = []
        for item in doc["results"]["results"]:
            item["prompt"] = {"raw": templates[0].replace("{{question}}", "q"), "label": templates[0]}
            item["promptIdx"] = 0
            copy = json.loads(json.dumps(item))
            copy["prompt"] = {"raw": templates[1].replace("{{question}}", "q"), "label": templates[1]}
            copy["promptIdx"] = 1
            second.append(copy)
        doc["results"]["results"] += second

    edit_json(src, unlabelled)
    ok(imported("promptfoo", src, tmp_path / "ds"))
    logs = logs_of(tmp_path / "ds")
    assert sorted(logs["prompting"].unique()) == ["prompt0", "prompt1"]
    assert all("\n" not in c for c in logs["config_id"]) and logs["config_id"].nunique() == 6
    assert provenance(tmp_path / "ds")["prompt_sha256"] == {
        f"prompt{n}": hashlib.sha256(t.encode()).hexdigest() for n, t in enumerate(templates)}


# --- 5. scores: fractions, grades and several values, the same in every reader ----------------------------------------

def _inspect_scores(root: Path, values: list[Any]) -> Path:
    """The first JSON log (m-large, temperature 0) with these score values of its samples, in order."""
    def change(doc: dict) -> None:
        for sample, value in zip(doc["samples"], values):
            sample["scores"] = {"multi": {"value": value}}
    log = first(write_inspect(root), "*.json")
    edit_json(log, change)
    return log


SCORES = [({"accuracy": 1, "f1": 0.5}, 1.0, 0.5), ({"accuracy": 0, "f1": 0.25}, 0.0, 0.25),
          ({"accuracy": "C", "f1": 1}, 1.0, 1.0), ({"accuracy": "P", "f1": 0.0}, 0.5, 0.0),
          ({"accuracy": True, "f1": 0.75}, 1.0, 0.75)]


@pytest.mark.parametrize("key", ["accuracy", "f1"])
def test_inspect_dict_scores_pick_one_key(tmp_path, key):
    log = _inspect_scores(tmp_path / "src", [s[0] for s in SCORES])
    ok(imported("inspect", log, tmp_path / "ds", "--metric", f"multi.{key}"))
    assert list(logs_of(tmp_path / "ds")["correct"]) == [s[1] if key == "accuracy" else s[2] for s in SCORES]
    assert provenance(tmp_path / "ds")["metric"] == f"multi.{key}"


@pytest.mark.parametrize("metric, values, words", [
    (None, [{"accuracy": 1}], "scores.multi holds several values (accuracy); choose one with --metric multi.KEY"),
    ("multi.f2", [{"accuracy": 1}], "scores.multi has no 'f2'; it has accuracy"),
    ("multi.f1", [0.5], "--metric multi.f1: scores.multi holds one value"),
    ("multi", [1.5], "sample 'q0': scores.multi: score 1.5 is outside [0, 1]"),
    ("multi", ["maybe"], "score 'maybe' is neither true/false, a number in [0, 1] nor a grade"),
], ids=["dict-without-key", "unknown-key", "key-of-a-number", "outside", "unknown-text"])
def test_inspect_score_refusals_are_one_line(tmp_path, metric, values, words):
    log = _inspect_scores(tmp_path / "src", values)
    refused(imported("inspect", log, tmp_path / "ds", *(["--metric", metric] if metric else [])), "demo_1.json",
            words)


def test_fractional_scores_in_helm_eee_and_tables(tmp_path):
    src = write_helm(tmp_path / "h")
    for stats in src.rglob("per_instance_stats.json"):
        entries = json.loads(stats.read_text())
        for entry in entries:
            entry["stats"].append({**stat_of(entry, "exact_match"), "name": {"name": "f1_score", "split": "test"},
                                   "mean": 0.25, "sum": 0.25})
        stats.write_text(json.dumps(entries))
    ok(imported("helm", src, tmp_path / "h-ds", "--metric", "f1_score"))
    assert set(logs_of(tmp_path / "h-ds")["correct"]) == {0.25}
    src = write_eee(tmp_path / "e")
    for path in src.rglob("*_samples.jsonl"):
        for n in range(1, 6):
            edit_line(path, n, lambda i, n=n: i["evaluation"].update(score=0.125 * n))
    ok(imported("every-eval-ever", src, tmp_path / "e-ds", "--metric", "demo.score"))
    logs = logs_of(tmp_path / "e-ds")
    assert sorted(set(logs["correct"])) == [0.0, 0.125, 0.25, 0.375, 0.5, 0.625]  # the failed call scores 0
    refused(imported("every-eval-ever", src, tmp_path / "e-ds2", "--metric", "demo.grade"),
            "--metric demo.grade: an Every Eval Ever line is scored by evaluation.is_correct or evaluation.score")
    frame = tiny_logs(2, 4)
    frame["correct"] = [0.5, 0.25, 1, 0] * 2
    frame.to_csv(tmp_path / "logs.csv", index=False)
    ok(imported("canonical", tmp_path / "logs.csv", tmp_path / "c-ds"))
    assert list(logs_of(tmp_path / "c-ds")["correct"]) == [0.5, 0.25, 1, 0] * 2


# --- 6. repeated runs ------------------------------------------------------------------------------------------------

def _two_runs(root: Path) -> tuple[Path, list[list[tuple]]]:
    """Two Inspect logs of configuration m-small, started an hour apart; the later run is written first."""
    root.mkdir(parents=True)
    model, temperature, limit, rows = CONFIGS[0]
    later = [(1 - r[0], r[1] + 1.0, r[2], r[3] + 5) for r in rows]
    for name, created, table in (("a.json", "2026-01-01T01:00:00+00:00", later),
                                 ("b.json", "2026-01-01T00:00:00Z", rows)):
        header, samples = _inspect_log(model, temperature, limit, table, 0)
        header["eval"]["created"] = created
        (root / name).write_text(json.dumps({**header, "samples": samples}))
    return root, [rows, later]


def test_repeated_runs_refused_with_file_positions(tmp_path):
    src, _ = _two_runs(tmp_path / "logs")
    refused(imported("inspect", src, tmp_path / "ds"), "duplicate (config_id, instance_id) pair",
            "a.json: the file's sample number 1 and again at", "b.json: the file's sample number 1",
            "(4 more repeated rows)", "--repeats latest")


@pytest.mark.parametrize("policy", ["latest", "first", "epochs"])
def test_repeated_runs_kept_as_asked(tmp_path, policy):
    src, (earlier, later) = _two_runs(tmp_path / "logs")
    ok(imported("inspect", src, tmp_path / "ds", "--repeats", policy))
    logs = logs_of(tmp_path / "ds")
    if policy == "epochs":
        runs = {f"q{i}#{k + 1}": run[i] for k, run in enumerate((earlier, later)) for i in range(5)}
    else:
        run = later if policy == "latest" else earlier
        runs = {f"q{i}": run[i] for i in range(5)}
    assert dict(zip(logs["instance_id"], logs["correct"])) == {k: float(v[0]) for k, v in runs.items()}
    assert dict(zip(logs["instance_id"], logs["latency_s"])) == {k: v[1] for k, v in runs.items()}
    assert dict(zip(logs["instance_id"], logs["tokens"])) == {k: v[2] + v[3] for k, v in runs.items()}
    record = provenance(tmp_path / "ds")["repeats"]
    assert record["policy"] == policy and record["pairs"] == 5
    assert sum(record["by_configuration"].values()) == 5  # pairs, not the 10 rows read of them


def test_repeated_rows_of_a_table(tmp_path):
    frame = tiny_logs(2, 3)
    again = frame.iloc[[1]].assign(correct=1 - frame.loc[1, "correct"], latency_s=9.5)
    pd.concat([frame, again]).to_csv(tmp_path / "logs.csv", index=False)
    refused(imported("canonical", tmp_path / "logs.csv", tmp_path / "ds"),
            "('cfg0', 'q001') at row 2 and again at row 7")
    ok(imported("canonical", tmp_path / "logs.csv", tmp_path / "ds", "--repeats", "latest"))
    logs = logs_of(tmp_path / "ds").set_index(["config_id", "instance_id"])
    assert len(logs) == 6 and logs.loc[("cfg0", "q001"), "latency_s"] == 9.5
    assert logs.loc[("cfg0", "q001"), "correct"] == 1 - frame.loc[1, "correct"]


def _epochs(path: Path) -> list[list[tuple]]:
    """An Inspect log (.eval or .json) of configuration m-small run with epochs=2: each sample twice, epoch 2 written
    first. Returns each epoch's (correct, latency s, prompt tokens, completion tokens) rows."""
    model, temperature, limit, rows = CONFIGS[0]
    again = [(1 - r[0], r[1] + 1.0, r[2], r[3] + 5) for r in rows]
    header, _ = _inspect_log(model, temperature, limit, rows, 0)
    header["eval"]["config"] = {"epochs": 2}
    samples = [{**s, "epoch": epoch} for epoch, table in ((2, again), (1, rows))
               for s in _inspect_log(model, temperature, limit, table, 0)[1]]
    path.parent.mkdir(parents=True)
    if path.suffix == ".json":
        path.write_text(json.dumps({**header, "samples": samples}))
        return [rows, again]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_ZSTANDARD) as archive:
        archive.writestr("header.json", json.dumps(header))
        for s in samples:
            archive.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    return [rows, again]


@pytest.mark.parametrize("name, again", [("run.eval", 2), ("run.json", 6)])
def test_inspect_epochs_are_one_instance_run_again(tmp_path, name, again):
    """A log's epochs run each sample again: refused with why and what to pass; --repeats first / latest keep epoch 1
    / 2 whatever the log's order (a JSON log here gives epoch 2 first), epochs keeps both as <id>#1, <id>#2."""
    src = tmp_path / "logs" / name
    epochs = _epochs(src)
    refused(imported("inspect", src, tmp_path / "ds"), "pair ('openai/m-small_t0.0_g256_direct', 'q0') at",
            f"{name}: the file's sample number 1 and again at", f"{name}: the file's sample number {again} (4 more"
            " repeated rows)",
            "an Inspect log's epochs run each sample again (its eval.config.epochs); pass --repeats latest, first")
    for policy, runs in (("first", {f"q{i}": epochs[0][i] for i in range(5)}),
                         ("latest", {f"q{i}": epochs[1][i] for i in range(5)}),
                         ("epochs", {f"q{i}#{k + 1}": epochs[k][i] for k in range(2) for i in range(5)})):
        stdout = ok(imported("inspect", src, tmp_path / policy, "--repeats", policy))
        assert f"kept 1 configurations x {len(runs)} instances" in stdout
        logs = logs_of(tmp_path / policy)
        assert dict(zip(logs["instance_id"], logs["correct"])) == {k: float(v[0]) for k, v in runs.items()}
        assert dict(zip(logs["instance_id"], logs["latency_s"])) == {k: v[1] for k, v in runs.items()}
        assert dict(zip(logs["instance_id"], logs["tokens"])) == {k: v[2] + v[3] for k, v in runs.items()}
    two_runs, _ = _two_runs(tmp_path / "two")  # two logs of one epoch each: the epochs are not why
    assert "epochs run each sample again" not in imported("inspect", two_runs, tmp_path / "ds").stderr


def _promptfoo_repeated(root: Path, indexed: bool = True) -> tuple[Path, dict[tuple[int, int], tuple]]:
    """``promptfoo eval --repeat 2`` of two providers on three tests, as promptfoo numbers it: run r of test t has
    testIdx 2t + r and the test's own testCase; the file gives the second runs first. Returns the file and each
    (test, run)'s (correct, latency s, tokens) for provider m-small."""
    src = write_promptfoo(root)
    doc = json.loads(src.read_text())
    template = doc["results"]["results"][0]
    outcomes: dict[tuple[int, int], tuple] = {}
    results = []
    for run in (1, 0):
        for test in range(3):
            for model, speed in (("m-small", 1.0), ("m-large", 2.0)):
                correct = (test + run) % 2 == 0
                latency, tokens = speed * (0.5 + test / 10 + run), 100 + 10 * test + run
                if model == "m-small":
                    outcomes[(test, run)] = (float(correct), latency, tokens)
                result = {**template, "provider": {"id": f"openai:chat:{model}", "label": f"{model}-t0.0"},
                          "testIdx": 2 * test + run, "testCase": {"vars": {"question": f"q{test}"},
                                                                   "assert": [{"type": "contains", "value": "a"}]},
                          "vars": {"question": f"q{test}"}, "success": correct, "latencyMs": latency * 1000,
                          "failureReason": 0 if correct else 1,
                          "response": {"output": "a", "tokenUsage": {"total": tokens}}}
                result.pop("error", None)
                if not indexed:
                    del result["testIdx"], result["promptIdx"]
                results.append(result)
    doc["results"]["results"] = results
    src.write_text(json.dumps(doc, indent=2))
    return src, outcomes


def test_promptfoo_repeats_are_one_instance_run_again(tmp_path):
    """A test promptfoo ran twice (--repeat 2, a testIdx per run) is one instance: refused with why and what to pass;
    --repeats first / latest keep the run of the lower / higher testIdx whatever the file's order, epochs both."""
    src, outcomes = _promptfoo_repeated(tmp_path / "src")
    refused(imported("promptfoo", src, tmp_path / "ds"),
            "pair ('m-small-t0.0_t0.0_g256_direct', '0') at", "results.json: results.results[0] and again at",
            "results.results[6] (5 more repeated rows)",
            "with the same testCase are runs of one test (promptfoo eval --repeat gives each run a testIdx of its own)",
            "pass --repeats latest, first or epochs")
    assert not (tmp_path / "ds").exists()
    small = "m-small-t0.0_t0.0_g256_direct"
    for policy, runs in (("first", {str(2 * t): (t, 0) for t in range(3)}),
                         ("latest", {str(2 * t): (t, 1) for t in range(3)}),
                         ("epochs", {f"{2 * t}#{r + 1}": (t, r) for t in range(3) for r in range(2)})):
        out = tmp_path / policy
        stdout = ok(imported("promptfoo", src, out, "--repeats", policy))
        assert f"kept 2 configurations x {len(runs)} instances" in stdout
        assert "repeated runs: 6 (configuration, instance) pairs read more than once" in stdout
        logs = logs_of(out)
        logs = logs[logs["config_id"] == small].set_index("instance_id")
        assert sorted(logs.index) == sorted(runs)
        for instance, key in runs.items():
            correct, latency, tokens = outcomes[key]
            assert logs.loc[instance, "correct"] == correct
            assert logs.loc[instance, "latency_s"] == pytest.approx(latency)
            assert logs.loc[instance, "tokens"] == tokens
        record = provenance(out)["repeats"]
        assert record["pairs"] == 6 and record.get("rows_dropped") == (None if policy == "epochs" else 6)


def test_promptfoo_file_without_test_indices(tmp_path):
    """Older promptfoo files record no testIdx: each result's test (its testCase) tells the instances apart, numbered
    in the order the file first gives them; runs of a test again are repeats, ordered by their place in the file."""
    src, outcomes = _promptfoo_repeated(tmp_path / "src", indexed=False)
    refused(imported("promptfoo", src, tmp_path / "ds"), "pair ('m-small-t0.0_t0.0_g256_direct', '0') at",
            "results.results[0] and again at", "results.results[6]")
    stdout = ok(imported("promptfoo", src, tmp_path / "ds", "--repeats", "first"))
    assert "kept 2 configurations x 3 instances" in stdout
    logs = logs_of(tmp_path / "ds")
    logs = logs[logs["config_id"] == "m-small-t0.0_t0.0_g256_direct"].set_index("instance_id")
    for test in range(3):  # the file's first run of each test is run 1
        correct, latency, tokens = outcomes[(test, 1)]
        assert (logs.loc[str(test), "correct"], logs.loc[str(test), "tokens"]) == (correct, tokens)
        assert logs.loc[str(test), "latency_s"] == pytest.approx(latency)
    doc = json.loads(src.read_text())
    for result in doc["results"]["results"]:
        del result["testCase"], result["vars"]
    src.write_text(json.dumps(doc))
    refused(imported("promptfoo", src, tmp_path / "ds2"), "results.json: results.results[0]: records neither "
            "'testIdx' nor the test it ran ('testCase' or 'vars')")


# --- 7. --set fills what the source lacks, --override replaces --------------------------------------------------------

def _one_temperature_missing(root: Path) -> Path:
    src = write_inspect(root)
    edit_json(first(src, "*_2.json"), lambda doc: doc["plan"]["config"].update(temperature=None))
    return src


def test_set_fills_only_what_the_source_lacks(tmp_path):
    src = _one_temperature_missing(tmp_path / "src")
    ok(imported("inspect", src, tmp_path / "ds", "--set", "temperature=0.3"))
    logs = logs_of(tmp_path / "ds")
    assert dict(zip(logs["model"] + "/" + logs["max_new_tokens"].astype(str), logs["temperature"])) == {
        "openai/m-small/256": 0.0, "openai/m-large/256": 0.0, "openai/m-large/512": 0.3}
    prov = provenance(tmp_path / "ds")
    assert prov["options"]["set"] == {"temperature": 0.3} and prov["filled"] == {"temperature": 5}


def test_override_replaces_what_the_source_recorded(tmp_path):
    src = _one_temperature_missing(tmp_path / "src")
    ok(imported("inspect", src, tmp_path / "ds", "--override", "temperature=0.3"))
    assert set(logs_of(tmp_path / "ds")["temperature"]) == {0.3}
    prov = provenance(tmp_path / "ds")
    assert prov["options"]["override"] == {"temperature": 0.3} and prov["replaced"] == {"temperature": 10}
    refused(imported("inspect", src, tmp_path / "ds2", "--set", "temperature=1", "--override", "temperature=0"),
            "--set and --override both give temperature")


def test_override_of_a_mapped_column(tmp_path):
    frame = tiny_logs(2, 3).rename(columns={"temperature": "temp"})
    frame.loc[0, "temp"] = None
    frame.to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text(yaml.safe_dump({"columns": {"temperature": "temp"}}))
    ok(imported("canonical", tmp_path / "logs.csv", tmp_path / "ds", "--mapping", str(tmp_path / "map.yaml"),
                "--override", "temperature=0.2"))
    assert set(logs_of(tmp_path / "ds")["temperature"]) == {0.2}
    assert provenance(tmp_path / "ds")["replaced"] == {"temperature": 5}


def test_set_fills_empty_cells_of_a_table(tmp_path):
    frame = tiny_logs(2, 3)
    frame.loc[frame["config_id"] == "cfg1", "temperature"] = None
    frame.to_csv(tmp_path / "logs.csv", index=False)
    ok(imported("canonical", tmp_path / "logs.csv", tmp_path / "ds", "--set", "temperature=0.9"))
    assert list(logs_of(tmp_path / "ds")["temperature"]) == [0.5] * 3 + [0.9] * 3


# --- 8. unmeasured rows in a table: drop or refuse, as for a tool's logs ----------------------------------------------

def _zero_latency(tmp_path: Path) -> Path:
    frame = tiny_logs(2, 6)
    frame.loc[[3, 9], "latency_s"] = 0.0  # 1-second timestamps: the same second
    frame.to_csv(tmp_path / "logs.csv", index=False)
    return tmp_path / "logs.csv"


def test_zero_latency_rows_of_a_table_are_dropped(tmp_path):
    out = ok(imported("canonical", _zero_latency(tmp_path), tmp_path / "ds", "--missing", "drop-instances"))
    assert "not measured (no score, or a latency or token count that is empty or 0): 2 rows dropped " \
           "(latency_s empty or 0: 2)" in out
    logs = logs_of(tmp_path / "ds")
    assert sorted(logs["instance_id"].unique()) == ["q000", "q001", "q002", "q004", "q005"]
    assert provenance(tmp_path / "ds")["unmeasured"] == {"policy": "drop", "rows": 2,
                                                         "by_configuration": {"cfg0": 1, "cfg1": 1}}


def test_inspect_logs_without_timing_are_imported_without_latency(tmp_path):
    """Inspect logs written before inspect_ai recorded a sample's working and total time (early 2025) have none: they
    were refused ("none of the 5 rows is measured"), with no way in. They are written without latency; a row
    without tokens is still dropped as unmeasured."""
    model, temperature, limit, rows = CONFIGS[0]
    header, samples = _inspect_log(model, temperature, limit, rows, 0)
    for s in samples:
        del s["working_time"], s["total_time"]
    samples[1]["model_usage"][f"openai/{model}"] = {**samples[1]["model_usage"][f"openai/{model}"], "total_tokens": 0}
    (tmp_path / "old.json").write_text(json.dumps({**header, "samples": samples}))
    out = ok(imported("inspect", tmp_path / "old.json", tmp_path / "ds"))
    assert "no row has a latency (latency_s empty or 0 on every row)" in out
    assert "1 row dropped (tokens empty or 0: 1)" in out
    logs = logs_of(tmp_path / "ds")
    assert "latency_s" not in logs.columns and len(logs) == 4


def test_unmeasured_rows_refused_where_they_were_read(tmp_path):
    refused(imported("canonical", _zero_latency(tmp_path), tmp_path / "ds", "--unmeasured", "refuse"),
            "logs.csv: 2 rows are not measured", "the first at row 4; pass --unmeasured drop")
    src = write_eee(tmp_path / "src")
    edit_line(first(src, "*_samples.jsonl"), 3, lambda i: i["performance"].update(latency_ms=0))
    refused(imported("every-eval-ever", src, tmp_path / "ds", "--unmeasured", "refuse"),
            "1 row is not measured", "00000000-0000-4000-8000-000000000000_samples.jsonl: line 3")


# --- 9. small logs get a profiling split that fits --------------------------------------------------------------------

def test_small_logs_get_a_proportional_split(tmp_path):
    tiny_logs(3, 150).to_csv(tmp_path / "logs.csv", index=False)
    out = ok(imported("canonical", tmp_path / "logs.csv", tmp_path / "ds"))
    assert "profiling split: 75 of 150 instances" in out
    meta = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())
    assert meta["split"] == {"profiling_size": 75, "seed": 0}
    described = json.loads(ok(RUNNER.invoke(app, ["data", "describe", str(tmp_path / "ds"), "--json"])))
    assert described["K"] == 3
    tiny_logs(2, 400).to_csv(tmp_path / "big.csv", index=False)
    assert "profiling split" not in ok(imported("canonical", tmp_path / "big.csv", tmp_path / "big"))
    assert "split" not in yaml.safe_load((tmp_path / "big" / "dataset.yaml").read_text())


def test_declared_split_too_large_is_refused_at_import(tmp_path):
    tiny_logs(2, 10).to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text(yaml.safe_dump({"dataset": {"split": {"profiling_size": 10, "seed": 0}}}))
    refused(imported("canonical", tmp_path / "logs.csv", tmp_path / "ds", "--mapping", str(tmp_path / "map.yaml")),
            "map.yaml: dataset.split: profiling_size is 10 but the logs have 10 instances")


def test_one_instance_is_refused_and_two_are_enough(tmp_path):
    tiny_logs(3, 2).to_csv(tmp_path / "two.csv", index=False)
    assert "profiling split: 1 of 2 instances" in ok(imported("canonical", tmp_path / "two.csv", tmp_path / "ds"))
    earlier = {p.name: p.read_bytes() for p in (tmp_path / "ds").iterdir()}
    tiny_logs(3, 1).to_csv(tmp_path / "one.csv", index=False)
    refused(imported("canonical", tmp_path / "one.csv", tmp_path / "ds", "--force"),
            "one.csv: 1 instance kept; a dataset needs at least 2")
    assert {p.name: p.read_bytes() for p in (tmp_path / "ds").iterdir()} == earlier  # the earlier dataset kept
    assert "profiling split: 1 of 2 instances" in ok(imported("canonical", tmp_path / "two.csv", tmp_path / "two"))
    described = json.loads(ok(RUNNER.invoke(app, ["data", "describe", str(tmp_path / "two"), "--json"])))
    assert described["K"] == 3


# --- tokens from their two counts ------------------------------------------------------------------------------------

def test_logs_with_prompt_and_completion_tokens_only_are_charged_their_sum(tmp_path):
    """Logs that count prompt and completion tokens but have no tokens column get tokens = their sum (the cost a
    token budget then charges), said at import and recorded as derived; a tokens column of the logs' own is kept
    as it is."""
    frame = tiny_logs()
    frame["prompt_tokens"] = (frame["tokens"] * 0.7).round()
    frame["completion_tokens"] = frame["tokens"] - frame["prompt_tokens"] + 3
    frame.drop(columns=["tokens"]).to_csv(tmp_path / "parts.csv", index=False)
    result = RUNNER.invoke(app, ["data", "import", str(tmp_path / "parts.csv"), "--out", str(tmp_path / "parts")])
    assert "tokens: the sum of prompt_tokens and completion_tokens" in ok(result)
    logs = logs_of(tmp_path / "parts").sort_values(["config_id", "instance_id"], ignore_index=True)
    expected = frame.sort_values(["config_id", "instance_id"], ignore_index=True)
    assert logs["tokens"].tolist() == (expected["prompt_tokens"] + expected["completion_tokens"]).tolist()
    assert provenance(tmp_path / "parts")["derived"] == {"tokens": ["prompt_tokens", "completion_tokens"]}
    frame.to_csv(tmp_path / "all.csv", index=False)
    result = RUNNER.invoke(app, ["data", "import", str(tmp_path / "all.csv"), "--out", str(tmp_path / "all")])
    assert "the sum of" not in ok(result) and "derived" not in provenance(tmp_path / "all")
    logs = logs_of(tmp_path / "all").sort_values(["config_id", "instance_id"], ignore_index=True)
    assert logs["tokens"].tolist() == expected["tokens"].tolist()


def test_logs_with_latency_in_milliseconds_only_are_read_in_seconds(tmp_path):
    """A latency_ms column and no latency_s (as many tools log it): latency_s = latency_ms / 1000, said at import
    and recorded as derived (it was dropped as an ignored column, leaving the logs without latency)."""
    frame = tiny_logs()
    frame["latency_ms"] = frame["latency_s"] * 1000
    frame.drop(columns=["latency_s"]).to_csv(tmp_path / "ms.csv", index=False)
    result = RUNNER.invoke(app, ["data", "import", str(tmp_path / "ms.csv"), "--out", str(tmp_path / "ms")])
    assert "latency_s: latency_ms / 1000" in ok(result) and "ignored source columns" not in result.stdout
    logs = logs_of(tmp_path / "ms").sort_values(["config_id", "instance_id"], ignore_index=True)
    expected = frame.sort_values(["config_id", "instance_id"], ignore_index=True)
    assert logs["latency_s"].to_numpy() == pytest.approx(expected["latency_s"].to_numpy(), rel=1e-12)
    assert provenance(tmp_path / "ms")["derived"] == {"latency_s": "latency_ms / 1000"}
    frame.loc[3, "latency_ms"] = 0  # a cached call: not every row timed, so the logs stay as they were read
    frame.drop(columns=["latency_s"]).to_csv(tmp_path / "some.csv", index=False)
    result = RUNNER.invoke(app, ["data", "import", str(tmp_path / "some.csv"), "--out", str(tmp_path / "some")])
    assert "latency_s: not read from latency_ms, which some rows lack or give as 0" in ok(result)
    assert "latency_s" not in logs_of(tmp_path / "some") and "derived" not in provenance(tmp_path / "some")
