"""Result folders as experiments: discovery, validation, summaries.

Plots, reports and ``recommend`` read results through :class:`ResultSet`
only; they never run experiments and never read a dataset folder. Every
results folder is self-contained (``config.yaml``, ``runs.csv``,
``selections.csv.gz``, ``arms.csv``, ``dataset.csv``, ``summary.csv`` and
optionally ``trajectories.csv``; an older cabench wrote the selections as a
plain ``selections.csv``, still read), and every row carries its experiment's
``experiment`` name and ``config_hash``. Different experiments are never
pooled: each is an :class:`Experiment` of its own. The same experiment found
twice (same hash, same rows) is read once; the same hash with different rows
is refused. ``selections.csv.gz`` (one row per run and arm, the largest file) is
read and checked when first asked for (:attr:`Experiment.selections`), or up
front by a :class:`ResultSet` that is told it will need it.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
import math
import os
import zlib
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from cabench import registry
from cabench.errors import CabenchError
from cabench.pareto import pareto_mask
from cabench.record import measure_columns, objective_columns
from cabench.returned import RUN_KEYS, ReturnedSets, returned_sets
from cabench.storage import temporary_of
from cabench.summaries import summarize
from cabench.units import COST_UNITS, amount, from_files, to_files
from cabench.yamlio import C_SAFE_LOADER, load_yaml

ONLINE_ORDER = registry.names("online")
PSI_ORDER = registry.names("psi")
IDENTITY = ["experiment", "config_hash"]
REQUIRED: dict[str, Any] = {
    "runs.csv": {"online": ["dataset", "setting", "method", "rho", "budget", "rep", "pulls", "spend",
                            "regret_hv", "regret_std", "frac_optimal", "exploited"],
                 "psi": ["dataset", "setting", "method", "cost_mode", "rho", "budget", "rep", "error", "f1",
                         "size", "spend"]},
    "selections.csv": {"online": ["method", "rho", "rep", "config_id", "pulls"],
                       "psi": ["method", "cost_mode", "rho", "rep", "config_id", "samples", "returned"]},
    "arms.csv": ["arm", "config_id", "profile_cost", "mu_c", "hv", "nu", "delta", "optimal", "pareto", "gamma"],
    "dataset.csv": ["dataset", "K"],
    "trajectories.csv": ["method", "rho", "point", "spend", "cum_regret_mean", "cum_regret_se", "moving_avg_mean",
                         "moving_avg_se", "n_reps", "window"],
}
NUMERIC = {"rho", "budget", "rep", "spend", "regret_hv", "regret_std", "frac_optimal", "error", "f1",
           "size", "pulls", "samples", "returned", "arm", "profile_cost", "mu_c", "hv", "nu", "delta", "optimal",
           "pareto", "gamma", "point", "cum_regret_mean", "cum_regret_se", "moving_avg_mean",
           "moving_avg_se", "n_reps", "window", "K", "unpulled"}
#: Columns of names and labels: read as written (a configuration named ``1e3``, ``NaN`` or ``True`` stays that text).
TEXT = ("experiment", "config_hash", "dataset", "title", "setting", "method", "cost_mode", "config_id", "exploited",
        "model", "prompting", "sha256", "stem", "caption", "experiments")
MAY_BE_EMPTY = {"moving_avg_mean", "moving_avg_se", "cum_regret_se"}
MAY_BE_INFINITE = {"gamma"}  # the classification gap of an arm nothing competes with
POSITIVE = {"rho", "budget"}
#: Columns of counts: whole numbers, 0 or more (a negative count of pulls was read as given)
COUNTS = {"pulls", "samples", "unpulled"}
#: Columns checked where a file has them: runs.csv's ``unpulled`` (an older cabench did not write it)
OPTIONAL_CHECKED = ("unpulled",)
DEFAULT_OBJECTIVES = ["accuracy", "efficiency"]
AGAIN = "run the experiment again"
#: The files a run writes into its results folder together (``selections.csv``: the plain file of an older cabench).
RUN_FILES = ("runs.csv", "selections.csv.gz", "selections.csv", "arms.csv", "dataset.csv", "summary.csv",
             "trajectories.csv", "config.yaml")


#: Tables stored as gzip CSV (``selections.csv.gz``: one row per run and arm); pandas reads them directly.
COMPRESSED = ("selections.csv",)


def stored_name(table: str) -> str:
    """The file name a results folder stores ``table`` under (``selections.csv`` -> ``selections.csv.gz``)."""
    return f"{table}.gz" if table in COMPRESSED else table


def table_file(folder: Path, table: str) -> Path:
    """The file holding ``table`` in ``folder``: its stored name, or the plain CSV an older cabench wrote."""
    path = folder / stored_name(table)
    return path if path.is_file() or not (folder / table).is_file() else folder / table


def read_csv(path: Path, large: bool = False) -> pd.DataFrame:
    """Read a result CSV (plain or gzip) with exact float round-trip; name columns (:data:`TEXT`) stay text,
    empty as ``''``. A ``large`` table (``selections.csv``: one row per run and arm, no empty number) is parsed by
    pyarrow when it is installed, several times faster and to the same frame."""
    try:
        return _parsed(path, _header(path), large)
    except _UNREADABLE as exc:
        raise _unreadable(path, exc) from exc


def read_csv_text(text: str, where: Path) -> pd.DataFrame:
    """:func:`read_csv` of CSV text (``where`` names it in an error)."""
    try:
        return _parsed(io.StringIO(text), next(csv.reader(io.StringIO(text.partition("\n")[0])), []))
    except _UNREADABLE as exc:
        raise _unreadable(where, exc) from exc


#: What reading a damaged result file raises (EOFError: a gzip file cut short; uncaught, the command line would end
#: as 'Aborted.').
_UNREADABLE = (OSError, ValueError, UnicodeDecodeError, EOFError, zlib.error, csv.Error, pd.errors.ParserError)


def _unreadable(where: Path, exc: Exception) -> CabenchError:
    why = (str(exc).splitlines() or [type(exc).__name__])[0]
    return CabenchError(f"{where}: unreadable result file ({why}); {AGAIN}")


def _parsed(source: Any, header: list[str], large: bool = False) -> pd.DataFrame:
    """pandas' parse of a result CSV whose column names are ``header`` (:func:`read_csv`)."""
    if large and importlib.util.find_spec("pyarrow") is not None:
        return pd.read_csv(source, engine="pyarrow", keep_default_na=False,
                           dtype={c: str for c in TEXT if c in header})
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    return pd.read_csv(source, keep_default_na=False, dtype={c: str for c in TEXT},
                       na_values={c: ["", "nan", "NaN"] for c in header if c not in TEXT}, **exact)


