"""An identification schedule that holds a run at a state a test waits for, until the test interrupts it.

With ``CABENCH_TEST_PAUSE`` set to ``CELLS:MARKER`` (a run's ``cells`` folder and a file outside the
run's folder), the schedule, in a phase after the first (so never while the run checks budgets), waits
until that folder holds five sealed cells, then creates the marker and sleeps until the process is
interrupted. Without the variable it is the
front-loaded schedule of :mod:`tests.plugins_hostile.schedules`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.plugins_hostile.schedules import front_loaded


def paused(budget, l_k, spend, level, active_costs, k_active):
    cells, _, marker = os.environ.get("CABENCH_TEST_PAUSE", "").partition(os.pathsep)
    if cells and spend.max() > 0 and len(list(Path(cells).glob("*.ok"))) >= 5:
        Path(marker).touch()
        for _ in range(12_000):  # until the test's SIGINT (two minutes at most: a failing test ends)
            time.sleep(0.01)
    return front_loaded(budget, l_k, spend, level, active_costs, k_active)
