"""Budgeted online configuration selection (paper §3.1, §4.1; SPEC §5)."""

from cabench.methods.configured import OnlineMethod
from cabench.online.engine import OnlineResult, run_online

__all__ = ["OnlineMethod", "OnlineResult", "run_online"]
