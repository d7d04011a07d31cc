"""What a plan aims for: ``error<=0.1`` or ``f1>=0.7`` (identification, paper §3.2), ``share>=0.9`` (online).

``error`` is the probability that the returned set differs from the Pareto set, ``f1`` the mean Pareto F1 of the
returned set, ``share`` the share of repetitions whose most-pulled configuration has ``nu`` within a relative
``epsilon`` of the best (paper §3.1: ``nu_i >= (1 - epsilon) max_j nu_j``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from cabench.errors import CabenchError

#: Each metric: the direction its target bounds and the setting that has it.
METRICS = {"error": ("<=", "psi"), "f1": (">=", "psi"), "share": (">=", "online")}
# any number, signed, inf or nan: a value out of range is said to be so, not taken for a malformed target
_TARGET = re.compile(r"\s*(?P<metric>[a-z0-9_]+)\s*(?P<op><=|>=)\s*"
                     r"(?P<value>[-+]?(?:\d*\.?\d+(?:[eE][-+]?\d+)?|inf|nan))\s*")


@dataclass(frozen=True)
class Target:
    """A bound on one metric: ``metric op bound``."""

    metric: str
    bound: float

    @property
    def op(self) -> str:
        return METRICS[self.metric][0]

    @property
    def setting(self) -> str:
        return METRICS[self.metric][1]

    @property
    def text(self) -> str:
        return f"{self.metric}{self.op}{self.bound:g}"

    def met(self, values: np.ndarray) -> np.ndarray:
        """Whether each value meets the target (NaN, a budget the method cannot run, never does)."""
        values = np.asarray(values, dtype=float)
        with np.errstate(invalid="ignore"):
            return values <= self.bound if self.op == "<=" else values >= self.bound


def parse_target(text: str, setting: str | None = None) -> Target:
    """``error<=0.1``, ``f1>=0.7`` or ``share>=0.9`` as a :class:`Target` of ``setting`` (None: the metric's own
    setting); one-line errors."""
    found = _TARGET.fullmatch(text.lower())
    where = f"--target {text}"
    if found is None or found["metric"] not in METRICS:
        raise CabenchError(f"{where}: expected error<=D or f1>=F (identification) or share>=S (online), e.g. "
                           "error<=0.1")
    metric, value = found["metric"], float(found["value"])
    op, wanted = METRICS[metric]
    if found["op"] != op:
        raise CabenchError(f"{where}: {metric} is bounded with {op} ({metric}{op}{value:g})")
    if setting is not None and wanted != setting:
        others = ", ".join(m for m, (_, s) in METRICS.items() if s == setting)
        raise CabenchError(f"{where}: {metric} is a target of the {wanted} "
                           f"setting; this config's setting is {setting} (targets: {others})")
    if not (math.isfinite(value) and 0 < value < 1 if metric == "error" else 0 < value <= 1):
        raise CabenchError(f"{where}: {metric} must lie in {'(0, 1)' if metric == 'error' else '(0, 1]'}")
    return Target(metric, value)
