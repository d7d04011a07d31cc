"""``cabench data import`` on logs whose columns are named differently."""

from __future__ import annotations

import codecs
import gzip
import json
import re

import pandas as pd
import pytest
import yaml

from cabench.data.dataset import load_dataset
from cabench.data.importer import import_logs
from cabench.errors import CabenchError
from tests.conftest import tiny_logs

MAPPING = {
    "columns": {"config_id": "cfg", "model": "llm", "instance_id": "qid", "correct": "is_right",
                "latency_s": "ms", "tokens": "n_tok", "temperature": "temp"},
    "constants": {"max_new_tokens": 256, "prompting": "cot"},
    "scale": {"latency_s": 0.001},
    "dataset": {"name": "mine", "description": "my logs", "licence": "MIT", "split": {"profiling_size": 5, "seed": 0}},
}


def _source(tmp_path, fmt="csv"):
    frame = tiny_logs().rename(columns={"config_id": "cfg", "model": "llm", "instance_id": "qid",
                                        "correct": "is_right", "tokens": "n_tok", "temperature": "temp"})
    frame["ms"] = frame.pop("latency_s") * 1000
    frame = frame.drop(columns=["max_new_tokens", "prompting"])
    path = tmp_path / f"mine.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_json(path, orient="records", lines=True)
    return path, frame


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_import_maps_and_validates(tmp_path, fmt):
    source, frame = _source(tmp_path, fmt)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump(MAPPING))
    out = import_logs(source, mapping, tmp_path / "mine")
    ds = load_dataset(out, split=None)
    assert ds.n_arms == 3 and ds.name == "mine" and not ds.surrogate
    assert set(ds.configs["prompting"]) == {"cot"} and set(ds.configs["max_new_tokens"]) == {256}
    lat = pd.concat([pd.Series(ds.latency_prof.ravel()), pd.Series(ds.latency_eval.ravel())])
    assert sorted(lat.round(6)) == sorted((frame["ms"] / 1000).round(6))


def test_import_names_a_missing_source_column(tmp_path):
    source, _ = _source(tmp_path)
    bad = {**MAPPING, "columns": {**MAPPING["columns"], "tokens": "n_tokens"}}
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump(bad))
    with pytest.raises(CabenchError, match="no column 'n_tokens' .*did you mean 'n_tok'"):
        import_logs(source, mapping, tmp_path / "mine")


def test_import_validates_like_the_loader(tmp_path):
    source, frame = _source(tmp_path)
    frame.loc[2, "ms"] = -5
    frame.to_csv(source, index=False)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump(MAPPING))
    with pytest.raises(CabenchError) as err:  # named as the file holds it: not 'latency_s' (-0.005)
        import_logs(source, mapping, tmp_path / "mine")
    assert f"column 'ms' (mapped to latency_s in {mapping}) is not a number >= 0 at row 3 (-5.0); " in str(err.value)
    assert not (tmp_path / "mine").exists()
    frame.loc[2, "ms"], frame.loc[3, "n_tok"] = 5, -1
    frame.to_csv(source, index=False)
    with pytest.raises(CabenchError, match="column 'n_tok' .mapped to tokens in .* is not a number >= 0 at row 4 .-1."):
        import_logs(source, mapping, tmp_path / "mine")
    frame.loc[3, "n_tok"] = 0  # not measured: dropped, as before
    frame.to_csv(source, index=False)
    import_logs(source, mapping, tmp_path / "mine", missing="drop-instances")


def test_import_rejects_unknown_canonical_column(tmp_path):
    source, _ = _source(tmp_path)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump({**MAPPING, "constants": {"prompt": "cot"}}))
    with pytest.raises(CabenchError, match="constants.prompt: not a canonical column; did you mean 'prompting'"):
        import_logs(source, mapping, tmp_path / "mine")


@pytest.mark.parametrize("name", ["model", "config_id", "instance_id", "prompting"])
def test_a_scale_on_a_name_or_an_id_is_refused_in_the_mapping(tmp_path, name):
    """scale.model made every model name empty, and the import blamed the data ("column 'model' is empty or NaN at
    rows 1, 2, 3 and 597 more"). Now the mapping's key is refused, before the logs are read."""
    source, _ = _source(tmp_path)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump({**MAPPING, "scale": {name: 2}}))
    with pytest.raises(CabenchError) as exc:
        import_logs(source, mapping, tmp_path / "mine")
    assert str(exc.value) == (f"{mapping}: scale.{name}: {name} is text (a name or an id), not a number; scale "
                              "applies to measurements and counts only")
    assert not (tmp_path / "mine").exists()


@pytest.mark.parametrize("factor, shown", [(float("inf"), "inf"), (0, "0"), (-0.001, "-0.001"),
                                           (10**400, "1" + "0" * 39)])  # an int no float holds: was a traceback
def test_a_scale_that_is_not_a_positive_finite_number_is_refused_in_the_mapping(tmp_path, factor, shown):
    """scale.latency_s: .inf was blamed on the data ("column 'latency_s' is not a finite number at rows 1, 2, 3 and
    597 more"), where 0 and a negative factor named the mapping's key."""
    source, _ = _source(tmp_path)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump({**MAPPING, "scale": {"latency_s": factor}}))
    with pytest.raises(CabenchError) as exc:
        import_logs(source, mapping, tmp_path / "mine")
    assert str(exc.value) == f"{mapping}: scale.latency_s: expected a positive finite number, got {shown}"
    assert not (tmp_path / "mine").exists()


def test_canonical_logs_need_no_mapping_and_set_adds_constants(tmp_path):
    from typer.testing import CliRunner

    from cabench.cli import app

    frame = tiny_logs().drop(columns=["prompting", "max_new_tokens"])
    frame.to_csv(tmp_path / "canon.csv", index=False)
    result = CliRunner().invoke(app, ["data", "import", str(tmp_path / "canon.csv"), "--out", str(tmp_path / "c"),
                                      "--set", "prompting=cot", "--set", "max_new_tokens=512"])
    assert result.exit_code == 0, result.stderr
    meta = yaml.safe_load((tmp_path / "c" / "dataset.yaml").read_text())
    prov = meta["provenance"]
    assert meta["surrogate"] is False and prov["format"] == "canonical"
    assert prov["rows"] == {"read": 60, "kept": 60, "dropped": 0} and len(prov["sources"][0]["sha256"]) == 64
    assert prov["options"]["set"] == {"prompting": "cot", "max_new_tokens": 512} and prov["imported"].endswith("Z")
    logs = pd.read_csv(tmp_path / "c" / "logs.csv.gz")
    assert set(logs["prompting"]) == {"cot"} and set(logs["max_new_tokens"]) == {512}
    missing = CliRunner().invoke(app, ["data", "import", str(tmp_path / "canon.csv"), "--out", str(tmp_path / "d")])
    assert missing.exit_code == 2 and "no columns max_new_tokens, prompting;" in missing.stderr
    assert "--set max_new_tokens=... --set prompting=..." in missing.stderr
    bad = CliRunner().invoke(app, ["data", "import", str(tmp_path / "canon.csv"), "--out", str(tmp_path / "d"),
                                   "--set", "promting=cot"])
    assert bad.exit_code == 2 and "did you mean 'prompting'" in bad.stderr


