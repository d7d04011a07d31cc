"""Logs keep what users have: optional and declared columns, summed columns, ignored columns and unit warnings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from cabench.data.dataset import load_dataset
from cabench.data.importer import import_logs
from cabench.data.io import read_logs
from cabench.errors import CabenchError
from tests.conftest import spread_logs

SPLIT = {"profiling_size": 10, "seed": 0}


def _user_logs() -> pd.DataFrame:
    """Canonical logs with separate prompt and completion tokens, dollars, a queue time and a free-text note."""
    frame = spread_logs(3, 30, seed=7).drop(columns=["tokens"])
    rng = np.random.default_rng(11)
    frame["prompt_tokens"] = rng.integers(20, 80, len(frame))
    frame["completion_tokens"] = rng.integers(0, 200, len(frame))
    frame["cost_usd"] = np.round(rng.uniform(0, 0.01, len(frame)), 6)
    frame["queue_s"] = np.round(rng.uniform(-1, 1, len(frame)), 4)
    frame["note"] = "ok"
    return frame


def _import(tmp_path, frame: pd.DataFrame, mapping: dict, name: str = "mine") -> tuple[list[str], object]:
    source, mapping_path = tmp_path / f"{name}.csv", tmp_path / f"{name}.yaml"
    frame.to_csv(source, index=False)
    mapping_path.write_text(yaml.safe_dump({"dataset": {"split": SPLIT}, **mapping}))
    lines: list[str] = []
    out = import_logs(source, mapping_path, tmp_path / name, echo=lines.append)
    return lines, out


SUMMED = {"columns": {"tokens": ["prompt_tokens", "completion_tokens"]}, "extra_columns": ["queue_s"]}


def test_summed_tokens_and_kept_columns_read_back(tmp_path):
    """Tokens are the parts' sum row by row; the optional and declared columns read back equal; the rest is named."""
    frame = _user_logs()
    lines, out = _import(tmp_path, frame, SUMMED)
    logs, _ = read_logs(out, extra=("queue_s",))
    assert list(logs.columns[-4:]) == ["prompt_tokens", "completion_tokens", "cost_usd", "queue_s"]
    np.testing.assert_array_equal(logs["tokens"], frame["prompt_tokens"] + frame["completion_tokens"])
    for col in ("prompt_tokens", "completion_tokens", "cost_usd", "queue_s"):
        np.testing.assert_array_equal(logs[col], frame[col].astype(float))
    assert "ignored source columns: note" in lines  # text: extra_columns would refuse it, so no hint to keep it
    lines, _ = _import(tmp_path, frame, {"columns": SUMMED["columns"]}, name="unkept")
    assert "ignored source columns: queue_s, note (keep queue_s with extra_columns in the mapping)" in lines
    meta = yaml.safe_load((out / "dataset.yaml").read_text())
    assert meta["provenance"]["ignored_columns"] == ["note"]
    assert meta["extra_columns"] == ["queue_s"]
    assert not any(line.startswith("warning") for line in lines)


def test_kept_columns_change_no_result(tmp_path):
    """The same logs with and without the optional and declared columns give the same dataset numbers."""
    frame = _user_logs()
    _, full = _import(tmp_path, frame, SUMMED, "full")
    plain = frame.assign(tokens=frame["prompt_tokens"] + frame["completion_tokens"])
    _, bare = _import(tmp_path, plain[["config_id", "model", "temperature", "max_new_tokens", "prompting",
                                       "instance_id", "correct", "latency_s", "tokens"]], {}, "bare")
    with_columns, without = load_dataset(full), load_dataset(bare)
    for attribute in ("mu", "nu", "tokens_eval", "latency_eval", "profile_cost"):
        np.testing.assert_array_equal(getattr(with_columns, attribute), getattr(without, attribute))
    assert with_columns.evaluation_ids == without.evaluation_ids


def test_undeclared_column_is_left_out_on_load(tmp_path):
    """A log file's column that is neither optional nor declared is not read into the logs."""
    _, out = _import(tmp_path, _user_logs(), SUMMED)
    meta = out / "dataset.yaml"
    meta.write_text(meta.read_text().replace("extra_columns:\n- queue_s\n", ""))
    logs, _ = read_logs(out)
    assert "queue_s" not in logs and "cost_usd" in logs
    load_dataset(out)


