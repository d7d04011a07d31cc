"""Adversarial inputs and faults: each must give one line and exit 2 with existing results untouched,
or be accepted correctly. One case per badly handled input or fault found by an adversarial review."""

from __future__ import annotations

import gzip
import hashlib
import importlib
import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.data.dataset import load_dataset
from tests.conftest import DATA, PAUSED, ROOT, SAFETY_S, session, spread_logs, tiny_logs, wait_for, write_dataset

RUNNER = CliRunner()
PSI = {"name": "kept", "dataset": str(DATA / "gsm8k"), "setting": "psi", "arms": {"preset": "paper-subset"},
       "rho": [20, 100], "methods": ["copsi", "uniform"], "repetitions": 4}
ONLINE = {"name": "kept_online", "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2, 4],
          "methods": ["cohv-ucb", "uniform"], "repetitions": 3, "trajectories": {"rho": 4, "points": 10}}


def cli(*args) -> object:
    return RUNNER.invoke(app, [str(a) for a in args])


def one_line_error(result, words: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.stdout)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert words in lines[0], lines[0]


def checksums(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".cabench.lock"}


@pytest.fixture()
def kept(tmp_path) -> Path:
    """A finished experiment whose files must survive every bad command."""
    out = tmp_path / "kept"
    cfg = tmp_path / "kept.yaml"
    cfg.write_text(yaml.safe_dump({**PSI, "output": str(out)}))
    assert cli("run", cfg, "--quiet").exit_code == 0
    return out


def run_config(tmp_path: Path, raw: dict | str, out: Path) -> object:
    cfg = tmp_path / "bad.yaml"
    if isinstance(raw, str):
        cfg.write_text(raw)
    else:
        cfg.write_text(yaml.safe_dump({**raw, "output": str(out)}, sort_keys=False))
    return cli("run", cfg, "--quiet")


# --- configs: extreme but finite values, types, names -------------------------------------------------------

SYN = {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4]], "costs": [10, 20]}}
BAD_CONFIGS = [
    ("rho 1e9 (work beyond the limit)", {"rho": [1.0e9]}, "the plan makes about"),
    ("rho 1e20", {"rho": [1.0e20]}, "rho: must be at most 1e+09"),
    ("rho 1e308", {"rho": [1.0e308]}, "rho: must be at most 1e+09"),
    ("repetitions 1e9", {"repetitions": 1000000000}, "repetitions: must be at most 1e+07"),
    ("chunk_size 1e9", {"chunk_size": 1000000000}, "chunk_size: must be at most 1e+06"),
    ("tune.repetitions 1e9", {"tune": {"repetitions": 1000000000}}, "tune.repetitions: must be at most"),
    ("trajectories.points 1e8", {**ONLINE, "trajectories": {"rho": 4, "points": 100000000}},
     "trajectories.points: must be at most"),
    ("eta 1e308", {**ONLINE, "methods": [{"name": "cohv-ucb", "eta": 1.0e308}]}, "eta: must be at most"),
    ("s_r 1e308", {**ONLINE, "methods": [{"name": "cohv-ucb", "s_r": 1.0e308}]}, "s_r: must be at most"),
    ("s_c 1e308", {**ONLINE, "methods": [{"name": "cohv-ucb", "s_c": 1.0e308}]}, "s_c: must be at most"),
    ("synthetic costs 1e308", {**PSI, "arms": None, "dataset": {"synthetic": {**SYN["synthetic"],
                                                                             "costs": [1.0e308, 1.0]}}},
     "costs must be at most 1e12"),
    ("synthetic cost ratio 1e-300..1e300", {**PSI, "arms": None, "dataset": {"synthetic": {
        **SYN["synthetic"], "costs": [1.0e-300, 1.0e300]}}}, "within a factor 1e9"),
    # lambda rounded to 0 (the online bound divided by it: a ZeroDivisionError traceback from 3.4e7 on)
    ("synthetic cost ratio 4e7", {**ONLINE, "arms": None, "dataset": {"synthetic": {
        **SYN["synthetic"], "costs": [1.0, 4.0e7]}}}, "rounds to zero against the dearest (4e+07 x 1)"),
    ("synthetic cost ratio 2e7 with cost_spread 0.5", {**ONLINE, "arms": None, "dataset": {"synthetic": {
        **SYN["synthetic"], "costs": [1.0, 2.0e7], "cost_spread": 0.5}}}, "the cheapest pull (1 x 0.5) rounds to zero"),
    ("cost_spread 0.9999999999", {**PSI, "arms": None, "dataset": {"synthetic": {
        **SYN["synthetic"], "cost_spread": 0.9999999999}}}, "cost_spread: must lie in [0, 0.99]"),
    ("negative Gaussian means", {**PSI, "arms": None, "dataset": {"synthetic": {
        "means": [[-0.8, -0.7], [0.1, 0.2]], "costs": [1, 1], "noise": "gaussian"}}},
     "below the hypervolume reference point"),
    ("name with a path", {"name": "../../x"}, "cannot name a folder"),
    ("name of 300 characters", {"name": "n" * 300}, "cannot name a folder"),
    ("scheduler address not a URL", {"backend": "dask", "scheduler_address": "not a url"},
     "is not a scheduler address"),
    ("missing dataset, near name", {"dataset": str(DATA / "gsm8"), "arms": None}, "did you mean"),
]


