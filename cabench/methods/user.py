"""Methods of your own, checked at their boundary.

A config names one as ``module:object`` (on your Python path), or your code registers it with its
family's decorator (:func:`cabench.methods.index.index_method`,
:func:`cabench.methods.elimination.schedule`). Either way its function is wrapped in a
:class:`UserMethod`, which the batched engines and the per-pull policies both call: its signature
is checked when it is registered or the config is read, and on every call what it raises and what it
returns (shape, numbers, finiteness). Each problem is one :class:`UserMethodError` line naming it.
"""

from __future__ import annotations

import dis
import functools
import hashlib
import importlib
import inspect
import logging
import os
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from cabench.errors import CabenchError
from cabench.methods.spec import stamp_loaded


class UserMethodError(CabenchError):
    """A method of your own does not fit its setting, failed, or returned what the method's loop cannot
    use. One line naming it; under ``cabench live`` it ends the run."""


#: How each setting calls a method of your own: what it is, its parameters (passed positionally), what it returns.
CALLS = {
    "online": ("online index function", ("n", "upper", "lower_cost"), "index"),
    "psi": ("identification schedule", ("budget", "l_k", "spend", "level", "active_costs", "k_active"), "target"),
}
_INT64_LIMIT = 2.0**63


def load_user(name: str) -> Callable[..., Any]:
    """The object ``module:object`` names; a one-line error when it cannot be imported."""
    module_name, _, attr = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure of user code at import (SystemExit too) is one line
        not_found = isinstance(exc, ModuleNotFoundError) and exc.name is not None and (
            module_name == exc.name or module_name.startswith(f"{exc.name}."))  # (not a module it imports)
        fix = ("put the module on your Python path (PYTHONPATH)" if not_found else
               "fix what it says" if isinstance(exc, CabenchError) else "fix the module")
        text = " ".join(str(exc).split())[:300]
        raise CabenchError(f"methods: cannot import '{module_name}' for '{name}' ({type(exc).__name__}: {text}); "
                           f"{fix}") from None
    stamp_loaded(module_name)  # the code that runs is its file's now: an edit after this is refused, not keyed
    obj: Any = module
    missing = object()
    for part in attr.split("."):
        obj = getattr(obj, part, missing)
        if obj is missing:
            raise CabenchError(f"methods: '{module_name}' has no '{attr}' (for '{name}')")
    if not callable(obj):
        raise CabenchError(f"methods: '{name}' is not callable; give an index function or a schedule")
    return obj


@dataclass(frozen=True)
class UserMethod:
    """A function of your own checked at its boundary, called like the function itself.

    Built by :func:`checked`. Each call gets copies of the array arguments (the method cannot change
    the loop's state), turns anything the method raises (``SystemExit`` too; not
    ``KeyboardInterrupt``) into a :class:`UserMethodError`, and checks the result: numbers of exactly
    the shape of ``n`` (online) or ``spend`` (identification); an index may be ``+inf`` (pull first;
    ties go to the lowest arm) but not NaN or ``-inf`` (the loop masks infeasible arms with
    ``-inf``); a target is a finite number of samples within the int64 range, never negative.
    """

    name: str
    setting: str
    function: Callable[..., Any]

    def state_digest(self) -> str | None:
        """SHA-256 of the settings the method holds beyond its source files (:func:`held_settings`), or None
        where there are none: a plain function of a module file. A sweep in one process that changes them
        (``obj.power = 2``, ``mine.SHARE = 0.9``, a factory's new closure) changes the key of the cells the method
        runs, as an edit of its source does."""
        _refuse_cached_helper(self.name, self.function)  # (its module loaded whole by now)
        held = held_settings(self.function)
        return None if held is None else hashlib.sha256(held.encode()).hexdigest()

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
            as_float = values.astype(np.float64)
            bad = ~(np.abs(as_float) < _INT64_LIMIT) | (as_float < 0)
            rule = "a target is a finite number of samples below 2^63, never negative"
        if bad.any():
            first = int(np.flatnonzero(bad.reshape(-1))[0])
            raise UserMethodError(f"{where} {values.reshape(-1)[first]} ({int(bad.sum())} of {values.size} values); "
                                  f"{rule}")
        return values


