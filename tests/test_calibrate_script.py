"""``scripts/calibrate_plan.py``'s after-the-fact check of the plans: the best single factor applied to the plans,
and the narrowest spread of needed / planned over 80% of the splits, counted by hand on small cases."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def calibrate():
    spec = importlib.util.spec_from_file_location("calibrate_script", ROOT / "scripts" / "calibrate_plan.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_best_factor_counts_the_splits_whose_rescaled_plan_lies_within_their_window(calibrate):
    # needed / planned: 1, 1.5, 3, 3.5, 10 and one split planned beyond the grid. A factor c covers a split whose
    # ratio r has r <= c <= 2r: c = 1.5 covers 1 and 1.5, c = 3 covers 1.5 and 3, c = 3.5 covers 3 and 3.5 (two
    # each, the smallest factor kept), c = 1 and c = 10 one each; none covers three.
    planned = np.array([100.0, 100.0, 100.0, 100.0, 100.0, math.inf])
    needed = np.array([100.0, 150.0, 300.0, 350.0, 1000.0, 200.0])
    factor, count = calibrate.best_window(planned, needed)
    assert (factor, count) == (pytest.approx(1.5), 2)
    assert calibrate.best_window(np.array([math.inf]), np.array([1.0])) == (pytest.approx(math.nan, nan_ok=True), 0)
    # 80% of six splits is five, and five are finite: they span 10 / 1; 60% of five is three, at best 1.5-3.5
    assert calibrate.narrowest_spread(planned, needed) == pytest.approx(10.0)
    assert calibrate.narrowest_spread(planned[:5], needed[:5], share=0.6) == pytest.approx(3.5 / 1.5)
    assert calibrate.narrowest_spread(planned[:2], needed[:2] * np.inf) == math.inf


def test_the_rescaled_table_reads_the_calibration_rows(calibrate):
    rows = pd.DataFrame({"case": "c", "method": "m", "target": "f1>=0.7", "rho": [100.0, 200.0, 400.0],
                         "smallest_rho": [100.0, 100.0, 150.0], "profiling_need": [50.0, 50.0, 200.0],
                         "needs": ["10 60 20", "40 100 60", "300 100 150"]})
    table = calibrate.rescaled(rows).set_index("statistic")
    plan = table.loc["the plan"]
    assert plan["within_as_is"] == 2  # 100 and 200 lie within [100, 200]; 400 not within [150, 300]
    # needed / plan: 1, 0.5, 0.375; c = 0.5 covers 0.5 (0.5 <= c <= 1) and 0.375 (0.375 <= c <= 0.75), not 1
    assert (plan["best_factor"], plan["within_best"]) == (pytest.approx(0.5), 2)
    assert plan["spread_80"] == pytest.approx(1 / 0.375)  # 80% of three is three
    own = table.loc["the profiling rows' need"]  # needed / own: 2, 2, 0.75 (200 lies within [150, 300])
    assert (own["within_as_is"], own["best_factor"], own["within_best"]) == (1, pytest.approx(2.0), 2)
    draws = table.loc["the draws' median need"]  # medians 20, 60, 150: needed / median 5, 5/3, 1
    assert (draws["within_as_is"], draws["best_factor"], draws["within_best"]) == (1, pytest.approx(5 / 3), 2)
    assert draws["spread_80"] == pytest.approx(5.0)
    partly = calibrate.rescaled(rows.assign(needs=["10 60 20", "40 inf inf", "300 100 150"])).set_index("statistic")
    assert partly.loc["the draws' median need", "spread_80"] == math.inf  # two finite medians of three
    one = table.loc["one budget for every split"]  # needed 100, 100, 150: 150 covers all three
    assert (one["best_factor"], one["within_best"], one["spread_80"]) == (pytest.approx(150.0), 3, pytest.approx(1.5))
