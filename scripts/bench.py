#!/usr/bin/env python3
"""cabench benchmark: engines against their references, paper-scale configs, scaling.

One run on one machine measures

1. the batched online loop (best of 5) against the per-pull reference on identical work
   (same dataset, budget and 50 repetitions, the chunk size of the paper-scale
   configs): pulls per second and the ratio;
2. the same for the identification loop;
3. every paper-scale config end to end (wall time, peak memory), each in a
   fresh process, and ``make reproduce`` as a whole (in a copy of the project
   sharing this ``.venv``), besides its steps run in one process;
4. how time grows with the number of arms (14, 132, synthetic 1,000), with
   rho and with the number of repetitions.

It writes ``bench/results.json`` and ``bench/results.md`` and prints the table.
Usage: ``python scripts/bench.py [--skip-configs] [--out bench]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cabench.data.arms import PRESETS  # noqa: E402
from cabench.data.dataset import load_dataset  # noqa: E402
from cabench.online import OnlineMethod, run_online  # noqa: E402
from cabench.online.reference import reference_online  # noqa: E402
from cabench.problem import replay_problem  # noqa: E402
from cabench.psi import PsiMethod, run_psi  # noqa: E402
from cabench.psi.reference import reference_psi  # noqa: E402
from cabench.streams import stream_keys  # noqa: E402
from cabench.synthetic import SyntheticSpec, synthetic_problem  # noqa: E402

PAPER_CONFIGS = ["gsm8k_online", "piqa_online", "gsm8k_psi", "piqa_psi", "gsm8k_psi_full", "piqa_psi_full",
                 "gsm8k_psi_stochastic", "piqa_psi_stochastic"]


def timed(fn, *args, repeat: int = 1, **kwargs):
    """Result and the best wall time of ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return out, best


def online_versus_reference(reps: int = 50, rho: float = 8.0) -> dict:
    ds = load_dataset(ROOT / "data" / "gsm8k")
    problem = replay_problem(ds, np.arange(ds.n_arms))
    keys = stream_keys(0, np.arange(reps), problem.arm_ids)
    method = OnlineMethod("cohv-ucb")
    result, batched = timed(run_online, problem, method, rho, keys, repeat=5)
    start = time.perf_counter()
    ref_pulls = sum(reference_online(problem, method, rho, keys[r])["pulls"] for r in range(reps))
    reference = time.perf_counter() - start
    pulls = int(result.pulls.sum())
    assert pulls == ref_pulls
    return {"what": f"online CoHV-UCB, GSM8K all {ds.n_arms} arms, rho={rho:g}, {reps} reps", "pulls": pulls,
            "batched_s": batched, "reference_s": reference, "batched_pulls_per_s": pulls / batched,
            "reference_pulls_per_s": pulls / reference, "ratio": reference / batched}


def psi_versus_reference(reps: int = 50, rho: float = 500.0) -> dict:
    ds = load_dataset(ROOT / "data" / "piqa")
    problem = replay_problem(ds, PRESETS["paper-subset"].select(ds.configs))
    keys = stream_keys(0, np.arange(reps), problem.arm_ids)
    method = PsiMethod("copsi")
    result, batched = timed(run_psi, problem, method, rho, keys, repeat=5)
    start = time.perf_counter()
    for r in range(reps):
        reference_psi(problem, method, rho, keys[r])
    reference = time.perf_counter() - start
    pulls = int(result.samples.sum())
    return {"what": f"identification CoPSI, PIQA 14-arm subset, rho={rho:g}, {reps} reps", "pulls": pulls,
            "batched_s": batched, "reference_s": reference, "batched_pulls_per_s": pulls / batched,
            "reference_pulls_per_s": pulls / reference, "ratio": reference / batched}


