"""Experiment configs: YAML in, frozen dataclasses out (SPEC §5-§7).

Loading validates every key and value and reports the first problem in one
line naming the file and the key (unknown keys come with a did-you-mean
suggestion). Command-line flags override YAML keys of the same name only when
given.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from cabench import registry
from cabench.backends import BACKENDS
from cabench.data.arms import PRESETS, ArmFilter
from cabench.data.dataset import Split
from cabench.data.io import META_NAME, read_metadata
from cabench.data.terms import TERM_KEYS, Terms, declared_keys, declares_terms, parse_terms
from cabench.errors import CabenchError, did_you_mean
from cabench.methods.configured import OnlineMethod, PsiMethod, unused
from cabench.psi.engine import COST_MODES
from cabench.storage import not_a_file
from cabench.synthetic import SyntheticSpec
from cabench.units import COST_UNITS, unit_hint
from cabench.yamlio import load_yaml

SETTINGS = ("online", "psi")

TOP_KEYS = {
    "name", "dataset", "split", "arms", "setting", "rho", "methods", "cost_modes", "repetitions", "seed",
    "n_jobs", "chunk_size", "backend", "scheduler_address", "output", "trajectories", "tune", "max_pulls",
    "max_memory_gb", "objectives", "cost", "prices", "budget",
}
#: Largest values a config may give (beyond them counters overflow or nothing can finish).
LIMITS = {"rho": 1e9, "repetitions": 10**7, "chunk_size": 10**6, "points": 10**6, "window": 10**7,
          "tune_repetitions": 10**6, "radius": 1e6, "seed": 2**63 - 1}
SPLIT_KEYS = {"profiling_size", "seed"}
#: The folder of a results root that ``cabench plot`` draws into: no experiment's name.
FIGURES = "figures"
ARMS_KEYS = {"preset", "models", "temperatures", "max_new_tokens", "prompting", "config_ids"}
SYNTHETIC_KEYS = {"name", "means", "costs", "noise", "sigma", "cost_spread"}
TRAJECTORY_KEYS = {"rho", "budget", "points", "window"}
TUNE_KEYS = {"s_r", "s_c", "eta", "rho", "repetitions"}


@dataclass(frozen=True)
class TrajectorySpec:
    """Online trajectories (paper Fig. 4): which budget, grid size, moving-average window.

    ``budget`` is the budget as the config states it (``trajectories.budget``, in the cost unit) until the
    dataset turns it into ``rho``.
    """

    rho: float
    points: int = 200
    window: int = 50
    budget: float | None = None


@dataclass(frozen=True)
class TuneSpec:
    """Profiling-only hyper-parameter grid (Appendix A)."""

    s_r: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1)
    s_c: tuple[float, ...] = (0.001, 0.003, 0.01)
    eta: tuple[float, ...] = (0.05, 0.1)
    rho: tuple[float, ...] = ()
    repetitions: int = 20


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment."""

    name: str
    source: str
    setting: str
    rho: tuple[float, ...]
    methods: tuple[Any, ...]
    dataset: str | None = None
    synthetic: SyntheticSpec | None = None
    split: Split | None = None  # None: the dataset's own (dataset.yaml), else 200 / seed 0
    arms_preset: str | None = "all"
    arms: ArmFilter = field(default_factory=ArmFilter)
    cost_modes: tuple[str, ...] = ("deterministic",)
    repetitions: int = 100
    seed: int = 0
    n_jobs: int = 1
    chunk_size: int = 50
    backend: str = "loky"
    scheduler_address: str | None = None
    output: str = "results"
    trajectories: TrajectorySpec | None = None
    tune: TuneSpec = field(default_factory=TuneSpec)
    max_pulls: float = 2e10
    max_memory_gb: float = 8.0
    terms: Terms | None = None  # None: the terms the dataset declares, else the paper's
    terms_stated: tuple[str, ...] = ()  # the keys of ``terms`` taken from the dataset's dataset.yaml
    budget: tuple[float, ...] = ()  # budgets as stated (``budget: {unit: [...]}``), in ``budget_unit``
    budget_unit: str | None = None
    given: frozenset[str] = frozenset()  # the keys a command-line option replaced (their errors name it), not identity

    @property
    def stated(self) -> dict[float, float]:
        """Each rho of the grid and the budget the config states for it (budget-stated configs only)."""
        return dict(zip(self.rho, self.budget)) if self.budget else {}

    def resolved(self) -> dict[str, Any]:
        """The resolved config as plain data (written to ``config.yaml`` and hashed)."""
        if self.synthetic is not None:
            dataset: Any = {"synthetic": {
                "name": self.synthetic.name, "means": [list(m) for m in self.synthetic.means],
                "costs": list(self.synthetic.costs), "noise": self.synthetic.noise,
                "sigma": self.synthetic.sigma, "cost_spread": self.synthetic.cost_spread}}
        else:
            dataset = self.dataset
        arms: dict[str, Any] = {"preset": self.arms_preset} if self.arms_preset else {
            k: list(v) for k, v in vars(self.arms).items() if v}
        methods = [
            {"name": m.name, **({"mode": m.mode, "s_r": m.s_r, "s_c": m.s_c, "eta": m.eta, "alpha": m.alpha}
                                if isinstance(m, OnlineMethod) else {})}
            for m in self.methods
        ]
        out: dict[str, Any] = {
            "name": self.name, "dataset": dataset,
            "split": None if self.split is None else {"profiling_size": self.split.profiling_size,
                                                      "seed": self.split.seed},
            "arms": arms, "setting": self.setting, "rho": list(self.rho), "methods": methods,
            **({"budget": {self.budget_unit: list(self.budget)}} if self.budget else {}),
            **({} if self.terms is None else self.terms.describe()),
            "repetitions": self.repetitions, "seed": self.seed, "n_jobs": self.n_jobs,
            "chunk_size": self.chunk_size, "backend": self.backend, "output": self.output,
        }
        if self.setting == "psi":
            out["cost_modes"] = list(self.cost_modes)
        if self.scheduler_address:
            out["scheduler_address"] = self.scheduler_address
        if self.trajectories:
            out["trajectories"] = {k: v for k, v in vars(self.trajectories).items() if v is not None}
        return out

    def identity(self) -> dict[str, Any]:
        """What determines the experiment's results: the resolved config less how it is run."""
        out = self.resolved()
        for key in ("n_jobs", "chunk_size", "backend", "scheduler_address", "output"):
            out.pop(key, None)
        return out


