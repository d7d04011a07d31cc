"""``cabench plan``: the budget each method of a config needs to reach a target, planned from the profiling split.

Only :class:`~cabench.planning.draws.Profiling` is read: the profiling rows of the config's configurations and the
number of instances a run replays. The profiling rows themselves (the plug-in problem) and each of ``draws``
posterior problems (a two-stage bootstrap of the profiling instances, costs included; :mod:`cabench.planning.draws`)
are run through the batched engines at a rising grid of budgets ``rho = step^k`` (``B = rho K cbar``, SPEC §3) up to
``max_share`` times the exhaustive evaluation's cost (every configuration on every instance once,
``population * sum_i c_i``), ``repetitions`` paired repetitions per draw. Each needs the budget from which its curve
(the metric over the repetitions) meets the target. The draws say how uncertain that need is; its level is
extrapolated from the profiling rows' need away from the draws' (SIMEX, :func:`~cabench.planning.draws.extrapolation`,
:func:`~cabench.planning.search.estimate`): the planned budget is that level times the draws' ``confidence``
quantile over their median, and its interval the same for their central ``level``. A synthetic
instance is planned from a profiling sample of ``split.profiling_size`` pulls per arm
(:func:`~cabench.planning.draws.sampled_profiling`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from cabench import registry
from cabench.backends import Backend, check_sendable, parallel_map
from cabench.config import ExperimentConfig
from cabench.data.dataset import Split, file_digest
from cabench.data.io import META_NAME, find_log_file
from cabench.errors import CabenchError
from cabench.methods.configured import OnlineMethod, PsiMethod
from cabench.paper import SURROGATE_NOTE
from cabench.plan import build_problem
from cabench.planning.curves import good_enough, metric_curve
from cabench.planning.draws import (
    Profiling,
    extrapolation,
    posterior_problem,
    profiling_of,
    profiling_problem,
    sampled_profiling,
)
from cabench.planning.figure import plan_figure
from cabench.planning.search import Estimate, estimate
from cabench.planning.targets import Target
from cabench.record import stable_hash
from cabench.storage import replaced_together, to_csv
from cabench.streams import stream_keys
from cabench.units import LABELS, amount

#: The profiling rows' own curve runs on this many times the repetitions of a draw: its need anchors the plan's level.
PLUGIN_SCALE = 5


@dataclass(frozen=True)
class PlanSpec:
    """How a plan is computed: targets, posterior draws, repetitions per draw and budget, stream seed, the online
    target's relative ``epsilon``, the quantile of the draws' needs over their median that scales the extrapolated
    level (``confidence``; not a share of draws meeting the target at the planned budget), the
    interval's ``level``, the largest budget (a multiple of the exhaustive evaluation's cost) and the ratio of the
    budget grid."""

    targets: tuple[Target, ...]
    draws: int = 20
    repetitions: int = 50
    seed: int = 0
    epsilon: float = 0.05
    confidence: float = 0.8
    level: float = 0.8
    max_share: float = 10.0
    step: float = math.sqrt(2.0)


@dataclass(frozen=True)
class Planned:
    """One row of ``plan.csv``: a method (and cost mode) and a target, the planned rho and its interval."""

    method: str
    cost_mode: str | None
    target: str
    estimate: Estimate


@dataclass(frozen=True, eq=False)
class BudgetPlan:
    """A plan: what it was computed from, the budget grid, every predicted curve and the planned budgets."""

    name: str
    setting: str
    profiling: Profiling
    spec: PlanSpec
    grid: np.ndarray  # rho
    curves: pd.DataFrame  # method, cost_mode, target, rho, budget; profiling: the profiling rows' curve; mean, low,
    # high: the draws' mean and their 1 - confidence and confidence quantiles
    rows: tuple[Planned, ...]
    unplanned: tuple[str, ...] = ()  # online round robins: what they pull most is no preference, so no share target

    @property
    def cost_unit(self) -> str:
        return self.profiling.norm.cost_unit

    @property
    def instances(self) -> int:
        """Instances of the exhaustive evaluation: the population a run replays, else the profiling sample's."""
        return self.profiling.population or self.profiling.instances

    def budget(self, rho: float) -> float:
        """``B = rho K cbar`` in the cost unit (``inf`` stays ``inf``)."""
        return self.profiling.norm.budget(rho) if math.isfinite(rho) else math.inf

    @property
    def exhaustive(self) -> float:
        """Every configuration on every instance once, at the profiling costs: ``instances * sum_i c_i``."""
        return self.budget(float(self.instances))


