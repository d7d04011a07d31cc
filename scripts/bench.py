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
   recomputed every phase (the cubic algorithm), side by side;
6. the compiled online loop against the numpy loop drawing with numpy (the engine before it);
7. one config run with ``--backend dask`` and with loky into two folders: wall time of each and whether
   their files are byte-identical.

It writes ``bench/results.json`` and ``bench/results.md`` and prints the tables, ending with every target ratio
next to its target, met or not, and the load average of each measurement.
Usage: ``python scripts/bench.py [--skip-configs | --targets-only | --reproduce-only] [--out bench]``.
"""

from __future__ import annotations

import argparse
import gzip
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


#: Untimed calls before the batched engines are timed against their references: a process's first calls run 10-20%
#: slower (numba loading its kernels, then the interpreter specialising and numpy warming its caches over about 20
#: calls), which a worker pays once for the many cells it runs. The best of the first five is kept too.
WARMUP = 20


def _batched_and_reference(batched, reference, reps: int) -> dict:
    """Wall times of ``batched()`` (the best of its first five calls, and the best of five after :data:`WARMUP` more)
    and of ``reference(r)`` for ``r < reps`` in one pass (after one untimed call)."""
    first = timed(batched, repeat=5)[1]
    for _ in range(WARMUP):
        batched()
    out, warm = timed(batched, repeat=5)
    reference(0)
    start = time.perf_counter()
    answers = [reference(r) for r in range(reps)]
    return {"out": out, "answers": answers, "batched_s": warm, "batched_first_s": first,
            "reference_s": time.perf_counter() - start}


def _load(load: tuple[float, float, float]) -> str:
    return ", ".join(f"{x:.2f}" for x in load)


def _loads(section: dict) -> str:
    """The load average before and after a section was measured, as a sentence."""
    return f"Load average (1, 5, 15 min) before {_load(section['load_before'])}, after {_load(section['load_after'])}."


def online_versus_reference(reps: int = 50, rho: float = 8.0) -> dict:
    ds = load_dataset(ROOT / "data" / "gsm8k")
    problem = replay_problem(ds, np.arange(ds.n_arms))
    keys = stream_keys(0, np.arange(reps), problem.arm_ids)
    method = OnlineMethod("cohv-ucb")
    load_before = os.getloadavg()
    t = _batched_and_reference(lambda: run_online(problem, method, rho, keys),
                               lambda r: reference_online(problem, method, rho, keys[r]), reps)
    pulls = int(t["out"].pulls.sum())
    assert pulls == sum(a["pulls"] for a in t["answers"])
    return _engine_row(f"online CoHV-UCB, GSM8K all {ds.n_arms} arms, rho={rho:g}, {reps} reps", pulls, t, load_before)


def _engine_row(what: str, pulls: int, t: dict, load_before: tuple) -> dict:
    return {"what": what, "pulls": pulls, "batched_s": t["batched_s"], "batched_first_s": t["batched_first_s"],
            "reference_s": t["reference_s"], "batched_pulls_per_s": pulls / t["batched_s"],
            "reference_pulls_per_s": pulls / t["reference_s"], "ratio": t["reference_s"] / t["batched_s"],
            "ratio_first": t["reference_s"] / t["batched_first_s"], "load_before": load_before,
            "load_after": os.getloadavg()}


def psi_versus_reference(reps: int = 50, rho: float = 500.0) -> dict:
    ds = load_dataset(ROOT / "data" / "piqa")
    problem = replay_problem(ds, PRESETS["paper-subset"].select(ds.configs))
    keys = stream_keys(0, np.arange(reps), problem.arm_ids)
    method = PsiMethod("copsi")
    load_before = os.getloadavg()
    t = _batched_and_reference(lambda: run_psi(problem, method, rho, keys),
                               lambda r: reference_psi(problem, method, rho, keys[r]), reps)
    assert [a["samples"] for a in t["answers"]] == t["out"].samples.tolist()
    return _engine_row(f"identification CoPSI, PIQA 14-arm subset, rho={rho:g}, {reps} reps",
                       int(t["out"].samples.sum()), t, load_before)


_CHILD = """
import resource, sys, time
from cabench.config import load_config
from cabench.runner import run_experiment
start = time.perf_counter()
run_experiment(load_config(sys.argv[1], overrides={"output": sys.argv[2]}), force=True, quiet=True,
               echo=lambda line: print(line, file=sys.stderr))  # its warnings apart from the numbers below
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
        wall, own, kids = done.stdout.splitlines()[-1].split()  # the child's last line: its numbers
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


