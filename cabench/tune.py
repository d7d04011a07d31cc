"""Profiling-only hyper-parameter selection for the online methods (Appendix A).

The paper's own online method (CoHV-UCB, ``registry.proposed``) is replayed on
the *profiling* split only (samples drawn from it, regret scored against its
means) for every ``(s_r, s_c, eta)`` of the grid; the triple with the lowest
mean R_HV (averaged over the rho grid and the repetitions) is chosen. The
evaluation split is never touched. The method is scored as the config runs it
(its ``alpha``; the defaults where the config does not list it); its theory
mode uses none of the three, and is refused.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from tqdm.auto import tqdm

from cabench import registry
from cabench.backends import Backend, parallel_map
from cabench.config import ExperimentConfig
from cabench.data.dataset import file_digest
from cabench.errors import CabenchError
from cabench.methods.configured import OnlineMethod
from cabench.online import run_online
from cabench.plan import build_problem, check_budgets, infeasible_cells, with_budgets
from cabench.problem import Problem
from cabench.results import read_record
from cabench.runner import prepare_output
from cabench.storage import refuse_unless_ours, replaced_together, to_csv
from cabench.streams import stream_keys
from cabench.yamlio import dump_yaml


def _score(problem: Problem, method: OnlineMethod, rhos: tuple[float, ...], keys: np.ndarray) -> float:
    return float(np.mean([run_online(problem, method, rho, keys).regret_hv.mean() for rho in rhos]))


#: How the files tune writes begin: a file of that name that begins otherwise is not replaced.
TUNE_COLUMNS = ("s_r", "s_c", "eta", "mean_regret_hv")  # tune.csv's, in order
TUNING_MARKS = {"tune.csv": ",".join(TUNE_COLUMNS) + "\n", "tune.yaml": "chosen:"}


def _check_tuning_files(out: Path) -> None:
    """Refuse, before any work, to replace a ``tune.csv`` or ``tune.yaml`` of ``out`` that tune did not write, or a
    ``tune.csv`` edited since (its SHA-256 is not the one ``tune.yaml`` records: notes added to it would be lost)."""
    for name, mark in TUNING_MARKS.items():
        refuse_unless_ours(out / name, mark, "a file cabench tune wrote", "move it, or pass another --out")
    table, record = out / "tune.csv", out / "tune.yaml"
    if not (table.is_file() and record.is_file()):
        return
    try:
        recorded = read_record(record).get("tune_csv_sha256")
    except (yaml.YAMLError, UnicodeDecodeError, OSError, AttributeError):  # (whose it is: _check_tuned_logs says)
        return
    if isinstance(recorded, str) and file_digest(table) != recorded:
        raise CabenchError(f"{table}: edited since cabench tune wrote it (its SHA-256 is not the one tune.yaml "
                           "records); move it, or pass another --out")


def _check_tuned_logs(out: Path, sha256: str | None) -> None:
    """Refuse, before any work, a folder whose results (``config.yaml``) or tuning (``tune.yaml``) come from other
    logs under the same experiment name: its tuning would be replaced by one on other data, beside results it does
    not belong to. (What else a config changes — the methods' parameters tune chooses, the repetitions of a run —
    leaves tune its folder.)"""
    for name, key in (("config.yaml", ("dataset_info", "sha256")), ("tune.yaml", ("dataset_sha256",))):
        path = out / name
        try:
            record = read_record(path) if path.is_file() else None
        except (yaml.YAMLError, UnicodeDecodeError, OSError):  # (a damaged config.yaml was refused already)
            raise CabenchError(f"{path}: unreadable, so whose tuning it is is unknown; move it, or pass --out "
                               "another folder") from None
        recorded: Any = record
        for part in key:
            recorded = recorded.get(part) if isinstance(recorded, dict) else None
        if sha256 is not None and isinstance(recorded, str) and recorded != sha256:
            what = "results" if name == "config.yaml" else "tuning"
            raise CabenchError(f"{out}: holds the {what} of this experiment's name on other logs (SHA-256 "
                               f"{recorded[:12]}… in {name}, this config's {sha256[:12]}…); pass --out another folder")


def tied_at_best(table: pd.DataFrame) -> int:
    """How many settings of a sorted ``tune.csv`` score the chosen one's mean R_HV exactly: beyond 1, the profiling
    rows tell them apart by none of their pulls, and the choice among them is the table's order."""
    scores = table[TUNE_COLUMNS[-1]].to_numpy(dtype=float)
    return int((scores == scores[0]).sum()) if len(scores) else 0