#: Command-line options that replace a config key whole, by the key (an error in its value names the option).
FLAG_OF = {"rho": "--rho", "budget": "--budget", "repetitions": "--repetitions", "seed": "--seed",
           "methods": "--methods", "name": "--name", "n_jobs": "--n-jobs", "chunk_size": "--chunk-size",
           "backend": "--backend", "output": "--out"}


def _from_option(key: str, given: Collection[str]) -> str:
    """`` (from --budget)`` where a command-line option replaced the top-level ``key`` (one of ``given``), else
    nothing."""
    return f" (from {FLAG_OF[key]})" if key in given and key in FLAG_OF else ""


def flag_note(cfg: ExperimentConfig, key: str) -> str:
    """:func:`_from_option` for a key of the validated ``cfg``."""
    return _from_option(key, cfg.given)


class _Reader:
    """Typed access to a YAML mapping with one-line errors naming file and key (and the command-line option, for a
    key in ``given`` that it replaced)."""

    def __init__(self, source: str, given: frozenset[str] = frozenset()) -> None:
        self.source = source
        self.given = given

    def fail(self, key: str, message: str) -> CabenchError:
        return CabenchError(f"{self.source}: {key}{_from_option(key.split('.')[0].split('[')[0], self.given)}: "
                            f"{message}")

    def check_keys(self, mapping: Any, allowed: set[str], where: str) -> dict[str, Any]:
        if not isinstance(mapping, dict):
            raise self.fail(where or "config", f"expected a mapping, got {type(mapping).__name__}")
        for key in mapping:
            if not isinstance(key, str) or key not in allowed:
                hint = did_you_mean(str(key), sorted(allowed), f"; allowed keys: {', '.join(sorted(allowed))}")
                raise self.fail(f"{where}.{key}" if where else str(key), f"unknown key{hint}")
        return mapping

    def number(self, value: Any, key: str, *, integer: bool = False, positive: bool = False,
               minimum: float | None = None, maximum: float | None = None) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected a {'whole number' if integer else 'number'}, got {value!r}")
        if integer and (isinstance(value, float) and not value.is_integer()):
            raise self.fail(key, f"expected a whole number, got {value!r}")
        if not math.isfinite(value):
            raise self.fail(key, f"expected a finite number, got {value!r}")
        if positive and not value > 0:
            raise self.fail(key, f"must be positive, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.fail(key, f"must be at least {minimum:g}, got {value!r}")
        if maximum is not None and value > maximum:
            raise self.fail(key, f"must be at most {maximum:g}, got {value!r}")
        return int(value) if integer else float(value)

    def text(self, value: Any, key: str, choices: tuple[str, ...] | None = None) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"expected a non-empty string, got {value!r}")
        if choices and value not in choices:
            hint = did_you_mean(value, choices, cutoff=0.5)
            raise self.fail(key, f"'{value}' is not one of {', '.join(choices)}{hint}")
        return value

    def sequence(self, value: Any, key: str, *, allow_scalar: bool = True) -> list[Any]:
        if isinstance(value, (list, tuple)):
            if not value:
                raise self.fail(key, "is empty; give at least one value")
            return list(value)
        if allow_scalar and value is not None and not isinstance(value, dict):
            return [value]
        raise self.fail(key, f"expected a list, got {value!r}")


