"""Hostile input to ``cabench data import`` and to the dataset loader.

Each case is refused in one line naming the file (and the field, row or
position) with exit 2 and nothing written, or imported with the right numbers.
Sources are the small logs of ``test_readers`` (BFCL) and ``test_tool_readers``
(the other formats), damaged here.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.data import io as data_io
from cabench.data.dataset import load_dataset
from cabench.data.readers import common
from cabench.yamlio import load_yaml
from tests.conftest import tiny_logs, write_dataset
from tests.data.test_readers import write_bfcl
from tests.data.test_tool_readers import write_eee, write_helm, write_inspect, write_promptfoo

RUNNER = CliRunner()
SOURCES = {"bfcl": write_bfcl, "helm": write_helm, "inspect": write_inspect, "promptfoo": write_promptfoo,
           "every-eval-ever": write_eee}
DEEP = "[" * 100_000  # nested far beyond what a recursive parser can follow
BFCL_RESULT = "result/alpha-model/gorilla_openfunctions_v1_test_simple_result.json"
BFCL_SCORE = "score/alpha-model/simple_score.json"


def imported(fmt: str, src: Path, out: Path, *extra: str) -> Any:
    args = ["data", "import", str(src), "--out", str(out), *extra]
    return RUNNER.invoke(app, args + (["--format", fmt] if fmt != "canonical" else []))


def refused(result: Any, *words: str) -> str:
    """The one error line of a command that exited 2, checked to hold every one of ``words``."""
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def checksums(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# --- fixture builders: damage one file of a source ----------------------------------------------------------------


def first(root: Path, pattern: str) -> Path:
    """The first file under ``root`` matching ``pattern`` (a log folder's index excluded)."""
    return sorted(p for p in root.rglob(pattern) if p.name != "logs.json")[0]


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    """Rewrite a JSON file with ``change`` applied to its document (the returned document, when not None)."""
    doc = json.loads(path.read_text())
    path.write_text(json.dumps(change(doc) or doc))


def edit_line(path: Path, number: int, change: Callable[[dict], Any]) -> None:
    """Rewrite line ``number`` (1-based) of a JSON-lines file with ``change`` applied to its object."""
    lines = path.read_text().splitlines()
    item = json.loads(lines[number - 1])
    lines[number - 1] = json.dumps(change(item) or item)
    path.write_text("\n".join(lines) + "\n")


def set_line(path: Path, number: int, text: str) -> None:
    lines = path.read_text().splitlines()
    lines[number - 1] = text
    path.write_text("\n".join(lines) + "\n")


def edit_member(archive: Path, member: str, change: Callable[[str], str]) -> None:
    """Rewrite one member of a zip archive (an Inspect ``.eval`` log) with ``change`` applied to its text."""
    with zipfile.ZipFile(archive) as old:
        members = {name: old.read(name).decode() for name in old.namelist()}
    members[member] = change(members[member])
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as new:
        for name, text in members.items():
            new.writestr(name, text)


def claim_size(archive: Path, member: str, size: int) -> None:
    """Make the zip headers of ``member`` claim ``size`` unpacked bytes (its data unchanged): headers can lie."""
    data = bytearray(archive.read_bytes())
    name = member.encode()
    for signature, offset in ((b"PK\x01\x02", 24), (b"PK\x03\x04", 22)):  # central and local header
        start = 0
        while (start := data.find(signature, start)) >= 0:
            name_at = start + (46 if signature == b"PK\x01\x02" else 30)
            if data[name_at:name_at + len(name)] == name:
                data[start + offset:start + offset + 4] = struct.pack("<I", size)
            start += 4
    archive.write_bytes(bytes(data))


def stat_of(entry: dict, name: str) -> dict:
    return next(s for s in entry["stats"] if s["name"]["name"] == name)


def sample_of(doc: dict, n: int = 0) -> dict:
    return doc["samples"][n]


def one_stat(change: Callable[[dict], Any], name: str = "exact_match") -> Callable[[list], None]:
    """A change of the first HELM entry's stat ``name``."""
    return lambda entries: change(stat_of(entries[0], name))


# --- 1. JSON nested too deeply, and numbers too long: every JSON reader -------------------------------------------

DEEP_CASES = [
    ("bfcl", "result line", lambda r: set_line(r / BFCL_RESULT, 2, DEEP), "simple_result.json: line 2"),
    ("bfcl", "score line", lambda r: set_line(r / BFCL_SCORE, 2, DEEP), "simple_score.json: line 2"),
    ("helm", "run_spec.json", lambda r: first(r, "run_spec.json").write_text(DEEP), "run_spec.json"),
    ("helm", "per_instance_stats.json", lambda r: first(r, "per_instance_stats.json").write_text(DEEP),
     "per_instance_stats.json"),
    ("inspect", ".json log", lambda r: first(r, "*.json").write_text(DEEP), "demo_1.json"),
    ("inspect", ".eval header", lambda r: edit_member(first(r, "*.eval"), "header.json", lambda _: DEEP),
     "demo_0.eval: header.json"),
    ("inspect", ".eval sample", lambda r: edit_member(first(r, "*.eval"), "samples/q3_epoch_1.json",
                                                      lambda t: t[:-1] + f', "extra": {DEEP}' + "}"),
     "demo_0.eval: samples/q3_epoch_1.json"),
    ("promptfoo", "results file", lambda r: (r / "results.json").write_text(DEEP), "results.json"),
    ("every-eval-ever", "samples line", lambda r: set_line(first(r, "*_samples.jsonl"), 3, DEEP),
     "_samples.jsonl: line 3"),
    ("every-eval-ever", "aggregate log", lambda r: first(r, "*-000000000000.json").write_text(DEEP),
     "000000000000.json"),
]


@pytest.mark.parametrize("fmt, label, damage, where", DEEP_CASES, ids=[f"{c[0]}-{c[1]}" for c in DEEP_CASES])
def test_json_nested_too_deeply_is_one_line(tmp_path, fmt, label, damage, where):
    src = SOURCES[fmt](tmp_path / "src")
    damage(src if src.is_dir() else src.parent)
    refused(imported(fmt, src, tmp_path / "ds"), where, "JSON nested too deeply")
    assert not (tmp_path / "ds").exists()


def test_generic_import_of_deep_json_lines_is_one_line(tmp_path):
    source = tmp_path / "logs.jsonl"
    tiny_logs(2, 5).to_json(source, orient="records", lines=True)
    set_line(source, 4, '{"config_id": ' + DEEP)
    refused(imported("canonical", source, tmp_path / "ds"),
            "logs.jsonl: unreadable file (line 4: JSON nested too deeply)")
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("line, said", [
    ('{"config_id": "cfg0", broken', "line 4: Expecting property name enclosed in double quotes (column 23)"),
    ("[1, 2]", "line 4: an array, not a JSON object"), ('"text"', "line 4: a string, not a JSON object"),
])
def test_a_json_line_that_is_no_object_is_named_by_its_line(tmp_path, line, said):
    """A broken JSON line, or one holding an array or a string, is refused naming its line (pandas names a byte
    offset, and an array line ended in a traceback)."""
    source = tmp_path / "logs.jsonl"
    tiny_logs(2, 5).to_json(source, orient="records", lines=True)
    set_line(source, 4, line)
    refused(imported("canonical", source, tmp_path / "ds"), f"logs.jsonl: unreadable file ({said})")
    assert not (tmp_path / "ds").exists()


def test_deeply_nested_mapping_and_dataset_yaml_are_one_line(tmp_path):
    tiny_logs(2, 5).to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text("dataset: " + DEEP)
    refused(RUNNER.invoke(app, ["data", "import", str(tmp_path / "logs.csv"), "--mapping", str(tmp_path / "map.yaml"),
                                "--out", str(tmp_path / "ds")]), "map.yaml: malformed YAML (nested too deeply")
    folder = write_dataset(tmp_path / "deep", tiny_logs(2, 5))
    (folder / "dataset.yaml").write_text("name: deep\nprovenance: " + DEEP)
    refused(RUNNER.invoke(app, ["data", "describe", str(folder)]), "dataset.yaml: not valid YAML (nested too deeply")


@pytest.mark.parametrize("fmt, damage, where", [
    ("promptfoo", lambda r: (r / "results.json").write_text(
        (r / "results.json").read_text().replace('"latencyMs": 500.0', '"latencyMs": ' + "9" * 5000, 1)),
     "results.json"),
    ("every-eval-ever", lambda r: set_line(first(r, "*_samples.jsonl"), 2, '{"sample_id": ' + "9" * 5000 + "}"),
     "_samples.jsonl: line 2"),
], ids=["promptfoo", "every-eval-ever"])
def test_number_of_thousands_of_digits_is_one_line(tmp_path, fmt, damage, where):
    src = SOURCES[fmt](tmp_path / "src")
    damage(src if src.is_dir() else src.parent)
    refused(imported(fmt, src, tmp_path / "ds"), where, "unreadable JSON")


EMPTY = [
    ("promptfoo", lambda r: r / "results.json", "results.json: the promptfoo results file is empty (0 bytes)"),
    ("inspect", lambda r: first(r, "*demo_1.json"), "demo_1.json: the Inspect eval log is empty (0 bytes)"),
    ("helm", lambda r: first(r, "run_spec.json"), "run_spec.json: the HELM run_spec.json is empty (0 bytes)"),
    ("every-eval-ever", lambda r: first(r, "*_samples.jsonl"), None),
]


@pytest.mark.parametrize("fmt, target, words", EMPTY, ids=[e[0] for e in EMPTY])
def test_an_empty_file_is_called_empty(tmp_path, fmt, target, words):
    """A file of 0 bytes (a run that wrote nothing, a checkout of a deleted file) is said to be empty, not a JSON
    syntax error at line 1 column 1; Every Eval Ever files with no line leave no samples, which says so."""
    src = SOURCES[fmt](tmp_path / "src")
    root = src if src.is_dir() else src.parent
    if words is None:
        for path in root.rglob("*_samples.jsonl"):
            path.write_text("\n")
        refused(imported(fmt, src, tmp_path / "ds"), ": no samples (its *_samples.jsonl files hold no line)")
        return
    target(root).write_bytes(b"")
    refused(imported(fmt, src, tmp_path / "ds"), words)


def test_promptfoo_json_lines_output_is_named_as_such(tmp_path):
    """`promptfoo eval -o results.jsonl` writes a result per line: said so, with how to export the one document
    without paying for the eval again."""
    src = write_promptfoo(tmp_path / "src")
    results = json.loads(src.read_text())["results"]["results"]
    lines = tmp_path / "results.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in results))
    refused(imported("promptfoo", lines, tmp_path / "ds"), "results.jsonl: one JSON document per line (JSON Lines)",
            "`promptfoo export eval <evalId> -o results.json`")
    cut = tmp_path / "cut.json"
    cut.write_text(src.read_text()[:-40])  # a cut document is still called one
    refused(imported("promptfoo", cut, tmp_path / "ds"), "cut.json: not valid JSON at line", "a cut or damaged")



@pytest.mark.parametrize("name, text, kind", [
    ("results.csv", "question,[small-t0] direct\nis the sky blue,\"[PASS] (1.00)\"\n", "CSV"),
    ("results.yaml", "evalId: eval-1\nresults:\n  version: 3\n", "YAML"),
    ("results.html", "<!DOCTYPE html>\n<html><body></body></html>\n", "HTML"),
])
def test_promptfoo_other_outputs_are_named_as_such(tmp_path, name, text, kind):
    """`promptfoo eval -o results.csv` (or .yaml, .html) is promptfoo's output in another format, not a damaged
    results file: said so, with how to export the JSON one without paying for the eval again; JSON under such a name
    is still read."""
    (tmp_path / name).write_text(text)
    refused(imported("promptfoo", tmp_path / name, tmp_path / "ds"),
            f"{name}: promptfoo's {kind} output (by its name), which cabench does not read; export the stored eval as "
            "JSON, without running it again (`promptfoo export eval <evalId> -o results.json`; `promptfoo list evals` "
            "lists the evals)")
    src = write_promptfoo(tmp_path / "src")
    src.rename(tmp_path / "src" / name)
    result = imported("promptfoo", tmp_path / "src" / name, tmp_path / "ds")
    assert result.exit_code == 0, result.output


def test_deep_json_within_reach_is_read(tmp_path):
    """Nesting a parser can follow, in a field cabench does not read, changes nothing."""
    src = write_inspect(tmp_path / "src")
    edit_json(first(src, "*.json"), lambda doc: sample_of(doc).update(extra=json.loads("[" * 200 + "]" * 200)))
    result = imported("inspect", src, tmp_path / "ds")
    assert result.exit_code == 0, result.output
    assert "kept 3 configurations x 5 instances" in result.stdout


# --- 2. fields of the wrong JSON type ------------------------------------------------------------------------------

def _helm_stats(change: Callable[[list], Any]) -> Callable[[Path], None]:
    return lambda r: edit_json(first(r, "per_instance_stats.json"), change)


def _inspect_json(change: Callable[[dict], Any]) -> Callable[[Path], None]:
    return lambda r: edit_json(first(r, "*.json"), change)


def _eee_line(change: Callable[[dict], Any]) -> Callable[[Path], None]:
    return lambda r: edit_line(first(r, "*_samples.jsonl"), 1, change)


def _eee_aggregate(change: Callable[[dict], Any]) -> Callable[[Path], None]:
    return lambda r: edit_json(first(r, "*-000000000000.json"), change)


def _promptfoo(change: Callable[[dict], Any]) -> Callable[[Path], None]:
    return lambda r: edit_json(r / "results.json", lambda doc: change(doc["results"]["results"][0]))


def _no_mean(stat: dict) -> None:
    del stat["mean"]
    stat["count"] = "1"


def _usage_text(doc: dict) -> None:
    del sample_of(doc)["model_usage"]
    sample_of(doc)["output"]["usage"] = "many"


WRONG_TYPES = [
    ("helm", "train_trial_index text", _helm_stats(lambda e: e[0].update(train_trial_index="0")),
     ["per_instance_stats.json: entry 1", "'train_trial_index' is '0', not a whole number"]),
    ("helm", "count text", _helm_stats(one_stat(_no_mean)),
     ["per_instance_stats.json: entry 1", "'count' is '1', not a number"]),
    ("helm", "stat not an object", _helm_stats(lambda e: e[0]["stats"].append(7)),
     ["per_instance_stats.json: entry 1: stats[6]", "expected an object, got 7"]),
    ("inspect", "model_generate_config a list", _inspect_json(lambda d: d["eval"].update(model_generate_config=[1])),
     ["demo_1.json", "'eval.model_generate_config' is a list, not an object"]),
    ("inspect", "model_generate_config text", _inspect_json(lambda d: d["eval"].update(model_generate_config="t")),
     ["demo_1.json", "'eval.model_generate_config' is 't', not an object"]),
    ("inspect", "plan.config a list", _inspect_json(lambda d: d["plan"].update(config=[{"temperature": 0}])),
     ["demo_1.json", "'plan.config' is a list, not an object"]),
    ("inspect", "plan.steps a number", _inspect_json(lambda d: d["plan"].update(steps=5)),
     ["demo_1.json", "'plan.steps' is 5, not a list"]),
    ("inspect", "plan a list", _inspect_json(lambda d: d.update(plan=[])),
     ["demo_1.json", "'plan' is a list, not an object"]),
    ("inspect", "temperature text", _inspect_json(lambda d: d["plan"]["config"].update(temperature="hot")),
     ["demo_1.json: generation config", "'temperature' is 'hot', not a number"]),
    ("inspect", "output.usage text", _inspect_json(_usage_text),
     ["demo_1.json: sample 'q0'", "'output.usage' is 'many', not an object"]),
    ("promptfoo", "provider label {}", _promptfoo(lambda i: i["provider"].update(label={})),
     ["results.json: results.results[0]: provider", "'label' is an object, not text"]),
    ("promptfoo", "prompt label {}", _promptfoo(lambda i: i["prompt"].update(label={})),
     ["results.json: results.results[0]", "'prompt.label' is an object, not text"]),
    ("promptfoo", "tokenUsage a list", _promptfoo(lambda i: i["response"].update(tokenUsage=[1])),
     ["results.json: results.results[0]", "'response.tokenUsage' is a list, not an object"]),
    ("promptfoo", "testCase a list", _promptfoo(lambda i: i.update(testCase=[1])),
     ["results.json: results.results[0]", "'testCase' is a list, not an object"]),
    ("promptfoo", "testIdx negative", _promptfoo(lambda i: i.update(testIdx=-5)),
     ["results.json: results.results[0]", "'testIdx' is -5, a negative test number; a damaged file"]),
    ("every-eval-ever", "evaluation_results [5]", _eee_aggregate(lambda d: d.update(evaluation_results=[5])),
     ["000000000000.json: evaluation_results[0]", "expected an object, got 5"]),
    ("every-eval-ever", "generation_config text",
     _eee_aggregate(lambda d: d["evaluation_results"][0].update(generation_config="greedy")),
     ["000000000000.json: evaluation_results[0]", "'generation_config' is 'greedy', not an object"]),
    ("every-eval-ever", "evaluation_results an object", _eee_aggregate(lambda d: d.update(evaluation_results={})),
     ["000000000000.json", "'evaluation_results' is an object, not a list"]),
    ("every-eval-ever", "evaluation_result_id a list", _eee_line(lambda i: i.update(evaluation_result_id=["a"])),
     ["_samples.jsonl: line 1", "'evaluation_result_id' is a list, not text"]),
    ("every-eval-ever", "latency Infinity", _eee_line(lambda i: i["performance"].update(latency_ms=float("inf"))),
     ["_samples.jsonl: line 1", "'performance.latency_ms' is inf, not a finite number"]),
    ("every-eval-ever", "performance a list", _eee_line(lambda i: i.update(performance=[500])),
     ["_samples.jsonl: line 1", "'performance' is a list, not an object"]),
    ("bfcl", "id an object", lambda r: edit_line(r / BFCL_RESULT, 2, lambda i: i.update(id={"n": 1})),
     ["simple_result.json: line 2", "'id' is an object, not text or a whole number"]),
    ("bfcl", "failed id an object", lambda r: edit_line(r / BFCL_SCORE, 2, lambda i: i.update(id={"n": 1})),
     ["simple_score.json: line 2", "'id' is an object, neither a position in nor the id of an entry"]),
]


@pytest.mark.parametrize("fmt, label, damage, words", WRONG_TYPES, ids=[f"{c[0]}-{c[1]}" for c in WRONG_TYPES])
def test_wrong_json_type_names_file_and_field(tmp_path, fmt, label, damage, words):
    src = SOURCES[fmt](tmp_path / "src")
    damage(src if src.is_dir() else src.parent)
    refused(imported(fmt, src, tmp_path / "ds"), *words)
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("column, value, words", [
    ("model", {"name": "m0"}, "column 'model' holds a dict at row 2"),
    ("instance_id", ["q", 1], "column 'instance_id' holds a list at row 2"),
])
def test_generic_json_lines_with_a_container_for_a_name_is_one_line(tmp_path, column, value, words):
    records = tiny_logs(2, 5).to_dict(orient="records")
    records[1][column] = value
    (tmp_path / "logs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    refused(imported("canonical", tmp_path / "logs.jsonl", tmp_path / "ds"), "logs.jsonl", words)


# --- 3. archive members and gzip that unpack to too much ----------------------------------------------------------

SAMPLE = "samples/q2_epoch_1.json"


def _padded(text: str) -> str:
    return text[:-1] + ', "padding": "' + " " * 200_000 + '"}'  # 200 kB that deflate to a few hundred bytes


@pytest.mark.parametrize("label, damage, words", [
    ("member bigger than the cap", lambda log: edit_member(log, SAMPLE, _padded),
     [f"demo_0.eval: {SAMPLE}: unpacks to more than 65,536 bytes"]),
    ("header claiming less than the member holds", lambda log: (edit_member(log, SAMPLE, _padded),
                                                                 claim_size(log, SAMPLE, 1000)),
     [f"demo_0.eval: {SAMPLE}: unreadable"]),
], ids=["honest-header", "lying-header"])
def test_eval_member_over_the_cap_is_refused(tmp_path, monkeypatch, label, damage, words):
    monkeypatch.setattr(common, "MAX_MEMBER_BYTES", 64 * 1024)
    src = write_inspect(tmp_path / "src")
    damage(first(src, "*.eval"))
    refused(imported("inspect", src, tmp_path / "ds"), *words)
    assert not (tmp_path / "ds").exists()


def test_eval_member_claiming_gigabytes_is_refused_unread(tmp_path, monkeypatch):
    """A small archive whose member says it unpacks to 1.5 GB is refused on its header, under the default cap."""
    src = write_inspect(tmp_path / "src")
    log = first(src, "*.eval")
    claim_size(log, SAMPLE, 1_500_000_000)
    real_open = common.zipfile.ZipFile.open  # the zipfile cabench reads with (the backport before Python 3.14)

    def watched_open(archive: common.zipfile.ZipFile, member: Any, *args: Any, **kwargs: Any) -> Any:
        assert getattr(member, "filename", member) != SAMPLE, "the member was unpacked"
        return real_open(archive, member, *args, **kwargs)

    monkeypatch.setattr(common.zipfile.ZipFile, "open", watched_open)
    refused(imported("inspect", src, tmp_path / "ds"), f"{SAMPLE}: unpacks to more than 536,870,912 bytes")


def _gzip_bomb(path: Path) -> Path:
    path.write_bytes(gzip.compress(tiny_logs(2, 3).to_csv(index=False).encode() + b"0" * 20_000_000))
    return path


def test_gzip_table_that_unpacks_to_too_much_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(data_io, "MAX_UNPACKED_BYTES", 64 * 1024)
    bomb = _gzip_bomb(tmp_path / "logs.csv.gz")
    refused(imported("canonical", bomb, tmp_path / "ds"), "logs.csv.gz: unpacks to more than")
    assert not (tmp_path / "ds").exists()
    folder = write_dataset(tmp_path / "bombed", tiny_logs())
    _gzip_bomb(folder / "logs.csv.gz")
    refused(RUNNER.invoke(app, ["data", "describe", str(folder)]), "logs.csv.gz: unpacks to more than")


def test_gzip_table_within_the_cap_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(data_io, "MAX_UNPACKED_BYTES", 64 * 1024)  # logs compress about tenfold: the ratio allows it
    frame = tiny_logs(3, 1000)
    frame.to_csv(tmp_path / "logs.csv.gz", index=False)
    assert len(frame.to_csv(index=False)) > 64 * 1024
    result = imported("canonical", tmp_path / "logs.csv.gz", tmp_path / "ds")
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "ds" / "logs.csv.gz"), frame, check_dtype=False)


