"""Preprocessed, immutable datasets (SPEC §2, paper Appendix A).

:func:`load_dataset` reads a dataset folder, validates it and turns it into a
:class:`Dataset`: per-arm arrays of the profiling and evaluation rows (the log
columns and one reward per objective), the :class:`~cabench.data.normalisation.Normalisation`
the profiling split fixes (``c_i``, ``c_max``, ``tau5``, ``tau95``, ``lambda``)
and the population means ``mu``, ``mu^c``, ``H`` and ``nu``. Arms are the
configurations in order of first appearance in the log file.
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cabench.data.io import find_log_file, read_logs, read_metadata, read_table
from cabench.data.normalisation import Normalisation, fit_normalisation
from cabench.data.schema import CONFIG_COLUMNS
from cabench.data.surrogate import held as surrogate_rows
from cabench.data.surrogate import names_shipped_instances
from cabench.data.terms import (
    COST_COLUMN,
    PAPER_TERMS,
    USD_COLUMN,
    Terms,
    cost_per_call,
    declares_terms,
    parse_terms,
    usd_per_call,
)
from cabench.errors import CabenchError


@dataclass(frozen=True)
class Split:
    """Profiling/evaluation split of the instances (SPEC §2.1)."""

    profiling_size: int = 200
    seed: int = 0

    def __post_init__(self) -> None:
        if int(self.profiling_size) < 1:
            raise CabenchError(f"split.profiling_size must be at least 1, got {self.profiling_size}")


def split_instances(instance_ids: np.ndarray, split: Split, source: str = "",
                    questions: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Split sorted instance ids with a seeded permutation (SPEC §2.1).

    Returns the positions (into ``instance_ids``) of the profiling and the
    evaluation instances, each in ascending order. ``source`` is the file that
    gave the split (named first in an error). ``questions`` (one label per instance id) groups the runs of one
    question (``--repeats epochs``' ``<id>#k``): the permutation is then of the sorted questions,
    ``profiling_size`` counts questions, and every run of a question falls on its question's side.
    """
    labels = instance_ids if questions is None else np.asarray(questions, dtype=object)
    units = np.array(sorted(set(map(str, labels))), dtype=object) if questions is not None else instance_ids
    n = len(units)
    if split.profiling_size >= n:
        what = "instances" if questions is None else (
            f"questions (their {len(instance_ids)} runs numbered <id>#k by --repeats epochs)")
        raise CabenchError(
            f"{source + ': ' if source else ''}split.profiling_size is {split.profiling_size} but the logs have only "
            f"{n} {what}; leave at least one for evaluation (set split.profiling_size in the config or "
            "dataset.yaml)"
        )
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(split.seed))))
    perm = rng.permutation(n)
    if questions is None:
        return np.sort(perm[: split.profiling_size]), np.sort(perm[split.profiling_size :])
    profiled = np.isin(np.asarray(labels, dtype=str), units[perm[: split.profiling_size]].astype(str))
    return np.flatnonzero(profiled), np.flatnonzero(~profiled)


def epoch_questions(meta: dict[str, Any], instance_ids: np.ndarray) -> np.ndarray | None:
    """The question of each instance id of logs imported with ``--repeats epochs`` (``provenance.repeats.policy``),
    whose every run is named ``<id>#k``: the id less its ``#k``; None for other logs."""
    provenance = meta.get("provenance")
    repeats = provenance.get("repeats") if isinstance(provenance, dict) else None
    if not isinstance(repeats, dict) or repeats.get("policy") != "epochs":
        return None
    return np.array([question_of(str(i)) for i in instance_ids], dtype=object)


def question_codes(meta: dict[str, Any], instance_ids: Sequence[str]) -> np.ndarray | None:
    """Epoch logs (:func:`epoch_questions`): each instance's question as ``0 .. q-1``, in the questions' order; None
    for other logs."""
    asked = epoch_questions(meta, np.asarray(instance_ids, dtype=object))
    return None if asked is None else np.unique(asked.astype(str), return_inverse=True)[1].astype(np.int64)


