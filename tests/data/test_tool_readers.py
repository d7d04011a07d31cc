"""The helm, inspect, promptfoo and every-eval-ever readers on small logs written here in each tool's format.

One table of outcomes (three configurations x five instances, one failed call)
is written in each format; each import is checked number by number against
means computed here from that table, and each reader is fed broken files.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app

RUNNER = CliRunner()
# (model, temperature, max_tokens, [(correct, latency s, prompt tokens, completion tokens)] for q0..q4)
CONFIGS = [
    ("m-small", 0.0, 256, [(1, 0.50, 100, 20), (0, 0.60, 110, 25), (1, 0.55, 90, 15), (1, 0.65, 120, 30),
                           (0, 0.70, 105, 22)]),
    ("m-large", 0.0, 256, [(1, 1.50, 100, 40), (1, 1.20, 110, 45), (1, 1.10, 90, 35), (0, 1.40, 120, 50),
                           (1, 1.30, 105, 42)]),
    ("m-large", 0.7, 512, [(1, 2.50, 100, 80), (0, 2.20, 110, 90), (1, 2.10, 90, 70), (1, 2.40, 120, 95),
                           (1, 2.30, 105, 85)]),
]
FAILED = (2, 1)  # (configuration, instance): the call errored (its tokens and time were still spent)


def expected_means() -> list[tuple[float, float, float]]:
    """(accuracy, latency, tokens) per configuration, from the table, with the failed call scored 0."""
    out = []
    for c, (_, _, _, rows) in enumerate(CONFIGS):
        correct = [0 if (c, i) == FAILED else r[0] for i, r in enumerate(rows)]
        out.append((sum(correct) / 5, sum(r[1] for r in rows) / 5, sum(r[2] + r[3] for r in rows) / 5))
    return out


# --- writers, one per format -------------------------------------------------------------------------------


def _stat(name: str, value: float) -> dict:
    return {"name": {"name": name, "split": "test"}, "count": 1, "sum": value, "sum_squared": value * value,
            "min": value, "max": value, "mean": value, "variance": 0.0, "stddev": 0.0}


def write_helm(root: Path) -> Path:
    suite = root / "benchmark_output" / "runs" / "v1"
    for model, temperature, limit, rows in CONFIGS:
        run = suite / f"demo:model=org_{model},temperature={temperature}"
        run.mkdir(parents=True)
        spec = {"name": run.name, "scenario_spec": {"class_name": "helm.benchmark.scenarios.demo.DemoScenario",
                                                    "args": {}},
                "adapter_spec": {"method": "generation", "model": f"org/{model}", "model_deployment": f"org/{model}",
                                 "temperature": temperature, "max_tokens": limit}, "metric_specs": []}
        (run / "run_spec.json").write_text(json.dumps(spec, indent=2))
        entries = []
        for i, (correct, latency, prompt, completion) in enumerate(rows):
            stats = [_stat("exact_match", float(correct)), _stat("num_prompt_tokens", prompt),
                     _stat("num_completion_tokens", completion), _stat("num_output_tokens", completion),
                     _stat("inference_runtime", latency), _stat("num_train_instances", 5)]
            entries.append({"instance_id": f"id{i}", "train_trial_index": 0, "stats": stats})
            # a robustness variant and a second train trial: neither is the instance itself
            entries.append({"instance_id": f"id{i}", "train_trial_index": 0, "perturbation": {"name": "typos"},
                            "stats": [_stat("exact_match", 1.0 - correct), *stats[1:]]})
            entries.append({"instance_id": f"id{i}", "train_trial_index": 1, "stats": stats[:1]})
        (run / "per_instance_stats.json").write_text(json.dumps(entries, indent=2))
    (suite / "demo:model=org_unfinished").mkdir()
    (suite / "demo:model=org_unfinished" / "run_spec.json").write_text(json.dumps({"name": "x", "adapter_spec": {}}))
    return root / "benchmark_output"


def _inspect_log(model: str, temperature: float, limit: int, rows: list, c: int) -> tuple[dict, list[dict]]:
    header = {"version": 2, "status": "success",
              "eval": {"task": "demo", "task_id": f"t{c}", "run_id": f"r{c}", "model": f"openai/{model}",
                       "model_generate_config": {}, "created": "2026-01-01T00:00:00+00:00"},
              "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}],
                       "config": {"temperature": temperature, "max_tokens": limit}},
              "results": {"total_samples": 5, "completed_samples": 5}}
    samples = []
    for i, (correct, latency, prompt, completion) in enumerate(rows):
        usage = {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion}
        sample = {"id": f"q{i}", "epoch": 1, "input": "question", "target": "answer",
                  "output": {"model": model, "choices": [], "usage": usage, "time": latency * 0.9},
                  "scores": {"match": {"value": "C" if correct else "I", "answer": "a"}},
                  # the grader's tokens are not the configuration's cost
                  "model_usage": {f"openai/{model}": usage, "openai/grader": {"input_tokens": 9, "output_tokens": 1,
                                                                              "total_tokens": 10}},
                  "total_time": latency + 3.0, "working_time": latency}
        if (c, i) == FAILED:
            sample["scores"] = {}
            sample["error"] = {"message": "RateLimitError", "traceback": "..."}
        samples.append(sample)
    return header, samples


def write_inspect(root: Path) -> Path:
    logs = root / "logs"
    logs.mkdir(parents=True)
    for c, (model, temperature, limit, rows) in enumerate(CONFIGS):
        header, samples = _inspect_log(model, temperature, limit, rows, c)
        if c == 0:  # the binary .eval layout: a zip of header.json and one file per sample
            with zipfile.ZipFile(logs / f"2026-01-01_demo_{c}.eval", "w") as archive:
                archive.writestr("header.json", json.dumps(header))
                for s in samples:
                    archive.writestr(f"samples/{s['id']}_epoch_1.json", json.dumps(s))
        else:
            (logs / f"2026-01-01_demo_{c}.json").write_text(json.dumps({**header, "samples": samples}, indent=2))
    (logs / "logs.json").write_text("{}")  # the log folder's index, not a log
    return logs


def write_promptfoo(root: Path) -> Path:
    providers = [{"id": f"openai:chat:{m}", "label": f"{m}-t{t}", "config": {"temperature": t, "max_tokens": g}}
                 for m, t, g, _ in CONFIGS]
    results = []
    for c, (model, temperature, _, rows) in enumerate(CONFIGS):
        for i, (correct, latency, prompt, completion) in enumerate(rows):
            failed = (c, i) == FAILED
            results.append({
                "provider": {"id": f"openai:chat:{model}", "label": f"{model}-t{temperature}"},
                "prompt": {"raw": "Answer: {{question}}", "label": "direct"}, "promptIdx": 0, "testIdx": i,
                "testCase": {"vars": {"question": f"q{i}"}}, "vars": {"question": f"q{i}"},
                "response": {"output": "" if failed else "a",
                             "tokenUsage": {"total": prompt + completion, "prompt": prompt, "completion": completion}},
                "success": bool(correct) and not failed, "score": float(correct), "latencyMs": latency * 1000,
                "failureReason": 2 if failed else (0 if correct else 1), "namedScores": {},
                **({"error": "Request timed out"} if failed else {})})
    doc = {"evalId": "eval-1", "results": {"version": 3, "timestamp": "2026-01-01T00:00:00.000Z",
                                           "prompts": [{"raw": "Answer: {{question}}", "label": "direct"}],
                                           "results": results, "stats": {"successes": 10, "failures": 5}},
           "config": {"providers": providers, "prompts": ["Answer: {{question}}"]}}
    root.mkdir(parents=True)
    path = root / "results.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def write_eee(root: Path) -> Path:
    folder = root / "data" / "demo"
    folder.mkdir(parents=True)
    for c, (model, temperature, limit, rows) in enumerate(CONFIGS):
        uuid = f"0000000{c}-0000-4000-8000-000000000000"
        aggregate = {"schema_version": "0.2.1", "evaluation_id": f"demo/{model}/{c}", "model_info": {"id": model},
                     "evaluation_results": [{"evaluation_name": "demo", "generation_config": {"generation_args": {
                         "temperature": temperature, "max_tokens": limit, "reasoning": False}}}]}
        (folder / f"{uuid}.json").write_text(json.dumps(aggregate))
        lines = []
        for i, (correct, latency, prompt, completion) in enumerate(rows):
            failed = (c, i) == FAILED
            lines.append(json.dumps({
                "schema_version": "0.2.1", "evaluation_id": f"demo/{model}/{c}", "model_id": f"org/{model}",
                "evaluation_name": "demo", "sample_id": f"q{i}", "interaction_type": "single_turn",
                "input": {"raw": "question", "reference": ["a"]}, "output": {"raw": ["a"]}, "answer_attribution": [],
                "evaluation": {"score": float(correct), "is_correct": bool(correct)},
                "token_usage": {"input_tokens": prompt, "output_tokens": completion,
                                "total_tokens": prompt + completion},
                "performance": {"latency_ms": latency * 1000}, "error": "timeout" if failed else None}))
        (folder / f"{uuid}_samples.jsonl").write_text("\n".join(lines) + "\n")
    return root / "data"


def test_helm_runs_differing_in_other_adapter_settings_are_other_configurations(tmp_path):
    """A 0-shot and a 5-shot run of one model on one scenario were one configuration: refused as repeats, and with
    --repeats latest the run whose folder sorted last was kept, as "the latest run". Each is its own configuration
    now, its config_id naming the setting that differs; another scenario's own settings (a seed, its instructions)
    tell nothing apart."""
    import shutil

    suite = write_helm(tmp_path / "src") / "runs" / "v1"
    run = suite / "demo:model=org_m-small,temperature=0.0"
    for shots, seed in ((0, "a"), (5, "b")):
        copy = suite / f"demo:model=org_m-small,temperature=0.0,shots={shots}"
        shutil.copytree(run, copy)
        spec = json.loads((copy / "run_spec.json").read_text())
        spec["adapter_spec"] |= {"max_train_instances": shots, "random": seed}
        (copy / "run_spec.json").write_text(json.dumps(spec))
        entries = json.loads((copy / "per_instance_stats.json").read_text())
        for entry in entries:  # 0-shot: every answer right, 5-shot: every one wrong
            for stat in entry["stats"]:
                if stat["name"]["name"] == "exact_match":
                    stat.update(mean=float(shots == 0), sum=float(shots == 0))
        (copy / "per_instance_stats.json").write_text(json.dumps(entries))
    shutil.rmtree(run)
    done = run_import("helm", suite, tmp_path / "ds")
    assert done.exit_code == 0, done.output
    assert ("configurations told apart by settings beyond model, temperature, generation limit and prompting: "
            "max_train_instances=0, max_train_instances=5\n") in done.stdout
    accuracy = pd.read_csv(tmp_path / "ds" / "logs.csv.gz").groupby("config_id")["correct"].mean().to_dict()
    assert accuracy == {"org/m-small_t0.0_g256_direct_max_train_instances=0": 1.0,
                        "org/m-small_t0.0_g256_direct_max_train_instances=5": 0.0,
                        "org/m-large_t0.0_g256_direct": 4 / 5, "org/m-large_t0.7_g512_direct": 4 / 5}


def test_a_helm_model_whose_instances_are_all_of_another_split_is_named_as_dropped(tmp_path):
    """A model whose runs hold only valid-split instances vanished from a --split test import: only "left out: N
    rows of other splits" was said, among the rows of others. It is named now, with why and what keeps it; so is a
    kept configuration's run that differs in another adapter setting (5-shot), which is a configuration of its own."""
    import shutil

    suite = write_helm(tmp_path / "src") / "runs" / "v1"
    run = suite / "demo:model=org_m-other"
    shutil.copytree(suite / "demo:model=org_m-small,temperature=0.0", run)
    spec = json.loads((run / "run_spec.json").read_text())
    spec["adapter_spec"] |= {"model": "org/m-other", "model_deployment": "org/m-other"}
    (run / "run_spec.json").write_text(json.dumps(spec))
    (run / "per_instance_stats.json").write_text((run / "per_instance_stats.json").read_text()
                                                 .replace('"split": "test"', '"split": "valid"'))
    hot = suite / "demo:model=org_m-small,temperature=0.7"  # a kept model's other configuration: named as such
    shutil.copytree(run, hot)
    spec["adapter_spec"] |= {"model": "org/m-small", "model_deployment": "org/m-small", "temperature": 0.7}
    (hot / "run_spec.json").write_text(json.dumps(spec))
    shots = suite / "demo:model=org_m-small,temperature=0.0,shots=5"  # a kept configuration's 5-shot run: named
    shutil.copytree(run, shots)
    spec["adapter_spec"] |= {"temperature": 0.0, "max_train_instances": 5}
    (shots / "run_spec.json").write_text(json.dumps(spec))
    done = run_import("helm", suite, tmp_path / "ds")
    assert done.exit_code == 0, done.output
    assert ("dropped configuration org/m-other: every instance of its runs is of another split than --split test "
            "(5); --split all keeps them\n") in done.stdout
    assert ("dropped configuration org/m-small at temperature 0.7, max_tokens 256, direct: every instance of its runs "
            "is of another split") in done.stdout
    assert ("dropped configuration org/m-small at temperature 0.0, max_tokens 256, direct, max_train_instances=5: "
            "every instance of its runs is of another split than --split test (5)") in done.stdout
    assert done.stdout.count("dropped configuration") == 3
    assert "kept 3 configurations x 5 instances" in done.stdout


