"""Every method, declared once: name, setting, display name, plot style, and where it comes from.

The engines, references, config validation, plots and report read this
registry. A config may also name a method of your own as ``module:object``
(on your Python path): for the online setting an index function
``index(n, upper, lower_cost) -> index`` over ``[..., K]`` arrays (the
optimistic rewards ``upper`` are ``[..., K, D]``, Algorithm 1 lines 5-6), for
identification a schedule ``target(budget, l_k, spend, level, active_costs,
k_active) -> cumulative samples`` per repetition (see
:func:`cabench.psi.schedules.recycled_target` for the meaning of each
argument). An optional ``display`` attribute names it in figures and reports.
``docs/methods.md`` has a worked example of each.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cabench.errors import CabenchError


@dataclass(frozen=True)
class MethodEntry:
    """A method: how it is shown, and which rule of its setting it follows.

    Online methods follow Algorithm 1's budgeted loop with their index (``rule="index"``) or pull round
    robin (``rule="round-robin"``). Identification methods follow the elimination loop of Algorithm 2
    (``rule="elimination"``), successive halving (``"halving"``) or sample every arm alike
    (``"uniform"``); ``cost_aware`` ones size phases by the active arms' costs ``C_r`` with
    ``L_{K,lambda}`` (cost-blind ones by ``cbar k_r`` with ``L_{K,1}``), and ``replans`` ones
    re-plan each phase from the state reached (spend, sample counts). Each rule's formulas live in
    the engines and, written a second time pull by pull, in :mod:`cabench.policy`.
    """

    name: str
    setting: str  # "online" or "psi"
    display: str
    color: str
    marker: str
    origin: str  # "paper" (the paper's methods), "beyond" (cabench's own) or "user"
    rule: str
    cost_aware: bool = True
    replans: bool = False

    @property
    def eliminates(self) -> bool:
        return self.rule in ("elimination", "halving")


ENTRIES = (
    MethodEntry("cohv-ucb", "online", "CoHV-UCB", "#d62728", "o", "paper", "index"),
    MethodEntry("hv-ucb", "online", "HV-UCB", "#1f77b4", "s", "paper", "index", cost_aware=False),
    MethodEntry("acc-cost-ucb", "online", "Accuracy-Cost-UCB", "#2ca02c", "^", "paper", "index"),
    MethodEntry("uniform", "online", "Uniform", "#7f7f7f", "D", "paper", "round-robin", cost_aware=False),
    MethodEntry("copsi", "psi", "CoPSI", "#ff7f0e", "P", "paper", "elimination"),
    MethodEntry("psi-sr", "psi", "PSI-SR", "#9467bd", "v", "paper", "elimination", cost_aware=False),
    MethodEntry("uniform", "psi", "Uniform", "#7f7f7f", "D", "paper", "uniform", cost_aware=False),
    MethodEntry("copsi-r", "psi", "CoPSI-R", "#8c564b", "*", "beyond", "elimination", replans=True),
    MethodEntry("ege-sh", "psi", "EGE-SH", "#17becf", "X", "beyond", "halving"),
)
_USER_STYLES = (("#e377c2", "h"), ("#bcbd22", "d"), ("#000000", "p"))


def names(setting: str) -> tuple[str, ...]:
    """The built-in methods of a setting, in display order."""
    return tuple(e.name for e in ENTRIES if e.setting == setting)


def spec(name: str, setting: str) -> MethodEntry:
    """The entry of a method of ``setting``; a user's ``module:object`` is an index (online) or a
    re-planning, cost-aware elimination schedule (identification)."""
    for e in ENTRIES:
        if e.name == name and e.setting == setting:
            return e
    if is_user(name):
        colour, marker = style(name)
        rule = "index" if setting == "online" else "elimination"
        return MethodEntry(name, setting, display(name), colour, marker, "user", rule, replans=setting == "psi")
    raise CabenchError(f"methods: unknown {setting} method '{name}'; choose from {', '.join(names(setting))}")


def is_user(name: str) -> bool:
    return ":" in name


def load_user(name: str) -> Callable[..., Any]:
    """The object ``module:object`` names; a one-line error when it cannot be imported."""
    module_name, _, attr = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure of user code is one line
        raise CabenchError(f"methods: cannot import '{module_name}' for '{name}' ({type(exc).__name__}: {exc}); "
                           "put the module on your Python path (PYTHONPATH)") from None
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise CabenchError(f"methods: '{module_name}' has no '{attr}' (for '{name}')")
    if not callable(obj):
        raise CabenchError(f"methods: '{name}' is not callable; give an index function or a schedule")
    return obj


def user_source_digest(name: str) -> str:
    """SHA-256 of a user method's module source: editing it invalidates the cached cells that used it."""
    module = importlib.import_module(name.partition(":")[0])
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        source = repr(module)
    return hashlib.sha256(source.encode()).hexdigest()


def display(name: str) -> str:
    for e in ENTRIES:
        if e.name == name:
            return e.display
    if is_user(name):
        try:
            return str(getattr(load_user(name), "display", name))
        except CabenchError:
            return name
    return name


def style(name: str) -> tuple[str, str]:
    """(colour, marker) of a method in every figure."""
    for e in ENTRIES:
        if e.name == name:
            return e.color, e.marker
    return _USER_STYLES[int(hashlib.sha256(name.encode()).hexdigest(), 16) % len(_USER_STYLES)]


def origin(name: str) -> str:
    """``paper``, ``beyond`` (cabench's own methods) or ``user``."""
    for e in ENTRIES:
        if e.name == name:
            return e.origin
    return "user"
