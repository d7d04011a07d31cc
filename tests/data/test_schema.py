"""Every validation failure kind gives one clear line naming file, column and rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cabench.data.dataset import load_dataset
from cabench.errors import CabenchError
from tests.conftest import tiny_logs, write_dataset


def _fails(tmp_path, frame, gz=False):
    folder = write_dataset(tmp_path / "bad", frame, gz=gz)
    with pytest.raises(CabenchError) as info:
        load_dataset(folder)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_missing_column(tmp_path):
    msg = _fails(tmp_path, tiny_logs().drop(columns=["correct"]))
    assert "logs.csv" in msg and "missing column 'correct'" in msg


def test_logs_need_a_cost_column(tmp_path):
    msg = _fails(tmp_path, tiny_logs().drop(columns=["tokens"]))
    assert "logs.csv" in msg and "no cost column" in msg and "cost_usd" in msg


def test_nan_latency_names_rows(tmp_path):
    frame = tiny_logs()
    frame["latency_s"] = frame["latency_s"].astype(float)
    frame.loc[[3, 7], "latency_s"] = np.nan
    msg = _fails(tmp_path, frame)
    assert "column 'latency_s' is NaN at rows 4, 8" in msg


def test_non_positive_tokens(tmp_path):
    frame = tiny_logs()
    frame.loc[5, "tokens"] = 0
    assert "column 'tokens' is not positive at row 6" in _fails(tmp_path, frame)


def test_non_positive_latency(tmp_path):
    frame = tiny_logs()
    frame.loc[0, "latency_s"] = -1.0
    assert "column 'latency_s' is not positive at row 1" in _fails(tmp_path, frame)


def test_duplicate_pair(tmp_path):
    frame = tiny_logs()
    frame = pd.concat([frame, frame.iloc[[2]]], ignore_index=True)
    msg = _fails(tmp_path, frame)
    assert "duplicate (config_id, instance_id) pair ('cfg0', 'q002')" in msg and f"row {len(frame)}" in msg


def test_ragged_instance_sets(tmp_path):
    frame = tiny_logs().drop(index=[45])  # cfg2, q005
    msg = _fails(tmp_path, frame)
    assert "ragged instance sets: config_id 'cfg2' has 19 of 20 instances" in msg and "'q005'" in msg


def test_correct_outside_unit_interval(tmp_path):
    frame = tiny_logs()
    frame["correct"] = frame["correct"].astype(float)
    frame.loc[9, "correct"] = 1.5
    assert "column 'correct' is outside [0, 1] at row 10" in _fails(tmp_path, frame)


def test_non_numeric_value(tmp_path):
    frame = tiny_logs()
    frame["tokens"] = frame["tokens"].astype(object)
    frame.loc[4, "tokens"] = "many"
    assert "column 'tokens' is not a finite number at row 5" in _fails(tmp_path, frame)


def test_metadata_varies_within_config(tmp_path):
    frame = tiny_logs()
    frame.loc[1, "model"] = "other"
    assert "column 'model' varies within config_id 'cfg0' at row 2" in _fails(tmp_path, frame)


def test_unreadable_file(tmp_path):
    folder = write_dataset(tmp_path / "bad", tiny_logs())
    (folder / "logs.csv.gz").write_bytes(b"\x1f\x8b\x08garbage")
    with pytest.raises(CabenchError, match="logs.csv.gz: unreadable file"):
        load_dataset(folder)


def test_missing_folder(tmp_path):
    with pytest.raises(CabenchError, match="dataset folder not found"):
        load_dataset(tmp_path / "nowhere")


def test_missing_metadata_key(tmp_path):
    folder = write_dataset(tmp_path / "bad", tiny_logs())
    (folder / "dataset.yaml").write_text("name: x\nsurrogate: false\n")
    with pytest.raises(CabenchError, match="dataset.yaml: missing key"):
        load_dataset(folder)
