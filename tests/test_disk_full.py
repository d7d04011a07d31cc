"""A full disk while cabench writes: one line naming the file it could not write, exit 2, every file written
before kept, and the same command, once there is room again, finishing as a clean run would.

The disk is filled in process: a write the test chooses fails with ``ENOSPC`` as a real one does (an OSError
with no file name of its own)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest
import yaml

from cabench.data.dataset import load_dataset
from tests.conftest import DATA, FIVE, ROOT, SAFETY_S, spread_logs, tiny_logs, write_dataset
from tests.test_torture import checksums, cli, one_line_error

FIVE_PSI = {"name": "five_psi", "dataset": FIVE, "setting": "psi", "rho": [30, 100], "methods": ["copsi-r", "psi-sr"],
            "repetitions": 6, "chunk_size": 3, "backend": "sequential"}


def disk_full(*_args, **_kwargs) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def run(tmp_path: Path, out: Path, *flags: str, **changes) -> object:
    cfg = tmp_path / f"{out.name}.yaml"
    cfg.write_text(yaml.safe_dump({**FIVE_PSI, **changes, "output": str(out)}))
    return cli("run", cfg, "--quiet", *flags)


def test_a_full_disk_names_the_file_it_could_not_write(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "fsync", disk_full)  # the first file written: a cell of the cache
    result = run(tmp_path, tmp_path / "out")
    monkeypatch.undo()
    one_line_error(result, f"{tmp_path / 'out' / 'cells'}{os.sep}")
    assert "No space left on device" in result.stderr
    assert not [p for p in (tmp_path / "out").rglob("*") if p.name.endswith(".tmp")]
    assert checksums(tmp_path / "out") == {}  # no cell is sealed, no table written


def test_a_full_disk_before_the_cells_folder_is_made_says_so_not_that_the_folder_is_not_writable(tmp_path,
                                                                                                  monkeypatch):
    """Not even ``cells/`` can be made on a full disk: the output folder is named with the system's reason, and is
    not said to be unwritable; once there is room the same command runs."""
    mkdir = Path.mkdir

    def full(self, *args, **kwargs):
        if self.name == "cells":
            disk_full()
        return mkdir(self, *args, **kwargs)
    monkeypatch.setattr(Path, "mkdir", full)
    result = run(tmp_path, tmp_path / "out")
    monkeypatch.undo()
    assert result.exit_code == 2 and result.stderr.splitlines() == [
        f"error: {tmp_path / 'out'}: cannot write in the output folder (No space left on device); make room, or pass "
        "--out with a folder on a disk with room"]
    assert not (tmp_path / "out" / "cells").exists()
    assert run(tmp_path, tmp_path / "out").exit_code == 0 and (tmp_path / "out" / "cells").is_dir()


def fail_on(name: str):
    """``os.replace`` failing, as on a full disk, when it would put the file ``name`` in place."""
    replace = os.replace

    def failing(src, dst, *args, **kwargs):
        if Path(dst).name == name:
            disk_full()
        return replace(src, dst, *args, **kwargs)
    return failing


@pytest.mark.parametrize("table", ["runs.csv", "config.yaml"])
def test_a_run_stopped_by_a_full_disk_while_writing_its_tables_resumes_as_a_clean_run(tmp_path, monkeypatch, table):
    out = tmp_path / "out"
    assert run(tmp_path, out).exit_code == 0
    clean = checksums(out)
    shutil.rmtree(out)
    monkeypatch.setattr(os, "replace", fail_on(table))  # arms.csv and dataset.csv are written, config.yaml is not
    result = run(tmp_path, out)
    monkeypatch.undo()
    one_line_error(result, str(out / table))
    assert (out / "arms.csv").is_file() and not (out / "config.yaml").is_file()
    (out / f".{table}.k1ll3d.tmp").write_text("the part a killed run leaves")
    resumed = run(tmp_path, out)
    assert resumed.exit_code == 0, resumed.stderr
    assert checksums(out) == clean


def test_a_tune_stopped_while_writing_leaves_nothing_that_stops_a_run(tmp_path):
    """`cabench tune` writes tune.csv and tune.yaml into the experiment's folder before any run; one stopped while
    writing them leaves their temporary files, which a run neither takes for another experiment's nor removes (a
    tune holds no lock: it may be writing them still)."""
    out = tmp_path / "out"
    out.mkdir()
    left = [out / ".tune.yaml.k1ll3d.tmp", out / ".tune.csv.k1ll3d.tmp"]
    for path in left:
        path.write_text("the part a stopped tune leaves")
    done = run(tmp_path, out)
    assert done.exit_code == 0, done.stderr
    assert all(path.read_text() == "the part a stopped tune leaves" for path in left)
    (out / ".notes.txt.k1ll3d.tmp").write_text("someone else's")
    (out / "config.yaml").unlink()
    one_line_error(run(tmp_path, out), "folder holds '.notes.txt.k1ll3d.tmp' and no config.yaml")


def test_tables_another_experiment_left_are_still_refused(tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setattr(os, "replace", fail_on("config.yaml"))
    one_line_error(run(tmp_path, out), str(out / "config.yaml"))
    monkeypatch.undo()
    before = checksums(out)
    one_line_error(run(tmp_path, out, name="other", seed=1), "folder holds 'arms.csv' and no config.yaml")
    assert checksums(out) == before


def test_a_full_disk_keeps_the_figure_and_table_files_there(tmp_path, monkeypatch):
    """``data landscape -o``, ``data table1 -o``, ``plot`` and ``plan`` over files they wrote before: a write failing
    leaves each file as it was (never cut), in one line naming it."""
    fig, table = tmp_path / "fig1.png", tmp_path / "table1.csv"
    # two small datasets: what is checked is the file kept whole, not the shipped logs drawn
    one = write_dataset(tmp_path / "data" / "one", spread_logs(6, 30, seed=3), split={"profiling_size": 10, "seed": 0})
    two = write_dataset(tmp_path / "data" / "two", spread_logs(4, 30, seed=5), split={"profiling_size": 10, "seed": 0})
    assert cli("data", "landscape", one, "-o", fig).exit_code == 0
    assert cli("data", "table1", one, "-o", table).exit_code == 0
    out = tmp_path / "results" / "five_psi"
    assert run(tmp_path, out).exit_code == 0
    assert cli("plot", tmp_path / "results", "--format", "png").exit_code == 0
    plan = ["plan", tmp_path / "five_psi.yaml", "--target", "f1>=0.9", "--draws", "2", "--repetitions", "4",
            "--max-share", "2", "--quiet", "--out", tmp_path / "plan"]
    assert cli(*plan).exit_code == 0
    before = checksums(tmp_path)
    (tmp_path / "results" / "figures.csv").unlink()  # every figure is drawn again
    del before["results/figures.csv"]
    figure = sorted((tmp_path / "results" / "figures").glob("*.png"))[0]
    for args, failing in ((("data", "landscape", two, one, "-o", fig), fig),
                          (("data", "table1", two, one, "-o", table), table),
                          (("plot", tmp_path / "results", "--format", "png"), figure),
                          (plan, tmp_path / "plan" / "plan.png")):
        monkeypatch.setattr(os, "replace", fail_on(failing.name))
        result = cli(*args)
        monkeypatch.undo()
        one_line_error(result, f"{failing}: ")
        assert checksums(tmp_path) == before, args


def no_room_for(name: str):
    """``tempfile.mkstemp`` failing, as on a full disk, for the temporary file of ``name``."""
    mkstemp = tempfile.mkstemp

    def failing(*args, **kwargs):
        if str(kwargs.get("prefix", "")).startswith(f".{name}."):
            disk_full()
        return mkstemp(*args, **kwargs)
    return failing


def test_a_full_disk_while_replacing_results_keeps_every_table_as_it_was(tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert run(tmp_path, out).exit_code == 0
    tables = {name: digest for name, digest in checksums(out).items() if not name.startswith("cells/")}
    monkeypatch.setattr(tempfile, "mkstemp", no_room_for("runs.csv"))  # arms.csv and dataset.csv come before it
    result = run(tmp_path, out, "--replace", seed=1)
    monkeypatch.undo()
    one_line_error(result, f"{out / 'runs.csv'}: No space left on device")
    assert {name: digest for name, digest in checksums(out).items() if not name.startswith("cells/")} == tables
    assert not list(out.glob(".*.tmp"))
    assert run(tmp_path, out, "--replace", seed=1).exit_code == 0
    assert run(tmp_path, tmp_path / "clean", seed=1).exit_code == 0
    replaced, clean = checksums(out), checksums(tmp_path / "clean")
    assert {n: d for n, d in replaced.items() if n != "config.yaml" and n in tables} == \
        {n: d for n, d in clean.items() if n != "config.yaml" and n in tables}


def test_a_full_disk_while_writing_the_reports_keeps_both_as_they_were(tmp_path, monkeypatch):
    results = tmp_path / "results"
    assert run(tmp_path, results / "five_psi").exit_code == 0
    assert cli("report", results).exit_code == 0
    before = checksums(results)
    monkeypatch.setattr(tempfile, "mkstemp", no_room_for("REPORT.html"))  # REPORT.md is written before it
    result = cli("report", results, "--require", "objective1>=0.5")
    monkeypatch.undo()
    one_line_error(result, f"{results / 'REPORT.html'}: cannot write the report (No space left on device)")
    assert checksums(results) == before


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (every write to it fails: disk full)")
@pytest.mark.parametrize("args", [["data", "describe", DATA / "gsm8k", "--json"],
                                  ["data", "table1", DATA / "gsm8k", "-o", "TABLE"]], ids=["describe", "table1"])
def test_output_to_a_full_disk_is_one_line_and_exit_2(tmp_path, args):
    """``cabench ... > file`` on a full disk: one line naming standard output, no traceback, exit 2; what the command
    writes itself is written."""
    table = tmp_path / "table1.csv"
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "cabench.cli", *[table if a == "TABLE" else a for a in args]],
                              stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=SAFETY_S)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: standard output (/dev/full): No space left on device"), lines[0]
    assert table.is_file() == (args[1] == "table1")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (every write to it fails: disk full)")
def test_a_line_import_prints_to_a_full_disk_names_standard_output(tmp_path):
    """`data import` prints as it reads (inside the command, where a file's error names the file): standard output
    on a full disk is named as such, not taken for a file it writes."""
    source = tmp_path / "logs.csv"
    tiny_logs(n_configs=4).to_csv(source, index=False)
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "cabench.cli", "data", "import", source, "--out",
                               tmp_path / "ds"], stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                              timeout=SAFETY_S)
    assert done.returncode == 2 and done.stderr == ("error: standard output (/dev/full): No space left on device; "
                                                    "the command stopped there, keeping what it had written (a run "
                                                    "resumes from its saved cells)\n"), done.stderr
    assert not (tmp_path / "ds").exists()  # it printed what it read before writing anything


def test_a_full_disk_while_importing_keeps_the_dataset_and_leaves_no_partial_copy(tmp_path, monkeypatch):
    import cabench.data.importer

    source = tmp_path / "logs.csv"
    tiny_logs(n_configs=4).to_csv(source, index=False)
    dest = write_dataset(tmp_path / "ds", tiny_logs(), split={"profiling_size": 5})
    before = checksums(tmp_path)
    monkeypatch.setattr(cabench.data.importer, "write_metadata", disk_full)  # logs.csv.gz is written before it
    result = cli("data", "import", source, "--out", dest, "--force")
    monkeypatch.undo()
    one_line_error(result, f"{dest}: cannot write the dataset (No space left on device); a dataset already there")
    assert checksums(tmp_path) == before  # and no part of the new one takes the room left
    assert cli("data", "import", source, "--out", dest, "--force").exit_code == 0
    assert load_dataset(dest).n_arms == 4


def test_a_full_disk_while_a_live_run_appends_names_the_file(tmp_path, monkeypatch):
    """``cabench live`` appends each call to ``calls.jsonl`` and ``logs.csv``: a failing append names the file."""
    from cabench.live.journal import Journal, LogFile

    journal, logs = Journal(tmp_path), LogFile(tmp_path, [])
    done = {"key": "e:0", "config": "a", "instance": "q", "ok": True, "charged": 40.0, "tokens": 40.0, "model": "m",
            "prompting": "direct", "temperature": 0.0, "max_tokens": 64, "correct": 1.0, "latency_s": 0.5}
    monkeypatch.setattr(os, "fsync", disk_full)
    for append, name in ((lambda: journal.start("e:0", "a", "q", 90.0, 90.0), "calls.jsonl"),
                         (lambda: logs.append(done), "logs.csv")):
        with pytest.raises(OSError) as info:
            append()
        assert (info.value.errno, info.value.filename) == (errno.ENOSPC, str(tmp_path / name))


def test_a_read_only_place_for_an_import_names_the_dataset_folder_not_a_staging_one(tmp_path, monkeypatch):
    source = tmp_path / "logs.csv"
    tiny_logs().to_csv(source, index=False)

    def read_only(dir=None, prefix="", **_kwargs):  # noqa: A002 - tempfile.mkdtemp's own name
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.path.join(dir, f"{prefix}x1y2z3"))
    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    result = cli("data", "import", source, "--out", tmp_path / "ds")
    advised = cli("advise", source, "--budget", "2000tokens", "--out", tmp_path / "advice", "--quiet")
    monkeypatch.undo()
    one_line_error(result, f"error: {tmp_path / 'ds'}: cannot write the dataset (Read-only file system)")
    one_line_error(advised, f"error: {tmp_path / 'advice' / 'data' / 'logs'}: Read-only file system")


def test_a_full_disk_while_advise_imports_names_the_dataset_folder(tmp_path, monkeypatch):
    import cabench.data.importer

    source = tmp_path / "evals.csv"
    tiny_logs().to_csv(source, index=False)
    monkeypatch.setattr(cabench.data.importer, "write_metadata", disk_full)
    result = cli("advise", source, "--budget", "2000tokens", "--out", tmp_path / "advice", "--quiet")
    monkeypatch.undo()
    one_line_error(result, f"error: {tmp_path / 'advice' / 'data' / 'evals'}: cannot write the dataset (No space")
    assert not [p for p in (tmp_path / "advice").rglob("*") if p.is_file()]


def test_a_full_disk_while_replacing_a_plan_keeps_the_plan_there_whole(tmp_path, monkeypatch):
    (tmp_path / "five_psi.yaml").write_text(yaml.safe_dump({**FIVE_PSI, "output": str(tmp_path / "out")}))
    plan = ["plan", tmp_path / "five_psi.yaml", "--draws", "2", "--repetitions", "4", "--max-share", "2", "--quiet",
            "--out", tmp_path / "plan"]
    assert cli(*plan, "--target", "f1>=0.9").exit_code == 0
    before = checksums(tmp_path / "plan")
    monkeypatch.setattr(tempfile, "mkstemp", no_room_for("plan.png"))  # plan.csv and plan_curves.csv come first
    result = cli(*plan, "--target", "error<=0.2", "--force")
    monkeypatch.undo()
    one_line_error(result, f"{tmp_path / 'plan' / 'plan.png'}: No space left on device")
    assert checksums(tmp_path / "plan") == before


def test_a_full_disk_while_tuning_again_keeps_both_files(tmp_path, monkeypatch):
    raw = {"name": "tuned", "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2], "methods": ["cohv-ucb"],
           "output": str(tmp_path / "out"), "backend": "sequential"}
    config = tmp_path / "tuned.yaml"
    for eta, room in ((0.05, True), (0.1, False)):
        config.write_text(yaml.safe_dump({**raw, "tune": {"s_r": [0.01], "s_c": [0.01, 0.1], "eta": [eta], "rho": [2],
                                                          "repetitions": 2}}))
        if room:
            assert cli("tune", config, "--quiet").exit_code == 0
            before = checksums(tmp_path / "out")
            continue
        monkeypatch.setattr(tempfile, "mkstemp", no_room_for("tune.yaml"))  # tune.csv is written before it
        result = cli("tune", config, "--quiet")
        monkeypatch.undo()
        one_line_error(result, f"{tmp_path / 'out' / 'tune.yaml'}: No space left on device")
        assert checksums(tmp_path / "out") == before


def test_a_full_disk_with_workers_running_is_one_line(tmp_path, monkeypatch):
    """The run stops at the first cell it cannot save while workers still compute others: joblib's warning about the
    tasks it cancels is no second line."""
    monkeypatch.setattr(os, "fsync", disk_full)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = run(tmp_path, tmp_path / "out", backend="loky", n_jobs=2, repetitions=12, chunk_size=2)
    monkeypatch.undo()
    one_line_error(result, f"{tmp_path / 'out' / 'cells'}{os.sep}")
    assert not [str(w.message) for w in seen if "tasks" in str(w.message)]


@pytest.mark.parametrize("args", [["data", "describe", DATA / "gsm8k", "--json"],
                                  ["recommend", ROOT / "tests" / "fixtures" / "no-such-results"],
                                  ["--help"], ["run", "--help"]],
                         ids=["describe", "an error line", "help", "a command's help"])
def test_standard_output_whose_reader_left_is_one_line_and_exit_2(args):
    """``cabench data describe ... | head -0``: a write outside the command's guard to a pipe whose reader has left
    ended the command with typer's quiet exit 1, where one written inside it said so in one line, exit 2. (A
    command that fails says its own error, on standard error, as ever.) The help (``cabench --help | head -1``),
    written by rich, ended with a quiet exit 1 too."""
    read, write = os.pipe()
    os.close(read)  # the reader left before the command wrote
    try:
        done = subprocess.run([sys.executable, "-m", "cabench.cli", *map(str, args)], stdout=write,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=SAFETY_S)
    finally:
        os.close(write)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    if args[0] != "recommend":
        assert lines == ["error: standard output: Broken pipe; the output is incomplete"]
    else:
        assert "no-such-results" in lines[0]
