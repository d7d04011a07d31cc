"""Methods of one's own (``module:object``) that misbehave: each is refused in one line naming it, in the
batched engines, in the per-pull policies that ``cabench live`` drives, and through ``cabench run`` with
joblib's process workers; methods that fit their documented signature and return usable values run.

The plugins live in :mod:`tests.plugins_hostile`, importable by name in every worker process."""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from cabench.cli import app
from cabench.errors import CabenchError
from cabench.methods.configured import OnlineMethod
from cabench.methods.user import UserMethodError
from cabench.online import run_online
from cabench.online.reference import reference_online
from cabench.policy import OnlinePolicy, PsiPolicy
from cabench.problem import expand_blocks
from cabench.psi import PsiMethod, run_psi
from cabench.psi.reference import reference_psi
from cabench.streams import stream_keys
from cabench.synthetic import SyntheticSpec, synthetic_problem
from tests.conftest import ROOT, SAFETY_S

RUNNER = CliRunner()
ONLINE = "tests.plugins_hostile.online"
PSI = "tests.plugins_hostile.schedules"
OWN_PROCESS = "tests.plugins_hostile.own_process"
SPEC = SyntheticSpec("hostile", means=((0.5, 0.5), (0.6, 0.4), (0.3, 0.7), (0.2, 0.2)), costs=(10, 20, 15, 12))
PROBLEM = synthetic_problem(SPEC)
KEYS = stream_keys(0, np.arange(3), PROBLEM.arm_ids)


def run(tmp_path: Path, setting: str, methods: list[str], n_jobs: int = 1, command: tuple[str, ...] = ("run",),
        **keys: Any):
    """``cabench run`` (or ``command``) on a tiny synthetic config (and ``keys``); returns the CliRunner result."""
    cfg = {"name": f"hostile_{setting}", "setting": setting, "n_jobs": n_jobs, "repetitions": 4, "seed": 0,
           "dataset": {"synthetic": {"means": [list(m) for m in SPEC.means], "costs": list(SPEC.costs)}},
           "rho": [4] if setting == "online" else [60], "methods": methods, "output": str(tmp_path / "out"), **keys}
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    return RUNNER.invoke(app, [command[0], str(tmp_path / "c.yaml"), "--quiet", *command[1:]])


def one_line(result, *words: str) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


def test_a_method_object_no_worker_can_be_sent_is_one_line_before_any_cell_runs(tmp_path):
    """A callable object holding a lock ran in one process but, with n_jobs 2, ended in joblib's 78-line pickling
    traceback (exit 1). Now one line naming the method and what to do, exit 2, before any cell runs; in one
    process it runs and decides as the index it wraps."""
    line = one_line(run(tmp_path, "online", ["cohv-ucb", f"{ONLINE}:holds_a_lock"], n_jobs=2),
                    f"error: methods: {ONLINE}:holds_a_lock cannot be sent to the loky worker processes (TypeError: "
                    "cannot pickle '_thread.lock' object); run it in this process (backend: threading, or n_jobs: 1")
    assert "Traceback" not in line and not list((tmp_path / "out" / "cells").glob("*.csv.gz"))
    one_line(run(tmp_path / "plan", "online", ["cohv-ucb", f"{ONLINE}:holds_a_lock"], 2,
                 ("plan", "--target", "share>=0.8", "--draws", "2", "--repetitions", "2")),
             f"error: methods: {ONLINE}:holds_a_lock cannot be sent to the loky worker processes")  # plan's too
    threads = run(tmp_path / "threads", "online", [f"{ONLINE}:holds_a_lock"], 2, backend="threading")
    assert threads.exit_code == 0, threads.output  # threads share the process: nothing is pickled
    assert run(tmp_path, "online", [f"{ONLINE}:hv_per_cost", f"{ONLINE}:holds_a_lock"]).exit_code == 0
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    mine = [runs[runs["method"] == f"{ONLINE}:{m}"].drop(columns="method").reset_index(drop=True)
            for m in ("hv_per_cost", "holds_a_lock")]
    pd.testing.assert_frame_equal(*mine)


# --- the signature, checked when the config is read ------------------------------------------------------------


