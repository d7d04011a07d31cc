"""Shared fixtures: the shipped datasets (loaded once), small hand-made logs, and runs held at a state for a test
to signal. No test waits for a time: each waits for a state, with :data:`SAFETY_S` bounding only a hang."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, settings

from cabench.data.dataset import Dataset, load_dataset
from cabench.data.io import write_logs, write_metadata

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
SAFETY_S = 600.0  # ends a hang only: every wait of a test is for a state, never for a time

# property tests neither time their examples nor judge how fast examples are generated, and draw the same examples
# on every run (the suite never passes one day and fails the next); HYPOTHESIS_PROFILE=explore draws new ones on
# each run, to search for a counterexample on purpose
settings.register_profile("untimed", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "untimed"))


def wait_for(condition: Callable[[], bool], what: str, process: Any = None) -> None:
    """Poll until ``condition()`` holds (a state: a file, a journal line) or ``process`` (a ``subprocess.Popen``
    or a ``multiprocessing.Process``) has ended, which the caller then checks; fail only after
    :data:`SAFETY_S`, a limit that bounds a hang and decides no outcome."""
    end = time.monotonic() + SAFETY_S
    while not condition():
        if process is not None and (process.poll() is not None if hasattr(process, "poll")
                                    else not process.is_alive()):
            return
        if time.monotonic() > end:
            pytest.fail(f"waited {SAFETY_S:.0f} s for {what}")
        time.sleep(0.01)


PAUSED = "tests.plugins_hostile.pause:paused"  # an identification method that holds a run at a state


@pytest.fixture
def held_run() -> Iterator[Callable[[Path], subprocess.Popen]]:
    """``start(config)``: ``cabench run CONFIG --quiet`` in a new process session, returned once the method
    :data:`PAUSED` of the config holds it (after five cells are saved, while a cell of its own computes: see
    :mod:`tests.plugins_hostile.pause`), for the test to signal. SIGINT is not ignored there (a shell's
    background job would pass that on). At the test's end whatever the run left is killed."""
    started: list[subprocess.Popen] = []

    def start(config: Path) -> subprocess.Popen:
        marker = config.with_name(config.stem + ".held")
        cells = Path(yaml.safe_load(config.read_text())["output"]) / "cells"
        env = {**os.environ, "CABENCH_TEST_PAUSE": f"{cells}{os.pathsep}{marker}", "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-m", "cabench.cli", "run", str(config), "--quiet"], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        started.append(proc)
        wait_for(marker.exists, f"{config.name}'s run to be held", proc)
        assert proc.poll() is None, proc.communicate()  # held at the state, not finished
        return proc

    yield start
    for proc in started:
        if proc.poll() is None or session(proc.pid):  # (a process of the session keeps its id the session's)
            with contextlib.suppress(ProcessLookupError):  # (unless the last one ended meanwhile)
                os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]) -> Path:
    """The folder ``name``, built by ``build(folder)`` once in the whole test session, whichever worker
    (pytest-xdist) asks first: the others wait for that build (a lock: a state, not a time) and read the folder.
    A test that changes what is in it works on a copy. A build cut short is started again."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's folder, which holds each worker's own
    folder, built = base / name, base / f"{name}.built"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            built.write_text("")
    return folder


def copied(folder: Path, parent: Path) -> Path:
    """A copy of ``folder`` in ``parent`` (a folder :func:`built_once` to be changed by one test)."""
    return Path(shutil.copytree(folder, parent / folder.name))


def session(pid: int) -> list[str]:
    """The processes of the session that process ``pid`` started: it, its workers and their helpers."""
    return subprocess.run(["pgrep", "-s", str(pid)], capture_output=True, text=True).stdout.split()


@cache
def shipped(name: str) -> Dataset:
    return load_dataset(DATA / name)


@pytest.fixture(scope="session")
def gsm8k() -> Dataset:
    return shipped("gsm8k")


@pytest.fixture(scope="session")
def piqa() -> Dataset:
    return shipped("piqa")


#: arm0 (0.9, 0.2), arm1 (0.6, 0.6), arm2 (0.2, 0.9) form the Pareto set; arm3 (0.5, 0.45) is dominated only by
#: arm1, arm4 (0.15, 0.8) only by arm2; unit costs, so nu is the product of the means: 0.18, 0.36, 0.18, 0.225, 0.12.
FIVE = {"synthetic": {"name": "five", "means": [[0.9, 0.2], [0.6, 0.6], [0.2, 0.9], [0.5, 0.45], [0.15, 0.8]],
                      "costs": [1, 1, 1, 1, 1], "noise": "gaussian", "sigma": 0.3}}
def five_results(root: Path, online_methods: list[str]) -> Path:
    """Results on :data:`FIVE` below ``root``: online (``online_methods``, rho 30) and identification (CoPSI-R,
    PSI-SR, rho 30 and 100), 8 repetitions each."""
    from cabench.config import parse_config
    from cabench.runner import run_experiment

    for setting, methods, rho in (("online", online_methods, [30]), ("psi", ["copsi-r", "psi-sr"], [30, 100])):
        cfg = parse_config({"name": f"five_{setting}", "dataset": FIVE, "setting": setting, "rho": rho,
                            "methods": methods, "repetitions": 8, "output": str(root / setting)}, "five.yaml")
        run_experiment(cfg, quiet=True)
    return root


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


def with_token_parts(frame: pd.DataFrame, rng: np.random.Generator, low: float, high: float) -> pd.DataFrame:
    """``frame`` with ``prompt_tokens`` a uniform share in [low, high] of each row's ``tokens`` (rounded) and
    ``completion_tokens`` the rest."""
    frame["prompt_tokens"] = np.round(frame["tokens"] * rng.uniform(low, high, len(frame)))
    frame["completion_tokens"] = frame["tokens"] - frame["prompt_tokens"]
    return frame


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


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Before the xdist workers run a test, compile the kernels once into numba's cache (beside their sources): on a
    fresh clone every worker, and every process a test starts, compiled the same kernels at once (about a minute
    of the suite's wall time on two cores). The online and the identification kernels compile in a process each
    (:mod:`tests.warm_kernels`), started here; the workers start and collect the tests meanwhile (importing
    cabench compiles no kernel), and the first worker to finish collecting waits for both
    (:func:`pytest_xdist_node_collection_finished`), so no test runs before every kernel is in the cache. Only the
    controller of a parallel run that will run tests does this (not ``--collect-only``; xdist's scheduler is
    there); each worker and a single-process run compile what they need on first use, as before. Processes still
    compiling when pytest ends (stopped, or a compilation failed) are ended (:func:`pytest_unconfigure`)."""
    config = session.config
    if hasattr(config, "workerinput") or not config.pluginmanager.has_plugin("dsession"):
        return
    config.stash[_WARMING] = {
        group: subprocess.Popen([sys.executable, "-m", "tests.warm_kernels", group], cwd=ROOT,
                                env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        for group in ("psi", "online")}


def pytest_unconfigure(config: pytest.Config) -> None:
    """End the kernels' compilations still running (:func:`pytest_sessionstart`): pytest stopped before the tests."""
    for process in config.stash.get(_WARMING, {}).values():
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.communicate()


def _warmed(config: pytest.Config) -> None:
    """Wait for the kernels compiling (:func:`pytest_sessionstart`); stop the run, with its output, where a compilation
    failed."""
    warming = config.stash.get(_WARMING, {})
    for group in list(warming):
        process = warming.pop(group)
        output, _ = process.communicate()
        if process.returncode:
            pytest.exit(f"compiling the {group} kernels failed (exit {process.returncode}):\n{output}", returncode=3)


_WARMING = pytest.StashKey[dict[str, subprocess.Popen]]()


@pytest.hookimpl(optionalhook=True)  # an xdist hook: pytest without xdist has no such hook
def pytest_xdist_node_collection_finished(node: Any, ids: Any) -> None:
    """Once the first worker has collected the tests, before any test is sent to a worker: wait for the kernels
    still compiling (:func:`pytest_sessionstart`)."""
    _warmed(node.config)