@pytest.mark.slow
@pytest.mark.parametrize("label, change, words", BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_is_one_line_and_touches_nothing(tmp_path, kept, label, change, words):
    before = checksums(kept)
    raw = {**PSI, **change}
    raw = {k: v for k, v in raw.items() if v is not None}
    result = run_config(tmp_path, raw, kept)
    one_line_error(result, words)
    assert checksums(kept) == before
    assert not (tmp_path.parent / "x").exists()


def test_yaml_12_numbers_and_duplicate_keys(tmp_path, kept):
    text = yaml.safe_dump({**PSI, "output": str(tmp_path / "num")}).replace("- 20\n- 100", "- 2e1\n- 1e2")
    result = run_config(tmp_path, text, tmp_path / "num")
    assert result.exit_code == 0, result.stderr  # 2e1 and 1e2 are numbers (YAML 1.2), not strings
    assert pd.read_csv(tmp_path / "num" / "runs.csv")["rho"].unique().tolist() == [20.0, 100.0]
    before = checksums(kept)
    twice = yaml.safe_dump({**PSI, "output": str(kept)}) + "repetitions: 9\n"
    one_line_error(run_config(tmp_path, twice, kept), "key 'repetitions' is given twice")
    assert checksums(kept) == before


# --- data loss ------------------------------------------------------------------------------------------------

def test_run_refuses_a_folder_that_is_not_the_experiments(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "runs.csv").write_text("my,own\n1,2\n")
    one_line_error(run_config(tmp_path, PSI, mine), "no config.yaml, so it is not this experiment's")
    assert (mine / "runs.csv").read_text() == "my,own\n1,2\n"


def test_the_refusal_names_the_files_force_would_replace_and_force_says_it_replaced_them(tmp_path):
    """A folder of a user's notes and their own runs.csv and selections.csv: the refusal named 'a_notes.txt' (the
    first file by name, which --force leaves alone) and offered --force, which then replaced runs.csv and deleted
    selections.csv saying only "wrote runs.csv". The refusal names the files --force replaces or removes, first,
    and the forced run says so before they are gone."""
    mine = tmp_path / "mine"
    mine.mkdir()
    for name, text in (("a_notes.txt", "notes"), ("runs.csv", "my,own\n"), ("selections.csv", "my,own\n")):
        (mine / name).write_text(text)
    one_line_error(run_config(tmp_path, PSI, mine),
                   f"{mine}: folder holds 'runs.csv' and no config.yaml, so it is not this experiment's results "
                   "folder; pass another --out, or --force to write into it, which replaces or removes its runs.csv, "
                   "selections.csv")
    forced = cli("run", tmp_path / "bad.yaml", "--quiet", "--force")
    assert forced.exit_code == 0, forced.output
    assert forced.stdout.startswith(f"{mine}: --force: replacing or removing runs.csv, selections.csv, which are "
                                    "not this experiment's\n")
    assert (mine / "a_notes.txt").read_text() == "notes" and not (mine / "selections.csv").exists()
    (mine / "config.yaml").unlink()  # as a run of this experiment stopped before config.yaml (written last) leaves it
    again = cli("run", tmp_path / "bad.yaml", "--quiet", "--force")  # its own tables: nothing to say of them
    assert again.exit_code == 0 and "are not this experiment's" not in again.output, again.output


def test_tables_left_half_renamed_by_a_kill_are_said_to_be_and_the_same_command_mends_them(tmp_path):
    """A kill while a --replace run renamed its tables into place left some new (another config hash) beside the
    old config.yaml, and report blamed arms.csv as "another experiment's". With the run's temporary files beside
    them it says a run was stopped while putting its tables in place, and the same command mends the folder."""
    out, new = tmp_path / "out", tmp_path / "new"
    assert run_config(tmp_path, {**PSI, "repetitions": 5}, new).exit_code == 0
    assert run_config(tmp_path, PSI, out).exit_code == 0
    (out / "arms.csv").write_bytes((new / "arms.csv").read_bytes())  # renamed before the kill
    (out / ".runs.csv.4242-abcdefgh.tmp").write_bytes((new / "runs.csv").read_bytes())  # not yet
    one_line_error(cli("report", out), f"{out / 'arms.csv'}: the tables of a run and another's config.yaml (")
    one_line_error(cli("report", out), "a run was stopped while putting its tables in place; run the same command "
                                       "again to finish it")
    (tmp_path / "again.yaml").write_text(yaml.safe_dump({**PSI, "repetitions": 5, "output": str(out)}))
    assert cli("run", tmp_path / "again.yaml", "--quiet", "--replace").exit_code == 0  # the command killed
    assert (out / "runs.csv").read_bytes() == (new / "runs.csv").read_bytes()
    assert cli("report", out).exit_code == 0 and not list(out.glob(".*.tmp"))


def test_run_refuses_a_folder_whose_config_yaml_was_deleted(tmp_path, kept):
    (kept / "config.yaml").unlink()
    before = checksums(kept)
    one_line_error(run_config(tmp_path, {**PSI, "name": "other"}, kept), "not this experiment's")
    assert checksums(kept) == before


def test_damaged_cells_are_recomputed_and_said(tmp_path, kept):
    clean = (kept / "runs.csv").read_bytes()
    cells = sorted((kept / "cells").glob("*.sel.csv.gz"))
    cells[0].write_bytes(gzip.compress(gzip.decompress(cells[0].read_bytes()).splitlines()[0] + b"\n"))  # header
    runs = sorted(p for p in (kept / "cells").glob("*.csv.gz") if p.name.count(".") == 2)
    runs[1].write_bytes(gzip.compress(gzip.decompress(runs[1].read_bytes())[:-20]))  # cut mid-row
    (kept / "cells" / ".stale.csv.abc.tmp").write_text("half")
    result = run_config(tmp_path, PSI, kept)
    assert result.exit_code == 0 and "2 saved cells were damaged" in result.stdout
    assert (kept / "runs.csv").read_bytes() == clean
    assert not list((kept / "cells").glob(".*.tmp"))


def test_import_refuses_an_existing_dataset_and_replaces_it_only_with_force(tmp_path):
    source, mapping = _import_source(tmp_path, 3)
    dest = write_dataset(tmp_path / "ds", tiny_logs(), split={"profiling_size": 5})
    before = checksums(dest)
    one_line_error(cli("data", "import", source, "--mapping", mapping, "--out", dest), "pass another --out, or --force")
    assert checksums(dest) == before
    assert cli("data", "import", source, "--mapping", mapping, "--out", dest, "--force").exit_code == 0
    assert load_dataset(dest).n_arms == 3 and checksums(dest) != before
    assert not list(tmp_path.glob(".ds.staging-*"))


def test_an_import_removes_only_staging_folders_no_running_process_writes_in(tmp_path):
    """Two imports into one --out at once: neither removes the other's staging folder, only those of an import
    whose process is gone (or of a cabench that did not name them by process)."""
    source, mapping = _import_source(tmp_path, 3)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # its id is of no running process now
    live = tmp_path / f".ds.staging-{os.getpid()}-abc123_x"  # as an import running in this process writes it
    dead = [tmp_path / f".ds.staging-{ended.pid}-q8w7e6r5", tmp_path / f".ds.staging-{ended.pid}-q8w7e6r5-old",
            tmp_path / ".ds.staging-k2j3h4g5"]
    other = tmp_path / f".ds.staging-x.staging-{ended.pid}-a1"  # a staging folder of --out ds.staging-x
    for folder in [live, *dead, other]:
        folder.mkdir()
        (folder / "logs.csv.gz").write_bytes(b"half")
    assert cli("data", "import", source, "--mapping", mapping, "--out", tmp_path / "ds").exit_code == 0
    assert load_dataset(tmp_path / "ds").n_arms == 3
    assert sorted(p.name for p in tmp_path.glob(".ds.staging-*")) == sorted([live.name, other.name])
    assert (live / "logs.csv.gz").read_bytes() == b"half"


def test_report_and_plot_remove_only_temporary_files_no_running_process_writes(tmp_path):
    """A report or plot killed between writing and renaming its files left their temporary files for good (a
    REPORT.html's 6 MB each). Now each removes those of its own files whose writer is gone; one of a process still
    running, one of another file's name, and one named without a process id (an older cabench's) are kept."""
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"name": "t", "setting": "online", "rho": [4], "methods": ["cohv-ucb"],
                                      "repetitions": 2, "output": str(tmp_path / "r" / "t"),
                                      "dataset": {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4]], "costs": [1, 2]}}}))
    assert cli("run", config, "--quiet").exit_code == 0
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # its id is of no running process now
    root, figures = tmp_path / "r", tmp_path / "r" / "figures"
    figures.mkdir()
    dead = [root / f".REPORT.md.{ended.pid}-ab12_cde.tmp", root / f".REPORT.html.{ended.pid}-zz9yx8w7.tmp",
            root / f".report_sections.json.{ended.pid}-q1w2e3r4.tmp", root / f".figures.csv.{ended.pid}-x_x_x_x_.tmp",
            figures / f".t_landscape.png.{ended.pid}-k3k3k3k3.tmp"]
    kept = [root / f".REPORT.md.{os.getpid()}-ab12_cde.tmp", root / ".REPORT.md.k2j3h4g5.tmp",
            root / f".notes.md.{ended.pid}-abababab.tmp",
            # a user's files that look alike: not named as cabench names its own (digits, words, not ASCII)
            root / ".REPORT.md.20240611.tmp", root / ".REPORT.md.2024-06-11 draft.tmp",
            root / f".REPORT.md.{ended.pid}-my backup!.tmp", root / ".REPORT.md.\u00b2-abababab.tmp"]
    for path in [*dead, *kept]:
        path.write_bytes(b"half")
    assert cli("plot", root, "--format", "png").exit_code == 0 and cli("report", root).exit_code == 0
    assert sorted(p for p in root.rglob(".*.tmp")) == sorted(kept)