@pytest.mark.parametrize("setting, method, words", [
    ("online", "os:system", "'os:system' takes (command), but an online index function is called as index(n, upper"),
    ("online", "builtins:max", "'builtins:max' has no signature Python can read"),
    ("online", f"{ONLINE}:two_parameters", "takes (n, upper)"),
    ("online", f"{ONLINE}:extra_required", "any further parameter needs a default"),
    ("online", f"{ONLINE}:keyword_required", "takes (n, upper, lower_cost, *, scale)"),
    ("online", f"{PSI}:front_loaded", "takes (budget, l_k, spend, level, active_costs, k_active)"),
    ("psi", f"{ONLINE}:hv_per_cost", "an identification schedule is called as target(budget, l_k, spend, level"),
])
def test_callable_of_another_signature_is_refused_before_anything_runs(tmp_path, setting, method, words):
    """``--methods cohv-ucb,os:system`` and callables that cannot take the setting's arguments."""
    base = "cohv-ucb" if setting == "online" else "copsi"
    one_line(run(tmp_path, setting, [base, method]), method, words)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["extra_default", "extra_keywords", "any_arguments"])
def test_further_parameters_with_defaults_are_accepted(name):
    """Parameters beyond the documented ones are fine when they have defaults (or are ``*args``/``**kwargs``)."""
    method = OnlineMethod(f"{ONLINE}:{name}")
    result = run_online(PROBLEM, method, 4, KEYS)
    baseline = run_online(PROBLEM, OnlineMethod("cohv-ucb"), 4, KEYS)
    assert result.counts.tolist() == baseline.counts.tolist()  # the same index as CoHV-UCB


def test_module_that_exits_on_import_is_one_line(tmp_path):
    one_line(run(tmp_path, "online", ["cohv-ucb", "tests.plugins_hostile.at_import:index"]),
             "cannot import 'tests.plugins_hostile.at_import'", "SystemExit: 0")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("source, words, fix", [
    (None, "(ModuleNotFoundError: No module named 'mine_nowhere')", "put the module on your Python path (PYTHONPATH)"),
    ("import mine_nowhere_else\n", "(ModuleNotFoundError: No module named 'mine_nowhere_else')", "fix the module"),
    ("def index(n, upper, lower_cost)\n", "(SyntaxError: expected ':'", "fix the module"),
    ("raise RuntimeError('needs a GPU')\n", "(RuntimeError: needs a GPU)", "fix the module"),
    ("from cabench.methods.index import index_method\n\n\n@index_method('cohv-ucb')\n"
     "def index(n, upper, lower_cost):\n    return upper[..., 0]\n",
     "(CabenchError: methods: 'cohv-ucb' is already the online method CoHV-UCB; give yours another name)",
     "fix what it says"),
])
def test_a_module_that_cannot_be_imported_says_the_fix_that_fits(tmp_path, monkeypatch, source, words, fix):
    """Every module that failed to import, found on the path or not, ended "put the module on your Python path":
    a syntax error, a module raising as it is imported, one registering a shipped method's name."""
    name = "mine_nowhere" if source is None else f"mine_broken_{abs(hash(source)) % 10**8}"
    if source is not None:
        (tmp_path / f"{name}.py").write_text(source)
        monkeypatch.syspath_prepend(str(tmp_path))
    line = one_line(run(tmp_path / "run", "online", ["cohv-ucb", f"{name}:index"]),
                    f"cannot import '{name}' for '{name}:index' {words}")
    assert line.endswith(f"; {fix}"), line
    sys.modules.pop(name, None)


# --- what a method raises: one line naming it, sequential and in joblib's process workers ----------------------


@pytest.mark.parametrize("setting, method, n_jobs, words", [
    ("online", f"{ONLINE}:raises_value_error", 1, "raised ValueError: no index today"),
    ("online", f"{ONLINE}:raises_value_error", 2, "raised ValueError: no index today"),
    ("online", f"{ONLINE}:exits_zero", 1, "raised SystemExit: 0"),
    ("online", f"{ONLINE}:exits_zero", 2, "raised SystemExit: 0"),
    ("online", f"{ONLINE}:raises_base_exception", 1, "raised Abort: abort with a second line"),
    ("online", f"{ONLINE}:nan", 2, "returned nan (4 of 4 values); an index is a number or +inf"),
    ("psi", f"{PSI}:raises_in_last_phase", 2, "raised RuntimeError: no plan for the last phase"),
    ("psi", f"{PSI}:raises_in_first_phase", 1, "raised RuntimeError: no plan"),
])
def test_method_that_raises_or_returns_nan_stops_the_run_in_one_line(tmp_path, setting, method, n_jobs, words):
    """A method that raises (``SystemExit`` too) or returns NaN: exit 2, one line, no results written."""
    base = "cohv-ucb" if setting == "online" else "copsi"
    line = one_line(run(tmp_path, setting, [base, method], n_jobs), method, words)
    assert "Traceback" not in line
    assert not (tmp_path / "out" / "runs.csv").exists()


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_an_index_that_reduces_over_the_arms_is_refused_and_one_arm_by_arm_runs(tmp_path, n_jobs):
    """An index reading the pulls of every arm it is given (UCB1's total) was called on the arms just pulled, one
    per repetition, so its results changed with chunk_size: refused in one line, nothing written. The same bonus on
    the arm's own pulls runs (the next test shows it alike however the repetitions are batched)."""
    line = one_line(run(tmp_path, "online", ["cohv-ucb", f"{ONLINE}:total_pulls"], n_jobs),
                    f"{ONLINE}:total_pulls: the index of an arm depends on the other arms it is called with (")
    assert "arms, " in line and " alone); the loops compute it arm by arm" in line
    # one that differs only on a long row of arms, as the numpy loop gives it (its results changed with chunk_size)
    one_line(run(tmp_path, "online", ["cohv-ucb", f"{ONLINE}:changes_with_a_long_batch"], n_jobs),
             f"{ONLINE}:changes_with_a_long_batch: the index of an arm depends on the other arms it is called with (",
             " among 10 arms, ")
    assert not (tmp_path / "out" / "runs.csv").exists()
    done = run(tmp_path, "online", ["cohv-ucb", f"{ONLINE}:own_pulls"], n_jobs)
    assert done.exit_code == 0, done.output
    runs = pd.read_csv(tmp_path / "out" / "runs.csv")
    assert (runs["method"] == f"{ONLINE}:own_pulls").sum() == 4  # its four repetitions at the one budget