@pytest.mark.parametrize("with_ids", [False, True], ids=["ids-built", "ids-given"])
def test_csv_jsonl_and_parquet_import_to_identical_bytes(tmp_path, with_ids):
    """One log written three ways imports to the same logs.csv.gz, configuration ids included."""
    pytest.importorskip("pyarrow")
    frame = tiny_logs(n_configs=3, n_instances=12)
    frame["temperature"] = frame["config_id"].map({"cfg0": 0.0, "cfg1": 1.0, "cfg2": 1.0})
    frame["instance_id"] = [("007", "NA", "12", "null")[q % 4] + f"-{q}" if q < 8 else f"{q}" for q in
                            range(12)] * 3  # ids that look like numbers or missing values stay text
    frame["latency_s"] = frame["latency_s"] + 0.1 + 0.2  # binary fractions survive every format exactly
    if not with_ids:
        frame = frame.drop(columns=["config_id"])
    # whole numbers as people and tools write them (1, not 1.0) in the text formats; parquet keeps floats
    frame.assign(temperature=frame["temperature"].astype(int)).to_csv(tmp_path / "logs.csv", index=False)
    records = frame.to_dict(orient="records")
    for r in records:
        r["temperature"] = int(r["temperature"])
    (tmp_path / "logs.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    frame.to_parquet(tmp_path / "logs.parquet", index=False)
    written = {}
    for name in ("logs.csv", "logs.jsonl", "logs.parquet"):
        out = import_logs(tmp_path / name, None, tmp_path / f"ds-{name.split('.')[1]}")
        written[name] = (out / "logs.csv.gz").read_bytes()
    assert written["logs.csv"] == written["logs.jsonl"] == written["logs.parquet"]
    logs = pd.read_csv(tmp_path / "ds-csv" / "logs.csv.gz", dtype={"instance_id": str})
    assert set(logs["instance_id"]) == set(frame["instance_id"])
    if not with_ids:
        assert sorted(logs["config_id"].unique()) == ["m0_t0.0_g128_direct", "m1_t1.0_g128_direct",
                                                      "m2_t1.0_g128_direct"]


def test_every_missing_metadata_column_is_named_at_once(tmp_path):
    """A log lacking temperature, max_new_tokens and prompting named one a run, three runs to learn them (and
    offered 'tokens', the cost column, for max_new_tokens)."""
    frame = tiny_logs(n_configs=2, n_instances=4).drop(columns=["temperature", "max_new_tokens", "prompting"])
    frame.assign(temprature=0.5).to_csv(tmp_path / "logs.csv", index=False)
    with pytest.raises(CabenchError) as info:
        import_logs(tmp_path / "logs.csv", None, tmp_path / "ds")
    assert str(info.value) == (
        f"{tmp_path / 'logs.csv'}: no columns temperature (did you mean 'temprature'?), max_new_tokens, prompting; "
        "map source columns to them (--mapping) or give constants (--set temperature=... --set max_new_tokens=... "
        "--set prompting=...)")
    assert not (tmp_path / "ds").exists()
    # correct lacking too: a score the same on every row measures nothing, so no --set is offered for it
    frame.drop(columns=["correct"]).assign(score=1).to_csv(tmp_path / "logs.csv", index=False)
    with pytest.raises(CabenchError) as info:
        import_logs(tmp_path / "logs.csv", None, tmp_path / "ds")
    assert str(info.value).endswith(
        "map source columns to them (--mapping) (correct, the score, from a column) or give constants (--set "
        "temperature=... --set max_new_tokens=... --set prompting=...)"), str(info.value)


def test_a_missing_column_is_pointed_to_the_column_meant_and_the_cost_named_with_the_others(tmp_path):
    """Logs as a spreadsheet writes them: 'prompting' was pointed to 'prompt_tokens' (a count the import reads
    already), 'max_new_tokens' to 'total_tokens', 'question_id' was not offered for instance_id, a missing cost
    column was named only once the others were mapped, and an ignored 'latency' was offered to extra_columns."""
    frame = tiny_logs(n_configs=2, n_instances=4).drop(columns=["prompting", "instance_id", "max_new_tokens"])
    frame = frame.rename(columns={"latency_s": "latency", "tokens": "completion_tokens"})
    frame = frame.assign(question_id=frame.index % 4, prompt_tokens=7)

    def refused(logs: pd.DataFrame, name: str) -> str:  # the import's one line, the logs written as `name`
        logs.to_csv(tmp_path / name, index=False)
        with pytest.raises(CabenchError) as info:
            import_logs(tmp_path / name, None, tmp_path / "ds")
        return str(info.value).removeprefix(f"{tmp_path / name}: ")

    assert refused(frame, "logs.csv") == (
        "no columns max_new_tokens, prompting, instance_id (did you mean 'question_id'?); map source columns to them "
        "(--mapping) (instance_id from a column) or give constants (--set max_new_tokens=... --set prompting=...)")
    costless = frame.drop(columns=["completion_tokens"]).assign(total_tokens=9, max_tokens=64, prompting="cot")
    assert refused(costless, "costless.csv") == (  # every missing column at once, the cost one with its likely source
        "no columns max_new_tokens (did you mean 'max_tokens'?), instance_id (did you mean 'question_id'?), tokens "
        "(did you mean 'total_tokens'?); map source columns to them (--mapping) (instance_id from a column) or give "
        "a constant (--set max_new_tokens=...)")
    bare = costless.drop(columns=["total_tokens", "prompt_tokens"]).rename(columns={"question_id": "instance_id"})
    assert refused(bare, "bare.csv") == (
        "no column max_new_tokens (did you mean 'max_tokens'?) and no cost column (tokens, completion_tokens or "
        "cost_usd); map source columns to them (--mapping) or give a constant (--set max_new_tokens=...)")
    with pytest.raises(CabenchError) as info:  # one instance id for every row: refused, pointed to the column meant
        import_logs(tmp_path / "costless.csv", None, tmp_path / "ds", settings={"instance_id": "all"})
    assert str(info.value) == ("--set instance_id: one instance_id on every row makes the logs one instance, "
                               "evaluated again and again; map the logs' column of instance ids to instance_id "
                               "(--mapping); did you mean 'question_id'?")
    (tmp_path / "ids.yaml").write_text("columns: {instance_id: question_id}\n")
    with pytest.raises(CabenchError) as info:
        import_logs(tmp_path / "costless.csv", tmp_path / "ids.yaml", tmp_path / "ds", settings={"max_new_tokens": 64})
    assert str(info.value) == (f"{tmp_path / 'costless.csv'} (mapped by {tmp_path / 'ids.yaml'}): no cost column; "
                               "map a source column to tokens (--mapping); did you mean 'total_tokens'?")  # (the logs
    # lack it, whatever the mapping says)
    assert not (tmp_path / "ds").exists()
    (tmp_path / "map.yaml").write_text("columns: {instance_id: max_tokens}\n")  # a column read is not offered
    with pytest.raises(CabenchError, match=r"no columns max_new_tokens, tokens \(did you mean 'total_tokens'\?\);"):
        import_logs(tmp_path / "costless.csv", tmp_path / "map.yaml", tmp_path / "ds")
    (tmp_path / "map.yaml").write_text("columns: {instance_id: question_id}\n")
    lines: list[str] = []
    import_logs(tmp_path / "logs.csv", tmp_path / "map.yaml", tmp_path / "ds", echo=lines.append,
                settings={"max_new_tokens": 64, "prompting": "cot"})
    said = "\n".join(lines) + "\n"
    assert "ignored source columns: latency\n" in said
    assert ("warning: latency_s: not read, though the logs have 'latency', a common name for it: map it (--mapping, "
            "columns: {latency_s: 'latency'}; scale: {latency_s: 0.001} if it is in milliseconds)") in said


def test_unread_measurements_under_common_names_are_warned_of_with_the_mapping_that_reads_them(tmp_path):
    """A promptfoo-like export: 'latencyMs' was offered to extra_columns (then the import advised dropping the
    latency objective), a per-row 'passed' beside a running 'accuracy' read as the score was ignored unsaid, and a
    header holding a line break broke the one-line listing."""
    frame = tiny_logs(n_configs=2, n_instances=6).drop(columns=["latency_s"])
    frame = frame.assign(latencyMs=(frame.index + 1) * 250, passed=frame["correct"],
                         accuracy=(frame.index % 5 + 1) / 7, **{"Total\nTokens": 3})
    frame.drop(columns=["correct"]).to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text("columns: {correct: accuracy}\n")
    lines: list[str] = []
    import_logs(tmp_path / "logs.csv", tmp_path / "map.yaml", tmp_path / "ds", echo=lines.append)
    assert 'ignored source columns: latencyMs, passed, "Total\\nTokens" (keep "Total\\nTokens" with extra_columns ' \
        'in the mapping)' in lines
    assert ("warning: correct: read from 'accuracy', whose scores are not all 0 or 1, though the logs also have "
            "'passed' (0 or 1 on every row), a common name for it: map correct to it if that is the score (--mapping, "
            "columns: {correct: 'passed'})") in lines
    assert ("warning: latency_s: not read, though the logs have 'latencyMs' (milliseconds: scale 0.001), a common "
            "name for it: map it (--mapping, columns: {latency_s: 'latencyMs'}, scale: {latency_s: 0.001})") in lines
    (tmp_path / "map.yaml").write_text("columns: {correct: passed, latency_s: latencyMs}\nscale: {latency_s: 0.001}\n")
    lines.clear()
    import_logs(tmp_path / "logs.csv", tmp_path / "map.yaml", tmp_path / "ds2", echo=lines.append)
    assert not any(line.startswith("warning") for line in lines), lines  # the mapping the warnings gave
    assert pd.read_csv(tmp_path / "ds2" / "logs.csv.gz")["latency_s"].max() == pytest.approx(3.0)


def test_unusual_cells_and_constants_reached_by_hints_are_one_line_errors(tmp_path):
    """Three tracebacks: a JSON array in an instance-id column, a nullable parquet column with a missing value read
    under another name, and two empty instance ids of one configuration (duplicates of NaN); and one instance id
    for every row got through, filled by --set or read from a mapped column, with --repeats epochs."""
    pytest.importorskip("pyarrow")
    frame = tiny_logs(n_configs=2, n_instances=4)
    lines = [json.dumps({**r, "question_id": [r["instance_id"]]}) for r in
             frame.drop(columns=["instance_id"]).assign(instance_id=frame["instance_id"]).to_dict(orient="records")]
    (tmp_path / "lists.jsonl").write_text("\n".join(line.replace('"instance_id"', '"iid"') for line in lines) + "\n")
    with pytest.raises(CabenchError, match=r"lists.jsonl: instance_id: no such column; map a source column to it "
                                           r"\(--mapping\)$"):
        import_logs(tmp_path / "lists.jsonl", None, tmp_path / "ds")
    nullable = frame.rename(columns={"latency_s": "latency"}).astype({"latency": "Float64"})
    nullable.loc[3, "latency"] = None
    nullable.to_parquet(tmp_path / "nullable.parquet", index=False)
    (tmp_path / "lat.yaml").write_text("columns: {latency_s: latency}\n")
    with pytest.raises(CabenchError, match="cells are missing"):  # the unmeasured row dropped, not a traceback
        import_logs(tmp_path / "nullable.parquet", tmp_path / "lat.yaml", tmp_path / "ds")
    holes = frame.astype({"instance_id": object})
    holes.loc[[1, 2], "instance_id"] = None
    holes.to_csv(tmp_path / "holes.csv", index=False)
    with pytest.raises(CabenchError) as info:
        import_logs(tmp_path / "holes.csv", None, tmp_path / "ds")
    assert str(info.value).endswith("column 'instance_id' is empty or NaN at row 2 (1 more such row); fill in or "
                                    "remove those rows")
    frame.drop(columns=["config_id"]).assign(model=None).to_csv(tmp_path / "nomodel.csv", index=False)
    with pytest.raises(CabenchError, match=r"column 'model' is empty or NaN at row 1 \(7 more such rows\); "):  # not
        # config_id, which is built from it
        import_logs(tmp_path / "nomodel.csv", None, tmp_path / "ds")
    frame.assign(instance_id=None).to_csv(tmp_path / "noids.csv", index=False)
    with pytest.raises(CabenchError) as info:
        import_logs(tmp_path / "noids.csv", None, tmp_path / "ds", settings={"instance_id": "q"}, repeats="epochs")
    assert str(info.value) == (
        "--set instance_id (filling the logs' empty instance_id cells): one instance id ('q') on every row makes the "
        "logs one instance, evaluated again and again; map the logs' column of instance ids to instance_id (--mapping)")
    frame.assign(task="mmlu").to_csv(tmp_path / "task.csv", index=False)
    (tmp_path / "task.yaml").write_text("columns: {instance_id: task}\n")
    with pytest.raises(CabenchError, match=r"task.yaml: columns.instance_id \('task'\): one instance id \('mmlu'\)"):
        import_logs(tmp_path / "task.csv", tmp_path / "task.yaml", tmp_path / "ds", repeats="epochs")
    assert not (tmp_path / "ds").exists()


def test_an_aggregate_score_is_warned_of_and_logs_priced_in_dollars_are_declared_so(tmp_path):
    """A configuration's accuracy repeated on each of its rows, read as correct, imported without a word; logs whose
    only cost is cost_usd were declared `cost: tokens` (the paper's), which describe and run then refused."""
    frame = tiny_logs(n_configs=2, n_instances=6)
    frame["accuracy"] = frame["config_id"].map({"cfg0": 0.4, "cfg1": 0.7})
    frame = frame.drop(columns=["correct", "tokens"]).assign(cost_usd=(frame.index + 1) * 1e-4)
    frame.to_csv(tmp_path / "agg.csv", index=False)
    (tmp_path / "map.yaml").write_text("columns: {correct: accuracy}\n")
    lines: list[str] = []
    import_logs(tmp_path / "agg.csv", tmp_path / "map.yaml", tmp_path / "ds", echo=lines.append)
    assert ("warning: correct (read from 'accuracy'): one score on every row of each configuration (0.4 for 'cfg0'): "
            "a configuration's accuracy repeated, not each instance's score; map the per-instance score to correct "
            "(--mapping)") in lines
    assert ("cost: usd, declared in dataset.yaml (the logs have cost_usd and no tokens column, the paper's cost; a "
            "mapping's dataset: part declares another)") in lines
    assert yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())["cost"] == "usd"
    assert load_dataset(tmp_path / "ds").terms.cost == "usd"  # loads as declared
    assert not any("describe and run will refuse" in line for line in lines)


def test_a_value_refused_is_named_by_the_column_the_logs_give_it_in(tmp_path):
    """A count of right answers mapped to correct was refused as "column 'correct' is outside [0, 1]", a column the
    logs do not have."""
    frame = tiny_logs(n_configs=2, n_instances=4).rename(columns={"correct": "num_correct"})
    frame.loc[2, "num_correct"] = 3
    frame.to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text("columns: {correct: num_correct}\n")
    with pytest.raises(CabenchError) as info:
        import_logs(tmp_path / "logs.csv", tmp_path / "map.yaml", tmp_path / "ds")
    assert str(info.value) == (
        f"{tmp_path / 'logs.csv'} (mapped by {tmp_path / 'map.yaml'}): column 'num_correct' (mapped to correct) is "
        "outside [0, 1] at row 3; correctness is 0/1 or a score in [0, 1]")


