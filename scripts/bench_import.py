"""Time and memory of ``cabench data import`` on large logs (no timed tests; run by hand or ``make bench``).

    python scripts/bench_import.py [--rows 1000000] [--configs 50]

Writes a canonical CSV and the same logs as Every Eval Ever JSONL in a
temporary folder, imports each in a fresh process and prints wall time and
peak memory (the child's max RSS).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def logs(rows: int, configs: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = rows // configs
    config = np.repeat(np.arange(configs), n)
    return pd.DataFrame({
        "model": [f"model{c:03d}" for c in config], "temperature": 0.7, "max_new_tokens": 512,
        "prompting": "direct", "instance_id": np.tile([f"q{i:07d}" for i in range(n)], configs),
        "correct": (rng.random(len(config)) < 0.6).astype(int),
        "latency_s": np.round(rng.lognormal(0, 0.5, len(config)), 4),
        "tokens": rng.integers(50, 2000, len(config)),
    })


def timed(args: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return wall, peak_mb


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--configs", type=int, default=50)
    args = parser.parse_args()
    frame = logs(args.rows, args.configs)
    cabench = [sys.executable, "-m", "cabench.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        frame.to_csv(root / "logs.csv", index=False)
        with open(root / "samples.jsonl", "w") as fh:
            for r in frame.itertuples(index=False):
                fh.write(json.dumps({"model_id": r.model, "evaluation_name": "bench", "sample_id": r.instance_id,
                                     "evaluation": {"score": float(r.correct), "is_correct": bool(r.correct)},
                                     "token_usage": {"input_tokens": 0, "output_tokens": int(r.tokens),
                                                     "total_tokens": int(r.tokens)},
                                     "performance": {"latency_ms": r.latency_s * 1000}}) + "\n")
        print(f"{len(frame):,} rows, {args.configs} configurations; machine: {sys.platform}, "
              f"Python {sys.version.split()[0]}")
        runs = {"canonical CSV": [*cabench, "data", "import", str(root / "logs.csv"), "--out", str(root / "a")],
                "every-eval-ever JSONL": [*cabench, "data", "import", str(root / "samples.jsonl"), "--format",
                                          "every-eval-ever", "--out", str(root / "b"), "--set", "temperature=0.7",
                                          "--set", "max_new_tokens=512", "--set", "prompting=direct"]}
        for label, command in runs.items():
            wall, peak = timed(command)  # ru_maxrss of children is the largest child so far
            print(f"{label:24s} {wall:6.1f} s   peak RSS <= {peak:,.0f} MB")


if __name__ == "__main__":
    main()