def _methods(r: _Reader, raw: Any, setting: str) -> tuple[Any, ...]:
    """The methods of a config; each parameter is read as its method's spec declares it."""
    declared = {p.name: p for p in registry.parameters(setting)}
    out, seen = [], set()
    for pos, item in enumerate(r.sequence(raw, "methods")):
        key = f"methods[{pos}]"
        spec = r.check_keys({"name": item} if isinstance(item, str) else item, {"name", *declared}, key)
        if "name" not in spec:
            raise r.fail(f"{key}.name", "missing; every method needs a name")
        name = r.text(spec["name"], f"{key}.name", registry.choices(str(spec["name"]), setting))
        if name in seen:
            raise r.fail(f"{key}.name", f"'{name}' is listed twice")
        seen.add(name)
        values: dict[str, Any] = {}
        for p_name, p in declared.items():
            if p_name in spec:
                where = f"{key}.{p_name}"
                values[p_name] = (r.text(spec[p_name], where, p.choices) if p.choices else
                                  r.number(spec[p_name], where, positive=p.positive, minimum=p.minimum,
                                           maximum=p.maximum))
        try:
            method = OnlineMethod(name, **values) if setting == "online" else PsiMethod(name)
        except CabenchError as exc:
            raise CabenchError(f"{r.source}: {key}.name: {exc}") from None
        if (refused := unused(method, values)) is not None:
            raise r.fail(f"{key}.{refused[0]}", refused[1])
        out.append(method)
    _distinct_displays(r, out)
    return tuple(out)


def _distinct_displays(r: _Reader, methods: list[Any]) -> None:
    """Refuse two methods of an experiment that one name would show as one: the display of one is the display or
    the name of another (compared case-insensitively, stripped). A clash is blamed on a method of your own rather
    than a built-in one, else on the later one."""

    def fold(text: str) -> str:
        return text.strip().casefold()

    for j, later in enumerate(methods):
        for i, earlier in enumerate(methods[:j]):
            culprit, other, pos = (earlier, later, i) if (earlier.entry.spec.origin == "user" and
                                                           later.entry.spec.origin != "user") else (later, earlier, j)
            mine, theirs = culprit.entry.spec.display, other.entry.spec.display
            other_pos = i + j - pos
            if fold(mine) == fold(theirs):
                clash = f"is shown as '{mine}', as {other.name} (methods[{other_pos}]) is"
            elif fold(mine) == fold(other.name):
                clash = f"is shown as '{mine}', the name of {other.name} (methods[{other_pos}])"
            elif fold(culprit.name) == fold(theirs):
                clash = f"is named as {other.name} (methods[{other_pos}]) is shown, '{theirs}'"
            elif fold(culprit.name) == fold(other.name):
                clash = f"differs only in case from {other.name} (methods[{other_pos}])"
            else:
                continue
            raise r.fail(f"methods[{pos}].name", f"{culprit.name} {clash}; tables, reports and legends would show "
                         f"them as one method: give {culprit.name} a display of its own")


