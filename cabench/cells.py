"""Cells: the unit of work of an experiment (method x rho x cost mode x chunk of repetitions).

A cell's result depends only on the problem, the method, the budget, the cost
mode, its repetitions and the seed, never on which worker runs it or on the
other cells. This module computes cells and nothing else: its source, with
every module it imports, is the code that cache keys hash
(:mod:`cabench.cell_keys`); which cells an experiment has is planned in
:mod:`cabench.plan`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import cabench
from cabench.methods.configured import OnlineMethod, PsiMethod
from cabench.online import run_online
from cabench.problem import Problem
from cabench.psi import run_psi
from cabench.streams import stream_keys
from cabench.units import to_files

if TYPE_CHECKING:  # a type hint only: how configs are read does not compute cells
    from cabench.config import TrajectorySpec

ONLINE_COLUMNS = ["dataset", "setting", "method", "rho", "budget", "rep", "pulls", "spend",
                  "regret_hv", "regret_std", "frac_optimal", "exploited", "unpulled", "mode", "s_r", "s_c", "eta",
                  "alpha", "n_init", "seed", "cabench_version"]
PSI_COLUMNS = ["dataset", "setting", "method", "cost_mode", "rho", "budget", "rep", "error", "f1", "size",
               "spend", "unpulled", "seed", "cabench_version"]
ONLINE_SELECTION_COLUMNS = ["method", "rho", "rep", "config_id", "pulls"]
PSI_SELECTION_COLUMNS = ["method", "cost_mode", "rho", "rep", "config_id", "samples", "returned"]
TRAJECTORY_COLUMNS = ["method", "rho", "rep", "point", "spend", "cum_regret", "moving_avg"]


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
        digest = m.entry.source_digest()
        if digest is not None:  # a method of one's own: editing its module recomputes its cells
            method["source"] = digest
        state = m.entry.state_digest()
        if state is not None:  # a callable object's settings: changing them in one process recomputes its cells
            method["state"] = state
        out = {"method": method, "rho": self.rho, "cost_mode": self.cost_mode, "reps": [self.start, self.stop]}
        if self.trajectory:
            out["trajectory"] = {"points": self.trajectory.points, "window": self.trajectory.window}
        return out


def _per_arm(problem: Problem, reps: np.ndarray, values: dict[str, np.ndarray]) -> dict[str, Any]:
    """Tidy (rep, arm) columns of ``[reps, K]`` arrays, arms by configuration name."""
    k = problem.n_arms
    return {"rep": np.repeat(reps, k), "config_id": np.tile(np.asarray(problem.arm_names, dtype=object), len(reps)),
            **{name: np.asarray(v).reshape(-1) for name, v in values.items()}}


def unpulled(counts: np.ndarray) -> np.ndarray:
    """Per repetition, the arms it never pulled (sampled), of ``[reps, K]`` counts: at the least budgets, with costs
    that vary by call, the first round over the arms can run out before its last one (SPEC §5 pulls each arm once
    first only as far as B allows; identification's Uniform samples whole rounds, and may sample none)."""
    return (np.asarray(counts) == 0).sum(axis=1)


def run_cell(problem: Problem, setting: str, seed: int, cell: Cell
             ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    """Run one cell; return its rows of ``runs.csv``, of ``selections.csv`` and (online, trajectory
    budget) its per-repetition trajectories, budgets and spends named after the cost unit."""
    reps = np.arange(cell.start, cell.stop)
    keys = stream_keys(seed, reps, problem.arm_ids)
    common = {"dataset": problem.name, "setting": setting, "method": cell.method.name, "rho": cell.rho}
    unit = problem.norm.cost_unit
    if isinstance(cell.method, OnlineMethod):
        runs, selections, traj = _online_tables(problem, cell.method, cell, reps, keys, {**common, "seed": seed})
        counts = selections["pulls"]
    else:
        runs, selections = _psi_tables(problem, cell.method, cell, reps, keys, {**common, "seed": seed})
        traj, counts = None, selections["samples"]
    runs = to_files(runs, unit)
    spent_also = getattr(problem.sampler, "spent_also", None)
    if spent_also is not None:  # the spend in tokens or dollars too, where the cost is in another unit
        for other, spent in spent_also(keys, counts.to_numpy().reshape(len(reps), problem.n_arms)).items():
            runs.insert(runs.columns.get_loc(f"spend_{unit}") + 1, f"spend_{other}", spent)
    return runs, selections, None if traj is None else to_files(traj, unit, trajectory=True)


def _online_tables(problem: Problem, method: OnlineMethod, cell: Cell, reps: np.ndarray, keys: np.ndarray,
                   common: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    traj = cell.trajectory
    res = run_online(problem, method, cell.rho, keys, trajectory_points=traj.points if traj else 0,
                     window=traj.window if traj else 50)
    counts = np.asarray(res.counts)
    exploited = np.asarray(problem.arm_names, dtype=object)[counts.argmax(axis=1)]  # ties: lowest arm
    runs = pd.DataFrame({
        **common, "budget": res.budget, "rep": reps, "pulls": res.pulls,
        "spend": res.spend, "regret_hv": res.regret_hv, "regret_std": res.regret_std,
        "frac_optimal": res.frac_optimal, "exploited": exploited, "unpulled": unpulled(counts),
        **method.params(cell.rho),
        "cabench_version": cabench.__version__,
    })[ONLINE_COLUMNS]
    selections = pd.DataFrame({"method": method.name, "rho": cell.rho,
                               **_per_arm(problem, reps, {"pulls": counts})})[ONLINE_SELECTION_COLUMNS]
    if res.trajectory is None:
        return runs, selections, None
    t = res.trajectory
    points = len(t["spend"])
    trajectories = pd.DataFrame({
        "method": method.name, "rho": cell.rho, "rep": np.repeat(reps, points),
        "point": np.tile(np.arange(points), len(reps)), "spend": np.tile(t["spend"], len(reps)),
        "cum_regret": t["cum_regret"].reshape(-1), "moving_avg": t["moving_avg"].reshape(-1),
    })[TRAJECTORY_COLUMNS]
    return runs, selections, trajectories


def _psi_tables(problem: Problem, method: PsiMethod, cell: Cell, reps: np.ndarray, keys: np.ndarray,
                common: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    mode = str(cell.cost_mode)
    res = run_psi(problem, method, cell.rho, keys, mode)
    runs = pd.DataFrame({
        **common, "cost_mode": mode, "budget": res.budget, "rep": reps,
        "error": res.error.astype(int), "f1": res.f1, "size": res.size, "spend": res.spend,
        "unpulled": unpulled(res.samples), "cabench_version": cabench.__version__,
    })[PSI_COLUMNS]
    selections = pd.DataFrame({
        "method": method.name, "cost_mode": mode, "rho": cell.rho,
        **_per_arm(problem, reps, {"samples": res.samples, "returned": res.returned.astype(int)}),
    })[PSI_SELECTION_COLUMNS]
    return runs, selections
