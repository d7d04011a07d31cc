"""Cells: the unit of work of an experiment (method x rho x cost mode x chunk of repetitions).

A cell's result depends only on the problem, the method, the budget, the cost
mode, its repetitions and the seed, never on which worker runs it or on the
other cells. Its cache key is a hash of exactly those inputs plus the engine
revision.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

import cabench
from cabench.config import ExperimentConfig, TrajectorySpec
from cabench.online import OnlineMethod, run_online
from cabench.problem import Problem
from cabench.psi import PsiMethod, run_psi
from cabench.streams import stream_keys

#: Bump when a change to the engines changes any result: stale cells are never reused.
ENGINE_REVISION = "1"

ONLINE_COLUMNS = ["dataset", "setting", "method", "rho", "budget_tokens", "rep", "pulls", "spend_tokens",
                  "regret_hv", "regret_std", "frac_optimal", "mode", "s_r", "s_c", "eta", "alpha", "n_init",
                  "seed", "cabench_version"]
PSI_COLUMNS = ["dataset", "setting", "method", "cost_mode", "rho", "budget_tokens", "rep", "error", "f1", "size",
               "spend_tokens", "returned", "samples", "seed", "cabench_version"]
TRAJECTORY_COLUMNS = ["method", "rho", "rep", "point", "tokens", "cum_regret", "moving_avg"]


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
        out = {"method": method, "rho": self.rho, "cost_mode": self.cost_mode, "reps": [self.start, self.stop]}
        if self.trajectory:
            out["trajectory"] = {"points": self.trajectory.points, "window": self.trajectory.window}
        return out


def plan_cells(cfg: ExperimentConfig) -> list[Cell]:
    """Every cell of an experiment, in output order."""
    chunks = [(s, min(s + cfg.chunk_size, cfg.repetitions)) for s in range(0, cfg.repetitions, cfg.chunk_size)]
    modes = cfg.cost_modes if cfg.setting == "psi" else (None,)
    cells = []
    for method in cfg.methods:
        for mode in modes:
            for rho in cfg.rho:
                traj = cfg.trajectories if cfg.trajectories and cfg.trajectories.rho == rho else None
                cells += [Cell(method, rho, mode, a, b, traj) for a, b in chunks]
    return cells


def cell_key(identity: dict[str, Any], setting: str, seed: int, cell: Cell) -> str:
    """SHA-256 of everything that determines a cell's result."""
    payload = {"problem": identity, "setting": setting, "seed": seed, "cell": cell.describe(),
               "engine": ENGINE_REVISION, "version": cabench.__version__}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _compact(values: np.ndarray) -> str:
    return ";".join(str(int(v)) for v in values)


def run_cell(problem: Problem, setting: str, seed: int, cell: Cell) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Run one cell; return its rows of ``runs.csv`` and (online, trajectory budget) per-rep trajectories."""
    reps = np.arange(cell.start, cell.stop)
    keys = stream_keys(seed, reps, problem.arm_ids)
    common = {"dataset": problem.name, "setting": setting, "method": cell.method.name, "rho": cell.rho}
    if setting == "online":
        traj = cell.trajectory
        res = run_online(problem, cell.method, cell.rho, keys, trajectory_points=traj.points if traj else 0,
                         window=traj.window if traj else 50)
        params = cell.method.params(cell.rho)
        runs = pd.DataFrame({
            **common, "budget_tokens": res.budget_tokens, "rep": reps, "pulls": res.pulls,
            "spend_tokens": res.spend_tokens, "regret_hv": res.regret_hv, "regret_std": res.regret_std,
            "frac_optimal": res.frac_optimal, **params, "seed": seed, "cabench_version": cabench.__version__,
        })[ONLINE_COLUMNS]
        trajectories = None
        if res.trajectory is not None:
            t = res.trajectory
            points = len(t["tokens"])
            trajectories = pd.DataFrame({
                "method": cell.method.name, "rho": cell.rho, "rep": np.repeat(reps, points),
                "point": np.tile(np.arange(points), len(reps)), "tokens": np.tile(t["tokens"], len(reps)),
                "cum_regret": t["cum_regret"].reshape(-1), "moving_avg": t["moving_avg"].reshape(-1),
            })[TRAJECTORY_COLUMNS]
        return runs, trajectories
    res = run_psi(problem, cell.method, cell.rho, keys, cell.cost_mode)
    runs = pd.DataFrame({
        **common, "cost_mode": cell.cost_mode, "budget_tokens": res.budget_tokens, "rep": reps,
        "error": res.error.astype(int), "f1": res.f1, "size": res.size, "spend_tokens": res.spend_tokens,
        "returned": [_compact(np.flatnonzero(row)) for row in res.returned],
        "samples": [_compact(row) for row in res.samples], "seed": seed, "cabench_version": cabench.__version__,
    })[PSI_COLUMNS]
    return runs, None