_CHILD = """
import resource, sys, time
from cabench.config import load_config
from cabench.runner import run_experiment
start = time.perf_counter()
run_experiment(load_config(sys.argv[1], overrides={"output": sys.argv[2]}), force=True, quiet=True)
wall = time.perf_counter() - start
try:
    from joblib.externals.loky import get_reusable_executor
    get_reusable_executor().shutdown(wait=True)
except Exception:
    pass
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(wall, own, kids)
"""


def config_runs(tmp: Path) -> list[dict]:
    rows = []
    for name in PAPER_CONFIGS:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT / "configs" / f"{name}.yaml"),
                               str(tmp / name)], cwd=ROOT, capture_output=True, text=True, check=True)
        total = time.perf_counter() - start
        wall, own, kids = done.stdout.split()
        rows.append({"config": name, "wall_s": total, "run_s": float(wall),
                     "peak_main_mb": int(own) / 1024, "peak_worker_mb": int(kids) / 1024})
    return rows


def make_reproduce(tmp: Path) -> float:
    """Wall time of ``make reproduce`` itself, in a copy of the project that shares this ``.venv``."""
    import shutil

    work = tmp / "project"
    work.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, work / name)  # copy2 keeps mtimes: make sees the environment as up to date
    for name in ("configs", "data"):
        shutil.copytree(ROOT / name, work / name)
    (work / "results").mkdir()
    (work / ".venv").symlink_to(ROOT / ".venv")
    start = time.perf_counter()
    subprocess.run(["make", "reproduce"], cwd=work, check=True, capture_output=True)
    return time.perf_counter() - start


def reproduce(tmp: Path) -> dict:
    """The steps of ``make reproduce`` (table, every config, plots, report) in one process."""
    from cabench.config import load_config
    from cabench.data.describe import table1
    from cabench.plots import plot_results
    from cabench.report import write_report
    from cabench.runner import run_experiment

    start = time.perf_counter()
    datasets = [load_dataset(ROOT / "data" / n) for n in ("gsm8k", "piqa")]
    table1(datasets).to_csv(tmp / "table1.csv", index=False)
    for name in PAPER_CONFIGS:
        cfg = load_config(ROOT / "configs" / f"{name}.yaml", overrides={"output": str(tmp / name)})
        run_experiment(cfg, force=True, quiet=True)
    runs = time.perf_counter() - start
    plot_results(tmp, ["png", "pdf"])
    write_report(tmp)
    return {"wall_s": time.perf_counter() - start, "experiments_s": runs}


def scaling() -> list[dict]:
    rows = []
    gsm = load_dataset(ROOT / "data" / "gsm8k")
    piqa = load_dataset(ROOT / "data" / "piqa")
    rng = np.random.default_rng(0)
    big = SyntheticSpec("synthetic-1000", tuple(map(tuple, rng.uniform(0.05, 0.95, (1000, 2)))),
                        tuple(rng.uniform(50, 150, 1000)))
    problems = {
        14: replay_problem(piqa, PRESETS["paper-subset"].select(piqa.configs)),
        132: replay_problem(piqa, np.arange(piqa.n_arms)),
        1000: synthetic_problem(big),
    }

    def online(problem, rho, reps):
        return timed(run_online, problem, OnlineMethod("cohv-ucb"), rho, stream_keys(0, np.arange(reps),
                                                                                      problem.arm_ids))[1]

    def psi(problem, rho, reps):
        return timed(run_psi, problem, PsiMethod("copsi"), rho, stream_keys(0, np.arange(reps), problem.arm_ids))[1]

    for k, problem in problems.items():
        rows.append({"axis": "arms", "setting": "online", "K": k, "rho": 8, "reps": 20, "s": online(problem, 8, 20)})
        reps = 20 if k < 1000 else 2
        rows.append({"axis": "arms", "setting": "psi", "K": k, "rho": 20, "reps": reps, "s": psi(problem, 20, reps)})
    for rho in (2, 8, 32):
        rows.append({"axis": "rho", "setting": "online", "K": 108, "rho": rho, "reps": 50,
                     "s": online(replay_problem(gsm, np.arange(gsm.n_arms)), rho, 50)})
    for rho in (50, 500, 5000):
        rows.append({"axis": "rho", "setting": "psi", "K": 14, "rho": rho, "reps": 100,
                     "s": psi(problems[14], rho, 100)})
    for reps in (25, 50, 100, 200):
        rows.append({"axis": "reps", "setting": "online", "K": 132, "rho": 8, "reps": reps,
                     "s": online(problems[132], 8, reps)})
        rows.append({"axis": "reps", "setting": "psi", "K": 14, "rho": 1000, "reps": reps,
                     "s": psi(problems[14], 1000, reps)})
    return rows


