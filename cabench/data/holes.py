"""Which (configuration, instance) cells an import keeps: repeats, failed calls, unmeasured rows, holes (SPEC §1).

The engines replay a rectangle of (configuration, instance) outcomes, one per
cell. Real logs repeat cells (a configuration run twice), hold failed calls and
rows without a measurement, and have holes; ``cabench data import``'s
``--repeats``, ``--failed``, ``--unmeasured`` and ``--missing`` (and a
dataset's ``missing`` key in ``dataset.yaml``, e.g. a live run's log) say what
to keep. Each policy returns the rows it keeps and what it did, for the
provenance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from cabench.data.schema import (
    CONFIG_COLUMNS,
    MEASURE_COLUMNS,
    check_constant_metadata,
    check_duplicates,
    data_row,
    shown,
)
from cabench.errors import CabenchError

MISSING = ("error", "drop-instances", "drop-configs")
REPEATS = ("refuse", "latest", "first", "epochs")
FAILED = ("incorrect", "drop")
UNMEASURED = ("drop", "refuse")
#: Each policy's option and its choices.
POLICIES = {"--repeats": REPEATS, "--failed": FAILED, "--unmeasured": UNMEASURED, "--missing": MISSING}
#: How the import's refusal of a repeated (configuration, instance) pair says what would fix it.
REPEATS_FIX = ("pass --repeats latest, first or epochs (keep the latest or the first run, or count the runs as "
               "epochs), or tell configurations apart by their metadata")


def check_policy(flag: str, value: str) -> None:
    """Refuse a policy that is not one of its option's choices (:data:`POLICIES`), in one line naming ``flag``."""
    if value not in POLICIES[flag]:
        raise CabenchError(f"{flag}: '{value}' is not one of {', '.join(POLICIES[flag])}")


def count_by(frame: pd.DataFrame, mask: pd.Series) -> dict[str, int]:
    """How many rows of ``mask`` each configuration has."""
    counts = frame.loc[mask, "config_id"].astype(str).value_counts(sort=False)
    return {str(k): int(v) for k, v in sorted(counts.items())}


def placed(frame: pd.DataFrame, place: Callable[[int], str]) -> Callable[[int], str]:
    """``place`` of a row at a position of ``frame``, whose index holds the rows' positions in what was read."""
    return lambda position: place(int(frame.index[position]))


def resolve_repeats(frame: pd.DataFrame, policy: str, order: np.ndarray, label: str,
                    place: Callable[[int], str], fix: str = REPEATS_FIX) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Apply ``--repeats`` to (configuration, instance) pairs read more than once.

    ``order`` ranks the rows by run (when each run started, then file and
    position). ``refuse`` names where the first repeated pair was read twice, and ``fix`` (what would fix it: the
    other policies; a reader may say first why its source repeats a pair);
    ``latest`` / ``first`` keep the pair's last / first run; ``epochs`` keeps
    every run, the k-th run of a pair (in ``order``) as instance ``<id>#k``
    (every pair is numbered, so a configuration run fewer times has holes).
    """
    check_policy("--repeats", policy)
    pairs = frame[["config_id", "instance_id"]].astype(str)
    repeated = pairs.duplicated(keep=False).to_numpy()
    if not repeated.any():
        return frame, {}
    check_constant_metadata(_as_compared(frame), label, placed(frame, place),
                            "rows of one config_id that differ in it are runs of other configurations, not repeated "
                            "runs: give each configuration its own config_id (or none, to derive it from the metadata)")
    if policy == "refuse":
        metadata = {c: frame[c] for c in CONFIG_COLUMNS if c in frame}
        # with the empty cells as such (text NaN on pandas 2) and the metadata a config_id is built from, so that an
        # empty one is named as empty rather than as a duplicated pair
        empty = pairs.where(frame[["config_id", "instance_id"]].notna())
        check_duplicates(empty.assign(**metadata), label, placed(frame, place), fix)
    ranked = frame.assign(_order=order).sort_values("_order", kind="stable")
    keys = [ranked["config_id"].astype(str), ranked["instance_id"].astype(str)]
    once = repeated & ~pairs.duplicated(keep="first").to_numpy()  # each repeated pair counted once, at its first row
    record = {"policy": policy, "pairs": int(once.sum()),
              "by_configuration": count_by(frame, pd.Series(once, index=frame.index))}  # pairs, as "pairs" counts
    if policy == "epochs":
        run = ranked.groupby(keys, sort=False).cumcount() + 1
        ranked = ranked.assign(instance_id=ranked["instance_id"].astype(str) + "#" + run.astype(str))
        kept = ranked.sort_index()
    else:
        kept = ranked[~pd.concat(keys, axis=1).duplicated(keep="last" if policy == "latest" else "first")]
        kept = kept.sort_index()
        record["rows_dropped"] = int(len(frame) - len(kept))
    return kept.drop(columns="_order"), record


def _as_compared(frame: pd.DataFrame) -> pd.DataFrame:
    """The config_id and metadata of ``frame`` as the dataset will hold them, for telling repeated runs of a
    configuration from runs of another: names stripped, numbers as numbers ('0.70' is 0.7), empty cells alike."""
    out = pd.DataFrame({"config_id": frame["config_id"].astype(str)}, index=frame.index)
    for col in (c for c in CONFIG_COLUMNS if c in frame):
        text = frame[col].astype(str).str.strip().where(frame[col].notna(), "")
        if col in ("temperature", "max_new_tokens"):
            numbers = pd.to_numeric(frame[col], errors="coerce")
            text = text.where(numbers.isna(), numbers.astype(float).astype(str))
        out[col] = text
    return out


def failed_calls(frame: pd.DataFrame, failed: pd.Series, policy: str,
                 echo: Callable[[str], None]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Apply ``--failed``: a failed call scores 0 (``incorrect``) or leaves a hole (``drop``)."""
    check_policy("--failed", policy)
    n = int(failed.sum())
    if not n:
        return frame, {}
    record = {"policy": policy, "calls": n, "by_configuration": count_by(frame, failed)}
    if policy == "incorrect":
        frame = frame.copy()
        frame.loc[failed, "correct"] = 0.0
        costless = failed.to_numpy() & _no_cost(frame)
        unknown = (f"; {int(costless.sum())} of them recorded no latency or token count: their cost is unknown, they "
                   "are not measured (below)") if costless.any() else ""
        echo(f"failed calls: {n}, scored as incorrect (--failed incorrect){unknown}")
        return frame, record
    echo(f"failed calls: {n}, dropped (--failed drop)")
    return frame[~failed], record