def rounded_up(value: float) -> float:
    """``value`` rounded up to three significant digits (a budget or a cap as a person would state it, and still
    enough)."""
    scale = 10.0 ** (math.floor(math.log10(value)) - 2)
    steps = math.ceil(value / scale - 1e-9)
    # never below value, by float noise either: a run refuses a budget below the one planned by any amount (B at
    # rho 1 summed to $0.0011000000000000003 was given as $0.0011, and refused)
    return steps * scale if steps * scale >= value else (steps + 1) * scale


def budget_grid(profiling: Profiling, spec: PlanSpec) -> np.ndarray:
    """``rho = step^k`` from 1 up to ``max_share`` times the exhaustive evaluation (``rho = instances``); at least
    ``rho = 1``."""
    instances = profiling.population or profiling.instances
    top = spec.max_share * instances
    if top < 1:
        raise CabenchError(f"--max-share {spec.max_share:g}: the grid's budgets start at rho = 1 (each configuration "
                           f"once, 1/{instances} of the exhaustive evaluation), above that cap; give at least "
                           f"--max-share {rounded_up(1 / instances):g}")
    return spec.step ** np.arange(max(int(math.floor(math.log(top) / math.log(spec.step) + 1e-9)), 0) + 1)


def _draw_curves(profiling: Profiling, spec: PlanSpec, draw: int | None,
                 methods: tuple[OnlineMethod | PsiMethod, ...], cost_modes: tuple[str | None, ...],
                 grid: np.ndarray) -> np.ndarray:
    """``[methods x cost modes, len(grid), targets]``: every curve of one posterior draw (``None``: of the profiling
    rows themselves, on :data:`PLUGIN_SCALE` times as many repetitions, streams after the draws')."""
    if draw is None:
        problem, first, reps = profiling_problem(profiling), spec.draws * spec.repetitions, PLUGIN_SCALE
    else:
        problem, first, reps = posterior_problem(profiling, spec.seed, draw), draw * spec.repetitions, 1
    keys = stream_keys(spec.seed, np.arange(first, first + reps * spec.repetitions), profiling.arm_ids)
    return np.stack([metric_curve(problem, method, grid, keys, mode, spec.epsilon, spec.targets)
                     for method in methods for mode in cost_modes])


#: The fewest profiling instances (questions of epoch logs; a synthetic instance's pulls per arm) a plan is made from.
#: The draws resample them to show what they leave uncertain; from a handful, the resamples repeat one another (from
#: one instance, every draw is that instance) and the plan's interval would claim a certainty the rows do not give.
FEWEST_PROFILING = 20


def _check_enough(profiling: Profiling, name: str) -> None:
    """Refuse, in one line naming ``split.profiling_size``, a profiling split of fewer than
    :data:`FEWEST_PROFILING` instances (questions, where several runs of a question are kept together)."""
    units, what = ((int(profiling.questions.max()) + 1, "question") if profiling.questions is not None
                   else (profiling.instances, "instance"))
    if units < FEWEST_PROFILING:
        counted = f"{units} profiling {what} is" if units == 1 else f"{units} profiling {what}s are"
        raise CabenchError(f"{name}: split.profiling_size: {counted} too few to plan from (at "
                           f"least {FEWEST_PROFILING}): the plan resamples them to see what they leave uncertain, and "
                           "so few resample into one another; profile on more, or run at a --budget")


