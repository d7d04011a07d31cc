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

A user method is checked at its boundary by :class:`UserMethod`, which the
batched engines and the per-pull policies both call: its signature when the
config is read, and on every call what it raises and what it returns (shape,
numbers, finiteness). Each problem is one :class:`UserMethodError` line naming it.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

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
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure of user code at import (SystemExit too) is one line
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


class UserMethodError(CabenchError):
    """A method of your own (``module:object``) does not fit its setting, failed, or returned what the
    method's loop cannot use. One line naming it; under ``cabench live`` it ends the run."""


#: How each setting calls a user method: what it is, its parameters (passed positionally), and what it returns.
CALLS = {
    "online": ("online index function", ("n", "upper", "lower_cost"), "index"),
    "psi": ("identification schedule", ("budget", "l_k", "spend", "level", "active_costs", "k_active"), "target"),
}
_INT64_LIMIT = 2.0**63


@dataclass(frozen=True)
class UserMethod:
    """A user's ``module:object`` checked at its boundary, called like the object itself.

    Built (:func:`user_method`) when a config is read: the object must accept its setting's arguments
    positionally (:data:`CALLS`; further parameters need defaults). Each call gets copies of the
    array arguments (the method cannot change the loop's state), turns anything the method raises
    (``SystemExit`` too; not ``KeyboardInterrupt``) into a :class:`UserMethodError`, and checks the
    result: numbers of exactly the shape of ``n`` (online) or ``spend`` (identification); an index
    may be ``+inf`` (pull first; ties go to the lowest arm) but not NaN or ``-inf`` (the loop masks
    infeasible arms with ``-inf``); a target is a finite number of samples within the int64 range.
    """

    name: str
    setting: str
    function: Callable[..., Any]

    def __call__(self, *args: Any) -> np.ndarray:
        args = tuple(np.array(a) if isinstance(a, np.ndarray) else a for a in args)
        try:
            raw = self.function(*args)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - whatever user code raises (SystemExit too) is one line
            text = " ".join(str(exc).split())[:200]
            raise UserMethodError(f"methods: {self.name} raised {type(exc).__name__}: {text}; fix the method or "
                                  "remove it from methods") from None
        return self._checked(raw, np.shape(args[0] if self.setting == "online" else args[2]))

    def _checked(self, raw: Any, shape: tuple[int, ...]) -> np.ndarray:
        kind, _, result = CALLS[self.setting]
        per = "element of n" if self.setting == "online" else "repetition (element of spend)"
        where = f"methods: {self.name} returned"
        try:
            values = np.asarray(raw)
        except (TypeError, ValueError):  # ragged nesting
            values = np.asarray(None)
        if values.dtype.kind not in "iuf":
            raise UserMethodError(f"{where} {type(raw).__name__} (dtype {values.dtype}), not numbers; an {kind} "
                                  f"returns one {result} per {per}, shape {shape}")
        if values.shape != shape:
            raise UserMethodError(f"{where} shape {values.shape} for arguments of shape {shape}; an {kind} returns "
                                  f"one {result} per {per}")
        if self.setting == "online":
            bad = np.isnan(values) | (values == -np.inf)
            rule = "an index is a number or +inf, never NaN or -inf"
        else:
            bad = ~(np.abs(values.astype(np.float64)) < _INT64_LIMIT)
            rule = "a target is a finite number of samples below 2^63"
        if bad.any():
            first = int(np.flatnonzero(bad.reshape(-1))[0])
            raise UserMethodError(f"{where} {values.reshape(-1)[first]} ({int(bad.sum())} of {values.size} values); "
                                  f"{rule}")
        return values


def user_method(name: str, setting: str) -> UserMethod:
    """The checked user method ``module:object`` of ``setting``; a one-line error naming it when its
    signature cannot take the setting's arguments (see :data:`CALLS`)."""
    function = load_user(name)
    kind, parameters, result = CALLS[setting]
    call = f"{result}({', '.join(parameters)})"
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        raise UserMethodError(f"methods: '{name}' has no signature Python can read; give a function {call}, an "
                              f"{kind}") from None
    try:
        signature.bind(*parameters)
    except TypeError:
        raise UserMethodError(f"methods: '{name}' takes {signature}, but an {kind} is called as {call}; "
                              "any further parameter needs a default") from None
    return UserMethod(name, setting, function)


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