def test_result_files_are_readable_by_others(tmp_path, request):
    old = os.umask(0o022)
    request.addfinalizer(lambda: os.umask(old))
    assert run_config(tmp_path, PSI, tmp_path / "modes").exit_code == 0
    for path in (tmp_path / "modes").iterdir():
        if path.is_file() and path.name != ".cabench.lock":
            assert path.stat().st_mode & 0o777 == 0o644, path.name


# --- logs and import mappings ------------------------------------------------------------------------------------

def _write_source(frame: pd.DataFrame, tmp_path: Path, stem: str, fmt: str, name: str) -> tuple[Path, Path]:
    """``frame`` as a CSV or JSONL source file, with an identity mapping naming the dataset ``name``."""
    source = tmp_path / f"{stem}.{fmt}"
    if fmt == "csv":
        frame.to_csv(source, index=False)
    else:
        frame.to_json(source, orient="records", lines=True)
    mapping = tmp_path / f"{stem}.map.yaml"
    mapping.write_text(yaml.safe_dump({"columns": {c: c for c in frame.columns},
                                       "dataset": {"name": name, "split": {"profiling_size": 5, "seed": 0}}}))
    return source, mapping


def _import_source(tmp_path: Path, k: int, fmt: str = "csv") -> tuple[Path, Path]:
    return _write_source(tiny_logs(k, 20), tmp_path, "src", fmt, "imp")


