"""What an import records and says: a mapping's notes sit beside the import's own record and never replace it; an
import is never of surrogate logs; every run, file or configuration an import leaves out is printed as well as
recorded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import yaml

from tests.conftest import tiny_logs
from tests.data.test_hostile_readers import imported, refused
from tests.data.test_import_options import ok, provenance
from tests.data.test_readers import write_bfcl
from tests.data.test_third_party import EEE, HELM


def _logs(tmp_path: Path) -> Path:
    path = tmp_path / "logs.csv"
    tiny_logs(n_configs=2, n_instances=6).to_csv(path, index=False)
    return path


def test_a_mappings_provenance_notes_sit_beside_the_imports_record(tmp_path):
    """``dataset: {provenance: {note: ...}}`` replaced the whole record: sources, options and what was dropped."""
    logs = _logs(tmp_path)
    mapping = tmp_path / "m.yaml"
    mapping.write_text("dataset: {provenance: {note: from my tracker, ticket: 42}}\n")
    ok(imported("canonical", logs, tmp_path / "ds", "--mapping", str(mapping)))
    record = provenance(tmp_path / "ds")
    assert record["note"] == "from my tracker" and record["ticket"] == 42
    assert record["format"] == "canonical" and record["rows"] == {"read": 12, "kept": 12, "dropped": 0}
    assert [Path(s["path"]).name for s in record["sources"]] == ["logs.csv"]


def test_a_note_may_not_take_a_key_the_import_records_nor_be_other_than_a_mapping(tmp_path):
    logs = _logs(tmp_path)
    mapping = tmp_path / "m.yaml"
    for part, words in [("{holes: 3}", "dataset.provenance.holes: the import records holes itself"),
                        ("{sources: []}", "dataset.provenance.sources: the import records sources itself"),
                        ("just a note", "dataset.provenance: expected a mapping of your notes")]:
        mapping.write_text(f"dataset: {{provenance: {part}}}\n")
        refused(imported("canonical", logs, tmp_path / "ds", "--mapping", str(mapping)), str(mapping), words)
        assert not (tmp_path / "ds").exists()


def test_an_import_is_never_of_surrogate_logs(tmp_path):
    """Reports call surrogate logs calibrated to the paper's statistics: a mapping saying so of real logs is
    refused."""
    logs = _logs(tmp_path)
    mapping = tmp_path / "m.yaml"
    mapping.write_text("dataset: {surrogate: true}\n")
    refused(imported("canonical", logs, tmp_path / "ds", "--mapping", str(mapping)), "dataset.surrogate",
            "real logs")
    mapping.write_text("dataset: {surrogate: false}\n")
    ok(imported("canonical", logs, tmp_path / "ds", "--mapping", str(mapping)))
    assert yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())["surrogate"] is False


def test_every_key_an_import_records_is_one_a_note_may_not_take(tmp_path):
    """The list the notes are checked against holds each key an import wrote, here with holes, a metric, reader
    facts and defaults."""
    from cabench.data.importer import RECORDED

    src = write_bfcl(tmp_path / "src")
    (src / "result" / "alpha-model" / "gorilla_openfunctions_v1_test_extra_result.json").write_text(
        (src / "result" / "alpha-model" / "gorilla_openfunctions_v1_test_simple_result.json").read_text())
    ok(imported("bfcl", src, tmp_path / "ds", "--set", "max_new_tokens=512"))
    assert set(provenance(tmp_path / "ds")) <= set(RECORDED)
    assert {"unscored_files", "metadata_defaults", "sources", "options"} <= set(provenance(tmp_path / "ds"))


SUITE = HELM / "runs" / "v1"
RUN = "mmlu-subject=abstract_algebra,method=multiple_choice_joint,model=groq_llama3-70b-8192"


def test_a_helm_run_without_its_spec_or_entries_is_printed_and_recorded(tmp_path):
    """A run folder without run_spec.json, or whose per_instance_stats.json is an empty list, vanished with its
    configuration: neither printed nor recorded."""
    for name, damage, why in [
        ("nospec", lambda run: (run / "run_spec.json").unlink(), "no run_spec.json"),
        ("empty", lambda run: (run / "per_instance_stats.json").write_text("[]"), "holds no entry"),
        ("unfinished", lambda run: (run / "per_instance_stats.json").unlink(), "no per_instance_stats.json"),
    ]:
        suite = tmp_path / name
        shutil.copytree(SUITE, suite)
        damage(suite / RUN)
        result = imported("helm", suite, tmp_path / f"{name}-ds")
        ok(result)
        assert f"skipped run {RUN}: " in result.stdout and why in result.stdout, result.stdout
        assert why in provenance(tmp_path / f"{name}-ds")["skipped_runs"][RUN]
        assert "kept 2 configurations" in result.stdout


def test_an_eee_samples_file_without_a_sample_is_printed_and_recorded(tmp_path):
    src = tmp_path / "eee"
    shutil.copytree(EEE / "helm", src)
    victim = sorted(src.rglob("*_samples.jsonl"))[0]
    victim.write_text(" \n")
    result = imported("every-eval-ever", src, tmp_path / "ds", "--metric", "exact_match:test")
    ok(result)
    assert f"skipped {victim}: it holds no sample" in result.stdout
    assert provenance(tmp_path / "ds")["empty_files"] == [str(victim)]


def test_bfcl_result_files_without_a_score_file_are_said(tmp_path):
    src = write_bfcl(tmp_path / "src")
    extra = src / "result" / "beta-model-FC" / "gorilla_openfunctions_v1_test_multiple_result.json"
    extra.write_text(json.dumps({"id": "multiple_0", "latency": 1.0, "input_token_count": 5,
                                 "output_token_count": 5}) + "\n")
    result = imported("bfcl", src, tmp_path / "ds", "--set", "max_new_tokens=512")
    ok(result)
    assert ("left out: 1 result file without a score file, e.g. "
            "result/beta-model-FC/gorilla_openfunctions_v1_test_multiple_result.json") in result.stdout


def _jsonl(tmp_path: Path, name: str = "logs.jsonl") -> Path:
    path = tmp_path / name
    tiny_logs(n_configs=2, n_instances=6).to_json(path, orient="records", lines=True)
    return path


def test_nan_or_infinity_in_json_lines_is_refused_naming_the_line(tmp_path):
    """pandas reads a bare NaN as a missing value: with --missing drop-instances the instance was dropped as
    unmeasured, where the same cell in a CSV is refused."""
    path = _jsonl(tmp_path)
    lines = path.read_text().splitlines()
    assert '"latency_s":' in lines[2]
    for constant in ("NaN", "Infinity", "-Infinity"):
        damaged = list(lines)
        damaged[2] = json.dumps({**json.loads(lines[2]), "latency_s": 0.0}).replace("0.0", constant)
        path.write_text("\n".join(damaged) + "\n")
        refused(imported("canonical", path, tmp_path / "ds", "--missing", "drop-instances"), str(path),
                f"line 3: {constant} is not a JSON number")
        assert not (tmp_path / "ds").exists()
    damaged = list(lines)
    damaged[2] = json.dumps({**json.loads(lines[2]), "model": "NaN Infinity"})  # text is text
    path.write_text("\n".join(damaged) + "\n")
    assert "varies within config_id" in refused(imported("canonical", path, tmp_path / "ds"))


def test_a_key_given_twice_or_a_number_out_of_range_in_json_lines_is_refused_naming_the_line(tmp_path):
    """A line giving "correct" twice was imported with its last value without a word (a CSV header naming a column
    twice, or a YAML key given twice, is refused); 1e999 was refused with pandas' byte position, not the line."""
    path = _jsonl(tmp_path)
    lines = path.read_text().splitlines()
    item = json.loads(lines[2])
    for text, said in ((lines[2][:-1] + f', "correct": {1 - item["correct"]}}}',
                        "line 3: key 'correct' is given twice in one object (its values would be read as the last)"),
                       (lines[2][:-1] + ', "meta": {"a": 1, "a": 1}}', "line 3: key 'a' is given twice in one object"),
                       (json.dumps({**item, "latency_s": 0.5}).replace("0.5", "1e999"),
                        "line 3: the number 1e999 is beyond a double's range"),
                       (json.dumps({**item, "tokens": 7}).replace("7", "1" + "0" * 30),
                        f"line 3: the number 1{'0' * 30} is beyond 64 bits")):
        path.write_text("\n".join([*lines[:2], text, *lines[3:]]) + "\n")
        refused(imported("canonical", path, tmp_path / "ds"), str(path), said)
        assert not (tmp_path / "ds").exists()
    path.write_text("\n".join([*lines[:2], json.dumps({**item, "meta": {"a": {"b": 1}, "b": {"a": 2}}}),
                               *lines[3:]]) + "\n")  # the same key in two objects is no repeat
    assert imported("canonical", path, tmp_path / "ds").exit_code == 0


