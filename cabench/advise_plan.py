"""What ``cabench advise`` spends: a budget as the command line states it (``5usd``, ``2e6tokens``), or one planned
per setting from ``--target``s on the profiling split (:mod:`cabench.budget_plan`), with what the plan predicted at
that budget beside what the run reached there."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from cabench import registry
from cabench.budget_plan import (
    BudgetPlan,
    Planned,
    PlanSpec,
    check_plan_folder,
    describe_row,
    plan_key,
    plan_profiling,
    reversed_premise,
    rounded_up,
    rows_beyond_draws,
    write_plan,
)
from cabench.data.dataset import Dataset
from cabench.errors import CabenchError, did_you_mean
from cabench.methods.configured import OnlineMethod, PsiMethod
from cabench.planning.curves import good_enough
from cabench.planning.draws import profiling_of
from cabench.planning.targets import Target, parse_target
from cabench.results import load_experiment
from cabench.stats import Z95, wilson
from cabench.units import COST_UNITS, amount, unit_hint

#: How a setting is named in experiment names and in the printed decision.
SHOWN_SETTING = {"online": "online", "psi": "identification"}
#: A budget as cabench writes amounts (``2,000,000 tokens``, ``$1,000.00``) is read too: commas between groups of three
#: digits before the point, and no other commas (``1,5usd`` is no budget).
_BUDGET = re.compile(r"\s*(?P<sign>[-+])?\s*(?P<dollar>\$)?\s*"
                     r"(?P<value>(?:\d{1,3}(?:,\d{3})+(?:\.\d*)?|\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*"
                     r"(?P<unit>[A-Za-z_]*)\s*")
#: One amount as a budget writes it, without its unit.
_AMOUNT = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@dataclass(frozen=True)
class Budget:
    """A budget as the command line states it: an amount in a cost unit (``2e6tokens``, ``5usd``, ``$5``)."""

    value: float
    unit: str

    @property
    def tag(self) -> str:
        """The budget in experiment names: ``5usd``, ``2000000tokens``."""
        return f"{self.value:.15g}{self.unit}"


def parse_budget(text: str) -> Budget:
    """``2e6tokens``, ``2e6 tokens``, ``5usd``, ``$5``, ``5 usd``, ``300completion_tokens`` or an amount as cabench
    writes it (``2,000,000 tokens``, ``$1,000.00``) as a :class:`Budget`."""
    found = _BUDGET.fullmatch(text)
    unit = (found.group("unit").lower() or ("usd" if found.group("dollar") else "")) if found else ""
    endless = re.fullmatch(r"\s*[-+]?\s*\$?\s*(?:inf(?:inity)?|nan)\s*(?P<unit>[A-Za-z_]*)\s*", text, re.IGNORECASE)
    if found is None and endless and endless.group("unit").lower() in ("", *COST_UNITS):  # (not 'information')
        raise CabenchError(f"--budget {text}: expected a finite amount")
    if found is None or unit not in COST_UNITS or (found.group("dollar") and unit != "usd"):
        hint = (unit_hint(unit) or did_you_mean(unit, COST_UNITS)) if unit not in COST_UNITS else ""
        named, equals, amount = text.partition("=")  # run's UNIT=VALUES form
        if equals and named.strip().lower() in COST_UNITS:
            first = amount.split(",")[0].strip()  # (several: advise spends one)
            one = first if _AMOUNT.fullmatch(first) else "2"
            hint = f"; one budget is its amount, then its unit: {one}{named.strip().lower()}"
        raise CabenchError(f"--budget {text}: expected an amount and a unit, e.g. 2e6tokens, 5usd or $5 (units: "
                           f"{', '.join(COST_UNITS)}){hint}")
    value = float(found.group("value").replace(",", "")) * (-1.0 if found.group("sign") == "-" else 1.0)
    if not math.isfinite(value):
        raise CabenchError(f"--budget {text}: expected a finite amount ({found.group('value')} is beyond a float's "
                           "range)")
    if not value > 0:
        raise CabenchError(f"--budget {text}: expected a positive amount")
    return Budget(value, unit)


@dataclass(frozen=True)
class Forecast:
    """One target's metric at the budget spent: what the plan predicted (the mean of its draws and their
    ``1 - confidence`` and ``confidence`` quantiles) and what the run reached (the mean over the repetitions with its
    95% interval: Wilson for a probability, normal for F1)."""

    target: Target
    predicted: tuple[float, float, float]
    reached: tuple[float, float, float] | None = None
    repetitions: int = 0


@dataclass(frozen=True)
class SettingPlan:
    """The plan of one targeted setting: its first method, the sentence saying what it would spend, the budget (None:
    no budget of the plan reaches the targets), how it was planned and a :class:`Forecast` per target."""

    setting: str
    method: str
    sentence: str
    budget: Budget | None
    spec: PlanSpec | None = None
    forecasts: tuple[Forecast, ...] = ()


def targets_by_setting(budget: Budget | None, targets: tuple[str, ...], by_setting: dict[str, list[str]]
                       ) -> dict[str, tuple[Target, ...]]:
    """``--target``s by the setting each bounds (none when a budget is given); exactly one of ``--budget`` and
    ``--target``, and a method to plan for every target."""
    if (budget is None) == (not targets):
        raise CabenchError("--budget, --target: give the budget to spend (e.g. --budget 5usd) or the targets to plan "
                           "it from (e.g. --target error<=0.1), one of the two")
    out: dict[str, tuple[Target, ...]] = {}
    for target in dict.fromkeys(parse_target(t) for t in targets):
        if target.setting not in by_setting:
            raise CabenchError(f"--target {target.text}: no method of the {SHOWN_SETTING[target.setting]} setting "
                               f"runs (--methods {','.join(n for names in by_setting.values() for n in names)})")
        out[target.setting] = (*out.get(target.setting, ()), target)
    return out


def predicted(plan: BudgetPlan, row: Planned, budget: float) -> tuple[float, float, float]:
    """What ``plan`` predicts of ``row``'s metric at ``budget``: its draws' curves (mean and the ``1 - confidence``
    and ``confidence`` quantiles) at the budget a draw needs for what the evaluation split needs at ``budget`` (the
    estimate's ``scale``, :func:`cabench.planning.search.estimate`), interpolated in log budget (clamped to the
    grid's ends)."""
    scale = row.estimate.scale
    curves = plan.curves
    curve = curves[(curves["method"] == row.method) & (curves["cost_mode"].fillna("") == (row.cost_mode or ""))
                   & (curves["target"] == row.target)]
    at = math.log(plan.profiling.norm.rho(budget) / scale)
    x = np.log(curve["rho"].to_numpy(dtype=float))
    mean, low, high = (float(np.interp(at, x, curve[c].to_numpy(dtype=float))) for c in ("mean", "low", "high"))
    return mean, low, high


def plan_budgets(ds: Dataset, by_setting: dict[str, list[str]], targets: dict[str, tuple[Target, ...]],
                 out: Path, quiet: bool, name: str | None = None, replace: bool = False) -> dict[str, SettingPlan]:
    """Each setting's plan (``by_setting`` holds the targeted ones), from the profiling split for its first method
    (the recommended one unless ``--methods``): the budget of its most demanding target, rounded up, a sentence
    saying what it would spend and what it predicts there of each target; the plans (``plan.csv``, ``plan.png``) go
    to ``out/<name>_<setting>`` (``name``: the dataset's unless given); a plan asked otherwise there is refused
    unless ``replace``."""
    profiling = profiling_of(ds, np.arange(ds.n_arms))
    plans = {}
    for setting, names in by_setting.items():
        wanted = targets[setting]
        methods = [OnlineMethod(n) if setting == "online" else PsiMethod(n) for n in names]
        modes: tuple[str | None, ...] = (None,) if setting == "online" else ("deterministic",)
        label = f"{name or ds.name}_{SHOWN_SETTING[setting]}"
        spec = PlanSpec(wanted)
        asked = {"dataset": ds.content_hash or ds.name, "label": label, "methods": names}
        key = plan_key({**asked, "terms": ds.terms.describe()}, spec)  # (in dollars at other prices: another plan)
        earlier = check_plan_folder(out / label, key, replace, hint="pass another --out or --name, or --replace to "
                                                                     "replace it", legacy=plan_key(asked, spec))
        found = plan_profiling(profiling, setting, methods, modes, spec, name=label, quiet=quiet)
        write_plan(found, out / label, key, replace or earlier)
        rows = [r for r in found.rows if r.method == names[0]]
        row = max(rows, key=lambda r: r.estimate.rho)
        line = f"plan, {SHOWN_SETTING[setting]}: {registry.display(names[0])} {describe_row(row, found)}"
        if earlier:
            line += (" (planned again: the plan there was an earlier cabench's, whose key did not hold the objectives, "
                     "cost unit and prices)")
        if reversed_premise(row.estimate):
            line += " (the draws need more than the profiling rows: the plan may fall short; see plan.csv)"
        elif rows_beyond_draws(row.estimate):
            line += (" (the profiling rows do not reach it within the grid though half or more of the draws do: the "
                     "evaluation split may need far less; see plan.csv)")
        if not math.isfinite(row.estimate.rho):  # every target said, the ones in reach too, and how to run at them
            out_of_reach = [r.target for r in rows if not math.isfinite(r.estimate.rho)]
            others = "".join(f"; {describe_row(r, found)}" for r in rows if r is not row)
            drop = (f" (leave out {', '.join(f'--target {t}' for t in out_of_reach)} to run at the others)"
                    if len(out_of_reach) < len(rows) else "")
            plans[setting] = SettingPlan(setting, names[0], f"{line}{others}; not run{drop}", None)
            continue
        budget = Budget(rounded_up(found.budget(row.estimate.rho)), found.cost_unit)
        forecasts = tuple(Forecast(t, predicted(found, next(r for r in rows if r.target == t.text), budget.value))
                          for t in wanted)
        plans[setting] = SettingPlan(setting, names[0], f"{line}; spending {amount(budget.value, budget.unit)}",
                                     budget, found.spec, forecasts)
    return plans


def reached(plan: SettingPlan, folder: Path) -> SettingPlan:
    """``plan`` with what its method reached at the budget in the results ``folder``: identification, P(error) with
    its Wilson interval and mean F1 ± 1.96 se within [0, 1] (deterministic costs); online, the share of repetitions
    whose most-pulled configurations (``selections.csv``; several where tied) all have ``nu >= (1 - epsilon) max nu``
    (paper §3.1, as the plan counts them: :func:`~cabench.planning.curves.metrics_at`), with its Wilson
    interval."""
    assert plan.spec is not None  # a plan that was run
    e = load_experiment(folder)
    values: dict[str, tuple[float, float, float]]
    if e.setting == "psi":
        s = e.summary()
        r = s[(s["method"] == plan.method) & (s["cost_mode"] == "deterministic")].iloc[0]
        half = Z95 * float(r["f1_se"])
        values = {"error": (float(r["error"]), float(r["error_low"]), float(r["error_high"])),
                  "f1": (float(r["f1"]), max(0.0, float(r["f1"]) - half), min(1.0, float(r["f1"]) + half))}
        n = int(r["n"])
    else:
        sel = e.selections[e.selections["method"] == plan.method]
        nu = e.arms.assign(config_id=e.arms["config_id"].astype(str)).set_index("config_id")["nu"]
        most = sel[sel["pulls"] == sel.groupby(["rho", "rep"])["pulls"].transform("max")]
        worst = most.assign(nu=nu.reindex(most["config_id"].astype(str)).to_numpy(dtype=float))
        per_run = worst.groupby(["rho", "rep"])["nu"].min()  # the least nu among each run's most-pulled
        hits = int(good_enough(per_run.to_numpy(dtype=float), float(nu.max()), plan.spec.epsilon).sum())
        n = int((e.runs["method"] == plan.method).sum())
        values = {"share": (hits / n, *wilson(hits, n))}
    return replace(plan, forecasts=tuple(replace(f, reached=values[f.target.metric], repetitions=n)
                                         for f in plan.forecasts))


def plan_lines(plan: SettingPlan) -> list[str]:
    """A setting's plan and, once run, what it predicted and what the run reached at the budget spent, per
    target: ``at 1,240 tokens (CoPSI-R, 50 repetitions): error predicted 0.040 [0.000, 0.100], reached 0.060
    [0.021, 0.162]: met``."""
    done = [f for f in plan.forecasts if f.reached is not None]
    if plan.budget is None or plan.spec is None or not done:
        return [plan.sentence]
    band = f"{100 * (1 - plan.spec.confidence):.0f}-{100 * plan.spec.confidence:.0f}%"

    def said(f: Forecast) -> str:
        assert f.reached is not None
        mean, low, high = f.predicted
        got, got_low, got_high = f.reached
        return (f"{f.target.metric} predicted {mean:.3f} [{low:.3f}, {high:.3f}], reached {got:.3f} "
                f"[{got_low:.3f}, {got_high:.3f}]: {'met' if f.target.met(np.array(got)) else 'not met'}")

    return [plan.sentence, f"  at {amount(plan.budget.value, plan.budget.unit)} ({registry.display(plan.method)}, "
                           f"{done[0].repetitions} repetitions): {'; '.join(said(f) for f in done)} (predicted: "
                           f"the draws' mean [{band}]; reached: mean [95% CI])"]