# --- 4. BFCL failed ids out of range -------------------------------------------------------------------------------

@pytest.mark.parametrize("failed_id, words", [
    (0, "line 2: failed entry id 0 is outside 1..4"),
    (5, "line 2: failed entry id 5 is outside 1..4"),
    (-1, "line 2: failed entry id -1 is outside 1..4"),
])
def test_bfcl_failed_id_out_of_range_is_refused(tmp_path, failed_id, words):
    """Today's score file says 3/4; an id outside the result file used to make all four count as correct."""
    src = write_bfcl(tmp_path / "src")
    edit_line(src / BFCL_SCORE, 2, lambda entry: entry.update(id=failed_id))
    refused(imported("bfcl", src, tmp_path / "ds"), "simple_score.json", words)
    assert not (tmp_path / "ds").exists()


def test_bfcl_failed_ids_mark_their_entries(tmp_path):
    src = write_bfcl(tmp_path / "src")
    edit_line(src / BFCL_SCORE, 2, lambda entry: entry.update(id=4))  # the last entry failed, not the second
    assert imported("bfcl", src, tmp_path / "ds").exit_code == 0
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz").set_index(["config_id", "instance_id"])["correct"]
    assert [logs["alpha-model", f"simple_{n}"] for n in range(4)] == [1, 1, 1, 0]
    assert logs["alpha-model"].mean() == pytest.approx(5 / 7)