def test_json_lines_with_a_byte_order_mark_read_as_without(tmp_path):
    plain = _jsonl(tmp_path)
    marked = tmp_path / "marked.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    ok(imported("canonical", plain, tmp_path / "a"))
    ok(imported("canonical", marked, tmp_path / "b"))
    assert (tmp_path / "a" / "logs.csv.gz").read_bytes() == (tmp_path / "b" / "logs.csv.gz").read_bytes()


def test_impossible_sampling_settings_are_refused_naming_rows(tmp_path):
    """A negative temperature or generation limit became a configuration named ``..._t-1.0_g-256_...``; -1 is the
    limit of a configuration without one (Ollama's and llama.cpp's ``num_predict``), 0 that of a call scored on its
    prompt's log-probabilities (HELM's ``multiple_choice_separate_*`` runs write ``max_tokens: 0``)."""
    frame = tiny_logs(n_configs=2, n_instances=6)
    path = tmp_path / "logs.csv"
    for column, value, words in [("temperature", -1.0, "column 'temperature' is negative at rows 1, 2, 3"),
                                 ("max_new_tokens", -256, "column 'max_new_tokens' is negative at rows 1, 2, 3"),
                                 ("max_new_tokens", -2, "a generation limit is a token count (-1: none)")]:
        bad = frame.copy()
        bad.loc[bad["config_id"] == "cfg0", column] = value
        bad.to_csv(path, index=False)
        refused(imported("canonical", path, tmp_path / "ds"), str(path), words)
    unlimited = frame.copy()
    unlimited.loc[unlimited["config_id"] == "cfg0", "max_new_tokens"] = -1
    unlimited.loc[unlimited["config_id"] == "cfg1", "max_new_tokens"] = 0  # scored on log-probabilities (HELM)
    unlimited.to_csv(path, index=False)
    ok(imported("canonical", path, tmp_path / "ds"))
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    assert set(logs["max_new_tokens"]) == {-1, 0}
    no_temperature = tmp_path / "nt.csv"
    frame.drop(columns="temperature").to_csv(no_temperature, index=False)
    refused(imported("canonical", no_temperature, tmp_path / "ds2", "--set", "temperature=-0.5"), "negative")