def plan_profiling(profiling: Profiling, setting: str, methods: Sequence[OnlineMethod | PsiMethod],
                   cost_modes: Sequence[str | None], spec: PlanSpec, backend: Backend = Backend("sequential"),
                   name: str = "", quiet: bool = True) -> BudgetPlan:
    """Plan every method (and cost mode) of a setting for every target of ``spec`` from ``profiling`` alone; online,
    a round robin is not planned (the configuration it pulls most is its turn, not a preference, so a share target
    would credit it with the arms' order)."""
    unplanned = tuple(m.name for m in methods if setting == "online" and not registry.prefers(m.name, "online"))
    methods = [m for m in methods if m.name not in unplanned]
    if not methods:
        raise CabenchError(f"{name or profiling.name}: methods: only round robins ({', '.join(unplanned)}), which "
                           "pull every affordable configuration in turn; a share target says nothing of them, so "
                           "there is nothing to plan")
    _check_enough(profiling, name or profiling.name)
    grid = budget_grid(profiling, spec)
    pairs = [(m, mode) for m in methods for mode in cost_modes]
    check_sendable({m.name: m for m in methods}, backend)
    tasks = [(profiling, spec, d, tuple(methods), tuple(cost_modes), grid) for d in [None, *range(spec.draws)]]
    plugin, *draws = tqdm(parallel_map(_draw_curves, tasks, backend, shared=(profiling,)), total=len(tasks),
                          desc="plan", disable=quiet, leave=False)
    drawn = np.stack(draws)  # [draws, pairs, grid, targets]
    beyond = extrapolation(profiling)
    rows, frames = [], []
    for p, (method, mode) in enumerate(pairs):
        estimates = [estimate(grid, plugin[p, :, t], drawn[:, p, :, t], target, spec.confidence, spec.level, beyond)
                     for t, target in enumerate(spec.targets)]
        for t, target in enumerate(spec.targets):
            curves = drawn[:, p, :, t]
            rows.append(Planned(method.name, mode, target.text, no_less_than_looser(spec.targets, estimates, t)))
            runs = ~np.isnan(curves).any(axis=0)  # budgets the method can run (its skip reads only the costs)
            low, high = np.quantile(curves[:, runs], [1 - spec.confidence, spec.confidence], axis=0)
            frames.append(pd.DataFrame({"method": method.name, "cost_mode": mode, "target": target.text,
                                        "rho": grid[runs], "budget": [profiling.norm.budget(r) for r in grid[runs]],
                                        "profiling": plugin[p, runs, t], "mean": curves[:, runs].mean(axis=0),
                                        "low": low, "high": high}))
    return BudgetPlan(name or profiling.name, setting, profiling, spec, grid, pd.concat(frames, ignore_index=True),
                      tuple(rows), unplanned)


def no_less_than_looser(targets: tuple[Target, ...], estimates: list[Estimate], t: int) -> Estimate:
    """Target ``t``'s estimate, its budget and interval ends raised to those of every looser target on the same
    metric (``share>=0.5`` for ``share>=0.6``): whatever budget meets a target meets every looser one, but each
    target's level is extrapolated from its own noisy needs, and a stricter target could be planned below a looser
    one."""
    mine, out = targets[t], estimates[t]
    for other, e in zip(targets, estimates):
        looser = other.metric == mine.metric and bool(other.met(np.array([mine.bound]))[0]) and other != mine
        if looser:
            out = dataclasses.replace(out, rho=max(out.rho, e.rho), low=max(out.low, e.low),
                                      high=max(out.high, e.high))
    return out


def config_profiling(cfg: ExperimentConfig) -> Profiling:
    """The profiling split of a config's dataset on its arms (the evaluation split's rows unread), or a synthetic
    instance's profiling sample (``split``: its size and stream seed)."""
    if cfg.synthetic is not None:
        problem, _, _ = build_problem(cfg)
        split = cfg.split or Split()
        return sampled_profiling(problem, split.profiling_size, split.seed)
    problem, _, ds = build_problem(cfg, source="profiling")
    assert ds is not None  # a config gives a dataset folder or a synthetic instance
    return profiling_of(ds, problem.arm_ids)


def plan_config(cfg: ExperimentConfig, spec: PlanSpec, quiet: bool = False) -> BudgetPlan:
    """Plan the methods and cost modes of ``cfg`` (:func:`plan_profiling` on :func:`config_profiling`)."""
    modes: tuple[str | None, ...] = cfg.cost_modes if cfg.setting == "psi" else (None,)
    return plan_profiling(config_profiling(cfg), cfg.setting, cfg.methods, modes, spec,
                          Backend(cfg.backend, cfg.n_jobs, cfg.scheduler_address), cfg.name, quiet)


