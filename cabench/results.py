"""Tables computed from result files: summaries and aggregated trajectories.

Plots and reports use these functions only; they never run experiments.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from cabench.data.dataset import Split
from cabench.errors import CabenchError
from cabench.stats import mean_se, wilson

DISPLAY = {
    "cohv-ucb": "CoHV-UCB", "hv-ucb": "HV-UCB", "acc-cost-ucb": "Accuracy-Cost-UCB", "uniform": "Uniform",
    "copsi": "CoPSI", "psi-sr": "PSI-SR",
}


def read_csv(path: Path) -> pd.DataFrame:
    """Read a result CSV with exact float round-trip."""
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    try:
        return pd.read_csv(path, keep_default_na=False, na_values=["", "nan", "NaN"],
                           dtype={"returned": str, "samples": str}, **exact)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise CabenchError(f"{path}: unreadable result file ({str(exc).splitlines()[0]})") from exc


def psi_kind(runs: pd.DataFrame, meta: dict) -> str:
    """Which identification experiment a result folder holds: stochastic, subset or full (SPEC §7)."""
    if "stochastic" in set(runs["cost_mode"]):
        return "stochastic"
    return "subset" if (meta.get("arms") or {}).get("preset") == "paper-subset" else "full"


class ResultSet:
    """Every ``runs.csv`` below a folder (with its ``config.yaml`` and ``trajectories.csv``), by kind.

    ``online`` and ``trajectories`` are concatenated over experiments (``None`` when absent); ``psi``
    maps ``subset``, ``full`` and ``stochastic`` to their runs.
    """

    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise CabenchError(f"{root}: results folder not found")
        self.root = root
        self.metas: list[dict] = []
        online, trajectories, psi = [], [], {}
        for path in sorted(root.rglob("runs.csv")):
            runs = read_csv(path)
            if runs.empty:
                continue
            meta_path = path.parent / "config.yaml"
            meta = (yaml.safe_load(meta_path.read_text()) if meta_path.is_file() else None) or {}
            self.metas.append(meta)
            if runs["setting"].iloc[0] == "online":
                online.append(runs)
                if (path.parent / "trajectories.csv").is_file():
                    trajectories.append(read_csv(path.parent / "trajectories.csv"))
            else:
                psi.setdefault(psi_kind(runs, meta), []).append(runs)
        self.online = pd.concat(online, ignore_index=True) if online else None
        self.trajectories = pd.concat(trajectories, ignore_index=True) if trajectories else None
        self.psi: dict[str, pd.DataFrame] = {k: pd.concat(v, ignore_index=True) for k, v in psi.items()}

    @property
    def empty(self) -> bool:
        return self.online is None and not self.psi

    @property
    def surrogate(self) -> bool:
        return any(m.get("surrogate") for m in self.metas)

    def dataset_folders(self) -> list[tuple[str, Split]]:
        """Dataset folders (and splits) named in the result configs, once each, in name order."""
        seen: dict[str, tuple[str, Split]] = {}
        for meta in self.metas:
            path = meta.get("dataset")
            if isinstance(path, str) and Path(path).is_dir():
                split = meta.get("split") or {}
                seen.setdefault(Path(path).name, (path, Split(int(split.get("profiling_size", 200)),
                                                              int(split.get("seed", 0)))))
        return [seen[k] for k in sorted(seen)]


def online_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error of R_HV and R_std per (dataset, method, rho)."""
    rows = []
    for (dataset, method, rho), g in runs.groupby(["dataset", "method", "rho"], sort=False):
        hv, hv_se = mean_se(g["regret_hv"])
        std, std_se = mean_se(g["regret_std"])
        rows.append({"dataset": dataset, "method": method, "rho": rho, "budget_tokens": g["budget_tokens"].iloc[0],
                     "n": len(g), "regret_hv": hv, "regret_hv_se": hv_se, "regret_std": std,
                     "regret_std_se": std_se, "pulls": g["pulls"].mean(), "frac_optimal": g["frac_optimal"].mean()})
    return pd.DataFrame(rows)


def psi_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Error probability with a 95% Wilson interval and mean F1 per (dataset, method, cost mode, rho)."""
    rows = []
    for (dataset, method, mode, rho), g in runs.groupby(["dataset", "method", "cost_mode", "rho"], sort=False):
        k, n = int(g["error"].sum()), len(g)
        lo, hi = wilson(k, n)
        f1, f1_se = mean_se(g["f1"])
        rows.append({"dataset": dataset, "method": method, "cost_mode": mode, "rho": rho,
                     "budget_tokens": g["budget_tokens"].iloc[0], "n": n, "error": k / n, "error_low": lo,
                     "error_high": hi, "f1": f1, "f1_se": f1_se, "size": g["size"].mean()})
    return pd.DataFrame(rows)


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    return online_summary(runs) if runs["setting"].iloc[0] == "online" else psi_summary(runs)


def aggregate_trajectories(per_rep: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """Mean and standard error over repetitions at every grid point."""
    rows = []
    for (method, rho, point), g in per_rep.groupby(["method", "rho", "point"], sort=False):
        cm, cs = mean_se(g["cum_regret"].to_numpy())
        mm, ms = mean_se(g["moving_avg"].to_numpy())
        rows.append({"dataset": dataset, "method": method, "rho": rho, "point": point,
                     "tokens": g["tokens"].iloc[0], "cum_regret_mean": cm, "cum_regret_se": cs,
                     "moving_avg_mean": mm, "moving_avg_se": ms, "n_reps": int(g["moving_avg"].notna().sum())})
    return pd.DataFrame(rows)


def format_summary(summary: pd.DataFrame) -> str:
    """A plain-text table for the terminal."""
    lines = []
    if "regret_hv" in summary:
        lines.append(f"{'method':<19}{'rho':>7}{'B (tokens)':>13}{'R_HV mean ± se':>24}{'R_std mean ± se':>24}")
        for _, r in summary.iterrows():
            lines.append(f"{DISPLAY.get(r.method, r.method):<19}{r.rho:>7g}{r.budget_tokens:>13.0f}"
                         f"{r.regret_hv:>14.2f} ± {r.regret_hv_se:<7.2f}"
                         f"{r.regret_std:>14.2f} ± {r.regret_std_se:<7.2f}")
    else:
        lines.append(f"{'method':<10}{'cost':>14}{'rho':>7}{'B (tokens)':>13}{'P(error) [95% Wilson]':>26}"
                     f"{'F1':>8}{'|P_hat|':>9}")
        for _, r in summary.iterrows():
            lines.append(f"{DISPLAY.get(r.method, r.method):<10}{r.cost_mode:>14}{r.rho:>7g}{r.budget_tokens:>13.0f}"
                         f"{r.error:>9.3f} [{r.error_low:.3f}, {r.error_high:.3f}]{r.f1:>8.3f}{r['size']:>9.2f}")
    return "\n".join(lines)

