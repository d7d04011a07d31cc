"""cabench: cost-aware multi-objective bandits for budgeted LLM configuration evaluation."""

__version__ = "0.1.0"
