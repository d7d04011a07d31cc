"""Results that stay right on any experiment: identity, self-contained folders, no pooling, data-driven
figures and reports, answers by name."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner, Result

from cabench.cli import app
from cabench.config import load_config, parse_config
from cabench.errors import CabenchError
from cabench.paper import PUBLISHED
from cabench.plots import plot_results
from cabench.recommend import recommend
from cabench.report import build_report, write_report
from cabench.results import ResultSet
from cabench.runner import run_experiment
from tests.conftest import DATA, ROOT, built_once, spread_logs, write_dataset

QUICK_ONLINE = ROOT / "configs" / "piqa_online_quick.yaml"
RUNNER = CliRunner()


def invoke(*args: str) -> Result:
    """``cabench ARGS`` in this process, where a process of its own is not what a test checks."""
    return RUNNER.invoke(app, list(args))


def section(report: str, label: str) -> str:
    """The report's section of one experiment."""
    start = report.index(f"## Experiment `{label}`")
    end = report.find("\n## ", start + 1)
    return report[start:end if end > 0 else None]


def run_raw(raw: dict, out: Path, source: str = "t.yaml", **kw):
    return run_experiment(parse_config({**raw, "output": str(out)}, source), quiet=True, **kw)


# --- 1. two experiments under one root are never pooled --------------------------------------------------

@pytest.mark.slow
def test_two_experiments_under_one_root_are_reported_separately(tmp_path):
    raw = yaml.safe_load(QUICK_ONLINE.read_text())
    def radius(s_r: float) -> list:  # (uniform, a round robin, takes no parameter)
        return [m if m == "uniform" else {"name": m, "s_r": s_r} for m in raw["methods"]]

    first = {**raw, "name": "sr_small", "methods": radius(0.01), "repetitions": 6,
             "arms": {"preset": "paper-subset"}}  # 14 configurations: the landscapes are drawn quickly
    second = {**first, "name": "sr_large", "methods": radius(0.3)}
    for exp in (first, second):
        path = tmp_path / f"{exp['name']}.yaml"
        path.write_text(yaml.safe_dump({**exp, "dataset": str(DATA / "piqa"), "output": str(tmp_path / "root" /
                                                                                              exp["name"])}))
        assert invoke("run", str(path), "--quiet").exit_code == 0
    shutil.copytree(tmp_path / "root" / "sr_small", tmp_path / "alone" / "sr_small")
    for root in ("root", "alone"):
        for command in (("plot", "--format", "png"), ("report",)):
            done = invoke(command[0], str(tmp_path / root), *command[1:])
            assert done.exit_code == 0, done.output
    together = (tmp_path / "root" / "REPORT.md").read_text()
    alone = (tmp_path / "alone" / "REPORT.md").read_text()
    assert together.count("## Experiment `") == 2 and "`sr_large`" in together
    assert section(together, "sr_small") == section(alone, "sr_small")
    res = ResultSet(tmp_path / "root")
    assert [len(e.runs) for e in res.experiments] == [4 * 3 * 6, 4 * 3 * 6]  # never pooled (n stays 6)
    index = pd.read_csv(tmp_path / "root" / "figures.csv")
    assert {"figures/sr_small_regret", "figures/sr_large_regret"} <= set(index["stem"])


