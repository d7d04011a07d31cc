"""``cabench advise``: from one's own logs to the configuration worth paying for, in one command.

The logs are imported (or a dataset folder is used as it is) and described; the method cabench ranks first in each
setting — CoHV-UCB online (Algorithm 1), CoPSI-R for identification (Algorithm 2 with recycled samples) — runs at
the stated budget as an experiment of its own (given targets instead, ``error<=0.1``, ``f1>=0.7`` or ``share>=0.9``,
the budget of each setting that has one is planned first from the profiling split, :mod:`cabench.budget_plan`, the
method runs at it, and the decision says what the plan predicted there beside what the run reached); the report is
written as ``cabench report`` writes it (REPORT.md and REPORT.html); and :func:`answers.decision`'s answers are
condensed into at most :data:`MAX_LINES` lines by :func:`format_advice`. Everything lands in one folder (``data/``,
``results/``); a second run with the same arguments imports nothing new and reuses every cell.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from cabench import registry
from cabench.advise_plan import (
    SHOWN_SETTING,
    Budget,
    SettingPlan,
    plan_budgets,
    plan_lines,
    reached,
    targets_by_setting,
)
from cabench.answers import (
    WEAK,
    answered,
    beaten_pairs,
    short_of,
    tie_note,
    tied_sets_note,
    unpulled_note,
    weak,
    weak_online,
)
from cabench.config import SETTINGS, parse_config
from cabench.data.arms import too_few_configurations
from cabench.data.dataset import Split, epoch_questions, file_digest, load_dataset
from cabench.data.describe import by_tie, describe
from cabench.data.importer import import_logs, profiling_split
from cabench.data.io import META_NAME, check_only_dataset_files, find_log_file, is_dataset, read_logs, read_metadata
from cabench.data.schema import CONFIG_COLUMNS
from cabench.data.terms import COST_COLUMN, USD_COLUMN, Terms, declared_keys, parse_terms
from cabench.errors import CabenchError, did_you_mean, first_three
from cabench.html_report import write_reports
from cabench.plan import build_problem, check_budgets, infeasible_cells, least_for_all, too_small, with_budgets
from cabench.recommend import any_of, but_for_means, member_notes, per_call, recommend, same_nu
from cabench.report import REPORT_MARKS, check_reports
from cabench.report_cache import FILE as SECTIONS
from cabench.report_cells import clipped_calls, quoted_name, undominated_note
from cabench.results import ResultSet, read_record
from cabench.runner import check_output, run_experiment, written_by_runs
from cabench.storage import folder_lock, new_folders, publish_folder, remove_empty, staging_folder, swap_folders
from cabench.units import LABELS, TokenCount, amount, fixed, percent
from cabench.yamlio import load_config_file

#: The most lines :func:`format_advice` prints.
MAX_LINES = 15
#: How many of the configurations tied for the online answer advise gives units per call for (the rest counted).
TIED_SHOWN = 3
#: Objectives when neither the command line nor the dataset declares any (latency only where the logs have it).
DEFAULT_OBJECTIVES = ("accuracy", "latency", "cost")



@dataclass(frozen=True)
class Request:
    """What ``cabench advise`` was asked: the logs and how to read them, the terms, the budget (or the targets to
    plan it from), the methods."""

    logs: Path
    budget: Budget | None
    out: Path = Path("advice")
    mapping: Path | None = None
    fmt: str = "canonical"
    settings: dict[str, Any] = field(default_factory=dict)
    missing: str = "error"
    repeats: str = "refuse"  # a configuration run twice on an instance (as data import's --repeats)
    metric: str | None = None  # the score read when the source has several (as data import's --metric)
    objectives: tuple[str, ...] = ()
    cost: str | None = None
    prices: Path | None = None
    methods: tuple[str, ...] = ()
    repetitions: int = 50
    replace: bool = False
    name: str | None = None  # the experiments' names begin with it (default: the dataset's name)
    targets: tuple[str, ...] = ()  # instead of a budget: error<=D, f1>=F (identification), share>=S (online)


@dataclass(frozen=True)
class Advice:
    """What :func:`advise` found: the dataset described, the budget, one ``recommend`` item per setting run; when
    the budgets were planned (``budget`` None), each setting's plan with what it predicted and what the run reached."""

    dataset: dict[str, Any]
    instances: tuple[int, int]  # profiling, evaluation
    budget: Budget | None
    repetitions: int
    items: dict[str, dict[str, Any]]
    report: Path | None  # None when nothing ran
    planned: tuple[SettingPlan, ...] = ()