def test_json_lines_are_pointed_to_the_fields_of_their_objects(tmp_path):
    """Nested JSON lines got no hint at all ("no columns instance_id, correct and no cost column"), and an unread
    timing object holding the latency said nothing."""
    frame = tiny_logs(n_configs=2, n_instances=4)
    lines = [json.dumps({"model": r["model"], "temperature": r["temperature"], "max_new_tokens": r["max_new_tokens"],
                         "prompting": r["prompting"], "doc": {"id": r["instance_id"]}, "metrics": {"acc": r["correct"]},
                         "usage": {"total_tokens": r["tokens"]}, "timing": {"latency": r["latency_s"]}})
             for r in frame.to_dict(orient="records")]
    (tmp_path / "logs.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(CabenchError) as info:
        import_logs(tmp_path / "logs.jsonl", None, tmp_path / "ds")
    assert str(info.value) == (
        f"{tmp_path / 'logs.jsonl'}: no columns instance_id (did you mean 'doc.id'?), correct (did you mean "
        "'metrics.acc'?), tokens (did you mean 'usage.total_tokens'?); map source columns to them (--mapping)")
    (tmp_path / "map.yaml").write_text("columns: {instance_id: doc.id, correct: metrics.acc, "
                                       "tokens: usage.total_tokens}\n")
    said: list[str] = []
    import_logs(tmp_path / "logs.jsonl", tmp_path / "map.yaml", tmp_path / "ds", echo=said.append)
    assert ("warning: latency_s: not read, though the logs have 'timing.latency', a common name for it: map it "
            "(--mapping, columns: {latency_s: 'timing.latency'}; scale: {latency_s: 0.001} if it is in milliseconds)"
            ) in said


def test_the_logs_own_columns_of_one_instance_or_an_accuracy_repeated_are_said(tmp_path):
    """The logs' own instance_id of one value (a task's name), with --repeats epochs, wrote a dataset of one
    question; --set instance_id that filled nothing was blamed for it; the logs' own correct holding each
    configuration's accuracy imported without a word; logs counting completion tokens only were declared the
    paper's cost, tokens; text scores with spaces (' true') were hinted though the import does not read them."""
    frame = tiny_logs(n_configs=2, n_instances=4)
    frame.assign(question_id=frame["instance_id"], instance_id="mmlu").to_csv(tmp_path / "task.csv", index=False)
    for settings in ({}, {"instance_id": "q"}):
        with pytest.raises(CabenchError) as info:
            import_logs(tmp_path / "task.csv", None, tmp_path / "ds", settings=settings, repeats="epochs")
        assert str(info.value) == (
            f"{tmp_path / 'task.csv'}: column 'instance_id': one instance id ('mmlu') on every row makes the logs one "
            "instance, evaluated again and again; map the logs' column of instance ids to instance_id (--mapping); "
            "did you mean 'question_id'?")
    aggregate = frame.assign(correct=frame["config_id"].map({"cfg0": 0.25, "cfg1": 0.5}),
                             completion_tokens=frame["tokens"]).drop(columns=["tokens"])
    aggregate.to_csv(tmp_path / "agg.csv", index=False)
    lines: list[str] = []
    import_logs(tmp_path / "agg.csv", None, tmp_path / "ds", echo=lines.append)
    assert any(line.startswith("warning: column 'correct': one score on every row of each configuration (0.25 for "
                               "'cfg0')") for line in lines), lines
    assert "cost: completion_tokens, declared in dataset.yaml (the logs have completion_tokens and no tokens column, " \
        "the paper's cost; a mapping's dataset: part declares another)" in lines
    frame.drop(columns=["correct"]).assign(passed=[" true", " false"] * 4).to_csv(tmp_path / "sp.csv", index=False)
    with pytest.raises(CabenchError, match=r"correct: no such column; map a source column to it \(--mapping\)$"):
        import_logs(tmp_path / "sp.csv", None, tmp_path / "ds2")  # not pointed to what the import cannot read


def test_ids_of_rows_mapped_as_instance_ids_are_said_to_be_so(tmp_path):
    """A row's uuid mapped to instance_id gave "cells are missing", then, with --missing, "logs of different tasks":
    no id is shared by two configurations."""
    frame = tiny_logs(n_configs=2, n_instances=4)
    frame.assign(uuid=[f"row-{i}" for i in range(len(frame))]).to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text("columns: {instance_id: uuid}\n")
    for missing in ("error", "drop-instances"):
        with pytest.raises(CabenchError) as info:
            import_logs(tmp_path / "logs.csv", tmp_path / "map.yaml", tmp_path / "ds", missing=missing)
        assert str(info.value).endswith(
            "no instance id appears under two configurations (8 ids for 2 configurations): the logs are of different "
            "tasks (import one task at a time), or instance_id holds ids of rows, not of instances (map it to the "
            "column naming each question or example, --mapping)")


def test_a_configuration_with_no_row_left_is_not_taken_for_row_ids(tmp_path):
    """A configuration whose every call went unmeasured shares no id with the others: that is no sign of row ids."""
    frame = tiny_logs(n_configs=2, n_instances=4).astype({"latency_s": object})
    frame.loc[frame["config_id"] == "cfg1", "latency_s"] = None
    frame.to_csv(tmp_path / "logs.csv", index=False)
    with pytest.raises(CabenchError) as info:
        import_logs(tmp_path / "logs.csv", None, tmp_path / "ds", missing="drop-configs")
    assert "ids of rows" not in str(info.value)


def test_repeated_pairs_that_an_unread_setting_tells_apart_name_it(tmp_path):
    """model read from a constant 'mode' column merged two models into one configuration: the duplicate-pair error
    offered --repeats epochs, not the unread column that tells the rows apart; a run's own id, different on every
    row, is no such setting."""
    frame = tiny_logs(n_configs=2, n_instances=4).drop(columns=["config_id"])
    frame = frame.assign(model_path=frame["model"].map({"m0": "/models/a", "m1": None}), mode="chat",
                         run_id=[f"r{i}" for i in range(len(frame))],  # a row's own id
                         prediction=["A", "B", "C", "D", "B", "C", "C", "D"])  # tells apart the first pair only
    frame.to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text("columns: {model: mode}\n")
    with pytest.raises(CabenchError) as info:
        import_logs(tmp_path / "logs.csv", tmp_path / "map.yaml", tmp_path / "ds")
    assert "once per instance: the rows differ in 'model', 'model_path', which the import does not read: a setting " \
        "of the configuration (map a configuration column to it, --mapping), or a run's, where the rows are repeated " \
        "runs; pass --repeats" in str(info.value)
    frame.assign(model="m0").to_csv(tmp_path / "runs.csv", index=False)  # the same configuration run twice
    with pytest.raises(CabenchError) as info:
        import_logs(tmp_path / "runs.csv", None, tmp_path / "ds", settings={})
    assert "differ in 'model_path'" in str(info.value) and "run_id" not in str(info.value)


def test_a_score_given_rather_than_read_is_said(tmp_path):
    """`--set correct=1` on logs without a score wrote a dataset where every configuration scores 1, without a
    word; `--set correct=1` on logs whose scores have holes filled them unsaid."""
    frame = tiny_logs(n_configs=2, n_instances=6)
    frame.drop(columns=["correct"]).to_csv(tmp_path / "unscored.csv", index=False)
    lines: list[str] = []
    import_logs(tmp_path / "unscored.csv", None, tmp_path / "a", settings={"correct": 1}, echo=lines.append)
    assert ("warning: --set correct: every row scores 1, so accuracy tells no configuration from another; map the "
            "logs' score column to correct (--mapping), or declare objectives without accuracy") in lines
    frame.loc[[1, 2, 7], "correct"] = None
    frame.to_csv(tmp_path / "holes.csv", index=False)
    lines.clear()
    import_logs(tmp_path / "holes.csv", None, tmp_path / "b", settings={"correct": 0}, echo=lines.append)
    assert "--set correct: gave 0 to the 3 rows recording no correct (without it they are unmeasured: --unmeasured)" \
        in lines and not any(line.startswith("warning: --set correct") for line in lines)
    assert pd.read_csv(tmp_path / "b" / "logs.csv.gz")["correct"].notna().all()
    lines.clear()  # a column with no score at all, filled: as if the logs had none
    frame.assign(correct=None).to_csv(tmp_path / "empty.csv", index=False)
    import_logs(tmp_path / "empty.csv", None, tmp_path / "e", settings={"correct": 1}, echo=lines.append)
    assert any(line.startswith("warning: --set correct: every row scores 1, so") for line in lines), lines
    lines.clear()
    frame.fillna({"correct": 1}).to_csv(tmp_path / "scored.csv", index=False)
    import_logs(tmp_path / "scored.csv", None, tmp_path / "g", settings={"correct": 1}, echo=lines.append)
    assert ("warning: --set correct: the logs give correct on every row, so nothing was filled (--set fills empty "
            "cells only; the logs' values are kept)") in lines  # --override is not offered to replace them
    lines.clear()
    frame.assign(correct=1).to_csv(tmp_path / "ones.csv", index=False)
    import_logs(tmp_path / "ones.csv", None, tmp_path / "h", settings={"correct": 1}, echo=lines.append)
    assert any("so nothing was filled" in line for line in lines)
    assert [line.split(":")[1] for line in lines if "every row scores" in line] == [" column 'correct'"]  # the
    # logs' own scores, not --set's
    lines.clear()
    import_logs(tmp_path / "holes.csv", None, tmp_path / "c", overrides={"correct": 1}, echo=lines.append)
    assert any(line.startswith("warning: --override correct: every row scores 1,") for line in lines)
    lines.clear()
    import_logs(tmp_path / "holes.csv", None, tmp_path / "d", echo=lines.append, missing="drop-instances")
    assert not any("--set correct" in line or "every row scores" in line for line in lines)  # the logs' own scores


def _mapped_import(tmp_path, frame: pd.DataFrame, columns: dict, name: str, **options) -> list[str]:
    """What importing ``frame`` with a mapping of ``columns`` (the rest read as they are) says."""
    frame.to_csv(tmp_path / f"{name}.csv", index=False)
    mapping = tmp_path / f"{name}.yaml"
    mapping.write_text(yaml.safe_dump({"columns": columns}))
    lines: list[str] = []
    import_logs(tmp_path / f"{name}.csv", mapping, tmp_path / name, echo=lines.append, **options)
    return lines


def test_a_cost_that_is_no_calls_own_is_said_with_the_column_likely_meant(tmp_path):
    """`tokens: maxTokens` in a mapping charged every call its configuration's generation limit, and a column of each
    configuration's mean tokens charged every call alike, without a word; one cost for every call (counting calls)
    is no warning."""
    frame = tiny_logs(n_configs=3, n_instances=8).rename(columns={"max_new_tokens": "maxTokens",
                                                                  "tokens": "total_tokens"})
    frame["maxTokens"] = frame["config_id"].map({"cfg0": 256, "cfg1": 512, "cfg2": 1024})
    lines = _mapped_import(tmp_path, frame, {"max_new_tokens": "maxTokens", "tokens": "maxTokens"}, "limit")
    assert ("warning: tokens (read from 'maxTokens'): 'maxTokens' names a generation limit (max_new_tokens), not what "
            "a call used; map the column of what each call used to tokens (--mapping); did you mean 'total_tokens'?"
            ) in lines
    assert pd.read_csv(tmp_path / "limit" / "logs.csv.gz")["tokens"].max() == 1024  # written as mapped
    priced = frame.assign(price=frame["config_id"].map({"cfg0": 0.001, "cfg1": 0.002, "cfg2": 0.004}))
    lines = _mapped_import(tmp_path, priced, {"max_new_tokens": "maxTokens", "tokens": "maxTokens",
                                              "cost_usd": "price"}, "two")  # two causes, two warnings
    assert [line.split(":")[1] for line in lines if line.startswith("warning: ")] == [
        " tokens (read from 'maxTokens')", " cost_usd (read from 'price')"], lines
    mean = frame.groupby("config_id")["total_tokens"].transform("mean")
    lines = _mapped_import(tmp_path, frame.assign(avg=mean), {"max_new_tokens": "maxTokens", "tokens": "avg"}, "avg")
    first = frame.loc[frame["config_id"] == "cfg0", "total_tokens"].mean()
    assert (f"warning: tokens (read from 'avg'): one cost on every row of each configuration ({first:g} for 'cfg0'): "
            "every call of a configuration is charged alike, as a generation limit, a configuration's average or a "
            "flat price per call would be; where the logs record what each call used, map that column to tokens "
            "(--mapping); did you mean 'total_tokens'?") in lines
    for name, columns, by in (("own", {}, "column 'tokens'"), ("used", {"tokens": "tokens_used"},
                                                                 "tokens (read from 'tokens_used')")):
        logs = frame.assign(**{"tokens" if name == "own" else "tokens_used": mean}).drop(columns="total_tokens")
        lines = _mapped_import(tmp_path, logs, {"max_new_tokens": "maxTokens", **columns}, name)  # nothing to offer
        assert any(line.startswith(f"warning: {by}: one cost on every row of each configuration (") and line.endswith(
            "map that column to tokens (--mapping)") for line in lines), lines
    parts = frame.drop(columns="total_tokens").assign(prompt_tokens=mean.round(), completion_tokens=mean.round() + 7)
    lines = _mapped_import(tmp_path, parts, {"max_new_tokens": "maxTokens"}, "parts")  # tokens their sum: one cause
    costs = [line for line in lines if "one cost on every row" in line]
    assert len(costs) == 1 and costs[0].startswith(
        "warning: tokens (the sum of 'prompt_tokens' and 'completion_tokens'): one cost on every row"), lines
    for name, logs, columns, options in (
            ("calls", frame.drop(columns="total_tokens"), {"max_new_tokens": "maxTokens"}, {"settings": {"tokens": 1}}),
            ("read", frame, {"max_new_tokens": "maxTokens", "tokens": "total_tokens"}, {})):
        lines = _mapped_import(tmp_path, logs, columns, name, **options)
        assert not any("limit" in line or "one cost" in line for line in lines), lines


def test_fields_of_nested_json_objects_are_mapped_by_their_dotted_paths(tmp_path):
    """JSON lines as many tools write them ({"usage": {"total_tokens": 65}}) were refused ('no column
    usage.total_tokens'): a mapping now names a nested field by its path, and the import is the flat log's."""
    frame = tiny_logs(n_configs=3, n_instances=6)
    frame["instance_id"] = ["1.50", "q1", "2e1", "q3", "q4", "q5"] * 3
    frame.to_csv(tmp_path / "flat.csv", index=False)
    lines = []
    for r in frame.to_dict(orient="records"):
        item = {"run": {"config": r["config_id"], "llm": {"name": r["model"], "temperature": r["temperature"]},
                        "max_new_tokens": r["max_new_tokens"], "prompting": r["prompting"]},
                "doc": {"id": r["instance_id"]}, "metrics": {"acc": r["correct"], "exact": 1 - r["correct"]},
                "usage": {"total_tokens": r["tokens"]}, "timing": {"s": r["latency_s"]},
                "logprobs": {f"tok{r['tokens'] + k}": -0.5 * k for k in range(3)}}  # keys varying by line
        # ids written as JSON numbers are read as written (1.50, not 1.5)
        lines.append(json.dumps(item).replace('"id": "1.50"', '"id": 1.50').replace('"id": "2e1"', '"id": 2e1'))
    assert sum('"id": 1.50}' in line for line in lines) == 3
    (tmp_path / "nested.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "map.yaml").write_text(yaml.safe_dump({"columns": {
        "config_id": "run.config", "model": "run.llm.name", "temperature": "run.llm.temperature",
        "max_new_tokens": "run.max_new_tokens", "prompting": "run.prompting", "instance_id": "doc.id",
        "correct": "metrics.acc", "tokens": "usage.total_tokens", "latency_s": "timing.s"}}))
    flat = import_logs(tmp_path / "flat.csv", None, tmp_path / "ds-flat")
    nested = import_logs(tmp_path / "nested.jsonl", tmp_path / "map.yaml", tmp_path / "ds-nested")
    assert (nested / "logs.csv.gz").read_bytes() == (flat / "logs.csv.gz").read_bytes()
    logs = pd.read_csv(nested / "logs.csv.gz", dtype={"instance_id": str})
    assert sorted(logs["instance_id"].unique()) == ["1.50", "2e1", "q1", "q3", "q4", "q5"]
    # an object some of whose fields are read is not left out; one no field of which is read is, by its name
    ignored = yaml.safe_load((nested / "dataset.yaml").read_text())["provenance"]["ignored_columns"]
    assert ignored == ["logprobs"]
    from cabench.data.importer import _ignored
    from cabench.data.io import read_table

    table = read_table(tmp_path / "nested.jsonl", fields=["metrics.acc"])  # only what is named is read out
    assert list(table.columns) == ["run", "doc", "metrics", "usage", "timing", "logprobs", "metrics.acc"]
    assert _ignored(table, {"correct": "metrics.acc"}, ()) == ["run", "doc", "usage", "timing", "logprobs"]


