"""Finding a method by name: a registered one, or ``module:object`` for a function of your own.

``module:object`` goes through the constructor of its setting's family — an index method online
(:func:`cabench.methods.index.index_entry`), an elimination schedule for identification
(:func:`cabench.methods.elimination.schedule_entry`) — as a decorated function does. An attribute
``display`` on the object names it in figures and reports.
"""

from __future__ import annotations

from cabench.errors import CabenchError
from cabench.methods.elimination import schedule_entry
from cabench.methods.index import index_entry
from cabench.methods.spec import SETTINGS, Method, Spec, find, registered, user_style
from cabench.methods.user import load_user

_KIND = {"online": ("online", "index function"), "psi": ("identification", "schedule")}


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
        shown = user_style(name, str(getattr(function, "display", name)))
        module = name.partition(":")[0]
        if setting == "online":
            return index_entry(name, function, shown=shown, source=module)
        return schedule_entry(name, function, shown=shown, source=module)
    what, kind = _KIND[setting]
    raise CabenchError(f"methods: unknown {what} method '{name}'; choose from {', '.join(names(setting))}, or give "
                       f"your own {kind} as module:object")


def describe(name: str, setting: str | None = None) -> Spec:
    """The spec of ``name`` in ``setting`` (else in the first setting that has it), for figures and reports,
    which never fail: a method they cannot find here (one of yours not on the path) is shown by its name."""
    for where in (setting,) if setting else SETTINGS:
        try:
            return get(name, where).spec
        except CabenchError:
            pass
    return Spec(name, setting or SETTINGS[0], "user")
