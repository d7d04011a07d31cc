"""The membership matrix of returned sets against sets gathered row by row."""

import numpy as np
import pandas as pd
import pytest

from cabench.errors import CabenchError
from cabench.returned import returned_sets


def _tables(seed: int, k: int = 7, reps: int = 30, written: bool = False):
    """runs.csv, selections.csv and arms.csv of a made-up identification; with ``written`` the selections in the
    order cabench writes them (each run's rows together, in arms' order), else shuffled."""
    rng = np.random.default_rng(seed)
    names = [f"cfg-{i}" for i in rng.permutation(k)]  # arms.csv order is not name order
    runs = pd.DataFrame([{"method": m, "cost_mode": c, "rho": r, "rep": rep}
                         for m in ("copsi", "psi-sr") for c in ("deterministic", "stochastic") for r in (2.0, 8.0)
                         for rep in range(reps)])
    runs = runs.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # rows in no particular order
    sel = runs.loc[runs.index.repeat(k)].reset_index(drop=True)
    sel["config_id"] = np.tile(names, len(runs))
    sel["returned"] = (rng.random(len(sel)) < rng.choice([0.0, 0.2, 0.5], size=len(sel))).astype(int)
    if not written:
        sel = sel.sample(frac=1.0, random_state=seed + 1).reset_index(drop=True)
    return runs, sel, pd.DataFrame({"config_id": names})


@pytest.mark.parametrize("order", ["shuffled", "written", "runs in another order", "arms in another order"])
@pytest.mark.parametrize("seed", range(5))
def test_membership_equals_sets_gathered_row_by_row(seed, order):
    runs, sel, arms = _tables(seed, written=order != "shuffled")
    if order == "runs in another order":  # each run's rows together in arms' order, but not in the order of runs
        runs = runs.iloc[::-1].reset_index(drop=True)
    if order == "arms in another order":  # each run's rows together, in runs' order, but its arms reversed
        k = len(arms)
        sel = sel.iloc[[r * k + (k - 1 - i) for r in range(len(runs)) for i in range(k)]].reset_index(drop=True)
    found = returned_sets(runs, sel, arms)
    by_run: dict[tuple, set[str]] = {}
    for row in sel.itertuples():
        if row.returned == 1:
            by_run.setdefault((row.method, row.cost_mode, row.rho, row.rep), set()).add(row.config_id)
    names = list(arms["config_id"])
    for r, run in enumerate(runs.itertuples()):
        expected = by_run.get((run.method, run.cost_mode, run.rho, run.rep), set())
        assert {names[i] for i in np.flatnonzero(found.member[r])} == expected
        assert set(found.names_of(int(found.set_of[r]))) == expected
        assert found.index_of(sorted(expected)) == found.set_of[r]
    distinct = {frozenset(s) for s in by_run.values()} | ({frozenset()} if len(by_run) < len(runs) else set())
    assert len(found.sets) == len(distinct)
    # the distinct sets in lexicographic order of their rows (False before True, arms.csv's order), as numpy orders
    rows = sorted({tuple(n in s for n in names) for s in distinct})
    assert found.sets.tolist() == [list(row) for row in rows]


def test_a_set_no_run_returned_has_no_index():
    runs, sel, arms = _tables(0, k=4, reps=2)
    sel["returned"] = 0
    found = returned_sets(runs, sel, arms)
    assert found.sets.shape == (1, 4) and not found.member.any()
    assert found.index_of([]) == 0 and found.index_of(["cfg-0"]) is None and found.index_of(["nobody"]) is None


def test_a_returned_row_of_an_unknown_run_is_refused_naming_the_row():
    runs, sel, arms = _tables(1, k=3, reps=2)
    sel.loc[5, ["rep", "returned"]] = [99, 1]
    with pytest.raises(CabenchError, match=r"^selections.csv.gz: line 7: a returned configuration of a run"):
        returned_sets(runs, sel, arms, "selections.csv.gz")
