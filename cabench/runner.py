"""Running an experiment: cells through joblib, crash-safe cell files, tidy CSVs.

``run_experiment`` validates everything first (config, dataset, budgets,
output folder), so bad input stops before anything is written. Each finished
cell is written atomically to ``OUTPUT/cells/<key>.csv``; a re-run reuses every
cell whose key (a hash of all that determines its result) matches, and
``runs.csv`` is always rebuilt from the cell files, so it is byte-identical
whatever the worker count, chunking, backend or interruptions.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import joblib
import pandas as pd
import yaml
from tqdm.auto import tqdm

import cabench
from cabench.cells import Cell, cell_key, plan_cells, run_cell
from cabench.config import ExperimentConfig
from cabench.data.dataset import load_dataset
from cabench.errors import CabenchError
from cabench.problem import Problem, replay_problem
from cabench.psi.schedules import Schedule
from cabench.results import aggregate_trajectories, read_csv, summarize
from cabench.synthetic import synthetic_problem


class Interrupted(CabenchError):
    """The run was stopped by the user; finished cells are kept."""


@dataclass(frozen=True)
class Outcome:
    output: Path
    cells: int
    reused: int
    computed: int
    summary: pd.DataFrame


def build_problem(cfg: ExperimentConfig, source: str = "evaluation") -> tuple[Problem, dict[str, Any]]:
    """The experiment's problem and its identity (what the cache keys hash)."""
    if cfg.synthetic is not None:
        identity = {"synthetic": cfg.resolved()["dataset"]["synthetic"]}
        return synthetic_problem(cfg.synthetic), identity
    ds = load_dataset(cfg.dataset, cfg.split)
    arms = cfg.arms.select(ds.configs, source=f"{cfg.source}: arms")
    problem = replay_problem(ds, arms, source)
    identity = {"dataset_sha256": ds.content_hash, "split": [cfg.split.profiling_size, cfg.split.seed],
                "arms": list(problem.arm_names), "source": source}
    return problem, identity