def test_every_eval_ever_latencies_from_two_fields_are_warned_of(tmp_path):
    """Lines whose generation_time_ms is null take their latency_ms, which a converter fills with waiting time
    (100 times smaller): one configuration's latencies then mixed the two, said only in dataset.yaml."""
    src = write_eee(tmp_path / "src")
    assert "latencies come from" not in run_import("every-eval-ever", src, tmp_path / "one").output
    samples = sorted((src / "demo").glob("*_samples.jsonl"))[0]
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    for line in lines[1:]:
        line["performance"]["generation_time_ms"] = line["performance"]["latency_ms"]
    samples.write_text("\n".join(map(json.dumps, lines)) + "\n")
    done = run_import("every-eval-ever", src, tmp_path / "two")
    assert done.exit_code == 0, done.output
    assert ("warning: the latencies come from 2 fields (performance.generation_time_ms 4, performance.latency_ms 11), "
            "each line's first that it has, and the fields may time different things") in done.stdout


def test_each_every_eval_ever_result_gives_its_own_lines_their_settings(tmp_path):
    """An aggregate holding two evaluation results at other settings (temperature 0 with 256 tokens, temperature 1
    with 1,024): every line took the first result's, so the samples run hot were labelled t0.0_g256 and pooled
    into that configuration, at exit 0. Each line takes its own result's settings, found by its
    evaluation_result_id, else its evaluation_name; a line of no result listed takes the settings all share."""
    from cabench.data.readers import ReadOptions, read_eee

    folder = write_eee(tmp_path / "src") / "demo"
    aggregate = folder / "00000001-0000-4000-8000-000000000000.json"  # m-large at t 0.0, 256 tokens
    doc = json.loads(aggregate.read_text())
    doc["evaluation_results"].append({"evaluation_name": "demo_hot", "evaluation_result_id": "hot.acc",
                                      "generation_config": {"generation_args": {"temperature": 1.0,
                                                                                "max_tokens": 1024}}})
    aggregate.write_text(json.dumps(doc))
    samples = aggregate.with_name("00000001-0000-4000-8000-000000000000_samples.jsonl")
    lines = samples.read_text().splitlines()
    hot = [json.loads(line) | {"evaluation_name": "demo_hot", "evaluation_result_id": "hot.acc"} for line in lines]
    samples.write_text("\n".join([*lines, *map(json.dumps, hot)]) + "\n")
    read = read_eee(folder, ReadOptions()).frame()
    mine = read[read["file"] == samples]
    settings = mine.groupby(mine["instance_id"].str.split("/").str[0])[["temperature", "max_new_tokens"]].agg(set)
    assert settings.to_dict("index") == {"demo": {"temperature": {0.0}, "max_new_tokens": {256}},
                                         "demo_hot": {"temperature": {1.0}, "max_new_tokens": {1024}}}
    others = read[read["file"] != samples]
    assert set(zip(others["temperature"], others["max_new_tokens"])) == {(0.0, 256), (0.7, 512)}