def recommended(setting: str) -> str:
    """The method cabench ranks first in ``setting`` (the report's comparison base): CoHV-UCB, CoPSI-R."""
    return registry.comparison_base(setting, list(registry.names(setting)))


def methods_by_setting(names: tuple[str, ...]) -> dict[str, list[str]]:
    """``--methods`` split by setting (a name both settings have, such as Uniform, runs in both); by default the
    recommended method of each setting."""
    if not names:
        return {setting: [recommended(setting)] for setting in SETTINGS}
    known = {setting: list(registry.names(setting)) for setting in SETTINGS}
    for name in names:
        if registry.is_module_object(name) and not any(name in known[s] for s in SETTINGS):  # a method of your own
            fits, refusals = registry.settings_of(name)
            if not fits:
                why = {str(r) for r in refusals}
                raise CabenchError(f"--methods: {refusals[0]}" if len(why) == 1 else
                                   f"--methods: '{name}' is neither an online index function nor an identification "
                                   f"schedule ({'; '.join(str(r) for r in refusals)})")
            for setting in fits:
                known[setting].append(name)
        if not any(name in known[s] for s in SETTINGS):
            choices = sorted({n for s in SETTINGS for n in known[s]})
            raise CabenchError(f"--methods: '{name}' is not a method"
                               + did_you_mean(name, choices, f"; methods: {', '.join(choices)}"))
    return {s: [n for n in dict.fromkeys(names) if n in known[s]] for s in SETTINGS
            if any(n in known[s] for n in names)}


def _dataset_name(logs: Path) -> str:
    """The dataset folder's name: the logs' file name less its endings (``my_evals.csv.gz``: ``my_evals``)."""
    name = logs.resolve().name
    while Path(name).suffix.lower() in (".gz", ".csv", ".jsonl", ".json", ".parquet", ".eval") and Path(name).stem:
        name = Path(name).stem
    return name


def _same_dataset(a: Path, b: Path) -> bool:
    """The same logs, byte for byte, and the same metadata (their provenance aside: the import's date)."""
    def meta(folder: Path) -> dict[str, Any]:
        return {k: v for k, v in read_metadata(folder).items() if k != "provenance"}
    return file_digest(find_log_file(a)) == file_digest(find_log_file(b)) and meta(a) == meta(b)


