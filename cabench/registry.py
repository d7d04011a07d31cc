"""What the layers above the methods ask about them, by name: which exist, how each is shown, where it
comes from, which one the others are compared with.

The methods themselves — spec, feasibility (``skip``), batched and per-pull rules — are objects of
:mod:`cabench.methods`, registered by their family's constructor, built-in and yours alike (a
decorator in your code, or ``module:object`` in a config; ``docs/methods.md``). These queries read
the specs and never branch on a method's name. Figures and reports never fail on a method: one of
your own that cannot be loaded here is shown by its name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from cabench.errors import CabenchError
from cabench.methods import lookup
from cabench.methods.spec import SETTINGS, Parameter, Spec, display_problem, registered
from cabench.methods.styles import USER

#: (colour, marker) of methods in the figure being drawn (:func:`distinct_styles`), by name.
_DISTINCT: dict[str, tuple[str, str]] = {}


def names(setting: str) -> tuple[str, ...]:
    """The registered methods of ``setting``: the paper's, then cabench's own, then yours."""
    return lookup.names(setting)


def choices(name: str, setting: str) -> tuple[str, ...] | None:
    """The names a config may give where it gives ``name``: the registered methods of ``setting``, or
    None when ``name`` is ``module:object`` (any importable function of the setting's signature)."""
    return None if lookup.is_module_object(name) else lookup.names(setting)


def is_module_object(name: str) -> bool:
    """Whether ``name`` is a method of your own, ``module:object``, rather than a registered name."""
    return lookup.is_module_object(name)


def settings_of(name: str) -> tuple[list[str], list[CabenchError]]:
    """The settings whose calls the method ``module:object`` ``name`` takes (imported and its signature checked,
    as a config of each setting checks it), and why each other setting's is refused."""
    fits, refusals = [], []
    for setting in SETTINGS:
        try:
            lookup.get(name, setting)
        except CabenchError as exc:
            refusals.append(exc)
        else:
            fits.append(setting)
    return fits, refusals


def spec(name: str, setting: str | None = None) -> Spec:
    """The spec of ``name`` (in ``setting``, else in the first setting that has it); never fails."""
    return lookup.describe(name, setting)


#: What a method without a preference does (a round robin), as the answers and plans say it.
IN_TURN = "it pulls every affordable configuration in turn, whatever their rewards"


def shown_facts(names: list[str]) -> dict[str, dict[str, object]]:
    """What a run records in ``config.yaml`` of its ``module:object`` methods (display name, preference)."""
    return lookup.shown_facts(names)


def remember_shown(recorded: object) -> None:
    """Show the ``module:object`` methods of a results folder as its run recorded them (``methods_shown`` of
    ``config.yaml``), without importing them; anything malformed (a display that is not one printable line) is
    left out (the methods show by name)."""
    if not isinstance(recorded, dict):
        return
    for name, facts in recorded.items():
        if isinstance(name, str) and isinstance(facts, dict) and display_problem(facts.get("display")) is None:
            lookup.remember(name, facts["display"], facts.get("prefers") is not False)


def display(name: str) -> str:
    return spec(name).display


def style(name: str) -> tuple[str, str]:
    """(colour, marker) of a method in every figure (in the figure being drawn, see :func:`distinct_styles`)."""
    if name in _DISTINCT:
        return _DISTINCT[name]
    found = spec(name).style
    return found.color, found.marker


@contextlib.contextmanager
def distinct_styles(names: Sequence[str]) -> Iterator[None]:
    """Within the block, each method of ``names`` (a figure's) in a colour no other of them has: a method of one's
    own whose colour (chosen by its name among those of :data:`~cabench.methods.styles.USER`, unless it gave its
    own) an earlier one of ``names`` has takes the next of those colours that none has, its marker kept; past 12
    such colours, the next colour and marker of ``USER`` that none has together. Drawn from the figure's methods
    alone, in their order, so a figure never depends on what else a process drew."""
    colours = list(dict.fromkeys(c for c, _ in USER))
    taken: dict[str, tuple[str, str]] = {}
    for name in dict.fromkeys(names):
        colour, marker = style(name)
        used = {c for c, _ in taken.values()}
        if colour in used and colour in colours:
            start = colours.index(colour)
            free = next((c for c in colours[start:] + colours[:start] if c not in used), None)
            if free is None:  # every colour taken: a colour and marker that no other has together
                at = USER.index((colour, marker)) if (colour, marker) in USER else 0
                colour, marker = next((p for p in USER[at:] + USER[:at] if p not in taken.values()),
                                      (colour, marker))
            else:
                colour = free
        taken[name] = (colour, marker)
    before = dict(_DISTINCT)
    _DISTINCT.update(taken)
    try:
        yield
    finally:
        _DISTINCT.clear()
        _DISTINCT.update(before)


def prefers(name: str, setting: str) -> bool:
    """Whether the configuration a method pulls most is a preference (not a round robin's turn)."""
    return spec(name, setting).prefers


def quality_first(names: list[str], setting: str) -> list[str]:
    """The methods of ``names`` whose index reads the first objective alone as the answers' quality
    (Accuracy-Cost-UCB)."""
    return [name for name in names if spec(name, setting).quality_first]


def origin(name: str) -> str:
    """``paper``, ``beyond`` (cabench's own methods) or ``user``."""
    return spec(name).origin


def comparison_base(setting: str, methods: list[str]) -> str:
    """The method of ``methods`` the report compares the others with: the listed one whose spec ranks
    highest (CoPSI-R, then CoPSI; CoHV-UCB online), else the first listed."""
    ranked = [m.spec for m in registered(setting) if m.spec.comparison_rank > 0 and m.spec.name in methods]
    return max(ranked, key=lambda s: s.comparison_rank).name if ranked else methods[0]


def proposed(setting: str) -> str:
    """The paper's own method of ``setting``: the one Appendix A tunes, and ``cabench live``'s default."""
    return next(m.spec.name for m in registered(setting) if m.spec.proposed)


def parameters(setting: str) -> tuple[Parameter, ...]:
    """Every parameter the methods of ``setting`` declare (the first declaration of each name): what a
    config may give a method, and the values each may take."""
    found: dict[str, Parameter] = {}
    for method in registered(setting):
        for p in method.spec.parameters:
            found.setdefault(p.name, p)
    return tuple(found.values())

