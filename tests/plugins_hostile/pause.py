"""An identification schedule that holds a run at a state a test waits for, until the test signals it.

With ``CABENCH_TEST_PAUSE`` set to ``CELLS:MARKER`` (a run's ``cells`` folder and a file outside the
run's folder), the schedule, in a phase after the first (so never while the run checks budgets), holds
once that folder holds five sealed cells: it creates the marker and sleeps until the process is
interrupted or killed, longer than a test waits for any state (``tests.conftest.SAFETY_S``), so that
a worker left behind is seen. Without the variable it is the front-loaded schedule of
:mod:`tests.plugins_hostile.schedules`.

In the run's own process (no workers: the test starts the run as a session leader) each cell before this
one was sealed as it ended, so whether five are sealed is decided by the cells' order alone. In a worker,
the cells are sealed by the run's process as their results come back, in any order and later than they
were computed (several may travel together), so a check would race the run to its end: the first such
cell of the run (claimed with a file beside the marker) waits until five are sealed while the other
workers go on, and holds; the others do not hold.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.plugins_hostile.schedules import front_loaded

HOLD_S = 900.0
SEALED = 5


def _sealed(cells: Path) -> int:
    return len(list(cells.glob("*.ok")))


def _holds(cells: Path, marker: Path) -> bool:
    if os.getpid() == os.getsid(0):  # the run's own process: the cells before this one are sealed
        return _sealed(cells) >= SEALED
    try:  # a worker: the run's first cell here holds, once five cells are sealed (a state)
        os.close(os.open(marker.with_name(marker.name + ".claimed"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    while _sealed(cells) < SEALED:
        time.sleep(0.01)
    return True


def paused(budget, l_k, spend, level, active_costs, k_active):
    cells, _, marker = os.environ.get("CABENCH_TEST_PAUSE", "").partition(os.pathsep)
    if cells and spend.max() > 0 and _holds(Path(cells), Path(marker)):
        Path(marker).touch()
        time.sleep(HOLD_S)
    return front_loaded(budget, l_k, spend, level, active_costs, k_active)
