"""Every method as one object: its spec, when it cannot run, its batched rule and its per-pull rule.

One module per rule family holds the family's entries with both of their rules, written independently
on purpose (the tests compare them decision by decision): :mod:`~cabench.methods.index` (CoHV-UCB,
HV-UCB, Accuracy-Cost-UCB and your index functions), :mod:`~cabench.methods.round_robin` (online
Uniform), :mod:`~cabench.methods.elimination` (CoPSI, PSI-SR, CoPSI-R and your schedules),
:mod:`~cabench.methods.halving` (EGE-SH) and :mod:`~cabench.methods.uniform` (identification
Uniform). :mod:`~cabench.methods.lookup` finds a method by name; :mod:`~cabench.methods.configured`
binds one to the parameter values a config gives. docs/methods.md walks through adding a method.

Importing the package registers the built-in methods: each setting lists the paper's methods first, then
cabench's own, each in registration order.
"""

from cabench.methods import elimination, halving, index, round_robin, uniform  # noqa: F401 - they register