@pytest.mark.parametrize("method", ["random_tie_break", "counts_its_calls"])
def test_an_index_that_returns_other_values_for_the_same_arguments_is_refused(tmp_path, method):
    """A random tie-break below the arm-by-arm probe's tolerance ran, and two runs of one config and seed wrote other
    results (numba's generator ignores numpy's seed); larger noise was refused as depending on the other arms."""
    line = one_line(run(tmp_path, "online", ["cohv-ucb", f"{ONLINE}:{method}"], 1),
                    f"{ONLINE}:{method}: the index returns other values for the same arguments (")
    assert "must be a function of n, upper and lower_cost alone (no random draws, nothing kept between calls)" in line
    assert not (tmp_path / "out" / "runs.csv").exists()


@pytest.mark.parametrize("method, said", [
    ("drawn_share", "the schedule returns other targets for the same phase ("),
    ("counts_its_calls", "the schedule returns other targets for the same phase ("),
    ("pooled", "the schedule's target for a repetition depends on the other repetitions it is called with (")])
def test_a_schedule_of_more_than_its_arguments_is_refused(tmp_path, method, said):
    """A schedule drawing from a generator kept between calls gave other runs.csv for n_jobs 1 and 2 (56 of 96 rows),
    and one counting its calls, or pooling the repetitions of a chunk, depended on how cells were scheduled; the
    online indices were probed for this, schedules not. Refused in one line, nothing written."""
    line = one_line(run(tmp_path, "psi", ["copsi", f"{PSI}:{method}"], 1), f"{PSI}:{method}: {said}")
    assert not (tmp_path / "out" / "runs.csv").exists() and "Traceback" not in line
    done = run(tmp_path / "fine", "psi", ["copsi", f"{PSI}:front_loaded"], 1)  # a function of its arguments runs
    assert done.exit_code == 0, done.output


def test_an_index_reducing_over_the_arms_depends_on_the_batch_and_is_refused_every_time(monkeypatch):
    """What the probe guards against, shown with it bypassed: on 8 repetitions run together or one by one, the
    index of the total pulls gives other counts, the index of the arm's own pulls the same. With the probe, the
    reducing index is refused on every run in a process, not only the first."""
    import cabench.methods.index as index_module

    keys = stream_keys(0, np.arange(8), PROBLEM.arm_ids)

    def by_batch(name: str) -> tuple[list, list]:
        method = OnlineMethod(f"{ONLINE}:{name}")
        together = run_online(PROBLEM, method, 8, keys).counts.tolist()
        alone = [row for r in range(8) for row in run_online(PROBLEM, method, 8, keys[r:r + 1]).counts.tolist()]
        return together, alone

    for _ in range(2):
        with pytest.raises(UserMethodError, match="the index of an arm depends on the other arms"):
            run_online(PROBLEM, OnlineMethod(f"{ONLINE}:total_pulls"), 8, keys)
    together, alone = by_batch("own_pulls")
    assert together == alone and np.sum(together) > 0
    monkeypatch.setattr(index_module, "arm_by_arm", lambda index, n_objectives: None)
    together, alone = by_batch("total_pulls")
    assert together != alone