def _output(r: _Reader, raw: Any) -> str:
    """The ``output`` folder as written: a path, never a number (``output: 5`` made a folder named 5)."""
    if not isinstance(raw, str):
        quote = (f" (YAML reads it as a number: quote it, output: '{raw}')"
                 if isinstance(raw, (int, float)) and not isinstance(raw, bool) else "")
        raise r.fail("output", f"expected a folder path, got {raw!r}{quote}")
    return raw


def _dataset(r: _Reader, raw: Any, base: Path) -> tuple[str | None, SyntheticSpec | None]:
    if isinstance(raw, str):
        path = Path(raw).expanduser()
        if not path.is_absolute():
            here, beside = Path.cwd() / path, base / path
            path = here if here.exists() or not beside.exists() else beside
        if path.exists() and not path.is_dir():
            raise r.fail("dataset", f"'{raw}' is a file, not a dataset folder (a folder with the logs and "
                         "dataset.yaml; `cabench data import` makes one from a log file)")
        if not path.is_dir():
            places = list(dict.fromkeys([Path.cwd(), base])) if not Path(raw).expanduser().is_absolute() else []
            where = f" (looked in {' and '.join(map(str, places))})" if places else ""
            parent = Path(raw).expanduser().parent
            nearby = [p.name for d in ([parent] if parent.is_absolute() else [Path.cwd() / parent, base / parent])
                      if d.is_dir() for p in d.iterdir() if p.is_dir()]
            hint = did_you_mean(Path(raw).name, sorted(set(nearby)), "; give a dataset folder or a 'synthetic' mapping",
                                shown=lambda name: parent / name)
            raise r.fail("dataset", f"folder '{raw}' not found{where}{hint}")
        return str(path), None
    spec = r.check_keys(raw, {"synthetic"}, "dataset")
    if "synthetic" not in spec:
        raise r.fail("dataset", "expected a folder path or a mapping with key 'synthetic'")
    syn = r.check_keys(spec["synthetic"], SYNTHETIC_KEYS, "dataset.synthetic")
    for need in ("means", "costs"):
        if need not in syn:
            raise r.fail(f"dataset.synthetic.{need}", "missing")
    means = []
    for i, row in enumerate(r.sequence(syn["means"], "dataset.synthetic.means", allow_scalar=False)):
        vals = r.sequence(row, f"dataset.synthetic.means[{i}]", allow_scalar=False)
        means.append(tuple(r.number(v, f"dataset.synthetic.means[{i}]") for v in vals))
    costs = tuple(r.number(v, "dataset.synthetic.costs", positive=True)
                  for v in r.sequence(syn["costs"], "dataset.synthetic.costs", allow_scalar=False))
    kwargs: dict[str, Any] = {"name": r.text(syn.get("name", "synthetic"), "dataset.synthetic.name"),
                              "means": tuple(means), "costs": costs}
    if "noise" in syn:
        kwargs["noise"] = r.text(syn["noise"], "dataset.synthetic.noise", ("bernoulli", "gaussian"))
    if "sigma" in syn:
        if kwargs.get("noise") != "gaussian":  # Bernoulli rewards have no sigma: it would change the hash, not a run
            raise r.fail("dataset.synthetic.sigma", "the standard deviation of Gaussian noise; give noise: gaussian "
                         "with it, or remove it (Bernoulli rewards, the default, have none)")
        kwargs["sigma"] = r.number(syn["sigma"], "dataset.synthetic.sigma", positive=True)
    if "cost_spread" in syn:
        kwargs["cost_spread"] = r.number(syn["cost_spread"], "dataset.synthetic.cost_spread", minimum=0)
    try:
        return None, SyntheticSpec(**kwargs)
    except CabenchError as exc:
        raise CabenchError(f"{r.source}: {exc}") from None