def _header(path: Path) -> list[str]:
    """The column names on the first line of a result CSV (plain or gzip), read without a second parse by pandas
    (a result is often many small files: the header's parse was half of reading each)."""
    if path.suffix not in (".gz", ".csv"):
        return list(pd.read_csv(path, nrows=0).columns)
    opened = gzip.open(path, "rt", encoding="utf-8-sig", newline="") if path.suffix == ".gz" else \
        open(path, encoding="utf-8-sig", newline="")
    with opened as stream:
        return next(csv.reader(stream), [])


def _shown(value: Any) -> str:
    """A value as an error message shows it: quoted, escaped onto one line, shortened."""
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= 40 else text[:37] + "..."


def _fail_at(path: Path, frame: pd.DataFrame, bad: Any, col: str, what: str) -> None:
    """One line naming the first row where ``bad`` holds, its column and value, and ``what`` is wrong with it."""
    rows = np.flatnonzero(np.asarray(bad, dtype=bool))
    if len(rows):
        value = frame[col].iloc[rows[0]]
        raise CabenchError(f"{path}: line {int(rows[0]) + 2}, column '{col}': {_shown(value)} {what}; {AGAIN}")


def _check_column(path: Path, frame: pd.DataFrame, col: str) -> None:
    """A required column: no empty cell; numbers (finite, positive where they must be) where numbers belong."""
    values = frame[col]
    if values.dtype.kind in "iuf" and (col in NUMERIC or col.startswith("mu_")):
        _check_numbers(path, frame, col, values.to_numpy(dtype=float))
        return
    _fail_empty(path, col, (values.isna() | (values == "") if col in TEXT else values.isna()).to_numpy())
    if col in NUMERIC or col.startswith("mu_"):
        number = pd.to_numeric(values, errors="coerce")
        _fail_at(path, frame, number.isna() & values.notna(), col, "is not a number")
        _check_numbers(path, frame, col, number.to_numpy(dtype=float))  # its empty cells were checked above


def _fail_empty(path: Path, col: str, empty: np.ndarray) -> None:
    """One line naming the first empty cell of ``col`` (``empty``: a mask of its rows), unless it may be empty."""
    if col not in MAY_BE_EMPTY and empty.any():
        row = int(np.flatnonzero(empty)[0]) + 2
        raise CabenchError(f"{path}: line {row}, column '{col}': empty or NaN (a cut or damaged file); {AGAIN}")


def _check_numbers(path: Path, frame: pd.DataFrame, col: str, number: np.ndarray) -> None:
    """:func:`_check_column` of a column the CSV reader parsed as numbers (every cell a number or empty): the same
    checks on its array, without pandas' per-call cost (a result is often many small tables of a dozen columns)."""
    _fail_empty(path, col, np.isnan(number))
    if col not in MAY_BE_INFINITE:
        _fail_at(path, frame, np.isinf(number), col, "is not a finite number")
    if col in POSITIVE:
        _fail_at(path, frame, number <= 0, col, "is not positive")
    if col in COUNTS:
        _fail_at(path, frame, (number < 0) | (number != np.floor(number)), col, "is not a count (a whole number, 0 "
                                                                               "or more)")


def _checked(path: Path, columns: Collection[str], unit: str = "tokens", trajectory: bool = False,
             large: bool = False) -> pd.DataFrame:
    """Read ``path`` (:func:`read_csv`) and check it has ``columns`` (numeric where they must be) and the identity
    columns.

    Budgets and spends, named after the cost ``unit`` in the file (``budget_usd``), come back as ``budget`` and
    ``spend``; messages name the file's columns.
    """
    frame = read_csv(path, large)
    named = to_files(pd.DataFrame(columns=list(columns)), unit, trajectory).columns
    for col, as_read in zip(columns, named):
        if as_read not in frame.columns:
            hint = "the file is damaged" if col not in IDENTITY else "written by an older cabench"
            raise CabenchError(f"{path}: column '{as_read}' is missing ({hint}); {AGAIN}")
    frame = from_files(frame, unit, trajectory)
    for col in dict.fromkeys([*IDENTITY, *columns, *(c for c in frame.columns if c.startswith("mu_")),
                              *(c for c in OPTIONAL_CHECKED if c in frame.columns)]):
        if col not in frame.columns:
            hint = "written by an older cabench" if col in IDENTITY else "the file is damaged"
            raise CabenchError(f"{path}: column '{col}' is missing ({hint}); {AGAIN}")
        try:
            _check_column(path, frame, col)
        except CabenchError as exc:  # name the column as the file does
            shown = to_files(pd.DataFrame(columns=[col]), unit, trajectory).columns[0]
            raise CabenchError(str(exc).replace(f"column '{col}'", f"column '{shown}'")) from None
    return frame