@pytest.mark.parametrize(("mapping", "edit", "expected"), [
    ({"columns": {"tokens": ["prompt_tokens", "completion_tok"]}}, None,
     "no column 'completion_tok' (a part of tokens in"),
    (SUMMED, ("completion_tokens", 4, -3), "column 'completion_tokens' (a part of tokens in"),
    (SUMMED, ("prompt_tokens", 0, "many"), "at row 1 ('many')"),
    ({"columns": {"model": ["model", "prompting"]}}, None, "columns.model: expected the name of one source column"),
    ({"columns": {"tokens": []}}, None, "columns.tokens: expected the name of one source column, or a list"),
    ({**SUMMED, "extra_columns": ["tokens"]}, None, "extra_columns: 'tokens' is a canonical column"),
    ({**SUMMED, "extra_columns": ["queue"]}, None, "no column 'queue' (kept by extra_columns in"),
    ({**SUMMED, "extra_columns": ["note"]}, None, "column 'note' is not a finite number at rows 1, 2, 3"),
    ({**SUMMED, "scale": {"cost_usd": 0.01}}, ("cost_usd", 2, -0.5), "column 'cost_usd' is negative at row 3"),
    ({"dataset": {"extra_columns": ["queue_s"]}}, None, "dataset.extra_columns: give extra_columns at the top"),
])
def test_refused_in_one_line_with_nothing_written(tmp_path, mapping, edit, expected):
    """A missing or negative part, a wrong declaration or a negative optional column: one line, no dataset."""
    frame = _user_logs()
    if edit:
        col, row, value = edit
        frame[col] = frame[col].astype(object)
        frame.loc[row, col] = value
    with pytest.raises(CabenchError) as err:
        _import(tmp_path, frame, mapping)
    assert expected in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "mine").exists()


def test_loader_refuses_a_negative_optional_column_and_a_missing_declared_one(tmp_path):
    """The loader checks the kept columns like the import does."""
    _, out = _import(tmp_path, _user_logs(), SUMMED)
    with pytest.raises(CabenchError, match="missing column 'wait_s', declared in extra_columns"):
        read_logs(out, extra=("queue_s", "wait_s"))
    logs, path = read_logs(out, extra=("queue_s",))
    logs.loc[5, "prompt_tokens"] = -1.0
    logs.to_csv(path, index=False)
    with pytest.raises(CabenchError, match=r"column 'prompt_tokens' is negative at row 6;"):
        load_dataset(out)


def test_tokens_other_than_the_sum_of_its_parts_is_one_warning_naming_the_first_row(tmp_path):
    """A table's tokens and its prompt and completion tokens that disagree were imported without a word: a token
    budget then counts other calls' sizes than a price table prices. One warning names the first row and how many."""
    frame = _user_logs().drop(columns=["note", "queue_s"])
    frame["tokens"] = frame["prompt_tokens"] + frame["completion_tokens"]
    lines, _ = _import(tmp_path, frame, {}, "agreeing")
    assert not [line for line in lines if "prompt_tokens + completion_tokens" in line]
    frame.loc[[4, 9], "tokens"] += 1000
    lines, out = _import(tmp_path, frame, {}, "apart")
    first = frame.loc[4]
    assert [line for line in lines if "prompt_tokens + completion_tokens" in line] == [
        f"warning: tokens is not prompt_tokens + completion_tokens on 2 of {len(frame)} rows (the first at row 5: "
        f"{first['tokens']:g} against {first['prompt_tokens']:g} + {first['completion_tokens']:g}); a token budget "
        "counts tokens and a price table prices the two parts, so budgets in tokens and in dollars see calls of "
        "other sizes (tokens a provider counts apart, as reasoning, belong in the completion)"]
    assert (out / "logs.csv.gz").is_file()


@pytest.mark.parametrize(("column", "factor", "expected"), [
    ("latency_s", 1000, "latency_s looks like milliseconds?"),
    ("latency_s", 0.001, "latency_s looks scaled twice, or another measure?"),
    ("tokens", 1e-6, "tokens looks like dollars or thousands of tokens?"),
    ("cost_usd", 1e6, "cost_usd looks like cents or micro-dollars?"),
])
def test_unit_warnings_are_one_line_and_not_errors(tmp_path, column, factor, expected):
    """A median in the wrong unit is imported, with one warning line giving the median."""
    frame = _user_logs().drop(columns=["note", "queue_s"])
    frame["tokens"] = frame.pop("prompt_tokens") + frame["completion_tokens"]
    frame[column] = frame[column] * factor
    lines, out = _import(tmp_path, frame, {})
    warnings = [line for line in lines if line.startswith("warning:")]
    median = float(frame[column].median())
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: median {column} is {median:g}; {expected}")
    assert (out / "logs.csv.gz").is_file()