def question_of(instance_id: str) -> str:
    """The question a run ``<id>#k`` of ``--repeats epochs`` is of (the id itself without a ``#k``)."""
    head, sep, tail = instance_id.rpartition("#")
    return head if sep and tail.isdigit() else instance_id


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Dataset:
    """A validated, preprocessed dataset. Arrays are ``[arms, instances]`` and read-only.

    ``prof`` and ``evaluation`` hold every numeric log column the logs have (as the logs give them: the rewards,
    :attr:`rewards_prof` and :attr:`rewards_eval`, are the quantised ones), each call's
    cost in the declared unit (``cost``) and, where known, its dollars (``usd``: the price table or ``cost_usd``).
    """

    name: str
    path: str
    meta: dict[str, Any]
    configs: pd.DataFrame
    split: Split
    profiling_ids: tuple[str, ...]
    evaluation_ids: tuple[str, ...]
    prof: dict[str, np.ndarray]
    evaluation: dict[str, np.ndarray]
    rewards_prof: tuple[np.ndarray, ...]  # one [arms, instances] array per objective of ``norm``
    rewards_eval: tuple[np.ndarray, ...]
    norm: Normalisation  # of every configuration
    clipped_rows: int
    terms: Terms = PAPER_TERMS
    content_hash: str = field(default="")

    @property
    def n_arms(self) -> int:
        return len(self.configs)

    @property
    def surrogate(self) -> bool:
        return bool(self.meta.get("surrogate", False))

    @property
    def acc_prof(self) -> np.ndarray:
        return self.prof["correct"]

    @property
    def acc_eval(self) -> np.ndarray:
        return self.evaluation["correct"]

    @property
    def tokens_prof(self) -> np.ndarray | None:
        return self.prof.get("tokens")

    @property
    def tokens_eval(self) -> np.ndarray | None:
        return self.evaluation.get("tokens")

    @property
    def latency_prof(self) -> np.ndarray | None:
        return self.prof.get("latency_s")

    @property
    def latency_eval(self) -> np.ndarray | None:
        return self.evaluation.get("latency_s")

    @property
    def cost_unit(self) -> str:
        return self.norm.cost_unit

    @property
    def profile_cost(self) -> np.ndarray:
        """Deterministic cost ``c_i``: profiling mean cost (SPEC §2.2)."""
        return self.norm.profile_cost

    @property
    def c_max(self) -> float:
        """Largest profiling cost (SPEC §2.2)."""
        return self.norm.c_max

    @property
    def lam(self) -> float:
        """Online cost lower bound ``lambda`` (SPEC §2.5)."""
        return self.norm.lam

    @property
    def tau5(self) -> float | None:
        """5th percentile of the profiling latencies (SPEC §2.2)."""
        return self.norm.tau5

    @property
    def tau95(self) -> float | None:
        """95th percentile of the profiling latencies (SPEC §2.2)."""
        return self.norm.tau95

    @property
    def cost_eval(self) -> np.ndarray:
        """Normalised evaluation costs ``c~ = min(cost / c_max, 1)`` (SPEC §2.3)."""
        return self.norm.online_cost(self.evaluation[COST_COLUMN])

    @property
    def mu(self) -> np.ndarray:
        """Population means ``mu_i``, one column per objective, on the evaluation split, ``[K, D]``."""
        return np.stack([r.mean(axis=1) for r in self.rewards_eval], axis=1)

    @property
    def mu_cost(self) -> np.ndarray:
        """Population mean normalised cost ``mu^c_i`` on the evaluation split."""
        return self.cost_eval.mean(axis=1)

    @property
    def hv(self) -> np.ndarray:
        """Single-point hypervolume ``H_i = prod_d mu_i^(d)`` (paper §3.1)."""
        return np.prod(self.mu, axis=1)

    @property
    def nu(self) -> np.ndarray:
        """Hypervolume efficiency ``nu_i = H_i / mu^c_i`` (paper §3.1)."""
        return self.hv / self.mu_cost

    def table1_means(self) -> pd.DataFrame:
        """Configuration-level means over all instances (Table 1 statistics) of the measurements the logs have."""
        n_p, n_e = self.acc_prof.shape[1], self.acc_eval.shape[1]
        out = {"config_id": self.configs["config_id"].to_numpy()}
        for name, column in (("accuracy", "correct"), ("latency_s", "latency_s"), ("tokens", "tokens"),
                             ("usd", USD_COLUMN)):
            if column in self.prof:
                out[name] = (self.prof[column].sum(axis=1) + self.evaluation[column].sum(axis=1)) / (n_p + n_e)
        return pd.DataFrame(out)