@dataclass
class Experiment:
    """One experiment's results folder, read and validated."""

    folder: Path
    meta: dict[str, Any]
    runs: pd.DataFrame
    given_selections: pd.DataFrame | None  # None: read from ``folder`` when first asked for (:attr:`selections`)
    arms: pd.DataFrame
    dataset: dict[str, Any]
    trajectories: pd.DataFrame | None
    label: str = ""
    duplicates: list[Path] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.meta["name"])

    @property
    def config_hash(self) -> str:
        return str(self.meta["config_hash"])

    @property
    def setting(self) -> str:
        return str(self.meta["setting"])

    @property
    def paper_role(self) -> str | None:
        return self.meta.get("paper_experiment")

    @property
    def dataset_name(self) -> str:
        return str(self.dataset.get("dataset", self.info.get("name", "?")))

    @property
    def title(self) -> str:
        """The dataset's title as dataset.csv records it, without U+FEFF (a zero-width no-break space, which
        matplotlib cannot write into a PDF: a title is refused with it since, :func:`cabench.data.io.check_title`)."""
        return str(self.dataset.get("title") or self.dataset_name).replace("\ufeff", "")

    @property
    def info(self) -> dict[str, Any]:
        """What ``config.yaml`` records of the dataset (``dataset_info``)."""
        return self.meta.get("dataset_info") or {}

    @property
    def surrogate(self) -> bool:
        """Whether the logs are surrogate ones: as config.yaml records it, or dataset.csv (of the same run) where
        config.yaml says nothing (a label is never lost with a line of config.yaml)."""
        said = self.info.get("surrogate")
        return bool(said) if said is not None else bool(_surrogate_cell(self.dataset.get("surrogate")))

    @property
    def k(self) -> int:
        return len(self.arms)

    @property
    def repetitions(self) -> int:
        return int(self.meta["repetitions"])

    # What follows is derived from the tables once and kept: an Experiment's tables are never changed in place
    # (a subset is a new Experiment, dataclasses.replace).

    def kept(self, what: str, derive: Callable[[], Any]) -> Any:
        """``derive()`` computed once for this experiment and kept under ``what``: what an analysis derives from the
        tables and more than one report part reads (``REPORT.md`` and ``REPORT.html`` both)."""
        store = self.__dict__.setdefault("_kept", {})
        if what not in store:
            store[what] = derive()
        return store[what]

    @cached_property
    def selections(self) -> pd.DataFrame:
        """One row per run and arm: the given table, or ``selections.csv.gz`` read and checked against the other
        tables (:func:`load_selections`)."""
        if self.given_selections is not None:
            return self.given_selections
        return load_selections(self.folder, self.meta, self.runs, self.arms)

    @cached_property
    def exploited_alone(self) -> np.ndarray:
        """Online: per row of ``runs``, whether its repetition ended with one configuration pulled more often than
        every other. Where several are pulled most, equally often, ``exploited`` is the first of them in the logs'
        order (a budget that ends with one pull of each names the first configuration): such a repetition exploits
        none of them."""
        s = self.selections
        keys = [s["method"], s["rho"], s["rep"]]
        pulls = s["pulls"]
        at_most = (pulls == pulls.groupby(keys, sort=False).transform("max")).groupby(keys, sort=False).sum()
        tied = at_most.index[at_most.to_numpy() > 1]
        return ~pd.MultiIndex.from_arrays([self.runs["method"], self.runs["rho"], self.runs["rep"]]).isin(tied)

    @cached_property
    def rho_grid(self) -> list[float]:
        return sorted(float(r) for r in self.runs["rho"].unique())

    @cached_property
    def methods(self) -> list[str]:
        order = ONLINE_ORDER if self.setting == "online" else PSI_ORDER
        present = [str(m) for m in self.runs["method"].unique()]
        return [m for m in order if m in present] + [m for m in present if m not in order]

    @cached_property
    def cost_modes(self) -> list[str]:
        return [str(m) for m in self.runs["cost_mode"].unique()] if "cost_mode" in self.runs else []

    @cached_property
    def by_cell(self) -> dict[tuple[str, float], pd.DataFrame]:
        """The runs of each method at each budget (every cost mode), by ``(method, rho)``, indexed by repetition in
        order."""
        return {(str(m), float(r)): g.set_index("rep").sort_index(kind="stable")
                for (m, r), g in self.runs.groupby(["method", "rho"], sort=False)}

    @cached_property
    def by_cell_mode(self) -> dict[tuple[str, float, str], pd.DataFrame]:
        """The runs of :attr:`by_cell` split by cost mode, by ``(method, rho, cost_mode)`` (identification)."""
        return {(m, r, str(mode)): g for (m, r), runs in self.by_cell.items() if "cost_mode" in runs
                for mode, g in runs.groupby("cost_mode", sort=False)}

    @cached_property
    def returned(self) -> ReturnedSets:
        """Identification: the set each run returned, as a membership matrix (:mod:`cabench.returned`)."""
        return returned_sets(self.runs, self.selections, self.arms, str(table_file(self.folder, "selections.csv")))

    @property
    def objectives(self) -> list[str]:
        return list(self.meta.get("objectives") or DEFAULT_OBJECTIVES)

    @property
    def cost_unit(self) -> str:
        """What budgets and spends are in: tokens (the paper's), completion_tokens or usd."""
        return str(self.meta.get("cost_unit") or "tokens")

    @property
    def on_paper_terms(self) -> bool:
        """Whether the experiment compares on the paper's objectives (accuracy, efficiency) with costs in tokens."""
        return self.objectives == DEFAULT_OBJECTIVES and self.cost_unit == "tokens"

    @property
    def window(self) -> int | None:
        return int(self.trajectories["window"].iloc[0]) if self.trajectories is not None else None

    def describe(self) -> str:
        """A one-line identity: name, dataset, K, budgets, repetitions (for titles and captions)."""
        if self.stated_budgets:
            budgets = "B ∈ {" + ", ".join(self.budget_at(r).removeprefix("B=") for r in self.rho_grid) + "}"
        else:
            budgets = "ρ ∈ {" + ", ".join(f"{r:g}" for r in self.rho_grid) + "}"
        return f"{self.label} — {self.title}, K={self.k}, {budgets}, {self.repetitions} repetitions"

    @cached_property
    def stated_budgets(self) -> bool:
        """Whether the config stated its budgets in the cost unit (``budget: {usd: [...]}``), not as ρ."""
        return isinstance(self.meta.get("budget"), dict)

    def budget_at(self, rho: float) -> str:
        """The budget of ``rho`` as the config stated it: ``B=$2.00`` where it gave budgets in the cost unit (ρ has
        as many digits as the division gives it: 200.689), else ``ρ=32``."""
        spent = self.runs.loc[self.runs["rho"] == rho, "budget"]
        if not self.stated_budgets or spent.empty:
            return f"ρ={rho:g}"
        return f"B={amount(float(spent.iloc[0]), self.cost_unit)}"

    def summary(self) -> pd.DataFrame:
        """The summary by method, budget (and cost mode) (:func:`summarize`), a copy of the one kept."""
        return self._summary.copy()

    @cached_property
    def _summary(self) -> pd.DataFrame:
        summary = summarize(self.runs)
        if self.given_selections is None:  # read from a folder: the summary.csv the reports cite says the same
            _check_summary(self.folder / "summary.csv", summary, self.cost_unit)
        return summary


