"""Planning an experiment: its problem, which cells it has, and which budgets are too small.

What a cell computes lives in :mod:`cabench.cells`; this module only decides
which cells to run, so editing it never invalidates a cached cell.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cabench import registry
from cabench.cells import Cell
from cabench.config import ExperimentConfig, flag_note, resolve_budgets
from cabench.data.dataset import Dataset, load_dataset
from cabench.data.io import META_NAME, find_log_file
from cabench.data.terms import quality_not_first
from cabench.errors import CabenchError
from cabench.problem import Problem, ReplaySampler, replay_problem
from cabench.synthetic import synthetic_problem
from cabench.units import LABELS, Dollars, amount, amount_up


def build_problem(cfg: ExperimentConfig, source: str = "evaluation"
                  ) -> tuple[Problem, dict[str, Any], Dataset | None]:
    """The experiment's problem, its identity (what cache keys hash) and its dataset (None if synthetic)."""
    if cfg.synthetic is not None:
        identity = {"dataset": cfg.resolved()["dataset"], "arms": [f"arm{i}" for i in range(len(cfg.synthetic.costs))],
                    "source": source}
        return synthetic_problem(cfg.synthetic), identity, None
    assert cfg.dataset is not None  # a config gives a dataset folder or a synthetic instance
    try:  # a folder without logs is named with the config key that gave it (the logs' own errors name their file)
        find_log_file(Path(cfg.dataset))
    except CabenchError as exc:
        raise CabenchError(f"{cfg.source}: dataset: {exc}") from None
    stated_in = cfg.source if not cfg.terms_stated else (  # terms partly the dataset's: both files state them
        f"{cfg.source} (with {', '.join(cfg.terms_stated)} from {Path(cfg.dataset) / META_NAME})")
    ds = load_dataset(cfg.dataset, cfg.split, cfg.terms, stated_in)
    unfit = quality_not_first(ds.terms, registry.quality_first([m.name for m in cfg.methods], cfg.setting))
    if unfit:
        raise CabenchError(f"{cfg.source}: methods: {unfit}")
    arms = cfg.arms.select(ds.configs, source=f"{cfg.source}: arms")
    problem = replay_problem(ds, arms, source)
    identity = {"dataset": {"name": ds.name, "sha256": ds.content_hash,
                            "split": [ds.split.profiling_size, ds.split.seed]},
                "arms": list(problem.arm_names), "source": source}
    if not ds.terms.is_paper:  # the terms results depend on; the paper's keep the hashes they always had
        identity["dataset"]["terms"] = ds.terms.describe()
    return problem, identity, ds


def with_budgets(cfg: ExperimentConfig, problem: Problem) -> ExperimentConfig:
    """``cfg`` with budgets stated in the cost unit turned into its rho grid on ``problem`` (``B <= stated``)."""
    return resolve_budgets(cfg, problem.norm.rho, problem.norm.cost_unit)


#: How a (method, rho) skipped as too small a budget for the method is named: its status in ``summary.csv``, the
#: reports' lines and ``recommend`` (``infeasible`` in ``config.yaml`` lists them).
NOT_RUN = "not run"


def not_run_status(reason: str) -> str:
    """The status of a (method, rho) skipped for ``reason``: ``not run: <reason>``."""
    return f"{NOT_RUN}: {reason}"


def infeasible_cells(cfg: ExperimentConfig, problem: Problem) -> dict[tuple[str, float], str]:
    """(method, rho) pairs whose budget is too small for the method, with the reason its ``skip`` gives
    (SPEC §5-6: online, one initial pull of every arm; identification, one sample of every arm in the
    first phase)."""
    return {(method.name, rho): reason for rho in cfg.rho for method in cfg.methods
            if (reason := method.entry.skip(problem, rho)) is not None}


def check_budgets(cfg: ExperimentConfig, problem: Problem, strict: bool = True) -> dict[tuple[str, float], str]:
    """The infeasible (method, rho) pairs; with ``strict``, or when nothing is feasible, fail on the first, naming
    the least budget at which every method of ``cfg`` can run (:func:`least_for_all`)."""
    bad = infeasible_cells(cfg, problem)
    if bad and (strict or len(bad) == len(cfg.rho) * len(cfg.methods)):
        (_, rho), reason = next(iter(bad.items()))
        if cfg.budget:  # stated in the cost unit: name that key and the budget, then the rho it gives
            unit = cfg.budget_unit or problem.norm.cost_unit
            raise too_small(cfg.source, cfg.stated[rho], unit, reason, least_for_all(cfg, problem, bad),
                            flag_note(cfg, "budget"))
        raise CabenchError(f"{cfg.source}: rho{flag_note(cfg, 'rho')}: {reason}")
    return bad


def too_small(source: str, stated: float, unit: str, reason: str, least: float | None, flag: str = ""
              ) -> CabenchError:
    """The one line refusing a budget ``stated`` in ``unit`` as too small, and the least that works where known;
    ``flag`` names the command-line option that gave the budget (`` (from --budget)``)."""
    more = "" if least is None else f"; state at least {amount(amount_up(least, unit), unit)}"
    return CabenchError(f"{source}: budget.{unit}{flag}: {amount(stated, unit)} is too small ({reason}){more}")


