"""Preprocessing (SPEC §2) on hand-made logs, with the numbers worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cabench.data.dataset import Split, load_dataset, split_instances
from cabench.data.normalisation import efficiency
from cabench.errors import CabenchError
from cabench.quantize import QUANTUM
from tests.conftest import tiny_logs, write_dataset


def _frame() -> pd.DataFrame:
    # 2 configurations x 4 instances
    lat = {"a": [1.0, 2.0, 4.0, 0.5], "b": [2.0, 2.0, 8.0, 1.0]}
    tok = {"a": [100, 200, 300, 400], "b": [50, 60, 70, 500]}
    cor = {"a": [1, 0, 1, 1], "b": [0, 0, 1, 0]}
    rows = []
    for c in ("a", "b"):
        for q in range(4):
            rows.append({"config_id": c, "model": c.upper(), "temperature": 0.0, "max_new_tokens": 128,
                         "prompting": "direct", "instance_id": f"q{q}", "correct": cor[c][q],
                         "latency_s": lat[c][q], "tokens": tok[c][q]})
    return pd.DataFrame(rows)


def test_split_is_a_seeded_permutation():
    ids = np.arange(10)
    p1, e1 = split_instances(ids, Split(3, 7))
    p2, e2 = split_instances(ids, Split(3, 7))
    assert p1.tolist() == p2.tolist() and e1.tolist() == e2.tolist()
    assert sorted(p1.tolist() + e1.tolist()) == list(range(10)) and len(p1) == 3
    assert split_instances(ids, Split(3, 8))[0].tolist() != p1.tolist()


def test_split_needs_an_evaluation_instance():
    with pytest.raises(CabenchError, match="profiling_size is 4 but the logs have only 4 instances"):
        split_instances(np.arange(4), Split(4, 0))


def test_efficiency_reward_formula():
    tau5, tau95 = 0.5, 4.0
    got = efficiency(tau5, tau95).reward(np.array([0.25, 0.5, 1.0, 4.0, 8.0]))
    # (1/t - 1/4) / (2 - 1/4), clipped
    assert got.tolist() == pytest.approx([1.0, 1.0, (1 - 0.25) / 1.75, 0.0, 0.0])


def test_preprocessing_numbers(tmp_path):
    folder = write_dataset(tmp_path / "hand", _frame(), split={"profiling_size": 2, "seed": 0})
    ds = load_dataset(folder)
    prof, ev = split_instances(np.array(["q0", "q1", "q2", "q3"], dtype=object), Split(2, 0))
    lat = {"a": np.array([1.0, 2.0, 4.0, 0.5]), "b": np.array([2.0, 2.0, 8.0, 1.0])}
    tok = {"a": np.array([100, 200, 300, 400.0]), "b": np.array([50, 60, 70, 500.0])}
    pooled = np.concatenate([lat["a"][prof], lat["b"][prof]])
    assert ds.tau5 == pytest.approx(np.percentile(pooled, 5))
    assert ds.tau95 == pytest.approx(np.percentile(pooled, 95))
    c_max = max(tok["a"][prof].max(), tok["b"][prof].max())
    assert ds.c_max == c_max
    assert ds.profile_cost.tolist() == pytest.approx([tok["a"][prof].mean(), tok["b"][prof].mean()])
    lam = min(tok["a"][prof].min(), tok["b"][prof].min()) / c_max
    assert ds.lam == pytest.approx(lam, abs=QUANTUM)
    assert ds.clipped_rows == int((tok["a"][ev] > c_max).sum() + (tok["b"][ev] > c_max).sum())
    cost_a = np.minimum(tok["a"][ev] / c_max, 1.0)
    assert ds.mu_cost[0] == pytest.approx(cost_a.mean(), abs=QUANTUM)
    eff_a = efficiency(ds.tau5, ds.tau95).reward(lat["a"][ev])
    acc_a = np.array([1, 0, 1, 1.0])[ev]
    assert ds.mu[0].tolist() == pytest.approx([acc_a.mean(), eff_a.mean()], abs=QUANTUM)
    assert ds.hv[0] == pytest.approx(acc_a.mean() * eff_a.mean(), abs=1e-6)
    assert ds.nu[0] == pytest.approx(ds.hv[0] / ds.mu_cost[0])


def test_arrays_are_read_only(tiny_dataset):
    ds = load_dataset(tiny_dataset)
    with pytest.raises(ValueError):
        ds.acc_eval[0, 0] = 5.0


def test_rewards_are_quantised(gsm8k):
    for arr in (*gsm8k.rewards_eval, *gsm8k.rewards_prof, gsm8k.cost_eval):
        assert np.array_equal(arr / QUANTUM, np.round(arr / QUANTUM))


def test_a_dataset_loaded_again_is_read_once_until_its_bytes_change(tmp_path, monkeypatch):
    import cabench.data.dataset as dataset_module

    folder = write_dataset(tmp_path / "logs", tiny_logs(3, 20), split={"profiling_size": 8})
    reads = []
    real = dataset_module.read_logs
    monkeypatch.setattr(dataset_module, "read_logs", lambda *a: reads.append(a) or real(*a))
    first = load_dataset(folder)
    first.meta["name"] = "changed by a caller"
    first.configs.loc[0, "config_id"] = "changed by a caller"
    again = load_dataset(folder)
    assert len(reads) == 1  # the same bytes, split and terms: read and validated once
    assert again.meta["name"] == "logs" and again.configs.loc[0, "config_id"] == "cfg0"  # its own meta and configs
    np.testing.assert_array_equal(again.acc_prof, first.acc_prof)
    assert load_dataset(folder, Split(9, 0)).acc_prof.shape == (3, 9) and len(reads) == 2  # another split
    changed = tiny_logs(3, 20)
    changed.loc[0, "correct"] = 1 - changed.loc[0, "correct"]
    write_dataset(folder, changed, split={"profiling_size": 8})  # new bytes under the same folder
    fresh = load_dataset(folder)
    assert len(reads) == 3 and fresh.content_hash != first.content_hash
    assert not np.array_equal(fresh.acc_prof, first.acc_prof) or not np.array_equal(
        fresh.acc_eval, first.acc_eval)
    (folder / "dataset.yaml").write_text((folder / "dataset.yaml").read_text().replace("test logs", "renamed"))
    assert load_dataset(folder).meta["description"] == "renamed" and len(reads) == 4


def test_tied_configurations_have_a_gap_of_zero_not_minus_zero(tmp_path):
    from cabench.data.describe import describe

    frame = tiny_logs(3, 20)
    first = frame[frame["config_id"] == "cfg0"]
    frame = pd.concat([first.assign(config_id=f"cfg{c}", model=f"m{c}") for c in range(3)], ignore_index=True)
    d = describe(load_dataset(write_dataset(tmp_path / "tied", frame, split={"profiling_size": 10})))
    assert d["full_min_gap"] == 0.0 and str(d["full_min_gap"]) == "0.0"


def test_a_folder_with_two_log_files_is_refused_naming_both(tmp_path):
    """With logs.csv beside logs.csv.gz, the .gz was read and an edit to logs.csv had no effect, without a word."""
    import gzip

    folder = write_dataset(tmp_path / "ds", tiny_logs(), split={"profiling_size": 10, "seed": 0})
    logs = next(p for p in folder.iterdir() if p.name.startswith("logs."))
    text = gzip.decompress(logs.read_bytes()) if logs.suffix == ".gz" else logs.read_bytes()
    (folder / "logs.csv").write_bytes(text)
    (folder / "logs.csv.gz").write_bytes(gzip.compress(text))
    with pytest.raises(CabenchError) as exc:
        load_dataset(folder)
    assert str(exc.value) == f"{folder}: holds logs.csv.gz and logs.csv; a dataset has one log file: remove the others"
    (folder / "logs.csv").unlink()
    assert load_dataset(folder).n_arms == 3