@pytest.mark.slow
@pytest.mark.parametrize("method, how", [("killed", "killed by SIGKILL"), ("exits", "exit code 3")])
def test_a_worker_that_ends_abruptly_is_one_line_and_keeps_the_saved_cells(tmp_path, method, how):
    """A method that ends its worker process (SIGKILL, as the out-of-memory killer sends; ``os._exit``) with two
    workers: joblib's 64-line TerminatedWorkerError and exit 1 before; now exit 2, one line saying how the worker
    ended and how many cells are saved, the saved cells untouched, and the same command resumes once the method
    no longer ends its process, byte-identical to a run never broken."""
    cells = tmp_path / "out" / "cells"
    raw = {"name": "ended", "setting": "online", "n_jobs": 2, "repetitions": 4, "chunk_size": 2, "seed": 0,
           "dataset": {"synthetic": {"means": [list(m) for m in SPEC.means], "costs": list(SPEC.costs)}},
           "rho": [4, 8], "methods": ["cohv-ucb"], "output": str(tmp_path / "out")}
    (tmp_path / "first.yaml").write_text(yaml.safe_dump(raw))
    assert RUNNER.invoke(app, ["run", str(tmp_path / "first.yaml"), "--quiet"]).exit_code == 0  # four cells saved
    saved = {p.name: p.read_bytes() for p in cells.iterdir()}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({**raw, "methods": ["cohv-ucb", f"{OWN_PROCESS}:{method}"]}))
    command = [sys.executable, "-m", "cabench.cli", "run", str(tmp_path / "c.yaml"), "--quiet", "--replace"]
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    broken = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=SAFETY_S,
                            env={**environ, "CABENCH_TEST_KILL": "1"})
    assert broken.returncode == 2, broken.stderr
    assert broken.stderr.startswith(
        f"error: a worker process ended abruptly ({how}) while computing cells of ended; 4 of 8 cells are "
        f"saved in {cells}; run the same command again to resume")
    assert broken.stderr.count("\n") == 1 and "Traceback" not in broken.stderr
    assert {p.name: p.read_bytes() for p in cells.iterdir() if p.name in saved} == saved
    assert len(list(cells.glob("*.ok"))) == 4
    resumed = RUNNER.invoke(app, command[3:])  # the same command, in this process
    assert resumed.exit_code == 0, resumed.output
    clean = yaml.safe_load((tmp_path / "c.yaml").read_text()) | {"output": str(tmp_path / "clean")}
    (tmp_path / "clean.yaml").write_text(yaml.safe_dump(clean))
    assert RUNNER.invoke(app, ["run", str(tmp_path / "clean.yaml"), "--quiet"]).exit_code == 0
    assert (tmp_path / "out" / "runs.csv").read_bytes() == (tmp_path / "clean" / "runs.csv").read_bytes()


def test_user_method_error_survives_pickling():
    """joblib's process workers send the error back pickled: it comes back the same one line."""
    for error in (CabenchError("a\nb  c"), UserMethodError("methods: m:f raised X: y")):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and str(back) == str(error) and "\n" not in str(back)


# --- what a method returns: checked on every call, alike in the engine and in the policy -----------------------

ONLINE_RETURNS = [
    ("nan", "returned nan"),
    ("nan_after_five_pulls", "returned nan"),
    ("minus_inf", "returned -inf"),
    ("scalar", "returned shape () for arguments of shape (3,)"),
    ("per_objective", "returned shape (3, 2) for arguments of shape (3,)"),
    ("text", "returned ndarray (dtype <U4), not numbers"),
    ("none", "returned NoneType (dtype object), not numbers"),
    ("ragged", "returned list (dtype object), not numbers"),
]


@pytest.mark.parametrize("name, words", ONLINE_RETURNS)
def test_online_index_that_returns_garbage_is_refused_by_engine_and_policy(name, words):
    method = OnlineMethod(f"{ONLINE}:{name}")
    with pytest.raises(UserMethodError, match=f"^methods: {ONLINE}:{name} ") as engine:
        run_online(PROBLEM, method, 4, KEYS)
    assert words in str(engine.value)
    with pytest.raises(UserMethodError, match=f"^methods: {ONLINE}:{name} returned"):
        reference_online(PROBLEM, method, 4, KEYS[0])


def test_live_policy_with_a_nan_index_stops_in_one_line_not_silently():
    """The per-pull policy ``cabench live`` drives: a NaN index used to end the method as if done."""
    policy = OnlinePolicy(OnlineMethod(f"{ONLINE}:nan"), 2, 40.0, [0.5, 1.0, 0.75], 0.5, 4)
    for _ in range(policy.n_init * 3):
        policy.tell(policy.ask(), [0.5, 0.5], 0.5)
    with pytest.raises(UserMethodError, match="returned nan"):
        policy.ask()