#: make, never reinstalling into the shared environment, and without "Entering directory" lines where ``make bench``
#: runs this (a make inside make prints them, and they would be taken for commands).
MAKE = "make --no-print-directory -o .venv/.installed-stamp"


def recipe(work: Path, target: str = "reproduce") -> list[str]:
    """The commands of ``target``'s recipe in the project at ``work`` (``make -n``), one per line."""
    listed = subprocess.run(f"{MAKE} -n {target}", shell=True, cwd=work, check=True, capture_output=True, text=True)
    return [line for line in listed.stdout.splitlines() if line.strip()]


def reproduce(tmp: Path) -> dict:
    """``make reproduce`` step by step in a copy of the project (in ``tmp``), then ``recommend``, the size of
    ``results/``, ``cabench run`` again and ``make reproduce`` again, with every cell cached.

    The commands are the recipe's own (``make -n reproduce``), each timed in a process of its own; the
    post-processing (plot, report, recommend) is set against the runs, the issue's target being a fifth.
    """
    work = project_copy(tmp)
    commands = recipe(work)
    commands.append(commands[-1].replace(" report results", " recommend results"))
    load_before = os.getloadavg()
    steps = [{"step": _step(c), "command": c, "s": _wall(c, work)} for c in commands]
    run = next(s for s in steps if s["step"] == "run")
    cached_run = _wall(run["command"], work)
    sizes: dict[str, float] = {}
    for path in (work / "results").rglob("*"):
        if path.is_file():
            sizes[_kind(path)] = sizes.get(_kind(path), 0.0) + path.stat().st_size / 1e6
    cached = _wall(f"{MAKE} reproduce", work)
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
             _loads(section), "",
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
             _loads(section) + " Results bit-identical.", "",
             "| reps | rho | pulls | compiled pulls/s | today's pulls/s | ratio (wall) | ratio (CPU) |",
             "|---|---|---|---|---|---|---|"]
    for r in section["rows"]:
        lines.append(f"| {r['reps']} | {r['rho']:g} | {r['pulls']} | {r['pulls_per_s']:,.0f} | "
                     f"{r['today_pulls_per_s']:,.0f} | {r['ratio']:.1f}x | {r['cpu_ratio']:.1f}x |")
    return "\n".join(lines) + "\n"


def _same_files(one: Path, other: Path) -> tuple[list[str], int]:
    """The files of two result folders of one config that differ (or exist in one only), and how many were compared.

    ``config.yaml`` is compared without its ``backend:`` and ``output:`` lines, and every ``cells/joined.json`` (digests
    of ``config.yaml``'s text among others) is left out; every other file byte for byte, gzip files decompressed
    too."""
    def files(root: Path) -> set[str]:
        return {str(p.relative_to(root)) for p in root.rglob("*")
                if p.is_file() and not str(p.relative_to(root)).endswith("cells/joined.json")}

    def text(path: Path) -> bytes:
        if path.name == "config.yaml":
            lines = path.read_bytes().splitlines(keepends=True)
            return b"".join(line for line in lines if not line.startswith((b"backend:", b"output:")))
        return path.read_bytes()

    names = files(one) | files(other)
    differ = []
    for name in sorted(names):
        a, b = one / name, other / name
        if not (a.is_file() and b.is_file()) or text(a) != text(b):
            differ.append(name)
        elif name.endswith(".gz") and gzip.decompress(a.read_bytes()) != gzip.decompress(b.read_bytes()):
            differ.append(name)
    return differ, len(names)


