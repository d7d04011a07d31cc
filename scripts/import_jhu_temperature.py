"""Build ``data/jhu-temperature`` from a clone of matthewrenze/jhu-llm-temperature (BSD-2-Clause).

    python scripts/import_jhu_temperature.py <clone> [--out data/jhu-temperature]

The source evaluated 9 models with chain-of-thought prompting at temperatures 0.0-1.0, and GPT-3.5
Turbo with five prompting styles at 0.0-1.0 (chain of thought up to 1.6), on the 100 multiple-choice
problems of its ``comprehensive-100`` exam; every answer is the majority vote of 10 samples. One
``data/details/<model> - <prompting> - comprehensive-100 - temp-<t>.csv`` per configuration holds a
row per problem: its start time (``Date Time``, 1-second resolution), ``Score``, ``Input Tokens``,
``Output Tokens``, ``Total Tokens`` and ``Error``; ``data/results/results.csv`` holds each run's
``End Time``.

Per (configuration, problem) the logs keep only derived numbers, no question or answer text:

=================== ===========================================================================
column              source
=================== ===========================================================================
config_id           ``<model>_t<temperature>_g<max_new_tokens>_<prompting>``
model, prompting    ``Model Name``, ``Agent Name``
temperature         ``Temperature``
max_new_tokens      1000, the ``max_tokens`` every model class of the source sends
instance_id         ``p<Problem ID>`` zero-padded (``p001`` ... ``p100``)
correct             ``Score`` (the majority vote of the 10 samples is right)
prompt_tokens       ``Input Tokens``
completion_tokens   ``Output Tokens``
tokens              ``Total Tokens``; 0 (a failed call whose usage was not recorded) becomes 1
latency_s           next problem's start (the run's ``End Time`` for the last one) minus this
                    one's, in whole seconds; 0 (both in one second) becomes 0.5
=================== ===========================================================================

The two floors are the only changes to recorded values (the schema needs positive latency and
tokens); ``dataset.yaml`` records how many rows each touched, per configuration. Files are read in
sorted order and rows written sorted, so a re-run writes the same bytes. An empty details file (the
source has one, for a GPT-4o run it never completed) is skipped and listed.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cabench.data.dataset import load_dataset  # noqa: E402
from cabench.data.importer import config_ids  # noqa: E402
from cabench.data.io import write_logs, write_metadata  # noqa: E402

REPOSITORY = "https://github.com/matthewrenze/jhu-llm-temperature"
EXAM = "comprehensive-100"
DETAILS = f"data/details/*{EXAM}*.csv"
RESULTS = "data/results/results.csv"
MAX_NEW_TOKENS = 1000
#: Latency of a problem whose start and the next start fall in the same second: half the timestamps' resolution.
LATENCY_FLOOR_S = 0.5
#: Tokens of a failed call whose usage the source did not record: the smallest count the schema accepts.
TOKEN_FLOOR = 1
PROFILING_SIZE = 30
COLUMNS = ["Date Time", "Model Name", "Agent Name", "Exam Name", "Temperature", "Problem ID", "Score",
           "Input Tokens", "Output Tokens", "Total Tokens", "Error"]


def _seconds(stamps: pd.Series) -> np.ndarray:
    """Timestamps written as ``%Y-%m-%d %H:%M:%S`` as whole seconds since the epoch."""
    parsed = pd.to_datetime(stamps, format="%Y-%m-%d %H:%M:%S").to_numpy()
    return parsed.astype("datetime64[s]").astype(np.int64)


def run_end(results: pd.DataFrame, model: str, prompting: str, temperature: float) -> int:
    """The ``End Time`` (seconds) that ``results.csv`` records for one run; exactly one row must match."""
    row = results[(results["Model Name"] == model) & (results["Agent Name"] == prompting)
                  & (results["Exam Name"] == EXAM) & (results["Temperature"] == temperature)]
    if len(row) != 1:
        raise SystemExit(f"{RESULTS}: {len(row)} rows for {model} / {prompting} / temperature {temperature}; "
                         "expected one")
    return int(_seconds(row["End Time"])[0])


def read_run(path: Path, results: pd.DataFrame) -> pd.DataFrame:
    """One configuration's 100 problems as canonical rows, before the floors."""
    raw = pd.read_csv(path, usecols=COLUMNS, keep_default_na=False)
    for column in ("Model Name", "Agent Name", "Exam Name", "Temperature"):
        if raw[column].nunique() != 1:
            raise SystemExit(f"{path}: column '{column}' varies within the file")
    if raw["Problem ID"].tolist() != list(range(1, len(raw) + 1)):
        raise SystemExit(f"{path}: problems are not numbered 1..{len(raw)} in order")
    if not (raw["Total Tokens"] == raw["Input Tokens"] + raw["Output Tokens"]).all():
        raise SystemExit(f"{path}: 'Total Tokens' differs from 'Input Tokens' + 'Output Tokens'")
    model, prompting = str(raw["Model Name"].iloc[0]), str(raw["Agent Name"].iloc[0])
    temperature = float(raw["Temperature"].iloc[0])
    starts = _seconds(raw["Date Time"])
    gaps = np.diff(np.append(starts, run_end(results, model, prompting, temperature)))
    if (gaps < 0).any():
        raise SystemExit(f"{path}: start times go backwards")
    frame = pd.DataFrame({
        "model": model, "temperature": temperature, "max_new_tokens": MAX_NEW_TOKENS, "prompting": prompting,
        "instance_id": [f"p{int(p):03d}" for p in raw["Problem ID"]],
        "correct": raw["Score"].astype(int),
        "latency_s": gaps.astype(float),
        "tokens": raw["Total Tokens"].astype(int),
        "prompt_tokens": raw["Input Tokens"].astype(int),
        "completion_tokens": raw["Output Tokens"].astype(int),
        "failed": raw["Error"].astype(str).str.strip() != "",
    })
    frame.insert(0, "config_id", config_ids(frame))
    return frame


