"""Cells: the unit of work of an experiment (method x rho x cost mode x chunk of repetitions).

A cell's result depends only on the problem, the method, the budget, the cost
mode, its repetitions and the seed, never on which worker runs it or on the
other cells. Its cache key hashes exactly those inputs, the dataset's name and
content, and the source code of every module that computes cells
(:func:`cabench.record.code_hash`), so an edited engine never serves a stale
cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

import cabench
from cabench import registry
from cabench.config import ExperimentConfig, TrajectorySpec
from cabench.data.dataset import Dataset, load_dataset
from cabench.errors import CabenchError
from cabench.online import OnlineMethod, run_online
from cabench.problem import Problem, replay_problem
from cabench.psi import PsiMethod, run_psi
from cabench.psi.schedules import Schedule
from cabench.record import code_hash, stable_hash
from cabench.streams import stream_keys
from cabench.synthetic import synthetic_problem

ONLINE_COLUMNS = ["dataset", "setting", "method", "rho", "budget_tokens", "rep", "pulls", "spend_tokens",
                  "regret_hv", "regret_std", "frac_optimal", "exploited", "mode", "s_r", "s_c", "eta", "alpha",
                  "n_init", "seed", "cabench_version"]
PSI_COLUMNS = ["dataset", "setting", "method", "cost_mode", "rho", "budget_tokens", "rep", "error", "f1", "size",
               "spend_tokens", "seed", "cabench_version"]
ONLINE_SELECTION_COLUMNS = ["method", "rho", "rep", "config_id", "pulls"]
PSI_SELECTION_COLUMNS = ["method", "cost_mode", "rho", "rep", "config_id", "samples", "returned"]
TRAJECTORY_COLUMNS = ["method", "rho", "rep", "point", "tokens", "cum_regret", "moving_avg"]


def build_problem(cfg: ExperimentConfig, source: str = "evaluation"
                  ) -> tuple[Problem, dict[str, Any], Dataset | None]:
    """The experiment's problem, its identity (what cache keys hash) and its dataset (None if synthetic)."""
    if cfg.synthetic is not None:
        identity = {"dataset": cfg.resolved()["dataset"], "arms": [f"arm{i}" for i in range(len(cfg.synthetic.costs))],
                    "source": source}
        return synthetic_problem(cfg.synthetic), identity, None
    ds = load_dataset(cfg.dataset, cfg.split)
    arms = cfg.arms.select(ds.configs, source=f"{cfg.source}: arms")
    problem = replay_problem(ds, arms, source)
    identity = {"dataset": {"name": ds.name, "sha256": ds.content_hash,
                            "split": [ds.split.profiling_size, ds.split.seed]},
                "arms": list(problem.arm_names), "source": source}
    return problem, identity, ds


def infeasible_cells(cfg: ExperimentConfig, problem: Problem) -> dict[tuple[str, float], str]:
    """(method, rho) pairs whose budget is too small for the method, with the reason (SPEC §6).

    Online: rho < 1 cannot pay one initial pull of every arm. Identification: the first phase must
    give every arm one sample.
    """
    out: dict[tuple[str, float], str] = {}
    for rho in cfg.rho:
        for method in cfg.methods:
            if cfg.setting == "psi":
                try:
                    Schedule.build(method, problem.psi_budget(rho), problem.psi_profile_cost()).check_first_phase(rho)
                except registry.UserMethodError:
                    raise  # a failing method of one's own is not a budget too small
                except CabenchError as exc:
                    out[(method.name, rho)] = str(exc)
            elif rho < 1:
                out[(method.name, rho)] = (f"rho {rho:g} cannot pay one initial pull of every arm; the smallest "
                                           "workable rho is 1")
    return out


def check_budgets(cfg: ExperimentConfig, problem: Problem, strict: bool = True) -> dict[tuple[str, float], str]:
    """The infeasible (method, rho) pairs; with ``strict``, or when nothing is feasible, fail on the first."""
    bad = infeasible_cells(cfg, problem)
    if bad and (strict or len(bad) == len(cfg.rho) * len(cfg.methods)):
        raise CabenchError(f"{cfg.source}: rho: {next(iter(bad.values()))}")
    return bad


@dataclass(frozen=True)
class Cell:
    method: OnlineMethod | PsiMethod
    rho: float
    cost_mode: str | None
    start: int
    stop: int
    trajectory: TrajectorySpec | None = None

    def describe(self) -> dict[str, Any]:
        m = self.method
        method = {"name": m.name, **(m.params(self.rho) if isinstance(m, OnlineMethod) else {})}
        if registry.is_user(m.name):  # editing a user method's module recomputes its cells
            method["source"] = registry.user_source_digest(m.name)
        out = {"method": method, "rho": self.rho, "cost_mode": self.cost_mode, "reps": [self.start, self.stop]}
        if self.trajectory:
            out["trajectory"] = {"points": self.trajectory.points, "window": self.trajectory.window}
        return out