WRITERS = {"helm": write_helm, "inspect": write_inspect, "promptfoo": write_promptfoo, "every-eval-ever": write_eee}
# configuration ids the import builds from each source's metadata
IDS = {
    "helm": ["org/m-small_t0.0_g256_direct", "org/m-large_t0.0_g256_direct", "org/m-large_t0.7_g512_direct"],
    "inspect": ["openai/m-small_t0.0_g256_direct", "openai/m-large_t0.0_g256_direct",
                "openai/m-large_t0.7_g512_direct"],
    "promptfoo": ["m-small-t0.0_t0.0_g256_direct", "m-large-t0.0_t0.0_g256_direct", "m-large-t0.7_t0.7_g512_direct"],
    "every-eval-ever": ["org/m-small_t0.0_g256_direct", "org/m-large_t0.0_g256_direct",
                        "org/m-large_t0.7_g512_direct"],
}


def run_import(fmt: str, src: Path, out: Path, *extra: str):
    return RUNNER.invoke(app, ["data", "import", str(src), "--format", fmt, "--out", str(out), *extra])


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_import_described_number_by_number(tmp_path, fmt):
    result = run_import(fmt, WRITERS[fmt](tmp_path / "src"), tmp_path / "ds")
    assert result.exit_code == 0, result.output
    if fmt != "helm":  # HELM records no failed calls
        assert "failed calls: 1, scored as incorrect" in result.stdout
    assert "kept 3 configurations x 5 instances" in result.stdout and "not measured" not in result.stdout
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    by_config = logs.groupby("config_id")
    expected = expected_means()
    if fmt == "helm":  # no failed call: the table's own outcome
        expected[FAILED[0]] = (4 / 5, *expected[FAILED[0]][1:])
    for cid, (acc, lat, tok) in zip(IDS[fmt], expected):
        assert by_config.size()[cid] == 5
        assert by_config["correct"].mean()[cid] == pytest.approx(acc, abs=1e-12)
        assert by_config["latency_s"].mean()[cid] == pytest.approx(lat, abs=1e-12)
        assert by_config["tokens"].mean()[cid] == pytest.approx(tok, abs=1e-9)
    meta = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())
    assert meta["surrogate"] is False and meta["provenance"]["format"] == fmt
    assert meta["provenance"]["rows"]["kept"] == 15
    assert all(len(s["sha256"]) == 64 for s in meta["provenance"]["sources"])
    (tmp_path / "ds" / "dataset.yaml").write_text(yaml.safe_dump({**meta, "split": {"profiling_size": 2, "seed": 0}}))
    out = json.loads(RUNNER.invoke(app, ["data", "describe", str(tmp_path / "ds"), "--json"]).stdout)
    assert out["K"] == 3 and out["surrogate"] is False
    assert out["accuracy_min"] == pytest.approx(min(e[0] for e in expected))
    assert out["accuracy_max"] == pytest.approx(max(e[0] for e in expected))
    assert out["latency_min"] == pytest.approx(0.6) and out["latency_max"] == pytest.approx(2.3)
    assert out["tokens_min"] == pytest.approx(127.4) and out["tokens_max"] == pytest.approx(189.0)