PSI_RETURNS = [
    ("negative", "returned -3 (1 of 1 values); a target is a finite number of samples below 2^63, never negative"),
    ("negative_in_second_phase", "returned -1 (3 of 3 values); a target is a finite number of samples below 2^63, "
                                 "never negative"),
    ("nan_in_second_phase", "returned nan"),
    ("infinite", "returned inf"),
    ("beyond_int64", "returned 1e+30"),
    ("scalar", "returned shape () for arguments of shape"),
    ("column", "returned shape"),
]


@pytest.mark.parametrize("name, words", PSI_RETURNS)
def test_schedule_that_returns_garbage_is_refused_by_engine_and_policy(name, words):
    method = PsiMethod(f"{PSI}:{name}")
    with pytest.raises(UserMethodError, match=f"^methods: {PSI}:{name} returned") as engine:
        run_psi(PROBLEM, method, 60, KEYS)
    assert words in str(engine.value)
    with pytest.raises(UserMethodError, match=f"^methods: {PSI}:{name} returned"):
        reference_psi(PROBLEM, method, 60, KEYS[0])


def test_schedule_that_raises_under_the_policy_is_one_line():
    with pytest.raises(UserMethodError, match="raised RuntimeError: no plan"):
        PsiPolicy(PsiMethod(f"{PSI}:raises_in_first_phase"), 2, [0.5, 1.0, 0.75], 100.0)


# --- methods that are fine --------------------------------------------------------------------------------------


def test_plus_inf_index_is_accepted_and_engine_and_policy_decide_alike():
    """``+inf`` means "pull this arm first" (ties to the lowest arm), identically pull by pull and batched."""
    method = OnlineMethod(f"{ONLINE}:explore_first")
    batched = run_online(PROBLEM, method, 6, KEYS, record_arms=True)
    assert (batched.counts >= 3).all()  # every arm explored three times
    for r in range(len(KEYS)):
        arms = batched.arms_pulled[:, r]
        assert arms[arms >= 0].tolist() == reference_online(PROBLEM, method, 6, KEYS[r])["arms"]


def test_schedule_cannot_change_the_loop_state_through_its_arguments():
    """A schedule that zeroes the ``spend`` it is given works on a copy: the budget still holds."""
    result = run_psi(PROBLEM, PsiMethod(f"{PSI}:spends_nothing"), 60, KEYS)
    assert (result.spend <= result.budget * (1 + 1e-6)).all()  # costs quantised to 2^-24
    reference = reference_psi(PROBLEM, PsiMethod(f"{PSI}:spends_nothing"), 60, KEYS[0])
    assert result.samples[0].tolist() == reference["samples"]


@pytest.mark.parametrize("mode", ["deterministic", "stochastic"])
def test_a_target_far_beyond_the_budget_is_pulled_as_far_as_the_budget_pays(monkeypatch, mode):
    """10^5 samples asked of each arm: with realised costs every asked pull was drawn before the budget cut them,
    memory growing with the target (10^12 on 14 arms: 407 TiB asked, a traceback; 10^6: 5 GB). Now pulls are drawn
    in rounds of at most 2^15 of a repetition, and the run makes the pulls the per-pull reference makes, within the
    budget."""
    from cabench.psi import engine

    drawn = []
    monkeypatch.setattr(engine, "expand_blocks", lambda starts, lengths: (
        drawn.append(int(lengths.sum())), expand_blocks(starts, lengths))[1])
    method = PsiMethod(f"{PSI}:far_beyond_the_budget")
    result = run_psi(PROBLEM, method, 60, KEYS, mode)
    assert max(drawn, default=0) <= len(KEYS) * 2**15 and (mode == "stochastic") == bool(drawn)
    assert (result.spend <= result.budget * (1 + 1e-6)).all() and (result.samples.sum(axis=1) > 0).all()
    for r in range(len(KEYS)):
        reference = reference_psi(PROBLEM, method, 60, KEYS[r], mode)
        assert result.samples[r].tolist() == reference["samples"] and result.spend[r] == reference["spend"]


@pytest.mark.parametrize("rehearsed", [True, False])
@pytest.mark.parametrize("setting, method", [("online", f"{ONLINE}:nan_after_five_pulls"),
                                             ("psi", f"{PSI}:nan_in_second_phase")])