def least_for_all(cfg: ExperimentConfig, problem: Problem, bad: dict[tuple[str, float], str]) -> float | None:
    """The least budget in the cost unit at which every method of ``cfg`` too short somewhere (``bad``, from
    :func:`infeasible_cells`) can run: the largest of their :func:`smallest_workable_budget`; None when one has
    none."""
    entries = {m.name: m.entry for m in cfg.methods}
    least = [smallest_workable_budget(entries[name], problem, rho) for name, rho in bad]
    return None if any(x is None for x in least) else max(x for x in least if x is not None)


def smallest_workable_budget(entry: Any, problem: Problem, rho: float) -> float | None:
    """The smallest budget ``B = rho K cbar`` in the cost unit that ``entry`` (a method) can run at on ``problem``,
    above the infeasible ``rho`` (its ``skip`` is monotone in rho), to a relative 1e-9; None beyond 2^60 rho."""
    low, high = float(rho), max(float(rho), 1e-12) * 2
    while entry.skip(problem, high) is not None:
        low, high = high, high * 2
        if high > 2.0 ** 60:
            return None
    while high - low > 1e-9 * high:
        middle = (low + high) / 2
        low, high = (middle, high) if entry.skip(problem, middle) is not None else (low, middle)
    return problem.budget(high)


def budgets_beyond_exhaustive(cfg: ExperimentConfig, problem: Problem) -> list[str]:
    """One line per budget ``B = rho K cbar`` above the cost of evaluating every configuration on every
    evaluation instance once (replayed logs only; a synthetic instance has no instances to count)."""
    if not isinstance(problem.sampler, ReplaySampler):
        return []
    unit = problem.norm.cost_unit
    exhaustive = float(np.sum(problem.sampler.costs))
    return [f"rho {rho:g}: B = {amount(problem.budget(rho), unit)} exceeds evaluating every configuration "
            f"on every evaluation instance once ({amount(exhaustive, unit)}); a real evaluation would not need it"
            for rho in cfg.rho if problem.budget(rho) > exhaustive]


#: The size below which every partial sum of rewards on the grid of 2^-24 is exact in float64 (docs/decisions.md,
#: Exact arithmetic), and a bound on a Gaussian draw's size in sigmas (Box-Muller from 53-bit uniforms: 8.6).
EXACT_SUM, GAUSSIAN_SIGMAS = 2.0**29, 9.0


def inexact_sums(cfg: ExperimentConfig) -> list[str]:
    """A line when a synthetic Gaussian identification experiment's rewards, summed over as many pulls of one arm
    as the largest budget allows (``B~ / c~_min``), can pass :data:`EXACT_SUM`: there the batched engine's block
    sums and the per-pull reference's additions round apart, and a near-tie can be decided otherwise by the two.
    Rewards of logs (at most 1 in size) and Bernoulli rewards stay exact at any budget a run can spend."""
    spec = cfg.synthetic
    if spec is None or cfg.setting != "psi" or spec.noise != "gaussian":
        return []
    size = max(abs(v) for m in spec.means for v in m) + GAUSSIAN_SIGMAS * spec.sigma
    costs = np.asarray(spec.costs, dtype=float) / max(spec.costs)
    cheapest = float(costs.min()) * (1.0 - spec.cost_spread if "stochastic" in cfg.cost_modes else 1.0)
    pulls = {rho: rho * float(costs.sum()) / cheapest + 1.0 for rho in cfg.rho}
    over = sorted(rho for rho, n in pulls.items() if n * size >= EXACT_SUM)
    if not over:
        return []
    return [f"Gaussian rewards up to about {size:.3g} in size (dataset.synthetic: means and {GAUSSIAN_SIGMAS:g} "
            f"sigma), summed over up to {pulls[over[0]]:,.0f} pulls of an arm at rho {over[0]:g}"
            f"{' and above' if len(over) > 1 else ''}, can pass 2^29, where the batched engine's sums round "
            "otherwise than the per-pull reference's and a near-tie may be decided otherwise (docs/decisions.md, "
            "Exact arithmetic); scale the means and sigma down (rewards in [0, 1], as the paper's) to keep them exact"]


#: A configuration this many times cheaper per call than the mean is warned of before a run (:func:`cheap_pulls`).
CHEAP_RATIO = 100.0


def cheap_pulls(cfg: ExperimentConfig, problem: Problem) -> list[str]:
    """A line when the cheapest configuration costs more than :data:`CHEAP_RATIO` times less than the mean per
    call: a method may spend the budget ``B = rho K cbar`` on it alone, ``B / c_min`` pulls a repetition instead of
    about ``rho K``, and the run takes that much longer (a cost of nearly 0 is often a cached or free call)."""
    costs = np.asarray(problem.profile_cost, dtype=float)
    cheapest = int(np.argmin(costs))
    ratio = float(costs.mean() / costs[cheapest])
    if not ratio > CHEAP_RATIO:
        return []
    unit, rho = problem.norm.cost_unit, max(cfg.rho)
    shown = Dollars("$") if unit == "usd" else "{:.3g} " + LABELS[unit]
    return [f"{problem.arm_names[cheapest]} costs {shown.format(costs[cheapest])} a call, 1/{ratio:.3g} of the mean "
            f"{shown.format(costs.mean())}: at rho {rho:g} a repetition may pull it up to "
            f"{problem.budget(rho) / costs[cheapest]:,.0f} times (B / c_i) against about {rho * problem.n_arms:,.0f} "
            "pulls at the mean cost, so the run may take that much longer; check its costs"]


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