def _wide(frame: pd.DataFrame, column: str, configs: list[str], ids: np.ndarray) -> np.ndarray:
    table = frame.pivot(index="config_id", columns="instance_id", values=column)
    return table.loc[configs, ids].to_numpy(dtype=np.float64)


def preprocess(frame: pd.DataFrame, meta: dict[str, Any], split: Split, *, name: str, path: str,
               content_hash: str = "", terms: Terms = PAPER_TERMS, split_source: str = "",
               terms_source: str = "") -> Dataset:
    """Turn validated canonical logs into a :class:`Dataset` (SPEC §2) on the declared ``terms``.

    ``split_source`` and ``terms_source`` name the files that gave the split and the terms (a config, or the
    dataset's ``dataset.yaml``); an error about them names that file, else the dataset folder ``path``."""
    config_ids = list(pd.unique(frame["config_id"]))
    configs = (
        frame.drop_duplicates("config_id")[["config_id", *CONFIG_COLUMNS]].reset_index(drop=True)
    )
    instance_ids = np.array(sorted(pd.unique(frame["instance_id"])), dtype=object)
    prof_pos, eval_pos = split_instances(instance_ids, split, split_source or path,
                                         epoch_questions(meta, instance_ids))
    prof_ids, eval_ids = instance_ids[prof_pos], instance_ids[eval_pos]

    said = terms_source or path
    logs = "" if said == path else f" (dataset {path})"
    frame = frame.assign(**{COST_COLUMN: cost_per_call(frame, terms, said + logs)})
    usd = usd_per_call(frame, terms, said + logs)
    if usd is not None:
        frame = frame.assign(**{USD_COLUMN: usd})
    numeric = [c for c in frame.columns if c not in ("config_id", "instance_id", *CONFIG_COLUMNS)]
    for i, spec in enumerate(terms.objectives):
        if spec.column not in numeric and spec.normalise != "inverse":
            why = (f"'{spec.column}' names a configuration, not a measure of each call" if spec.column in
                   ("config_id", "instance_id", *CONFIG_COLUMNS) else
                   f"the logs{logs} lack it (a column beyond the canonical ones is kept only where dataset.yaml lists "
                   "it under extra_columns)")
            raise CabenchError(f"{said}: objectives[{i}]: '{spec.name}' reads the column '{spec.column}': {why}; the "
                               f"columns objectives can read are {', '.join(numeric)}")
    full = {col: _wide(frame, col, config_ids, instance_ids) for col in numeric}
    prof = {col: _readonly(values[:, prof_pos]) for col, values in full.items()}
    evaluation = {col: _readonly(values[:, eval_pos]) for col, values in full.items()}
    norm = fit_normalisation(prof, path, "the logs need latencies that vary", terms,
                             (config_ids, [str(i) for i in prof_ids]))
    free = np.flatnonzero(norm.online_cost(evaluation[COST_COLUMN]).max(axis=1) == 0)
    if len(free):
        raise CabenchError(
            f"{said}{logs}: configuration '{config_ids[free[0]]}' costs 0 {terms.cost} (or under 2^-24 of the "
            f"largest profiling call) on every one of the {len(eval_ids)} evaluation instances ({len(free)} such "
            f"configuration{'s' * (len(free) > 1)}), so its hypervolume per cost nu = H / mu^c is undefined and an "
            "online run would pull it without ever spending the budget; give its calls their cost, or leave it out "
            "of the logs")
    clipped = int((evaluation[COST_COLUMN] > norm.c_max).sum())
    return Dataset(
        name=name,
        path=path,
        meta=dict(meta),
        configs=configs,
        split=split,
        profiling_ids=tuple(map(str, prof_ids)),
        evaluation_ids=tuple(map(str, eval_ids)),
        prof=prof,
        evaluation=evaluation,
        rewards_prof=tuple(map(_readonly, norm.rewards(prof))),
        rewards_eval=tuple(map(_readonly, norm.rewards(evaluation))),
        norm=norm,
        clipped_rows=clipped,
        terms=terms,
        content_hash=content_hash,
    )


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes (part of every cell's cache key)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def declared_split(meta: dict[str, Any], folder: Path, where: str = "") -> Split:
    """The split ``dataset.yaml`` declares (``split: {profiling_size, seed}``), else 200 / seed 0; an error names
    ``where`` (default: the folder's ``dataset.yaml``)."""
    declared = meta.get("split")
    if declared is None:
        return Split()
    where = f"{where or (str(folder / 'dataset.yaml') + ': ')}split"
    if not isinstance(declared, dict) or set(declared) - {"profiling_size", "seed"}:
        raise CabenchError(f"{where}: expected a mapping with profiling_size and seed, got {declared!r}")
    values = []
    for key, default, low in (("profiling_size", 200, 1), ("seed", 0, 0)):
        v = declared.get(key, default)
        if isinstance(v, float) and math.isfinite(v) and v.is_integer():  # 2e2: a whole number, as a config reads it
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise CabenchError(f"{where}.{key}: expected a whole number of at least {low}, got {v!r}")
        values.append(v)
    return Split(*values)


def declared_terms(meta: dict[str, Any], folder: Path, where: str = "") -> Terms:
    """The terms ``dataset.yaml`` declares (``objectives``, ``cost``, ``prices``), else the paper's; an error names
    ``where`` (default: the folder's ``dataset.yaml``)."""
    if not declares_terms(meta):
        return PAPER_TERMS
    where = where or f"{folder / 'dataset.yaml'}: "
    return parse_terms(meta, lambda key, message: CabenchError(f"{where}{key}: {message}"))


def load_dataset(folder: str | Path, split: Split | None = None, terms: Terms | None = None,
                 source: str = "") -> Dataset:
    """Load, validate and preprocess a dataset folder on the declared ``terms`` (None: those ``dataset.yaml``
    declares, else the paper's).

    ``split`` defaults to the folder's ``dataset.yaml`` key ``split``
    (``profiling_size``, ``seed``) or, failing that, 200 profiling instances
    with seed 0. ``source`` names the file (a config) that gave ``split`` and ``terms``: an error about either
    names it.
    """
    folder = Path(folder)
    log_path = find_log_file(folder)  # a missing folder or log file is named first
    meta = read_metadata(folder)
    stated = str(folder / "dataset.yaml")
    split_source = source if split is not None else stated if meta.get("split") is not None else ""
    terms_source = source if terms is not None else stated if declares_terms(meta) else ""
    if split is None:
        split = declared_split(meta, folder)
    if terms is None:
        terms = declared_terms(meta, folder)
    digest = file_digest(log_path)
    key = (str(folder), digest, file_digest(folder / "dataset.yaml"), split, terms)
    kept = _LOADED.pop(key, None)
    if kept is None:
        frame, _ = read_logs(folder, meta.get("missing", "error"), tuple(meta.get("extra_columns") or ()))
        if meta.get("surrogate") is not True and names_shipped_instances(frame):  # said real: surrogate all the same
            # if it holds the shipped rows, as the file holds them (before the declared `missing` drops rows)
            found = surrogate_rows(frame if meta.get("missing", "error") == "error" else read_table(log_path))
            if found is not None:
                meta = {**meta, "surrogate": True, "surrogate_source": found.describe()}
        kept = preprocess(frame, meta, split, name=str(meta.get("name", folder.name)), path=str(folder),
                          content_hash=digest, terms=terms, split_source=split_source, terms_source=terms_source)
    _LOADED[key] = kept
    while len(_LOADED) > _KEEP_LOADED:
        _LOADED.popitem(last=False)
    return replace(kept, meta=copy.deepcopy(kept.meta), configs=kept.configs.copy())


#: The datasets this process loaded last, keyed by the folder as named, the SHA-256 of its log file and of its
#: ``dataset.yaml``, the split and the terms: a command that runs several experiments on one dataset (``cabench run
#: A.yaml B.yaml``, a test session) reads and validates its logs once. Changed bytes are a new key; the arrays are
#: read-only and each caller gets its own ``meta`` and ``configs``.
_LOADED: OrderedDict[tuple, Dataset] = OrderedDict()
_KEEP_LOADED = 4

