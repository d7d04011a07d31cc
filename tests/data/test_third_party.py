"""Logs written by other people's tools, imported and compared with values computed here from the raw files.

The fixtures under ``tests/fixtures/third_party/`` are small slices of public
logs (each folder's ``SOURCE.md`` says where from, ``LICENSE`` under which
terms): Inspect ``.eval`` archives with Zstandard members, a HELM MMLU suite,
HELM safety runs that write an instance's stats in two entries, promptfoo
``--repeat`` results files of promptfoo 0.119.0 and of 0.43.1 (results version
2, without testIdx), and Every Eval Ever files written by its own HELM and
Inspect converters. For
each configuration the imported accuracy, tokens and latency must equal, with
no difference at all, what this module computes by reading those files itself.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import math
import shutil
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.data.test_hostile_readers import imported

if sys.version_info >= (3, 14):
    import zipfile
else:
    from backports.zstd import zipfile

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "third_party"
A2UI, HELM, EEE = FIXTURES / "a2ui", FIXTURES / "test_helm" / "benchmark_output", FIXTURES / "every_eval_ever"
SAFETY = FIXTURES / "helm_safety" / "benchmark_output"
REPEATED = FIXTURES / "promptfoo_repeat" / "results.json"
VERSION2 = FIXTURES / "promptfoo_v2" / "results.json"
CONVERTED = FIXTURES / "inspect_convert" / "data_arc_qwen.eval"
GRADES = {"C": 1.0, "I": 0.0}
Cells = dict[tuple[str, str], tuple[float, float, float]]  # (model, instance) -> (correct, latency s, tokens)


def imported_cells(folder: Path) -> Cells:
    """The dataset's rows, parsed with the csv module (every float as written, independent of pandas)."""
    with gzip.open(folder / "logs.csv.gz", "rt", newline="") as fh:
        return {(r["model"], r["instance_id"]): (float(r["correct"]), float(r["latency_s"]), float(r["tokens"]))
                for r in csv.DictReader(fh)}


def same(imported: Cells, expected: Cells) -> None:
    """Every cell equal, and so each configuration's accuracy, mean latency and mean tokens: no difference."""
    assert imported == expected
    by_model: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for (model, _), cell in expected.items():
        by_model[model].append(cell)
    mine: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for (model, _), cell in imported.items():
        mine[model].append(cell)
    for model, cells in by_model.items():
        for k in range(3):
            assert math.fsum(c[k] for c in mine[model]) / len(mine[model]) == math.fsum(c[k] for c in cells) / len(
                cells)


def ok(result: Any) -> None:
    assert result.exit_code == 0, result.output


# --- Inspect .eval archives with Zstandard members (gspencergoog/A2UI, inspect_ai 0.3.242) --------------------------

def scoring(events: list[dict], model: str, count: str = "total_tokens") -> tuple[float, float]:
    """The working seconds of a sample's ``scorers`` span and the tokens (``count``) of ``model`` calls made inside
    it (a scorer grading with the evaluated model), which are not the configuration's cost."""
    spans = {e["id"]: e for e in events if e["event"] == "span_begin"}
    ends = {e["id"]: e["working_start"] for e in events if e["event"] == "span_end"}

    def scored(span_id: str | None) -> bool:
        return span_id is not None and (spans[span_id]["type"] in ("scorer", "scorers")
                                        or scored(spans[span_id].get("parent_id")))

    seconds = sum(ends[i] - b["working_start"] for i, b in spans.items() if b["type"] == "scorers")
    tokens = sum(e["output"]["usage"][count] for e in events
                 if e["event"] == "model" and e["model"] == model and scored(e.get("span_id")))
    return seconds, tokens


def eval_runs(paths: list[Path], scorer: str) -> list[tuple[str, Cells]]:
    """(created, cells) of each archive, read here with the zipfile that reads Zstandard."""
    runs = []
    for path in paths:
        with zipfile.ZipFile(path) as archive:
            assert {i.compress_type for i in archive.infolist()} == {zipfile.ZIP_ZSTANDARD}
            header = json.loads(archive.read("header.json"))
            model = header["eval"]["model"]
            cells = {}
            for name in archive.namelist():
                if name.startswith("samples/"):
                    s = json.loads(archive.read(name))
                    value = s["scores"][scorer]["value"]
                    seconds, tokens = scoring(s["events"], model)
                    cells[(model, str(s["id"]))] = (GRADES.get(value, value), s["working_time"] - seconds,
                                                    float(s["model_usage"][model]["total_tokens"] - tokens))
        runs.append((header["eval"]["created"], cells))
    return sorted(runs, key=lambda run: run[0])