def test_same_experiment_twice_is_read_once_and_conflicting_copies_are_refused(tmp_path):
    raw = {"name": "twice", "dataset": str(DATA / "gsm8k"), "setting": "psi", "arms": {"preset": "paper-subset"},
           "rho": [20, 200], "methods": ["copsi", "uniform"], "repetitions": 6}
    run_raw(raw, tmp_path / "root" / "a")
    shutil.copytree(tmp_path / "root" / "a", tmp_path / "root" / "b")
    report = build_report(tmp_path / "root")
    assert report.count("## Experiment `twice`") == 1 and "read once" in report
    arms = pd.read_csv(tmp_path / "root" / "b" / "arms.csv")  # the same runs, another truth: which copy is right?
    arms.loc[0, "accuracy"] = 0.999
    arms.to_csv(tmp_path / "root" / "b" / "arms.csv", index=False)
    done = invoke("report", str(tmp_path / "root"))
    assert done.exit_code == 2 and "with different rows" in done.stderr
    shutil.copy(tmp_path / "root" / "a" / "arms.csv", tmp_path / "root" / "b" / "arms.csv")
    runs = pd.read_csv(tmp_path / "root" / "b" / "runs.csv")
    runs.loc[0, "error"] = 1 - runs.loc[0, "error"]
    runs.to_csv(tmp_path / "root" / "b" / "runs.csv", index=False)
    done = invoke("report", str(tmp_path / "root"))  # an exception escaping the command is exit code 1
    assert done.exit_code == 2 and done.stderr.count("\n") == 1
    assert "with different rows" in done.stderr and "never averaged" in done.stderr


def test_subset_chosen_by_filters_is_the_paper_subset_not_a_full_set(tmp_path):
    raw = {"name": "by_filters", "dataset": str(DATA / "piqa"), "setting": "psi",
           "arms": {"models": ["GPT-2", "CodeLlama-7B", "Tulu-7B", "Tulu-2-7B", "Gemma-7B", "LLaMA-7B", "Mistral-7B"],
                    "temperatures": [0.5, 1.0], "max_new_tokens": [128], "prompting": ["direct"]},
           "rho": [20, 200], "methods": ["copsi", "psi-sr", "uniform"], "repetitions": 4}
    run_raw(raw, tmp_path / "root" / "f")
    meta = yaml.safe_load((tmp_path / "root" / "f" / "config.yaml").read_text())
    assert meta["paper_experiment"] == "psi-subset"
    plot_results(tmp_path / "root", ["png"])
    assert not (tmp_path / "root" / "fig5_full_f1.png").exists()


# --- 2. self-contained folders ---------------------------------------------------------------------------

@pytest.mark.slow
def test_results_survive_moving_the_folder_and_deleting_the_dataset(tmp_path):
    data = tmp_path / "copy"
    shutil.copytree(DATA / "gsm8k", data)
    online = {"name": "c_online", "dataset": str(data), "setting": "online", "rho": [2, 4, 8],
              "methods": ["cohv-ucb", "uniform"], "repetitions": 4, "trajectories": {"rho": 8, "points": 20,
                                                                                     "window": 10}}
    psi = {"name": "c_psi", "dataset": str(data), "setting": "psi", "arms": {"preset": "paper-subset"},
           "rho": [20, 200], "methods": ["copsi", "uniform"], "repetitions": 6}
    run_raw(online, tmp_path / "res" / "c_online")
    run_raw(psi, tmp_path / "res" / "c_psi")

    def outputs(root: Path) -> dict[str, bytes]:
        plot_results(root, ["png"])
        write_report(root)
        files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
                 if p.suffix in (".png", ".md") or p.name == "figures.csv"}
        done = invoke("recommend", str(root))
        assert done.exit_code == 0, done.output
        files["recommend"] = done.stdout.encode()
        return files

    before = outputs(tmp_path / "res")
    shutil.rmtree(data)
    shutil.move(tmp_path / "res", tmp_path / "moved")
    after = outputs(tmp_path / "moved")
    assert after.keys() == before.keys() and len(before) > 6
    for name in before:
        assert after[name] == before[name], name


# --- 3. figures and report from the data on datasets that are not the paper's ----------------------------

@pytest.fixture(scope="module")
def foreign_results(tmp_path_factory) -> tuple[Path, dict[str, int]]:
    """Online and identification results on two datasets that are not the paper's (six configurations imported
    with a mapping, latency in ms; fifty written directly), plotted and reported: built once in the test session
    (tests that change them work on a copy)."""
    return built_once(tmp_path_factory, "foreign", _foreign) / "results", {"six": 6, "fifty": 50}