def markdown(results: dict) -> str:
    lines = ["# cabench benchmark", "", f"Machine: {results['machine']}", "",
             "## Batched engines against their per-pull references (identical work)", "",
             "| work | pulls | batched (s) | reference (s) | batched pulls/s | reference pulls/s | ratio |",
             "|---|---|---|---|---|---|---|"]
    for r in results["engines"]:
        lines.append(f"| {r['what']} | {r['pulls']} | {r['batched_s']:.3f} | {r['reference_s']:.2f} | "
                     f"{r['batched_pulls_per_s']:,.0f} | {r['reference_pulls_per_s']:,.0f} | {r['ratio']:.0f}x |")
    if results.get("configs"):
        lines += ["", "## Paper-scale configs, each in a fresh process", "",
                  "| config | wall (s) | of which running (s) | peak memory, main (MB) | peak memory, a worker (MB) |",
                  "|---|---|---|---|---|"]
        for r in results["configs"]:
            lines.append(f"| {r['config']} | {r['wall_s']:.1f} | {r['run_s']:.1f} | {r['peak_main_mb']:.0f} | "
                         f"{r['peak_worker_mb']:.0f} |")
        rep = results["reproduce"]
        lines += ["", f"`make reproduce`: **{rep['make_s']:.1f} s**. Its steps in one process: {rep['wall_s']:.1f} s "
                      f"({rep['experiments_s']:.1f} s table, Figure 1 and experiments; the rest plots and report)."]
    lines += ["", "## Scaling", "", "| axis | setting | K | rho | reps | seconds | seconds per rep |",
              "|---|---|---|---|---|---|---|"]
    for r in results["scaling"]:
        lines.append(f"| {r['axis']} | {r['setting']} | {r['K']} | {r['rho']} | {r['reps']} | {r['s']:.3f} | "
                     f"{r['s'] / r['reps']:.4f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench")
    parser.add_argument("--skip-configs", action="store_true", help="skip the paper-scale configs (quicker)")
    args = parser.parse_args()
    results: dict = {"machine": f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}"}
    results["engines"] = [online_versus_reference(), psi_versus_reference()]
    for r in results["engines"]:
        print(f"{r['what']}: batched {r['batched_pulls_per_s']:,.0f} pulls/s, reference "
              f"{r['reference_pulls_per_s']:,.0f} pulls/s, ratio {r['ratio']:.0f}x", flush=True)
    if not args.skip_configs:
        with tempfile.TemporaryDirectory() as tmp:
            results["configs"] = config_runs(Path(tmp) / "configs")
            for r in results["configs"]:
                print(f"{r['config']}: {r['wall_s']:.1f} s, peak {max(r['peak_main_mb'], r['peak_worker_mb']):.0f} MB",
                      flush=True)
            (Path(tmp) / "reproduce").mkdir()
            results["reproduce"] = reproduce(Path(tmp) / "reproduce")
            results["reproduce"]["make_s"] = make_reproduce(Path(tmp))
            print(f"make reproduce: {results['reproduce']['make_s']:.1f} s (its steps in one process "
                  f"{results['reproduce']['wall_s']:.1f} s)", flush=True)
    results["scaling"] = scaling()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    text = markdown(results)
    (args.out / "results.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
