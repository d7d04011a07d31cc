"""An identification schedule that holds a run at a state a test waits for, until the test signals it.

With ``CABENCH_TEST_PAUSE`` set to ``CELLS:MARKER`` (a run's ``cells`` folder and a file outside the
run's folder), the schedule, in a phase after the first (so never while the run checks budgets), waits
until that folder holds five sealed cells, then creates the marker and sleeps until the process is
interrupted or killed: longer than a test waits for any state (``tests.conftest.SAFETY_S``), so that
a worker left behind is seen. Without the variable it is the front-loaded schedule of
:mod:`tests.plugins_hostile.schedules`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.plugins_hostile.schedules import front_loaded

HOLD_S = 900.0


def paused(budget, l_k, spend, level, active_costs, k_active):
    cells, _, marker = os.environ.get("CABENCH_TEST_PAUSE", "").partition(os.pathsep)
    if cells and spend.max() > 0 and len(list(Path(cells).glob("*.ok"))) >= 5:
        Path(marker).touch()
        time.sleep(HOLD_S)
    return front_loaded(budget, l_k, spend, level, active_costs, k_active)