def test_source_specific_facts(tmp_path):
    """What each reader leaves out, and says it did."""
    assert run_import("helm", write_helm(tmp_path / "h"), tmp_path / "h-ds").exit_code == 0
    prov = yaml.safe_load((tmp_path / "h-ds" / "dataset.yaml").read_text())["provenance"]
    assert prov["metric"] == "exact_match" and list(prov["skipped_runs"]) == ["runs/v1/demo:model=org_unfinished"]
    assert len(prov["sources"]) == 6  # run_spec.json and per_instance_stats.json of three runs
    assert run_import("inspect", write_inspect(tmp_path / "i"), tmp_path / "i-ds").exit_code == 0
    prov = yaml.safe_load((tmp_path / "i-ds" / "dataset.yaml").read_text())["provenance"]
    assert prov["metric"] == "match" and len(prov["sources"]) == 3  # logs.json is the folder's index
    assert prov["failed_calls"] == {"policy": "incorrect", "calls": 1,
                                    "by_configuration": {"openai/m-large_t0.7_g512_direct": 1}}


def test_promptfoo_costs_are_kept_as_dollars_when_every_measured_result_has_one(tmp_path):
    """promptfoo records what it priced each call at (``cost``); the import left it out, so an advice in dollars
    needed a price table though the file held the dollars. It is kept as cost_usd where every measured result has
    one above 0, and left out (as the token parts are) where one lacks it or records 0 (promptfoo's cost of a provider
    it has no price for); a negative cost is refused."""
    path = write_promptfoo(tmp_path / "src")
    doc = json.loads(path.read_text())
    for n, item in enumerate(doc["results"]["results"]):
        item["cost"] = (n + 1) * 1e-5
    path.write_text(json.dumps(doc))
    assert run_import("promptfoo", path, tmp_path / "ds").exit_code == 0
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    assert logs["cost_usd"].tolist() == pytest.approx([(n + 1) * 1e-5 for n in range(15)], abs=1e-15)
    for lacking, cost in enumerate((None, 0)):  # one without, or one of 0 (promptfoo's "no price known")
        doc["results"]["results"][3]["cost"] = cost
        path.write_text(json.dumps(doc))
        done = run_import("promptfoo", path, tmp_path / f"some{lacking}")
        assert done.exit_code == 0 and "cost_usd" not in pd.read_csv(tmp_path / f"some{lacking}" / "logs.csv.gz")
        assert (f"cost_usd: not kept, as not every measured call has a cost above 0 ({path}: results.results[3] "
                f"records {'no cost' if cost is None else 'a cost of 0'}); give prices") in done.stdout
    doc["results"]["results"][3]["cost"] = -0.5
    path.write_text(json.dumps(doc))
    refused = run_import("promptfoo", path, tmp_path / "negative")
    assert refused.exit_code == 2 and refused.stderr == (
        f"error: {path}: results.results[3]: 'cost' is -0.5, a negative price; a damaged file\n")


def _eee_lines(src: Path, edit) -> None:
    for path in src.rglob("*_samples.jsonl"):
        items = [json.loads(line) for line in path.read_text().splitlines()]
        for item in items:
            edit(item)
        path.write_text("".join(json.dumps(item) + "\n" for item in items))


def test_every_eval_ever_keeps_the_input_and_output_tokens_and_sums_them_where_the_total_is_null(tmp_path):
    """Every Eval Ever lines record input and output tokens, which a price table needs; the import dropped them
    (prices by input and output were refused), and refused lines whose total_tokens is null as unmeasured. They are
    kept as prompt_tokens and completion_tokens (the total less the input: reasoning tokens a provider counts apart
    are billed as output), and summed where the total is null."""
    src = write_eee(tmp_path / "src")
    expected = sorted((float(p), float(c)) for *_, rows in CONFIGS for _, _, p, c in rows)
    assert run_import("every-eval-ever", src, tmp_path / "ds").exit_code == 0
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    assert sorted(zip(logs["prompt_tokens"], logs["completion_tokens"])) == expected
    _eee_lines(src, lambda item: item["token_usage"].update(total_tokens=None))
    summed = run_import("every-eval-ever", src, tmp_path / "summed")
    assert summed.exit_code == 0, summed.output
    again = pd.read_csv(tmp_path / "summed" / "logs.csv.gz")
    assert again["tokens"].tolist() == (again["prompt_tokens"] + again["completion_tokens"]).tolist()
    assert again.equals(logs)
    def reasoning(item: dict) -> None:  # 50 reasoning tokens counted apart from the output (as Gemini's are)
        usage = item["token_usage"]
        extra = 50 if item["sample_id"] == "q3" else 0
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"] + extra

    _eee_lines(src, reasoning)
    assert run_import("every-eval-ever", src, tmp_path / "reasoning").exit_code == 0
    thought = pd.read_csv(tmp_path / "reasoning" / "logs.csv.gz")
    assert (thought["tokens"] - logs["tokens"]).tolist() == [50.0 if i == "q3" else 0.0 for i in logs["instance_id"]]
    assert thought["prompt_tokens"].equals(logs["prompt_tokens"])
    assert (thought["completion_tokens"] - logs["completion_tokens"]).equals(thought["tokens"] - logs["tokens"])
    _eee_lines(src, lambda item: item["token_usage"].update(input_tokens=None) if item["sample_id"] == "q3" else None)
    short = run_import("every-eval-ever", src, tmp_path / "short")
    assert short.exit_code == 0, short.output
    assert "prompt_tokens" not in pd.read_csv(tmp_path / "short" / "logs.csv.gz")


