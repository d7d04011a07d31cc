"""The shipped surrogate logs hit every calibration target of SPEC §9."""

from __future__ import annotations

import filecmp
import subprocess
import sys

import numpy as np
import pytest
import yaml

from cabench.data.arms import PRESETS
from cabench.data.describe import describe
from tests.conftest import DATA, ROOT, shipped

TARGETS = {
    "gsm8k": dict(K=108, acc=(0.014, 0.165), lat=(0.432, 8.854), tok=(122.1, 146.4), cost=(118.37, 147.21),
                  subset_pareto=2, gap=0.005, hv_is_nu=True),
    "piqa": dict(K=132, acc=(0.462, 0.571), lat=(0.443, 3.049), tok=(93.5, 149.9), cost=(95.01, 152.16),
                 subset_pareto=3, gap=0.010, hv_is_nu=False),
}


@pytest.mark.parametrize("name", ["gsm8k", "piqa"])
def test_table1_and_pareto_targets(name):
    t = TARGETS[name]
    d = describe(shipped(name))
    assert d["K"] == t["K"]
    assert abs(d["accuracy_min"] - t["acc"][0]) <= 0.005 and abs(d["accuracy_max"] - t["acc"][1]) <= 0.005
    assert abs(d["tokens_min"] - t["tok"][0]) <= 1.5 and abs(d["tokens_max"] - t["tok"][1]) <= 1.5
    assert abs(d["latency_min"] / t["lat"][0] - 1) <= 0.05 and abs(d["latency_max"] / t["lat"][1] - 1) <= 0.05
    assert d["pareto_size"] == 7
    assert abs(d["cost_min"] - t["cost"][0]) <= 2 and abs(d["cost_max"] - t["cost"][1]) <= 2
    assert d["subset_K"] == 14 and d["subset_pareto_size"] == t["subset_pareto"]
    assert abs(d["subset_min_gap"] / t["gap"] - 1) <= 0.2
    assert d["max_hv_is_max_nu"] is t["hv_is_nu"]
    assert d["surrogate"] is True


@pytest.mark.parametrize("name", ["gsm8k", "piqa"])
def test_instance_level_realism(name):
    ds = shipped(name)
    acc = np.concatenate([ds.acc_prof, ds.acc_eval], axis=1)
    corr = np.corrcoef(acc)
    assert corr[np.triu_indices(len(corr), 1)].mean() > 0.1  # shared instance difficulty
    lat = np.concatenate([ds.latency_prof, ds.latency_eval], axis=1)
    tok = np.concatenate([ds.tokens_prof, ds.tokens_eval], axis=1)
    assert (lat.mean(axis=1) > np.median(lat, axis=1)).all()  # right-skewed
    assert (tok.mean(axis=1) > np.median(tok, axis=1)).all()
    mean_lat = lat.mean(axis=1)
    cfg = ds.configs
    assert mean_lat[cfg["max_new_tokens"] == 256].mean() > mean_lat[cfg["max_new_tokens"] == 128].mean()
    assert mean_lat[cfg["prompting"] == "cot"].mean() > mean_lat[cfg["prompting"] == "direct"].mean()


@pytest.mark.parametrize("name", ["gsm8k", "piqa"])
def test_metadata_says_surrogate(name):
    meta = yaml.safe_load((DATA / name / "dataset.yaml").read_text())
    assert meta["surrogate"] is True
    assert "SURROGATE" in meta["description"] and "make_surrogate_logs.py" in meta["provenance"]
    assert meta["generator"]["seed"] == 2026


def test_subset_preset_is_the_papers(gsm8k):
    arms = PRESETS["paper-subset"].select(gsm8k.configs)
    chosen = gsm8k.configs.iloc[arms]
    assert len(arms) == 14
    assert set(chosen["temperature"]) == {0.5, 1.0} and set(chosen["max_new_tokens"]) == {128}
    assert set(chosen["prompting"]) == {"direct"} and chosen["model"].nunique() == 7


@pytest.mark.slow
def test_generator_is_byte_reproducible(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_surrogate_logs.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    for name in ("gsm8k", "piqa"):
        for file in ("logs.csv.gz", "dataset.yaml"):
            assert filecmp.cmp(tmp_path / name / file, DATA / name / file, shallow=False), (name, file)