def test_live_run_with_a_failing_method_ends_in_one_line_and_records_why(tmp_path, monkeypatch, setting, method,
                                                                          rehearsed):
    """``cabench live``: a NaN index used to end the method silently (78% of the budget unspent,
    ``stopped_by: null``); now one line naming the method, and ``spend.json`` says why it stopped. A method of
    one's own is first run on made-up outcomes, so one failing there is refused before profiling pays for calls
    (it paid 44,000 of 60,000 tokens first); one failing only on the real outcomes (here, the rehearsal left out)
    stops the run where it fails."""
    pytest.importorskip("httpx")
    from cabench.live import session
    from cabench.live.serve import ReplayEndpoint, serve_in_thread

    if not rehearsed:
        monkeypatch.setattr(session, "rehearse", lambda cfg: None)
    from tests.conftest import spread_logs, write_dataset

    dataset = write_dataset(tmp_path / "four", spread_logs(4, 40, seed=3), split={"profiling_size": 8, "seed": 0})
    server, _ = serve_in_thread(ReplayEndpoint.load(dataset))
    try:
        raw = {"name": "hostile_live", "task": {"kind": "replay", "dataset": str(dataset)},
               "configurations_from": str(dataset), "setting": setting, "method": method, "budget_tokens": 20000,
               "endpoint": {"base_url": f"http://127.0.0.1:{server.server_address[1]}/v1", "timeout_s": 5,
                            "concurrency": 1}, "profiling": {"instances": 6}, "latency": "reported", "seed": 0}
        (tmp_path / "live.yaml").write_text(yaml.safe_dump(raw))
        result = RUNNER.invoke(app, ["live", str(tmp_path / "live.yaml"), "--out", str(tmp_path / "run"), "--quiet"])
    finally:
        server.shutdown()
        server.server_close()
    line = one_line(result, method)
    if rehearsed:
        assert line.endswith("(on made-up outcomes, before any call was made)"), line
        assert not (tmp_path / "run").exists()
        return
    assert line.endswith(f"fix the method ({tmp_path / 'live.yaml'}: method) and run the same command again: the "
                         "calls made are kept, and none is paid again"), line  # (no list of methods to remove it from)
    spend = json.loads((tmp_path / "run" / "spend.json").read_text())
    assert spend["stopped_by"] is not None and method in json.dumps(spend) and spend["spent_tokens"] > 0
    assert not (tmp_path / "run" / "decision.json").exists()


# --- display: the name tables, reports and legends show -------------------------------------------------------

DISPLAYS = "tests.plugins_hostile.displays"


@pytest.mark.parametrize("methods, words", [
    (["cohv-ucb", f"{DISPLAYS}:as_cohv"],
     f"methods[1].name: methods: {DISPLAYS}:as_cohv: its display 'CoHV-UCB' is how cabench shows its own method "
     "cohv-ucb; give yours a name of its own, so that no table or report mistakes it for that method"),
    # shown as a shipped method that the experiment does not run: its report would state that method's verdicts
    (["hv-ucb", "uniform", f"{DISPLAYS}:as_cohv"],
     f"methods[2].name: methods: {DISPLAYS}:as_cohv: its display 'CoHV-UCB' is how cabench shows its own method "
     "cohv-ucb"),
    (["uniform", f"{DISPLAYS}:as_cohv_name"], "COHV-ucb ' is how cabench shows its own method cohv-ucb"),
    (["cohv-ucb", f"{DISPLAYS}:as_hv_lower"], "its display 'hv-ucb' is how cabench shows its own method hv-ucb"),
    ([f"{DISPLAYS}:mine", "uniform", f"{DISPLAYS}:mine_again"],
     f"methods[2].name: {DISPLAYS}:mine_again is shown as 'mine', as {DISPLAYS}:mine (methods[0]) is"),
    (["cohv-ucb", f"{DISPLAYS}:two_lines"],
     f"methods[1].name: methods: {DISPLAYS}:two_lines: its display 'Line1\\nLine2, with comma' holds '\\n': a display "
     "is one line of printable text"),
    (["cohv-ucb", f"{DISPLAYS}:blank"], f"methods: {DISPLAYS}:blank: its display is blank; give it the name"),
    (["cohv-ucb", f"{DISPLAYS}:tabbed"], "its display 'a\\tb' holds '\\t'"),
    (["cohv-ucb", f"{DISPLAYS}:number"], "its display is int 3, not text"),
])
def test_display_that_cannot_be_shown_apart_is_refused_before_any_cell(tmp_path, methods, words):
    """A ``display`` equal (case-insensitively, stripped) to another method's display or name showed two identical
    rows, "CoHV-UCB vs CoHV-UCB" and one legend entry; one on two lines broke tables, a blank one showed nothing.
    One shown as a shipped method, run without it, had the report state that method's verdicts of it."""
    one_line(run(tmp_path, "online", methods), words)
    assert not (tmp_path / "out").exists()