def test_a_failed_call_without_input_tokens_takes_the_split_away_only_if_kept(tmp_path):
    """One failed line that records no input tokens took prompt_tokens and completion_tokens away from every call,
    though --failed drop leaves it out. The split is kept where every call the import keeps has it, and otherwise
    left out with a line naming the first call kept without it."""
    src = write_eee(tmp_path / "src")
    _eee_lines(src, lambda item: item["token_usage"].update(input_tokens=None) if item["error"] else None)
    dropped = run_import("every-eval-ever", src, tmp_path / "dropped", "--failed", "drop", "--missing",
                         "drop-instances")
    assert dropped.exit_code == 0, dropped.output
    assert "prompt_tokens, completion_tokens: not kept" not in dropped.stdout
    logs = pd.read_csv(tmp_path / "dropped" / "logs.csv.gz")
    assert (logs["prompt_tokens"] + logs["completion_tokens"]).tolist() == logs["tokens"].tolist() and len(logs) == 12
    kept = run_import("every-eval-ever", src, tmp_path / "kept")
    assert kept.exit_code == 0, kept.output
    assert "prompt_tokens" not in pd.read_csv(tmp_path / "kept" / "logs.csv.gz")
    (failed,) = [p for p in src.rglob("*_samples.jsonl") if '"error": "timeout"' in p.read_text()]
    said = (f"prompt_tokens, completion_tokens: not kept, as not every call kept records both ({failed}: line 2 "
            "records no input and output tokens); a price table then needs one blended rate on the total")
    assert said in kept.stdout
    prov = yaml.safe_load((tmp_path / "kept" / "dataset.yaml").read_text())["provenance"]
    assert prov["parts_left_out"] == f"{failed}: line 2 records no input and output tokens"


def test_inspect_keeps_the_input_tokens_and_prices_the_rest_as_output(tmp_path):
    """An Inspect log's model_usage gives input and output tokens, and some providers count reasoning tokens apart
    (Gemini's total is input + output + reasoning): a price table's input rate applies to input_tokens and its
    output rate to the rest of the model's tokens, less the scoring's as the total is."""
    src = write_inspect(tmp_path / "src")
    expected = sorted((float(p), float(c)) for *_, rows in CONFIGS for _, _, p, c in rows)
    assert run_import("inspect", src, tmp_path / "ds").exit_code == 0
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    assert sorted(zip(logs["prompt_tokens"], logs["completion_tokens"])) == expected
    log = src / "2026-01-01_demo_1.json"
    doc = json.loads(log.read_text())
    usage = doc["samples"][2]["model_usage"]["openai/m-large"]
    usage.update(total_tokens=usage["total_tokens"] + 50, reasoning_tokens=50)
    log.write_text(json.dumps(doc))
    assert run_import("inspect", src, tmp_path / "thought").exit_code == 0
    thought = pd.read_csv(tmp_path / "thought" / "logs.csv.gz")
    assert (thought["completion_tokens"] - logs["completion_tokens"]).tolist() == (
        thought["tokens"] - logs["tokens"]).tolist() == [50.0 if n == 7 else 0.0 for n in range(len(logs))]
    assert thought["prompt_tokens"].equals(logs["prompt_tokens"])
    del doc["samples"][2]["model_usage"]["openai/m-large"]["input_tokens"]
    log.write_text(json.dumps(doc))
    assert run_import("inspect", src, tmp_path / "short").exit_code == 0
    assert "prompt_tokens" not in pd.read_csv(tmp_path / "short" / "logs.csv.gz")


@pytest.mark.parametrize("options", [["--failed", "drop"], ["--unmeasured", "drop"]])
def test_promptfoo_costs_are_kept_where_the_calls_without_one_are_dropped(tmp_path, options):
    """A call that errored records no cost (nor tokens): it took promptfoo's dollars away from every call, though
    the import drops it (``--failed drop``; or, scored as incorrect, as not measured). The dollars are kept where
    every call the import keeps has them."""
    path = write_promptfoo(tmp_path / "src")
    doc = json.loads(path.read_text())
    for n, item in enumerate(doc["results"]["results"]):
        item["cost"] = (n + 1) * 1e-5
    errored = doc["results"]["results"][3]
    errored.update(failureReason=2, error="429 Too Many Requests", success=False, cost=None)
    errored["response"].pop("tokenUsage")
    path.write_text(json.dumps(doc))
    done = run_import("promptfoo", path, tmp_path / "ds", *options, "--missing", "drop-instances")
    assert done.exit_code == 0, done.output
    assert "cost_usd: not kept" not in done.stdout
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    kept = [round(c / 1e-5) for c in logs["cost_usd"]]  # each call's own: results.results[n] cost n + 1
    assert len(logs) == len(set(kept)) >= 8 and set(kept) <= set(range(1, 16)) - {4}