def test_a_top_level_field_keeps_its_name_beside_a_nested_one_of_the_same_path(tmp_path):
    from cabench.data.io import read_table

    (tmp_path / "t.jsonl").write_text('{"a.b": 1, "a": {"b": 2, "c": {"d": 3}, "e.f": {"g": 5}}}\n'
                                      '{"a.b": 4, "a": null}\n{"a": {"b": 7}}\n')
    table = read_table(tmp_path / "t.jsonl", fields=["a.b", "a.c.d", "a.e.f.g", "x.y", "a.c.z"])
    assert table["a.b"].tolist() == [1, 4, 7]  # the top-level field where a line has it, else the nested one
    assert table["a.c.d"].tolist()[0] == 3 and pd.isna(table["a.c.d"][1])
    assert table["a.e.f.g"].tolist()[0] == 5  # a key holding a dot is followed as a key
    assert "x.y" not in table and table["a.c.z"].isna().all()  # (no such object; no such field: nothing there)
    # a field two top-level keys lead to ('a.b' on one line, 'a' on the other), and empty values where objects were
    (tmp_path / "t.jsonl").write_text('{"a.b": {"c": 1}}\n{"a": {"b": {"c": 2}}}\n{"a": []}\n{"a": ""}\n')
    assert read_table(tmp_path / "t.jsonl", fields=["a.b.c"])["a.b.c"].tolist()[:2] == [1, 2]
    assert read_table(tmp_path / "t.jsonl", fields=["a.b.c"])["a.b.c"].iloc[2:].isna().all()
    # an id nested where the top-level field of its name is null, kept as written
    (tmp_path / "t.jsonl").write_text('{"d.id": null, "d": {"id": 1e3}}\n{"d.id": "x"}\n')
    assert read_table(tmp_path / "t.jsonl", text=["d.id"], fields=["d.id"])["d.id"].tolist() == ["1e3", "x"]
    (tmp_path / "t.jsonl").write_text('{"a": {"b": 2}}\n{"a": [5]}\n')  # a line whose 'a' is no object
    with pytest.raises(CabenchError, match=r"t.jsonl: row 2: 'a.b' cannot be read: the field on its way holds \[5\], "
                                           "not an object$"):
        read_table(tmp_path / "t.jsonl", fields=["a.b"])


NAMES = ["1e3", "1000", "1.0", "1"]  # one number written four ways: four configurations


def _numeric_names(tmp_path, fmt):
    """Logs whose configuration names, models and instance ids look like numbers, as CSV or JSON lines."""
    frame = tiny_logs(n_configs=4, n_instances=6)
    frame["config_id"] = frame["config_id"].map(dict(zip(["cfg0", "cfg1", "cfg2", "cfg3"], NAMES)))
    frame["model"] = frame["model"].map({"m0": "1.10", "m1": "1.1", "m2": "2", "m3": "2.0"})
    frame["instance_id"] = ["01", "1", "007", "7", "1e3", "1000"] * 4
    if fmt == "jsonl":  # names written as JSON numbers, ids as JSON numbers and text
        lines = [json.dumps(r).replace(f'"config_id": "{r["config_id"]}"', f'"config_id": {r["config_id"]}')
                 .replace(f'"model": "{r["model"]}"', f'"model": {r["model"]}') for r in frame.to_dict("records")]
        lines = [line.replace('"instance_id": "1000"', '"instance_id": 1000') for line in lines]
        (tmp_path / "logs.jsonl").write_text("\n".join(lines) + "\n")
        return tmp_path / "logs.jsonl"
    frame.to_csv(tmp_path / "logs.csv", index=False)
    return tmp_path / "logs.csv"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("mapped", [False, True], ids=["canonical-names", "mapped"])
def test_number_like_names_and_ids_are_read_as_written(tmp_path, fmt, mapped):
    from cabench.data.describe import describe

    source = _numeric_names(tmp_path, fmt)
    mapping = None
    if mapped:
        renamed = {"config_id": "cfg", "model": "llm", "instance_id": "q"}
        if fmt == "csv":
            pd.read_csv(source, dtype=str).rename(columns=renamed).to_csv(source, index=False)
        else:
            text = source.read_text()
            for old, new in renamed.items():
                text = text.replace(f'"{old}":', f'"{new}":')
            source.write_text(text)
        mapping = tmp_path / "map.yaml"
        mapping.write_text(yaml.safe_dump({"columns": renamed, "dataset": {"split": {"profiling_size": 3}}}))
    out = import_logs(source, mapping, tmp_path / "ds")
    logs = pd.read_csv(out / "logs.csv.gz", dtype=str)
    assert logs["config_id"].unique().tolist() == NAMES
    assert logs["model"].unique().tolist() == ["1.10", "1.1", "2", "2.0"]
    assert logs["instance_id"].unique().tolist() == ["01", "1", "007", "7", "1e3", "1000"]
    described = describe(load_dataset(out))
    assert sorted(described["full_gaps"]) == sorted(NAMES)


def test_name_constants_and_settings_are_the_text_given(tmp_path):
    from cabench.data.importer import parse_settings

    assert parse_settings(["model=1.10", "prompting=007", "max_new_tokens=256"]) == {
        "model": "1.10", "prompting": "007", "max_new_tokens": 256}
    frame = tiny_logs(n_instances=10).drop(columns=["config_id", "prompting"])
    frame.to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text("constants:\n  prompting: 007\n  temperature: 0.50\n")
    out = import_logs(tmp_path / "logs.csv", tmp_path / "map.yaml", tmp_path / "ds")
    logs = pd.read_csv(out / "logs.csv.gz", dtype=str)
    assert logs["config_id"].unique().tolist() == ["m0_t0.5_g128_007", "m1_t0.5_g128_007", "m2_t0.5_g128_007"]


def _cli(*args):
    from typer.testing import CliRunner

    from cabench.cli import app

    return CliRunner().invoke(app, ["data", "import", *map(str, args)])


@pytest.mark.parametrize("mapped", [False, True], ids=["canonical-names", "mapped"])
@pytest.mark.parametrize("column, value", [("latency_s", "timeout"), ("latency_s", "1.2e3ms"), ("latency_s", "NaN"),
                                           ("tokens", "n/a")])