def _by_configuration(frame: pd.DataFrame, mask: pd.Series) -> dict[str, int]:
    counts = frame.loc[mask, "config_id"].value_counts()
    return {str(k): int(counts[k]) for k in sorted(counts.index)}


def _digest(clone: Path, files: list[Path]) -> str:
    """SHA-256 over the relative path and bytes of every file read, in the order read."""
    h = hashlib.sha256()
    for path in files:
        h.update(path.relative_to(clone).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _commit(clone: Path) -> str | None:
    """The clone's checked-out commit, when it is a git clone (not a folder inside another repository)."""
    if not (clone / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True,
                             check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def build(clone: Path) -> tuple[pd.DataFrame, dict]:
    """The canonical logs of every non-empty details file, and what the import did (for ``dataset.yaml``)."""
    results_path = clone / RESULTS
    if not results_path.is_file():
        raise SystemExit(f"{results_path}: not found; pass the root of a jhu-llm-temperature clone")
    results = pd.read_csv(results_path)
    paths = sorted(clone.glob(DETAILS))
    read = [p for p in paths if p.stat().st_size > 0]
    if not read:
        raise SystemExit(f"{clone}: no {DETAILS} files; pass the root of a jhu-llm-temperature clone")
    frame = pd.concat([read_run(p, results) for p in read], ignore_index=True)
    frame = frame.sort_values(["model", "prompting", "temperature", "instance_id"], kind="stable",
                              ignore_index=True)
    zero_latency, zero_tokens = frame["latency_s"] == 0, frame["tokens"] == 0
    frame.loc[zero_latency, "latency_s"] = LATENCY_FLOOR_S
    frame.loc[zero_tokens, "tokens"] = TOKEN_FLOOR
    provenance = {
        "repository": REPOSITORY,
        "commit": _commit(clone),
        "files": {"details": DETAILS, "results": RESULTS, "read": len(read),
                  "skipped_empty": [p.relative_to(clone).as_posix() for p in paths if p.stat().st_size == 0],
                  "sha256": _digest(clone, [*read, results_path])},
        "script": "scripts/import_jhu_temperature.py",
        "samples_per_answer": 10,
        "latency": {
            "derived_from": "per-problem start times at 1-second resolution (Date Time); the last problem ends "
                            "at the run's End Time in results.csv",
            "zero_second_floor_s": LATENCY_FLOOR_S,
            "floored_rows": int(zero_latency.sum()),
            "floored_by_configuration": _by_configuration(frame, zero_latency),
        },
        "tokens": {
            "derived_from": "Total Tokens = Input Tokens + Output Tokens (kept as prompt_tokens, completion_tokens)",
            "zero_floor": TOKEN_FLOOR,
            "floored_rows": int(zero_tokens.sum()),
            "floored_by_configuration": _by_configuration(frame, zero_tokens),
        },
        "failed_calls": {
            "policy": "kept as the source scored them (correct only when the majority of the samples it did "
                      "get was right)",
            "rows": int(frame["failed"].sum()),
            "by_configuration": _by_configuration(frame, frame["failed"]),
        },
    }
    return frame.drop(columns="failed"), provenance


def metadata(frame: pd.DataFrame, provenance: dict) -> dict:
    k, n = frame["config_id"].nunique(), frame["instance_id"].nunique()
    return {
        "name": "jhu-temperature",
        "title": "JHU temperature MCQA",
        "surrogate": False,
        "description": (
            f"REAL evaluation logs: {k} LLM configurations on {n} multiple-choice problems (the "
            f"'{EXAM}' exam of Renze and Guven, 'The Effect of Sampling Temperature on Problem Solving in "
            "Large Language Models', EMNLP Findings 2024): 9 models with chain-of-thought prompting at "
            "temperatures 0.0-1.0, and GPT-3.5 Turbo with 5 prompting styles at 0.0-1.0 (chain of thought "
            "up to 1.6); each answer is the majority vote of 10 samples, generation limit 1000 tokens. "
            "Scores and token counts are the source's; latency is derived from per-problem start times at "
            "1-second resolution (a problem's wall time, all 10 samples and the harness's own pauses "
            "included), with 0-second gaps set to 0.5 s and unrecorded (0) token counts of failed calls "
            "set to 1 (provenance counts both). No question or answer text is included."),
        "provenance": provenance,
        "licence": "BSD-2-Clause, Copyright (c) 2023, Matthew Renze (LICENSE beside the logs)",
        "split": {"profiling_size": PROFILING_SIZE, "seed": 0},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clone", type=Path, help="root of a clone of matthewrenze/jhu-llm-temperature")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "jhu-temperature")
    args = parser.parse_args(argv)
    frame, provenance = build(args.clone)
    args.out.mkdir(parents=True, exist_ok=True)
    write_logs(frame, args.out / "logs.csv.gz", compresslevel=9)
    write_metadata(metadata(frame, provenance), args.out / "dataset.yaml")
    shutil.copyfile(args.clone / "LICENSE", args.out / "LICENSE")
    ds = load_dataset(args.out)
    print(f"{args.out}: {ds.n_arms} configurations x {frame['instance_id'].nunique()} problems; latency floored "
          f"on {provenance['latency']['floored_rows']} rows, tokens on {provenance['tokens']['floored_rows']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