def test_inspect_logs_differing_beyond_the_four_settings_are_other_configurations_never_repeats(tmp_path):
    """Logs of one model, temperature and generation limit at two reasoning efforts, or with a system message step,
    were one configuration: refused as "epochs" (the logs had none), and with --repeats epochs one configuration
    scored the mean of both (a configuration nobody ran). Now each is its own configuration, its config_id saying
    how it differs; a run again that differs only in how it was carried out (seed, connections) is still a repeat."""
    src = write_inspect(tmp_path / "i")
    log = src / "2026-01-01_demo_1.json"  # m-large at t 0.0, 256 tokens: 4 of 5 correct
    doc = json.loads(log.read_text())

    def variant(name: str, score: str, plan: dict | None = None, steps: list | None = None) -> None:
        new = json.loads(json.dumps(doc))
        new["plan"]["config"].update(plan or {})
        new["plan"]["steps"] = steps or new["plan"]["steps"]
        for sample in new["samples"]:
            sample["scores"]["match"]["value"] = score
        (src / f"{name}.json").write_text(json.dumps(new))

    variant("high", "C", {"reasoning_effort": "high"})
    variant("system", "I", steps=[{"solver": "system_message", "params": {"template": "Be brief."}},
                                  {"solver": "generate", "params": {}}])
    done = run_import("inspect", src, tmp_path / "ds")
    assert done.exit_code == 0, done.output
    base = "openai/m-large_t0.0_g256_direct"
    ids = {f"{base}_reasoning_effort=unset,solvers=generate": 4 / 5,
           f"{base}_reasoning_effort=high,solvers=generate": 1.0,
           f"{base}_reasoning_effort=unset,solvers=system_message+generate": 0.0}
    assert ("configurations told apart by settings beyond model, temperature, generation limit and prompting: "
            "reasoning_effort=high,solvers=generate, reasoning_effort=unset,solvers=generate, "
            "reasoning_effort=unset,solvers=system_message+generate\n") in done.stdout
    accuracy = pd.read_csv(tmp_path / "ds" / "logs.csv.gz").groupby("config_id")["correct"].mean()
    assert {cid: accuracy[cid] for cid in ids} == ids and len(accuracy) == 5
    assert accuracy["openai/m-small_t0.0_g256_direct"] == 3 / 5  # the others' ids as ever
    (src / "high.json").unlink()
    (src / "system.json").unlink()
    variant("again", "C", {"seed": 7, "max_connections": 4})  # how the run was carried out: a repeat
    again = run_import("inspect", src, tmp_path / "again")
    assert again.exit_code == 2 and "duplicate (config_id, instance_id) pair ('openai/m-large_t0.0_g256_direct'" \
        in again.stderr and "told apart" not in again.output
    latest = run_import("inspect", src, tmp_path / "latest", "--repeats", "latest")  # the logs' run times order them
    assert latest.exit_code == 0 and "pairs read more than once, the latest run kept\n" in latest.stdout
    table = pd.read_csv(tmp_path / "latest" / "logs.csv.gz")
    table.to_csv(tmp_path / "table.csv", index=False)
    twice = pd.concat([table, table.assign(correct=1 - table["correct"])])
    twice.to_csv(tmp_path / "twice.csv", index=False)  # a table records no run times: its order is what it says
    said = RUNNER.invoke(app, ["data", "import", str(tmp_path / "twice.csv"), "--out", str(tmp_path / "t"),
                               "--repeats", "latest"])
    assert said.exit_code == 0 and ("the latest run kept (the logs record no run times: runs are ordered as read, "
                                    "by file path, then by place in the file)") in said.stdout, said.output


def test_an_inspect_setting_a_task_sets_alone_is_the_tasks_own(tmp_path):
    """Two tasks run with one model, one of them with its own top_p: each task's log would have been a configuration
    of its own, each lacking the other task's instances, and the import refused them. A setting that differs between
    tasks only tells no configuration apart."""
    src = write_inspect(tmp_path / "i")
    next(src.glob("*.eval")).unlink()  # the two configurations of m-large, each run on both tasks
    for c in (1, 2):
        doc = json.loads((src / f"2026-01-01_demo_{c}.json").read_text())
        doc["eval"]["task"] = "other"
        if c == 1:
            doc["plan"]["config"]["top_p"] = 0.95
        (src / f"other_{c}.json").write_text(json.dumps(doc))
    done = run_import("inspect", src, tmp_path / "ds")
    assert done.exit_code == 0 and "told apart" not in done.output, done.output
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    mine = logs[logs["config_id"] == "openai/m-large_t0.0_g256_direct"]
    assert sorted(mine["instance_id"].str.split("/").str[0].unique()) == ["demo", "other"] and len(mine) == 10


def test_rows_of_one_config_id_with_other_metadata_are_refused_as_other_configurations_not_repeats(tmp_path):
    """A table whose run label names two temperatures of a model on the same questions: --repeats latest kept the
    second temperature's rows and dropped the first configuration as "repeated runs". Refused now, naming the rows,
    whatever --repeats says; '0.70' and 0.7 are one temperature."""
    rows = [("run1", "a", t, f"i{i}", i % 2, 1.0 + i, 100) for t in ("0.0", "0.7") for i in range(4)]
    rows += [("run2", "b", "0.70" if i % 2 else "0.7", f"i{i}", 1, 2.0, 90) for i in range(4)]
    table = tmp_path / "t.csv"
    table.write_text("config_id,model,temperature,instance_id,correct,latency_s,tokens\n"
                     + "".join(",".join(map(str, r)) + "\n" for r in rows))
    for repeats in ("refuse", "latest", "epochs"):
        done = RUNNER.invoke(app, ["data", "import", str(table), "--out", str(tmp_path / repeats), "--repeats",
                                   repeats, "--set", "max_new_tokens=256", "--set", "prompting=direct"])
        assert done.exit_code == 2 and done.stderr == (
            f"error: {table}: column 'temperature' varies within config_id 'run1' at rows 5, 6, 7 and 1 more; rows "
            "of one config_id that differ in it are runs of other configurations, not repeated runs: give each "
            "configuration its own config_id (or none, to derive it from the metadata)\n"), done.output
        assert not (tmp_path / repeats).exists()


def test_tokens_of_the_final_model_call_alone_are_counted_and_said(tmp_path):
    """A sample without model_usage is charged its output.usage, the final model call's alone (an agent's sample of
    many calls had 2,405 of its ~92,866 tokens): the import said nothing. Now it counts them, warns and records it;
    with model_usage on every sample there is nothing to say."""
    src = write_inspect(tmp_path / "i")
    assert "final model call" not in run_import("inspect", src, tmp_path / "whole").output
    log = src / "2026-01-01_demo_1.json"
    doc = json.loads(log.read_text())
    for sample in doc["samples"][:2]:
        del sample["model_usage"]
    log.write_text(json.dumps(doc))
    done = run_import("inspect", src, tmp_path / "ds")
    assert done.exit_code == 0, done.output
    assert ("warning: tokens of 2 samples read are their final model call's (output.usage): the log gives no "
            "model_usage of the model for them (or its tokens were all the scoring's), and a sample of several model "
            "calls (tools, agents) cost more") in done.output
    prov = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())["provenance"]
    assert prov["last_call_tokens"] == 2
    assert "last_call_tokens" not in yaml.safe_load((tmp_path / "whole" / "dataset.yaml").read_text())["provenance"]


