"""The sets identification runs return, as arrays: one membership row per run of ``runs.csv``.

``selections.csv`` holds one row per run and arm (``returned`` 0 or 1); the report, ``recommend`` and the
figures ask the same questions of it many times — which set each run returned (``P_hat`` of Algorithm 2, line 14),
how often a set or a configuration comes back, the returned set's hypervolume. :func:`returned_sets` reads the
table once into a ``[runs, arms]`` boolean matrix and numbers the distinct sets, so each of those questions is an
array operation instead of a pass over frozensets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from cabench.errors import CabenchError

#: The columns naming one identification run (a row of ``runs.csv``).
RUN_KEYS = ["method", "cost_mode", "rho", "rep"]


@dataclass(frozen=True)
class ReturnedSets:
    """``member[r, i]``: run ``r`` (``runs.csv`` order) returned arm ``i`` (``arms.csv`` order); ``sets`` the
    distinct rows of ``member`` and ``set_of[r]`` the index of run ``r``'s row among them."""

    names: tuple[str, ...]
    member: np.ndarray
    sets: np.ndarray
    set_of: np.ndarray

    def names_of(self, s: int) -> list[str]:
        """The configurations of distinct set ``s``, in ``arms.csv`` order."""
        return [self.names[i] for i in np.flatnonzero(self.sets[s])]

    def index_of(self, names: list[str] | tuple[str, ...] | frozenset[str]) -> int | None:
        """The index among ``sets`` of the set holding exactly ``names``; None when no run returned it."""
        wanted = np.isin(np.asarray(self.names, dtype=object), list(names))
        if wanted.sum() != len(set(names)):
            return None
        hits = np.flatnonzero((self.sets == wanted).all(axis=1))
        return int(hits[0]) if len(hits) else None


def returned_sets(runs: pd.DataFrame, selections: pd.DataFrame, arms: pd.DataFrame, where: str = "selections.csv"
                  ) -> ReturnedSets:
    """The membership matrix of the runs' returned sets (rows of ``selections`` with ``returned == 1``); a run with
    no such row returned the empty set. A returned row of a run ``runs`` lacks is refused (``where`` names the
    file)."""
    names = tuple(arms["config_id"].astype(str))
    if _in_run_order(runs, selections, names):  # as cabench writes it: the rows of a run together, in arms' order
        member = selections["returned"].to_numpy().reshape(len(runs), len(names)) == 1
        return ReturnedSets(names, member, *_distinct_rows(member))
    chosen = selections[selections["returned"] == 1]
    at_run = pd.MultiIndex.from_frame(runs[RUN_KEYS]).get_indexer(pd.MultiIndex.from_frame(chosen[RUN_KEYS]))
    at_arm = pd.Index(names).get_indexer(chosen["config_id"].astype(str))
    if (at_run < 0).any():
        row = int(np.flatnonzero(at_run < 0)[0])
        raise CabenchError(f"{where}: line {int(chosen.index[row]) + 2}: a returned configuration of a run that "
                           "runs.csv does not hold (a damaged file); run the experiment again")
    member = np.zeros((len(runs), len(names)), dtype=bool)
    member[at_run, at_arm] = True
    return ReturnedSets(names, member, *_distinct_rows(member))


def _in_run_order(runs: pd.DataFrame, selections: pd.DataFrame, names: tuple[str, ...]) -> bool:
    """Whether ``selections`` holds, for each run of ``runs`` in turn, one row per arm of ``names`` in that order
    (then its ``returned`` column, reshaped, is the membership matrix)."""
    n, k = len(runs), len(names)
    if not n or not k or len(selections) != n * k:
        return False
    # each distinct name of the column compared with each of ``names`` once, not each of its n * k cells
    ids, distinct = pd.factorize(selections["config_id"], use_na_sentinel=False)
    same = np.asarray(distinct, dtype=object)[:, None] == np.asarray(names, dtype=object)[None, :]
    if not same[ids.reshape(n, k), np.arange(k)].all():
        return False
    firsts = selections.iloc[::k]
    return all(np.array_equal(firsts[key].to_numpy(), runs[key].to_numpy()) for key in RUN_KEYS)


def _distinct_rows(member: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct rows of the boolean ``member`` in lexicographic order, the index of each row among them):
    what ``np.unique(member, axis=0, return_inverse=True)`` gives, found on the rows packed into bytes (whose
    byte order is the rows' lexicographic order) instead of by sorting rows of booleans."""
    if not len(member):
        return member, np.zeros(0, dtype=np.int64)
    packed = np.packbits(member, axis=1)
    keys = [row.tobytes() for row in packed]
    distinct = sorted(set(keys))
    index = {key: i for i, key in enumerate(distinct)}
    set_of = np.fromiter((index[key] for key in keys), dtype=np.int64, count=len(keys))
    rows = np.frombuffer(b"".join(distinct), dtype=np.uint8).reshape(len(distinct), packed.shape[1])
    return np.unpackbits(rows, axis=1, count=member.shape[1]).astype(bool), set_of