# --- 5. negative token parts ---------------------------------------------------------------------------------------

def _helm_tokens(stats: list) -> None:
    stat_of(stats[0], "num_prompt_tokens")["sum"] = -50
    stat_of(stats[0], "num_completion_tokens")["sum"] = 100


def _promptfoo_tokens(item: dict) -> None:
    item["response"]["tokenUsage"] = {"total": 0, "prompt": -50, "completion": 100}


NEGATIVE_TOKENS = [
    ("bfcl", lambda r: edit_line(r / BFCL_RESULT, 1, lambda i: i.update(input_token_count=-50, output_token_count=100)),
     ["simple_result.json: line 1", "'input_token_count' is -50, a negative token count"]),
    ("helm", _helm_stats(_helm_tokens),
     ["per_instance_stats.json: entry 1: num_prompt_tokens", "'sum' is -50, a negative token count"]),
    ("inspect", _inspect_json(lambda d: sample_of(d)["model_usage"]["openai/m-large"].update(total_tokens=-50)),
     ["demo_1.json: sample 'q0': model_usage.openai/m-large", "'total_tokens' is -50, a negative token count"]),
    ("promptfoo", _promptfoo(_promptfoo_tokens),
     ["results.json: results.results[0]", "'response.tokenUsage.prompt' is -50, a negative token count"]),
    ("every-eval-ever", _eee_line(lambda i: i["token_usage"].update(total_tokens=-50)),
     ["_samples.jsonl: line 1", "'token_usage.total_tokens' is -50, a negative token count"]),
]