def check_budgets(cfg: ExperimentConfig, problem: Problem) -> None:
    """Fail before running if a budget is too small for a method (SPEC §6)."""
    for rho in cfg.rho:
        if cfg.setting == "psi":
            budget = problem.psi_budget(rho)
            for method in cfg.methods:
                try:
                    Schedule.build(method, budget, problem.psi_profile_cost()).check_first_phase(rho)
                except CabenchError as exc:
                    raise CabenchError(f"{cfg.source}: rho: {exc}") from None
        elif rho < 1:
            raise CabenchError(f"{cfg.source}: rho: {rho:g} cannot pay one initial pull of every arm; "
                               "the smallest workable rho is 1")


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(cabench.__file__).resolve().parent)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``."""
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def to_csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, lineterminator="\n")


def prepare_output(cfg: ExperimentConfig, out: Path, force: bool) -> Path:
    """Create (or check) the output folder; refuse one that holds another experiment."""
    if out.exists() and not out.is_dir():
        raise CabenchError(f"{out}: output path exists and is not a folder; pass --out with a folder")
    previous = out / "config.yaml"
    if previous.is_file() and not force:
        try:
            old = yaml.safe_load(previous.read_text()) or {}
        except yaml.YAMLError:
            old = {}
        if not isinstance(old, dict) or (old.get("name"), old.get("setting")) != (cfg.name, cfg.setting):
            other = old.get("name") if isinstance(old, dict) else "?"
            raise CabenchError(
                f"{out}: results folder holds experiment '{other}', not '{cfg.name}'; pass another --out, "
                "or --force to replace its results"
            )
    try:
        (out / "cells").mkdir(parents=True, exist_ok=True)
        probe = out / "cells" / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise CabenchError(
            f"{out}: output folder is not writable ({exc.strerror}); pass --out with a writable folder") from None
    return out / "cells"


def _work(problem: Problem, setting: str, seed: int, cell: Cell, key: str):
    runs, traj = run_cell(problem, setting, seed, cell)
    return key, runs, traj


@contextlib.contextmanager
def _backend(cfg: ExperimentConfig) -> Iterator[dict[str, Any]]:
    """Parallel settings for the configured backend (the Dask client lives for the run)."""
    if cfg.backend != "dask":
        yield {"backend": cfg.backend, "n_jobs": cfg.n_jobs}
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise CabenchError("backend 'dask' needs the optional extra: pip install 'cabench[dask]'") from None
    if cfg.scheduler_address:
        try:
            client = Client(cfg.scheduler_address, timeout="20s")
        except OSError as exc:
            raise CabenchError(f"scheduler_address: cannot reach {cfg.scheduler_address} ({exc})") from None
        cluster = None
    else:
        workers = os.cpu_count() if cfg.n_jobs == -1 else cfg.n_jobs
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=":0")
        client = Client(cluster)
    try:
        with joblib.parallel_config(backend="dask"):
            yield {"n_jobs": -1}
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _execute(cfg: ExperimentConfig, problem: Problem, todo: list[tuple[Cell, str]],
             save: Callable[[str, pd.DataFrame, pd.DataFrame | None], None], quiet: bool) -> None:
    bar = tqdm(total=len(todo), desc=cfg.name, unit="cell", disable=quiet or not todo, leave=False)
    try:
        if cfg.backend == "sequential" or (cfg.n_jobs == 1 and cfg.backend != "dask"):
            for cell, key in todo:
                save(*_work(problem, cfg.setting, cfg.seed, cell, key))
                bar.update()
            return
        with _backend(cfg) as options:
            jobs = (joblib.delayed(_work)(problem, cfg.setting, cfg.seed, cell, key) for cell, key in todo)
            with joblib.Parallel(return_as="generator_unordered", **options) as parallel:
                for result in parallel(jobs):
                    save(*result)
                    bar.update()
    finally:
        bar.close()


def run_experiment(cfg: ExperimentConfig, *, force: bool = False, quiet: bool = False,
                   echo: Callable[[str], None] = print) -> Outcome:
    """Run (or resume) an experiment and write ``runs.csv``, ``trajectories.csv``, ``config.yaml``."""
    problem, identity = build_problem(cfg)
    check_budgets(cfg, problem)
    out = Path(cfg.output)
    cache = prepare_output(cfg, out, force)
    cells = plan_cells(cfg)
    keys = [cell_key(identity, cfg.setting, cfg.seed, c) for c in cells]
    todo = [(c, k) for c, k in zip(cells, keys) if force or not (cache / f"{k}.csv").is_file()]
    reused = len(cells) - len(todo)
    if not quiet:
        echo(f"{cfg.name}: {len(cells)} cells ({reused} reused, {len(todo)} to run) -> {out}")

    def save(key: str, runs: pd.DataFrame, traj: pd.DataFrame | None) -> None:
        if traj is not None:
            write_atomic(cache / f"{key}.traj.csv", to_csv(traj))
        write_atomic(cache / f"{key}.csv", to_csv(runs))  # written last: its presence marks the cell done

    try:
        _execute(cfg, problem, todo, save, quiet)
    except KeyboardInterrupt:
        done = sum((cache / f"{k}.csv").is_file() for k in keys)
        raise Interrupted(f"interrupted: {done} of {len(cells)} cells are saved in {cache}; "
                          "run the same command again to resume") from None

    runs = pd.concat([read_csv(cache / f"{k}.csv") for k in keys], ignore_index=True)
    write_atomic(out / "runs.csv", to_csv(runs))
    traj_files = [cache / f"{k}.traj.csv" for c, k in zip(cells, keys) if c.trajectory]
    if traj_files:
        per_rep = pd.concat([read_csv(p) for p in traj_files], ignore_index=True)
        write_atomic(out / "trajectories.csv", to_csv(aggregate_trajectories(per_rep, problem.name)))
    summary = summarize(runs)
    write_atomic(out / "summary.csv", to_csv(summary))
    meta = {**cfg.resolved(), "cabench_version": cabench.__version__, "git_commit": git_commit(),
            "problem": identity, "surrogate": bool(problem.surrogate)}
    write_atomic(out / "config.yaml", yaml.safe_dump(meta, sort_keys=False, width=100))
    return Outcome(out, len(cells), reused, len(todo), summary)

