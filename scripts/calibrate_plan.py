"""Calibration of `cabench plan`: the planned budget against the one the evaluation split needs, over profiling splits.

For every case (a config and a target) and every split seed, the plan is computed from that split's profiling rows
alone (`cabench.budget_plan.plan_profiling`); then the evaluation split is replayed with the same engines: the
metric realised at the planned budget, and the smallest budget of the plan's grid from which the metric meets the
target at every larger budget of the grid. A synthetic instance's "split" is a profiling sample of 200 pulls per
arm from the split seed's streams, and its truth is the instance itself. Identification cases plan CoPSI-R and
PSI-SR; online cases (`share>=`) plan CoHV-UCB. A config without a split of its own takes its dataset's size.

    python scripts/calibrate_plan.py --out results-plan            # every case, 20 splits (about an hour)
    python scripts/calibrate_plan.py --cases gsm8k-subset --splits 3 --draws 8 --out /tmp/cal   # a smoke run

Writes OUT/calibration.csv (one row per case, method and split), OUT/calibration_summary.csv,
OUT/calibration_rescaled.csv (whether a single factor applied to the plans after the fact would mend the misses)
and OUT/calibration.md (the tables in docs/methods.md). Run again on the same OUT, it computes only the splits
missing and writes the tables.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cabench.backends import Backend
from cabench.budget_plan import PlanSpec, config_profiling, plan_profiling
from cabench.config import ExperimentConfig, load_config
from cabench.data.dataset import Split, declared_split
from cabench.data.io import read_metadata
from cabench.errors import CabenchError
from cabench.plan import build_problem
from cabench.planning.curves import metric_curve, metrics_at
from cabench.planning.targets import parse_target
from cabench.streams import stream_keys

ROOT = Path(__file__).resolve().parent.parent
METHODS = ["copsi-r", "psi-sr"]
#: The online method planned: the recommended one (a round robin is not planned: the configuration it pulls most is
#: its turn).
ONLINE_METHODS = ["cohv-ucb"]
#: label: (config, target); an online config's methods are :data:`ONLINE_METHODS`
CASES = {
    "gsm8k-subset": ("configs/gsm8k_psi.yaml", "error<=0.1"),
    "piqa-subset": ("configs/piqa_psi.yaml", "error<=0.1"),
    "gsm8k-full": ("configs/gsm8k_psi_full.yaml", "f1>=0.7"),
    "piqa-full": ("configs/piqa_psi_full.yaml", "f1>=0.7"),
    "bfcl-full": ("configs/real/bfcl_psi_full.yaml", "f1>=0.7"),
    "synthetic-l01": ("configs/synthetic_psi_beyond_l01.yaml", "error<=0.1"),
    "synthetic-gauss5": ("configs/synthetic_gauss5.yaml", "error<=0.1"),
    "gsm8k-subset-f1": ("configs/gsm8k_psi.yaml", "f1>=0.9"),
    "piqa-subset-f1": ("configs/piqa_psi.yaml", "f1>=0.9"),
    "gsm8k-online": ("configs/gsm8k_online.yaml", "share>=0.5"),
    "piqa-online": ("configs/piqa_online.yaml", "share>=0.5"),
    "jhu-online": ("configs/real/jhu_online.yaml", "share>=0.5"),
}
EVAL_SEED = 7919  # streams of the evaluation replay: not the plan's


def dataset_split_size(cfg: ExperimentConfig) -> int:
    """The profiling split's size a config without a split of its own takes: its dataset's (dataset.yaml), else 200
    (a synthetic instance: 200 pulls per arm)."""
    if cfg.synthetic is not None or cfg.dataset is None:
        return 200
    folder = Path(cfg.dataset)
    return declared_split(read_metadata(folder), folder).profiling_size


def calibrate_split(cfg: ExperimentConfig, target_text: str, seed: int, spec: PlanSpec, eval_reps: int,
                    backend: Backend) -> list[dict]:
    """The plan of every method on split ``seed`` and what the evaluation replay shows at its budgets."""
    size = cfg.split.profiling_size if cfg.split is not None else dataset_split_size(cfg)
    split_cfg = dataclasses.replace(cfg, split=Split(size, seed))
    target = parse_target(target_text, cfg.setting)
    spec = dataclasses.replace(spec, targets=(target,))
    mode = None if cfg.setting == "online" else "deterministic"
    started = time.time()
    profiling = config_profiling(split_cfg)
    found = plan_profiling(profiling, cfg.setting, cfg.methods, (mode,), spec, backend, cfg.name)
    truth, _, _ = build_problem(split_cfg)  # the evaluation split (a synthetic instance: itself)
    keys = stream_keys(EVAL_SEED, np.arange(eval_reps), truth.arm_ids)
    rows = []
    for method, planned in zip(cfg.methods, found.rows):
        e = planned.estimate
        curve = metric_curve(truth, method, found.grid, keys, mode, spec.epsilon, (target,))[:, 0]
        met = target.met(curve)
        smallest = float(found.grid[len(met) - int(np.argmin(met[::-1]))]) if met[-1] and not met.all() else (
            float(found.grid[0]) if met.all() else math.inf)
        realised = (metrics_at(truth, method, e.rho, keys, mode, spec.epsilon)[target.metric]
                    if math.isfinite(e.rho) else math.nan)
        rows.append({"case": cfg.name, "method": method.name, "target": target.text, "split": seed,
                     "rho": e.rho, "rho_low": e.low, "rho_high": e.high, "draws_reaching": e.reach,
                     "profiling_need": e.plugin,
                     "realised": realised, "met": bool(math.isfinite(e.rho) and target.met(np.array([realised]))[0]),
                     "smallest_rho": smallest, "ratio": e.rho / smallest if math.isfinite(smallest) else math.nan,
                     "within_2x": bool(math.isfinite(e.rho) and math.isfinite(smallest)
                                       and e.rho <= 2 * smallest * (1 + 1e-9)),
                     "in_interval": bool(e.low <= smallest * (1 + 1e-9) and smallest <= e.high * (1 + 1e-9))
                     if math.isfinite(smallest) else
                     bool(math.isinf(e.high)),
                     "instances": found.instances, "max_rho": float(found.grid[-1]),
                     "needs": " ".join(f"{x:.6g}" for x in e.needs),
                     "truth_curve": " ".join(f"{x:.4g}" for x in curve),
                     "seconds": time.time() - started})
    return rows


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per case and method: on how many splits the replay reaches the target within the grid, the plan is within
    it, the target is met at the plan, the plan is at most 2x the smallest budget that meets it, both, the plan
    rightly declines (neither the plan nor the replay within the grid), and the needed budget lies in the plan's
    interval; the median of planned / needed (where both are within the grid) and of the needed budget over the
    exhaustive evaluation's."""
    out = []
    for (case, method, target), g in frame.groupby(["case", "method", "target"], sort=False):
        planned, reachable = np.isfinite(g["rho"]), np.isfinite(g["smallest_rho"])
        within = planned & reachable & (g["rho"] <= 2 * g["smallest_rho"] * (1 + 1e-9))
        out.append({
            "case": case, "method": method, "target": target, "splits": len(g), "reachable": int(reachable.sum()),
            "planned": int(planned.sum()), "met": int(g["met"].sum()), "within_2x": int(within.sum()),
            "met_and_within_2x": int((g["met"] & within).sum()), "declined": int((~planned & ~reachable).sum()),
            "in_interval": int(g["in_interval"].sum()),
            "median_ratio": float(np.median((g["rho"] / g["smallest_rho"])[planned & reachable]))
            if (planned & reachable).any() else math.nan,
            "median_needed_x_exhaustive": float(np.median(g["smallest_rho"] / g["instances"])),
        })
    return pd.DataFrame(out)