def test_text_in_a_measurement_is_refused_in_one_line(tmp_path, column, value, mapped):
    frame = tiny_logs(n_instances=10).astype({column: object})
    frame.loc[7, column] = value
    name = column
    args = []
    if mapped:
        name = {"latency_s": "ms", "tokens": "n_tok"}[column]
        frame = frame.rename(columns={column: name})
        (tmp_path / "map.yaml").write_text(yaml.safe_dump({"columns": {column: name}}))
        args = ["--mapping", tmp_path / "map.yaml"]
    frame.to_csv(tmp_path / "logs.csv", index=False)
    result = _cli(tmp_path / "logs.csv", *args, "--out", tmp_path / "ds", "--missing", "drop-instances")
    role = f" (mapped to {column} in {tmp_path / 'map.yaml'})" if mapped else ""
    assert result.exit_code == 2
    assert result.stderr == (f"error: {tmp_path / 'logs.csv'}: column '{name}'{role} is not a number at row 8 "
                             f"('{value}'); a latency or token count not measured is an empty cell or 0\n")
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("column", ["tokens", "latency_s"])
def test_a_json_truth_value_in_a_measurement_is_refused_in_one_line(tmp_path, column):
    """"tokens": true was read as a token count of 1; a score may be true or false, a count or a time may not."""
    records = tiny_logs(n_instances=10).to_dict(orient="records")
    records[7][column] = True
    for r in records:
        r["correct"] = bool(r["correct"])  # (true and false are scores)
    (tmp_path / "logs.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    result = _cli(tmp_path / "logs.jsonl", "--out", tmp_path / "ds")
    assert result.exit_code == 2 and result.stderr == (
        f"error: {tmp_path / 'logs.jsonl'}: column '{column}' is not a number at row 8 (True); a latency or token "
        "count not measured is an empty cell or 0\n"), result.output
    assert not (tmp_path / "ds").exists()
    records[7][column] = 1
    (tmp_path / "logs.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    assert _cli(tmp_path / "logs.jsonl", "--out", tmp_path / "ds").exit_code == 0


def test_a_score_written_true_or_false_reads_alike_in_json_lines_and_csv(tmp_path):
    """A score written as the JSON string "true" was refused ("is not a number"), though the same cell of a CSV
    column reads as 1 and README says a JSON string reads as a CSV cell. Now "true"/"True"/"TRUE" are 1 and the
    falses 0 in both, in a CSV column that mixes them with numbers too; a latency written "true" is still refused."""
    frame = tiny_logs(n_instances=10)
    truths = ["true", "False", "TRUE", "false", 1, 0, 0.5, "True", "FALSE", "1"]
    scores = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.5, 1.0, 0.0, 1.0]
    records = frame.to_dict(orient="records")
    for n, r in enumerate(records):
        r["correct"] = truths[n % 10]
    (tmp_path / "logs.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    frame.assign(correct=[truths[n % 10] for n in range(len(frame))]).to_csv(tmp_path / "logs.csv", index=False)
    for name in ("logs.jsonl", "logs.csv"):
        assert _cli(tmp_path / name, "--out", tmp_path / name.replace(".", "_")).exit_code == 0
        read = pd.read_csv(tmp_path / name.replace(".", "_") / "logs.csv.gz")
        assert read["correct"].tolist() == [scores[n % 10] for n in range(len(frame))]
    records[3]["latency_s"] = "true"
    (tmp_path / "logs.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    result = _cli(tmp_path / "logs.jsonl", "--out", tmp_path / "refused")
    assert result.exit_code == 2 and "column 'latency_s' is not a number at row 4 ('true')" in result.stderr


def test_every_latency_text_is_refused_not_dropped(tmp_path):
    frame = tiny_logs(n_instances=10).assign(latency_s="timeout")
    frame.to_csv(tmp_path / "logs.csv", index=False)
    result = _cli(tmp_path / "logs.csv", "--out", tmp_path / "ds")
    assert result.exit_code == 2
    assert "column 'latency_s' is not a number at row 1 ('timeout')" in result.stderr
    assert "no rows" not in result.stderr


def test_text_in_another_number_column_or_constant_is_refused(tmp_path):
    frame = tiny_logs(n_instances=10).astype({"temperature": object})
    frame.loc[2, "temperature"] = "hot"
    frame.rename(columns={"temperature": "temp"}).to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text(yaml.safe_dump({"columns": {"temperature": "temp"}}))
    result = _cli(tmp_path / "logs.csv", "--mapping", tmp_path / "map.yaml", "--out", tmp_path / "ds")
    assert result.exit_code == 2
    assert result.stderr == (f"error: {tmp_path / 'logs.csv'}: column 'temp' (mapped to temperature in "
                             f"{tmp_path / 'map.yaml'}) is not a number at row 3 ('hot')\n")
    tiny_logs(n_instances=10).drop(columns=["latency_s"]).to_csv(tmp_path / "logs.csv", index=False)
    result = _cli(tmp_path / "logs.csv", "--out", tmp_path / "ds", "--set", "latency_s=fast")
    assert result.exit_code == 2 and result.stderr == "error: --set latency_s=fast: expected a number\n"
    (tmp_path / "map.yaml").write_text("constants:\n  latency_s: fast\n")
    result = _cli(tmp_path / "logs.csv", "--mapping", tmp_path / "map.yaml", "--out", tmp_path / "ds")
    assert result.exit_code == 2
    assert result.stderr == f"error: {tmp_path / 'map.yaml'}: constants.latency_s: expected a number, got 'fast'\n"
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("hollow", ["correct", "tokens"])
def test_a_configuration_with_no_row_left_is_named_never_dropped_unsaid(tmp_path, hollow):
    """Every row of cfg1 lacks a score (or has 0 tokens): the unmeasured rows were dropped, cfg1 went with them and
    the import ended with two configurations and exit 0, while one scored row left would have been refused as 19
    missing cells. Now it is refused in one line naming cfg1, and --missing drop-configs drops it with a warning."""
    frame = tiny_logs()
    frame[hollow] = frame[hollow].astype(float)
    frame.loc[frame["config_id"] == "cfg1", hollow] = float("nan") if hollow == "correct" else 0.0
    source = tmp_path / "logs.csv"
    frame.to_csv(source, index=False)
    with pytest.raises(CabenchError) as exc:
        import_logs(source, None, tmp_path / "refused")
    assert str(exc.value) == (f"{source}: configuration cfg1 has no row left to replay (each of its rows lacks a "
                              "score, a latency or a token count, or was a failed call dropped); pass --missing "
                              "drop-configs to leave it out")
    assert not (tmp_path / "refused").exists()
    lines: list[str] = []
    import_logs(source, None, tmp_path / "kept", missing="drop-configs", echo=lines.append)
    assert ("warning: dropped 1 configuration with missing instances (--missing drop-configs): cfg1 (20 of 20 "
            "instances missing)") in lines
    meta = yaml.safe_load((tmp_path / "kept" / "dataset.yaml").read_text())
    assert meta["provenance"]["holes"]["configurations"] == {"cfg1": "20 of 20 instances missing"}
    assert load_dataset(tmp_path / "kept").configs["config_id"].tolist() == ["cfg0", "cfg2"]


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_a_column_named_twice_in_the_header_is_refused_in_one_line(tmp_path, suffix):
    """A second latency_s column (9.9 everywhere) was read by pandas as 'latency_s.1', the first used and the second
    said to be an ignored column the file does not contain. Now the header is refused, naming the column."""
    frame = tiny_logs()
    text = frame.to_csv(index=False).splitlines()
    lines = [text[0] + ",latency_s", *(line + ",9.9" for line in text[1:])]
    source = tmp_path / f"twice{suffix}"
    body = ("\n".join(lines) + "\n").encode()
    source.write_bytes(gzip.compress(body) if suffix.endswith(".gz") else body)
    place = len(frame.columns) + 1
    with pytest.raises(CabenchError) as exc:
        import_logs(source, None, tmp_path / "out")
    first = list(frame.columns).index("latency_s") + 1
    assert str(exc.value) == (f"{source}: unreadable file (the header names column 'latency_s' twice (columns "
                              f"{first} and {place}); keep one, as cabench cannot tell which to read)")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("sep, shown", [(";", "';'"), ("\t", "a tab"), ("|", "'|'")])
def test_a_file_of_another_separator_is_refused_naming_it(tmp_path, sep, shown):
    """A spreadsheet's ';'-separated export was read as one column and refused as lacking column 'model', which it
    has. Now the header is said to read as one column, and the separator is named."""
    source = tmp_path / "logs.csv"
    source.write_text(tiny_logs().to_csv(index=False, sep=sep))
    with pytest.raises(CabenchError) as exc:
        import_logs(source, None, tmp_path / "out")
    assert str(exc.value) == (f"{source}: unreadable file (the header reads as one column, its names separated by "
                              f"{shown}; cabench reads comma-separated CSV: save the file with commas)")
    assert not (tmp_path / "out").exists()


def test_text_not_in_utf8_and_workbooks_are_refused_saying_what_they_are(tmp_path, monkeypatch):
    """Latin-1 logs were refused with Python's codec message at "position 0" (pandas' place in a chunk), UTF-16
    logs with it or as lacking column 'model', and an .xlsx as a tab-separated header or undecodable text. Each is
    now said: the line and byte of the first character no UTF-8 text holds, UTF-16, a workbook to export."""
    text = tiny_logs().assign(model=lambda f: "\u00e9" + f["model"]).to_csv(index=False)
    lines = text.splitlines(keepends=True)
    head = "".join(lines[:-1]).encode()  # every line in UTF-8 but the last, in Latin-1
    first, last = len(lines[0]) + lines[1].index("\u00e9"), len(head) + lines[-1].index("\u00e9")
    latin = ("not UTF-8 text: line {} holds the byte 0xe9 (byte {:,} of the file), as Latin-1 or Windows-1252 write "
             "an accented letter; save the file as UTF-8")
    utf16 = ("UTF-16 text (or binary data: NUL bytes, or a UTF-16 mark, at its start); cabench reads UTF-8: save the "
             "file as UTF-8 (a spreadsheet's \"CSV UTF-8\")")
    cases = {"latin1.csv": (text.encode("latin-1"), latin.format(2, first)),
             "late.csv": (head + lines[-1].encode("latin-1"), latin.format(len(lines), last)),
             "u16.csv": (text.encode("utf-16"), utf16), "u16le.csv": (text.encode("utf-16-le"), utf16),
             "sheet.xlsx": (b"PK\x03\x04" + bytes(200), "a spreadsheet workbook (.xlsx), which cabench does not "
                                                      "read; export the sheet as CSV (UTF-8, comma-separated) and "
                                                      "give that")}
    from cabench.data import io as table_io

    unpacked = latin.replace("of the file)", "of the unpacked text)")  # a compressed file's bytes
    cases["late.csv.gz"] = (gzip.compress(cases["late.csv"][0]), unpacked.format(len(lines), last))
    records = tiny_logs().assign(model=lambda f: "\u00e9" + f["model"]).to_json(orient="records", lines=True,
                                                                                 force_ascii=False)
    at = records.encode("latin-1").index(b"\xe9")
    cases["latin1.jsonl"] = (records.encode("latin-1"), latin.format(1, at))
    cases["u16.jsonl"] = (records.encode("utf-16"), utf16)
    cases["bom.jsonl"] = (codecs.BOM_UTF8 + records.encode("latin-1"), latin.format(1, at + 3))  # the file's byte
    cases["u32.csv"] = (text.encode("utf-32"), "UTF-32 text; cabench reads UTF-8: save the file as UTF-8")
    cases["cut.csv"] = (text.encode()[:len(head) + lines[-1].encode().index(b"\xc3") + 1],  # ends mid-character
                        f"the text ends inside a character (byte {last:,} of the file begins one that never ends): a "
                        "file cut off? copy or export it again")
    for checked in (table_io._HEADER_BYTES, 8):  # the header's check reading the file, or 8 bytes: pandas reads on
        monkeypatch.setattr(table_io, "_HEADER_BYTES", checked)
        for name, (data, said) in cases.items():
            source = tmp_path / name
            source.write_bytes(data)
            with pytest.raises(CabenchError) as exc:
                import_logs(source, None, tmp_path / "out")
            assert str(exc.value) == f"{source}: {said}", (name, checked)
    monkeypatch.setattr(table_io, "_HEADER_BYTES", len(lines[0].encode()) + lines[1].encode().index(b"\xc3\xa9") + 1)
    (tmp_path / "whole.csv").write_text(text)  # the header's bytes end inside a character: read on, as UTF-8
    assert import_logs(tmp_path / "whole.csv", None, tmp_path / "whole").is_dir()
    assert not (tmp_path / "out").exists()
    (tmp_path / "good.csv").write_text(text)  # the same logs in UTF-8 are read, the accent kept
    assert import_logs(tmp_path / "good.csv", None, tmp_path / "out").is_dir()


@pytest.mark.parametrize("rows, said", [([20], "row 20 is empty (every cell)"),
                                        ([2, 20], "row 2 is empty (every cell) (1 more such row)")])
def test_an_empty_row_is_refused_naming_it(tmp_path, rows, said):
    """A spreadsheet's row of commas was taken for the rows of a configuration named 'nan' (refused as having no
    row left, or with --missing drop-configs dropped as such), and counted as one's if the logs have a 'nan'."""
    text = tiny_logs().to_csv(index=False).splitlines()
    blank = "," * (len(text[0].split(",")) - 1)
    for row in sorted(rows, reverse=True):
        text.insert(row, blank)
    source = tmp_path / "logs.csv"
    source.write_text("\n".join(text) + "\n")
    for missing in ("error", "drop-configs"):
        with pytest.raises(CabenchError) as exc:
            import_logs(source, None, tmp_path / "out", missing=missing)
        assert str(exc.value) == f"{source}: {said}; remove the empty rows"
    assert not (tmp_path / "out").exists()


def test_source_date_epoch_makes_a_second_import_byte_identical(tmp_path, monkeypatch):
    """dataset.yaml records when the logs were imported, so the same logs imported twice differed in that line (and
    every hash of the file); with SOURCE_DATE_EPOCH set, the date is that one and the bytes are equal."""
    source = tmp_path / "logs.csv"
    tiny_logs().to_csv(source, index=False)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    import_logs(source, None, tmp_path / "base")
    first = {p.name: p.read_bytes() for p in (tmp_path / "base").iterdir()}
    import_logs(source, None, tmp_path / "base", force=True)
    assert {p.name: p.read_bytes() for p in (tmp_path / "base").iterdir()} == first
    assert yaml.safe_load(first["dataset.yaml"])["provenance"]["imported"] == "2026-01-01T00:00:00Z"
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    import_logs(source, None, tmp_path / "now")
    stamp = yaml.safe_load((tmp_path / "now" / "dataset.yaml").read_text())["provenance"]["imported"]
    assert stamp != "2026-01-01T00:00:00Z" and stamp.endswith("Z")


@pytest.mark.parametrize("case", ["trailing commas", "carriage returns", "blank first line"])
def test_the_header_check_reads_the_header_pandas_reads(tmp_path, case):
    """A spreadsheet's trailing empty columns were refused as '' named twice, a file with only \\r line endings
    crashed the check, and a blank line before the header hid a column named twice. Unnamed columns pass, any line
    ending reads, and the header is the first line that is not empty."""
    text = tiny_logs().to_csv(index=False)
    source = tmp_path / "logs.csv"
    if case == "trailing commas":
        source.write_text("\n".join(line + ",," for line in text.splitlines()) + "\n")
        import_logs(source, None, tmp_path / "out")
        assert len(pd.read_csv(tmp_path / "out" / "logs.csv.gz")) == 60
    elif case == "carriage returns":
        source.write_bytes(text.replace("\n", "\r").encode())
        import_logs(source, None, tmp_path / "out")
        assert len(pd.read_csv(tmp_path / "out" / "logs.csv.gz")) == 60
    else:
        lines = text.splitlines()
        source.write_text("\n" + "\n".join([lines[0] + ",tokens", *(line + ",1" for line in lines[1:])]) + "\n")
        with pytest.raises(CabenchError, match="the header names column 'tokens' twice"):
            import_logs(source, None, tmp_path / "out")


def test_optional_columns_are_placed_as_in_the_file_and_minus_zero_is_zero(tmp_path):
    """After rows were dropped (an empty latency, --unmeasured drop, the hole dropped with drop-instances), a
    negative prompt_tokens was placed at the row of what was left ('row 5') rather than of the file ('row 7'); a
    score of -0.0 was written as -0.0."""
    frame = tiny_logs(2, 5)
    frame["prompt_tokens"] = 10.0
    frame["correct"] = frame["correct"].astype(float)
    frame.loc[0, "latency_s"] = float("nan")
    source = tmp_path / "logs.csv"
    bad = frame.copy()
    bad.loc[6, "prompt_tokens"] = -3.0
    bad.to_csv(source, index=False)
    with pytest.raises(CabenchError, match=r"column 'prompt_tokens' is negative at row 7; "):
        import_logs(source, None, tmp_path / "bad", missing="drop-instances")
    frame.loc[1, "correct"] = -0.0
    frame.to_csv(source, index=False)
    import_logs(source, None, tmp_path / "ok", missing="drop-instances")
    text = gzip.decompress((tmp_path / "ok" / "logs.csv.gz").read_bytes()).decode()
    assert "-0.0" not in text and "-0," not in text


@pytest.mark.parametrize(("dataset", "words"), [
    ({"split": {"profiling_sise": 5, "seed": 0}}, "map.yaml: dataset.split: expected a mapping with profiling_size"),
    ({"license": "MIT"}, "map.yaml: dataset.license: unknown key; did you mean 'licence'?"),
    ({"descripton": "x"}, "map.yaml: dataset.descripton: unknown key; did you mean 'description'?"),
    ({"objectives": ["accuracy", "latncy"]}, "map.yaml: dataset.objectives[1]: 'latncy' is not one of"),
    ({"cost": "usd", "prices": {"*": {"input": 1, "ouput": 2}}}, "map.yaml: dataset.prices.*: expected {input:"),
    ({"missing": "drop"}, "map.yaml: dataset.missing: expected error, drop-instances or drop-configs, got 'drop'"),
])
def test_the_mappings_dataset_part_is_checked_as_the_loader_checks_it(tmp_path, dataset, words):
    """A misspelt key or a bad value in the mapping's ``dataset`` part was written to ``dataset.yaml``, which the
    loader then refused (or, unknown, ignored): the import refuses it, naming the mapping's key, and writes nothing."""
    source, _ = _source(tmp_path)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump({**MAPPING, "dataset": {**MAPPING["dataset"], **dataset}}))
    with pytest.raises(CabenchError, match=re.escape(f"{mapping}: {words.removeprefix('map.yaml: ')}")):
        import_logs(source, mapping, tmp_path / "mine")
    assert not (tmp_path / "mine").exists()


def test_a_dataset_yaml_with_a_key_the_loader_does_not_know_is_refused(tmp_path):
    """``objectivs`` in ``dataset.yaml`` left the data on the paper's objectives, silently."""
    source, _ = _source(tmp_path)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump(MAPPING))
    out = import_logs(source, mapping, tmp_path / "mine")
    meta = out / "dataset.yaml"
    meta.write_text(meta.read_text() + "objectivs: [accuracy, latency]\n")
    with pytest.raises(CabenchError, match=re.escape(f"{meta}: objectivs: unknown key; did you mean 'objectives'?")):
        load_dataset(out)


def test_force_replaces_a_dataset_and_nothing_an_import_does_not_write(tmp_path):
    """``data import --force`` replaced any folder whole, a user's notes with it: it now replaces a dataset folder
    holding only what an import writes, and refuses a folder of the user's or a dataset with other files in it."""
    source, _ = _source(tmp_path)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump(MAPPING))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "notes.txt").write_text("important")
    with pytest.raises(CabenchError, match=re.escape(f"{notes}: not a cabench dataset (it has no dataset.yaml)")):
        import_logs(source, mapping, notes, force=True)
    assert (notes / "notes.txt").read_text() == "important"
    out = import_logs(source, mapping, tmp_path / "mine")
    assert import_logs(source, mapping, out, force=True) == out  # a dataset alone: replaced
    (out / "mine.txt").write_text("mine")
    with pytest.raises(CabenchError, match=re.escape(f"{out}: holds mine.txt beside the dataset, which an import "
                                                     "does not write; --force would delete them")):
        import_logs(source, mapping, out, force=True)
    assert sorted(p.name for p in out.iterdir()) == ["dataset.yaml", "logs.csv.gz", "mine.txt"]