def _helm_runtime(stats: list) -> None:
    stat_of(stats[0], "inference_runtime")["sum"] = -0.5


#: A negative time is refused naming the source's field, as a negative token count is (HELM's, Every Eval Ever's and
#: promptfoo's named cabench's column, latency_s, with the value in seconds: -0.003 for a source's -3 ms).
NEGATIVE_TIMES = [
    ("helm", _helm_stats(_helm_runtime),
     ["per_instance_stats.json: entry 1: inference_runtime", "'sum' is -0.5, a negative time"]),
    ("every-eval-ever", _eee_line(lambda i: i["performance"].update(latency_ms=-3)),
     ["_samples.jsonl: line 1", "'performance.latency_ms' is -3, a negative time"]),
    ("promptfoo", _promptfoo(lambda i: i.update(latencyMs=-3)),
     ["results.json: results.results[0]", "'latencyMs' is -3, a negative time"]),
]


@pytest.mark.parametrize("fmt, damage, words", NEGATIVE_TIMES, ids=[c[0] for c in NEGATIVE_TIMES])
def test_negative_time_is_refused_naming_the_field(tmp_path, fmt, damage, words):
    src = SOURCES[fmt](tmp_path / "src")
    damage(src if src.is_dir() else src.parent)
    line = refused(imported(fmt, src, tmp_path / "ds"), *words)
    assert "latency_s" not in line and not (tmp_path / "ds").exists()


@pytest.mark.parametrize("fmt, damage, words", NEGATIVE_TOKENS, ids=[c[0] for c in NEGATIVE_TOKENS])
def test_negative_token_count_is_refused(tmp_path, fmt, damage, words):
    src = SOURCES[fmt](tmp_path / "src")
    damage(src if src.is_dir() else src.parent)
    refused(imported(fmt, src, tmp_path / "ds"), *words)
    assert not (tmp_path / "ds").exists()


def test_generic_import_refuses_negative_tokens(tmp_path):
    frame = tiny_logs(2, 5)
    frame.loc[2, "tokens"] = -50
    frame.to_csv(tmp_path / "logs.csv", index=False)
    refused(imported("canonical", tmp_path / "logs.csv", tmp_path / "ds"), "logs.csv",
            "column 'tokens' is not positive at row 3")


# --- 6. duplicated rows are duplicates, with their positions --------------------------------------------------------

def _repeat_line(path: Path, copy: int, over: int) -> None:
    set_line(path, over, path.read_text().splitlines()[copy - 1])


