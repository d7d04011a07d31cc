"""The shipped surrogate logs known by their rows, so that logs holding them are surrogate wherever they lie.

``data/gsm8k`` and ``data/piqa`` hold surrogate logs (``scripts/make_surrogate_logs.py``), not real model outputs.
Logs imported from their folder are marked surrogate by where they lie (:func:`cabench.data.importer.surrogate_source`);
elsewhere they are recognised by their rows: which of its instances each configuration answered correctly
(:data:`MEASURED`: a thousand instance ids and as many outcomes, nothing a real evaluation repeats by chance), sorted
and hashed one way (:func:`configuration_digests`), so a copy in any file format, compression, line endings, row order
or number format is found, with its configurations renamed or not, its latency or tokens dropped, rescaled or
rounded, alone or among configurations of the user's own (one shipped configuration makes the logs surrogate). A
configuration with an outcome changed, or only some of its instances, is not. ``surrogate_logs.json`` beside this
module records each shipped configuration's digest and the shipped instance ids' first and last; the generator
writes it with the logs, and a test checks it against them.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

RECORD = Path(__file__).with_name("surrogate_logs.json")
#: What a configuration did on each instance: the rows compared (its name, metadata and measurements are not: they can
#: be renamed, dropped, rescaled or rounded).
MEASURED = ("instance_id", "correct")


class Found(NamedTuple):
    """Shipped surrogate logs (by name) whose configurations some logs hold: how many of how many."""

    name: str
    held: int
    configurations: int

    def describe(self) -> str:
        """``piqa shipped with cabench (132 of its 132 configurations)``."""
        return f"{self.name} shipped with cabench ({self.held} of its {self.configurations} configurations)"


def configuration_digests(frame: pd.DataFrame) -> dict[str, str]:
    """Each configuration's SHA-256 of its :data:`MEASURED` rows, sorted by instance, ids as UTF-8 and each outcome as
    the little-endian float64 it is (NaN where it is no number): the same rows give the same digest whatever file,
    name or order they came in."""
    rows = frame.loc[:, ["config_id", *MEASURED]].astype({"config_id": str, "instance_id": str})
    rows["correct"] = pd.to_numeric(rows["correct"], errors="coerce")
    rows = rows.sort_values(["config_id", "instance_id"], kind="mergesort")
    ids = rows["config_id"].to_numpy()
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    ends = np.r_[starts[1:], len(ids)]
    instances = rows["instance_id"].to_numpy()
    numbers = rows[list(MEASURED[1:])].to_numpy(dtype="<f8")
    out = {}
    for start, end in zip(starts, ends):
        h = hashlib.sha256("\0".join(instances[start:end]).encode("utf-8", "surrogatepass") + b"\0")
        h.update(np.ascontiguousarray(numbers[start:end]).tobytes())
        out[str(ids[start])] = h.hexdigest()
    return out


def record(frames: dict[str, pd.DataFrame]) -> dict[str, dict[str, Any]]:
    """Each shipped surrogate dataset's name: its instances per configuration and its configurations' digests
    (sorted), as RECORD holds them."""
    return {name: {"instances": int(frame.groupby("config_id").size().max()),
                   "instance_ids": [str(min(frame["instance_id"])), str(max(frame["instance_id"]))],
                   "configuration_sha256": sorted(configuration_digests(frame).values())}
            for name, frame in frames.items()}


def write_record(frames: dict[str, pd.DataFrame], path: Path = RECORD) -> None:
    """Write RECORD for the shipped surrogate datasets' logs (``scripts/make_surrogate_logs.py``)."""
    path.write_text(json.dumps(record(frames), indent=1, sort_keys=True) + "\n")


@functools.cache
def shipped() -> dict[str, dict[str, Any]]:
    """RECORD's content, read once per process; empty where it is missing or unreadable (nothing is then
    recognised)."""
    try:
        data = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return {}
    return {name: v for name, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def held(frame: pd.DataFrame) -> Found | None:
    """The shipped surrogate logs of which ``frame`` holds the most configurations (at least one), if any. Only logs
    naming a shipped instance and the configurations with as many rows as a shipped one has instances are digested;
    other logs cost a look-up of their instance ids."""
    if not names_shipped_instances(frame):
        return None
    known = shipped()
    sizes = frame.groupby("config_id", sort=False).size()
    alike = set(sizes.index[sizes.isin([v.get("instances") for v in known.values()])])
    if not alike:
        return None
    digests = set(configuration_digests(frame[frame["config_id"].isin(alike)]).values())
    found = [Found(name, len(digests & set(v.get("configuration_sha256", []))), len(v.get("configuration_sha256", [])))
             for name, v in known.items()]
    best = max(found, key=lambda f: f.held, default=None)
    return best if best is not None and best.held else None


def names_shipped_instances(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` has the columns :func:`held` compares and names a shipped instance (the first or last id
    RECORD holds): logs that do not cannot hold shipped rows."""
    if not {"config_id", *MEASURED} <= set(frame.columns):
        return False
    ids = {str(i) for v in shipped().values() for i in v.get("instance_ids", [])}
    return bool(frame["instance_id"].astype(str).isin(ids).any())


def folder_is_surrogate(folder: Path, frame: pd.DataFrame) -> bool:
    """Whether the logs ``frame`` of a dataset ``folder`` are surrogate: its ``dataset.yaml`` says so (a folder of logs
    without one is read as its logs; a damaged one is refused), or they hold rows of shipped surrogate logs
    (:func:`held`; a folder given them with ``surrogate: false`` by hand is surrogate all the same)."""
    from cabench.data.io import META_NAME, read_metadata

    meta = read_metadata(folder) if (folder / META_NAME).exists() else {}
    return meta.get("surrogate") is True or held(frame) is not None