def within_window(planned: Any, needed: Any) -> Any:
    """Whether each planned budget lies within ``[needed, 2 * needed]`` (to rounding); never where either is
    infinite."""
    return (needed <= planned * (1 + 1e-9)) & (planned <= 2 * needed * (1 + 1e-9)) & np.isfinite(needed)


def best_window(planned: np.ndarray, needed: np.ndarray) -> tuple[float, int]:
    """The smallest single factor ``c`` that puts the most splits' ``c * planned`` within ``[needed, 2 * needed]``
    (chosen after seeing ``needed``: a ceiling, not a plan), and on how many splits it does. A split planned or needed
    beyond the grid (infinite) is never within. The count only changes where ``c * planned`` crosses an end of a
    window, so the factors that start a window (``needed / planned``) are the only ones to try."""
    ok = np.isfinite(planned) & np.isfinite(needed) & (planned > 0)
    if not ok.any():
        return math.nan, 0
    lo = needed[ok] / planned[ok]
    counts = np.array([int(within_window(c, lo).sum()) for c in lo])
    return float(lo[counts == counts.max()].min()), int(counts.max())  # the smallest of the best factors


def narrowest_spread(planned: np.ndarray, needed: np.ndarray, share: float = 0.8) -> float:
    """The narrowest ratio ``max / min`` of ``needed / planned`` over ``share`` of the splits (of all of them,
    beyond-the-grid ones counting as never covered): a single factor can put ``c * planned`` within ``[needed,
    2 * needed]`` on that share of the splits only where this is at most 2. Infinite where fewer splits are
    finite."""
    ok = np.isfinite(planned) & np.isfinite(needed) & (planned > 0)
    want = math.ceil(share * len(planned) - 1e-9)
    ratios = np.sort(needed[ok] / planned[ok])
    if want < 1 or len(ratios) < want:
        return math.inf
    return float(np.min(ratios[want - 1:] / ratios[:len(ratios) - want + 1]))


#: What :func:`rescaled` scales, by the name its table gives it: each a function of a case's calibration rows.
STATISTICS = {
    "the plan": lambda g: g["rho"].to_numpy(dtype=float),
    "the profiling rows' need": lambda g: g["profiling_need"].to_numpy(dtype=float),
    "the draws' median need": lambda g: np.array([np.median(np.array(str(n).split(), dtype=float))
                                                  for n in g["needs"]]),
    "one budget for every split": lambda g: np.ones(len(g)),
}