def tuned_method(cfg: ExperimentConfig) -> OnlineMethod:
    """The method ``tune`` scores: the config's own entry of the paper's online method (its ``alpha`` and
    ``mode``), else that method with its defaults."""
    tuned = registry.proposed("online")
    return next((m for m in cfg.methods if isinstance(m, OnlineMethod) and m.name == tuned), OnlineMethod(tuned))


def run_tuning(cfg: ExperimentConfig, quiet: bool = False) -> tuple[pd.DataFrame, dict, Path, bool]:
    """Grid search; writes ``tune.csv`` (every triple) and ``tune.yaml`` (the choice, and whether the logs scored
    are surrogate) to the output folder; returns the table, the choice, the folder and whether the logs are
    surrogate."""
    if cfg.setting != "online":
        raise CabenchError(f"{cfg.source}: setting: tuning applies to online configs, not '{cfg.setting}'")
    if cfg.synthetic is not None:
        raise CabenchError(f"{cfg.source}: dataset: tuning replays a profiling split; give a dataset folder")
    problem, _, ds = build_problem(cfg, source="profiling")
    cfg = with_budgets(cfg, problem)  # budgets stated in the cost unit, as rho (unresolved they are NaN)
    check_budgets(cfg, problem)
    spec = cfg.tune
    rhos = spec.rho or cfg.rho
    tuned = registry.proposed("online")
    base = tuned_method(cfg)
    if base.mode == "theory":  # s_r = s_c = 1 and one initial pull: every triple of the grid would run alike
        raise CabenchError(f"{cfg.source}: methods.{tuned}.mode: theory uses none of s_r, s_c and eta (Algorithm 1 "
                           "exactly); tuning applies to mode: experimental")
    too_small = infeasible_cells(replace(cfg, rho=tuple(spec.rho), methods=(base,)), problem)
    if too_small:  # scored there, every triple would have no regret, and the choice would be the grid's first
        raise CabenchError(f"{cfg.source}: tune.rho: {next(iter(too_small.values()))}")
    out = Path(cfg.output)
    _check_tuning_files(out)
    prepare_output(cfg, out, force=False, offer_force=False)  # another experiment's folder is refused
    sha256 = None if ds is None else ds.content_hash
    surrogate = bool(ds is not None and ds.surrogate)
    _check_tuned_logs(out, sha256)
    grid = list(itertools.product(spec.s_r, spec.s_c, spec.eta))
    pulls = len(grid) * float(sum(rhos)) * problem.n_arms * spec.repetitions
    if pulls > cfg.max_pulls:
        raise CabenchError(f"{cfg.source}: tune: the grid makes about {pulls:.3g} pulls, above max_pulls = "
                           f"{cfg.max_pulls:.3g}; lower tune.repetitions or tune.rho, or raise max_pulls")
    keys = stream_keys(cfg.seed, np.arange(spec.repetitions), problem.arm_ids)
    tasks = [(problem, replace(base, s_r=s_r, s_c=s_c, eta=eta), rhos, keys) for s_r, s_c, eta in grid]
    backend = Backend(cfg.backend, cfg.n_jobs, cfg.scheduler_address)
    scores = list(tqdm(parallel_map(_score, tasks, backend), total=len(grid), desc="tune", disable=quiet,
                       leave=False))
    table = pd.DataFrame([(*triple, score) for triple, score in zip(grid, scores)], columns=list(TUNE_COLUMNS))
    *parameters, score = TUNE_COLUMNS
    table = table.sort_values([score, *parameters], kind="stable").reset_index(drop=True)
    best = {k: float(table.iloc[0][k]) for k in parameters}
    text = to_csv(table).encode()  # written as these bytes on every system, so the digest below is the file's
    with replaced_together() as files:  # a full disk while writing either leaves both as they were
        files.write(out / "tune.csv", text)
        files.write(out / "tune.yaml", dump_yaml({
            "chosen": best, "tied_at_best": tied_at_best(table), "scored_on": "profiling split", "method": tuned,
            "mode": base.mode, "alpha": float(base.alpha), "rho": list(rhos),
            "repetitions": spec.repetitions, "seed": cfg.seed, "dataset_sha256": sha256, "surrogate": surrogate,
            "tune_csv_sha256": hashlib.sha256(text).hexdigest()}))
    return table, best, out, surrogate