def _terms(r: _Reader, raw: dict[str, Any], dataset: str | None) -> tuple[Terms | None, tuple[str, ...]]:
    """The terms a config declares, key by key over its dataset's: ``objectives``, ``cost`` and ``prices`` each
    replace the dataset's own where the config gives them, and a key it leaves out is the one ``dataset.yaml``
    declares, else the default (README, the config keys). None where the config declares none (the dataset's
    terms, else the paper's, apply as they are). Also the keys taken from ``dataset.yaml``: an error in one, here
    or when the logs are read, names that file."""
    if not declares_terms(raw):
        return None, ()
    given = declared_keys(raw)
    stated: dict[str, Any] = {}
    where = Path(dataset or ".") / META_NAME
    if dataset is not None:
        stated = {key: v for key, v in declared_keys(read_metadata(Path(dataset))).items() if key not in given}

    def fail(key: str, message: str) -> CabenchError:
        if re.split(r"[.[]", key)[0] in stated:
            return CabenchError(f"{where}: {key}: {message}")
        return r.fail(key, message)

    return parse_terms({**stated, **given}, fail), tuple(stated)


def _arms(r: _Reader, raw: Any) -> tuple[str | None, ArmFilter]:
    if raw is None:
        return "all", ArmFilter()
    if isinstance(raw, str):
        raw = {"preset": raw}
    spec = r.check_keys(raw, ARMS_KEYS, "arms")
    if "preset" in spec:
        if len(spec) > 1:
            raise r.fail("arms", "give either 'preset' or filter keys, not both")
        name = r.text(spec["preset"], "arms.preset", tuple(PRESETS))
        return name, PRESETS[name]
    fields: dict[str, Any] = {}
    for key in ("models", "prompting", "config_ids"):
        if key in spec:
            fields[key] = tuple(r.text(v, f"arms.{key}") for v in r.sequence(spec[key], f"arms.{key}"))
    if "temperatures" in spec:
        fields["temperatures"] = tuple(r.number(v, "arms.temperatures", minimum=0)
                                       for v in r.sequence(spec["temperatures"], "arms.temperatures"))
    if "max_new_tokens" in spec:
        fields["max_new_tokens"] = tuple(r.number(v, "arms.max_new_tokens", integer=True, positive=True)
                                         for v in r.sequence(spec["max_new_tokens"], "arms.max_new_tokens"))
    for key, values in fields.items():  # a value listed twice selects nothing more, but changed the config's hash
        if len(set(values)) < len(values):
            again = next(v for n, v in enumerate(values) if v in values[:n])
            raise r.fail(f"arms.{key}", f"lists {again!r} twice; list each once")
    return None, ArmFilter(**fields)


def _n_jobs(r: _Reader, value: Any) -> int:
    n = r.number(value, "n_jobs", integer=True, minimum=-1)
    if n == 0:
        raise r.fail("n_jobs", "must be a positive number of workers, or -1 for all cores")
    return n


def _keep_method_params(declared: Any, names: Any) -> Any:
    """Methods named on the command line keep the parameters the YAML gives them."""
    specs = {}
    for item in declared if isinstance(declared, list) else [declared]:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            specs[item["name"]] = item
    if not isinstance(names, list):
        return names
    return [specs.get(n, n) if isinstance(n, str) else n for n in names]