def dataset_folder(request: Request, echo: Callable[[str], None]) -> tuple[Path, Path | None]:
    """The dataset to advise on: ``logs`` itself when it is a dataset folder, else its import into ``OUT/data``;
    and, where the import replaced a dataset there (``replace``), where that one waits (:func:`replaced_back`,
    :func:`replaced_gone`) until every check has passed.

    The import is written beside ``OUT/data/NAME`` first; an existing dataset there is kept when it is the same
    (a re-run), replaced with ``replace`` when it holds only what an import writes, and refused otherwise.
    """
    logs = request.logs
    if is_dataset(logs):
        if (request.mapping is not None or request.fmt != "canonical" or request.settings
                or request.repeats != "refuse" or request.metric is not None):
            raise CabenchError(f"{logs}: already a cabench dataset, used as it is; drop --mapping, --format, --set, "
                               "--repeats and --metric")
        if request.out.resolve().is_relative_to(logs.resolve()):
            raise CabenchError(f"--out {request.out}: inside the dataset {logs} it reads; pass another --out")
        return logs, None
    target = request.out / "data" / _dataset_name(logs)
    if target.resolve().is_relative_to(logs.resolve()) or logs.resolve().is_relative_to(target.resolve()):
        raise CabenchError(f"--out {request.out}: the dataset {target} would hold or replace the logs {logs}; pass "
                           "another --out")
    made = new_folders(target.parent)  # removed again, where left empty, if the import is refused
    staged = staging_folder(target)
    waiting = None
    try:
        try:
            fresh = import_logs(logs, request.mapping, staged / target.name, settings=request.settings,
                                fmt=request.fmt, missing=request.missing, metric=request.metric, echo=echo,
                                repeats=request.repeats)
        except CabenchError as exc:  # named by the folder it is written for, not the hidden one it is written in
            raise CabenchError(str(exc).replace(str(staged / target.name), str(target))) from None
        if not target.exists():
            publish_folder(fresh, target)
            return target, None
        if not is_dataset(target):  # a folder of the user's: never replaced, --replace or not
            raise CabenchError(f"{target}: exists and is not a cabench dataset (it has no dataset.yaml), so "
                               f"the import of {logs} cannot go there; pass another --out")
        if _same_dataset(target, fresh):
            return target, None
        if not request.replace:
            raise CabenchError(f"{target}: holds another dataset than the import of {logs} (other logs, mapping "
                               "or options); pass another --out, or --replace to replace it and its results")
        check_only_dataset_files(target, "--replace")
        swap_folders(fresh, target)  # the replaced dataset now waits in the staging folder
        waiting = fresh
        return target, waiting
    finally:
        if waiting is None:
            shutil.rmtree(staged, ignore_errors=True)
            remove_empty(made)


def replaced_back(waiting: Path, target: Path) -> None:
    """Put the dataset :func:`dataset_folder` replaced back at ``target`` (a check refused the advice)."""
    swap_folders(waiting, target)
    shutil.rmtree(waiting.parent, ignore_errors=True)


def results_on(target: Path, results: Path, kept: set[Path]) -> list[Path]:
    """The experiment folders below ``results`` computed on the dataset ``target`` (their ``config.yaml`` names it)
    other than ``kept`` (those about to run again, replaced as they run): what ``--replace`` removes with the
    dataset ("replace it and its results"). One that is a link, holds files a run does not write, or that another
    cabench process is writing to is refused in one line, before anything is replaced for good."""
    found = []
    for config in sorted(results.glob("*/config.yaml")) if results.is_dir() else []:
        folder = config.parent
        if folder.resolve() in kept:
            continue
        try:
            record = read_record(config)
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):  # not cabench's: no run of this dataset
            continue
        dataset = record.get("dataset") if isinstance(record, dict) else None
        if not isinstance(dataset, str) or Path(dataset).resolve() != target.resolve():
            continue
        if folder.is_symlink():
            raise CabenchError(f"{folder}: results computed on the replaced dataset {target}, reached through a "
                               "link; --replace removes only folders it finds in place: move it, or pass another --out")
        if others := written_by_runs(folder):
            raise CabenchError(f"{folder}: results computed on the replaced dataset {target} that also hold "
                               f"{first_three(others)}, which a run does not "
                               "write; --replace would delete them: move them, or pass another --out")
        with folder_lock(folder):  # refused at once when another cabench process writes there
            pass
        found.append(folder)
    return found


def replaced_gone(waiting: Path, folders: list[Path]) -> list[str]:
    """Remove the results ``folders`` computed on the dataset :func:`dataset_folder` replaced (each under its lock),
    then that dataset; the names of the folders removed."""
    for folder in folders:
        with folder_lock(folder):
            shutil.rmtree(folder)
    shutil.rmtree(waiting.parent, ignore_errors=True)
    return [folder.name for folder in folders]


def _prices(path: Path) -> Any:
    """A price table file, ``{model or pattern: {input: $/1M tokens, output: $/1M tokens}}``, or the ``prices`` of
    a config or ``dataset.yaml`` that declares one."""
    table = load_config_file(path, "price table", "--prices ")
    if table is None or table == {}:  # (an empty export, not a table that lacks the logs' models)
        raise CabenchError(f"--prices {path}: the file is empty; give a price table {{model or pattern: {{input: "
                           "$/1M, output: $/1M}}")
    return table["prices"] if isinstance(table, dict) and isinstance(table.get("prices"), dict) else table