@pytest.mark.parametrize("scorer", ["measured_model_graded_qa", "a2ui_scorer"])
@pytest.mark.parametrize("repeats", ["latest", "first", "epochs"])
def test_a2ui_zstandard_logs(tmp_path, scorer, repeats):
    ok(imported("inspect", A2UI, tmp_path / "ds", "--metric", scorer, "--repeats", repeats, "--set",
                "temperature=1", "--set", "max_new_tokens=65536"))
    (first_created, first), (latest_created, latest) = eval_runs(sorted(A2UI.glob("*.eval")), scorer)
    if repeats == "epochs":
        expected = {(m, f"{i}#{k + 1}"): c for k, run in enumerate((first, latest)) for (m, i), c in run.items()}
    else:
        expected = latest if repeats == "latest" else first
    same(imported_cells(tmp_path / "ds"), expected)
    assert first_created < latest_created


def test_a2ui_prices_the_input_tokens_as_input_and_the_rest_as_output(tmp_path):
    """Gemini's usage counts reasoning tokens apart (total = input + output + reasoning): prompt_tokens is the
    model's input_tokens less the scoring calls' own, and completion_tokens the rest of its tokens, reasoning
    included, so that a price table bills every token the total counts."""
    ok(imported("inspect", A2UI, tmp_path / "ds", "--metric", "a2ui_scorer", "--repeats", "latest", "--set",
                "temperature=1", "--set", "max_new_tokens=65536"))
    [path] = [p for p in A2UI.glob("*.eval") if p.name == "baseline-d68e424.eval"]  # the latest run (above)
    expected = {}
    with zipfile.ZipFile(path) as archive:
        model = json.loads(archive.read("header.json"))["eval"]["model"]
        for name in (n for n in archive.namelist() if n.startswith("samples/")):
            s = json.loads(archive.read(name))
            usage = s["model_usage"][model]
            _, spent = scoring(s["events"], model)
            _, spent_input = scoring(s["events"], model, "input_tokens")
            assert spent_input > 0  # the scorer graded with the evaluated model
            prompt = usage["input_tokens"] - spent_input
            assert usage["total_tokens"] > usage["input_tokens"] + usage["output_tokens"]  # reasoning apart
            expected[str(s["id"])] = (float(prompt), float(usage["total_tokens"] - spent - prompt))
    with gzip.open(tmp_path / "ds" / "logs.csv.gz", "rt", newline="") as fh:
        got = {r["instance_id"]: (float(r["prompt_tokens"]), float(r["completion_tokens"])) for r in csv.DictReader(fh)}
    assert got == expected and len(got) == 2


def test_log_converted_by_inspect_ai_0_3_285(tmp_path):
    ok(imported("inspect", CONVERTED, tmp_path / "ds", "--set", "temperature=0", "--set", "max_new_tokens=512"))
    [(_, expected)] = eval_runs([CONVERTED], "choice")
    assert len(expected) == 3
    same(imported_cells(tmp_path / "ds"), expected)


def test_a2ui_repeated_runs_are_refused_by_default(tmp_path):
    result = imported("inspect", A2UI, tmp_path / "ds", "--metric", "a2ui_scorer", "--set", "temperature=1", "--set",
                      "max_new_tokens=65536")
    assert result.exit_code == 2 and "baseline-c023059.eval: the file's sample number 1 and again at" in result.stderr
    assert "--repeats latest" in result.stderr and len(result.stderr.strip().splitlines()) == 1


# --- a HELM MMLU suite (villageFlower/test_helm) ----------------------------------------------------------------------

def helm_cells(split: str) -> Cells:
    cells = {}
    for stats_path in HELM.rglob("per_instance_stats.json"):
        model = json.loads((stats_path.parent / "run_spec.json").read_text())["adapter_spec"]["model"]
        for entry in json.loads(stats_path.read_text()):
            stats = {s["name"]["name"]: s for s in entry["stats"] if not s["name"].get("perturbation")}
            kept = split in ("all", stats["exact_match"]["name"]["split"])
            if entry.get("perturbation") or entry["train_trial_index"] or not kept:
                continue
            cells[(model, entry["instance_id"])] = (
                stats["exact_match"]["mean"], stats["inference_runtime"]["sum"],
                float(stats["num_prompt_tokens"]["sum"] + stats["num_completion_tokens"]["sum"]))
    return cells