def held_settings(function: Any) -> str | None:
    """What a method of your own holds beyond the source files that key its cells, as text that is the same in
    every process for the same settings (:func:`_canonical`): a callable object's attributes (but ``display``) and
    its class's, a partial's arguments, a bound method's object, a function's closure and attributes (but
    ``display``), and the plain data (:func:`_plain`) its code reads from global variables (``SHARE = 0.5`` set
    to 0.9 in a notebook), its own or that of the functions of its module it calls (:func:`_codes_run`). Code
    that is in no file (a notebook's cell, ``exec``) is keyed by its text (:func:`_code_text`). None where there
    is nothing of these: a plain function of a module file that reads no plain global."""
    function = _python(function)
    parts = [] if inspect.isfunction(function) and not _function_state(function) else [_canonical(function)]
    codes = _codes_run(function)
    data = {name: value for code, names in codes for name in _names(code) if name in names
            and _plain(value := names[name])}
    if data:
        parts.append(f"globals {_canonical(data)}")
    if _fileless(function):  # (its text is in no file that keys it)
        parts.append("code " + " ".join(sorted(hashlib.sha256(_code_text(code).encode()).hexdigest()  # (a class's
                                               for code, _ in codes)))  # functions in its dict's order, which differs)
    return " ".join(parts) or None


def _fileless(function: Any) -> bool:
    """Whether the module a method is defined in has no source file that keys its cells: ``__main__`` (a notebook,
    a script: never imported by its name), a module made by ``exec``, or one this process does not hold (a worker
    given the method by value); or whether the method's code is not that file's (run by ``exec`` into the module's
    globals) — decided alike in every process."""
    while isinstance(function, functools.partial) or inspect.ismethod(function):
        function = _python(function.func) if isinstance(function, functools.partial) else function.__func__
    name = getattr(function, "__module__", None) if inspect.isfunction(function) else type(function).__module__
    module = sys.modules.get(str(name))
    if name == "__main__" or module is None:
        return True
    try:
        found = inspect.getsourcefile(module)
    except TypeError:
        return True
    if not (found and os.path.isfile(found)):
        return True
    # code run by exec into the module's globals (a rules file read at import): its text is not the module's file.
    # A function a worker was given by value reads as cloudpickle's "<dynamic-code>": decided as its module's.
    code = getattr(function, "__code__", None) if inspect.isfunction(function) else None
    return code is not None and code.co_filename != "<dynamic-code>" and \
        os.path.realpath(code.co_filename) != os.path.realpath(found)


def _python(function: Any) -> Any:
    """The Python function a compiled one (numba's ``@njit``) was made from; else ``function``."""
    try:
        made_from = getattr(function, "py_func", None)
    except Exception:  # noqa: BLE001 - (an object whose __getattr__ raises)
        return function
    return made_from if inspect.isfunction(made_from) else function


def _codes_of(function: Any) -> list[tuple[types.CodeType, dict[str, Any]]]:
    """The code a method runs as its own, each with the globals it reads names from: a function's, a partial's
    function's, a bound method's, or a callable object's class's (its functions, static and class methods and
    properties)."""
    if isinstance(function, functools.partial):
        return _codes_of(_python(function.func))
    if inspect.ismethod(function):
        function = function.__func__
    if inspect.isfunction(function):
        return [(function.__code__, function.__globals__)]
    return [(f.__code__, f.__globals__) for cls in type(function).__mro__[:-1] for v in vars(cls).values()
            for f in _functions_of(v)]


def _functions_of(member: Any) -> list[Any]:
    """The functions a class member runs: itself, a static or class method's, a property's accessors."""
    if isinstance(member, (staticmethod, classmethod)):
        member = member.__func__
    if isinstance(member, property):
        return [f for f in (member.fget, member.fset, member.fdel) if inspect.isfunction(f)]
    return [member] if inspect.isfunction(member) else []