DUPLICATES = [
    ("bfcl", lambda r: edit_line(r / BFCL_RESULT, 2, lambda i: i.update(id="simple_0")),
     ["('alpha-model', 'simple_0') at", "simple_result.json: line 1 and again at", "simple_result.json: line 2"]),
    ("helm", _helm_stats(lambda e: e[3].update(instance_id="id0")),  # HELM writes an entry per metric: read together
     ["per_instance_stats.json: entry 4: stat 'num_prompt_tokens' of instance id0 differs from entry 1's"]),
    ("inspect", _inspect_json(lambda d: d["samples"][1].update(id="q0")),
     ["'q0') at", "demo_1.json: the file's sample number 1 and again at", "demo_1.json: the file's sample number 2"]),
    ("promptfoo", _promptfoo(lambda i: i.update(testIdx=1)),
     ["'1') at", "results.json: results.results[0] and again at", "results.json: results.results[1]"]),
    ("every-eval-ever", lambda r: _repeat_line(first(r, "*_samples.jsonl"), 1, 2),
     ["('org/m-small_t0.0_g256_direct', 'q0') at", "_samples.jsonl: line 1 and again at", "_samples.jsonl: line 2"]),
]


@pytest.mark.parametrize("missing", ["error", "drop-instances"])
@pytest.mark.parametrize("fmt, damage, words", DUPLICATES, ids=[c[0] for c in DUPLICATES])
def test_duplicated_rows_are_reported_as_duplicates(tmp_path, fmt, damage, words, missing):
    """A repeated row leaves its configuration one instance short; it is a duplicate, not a hole to drop."""
    src = SOURCES[fmt](tmp_path / "src")
    damage(src if src.is_dir() else src.parent)
    line = refused(imported(fmt, src, tmp_path / "ds", "--missing", missing),
                   *(["duplicate (config_id, instance_id) pair"] if fmt != "helm" else []), *words)
    assert "cells are missing" not in line and not (tmp_path / "ds").exists()


def _duplicated_logs() -> pd.DataFrame:
    frame = tiny_logs(2, 5)
    frame.loc[2, ["instance_id", "correct"]] = ["q001", 1]  # cfg0 has q001 twice and lacks q002
    return frame


@pytest.mark.parametrize("missing", ["error", "drop-instances", "drop-configs"])
def test_generic_import_reports_duplicates_with_rows(tmp_path, missing):
    _duplicated_logs().to_csv(tmp_path / "logs.csv", index=False)
    refused(imported("canonical", tmp_path / "logs.csv", tmp_path / "ds", "--missing", missing),
            "duplicate (config_id, instance_id) pair ('cfg0', 'q001') at row 2 and again at row 3")


@pytest.mark.parametrize("missing", ["error", "drop-instances"])
def test_dataset_with_duplicates_is_refused_with_rows(tmp_path, missing):
    folder = write_dataset(tmp_path / "dup", _duplicated_logs())
    meta = yaml.safe_load((folder / "dataset.yaml").read_text())
    (folder / "dataset.yaml").write_text(yaml.safe_dump({**meta, "missing": missing}))
    refused(RUNNER.invoke(app, ["data", "describe", str(folder)]),
            "duplicate (config_id, instance_id) pair ('cfg0', 'q001') at row 2 and again at row 3")


# --- 7. --out that is, holds or lies inside the source --------------------------------------------------------------

def _inspect_logs(tmp_path: Path) -> tuple[Path, list[str]]:
    return write_inspect(tmp_path / "src"), ["--format", "inspect"]


def _canonical_in_folder(tmp_path: Path) -> tuple[Path, list[str]]:
    folder = write_dataset(tmp_path / "data", tiny_logs(2, 5))
    tiny_logs(2, 5).to_csv(folder / "mine.csv", index=False)
    return folder / "mine.csv", []


OVERLAPS = [
    ("out is the source", _inspect_logs, lambda src: src, "is the source"),
    ("out inside the source", _inspect_logs, lambda src: src / "dataset", "lies inside the source"),
    ("out holds the source", _canonical_in_folder, lambda src: src.parent, "holds the source"),
    ("out a link to the source", _inspect_logs, lambda src: _link(src), "is the source"),
]


def _link(src: Path) -> Path:
    link = src.parent / "link"
    link.symlink_to(src)
    return link


@pytest.mark.parametrize("label, build, out, words", OVERLAPS, ids=[c[0] for c in OVERLAPS])
def test_out_overlapping_the_source_is_refused_untouched(tmp_path, label, build, out, words):
    src, extra = build(tmp_path)
    root = src if src.is_dir() else src.parent
    before = checksums(root)
    refused(RUNNER.invoke(app, ["data", "import", str(src), "--out", str(out(src)), "--force", *extra]), words)
    assert checksums(root) == before and not list(tmp_path.rglob("*staging*"))  # nothing was even staged


def test_out_holding_the_mapping_is_refused(tmp_path):
    folder = write_dataset(tmp_path / "ds", tiny_logs(2, 5))
    (folder / "map.yaml").write_text(yaml.safe_dump({"dataset": {"name": "mine"}}))
    tiny_logs(2, 5).to_csv(tmp_path / "logs.csv", index=False)
    before = checksums(folder)
    refused(RUNNER.invoke(app, ["data", "import", str(tmp_path / "logs.csv"), "--mapping", str(folder / "map.yaml"),
                                "--out", str(folder), "--force"]), "holds the source", "map.yaml")
    assert checksums(folder) == before


# --- 8. names and ids that are not printable one-line text ----------------------------------------------------------

def _canonical_with(column: str, value: str) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        root.mkdir(parents=True)
        frame = tiny_logs(2, 5)
        frame[column] = frame[column].astype(object)
        frame.loc[3, column] = value
        frame.to_csv(root / "logs.csv", index=False, quoting=csv.QUOTE_NONNUMERIC)  # a carriage return quoted
        return root / "logs.csv"
    return build


def _bfcl_model_renamed(root: Path) -> Path:
    write_bfcl(root)
    for kind in ("result", "score"):
        (root / kind / "alpha-model").rename(root / kind / "alpha\nmodel")
    return root


def _damaged(fmt: str, damage: Callable[[Path], Any]) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        src = SOURCES[fmt](root)
        damage(src if src.is_dir() else src.parent)
        return src
    return build