def dask_versus_loky(tmp: Path, configs: tuple[str, ...] = tuple(PAPER_CONFIGS), rounds: int = 2) -> dict:
    """``configs`` run in one ``cabench run`` (as ``make reproduce`` runs them; each config's 2 workers) with
    ``--backend loky`` and ``--backend dask`` (one local cluster for the process), each in a fresh process and a new
    folder (no cell reused), alternating, ``rounds`` times each: the best wall time of each, their ratio (the target:
    at most 1.15) and whether the result folders' files are byte-identical."""
    cli = [sys.executable, "-c", "from cabench.cli import main; main()", "run",
           *(str(ROOT / "configs" / f"{c}.yaml") for c in configs)]
    work = tmp / "work"  # one folder for every run (the datasets' paths are recorded), its results moved after each
    work.mkdir()
    (work / "data").symlink_to(ROOT / "data")  # the configs name their datasets relative to the project
    load_before = os.getloadavg()
    walls: dict[str, list[float]] = {"loky": [], "dask": []}
    for i in range(rounds):
        for backend in walls:
            start = time.perf_counter()
            subprocess.run([*cli, "--backend", backend, "--quiet"], cwd=work, check=True, capture_output=True)
            walls[backend].append(time.perf_counter() - start)
            (work / "results").rename(tmp / f"{backend}-{i}")
    differ, compared = _same_files(tmp / "loky-0", tmp / "dask-0")
    return {"config": f"{len(configs)} configs in one run" if len(configs) > 1 else configs[0],
            "loky_s": min(walls["loky"]), "dask_s": min(walls["dask"]), "walls": walls,
            "ratio": min(walls["dask"]) / min(walls["loky"]), "files_compared": compared, "files_differ": differ,
            "load_before": load_before, "load_after": os.getloadavg()}


def dask_markdown(section: dict) -> str:
    same = "byte-identical" if not section["files_differ"] else f"DIFFERENT: {', '.join(section['files_differ'][:5])}"
    rounds = len(section["walls"]["loky"])
    return "\n".join([
        "", f"## Dask against loky (`{section['config']}`, 2 workers, best of {rounds} each)", "", _loads(section), "",
        "| backend | wall (s) | runs (s) |", "|---|---|---|",
        *(f"| {b} | {section[f'{b}_s']:.1f} | {', '.join(f'{w:.1f}' for w in section['walls'][b])} |"
          for b in ("loky", "dask")),
        "", f"Dask / loky: {section['ratio']:.2f}. Files ({section['files_compared']}): {same}.", ""])


def targets(results: dict) -> list[dict]:
    """Every ratio with a performance target, measured in this run, next to its target: ``(what, value, target
    text, met, load average when it was measured)``; a section this run skipped is listed as not measured."""
    rows: list[dict] = []

    def add(what: str, value: float | None, target: str, met: bool | None, load: tuple | None) -> None:
        rows.append({"what": what, "value": value, "target": target, "met": met, "load": load})

    section = results.get("identification")
    for name in ("copsi", "psi-sr"):
        row = next((r for r in section["rows"] if r["method"] == name), None) if section else None
        load = section["load_before"] if section else None
        add(f"identification {name}: s/rep K=1000 over K=132 (synthetic Gaussian, rho 20)",
            row and row["growth"], "<= 60", row and row["growth"] <= 60, load)
        add(f"identification {name}: K=1000, cubic algorithm over kept gaps", row and row["speedup_over_cubic"],
            ">= 20", row and row["speedup_over_cubic"] >= 20, load)
    section = results.get("online")
    for reps in (50, 200):
        row = next((r for r in section["rows"] if r["reps"] == reps), None) if section else None
        add(f"online CoHV-UCB GSM8K rho 32, {reps} reps: pulls/s over the engine before (bit-identical)",
            row and row["ratio"], ">= 5", row and row["ratio"] >= 5, section and section["load_before"])
    engines = {r["what"].split()[0]: r for r in results.get("engines", [])}
    for kind, limit in (("online", 500), ("identification", 2000)):
        row = engines.get(kind)
        add(f"{kind} against its per-pull reference, identical work", row and row["ratio"], f">= {limit:,}",
            row and row["ratio"] >= limit, row and row["load_before"])
    section = results.get("dask")
    ok = section and not section["files_differ"]
    add(f"dask over loky wall time ({section['config'] if section else 'a config'}), files byte-identical",
        section and section["ratio"], "<= 1.15, identical", section and section["ratio"] <= 1.15 and ok,
        section and section["load_before"])
    return rows


