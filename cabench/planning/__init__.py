"""Planning a budget before spending it: targets, draws of what the profiling split leaves uncertain, and the
methods' predicted curves on them (:mod:`cabench.budget_plan` puts them together)."""