BAD_MAPPINGS = [
    ("constant that is a list", {"constants": {"prompting": ["a", "b"]}}, "constants.prompting: expected one value"),
    ("column that is a list", {"columns": {"model": ["m", "n"]}}, "columns.model: expected the name of one"),
    ("dataset name null", {"dataset": {"name": None}}, "dataset.name: expected a non-empty text"),
]


@pytest.mark.parametrize("label, change, words", BAD_MAPPINGS, ids=[c[0] for c in BAD_MAPPINGS])
def test_bad_mapping_is_one_line(tmp_path, label, change, words):
    source, mapping = _import_source(tmp_path, 2)
    raw = yaml.safe_load(mapping.read_text())
    for key, value in change.items():
        if key == "constants":
            raw["columns"].pop("prompting")
        if key == "columns":
            raw["columns"].update(value)
        else:
            raw.setdefault(key, {}).update(value)
    mapping.write_text(yaml.safe_dump(raw))
    one_line_error(cli("data", "import", source, "--mapping", mapping, "--out", tmp_path / "o"), words)
    assert not (tmp_path / "o").exists()


def test_binary_mapping_and_json_array_are_one_line(tmp_path):
    source, mapping = _import_source(tmp_path, 2)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(bytes(range(256)) * 4)
    one_line_error(cli("data", "import", source, "--mapping", binary, "--out", tmp_path / "o"), "bin.yaml")
    array = tmp_path / "logs.json"
    array.write_text(json.dumps(tiny_logs(2, 200).to_dict(orient="records")))
    result = cli("data", "import", array, "--mapping", mapping, "--out", tmp_path / "o")
    one_line_error(result, "a .json file is not a log table")
    assert len(result.stderr) < 400


def test_csv_and_jsonl_give_the_same_configuration_ids(tmp_path):
    frame = tiny_logs(2, 20)
    frame["temperature"] = 0.7
    frame.loc[frame["config_id"] == "cfg1", "temperature"] = 0.1
    frame = frame.drop(columns=["config_id"])
    ids = {}
    for fmt in ("csv", "jsonl"):
        source, mapping = _write_source(frame, tmp_path, "s", fmt, "t")
        assert cli("data", "import", source, "--mapping", mapping, "--out", tmp_path / fmt).exit_code == 0
        ids[fmt] = sorted(load_dataset(tmp_path / fmt).configs["config_id"])
    assert ids["csv"] == ids["jsonl"] and "m0_t0.7_g128_direct" in ids["csv"]


def test_na_null_none_are_ids_and_names(tmp_path):
    frame = tiny_logs(2, 20)
    frame.loc[frame["instance_id"] == "q000", "instance_id"] = "NA"
    frame.loc[frame["instance_id"] == "q001", "instance_id"] = "null"
    frame.loc[frame["config_id"] == "cfg0", "model"] = "None"
    write_dataset(tmp_path / "na", frame, split={"profiling_size": 5})
    ds = load_dataset(tmp_path / "na")
    assert "NA" in ds.profiling_ids + ds.evaluation_ids and "None" in set(ds.configs["model"])


