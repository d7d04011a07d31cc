"""Running experiments: determinism across workers and chunking, caching, resume, bad input."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.config import load_config, parse_config
from cabench.errors import CabenchError
from cabench.runner import run_experiment
from tests.conftest import DATA, PAUSED, ROOT, SAFETY_S, tiny_logs, write_dataset

ONLINE = {"name": "t_online", "dataset": str(DATA / "gsm8k"), "setting": "online", "rho": [2, 6],
          "methods": ["cohv-ucb", "hv-ucb", "acc-cost-ucb", "uniform"], "repetitions": 6, "chunk_size": 3,
          "trajectories": {"rho": 6, "points": 20}}
PSI = {"name": "t_psi", "dataset": str(DATA / "piqa"), "setting": "psi", "arms": {"preset": "paper-subset"},
       "rho": [20, 100], "methods": ["copsi", "psi-sr", "uniform"], "cost_modes": ["deterministic", "stochastic"],
       "repetitions": 8, "chunk_size": 4}


def _done(cells):
    """Finished cells: their seals (``<key>.ok``, written last)."""
    return list(cells.glob("*.ok"))


def _run(raw, out, **kw):
    cfg = parse_config({**raw, "output": str(out)}, "t.yaml", overrides=kw.pop("overrides", None))
    return run_experiment(cfg, quiet=True, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("raw", [ONLINE, PSI], ids=["online", "psi"])
def test_runs_identical_for_workers_and_chunks(tmp_path, raw):
    _run(raw, tmp_path / "a", overrides={"n_jobs": 1})
    _run(raw, tmp_path / "b", overrides={"n_jobs": 2})
    _run(raw, tmp_path / "c", overrides={"n_jobs": 2, "chunk_size": 5, "backend": "threading"})
    _run(raw, tmp_path / "d", overrides={"backend": "sequential", "chunk_size": 1})
    first = (tmp_path / "a" / "runs.csv").read_bytes()
    for other in "bcd":
        assert (tmp_path / other / "runs.csv").read_bytes() == first
    if raw is ONLINE:
        assert (tmp_path / "c" / "trajectories.csv").read_bytes() == (tmp_path / "a" / "trajectories.csv").read_bytes()


def test_runs_csv_columns(tmp_path, request):
    old = os.umask(0o022)
    request.addfinalizer(lambda: os.umask(old))
    _run(ONLINE, tmp_path / "o")
    runs = pd.read_csv(tmp_path / "o" / "runs.csv")
    assert list(runs.columns[:14]) == ["experiment", "config_hash", "dataset", "setting", "method", "rho",
                                       "budget_tokens", "rep", "pulls", "spend_tokens", "regret_hv", "regret_std",
                                       "frac_optimal", "exploited"]
    assert len(runs) == 4 * 2 * 6 and set(runs["s_r"]) == {0.01} and set(runs["experiment"]) == {"t_online"}
    arms = pd.read_csv(tmp_path / "o" / "arms.csv")
    assert len(arms) == 108 and set(runs["exploited"]) <= set(arms["config_id"])
    sel = pd.read_csv(tmp_path / "o" / "selections.csv.gz")
    assert len(sel) == 4 * 2 * 6 * 108
    per_run = sel.groupby(["method", "rho", "rep"])["pulls"].sum().to_numpy()
    assert (per_run == runs.sort_values(["method", "rho", "rep"])["pulls"].to_numpy()).all()
    traj = pd.read_csv(tmp_path / "o" / "trajectories.csv")
    assert len(traj) == 4 * 20 and (traj["n_reps"] <= 6).all() and set(traj["window"]) == {50}
    _run(PSI, tmp_path / "p")
    psi = pd.read_csv(tmp_path / "p" / "runs.csv")
    assert list(psi.columns[:13]) == ["experiment", "config_hash", "dataset", "setting", "method", "cost_mode", "rho",
                                      "budget_tokens", "rep", "error", "f1", "size", "spend_tokens"]
    assert len(psi) == 3 * 2 * 2 * 8 and psi["config_hash"].nunique() == 1
    sel = pd.read_csv(tmp_path / "p" / "selections.csv.gz")
    assert len(sel) == 3 * 2 * 2 * 8 * 14
    size = sel.groupby(["method", "cost_mode", "rho", "rep"], sort=False)["returned"].sum()
    assert (size.to_numpy() == psi["size"].to_numpy()).all()
    meta = yaml.safe_load((tmp_path / "p" / "config.yaml").read_text())
    assert meta["surrogate"] is True and meta["cabench_version"] and meta["git_commit"]
    assert meta["config_hash"] == psi["config_hash"].iloc[0] and meta["paper_experiment"] == "psi-stochastic"
    for name in ("runs.csv", "summary.csv", "selections.csv.gz", "arms.csv", "dataset.csv", "config.yaml"):
        assert (tmp_path / "p" / name).stat().st_mode & 0o044 == 0o044, name  # readable by others (umask 022)


def test_second_run_reuses_every_cell(tmp_path):
    a = _run(PSI, tmp_path / "r")
    before = (tmp_path / "r" / "runs.csv").read_bytes()
    b = _run(PSI, tmp_path / "r")
    assert (a.computed, b.reused, b.computed) == (a.cells, a.cells, 0)
    assert (tmp_path / "r" / "runs.csv").read_bytes() == before
    c = _run(PSI, tmp_path / "r", force=True)
    assert c.computed == c.cells and (tmp_path / "r" / "runs.csv").read_bytes() == before


@pytest.mark.slow
def test_changed_config_never_reuses_stale_cells(tmp_path):
    _run(PSI, tmp_path / "s")
    with pytest.raises(CabenchError, match="holds experiment 't_psi' with config hash [0-9a-f]{16}, and this "
                                           "config's hash is [0-9a-f]{16} .* --replace"):
        _run({**PSI, "seed": 1}, tmp_path / "s")  # a copied config with a changed seed never replaces silently
    changed = _run({**PSI, "seed": 1}, tmp_path / "s", replace=True)
    assert changed.reused == 0
    grown = _run({**PSI, "seed": 1, "rho": [20, 100, 400]}, tmp_path / "s", replace=True)
    assert grown.reused == changed.cells and grown.computed == grown.cells - changed.cells
    _run({**PSI, "seed": 1, "rho": [20, 100, 400]}, tmp_path / "fresh")
    assert (tmp_path / "s" / "runs.csv").read_bytes() == (tmp_path / "fresh" / "runs.csv").read_bytes()


def test_changed_dataset_never_reuses_stale_cells(tmp_path):
    import shutil

    data = tmp_path / "data"
    shutil.copytree(DATA / "piqa", data)
    raw = {**PSI, "dataset": str(data)}
    _run(raw, tmp_path / "x")
    meta = (data / "dataset.yaml").read_text()
    frame = pd.read_csv(data / "logs.csv.gz")
    frame.loc[0, "tokens"] += 1
    frame.to_csv(data / "logs.csv.gz", index=False)
    (data / "dataset.yaml").write_text(meta)
    assert _run(raw, tmp_path / "x", replace=True).reused == 0


def test_results_folder_of_another_experiment_is_refused(tmp_path):
    _run(PSI, tmp_path / "shared")
    before = (tmp_path / "shared" / "runs.csv").read_bytes()
    with pytest.raises(CabenchError, match="holds experiment 't_psi', not 't_online'"):
        _run(ONLINE, tmp_path / "shared")
    assert (tmp_path / "shared" / "runs.csv").read_bytes() == before


def test_budget_too_small_fails_before_writing(tmp_path):
    with pytest.raises(CabenchError, match=r"rho: rho 2 is too small for CoPSI on 14 arms.*smallest workable rho"):
        _run({**PSI, "rho": [2, 20]}, tmp_path / "small", strict=True)
    assert not (tmp_path / "small").exists()
    with pytest.raises(CabenchError, match=r"smallest workable rho"):  # nothing feasible: refused without --strict
        _run({**PSI, "rho": [0.5, 0.8]}, tmp_path / "none")
    assert not (tmp_path / "none").exists()


def test_stated_budget_too_small_names_the_budget_key(tmp_path):
    """A budget stated in tokens that cannot pay one initial pull of every arm is reported against
    budget.tokens and the stated amount, not against a rho key the config never gave."""
    raw = {k: v for k, v in ONLINE.items() if k not in ("rho", "trajectories")}
    with pytest.raises(CabenchError) as info:
        _run({**raw, "budget": {"tokens": 1}}, tmp_path / "small")
    msg = str(info.value)
    assert msg.startswith("t.yaml: budget.tokens: 1 tokens is too small (rho 6.88902e-05 cannot pay")
    assert not (tmp_path / "small").exists()


def test_infeasible_cells_are_skipped_and_recorded(tmp_path):
    raw = {**PSI, "rho": [2, 20], "methods": ["copsi", "psi-sr", "uniform"]}
    said: list[str] = []
    out = _run(raw, tmp_path / "skip", echo=said.append)
    runs = pd.read_csv(tmp_path / "skip" / "runs.csv")
    summary = pd.read_csv(tmp_path / "skip" / "summary.csv")
    skipped = summary[summary["status"] != "ok"]
    assert set(zip(skipped["method"], skipped["rho"])) == {("copsi", 2.0), ("psi-sr", 2.0)}
    assert skipped["status"].str.contains("smallest workable rho").all() and (skipped["n"] == 0).all()
    assert len(skipped) == 2 * 2  # both cost modes
    assert set(zip(runs["method"], runs["rho"])) == {("uniform", 2.0), ("copsi", 20.0), ("psi-sr", 20.0),
                                                     ("uniform", 20.0)}
    meta = yaml.safe_load((tmp_path / "skip" / "config.yaml").read_text())
    assert {(i["method"], i["rho"]) for i in meta["infeasible"]} == {("copsi", 2.0), ("psi-sr", 2.0)}
    reasons = {i["method"]: i["reason"] for i in meta["infeasible"]}
    assert reasons["copsi"].startswith("rho 2 is too small for CoPSI on 14 arms")
    assert [(r.method, r.status) for r in skipped.itertuples()] == [  # the reports' words, from one constant
        (m, f"not run: {reasons[m]}") for m in ("copsi", "copsi", "psi-sr", "psi-sr")]
    # said before the run, by the names the table gives (it said "skipped copsi" before the table's "CoPSI")
    assert [line for line in said if "will not run" in line] == [
        f"{raw['name']}: {name} at rho 2 will not run: {reasons[m]}" for m, name in (("copsi", "CoPSI"),
                                                                                     ("psi-sr", "PSI-SR"))]
    from cabench.summaries import format_summary

    printed = format_summary(out.summary, out.cost_unit).splitlines()
    assert f"CoPSI (stochastic) at rho 2: not run: {reasons['copsi']}" in printed
    older = out.summary.assign(status=out.summary["status"].str.replace("not run: ", "infeasible: ", regex=False))
    printed = format_summary(older, out.cost_unit).splitlines()  # an older cabench's summary.csv reads as it did
    assert f"CoPSI (stochastic) at rho 2: infeasible: {reasons['copsi']}" in printed and len(printed) == 1 + 8 + 4
    assert out.cells == 4 * 2 * 2  # (uniform at 4, three methods at 20) x 2 cost modes x 2 chunks
    from cabench.report import build_report

    report = build_report(tmp_path)
    assert report.count("- not run: ") == 2 and "None" not in report


def test_budget_beyond_evaluating_everything_is_warned(tmp_path):
    """B = rho K cbar above the tokens of every configuration on every evaluation instance: one warning line
    per such rho, none below; the run goes on."""
    from cabench.data.dataset import load_dataset

    ds = load_dataset(DATA / "piqa")
    subset = parse_config({**PSI, "rho": [20, 100000]}, "c.yaml").arms.select(ds.configs, source="arms")
    exhaustive = float(ds.tokens_eval[subset].sum())
    cbar = float(ds.profile_cost[subset].mean())
    rho_at = exhaustive / (len(subset) * cbar)  # the rho whose B equals the exhaustive evaluation
    lines = []
    raw = {**PSI, "rho": [20, round(1.5 * rho_at)], "methods": ["uniform"], "repetitions": 2,
           "cost_modes": ["deterministic"], "chunk_size": 2}
    _run(raw, tmp_path / "warned", echo=lines.append)
    warned = [line for line in lines if "warning:" in line]
    assert len(warned) == 1 and f"rho {round(1.5 * rho_at)}:" in warned[0], lines
    assert f"({exhaustive:,.0f} tokens)" in warned[0] and 20 < rho_at < 1.5 * rho_at


def test_unwritable_output_folder(tmp_path):
    if os.geteuid() == 0:
        target = "/proc/cabench-results"  # not writable even for root
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        target = str(locked / "out")
    with pytest.raises(CabenchError, match="output folder is not writable|not a folder"):
        _run(PSI, target)


@pytest.mark.slow
def test_kill_then_resume_gives_identical_runs(tmp_path, held_run):
    """kill -9 while a cell is computing, after five cells are saved (a state the run is held at, not a time):
    the resume reuses every saved cell and ends byte-identical to a run never killed."""
    raw = {**PSI, "rho": [20, 100], "methods": [*PSI["methods"], PAUSED], "repetitions": 8, "chunk_size": 2,
           "n_jobs": 1}
    config = tmp_path / "exp.yaml"
    config.write_text(yaml.safe_dump({**raw, "output": str(tmp_path / "killed")}))
    proc = held_run(config)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=SAFETY_S)
    done = len(_done(tmp_path / "killed" / "cells"))
    assert 5 <= done < 4 * 2 * 2 * 4, done  # killed mid-run
    resumed = run_experiment(load_config(config), quiet=True)
    assert resumed.reused >= done and resumed.computed == resumed.cells - resumed.reused
    _run(raw, tmp_path / "clean")
    assert (tmp_path / "killed" / "runs.csv").read_bytes() == (tmp_path / "clean" / "runs.csv").read_bytes()


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_resumes(tmp_path, held_run):
    """SIGINT while a cell is computing, after five cells are saved (a state the run is held at, not a time):
    exit 130, one line, and a resume that reuses the saved cells and ends byte-identical."""
    raw = {**PSI, "rho": [20, 100], "methods": ["copsi", PAUSED], "repetitions": 16, "chunk_size": 4, "n_jobs": 1}
    config = tmp_path / "exp.yaml"
    config.write_text(yaml.safe_dump({**raw, "output": str(tmp_path / "stopped")}))
    proc = held_run(config)
    done = len(_done(tmp_path / "stopped" / "cells"))
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=SAFETY_S)
    assert proc.returncode == 130
    assert "interrupted:" in err and "run the same command again to resume" in err and "Traceback" not in err
    resumed = run_experiment(load_config(config), quiet=True)
    assert done >= 5 and resumed.reused >= done and resumed.computed == resumed.cells - resumed.reused
    _run(raw, tmp_path / "clean")
    assert (tmp_path / "stopped" / "runs.csv").read_bytes() == (tmp_path / "clean" / "runs.csv").read_bytes()


SYNTHETIC = {"synthetic": {"means": [[0.5, 0.5], [0.6, 0.4], [0.3, 0.7], [0.2, 0.2]], "costs": [10, 20, 15, 12]}}


def _cabench_run(config: Path, *extra: str, **environ: str) -> subprocess.CompletedProcess:
    """``cabench run CONFIG --quiet`` in a process of its own, SIGINT not ignored there (a shell's background job
    would pass that on)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **environ}
    return subprocess.run([sys.executable, "-m", "cabench.cli", "run", str(config), "--quiet", *extra], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=SAFETY_S,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_while_a_compiled_kernel_runs_in_the_run_process_stops_cleanly_and_resumes(tmp_path, sig):
    """n_jobs 1: the signal arrives while the online loop's kernel runs in the run's own process (sent from inside
    it by the method's compiled index, after the four cells of CoHV-UCB are saved: a state, not a time). It was
    raised inside numba's callback as the kernel returned (SystemError, a lost interrupt or SIGSEGV); now: exit
    130, one line, the four cells kept, and a resume that reuses them and ends byte-identical."""
    raw = {"name": "in_kernel", "dataset": SYNTHETIC, "setting": "online", "rho": [4, 8], "repetitions": 4,
           "chunk_size": 2, "n_jobs": 1, "methods": ["cohv-ucb", "tests.plugins_hostile.own_process:signals_in_kernel"]}
    config = tmp_path / "exp.yaml"
    config.write_text(yaml.safe_dump({**raw, "output": str(tmp_path / "stopped")}))
    done = _cabench_run(config, CABENCH_TEST_SIGNAL=str(int(sig)))
    cells = tmp_path / "stopped" / "cells"
    assert (done.returncode, done.stderr) == (130, f"interrupted: 4 of 8 cells are saved in {cells}; run the same "
                                                   "command again to resume\n")
    assert len(_done(cells)) == 4 and not (tmp_path / "stopped" / "runs.csv").exists()
    resumed = run_experiment(load_config(config), quiet=True)
    assert (resumed.reused, resumed.computed) == (4, 4)
    _run(raw, tmp_path / "clean")
    assert (tmp_path / "stopped" / "runs.csv").read_bytes() == (tmp_path / "clean" / "runs.csv").read_bytes()


BAD_INPUTS = [
    ("malformed", None, "malformed YAML at line"),
    ("unknown key", {"repetitons": 3}, "repetitons: unknown key; did you mean 'repetitions'?"),
    ("wrong type", {"repetitions": "many"}, "repetitions: expected a whole number, got 'many'"),
    ("missing dataset", {"dataset": "no/such/folder"}, "dataset: folder 'no/such/folder' not found"),
    ("budget too small", {"rho": [0.5, 0.8]}, "smallest workable rho is"),
    ("corrupted log", {"dataset": "{corrupt}"}, "column 'latency_s' is NaN at row 4"),
    ("unwritable output", {"output": "/proc/cabench-out"}, "output folder is not writable"),
    ("other experiment", {"name": "someone_else"}, "holds experiment 't_psi', not 'someone_else'"),
]


@pytest.fixture(scope="module")
def kept_psi(tmp_path_factory) -> Path:
    """Finished results that a bad command must leave as they are, run once (each test changes a copy)."""
    out = tmp_path_factory.mktemp("kept") / "kept"
    _run(PSI, out)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("label, change, words", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_one_line_exit_2_and_keeps_results(tmp_path, kept_psi, label, change, words):
    out = tmp_path / "kept"
    shutil.copytree(kept_psi, out)
    runs = out / "runs.csv"
    before, stamp = runs.read_bytes(), runs.stat().st_mtime_ns
    config = tmp_path / "bad.yaml"
    if change is None:
        config.write_text(f"name: t_psi\noutput: {out}\nrho: [20, 100\n")
    else:
        raw = {**PSI, "output": str(out), **change}
        if raw["dataset"] == "{corrupt}":
            corrupt = tmp_path / "corrupt"
            shutil.copytree(DATA / "piqa", corrupt)
            frame = pd.read_csv(corrupt / "logs.csv.gz", dtype={"instance_id": str})
            frame.loc[3, "latency_s"] = float("nan")
            frame.to_csv(corrupt / "logs.csv.gz", index=False)
            raw["dataset"] = str(corrupt)
        config.write_text(yaml.safe_dump(raw))
    done = CliRunner().invoke(app, ["run", str(config)])  # an exception escaping the command is exit code 1
    assert done.exit_code == 2, done.stderr
    assert words in done.stderr and done.stderr.count("\n") == 1 and done.stderr.startswith("error: ")
    assert runs.read_bytes() == before and runs.stat().st_mtime_ns == stamp


def test_a_configuration_far_cheaper_than_the_rest_is_warned_of_before_the_run(tmp_path):
    """arm1 costs 0.001 tokens a call against a mean of 0.667: a repetition at rho 4 (B = 4 x 3 x 0.667 = 8.004 tokens)
    may pull it 8,004 times instead of about 12; the run says so before it starts. Costs within 100x of the mean
    get no warning."""
    raw = {"name": "cheap", "dataset": {"synthetic": {"name": "cheap", "means": [[0.9, 0.2], [0.5, 0.5], [0.2, 0.9]],
                                                      "costs": [1, 0.001, 1], "noise": "gaussian", "sigma": 0.3}},
           "setting": "online", "rho": [2, 4], "methods": ["cohv-ucb"], "repetitions": 1,
           "output": str(tmp_path / "cheap")}
    (tmp_path / "cheap.yaml").write_text(yaml.safe_dump(raw))
    result = CliRunner().invoke(app, ["run", str(tmp_path / "cheap.yaml")])
    assert result.exit_code == 0, result.output
    assert ("cheap: warning: arm1 costs 0.001 tokens a call, 1/667 of the mean 0.667 tokens: at rho 4 a repetition "
            "may pull it up to 8,004 times (B / c_i) against about 12 pulls at the mean cost") in result.output
    assert result.output.index("warning: arm1") < result.output.index("wrote ")
    pulls = pd.read_csv(tmp_path / "cheap" / "runs.csv").set_index("rho")["pulls"]
    assert pulls[4] > 1000  # the warning is borne out: nearly every pull went to the cheap arm
    raw["dataset"]["synthetic"]["costs"] = [1, 0.01, 1]
    raw["output"] = str(tmp_path / "fine")
    (tmp_path / "fine.yaml").write_text(yaml.safe_dump(raw))
    result = CliRunner().invoke(app, ["run", str(tmp_path / "fine.yaml")])
    assert result.exit_code == 0 and "warning" not in result.output


def test_an_experiment_config_kept_in_its_own_output_folder_is_never_replaced(tmp_path):
    """`output:` naming the folder that holds the config itself, as config.yaml: the run took it, naming an experiment
    and a setting, for the record a run writes, replaced it with that record (the user's comments and form gone)
    and then refused the same command. The config as its own output folder's config.yaml is refused in one line,
    the file untouched, with --force too (which replaced it, its comments gone and no longer a config)."""
    from typer.testing import CliRunner

    from cabench.cli import app

    out = tmp_path / "exp"
    out.mkdir()
    mine = (f"# my notes: keep rho small\nname: mine\ndataset: {DATA / 'gsm8k'}\narms: {{preset: paper-subset}}\n"
            f"setting: psi\nrho: [20]\nmethods: [copsi]\nrepetitions: 2\noutput: {out}\n")
    (out / "config.yaml").write_text(mine)
    for extra in ((), ("--force",), ("--replace",)):
        done = CliRunner().invoke(app, ["run", str(out / "config.yaml"), "--quiet", *extra])
        assert done.exit_code == 2 and done.stderr == (
            f"error: {out / 'config.yaml'}: the config is its own output folder's config.yaml, which a run replaces "
            "with its record (--force too); keep configs outside results folders, or pass another --out\n")
        assert (out / "config.yaml").read_text() == mine and sorted(p.name for p in out.iterdir()) == ["config.yaml"]


def test_a_run_on_surrogate_logs_says_so_first(tmp_path):
    """The terminal said nothing of surrogate logs (the results' figures and reports do); on real logs it says
    nothing of them."""
    from cabench.paper import SURROGATE_NOTE

    said: list[str] = []
    cfg = parse_config({**PSI, "rho": [20], "methods": ["uniform"], "repetitions": 2, "output": str(tmp_path / "s")},
                       "t.yaml")
    run_experiment(cfg, quiet=False, echo=said.append)
    assert said[0] == f"t_psi: piqa: {SURROGATE_NOTE}; not real model outputs"
    real = write_dataset(tmp_path / "real", tiny_logs(), split={"profiling_size": 10, "seed": 0})
    said.clear()
    cfg = parse_config({"name": "r", "dataset": str(real), "setting": "online", "rho": [2], "methods": ["uniform"],
                        "repetitions": 2, "output": str(tmp_path / "r")}, "r.yaml")
    run_experiment(cfg, quiet=False, echo=said.append)
    assert said and not any(SURROGATE_NOTE in line for line in said)


def test_an_interrupt_after_every_cell_is_saved_says_so(tmp_path, monkeypatch):
    """Ctrl-C while the result files were joined from the saved cells printed a bare 'interrupted'; it says every
    cell is saved, and the same command writes the files from them, running no cell again."""
    from cabench import runner
    from cabench.errors import Interrupted

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    cfg = parse_config({**PSI, "rho": [20], "methods": ["uniform"], "repetitions": 2, "output": str(tmp_path / "r")},
                       "t.yaml")
    monkeypatch.setattr(runner, "_write_tables", stopped)
    with pytest.raises(Interrupted) as exc:
        run_experiment(cfg, quiet=True)
    cells = len(list((tmp_path / "r" / "cells").glob("*.ok")))
    assert str(exc.value) == (f"interrupted: all {cells} cells are saved in {tmp_path / 'r' / 'cells'}; run the "
                              "same command again to write the result files from them")
    monkeypatch.undo()
    again = run_experiment(cfg, quiet=True)
    assert again.cells == cells
    assert again.cells == again.reused and again.computed == 0 and (tmp_path / "r" / "runs.csv").is_file()