UNPRINTABLE = [
    ("canonical", "newline in model", _canonical_with("model", "m\nx"), ["logs.csv", "column 'model'", "row 4"],
     "'\\n'"),
    ("canonical", "carriage return in config_id", _canonical_with("config_id", "cfg\r0"),
     ["logs.csv", "column 'config_id'", "row 4"], "'\\r'"),
    ("canonical", "tab in prompting", _canonical_with("prompting", "di\trect"),
     ["logs.csv", "column 'prompting'", "row 4"], "'\\t'"),
    ("canonical", "escape in instance_id", _canonical_with("instance_id", "q\x1b[31m"),
     ["logs.csv", "column 'instance_id'", "row 4"], "'\\x1b'"),
    ("canonical", "line separator in model", _canonical_with("model", "m\u2028x"),
     ["logs.csv", "column 'model'", "row 4"], "'\\u2028'"),
    # characters that print as nothing or as a space: two names differing by one read alike in every table
    ("canonical", "zero-width space in config_id", _canonical_with("config_id", "cfg0\u200b"),
     ["logs.csv", "column 'config_id'", "row 4"], "'\\u200b'"),
    ("canonical", "right-to-left override in model", _canonical_with("model", "m\u202ex"),
     ["logs.csv", "column 'model'", "row 4"], "'\\u202e'"),
    ("canonical", "no-break space in prompting", _canonical_with("prompting", "di\u00a0rect"),
     ["logs.csv", "column 'prompting'", "row 4"], "'\\xa0'"),
    ("every-eval-ever", "newline in model_id", _damaged("every-eval-ever", _eee_line(lambda i: i.update(
        model_id="org/m\nsmall"))), ["_samples.jsonl: line 1", "column 'model'"], "'\\n'"),
    ("every-eval-ever", "lone surrogate in sample_id", _damaged("every-eval-ever", _eee_line(lambda i: i.update(
        sample_id="q\ud800"))), ["_samples.jsonl: column 'instance_id'", "at line 1"], "'\\ud800'"),
    ("promptfoo", "carriage return in provider label", _damaged("promptfoo", _promptfoo(
        lambda i: i["provider"].update(label="m-small\r"))), ["results.json: results.results[0]", "column 'model'"],
     "'\\r'"),
    ("inspect", "newline in sample id", _damaged("inspect", _inspect_json(lambda d: d["samples"][2].update(
        id="q\n2"))), ["demo_1.json: the file's sample number 3", "column 'instance_id'"], "'\\n'"),
    ("bfcl", "newline in the model folder", _bfcl_model_renamed, ["relevance_result.json: line 1", "column 'model'"],
     "'\\n'"),
]


@pytest.mark.parametrize("fmt, label, build, words, char", UNPRINTABLE, ids=[f"{c[0]}-{c[1]}" for c in UNPRINTABLE])
def test_unprintable_names_are_refused_at_import(tmp_path, fmt, label, build, words, char):
    src = build(tmp_path / "src")
    refused(imported(fmt, src, tmp_path / "ds"), *words, f"holds {char}", "printable text on one line")
    assert not (tmp_path / "ds").exists()


def test_unprintable_name_in_a_dataset_folder_is_refused(tmp_path):
    """A hand-made logs.csv cannot bring a newline into a configuration name past the loader."""
    folder = write_dataset(tmp_path / "hand", tiny_logs(2, 5), gz=False)
    frame = tiny_logs(2, 5)
    frame["config_id"] = frame["config_id"].str.replace("cfg1", "cfg\n1")
    frame.to_csv(folder / "logs.csv", index=False)
    refused(RUNNER.invoke(app, ["data", "describe", str(folder)]), "logs.csv", "column 'config_id' holds '\\n'",
            "row 6")


@pytest.mark.parametrize("where", ["dataset.yaml", "mapping"])
def test_a_title_with_u_feff_or_a_control_character_is_refused(tmp_path, where):
    """A dataset's title titles the figures: a zero-width no-break space (U+FEFF) in it stopped every plot with a
    traceback from matplotlib's PDF writer. It is refused where the title is read: in dataset.yaml, and in an
    import's mapping, before anything is written; so is a tab. No-break and zero-width spaces, which prose titles
    hold and matplotlib draws, are not."""
    title = "\ufeffPIQA subset"
    if where == "dataset.yaml":
        folder = write_dataset(tmp_path / "hand", tiny_logs(2, 5))
        meta = load_yaml((folder / "dataset.yaml").read_text())
        (folder / "dataset.yaml").write_text(yaml.safe_dump({**meta, "title": title}, allow_unicode=True))
        refused(RUNNER.invoke(app, ["data", "describe", str(folder)]), "dataset.yaml: title: holds '\\ufeff'",
                "without control characters or U+FEFF")
        for spaced in ("PIQA\u00a0subset", "PIQA\u200bsubset"):  # no-break and zero-width spaces: prose titles
            (folder / "dataset.yaml").write_text(yaml.safe_dump({**meta, "title": spaced}, allow_unicode=True))
            assert data_io.read_metadata(folder)["title"] == spaced
        (folder / "dataset.yaml").write_text(yaml.safe_dump({**meta, "title": "PIQA\tsubset"}))
        refused(RUNNER.invoke(app, ["data", "describe", str(folder)]), "dataset.yaml: title: holds '\\t'")
        for separator in ("\u2028", "\u2029"):  # a line or paragraph separator breaks the title's line
            (folder / "dataset.yaml").write_text(yaml.safe_dump({**meta, "title": f"PIQA{separator}subset"}))
            refused(RUNNER.invoke(app, ["data", "describe", str(folder)]), f"dataset.yaml: title: holds {separator!r}")
        return
    tiny_logs(2, 5).to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text(yaml.safe_dump({"dataset": {"title": title}}, allow_unicode=True))
    refused(RUNNER.invoke(app, ["data", "import", str(tmp_path / "logs.csv"), "--out", str(tmp_path / "ds"),
                                "--mapping", str(tmp_path / "map.yaml")]), "map.yaml: dataset.title: holds '\\ufeff'")
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("how, words", [
    ("folder name", ["the folder name", "one line"]),
    ("mapping name", ["map.yaml: dataset.name", "one line"]),
    ("mapping name with /", ["map.yaml: dataset.name", "without '/'"]),
])
def test_unprintable_or_unloadable_dataset_name_is_refused(tmp_path, how, words):
    tiny_logs(2, 5).to_csv(tmp_path / "logs.csv", index=False)
    out, args = tmp_path / "a\nb", []
    if how != "folder name":
        out = tmp_path / "ds"
        (tmp_path / "map.yaml").write_text(yaml.safe_dump({"dataset": {"name": "a\nb" if how == "mapping name"
                                                                       else "a/b"}}))
        args = ["--mapping", str(tmp_path / "map.yaml")]
    refused(RUNNER.invoke(app, ["data", "import", str(tmp_path / "logs.csv"), "--out", str(out), *args]), *words)
    assert not out.exists()


def test_printable_unicode_names_are_kept(tmp_path):
    frame = tiny_logs(2, 201)
    frame["model"] = frame["model"].map({"m0": "modèle-β", "m1": "模型 1"})
    frame.to_csv(tmp_path / "logs.csv", index=False)
    assert imported("canonical", tmp_path / "logs.csv", tmp_path / "ds").exit_code == 0
    assert sorted(load_dataset(tmp_path / "ds").configs["model"]) == ["modèle-β", "模型 1"]


# --- 9. dataset names YAML would read as numbers --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["1e3", "1e-3", "253592126e722573", "1_000"])
def test_dataset_named_like_a_number_round_trips(tmp_path, name):
    tiny_logs(2, 201).to_csv(tmp_path / "logs.csv", index=False)
    result = imported("canonical", tmp_path / "logs.csv", tmp_path / name)
    assert result.exit_code == 0, result.output
    assert load_yaml((tmp_path / name / "dataset.yaml").read_text())["name"] == name  # written quoted
    assert load_dataset(tmp_path / name).name == name
    assert RUNNER.invoke(app, ["data", "describe", str(tmp_path / name)]).exit_code == 0