def test_display_of_one_printable_line_that_no_other_method_has_is_accepted(tmp_path):
    from cabench.config import parse_config

    raw = {"name": "shown", "setting": "online", "rho": [4], "repetitions": 2, "output": str(tmp_path / "out"),
           "dataset": {"synthetic": {"means": [list(m) for m in SPEC.means], "costs": list(SPEC.costs)}},
           "methods": ["cohv-ucb", "hv-ucb", f"{DISPLAYS}:plain", f"{DISPLAYS}:mine"]}
    cfg = parse_config(raw, "c.yaml")
    assert [m.entry.spec.display for m in cfg.methods] == ["CoHV-UCB", "HV-UCB", "A | B, c (mine)", "Mine"]


@pytest.mark.parametrize("display, words", [("a\nb", "holds '\\n'"), ("", "is blank"), (" ", "is blank")])
def test_decorator_refuses_a_display_it_cannot_show(display, words):
    from cabench.methods.elimination import schedule
    from cabench.methods.index import index_method
    from cabench.methods.spec import find

    for decorator, setting in ((index_method, "online"), (schedule, "psi")):
        with pytest.raises(CabenchError, match="^methods: bad-display: its display ") as refused:
            decorator("bad-display", display=display)(lambda *args: None)
        assert words in str(refused.value)
        assert find("bad-display", setting) is None  # not registered


def test_results_recording_a_display_that_cannot_be_shown_show_the_method_by_name():
    """``methods_shown`` of a results folder (written by someone else, or an older cabench) is read, never refused:
    a display that is not one printable line is left out and the method shows by its name."""
    from cabench import registry

    registry.remember_shown({"old_run:two_lines": {"display": "a\nb"}, "old_run:blank": {"display": "  "},
                             "old_run:fine": {"display": "Fine", "prefers": False}})
    assert registry.display("old_run:two_lines") == "old_run:two_lines"
    assert registry.display("old_run:blank") == "old_run:blank"
    assert registry.display("old_run:fine") == "Fine" and not registry.prefers("old_run:fine", "online")


# --- a schedule whose first phase gives no arm a sample ---------------------------------------------------------


@pytest.mark.parametrize("name, words", [
    ("negative", "returned -3 (1 of 1 values); a target is a finite number of samples below 2^63, never negative"),
    ("negative_in_second_phase", "returned -1 (4 of 4 values); a target is a finite number of samples below 2^63, "
                                 "never negative"),
])
def test_schedule_returning_negative_targets_is_the_methods_fault(tmp_path, name, words):
    """Negative targets were reported as "rho 60 is too small for <method>", blaming the budget."""
    line = one_line(run(tmp_path, "psi", ["copsi", f"{PSI}:{name}"]), f"error: methods: {PSI}:{name} ", words)
    assert "too small" not in line
    assert not (tmp_path / "out" / "runs.csv").exists()


@pytest.mark.parametrize("name, returned", [("zero", "0"), ("below_one", "0.5")])
def test_schedule_giving_no_sample_where_copsi_does_says_what_it_returned(tmp_path, name, returned):
    """A first phase giving no arm a sample where CoPSI's gives each 23 is not run, as a budget too small is, but
    the reason says what the schedule returned, CoPSI's target there and that it samples at no budget (it read "rho
    60 is too small", which no budget is not)."""
    result = run(tmp_path, "psi", ["copsi", f"{PSI}:{name}"])
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    status = summary.loc[summary["method"] == f"{PSI}:{name}", "status"].tolist()
    assert status == [f"not run: {PSI}:{name} on 4 arms gives an arm no sample in its first phase at rho 60 (it "
                      f"returned {returned}, where CoPSI's first phase gives every arm 23), nor at any rho up to "
                      "1e+09: a first target is the cumulative samples each arm gets, at least 1"]


def test_schedule_that_samples_only_from_a_larger_budget_says_so():
    """Zero is not always a bug: a schedule keeping back half the budget samples from twice CoPSI's smallest rho,
    and says so where it does not."""
    from cabench.methods.lookup import get

    method = PsiMethod(f"{PSI}:needs_twice_copsi")  # a reason, not an error: `plan` scans budgets with skip
    assert get(f"{PSI}:needs_twice_copsi", "psi").skip(PROBLEM, 5).endswith("it samples from rho 10")
    with pytest.raises(CabenchError, match=re.escape(
            f"rho 5 is too small for {PSI}:needs_twice_copsi on 4 arms: its first phase gives an arm no sample (it "
            "returned 0, where CoPSI's first phase gives every arm 1); it samples from rho 10")):
        run_psi(PROBLEM, method, 5, KEYS)
    assert run_psi(PROBLEM, method, 10, KEYS).samples.min() >= 1  # it runs where it samples


