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
    name: str
    setting: str  # "online" or "psi"
    display: str
    color: str
    marker: str
    origin: str  # "paper" (the paper's methods) or "beyond" (cabench's own)


ENTRIES = (
    MethodEntry("cohv-ucb", "online", "CoHV-UCB", "#d62728", "o", "paper"),
    MethodEntry("hv-ucb", "online", "HV-UCB", "#1f77b4", "s", "paper"),
    MethodEntry("acc-cost-ucb", "online", "Accuracy-Cost-UCB", "#2ca02c", "^", "paper"),
    MethodEntry("uniform", "online", "Uniform", "#7f7f7f", "D", "paper"),
    MethodEntry("copsi", "psi", "CoPSI", "#ff7f0e", "P", "paper"),
    MethodEntry("psi-sr", "psi", "PSI-SR", "#9467bd", "v", "paper"),
    MethodEntry("uniform", "psi", "Uniform", "#7f7f7f", "D", "paper"),
    MethodEntry("copsi-r", "psi", "CoPSI-R", "#8c564b", "*", "beyond"),
    MethodEntry("ege-sh", "psi", "EGE-SH", "#17becf", "X", "beyond"),
)
_USER_STYLES = (("#e377c2", "h"), ("#bcbd22", "d"), ("#000000", "p"))


def names(setting: str) -> tuple[str, ...]:
    """The built-in methods of a setting, in display order."""
    return tuple(e.name for e in ENTRIES if e.setting == setting)


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


class DisplayNames(dict):
    """``DISPLAY.get(name, name)`` for every method, built-in or user (a mapping view of :func:`display`)."""

    def get(self, key: Any, default: Any = None) -> Any:  # noqa: D102
        return display(str(key))

    def __getitem__(self, key: Any) -> Any:
        return display(str(key))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (is_user(key) or any(e.name == key for e in ENTRIES))


DISPLAY = DisplayNames({e.name: e.display for e in ENTRIES})
