"""The BFCL reader on a small results folder written here in the leaderboard's layout."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.data.dataset import load_dataset

RUNNER = CliRunner()
# model -> category -> [(latency, input tokens, output tokens, correct)]
FIXTURE = {
    "alpha-model": {"simple": [(0.5, 100, 20, 1), (0.7, 110, 25, 0), (0.6, 90, 15, 1), (0.8, 120, 30, 1)],
                    "relevance": [(0.4, 80, 5, 1), (0.45, 85, 6, 0), (0.5, 70, 4, 1)]},
    "beta-model-FC": {"simple": [(1.5, 200, 40, 1), (1.2, 210, 45, 1), (1.1, 190, 35, 1), (1.4, 220, 50, 0)],
                      "relevance": [(0.9, 150, 10, 1), (1.0, 160, 12, 1), (0.95, 140, 9, 1)]},
    "gamma-model": {"simple": [(2.5, 0, 0, 1), (2.2, 0, 0, 1), (2.1, 0, 0, 0), (2.4, 0, 0, 1)],
                    "relevance": [(1.9, 0, 0, 1), (2.0, 0, 0, 0), (1.95, 0, 0, 1)]},
}


def write_bfcl(root: Path, old_layout: bool = False, suffix: str = "") -> Path:
    """A leaderboard date folder; the earliest ones name their folders result-BFCL/ and score-BFCL/."""
    for model, categories in FIXTURE.items():
        (root / f"result{suffix}" / model).mkdir(parents=True)
        (root / f"score{suffix}" / model).mkdir(parents=True)
        for category, rows in categories.items():
            lines = []
            for n, (latency, tokens_in, tokens_out, _) in enumerate(rows):
                key = {"idx": n} if old_layout else {"id": f"{category}_{n}"}
                lines.append(json.dumps({**key, "result": "f(x=1)", "input_token_count": tokens_in,
                                         "output_token_count": tokens_out, "latency": latency}))
            (root / f"result{suffix}" / model / f"gorilla_openfunctions_v1_test_{category}_result.json").write_text(
                "\n".join(lines) + "\n")
            correct = sum(r[3] for r in rows)
            score = [json.dumps({"accuracy": correct / len(rows), "correct_count": correct, "total_count": len(rows)})]
            score += [json.dumps({"id": n + 1, "model_name": model, "test_category": category, "valid": False})
                      for n, r in enumerate(rows) if not r[3]]
            (root / f"score{suffix}" / model / f"{category}_score.json").write_text("\n".join(score) + "\n")
    return root


def import_bfcl(src: Path, out: Path, *extra: str):
    return RUNNER.invoke(app, ["data", "import", str(src), "--format", "bfcl", "--out", str(out),
                               "--set", "max_new_tokens=512", *extra])


@pytest.mark.parametrize("old_layout, suffix", [(False, ""), (True, ""), (True, "-BFCL")],
                         ids=["id", "idx", "idx-BFCL-folders"])
def test_bfcl_import(tmp_path, old_layout, suffix):
    src = write_bfcl(tmp_path / "2024-08-11", old_layout, suffix)
    (src / f"result{suffix}" / "alpha-model" / "gorilla_openfunctions_v1_test_sql_result.json").write_text("{}\n")
    result = import_bfcl(src, tmp_path / "ds")
    assert result.exit_code == 0, result.stderr
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    assert sorted(logs["config_id"].unique()) == ["alpha-model", "beta-model-FC"]  # gamma has no token counts
    acc = logs.groupby("config_id")["correct"].mean()
    assert acc["alpha-model"] == pytest.approx(5 / 7) and acc["beta-model-FC"] == pytest.approx(6 / 7)
    row = logs[(logs["config_id"] == "beta-model-FC") & (logs["instance_id"] == "simple_3")].iloc[0]
    assert (row["latency_s"], row["tokens"], row["correct"], row["prompting"]) == (1.4, 270.0, 0, "fc")
    assert set(logs.loc[logs["config_id"] == "alpha-model", "prompting"]) == {"prompt"}
    assert set(logs["max_new_tokens"]) == {512} and set(logs["temperature"]) == {0.001}
    meta = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())
    prov = meta["provenance"]
    assert prov["format"] == "bfcl" and prov["rows"] == {"read": 14, "kept": 14, "dropped": 0}
    assert prov["dropped_configurations"] == {"gamma-model": "no latency or token count on any of its 7 entries"}
    assert prov["unscored_files"] == [f"result{suffix}/alpha-model/gorilla_openfunctions_v1_test_sql_result.json"]
    assert len(prov["sources"]) == 12 and meta["surrogate"] is False  # every file read, the dropped model's too


#: Where BFCL v4 writes each category's files, below result/<model>/ and score/<model>/ (memory's score one folder up).
V4_FOLDERS = {"simple": ("non_live", "non_live"), "relevance": ("agentic/memory/kv", "agentic/memory")}


def write_bfcl_v4(root: Path) -> Path:
    """The folders BFCL v4 writes: category subfolders, files named BFCL_v4_<category>_*.json, entries in another
    order than their ids, and failed entries named by their ids."""
    for model, categories in FIXTURE.items():
        for category, rows in categories.items():
            result, score = (root / "result" / model / V4_FOLDERS[category][0],
                             root / "score" / model / V4_FOLDERS[category][1])
            result.mkdir(parents=True, exist_ok=True)
            score.mkdir(parents=True, exist_ok=True)
            order = list(reversed(range(len(rows))))  # the files list entries as they finished
            (result / f"BFCL_v4_{category}_result.json").write_text("".join(
                json.dumps({"id": f"{category}_{n}", "result": [], "input_token_count": rows[n][1],
                            "output_token_count": rows[n][2], "latency": rows[n][0]}) + "\n" for n in order))
            correct = sum(r[3] for r in rows)
            lines = [{"accuracy": correct / len(rows), "correct_count": correct, "total_count": len(rows)}]
            lines += [{"id": f"{category}_{n}", "model_name": model, "valid": False} for n, r in enumerate(rows)
                      if not r[3]]
            (score / f"BFCL_v4_{category}_score.json").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return root


def test_bfcl_v4_folders_import_as_the_flat_ones(tmp_path):
    """BFCL v4 files each category in a subfolder (its score one folder up for some) and names failed entries by
    id: it was refused as "no result file has a score file". Now it imports to the rows of the same logs in the
    earlier layout, and an id no entry has is refused naming the file and line."""
    assert import_bfcl(write_bfcl(tmp_path / "flat"), tmp_path / "flat-ds").exit_code == 0
    done = import_bfcl(write_bfcl_v4(tmp_path / "v4"), tmp_path / "v4-ds")
    assert done.exit_code == 0, done.stderr
    columns = ["config_id", "instance_id", "correct", "latency_s", "tokens", "prompting"]
    flat, v4 = (pd.read_csv(tmp_path / d / "logs.csv.gz")[columns].sort_values(["config_id", "instance_id"])
                .reset_index(drop=True) for d in ("flat-ds", "v4-ds"))
    pd.testing.assert_frame_equal(flat, v4)
    assert v4.groupby("config_id")["correct"].sum().to_dict() == {"alpha-model": 5, "beta-model-FC": 6}
    score = tmp_path / "v4" / "score" / "alpha-model" / "non_live" / "BFCL_v4_simple_score.json"
    score.write_text(score.read_text().replace('"id": "simple_1"', '"id": "simple_9"'))
    refused = import_bfcl(tmp_path / "v4", tmp_path / "v4-bad")
    assert refused.exit_code == 2 and refused.stderr == (
        f"error: {score}: line 2: 'id' is 'simple_9', neither a position in nor the id of an entry of "
        "BFCL_v4_simple_result.json; a damaged or mismatched score file\n")


def test_bfcl_v4_multi_turn_counts_are_summed_over_turns_and_steps(tmp_path):
    """BFCL v4's multi-turn categories record latency and token counts per turn and step, as lists of lists: the
    whole import was refused ("'latency' is a list, not a number"). An entry's cost is their sum."""
    src = write_bfcl_v4(tmp_path / "v4")
    folder = src / "result" / "alpha-model" / "non_live"
    path = folder / "BFCL_v4_simple_result.json"
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    for entry in entries:  # each turn's steps: the same totals, split
        entry.update(latency=[[entry["latency"] / 2], [entry["latency"] / 4, entry["latency"] / 4]],
                     input_token_count=[[entry["input_token_count"]], []],
                     output_token_count=[[1, entry["output_token_count"] - 1]])
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    assert import_bfcl(write_bfcl_v4(tmp_path / "flat"), tmp_path / "flat-ds").exit_code == 0
    done = import_bfcl(src, tmp_path / "ds")
    assert done.exit_code == 0, done.output
    columns = ["config_id", "instance_id", "correct", "latency_s", "tokens"]
    flat, nested = (pd.read_csv(tmp_path / d / "logs.csv.gz")[columns].sort_values(columns[:2]).reset_index(drop=True)
                    for d in ("flat-ds", "ds"))
    pd.testing.assert_frame_equal(flat, nested)
    entries[0]["latency"] = [[0.5], ["slow"]]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    refused = import_bfcl(src, tmp_path / "bad")
    assert refused.exit_code == 2 and "'latency' is 'slow', not a number" in refused.stderr, refused.output