BAD_LOGS = [
    ("max_new_tokens 1e20", "max_new_tokens", 1e20, "is above 2.14748e+09"),
    ("latency 1e-320", "latency_s", 1e-320, "below a microsecond"),
    ("latency 1e300", "latency_s", 1e300, "is above 1e+07"),
]


@pytest.mark.parametrize("label, column, value, words", BAD_LOGS, ids=[c[0] for c in BAD_LOGS])
def test_extreme_log_values_are_one_line(tmp_path, label, column, value, words):
    frame = tiny_logs(3, 20)
    frame[column] = frame[column].astype(float)
    frame.loc[4, column] = value
    write_dataset(tmp_path / "x", frame, split={"profiling_size": 5})
    one_line_error(cli("data", "describe", tmp_path / "x"), words)


def test_constant_latencies_are_refused(tmp_path):
    frame = tiny_logs(3, 20)
    frame["latency_s"] = 1.5
    write_dataset(tmp_path / "flat", frame, split={"profiling_size": 5})
    one_line_error(cli("data", "describe", tmp_path / "flat"),
                   "percentiles of the 15 profiling latencies (3 configurations x 5 instances) are equal")


def test_split_in_dataset_yaml_is_honoured_by_every_command(tmp_path):
    data = write_dataset(tmp_path / "small", spread_logs(4, 30), split={"profiling_size": 10, "seed": 3})
    raw = {"name": "small", "dataset": str(data), "setting": "online", "rho": [2], "methods": ["uniform"],
           "repetitions": 2}
    assert run_config(tmp_path, raw, tmp_path / "o").exit_code == 0
    meta = yaml.safe_load((tmp_path / "o" / "config.yaml").read_text())
    assert meta["split"] == {"profiling_size": 10, "seed": 3}
    (data / "dataset.yaml").write_text((data / "dataset.yaml").read_text().replace("profiling_size: 10",
                                                                                   "profiling_size: ten"))
    one_line_error(cli("data", "describe", data), "split.profiling_size: expected a whole number")
    one_line_error(cli("data", "landscape", data, "-o", tmp_path / "l.png"), "split.profiling_size")
    # a whole number written as a float is the number, as in a config (it read "expected a whole number of at
    # least 1, got 10.0"); a fraction is not
    for written, said in (("10", None), ("1e1", None), ("10.0", None), ("10.5", "got 10.5"), (".inf", "got inf")):
        (data / "dataset.yaml").write_text(re.sub(r"profiling_size: \S+", f"profiling_size: {written}",
                                                  (data / "dataset.yaml").read_text()))
        described = cli("data", "describe", data, "--json")
        if said is None:
            assert described.exit_code == 0, described.output
            if written == "10":
                as_ten = described.stdout
            assert described.stdout == as_ten  # the same split, statistics and all
        else:
            one_line_error(described, f"split.profiling_size: expected a whole number of at least 1, {said}")


def test_dataset_name_must_be_text(tmp_path):
    data = write_dataset(tmp_path / "named", tiny_logs(3, 20), split={"profiling_size": 5})
    meta = yaml.safe_load((data / "dataset.yaml").read_text())
    for bad in (None, [1, 2]):
        (data / "dataset.yaml").write_text(yaml.safe_dump({**meta, "name": bad}))
        one_line_error(cli("data", "describe", data), "name: expected a non-empty text")


# --- result files read by plot, report, recommend ----------------------------------------------------------------

def _damage(folder: Path, how: str) -> None:
    runs = folder / "runs.csv"
    if how == "missing setting column":
        pd.read_csv(runs).drop(columns=["setting"]).to_csv(runs, index=False)
    elif how == "rho abc":
        frame = pd.read_csv(runs)
        frame["rho"] = frame["rho"].astype(object)
        frame.loc[2, "rho"] = "abc"
        frame.to_csv(runs, index=False)
    elif how == "budget lots":
        frame = pd.read_csv(runs)
        frame["budget_tokens"] = frame["budget_tokens"].astype(object)
        frame.loc[0, "budget_tokens"] = "lots"
        frame.to_csv(runs, index=False)
    elif how == "runs cut mid-row":
        runs.write_text(runs.read_text()[:-40])
    elif how == "config.yaml malformed":
        (folder / "config.yaml").write_text("name: [unclosed\n")
    elif how == "config.yaml a list":
        (folder / "config.yaml").write_text("- 1\n- 2\n")
    elif how == "config.yaml binary":
        (folder / "config.yaml").write_bytes(bytes(range(256)))
    elif how == "config.yaml python object":
        (folder / "config.yaml").write_text("!!python/object/apply:os.system ['echo hi']\n")
    elif how == "trajectories wrong columns":
        (folder / "trajectories.csv").write_text("a,b\n1,2\n")