@pytest.mark.parametrize("split", ["test", "valid", "all"])
def test_helm_mmlu_suite(tmp_path, split):
    ok(imported("helm", HELM, tmp_path / "ds", "--split", split))
    expected = helm_cells(split)
    assert len(expected) == 3 * {"test": 4, "valid": 2, "all": 6}[split]
    same(imported_cells(tmp_path / "ds"), expected)
    meta = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())
    assert meta["provenance"]["options"]["split"] == split and meta["provenance"]["metric"] == "exact_match"


# --- HELM safety runs: an entry per metric (stanford-crfm/helm) -------------------------------------------------------

def test_helm_instance_stats_written_in_two_entries(tmp_path):
    """A safety run writes an instance's annotator score and its runtime and tokens as two entries: read together,
    each instance is one row with the score of one entry and the cost of the other."""
    ok(imported("helm", SAFETY, tmp_path / "ds", "--metric", "art_score"))
    expected: Cells = {}
    for stats_path in SAFETY.rglob("per_instance_stats.json"):
        model = json.loads((stats_path.parent / "run_spec.json").read_text())["adapter_spec"]["model"]
        merged: dict[str, dict[str, Any]] = defaultdict(dict)
        for entry in json.loads(stats_path.read_text()):
            merged[entry["instance_id"]].update({s["name"]["name"]: s for s in entry["stats"]})
        for instance, stats in merged.items():
            tokens = stats["num_prompt_tokens"]["sum"] + stats["num_completion_tokens"]["sum"]
            expected[(model, instance)] = (stats["art_score"]["mean"], stats["inference_runtime"]["sum"], float(tokens))
    assert len(expected) == 3 * 4
    assert expected[("mistralai/mixtral-8x22b-instruct-v0.1", "id36774")][0] == 0.375
    same(imported_cells(tmp_path / "ds"), expected)
    assert yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())["provenance"]["rows"]["read"] == 12


def test_helm_prompt_and_completion_tokens_are_kept_for_a_price_tables_rates(tmp_path):
    """HELM records an instance's prompt and completion tokens apart: both are kept, so a price table's input and
    output rates charge each call; the dollars per call cabench loads equal the raw counts times the rates."""
    from cabench.data.dataset import load_dataset
    from cabench.data.terms import parse_terms
    from cabench.errors import CabenchError

    ok(imported("helm", SAFETY, tmp_path / "ds", "--metric", "art_score"))
    rates = {"anthropic/*": (3.0, 15.0), "mistralai/*": (1.2, 1.2), "qwen/*": (0.9, 0.9)}
    counts: dict[tuple[str, str], tuple[float, float]] = {}
    for stats_path in SAFETY.rglob("per_instance_stats.json"):
        model = json.loads((stats_path.parent / "run_spec.json").read_text())["adapter_spec"]["model"]
        for entry in json.loads(stats_path.read_text()):
            stats = {st["name"]["name"]: st for st in entry["stats"]}
            if "num_prompt_tokens" in stats:
                counts[(model, entry["instance_id"])] = (stats["num_prompt_tokens"]["sum"],
                                                         stats["num_completion_tokens"]["sum"])
    assert len(counts) == 12 and counts[("qwen/qwen2-72b-instruct", "id10944")] == (4, 16)
    with gzip.open(tmp_path / "ds" / "logs.csv.gz", "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["model"], r["instance_id"]): (float(r["prompt_tokens"]), float(r["completion_tokens"]))
            for r in rows} == counts
    terms = parse_terms({"cost": "usd", "prices": {k: {"input": i, "output": o} for k, (i, o) in rates.items()}},
                        lambda key, message: CabenchError(f"{key}: {message}"))
    ds = load_dataset(tmp_path / "ds", terms=terms)
    ids = list(ds.configs["model"])
    for where, instances in ((ds.prof["usd"], ds.profiling_ids), (ds.evaluation["usd"], ds.evaluation_ids)):
        for a, model in enumerate(ids):
            rate = rates[model.split("/")[0] + "/*"]
            expected = [(rate[0] * counts[(model, i)][0] + rate[1] * counts[(model, i)][1]) / 1e6 for i in instances]
            assert where[a].tolist() == pytest.approx(expected, rel=1e-12)


def test_helm_metric_suggestions_are_scores(tmp_path):
    """Without --metric, a safety run's instance has no correctness stat: the scores it has are named, not its
    counts, costs or finish reasons (HELM records those for every run)."""
    result = imported("helm", SAFETY, tmp_path / "ds")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.strip().endswith("per_instance_stats.json: entry 1: no correctness stat among exact_match, "
                                          "quasi_exact_match, prefix_exact_match...; pass --metric with one of: "
                                          "art_claude_score, art_gpt_score, art_score")