def _foreign(tmp: Path) -> None:
    six = spread_logs(6).rename(columns={"config_id": "cfg", "instance_id": "qid", "latency_s": "ms"})
    six["ms"] = six["ms"] * 1000
    six.to_csv(tmp / "six.csv", index=False)
    mapping = {"columns": {"config_id": "cfg", "model": "model", "temperature": "temperature",
                           "max_new_tokens": "max_new_tokens", "prompting": "prompting", "instance_id": "qid",
                           "correct": "correct", "latency_s": "ms", "tokens": "tokens"},
               "scale": {"latency_s": 0.001},
               "dataset": {"name": "six", "description": "six configurations", "licence": "CC0-1.0",
                           "split": {"profiling_size": 20, "seed": 0}}}
    (tmp / "map.yaml").write_text(yaml.safe_dump(mapping))
    done = invoke("data", "import", str(tmp / "six.csv"), "--mapping", str(tmp / "map.yaml"), "--out", str(tmp / "six"))
    assert done.exit_code == 0, done.output
    write_dataset(tmp / "fifty", spread_logs(50, seed=2), split={"profiling_size": 20, "seed": 0})
    root = tmp / "results"
    for name in ("six", "fifty"):
        run_raw({"name": f"{name}_online", "dataset": str(tmp / name), "setting": "online", "rho": [2, 4, 8, 16],
                 "methods": ["cohv-ucb", "hv-ucb", "acc-cost-ucb", "uniform"], "repetitions": 8,
                 "trajectories": {"rho": 16, "points": 30, "window": 20}}, root / f"{name}_online")
        run_raw({"name": f"{name}_psi", "dataset": str(tmp / name), "setting": "psi", "rho": [30, 60, 120, 240],
                 "methods": ["copsi", "psi-sr", "uniform"], "cost_modes": ["deterministic", "stochastic"],
                 "repetitions": 8}, root / f"{name}_psi")
    plot_results(root, ["png"])
    write_report(root)


@pytest.mark.slow
def test_report_on_other_data_has_no_paper_rows(foreign_results):
    root, _ = foreign_results
    report = (root / "REPORT.md").read_text()
    assert "None" not in report and "(c-d)" not in report and "paper" not in report.lower()
    assert "| paper |" not in report and "numbers beside ours" not in report
    distinctive = {p.text for p in PUBLISHED if p.method is not None and len(p.text.split(".")[0]) >= 2}
    for text in distinctive:
        assert f"| {text} |" not in report, text
    assert "Surrogate data" not in report and report.count("## Experiment `") == 4
    for stem in pd.read_csv(root / "figures.csv")["stem"]:
        assert stem.startswith("figures/"), stem  # the paper's layouts only for the paper's experiments
    captions = re.findall(r"^\*\*(.*)\.\*\*$", report, flags=re.M)
    assert len(captions) == len(pd.read_csv(root / "figures.csv"))  # a caption only for a figure drawn


@pytest.mark.slow
def test_figure_titles_state_k_budgets_and_window(foreign_results):
    root, sizes = foreign_results
    index = pd.read_csv(root / "figures.csv").set_index("stem")
    for name, k in sizes.items():
        assert f"K={k}" in index.loc[f"figures/{name}_online_regret", "caption"]
        assert "ρ ∈ {2, 4, 8, 16}" in index.loc[f"figures/{name}_online_regret", "caption"]
        assert "over 8 repetitions" in index.loc[f"figures/{name}_online_regret", "caption"]
        traj = index.loc[f"figures/{name}_online_trajectories", "caption"]
        assert "20-pull moving average" in traj and "ρ=16" in traj and "50-pull" not in traj
        ident = index.loc[f"figures/{name}_psi_identification", "caption"]
        assert f"K={k}" in ident and "ρ ∈ {30, 60, 120, 240}" in ident and "stochastic" in ident
        assert (root / f"figures/{name}_psi_identification.png").stat().st_size > 10_000