def test_a_negative_part_of_a_sum_is_shown_as_the_file_holds_it(tmp_path):
    """The message showed numpy's repr of the cell, ``(np.int64(-3))``."""
    source, frame = _source(tmp_path)
    frame["input_tokens"], frame["output_tokens"] = frame["n_tok"] - 10, 10
    frame.loc[7, "input_tokens"] = -3
    frame.to_csv(source, index=False)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump({**MAPPING, "columns": {**MAPPING["columns"],
                                                              "tokens": ["input_tokens", "output_tokens"]}}))
    with pytest.raises(CabenchError, match=r"column 'input_tokens' \(a part of tokens in .*\) is not a number >= 0 "
                                           r"at row 8 \(-3\);"):
        import_logs(source, mapping, tmp_path / "mine")


def test_an_out_that_is_a_link_is_refused(tmp_path):
    """``--out LINK --force`` turned the link into a folder, left the dataset it named as it was, and a hidden staging
    link beside it on every run: a link is refused, naming what it points to."""
    source, _ = _source(tmp_path)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump(MAPPING))
    out = import_logs(source, mapping, tmp_path / "mine")
    link = tmp_path / "link"
    link.symlink_to(out)
    before = sorted(p.name for p in tmp_path.iterdir())
    for force in (False, True):
        with pytest.raises(CabenchError, match=re.escape(f"{link}: a link (to {out}); pass the folder itself")):
            import_logs(source, mapping, link, force=force)
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == before


def test_when_neither_missing_policy_leaves_a_dataset_the_advice_says_so(tmp_path):
    """Logs of different tasks: no configuration has every instance and no instance every configuration.
    drop-configs said "try drop-instances" and drop-instances said "try drop-configs", each failing; now both say
    that neither leaves a dataset, with the counts. Where the other policy works, it is still named."""
    frame = tiny_logs(3, 6)
    task = {"cfg0": {"q000", "q001", "q002"}, "cfg1": {"q003", "q004", "q005"}, "cfg2": {"q000", "q003"}}
    frame = frame[[i in task[c] for c, i in zip(frame["config_id"], frame["instance_id"])]]
    source = tmp_path / "tasks.csv"
    frame.to_csv(source, index=False)
    for missing in ("drop-configs", "drop-instances"):
        with pytest.raises(CabenchError) as exc:
            import_logs(source, None, tmp_path / "ds", missing=missing)
        assert "try --missing" not in str(exc.value), missing
        assert str(exc.value).endswith("neither --missing policy leaves a dataset: 0 of 3 configurations have every "
                                       "instance and 0 instances every configuration (logs of different tasks or "
                                       "benchmarks are imported one task at a time)"), str(exc.value)
    frame = tiny_logs(3, 6)
    frame = frame[~((frame["config_id"] != "cfg0") & (frame["instance_id"] == "q005"))]  # cfg0 alone has q005
    frame.to_csv(source, index=False)
    with pytest.raises(CabenchError, match="keeps 1 configuration\\(s\\); try --missing drop-instances$"):
        import_logs(source, None, tmp_path / "ds", missing="drop-configs")


def test_a_folder_or_an_inspect_log_read_as_a_table_names_the_format(tmp_path):
    (tmp_path / "logs").mkdir()
    result = _cli(tmp_path / "logs", "--out", tmp_path / "ds")
    assert result.exit_code == 2 and result.stderr == (
        f"error: {tmp_path / 'logs'}: a folder, and the canonical format reads one log table; a tool's results folder "
        "is read with --format (bfcl, helm, inspect, promptfoo, every-eval-ever)\n")
    (tmp_path / "run.eval").write_bytes(b"PK\x03\x04\xf9\x00")
    result = _cli(tmp_path / "run.eval", "--out", tmp_path / "ds")
    assert result.exit_code == 2 and result.stderr == (
        f"error: {tmp_path / 'run.eval'}: an Inspect log (.eval), not a log table; pass --format inspect\n")
    (tmp_path / "run.json").write_text("{}")
    result = _cli(tmp_path / "run.json", "--out", tmp_path / "ds")
    assert result.exit_code == 2 and "--format (inspect, promptfoo, every-eval-ever)" in result.stderr
    assert not (tmp_path / "ds").exists()


def test_an_import_the_loader_would_refuse_is_kept_with_a_warning_naming_why(tmp_path):
    """Import wrote a dataset whose latencies do not vary and said nothing; `data describe` then refused it. The
    dataset is kept (objectives without latency would serve), and the import says why in one warning line."""
    frame = tiny_logs(3, 20).assign(latency_s=1.5)
    frame.to_csv(tmp_path / "logs.csv", index=False)
    result = _cli(tmp_path / "logs.csv", "--out", tmp_path / "ds")
    assert result.exit_code == 0 and (tmp_path / "ds" / "logs.csv.gz").is_file()
    assert result.stderr == (
        f"warning: describe and run will refuse it as declared: {tmp_path / 'ds'}: latency_s: the 5th and 95th "
        "percentiles of the 30 profiling latencies (3 configurations x 10 instances) are equal (1.5 s), so the "
        "efficiency reward (App. A) is undefined; the logs need latencies that vary\n")
    frame.assign(latency_s=[1.0 + i % 7 for i in range(len(frame))]).to_csv(tmp_path / "varied.csv", index=False)
    result = _cli(tmp_path / "varied.csv", "--out", tmp_path / "ds3")
    assert result.exit_code == 0 and result.stderr == "", result.stderr


def test_logs_that_time_nothing_are_imported_without_latency(tmp_path):
    """Logs whose every latency is empty (a tool that records no timing) were refused as 'none of the rows is
    measured; nothing can be replayed', with no way in. They are now written without latency_s, said in a line; on
    objectives without latency the dataset loads."""
    frame = tiny_logs(3, 20).assign(latency_s=float("nan"))
    frame.to_csv(tmp_path / "logs.csv", index=False)
    result = _cli(tmp_path / "logs.csv", "--out", tmp_path / "ds")
    assert result.exit_code == 0, result.output
    assert ("no row has a latency (latency_s empty or 0 on every row): the dataset is written without one, and its "
            "objectives must leave latency out (objectives: [accuracy, cost])") in result.stdout
    assert "objective 'efficiency' needs latency_s, which the logs lack" in result.stderr  # the paper's objectives
    written = pd.read_csv(tmp_path / "ds" / "logs.csv.gz")
    assert "latency_s" not in written.columns and len(written) == 60
    meta = yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())
    (tmp_path / "ds" / "dataset.yaml").write_text(yaml.safe_dump({**meta, "objectives": ["accuracy", "cost"]}))
    ds = load_dataset(tmp_path / "ds")
    assert ds.n_arms == 3 and [o.name for o in ds.terms.objectives] == ["accuracy", "cost"]
    frame.assign(latency_s=[float("nan")] * 59 + [1.5]).to_csv(tmp_path / "one.csv", index=False)
    result = _cli(tmp_path / "one.csv", "--out", tmp_path / "one")  # one row timed: the others are unmeasured rows
    assert result.exit_code == 2 and "59 rows dropped (latency_s empty or 0: 59)" in result.stdout, result.output


@pytest.mark.parametrize("column, value", [("correct", 1), ("tokens", 100), ("latency_s", 0.5)])
def test_a_mapping_constant_never_replaces_what_the_logs_record(tmp_path, column, value):
    """constants: {correct: 1} in a mapping would make every one of the logs' scores 1: refused in one line naming
    the mapping key; --override replaces the values knowingly, and a constant still fills a column the logs leave
    empty."""
    frame = tiny_logs(n_instances=10)
    frame.to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text(yaml.safe_dump({"constants": {column: value}}))
    result = _cli(tmp_path / "logs.csv", "--mapping", tmp_path / "map.yaml", "--out", tmp_path / "ds")
    assert result.exit_code == 2 and not (tmp_path / "ds").exists()
    assert result.stderr == (f"error: {tmp_path / 'map.yaml'}: constants.{column}: the logs record {column} (column "
                             f"'{column}', {len(frame)} of {len(frame)} rows); a constant would replace every recorded "
                             f"value: remove it (--set {column}=... fills empty cells only), or pass --override "
                             f"{column}=... to replace them\n")
    replaced = _cli(tmp_path / "logs.csv", "--out", tmp_path / "over", "--override", f"{column}={value}")
    assert replaced.exit_code == 0, replaced.output
    assert f"--override {column}: replaced the value the logs record on {len(frame)} rows\n" in replaced.stdout
    assert "ignored source columns" not in replaced.stdout  # (with a hint to keep it through extra_columns)
    frame[column] = float("nan")  # recorded nowhere: the constant is the only value there is
    frame.to_csv(tmp_path / "empty.csv", index=False)
    filled = _cli(tmp_path / "empty.csv", "--mapping", tmp_path / "map.yaml", "--out", tmp_path / "filled")
    assert filled.exit_code == 0, filled.output


@pytest.mark.parametrize("constant, derived", [("latency_s", "latency_ms"), ("tokens", "token parts")])
def test_a_mapping_constant_never_replaces_a_measurement_the_import_would_derive(tmp_path, constant, derived):
    """Logs timing calls in latency_ms, or counting prompt and completion tokens, record latency_s and tokens as
    the import derives them: a mapping constant for them replaced every value (with no word, for tokens)."""
    frame = tiny_logs(n_instances=10)
    if derived == "latency_ms":
        frame = frame.assign(latency_ms=frame["latency_s"] * 1000).drop(columns=["latency_s"])
        said = "(column 'latency_ms', 30 of 30 rows)"
    else:
        frame = frame.assign(prompt_tokens=frame["tokens"] - 10, completion_tokens=10).drop(columns=["tokens"])
        said = "(columns 'prompt_tokens' and 'completion_tokens', 30 of 30 rows)"
    frame.to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text(yaml.safe_dump({"constants": {constant: 1}}))
    result = _cli(tmp_path / "logs.csv", "--mapping", tmp_path / "map.yaml", "--out", tmp_path / "ds")
    assert result.exit_code == 2 and not (tmp_path / "ds").exists()
    assert result.stderr == (f"error: {tmp_path / 'map.yaml'}: constants.{constant}: the logs record {constant} "
                             f"{said}; a constant would replace every recorded value: remove it (the import derives "
                             f"{constant} from them), or pass --override {constant}=... to replace them\n")
    # --set fills the empty cells of a column; here it would be the column itself, every row of it
    result = _cli(tmp_path / "logs.csv", "--set", f"{constant}=1", "--out", tmp_path / "ds")
    assert result.exit_code == 2 and not (tmp_path / "ds").exists()
    assert result.stderr.startswith(f"error: --set {constant}: the logs record {constant} {said}; --set would "
                                    "replace every recorded value"), result.stderr


