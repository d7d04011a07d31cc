"""TRANSITIONAL, delete once cabench/live/config.py imports from cabench.methods (see the report)."""

from cabench import registry
from cabench.methods.configured import OnlineMethod

__all__ = ["ONLINE_METHODS", "OnlineMethod"]
ONLINE_METHODS = registry.names("online")