def test_helm_entries_of_an_instance_that_disagree_are_refused(tmp_path):
    """Two entries of one instance giving one stat two values (a damaged or merged file): one line naming both."""
    shutil.copytree(SAFETY, tmp_path / "src")
    (stats_path,) = (tmp_path / "src").rglob("*qwen*/per_instance_stats.json")
    entries = json.loads(stats_path.read_text())
    entries[5]["stats"].append({**entries[1]["stats"][0], "sum": 0.0, "mean": 0.0})  # id4449's art_score, again
    stats_path.write_text(json.dumps(entries, indent=2))
    result = imported("helm", tmp_path / "src", tmp_path / "ds", "--metric", "art_score")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert (f"{stats_path}: entry 6: stat 'art_score' of instance id4449 differs from entry 2's; a damaged or merged "
            "file") in result.stderr


# --- promptfoo's own output of --repeat 3 (promptfoo 0.119.0) ---------------------------------------------------------

def promptfoo_runs() -> dict[tuple[str, str], list[tuple[float, float, float]]]:
    """(provider label, prompt label) x test description -> its runs in testIdx order, read here from the file."""
    doc = json.loads(REPEATED.read_text())
    settings = {p["label"]: p["config"] for p in doc["config"]["providers"]}
    runs: dict[tuple[str, str], list[tuple[int, tuple[float, float, float]]]] = defaultdict(list)
    for r in doc["results"]["results"]:
        config = settings[r["provider"]["label"]]
        key = (f"{r['provider']['label']}_t{config['temperature']:.1f}_g{config['max_tokens']}_{r['prompt']['label']}",
               r["testCase"]["description"])
        runs[key].append((r["testIdx"], (float(r["success"]), r["latencyMs"] / 1000,
                                         float(r["response"]["tokenUsage"]["total"]))))
    return {key: [cell for _, cell in sorted(found)] for key, found in runs.items()}


def test_promptfoo_repeats_are_runs_of_one_test(tmp_path):
    """promptfoo numbers each repeat of a test with its own testIdx: 4 configurations x 3 tests, each run 3 times,
    are 3 instances (named by the test's first testIdx), refused until --repeats says which runs to keep."""
    result = imported("promptfoo", REPEATED, tmp_path / "ds")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert ("(23 more repeated rows); each configuration is evaluated once per instance: results of one provider and "
            "prompt with the same testCase are runs of one test") in result.stderr
    runs = promptfoo_runs()
    assert len(runs) == 12 and {len(r) for r in runs.values()} == {3}
    first_idx = {"first": "0", "second": "3", "third": "6"}  # each test's first testIdx
    for policy, pick in (("first", lambda r: {"": r[0]}), ("latest", lambda r: {"": r[-1]}),
                         ("epochs", lambda r: {f"#{k + 1}": c for k, c in enumerate(r)})):
        ok(imported("promptfoo", REPEATED, tmp_path / policy, "--repeats", policy))
        expected = {(config, first_idx[test] + suffix): cell for (config, test), r in runs.items()
                    for suffix, cell in pick(r).items()}
        with gzip.open(tmp_path / policy / "logs.csv.gz", "rt", newline="") as fh:
            got = {(row["config_id"], row["instance_id"]): (float(row["correct"]), float(row["latency_s"]),
                                                            float(row["tokens"])) for row in csv.DictReader(fh)}
        assert got == expected