def plan_cells(cfg: ExperimentConfig, skip: frozenset[tuple[str, float]] = frozenset()) -> list[Cell]:
    """Every cell of an experiment, in output order, less the (method, rho) pairs in ``skip``."""
    chunks = [(s, min(s + cfg.chunk_size, cfg.repetitions)) for s in range(0, cfg.repetitions, cfg.chunk_size)]
    modes = cfg.cost_modes if cfg.setting == "psi" else (None,)
    cells = []
    for method in cfg.methods:
        for mode in modes:
            for rho in cfg.rho:
                if (method.name, rho) in skip:
                    continue
                traj = cfg.trajectories if cfg.trajectories and cfg.trajectories.rho == rho else None
                cells += [Cell(method, rho, mode, a, b, traj) for a, b in chunks]
    return cells


def cell_key(identity: dict[str, Any], setting: str, seed: int, cell: Cell) -> str:
    """Hash of everything that determines a cell's result, including the code that computes it."""
    payload = {"problem": identity, "setting": setting, "seed": seed, "cell": cell.describe(),
               "code": code_hash(), "version": cabench.__version__}
    return stable_hash(payload, 32)


def _per_arm(problem: Problem, reps: np.ndarray, values: dict[str, np.ndarray]) -> dict[str, Any]:
    """Tidy (rep, arm) columns of ``[reps, K]`` arrays, arms by configuration name."""
    k = problem.n_arms
    return {"rep": np.repeat(reps, k), "config_id": np.tile(np.asarray(problem.arm_names, dtype=object), len(reps)),
            **{name: np.asarray(v).reshape(-1) for name, v in values.items()}}


def run_cell(problem: Problem, setting: str, seed: int, cell: Cell
             ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    """Run one cell; return its rows of ``runs.csv``, of ``selections.csv`` and (online, trajectory
    budget) its per-repetition trajectories."""
    reps = np.arange(cell.start, cell.stop)
    keys = stream_keys(seed, reps, problem.arm_ids)
    common = {"dataset": problem.name, "setting": setting, "method": cell.method.name, "rho": cell.rho}
    if setting == "online":
        traj = cell.trajectory
        res = run_online(problem, cell.method, cell.rho, keys, trajectory_points=traj.points if traj else 0,
                         window=traj.window if traj else 50)
        params = cell.method.params(cell.rho)
        exploited = np.asarray(problem.arm_names, dtype=object)[res.counts.argmax(axis=1)]  # ties: lowest arm
        runs = pd.DataFrame({
            **common, "budget_tokens": res.budget_tokens, "rep": reps, "pulls": res.pulls,
            "spend_tokens": res.spend_tokens, "regret_hv": res.regret_hv, "regret_std": res.regret_std,
            "frac_optimal": res.frac_optimal, "exploited": exploited, **params, "seed": seed,
            "cabench_version": cabench.__version__,
        })[ONLINE_COLUMNS]
        selections = pd.DataFrame({"method": cell.method.name, "rho": cell.rho,
                                   **_per_arm(problem, reps, {"pulls": res.counts})})[ONLINE_SELECTION_COLUMNS]
        trajectories = None
        if res.trajectory is not None:
            t = res.trajectory
            points = len(t["tokens"])
            trajectories = pd.DataFrame({
                "method": cell.method.name, "rho": cell.rho, "rep": np.repeat(reps, points),
                "point": np.tile(np.arange(points), len(reps)), "tokens": np.tile(t["tokens"], len(reps)),
                "cum_regret": t["cum_regret"].reshape(-1), "moving_avg": t["moving_avg"].reshape(-1),
            })[TRAJECTORY_COLUMNS]
        return runs, selections, trajectories
    res = run_psi(problem, cell.method, cell.rho, keys, cell.cost_mode)
    runs = pd.DataFrame({
        **common, "cost_mode": cell.cost_mode, "budget_tokens": res.budget_tokens, "rep": reps,
        "error": res.error.astype(int), "f1": res.f1, "size": res.size, "spend_tokens": res.spend_tokens,
        "seed": seed, "cabench_version": cabench.__version__,
    })[PSI_COLUMNS]
    selections = pd.DataFrame({
        "method": cell.method.name, "cost_mode": cell.cost_mode, "rho": cell.rho,
        **_per_arm(problem, reps, {"samples": res.samples, "returned": res.returned.astype(int)}),
    })[PSI_SELECTION_COLUMNS]
    return runs, selections, None