DAMAGE = ["missing setting column", "rho abc", "budget lots", "runs cut mid-row", "config.yaml malformed",
          "config.yaml a list", "config.yaml binary", "config.yaml python object", "trajectories wrong columns"]


@pytest.fixture()
def finished_online(tmp_path) -> Path:
    root = tmp_path / "root"
    assert run_config(tmp_path, ONLINE, root / "exp").exit_code == 0
    return root


@pytest.mark.slow
@pytest.mark.parametrize("how", DAMAGE)
def test_damaged_result_files_are_one_line_for_plot_report_recommend(finished_online, how):
    _damage(finished_online / "exp", how)
    before = checksums(finished_online)
    for command in (("plot", finished_online, "--format", "png"), ("report", finished_online),
                    ("recommend", finished_online)):
        result = cli(*command)
        one_line_error(result, str(finished_online / "exp"))
    assert checksums(finished_online) == before


def test_plot_and_report_environment_errors(finished_online, tmp_path):
    (finished_online / "figures").write_text("a file where the figures folder goes")
    one_line_error(cli("plot", finished_online, "--format", "png"), "figures")
    one_line_error(cli("plot", finished_online, "--format", ""), "--format: give at least one")
    (finished_online / "REPORT.md").mkdir()
    one_line_error(cli("report", finished_online), "REPORT.md")
    empty = tmp_path / "empty"
    empty.mkdir()
    one_line_error(cli("plot", empty), "no results below this folder")
    (tmp_path / "afile").write_text("x")
    one_line_error(cli("data", "table1", DATA / "gsm8k", "-o", tmp_path / "afile" / "t.csv"), "afile")
    one_line_error(cli("data", "import", DATA / "gsm8k" / "logs.csv.gz", "--mapping", tmp_path / "m.yaml",
                       "--out", tmp_path / "afile" / "d"), "")


def test_output_not_writable_and_cell_path_a_folder(tmp_path, kept):
    one_line_error(run_config(tmp_path, PSI, Path("/proc/cabench-out")), "output folder is not writable")
    shutil.rmtree(kept / "cells")
    (kept / "cells").mkdir()
    before = checksums(kept)
    from cabench.cell_keys import cell_key  # the first cell's key, made a folder
    from cabench.config import parse_config
    from cabench.plan import build_problem, plan_cells

    cfg = parse_config({**PSI, "output": str(kept)}, "k.yaml")
    problem, identity, _ = build_problem(cfg)
    key = cell_key(identity, cfg.setting, cfg.seed, plan_cells(cfg)[0])
    (kept / "cells" / f"{key}.sel.csv.gz").mkdir()
    result = run_config(tmp_path, PSI, kept)
    one_line_error(result, "")
    assert {k: v for k, v in checksums(kept).items() if not k.startswith("cells/")} == \
        {k: v for k, v in before.items() if not k.startswith("cells/")}


# --- smaller ------------------------------------------------------------------------------------------------

def test_landscape_output_names(tmp_path):
    result = cli("data", "landscape", DATA / "gsm8k", "-o", tmp_path / "x.svg")
    assert result.exit_code == 0 and (tmp_path / "x.svg").stat().st_size > 10_000
    result = cli("data", "landscape", DATA / "gsm8k", "-o", tmp_path / "fig_noext")
    assert result.exit_code == 0 and f"wrote {tmp_path / 'fig_noext.png'}" in result.stdout
    one_line_error(cli("data", "landscape", DATA / "gsm8k", "-o", tmp_path / "x.jpg"), "must end in one of")


def test_tune_refuses_another_experiments_folder(tmp_path, kept):
    before = checksums(kept)
    raw = {**ONLINE, "name": "tuner", "output": str(kept), "tune": {"repetitions": 2, "rho": [2]}}
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(raw))
    one_line_error(cli("tune", tmp_path / "t.yaml"), "holds experiment 'kept', not 'tuner'")
    assert checksums(kept) == before


@pytest.mark.parametrize("text, words", [
    ("garbage: [\n", "config.yaml: unreadable (while parsing a flow node), so the folder's experiment is unknown; "
                    "move the folder, or pass another --out, or --force to replace its results"),
    ("name: kept\n", "config.yaml: names no experiment and setting (a damaged file), so the folder's experiment is "
                    "unknown; move the folder, or pass another --out, or --force to replace its results"),
])
def test_a_run_into_a_folder_whose_config_yaml_is_damaged_names_that_file(tmp_path, kept, text, words):
    """It said the folder held experiment 'None', not 'kept' (or 'kept', not 'kept'); every file stays."""
    (kept / "config.yaml").write_text(text)
    before = checksums(kept)
    config = tmp_path / "again.yaml"
    config.write_text(yaml.safe_dump({**PSI, "output": str(kept)}))
    one_line_error(cli("run", config, "--quiet"), f"{kept / words}")
    assert checksums(kept) == before