def test_set_reads_numbers_as_a_logs_cell_does_and_once(tmp_path):
    """YAML read --set temperature=0x10 as 16 and 1_0 as 10, which a CSV cell refuses; a second --set of a key
    silently won."""
    path = tmp_path / "nt.csv"
    tiny_logs(n_configs=2, n_instances=6).drop(columns="temperature").to_csv(path, index=False)
    for value in ("0x10", "1_0", "0o7", ".inf"):
        refused(imported("canonical", path, tmp_path / "ds", "--set", f"temperature={value}"),
                f"--set temperature={value}: expected a decimal number")
    refused(imported("canonical", path, tmp_path / "ds", "--set", "temperature=0", "--set", "temperature=1"),
            "'temperature' is given twice")
    for value, read in (("0.7", 0.7), (".5", 0.5), ("1e-1", 0.1), ("+2", 2.0)):
        ok(imported("canonical", path, tmp_path / value, "--set", f"temperature={value}"))
        assert set(pd.read_csv(tmp_path / value / "logs.csv.gz")["temperature"]) == {read}


def test_set_on_a_column_the_logs_fill_says_it_changed_nothing(tmp_path):
    """``--set correct=1`` on logs that give correct on every row ran on the logs' values without a word."""
    logs = tmp_path / "logs.csv"
    frame = tiny_logs(n_configs=2, n_instances=6).drop(columns="prompting")
    frame.loc[0, "temperature"] = None  # one empty cell for --set to fill
    frame.to_csv(logs, index=False)
    result = imported("canonical", logs, tmp_path / "ds", "--set", "correct=1", "--set", "prompting=cot",
                      "--set", "temperature=0.5")
    ok(result)
    assert ("warning: --set correct: the logs give correct on every row, so nothing was filled" in result.stdout)
    assert "--set prompting" not in result.stdout and "--set temperature" not in result.stdout  # given; filled
    assert provenance(tmp_path / "ds")["filled"] == {"correct": 0, "temperature": 1}
    assert set(pd.read_csv(tmp_path / "ds" / "logs.csv.gz")["correct"]) == {0, 1}


def test_a_column_summed_twice_is_refused(tmp_path):
    """``tokens: [pin, pin]`` doubled every token count without a word."""
    logs = _logs(tmp_path)
    mapping = tmp_path / "m.yaml"
    mapping.write_text("columns: {tokens: [tokens, tokens]}\n")
    refused(imported("canonical", logs, tmp_path / "ds", "--mapping", str(mapping)), str(mapping),
            "columns.tokens: lists 'tokens' twice")


def test_an_empty_log_says_so_whatever_its_format(tmp_path):
    """An empty JSON-lines file said "model: no such column" and an empty CSV "unreadable file (No columns to
    parse from file)"."""
    for name, content in (("e.jsonl", ""), ("e.csv", ""), ("blank.jsonl", "\n\n")):
        path = tmp_path / name
        path.write_text(content)
        said = "no rows" if content else "an empty file"
        refused(imported("canonical", path, tmp_path / "ds"), f"{path}: {said}; a log needs one row per")