def test_a_failed_call_that_recorded_no_cost_is_said_to_be_unmeasured(tmp_path):
    """A timeout promptfoo recorded without token usage: scored as incorrect, but its cost is unknown, so it cannot be
    replayed; the import says so where it scores it, then drops it as not measured (a hole, filled by
    --missing drop-instances)."""
    src = write_promptfoo(tmp_path / "src")
    doc = json.loads(src.read_text())
    (failed,) = [r for r in doc["results"]["results"] if r.get("error")]
    del failed["response"]["tokenUsage"]
    src.write_text(json.dumps(doc))
    result = run_import("promptfoo", src, tmp_path / "ds", "--missing", "drop-instances")
    assert result.exit_code == 0, result.output
    assert ("failed calls: 1, scored as incorrect (--failed incorrect); 1 of them recorded no latency or token count: "
            "their cost is unknown, they are not measured (below)") in result.stdout
    assert "1 row dropped (tokens empty or 0: 1)" in result.stdout
    plain = run_import("promptfoo", write_promptfoo(tmp_path / "src2"), tmp_path / "ds2")
    assert "failed calls: 1, scored as incorrect (--failed incorrect)\n" in plain.stdout  # its cost recorded


def test_failed_calls_dropped_leave_holes(tmp_path):
    src = write_promptfoo(tmp_path / "src")
    result = run_import("promptfoo", src, tmp_path / "ds", "--failed", "drop")
    assert result.exit_code == 2
    assert "1 (configuration, instance) cells are missing in 1 of 3 configurations" in result.stderr
    result = run_import("promptfoo", src, tmp_path / "ds", "--failed", "drop", "--missing", "drop-instances")
    assert result.exit_code == 0, result.output
    assert "failed calls: 1, dropped (--failed drop)" in result.stdout
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    assert sorted(logs["instance_id"].unique()) == [0, 2, 3, 4] and len(logs) == 12
    prov = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())["provenance"]
    assert prov["failed_calls"]["policy"] == "drop" and prov["holes"]["instances_dropped"] == 1
    assert prov["rows"] == {"read": 15, "kept": 12, "dropped": 3}


def test_long_samples_of_a_tool_are_not_taken_for_milliseconds(tmp_path):
    """An agent's samples take minutes: the reader knows Inspect's unit (seconds), so no "milliseconds?" warning
    that would have the user scale true latencies by 1/1000; a table's median alone still gets one."""
    src = write_inspect(tmp_path / "src")
    for log in src.glob("*.json"):
        if log.name != "logs.json":
            doc = json.loads(log.read_text())
            for sample in doc["samples"]:
                sample["working_time"] += 90.0
            log.write_text(json.dumps(doc))
    for archive_path in src.glob("*.eval"):
        with zipfile.ZipFile(archive_path) as archive:
            members = {name: archive.read(name) for name in archive.namelist()}
        with zipfile.ZipFile(archive_path, "w") as archive:
            for name, data in members.items():
                if name.startswith("samples/"):
                    sample = json.loads(data)
                    sample["working_time"] += 90.0
                    data = json.dumps(sample).encode()
                archive.writestr(name, data)
    result = run_import("inspect", src, tmp_path / "ds")
    assert result.exit_code == 0, result.output
    assert "kept 3 configurations x 5 instances" in result.stdout and "warning" not in result.stdout
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    assert logs["latency_s"].median() == pytest.approx(91.3)
    logs.to_csv(tmp_path / "table.csv", index=False)
    table = RUNNER.invoke(app, ["data", "import", str(tmp_path / "table.csv"), "--out", str(tmp_path / "ds2")])
    assert "warning: median latency_s is 91.3; latency_s looks like milliseconds?" in table.stdout


def test_promptfoo_providers_told_apart_only_by_settings_are_refused(tmp_path):
    """Two providers of one id without labels (promptfoo writes label "") and different temperatures: the results
    cannot say which ran, so the import refuses rather than give both the last one's settings (and then call the
    second provider's results repeats)."""
    src = write_promptfoo(tmp_path / "src")
    doc = json.loads(src.read_text())
    for provider in doc["config"]["providers"]:
        del provider["label"]
    for result in doc["results"]["results"]:
        result["provider"] = {"id": result["provider"]["id"], "label": ""}
    src.write_text(json.dumps(doc))
    result = run_import("promptfoo", src, tmp_path / "ds")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert ("results.json: results.results[5]: provider 'openai:chat:m-large': config.providers has several providers "
            "'openai:chat:m-large' with different settings and no label to tell their results apart; give each a "
            "label in the promptfoo config") in result.stderr
    assert not (tmp_path / "ds").exists()
    del doc["results"]["results"][5:]  # only the provider whose id is its own: read by id, settings and all
    src.write_text(json.dumps(doc))
    result = run_import("promptfoo", src, tmp_path / "ds", "--missing", "drop-instances")
    assert result.exit_code == 0, result.output
    assert set(pd.read_csv(tmp_path / "ds" / "logs.csv.gz")["config_id"]) == {
        "openai:chat:m-small_t0.0_g256_direct"}


def test_metadata_the_source_lacks_is_asked_for(tmp_path):
    src = write_eee(tmp_path / "src")
    for aggregate in src.rglob("*-000000000000.json"):
        aggregate.unlink()
    result = run_import("every-eval-ever", src, tmp_path / "ds")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert ("the every-eval-ever source does not record temperature for org/m-large, org/m-small; max_new_tokens for "
            "org/m-large, org/m-small; prompting for org/m-large, org/m-small; give them with --set temperature=VALUE "
            "--set max_new_tokens=VALUE --set prompting=VALUE (or mapping constants)") in result.stderr
    result = run_import("every-eval-ever", src, tmp_path / "ds", "--set", "prompting=direct", "--set",
                        "max_new_tokens=256")  # one left: asked for alone
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert ("temperature: the every-eval-ever source does not record it for org/m-large, org/m-small; give it with "
            "--set temperature=VALUE (or a mapping constant)") in result.stderr
    result = run_import("every-eval-ever", src, tmp_path / "ds", "--set", "temperature=0", "--set",
                        "max_new_tokens=256", "--set", "prompting=direct")
    assert result.exit_code == 2 and "duplicate (config_id, instance_id)" in result.stderr  # m-large twice
    result = run_import("every-eval-ever", src / "demo" / "00000000-0000-4000-8000-000000000000_samples.jsonl",
                        tmp_path / "ds", "--set", "temperature=0", "--set", "max_new_tokens=256",
                        "--set", "prompting=direct")
    assert result.exit_code == 0, result.output
    assert set(pd.read_csv(tmp_path / "ds" / "logs.csv.gz")["config_id"]) == {"org/m-small_t0.0_g256_direct"}