def test_bfcl_result_files_scored_but_empty_are_one_line(tmp_path):
    """Scored result files that hold no entry ended in a StopIteration traceback (exit 1)."""
    src = write_bfcl_v4(tmp_path / "v4")
    for path in (src / "result").rglob("*_result.json"):
        path.write_text("")
    for path in (src / "score").rglob("*_score.json"):
        path.write_text(json.dumps({"accuracy": 0, "correct_count": 0, "total_count": 0}) + "\n")
    refused = import_bfcl(src, tmp_path / "ds")
    assert refused.exit_code == 2 and refused.stderr.startswith(
        f"error: {src}: its scored result files hold no entry (e.g. {src}/result/"), refused.output
    assert refused.stderr.count("\n") == 1


def test_bfcl_dataset_described_number_by_number(tmp_path):
    write_bfcl(tmp_path / "src")
    assert import_bfcl(tmp_path / "src", tmp_path / "ds").exit_code == 0
    meta = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())
    (tmp_path / "ds" / "dataset.yaml").write_text(yaml.safe_dump({**meta, "split": {"profiling_size": 3, "seed": 0}}))
    out = json.loads(RUNNER.invoke(app, ["data", "describe", str(tmp_path / "ds"), "--json"]).stdout)
    assert out["K"] == 2 and out["surrogate"] is False
    assert out["accuracy_min"] == pytest.approx(5 / 7) and out["accuracy_max"] == pytest.approx(6 / 7)
    assert out["latency_min"] == pytest.approx((0.5 + 0.7 + 0.6 + 0.8 + 0.4 + 0.45 + 0.5) / 7)
    assert out["tokens_max"] == pytest.approx((240 + 255 + 225 + 270 + 160 + 172 + 149) / 7)
    ds = load_dataset(tmp_path / "ds")
    assert ds.n_arms == 2 and len(ds.profiling_ids) == 3 and len(ds.evaluation_ids) == 4