def parse_config(raw: Any, source: str, base: Path | None = None, overrides: dict[str, Any] | None = None
                 ) -> ExperimentConfig:
    """Validate a YAML mapping (plus command-line ``overrides``) into an :class:`ExperimentConfig`."""
    r = _Reader(source)
    base = base or Path.cwd()
    raw = r.check_keys(raw, TOP_KEYS, "")
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    r.given = frozenset(given)
    if "methods" in given and "methods" in raw:
        given["methods"] = _keep_method_params(raw["methods"], given["methods"])
    if "name" in given and "output" not in given and isinstance(raw.get("output"), str):
        given["output"] = str(Path(raw["output"]).parent / str(given["name"]))  # a renamed experiment's own folder
    if "rho" in given:
        raw = {k: v for k, v in raw.items() if k != "budget"}  # the command line's grid replaces the stated one
    if "budget" in given:
        raw = {k: v for k, v in raw.items() if k != "rho"}
    raw = {**raw, **given}
    for need in ("dataset", "setting", "methods"):
        if need not in raw:
            raise r.fail(need, "missing; a config needs dataset, setting, rho (or budget) and methods")
    if ("rho" in raw) == ("budget" in raw):
        raise r.fail("rho", "give either rho (budgets as multiples of the exhaustive evaluation's cost per "
                            "instance) or budget: {tokens|usd|completion_tokens: N}, not both" if "rho" in raw else
                     "missing; a config needs dataset, setting, rho (or budget) and methods")
    setting = r.text(raw["setting"], "setting", SETTINGS)
    dataset, synthetic = _dataset(r, raw["dataset"], base)
    if synthetic is not None and raw.get("arms") is not None:  # recorded in config.yaml and the hash, never applied
        raise r.fail("arms", "a synthetic instance runs every arm of dataset.synthetic.means (list only the arms to "
                             "run there); remove arms")
    terms, terms_stated = _terms(r, raw, dataset)
    if synthetic is not None and terms is not None:
        raise r.fail(next(k for k in TERM_KEYS if raw.get(k) is not None),
                     "a synthetic instance draws its own rewards and costs; objectives, cost and prices apply to logs")
    budget: tuple[float, ...] = ()
    budget_unit = None
    if "budget" in raw:
        budget_unit, budget = _budget(r, raw["budget"], synthetic is not None)
        rho = tuple(math.nan for _ in budget)  # stated budgets become rho once the dataset gives K and the costs
    else:
        rho = tuple(r.number(v, "rho", positive=True, maximum=LIMITS["rho"]) for v in r.sequence(raw["rho"], "rho"))
        if len(set(rho)) != len(rho):
            raise r.fail("rho", f"has repeated values {list(rho)}")
    methods = _methods(r, raw["methods"], setting)
    split = None
    if raw.get("split") is not None:
        split_raw = r.check_keys(raw["split"], SPLIT_KEYS, "split")
        split = Split(
            r.number(split_raw.get("profiling_size", 200), "split.profiling_size", integer=True, positive=True),
            r.number(split_raw.get("seed", 0), "split.seed", integer=True, minimum=0),
        )
    preset_name, arms = _arms(r, raw.get("arms"))
    cost_modes: tuple[str, ...] = ("deterministic",)
    if "cost_modes" in raw:
        if setting != "psi":
            raise r.fail("cost_modes", "only applies to setting 'psi'")
        listed = [r.text(v, "cost_modes", COST_MODES) for v in r.sequence(raw["cost_modes"], "cost_modes")]
        if len(set(listed)) < len(listed):  # as rho and methods are: a repeat is a slip, not a wish
            raise r.fail("cost_modes", f"has repeated values {listed}")
        cost_modes = tuple(listed)
    trajectories = None
    if raw.get("trajectories") is not None:
        if setting != "online":
            raise r.fail("trajectories", "only applies to setting 'online'")
        tr = r.check_keys(raw["trajectories"], TRAJECTORY_KEYS, "trajectories")
        grid, key = (budget, "budget") if budget else (rho, "rho")
        other = "budget" if key == "rho" else "rho"
        replaced = key in given  # the command line's grid
        if other in tr and not replaced:
            raise r.fail(f"trajectories.{other}", f"the grid is stated as {key}; name the trajectories' {key} "
                                                  f"(trajectories.{key}, one of the {key} grid {list(grid)})")
        if key not in tr and not replaced:
            raise r.fail(f"trajectories.{key}", f"missing; name the {key} of the trajectories (one of the {key} grid)")
        at = r.number(tr[key], f"trajectories.{key}", positive=True) if key in tr else max(grid)
        if at not in grid and replaced:
            at = max(grid)  # the command line replaced the grid: trajectories at its largest budget
        if at not in grid:
            raise r.fail(f"trajectories.{key}", f"{at:g} is not in the {key} grid {list(grid)}")
        trajectories = TrajectorySpec(
            math.nan if budget else at,
            r.number(tr.get("points", 200), "trajectories.points", integer=True, minimum=2, maximum=LIMITS["points"]),
            r.number(tr.get("window", 50), "trajectories.window", integer=True, minimum=1, maximum=LIMITS["window"]),
            at if budget else None,
        )
    tune = TuneSpec()
    if raw.get("tune") is not None:
        tr = r.check_keys(raw["tune"], TUNE_KEYS, "tune")
        kwargs: dict[str, Any] = {}
        for key in ("s_r", "s_c", "eta", "rho"):
            if key in tr:
                values = r.sequence(tr[key], f"tune.{key}")
                top = LIMITS["rho" if key == "rho" else "radius"]
                kwargs[key] = tuple(r.number(v, f"tune.{key}", positive=True, maximum=top) for v in values)
                if len(set(kwargs[key])) < len(kwargs[key]):  # each grid point was run, and written, twice
                    raise r.fail(f"tune.{key}", f"has repeated values {list(kwargs[key])}")
        if "repetitions" in tr:
            kwargs["repetitions"] = r.number(tr["repetitions"], "tune.repetitions", integer=True, minimum=1,
                                             maximum=LIMITS["tune_repetitions"])
        tune = TuneSpec(**kwargs)
    backend = r.text(raw.get("backend", "loky"), "backend", BACKENDS)
    address = raw.get("scheduler_address")
    if address is not None:
        address = r.text(address, "scheduler_address")
        if not re.fullmatch(r"(tcp|tls|inproc|ucx|ws|wss)://[^\s/:]+(:\d+)?/?", address):
            raise r.fail("scheduler_address", f"'{address}' is not a scheduler address like tcp://10.0.0.5:8786")
        if backend != "dask":
            raise r.fail("scheduler_address", "only applies to backend 'dask'")
    name = r.text(raw.get("name", Path(source).stem), "name")
    if "/" in name or "\\" in name or name in (".", "..") or len(name) > 120:
        raise r.fail("name", f"{name[:40]!r} cannot name a folder: no '/' or '\\', not '.' or '..', at most 120 "
                             "characters")
    if not name.isprintable():
        raise r.fail("name", f"{name[:40]!r} holds a character that is not printable (a newline, a tab or another "
                             "control character); an experiment name is one line of printable text")
    if name != name.strip():  # ' lead' and 'lead' read alike in every report
        raise r.fail("name", f"{name[:40]!r} begins or ends with a space; leave it out")
    if "; " in name:  # figures.csv lists a figure's experiments joined by it: such a figure was drawn on every plot
        raise r.fail("name", f"{name[:40]!r} holds '; ', which joins the experiments of a figure in figures.csv; "
                             "write it another way ('a;b', 'a - b')")
    if name == FIGURES:
        raise r.fail("name", f"'{FIGURES}' is the folder `cabench plot` draws a results root's figures into; "
                             "choose another name")
    return ExperimentConfig(
        name=name,
        source=source,
        given=r.given,
        setting=setting,
        rho=rho,
        methods=methods,
        dataset=dataset,
        synthetic=synthetic,
        split=split,
        arms_preset=preset_name,
        arms=arms,
        cost_modes=cost_modes,
        repetitions=r.number(raw.get("repetitions", 100), "repetitions", integer=True, minimum=1,
                             maximum=LIMITS["repetitions"]),
        seed=r.number(raw.get("seed", 0), "seed", integer=True, minimum=0, maximum=LIMITS["seed"]),
        n_jobs=_n_jobs(r, raw.get("n_jobs", 1)),
        chunk_size=r.number(raw.get("chunk_size", 50), "chunk_size", integer=True, minimum=1,
                            maximum=LIMITS["chunk_size"]),
        max_pulls=r.number(raw.get("max_pulls", 2e10), "max_pulls", positive=True),
        max_memory_gb=r.number(raw.get("max_memory_gb", 8.0), "max_memory_gb", positive=True),
        backend=backend,
        scheduler_address=address,
        output=r.text(_output(r, raw.get("output", f"results/{name}")), "output"),
        trajectories=trajectories,
        tune=tune,
        terms=terms,
        terms_stated=terms_stated,
        budget=budget,
        budget_unit=budget_unit,
    )