@pytest.mark.slow
def test_log_growth_verdict_can_fail_on_a_convex_curve(foreign_results):
    root, _ = foreign_results
    report = (root / "REPORT.md").read_text()
    verdicts = re.findall(r"grows at most linearly in log2 B: .*curvature (\S+) \[(\S+), (\S+)\].*: \*\*(.+)\*\*",
                          report)
    assert len(verdicts) == 2
    for _curvature, lo, hi, state in verdicts:
        lo, hi = float(lo), float(hi.rstrip("]"))
        expected = "does not hold" if lo > 0 else ("holds" if hi <= 0 else "inconclusive")
        assert state == expected


# --- 4. answers by name ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_recommend_json_names_configurations_of_the_data(foreign_results):
    root, _ = foreign_results
    done = invoke("recommend", str(root), "--json")
    assert done.exit_code == 0, done.stderr
    items = {i["experiment"]: i for i in json.loads(done.stdout)}
    for name in ("six_psi", "fifty_psi"):
        arms = pd.read_csv(root / name / "arms.csv")
        summary = pd.read_csv(root / name / "summary.csv")
        assert items[name]["true_pareto_set"] == arms.loc[arms["pareto"] == 1, "config_id"].tolist()
        for r in items[name]["results"]:
            row = summary[(summary["method"] == r["method"]) & (summary["cost_mode"] == r["cost_mode"])
                          & (summary["rho"] == r["rho"])].iloc[0]
            assert r["exact_true_set"] == pytest.approx(1 - row["error"], abs=1e-12)
            assert r["spend_share"] == pytest.approx(row["spend_share"])
    online = items["six_online"]["results"][0]["exploited"][0]
    assert online["config_id"].startswith("cfg") and 0 < online["share"] <= 1 and "nu" in online


# --- 5. a cache that cannot serve stale results -------------------------------------------------------------

def _copy_if_present(source: str, target: str) -> None:
    """``shutil.copy2``, passing over a cache file that another process replaced while the folder was copied."""
    with contextlib.suppress(FileNotFoundError):
        shutil.copy2(source, target)


@pytest.mark.slow
def test_editing_an_engine_source_reuses_no_cell(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"name": "edit", "dataset": str(DATA / "gsm8k"), "setting": "psi",
                                      "arms": {"preset": "paper-subset"}, "rho": [20], "methods": ["copsi"],
                                      "repetitions": 4, "output": str(tmp_path / "out")}))
    first = invoke("run", str(config))
    assert first.exit_code == 0 and "(0 reused, 1 to run)" in first.stdout
    again = invoke("run", str(config))
    assert "(1 reused, 0 to run)" in again.stdout
    pkg = tmp_path / "pkg"  # a copy with its caches (the compiled kernels' too: valid while their sources are)
    shutil.copytree(ROOT / "cabench", pkg / "cabench", copy_function=_copy_if_present)
    engine = pkg / "cabench" / "psi" / "engine.py"
    engine.write_bytes(engine.read_bytes() + b"\n")
    edited = subprocess.run([sys.executable, "-m", "cabench.cli", "run", str(config)], capture_output=True,
                            text=True, cwd=tmp_path, env={"PYTHONPATH": str(pkg), "PATH": "/usr/bin:/bin"})
    assert edited.returncode == 0, edited.stderr
    assert "(0 reused, 1 to run)" in edited.stdout


def test_renaming_the_dataset_reuses_no_cell(tmp_path):
    data = tmp_path / "d"
    shutil.copytree(DATA / "piqa", data)
    raw = {"name": "ren", "dataset": str(data), "setting": "online", "rho": [2], "methods": ["uniform"],
           "repetitions": 3}
    assert run_raw(raw, tmp_path / "out").computed == 1
    meta = yaml.safe_load((data / "dataset.yaml").read_text())
    (data / "dataset.yaml").write_text(yaml.safe_dump({**meta, "name": "piqa_renamed"}))
    again = run_raw(raw, tmp_path / "out", replace=True)  # another dataset identity: replaced only when asked
    assert again.reused == 0
    assert set(pd.read_csv(tmp_path / "out" / "runs.csv")["dataset"]) == {"piqa_renamed"}