BROKEN = [
    ("truncated JSON", lambda r: _cut(r / "result/alpha-model/gorilla_openfunctions_v1_test_simple_result.json"),
     "line 4: not JSON"),
    ("missing id", lambda r: _edit(r / "result/alpha-model/gorilla_openfunctions_v1_test_simple_result.json",
                                   '"id": "simple_1", ', ""), "neither 'id' nor an integer 'idx'"),
    ("latency of the wrong type", lambda r: _edit(
        r / "result/beta-model-FC/gorilla_openfunctions_v1_test_relevance_result.json", '"latency": 0.9',
        '"latency": "fast"'), "'latency' is 'fast', not a number"),
    ("negative latency", lambda r: _edit(  # a damaged log, as every other reader says; it dropped the model
        r / "result/beta-model-FC/gorilla_openfunctions_v1_test_relevance_result.json", '"latency": 0.9',
        '"latency": -1'), "'latency' is -1, a negative time; a damaged log"),
    ("summary that disagrees", lambda r: _edit(r / "score/alpha-model/simple_score.json", '"correct_count": 3',
                                               '"correct_count": 4'), "does not match"),
    ("failed entry without a position", lambda r: _edit(r / "score/alpha-model/simple_score.json", '"id": 2,',
                                                        '"id": "two",'),
     "'id' is 'two', neither a position in nor the id"),
    ("not a results folder", lambda r: _rename(r / "score"), "not a BFCL results folder"),
]


def _cut(path: Path) -> None:
    path.write_text(path.read_text()[:-25])


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def _rename(path: Path) -> None:
    path.rename(path.with_name("scores"))


@pytest.mark.parametrize("label, damage, words", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_bfcl_files_are_one_line(tmp_path, label, damage, words):
    src = write_bfcl(tmp_path / "src")
    damage(src)
    result = import_bfcl(src, tmp_path / "ds")
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and words in lines[0], result.stderr
    assert not (tmp_path / "ds").exists()


def test_holes_error_or_drop(tmp_path):
    src = write_bfcl(tmp_path / "src")
    path = src / "result/beta-model-FC/gorilla_openfunctions_v1_test_simple_result.json"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:2]) + "\n")  # two instances never evaluated by this model
    (src / "score/beta-model-FC/simple_score.json").write_text(
        json.dumps({"accuracy": 1.0, "correct_count": 2, "total_count": 2}) + "\n")
    result = import_bfcl(src, tmp_path / "ds")
    assert result.exit_code == 2 and "2 (configuration, instance) cells are missing in 1 of 2" in result.stderr
    assert import_bfcl(src, tmp_path / "ds", "--missing", "drop-instances").exit_code == 0
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    assert len(logs) == 2 * 5 and set(logs["instance_id"]) == {"simple_0", "simple_1", "relevance_0", "relevance_1",
                                                               "relevance_2"}
    prov = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())["provenance"]
    assert prov["holes"] == {"policy": "drop-instances", "instances_dropped": 2, "instances_kept": 5}
    result = import_bfcl(src, tmp_path / "ds2", "--missing", "drop-configs")
    assert result.exit_code == 2 and "keeps 1 configuration" in result.stderr