@pytest.mark.parametrize("name", ["1e3", "1e-3", "253592126e722573", "12"])
def test_number_like_name_written_unquoted_reads_as_written(tmp_path, name):
    """Older versions wrote ``name: 1e3`` unquoted (YAML 1.1); the loader reads the text the file holds."""
    folder = write_dataset(tmp_path / "old", tiny_logs(2, 201))
    meta = yaml.safe_load((folder / "dataset.yaml").read_text())
    (folder / "dataset.yaml").write_text(yaml.safe_dump({**meta, "name": name}).replace(f"'{name}'", name))
    assert f"name: {name}\n" in (folder / "dataset.yaml").read_text()
    assert load_dataset(folder).name == name


@pytest.mark.parametrize("field", ["working_time", "total_time"])
def test_a_negative_inspect_time_is_refused_not_dropped_as_empty(tmp_path, field):
    """An Inspect sample's working_time of -3 was dropped as 'latency_s empty or 0' (exit 0), where every other
    reader refuses a negative time as a damaged log."""
    def damage(d):
        sample = sample_of(d)
        if field == "total_time":
            sample.pop("working_time", None)
        sample[field] = -3

    src = SOURCES["inspect"](tmp_path / "src")
    _inspect_json(damage)(src if src.is_dir() else src.parent)
    refused(imported("inspect", src, tmp_path / "ds"), "demo_1.json: sample 'q0'",
            f"'{field}' is -3, a negative time; a damaged log")
    assert not (tmp_path / "ds").exists()


def test_helm_entries_that_are_no_instance_are_said_when_left_out(tmp_path):
    """A robustness run's perturbed copies and a run's later train trials were left out with no word: read 'N rows',
    kept fewer, nothing in dataset.yaml. Each kind is now counted in the import's output and its provenance."""
    import copy

    def more_entries(stats: list) -> None:
        perturbed, trial = copy.deepcopy(stats[0]), copy.deepcopy(stats[0])  # copies of an unperturbed trial 0
        perturbed["perturbation"] = {"name": "synonym", "prob": 0.5}  # variants the fixture does not have yet
        trial["train_trial_index"] = 2
        stats += [perturbed, trial]

    src = SOURCES["helm"](tmp_path / "src")  # three runs of five instances, each with a perturbed copy and trial 1
    plain = imported("helm", src, tmp_path / "plain")
    assert plain.exit_code == 0, plain.output
    assert ("left out: 15 instances of train trials after the first\n"
            "left out: 15 perturbed copies of instances (robustness variants)\n") in plain.stdout
    _helm_stats(more_entries)(src if src.is_dir() else src.parent)
    result = imported("helm", src, tmp_path / "ds")
    assert result.exit_code == 0, result.output
    assert ("left out: 16 instances of train trials after the first\n"
            "left out: 16 perturbed copies of instances (robustness variants)\n") in result.stdout
    meta = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())
    assert meta["provenance"]["other_entries"] == {"instances of train trials after the first": 16,
                                                   "perturbed copies of instances (robustness variants)": 16}
    assert (tmp_path / "ds" / "logs.csv.gz").read_bytes() == (tmp_path / "plain" / "logs.csv.gz").read_bytes()

    def split_by_metric(stats: list) -> None:  # HELM writes one entry per metric: the same variants, counted once
        halves = []
        for entry in stats:
            first_half, second_half = copy.deepcopy(entry), copy.deepcopy(entry)
            first_half["stats"], second_half["stats"] = entry["stats"][:1], entry["stats"][1:]
            halves += [first_half, second_half]
        stats[:] = halves

    _helm_stats(split_by_metric)(src if src.is_dir() else src.parent)
    again = imported("helm", src, tmp_path / "split")
    assert again.exit_code == 0, again.output
    assert "left out: 16 perturbed copies of instances (robustness variants)\n" in again.stdout


def test_json_lines_after_a_byte_order_mark_read_as_without_it(tmp_path):
    """An Every Eval Ever samples file saved with a UTF-8 byte order mark was refused as 'line 1: not JSON; a cut or
    damaged file'. The mark is no text: the import is the one of the file without it."""
    src = SOURCES["every-eval-ever"](tmp_path / "src")
    plain = imported("every-eval-ever", src, tmp_path / "plain")
    assert plain.exit_code == 0, plain.output
    samples = first(src if src.is_dir() else src.parent, "*_samples.jsonl")
    samples.write_bytes(b"\xef\xbb\xbf" + samples.read_bytes())
    marked = imported("every-eval-ever", src, tmp_path / "marked")
    assert marked.exit_code == 0, marked.output
    assert (tmp_path / "marked" / "logs.csv.gz").read_bytes() == (tmp_path / "plain" / "logs.csv.gz").read_bytes()


NULL_FIELDS = [
    ("inspect", _inspect_json(lambda d: next(iter(sample_of(d)["scores"].values())).update(value=None)),
     ["demo_1.json: sample 'q0'", "field 'value' is null"]),
    ("promptfoo", _promptfoo(lambda i: i.update(success=None)), ["results.json: results.results[0]",
                                                                  "field 'success' is null"]),
    ("every-eval-ever", _eee_line(lambda i: i["evaluation"].update(is_correct=None)),
     ["_samples.jsonl: line 1", "field 'evaluation.is_correct' is null"]),
]


@pytest.mark.parametrize("fmt, damage, words", NULL_FIELDS, ids=[c[0] for c in NULL_FIELDS])
def test_a_null_field_is_said_to_be_null_not_missing(tmp_path, fmt, damage, words):
    """A score field written as null was reported as a 'missing field', sending the reader to look for a field
    that is there."""
    src = SOURCES[fmt](tmp_path / "src")
    damage(src if src.is_dir() else src.parent)
    line = refused(imported(fmt, src, tmp_path / "ds"), *words)
    assert "missing" not in line


HUGE_TOKENS = [
    ("bfcl", lambda r: edit_line(r / BFCL_RESULT, 2, lambda i: i.update(input_token_count=2e12)),
     "simple_result.json: line 2"),
    ("every-eval-ever", _eee_line(lambda i: i["token_usage"].update(total_tokens=2e12)), "_samples.jsonl: line 1"),
]


@pytest.mark.parametrize("fmt, damage, where", HUGE_TOKENS, ids=[c[0] for c in HUGE_TOKENS])
def test_a_value_out_of_range_names_where_a_tool_log_holds_it(tmp_path, fmt, damage, where):
    """A token count above 10^12 in a tool's log was placed at 'row 1' (of the rows the reader made), where every
    other refusal names the file and line or sample."""
    src = SOURCES[fmt](tmp_path / "src")
    damage(src if src.is_dir() else src.parent)
    line = refused(imported(fmt, src, tmp_path / "ds"), where, "column 'tokens' is above 1e+12 at ")
    assert " at row " not in line


def test_a_score_of_minus_zero_is_written_as_zero():
    """An Inspect score of -0.0 was written to logs.csv.gz as -0.0."""
    import math

    from cabench.data.readers.common import correctness

    assert math.copysign(1.0, correctness(-0.0, "x")) == 1.0 and correctness(-0.0, "x") == 0.0
    assert correctness(0.25, "x") == 0.25 and correctness(True, "x") == 1.0