def _check_summary(path: Path, summary: pd.DataFrame, unit: str) -> None:
    """Refuse a ``summary.csv`` that is missing or says other than the summary of ``runs.csv`` (edited, or left by
    another run): the reports compute their numbers from ``runs.csv`` and cite ``summary.csv`` for them."""
    if not path.is_file():
        raise CabenchError(f"{path}: missing (deleted?); the reports cite it for the numbers of runs.csv; "
                           f"{AGAIN}")
    expected = to_files(summary, unit).reset_index(drop=True)
    written = read_csv(path)
    if "status" in written:  # the cells the run skipped are rows of their own
        written = written[written["status"] == "ok"]
    lines = written.index.to_numpy() + 2  # each row's line in the file (the header is line 1)
    written = written.reset_index(drop=True)
    said = f"one of them was edited, or they come from different runs); {AGAIN}"
    lacking = [c for c in expected.columns if c not in written.columns]
    if lacking:
        raise CabenchError(f"{path}: does not say what runs.csv says (no column '{lacking[0]}'; {said}")
    if len(written) != len(expected):
        raise CabenchError(f"{path}: does not say what runs.csv says ({len(written)} rows of runs summed, runs.csv "
                           f"makes {len(expected)}; {said}")
    for col in expected.columns:
        differ = np.flatnonzero(_differing(expected[col], written[col]))
        if len(differ):
            row = int(differ[0])
            raise CabenchError(f"{path}: does not say what runs.csv says (line {lines[row]}, column '{col}': "
                               f"{_shown(written[col].iloc[row])}, where runs.csv gives "
                               f"{_shown(expected[col].iloc[row])}; {said}")


def _differing(expected: pd.Series, written: pd.Series) -> np.ndarray:
    """Where a column of ``summary.csv`` does not hold the values computed from ``runs.csv``: numbers compared
    exactly (both missing counts as the same), anything else as text."""
    if pd.api.types.is_numeric_dtype(expected) and pd.api.types.is_numeric_dtype(written):
        a, b = expected.to_numpy(float), written.to_numpy(float)
        return ~((a == b) | (np.isnan(a) & np.isnan(b)))
    return expected.astype(str).to_numpy() != written.astype(str).to_numpy()


def read_record(path: Path) -> Any:
    """A results ``config.yaml`` exactly as cabench wrote it (raises ``OSError``, ``yaml.YAMLError``,
    ``UnicodeDecodeError``).

    cabench writes it with :func:`~cabench.yamlio.dump_yaml`, which YAML 1.1 and 1.2 read alike. Older
    cabench wrote YAML 1.1, leaving strings such as the hash ``253592126e722573`` or the name ``1e5``
    unquoted; where the two readings differ, the file is such an older one and its YAML 1.1 reading is
    what was written.
    """
    text = path.read_text()
    current = load_yaml(text)
    written = yaml.load(text, Loader=C_SAFE_LOADER)  # noqa: S506 - yaml.safe_load, in C where built
    return current if written == current else written