def test_promptfoo_epochs_keep_a_question_on_one_side_of_the_split(tmp_path):
    """--repeats epochs names each run of a test <id>#k; the split draws tests, not runs: the 3 tests' 9 runs per
    configuration split as 1 test (its 3 runs) to profile and 2 tests (6 runs) to evaluate, none on both sides,
    whatever the seed or size; a profiling size leaving no test to evaluate is refused counting tests."""
    from cabench.data.dataset import Split, load_dataset
    from cabench.errors import CabenchError

    result = imported("promptfoo", REPEATED, tmp_path / "ds", "--repeats", "epochs")
    ok(result)
    assert ("profiling split: 1 of 3 questions (half; the default 200 needs at least 400); each question's runs "
            "<id>#k (9 instances) on one side, recorded in dataset.yaml's split") in result.output
    assert yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())["split"] == {"profiling_size": 1, "seed": 0}
    ds = load_dataset(tmp_path / "ds")
    assert ds.profiling_ids == ("6#1", "6#2", "6#3")
    assert ds.evaluation_ids == ("0#1", "0#2", "0#3", "3#1", "3#2", "3#3")
    assert ds.prof["correct"].shape == (4, 3) and ds.evaluation["correct"].shape == (4, 6)
    for size in (1, 2):
        for seed in range(6):
            split = load_dataset(tmp_path / "ds", Split(size, seed))
            profiled = {i.split("#")[0] for i in split.profiling_ids}
            assert len(profiled) == size and len(split.profiling_ids) == 3 * size
            assert not profiled & {i.split("#")[0] for i in split.evaluation_ids}
    with pytest.raises(CabenchError, match="split.profiling_size is 3 but the logs have only 3 questions "
                                           r"\(their 9 runs numbered <id>#k by --repeats epochs\)"):
        load_dataset(tmp_path / "ds", Split(3, 0))


@pytest.mark.parametrize("finished_reversed", [False, True])
def test_promptfoo_results_version_2(tmp_path, finished_reversed):
    """promptfoo 0.43.1 writes no testIdx, promptIdx or testCase, and names a prompt ``display``: its two unlabelled
    prompts are two configurations (prompt0, prompt1, in the order results.table.head.prompts lists them, whatever
    order the results finished in), its tests are told apart by their vars, and a test run again is a repeat."""
    doc = json.loads(VERSION2.read_text())
    if finished_reversed:
        doc["results"]["results"].reverse()
    source = tmp_path / "results.json"
    source.write_text(json.dumps(doc))
    result = imported("promptfoo", source, tmp_path / "ds")
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert ("runs of one test (promptfoo eval --repeat; the file has no testIdx); pass --repeats latest, first or "
            "epochs") in result.stderr
    ok(imported("promptfoo", source, tmp_path / "first", "--repeats", "first"))
    templates = [p["display"] for p in doc["results"]["table"]["head"]["prompts"]]
    questions: dict[str, str] = {}
    expected: Cells = {}
    for r in doc["results"]["results"]:
        instance = questions.setdefault(r["vars"]["question"], str(len(questions)))
        key = (f"prompt{templates.index(r['prompt']['display'])}", instance)
        expected.setdefault(key, (float(r["success"]), r["latencyMs"] / 1000,
                                  float(r["response"]["tokenUsage"]["total"])))
    assert len(expected) == 2 * 3
    with gzip.open(tmp_path / "first" / "logs.csv.gz", "rt", newline="") as fh:
        got = {(row["prompting"], row["instance_id"]): (float(row["correct"]), float(row["latency_s"]),
                                                         float(row["tokens"])) for row in csv.DictReader(fh)}
    assert got == expected
    hashes = yaml.safe_load((tmp_path / "first" / "dataset.yaml").read_text())["provenance"]["prompt_sha256"]
    assert hashes == {f"prompt{n}": hashlib.sha256(t.encode()).hexdigest() for n, t in enumerate(templates)}


# --- Every Eval Ever files written by its HELM and Inspect converters -------------------------------------------------

def eee_cells(folder: Path, result_id: str) -> Cells:
    cells = {}
    for path in folder.rglob("*_samples.jsonl"):
        for line in path.read_text().splitlines():
            item = json.loads(line)
            if item["evaluation_result_id"] == result_id:
                cells[(item["model_id"], item["sample_id"])] = (
                    float(item["evaluation"]["is_correct"]), item["performance"]["generation_time_ms"] / 1000,
                    float(item["token_usage"]["total_tokens"]))
    return cells


def test_eee_from_its_helm_converter(tmp_path):
    ok(imported("every-eval-ever", EEE / "helm", tmp_path / "ds", "--metric", "exact_match:test"))
    expected = eee_cells(EEE / "helm", "exact_match:test")
    assert len(expected) == 2 * 4
    same(imported_cells(tmp_path / "ds"), expected)
    helm = helm_cells("test")  # the converter carried HELM's own numbers
    for key, (correct, latency, tokens) in expected.items():
        assert (correct, tokens) == (helm[key][0], helm[key][2]) and latency == pytest.approx(helm[key][1], rel=1e-12)
    prov = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())["provenance"]
    assert prov["latency_fields"] == {"performance.generation_time_ms": 8}