def test_a_table_compressed_one_file_at_a_time_is_read_and_an_archive_is_refused_by_name(tmp_path, monkeypatch):
    """pandas guessed .bz2, .xz, .zip and .tar from the name, so whether such a file was read depended on whether its
    first bytes passed for a CSV header: a .xz was refused as "separated by a tab", a .tar.gz read as names holding
    NUL. A table compressed with gzip, bzip2 or xz, or the one file of a zip archive (CSV or JSONL), is read as the
    plain table is, capped as a gzipped one is; a zip of two files and every other archive are refused by name."""
    import bz2
    import lzma
    import tarfile

    frame = tiny_logs(2, 4)
    text = frame.to_csv(index=False).encode()
    (tmp_path / "t.csv").write_bytes(text)
    plain = imported("canonical", tmp_path / "t.csv", tmp_path / "plain")
    assert plain.exit_code == 0, plain.output
    want = (tmp_path / "plain" / "logs.csv.gz").read_bytes()
    (tmp_path / "t.csv.bz2").write_bytes(bz2.compress(text))
    (tmp_path / "t.csv.xz").write_bytes(lzma.compress(text))
    with zipfile.ZipFile(tmp_path / "t.csv.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("logs.csv", text)
    with zipfile.ZipFile(tmp_path / "j.zip", "w") as z:  # the name inside says JSONL
        z.writestr("logs.jsonl", frame.to_json(orient="records", lines=True))
    for name in ("t.csv.bz2", "t.csv.xz", "t.csv.zip", "j.zip"):
        result = imported("canonical", tmp_path / name, tmp_path / name.replace(".", "_"))
        assert result.exit_code == 0, (name, result.output)
        assert (tmp_path / name.replace(".", "_") / "logs.csv.gz").read_bytes() == want, name
    try:
        from compression import zstd  # Python 3.14 on
    except ImportError:
        from backports import zstd  # before: a dependency

    (tmp_path / "t.csv.zst").write_bytes(zstd.compress(text))
    with zipfile.ZipFile(tmp_path / "mac.zip", "w") as z:  # a Mac's Finder adds a copy of the file's attributes
        z.writestr("logs.csv", text)
        z.writestr("__MACOSX/._logs.csv", b"\x00\x05\x16\x07")
    (tmp_path / "t.csv.zstd").write_bytes(zstd.compress(text))
    (tmp_path / "t.csv.lzma").write_bytes(lzma.compress(text, format=lzma.FORMAT_ALONE))
    with zipfile.ZipFile(tmp_path / "txt.zip", "w") as z:  # a table named .txt, read as a plain one is
        z.writestr("logs.txt", text)
    for name in ("t.csv.zst", "mac.zip", "t.csv.zstd", "t.csv.lzma", "txt.zip"):
        result = imported("canonical", tmp_path / name, tmp_path / name.replace(".", "_"))
        assert result.exit_code == 0 and (tmp_path / name.replace(".", "_") / "logs.csv.gz").read_bytes() == want, name
    frame.to_parquet(tmp_path / "p.parquet")
    (tmp_path / "p.parquet.gz").write_bytes(gzip.compress((tmp_path / "p.parquet").read_bytes()))
    refused(imported("canonical", tmp_path / "p.parquet.gz", tmp_path / "pgz"),
            "p.parquet.gz: a compressed parquet file; give the parquet file itself")
    with zipfile.ZipFile(tmp_path / "enc.zip", "w") as z:  # marked encrypted: Python's message showed its object
        z.writestr("logs.csv", text)
    raw = bytearray((tmp_path / "enc.zip").read_bytes())
    for header, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = raw.index(header)
        raw[at + flags_at] |= 1
    (tmp_path / "enc.zip").write_bytes(bytes(raw))
    assert refused(imported("canonical", tmp_path / "enc.zip", tmp_path / "enc"), "enc.zip: logs.csv: ").endswith(
        "unreadable (encrypted; cabench reads archives without a password)")
    with zipfile.ZipFile(tmp_path / "pq.zip", "w") as z:
        z.writestr("logs.parquet", b"PAR1")
    refused(imported("canonical", tmp_path / "pq.zip", tmp_path / "pq"),
            "pq.zip: logs.parquet: cabench reads a CSV or JSONL table from a zip archive; unpack it")
    with zipfile.ZipFile(tmp_path / "m9.zip", "w") as z:  # Deflate64, which Python does not read: a traceback
        z.writestr("logs.csv", text)
    raw = bytearray((tmp_path / "m9.zip").read_bytes())
    for header, method_at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        at = raw.index(header)
        raw[at + method_at:at + method_at + 2] = (9).to_bytes(2, "little")
    (tmp_path / "m9.zip").write_bytes(bytes(raw))
    refused(imported("canonical", tmp_path / "m9.zip", tmp_path / "m9"), "m9.zip: logs.csv: unreadable (")
    (tmp_path / "j.json.gz").write_bytes(gzip.compress(frame.to_json(orient="records").encode()))
    refused(imported("canonical", tmp_path / "j.json.gz", tmp_path / "j"), "j.json.gz: a .json file is not a log")
    with zipfile.ZipFile(tmp_path / "two.zip", "w") as z:
        z.writestr("a.csv", text)
        z.writestr("b.csv", text)
    refused(imported("canonical", tmp_path / "two.zip", tmp_path / "two"),
            "two.zip: a zip archive of 2 files; cabench reads one table from a zip")
    with tarfile.open(tmp_path / "t.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "t.csv", arcname="t.csv")
    refused(imported("canonical", tmp_path / "t.tar.gz", tmp_path / "tar"),
            "t.tar.gz: a .tar.gz file, which cabench does not unpack; give the log table as CSV or JSONL")
    monkeypatch.setattr(data_io, "MAX_UNPACKED_BYTES", 64 * 1024)
    many = tiny_logs(3, 3000).to_csv(index=False).encode()  # above the cap, within 100 times the zip's size
    with zipfile.ZipFile(tmp_path / "many.csv.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("logs.csv", many)
    assert len(many) > 64 * 1024 and 100 * (tmp_path / "many.csv.zip").stat().st_size > len(many)
    assert imported("canonical", tmp_path / "many.csv.zip", tmp_path / "many").exit_code == 0
    (tmp_path / "bomb.csv.xz").write_bytes(lzma.compress(text + b"0" * 20_000_000))
    refused(imported("canonical", tmp_path / "bomb.csv.xz", tmp_path / "bomb"),
            "bomb.csv.xz: unpacks to more than", "cabench's limit for this compressed file")
    with zipfile.ZipFile(tmp_path / "bomb.csv.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("logs.csv", text + b"0" * 20_000_000)
    refused(imported("canonical", tmp_path / "bomb.csv.zip", tmp_path / "bomb"),
            "bomb.csv.zip: logs.csv: unpacks to more")
    assert not any((tmp_path / d).exists() for d in ("two", "tar", "bomb", "pq", "m9", "j", "pgz", "enc"))