def _text(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _list_of(test: Callable[[Any], bool], empty: bool = False) -> Callable[[Any], bool]:
    """A test of a list (non-empty unless ``empty``) whose every item passes ``test``."""
    return lambda value: isinstance(value, list) and (empty or len(value) > 0) and all(test(v) for v in value)


#: What each key of a results ``config.yaml`` that plots, reports and ``recommend`` read must hold.
META_KEYS = {
    "name": ("a name", _text),
    "config_hash": ("a hash", _text),
    "setting": ("online or psi", lambda v: v in REQUIRED["runs.csv"]),
    "repetitions": ("a whole number of at least 1", lambda v: _number(v) and float(v).is_integer() and v >= 1),
    "rho": ("a list of positive numbers", _list_of(lambda v: _number(v) and v > 0)),
    "methods": ("a list of mappings with a 'name'", _list_of(lambda m: isinstance(m, dict) and _text(m.get("name")))),
    "cost_modes": ("a list of cost modes", _list_of(_text)),
    "objectives": ("a list of objective names", _list_of(_text)),
    "cost_unit": ("a cost unit", lambda v: v in COST_UNITS),
    "infeasible": ("a list of mappings with 'method', 'rho' and 'reason'",
                   _list_of(lambda i: isinstance(i, dict) and _text(i.get("method")) and _number(i.get("rho"))
                            and isinstance(i.get("reason"), str), empty=True)),
    "dataset_info": ("a mapping", lambda v: isinstance(v, dict)),
    "paper_experiment": ("the name of a paper experiment", _text),
}
REQUIRED_KEYS = ("name", "config_hash", "setting", "repetitions")


def _load_meta(path: Path) -> dict[str, Any]:
    try:
        meta = read_record(path)
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise CabenchError(f"{path}: unreadable config ({str(exc).splitlines()[0]}); {AGAIN}") from None
    if not isinstance(meta, dict):
        raise CabenchError(f"{path}: expected a mapping; {AGAIN}")
    for key in REQUIRED_KEYS:
        if key not in meta:
            hint = "written by an older cabench" if key == "config_hash" else "the file is damaged"
            raise CabenchError(f"{path}: key '{key}' is missing ({hint}); {AGAIN}")
    for key, (what, test) in META_KEYS.items():
        if (key in REQUIRED_KEYS or meta.get(key) is not None) and not test(meta[key]):
            raise CabenchError(f"{path}: key '{key}': expected {what}, got {_shown(meta[key])} (the file is "
                               f"damaged); {AGAIN}")
    registry.remember_shown(meta.get("methods_shown"))  # methods of your own, as the run showed them
    return meta


def _check_values(folder: Path, meta: dict[str, Any], files: dict[str, pd.DataFrame]) -> None:
    """Values that must agree across files: one optimal arm, every configuration named one of arms.csv,
    every method and cost mode one config.yaml lists, flags 0 or 1 (``selections.csv``: :func:`load_selections`)."""
    arms, runs = files["arms.csv"], files["runs.csv"]
    where = {name: table_file(folder, name) for name in files}
    if arms.empty:
        raise CabenchError(f"{where['arms.csv']}: no arms (a cut or damaged file); {AGAIN}")
    objectives = [f"mu_{o}" for o in meta.get("objectives") or DEFAULT_OBJECTIVES]
    if objective_columns(arms) != objectives:
        raise CabenchError(f"{where['arms.csv']}: objective columns {objective_columns(arms)}, but config.yaml "
                           f"records {objectives}; {AGAIN}")
    _fail_at(where["arms.csv"], arms, arms["config_id"].duplicated(), "config_id", "is listed twice")
    for col in (c for m in measure_columns(arms) for c in (m, f"{m}_ci", f"{m}_low", f"{m}_high") if c in arms):
        # the per-call means in real units and their intervals: optional (empty where a measure is not logged)
        number = pd.to_numeric(arms[col], errors="coerce")
        _fail_at(where["arms.csv"], arms, number.isna() & arms[col].notna(), col, "is not a number")
    for col in ("optimal", "pareto"):
        _fail_at(where["arms.csv"], arms, ~arms[col].isin([0, 1]), col, "is not 0 or 1")
    if int(arms["optimal"].sum()) != 1:
        raise CabenchError(f"{where['arms.csv']}: column 'optimal': {int(arms['optimal'].sum())} arms marked "
                           f"optimal, expected exactly one (a damaged file); {AGAIN}")
    nu = arms["nu"].to_numpy(dtype=float)  # (an edited nu or optimal made the report's max-nu arm another's)
    _fail_at(where["arms.csv"], arms, ~np.isclose(nu, arms["hv"].to_numpy(dtype=float)
                                                  / arms["mu_c"].to_numpy(dtype=float), rtol=1e-9, atol=0), "nu",
             "is not hv / mu_c (paper §3.1)")
    _fail_at(where["arms.csv"], arms, arms["optimal"].to_numpy() != (np.arange(len(nu)) == np.argmax(nu)),
             "optimal", "does not mark the first configuration of the largest nu")
    _fail_at(where["arms.csv"], arms, ~np.isclose(arms["delta"].to_numpy(dtype=float), nu.max() - nu, rtol=1e-9,
                                                  atol=1e-12 * max(1.0, abs(float(nu.max())))), "delta",
             "is not the largest nu less this configuration's")
    front = pareto_mask(arms[objectives].to_numpy(dtype=float))  # the true Pareto set every answer is scored on
    _fail_at(where["arms.csv"], arms, arms["pareto"].to_numpy() != front, "pareto",
             f"does not follow from {', '.join(objectives)} (Pareto: no other configuration better on every "
             "objective, paper §3.2)")
    names = set(arms["config_id"])
    unknown = "is not a configuration of arms.csv"
    _fail_at(where["runs.csv"], runs, runs["setting"] != meta["setting"], "setting",
             f"is not the setting config.yaml records ({meta['setting']})")
    if meta.get("methods"):
        listed = [m["name"] for m in meta["methods"]]
        _fail_at(where["runs.csv"], runs, ~runs["method"].isin(listed), "method", "is not a method config.yaml lists")
    if meta["setting"] == "online":
        _fail_at(where["runs.csv"], runs, ~runs["exploited"].isin(names), "exploited", unknown)
        return
    if meta.get("cost_modes"):
        _fail_at(where["runs.csv"], runs, ~runs["cost_mode"].isin(meta["cost_modes"]), "cost_mode",
                 "is not a cost mode config.yaml lists")
    _fail_at(where["runs.csv"], runs, ~runs["error"].isin([0, 1]), "error", "is not 0 or 1")


def _checked_hash(path: Path, frame: pd.DataFrame, meta: dict[str, Any]) -> None:
    """Every row of ``frame`` (read from ``path``) carries the experiment's hash of config.yaml; where it does not
    and the folder holds a table's temporary file, a run was killed while putting its tables in place (some new,
    some old), which the same command mends."""
    foreign = (frame["config_hash"].astype(str) != str(meta["config_hash"])).to_numpy()
    if foreign.any() and any(temporary_of(p, RUN_FILES) for p in path.parent.iterdir()):
        raise CabenchError(f"{path}: the tables of a run and another's config.yaml ({meta['config_hash']}), with "
                           "temporary files beside them: a run was stopped while putting its tables in place; run "
                           "the same command again to finish it")
    _fail_at(path, frame, foreign, "config_hash", f"is another experiment's, in a folder of {meta['config_hash']} "
                                                  "(config.yaml)")
    _fail_at(path, frame, (frame["experiment"].astype(str) != str(meta["name"])).to_numpy(), "experiment",
             f"is not the experiment config.yaml names ({_shown(meta['name'])}; one of the two was edited)")


def load_selections(folder: Path, meta: dict[str, Any], runs: pd.DataFrame, arms: pd.DataFrame) -> pd.DataFrame:
    """Read and check ``selections.csv.gz`` of the results folder ``folder`` (whose config.yaml records ``meta``):
    its columns, its experiment's hash, a row per run of ``runs`` and arm of ``arms``, every configuration one of
    ``arms``, ``returned`` 0 or 1."""
    path = table_file(folder, "selections.csv")
    if not path.is_file():
        raise CabenchError(f"{path}: missing (written by an older cabench, or deleted); {AGAIN}")
    setting = meta["setting"]
    selections = _checked(path, REQUIRED["selections.csv"][setting], meta.get("cost_unit") or "tokens", large=True)
    _checked_hash(path, selections, meta)
    if len(selections) != len(runs) * len(arms):
        raise CabenchError(f"{path}: {len(selections)} rows, expected {len(runs) * len(arms)} (runs x arms); "
                           f"{AGAIN}")
    _fail_at(path, selections, ~selections["config_id"].isin(set(arms["config_id"])), "config_id",
             "is not a configuration of arms.csv")
    if setting == "psi":
        _fail_at(path, selections, ~selections["returned"].isin([0, 1]), "returned", "is not 0 or 1")
    else:
        _check_exploited(folder, selections, runs, arms)
    _check_totals(folder, selections, runs, setting)
    if "unpulled" in runs.columns:  # what the reports say of the runs' initial rounds, as the per-arm counts do
        unpulled = runs["unpulled"].to_numpy(dtype=float)
        _fail_at(table_file(folder, "runs.csv"), runs, unpulled > len(arms), "unpulled",
                 f"is more than the {len(arms)} configurations (an edited file)")
        zero = int(np.count_nonzero(selections["pulls" if setting == "online" else "samples"].to_numpy() == 0))
        if int(unpulled.sum()) != zero:
            raise CabenchError(f"{table_file(folder, 'runs.csv')}: column 'unpulled' counts {int(unpulled.sum())} "
                               f"configurations never pulled in all, and {path.name} {zero} (one of them was "
                               f"edited); {AGAIN}")
    return selections


def run_keys(setting: str) -> list[str]:
    """The columns of ``runs.csv`` naming one run of ``setting`` (:data:`~cabench.returned.RUN_KEYS`; an online run
    has no cost mode)."""
    return [c for c in RUN_KEYS if setting == "psi" or c != "cost_mode"]


def _check_totals(folder: Path, selections: pd.DataFrame, runs: pd.DataFrame, setting: str) -> None:
    """Every run's total in runs.csv is what its rows of ``selections.csv`` add up to: online its ``pulls``,
    identification the ``size`` of the set it returned (the answers count the per-arm rows, the figures the totals)."""
    keys = run_keys(setting)
    total, part = ("pulls", "pulls") if setting == "online" else ("size", "returned")
    sums = selections.groupby(keys, sort=False)[part].sum().rename("_sum").reset_index()
    added = runs[keys].merge(sums, on=keys, how="left")["_sum"].to_numpy(dtype=float)
    _fail_at(table_file(folder, "runs.csv"), runs, runs[total].to_numpy(dtype=float) != added, total,
             f"is not what {table_file(folder, 'selections.csv').name}'s '{part}' of the run add up to (one of "
             "them was edited)")


def _check_exploited(folder: Path, selections: pd.DataFrame, runs: pd.DataFrame, arms: pd.DataFrame) -> None:
    """Online, every run's ``exploited`` in runs.csv is the configuration ``selections.csv`` says it pulled most (the
    first in arms.csv's order where several were pulled most, as the run writes it): every answer counts it."""
    keys = run_keys("online")
    pulls = selections.assign(arm=pd.Index(arms["config_id"]).get_indexer(selections["config_id"]))
    pulls = pulls.sort_values([*keys, "arm"], kind="stable")
    most = pulls.loc[pulls.groupby(keys, sort=False)["pulls"].idxmax(), [*keys, "config_id"]]
    pulled = runs[keys].merge(most, on=keys, how="left")["config_id"].to_numpy()
    _fail_at(table_file(folder, "runs.csv"), runs, runs["exploited"].to_numpy() != pulled, "exploited",
             "is not the configuration selections.csv.gz says the run pulled most (an edited file)")


#: What runs.csv records of the config on every row, beside config.yaml: the seed, and each online method's
#: parameters (by method)
_RECORDED_PARAMETERS = ("mode", "s_r", "s_c", "eta", "alpha")


def _check_recorded(meta_path: Path, meta: dict[str, Any], runs: pd.DataFrame) -> None:
    """Refuse a config.yaml that says other than runs.csv's rows of the values both record (the seed, an online
    method's parameters): one of them was edited, and the reports, which state config.yaml's, would misstate how
    the results were made."""
    said = f"(one of the two was edited); {AGAIN}"
    if "seed" in runs.columns and "seed" in meta:
        seeds = sorted({str(s) for s in runs["seed"]})
        if seeds != [str(meta["seed"])]:
            raise CabenchError(f"{meta_path}: seed {meta['seed']}, but runs.csv's rows have seed "
                               f"{', '.join(seeds)} {said}")
    for entry in meta.get("methods") or []:
        if not isinstance(entry, dict) or "name" not in entry:
            continue
        rows = runs[runs["method"].astype(str) == str(entry["name"])]
        for key in _RECORDED_PARAMETERS:
            if key not in entry or key not in rows.columns or rows.empty:
                continue
            values = set(rows[key].astype(str)) if key == "mode" else set(rows[key].astype(float))
            try:
                wanted = str(entry[key]) if key == "mode" else float(entry[key])
            except (TypeError, ValueError):  # a hand-edited value that is no number
                wanted = None
            if values != {wanted}:
                shown = ", ".join(sorted(map(str, values)))
                raise CabenchError(f"{meta_path}: {entry['name']}'s {key} is {entry[key]}, but runs.csv's rows have "
                                   f"{shown} {said}")


def _surrogate_cell(value: Any) -> bool | None:
    """dataset.csv's ``surrogate`` cell as a truth value (``True``, ``1``, ``false``…); None where it says neither."""
    return {"true": True, "1": True, "1.0": True, "false": False, "0": False, "0.0": False}.get(
        str(value).strip().lower())


def _check_surrogate(meta_path: Path, meta: dict[str, Any], dataset: pd.DataFrame) -> None:
    """Refuse a config.yaml whose dataset is said to be real logs where dataset.csv, written by the same run, says
    surrogate ones, or the other way: the reports label surrogate results, and one of the two was edited."""
    said, row = (meta.get("dataset_info") or {}).get("surrogate"), dataset.iloc[0].get("surrogate")
    if said is None or _surrogate_cell(row) is None:  # (empty, or a damaged value dataset.csv's own check names)
        return
    if bool(said) != _surrogate_cell(row):
        raise CabenchError(f"{meta_path}: dataset_info.surrogate is {str(bool(said)).lower()}, but dataset.csv says "
                           f"surrogate {str(row).strip()} (one of the two was edited); {AGAIN}")


def load_experiment(folder: Path, selections: bool = True) -> Experiment:
    """Read one results folder; every file it needs must be there and consistent. ``selections.csv.gz`` is read
    now, or with ``selections=False`` when first asked for (:attr:`Experiment.selections`)."""
    meta_path = folder / "config.yaml"
    if not meta_path.is_file():
        raise CabenchError(f"{folder}: runs.csv without config.yaml; not a cabench results folder ({AGAIN})")
    meta = _load_meta(meta_path)
    setting = meta["setting"]
    unit = meta.get("cost_unit") or "tokens"
    files = {}
    where = {name: table_file(folder, name) for name in ("runs.csv", "selections.csv", "arms.csv", "dataset.csv")}
    for path in where.values():
        if not path.is_file():
            raise CabenchError(f"{path}: missing (written by an older cabench, or deleted); {AGAIN}")
    del where["selections.csv"]  # read last (load_selections), or when first asked for
    for name, path in where.items():
        spec = REQUIRED.get(name, [])
        files[name] = _checked(path, spec[setting] if isinstance(spec, dict) else spec, unit)
        _checked_hash(path, files[name], meta)
    runs = files["runs.csv"]
    holes = runs.isna().to_numpy()
    if holes.any():
        row, col = (int(v) for v in np.argwhere(holes)[0])
        raise CabenchError(f"{folder / 'runs.csv'}: line {row + 2}, column '{runs.columns[col]}': empty or NaN (a "
                           f"cut or damaged file); {AGAIN}")
    keys = run_keys(setting)
    repeated = runs.duplicated(keys).to_numpy()
    if repeated.any():
        second = int(np.flatnonzero(repeated)[0])
        first = int(np.flatnonzero((runs[keys] == runs[keys].iloc[second]).all(axis=1).to_numpy())[0])
        row = runs.iloc[first]
        raise CabenchError(f"{folder / 'runs.csv'}: lines {first + 2} and {second + 2}: repetition {row['rep']} of "
                           f"{row['method']} at rho {row['rho']:g} appears twice (a damaged or edited file); "
                           f"{AGAIN}")
    modes = len(meta.get("cost_modes") or [None]) if setting == "psi" else 1
    cells = len(meta.get("methods") or []) * len(meta.get("rho") or []) - len(meta.get("infeasible") or [])
    expected = int(meta["repetitions"]) * cells * modes
    if expected and len(runs) != expected:
        raise CabenchError(f"{folder / 'runs.csv'}: {len(runs)} rows, but config.yaml plans {expected}; {AGAIN}")
    _check_recorded(meta_path, meta, runs)
    if len(files["dataset.csv"]) != 1:
        raise CabenchError(f"{folder / 'dataset.csv'}: {len(files['dataset.csv'])} rows, expected one (a damaged "
                           f"file); {AGAIN}")
    _check_values(folder, meta, files)
    _check_surrogate(meta_path, meta, files["dataset.csv"])
    traj = None
    planned = meta.get("trajectories") if setting == "online" else None
    if (isinstance(planned, dict) and not (folder / "trajectories.csv").is_file()
            and np.isclose(runs["rho"].to_numpy(dtype=float), float(planned.get("rho", np.nan))).any()):
        raise CabenchError(f"{folder / 'trajectories.csv'}: missing, though config.yaml records trajectories at rho "
                           f"{float(planned['rho']):g} (deleted?); {AGAIN}")
    if (folder / "trajectories.csv").is_file():
        traj = _checked(folder / "trajectories.csv", REQUIRED["trajectories.csv"], unit, trajectory=True)
        if traj.empty:
            raise CabenchError(f"{folder / 'trajectories.csv'}: no rows (a cut or damaged file); {AGAIN}")
    dataset = files["dataset.csv"].iloc[0].to_dict()
    exp = Experiment(folder, meta, runs, None, files["arms.csv"], dataset, traj)
    if selections:
        exp.selections  # noqa: B018 -- read and checked now
    return exp


def read_selections(experiments: Iterable[Experiment]) -> None:
    """Read and check the selections of each of ``experiments`` now (:attr:`Experiment.selections`), in order: a
    damaged table is refused before anything is computed from the others."""
    for e in experiments:
        e.selections  # noqa: B018


def below(root: Path, name: str) -> list[Path]:
    """Every path named ``name`` below ``root`` (``root`` itself included), sorted, each real folder walked once: by
    its own path, and through a folder that is a symbolic link to a place outside ``root`` (``results/latest ->
    ../runs/2026-12-06``), whose own path the walk never meets. A link to a folder inside ``root`` is passed over:
    what it reaches is found by its own path, and so is a link to a folder that holds ``root`` (no loop)."""
    top = os.path.realpath(root)
    found: list[Path] = []
    walked: set[str] = set()
    pending = [Path(root)]
    while pending:
        start = pending.pop()
        if os.path.realpath(start) in walked:
            continue
        walked.add(os.path.realpath(start))
        for folder, folders, files in os.walk(start):
            folders.sort()
            found += [Path(folder) / name for entry in (*folders, *files) if entry == name]
            for entry in folders:  # (os.walk lists a link to a folder among the folders, and does not enter it)
                path = os.path.join(folder, entry)
                real = os.path.realpath(path)
                if os.path.islink(path) and os.path.commonpath([real, top]) not in (top, real):  # (nor one above)
                    pending.append(Path(path))
    return sorted(found)


def unfinished_below(root: Path) -> list[Path]:
    """Experiment folders below ``root`` that hold cells but no ``runs.csv``: a first run stopped before it wrote its
    tables (running its config again finishes it). Reports and ``recommend`` name them; nothing else reads them."""
    return sorted(p.parent for p in below(root, "cells") if p.is_dir() and not (p.parent / "runs.csv").is_file())


def unfinished_note(root: Path, folders: list[Path]) -> str:
    """One sentence naming ``folders`` (:func:`unfinished_below`), relative to ``root``; empty when there are none."""
    if not folders:
        return ""
    names = ", ".join(str(f.relative_to(root)) if f != root else "this folder" for f in folders)
    return (f"Not finished, so left out: {names} (cells but no runs.csv: a run stopped before it wrote its tables; "
            "run its config again to finish it).")


def no_results(root: Path) -> CabenchError:
    """The error of a folder below which no experiment has finished: where a run stopped before it wrote its tables,
    that it is not finished and how to finish it (:func:`unfinished_note`); else to run a config first."""
    note = unfinished_note(root, unfinished_below(root))
    if note:
        return CabenchError(f"{root}: no finished results below this folder. {note}")
    return CabenchError(f"{root}: no results below this folder; run `cabench run CONFIG` first")


def _why_rows_differ(first: dict[str, Any], second: dict[str, Any]) -> str:
    """What the two ``config.yaml`` of one experiment record differently that changes its rows without changing its
    hash: the source of a method of one's own, or cabench's code; nothing when they record the same."""
    mine, theirs = first.get("methods_source"), second.get("methods_source")
    changed = sorted(name for name in set(mine or {}) | set(theirs or {}) if (mine or {}).get(name) !=
                     (theirs or {}).get(name))
    if changed and mine and theirs:
        return f" (run with other code of {', '.join(changed)}: its source recorded in config.yaml differs)"
    if changed:  # one folder was written before cabench recorded the source
        return f" (perhaps run with other code of {', '.join(changed)}: only one config.yaml records its source)"
    if first.get("code_hash") != second.get("code_hash"):
        return f" (run by other cabench code: code_hash {first.get('code_hash')} and {second.get('code_hash')})"
    return ""


def _shown_alike(experiments: list[Experiment]) -> None:
    """A ``module:object`` method whose experiments recorded other display names (renamed between runs, or two
    people's methods of one name) is shown by its name in all of them: one display for the whole folder, the last
    read, named the others' method wrongly."""
    displays: dict[str, set[str]] = {}
    prefers: dict[str, bool] = {}
    for e in experiments:
        recorded = e.meta.get("methods_shown")
        for name, facts in (recorded.items() if isinstance(recorded, dict) else []):
            if isinstance(name, str) and isinstance(facts, dict):
                displays.setdefault(name, set()).add(str(facts.get("display")))
                prefers[name] = prefers.get(name, True) and facts.get("prefers") is not False
    registry.remember_shown({name: {"display": name, "prefers": prefers[name]}
                             for name, shown in displays.items() if len(shown) > 1})


class ResultSet:
    """Every experiment below a folder, one :class:`Experiment` each, in name order; with ``selections=False``
    each ``selections.csv.gz`` is read when first asked for (figures never read it)."""

    def __init__(self, root: Path, selections: bool = True) -> None:
        if not root.is_dir():
            raise CabenchError(f"{root}: " + ("a file, not a results folder; give the folder that holds it" if
                                              root.exists() else "results folder not found"))
        self.root = root
        found: dict[str, Experiment] = {}
        for path in below(root, "runs.csv"):
            if path.parent.name == "cells":
                continue
            exp = load_experiment(path.parent, selections)
            if exp.runs.empty:
                continue
            seen = found.get(exp.config_hash)
            if seen is None:
                found[exp.config_hash] = exp
            elif seen.runs.equals(exp.runs) and seen.arms.equals(exp.arms) and seen.selections.equals(exp.selections):
                seen.duplicates.append(path.parent)  # the same experiment copied: read once
            else:
                raise CabenchError(
                    f"{path}: experiment '{exp.name}' ({exp.config_hash}) is also in {seen.folder} with different "
                    f"rows{_why_rows_differ(seen.meta, exp.meta)}; remove one copy, or run one again under another "
                    "name (--name) to keep both (results of one experiment are never averaged)")
        self.experiments = sorted(found.values(), key=lambda e: (e.name, e.config_hash))
        _shown_alike(self.experiments)
        names: dict[str, int] = {}
        for e in self.experiments:
            names[e.name] = names.get(e.name, 0) + 1
        for e in self.experiments:
            e.label = e.name if names[e.name] == 1 else f"{e.name} [{e.config_hash[:8]}]"

    @cached_property
    def unfinished(self) -> list[Path]:
        """The experiments below the folder a first run left without tables (:func:`unfinished_below`)."""
        return unfinished_below(self.root)

    @property
    def empty(self) -> bool:
        return not self.experiments

    @property
    def surrogate(self) -> bool:
        return any(e.surrogate for e in self.experiments)

    def by_setting(self, setting: str) -> list[Experiment]:
        return [e for e in self.experiments if e.setting == setting]

    def paper(self, role: str) -> list[Experiment]:
        """Experiments recorded as the paper's experiment ``role`` (SPEC §7), by dataset then name."""
        return sorted((e for e in self.experiments if e.paper_role == role), key=lambda e: (e.dataset_name, e.name))

    def datasets(self) -> dict[str, dict[str, Any]]:
        """``dataset.csv`` rows, one per dataset content and terms (objectives, cost unit, prices: they set |P*| and
        the costs), by dataset name: the first experiment on the paper's terms, then in name order; a second row of a
        dataset is named with its experiment."""
        out: dict[str, dict[str, Any]] = {}
        seen: set[str] = set()
        for e in sorted(self.experiments, key=lambda e: not e.on_paper_terms):  # stable: name order within
            key = (f"{e.dataset_name}:{e.dataset.get('sha256', '')}:{e.meta.get('split')}:{e.objectives}:"
                   f"{e.cost_unit}:{e.meta.get('prices')}:"  # other prices: other dollars, and in usd other c_i
                   f"{[e.dataset.get(k) for k in ('cost_min', 'cost_max', 'usd_min', 'usd_max')]}")  # (a dataset's own)
            if key in seen:
                continue
            seen.add(key)
            label = e.dataset_name if e.dataset_name not in out else f"{e.dataset_name} ({e.label})"
            out[label] = {**e.dataset, "_experiment": e}
        return out


def finite(value: Any) -> bool:
    """True for a real, finite number (not None, NaN or text)."""
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False