def _codes_run(function: Any, depth: int = 8) -> list[tuple[types.CodeType, dict[str, Any]]]:
    """:func:`_codes_of`, and the code of the functions of the same module that code calls by their global names
    (a helper reading ``SHARE``), to ``depth`` calls."""
    found = _codes_of(function)
    seen = {id(code) for code, _ in found}
    for code, names in found:  # (grows as it goes)
        if depth <= 0 or len(found) > 256:
            break
        for name in _names(code):
            helper = _python(names.get(name))
            if getattr(helper, "__module__", None) != names.get("__name__"):
                continue
            run = [helper] if inspect.isfunction(helper) else [
                f for v in vars(helper).values() for f in _functions_of(v)] if inspect.isclass(helper) else []
            for f in run:  # a helper function of its module, or the functions of a class of it
                if id(f.__code__) not in seen:
                    seen.add(id(f.__code__))
                    found.append((f.__code__, f.__globals__))
        depth -= 1
    return found


@functools.lru_cache(maxsize=4096)
def _names(code: types.CodeType) -> tuple[str, ...]:
    """The global names a code object and the code nested in it (its functions, comprehensions) read: the names
    of its global loads, not of attributes (``np.mean`` reads ``np``, not a global ``mean``). Found once per code
    (a key is made several times per cell)."""
    loads = [str(i.argval) for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")]
    return (*loads, *(n for c in code.co_consts if isinstance(c, types.CodeType) for n in _names(c)))


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is plain data: the same in every process that sets it alike."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind != "O"
    if depth < 16 and isinstance(value, (list, tuple, set, frozenset)):
        return all(_plain(v, depth + 1) for v in value)
    if depth < 16 and isinstance(value, dict):
        return all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in value.items())
    return False


def _code(value: Any) -> str:
    """SHA-256 of a function's code (of a class, of its functions'), the same in every process for the same text:
    its instructions, names and constants, nested code included (not its file's name or line numbers)."""
    if inspect.isclass(value):
        return hashlib.sha256(" ".join(f"{k}:{_code(f)}" for k, v in sorted(vars(value).items())
                                       for f in _functions_of(v)).encode()).hexdigest()
    return hashlib.sha256(_code_text(_python(value).__code__).encode()).hexdigest()


def _code_text(code: types.CodeType) -> str:
    """A code object's instructions, names and constants as text, nested code included, a constant set in a sorted
    order (a frozenset's own order follows the process's string hashing)."""
    consts = [_code_text(c) if isinstance(c, types.CodeType) else _canonical(c) for c in code.co_consts]
    return repr((code.co_code.hex(), code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
                 code.co_argcount, code.co_kwonlyargcount, code.co_flags, consts))


def _function_state(function: Any) -> tuple[Any, ...]:
    """A function's closure variables and attributes (but ``display``): settings its source does not hold."""
    cells = [c.cell_contents for c in function.__closure__ or () if _filled(c)]
    attributes = {k: v for k, v in vars(function).items() if k != "display"}
    return (cells, attributes) if cells or attributes else ()


_EMPTY = object()


def _filled(cell: Any) -> bool:
    """Whether a closure's cell holds a value (one of a variable assigned later is empty)."""
    try:
        return cell.cell_contents is not _EMPTY
    except ValueError:
        return False


def _attributes(value: Any) -> dict[str, Any]:
    """An object's instance attributes: its ``__dict__`` and ``__slots__``."""
    held = dict(getattr(value, "__dict__", {}))
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot not in ("__dict__", "__weakref__") and hasattr(value, slot):
                held.setdefault(slot, getattr(value, slot))
    return held


