"""Finding a method by name: a registered one, or ``module:object`` for a function of your own.

``module:object`` goes through the constructor of its setting's family — an index method online
(:func:`cabench.methods.index.index_entry`), an elimination schedule for identification
(:func:`cabench.methods.elimination.schedule_entry`) — as a decorated function does. An attribute
``display`` on the object names it in figures and reports: a run records it in ``config.yaml``
(:func:`shown_facts`), and figures and reports read it from there (:func:`remember`), never importing code
a results folder names (it may come from someone else).
"""

from __future__ import annotations

import dataclasses

from cabench.errors import CabenchError
from cabench.methods.elimination import schedule_entry
from cabench.methods.index import index_entry
from cabench.methods.spec import (
    SETTINGS,
    Method,
    Spec,
    checked_display,
    decorated,
    find,
    registered,
    user_style,
)
from cabench.methods.user import load_user

_KIND = {"online": ("online", "index function"), "psi": ("identification", "schedule")}
#: How each ``module:object`` method met in this process asks to be shown: (display, prefers), by name.
_SHOWN: dict[str, tuple[str, bool]] = {}
#: The specs of the decorated functions configs named as ``module:object`` in this process (quality_first, style).
_RESOLVED: dict[tuple[str, str], Spec] = {}


def names(setting: str) -> tuple[str, ...]:
    """The registered methods of ``setting``, in display order."""
    return tuple(m.spec.name for m in registered(setting))


def is_module_object(name: str) -> bool:
    """Whether ``name`` is ``module:object`` (a function of your own) rather than a registered name."""
    return ":" in name


def get(name: str, setting: str) -> Method:
    """The method ``name`` of ``setting``; a one-line error when there is none."""
    method = find(name, setting)
    if method is not None:
        return method
    if is_module_object(name):
        function = load_user(name)
        registered_as = decorated(function, setting)
        if registered_as is not None and registered_as.spec.origin != "user":  # cabench's own, under another name:
            # two names of one method would run it twice, and show it as a method of one's own
            raise CabenchError(f"methods: '{name}' is cabench's own method '{registered_as.spec.name}'; name it "
                               f"'{registered_as.spec.name}'")
        if registered_as is not None and registered_as.spec.origin == "user":  # a decorated function of one's own:
            # the method it was registered as (display, quality_first, of_one), under this name; its colour and
            # marker are the name's, as every later process (plot, report) shows it from the display recorded
            spec = registered_as.spec
            display = spec.shown.display if spec.shown is not None else name
            method = dataclasses.replace(registered_as, spec=dataclasses.replace(
                spec, name=name, shown=user_style(name, checked_display(name, display))))
            remember(name, method.spec.display, method.spec.prefers)
            _RESOLVED[(name, setting)] = method.spec
            return method
        shown = user_style(name, checked_display(name, getattr(function, "display", name)))
        module = name.partition(":")[0]
        method = (index_entry(name, function, shown=shown, source=module) if setting == "online"
                  else schedule_entry(name, function, shown=shown, source=module))
        remember(name, method.spec.display, method.spec.prefers)
        return method
    what, kind = _KIND[setting]
    raise CabenchError(f"methods: unknown {what} method '{name}'; choose from {', '.join(names(setting))}, or give "
                       f"your own {kind} as module:object")


def remember(name: str, display: str, prefers: bool = True) -> None:
    """How the ``module:object`` method ``name`` is shown (a run's record of it, or the run itself)."""
    _SHOWN[name] = (str(display), bool(prefers))


def shown_facts(names: tuple[str, ...] | list[str]) -> dict[str, dict[str, object]]:
    """What ``config.yaml`` records of the ``module:object`` methods among ``names``: display name, preference."""
    return {n: {"display": _SHOWN[n][0], "prefers": _SHOWN[n][1]} for n in names if n in _SHOWN}


def describe(name: str, setting: str | None = None) -> Spec:
    """The spec of ``name`` in ``setting`` (else in the first setting that has it), for figures and reports,
    which never fail and never import: a registered method's, else a ``module:object`` method as its run
    recorded it (:func:`remember`), else shown by its name."""
    for where in (setting,) if setting else SETTINGS:
        method = find(name, where)
        if method is not None:
            return method.spec
        if (name, where) in _RESOLVED and _SHOWN.get(name, ("", True))[0] == _RESOLVED[(name, where)].display:
            return _RESOLVED[(name, where)]  # (unless a results folder read since shows it otherwise)
    if name in _SHOWN:
        display, prefers = _SHOWN[name]
        return Spec(name, setting or SETTINGS[0], "user", shown=user_style(name, display), prefers=prefers)
    return Spec(name, setting or SETTINGS[0], "user")