def plan_frame(plan: BudgetPlan) -> pd.DataFrame:
    """``plan.csv``: per method, cost mode and target, the planned rho and budget with their interval, the share of
    the exhaustive evaluation's cost and the share of draws that reach the target within the grid."""
    unit = plan.cost_unit
    out = []
    for row in plan.rows:
        e = row.estimate
        out.append({"experiment": plan.name, "setting": plan.setting, "surrogate": plan.profiling.surrogate,
                    "method": row.method,
                    "cost_mode": row.cost_mode or "", "target": row.target, "rho": e.rho, "rho_low": e.low,
                    "rho_high": e.high, f"budget_{unit}": plan.budget(e.rho), f"budget_{unit}_low": plan.budget(e.low),
                    f"budget_{unit}_high": plan.budget(e.high), "exhaustive_share": e.rho / plan.instances,
                    "draws_reaching": e.reach, "rho_profiling_rows": e.plugin, "rho_draws_median": draws_median(e),
                    "draws": plan.spec.draws, "repetitions": plan.spec.repetitions,
                    "profiling_instances": plan.profiling.instances,
                    "instances": plan.instances, "max_rho": float(plan.grid[-1])})
    return pd.DataFrame(out)


#: The files a plan writes into its folder, ``plan.csv`` (which records what was asked) first.
PLAN_FILES = ("plan.csv", "plan_curves.csv", "plan.png")


def plan_key(what: dict[str, Any], spec: PlanSpec) -> str:
    """The hash ``plan.csv`` records of what its plan was asked: ``what`` (a config's identity, or the dataset and
    methods ``advise`` plans for) and every field of ``spec`` (targets, draws, repetitions, seed, ...)."""
    return stable_hash({"what": what, "spec": asdict(spec)})


def config_plan_key(cfg: ExperimentConfig, spec: PlanSpec) -> str:
    """:func:`plan_key` of a config: its identity with a dataset folder named by its content (the SHA-256 of its log
    file and of its ``dataset.yaml``), not its path, so that a project moved or copied keeps its plans."""
    identity = cfg.identity()
    if isinstance(identity.get("dataset"), str):
        folder = Path(identity["dataset"])
        meta = folder / META_NAME
        identity["dataset"] = {"logs": file_digest(find_log_file(folder)),
                               "meta": file_digest(meta) if meta.is_file() else None}
    return plan_key({"config": identity}, spec)


def check_plan_folder(out: Path, key: str, force: bool = False, hint: str = "pass another --out, or --force to "
                                                                              "replace it", legacy: str | None = None
                      ) -> bool:
    """Refuse, in one line, to replace a plan asked otherwise: ``out/plan.csv`` must be absent or record ``key``
    (the same request plans the same budgets, so writing it again changes nothing), and without it the folder holds
    none of the other files a plan writes; ``force`` replaces them. ``out`` must be a folder or absent, whatever
    ``force``. True where the plan there records ``legacy``, the key an earlier cabench gave this request (the
    caller replaces it, saying so)."""
    if out.exists() and not out.is_dir():
        raise CabenchError(f"{out}: exists and is not a folder; a plan is written into a folder (pass another "
                           "--out)")
    path = out / "plan.csv"
    if force:
        return False
    if not path.exists():
        others = [name for name in PLAN_FILES[1:] if (out / name).exists()]
        if others:  # what a plan writes, but no plan.csv to say which plan: a user's own files, kept
            raise CabenchError(f"{out}: holds {' and '.join(others)} but no plan.csv, files that are not a plan of "
                               f"this cabench; {hint}")
        return False
    try:
        held = pd.read_csv(path, dtype=str, keep_default_na=False)
        found = str(held["plan_key"].iloc[0]) if "plan_key" in held and len(held) else ""
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError):
        found = ""
    if not found:
        raise CabenchError(f"{path}: not a plan cabench wrote (no plan_key could be read from it); {hint}")
    if found == legacy:  # this request as an earlier cabench keyed it (without what the key holds now)
        return True
    if found != key:
        raise CabenchError(f"{path}: holds another plan ({found}), not this one ({key}: other targets, settings or "
                           f"data); {hint}")
    return False


