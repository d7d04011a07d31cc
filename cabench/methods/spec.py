"""What every method declares, and the table that holds the registered ones.

A method is one object (:class:`Method`): its :class:`Spec` — name, setting, origin, parameters with
their defaults and allowed values, how figures show it (:class:`Style`, from the display-only
:mod:`cabench.methods.styles` for the built-in methods: a colour is not a result) —
the reason a budget is too small for it (``skip``), and its two rules, batched for the engines and
per pull for the ask/tell policies, which each rule family defines. Built-in and your own methods
enter the table alike, through their family's constructor (:func:`register`).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib
import importlib.machinery
import inspect
import math
import os
import re
import site
import sys
import sysconfig
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from cabench.data.dataset import file_digest
from cabench.errors import CabenchError
from cabench.methods.styles import BUILT_IN, USER
from cabench.problem import Problem

SETTINGS = ("online", "psi")
ORIGINS = ("paper", "beyond", "user")  # the paper's methods, cabench's own, yours: the order of every listing
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


@dataclass(frozen=True)
class Style:
    """How figures and reports show a method."""

    display: str
    color: str
    marker: str


def user_style(name: str, display: str | None = None, color: str | None = None, marker: str | None = None) -> Style:
    """A method of your own: its ``display`` (else its name), its colour and marker (else one of
    :data:`cabench.methods.styles.USER`, chosen by its name)."""
    chosen = USER[int(hashlib.sha256(name.encode()).hexdigest(), 16) % len(USER)]
    return Style(display or name, color or chosen[0], marker or chosen[1])


def display_problem(display: object) -> str | None:
    """What is wrong with ``display`` as the name tables, reports and legends show a method by (None: nothing):
    it must be text, not blank, on one line of printable characters (no newline, tab or control character)."""
    if not isinstance(display, str):
        return f"is {type(display).__name__} {_short(display)}, not text"
    if not display.strip():
        return "is blank"
    bad = next((c for c in display if not c.isprintable()), None)
    if bad is not None:
        return f"{_short(display)} holds {bad!r}: a display is one line of printable text"
    return None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def checked_display(name: str, display: object) -> str:
    """``display`` as the display name of the method ``name`` of your own; a one-line :class:`CabenchError`
    naming the method when it is not one line of printable text or is blank (:func:`display_problem`)."""
    problem = display_problem(display)
    if problem is not None:
        raise CabenchError(f"methods: {name}: its display {problem}; give it the name tables, reports and legends "
                           "should show")
    shipped = next((n for n, style in BUILT_IN.items()
                    if str(display).strip().casefold() in (n.casefold(), style[0].casefold())), None)
    if shipped is not None:  # (a report would state the shipped method's verdicts of it)
        raise CabenchError(f"methods: {name}: its display '{display}' is how cabench shows its own method "
                           f"{shipped}; give yours a name of its own, so that no table or report mistakes it for "
                           "that method")
    return str(display)


@dataclass(frozen=True)
class Parameter:
    """A method parameter: its default and the values it may take.

    A number is ``positive`` (above 0) and within ``[minimum, maximum]``; a text is one of ``choices``.
    ``tunable`` parameters change the method's decisions and are what profiling-only tuning varies.
    """

    name: str
    default: float | str
    positive: bool = False
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    tunable: bool = False
    doc: str = ""

    def check(self, value: Any, where: str) -> None:
        """A one-line :class:`CabenchError` naming ``where`` when the parameter cannot take ``value``."""
        if self.choices:
            if value not in self.choices:
                raise CabenchError(f"{where}: {value!r} is not {' or '.join(map(repr, self.choices))}")
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise CabenchError(f"{where}: expected a finite number, got {value!r}")
        if self.positive and not value > 0:
            raise CabenchError(f"{where}: must be positive, got {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise CabenchError(f"{where}: must be at least {self.minimum:g}, got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise CabenchError(f"{where}: must be at most {self.maximum:g}, got {value!r}")


@dataclass(frozen=True)
class Spec:
    """What a method is, apart from what it does.

    ``proposed``: the paper's own method of its setting (CoHV-UCB, CoPSI), the one Appendix A tunes
    and ``cabench live`` runs unless told otherwise. ``comparison_rank``: the report compares the
    other methods of an experiment with the listed one of highest rank (0: never the reference).
    ``shown``: how a method of your own asks to be shown (None: by the built-in style of its name, or
    a user style). ``prefers``: whether what it ends up pulling most says which configuration it prefers
    (False for a round robin, which pulls every affordable arm in turn: its pull counts follow the arms'
    order and costs, not their rewards). ``quality_first``: its index reads the first objective alone, as the
    accuracy of the answers (Accuracy-Cost-UCB's ``U^(acc)``, SPEC §5), so the first objective must measure quality.
    """

    name: str
    setting: str
    origin: str
    parameters: tuple[Parameter, ...] = ()
    proposed: bool = False
    comparison_rank: int = 0
    shown: Style | None = None
    prefers: bool = True
    quality_first: bool = False

    def __post_init__(self) -> None:
        if self.setting not in SETTINGS or self.origin not in ORIGINS:
            raise ValueError(f"{self.name}: setting {self.setting!r} or origin {self.origin!r}")

    @property
    def style(self) -> Style:
        if self.shown is not None:
            return self.shown
        built_in = BUILT_IN.get(self.name)
        return Style(*built_in) if built_in is not None else user_style(self.name)

    @property
    def display(self) -> str:
        return self.style.display

    @property
    def tunable(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters if p.tunable)


@dataclass(frozen=True)
class Method(ABC):
    """A registered method. ``source`` names the module of a method of your own, whose source is part of
    the key of every cached cell that ran it (a built-in's code is in every key already)."""

    spec: Spec
    source: str | None

    @abstractmethod
    def skip(self, problem: Problem, rho: float) -> str | None:
        """Why budget ``rho`` is too small for this method on ``problem`` (one line), or None."""

    def source_digest(self) -> str | None:
        """SHA-256 of the source of a method of your own; None for a built-in."""
        return None if self.source is None else source_digest(self.source)

    def state_digest(self) -> str | None:
        """SHA-256 of the settings a method of your own holds beyond its source
        (:meth:`cabench.methods.user.UserMethod.state_digest`: a callable object's attributes, a closure's variables,
        the plain globals its code reads, ...); None where it holds none, and for a built-in."""
        if self.source is None:
            return None
        held = [d for f in fields(self) if (d := _state_of(getattr(self, f.name))) is not None]
        return None if not held else hashlib.sha256(" ".join(held).encode()).hexdigest()


def _state_of(value: Any) -> str | None:
    state = getattr(value, "state_digest", None)
    return state() if callable(state) and not isinstance(value, Method) else None


def source_digest(module_name: str) -> str:
    """SHA-256 of a module's source (its ``repr`` when the source cannot be read) and of the sources of the modules
    of your own it imports, at any depth (:func:`own_imports`): editing a helper module a method imports changes
    the key of every cell that ran the method. A module importing none of your own hashes as its source alone.
    Computed once per process for each state of those files (path, size, time), not for every cell."""
    if module_name == "__main__":  # (a notebook's or a script's: a worker's __main__ is another; its code keys its
        return hashlib.sha256(b"__main__").hexdigest()  # cells: cabench.methods.user.held_settings)
    importlib.import_module(module_name)  # loaded, so that its file is the one that runs
    files = [(module_name, _file_of(module_name)), *sorted(own_imports(module_name).items())]
    _still_as_loaded(files)
    return _source_digest(module_name, tuple((name, path, *_stamp(path)) for name, path in files))


#: Each module of your own cabench imported, or whose source keyed a cell, in this process: the spec it was loaded
#: with (reloading gives it another), the state of its file (size, time) and the SHA-256 of its text when cabench
#: first met it so.
_LOADED: dict[str, tuple[Any, tuple[int, int] | tuple[()], str]] = {}


def stamp_loaded(module_name: str) -> None:
    """Record the state of the files of module ``module_name`` and of the modules of your own it imports, as
    cabench imports it (``module:object``) or a decorator registers a method of it: the code that runs is theirs."""
    _still_as_loaded([(module_name, _file_of(module_name)), *sorted(own_imports(module_name).items())], check=False)


def _text_digest(path: Path) -> str:
    try:
        return file_digest(path)
    except OSError:
        return ""


def _still_as_loaded(files: list[tuple[str, Path | None]], check: bool = True) -> None:
    """Refuse, in one line, a module whose text changed since cabench first met it in this process without it
    being loaded again, or one that holds a function imported from one of the others (``from helper import sign``)
    that was loaded again since with other code for it: either way the code that runs is not the code on disk, which
    would key its cells (a notebook's second run stored the old code's results under the new code's key, reused by
    every later run)."""
    for name, path in files:
        module = sys.modules.get(name)
        if module is None or path is None:
            continue
        loaded, stamp = getattr(module, "__spec__", None), _stamp(path)
        first = _LOADED.get(name)
        if first is None or first[0] is not loaded:  # first met, or loaded again (importlib.reload): as on disk
            _LOADED[name] = (loaded, stamp, _text_digest(path))
        elif check and first[1] != stamp:
            text = _text_digest(path)
            if text != first[2]:
                raise CabenchError(f"{name}: its source {path} changed since this process imported it, so the code "
                                   "that would run is not the code on disk, which keys the cached cells; start a new "
                                   f"process, or importlib.reload({name}) first")
            _LOADED[name] = (loaded, stamp, text)  # touched, the same text
    if check:
        _no_stale_imports([name for name, _ in files])


def _no_stale_imports(names: list[str]) -> None:
    """Refuse a module holding a function of another of ``names`` whose code is not the code of the function of that
    name and qualified name the other holds now (the other was loaded again after the first imported from it).
    Wrappers are compared by what they wrap (``functools.wraps``), and code patched in place (IPython's autoreload)
    is the code now: only what would run differs."""
    modules = {name: sys.modules[name] for name in names if name in sys.modules}
    for name, module in modules.items():
        for held in list(vars(module).values()):
            origin = getattr(held, "__module__", None)
            if origin == name or origin not in modules:
                continue
            if inspect.isclass(held):  # a class imported by name (from shapes import Scaled): its methods' code
                now = getattr(modules[origin], held.__name__, None)
                if inspect.isclass(now) and now is not held and now.__qualname__ == held.__qualname__ and (
                        _class_code(now) != _class_code(held)):
                    raise CabenchError(f"{name}: holds {origin}.{held.__name__} as it was before {origin} was "
                                       "loaded again, so the code that would run is not the code on disk; "
                                       f"importlib.reload({name}) too, or start a new process")
                continue
            if not inspect.isfunction(held):
                continue
            now = getattr(modules[origin], getattr(held, "__name__", ""), None)
            if not inspect.isfunction(now) or now.__qualname__ != held.__qualname__:
                continue  # (a function of that name made elsewhere: a closure, a factory's)
            before, after = inspect.unwrap(held), inspect.unwrap(now)
            if getattr(before, "__code__", None) != getattr(after, "__code__", None):
                raise CabenchError(f"{name}: holds {origin}.{held.__name__} as it was before {origin} was loaded "
                                   f"again, so the code that would run is not the code on disk; "
                                   f"importlib.reload({name}) too, or start a new process")


def _class_code(cls: type) -> dict[str, Any]:
    """The code of a class's own functions, by name."""
    return {k: getattr(inspect.unwrap(v), "__code__", None) for k, v in vars(cls).items() if inspect.isfunction(v)}


def _stamp(path: Path | None) -> tuple[int, int] | tuple[()]:
    try:
        return () if path is None else (path.stat().st_size, path.stat().st_mtime_ns)
    except OSError:
        return ()


@functools.cache
def _source_digest(module_name: str, state: tuple[tuple[Any, ...], ...]) -> str:
    module = importlib.import_module(module_name)
    try:
        text = inspect.getsource(module)
    except (OSError, TypeError):
        text = repr(module)
    h = hashlib.sha256(text.encode())
    for name, path, *_ in state[1:]:
        h.update(f"\0{name}\0".encode() + path.read_bytes())
    return h.hexdigest()


@functools.cache
def _library_roots() -> tuple[str, ...]:
    """The folders of the standard library, of installed packages and of cabench: modules there are not yours
    (an installed library's version is what it is; cabench's code is in every key)."""
    import cabench  # the package, loaded by now: a module-level import would be circular

    roots = {str(Path(str(cabench.__file__)).parent)}
    for base in ({}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}):
        paths = sysconfig.get_paths(vars=base or None)
        roots.update(paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths)
    roots.add(site.getusersitepackages())
    return tuple(os.path.realpath(root) for root in roots)


def _file_of(name: str) -> Path | None:
    """The source file of module ``name``, found on the import path without importing it or its parents (an
    import a method never runs — optional, for type hints — must not run now), or None."""
    spec = _spec_of(name)
    origin = getattr(spec, "origin", None)
    return Path(os.path.realpath(origin)) if origin and origin.endswith(".py") else None


def _spec_of(name: str) -> Any:
    """Module ``name``'s spec from the loaded module, else from the path finder (its parent's search locations
    for a submodule); None when it cannot be found so."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return getattr(loaded, "__spec__", None)
    parent, _, _ = name.rpartition(".")
    try:
        if not parent:
            return importlib.machinery.PathFinder.find_spec(name)
        above = _spec_of(parent)
        locations = getattr(above, "submodule_search_locations", None)
        return importlib.machinery.PathFinder.find_spec(name, list(locations)) if locations else None
    except Exception:  # noqa: BLE001 - a name that cannot be found so is not followed
        return None


def own_imports(module_name: str) -> dict[str, Path]:
    """:func:`_own_imports`, found once per process for each state of the module's file (its path and time)."""
    path = _file_of(module_name)
    stamp = path.stat().st_mtime_ns if path is not None and path.is_file() else None
    return dict(_own_imports(module_name, str(path), stamp))


@functools.cache
def _own_imports(module_name: str, path: str, stamp: int | None) -> tuple[tuple[str, Path], ...]:
    return tuple(_found_imports(module_name).items())


def _found_imports(module_name: str) -> dict[str, Path]:
    """The modules of your own that module ``module_name`` imports, at any depth, by name: those whose source is
    neither in the standard library, nor in installed packages, nor cabench's — or that belong to the same
    top-level package as ``module_name`` wherever it is installed. Found by parsing ``import`` statements (a
    module imported by a computed name is not followed)."""
    top = module_name.split(".")[0]
    roots = _library_roots()
    found: dict[str, Path] = {}
    todo, seen = [module_name], {module_name}
    while todo:
        name = todo.pop()
        path = _file_of(name)
        if path is None:
            continue
        if name != module_name:
            found[name] = path
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            continue
        for imported in _imported_names(tree, name, path.name == "__init__.py"):
            if imported in seen:
                continue
            seen.add(imported)
            where = _file_of(imported)
            if where is not None and (imported.split(".")[0] == top
                                      or not any(str(where).startswith(root + os.sep) for root in roots)):
                todo.append(imported)
    return found


def _imported_names(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module an ``import`` statement of ``tree`` names, at any level of the code (:func:`modules_named`)."""
    return {name for node in ast.walk(tree) for name in modules_named(node, module, is_package)}


def modules_named(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The modules an ``import`` or ``from … import`` statement ``node`` of module ``module`` names, relative ones
    resolved, with the names ``from M import x`` may import as submodules (``M.x``); none for another statement."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        parts = module.split(".")
        parts = parts[: len(parts) - node.level + (1 if is_package else 0)]
        base = ".".join(parts + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [base, *(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")] if base else []


_TABLE: dict[tuple[str, str], Method] = {}


def register(method: Method) -> None:
    """Enter ``method`` in the table of its setting. Its name is new there, or it comes again from the
    same module (a module imported twice)."""
    name, setting = method.spec.name, method.spec.setting
    if not _NAME.fullmatch(name):
        raise CabenchError(f"methods: cannot register {name!r}: a method's name is letters, digits, '-', '_', '.' "
                           "and '+' (a name with ':' is a module:object)")
    old = _TABLE.get((setting, name))
    if old is not None and (old.source is None or old.source != method.source):
        raise CabenchError(f"methods: '{name}' is already the {setting} method {old.spec.display}; "
                           "give yours another name")
    other = next((m for (s, n), m in _TABLE.items() if n == name and s != setting), None)
    if other is not None and method.source is not None and (  # tables and reports find a display by name alone
            other.source != method.source or other.spec.display != method.spec.display):
        raise CabenchError(f"methods: '{name}' is already the {other.spec.setting} method {other.spec.display}; "
                           "give yours another name")
    _TABLE[(setting, name)] = method


def find(name: str, setting: str) -> Method | None:
    return _TABLE.get((setting, name))


#: The functions a decorator registered (by identity, held weakly), with the name and setting each was registered as.
_DECORATED: weakref.WeakKeyDictionary[Any, tuple[str, str]] = weakref.WeakKeyDictionary()


def mark_decorated(function: Any, name: str, setting: str) -> None:
    """Remember that ``function`` was registered by a decorator as the method ``name`` of ``setting``."""
    with contextlib.suppress(TypeError):  # (an object that cannot be referred to weakly is never found again)
        _DECORATED[function] = (name, setting)


def decorated(function: Any, setting: str) -> Method | None:
    """The method a decorator registered ``function`` as in ``setting`` (a config naming it as ``module:object``
    gets it, with the display and checks the decorator declared), else None."""
    try:
        found = _DECORATED.get(function)
    except TypeError:  # unhashable, or not weakly referable: no decorator registered it
        return None
    return find(found[0], setting) if found is not None and found[1] == setting else None


def registered(setting: str) -> list[Method]:
    """The methods of ``setting``: the paper's, then cabench's own, then yours, each in registration order."""
    methods = [m for (s, _), m in _TABLE.items() if s == setting]
    return sorted(methods, key=lambda m: ORIGINS.index(m.spec.origin))
