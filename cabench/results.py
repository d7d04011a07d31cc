"""Result folders as experiments: discovery, validation, summaries.

Plots, reports and ``recommend`` read results through :class:`ResultSet`
only; they never run experiments and never read a dataset folder. Every
results folder is self-contained (``config.yaml``, ``runs.csv``,
``selections.csv``, ``arms.csv``, ``dataset.csv``, ``summary.csv`` and
optionally ``trajectories.csv``), and every row carries its experiment's
``experiment`` name and ``config_hash``. Different experiments are never
pooled: each is an :class:`Experiment` of its own. The same experiment found
twice (same hash, same rows) is read once; the same hash with different rows
is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from cabench import registry
from cabench.errors import CabenchError
from cabench.stats import mean_se, wilson
from cabench.yamlio import load_yaml

ONLINE_ORDER = registry.names("online")
PSI_ORDER = registry.names("psi")
IDENTITY = ["experiment", "config_hash"]
REQUIRED = {
    "runs.csv": {"online": ["dataset", "setting", "method", "rho", "budget_tokens", "rep", "pulls", "spend_tokens",
                            "regret_hv", "regret_std", "frac_optimal", "exploited"],
                 "psi": ["dataset", "setting", "method", "cost_mode", "rho", "budget_tokens", "rep", "error", "f1",
                         "size", "spend_tokens"]},
    "selections.csv": {"online": ["method", "rho", "rep", "config_id", "pulls"],
                       "psi": ["method", "cost_mode", "rho", "rep", "config_id", "samples", "returned"]},
    "arms.csv": ["arm", "config_id", "cost_tokens", "mu_cost", "hv", "nu", "delta", "optimal", "pareto", "gamma"],
    "trajectories.csv": ["method", "rho", "point", "tokens", "cum_regret_mean", "cum_regret_se", "moving_avg_mean",
                         "moving_avg_se", "n_reps", "window"],
}
NUMERIC = {"rho", "budget_tokens", "rep", "spend_tokens", "regret_hv", "regret_std", "error", "f1", "pulls", "samples",
           "returned", "cost_tokens", "nu", "pareto", "tokens", "point", "window"}


def read_csv(path: Path) -> pd.DataFrame:
    """Read a result CSV with exact float round-trip."""
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    try:
        return pd.read_csv(path, keep_default_na=False, na_values=["", "nan", "NaN"],
                           dtype={"config_id": str, "exploited": str, "experiment": str, "config_hash": str,
                                  "model": str, "prompting": str}, **exact)
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise CabenchError(f"{path}: unreadable result file ({str(exc).splitlines()[0]})") from exc


def _checked(path: Path, columns: list[str]) -> pd.DataFrame:
    """Read ``path`` and check it has ``columns`` (numeric where they must be) and the identity columns."""
    frame = read_csv(path)
    for col in [*IDENTITY, *columns]:
        if col not in frame.columns:
            hint = ("written by an older cabench; run the experiment again" if col in IDENTITY
                    else "the file is damaged; run the experiment again")
            raise CabenchError(f"{path}: column '{col}' is missing ({hint})")
        empty = frame[col].isna().to_numpy()
        if empty.any() and col not in ("moving_avg_mean", "moving_avg_se", "cum_regret_se", "f1_se"):
            row = int(np.flatnonzero(empty)[0]) + 2
            raise CabenchError(f"{path}: row {row}, column '{col}': empty (a cut or damaged file); "
                               "run the experiment again")
        if col in NUMERIC and len(frame) and not pd.api.types.is_numeric_dtype(frame[col]):
            bad = pd.to_numeric(frame[col], errors="coerce").isna() & frame[col].notna()
            row = int(np.flatnonzero(bad.to_numpy())[0]) + 2 if bad.any() else 2
            raise CabenchError(f"{path}: row {row}, column '{col}': not a number; run the experiment again")
    return frame


@dataclass
class Experiment:
    """One experiment's results folder, read and validated."""

    folder: Path
    meta: dict[str, Any]
    runs: pd.DataFrame
    selections: pd.DataFrame
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
        return str(self.dataset.get("dataset", self.meta.get("dataset_info", {}).get("name", "?")))

    @property
    def title(self) -> str:
        return str(self.dataset.get("title") or self.dataset_name)

    @property
    def surrogate(self) -> bool:
        return bool(self.meta.get("dataset_info", {}).get("surrogate", False))

    @property
    def k(self) -> int:
        return len(self.arms)

    @property
    def repetitions(self) -> int:
        return int(self.meta["repetitions"])

    @property
    def rho_grid(self) -> list[float]:
        return sorted(float(r) for r in self.runs["rho"].unique())

    @property
    def methods(self) -> list[str]:
        order = ONLINE_ORDER if self.setting == "online" else PSI_ORDER
        present = list(dict.fromkeys(self.runs["method"]))
        return [m for m in order if m in present] + [m for m in present if m not in order]

    @property
    def cost_modes(self) -> list[str]:
        return list(dict.fromkeys(self.runs["cost_mode"])) if "cost_mode" in self.runs else []

    @property
    def objectives(self) -> list[str]:
        return list(self.meta.get("objectives") or ["accuracy", "efficiency"])

    @property
    def window(self) -> int | None:
        return int(self.trajectories["window"].iloc[0]) if self.trajectories is not None else None

    def describe(self) -> str:
        """A one-line identity: name, dataset, K, budgets, repetitions (for titles and captions)."""
        rho = ", ".join(f"{r:g}" for r in self.rho_grid)
        return f"{self.label} — {self.title}, K={self.k}, ρ ∈ {{{rho}}}, {self.repetitions} repetitions"

    def summary(self) -> pd.DataFrame:
        return summarize(self.runs)