def test_bfcl_v3_score_files_named_as_their_results_and_an_entry_missing_a_token_count(tmp_path):
    """The leaderboard's later folders name the score file as the result file (score/<model>/BFCL_v3_simple_score
    .json): every result file was taken for unscored, and the import blamed latency and tokens. A line missing one
    of its two token counts was charged the other alone; it is unmeasured now (its model left out, and said). The
    temperature and token limit the reader assumes are printed."""
    src = write_bfcl(tmp_path / "2024-12-29")
    for folder in ("result", "score"):
        for path in sorted((src / folder).rglob("*.json")):
            if folder == "result":
                path.rename(path.with_name(path.name.replace("gorilla_openfunctions_v1_test_", "BFCL_v3_")))
            else:
                path.rename(path.with_name(f"BFCL_v3_{path.name}"))
    result = RUNNER.invoke(app, ["data", "import", str(src), "--format", "bfcl", "--out", str(tmp_path / "ds")])
    assert result.exit_code == 0, result.output
    assert "assumed (the logs do not say; --set to give them): temperature=0.001, max_new_tokens=1000" in result.stdout
    logs = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    assert sorted(logs["config_id"].unique()) == ["alpha-model", "beta-model-FC"] and len(logs) == 14
    for folder in (src / "score").iterdir():  # an earlier layout's score file beside: the one named after it wins
        (folder / "simple_score.json").write_text(json.dumps({"correct_count": 4, "total_count": 4}) + "\n")
    both = RUNNER.invoke(app, ["data", "import", str(src), "--format", "bfcl", "--out", str(tmp_path / "both")])
    assert both.exit_code == 0, both.output
    assert (tmp_path / "both" / "logs.csv.gz").read_bytes() == (tmp_path / "ds" / "logs.csv.gz").read_bytes()
    for folder in (src / "score").iterdir():
        (folder / "simple_score.json").unlink()
    result_file = src / "result" / "beta-model-FC" / "BFCL_v3_simple_result.json"
    lines = [json.loads(line) for line in result_file.read_text().splitlines()]
    del lines[1]["input_token_count"]
    result_file.write_text("\n".join(map(json.dumps, lines)) + "\n")
    # one entry without its counts (a call that timed out) dropped the whole model, at exit 0: it is a hole now
    result = import_bfcl(src, tmp_path / "partial")
    assert result.exit_code == 2 and "1 row dropped" in result.stdout and (
        "1 (configuration, instance) cells are missing in 1 of 2 configurations (the first: configuration "
        "'beta-model-FC' on instance 'simple_1')") in result.stderr, result.output
    result = import_bfcl(src, tmp_path / "partial", "--missing", "drop-instances")
    assert result.exit_code == 0, result.output
    logs = pd.read_csv(tmp_path / "partial" / "logs.csv.gz")
    assert sorted(logs["config_id"].unique()) == ["alpha-model", "beta-model-FC"] and len(logs) == 12
    for path in (src / "score").rglob("*.json"):
        path.unlink()
    result = import_bfcl(src, tmp_path / "unscored")
    assert result.exit_code == 2 and "no result file has a score file" in result.stderr
    assert "BFCL_v3_" in result.stderr and "latency" not in result.stderr


@pytest.mark.parametrize(("fmt", "name"), [
    (fmt, name) for fmt in ("inspect", "helm", "bfcl", "every-eval-ever", "promptfoo")
    for name in ("logs.csv", "logs.CSV.gz", "logs.parquet", "logs.jsonl", "logs.ndjson")
    if not (fmt in ("every-eval-ever", "promptfoo") and name.endswith((".jsonl", ".ndjson")))
    and not (fmt == "promptfoo" and "csv" in name.lower())
])  # (Every Eval Ever's own files are JSON lines; promptfoo names its own CSV and JSON lines outputs)
def test_a_log_table_given_a_tools_format_is_said_to_be_a_table(tmp_path, fmt, name):
    """A CSV log imported with `--format every-eval-ever` was "line 1: not JSON; a cut or damaged file", and with
    `--format inspect` "not a zip archive; a cut or damaged .eval log": the file is whole, only read as another
    format."""
    (tmp_path / name).write_bytes(b"model,correct\nm,1\n")
    result = CliRunner().invoke(app, ["data", "import", str(tmp_path / name), "--format", fmt, "--out",
                                      str(tmp_path / "ds")])
    kind = {"parquet": "parquet", "jsonl": "JSON lines", "ndjson": "JSON lines"}.get(name.rsplit(".", 1)[-1], "CSV")
    assert result.exit_code == 2 and result.stderr == (
        f"error: {tmp_path / name}: a {kind} table (by its name), not {fmt} results; a log table is read without "
        "--format (the canonical format; --mapping names other columns)\n")
    assert not (tmp_path / "ds").exists()