def write_plan(plan: BudgetPlan, out: Path, key: str, force: bool = False) -> list[Path]:
    """Write ``plan.csv`` (recording ``key``, :func:`plan_key`), ``plan_curves.csv`` (every predicted curve) and
    ``plan.png`` into ``out``; a plan asked otherwise already there is refused (:func:`check_plan_folder`)."""
    check_plan_folder(out, key, force)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / name for name in PLAN_FILES]
    title = (f"{plan.name}: predicted from {plan.profiling.instances} profiling instances ({plan.spec.draws} draws x "
             f"{plan.spec.repetitions} repetitions)")
    marks = {(r.method, r.cost_mode or "", r.target): plan.budget(r.estimate.rho) for r in plan.rows}
    png = plan_figure(plan.curves.fillna({"cost_mode": ""}), marks, plan.cost_unit,
                      plan.exhaustive if plan.profiling.population else None, title,
                      SURROGATE_NOTE if plan.profiling.surrogate else None)
    with replaced_together() as files:  # a full disk while writing any leaves the plan there whole
        files.write(written[0], to_csv(plan_frame(plan).assign(plan_key=key)))
        files.write(written[1], to_csv(plan.curves.rename(columns={"budget": f"budget_{plan.cost_unit}"})))
        files.write(written[2], png)
    return written


def _bound(rho: float, plan: BudgetPlan) -> str:
    """A planned budget in the cost unit; one beyond the grid as ``> <the grid's largest budget>``."""
    if math.isfinite(rho):
        return amount(plan.budget(rho), plan.cost_unit)
    return f"> {amount(plan.budget(float(plan.grid[-1])), plan.cost_unit)}"


def _between(e: Estimate, plan: BudgetPlan) -> str:
    """A planned budget's interval; one wholly beyond the grid once (``> <the grid's largest budget>``)."""
    if not math.isfinite(e.low):
        return _bound(e.low, plan)
    return f"{_bound(e.low, plan)} - {_bound(e.high, plan)}"


def describe_row(row: Planned, plan: BudgetPlan) -> str:
    """One planned budget as a sentence: ``error<=0.1 at 3,600,000 tokens (80%: ... - ...; 2.5x the exhaustive
    evaluation), 90% of draws reach it``."""
    e = row.estimate
    if not math.isfinite(e.rho):
        head = (f"{row.target} not reached by {_bound(e.rho, plan)} ({float(plan.grid[-1]) / plan.instances:.3g}x the "
                "exhaustive evaluation)")  # the grid's last budget, which --max-share bounds from above
    else:
        head = f"{row.target} at {_bound(e.rho, plan)} ({e.rho / plan.instances:.3g}x the exhaustive evaluation)"
    return (f"{head}; {100 * plan.spec.level:.0f}% interval {_between(e, plan)}; "
            f"{100 * e.reach:.0f}% of draws reach it")