def test_a_mapped_column_override_replaces_is_not_listed_as_ignored(tmp_path):
    frame = tiny_logs(n_instances=10).rename(columns={"correct": "is_correct"}).assign(notes="x")
    frame.to_csv(tmp_path / "logs.csv", index=False)
    (tmp_path / "map.yaml").write_text(yaml.safe_dump({"columns": {"correct": "is_correct"}}))
    result = _cli(tmp_path / "logs.csv", "--mapping", tmp_path / "map.yaml", "--override", "correct=1", "--out",
                  tmp_path / "ds")
    assert result.exit_code == 0, result.output
    assert "--override correct: replaced the value the logs record on 30 rows\n" in result.stdout
    assert "ignored source columns: notes\n" in result.stdout  # not is_correct: replaced, as recorded
    assert yaml.safe_load((tmp_path / "ds" / "dataset.yaml").read_text())["provenance"]["ignored_columns"] == ["notes"]


def test_logs_read_from_a_folder_of_surrogate_logs_stay_surrogate(tmp_path):
    """`data import data/piqa/logs.csv.gz` wrote `surrogate: false`: the shipped surrogate logs then read as real
    logs, in `data describe`, figures and reports. Logs read from a folder whose dataset.yaml says surrogate are
    surrogate, whatever the mapping says; logs beside a real dataset's dataset.yaml, or none, are not."""
    from tests.conftest import write_dataset

    said: list[str] = []
    shipped = write_dataset(tmp_path / "shipped", tiny_logs(), surrogate=True)
    (tmp_path / "map.yaml").write_text(yaml.safe_dump({"dataset": {"surrogate": False}}))
    out = import_logs(shipped / "logs.csv.gz", tmp_path / "map.yaml", tmp_path / "again", echo=said.append)
    meta = yaml.safe_load((out / "dataset.yaml").read_text())
    assert meta["surrogate"] is True and load_dataset(out).surrogate
    assert meta["description"] == (f"Imported from logs.csv.gz: the SURROGATE logs of {shipped.resolve()}, NOT real "
                                   "model outputs")
    assert meta["provenance"]["surrogate_source"] == str(shipped.resolve())
    assert (f"the logs are read from {shipped.resolve()}, a folder of surrogate logs (its dataset.yaml): the dataset "
            "is marked surrogate") in said
    (tmp_path / "linked.csv.gz").symlink_to(shipped / "logs.csv.gz")  # a link to them: still theirs, named so
    linked = import_logs(tmp_path / "linked.csv.gz", None, tmp_path / "linked")
    assert yaml.safe_load((linked / "dataset.yaml").read_text())["provenance"]["surrogate_source"] == str(
        shipped.resolve())
    from typer.testing import CliRunner

    from cabench.cli import app

    described = CliRunner().invoke(app, ["data", "describe", str(out)])
    assert described.exit_code == 0 and described.stdout.startswith("again: SURROGATE logs"), described.output
    # a mapping saying so is right, and its own description is kept with the words that they are surrogate
    (tmp_path / "said.yaml").write_text(yaml.safe_dump({"dataset": {"surrogate": True, "description": "Ours."}}))
    said_so = import_logs(shipped / "logs.csv.gz", tmp_path / "said.yaml", tmp_path / "said")
    meta = yaml.safe_load((said_so / "dataset.yaml").read_text())
    assert meta["surrogate"] is True and meta["description"] == (f"Ours: the SURROGATE logs of {shipped.resolve()}, "
                                                                 "NOT real model outputs")
    real = write_dataset(tmp_path / "real", tiny_logs())
    for source in (real / "logs.csv.gz", tmp_path / "loose.csv"):
        tiny_logs().to_csv(tmp_path / "loose.csv", index=False)
        out = import_logs(source, None, tmp_path / f"from_{source.parent.name}_{source.stem}")
        assert yaml.safe_load((out / "dataset.yaml").read_text())["surrogate"] is False


def test_a_copy_of_the_shipped_surrogate_logs_stays_surrogate(tmp_path):
    """A copy of `data/piqa/logs.csv.gz` elsewhere imported as real logs (surrogate: false), and so did the logs an
    import of them writes (numbers written as 0.0), line endings changed, parquet, ids derived for want of a
    config_id column, or the shipped rows beside a configuration of the user's own. The shipped surrogate logs are
    known by each configuration's rows: such logs import as surrogate naming them, and a folder given their logs with
    `surrogate: false` loads as surrogate; logs holding only some instances of each import as real."""
    from cabench.data.io import write_metadata
    from tests.conftest import DATA

    said: list[str] = []
    copy = tmp_path / "mine.csv.gz"
    copy.write_bytes((DATA / "piqa" / "logs.csv.gz").read_bytes())
    out = import_logs(copy, None, tmp_path / "copied", echo=said.append)
    meta = yaml.safe_load((out / "dataset.yaml").read_text())
    assert meta["surrogate"] is True and load_dataset(out).surrogate
    assert meta["description"] == ("Imported from mine.csv.gz: the SURROGATE logs of piqa shipped with cabench (132 "
                                   "of its 132 configurations), NOT real model outputs")
    assert meta["provenance"]["surrogate_source"] == "piqa shipped with cabench (132 of its 132 configurations)"
    assert f"{copy} holds the rows of 132 of the 132 configurations of the surrogate logs of piqa shipped with " \
        "cabench: the dataset is marked surrogate" in said

    def surrogate(source, name: str) -> bool:
        return yaml.safe_load((import_logs(source, None, tmp_path / name) / "dataset.yaml").read_text())["surrogate"]

    again = tmp_path / "again.csv.gz"  # the import's own logs, copied out of its folder: floats where ints were
    again.write_bytes((out / "logs.csv.gz").read_bytes())
    assert gzip.decompress(again.read_bytes()) != gzip.decompress(copy.read_bytes()) and surrogate(again, "a")
    text = gzip.decompress((DATA / "gsm8k" / "logs.csv.gz").read_bytes()).decode()
    lines = text.splitlines(keepends=True)
    # the variants below hold ten of GSM8K's 108 configurations (a tenth of the rows to import), each whole
    tens = set(sorted({line.split(",", 1)[0] for line in lines[1:]})[::11][:10])
    plain = tmp_path / "gsm8k.csv"  # Windows line endings, the rows in another order
    rows = [line for line in lines[1:] if line.split(",", 1)[0] in tens]
    plain.write_text("".join([lines[0], *reversed(rows)]).replace("\n", "\r\n"), newline="")
    assert surrogate(plain, "b")
    frame = pd.read_csv(plain, dtype={"instance_id": str})
    assert frame["config_id"].nunique() == 10 and len(frame) == 10_000
    frame.to_parquet(tmp_path / "gsm8k.parquet")  # another file format
    assert surrogate(tmp_path / "gsm8k.parquet", "c")
    frame.drop(columns="config_id").to_csv(tmp_path / "no_ids.csv", index=False)  # ids derived: other names
    assert surrogate(tmp_path / "no_ids.csv", "d")
    own = frame[frame["config_id"] == frame["config_id"].iloc[0]].assign(config_id="ours", model="ours")
    pd.concat([frame, own]).to_csv(tmp_path / "with_ours.csv", index=False)  # beside a configuration of one's own
    assert surrogate(tmp_path / "with_ours.csv", "e")
    frame.drop(columns="latency_s").to_csv(tmp_path / "no_latency.csv", index=False)  # measured otherwise, or not
    assert surrogate(tmp_path / "no_latency.csv", "h")
    frame.assign(latency_s=frame["latency_s"] * 1000).to_csv(tmp_path / "ms.csv", index=False)
    assert surrogate(tmp_path / "ms.csv", "i")
    half = own[own["instance_id"] < "gsm8k-0500"]  # one's own configuration on half the instances, beside them
    pd.concat([frame, half]).to_csv(tmp_path / "half_ours.csv", index=False)
    out = import_logs(tmp_path / "half_ours.csv", None, tmp_path / "j", missing="drop-instances")
    assert yaml.safe_load((out / "dataset.yaml").read_text())["surrogate"] and load_dataset(out).surrogate
    assert yaml.safe_load((tmp_path / "b" / "dataset.yaml").read_text())["provenance"]["surrogate_source"] == (
        "gsm8k shipped with cabench (10 of its 108 configurations)")
    three = frame[frame["config_id"].isin(frame["config_id"].unique()[:3])]  # three of the 108 configurations
    three.to_csv(tmp_path / "three.csv", index=False)
    assert surrogate(tmp_path / "three.csv", "g") and yaml.safe_load((tmp_path / "g" / "dataset.yaml").read_text())[
        "provenance"]["surrogate_source"] == "gsm8k shipped with cabench (3 of its 108 configurations)"
    fewer = frame[frame["instance_id"] != frame["instance_id"].iloc[0]]
    fewer.to_csv(tmp_path / "fewer.csv", index=False)  # one instance less of every configuration
    assert not surrogate(tmp_path / "fewer.csv", "f") and not load_dataset(tmp_path / "f").surrogate
    said_real = tmp_path / "said_real"
    said_real.mkdir()
    (said_real / "logs.csv.gz").write_bytes(copy.read_bytes())
    write_metadata({"name": "said_real", "description": "ours", "provenance": "ours", "surrogate": False,
                    "licence": "CC0-1.0"}, said_real / "dataset.yaml")
    assert load_dataset(said_real).surrogate  # the shipped rows, whatever the folder says, and describe says why
    dropping = tmp_path / "dropping"  # ... also where the folder's `missing` would drop their rows
    dropping.mkdir()
    pd.concat([frame, half]).to_csv(dropping / "logs.csv", index=False)
    write_metadata({"name": "dropping", "description": "ours", "provenance": "ours", "surrogate": False,
                    "licence": "CC0-1.0", "missing": "drop-instances"}, dropping / "dataset.yaml")
    assert load_dataset(dropping).surrogate
    from typer.testing import CliRunner

    from cabench.cli import app

    config = tmp_path / "run.yaml"  # a run on it records that it ran on surrogate rows, and why
    config.write_text(yaml.safe_dump({"dataset": str(said_real), "setting": "online", "rho": [2], "repetitions": 1,
                                      "methods": ["uniform"], "output": str(tmp_path / "run")}))
    assert CliRunner().invoke(app, ["run", str(config), "--quiet"]).exit_code == 0
    info = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["dataset_info"]
    assert info["surrogate"] is True
    assert info["surrogate_source"] == "piqa shipped with cabench (132 of its 132 configurations)"
    described = CliRunner().invoke(app, ["data", "describe", str(said_real)]).stdout.splitlines()[0]
    assert described.startswith("said_real: SURROGATE logs") and described.endswith(
        ": the rows of the surrogate logs of piqa shipped with cabench (132 of its 132 configurations), whatever its "
        "dataset.yaml says")


def test_the_record_of_the_shipped_surrogate_logs_is_their_rows():
    """`cabench/data/surrogate_logs.json` (written by scripts/make_surrogate_logs.py) holds the shipped logs' rows
    as they are: regenerated logs without it would import as real when copied."""
    from cabench.data.io import read_logs
    from cabench.data.surrogate import Found, held, shipped
    from tests.conftest import DATA

    for name in ("gsm8k", "piqa"):
        frame = pd.read_csv(DATA / name / "logs.csv.gz")
        assert shipped()[name]["instances"] == frame["instance_id"].nunique()
        assert len(set(shipped()[name]["configuration_sha256"])) == frame["config_id"].nunique()
        k = frame["config_id"].nunique()
        assert held(read_logs(DATA / name)[0]) == Found(name, k, k)
    assert set(shipped()) == {name for name in ("gsm8k", "piqa", "jhu-temperature")
                              if yaml.safe_load((DATA / name / "dataset.yaml").read_text())["surrogate"]}


def test_missing_cells_name_the_first_configuration_and_instance(tmp_path):
    """One empty latency of 60 rows was refused as "1 (configuration, instance) cells are missing in 1 of 3
    configurations", leaving the user to find which; the first missing cell is named, in the order of the logs."""
    frame = tiny_logs()
    frame["latency_s"] = frame["latency_s"].astype(object)
    frame.loc[[27, 23, 45], "latency_s"] = ""  # cfg1's 8th and 4th instances, cfg2's 6th
    frame.to_csv(tmp_path / "holes.csv", index=False)
    with pytest.raises(CabenchError) as exc:
        import_logs(tmp_path / "holes.csv", None, tmp_path / "out")
    config, instance = frame.loc[23, ["config_id", "instance_id"]]
    assert str(exc.value) == (f"{tmp_path / 'holes.csv'}: 3 (configuration, instance) cells are missing in 2 of 3 "
                              f"configurations (the first: configuration '{config}' on instance '{instance}'); pass "
                              "--missing drop-configs (keep configurations with every instance) or --missing "
                              "drop-instances (keep instances every configuration has)")


