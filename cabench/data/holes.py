"""Configurations evaluated on different instances: refuse, or keep the complete part (SPEC §1).

The engines replay a rectangle of (configuration, instance) outcomes. Real
logs have holes; ``cabench data import --missing`` and a dataset's
``missing`` key (``dataset.yaml``, e.g. a live run's log) say what to keep.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from cabench.data.schema import check_duplicates, data_row
from cabench.errors import CabenchError

MISSING = ("error", "drop-instances", "drop-configs")


def fill_holes(frame: pd.DataFrame, missing: str, label: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Make every configuration's instance set the same, as ``missing`` says (SPEC §1 needs it).

    A (configuration, instance) pair given twice is refused first, naming both rows: it is not a hole.
    ``error``: refuse, saying how many (configuration, instance) cells are missing; ``drop-configs``:
    keep the configurations evaluated on every instance any of them has; ``drop-instances``: keep the
    instances every configuration was evaluated on. Returns the frame and what was dropped.
    """
    if missing not in MISSING:
        raise CabenchError(f"--missing: '{missing}' is not one of {', '.join(MISSING)}")
    if frame[["config_id", "instance_id"]].isna().any().any():
        return frame, {}  # reported by validation, row by row
    ids = frame["instance_id"].astype(str)
    by_config = ids.groupby(frame["config_id"], sort=False)
    distinct = by_config.nunique()
    if (by_config.size() != distinct).any():  # a repeated row, not a hole: say which, before counting holes
        check_duplicates(pd.DataFrame({"config_id": frame["config_id"], "instance_id": ids}), label, data_row)
    if (distinct == ids.nunique()).all():
        return frame, {}  # every configuration has every instance
    sets = ids.groupby(frame["config_id"], sort=False).agg(frozenset)
    union = frozenset().union(*sets)
    if all(st == union for st in sets):
        return frame, {}
    holes = sum(len(union) - len(st) for st in sets)
    if missing == "error":
        short = int(sum(st != union for st in sets))
        raise CabenchError(f"{label}: {holes} (configuration, instance) cells are missing in {short} of {len(sets)} "
                           "configurations; pass --missing drop-configs (keep configurations with every instance) "
                           "or --missing drop-instances (keep instances every configuration has)")
    if missing == "drop-configs":
        keep = [c for c, st in sets.items() if st == union]
        if len(keep) < 2:
            raise CabenchError(f"{label}: --missing drop-configs keeps {len(keep)} configuration(s); try "
                               "--missing drop-instances")
        dropped = {str(c): f"{len(union) - len(st)} of {len(union)} instances missing"
                   for c, st in sets.items() if st != union}
        return frame[frame["config_id"].isin(keep)], {"policy": missing, "configurations": dropped}
    common = frozenset.intersection(*sets)
    if not common:
        raise CabenchError(f"{label}: no instance was evaluated by every configuration; try --missing drop-configs")
    out = frame[frame["instance_id"].astype(str).isin(common)]
    return out, {"policy": missing, "instances_dropped": len(union) - len(common), "instances_kept": len(common)}