@pytest.mark.parametrize("name, returned", [("zero", "0"), ("below_one", "0.5")])
def test_policy_refuses_a_first_phase_without_samples_as_the_method_does(name, returned):
    """The per-pull policy (``cabench live``) at a budget where CoPSI samples: the same fault, named by budget."""
    with pytest.raises(UserMethodError, match=f"^methods: {PSI}:{name} returned {returned} as its first phase's target "
                                              "at budget 100 on 3 arms, so no arm gets a sample, where CoPSI's first "
                                              "phase gives every arm 20;"):
        PsiPolicy(PsiMethod(f"{PSI}:{name}"), 2, [0.5, 1.0, 0.75], 100.0)


def test_budget_too_small_for_copsi_too_is_still_the_budgets():
    """Where CoPSI's first phase gives no sample either, a schedule's empty first phase is the budget's: the cell is
    not run, as for a built-in method."""
    from cabench.methods.lookup import get

    for name in ("zero", "needs_twice_copsi"):
        assert get(f"{PSI}:{name}", "psi").skip(PROBLEM, 1) == (
            f"rho 1 is too small for {PSI}:{name} on 4 arms: its first phase gives an arm no sample, as CoPSI's "
            "gives none below rho 2.567")
    assert get("copsi", "psi").skip(PROBLEM, 1).endswith("the smallest workable rho is 2.567")


def test_a_target_far_beyond_the_budget_is_asked_as_a_count_not_a_list():
    """The per-pull rule listed every ask up to a schedule's target: level + 2**62 ran live out of memory (killed,
    or a MemoryError traceback) in its rehearsal. The asks are runs of one arm; the budget rule ends the sampling,
    at the pulls the budget pays, as the batched engine's."""
    from cabench.methods.configured import PsiMethod
    from cabench.policy import PsiPolicy

    costs = [0.5, 1.0, 0.25]
    policy = PsiPolicy(PsiMethod(f"{PSI}:far_beyond"), 2, costs, 40.0)
    assert policy.queue._runs[0] == [0, 2**62]  # one run per arm, as counts
    asked = 0
    while (arm := policy.ask()) is not None:
        policy.tell(arm, [0.5, 0.5])
        asked += 1
    assert policy.n == [80, 0, 0] and policy.spend == 40.0 and asked == 81  # the 81st did not fit: sampling ended


def test_a_target_far_beyond_the_budget_samples_with_realised_costs_as_any_target_beyond_it():
    """With realised costs, level + 2**62 crashed the batched engine ('array is too big': a repetition's pulls
    summed past int64); it makes the pulls any target beyond the budget makes."""
    from cabench.methods.configured import PsiMethod
    from cabench.psi import run_psi

    far, near = (run_psi(PROBLEM, PsiMethod(f"{PSI}:{name}"), 30, KEYS, "stochastic") for name in ("far_beyond",
                                                                                                  "beyond"))
    assert np.array_equal(far.samples, near.samples) and np.array_equal(far.spend, near.spend)
    assert far.samples.sum() > 0 and (far.spend <= far.budget).all()


def test_the_schedule_probe_never_takes_one_schedule_for_another_it_probed():
    """The probe remembered the schedules it had passed by the id of their checked wrappers, made anew for each
    config: a wrapper freed, a new one could get its id, and a bad schedule skipped its probe (116 of 200 trials in
    one process). Each schedule is remembered by itself, held, so none is taken for another. Here each schedule
    passed is let go at once, so that the bad schedule made next is put where it was (CPython reuses a freed
    object's memory for the next object of its size) and would have its id, were it free."""
    from cabench.methods.elimination import _Batched, repeatable
    from cabench.methods.user import UserMethodError, checked
    from tests.plugins_hostile import schedules

    reused = 0
    for trial in range(20):
        def good(budget, l_k, spend, level, active_costs, k_active):  # a new schedule each trial, let go after
            return schedules.front_loaded(budget, l_k, spend, level, active_costs, k_active)

        repeatable(_Batched(checked(f"good{trial}", "psi", good)), f"good{trial}")
        passed = id(good)
        del good  # nothing but the probe may hold it now
        calls = [0]

        def counting(budget, l_k, spend, level, active_costs, k_active, calls=calls):  # a new schedule each trial
            calls[0] += 1
            return schedules.front_loaded(budget, l_k, spend, level, active_costs, k_active) + calls[0] % 2

        reused += id(counting) == passed
        for _ in range(2):  # refused again when asked again (a notebook's second run)
            with pytest.raises(UserMethodError, match="the schedule returns other targets for the same phase"):
                repeatable(_Batched(checked(f"bad{trial}", "psi", counting)), f"bad{trial}")
    assert reused == 0  # held by the probe: no new schedule is put where one it passed is
