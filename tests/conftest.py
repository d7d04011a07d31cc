"""Shared fixtures: the shipped datasets (loaded once) and small hand-made logs."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cabench.data.dataset import Dataset, load_dataset
from cabench.data.io import write_logs, write_metadata

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


@cache
def shipped(name: str) -> Dataset:
    return load_dataset(DATA / name)


@pytest.fixture(scope="session")
def gsm8k() -> Dataset:
    return shipped("gsm8k")


@pytest.fixture(scope="session")
def piqa() -> Dataset:
    return shipped("piqa")


def tiny_logs(n_configs: int = 3, n_instances: int = 20, seed: int = 0) -> pd.DataFrame:
    """A small valid canonical log frame."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_configs):
        for q in range(n_instances):
            rows.append({
                "config_id": f"cfg{c}", "model": f"m{c}", "temperature": 0.5, "max_new_tokens": 128,
                "prompting": "direct", "instance_id": f"q{q:03d}", "correct": int(rng.random() < 0.3 + 0.2 * c),
                "latency_s": round(float(rng.lognormal(0, 0.4)) * (1 + c), 4),
                "tokens": int(rng.integers(50, 150)),
            })
    return pd.DataFrame(rows)


def spread_logs(k: int, n_instances: int = 60, seed: int = 1) -> pd.DataFrame:
    """Canonical logs of ``k`` configurations with spread accuracies, latencies and token counts."""
    rng = np.random.default_rng(seed)
    acc = rng.uniform(0.2, 0.8, k)
    speed = rng.uniform(0.3, 3.0, k)
    tokens = rng.uniform(80, 160, k)
    rows = []
    for c in range(k):
        for q in range(n_instances):
            rows.append({"config_id": f"cfg{c:02d}", "model": f"model{c:02d}", "temperature": 0.5,
                         "max_new_tokens": 128, "prompting": "direct", "instance_id": f"q{q:03d}",
                         "correct": int(rng.random() < acc[c]), "latency_s": round(speed[c] * rng.lognormal(0, .3), 4),
                         "tokens": round(tokens[c] * rng.lognormal(0, .1), 1)})
    return pd.DataFrame(rows)


def write_dataset(folder: Path, frame: pd.DataFrame, surrogate: bool = False, gz: bool = True,
                  split: dict | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if gz:
        write_logs(frame, folder / "logs.csv.gz")
    else:
        frame.to_csv(folder / "logs.csv", index=False)
    meta = {"name": folder.name, "description": "test logs", "provenance": "tests", "surrogate": surrogate,
            "licence": "CC0-1.0"}
    if split:
        meta["split"] = split
    write_metadata(meta, folder / "dataset.yaml")
    return folder


@pytest.fixture
def tiny_dataset(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "tiny", tiny_logs(), split={"profiling_size": 5, "seed": 0})
