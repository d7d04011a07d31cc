"""Running an experiment: cells on a parallel backend, crash-safe cell files, tidy CSVs.

``run_experiment`` validates everything first (config, dataset, budgets,
output folder), so bad input stops before anything is written. Each finished
cell is written atomically to ``OUTPUT/cells/<key>.*`` (its runs rows, per-arm
selections and trajectory rows as gzip CSV, then its seal); a re-run
reuses every cell whose key (a hash of all that determines its result) matches,
and the tables are always built from the cell files, so they are byte-identical
whatever the worker count, chunking, backend or interruptions. A re-run that
reuses every cell and finds the tables as it last wrote them from the same
inputs (``cells/joined.json``) writes nothing.
"""

from __future__ import annotations

import errno
import hashlib
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from tqdm.auto import tqdm

import cabench
from cabench import registry
from cabench.backends import Backend, TasksNotLoaded, WorkerEnded, check_sendable, parallel_map
from cabench.cell_keys import cell_key, code_hash
from cabench.cells import Cell, run_cell
from cabench.config import ExperimentConfig
from cabench.data.arms import PRESETS
from cabench.data.dataset import Dataset, question_codes
from cabench.data.describe import describe
from cabench.errors import CabenchError, Interrupted
from cabench.paper import PAPER_ROLES, SURROGATE_NOTE, paper_role
from cabench.plan import (
    budgets_beyond_exhaustive,
    build_problem,
    cheap_pulls,
    check_budgets,
    inexact_sums,
    not_run_status,
    plan_cells,
    with_budgets,
)
from cabench.problem import Problem
from cabench.record import arms_table, config_hash
from cabench.results import RUN_FILES, read_csv, read_csv_text, read_record, stored_name
from cabench.storage import (
    LOCK_NAME,
    FileSet,
    compressed,
    csv_records,
    folder_lock,
    read_text,
    record_built,
    replaced_together,
    temporary_of,
    to_csv,
    unchanged,
    write_atomic,
)
from cabench.summaries import aggregate_trajectories, summarize
from cabench.units import from_files, to_files
from cabench.yamlio import dump_yaml


@dataclass(frozen=True)
class Outcome:
    output: Path
    cells: int
    reused: int
    computed: int
    summary: pd.DataFrame
    cost_unit: str = "tokens"
    written: bool = True  # False: every cell reused and the result files already built from them, none rewritten