# --- broken files: one line, exit 2 -------------------------------------------------------------------------


def _first(root: Path, pattern: str) -> Path:
    return sorted(p for p in root.rglob(pattern) if p.name != "logs.json")[0]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _cut(path: Path) -> None:
    path.write_text(path.read_text()[:-40])


def _runtime_as_text(path: Path) -> None:
    entries = json.loads(path.read_text())
    stat = next(s for s in entries[0]["stats"] if s["name"]["name"] == "inference_runtime")
    stat["sum"] = str(stat["sum"])
    path.write_text(json.dumps(entries, indent=2))


BROKEN = [
    ("helm", "truncated", lambda r: _cut(_first(r, "per_instance_stats.json")), "not valid JSON"),
    ("helm", "missing field", lambda r: _edit(_first(r, "per_instance_stats.json"), '"instance_id": "id0"',
                                              '"instance": "id0"'), "missing field 'instance_id'"),
    ("helm", "wrong type", lambda r: _edit(_first(r, "per_instance_stats.json"), '"sum": 100,', '"sum": "many",'),
     "'sum' is 'many', not a number"),
    ("helm", "text runtime", lambda r: _runtime_as_text(_first(r, "per_instance_stats.json")),  # the stat named
     "entry 1: inference_runtime: 'sum' is '1.5', not a number"),
    ("helm", "NaN temperature", lambda r: _edit(_first(r, "run_spec.json"), '"temperature": 0.0',
                                                '"temperature": NaN'),  # was taken for "not recorded"
     "adapter_spec 'temperature' is nan, not a finite number"),
    ("inspect", "NaN temperature", lambda r: _edit(_first(r, "*.json"), '"temperature": 0.0', '"temperature": NaN'),
     "generation config: 'temperature' is nan, not a finite number"),
    ("inspect", "truncated", lambda r: _cut(_first(r, "*.json")), "not valid JSON"),
    ("inspect", "truncated archive", lambda r: _first(r, "*.eval").write_bytes(_first(r, "*.eval").read_bytes()[:200]),
     "damaged .eval log"),
    ("inspect", "missing field", lambda r: _edit(_first(r, "*.json"), '"model": "openai/m-large"', '"mdl": "x"'),
     "missing field 'model'"),
    ("inspect", "wrong type", lambda r: _edit(_first(r, "*.json"), '"working_time": 1.5', '"working_time": "slow"'),
     "'working_time' is 'slow', not a number"),
    ("promptfoo", "truncated", lambda r: _cut(r / "results.json"), "not valid JSON"),
    ("promptfoo", "missing field", lambda r: _edit(r / "results.json", '"testIdx": 0', '"test": 0'),
     "missing field 'testIdx'"),
    ("promptfoo", "wrong type", lambda r: _edit(r / "results.json", '"latencyMs": 500.0', '"latencyMs": "fast"'),
     "'latencyMs' is 'fast', not a number"),
    ("every-eval-ever", "truncated", lambda r: _cut(_first(r, "*.jsonl")), "not JSON"),
    ("every-eval-ever", "missing field", lambda r: _edit(_first(r, "*.jsonl"), '"sample_id": "q1", ', ""),
     "missing field 'sample_id'"),
    ("every-eval-ever", "wrong type", lambda r: _edit(_first(r, "*.jsonl"), '"is_correct": true', '"is_correct": 1'),
     "'evaluation.is_correct' is 1, not bool"),
]


@pytest.mark.parametrize("fmt, label, damage, words", BROKEN, ids=[f"{b[0]}-{b[1]}" for b in BROKEN])
def test_broken_files_are_one_line(tmp_path, fmt, label, damage, words):
    src = WRITERS[fmt](tmp_path / "src")
    damage(src if src.is_dir() else src.parent)
    result = run_import(fmt, src, tmp_path / "ds")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], lines
    assert not (tmp_path / "ds").exists()


def test_a_promptfoo_run_answered_from_its_cache_is_not_taken_for_logs_without_latency(tmp_path):
    """Cached answers took no time, so promptfoo's reader leaves their latency blank as not measured. A run answered
    wholly from the cache was written without latency (the cache's token counts as each call's cost) when logs that
    time nothing became importable; it is refused as unmeasured, as docs/real-data.md says (re-run with
    --no-cache)."""
    src = write_promptfoo(tmp_path / "src")
    doc = json.loads(src.read_text())
    for result in doc["results"]["results"]:
        result["response"]["cached"] = True
    src.write_text(json.dumps(doc))
    result = run_import("promptfoo", src, tmp_path / "ds")
    # said as cached, not as latencies empty or 0: promptfoo timed them (18 and 15 ms in its own example)
    assert result.exit_code == 2 and ("none of the 15 rows is measured (latency_s empty or 0: 15; of the rows read, "
                                      "15 were answered from the tool's cache, with no latency of a call (run it "
                                      "again without the cache))") in result.stderr, result.stderr
    assert "no row has a latency" not in result.output and not (tmp_path / "ds").exists()
    for result in doc["results"]["results"][5:]:  # a part answered from the cache: those rows dropped, so said
        result["response"]["cached"] = False
    src.write_text(json.dumps(doc))
    result = run_import("promptfoo", src, tmp_path / "ds", "--unmeasured", "drop", "--missing", "drop-instances")
    assert ("(latency_s empty or 0: 5; of the rows read, 5 were answered from the tool's cache, with no latency of a "
            "call (run it again without the cache))" in result.output), result.output