def test_golden_results(tmp_path):
    """A change of results is always a visible, deliberate update of these hashes."""
    import gzip
    import hashlib

    raw = {"name": "golden", "dataset": str(DATA / "gsm8k"), "setting": "psi", "arms": {"preset": "paper-subset"},
           "rho": [20, 100], "methods": ["copsi", "psi-sr", "uniform"], "repetitions": 5, "seed": 7}
    run_raw(raw, tmp_path / "psi")
    online = {"name": "golden_online", "dataset": str(DATA / "piqa"), "setting": "online", "rho": [2, 4],
              "methods": ["cohv-ucb", "uniform"], "repetitions": 3, "seed": 7}
    run_raw(online, tmp_path / "online")
    def content(path: Path) -> bytes:  # selections are stored gzip-compressed; their content is what is golden
        return path.read_bytes() if path.exists() else gzip.decompress(path.with_suffix(".csv.gz").read_bytes())

    got = {f"{d}/{n}": hashlib.sha256(content(tmp_path / d / n)).hexdigest()[:16]
           for d in ("psi", "online") for n in ("runs.csv", "selections.csv")}
    assert got == GOLDEN_HASHES


GOLDEN_HASHES = {"psi/runs.csv": "74b676cdaa4f15b5", "psi/selections.csv": "834b60835d72aa63",
                 "online/runs.csv": "a6ea327ef595dec1", "online/selections.csv": "27c17adff85907b9"}


# --- 6. command-line overrides ------------------------------------------------------------------------------

@pytest.mark.slow
def test_cli_overrides_are_recorded_and_change_identity(tmp_path):
    done = invoke("run", str(QUICK_ONLINE), "--out", str(tmp_path / "o"), "--seed", "3", "--repetitions", "4",
                  "--rho", "2,8", "--methods", "cohv-ucb,uniform", "--name", "overridden", "--quiet")
    assert done.exit_code == 0, done.output
    meta = yaml.safe_load((tmp_path / "o" / "config.yaml").read_text())
    assert (meta["seed"], meta["repetitions"], meta["rho"], meta["name"]) == (3, 4, [2.0, 8.0], "overridden")
    assert [m["name"] for m in meta["methods"]] == ["cohv-ucb", "uniform"]
    assert meta["trajectories"]["rho"] == 8.0 and meta["paper_experiment"] is None
    runs = pd.read_csv(tmp_path / "o" / "runs.csv")
    assert len(runs) == 2 * 2 * 4 and set(runs["experiment"]) == {"overridden"}
    base = load_config(QUICK_ONLINE, overrides={"output": str(tmp_path / "b")})
    run_experiment(base, quiet=True)
    assert yaml.safe_load((tmp_path / "b" / "config.yaml").read_text())["config_hash"] != meta["config_hash"]
    bad = invoke("run", str(QUICK_ONLINE), "--rho", "2,x", "--out", str(tmp_path / "x"))
    assert bad.exit_code == 2 and "--rho: expected comma-separated numbers" in bad.stderr


def test_method_override_keeps_yaml_parameters(tmp_path):
    raw = {"name": "keep", "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2],
           "methods": [{"name": "cohv-ucb", "s_r": 0.3}, "uniform"]}
    cfg = parse_config(raw, "k.yaml", overrides={"methods": ["cohv-ucb"]})
    assert [(m.name, m.s_r) for m in cfg.methods] == [("cohv-ucb", 0.3)]


@pytest.mark.slow
def test_result_file_damage_is_one_line(tmp_path):
    raw = {"name": "dmg", "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2], "methods": ["uniform"],
           "repetitions": 2}
    run_raw(raw, tmp_path / "r" / "dmg")
    (tmp_path / "r" / "dmg" / "arms.csv").unlink()
    with pytest.raises(CabenchError, match="arms.csv: missing"):
        ResultSet(tmp_path / "r")
    done = invoke("plot", str(tmp_path / "r"))
    assert done.exit_code == 2 and done.stderr.count("\n") == 1 and "arms.csv: missing" in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    done = invoke("plot", str(empty))
    assert done.exit_code == 2 and "no results below this folder" in done.stderr
    with pytest.raises(CabenchError):
        recommend(empty)