def _canonical(value: Any, depth: int = 0, seen: frozenset[int] = frozenset(),
               memo: dict[int, tuple[Any, str]] | None = None) -> str:
    """:func:`_read`, each object read once per call (``memo``: by identity, the object held so that no other
    takes its identity); where reading ``value`` fails (an object whose attributes cannot be read), its type and
    repr."""
    memo = {} if memo is None else memo
    known = memo.get(id(value))
    if known is not None and known[0] is value:
        return known[1]
    try:
        text = _read(value, depth, seen, memo)
    except Exception:  # noqa: BLE001 - an object of the user's that cannot be read is keyed by what can be
        try:
            text = f"<{type(value).__qualname__}:{_unplaced(repr(value))}>"
        except Exception:  # noqa: BLE001
            text = f"<{type(value).__qualname__}>"
    if not isinstance(value, _SCALARS) and (not text.startswith("<") or ":" in text):  # (not a mark of a cycle
        memo[id(value)] = (value, text)  # or of the depth, which depend on the path)
    return text


_SCALARS = (type(None), bool, int, float, complex, str, bytes, np.generic)


def _unplaced(text: str) -> str:
    """A repr less the memory address it may show (``<_thread.lock object at 0x7f…>``), which differs between
    processes: such an object is keyed by its type and what else its repr shows."""
    return re.sub(r" at 0x[0-9A-Fa-f]+", "", text)


def _read(value: Any, depth: int, seen: frozenset[int], memo: dict[int, tuple[Any, str]]) -> str:
    """``value`` as text, equal for equal settings in any process: numbers by their repr, arrays by their
    bytes, pandas objects by their values, mappings and sets in a sorted order, functions by name, code, closure
    and attributes, classes by name, other objects by their type, attributes and their class's, and where they
    have no attributes of their own as pickle rebuilds them (:func:`_reduced`: a date, a random generator), to a
    depth of 64; an object met again inside itself by its type alone."""
    if depth > 64 or id(value) in seen:
        return f"<{type(value).__qualname__}>"
    inner = seen | {id(value)}

    def each(items: Any) -> list[str]:
        return [_canonical(v, depth + 1, inner, memo) for v in items]

    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, np.ma.MaskedArray):  # (its mask too)
        return f"masked{_canonical((value.data, np.ma.getmaskarray(value)), depth + 1, inner, memo)}"
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return f"ndarray:O:{value.shape}[{','.join(each(value.ravel()))}]"
        data = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return f"ndarray:{value.dtype.str}:{value.shape}:{data}"
    if isinstance(value, np.generic):
        return f"{value.dtype.str}:{value.item()!r}"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{','.join(each(value))}]"
    if isinstance(value, (set, frozenset)):
        return f"{type(value).__name__}{{{','.join(sorted(each(value)))}}}"
    if isinstance(value, dict):
        pairs = sorted(zip(each(value.keys()), each(value.values())))
        return f"{type(value).__name__}{{{','.join(f'{k}:{v}' for k, v in pairs)}}}"
    value = _python(value)
    if inspect.isfunction(value):  # its code too: two lambdas share a name
        state = _function_state(value)
        return (f"function:{value.__module__}.{value.__qualname__}:{_code(value)}"
                + (_canonical(state, depth + 1, inner, memo) if state else ""))
    if inspect.isbuiltin(value) or inspect.isclass(value) or inspect.ismodule(value):
        return f"{type(value).__name__}:{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', value)}"
    if isinstance(value, functools.partial):
        return f"partial{_canonical((value.func, value.args, value.keywords), depth + 1, inner, memo)}"
    if inspect.ismethod(value):
        return f"method{_canonical((value.__func__, value.__self__), depth + 1, inner, memo)}"
    if isinstance(value, logging.Logger):  # (by its name: its manager holds every logger of the process)
        return f"logger:{value.name}"
    if isinstance(value, os.PathLike):  # (by its text: a path caches its hash, which differs between processes)
        return f"path:{os.fspath(value)!r}"
    if value is np.random.mtrand._rand:  # numpy's global generator, seeded at random in each process
        return "numpy's global generator"
    if isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
        data = pd.util.hash_pandas_object(value, index=not isinstance(value, pd.Index)).to_numpy().tobytes()
        names = list(value.columns) if isinstance(value, pd.DataFrame) else [getattr(value, "name", None)]
        return f"{type(value).__name__}:{_canonical(names, depth + 1, inner, memo)}:{hashlib.sha256(data).hexdigest()}"
    attributes = _attributes(value)
    attributes.pop("display", None)  # (how a method is shown: no setting of what it does)
    own = {k: v for cls in type(value).__mro__[:-1] for k, v in vars(cls).items()  # its class's settings
           if not k.startswith("__") and k != "display"
           and not (inspect.isroutine(v) or isinstance(v, (property, classmethod, staticmethod)))}
    shown = "" if attributes else f":{_reduced(value, depth, inner, memo)}"
    if attributes or own:
        return (f"{type(value).__module__}.{type(value).__qualname__}{_canonical(attributes, depth + 1, inner, memo)}"
                + (f"class{_canonical(own, depth + 1, inner, memo)}" if own else "") + shown)
    return f"{type(value).__qualname__}{shown}"