def rescaled(frame: pd.DataFrame) -> pd.DataFrame:
    """Per case, method and statistic of :data:`STATISTICS`, whether the plan's misses are an offset a factor
    would mend or a scatter none can: on how many splits the statistic lies within ``[needed, 2 * needed]`` as it
    is ("needed": the smallest budget of the replay's grid that meets the target), the best single factor applied
    to it after the fact and on how many splits it then does (:func:`best_window`), and the narrowest spread of
    needed / statistic over 80% of the splits (:func:`narrowest_spread`: above 2, no factor reaches 80%)."""
    out = []
    for (case, method, target), g in frame.groupby(["case", "method", "target"], sort=False):
        need = g["smallest_rho"].to_numpy(dtype=float)
        for name, statistic in STATISTICS.items():
            x = statistic(g)
            factor, count = best_window(x, need)
            out.append({"case": case, "method": method, "target": target, "statistic": name, "splits": len(g),
                        "within_as_is": int(within_window(x, need).sum()),
                        "best_factor": factor, "within_best": count, "spread_80": narrowest_spread(x, need)})
    return pd.DataFrame(out)


def rescaled_markdown(table: pd.DataFrame) -> str:
    head = ("| case | method | scaled | splits | within [needed, 2x needed] as it is | best factor (after the fact) | "
            "within with it | needed / it: narrowest spread over 80% of splits |")
    lines = [head, "|" + "---|" * (head.count(" | ") + 1)]
    for r in table.itertuples():
        lines.append(f"| {r.case} | {r.method} | {r.statistic} | {r.splits} | {r.within_as_is} | "
                     f"{r.best_factor:.3g} | {r.within_best} | {r.spread_80:.2f}x |")
    return "\n".join(lines)


def markdown(table: pd.DataFrame) -> str:
    head = ("| case | method | target | splits | replay reaches it | planned | met at the plan | plan <= 2x needed | "
            "both | rightly declined | needed in the 80% interval | planned / needed (median where both finite) | "
            "needed / exhaustive (median) |")
    lines = [head, "|" + "---|" * (head.count(" | ") + 1)]
    for r in table.itertuples():
        lines.append(f"| {r.case} | {r.method} | {r.target} | {r.splits} | {r.reachable} | {r.planned} | {r.met} | "
                     f"{r.within_2x} | {r.met_and_within_2x} | {r.declined} | {r.in_interval} | "
                     f"{'-' if math.isnan(r.median_ratio) else f'{r.median_ratio:.2f}'} | "
                     f"{r.median_needed_x_exhaustive:.2g} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--first-split", type=int, default=0)
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--repetitions", type=int, default=50)
    parser.add_argument("--eval-repetitions", type=int, default=200)
    parser.add_argument("--max-share", type=float, default=10.0)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "results-plan")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "calibration.csv"
    done = pd.read_csv(path) if path.is_file() else pd.DataFrame()
    backend = Backend("loky" if args.n_jobs != 1 else "sequential", args.n_jobs)
    for label in args.cases.split(","):
        config, target = CASES[label]
        if not (ROOT / config).is_file():
            print(f"{label}: {config} not found; skipped", file=sys.stderr)
            continue
        try:
            online = load_config(ROOT / config).setting == "online"
            cfg = load_config(ROOT / config, {"methods": ONLINE_METHODS if online else METHODS, "name": label})
        except CabenchError as exc:  # a dataset not imported here (the function-calling logs: docs/real-data.md)
            print(f"{label}: {exc}; skipped", file=sys.stderr)
            continue
        spec = PlanSpec((), args.draws, args.repetitions, cfg.seed, max_share=args.max_share)
        for seed in range(args.first_split, args.first_split + args.splits):
            if not done.empty and ((done["case"] == label) & (done["split"] == seed)).any():
                continue
            rows = calibrate_split(cfg, target, seed, spec, args.eval_repetitions, backend)
            done = pd.concat([done, pd.DataFrame(rows)], ignore_index=True)
            done.to_csv(path, index=False)
            print(f"{label} split {seed}: " + "; ".join(
                f"{r['method']} rho {r['rho']:.4g} (needed {r['smallest_rho']:.4g}) {r['target']} -> "
                f"{r['realised']:.3f}" for r in rows), flush=True)
    if done.empty:
        print("no split calibrated: nothing to summarise", file=sys.stderr)
        return 1
    table, scaled = summary(done), rescaled(done)
    table.to_csv(args.out / "calibration_summary.csv", index=False)
    scaled.to_csv(args.out / "calibration_rescaled.csv", index=False)
    (args.out / "calibration.md").write_text(markdown(table) + "\n\n" + rescaled_markdown(scaled) + "\n")
    print(markdown(table) + "\n\n" + rescaled_markdown(scaled))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