def test_eee_from_its_inspect_converter(tmp_path):
    ok(imported("every-eval-ever", EEE / "inspect", tmp_path / "ds", "--set", "temperature=0", "--set",
                "max_new_tokens=512", "--missing", "drop-instances"))
    expected = {key: cell for key, cell in eee_cells(EEE / "inspect", "choice:accuracy").items()
                if key[1] in {"1", "2", "3"}}  # the samples both models ran
    assert len(expected) == 2 * 3
    same(imported_cells(tmp_path / "ds"), expected)


def test_what_a_metric_or_a_split_leaves_out_is_said_and_recorded(tmp_path):
    """--metric exact_match:test.score keeps the HELM conversions' lines of that metric: the lines of the others (the
    Inspect conversions' choice:accuracy among them, two whole models) are counted by metric, printed and recorded;
    so are the valid-split instances HELM's --split test leaves out."""
    others: dict[str, int] = defaultdict(int)
    for path in EEE.rglob("*_samples.jsonl"):
        for line in path.read_text().splitlines():
            item = json.loads(line)
            result = item.get("evaluation_result_id") or item["evaluation_name"]
            if result != "exact_match:test":
                others[result] += 1
    assert dict(others) == {"choice:accuracy": 8, "exact_match:valid": 4, "quasi_exact_match:test": 8}
    result = imported("every-eval-ever", EEE, tmp_path / "eee", "--metric", "exact_match:test.score")
    ok(result)
    assert ("left out: 20 lines of other metrics than --metric exact_match:test.score (choice:accuracy 8, "
            "exact_match:valid 4, quasi_exact_match:test 8)\n") in result.output
    meta = yaml.safe_load((tmp_path / "eee" / "dataset.yaml").read_text())
    assert meta["provenance"]["other_metrics"] == dict(others)
    valid = sum(1 for stats_path in HELM.rglob("per_instance_stats.json") for entry in json.loads(
        stats_path.read_text()) for s in entry["stats"] if s["name"]["name"] == "exact_match"
        and s["name"].get("split") == "valid")
    assert valid == 6
    result = imported("helm", HELM, tmp_path / "helm")
    ok(result)
    assert "left out: 6 rows of other splits than --split test (valid 6); --split all keeps them\n" in result.output
    assert yaml.safe_load((tmp_path / "helm" / "dataset.yaml").read_text())["provenance"]["other_splits"] == {
        "valid": 6}


def test_promptfoo_prompt_and_completion_tokens_are_kept_when_every_call_has_them(tmp_path):
    """promptfoo 0.119.0 records tokenUsage.prompt and .completion: with --repeats epochs each run's two counts are
    kept as prompt_tokens and completion_tokens (a price table's input and output); a file where one result gives
    only the total is imported without them rather than refused for an empty cell."""
    doc = json.loads(REPEATED.read_text())
    settings = {p["label"]: p["config"] for p in doc["config"]["providers"]}
    runs: dict[tuple[str, str], list[tuple[int, tuple[float, float]]]] = defaultdict(list)
    for r in doc["results"]["results"]:
        config = settings[r["provider"]["label"]]
        key = f"{r['provider']['label']}_t{config['temperature']:.1f}_g{config['max_tokens']}_{r['prompt']['label']}"
        usage = r["response"]["tokenUsage"]
        runs[(key, r["testCase"]["description"])].append((r["testIdx"], (usage["prompt"], usage["completion"])))
    first_idx = {"first": "0", "second": "3", "third": "6"}
    expected = {(config, f"{first_idx[test]}#{k + 1}"): parts for (config, test), found in runs.items()
                for k, (_, parts) in enumerate(sorted(found))}
    ok(imported("promptfoo", REPEATED, tmp_path / "ds", "--repeats", "epochs"))
    with gzip.open(tmp_path / "ds" / "logs.csv.gz", "rt", newline="") as fh:
        got = {(row["config_id"], row["instance_id"]): (float(row["prompt_tokens"]), float(row["completion_tokens"]))
               for row in csv.DictReader(fh)}
    assert len(got) == 36 and got == expected and expected[("small-t0_t0.0_g64_cot", "0#1")] == (10, 4)
    doc["results"]["results"][0]["response"]["tokenUsage"] = {"total": 14}
    (tmp_path / "partial.json").write_text(json.dumps(doc))
    ok(imported("promptfoo", tmp_path / "partial.json", tmp_path / "partial", "--repeats", "epochs"))
    with gzip.open(tmp_path / "partial" / "logs.csv.gz", "rt", newline="") as fh:
        assert next(csv.reader(fh))[-2:] == ["latency_s", "tokens"]