def _load_meta(path: Path) -> dict[str, Any]:
    try:
        meta = load_yaml(path.read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise CabenchError(f"{path}: unreadable config ({str(exc).splitlines()[0]}); run the experiment again") \
            from None
    if not isinstance(meta, dict):
        raise CabenchError(f"{path}: expected a mapping; run the experiment again")
    for key in ("name", "config_hash", "setting", "repetitions"):
        if key not in meta:
            hint = "written by an older cabench" if key == "config_hash" else "the file is damaged"
            raise CabenchError(f"{path}: key '{key}' is missing ({hint}); run the experiment again")
    if meta["setting"] not in REQUIRED["runs.csv"]:
        raise CabenchError(f"{path}: setting: '{meta['setting']}' is not online or psi")
    return meta


def load_experiment(folder: Path) -> Experiment:
    """Read one results folder; every file it needs must be there and consistent."""
    meta_path = folder / "config.yaml"
    if not meta_path.is_file():
        raise CabenchError(f"{folder}: runs.csv without config.yaml; not a cabench results folder "
                           "(run the experiment again)")
    meta = _load_meta(meta_path)
    setting = meta["setting"]
    files = {}
    for name in ("runs.csv", "selections.csv", "arms.csv", "dataset.csv"):
        if not (folder / name).is_file():
            raise CabenchError(f"{folder / name}: missing (written by an older cabench, or deleted); "
                               "run the experiment again")
        spec = REQUIRED.get(name, [])
        files[name] = _checked(folder / name, spec[setting] if isinstance(spec, dict) else spec)
    for name, frame in files.items():
        hashes = set(frame["config_hash"].astype(str))
        if hashes - {meta["config_hash"]}:
            raise CabenchError(f"{folder / name}: rows of experiment {sorted(hashes)[0]} in a folder of "
                               f"{meta['config_hash']} (config.yaml); run the experiment again")
    runs = files["runs.csv"]
    holes = runs.isna().to_numpy()
    if holes.any():
        row, col = (int(v) for v in np.argwhere(holes)[0])
        raise CabenchError(f"{folder / 'runs.csv'}: row {row + 2}, column '{runs.columns[col]}': empty (a cut or "
                           "damaged file); run the experiment again")
    modes = len(meta.get("cost_modes") or [None]) if setting == "psi" else 1
    cells = len(meta.get("methods") or []) * len(meta.get("rho") or []) - len(meta.get("infeasible") or [])
    expected = int(meta["repetitions"]) * cells * modes
    if expected and len(runs) != expected:
        raise CabenchError(f"{folder / 'runs.csv'}: {len(runs)} rows, but config.yaml plans {expected}; "
                           "run the experiment again")
    if len(files["selections.csv"]) != len(runs) * len(files["arms.csv"]):
        raise CabenchError(f"{folder / 'selections.csv'}: {len(files['selections.csv'])} rows, expected "
                           f"{len(runs) * len(files['arms.csv'])} (runs x arms); run the experiment again")
    traj = None
    if (folder / "trajectories.csv").is_file():
        traj = _checked(folder / "trajectories.csv", REQUIRED["trajectories.csv"])
    dataset = files["dataset.csv"].iloc[0].to_dict() if len(files["dataset.csv"]) else {}
    return Experiment(folder, meta, files["runs.csv"], files["selections.csv"], files["arms.csv"], dataset, traj)


class ResultSet:
    """Every experiment below a folder, one :class:`Experiment` each, in name order."""

    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise CabenchError(f"{root}: results folder not found")
        self.root = root
        found: dict[str, Experiment] = {}
        for path in sorted(root.rglob("runs.csv")):
            if path.parent.name == "cells":
                continue
            exp = load_experiment(path.parent)
            if exp.runs.empty:
                continue
            seen = found.get(exp.config_hash)
            if seen is None:
                found[exp.config_hash] = exp
            elif seen.runs.equals(exp.runs) and seen.selections.equals(exp.selections):
                seen.duplicates.append(path.parent)  # the same experiment copied: read once
            else:
                raise CabenchError(
                    f"{path}: experiment '{exp.name}' ({exp.config_hash}) is also in {seen.folder} with different "
                    "rows; remove one copy (results of one experiment are never averaged)")
        self.experiments = sorted(found.values(), key=lambda e: (e.name, e.config_hash))
        names: dict[str, int] = {}
        for e in self.experiments:
            names[e.name] = names.get(e.name, 0) + 1
        for e in self.experiments:
            e.label = e.name if names[e.name] == 1 else f"{e.name} [{e.config_hash[:8]}]"

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
        """``dataset.csv`` rows, one per dataset content (first experiment in name order), by dataset name."""
        out: dict[str, dict[str, Any]] = {}
        seen: set[str] = set()
        for e in self.experiments:
            key = f"{e.dataset_name}:{e.dataset.get('sha256', '')}:{e.meta.get('split')}"
            if key in seen:
                continue
            seen.add(key)
            label = e.dataset_name if e.dataset_name not in out else f"{e.dataset_name} ({e.label})"
            out[label] = {**e.dataset, "_experiment": e}
        return out


def online_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error of R_HV and R_std, and the share of B spent, per (method, rho)."""
    rows = []
    keys = [c for c in ["experiment", "config_hash", "dataset", "method", "rho"] if c in runs]
    for values, g in runs.groupby(keys, sort=False):
        hv, hv_se = mean_se(g["regret_hv"])
        std, std_se = mean_se(g["regret_std"])
        rows.append({**dict(zip(keys, values)), "budget_tokens": g["budget_tokens"].iloc[0], "n": len(g),
                     "regret_hv": hv, "regret_hv_se": hv_se, "regret_std": std, "regret_std_se": std_se,
                     "pulls": g["pulls"].mean(), "frac_optimal": g["frac_optimal"].mean(),
                     "spend_share": float((g["spend_tokens"] / g["budget_tokens"]).mean())})
    return pd.DataFrame(rows)


def psi_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Error probability (95% Wilson interval), mean F1 and share of B spent per (method, cost mode, rho)."""
    rows = []
    keys = [c for c in ["experiment", "config_hash", "dataset", "method", "cost_mode", "rho"] if c in runs]
    for values, g in runs.groupby(keys, sort=False):
        k, n = int(g["error"].sum()), len(g)
        lo, hi = wilson(k, n)
        f1, f1_se = mean_se(g["f1"])
        rows.append({**dict(zip(keys, values)), "budget_tokens": g["budget_tokens"].iloc[0], "n": n,
                     "error": k / n, "error_low": lo, "error_high": hi, "f1": f1, "f1_se": f1_se,
                     "size": g["size"].mean(), "spend_share": float((g["spend_tokens"] / g["budget_tokens"]).mean())})
    return pd.DataFrame(rows)


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    return online_summary(runs) if runs["setting"].iloc[0] == "online" else psi_summary(runs)


def aggregate_trajectories(per_rep: pd.DataFrame, dataset: str, window: int) -> pd.DataFrame:
    """Mean and standard error over repetitions at every grid point; ``window`` is the moving average's."""
    rows = []
    for (method, rho, point), g in per_rep.groupby(["method", "rho", "point"], sort=False):
        cm, cs = mean_se(g["cum_regret"].to_numpy())
        mm, ms = mean_se(g["moving_avg"].to_numpy())
        rows.append({"dataset": dataset, "method": method, "rho": rho, "point": point,
                     "tokens": g["tokens"].iloc[0], "cum_regret_mean": cm, "cum_regret_se": cs,
                     "moving_avg_mean": mm, "moving_avg_se": ms, "n_reps": int(g["moving_avg"].notna().sum()),
                     "window": int(window)})
    return pd.DataFrame(rows)


def format_summary(summary: pd.DataFrame) -> str:
    """A plain-text table for the terminal."""
    lines = []
    skipped = summary[summary["status"] != "ok"] if "status" in summary else summary.iloc[:0]
    summary = summary.drop(skipped.index)
    if "regret_hv" in summary:
        lines.append(f"{'method':<19}{'rho':>7}{'B (tokens)':>13}{'R_HV mean ± se':>24}{'R_std mean ± se':>24}"
                     f"{'spent':>8}")
        for _, r in summary.iterrows():
            lines.append(f"{registry.display(r.method):<19}{r.rho:>7g}{r.budget_tokens:>13.0f}"
                         f"{r.regret_hv:>14.2f} ± {r.regret_hv_se:<7.2f}"
                         f"{r.regret_std:>14.2f} ± {r.regret_std_se:<7.2f}{100 * r.spend_share:>7.1f}%")
    else:
        lines.append(f"{'method':<10}{'cost':>14}{'rho':>7}{'B (tokens)':>13}{'P(error) [95% Wilson]':>26}"
                     f"{'F1':>8}{'|P_hat|':>9}{'spent':>8}")
        for _, r in summary.iterrows():
            lines.append(f"{registry.display(r.method):<10}{r.cost_mode:>14}{r.rho:>7g}{r.budget_tokens:>13.0f}"
                         f"{r.error:>9.3f} [{r.error_low:.3f}, {r.error_high:.3f}]{r.f1:>8.3f}{r['size']:>9.2f}"
                         f"{100 * r.spend_share:>7.1f}%")
    for _, r in skipped.iterrows():
        mode = f" ({r.cost_mode})" if "cost_mode" in r and isinstance(r.cost_mode, str) else ""
        lines.append(f"{registry.display(r.method)}{mode} at rho {r.rho:g}: {r.status}")
    return "\n".join(lines)


def finite(value: Any) -> bool:
    """True for a real, finite number (not None, NaN or text)."""
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False