def _budget(r: _Reader, raw: Any, synthetic: bool) -> tuple[str, tuple[float, ...]]:
    """Budgets as the config states them, ``budget: {<cost unit>: N or [N, ...]}``: the unit and the values."""
    if synthetic:
        raise r.fail("budget", "a synthetic instance states budgets as rho")
    if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):  # budget: 5usd, budget: 5
        raise r.fail("budget", f"expected a mapping of a cost unit to its budgets, e.g. budget: {{usd: 5}} or "
                               f"budget: {{tokens: [100000, 200000]}}, got {raw!r}")
    if isinstance(raw, dict):
        for key in raw:
            if hint := unit_hint(str(key)):
                raise r.fail(f"budget.{key}", f"unknown key{hint} (allowed keys: {', '.join(sorted(COST_UNITS))})")
    spec = r.check_keys(raw, set(COST_UNITS), "budget")
    if len(spec) != 1:
        raise r.fail("budget", "expected one unit, e.g. budget: {usd: 5} or budget: {tokens: 100000}")
    stated = next(iter(spec))
    values = tuple(r.number(v, f"budget.{stated}", positive=True, maximum=1e15)
                   for v in r.sequence(spec[stated], f"budget.{stated}"))
    if len(set(values)) != len(values):
        raise r.fail(f"budget.{stated}", f"has repeated values {list(values)}")
    return stated, values


