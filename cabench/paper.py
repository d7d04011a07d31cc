"""The paper's published numbers (SPEC §8), for side-by-side comparison tables.

Each entry names what was measured so the report can compute our value for the
same metric, method and budget. ``text`` is the number as the paper prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: What every figure drawn from the shipped surrogate logs says below it (README: the data are surrogate).
SURROGATE_NOTE = "surrogate logs calibrated to the paper's published statistics (not the paper's data)"


@dataclass(frozen=True)
class Published:
    dataset: str
    metric: str  # regret_hv, regret_std, traj_cum, traj_ma, psi_error, psi_error_stochastic, f1, table1 keys
    method: str | None
    rho: str | None  # "max", "min" or a number as text; None for dataset statistics
    text: str

    @property
    def value(self) -> float:
        return float(self.text)


def _row(dataset: str, metric: str, rho: str | None, pairs: dict[str | None, str]) -> list[Published]:
    return [Published(dataset, metric, method, rho, text) for method, text in pairs.items()]


PUBLISHED: list[Published] = [
    # Table 1 and the data statements
    *_row("gsm8k", "K", None, {None: "108"}), *_row("piqa", "K", None, {None: "132"}),
    *_row("gsm8k", "accuracy_min", None, {None: ".014"}), *_row("gsm8k", "accuracy_max", None, {None: ".165"}),
    *_row("piqa", "accuracy_min", None, {None: ".462"}), *_row("piqa", "accuracy_max", None, {None: ".571"}),
    *_row("gsm8k", "latency_min", None, {None: ".432"}), *_row("gsm8k", "latency_max", None, {None: "8.854"}),
    *_row("piqa", "latency_min", None, {None: ".443"}), *_row("piqa", "latency_max", None, {None: "3.049"}),
    *_row("gsm8k", "tokens_min", None, {None: "122.1"}), *_row("gsm8k", "tokens_max", None, {None: "146.4"}),
    *_row("piqa", "tokens_min", None, {None: "93.5"}), *_row("piqa", "tokens_max", None, {None: "149.9"}),
    *_row("gsm8k", "pareto_size", None, {None: "7"}), *_row("piqa", "pareto_size", None, {None: "7"}),
    *_row("gsm8k", "cost_min", None, {None: "118.37"}), *_row("gsm8k", "cost_max", None, {None: "147.21"}),
    *_row("piqa", "cost_min", None, {None: "95.01"}), *_row("piqa", "cost_max", None, {None: "152.16"}),
    *_row("gsm8k", "subset_pareto_size", None, {None: "2"}), *_row("piqa", "subset_pareto_size", None, {None: "3"}),
    *_row("gsm8k", "subset_min_gap", None, {None: "0.005"}), *_row("piqa", "subset_min_gap", None, {None: "0.010"}),
    # Online, rho = 32
    *_row("gsm8k", "regret_hv", "32", {"uniform": "169.45", "cohv-ucb": "59.88"}),
    *_row("piqa", "regret_hv", "32", {"uniform": "6538.22", "cohv-ucb": "1097.75"}),
    *_row("piqa", "regret_std", "32", {"cohv-ucb": "161.07", "hv-ucb": "447.35", "acc-cost-ucb": "241.79",
                                       "uniform": "1517.77"}),
    *_row("gsm8k", "regret_std", "32", {"cohv-ucb": "29.01", "hv-ucb": "30.62", "acc-cost-ucb": "63.75",
                                        "uniform": "87.69"}),
    *_row("piqa", "traj_cum", "32", {"cohv-ucb": "1149.32", "hv-ucb": "2179.81", "acc-cost-ucb": "1495.65",
                                     "uniform": "6544.07"}),
    *_row("piqa", "traj_ma", "32", {"cohv-ucb": "0.156", "hv-ucb": "0.455", "acc-cost-ucb": "0.157",
                                    "uniform": "1.466"}),
    *_row("gsm8k", "traj_cum", "32", {"cohv-ucb": "59.85", "hv-ucb": "61.81", "acc-cost-ucb": "118.04",
                                      "uniform": "169.55"}),
    *_row("gsm8k", "traj_ma", "32", {"cohv-ucb": "0.0148", "hv-ucb": "0.0156", "acc-cost-ucb": "0.0334",
                                     "uniform": "0.0502"}),
    # Pareto set identification, 14-arm subset
    *_row("gsm8k", "psi_error", "min", {"copsi": "0.614", "uniform": "0.662"}),
    *_row("gsm8k", "psi_error", "max", {"copsi": "0.004", "uniform": "0.026", "psi-sr": "0.006"}),
    *_row("piqa", "psi_error", "max", {"copsi": "0.148", "psi-sr": "0.164", "uniform": "0.270"}),
    *_row("gsm8k", "psi_error_stochastic", "max", {"copsi": "0.004", "psi-sr": "0.006", "uniform": "0.028"}),
    *_row("piqa", "psi_error_stochastic", "max", {"copsi": "0.148", "psi-sr": "0.164", "uniform": "0.266"}),
    # Full sets, F1
    *_row("gsm8k", "f1", "10", {"copsi": "0.323", "uniform": "0.265"}),
    *_row("piqa", "f1", "10", {"copsi": "0.250", "uniform": "0.148"}),
    *_row("gsm8k", "f1", "200", {"copsi": "0.727", "psi-sr": "0.732", "uniform": "0.677"}),
    *_row("piqa", "f1", "200", {"copsi": "0.486", "psi-sr": "0.480", "uniform": "0.409"}),
]


@dataclass(frozen=True)
class Reduction:
    """A relative reduction the paper quotes: ``1 - ours / theirs`` of metric between two methods."""

    dataset: str
    metric: str
    rho: str
    method: str
    baseline: str
    text: str  # as printed, in percent


REDUCTIONS: list[Reduction] = [
    Reduction("gsm8k", "regret_hv", "32", "cohv-ucb", "uniform", "64.7"),
    Reduction("piqa", "regret_hv", "32", "cohv-ucb", "uniform", "83.2"),
    Reduction("piqa", "regret_std", "32", "cohv-ucb", "hv-ucb", "64.0"),
    Reduction("piqa", "regret_std", "32", "cohv-ucb", "acc-cost-ucb", "33.4"),
    Reduction("piqa", "regret_std", "32", "cohv-ucb", "uniform", "89.4"),
    Reduction("gsm8k", "regret_std", "32", "cohv-ucb", "acc-cost-ucb", "54.5"),
    Reduction("gsm8k", "regret_std", "32", "cohv-ucb", "uniform", "66.9"),
    Reduction("gsm8k", "psi_error", "max", "copsi", "uniform", "84.6"),
    Reduction("piqa", "psi_error", "max", "copsi", "uniform", "45.2"),
    Reduction("gsm8k", "psi_error_stochastic", "max", "copsi", "psi-sr", "33.3"),
    Reduction("gsm8k", "psi_error_stochastic", "max", "copsi", "uniform", "85.7"),
    Reduction("piqa", "psi_error_stochastic", "max", "copsi", "psi-sr", "9.8"),
    Reduction("piqa", "psi_error_stochastic", "max", "copsi", "uniform", "44.4"),
]


@dataclass(frozen=True)
class Gain:
    """An F1 gain the paper quotes: CoPSI over a baseline, absolute or relative (percent)."""

    dataset: str
    rho: str
    baseline: str
    kind: str  # "absolute" or "relative"
    text: str
    method: str = "copsi"  # whose gain it is


GAINS: list[Gain] = [
    Gain("gsm8k", "200", "uniform", "absolute", "0.050"),
    Gain("piqa", "200", "uniform", "absolute", "0.077"),
    Gain("piqa", "200", "uniform", "relative", "18.7"),
]


# --- which experiments are the paper's (SPEC §7) -------------------------------------------------------

#: The paper's datasets and their number of configurations (Table 1).
PAPER_DATASETS = {"gsm8k": 108, "piqa": 132}
PAPER_ONLINE_METHODS = ("cohv-ucb", "hv-ucb", "acc-cost-ucb", "uniform")
PAPER_PSI_METHODS = ("copsi", "psi-sr", "uniform")
PAPER_ONLINE_PARAMS = {"mode": "experimental", "s_r": 0.01, "s_c": 0.01, "eta": 0.05, "alpha": 2.0}
#: Role of a paper experiment -> the smallest and largest rho of its grid in the paper (SPEC §7): a number the
#: paper gives at its "smallest" or "largest" budget is one of these.
PAPER_GRID_ENDS = {"online": (2.0, 32.0), "psi-subset": (20.0, 5000.0), "psi-full": (10.0, 200.0),
                   "psi-stochastic": (5000.0, 5000.0)}
#: Role of a paper experiment -> the figures it feeds.
PAPER_ROLES = {
    "online": "Figures 2a-b, 3 and 4",
    "psi-subset": "Figure 2c-d",
    "psi-full": "Figure 5",
    "psi-stochastic": "Figure 6",
}


def paper_role(dataset_name: str, n_dataset_configs: int, arm_names: list[str], subset_names: list[str] | None,
               setting: str, methods: list[dict], cost_modes: list[str]) -> str | None:
    """The paper experiment an experiment *is* (SPEC §7), from its recorded identity, or None.

    It must run on a dataset named like one of the paper's with the paper's K,
    on all of its configurations (online, full-set identification) or exactly
    the 14-arm subset (subset identification), with the paper's methods and,
    online, the paper's hyper-parameters. The rho grid and the number of
    repetitions may differ (quick variants); the report states them.
    """
    if PAPER_DATASETS.get(dataset_name) != n_dataset_configs:
        return None
    names = [m.get("name") for m in methods]
    if setting == "online":
        params_ok = all({k: m.get(k) for k in PAPER_ONLINE_PARAMS} == PAPER_ONLINE_PARAMS for m in methods)
        ok = set(names) == set(PAPER_ONLINE_METHODS) and params_ok and len(arm_names) == n_dataset_configs
        return "online" if ok else None
    if set(names) != set(PAPER_PSI_METHODS):
        return None
    if "stochastic" in cost_modes:
        is_subset = subset_names is not None and list(arm_names) == list(subset_names)
        return "psi-stochastic" if is_subset and set(cost_modes) == {"deterministic", "stochastic"} else None
    if subset_names is not None and list(arm_names) == list(subset_names):
        return "psi-subset"
    return "psi-full" if len(arm_names) == n_dataset_configs else None