def _measures(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each measure column of ``frame`` (latency, tokens) as floats, text as NaN."""
    return {col: pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float)
            for col in MEASURE_COLUMNS if col in frame}


def _empty(values: np.ndarray) -> np.ndarray:
    """Where a measure is empty or 0: the call's cost is unknown, it cannot be replayed."""
    return np.isnan(values) | (values == 0)


def _no_cost(frame: pd.DataFrame) -> np.ndarray:
    """Rows with a latency or token count that is empty or 0 (what :func:`unmeasured_rows` drops, scores aside)."""
    out = np.zeros(len(frame), dtype=bool)
    for values in _measures(frame).values():
        out |= _empty(values)
    return out


def unmeasured_rows(frame: pd.DataFrame, policy: str, label: str, place: Callable[[int], str],
                    echo: Callable[[str], None], cached: int = 0) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Apply ``--unmeasured`` to rows without a score, or whose latency or token count is empty or zero.

    Such a row cannot be replayed: ``drop`` leaves it out (counted per
    configuration; the hole follows ``--missing``), ``refuse`` names where the
    first was read. A negative latency or token count is a damaged log, refused
    either way. Logs whose every latency is empty or 0 time nothing: they are kept without ``latency_s``, unless
    the reader left ``cached`` rows' latency blank as answered from a tool's cache (promptfoo's), which were timed
    but not measured; the messages say how many of the rows read were.
    """
    check_policy("--unmeasured", policy)
    latency = _measures(frame).get("latency_s")
    if not cached and latency is not None and len(latency) and _empty(latency).all():  # no latency at all
        echo("no row has a latency (latency_s empty or 0 on every row): the dataset is written without one, and "
             "its objectives must leave latency out (objectives: [accuracy, cost])")
        frame = frame.drop(columns=["latency_s"])
    bad = frame["correct"].isna().to_numpy()
    lacking = {"no score": int(bad.sum())}  # rows lacking each, for the messages
    for col, values in _measures(frame).items():
        negative = values < 0
        if negative.any():
            row = int(np.flatnonzero(negative)[0])
            raise CabenchError(f"{label}: column '{col}' is not positive at {placed(frame, place)(row)} "
                               f"({values[row]:g}); a negative time or count is a damaged log")
        empty = _empty(values)
        lacking[f"{col} empty or 0"] = int(empty.sum())
        bad = bad | empty
    n = int(bad.sum())
    if not n:
        return frame, {}
    which = ", ".join(f"{why}: {k}" for why, k in lacking.items() if k)
    if cached:  # their latency left blank by the reader: said apart, as the reader counted them
        which += (f"; of the rows read, {cached} {'were' if cached > 1 else 'was'} answered from the tool's cache, "
                  "with no latency of a call (run it again without the cache)")
    if policy == "drop" and n == len(frame):
        raise CabenchError(f"{label}: none of the {n} rows is measured ({which}); nothing can be replayed")
    if policy == "refuse":
        row = int(np.flatnonzero(bad)[0])
        raise CabenchError(f"{label}: {n} {'rows are' if n > 1 else 'row is'} not measured (no score, or a latency "
                           f"or token count that is empty or 0), the first at {placed(frame, place)(row)}; pass "
                           "--unmeasured drop to leave them out")
    echo(f"not measured (no score, or a latency or token count that is empty or 0): {n} row{'s' if n > 1 else ''} "
         f"dropped ({which})")
    return frame[~bad], {"policy": policy, "rows": n, "by_configuration": count_by(frame, pd.Series(bad,
                                                                                                  index=frame.index))}


def fill_holes(frame: pd.DataFrame, missing: str, label: str, configurations: Sequence[str] = ()
               ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Make every configuration's instance set the same, as ``missing`` says (SPEC §1 needs it).

    A (configuration, instance) pair given twice is refused first, naming both rows: it is not a hole.
    ``error``: refuse, saying how many (configuration, instance) cells are missing; ``drop-configs``:
    keep the configurations evaluated on every instance any of them has; ``drop-instances``: keep the
    instances every configuration was evaluated on. ``configurations`` names those the logs had before rows were
    dropped (unmeasured, failed): one with no row left has every instance missing, never vanishes unsaid. Returns
    the frame and what was dropped.
    """
    check_policy("--missing", missing)
    if frame[["config_id", "instance_id"]].isna().any().any():
        return frame, {}  # reported by validation, row by row
    left = set(frame["config_id"].astype(str))
    gone = [str(c) for c in dict.fromkeys(configurations) if str(c) not in left]
    if gone and missing != "drop-configs":
        many = len(gone) > 1
        raise CabenchError(f"{label}: configuration{'s' if many else ''} {', '.join(gone[:5])}"
                           f"{f' and {len(gone) - 5} more' if len(gone) > 5 else ''} {'have' if many else 'has'} no "
                           "row left to replay (each of its rows lacks a score, a latency or a token count, or was a "
                           f"failed call dropped); pass --missing drop-configs to leave {'them' if many else 'it'} out")
    ids = frame["instance_id"].astype(str)
    by_config = ids.groupby(frame["config_id"], sort=False)
    distinct = by_config.nunique()
    if (by_config.size() != distinct).any():  # a repeated row, not a hole: say which, before counting holes
        check_duplicates(pd.DataFrame({"config_id": frame["config_id"], "instance_id": ids}), label, data_row)
    if (distinct == ids.nunique()).all() and not gone:
        return frame, {}  # every configuration has every instance
    sets = ids.groupby(frame["config_id"], sort=False).agg(frozenset)
    sets = pd.concat([sets, pd.Series([frozenset()] * len(gone), index=gone, dtype=object)]) if gone else sets
    union = frozenset().union(*sets)
    if all(st == union for st in sets):
        return frame, {}
    holes = sum(len(union) - len(st) for st in sets)
    measured = [st for st in sets if st]  # (a configuration with no row left shares nothing, and says nothing)
    if len(measured) > 1 and sum(len(st) for st in measured) == len(union):  # no id under two configurations
        raise CabenchError(f"{label}: no instance id appears under two configurations ({len(union)} ids for "
                           f"{len(measured)} configurations): the logs are of different tasks (import one task at a "
                           "time), or instance_id holds ids of rows, not of instances (map it to the column naming "
                           "each question or example, --mapping)")
    if missing == "error":
        short = int(sum(st != union for st in sets))
        config, lacking = next((c, st) for c, st in sets.items() if st != union)
        instance = next(i for i in dict.fromkeys(ids) if i not in lacking)  # in the order the logs give them
        raise CabenchError(f"{label}: {holes} (configuration, instance) cells are missing in {short} of {len(sets)} "
                           f"configurations (the first: configuration {shown(config)} on instance {shown(instance)}); "
                           "pass --missing drop-configs (keep configurations with every instance) or --missing "
                           "drop-instances (keep instances every configuration has)")
    keep = [c for c, st in sets.items() if st == union]
    common = frozenset.intersection(*sets)
    neither = (f"neither --missing policy leaves a dataset: {len(keep)} of {len(sets)} configurations have every "
               f"instance and {len(common)} instances every configuration (logs of different tasks or benchmarks "
               "are imported one task at a time)")
    if missing == "drop-configs":
        if len(keep) < 2:
            raise CabenchError(f"{label}: --missing drop-configs keeps {len(keep)} configuration(s); " + (
                "try --missing drop-instances" if common else neither))
        dropped = {str(c): f"{len(union) - len(st)} of {len(union)} instances missing"
                   for c, st in sets.items() if st != union}
        return frame[frame["config_id"].isin(keep)], {"policy": missing, "configurations": dropped}
    if not common:
        raise CabenchError(f"{label}: no instance was evaluated by every configuration; " + (
            "try --missing drop-configs" if len(keep) >= 2 else neither))
    out = frame[frame["instance_id"].astype(str).isin(common)]
    return out, {"policy": missing, "instances_dropped": len(union) - len(common), "instances_kept": len(common)}