def resolve_budgets(cfg: ExperimentConfig, rho_of: Any, unit: str) -> ExperimentConfig:
    """``cfg`` with its stated budgets turned into rho by ``rho_of(budget)`` (:meth:`Normalisation.rho`, which
    never lets ``B`` exceed the stated budget); a rho-stated config unchanged. ``unit`` is the cost's."""
    if not cfg.budget:
        return cfg
    if cfg.budget_unit != unit:
        raise CabenchError(f"{cfg.source}: budget.{cfg.budget_unit}{flag_note(cfg, 'budget')}: the cost is in "
                           f"{unit}; state the budget in {unit}, or declare cost: {cfg.budget_unit}")
    rho = tuple(float(rho_of(b)) for b in cfg.budget)
    if any(not (0 < x <= LIMITS["rho"]) for x in rho) or len(set(rho)) != len(rho):
        raise CabenchError(f"{cfg.source}: budget{flag_note(cfg, 'budget')}: {list(cfg.budget)} gives rho "
                           f"{list(rho)}; budgets must give distinct rho in (0, {LIMITS['rho']:g}]")
    trajectories = cfg.trajectories
    if trajectories is not None and trajectories.budget is not None:
        trajectories = replace(trajectories, rho=rho[cfg.budget.index(trajectories.budget)])
    return replace(cfg, rho=rho, trajectories=trajectories)


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> ExperimentConfig:
    """Read and validate a YAML experiment config."""
    path = Path(path)
    if kind := not_a_file(path):
        raise CabenchError(f"{path}: {kind}, not a config file; give the path of a YAML config")
    if not path.is_file():
        raise CabenchError(f"{path}: config file not found")
    try:
        raw = load_yaml(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CabenchError(f"{path}: malformed YAML{where}: {problem}; fix the syntax there") from None
    except UnicodeDecodeError:
        raise CabenchError(f"{path}: not a text file") from None
    if raw is None:
        raise CabenchError(f"{path}: empty config; it needs dataset, setting, rho and methods")
    return parse_config(raw, str(path), path.resolve().parent, overrides)