@pytest.mark.slow
def test_figures_do_not_depend_on_plot_workers(foreign_results, tmp_path):
    root, _ = foreign_results
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("figures", "figures.csv", "*.png"))
    plot_results(copy, ["png"], n_jobs=2)
    assert (copy / "figures.csv").read_bytes() == (root / "figures.csv").read_bytes()
    for png in sorted((root / "figures").glob("*.png")):
        assert (copy / "figures" / png.name).read_bytes() == png.read_bytes(), png.name


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_header_read_on_its_own_is_the_header_pandas_reads(tmp_path, suffix):
    """The columns a result file is read with come from its first line alone: quoted names with commas, quotes and
    line breaks, a byte order mark and a name of digits are those pandas reads."""
    from cabench import results

    frame = pd.DataFrame({"rho": [1.5], 'a "b", c': ["x"], "two\nlines": [2], "0012": ["y"], "nan": [3]})
    path = tmp_path / f"t{suffix}"
    frame.to_csv(path, index=False, encoding="utf-8-sig")
    assert results._header(path) == list(pd.read_csv(path, nrows=0).columns) == list(frame.columns)
    read = results.read_csv(path)
    assert list(read.columns) == list(frame.columns) and read["rho"].tolist() == [1.5]
    assert (tmp_path / "empty.csv").write_text("") == 0 and results._header(tmp_path / "empty.csv") == []


def test_large_tables_read_by_pyarrow_equal_the_c_parser(tmp_path, monkeypatch):
    """selections.csv parsed by pyarrow is the frame the C parser gives: names that look like numbers or NaN stay
    text, empty cost modes stay '', floats round-trip exactly."""
    import importlib.util

    from cabench import results

    pytest.importorskip("pyarrow")
    rows = [{"experiment": "1e5", "config_hash": "253592126e722573", "method": "nan", "cost_mode": "",
             "rho": 0.1 + i / 7, "rep": i, "config_id": name, "samples": i * 3, "returned": i % 2}
            for i, name in enumerate(["0012", "NaN", "inf", "a,b", "cfg-1"])]
    path = tmp_path / "selections.csv.gz"
    pd.DataFrame(rows).to_csv(path, index=False)
    fast = results.read_csv(path, large=True)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)  # as without pyarrow
    plain = results.read_csv(path, large=True)
    assert fast.equals(plain) and list(fast.dtypes) == list(plain.dtypes)
    assert list(fast["config_id"]) == ["0012", "NaN", "inf", "a,b", "cfg-1"]
    assert list(fast["config_hash"]) == ["253592126e722573"] * 5 and list(fast["cost_mode"]) == [""] * 5
    assert list(fast["rho"]) == [r["rho"] for r in rows]


def test_why_two_copies_of_an_experiment_differ_is_said_as_far_as_their_records_know():
    """Two config.yaml of one experiment: other code of a method of one's own, a folder written before the source was
    recorded (it may be the same code), other cabench code, or nothing recorded that differs."""
    from cabench.results import _why_rows_differ

    a = {"code_hash": "c1", "methods_source": {"mine:index": "s1"}}
    assert _why_rows_differ(a, {**a, "methods_source": {"mine:index": "s2"}}) == (
        " (run with other code of mine:index: its source recorded in config.yaml differs)")
    assert _why_rows_differ(a, {"code_hash": "c1"}) == (
        " (perhaps run with other code of mine:index: only one config.yaml records its source)")
    assert _why_rows_differ(a, {**a, "code_hash": "c2"}) == " (run by other cabench code: code_hash c1 and c2)"
    assert _why_rows_differ(a, dict(a)) == ""
