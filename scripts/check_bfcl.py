"""Check an imported BFCL dataset against the leaderboard's own score files.

    python scripts/check_bfcl.py <BFCL date folder> <dataset folder>

For every configuration kept in the dataset, the accuracy over its instances
must equal the score files' Σ correct_count / Σ total_count over the categories
the dataset kept. The score files are parsed here, independently of the
importer. Prints one line per date folder; exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd


def score_accuracy(folder: Path, model: str, categories: set[str]) -> float:
    scores = next(folder / n for n in ("score", "score-BFCL") if (folder / n).is_dir())
    correct = total = 0
    for path in (scores / model).rglob("*_score.json"):  # BFCL v4 files them in category subfolders
        category = re.sub(r"^BFCL_v\d+_", "", path.name[: -len("_score.json")])  # v3 and v4 prefix the name
        if category in categories:
            head = json.loads(path.read_text().splitlines()[0])
            correct += head["correct_count"]
            total += head["total_count"]
    return correct / total


def main(folder: Path, dataset: Path) -> int:
    logs = pd.read_csv(dataset / "logs.csv.gz", dtype={"instance_id": str, "config_id": str})
    # an instance id is "<category>_<n>" (the category may itself contain '_')
    categories = {i.rsplit("_", 1)[0] for i in logs["instance_id"]}
    worst, n = 0.0, 0
    for config, rows in logs.groupby("config_id"):
        mine = rows["correct"].mean()
        theirs = score_accuracy(folder, config, categories)
        worst = max(worst, abs(mine - theirs))
        n += 1
    k, m = logs["config_id"].nunique(), logs["instance_id"].nunique()
    print(f"{folder.name}: {k} configurations x {m} instances; largest |accuracy - score files| = {worst:.3g}")
    return 0 if worst == 0 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="the BFCL date folder (holding score/ or score-BFCL/)")
    parser.add_argument("dataset", type=Path, help="the dataset folder `cabench data import --format bfcl` wrote")
    args = parser.parse_args()
    sys.exit(main(args.folder, args.dataset))