def test_a_folder_of_the_same_name_and_another_setting_says_both_settings(tmp_path, kept):
    config = tmp_path / "online.yaml"
    config.write_text(yaml.safe_dump({**ONLINE, "name": "kept", "output": str(kept)}))
    one_line_error(cli("run", config, "--quiet"), "holds experiment 'kept (psi)', not 'kept (online)'")


def test_debug_after_the_subcommand_and_parquet_hint(tmp_path):
    done = subprocess.run([sys.executable, "-m", "cabench.cli", "report", str(tmp_path / "none"), "--debug"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "Traceback" in done.stderr and "results folder not found" in done.stderr
    frame = tiny_logs(2, 20)
    (tmp_path / "pq").mkdir()
    (tmp_path / "pq" / "logs.parquet").write_bytes(b"PAR1 not really")
    write_dataset(tmp_path / "meta_only", frame)
    shutil.copy(tmp_path / "meta_only" / "dataset.yaml", tmp_path / "pq" / "dataset.yaml")
    result = cli("data", "describe", tmp_path / "pq")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1


# --- faults under load (slow) -------------------------------------------------------------------------------

def _held_import(point: str | None, marker: Path, args: list[str]) -> None:
    """A forked process: ``cabench data import ARGS`` held at ``point`` (``before:`` or ``after:`` a function,
    ``module.function``) until a kill -9; there it writes what the function returned to ``marker`` and sleeps
    (two minutes at most, so that a failing test ends). With ``point`` None it is not held."""
    if point:
        when, _, name = point.partition(":")
        module_name, _, function = name.rpartition(".")
        module = importlib.import_module(module_name)
        original = getattr(module, function)

        def held(*a, **kw):
            said = marker.with_name("said")
            said.write_text(repr(None if when == "before" else original(*a, **kw)))
            said.replace(marker)  # the marker appears whole
            time.sleep(120)
        setattr(module, function, held)
    cli(*args)


HOLDS = {  # where the import is held -> what the folder must hold after a kill -9 there
    "before:cabench.data.importer.staging_folder": "old",  # the logs read and checked, nothing written
    "before:cabench.data.importer.write_metadata": "old",  # the new logs staged beside, no dataset.yaml yet
    "before:cabench.data.importer.publish_folder": "old",  # the new dataset staged whole
    "after:cabench.storage._exchange": "new",  # swapped in (where renameat2 swaps), the old one not yet removed
    "after:cabench.data.importer.publish_folder": "new",  # published, the process not yet ended
}


@pytest.mark.slow
def test_kill_9_during_import_never_loses_the_old_dataset(tmp_path):
    """kill -9 at each step of an import (each step held until the kill: a state, not a time), and twice
    unheld while the new dataset is being staged: the folder holds the old dataset or the whole new one."""
    big = spread_logs(200, 50, seed=4)  # 10^4 rows
    source = tmp_path / "big.csv"
    big.to_csv(source, index=False)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump({"columns": {c: c for c in big.columns},
                                       "dataset": {"name": "big", "split": {"profiling_size": 20, "seed": 0}}}))
    args = ["data", "import", str(source), "--mapping", str(mapping)]
    assert cli(*args, "--out", tmp_path / "whole").exit_code == 0
    whole = checksums(tmp_path / "whole")["logs.csv.gz"]
    dest = write_dataset(tmp_path / "ds", tiny_logs(), split={"profiling_size": 5})
    old = checksums(dest)

    def staging(name: str):
        """The state 'this import's staging folder holds ``name``' ('': the folder), not a killed import's."""
        stale = set(tmp_path.glob(".ds.staging-*"))
        return lambda: any((p / name).exists() for p in tmp_path.glob(".ds.staging-*") if p not in stale)

    marker, kinds, fork = tmp_path / "held", {"old": 0, "new": 0}, multiprocessing.get_context("fork")
    for point, want in [*HOLDS.items(), ("staging:", None), ("staging:logs.csv.gz", None)]:
        marker.unlink(missing_ok=True)
        unheld = point.startswith("staging:")
        state = staging(point.partition(":")[2]) if unheld else marker.exists
        proc = fork.Process(target=_held_import, args=(None if unheld else point, marker,
                                                       [*args, "--out", str(dest), "--force"]))
        proc.start()
        wait_for(state, f"{point} in the import", proc)
        assert unheld or proc.is_alive(), proc.exitcode  # a held import ends only by the kill
        if proc.is_alive():  # (an unheld one may have ended first: the folder is checked alike)
            os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        if point.endswith("_exchange") and marker.read_text() == "False":
            want = "old"  # no atomic swap here: nothing moved yet
        now = checksums(dest)
        got = "old" if now == old else "new"
        assert want in (None, got), (point, got)
        kinds[got] += 1
        if got == "new":
            assert now.get("logs.csv.gz") == whole  # the complete new dataset, never a part
            meta = yaml.safe_load((dest / "dataset.yaml").read_text())  # (its import date differs by trial)
            assert meta["provenance"]["rows"]["kept"] == 10_000
            assert load_dataset(dest).n_arms == 200
            shutil.rmtree(dest)
            write_dataset(tmp_path / "ds", tiny_logs(), split={"profiling_size": 5})
    print(f"kill -9 during import, {sum(kinds.values())} trials: {kinds}")
    assert kinds["old"] >= 3 and kinds["new"] >= 1, kinds  # kills before the swap left the old dataset whole


def _run_and_say(config: Path, said: Path) -> None:
    """A forked process: ``cabench run CONFIG --quiet``; its exit code and standard error go to ``said``."""
    result = cli("run", config, "--quiet")
    said.write_text(json.dumps([result.exit_code, result.stderr if result.exit_code in (0, 2)
                                else repr(result.exception)]))


@pytest.mark.slow
def test_concurrent_runs_with_different_names_on_one_folder(tmp_path):
    """Two processes run two experiments into one folder at once, ten times: one finishes, the other is
    refused in one line (by the folder's lock or by the name check), and the folder holds the winner's runs."""
    small = {**PSI, "dataset": str(write_dataset(tmp_path / "small", spread_logs(8, 40), split={"profiling_size": 10})),
             "arms": "all"}
    fork = multiprocessing.get_context("fork")  # two processes started together, without an interpreter's start
    assert run_config(tmp_path, small, tmp_path / "warm").exit_code == 0  # and with the compiled code loaded
    outcomes = []
    for trial in range(10):
        out = tmp_path / f"shared{trial}"
        procs = []
        for name in ("first", "second"):
            cfg = tmp_path / f"{name}{trial}.yaml"
            cfg.write_text(yaml.safe_dump({**small, "name": name, "repetitions": 6, "output": str(out)}))
            procs.append(fork.Process(target=_run_and_say, args=(cfg, tmp_path / f"{name}{trial}.said")))
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(SAFETY_S)  # (a limit that ends a hang only)
            assert proc.exitcode == 0, proc.exitcode
        results = [tuple(json.loads((tmp_path / f"{name}{trial}.said").read_text())) for name in ("first", "second")]
        codes = sorted(code for code, _ in results)
        assert codes == [0, 2], results
        err = next(e for c, e in results if c == 2)
        assert err.count("\n") == 1 and err.startswith("error: ")
        outcomes.append("another cabench run" in err)
        winner = yaml.safe_load((out / "config.yaml").read_text())["name"]
        outcomes[-1] = (outcomes[-1], winner)
        assert set(pd.read_csv(out / "runs.csv")["experiment"]) == {winner}
    print(f"concurrent runs, 10 trials: {sum(lock for lock, _ in outcomes)} refused by the lock, "
          f"{sum(not lock for lock, _ in outcomes)} by the name check")


@pytest.mark.slow
def test_sigterm_with_workers_leaves_no_process_and_resumes_identically(tmp_path, held_run):
    """SIGTERM to a run of two worker processes, one of them held in a cell after five cells are saved (a
    state, not a time): exit 130 in one line, no process of the run left, and a resume byte-identical."""
    raw = {**PSI, "rho": [20, 100], "repetitions": 8, "chunk_size": 2, "n_jobs": 2,
           "methods": ["copsi", "psi-sr", "uniform", PAUSED], "cost_modes": ["deterministic", "stochastic"]}
    cfg = tmp_path / "t.yaml"
    cfg.write_text(yaml.safe_dump({**raw, "output": str(tmp_path / "term")}))
    proc = held_run(cfg)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=SAFETY_S)
    assert proc.returncode == 130 and "interrupted:" in err and "Traceback" not in err
    wait_for(lambda: not session(proc.pid), "no process of the run")  # a worker left would outlast the wait
    assert cli("run", cfg, "--quiet").exit_code == 0
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({**raw, "output": str(tmp_path / "clean")}))
    assert cli("run", tmp_path / "c.yaml", "--quiet").exit_code == 0
    assert (tmp_path / "term" / "runs.csv").read_bytes() == (tmp_path / "clean" / "runs.csv").read_bytes()


@pytest.mark.slow
def test_disk_full_during_a_run_is_one_line_and_keeps_other_results(tmp_path):
    small = tmp_path / "small"
    small.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(small)],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs a small tmpfs (root)")
    try:
        assert run_config(tmp_path, PSI, small / "kept").exit_code == 0
        before = checksums(small / "kept")
        full = {**ONLINE, "name": "big", "rho": [2, 4, 8], "repetitions": 30, "chunk_size": 10}
        result = run_config(tmp_path, full, small / "big")
        one_line_error(result, "No space left on device")
        assert checksums(small / "kept") == before
    finally:
        subprocess.run(["umount", str(small)], check=False)
