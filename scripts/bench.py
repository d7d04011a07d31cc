#!/usr/bin/env python3
"""cabench benchmark: engines against their references, paper-scale configs, scaling.

One run on one machine measures

1. the batched online loop (best of 5) against the per-pull reference on identical work
   (same dataset, budget and 50 repetitions, the chunk size of the paper-scale
   configs): pulls per second and the ratio;
2. the same for the identification loop;
3. every paper-scale config end to end (wall time, peak memory), each in a
   fresh process, and ``make reproduce`` step by step (in a copy of the project
   sharing this ``.venv``): the runs, the post-processing (plot, report,
   recommend) against them, the size of ``results/``, and ``make reproduce``
   again with every cell cached;
4. how time grows with the number of arms (14, 132, synthetic 1,000), with
   rho and with the number of repetitions;
5. identification at K = 132 and 1,000 with the gaps kept between phases and
   recomputed every phase (the cubic algorithm), side by side.

It writes ``bench/results.json`` and ``bench/results.md`` and prints the table.
Usage: ``python scripts/bench.py [--skip-configs | --reproduce-only] [--out bench]``.
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


def project_copy(tmp: Path) -> Path:
    """A copy of the project (Makefile, configs, data) that shares this ``.venv``, with an empty ``results/``."""
    import shutil

    work = tmp / "project"
    work.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, work / name)  # copy2 keeps mtimes: make sees the environment as up to date
    for name in ("configs", "data"):
        shutil.copytree(ROOT / name, work / name)
    (work / "results").mkdir()
    (work / ".venv").symlink_to(ROOT / ".venv")
    return work


def _wall(command: str, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, shell=True, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def _step(command: str) -> str:
    """What a command does: ``run``, ``plot``, ``report``, ``recommend`` or ``data`` (the rest)."""
    words = command.split()
    return next((w for w in words if w in ("run", "plot", "report", "recommend")), "data")


def _kind(path: Path) -> str:
    """What a file of ``results/`` is, for the size breakdown."""
    if path.parent.name == "cells":
        return "cells/"
    if path.name.startswith("selections."):
        return "selections"
    return "figures" if path.suffix in (".png", ".pdf", ".svg") else "the rest"


def reproduce(tmp: Path) -> dict:
    """``make reproduce`` step by step in a copy of the project (in ``tmp``), then ``recommend``, the size of
    ``results/``, ``cabench run`` again and ``make reproduce`` again, with every cell cached.

    The commands are the recipe's own (``make -n reproduce``), each timed in a process of its own; the
    post-processing (plot, report, recommend) is set against the runs, the issue's target being a fifth.
    """
    work = project_copy(tmp)
    make = "make -o .venv/.installed-stamp"  # never reinstall into the shared environment
    recipe = subprocess.run(f"{make} -n reproduce", shell=True, cwd=work, check=True, capture_output=True, text=True)
    commands = [line for line in recipe.stdout.splitlines() if line.strip()]
    commands.append(f"{commands[-1].split()[0]} recommend results")
    load_before = os.getloadavg()
    steps = [{"step": _step(c), "command": c, "s": _wall(c, work)} for c in commands]
    run = next(s for s in steps if s["step"] == "run")
    cached_run = _wall(run["command"], work)
    sizes: dict[str, float] = {}
    for path in (work / "results").rglob("*"):
        if path.is_file():
            sizes[_kind(path)] = sizes.get(_kind(path), 0.0) + path.stat().st_size / 1e6
    cached = _wall(f"{make} reproduce", work)
    spent = {name: sum(s["s"] for s in steps if s["step"] == name) for name in ("run", "plot", "report", "recommend")}
    post = spent["plot"] + spent["report"] + spent["recommend"]
    return {"steps": steps, "run_s": spent["run"], "post_s": post, "post_over_run": post / spent["run"],
            "results_mb": sum(sizes.values()), "sizes_mb": sizes, "cached_run_s": cached_run, "cached_make_s": cached,
            "load_before": load_before, "load_after": os.getloadavg()}


def reproduce_markdown(rep: dict) -> str:
    lines = ["", "## `make reproduce`: post-processing against the runs, and the results' size", "",
             f"Load average (1, 5, 15 min) before {', '.join(f'{x:.2f}' for x in rep['load_before'])}, after "
             f"{', '.join(f'{x:.2f}' for x in rep['load_after'])}.", "",
             "| step | wall (s) | against the runs |", "|---|---|---|"]
    for s in rep["steps"]:
        command = " ".join(w for w in s["command"].split() if not w.startswith("configs/"))
        lines.append(f"| `{command}` | {s['s']:.1f} | {s['s'] / rep['run_s']:.2f} |")
    lines += [f"| **post-processing** (plot + report + recommend) | **{rep['post_s']:.1f}** | "
              f"**{rep['post_over_run']:.2f}** (target at most 0.20) |",
              f"| `cabench run` again, every cell cached | {rep['cached_run_s']:.1f} | "
              f"{rep['cached_run_s'] / rep['run_s']:.2f} |",
              f"| `make reproduce` again, every cell cached | {rep['cached_make_s']:.1f} | "
              f"{rep['cached_make_s'] / rep['run_s']:.2f} (target under 60 s on an idle two-core machine) |",
              f"| size of `results/` | {rep['results_mb']:.1f} MB: "
              + ", ".join(f"{kind} {mb:.1f}" for kind, mb in sorted(rep["sizes_mb"].items()))
              + " | (target under 80 MB) |"]
    return "\n".join(lines) + "\n"


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


def identification_scaling(reps: int = 4, rho: float = 20.0) -> dict:
    """Identification on synthetic Gaussian instances of 132 and 1,000 arms at rho 20, CoPSI and PSI-SR, the same
    ``reps`` repetitions throughout, side by side: seconds per repetition with the gaps kept from phase to phase
    (best of 3) and with every phase's gaps recomputed (the cubic algorithm, once); decisions checked equal. The
    load average is read before and after."""
    import dataclasses
    from types import SimpleNamespace

    def gaussian(k: int):
        rng = np.random.default_rng(0)
        return synthetic_problem(SyntheticSpec(f"gaussian-{k}", tuple(map(tuple, rng.uniform(0.05, 0.95, (k, 2)))),
                                               tuple(rng.uniform(50, 150, k)), noise="gaussian", sigma=0.5))

    load_before = os.getloadavg()
    problems = {k: gaussian(k) for k in (132, 1000)}
    rows = []
    for name in ("copsi", "psi-sr"):
        method = PsiMethod(name)
        cubic = SimpleNamespace(entry=dataclasses.replace(method.entry, cubic=True))
        row: dict = {"method": name, "reps": reps, "rho": rho}
        for k, problem in problems.items():
            keys = stream_keys(0, np.arange(reps), problem.arm_ids)
            kept, seconds = timed(run_psi, problem, method, rho, keys, repeat=3)
            again, cubic_seconds = timed(run_psi, problem, cubic, rho, keys)
            assert all(np.array_equal(getattr(kept, f), getattr(again, f)) for f in ("removed", "accepted", "samples"))
            row[f"s_per_rep_{k}"], row[f"cubic_s_per_rep_{k}"] = seconds / reps, cubic_seconds / reps
        row["growth"] = row["s_per_rep_1000"] / row["s_per_rep_132"]  # quadratic: (1000 / 132)^2 = 57
        row["cubic_growth"] = row["cubic_s_per_rep_1000"] / row["cubic_s_per_rep_132"]
        row["speedup_over_cubic"] = row["cubic_s_per_rep_1000"] / row["s_per_rep_1000"]
        rows.append(row)
    return {"rows": rows, "load_before": load_before, "load_after": os.getloadavg()}


def identification_markdown(section: dict) -> str:
    lines = ["", "## Identification at large K (synthetic Gaussian, rho 20, same repetitions side by side)", "",
             f"Load average (1, 5, 15 min) before {', '.join(f'{x:.2f}' for x in section['load_before'])}, after "
             f"{', '.join(f'{x:.2f}' for x in section['load_after'])}.", "",
             "| method | reps | gaps | s/rep K=132 | s/rep K=1000 | K=1000 / K=132 | K=1000, cubic / kept |",
             "|---|---|---|---|---|---|---|"]
    for r in section["rows"]:
        lines.append(f"| {r['method']} | {r['reps']} | kept | {r['s_per_rep_132']:.4f} | {r['s_per_rep_1000']:.4f} | "
                     f"{r['growth']:.1f} | {r['speedup_over_cubic']:.1f}x |")
        lines.append(f"| {r['method']} | {r['reps']} | cubic | {r['cubic_s_per_rep_132']:.4f} | "
                     f"{r['cubic_s_per_rep_1000']:.4f} | {r['cubic_growth']:.1f} | |")
    return "\n".join(lines) + "\n"


def online_compiled(reps_list: tuple[int, ...] = (50, 200), rho: float = 32.0) -> dict:
    """CoHV-UCB on GSM8K (all 108 arms) at rho 32: pulls per second of the compiled loop and of today's engine (the
    numpy loop drawing with numpy, as before the loop was compiled) on the same repetitions, side by side, best of
    3 in wall and CPU time; their counts, regrets and spends checked bit-identical. Load read before and after."""
    import dataclasses

    from cabench.streams import stream_index

    @dataclasses.dataclass(frozen=True, eq=False)
    class NumpyReplay:  # today's replay sampler: the bootstrap rows hashed and gathered in numpy
        rewards: np.ndarray
        costs: np.ndarray

        def sample(self, keys, arms, counts):
            q = stream_index(keys, counts, self.rewards.shape[1])
            return self.rewards[arms, q], self.costs[arms, q]

    def best_of(repeat, fn, *args, **kwargs):
        wall, cpu = float("inf"), float("inf")
        for _ in range(repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            out = fn(*args, **kwargs)
            wall, cpu = min(wall, time.perf_counter() - start), min(cpu, time.process_time() - start_cpu)
        return out, wall, cpu

    ds = load_dataset(ROOT / "data" / "gsm8k")
    problem = replay_problem(ds, np.arange(ds.n_arms))
    today = dataclasses.replace(problem, sampler=NumpyReplay(problem.sampler.rewards, problem.sampler.costs))
    method = OnlineMethod("cohv-ucb")
    load_before = os.getloadavg()
    rows = []
    for reps in reps_list:
        keys = stream_keys(0, np.arange(reps), problem.arm_ids)
        run_online(problem, method, rho, keys)  # numba loads (or compiles) the loop once, outside the timing
        fast, wall, cpu = best_of(3, run_online, problem, method, rho, keys)
        slow, today_wall, today_cpu = best_of(3, run_online, today, method, rho, keys, compiled=False)
        assert all(np.array_equal(getattr(fast, f), getattr(slow, f)) for f in ("counts", "regret_hv", "spend"))
        pulls = int(fast.pulls.sum())
        rows.append({"reps": reps, "rho": rho, "pulls": pulls, "pulls_per_s": pulls / wall,
                     "today_pulls_per_s": pulls / today_wall, "ratio": today_wall / wall, "cpu_ratio": today_cpu / cpu})
    return {"rows": rows, "load_before": load_before, "load_after": os.getloadavg()}


def online_markdown(section: dict) -> str:
    lines = ["", "## Online loop compiled against today's engine (CoHV-UCB, GSM8K, same repetitions side by side)", "",
             f"Load average (1, 5, 15 min) before {', '.join(f'{x:.2f}' for x in section['load_before'])}, after "
             f"{', '.join(f'{x:.2f}' for x in section['load_after'])}. Results bit-identical.", "",
             "| reps | rho | pulls | compiled pulls/s | today's pulls/s | ratio (wall) | ratio (CPU) |",
             "|---|---|---|---|---|---|---|"]
    for r in section["rows"]:
        lines.append(f"| {r['reps']} | {r['rho']:g} | {r['pulls']} | {r['pulls_per_s']:,.0f} | "
                     f"{r['today_pulls_per_s']:,.0f} | {r['ratio']:.1f}x | {r['cpu_ratio']:.1f}x |")
    return "\n".join(lines) + "\n"


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
    parser.add_argument("--reproduce-only", action="store_true",
                        help="only `make reproduce` step by step (post-processing against the runs, results size); "
                             "writes reproduce.json and reproduce.md")
    parser.add_argument("--work", type=Path, help="with --reproduce-only: run in this new folder and keep it")
    args = parser.parse_args()
    results: dict = {"machine": f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}"}
    if args.reproduce_only:
        with tempfile.TemporaryDirectory() as tmp:
            if args.work:
                args.work.mkdir(parents=True)
            results["reproduce"] = reproduce(args.work or Path(tmp))
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "reproduce.json").write_text(json.dumps(results, indent=2))
        text = f"# cabench benchmark\n\nMachine: {results['machine']}\n" + reproduce_markdown(results["reproduce"])
        (args.out / "reproduce.md").write_text(text)
        print(text)
        return 0
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
            rep = results["reproduce"] = reproduce(Path(tmp))
            print(f"make reproduce: runs {rep['run_s']:.1f} s, post-processing {rep['post_s']:.1f} s "
                  f"({rep['post_over_run']:.2f} of the runs), again cached {rep['cached_make_s']:.1f} s, results "
                  f"{rep['results_mb']:.1f} MB", flush=True)
    results["scaling"] = scaling()
    results["identification"] = identification_scaling()
    results["online"] = online_compiled()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    text = markdown(results) + identification_markdown(results["identification"])
    text += online_markdown(results["online"])
    if "reproduce" in results:
        text += reproduce_markdown(results["reproduce"])
    (args.out / "results.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