def given_terms(request: Request) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``objectives``, ``cost`` and ``prices`` the command line gives, checked, and the flag each came from."""
    raw: dict[str, Any] = {}
    origin: dict[str, str] = {}
    if request.objectives:
        raw["objectives"], origin["objectives"] = list(request.objectives), "--objectives"
    if request.prices is not None:
        raw["prices"], origin["prices"] = _prices(request.prices), f"--prices {request.prices}"
    if request.cost is not None:
        raw["cost"], origin["cost"] = request.cost, "--cost"
    parse_terms(raw, _fail(origin))
    return raw, origin


#: How :func:`parse_terms` says an objective of a column of the logs is declared, and where that is done with advise
#: (``--objectives`` takes names only).
_COLUMN_OBJECTIVE = ("a column of the logs is declared as {column: NAME, direction: max|min}",
                     "a column of the logs is declared in the mapping's dataset: part (objectives: [accuracy, {column: "
                     "NAME, direction: max|min}]), not with --objectives, which takes names")


#: How advise is given prices, where dollars are asked for and the logs have none.
_PRICES = "--prices FILE (a YAML price table: {model or pattern: {input: $/1M, output: $/1M}})"


def _check_columns(terms: Terms, origin: dict[str, str], frame: pd.DataFrame, logs: Path) -> None:
    """Refuse, naming the user's logs and their columns, an objective whose column they lack (the dataset loader
    would name the folder imported into, among columns cabench derives)."""
    have = [c for c in frame.columns if c not in ("config_id", "instance_id", *CONFIG_COLUMNS)]
    for i, spec in enumerate(terms.objectives):
        if spec.column not in frame.columns and spec.column not in (COST_COLUMN, USD_COLUMN):
            raise CabenchError(f"{origin['objectives']}: objectives[{i}]: '{spec.name}' reads the column "
                               f"'{spec.column}', which the logs as read from {logs} lack (they give "
                               f"{', '.join(have)}); map a column of theirs to {spec.column} (--mapping), or leave "
                               f"'{spec.name}' out")


def _fail(origin: dict[str, str]) -> Callable[[str, str], CabenchError]:
    """One-line errors of :func:`parse_terms` naming where each key came from (a flag or ``dataset.yaml``)."""
    def fail(key: str, message: str) -> CabenchError:
        where = origin[re.split(r"[.[]", key)[0]]
        if where == "--objectives":
            message = message.replace(*_COLUMN_OBJECTIVE)
        return CabenchError(f"{where}: {key}: {message}")

    return fail


def declared_terms(given: dict[str, Any], origin: dict[str, str], folder: Path, columns: set[str]
                   ) -> tuple[dict[str, Any], Terms, str]:
    """The experiment's ``objectives``, ``cost`` and ``prices`` — the command line's (``given``), else the
    dataset's, else the defaults (cost in dollars when prices or ``cost_usd`` give them, else tokens) — as config
    keys and as :class:`Terms`, and why the cost is in its unit."""
    meta = read_metadata(folder)
    declared = declared_keys(meta)
    raw = {**declared, **given}
    origin = {**{key: str(folder / META_NAME) for key in declared}, **origin}
    why = "--cost" if "cost" in given else "declared in dataset.yaml"
    if "cost" not in raw:
        dollars = "prices are given" if "prices" in raw else "the logs have cost_usd" if "cost_usd" in columns else ""
        raw["cost"], why = ("usd", dollars) if dollars else ("tokens", "no prices and no cost_usd")
    raw.setdefault("objectives", [o for o in DEFAULT_OBJECTIVES if o != "latency" or "latency_s" in columns])
    origin.setdefault("objectives", "the default objectives")
    return raw, parse_terms(raw, _fail(origin)), why


def advise(request: Request, echo: Callable[[str], None] = print, quiet: bool = False) -> Advice:
    """Import, describe, plan the budgets when targets are given, run the methods at them, write the report; the
    decisions as :class:`Advice`.

    ``echo`` receives each step (unless ``quiet``), the import's notes and the runs' warnings.
    """
    by_setting = methods_by_setting(request.methods)
    targets = targets_by_setting(request.budget, request.targets, by_setting)
    if targets:
        by_setting = {setting: names for setting, names in by_setting.items() if setting in targets}
    steps = 3 + len(by_setting) + bool(targets)
    step = iter(range(1, steps + 1))

    def say(line: str) -> None:
        if not quiet:
            echo(f"[{next(step)}/{steps}] {line}")

    if request.out.exists() and not request.out.is_dir():
        raise CabenchError(f"--out {request.out}: exists and is not a folder; pass a folder")
    check_reports(request.out / "results", remedy="move it, or pass another --out")  # a user's own, before any work
    given, origin = given_terms(request)
    say(f"{'use' if is_dataset(request.logs) else 'import'} {request.logs}")
    def notes(line: str) -> None:  # what the import drops or assumes; warnings even when quiet
        if not quiet or line.startswith("warning"):
            echo(line)

    folder, waiting = dataset_folder(request, notes)  # waiting: a replaced dataset, until every check has passed
    try:
        meta = read_metadata(folder)
        frame, _ = read_logs(folder, meta.get("missing", "error"), tuple(meta.get("extra_columns") or ()))
        raw_terms, terms, why = declared_terms(given, origin, folder, set(frame.columns))
        _check_columns(terms, origin, frame, request.logs)
        if terms.cost == "usd" and not terms.prices and "cost_usd" not in frame:
            raise CabenchError(f"{origin.get('cost', str(folder / META_NAME))}: cost: usd: the logs as read from "
                               f"{request.logs} have no cost_usd column and no price table is given; pass {_PRICES}, "
                               "or map a column of dollars per call to cost_usd (--mapping)")
        if "prices" in given and (missing := terms.unpriced(frame["model"].unique())):
            raise CabenchError(f"{origin['prices']}: {missing}")  # the user's table, named as given
        if request.budget is not None and raw_terms["cost"] != request.budget.unit:
            cost = raw_terms["cost"]
            # (dollars without prices or cost_usd take a price table: --cost usd alone would be refused)
            remedy = _PRICES if request.budget.unit == "usd" and "cost_usd" not in frame else (
                f"--cost {request.budget.unit}")
            raise CabenchError(f"--budget {amount(request.budget.value, request.budget.unit)}: the cost is in "
                               f"{LABELS[cost]} ({why}); state the budget in {cost} (--budget <amount>{cost}), or pass "
                               f"{remedy}")
        ids = frame["instance_id"].unique()
        questions = epoch_questions(meta, ids)  # --repeats epochs: the split draws questions, each with all its runs
        split = profiling_split(len(ids) if questions is None else len(set(questions)), meta.get("split"),
                                str(folder / META_NAME), notes, None if questions is None else len(ids))
        say(f"describe {folder}")
        if (few := too_few_configurations(frame.drop_duplicates("config_id"))) is not None:
            raise CabenchError(f"{folder}: {few}")
        ds = load_dataset(folder, None if split is None else Split(**split), terms)
        plans: dict[str, SettingPlan] = {}
        if request.budget is None:
            say(f"plan {', '.join(t.text for wanted in targets.values() for t in wanted)} from the "
                f"{len(ds.profiling_ids)} profiling instances -> {request.out / 'plan'}")
            plans = plan_budgets(ds, by_setting, targets, request.out / "plan", quiet, request.name, request.replace)
            budgets = {setting: p.budget for setting, p in plans.items() if p.budget is not None}
        else:
            budgets = {setting: request.budget for setting in by_setting}
            if not quiet:
                echo(f"budget {amount(request.budget.value, request.budget.unit)}: rho "
                     f"{ds.norm.rho(request.budget.value):.4g} (B = rho K c̄: about rho calls per configuration at "
                     "their mean profiling cost)")
        results = request.out / "results"
        configs = {}
        short: list[tuple[str, float | None]] = []  # (why, the least budget that works) of each setting too short
        for setting, methods in by_setting.items():  # every budget checked before any runs
            if (budget := budgets.get(setting)) is None:
                continue
            # (an experiment name has no '; ', which joins a figure's experiments: a dataset's name may)
            name = f"{request.name or ds.name}_{SHOWN_SETTING[setting]}_{budget.tag}".replace("; ", ";")
            cfg = parse_config({"name": name, "dataset": str(folder.resolve()), "setting": setting, "methods": methods,
                                "budget": {budget.unit: budget.value}, "repetitions": request.repetitions,
                                "split": split, "output": str(results / name), **raw_terms}, "cabench advise")
            problem = build_problem(cfg)[0]
            if request.budget is None:  # each setting's own planned budget
                check_budgets(with_budgets(cfg, problem), problem)
            elif bad := infeasible_cells(resolved := with_budgets(cfg, problem), problem):
                short.append((next(iter(bad.values())), least_for_all(resolved, problem, bad)))
            configs[setting] = cfg
        if short and request.budget is not None:  # one budget for every setting: the least that works for all of them
            leasts = [least for _, least in short if least is not None]
            known = len(leasts) == len(short)  # then the reason given is that of the setting needing the most
            why = max(short, key=lambda s: s[1] or 0.0)[0] if known else short[0][0]
            raise too_small("cabench advise", request.budget.value, request.budget.unit, why,
                            max(leasts) if known else None)
        for cfg in configs.values():  # each setting's folder, before either runs
            check_output(cfg, request.replace)
        stale = ([] if waiting is None else  # results of the replaced dataset, each checked before it goes
                 results_on(folder, results, {Path(str(c.output)).resolve() for c in configs.values()}))
    except BaseException:  # refused (or interrupted) before anything ran: the replaced dataset comes back
        if waiting is not None:
            replaced_back(waiting, folder)
        raise
    gone = [] if waiting is None else replaced_gone(waiting, stale)
    if gone:
        echo(f"warning: --replace: removed {len(gone)} result folder{'s' if len(gone) > 1 else ''} computed on "
             f"the replaced dataset {folder}: {', '.join(gone)}")
    folders = {}
    for setting, methods in by_setting.items():
        if setting not in configs:
            say(f"{SHOWN_SETTING[setting]}: not run (no planned budget reaches its target)")
            continue
        cfg, budget = configs[setting], budgets[setting]
        say(f"{SHOWN_SETTING[setting]}: {', '.join(registry.display(m) for m in methods)} at "
            f"{amount(budget.value, budget.unit)}, {request.repetitions} repetitions -> {cfg.output}")
        folders[setting] = run_experiment(cfg, replace=request.replace, quiet=quiet, echo=echo,
                                          offer_force=False).output
    say(f"report {results}" if folders else "report: nothing ran")
    html = None
    if folders or gone:  # what `cabench report` writes: REPORT.md and REPORT.html, of what is left
        if ResultSet(results).empty:  # every experiment went with the replaced dataset: so do the reports on them
            for name in (*REPORT_MARKS, SECTIONS):
                (results / name).unlink(missing_ok=True)
        else:
            html = write_reports(results)[1]
    items = {setting: recommend(path)[0] for setting, path in folders.items()}
    planned = tuple(reached(p, folders[s]) if s in folders else p for s, p in plans.items())
    return Advice(describe(ds), (len(ds.profiling_ids), len(ds.evaluation_ids)), request.budget,
                  request.repetitions, items, html, planned)


def _ranges(d: dict[str, Any]) -> str:
    """The logs' per-call ranges (configuration means) of the measurements they have."""
    count = TokenCount("{:,.0f}")
    shown = [(d["accuracy_min"], d["accuracy_max"], lambda low, high: f"accuracy {low:.2f}-{high:.2f}"),
             (d["latency_min"], d["latency_max"], lambda low, high: f"latency {low:.3g}-{high:.3g} s"),
             (d["tokens_min"], d["tokens_max"],
              lambda low, high: f"{count.at(low).format(low)}-{count.at(high).format(high)} tokens"),
             (d["usd_min"], d["usd_max"], lambda low, high: f"${fixed(low)}-${fixed(high)}")]
    return ", ".join(said(low, high) for low, high, said in shown if low is not None)