def format_plan(plan: BudgetPlan) -> str:
    """The plan as a table: method x target -> budget in the cost unit, its interval, the share of the exhaustive
    evaluation's cost and of the draws that reach it."""
    unit = plan.cost_unit
    p = plan.profiling
    runs = (f"runs replay {p.population}; the exhaustive evaluation costs about {amount(plan.exhaustive, unit)} "
            "at the profiling calls' mean cost"
            if p.population else f"a synthetic instance: 'exhaustive' counts {p.instances} calls per configuration, "
                                 "the profiling sample's")
    width = max([len("method"), *(len(registry.display(r.method)) for r in plan.rows)]) + 2  # the longest name
    top = float(plan.grid[-1])
    budgets = [_bound(r.estimate.rho, plan) for r in plan.rows]
    intervals = [_between(r.estimate, plan) for r in plan.rows]
    interval = f"{100 * plan.spec.level:.0f}% interval"
    wide = max(map(len, ["budget", *budgets])) + 3, max(map(len, [interval, *intervals])) + 3  # a gap before each
    surrogate = ", surrogate logs" if p.surrogate else ""
    lines = [f"{plan.name} ({plan.setting}{surrogate}): planned from {p.instances} profiling instances of "
             f"{len(p.arm_names)} configurations ({runs}); {plan.spec.draws} draws x {plan.spec.repetitions} "
             f"repetitions; cost in {LABELS[unit]}",
             f"  {'method':<{width}}{'cost mode':<15}{'target':<12}{'budget':>{wide[0]}}"
             f"{interval:>{wide[1]}}{'x exhaustive':>14}{'draws':>7}"]
    for row, budget, between in zip(plan.rows, budgets, intervals):
        e = row.estimate
        share = f"{e.rho / plan.instances:.3g}" if math.isfinite(e.rho) else f"> {top / plan.instances:.3g}"
        lines.append(f"  {registry.display(row.method):<{width}}{row.cost_mode or '-':<15}{row.target:<12}"
                     f"{budget:>{wide[0]}}{between:>{wide[1]}}{share:>14}{100 * e.reach:>6.0f}%")
    lines += [f"  {registry.display(m)}: a round robin, not planned ({registry.IN_TURN})" for m in plan.unplanned]
    if any(not math.isfinite(r.estimate.rho) for r in plan.rows):
        lines.append(f"  > {amount(plan.budget(top), unit)}: not reached within the grid, whose largest budget is "
                     f"{top / plan.instances:.3g}x the exhaustive evaluation (--max-share)")
    lines.append("  draws: the share of the drawn problems that reach the target within the grid; the budget is the "
                 "profiling rows' need, extrapolated to the evaluation split, so it can lie beyond what the draws "
                 "need (docs/methods.md)")
    def named(row: Planned) -> str:  # a row as the notes name it: with its cost mode where the plan has two
        mode = f" ({row.cost_mode})" if row.cost_mode and len({r.cost_mode for r in plan.rows}) > 1 else ""
        return f"{registry.display(row.method)}{mode} {row.target}"

    if plan.setting == "online" and plan.rows and _all_within_epsilon(plan):
        lines.append(f"  note: every configuration's nu on the profiling rows is within {100 * plan.spec.epsilon:g}% "
                     f"of the best's (--epsilon {plan.spec.epsilon:g}), so whichever one a method pulls most counts "
                     "toward share: a share target "
                     "is met at the least budget the method runs at, and says nothing of the method; a smaller "
                     "--epsilon asks more")
    reversed_rows = [named(r) for r in plan.rows if reversed_premise(r.estimate)]
    if reversed_rows:
        lines.append(f"  note: for {', '.join(reversed_rows)}, the draws need more than the profiling rows (plan.csv: "
                     "rho_draws_median, rho_profiling_rows), the reverse of what the extrapolation assumes, which then "
                     "carries the level below the profiling rows' need: the plan may fall short")
    beyond_rows = [named(r) for r in plan.rows if rows_beyond_draws(r.estimate)]
    if beyond_rows:
        lines.append(f"  note: for {', '.join(beyond_rows)}, the profiling rows do not reach the target within the "
                     "grid though half or more of the draws do (plan.csv: rho_profiling_rows, rho_draws_median): the "
                     "plan follows the rows, whose gaps are narrower than a draw's; the evaluation split may need far "
                     "less, and a larger profiling split says more")
    return "\n".join(lines)


def _all_within_epsilon(plan: BudgetPlan) -> bool:
    """Online, whether every configuration's nu on the profiling rows is within the share target's relative
    ``epsilon`` of the best (:func:`~cabench.planning.curves.metrics_at`): then any choice is a hit."""
    nu = profiling_problem(plan.profiling).nu
    return bool(len(nu) and good_enough(nu, float(nu.max()), plan.spec.epsilon).all())


def draws_median(e: Estimate) -> float:
    """The draws' median need (rho; inf when it lies beyond the grid)."""
    return float(np.quantile(e.needs, 0.5, method="inverted_cdf")) if e.needs else math.inf


def reversed_premise(e: Estimate) -> bool:
    """Whether the draws need more than the profiling rows: the extrapolation assumes the reverse (a draw's added
    sampling error widens the gaps), so there it carries the level below the profiling rows' own need, and the
    plan may fall short."""
    median = draws_median(e)
    return math.isfinite(e.rho) and math.isfinite(median) and median > e.plugin


def rows_beyond_draws(e: Estimate) -> bool:
    """Whether the profiling rows' own need lies beyond the grid while draws meet the target within it: the plan
    follows the rows (beyond the grid), though the draws, their gaps widened by a second sampling error, say the
    evaluation split may need far less."""
    return not math.isfinite(e.plugin) and math.isfinite(draws_median(e))
