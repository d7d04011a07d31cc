"""Budgeted online configuration selection (paper §3.1, §4.1; SPEC §5)."""

from cabench.online.engine import OnlineResult, run_online
from cabench.online.methods import ONLINE_METHODS, OnlineMethod

__all__ = ["ONLINE_METHODS", "OnlineMethod", "OnlineResult", "run_online"]