def _at_decision(item: dict[str, Any], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """``recommend``'s rows at the decision's budget (and cost mode), the deciding method's first."""
    d = item["decision"]
    rows = [r for r in item["results"] if all(r[k] == d[k] for k in keys) and r["method"] not in
            item["no_preference"]]
    return sorted(rows, key=lambda r: r["method"] != d["method"])


def _online_lines(item: dict[str, Any], unit: str) -> list[str]:
    """The configuration to pay for, how often each method exploits it, and its real units per call."""
    idle = ", ".join(registry.display(m) for m in item["no_preference"])
    idle_note = f"; {idle}: a round robin, no preference" if idle else ""
    d = item["decision"]
    if d is None:
        return [f"online: {item['undecided']}{idle_note}"]
    c = d["configuration"]
    first, *others = _at_decision(item, ("rho",))
    # the deciding method's repetitions that pulled several configurations most, equally often: they chose nothing
    alone = f" (none pulled most alone in {percent(d['no_single'])})" if d.get("no_single") else ""

    def share(r: dict[str, Any], name: str = c["config_id"]) -> str:
        return percent(next((x['share'] for x in r['exploited'] if x['config_id'] == name), 0.0))

    # the logs' own answer, where the runs' is another (as the identification line names the logs' own Pareto set)
    best = (item.get("max_nu") or {}).get("config_id")
    own = "" if best is None or best in {x["config_id"] for x in [*answered(d), *(d.get("same_nu") or [])]} else (
        f"; the logs' own max-ν configuration is {quoted_name(best)} ({registry.display(first['method'])} exploits "
        f"it in {share(first, best)})")

    if d["tied"]:  # exploited as often as each other: the runs do not choose between them
        tied = [x["config_id"] for x in answered(d)]

        def one_of(r: dict[str, Any]) -> str:
            return percent(sum(x['share'] for x in r['exploited'] if x['config_id'] in tied))

        lines = [f"online: pay for {any_of(d)} — {registry.display(first['method'])} exploits each in "
                 f"{share(first)} of {first['repetitions']} repetitions (the {len(tied)} together in "
                 f"{one_of(first)}{alone}"
                 + "".join(f", {registry.display(r['method'])} in {one_of(r)}" for r in others)
                 + f"; the runs do not choose between them){own}"
                 + (f"; {tie_note(beaten_pairs(d), quoted_name)}" if beaten_pairs(d) else "")
                 + f"; spent {100 * first['spend_share']:.1f}% of "
                 f"{amount(d['budget'], unit)}{idle_note}{_weak(d)}{_unpulled_said(d)}"]
        shown = [x for x in answered(d) if per_call(x)]
        lines += [f"  {quoted_name(x['config_id'])}: {per_call(x)}" for x in shown[:TIED_SHOWN]]
        return lines + ([f"  … and {len(shown) - TIED_SHOWN} more (the report lists them)"]
                        if len(shown) > TIED_SHOWN else [])
    shares = f"{registry.display(first['method'])} exploits it in {share(first)} of {first['repetitions']} " \
             f"repetitions{alone}" + "".join(f", {registry.display(r['method'])} in {share(r)}" for r in others)
    lines = [f"online: pay for {quoted_name(c['config_id'])} — {shares}{same_nu(d)}{own}; spent "
             f"{100 * first['spend_share']:.1f}% of {amount(d['budget'], unit)}{idle_note}{_weak(d)}"
             f"{_unpulled_said(d)}"]
    return lines + ([f"  per call: {per_call(c)}{but_for_means(c)}"] if per_call(c) else [])


def _unpulled_said(d: dict[str, Any], setting: str = "online") -> str:
    """What a line adds where some of the decision's repetitions left configurations never pulled
    (:func:`~cabench.answers.unpulled_note`), on the line itself (the lines are counted)."""
    said = unpulled_note(d, setting)
    return f"; {said}" if said else ""


def _weak(d: dict[str, Any]) -> str:
    """What the online line adds of a weak answer (:func:`weak_online`), on the line itself (the lines are counted)."""
    said = weak_online(d)
    return f"; {said}" if said else ""


def _identification_lines(item: dict[str, Any], unit: str, room: int, pareto_size: int) -> list[str]:
    """The Pareto set, how often it is returned, how often each method returns the logs' own Pareto set (of
    ``pareto_size`` configurations), and its members' real units per call in at most ``room`` lines."""
    d = item["decision"]
    rows = _at_decision(item, ("rho", "cost_mode"))
    exact = ", ".join(f"{registry.display(r['method'])} {percent(r['exact_true_set'])}" for r in rows)
    head = (f"identification: a set of {len(d['pareto_set'])} — {registry.display(d['method'])} returns it as the "
            f"Pareto set in {percent(d['share'])} of {rows[0]['repetitions']} repetitions (the evaluation split's "
            f"own Pareto set of {pareto_size} returned exactly: {exact}); spent "
            f"{100 * rows[0]['spend_share']:.1f}% of {amount(d['budget'], unit)}{_unpulled_said(d, 'psi')}"
            + (f" — note: {item['charged']}" if item.get("charged") and rows[0].get("cost_mode") == "deterministic"
               else ""))
    short = [f"  {WEAK}: {short_of(d)}{tied_sets_note(d)}"
             ] if weak(d["share"]) else []  # as recommend and the reports say it
    room -= len(short)
    members = [f"  {quoted_name(m['config_id'])}" + (f": {per_call(m)}" if per_call(m) else "") + member_notes(m)
               for m in d["members"]]
    if len(members) > room:  # (at least the count, however little room the lines above leave)
        kept = max(room - 1, 0)
        members = members[:kept] + [f"  … and {len(members) - kept} more (the report lists them)"]
    return [head, *short, *members]


def format_advice(advice: Advice) -> str:
    """The decision in at most :data:`MAX_LINES` lines: the logs, the budget (or what the plan would spend), the
    configuration to pay for (online) and the Pareto set (identification) with their real units per call, and where
    the report is."""
    d = advice.dataset
    unit = d["cost_unit"]
    profiling, evaluation = advice.instances
    lines = [f"{d['name']}: {d['K']} configurations x {profiling + evaluation} instances ({profiling} profiling, "
             f"{evaluation} evaluation){', surrogate logs' if d['surrogate'] else ''}; objectives "
             f"{', '.join(d['objectives'])}; cost in {LABELS[unit]}",
             f"  per call over all {profiling + evaluation} instances (configuration means): {_ranges(d)}; the "
             f"evaluation split's Pareto set: {d['pareto_size']} of {d['K']}{by_tie(d)}"]
    undominated: list[str] = next((item["undominated_on_means"] for item in advice.items.values()
                        if item.get("undominated_on_means")), [])
    note = f"note: {undominated_note(undominated)}" if undominated else ""
    lines += [f"  {note}"] if note else []
    if advice.budget is not None:
        rho = next(r["rho"] for item in advice.items.values() for r in item["results"])
        clipped = clipped_calls("online" if "online" in advice.items else "psi", d, unit)
        lines.append(f"budget {amount(advice.budget.value, unit)} (about {rho:.3g} calls per configuration), "
                     f"{advice.repetitions} repetitions" + (f"; online: {clipped}" if clipped else ""))
    lines += [line for plan in advice.planned for line in plan_lines(plan)]
    if "online" in advice.items:
        lines += _online_lines(advice.items["online"], unit)
    tail = [f"report: {advice.report}"] if advice.report is not None else []
    psi = advice.items.get("psi")
    if psi is not None and psi["decision"] is not None:
        lines += _identification_lines(psi, unit, MAX_LINES - len(lines) - len(tail) - 1, d["pareto_size"])
    if note and len(lines) + len(tail) > MAX_LINES:  # the note goes on the line of the Pareto set it speaks of
        lines = [lines[0], f"{lines[1]}; {note}", *lines[3:]]
    return "\n".join(lines + tail)