def _reduced(value: Any, depth: int, seen: frozenset[int], memo: dict[int, tuple[Any, str]]) -> str:
    """An object without attributes of its own as pickle would rebuild it (``__reduce_ex__``: its arguments and
    state: a date's bytes, a random generator's state), else by its repr less any memory address."""
    try:
        reduced = value.__reduce_ex__(4)
    except Exception:  # noqa: BLE001 - (an object pickle cannot take)
        reduced = None
    if isinstance(reduced, tuple) and len(reduced) >= 2:
        return f"reduced{_canonical(reduced[1:3], depth + 1, seen, memo)}"
    return "" if type(value).__repr__ is object.__repr__ else _unplaced(repr(value))


#: Why a method compiled with numba's cache=True, or calling a helper compiled so, is refused.
_NUMBA_CACHE = ("whose cache files are keyed by the function's own source, not by the helpers and settings it reads: "
                "after an edit of those, numba would run its old code under the new cells' keys; compile it without "
                "cache=True (cabench keeps the results of its cells)")


def _refuse_cached_helper(name: str, function: Any) -> None:
    """Refuse ``function`` (the method ``name``) where a function of its own module that it reads (through its
    module's helpers, as its key follows them) is compiled with numba's ``cache=True``: its cached code runs under
    the method's new keys too. A library's function compiled so is no helper of the method's own. Checked when the
    method is registered and again when it runs (a decorator registers it before the helpers below it exist)."""
    for code, names in _codes_run(_python(function)):
        for n in _names(code):
            value = names.get(n)
            if _numba_cached(value) and getattr(_python(value), "__module__", None) == names.get("__name__"):
                raise UserMethodError(f"methods: '{name}' calls '{n}', compiled with numba's cache=True, "
                                      f"{_NUMBA_CACHE}")


def _numba_cached(value: Any) -> bool:
    """Whether ``value`` is a function compiled by numba's ``@njit(cache=True)``."""
    try:
        return type(getattr(value, "_cache", None)).__name__ == "FunctionCache"
    except Exception:  # noqa: BLE001 - (an object whose __getattr__ raises)
        return False


def checked(name: str, setting: str, function: Callable[..., Any]) -> UserMethod:
    """``function`` as the checked method ``name`` of ``setting``; a one-line error naming it when its
    signature cannot take the setting's arguments (see :data:`CALLS`)."""
    kind, parameters, result = CALLS[setting]
    call = f"{result}({', '.join(parameters)})"
    inner = function
    while isinstance(inner, functools.partial):  # (a partial of a compiled function compiles it as it is)
        inner = inner.func
    if _numba_cached(inner):
        raise UserMethodError(f"methods: '{name}' is compiled with numba's cache=True, {_NUMBA_CACHE}")
    _refuse_cached_helper(name, inner)
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