def targets_markdown(rows: list[dict]) -> str:
    lines = ["", "## Targets (ratios measured in this run)", "",
             "| ratio | measured | target | status | load average (1, 5, 15 min) at its start |",
             "|---|---|---|---|---|"]
    for r in rows:
        status = "not measured" if r["met"] is None else ("met" if r["met"] else "NOT MET")
        digits = 2 if r["value"] is None or r["value"] < 10 else 1 if r["value"] < 100 else 0
        value = "" if r["value"] is None else f"{r['value']:,.{digits}f}"
        lines.append(f"| {r['what']} | {value} | {r['target']} | {status} | {_load(r['load']) if r['load'] else ''} |")
    return "\n".join(lines) + "\n"


def markdown(results: dict) -> str:
    lines = ["# cabench benchmark", "", f"Machine: {results['machine']}", "",
             "## Batched engines against their per-pull references (identical work)", "",
             f"Batched: the best of 5 calls after {WARMUP} untimed ones (in brackets the best of a process's first 5).",
             "", "| work | pulls | batched (s) | reference (s) | batched pulls/s | reference pulls/s | ratio | "
             "load before, after |", "|---|---|---|---|---|---|---|---|"]
    for r in results["engines"]:
        lines.append(f"| {r['what']} | {r['pulls']} | {r['batched_s']:.5f} ({r['batched_first_s']:.5f}) | "
                     f"{r['reference_s']:.2f} | {r['batched_pulls_per_s']:,.0f} | {r['reference_pulls_per_s']:,.0f} | "
                     f"{r['ratio']:.0f}x ({r['ratio_first']:.0f}x) | "
                     f"{_load(r['load_before'])}; {_load(r['load_after'])} |")
    if results.get("configs"):
        lines += ["", "## Paper-scale configs, each in a fresh process", "",
                  "| config | wall (s) | of which running (s) | peak memory, main (MB) | peak memory, a worker (MB) |",
                  "|---|---|---|---|---|"]
        for r in results["configs"]:
            lines.append(f"| {r['config']} | {r['wall_s']:.1f} | {r['run_s']:.1f} | {r['peak_main_mb']:.0f} | "
                         f"{r['peak_worker_mb']:.0f} |")
    if results.get("scaling"):
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
    parser.add_argument("--targets-only", action="store_true",
                        help="only what the targets table needs: engines against references, identification at "
                             "large K, the compiled online loop, dask against loky")
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
    results["load_before"] = os.getloadavg()
    results["engines"] = [online_versus_reference(), psi_versus_reference()]
    for r in results["engines"]:
        print(f"{r['what']}: batched {r['batched_pulls_per_s']:,.0f} pulls/s, reference "
              f"{r['reference_pulls_per_s']:,.0f} pulls/s, ratio {r['ratio']:.0f}x", flush=True)
    if not (args.skip_configs or args.targets_only):
        with tempfile.TemporaryDirectory() as tmp:
            results["configs"] = config_runs(Path(tmp) / "configs")
            for r in results["configs"]:
                print(f"{r['config']}: {r['wall_s']:.1f} s, peak {max(r['peak_main_mb'], r['peak_worker_mb']):.0f} MB",
                      flush=True)
            rep = results["reproduce"] = reproduce(Path(tmp))
            print(f"make reproduce: runs {rep['run_s']:.1f} s, post-processing {rep['post_s']:.1f} s "
                  f"({rep['post_over_run']:.2f} of the runs), again cached {rep['cached_make_s']:.1f} s, results "
                  f"{rep['results_mb']:.1f} MB", flush=True)
    if not args.targets_only:
        results["scaling"] = scaling()
    results["identification"] = identification_scaling()
    results["online"] = online_compiled()
    with tempfile.TemporaryDirectory() as tmp:
        results["dask"] = dask_versus_loky(Path(tmp))
    results["load_after"] = os.getloadavg()
    results["targets"] = targets(results)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    text = markdown(results) + identification_markdown(results["identification"])
    text += online_markdown(results["online"]) + dask_markdown(results["dask"])
    if "reproduce" in results:
        text += reproduce_markdown(results["reproduce"])
    text += (f"\nLoad average (1, 5, 15 min) at the start of the run {_load(results['load_before'])}, at its end "
             f"{_load(results['load_after'])}.\n") + targets_markdown(results["targets"])
    (args.out / "results.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