@pytest.mark.parametrize("edit, said", [
    (lambda text: text.replace("correct", "Correct", 1),
     "correct: no such column; the logs have 'Correct', which differs in case or spaces: rename it correct, or map "
     "it (--mapping, columns: {correct: 'Correct'})"),
    (lambda text: text.replace("model", " model ", 1),
     "model: no such column; the logs have ' model ', which differs in case or spaces: rename it model, or map it "
     "(--mapping, columns: {model: ' model '})"),
    (lambda text: "# exported 2026-12-01\n" + text,
     "model: no such column; the file's first line ('# exported 2026-12-01') is no header of columns: remove it"),
    (lambda text: "sep=,\n" + text,
     "model: no such column; the file's first line ('sep=,') is no header of columns: remove it"),
    (lambda text: "\n".join(("#," if n == 0 else f"{n},") + line for n, line in enumerate(text.splitlines()))
     .replace("correct", "is_correct", 1),  # a column of row numbers named '#': a header all the same
     "correct: no such column; map a source column to it (--mapping); did you mean 'is_correct'?"),  # no --set
])
def test_a_column_named_but_for_case_or_a_line_above_the_header_is_said(tmp_path, edit, said):
    """A header 'Correct' was refused as lacking column 'correct', advising a constant (--set correct=...), and a
    comment or a spreadsheet's 'sep=,' line above the header as lacking 'model'; what stands in the way is said."""
    source = tmp_path / "logs.csv"
    source.write_text(edit(tiny_logs().to_csv(index=False)))
    with pytest.raises(CabenchError) as exc:
        import_logs(source, None, tmp_path / "out")
    assert str(exc.value) == f"{source}: {said}"


def test_names_alike_but_for_how_their_accents_are_composed_are_refused(tmp_path):
    """Two configurations named 'e\\u0301-model' (e, then a combining accent: a macOS file name's form) and
    '\\xe9-model' (one letter) were imported as two, printed alike in every table; they are refused naming both, the
    escapes showing how they differ. One name in either form alone is read as written."""
    frame = tiny_logs()
    frame.loc[frame["config_id"] == "cfg0", "config_id"] = "e\u0301-model"
    alone = tmp_path / "alone.csv"
    frame.to_csv(alone, index=False)
    out = import_logs(alone, None, tmp_path / "alone")
    assert "e\u0301-model" in set(pd.read_csv(out / "logs.csv.gz")["config_id"])
    frame.loc[frame["config_id"] == "cfg1", "config_id"] = "\u00e9-model"
    both = tmp_path / "both.csv"
    frame.to_csv(both, index=False)
    with pytest.raises(CabenchError) as exc:
        import_logs(both, None, tmp_path / "out")
    first = int((frame["config_id"] == "\u00e9-model").to_numpy().argmax()) + 1
    assert str(exc.value) == (f"{both}: column 'config_id' holds 'e\\u0301-model' at row 1 and '\\xe9-model' at row "
                              f"{first}, which read alike (the same letters, their accents composed differently); "
                              "write them alike, or name them apart")


def test_spaces_around_names_and_ids_are_removed_and_said(tmp_path):
    """'cfg1  ' was read as 'cfg1' unsaid while ' q000 ' stayed an instance apart from 'q000' (refused as 60 missing
    cells): names and ids are both read without the spaces around them, each column saying so once; two names alike
    but for them are then one configuration twice, refused as such."""
    frame = tiny_logs()
    frame.loc[frame["config_id"] == "cfg1", "config_id"] = "cfg1  "
    frame.loc[(frame["config_id"] == "cfg2") & (frame["instance_id"] < "q010"), "instance_id"] = \
        " " + frame["instance_id"] + " "
    frame.to_csv(tmp_path / "spaced.csv", index=False)
    said: list[str] = []
    out = import_logs(tmp_path / "spaced.csv", None, tmp_path / "out", echo=said.append)
    logs = pd.read_csv(out / "logs.csv.gz", dtype=str)
    assert sorted(logs["config_id"].unique()) == ["cfg0", "cfg1", "cfg2"] and logs["instance_id"].nunique() == 20
    assert [line for line in said if "removed the spaces" in line] == [
        "instance_id: removed the spaces around 10 values (e.g. ' q000 ' read as 'q000'); names and ids are compared "
        "without them",
        "config_id: removed the spaces around 1 value (e.g. 'cfg1  ' read as 'cfg1'); names and ids are compared "
        "without them"]
    categorical = frame.astype({"config_id": "category"})  # a parquet file's dictionary column: read alike
    categorical.to_parquet(tmp_path / "spaced.parquet")
    out = import_logs(tmp_path / "spaced.parquet", None, tmp_path / "from_parquet")
    assert pd.read_csv(out / "logs.csv.gz", dtype=str).equals(logs)
    frame.loc[frame["config_id"] == "cfg2", "config_id"] = " cfg1"  # beside 'cfg1  ': the same name twice
    frame.to_csv(tmp_path / "twice.csv", index=False)
    # (cfg2's rows name another model: runs of another configuration, never repeats of cfg1)
    with pytest.raises(CabenchError, match=r"column 'model' varies within config_id 'cfg1' at rows 41, 42, 43 and 17 "
                                           r"more; rows of one config_id that differ in it are runs of other"):
        import_logs(tmp_path / "twice.csv", None, tmp_path / "twice")


def test_a_row_cut_short_is_refused_naming_its_line(tmp_path):
    """A row with fewer fields than the header (a file cut off, a line broken in two) was read with its missing
    cells empty: with --missing drop-instances it imported as a call not measured, unsaid. It is refused naming its
    line, while a row whose last cell is empty but written stays a call not measured."""
    lines = tiny_logs().to_csv(index=False).splitlines()
    cut = lines[:10] + [",".join(lines[10].split(",")[:7])] + lines[11:30] + [",".join(lines[30].split(",")[:8])] + \
        lines[31:]
    (tmp_path / "cut.csv").write_text("\n".join(cut) + "\n")
    for missing in ("error", "drop-instances"):
        with pytest.raises(CabenchError) as exc:
            import_logs(tmp_path / "cut.csv", None, tmp_path / "out", missing=missing)
        assert str(exc.value) == (f"{tmp_path / 'cut.csv'}: line 11 has 7 of the header's 9 fields, without "
                                  "latency_s, tokens (a row cut short, or broken across lines; 1 more such row); "
                                  "complete it or remove it")
    commented = [*lines[:10], "# second run", *lines[10:]]  # a comment between rows: no configuration of its own
    (tmp_path / "commented.csv").write_text("\n".join(commented) + "\n")
    with pytest.raises(CabenchError) as exc:
        import_logs(tmp_path / "commented.csv", None, tmp_path / "out", missing="drop-configs")
    assert str(exc.value) == (f"{tmp_path / 'commented.csv'}: line 11 has 1 of the header's 9 fields, without model, "
                              "temperature, max_new_tokens, ... (a comment? a table holds none); complete it or "
                              "remove it")
    empty = lines[:10] + [lines[10].rsplit(",", 1)[0] + ","] + lines[11:]  # the last cell written, empty
    (tmp_path / "empty.csv").write_text("\n".join(empty) + "\n")
    said: list[str] = []
    import_logs(tmp_path / "empty.csv", None, tmp_path / "out", missing="drop-instances", echo=said.append)
    assert any(line.startswith("not measured") and "tokens empty or 0: 1" in line for line in said), said
    # a note left out where a row has none, and a line of blanks (which pandas skips), lack nothing cabench reads
    noted = [empty[0] + ",notes"] + [line + (",ok" if n % 3 == 0 else "") for n, line in enumerate(empty[1:])]
    (tmp_path / "noted.csv").write_text("\n".join([*noted[:5], "   ", *noted[5:]]) + "\n")
    out = import_logs(tmp_path / "noted.csv", None, tmp_path / "noted", missing="drop-instances")
    assert pd.read_csv(out / "logs.csv.gz")["instance_id"].nunique() == 19  # the empty tokens' instance dropped
    long = [empty[0] + ",note"] + [line + ',"' + "x" * 200_000 + '"' for line in empty[1:]]  # a long answer kept
    (tmp_path / "long.csv").write_text("\n".join(long) + "\n")  # (past the csv module's 131,072 characters)
    out = import_logs(tmp_path / "long.csv", None, tmp_path / "long", missing="drop-instances")
    assert pd.read_csv(out / "logs.csv.gz")["instance_id"].nunique() == 19
    long[20] = ",".join(long[20].split(",")[:7])  # and a row cut short after them: still found
    (tmp_path / "long_cut.csv").write_text("\n".join(long) + "\n")
    with pytest.raises(CabenchError, match="line 21 has 7 of the header's 10 fields, without latency_s, tokens"):
        import_logs(tmp_path / "long_cut.csv", None, tmp_path / "long_cut", missing="drop-instances")


def test_a_measurement_named_but_for_case_is_warned_of(tmp_path):
    """A 'Latency_s' header imported the logs without latency, said only among "ignored source columns"; a warning
    names the measurement it would have been and how to map it."""
    (tmp_path / "logs.csv").write_text(tiny_logs().to_csv(index=False).replace("latency_s", "Latency_s", 1))
    said: list[str] = []
    out = import_logs(tmp_path / "logs.csv", None, tmp_path / "out", echo=said.append)
    assert "latency_s" not in pd.read_csv(out / "logs.csv.gz").columns
    assert ("warning: latency_s: not read, though the logs have 'Latency_s', which differs in case or spaces: rename "
            "it latency_s, or map it (--mapping, columns: {latency_s: 'Latency_s'})") in said
    frame = tiny_logs()
    ms = frame.assign(Latency_MS=frame["latency_s"] * 1000).drop(columns="latency_s")  # milliseconds: a scale
    ms.to_csv(tmp_path / "ms.csv", index=False)
    said.clear()
    import_logs(tmp_path / "ms.csv", None, tmp_path / "ms", echo=said.append)
    assert ("warning: latency_s: not read, though the logs have 'Latency_MS', which differs in case or spaces: "
            "rename it latency_ms, or map it (--mapping, columns: {latency_s: 'Latency_MS'}, scale: {latency_s: "
            "0.001})") in said
    tiny_logs().rename(columns={"config_id": "Config_ID"}).to_csv(tmp_path / "ids.csv", index=False)
    said.clear()  # the ids derived instead of read: said
    import_logs(tmp_path / "ids.csv", None, tmp_path / "ids", echo=said.append)
    assert ("warning: config_id: derived from model, temperature, max_new_tokens and prompting, though the logs have "
            "'Config_ID', which differs in case or spaces: rename it config_id, or map it (--mapping, columns: "
            "{config_id: 'Config_ID'})") in said
    frame.assign(Latency_ms=frame["latency_s"] * 1000).to_csv(tmp_path / "both.csv", index=False)
    said.clear()  # latency read from latency_s: nothing to warn of
    import_logs(tmp_path / "both.csv", None, tmp_path / "both", echo=said.append)
    assert not [line for line in said if line.startswith("warning: latency")], said


def test_the_only_cost_column_named_but_for_case_is_named(tmp_path):
    """A 'Tokens' header, the logs' only cost, was refused as "no cost column; the logs need tokens, ..." without a
    word of the column they have."""
    (tmp_path / "logs.csv").write_text(tiny_logs().to_csv(index=False).replace(",tokens\n", ",Tokens\n", 1))
    with pytest.raises(CabenchError) as exc:
        import_logs(tmp_path / "logs.csv", None, tmp_path / "out")
    assert str(exc.value) == (f"{tmp_path / 'logs.csv'}: no cost column; the logs have 'Tokens', which differs in case "
                              "or spaces: rename it tokens, or map it (--mapping, columns: {tokens: 'Tokens'})")


def test_a_delimiter_ending_every_row_is_read_and_an_unnamed_column_refused(tmp_path):
    """Rows ending in a comma the header lacks (some exports write one) made pandas take the first column for an
    index and read every other one a column to the left: refused as "column 'max_new_tokens' is not a number at
    row 1 ('direct')". Such rows are read as written; a value in that unnamed last field is refused, saying why."""
    lines = tiny_logs().to_csv(index=False).splitlines()
    (tmp_path / "ended.csv").write_text("\n".join([lines[0], *(line + "," for line in lines[1:])]) + "\n")
    out = import_logs(tmp_path / "ended.csv", None, tmp_path / "ended")
    plain = tmp_path / "plain.csv"
    plain.write_text("\n".join(lines) + "\n")
    assert pd.read_csv(out / "logs.csv.gz").equals(pd.read_csv(import_logs(plain, None, tmp_path / "plain")
                                                               / "logs.csv.gz"))
    (tmp_path / "extra.csv").write_text("\n".join([lines[0], *(line + ",9" for line in lines[1:])]) + "\n")
    with pytest.raises(CabenchError) as exc:
        import_logs(tmp_path / "extra.csv", None, tmp_path / "extra")
    assert str(exc.value) == (f"{tmp_path / 'extra.csv'}: every row holds more fields than the header's 9 names: a "
                              "column without a name (the columns would be read shifted); name it in the header, or "
                              "remove it")