@cache
def git_commit() -> str:
    """The commit of cabench's checkout, asked of git once per process: the code a process runs is the code it
    loaded, whatever the checkout later moves to ("unknown" outside a checkout)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(cabench.__file__).resolve().parent)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


#: Keys of the config that ``config.yaml`` holds in the experiment record's form instead (:func:`experiment_record`).
RECORDED_OVER = ("objectives", "cost_unit")


def _differing(old: dict[str, Any], cfg: ExperimentConfig) -> str:
    """Which keys of the config differ from the ``config.yaml`` a folder holds (``old``), as a refusal names them:
    ``rho, repetitions differ``; where none does, what else the hash covers (the dataset's content, which the path
    does not show, and the configurations' names)."""
    new = cfg.identity()
    new.pop("dataset", None)  # a path: the hash takes the dataset's content
    for key in RECORDED_OVER:
        new.pop(key, None)  # config.yaml holds the record's form (objectives by name), not the config's
    if new.get("split") is None:
        new.pop("split", None)  # the dataset's own, which config.yaml records as the split in force
    keys = [k for k in dict.fromkeys([*new, *(k for k in ("budget", "trajectories") if k in old)])
            if old.get(k) != new.get(k)]
    if cfg.terms is not None:  # declared by the config (else the dataset's): compared in the record's form
        keys += [k for k, now in (("objectives", list(cfg.terms.names)), ("cost_unit", cfg.terms.cost))
                 if k in old and old[k] != now]
    if not keys:
        return "no key config.yaml shows as given differs: another dataset content, arm set, objectives or costs"
    return f"{', '.join(keys)} {'differs' if len(keys) == 1 else 'differ'}"


def _check_owner(cfg: ExperimentConfig, out: Path, force: bool, chash: str | None = None,
                 replace: bool = False, offer_force: bool = True) -> None:
    """Refuse a folder that holds another experiment (another name or setting, or the same name with another
    config hash: a copied config with a changed budget must not replace the original's results), or anything
    that is not cabench results; the message offers ``--force`` only where the command has it."""
    if force or not out.is_dir():
        return
    previous = out / "config.yaml"
    if previous.is_file():
        force_it = ", or --force to replace its results" if offer_force else ""
        try:
            old = read_record(previous)
        except (yaml.YAMLError, UnicodeDecodeError, OSError) as exc:
            why = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise CabenchError(f"{previous}: unreadable ({why}), so the folder's experiment is unknown; move the "
                               f"folder, or pass another --out{force_it}") from None
        if not isinstance(old, dict) or not isinstance(old.get("name"), str) or not isinstance(old.get("setting"), str):
            raise CabenchError(f"{previous}: names no experiment and setting (a damaged file), so the folder's "
                               f"experiment is unknown; move the folder, or pass another --out{force_it}")
        if not isinstance(old.get("config_hash"), str):  # every config.yaml a run writes records its hash
            raise CabenchError(f"{previous}: records no config_hash, so it is not the record a run writes (an "
                               "experiment config kept in its own output folder, or results of a cabench from before "
                               "config hashes), and a run would replace it; keep configs outside results folders, or "
                               f"pass another --out{force_it}")
        if (old["name"], old["setting"]) != (cfg.name, cfg.setting):
            other, this = ((old["name"], cfg.name) if old["name"] != cfg.name else
                           (f"{old['name']} ({old['setting']})", f"{cfg.name} ({cfg.setting})"))
            raise CabenchError(f"{out}: results folder holds experiment '{other}', not '{this}'; pass another "
                               f"--out{force_it}")
        if chash is not None and not replace and old["config_hash"] != chash:
            raise CabenchError(
                f"{out}: results folder holds experiment '{cfg.name}' with config hash {old.get('config_hash')}, "
                f"and this config's hash is {chash} ({_differing(old, cfg)}); pass --name (or --out) to keep both, "
                "or --replace to replace those results (reusing the cells both share"
                f"{'; --force recomputes every cell' if offer_force else ''})")
        return
    ours = ("cells", LOCK_NAME, *TUNED)  # what a run or `cabench tune` leaves before config.yaml
    foreign = sorted(p.name for p in out.iterdir()  # (a tune stopped while writing leaves a temporary file)
                     if p.name not in ours and not temporary_of(p, TUNED)
                     and not _left_by_this_run(p, cfg, chash, replace))
    if foreign:
        taken = at_stake(out, foreign)
        force_it = (", or --force to write into it" + (f", which replaces or removes its {', '.join(taken)}"
                                                       if taken else "")) if offer_force else ""
        raise CabenchError(f"{out}: folder holds '{(taken or foreign)[0]}' and no config.yaml, so it is not this "
                           f"experiment's results folder; pass another --out{force_it}")


def at_stake(out: Path, names: list[str] | None = None) -> list[str]:
    """The files of ``out`` (of ``names``, where given) that have the names a run writes or removes
    (:data:`TABLES`), in a folder without cabench's config.yaml: a user's own, which ``--force`` would replace."""
    if names is None:
        record = out / "config.yaml"
        try:
            ours = record.is_file() and isinstance((read_record(record) or {}).get("config_hash"), str)
        except (yaml.YAMLError, UnicodeDecodeError, OSError, AttributeError):
            ours = False
        names = [] if ours or not out.is_dir() else sorted(p.name for p in out.iterdir())
    return [name for name in names if name in TABLES]


def written_by_runs(folder: Path) -> list[str]:
    """The names in an experiment's results ``folder`` that no run, resume or ``cabench tune`` writes there (a
    user's own files), sorted: a folder holding any is not cabench's alone to remove."""
    ours = {*TABLES, "cells", LOCK_NAME, *TUNED}
    return sorted(p.name for p in folder.iterdir()
                  if p.name not in ours and not temporary_of(p, TUNED) and not _table_temp(p))


def check_output(cfg: ExperimentConfig, replace: bool = False) -> None:
    """Refuse, before any work, an output folder that holds another experiment or files that are not cabench
    results (:func:`_check_owner` without the config hash, which the run checks again under its lock), for a
    command that runs several experiments and has no ``--force``."""
    _check_owner(cfg, Path(cfg.output), False, None, replace, offer_force=False)


def _table_temp(path: Path) -> bool:
    """Whether ``path`` is the temporary file of a table being written."""
    return temporary_of(path, TABLES)


def _left_by_this_run(path: Path, cfg: ExperimentConfig, chash: str | None, replace: bool) -> bool:
    """Whether ``path``, in a results folder without ``config.yaml`` (written last), is what a run of this experiment
    left when stopped while writing its tables (a full disk, a kill): one of its tables whose rows name this config
    hash (with ``replace``, this experiment's name), or the temporary file of a table being written."""
    if _table_temp(path):
        return True
    if path.name not in TABLES or path.name == "config.yaml" or chash is None or not path.is_file():
        return False
    try:
        first = pd.read_csv(path, nrows=1, usecols=["experiment", "config_hash"], dtype=str)
    except (OSError, EOFError, ValueError, UnicodeDecodeError):
        return False
    return len(first) == 1 and (first["config_hash"].iloc[0] == chash
                                or (replace and first["experiment"].iloc[0] == cfg.name))


def prepare_output(cfg: ExperimentConfig, out: Path, force: bool, chash: str | None = None,
                   replace: bool = False, offer_force: bool = True) -> Path:
    """Create (or check) the output folder; refuse one that holds another experiment or other files."""
    if out.exists() and not out.is_dir():
        raise CabenchError(f"{out}: output path exists and is not a folder; pass --out with a folder")
    _check_owner(cfg, out, force, chash, replace, offer_force)
    try:
        (out / "cells").mkdir(parents=True, exist_ok=True)
        probe = out / "cells" / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        if exc.errno in NO_ROOM:  # the folder may well be writable: the disk (or the user's quota) is full
            raise CabenchError(f"{out}: cannot write in the output folder ({exc.strerror}); make room, or pass --out "
                               "with a folder on a disk with room") from None
        raise CabenchError(
            f"{out}: output folder is not writable ({exc.strerror}); pass --out with a writable folder") from None
    return out / "cells"


#: The errors of a disk with no room left (or a quota used up), not of a place one may not write.
NO_ROOM = (errno.ENOSPC, errno.EDQUOT)


#: In ``cells/``: the digest of the inputs the tables were last built from, and each table's digest.
JOINED = "joined.json"
#: What a run writes into its results folder (``selections.csv``: the plain file of an older cabench, removed).
TABLES = RUN_FILES
TUNED = ("tune.csv", "tune.yaml")  # what `cabench tune` writes into an experiment's folder (no lock: never removed)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cell_state(cache: Path, key: str) -> str:
    """``done`` when the cell's seal (``<key>.ok``, written last) matches its files, ``damaged`` when a
    seal exists but a file is missing or altered, ``missing`` otherwise."""
    seal = cache / f"{key}.ok"
    if not seal.is_file():
        return "missing"
    try:
        expected = json.loads(seal.read_text())
        for name, digest in expected.items():
            if _digest((cache / name).read_bytes()) != digest:
                return "damaged"
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return "damaged"
    return "done"


def _cell_files(key: str, runs: pd.DataFrame, selections: pd.DataFrame, traj: pd.DataFrame | None) -> dict[str, bytes]:
    """A cell's files, gzip CSV: its rows of ``runs.csv`` (``<key>.csv.gz``), its per-arm selections
    (``<key>.sel.csv.gz``) and per-repetition trajectories (``<key>.traj.csv.gz``)."""
    tables = {"": runs, ".sel": selections, **({".traj": traj} if traj is not None else {})}
    return {f"{key}{table}.csv.gz": compressed(to_csv(frame)) for table, frame in tables.items()}


def _cell_table(cache: Path, key: str, table: str = "") -> Path:
    """A cell's runs rows, or its ``.sel`` or ``.traj`` table: gzip CSV, or the plain CSV of a cell an older
    cabench wrote."""
    packed = cache / f"{key}{table}.csv.gz"
    return packed if packed.is_file() else cache / f"{key}{table}.csv"


class OtherCode(CabenchError):
    """A worker process holds other code or settings for a method of your own than the process that keyed its
    cells: its module edited and loaded again there since the worker started, or a setting changed at run time,
    which a worker cannot see."""


def _work(problem: Problem, setting: str, seed: int, cell: Cell, key: str,
          keyed: dict[str, Any] | None = None) -> tuple[str, dict[str, bytes]]:
    """Run a cell and format its files where it ran (so formatting and compressing run in parallel too). ``keyed``:
    a method of your own as its cell's key describes it (:meth:`Cell.describe`), checked against what this process
    holds before it runs, so that no cell is stored under a key of other code (:class:`OtherCode`)."""
    if keyed is not None:
        try:
            held = cell.describe()["method"]
        except CabenchError:  # (its file changed since this process imported it)
            held = None
        if held != keyed:
            raise OtherCode(f"methods: {cell.method.name}: this worker runs other code or settings for it than the "
                            "process that keyed its cells")
    return key, _cell_files(key, *run_cell(problem, setting, seed, cell))


def _execute(cfg: ExperimentConfig, problem: Problem, todo: list[tuple[Cell, str]],
             save: Callable[..., None], quiet: bool, echo: Callable[[str], None] = print) -> None:
    """Run the cells of ``todo`` on the configured backend, saving each as it finishes. Worker processes that hold
    other code or settings for a method of your own than this process (:class:`OtherCode`: a module edited and
    reloaded in a notebook, where the workers started before; a setting changed at run time) leave the cells not
    yet saved to this process, which runs them as their keys say, and says so."""
    backend = Backend(cfg.backend, cfg.n_jobs, cfg.scheduler_address)
    check_sendable({cell.method.name: cell.method for cell, _ in todo}, backend)
    own = any(cell.method.entry.source is not None for cell, _ in todo)
    tasks = [(problem, cfg.setting, cfg.seed, cell, key,  # a method of your own as its cell's key describes it
              cell.describe()["method"] if cell.method.entry.source is not None and not backend.in_process else None)
             for cell, key in todo]
    saved: set[str] = set()
    with tqdm(total=len(todo), desc=cfg.name, unit="cell", disable=quiet or not todo, leave=False) as bar:
        try:
            for result in parallel_map(_work, tasks, backend, ordered=False, shared=(problem,)):
                save(*result)
                saved.add(result[0])
                bar.update()
        except (OtherCode, TasksNotLoaded) as exc:
            if isinstance(exc, OtherCode):
                why = (f"{exc} (as when its module was edited and loaded again here after the workers started, or a "
                       "setting was changed at run time, which they cannot see)")
            elif own:  # (a module of yours put on the path after they started)
                why = ("the worker processes cannot import a method of your own (defined in a notebook, or its module "
                       "put on the path after they started)")
            else:
                raise
            left = [task[:5] for task in tasks if task[4] not in saved]
            echo(f"{cfg.name}: warning: {why}: {len(left)} cell{'s' if len(left) != 1 else ''} run in this process "
                 "instead, as their keys say")
            for result in parallel_map(_work, left, Backend("sequential", 1)):
                save(*result)
                bar.update()


def experiment_record(cfg: ExperimentConfig, problem: Problem, identity: dict[str, Any],
                      ds: Dataset | None) -> dict[str, Any]:
    """What ``config.yaml`` records beside the resolved config: identity, dataset, paper role."""
    resolved = cfg.identity()
    resolved["dataset"] = identity["dataset"]  # content, not the path: moving a dataset keeps the identity
    chash = config_hash({"config": resolved, "arms": identity["arms"]})
    role = None
    if ds is not None:
        try:
            subset = list(ds.configs["config_id"].to_numpy()[PRESETS["paper-subset"].select(ds.configs)])
        except CabenchError:
            subset = None
        role = paper_role(ds.name, ds.n_arms, list(problem.arm_names), subset, cfg.setting,
                          cfg.resolved()["methods"], list(cfg.cost_modes) if cfg.setting == "psi" else []
                          ) if ds.terms.is_paper else None  # the paper's experiments are on the paper's terms
        meta = ds.meta
        dataset = {"name": ds.name, "title": str(meta.get("title", ds.name)), "sha256": ds.content_hash,
                   "surrogate": ds.surrogate, "synthetic": False, "K": ds.n_arms,
                   "description": str(meta.get("description", "")).strip(),
                   "provenance": meta.get("provenance", ""), "path_at_run_time": ds.path,
                   # why logs said to be real ran as surrogate: they hold the shipped rows (cabench.data.surrogate)
                   **({"surrogate_source": meta["surrogate_source"]} if meta.get("surrogate_source") else {})}
    else:
        dataset = {"name": problem.name, "title": problem.name, "sha256": None, "surrogate": False,
                   "synthetic": True, "K": problem.n_arms, "description": "synthetic instance", "provenance": ""}
    objectives = [o.name for o in problem.norm.objectives]
    shown = registry.shown_facts([m.name for m in cfg.methods])  # methods of your own: as figures show them
    # and the code they ran: a folder says which version of your method made it (config_hash does not cover it)
    sources = {m.name: digest for m in cfg.methods if (digest := m.entry.source_digest()) is not None}
    return {"config_hash": chash, "paper_experiment": role,
            "paper_figures": PAPER_ROLES.get(role) if role else None, "dataset_info": dataset,
            "objectives": objectives, "cost_unit": problem.norm.cost_unit,
            **({"methods_shown": shown} if shown else {}), **({"methods_source": sources} if sources else {})}


def dataset_row(ds: Dataset | None, record: dict[str, Any]) -> pd.DataFrame:
    """``dataset.csv``: the dataset's Table 1 row and statistics (SPEC §8), for plots and reports."""
    info = record["dataset_info"]
    row: dict[str, Any] = {"dataset": info["name"], "title": info["title"], "surrogate": info["surrogate"],
                           "synthetic": info["synthetic"], "sha256": info["sha256"] or ""}
    if ds is not None:
        d = describe(ds)
        row.update({k: v for k, v in d.items() if not isinstance(v, dict)
                    and k not in ("name", "surrogate", "max_hv_arms", "max_nu_arms")})
    else:
        row["K"] = info["K"]
    return pd.DataFrame([row])


def _joined(paths: list[Path], name: str, chash: str) -> str:
    """Cell CSV files joined into one table, the identity columns prepended (text only: the large
    per-arm tables are copied record by record, not parsed and re-formatted)."""
    prefix = csv_records(to_csv(pd.DataFrame([[name, chash]])))[1] + ","  # quoted as pandas would
    parts = []
    for i, path in enumerate(paths):
        header, _, body = read_text(path).partition("\n")
        if i == 0:
            parts.append(f"experiment,config_hash,{header}\n")
        parts += [prefix + record + "\n" for record in csv_records(body)]
    return "".join(parts)


def _stacked(paths: list[Path]) -> pd.DataFrame:
    """Cell CSV tables one under the other, as their frames concatenated: parsed once, as one text, where their
    headers agree (a cell's table is small, and parsing each on its own cost more than its rows); else each."""
    texts = [read_text(path) for path in paths]
    heads = [text.partition("\n") for text in texts]
    if len({head for head, _, _ in heads}) != 1 or not all(body.endswith("\n") for _, _, body in heads):
        return pd.concat([read_csv(path) for path in paths], ignore_index=True)
    return read_csv_text(heads[0][0] + "\n" + "".join(body for _, _, body in heads), paths[0].parent)


def _identified(frame: pd.DataFrame, name: str, chash: str) -> pd.DataFrame:
    """``frame`` with the experiment's name and config hash as its first columns."""
    frame = frame.copy()
    frame.insert(0, "config_hash", chash)
    frame.insert(0, "experiment", name)
    return frame


def with_stated(summary: pd.DataFrame, cfg: ExperimentConfig) -> pd.DataFrame:
    """``summary`` with the budget each row's rho was stated as (``budget_stated``), for budget-stated configs."""
    if not cfg.budget:
        return summary
    summary = summary.copy()
    summary.insert(summary.columns.get_loc("budget") + 1, "budget_stated", summary["rho"].map(cfg.stated))
    return summary


def plan_estimate(cfg: ExperimentConfig, problem: Problem) -> dict[str, float]:
    """Pulls an experiment will make and the peak memory of its largest cell, estimated before running.

    A run at budget rho makes about ``rho K`` pulls per repetition (B = rho K cbar); a cell holds
    per-pull arrays of about 40 bytes for the pulls of its repetitions (identification phases;
    online trajectories log every step).
    """
    k = problem.n_arms
    modes = len(cfg.cost_modes) if cfg.setting == "psi" else 1
    pulls = float(sum(cfg.rho)) * k * cfg.repetitions * len(cfg.methods) * modes
    per_cell = max(cfg.rho) * k * min(cfg.chunk_size, cfg.repetitions)
    if cfg.setting == "online" and cfg.trajectories is None:
        per_cell = 0.0  # the online loop keeps [reps, arms] state only
    return {"pulls": pulls, "cell_memory_gb": 40.0 * per_cell / 2**30 + 8.0 * k * cfg.repetitions / 2**30}


def check_plan(cfg: ExperimentConfig, problem: Problem) -> None:
    """Refuse, before anything is written, a plan whose work or memory is beyond the configured limits."""
    est = plan_estimate(cfg, problem)
    if est["pulls"] > cfg.max_pulls:
        raise CabenchError(
            f"{cfg.source}: the plan makes about {est['pulls']:.3g} pulls (rho grid x {problem.n_arms} arms x "
            f"{cfg.repetitions} repetitions x methods), above max_pulls = {cfg.max_pulls:.3g}; lower rho or "
            "repetitions, or raise max_pulls in the config if you mean it")
    if est["cell_memory_gb"] > cfg.max_memory_gb:
        raise CabenchError(
            f"{cfg.source}: a cell would need about {est['cell_memory_gb']:.3g} GB, above max_memory_gb = "
            f"{cfg.max_memory_gb:g}; lower chunk_size or the largest rho, or raise max_memory_gb in the config")


def run_experiment(cfg: ExperimentConfig, *, force: bool = False, replace: bool = False, quiet: bool = False,
                   echo: Callable[[str], None] = print, strict: bool = False, offer_force: bool = True) -> Outcome:
    """Run (or resume) an experiment and write its self-contained results folder (a refusal offers ``--force``
    unless ``offer_force`` is False: the command calling has no such option).

    Files: ``runs.csv``, ``selections.csv.gz`` (gzip CSV), ``summary.csv``, ``arms.csv``,
    ``dataset.csv``, ``config.yaml`` and (online, with trajectories)
    ``trajectories.csv``; every row carries the experiment name and config hash.
    """
    problem, identity, ds = build_problem(cfg)
    cfg = with_budgets(cfg, problem)
    infeasible = check_budgets(cfg, problem, strict=strict)
    check_plan(cfg, problem)
    record = experiment_record(cfg, problem, identity, ds)
    record["infeasible"] = [{"method": m, "rho": float(r), "reason": why} for (m, r), why in infeasible.items()]
    if ds is not None and ds.surrogate and not quiet:  # as every figure and report of the results says
        echo(f"{cfg.name}: {ds.name}: {SURROGATE_NOTE}; not real model outputs")
    for (m, r), why in infeasible.items():
        echo(f"{cfg.name}: {registry.display(m)} at rho {r:g} will not run: {why}")  # (the table says "not run")
    if ds is not None and (note := ds.terms.price_note()) is not None:
        echo(f"{cfg.name}: {note}")
    if ds is not None and ds.terms.prices and "cost_usd" in ds.evaluation:
        echo(f"{cfg.name}: warning: the logs have their own cost_usd, and every dollar figure comes from the price "
             "table instead (prices take precedence); leave prices out to use the logs' dollars")
    for line in budgets_beyond_exhaustive(cfg, problem) + cheap_pulls(cfg, problem) + inexact_sums(cfg):
        echo(f"{cfg.name}: warning: {line}")
    out = Path(cfg.output)
    if (out / "config.yaml").is_file() and Path(cfg.source).is_file() \
            and (out / "config.yaml").resolve() == Path(cfg.source).resolve():
        raise CabenchError(f"{cfg.source}: the config is its own output folder's config.yaml, which a run replaces "
                           "with its record (--force too); keep configs outside results folders, or pass another "
                           "--out")
    taken = [n for n in at_stake(out) if not _left_by_this_run(out / n, cfg, record["config_hash"], replace)
             ] if force else []
    if taken:  # said before they are gone: --force is consent, not silence (this experiment's own aside)
        echo(f"{out}: --force: replacing or removing {', '.join(taken)}, which are not this experiment's")
    cache = prepare_output(cfg, out, force, record["config_hash"], replace, offer_force)
    with folder_lock(out):
        # again, under the lock: another run may have finished meanwhile
        _check_owner(cfg, out, force, record["config_hash"], replace, offer_force)
        for stale in [*cache.glob(".*.tmp"), *filter(_table_temp, out.glob(".*.tmp"))]:
            stale.unlink(missing_ok=True)  # interrupted writes; no other run holds this folder
        return _run_locked(cfg, problem, identity, ds, record, out, cache, force, quiet, echo)


def _run_locked(cfg: ExperimentConfig, problem: Problem, identity: dict[str, Any], ds: Dataset | None,
                record: dict[str, Any], out: Path, cache: Path, force: bool, quiet: bool,
                echo: Callable[[str], None]) -> Outcome:
    cells = plan_cells(cfg, frozenset((i["method"], i["rho"]) for i in record["infeasible"]))
    keys = [cell_key(identity, cfg.setting, cfg.seed, c) for c in cells]
    states = {k: ("missing" if force else _cell_state(cache, k)) for k in keys}
    todo = [(c, k) for c, k in zip(cells, keys) if states[k] != "done"]
    reused = len(cells) - len(todo)
    damaged = sum(s == "damaged" for s in states.values())
    if not quiet:
        echo(f"{cfg.name}: {len(cells)} cells ({reused} reused, {len(todo)} to run) -> {out}")
    if damaged:
        echo(f"{cfg.name}: {damaged} saved cells were damaged (altered or truncated files); computing them again")

    def save(key: str, files: dict[str, bytes]) -> None:
        for name, data in files.items():
            write_atomic(cache / name, data)
        write_atomic(cache / f"{key}.ok", json.dumps({n: _digest(d) for n, d in files.items()}))  # the seal, last

    try:
        _execute(cfg, problem, todo, save, quiet, echo)
    except (KeyboardInterrupt, WorkerEnded) as exc:
        finished = sum(_cell_state(cache, k) == "done" for k in keys)
        saved = f"{finished} of {len(cells)} cells are saved in {cache}; run the same command again to resume"
        if isinstance(exc, KeyboardInterrupt):
            raise Interrupted(f"interrupted: {saved}") from None
        memory = (" (SIGKILL is what the system sends when memory runs out: a lower n_jobs or chunk_size needs "
                  "less)") if "SIGKILL" in exc.how else ""
        raise CabenchError(f"{exc} while computing cells of {cfg.name}; {saved}{memory}") from None

    try:
        return _join_cells(cfg, problem, identity, ds, record, out, cache, list(zip(cells, keys)), reused, len(todo))
    except KeyboardInterrupt:  # every cell saved: it said only "interrupted"
        raise Interrupted(f"interrupted: all {len(cells)} cells are saved in {cache}; run the same command again "
                          "to write the result files from them") from None


def _join_cells(cfg: ExperimentConfig, problem: Problem, identity: Any, ds: Dataset | None, record: dict[str, Any],
                out: Path, cache: Path, cells: list[tuple[Any, str]], reused: int, ran: int) -> Outcome:
    """The result files joined from every saved cell (``cells``: each with its key), unless those files were built
    from the same cells and config already."""
    unit = problem.norm.cost_unit
    resolved = cfg.resolved()
    if ds is not None:  # the split in force: the config's, else dataset.yaml's, else the default
        resolved["split"] = {"profiling_size": ds.split.profiling_size, "seed": ds.split.seed}
    meta = {**resolved, **record, "cabench_version": cabench.__version__, "git_commit": git_commit(),
            "code_hash": code_hash(), "problem": identity, "surrogate": bool(problem.surrogate)}
    meta_text = dump_yaml(meta, width=100)
    inputs = _join_inputs(meta_text, cache, [key for _, key in cells])
    if not ran and unchanged(cache / JOINED, inputs, out, TABLES):  # nothing they are built from changed
        return Outcome(out, len(cells), reused, 0, from_files(read_csv(out / "summary.csv"), unit), unit, False)
    with replaced_together() as files:  # a full disk while writing any of them leaves every table as it was
        summary = _write_tables(cfg, problem, ds, record, out, cache, cells, files)
        files.write(out / "config.yaml", meta_text)
    record_built(cache / JOINED, inputs, out, TABLES)
    return Outcome(out, len(cells), reused, ran, summary, unit)


@cache
def _package_hash() -> str:
    """SHA-256 of every source file of this cabench (what joins, summarises and formats the tables)."""
    package = Path(cabench.__file__).resolve().parent
    return _digest(b"".join(_digest(p.read_bytes()).encode() for p in sorted(package.rglob("*.py"))))


def _join_inputs(meta_text: str, cache: Path, keys: list[str]) -> str:
    """Digest of what the tables are built from: ``config.yaml``'s text, each cell's seal (its files' digests)
    in order, and the code."""
    seals = b"".join(k.encode() + (cache / f"{k}.ok").read_bytes() for k in keys)
    return _digest(meta_text.encode() + seals + _package_hash().encode())


def _write_tables(cfg: ExperimentConfig, problem: Problem, ds: Dataset | None, record: dict[str, Any], out: Path,
                  cache: Path, cells: list[tuple[Cell, str]], files: FileSet) -> pd.DataFrame:
    """Write ``arms.csv``, ``dataset.csv``, ``selections.csv.gz``, ``runs.csv``, ``trajectories.csv`` and
    ``summary.csv`` from the cell files into ``files`` (:func:`~cabench.storage.replaced_together`); return the
    summary."""
    chash, unit, keys = record["config_hash"], problem.norm.cost_unit, [k for _, k in cells]
    runs = _stacked([_cell_table(cache, k) for k in keys])
    measured = (ds.evaluation, question_codes(ds.meta, ds.evaluation_ids)) if ds is not None else (None, None)
    arms = arms_table(problem, ds.configs if ds is not None else None, tuple(record["objectives"]), *measured)
    files.write(out / "arms.csv", to_csv(_identified(to_files(arms, unit), cfg.name, chash)))
    files.write(out / "dataset.csv", to_csv(_identified(dataset_row(ds, record), cfg.name, chash)))
    selections = _joined([_cell_table(cache, k, ".sel") for k in keys], cfg.name, chash)
    files.write(out / stored_name("selections.csv"), compressed(selections))
    if (out / "selections.csv").is_file():
        files.remove(out / "selections.csv")  # the plain copy an older cabench wrote
    runs = _identified(runs, cfg.name, chash)
    files.write(out / "runs.csv", to_csv(runs))
    traj_files = [_cell_table(cache, k, ".traj") for c, k in cells if c.trajectory]
    if cfg.trajectories is not None and traj_files:
        per_rep = _stacked(traj_files)
        aggregated = aggregate_trajectories(from_files(per_rep, unit, trajectory=True), problem.name,
                                            cfg.trajectories.window)
        files.write(out / "trajectories.csv",
                    to_csv(_identified(to_files(aggregated, unit, trajectory=True), cfg.name, chash)))
    elif (out / "trajectories.csv").is_file():
        files.remove(out / "trajectories.csv")  # this experiment's own stale file: it no longer has trajectories
    summary = summarize(from_files(runs, unit))
    summary.insert(summary.columns.get_loc("budget"), "status", "ok")
    if record["infeasible"]:  # one row per skipped (method, rho [, cost mode]) saying why
        skipped = pd.DataFrame([{"experiment": cfg.name, "config_hash": chash, "dataset": problem.name,
                                 "method": i["method"], **({"cost_mode": mode} if cfg.setting == "psi" else {}),
                                 "rho": i["rho"], "status": not_run_status(i["reason"]),
                                 "budget": problem.budget(i["rho"]), "n": 0,
                                 **({"reps_unpulled": 0, "unpulled_max": 0} if "reps_unpulled" in summary else {})}
                                for i in record["infeasible"] for mode in (cfg.cost_modes if cfg.setting == "psi"
                                                                             else [None])])
        summary = pd.concat([summary, skipped], ignore_index=True)
    summary = with_stated(summary, cfg)
    files.write(out / "summary.csv", to_csv(to_files(summary, unit)))
    return summary
