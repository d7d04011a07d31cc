"""Check data/jhu-temperature against the source repository's own files.

    python scripts/check_jhu_temperature.py <jhu-llm-temperature clone> [dataset folder] [--table]

Reads the source's ``data/details/*comprehensive-100*.csv`` and ``data/results/results.csv`` with
Python's csv module (nothing of the importer is used) and compares, per configuration (model,
prompting, temperature):

- accuracy: the mean ``Score`` and the run's ``Accuracy`` in results.csv, against the shipped mean
  ``correct``;
- mean tokens: the mean ``Input Tokens``, ``Output Tokens`` and ``Total Tokens`` (and results.csv's
  ``Tokens per Question``) against the shipped ``prompt_tokens``, ``completion_tokens`` and their sum;
- the shipped ``tokens`` row by row: ``Total Tokens``, or 1 where the source recorded 0;
- the shipped ``latency_s`` row by row: the next problem's start minus this one's (the run's ``End
  Time`` for the last), or 0.5 s where that is 0; and the runs' summed latency before that floor
  against results.csv's ``Runtime`` (exact to a second, not equal: the stamps have 1-second resolution).

Prints one line per check and exits 1 on any difference; ``--table`` also prints each configuration's
accuracy and mean tokens as computed from the source.
"""

from __future__ import annotations

import csv
import gzip
import sys
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

EXAM = "comprehensive-100"
STAMP = "%Y-%m-%d %H:%M:%S"
csv.field_size_limit(2**31 - 1)


def _seconds(text: str) -> int:
    return int(datetime.strptime(text, STAMP).replace(tzinfo=UTC).timestamp())


def source_runs(clone: Path) -> dict[tuple[str, str, float], dict]:
    """Per (model, prompting, temperature): the source's per-problem rows and its results.csv row."""
    with open(clone / "data" / "results" / "results.csv", newline="", encoding="utf-8") as f:
        results = {(r["Model Name"], r["Agent Name"], float(r["Temperature"])): r
                   for r in csv.DictReader(f) if r["Exam Name"] == EXAM}
    runs = {}
    for path in sorted((clone / "data" / "details").glob(f"*{EXAM}*.csv")):
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        if not rows:
            continue
        key = (rows[0]["Model Name"], rows[0]["Agent Name"], float(rows[0]["Temperature"]))
        runs[key] = {"rows": rows, "summary": results[key]}
    return runs


def expected(run: dict) -> dict:
    """What the shipped logs must hold for one run, computed from the source's rows."""
    rows, summary = run["rows"], run["summary"]
    starts = [_seconds(r["Date Time"]) for r in rows] + [_seconds(summary["End Time"])]
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    n = len(rows)
    return {
        "n": n,
        "accuracy": sum(int(r["Score"]) for r in rows) / n,
        "reported_accuracy": float(summary["Accuracy"]),
        "prompt": sum(int(r["Input Tokens"]) for r in rows) / n,
        "completion": sum(int(r["Output Tokens"]) for r in rows) / n,
        "total": sum(int(r["Total Tokens"]) for r in rows) / n,
        "reported_total": float(summary["Tokens per Question"]),
        "tokens": [max(int(r["Total Tokens"]), 1) for r in rows],
        "latency": [g if g > 0 else 0.5 for g in gaps],
        "seconds": sum(gaps),
        "zero_gaps": sum(g == 0 for g in gaps),
        "zero_tokens": sum(int(r["Total Tokens"]) == 0 for r in rows),
        "runtime": float(summary["Runtime"]),
    }


def shipped_runs(dataset: Path) -> dict[tuple[str, str, float], list[dict]]:
    """The shipped rows per (model, prompting, temperature), in instance order."""
    runs: dict[tuple[str, str, float], list[dict]] = defaultdict(list)
    with gzip.open(dataset / "logs.csv.gz", "rt", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            runs[(r["model"], r["prompting"], float(r["temperature"]))].append(r)
    return {k: sorted(v, key=lambda r: r["instance_id"]) for k, v in runs.items()}


def compare(clone: Path, dataset: Path, table: bool = False) -> int:
    source, shipped = source_runs(clone), shipped_runs(dataset)
    if set(source) != set(shipped):
        print(f"configurations differ: {len(set(source) ^ set(shipped))} in one only")
        return 1
    worst: dict[str, float] = defaultdict(float)
    runtime_share, floor_shift, zero_gaps, zero_tokens = 0.0, 0.0, 0, 0
    for key in sorted(source):
        want, rows = expected(source[key]), shipped[key]
        mean = {col: sum(float(r[col]) for r in rows) / len(rows)
                for col in ("correct", "prompt_tokens", "completion_tokens", "tokens")}
        sums = sum(float(r["prompt_tokens"]) + float(r["completion_tokens"]) for r in rows) / len(rows)
        diffs = {
            "instances": abs(len(rows) - want["n"]),
            "accuracy vs Score": abs(mean["correct"] - want["accuracy"]),
            "accuracy vs results.csv Accuracy": abs(mean["correct"] - want["reported_accuracy"]),
            "prompt_tokens vs Input Tokens": abs(mean["prompt_tokens"] - want["prompt"]),
            "completion_tokens vs Output Tokens": abs(mean["completion_tokens"] - want["completion"]),
            "prompt+completion vs Total Tokens": abs(sums - want["total"]),
            "prompt+completion vs results.csv Tokens per Question": abs(sums - want["reported_total"]),
            "tokens vs Total Tokens (0 -> 1), per row": max(abs(float(r["tokens"]) - t)
                                                            for r, t in zip(rows, want["tokens"])),
            "latency_s vs start times (0 -> 0.5 s), per row": max(abs(float(r["latency_s"]) - t)
                                                                  for r, t in zip(rows, want["latency"])),
        }
        for name, value in diffs.items():
            worst[name] = max(worst[name], value)
        runtime_share = max(runtime_share, abs(want["seconds"] - want["runtime"]) / want["runtime"])
        floor_shift = max(floor_shift, mean["tokens"] - want["total"])
        zero_gaps, zero_tokens = zero_gaps + want["zero_gaps"], zero_tokens + want["zero_tokens"]
        if table:
            print(f"{key[0]:28s} {key[1]:16s} {key[2]:3.1f}  accuracy {want['accuracy']:.2f}  mean tokens "
                  f"{want['total']:.2f}  (input {want['prompt']:.2f}, output {want['completion']:.2f})  "
                  f"runtime per problem {want['runtime'] / want['n']:.4f} s")
    n_instances = {len(v) for v in shipped.values()}
    print(f"{dataset}: {len(shipped)} configurations x {', '.join(map(str, sorted(n_instances)))} instances")
    for name, value in worst.items():
        print(f"  largest |difference|, {name}: {value:.3g}")
    print(f"  source rows with a 0-second gap: {zero_gaps}; with 0 tokens recorded: {zero_tokens}; the 1-token "
          f"floor raises a configuration's mean tokens by at most {floor_shift:.2f}")
    print(f"  largest |summed latency before the 0.5 s floor - results.csv Runtime| / Runtime: "
          f"{100 * runtime_share:.3f}% (1-second stamps)")
    return 0 if not any(worst.values()) else 1


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--table"]
    if not 1 <= len(args) <= 2:
        sys.exit(__doc__.splitlines()[2].strip())
    folder = Path(args[1]) if len(args) == 2 else Path(__file__).resolve().parent.parent / "data" / "jhu-temperature"
    sys.exit(compare(Path(args[0]), folder, table="--table" in sys.argv))
