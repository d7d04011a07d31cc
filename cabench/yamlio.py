"""YAML as cabench reads it: safe, YAML 1.2 numbers and booleans, no duplicate keys.

PyYAML implements YAML 1.1, where ``1e9`` and ``1e-3`` (no dot) are strings, ``010`` is 8 (octal), ``0o10`` a
string, ``1:30`` is 90 (base 60) and ``yes``, ``no``, ``on``, ``off`` are booleans. cabench reads them as YAML
1.2's core schema does, as every user means them: ``1e9`` is a number, ``010`` is 10, ``0o10`` is 8, ``0x10`` is
16, ``1:30`` and ``yes`` are strings, and only ``true``/``false`` (also ``True``, ``TRUE``, ``False``, ``FALSE``)
are booleans. One leniency over the core schema stays: ``_`` between digits (``1_000``) is read as PyYAML reads it.
A key given twice in one mapping is an error (PyYAML would silently keep the last).

Every YAML file cabench writes goes through :func:`dump_yaml`, whose dumper quotes every string that either
reading takes for something else: one YAML 1.2 reads as a number (a hash ``253592126e722573``, a name ``1e5``,
``0o10``) and one YAML 1.1 reads as a number, a boolean or a date (``010``, ``yes``, ``1:30``), so each file reads
back exactly as written, by cabench and by any YAML 1.1 reader (``yaml.safe_load``) alike. A results
``config.yaml`` written by an older cabench is YAML 1.1: :func:`cabench.results.read_record` reads it so where
the readings differ.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

_FLOAT_12 = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?
    |[-+]?\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.X)
_INT_12 = re.compile(r"""^(?:[-+]?[0-9][0-9_]*
    |0o[0-7][0-7_]*
    |0x[0-9a-fA-F][0-9a-fA-F_]*)$""", re.X)
_BOOL_12 = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
#: The implicit types whose YAML 1.1 rules :class:`Loader` replaces with YAML 1.2's.
_REPLACED = ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _yaml_12_resolvers() -> dict[Any, list[Any]]:
    """PyYAML's safe resolvers with YAML 1.2 core booleans, integers and floats in place of YAML 1.1's."""
    out = {k: [r for r in v if r[0] not in _REPLACED] for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    for tag, pattern, first in (("tag:yaml.org,2002:bool", _BOOL_12, "tTfF"),
                                ("tag:yaml.org,2002:int", _INT_12, "-+0123456789"),
                                ("tag:yaml.org,2002:float", _FLOAT_12, "-+0123456789.")):
        for char in first:
            out.setdefault(char, []).append((tag, pattern))
    return {k: v for k, v in out.items() if v}


#: PyYAML's safe loader with libyaml's parser where PyYAML was built with it (YAML 1.1, as ``yaml.safe_load``).
C_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Rules:
    """YAML 1.2 integers and duplicate-key errors, over a safe loader."""

    def construct_yaml_int_12(self, node: yaml.ScalarNode) -> int:
        """An integer as YAML 1.2 reads it: decimal (a leading 0 too), ``0o`` octal, ``0x`` hexadecimal."""
        value = str(self.construct_scalar(node)).replace("_", "")  # type: ignore[attr-defined]
        if value.startswith(("0o", "0x")):
            return int(value[2:], 8 if value[1] == "o" else 16)
        return int(value, 10)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)  # type: ignore[attr-defined]
            try:
                hash(key)
            except TypeError:
                continue  # reported by the base class
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key '{key}' is given twice (lines {seen[key] + 1} and "
                                f"{key_node.start_mark.line + 1}); keep one", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class Loader(_Rules, yaml.SafeLoader):
    """Safe loader with YAML 1.2 booleans, integers and floats, and duplicate-key errors."""

    yaml_implicit_resolvers = _yaml_12_resolvers()


class _FastLoader(_Rules, C_SAFE_LOADER):  # type: ignore[misc,valid-type]
    """:class:`Loader` with libyaml's parser (where PyYAML was built with it): the same rules, in C up to the
    nodes. Only for documents it reads: an error's message comes from :class:`Loader`."""

    yaml_implicit_resolvers = Loader.yaml_implicit_resolvers


for _cls in (Loader, _FastLoader):
    _cls.add_constructor("tag:yaml.org,2002:int", _Rules.construct_yaml_int_12)


class Dumper(yaml.SafeDumper):
    """Safe dumper that quotes every string :class:`Loader` or a YAML 1.1 reader would not read back as that
    string: its resolvers are YAML 1.1's and YAML 1.2's together."""

    yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeDumper.yaml_implicit_resolvers.items()}


for _char, _resolvers in Loader.yaml_implicit_resolvers.items():
    for _resolver in _resolvers:
        if _resolver not in Dumper.yaml_implicit_resolvers.get(_char, []):
            Dumper.yaml_implicit_resolvers.setdefault(_char, []).append(_resolver)


def dump_yaml(data: Any, sort_keys: bool = False, width: int = 88) -> str:
    """YAML text of ``data`` that :func:`load_yaml` and a YAML 1.1 reader both read back equal (strings stay
    strings)."""
    return yaml.dump(data, Dumper=Dumper, sort_keys=sort_keys, allow_unicode=True, width=width)


def load_yaml(text: str) -> Any:
    """Parse YAML text with :class:`Loader`'s rules (raises ``yaml.YAMLError`` on bad input, nesting too deep
    included). libyaml's parser reads it where it can (ten times faster on a results ``config.yaml``); what it
    refuses is read again by :class:`Loader`, whose reading or message stands."""
    try:
        return yaml.load(text, Loader=_FastLoader)  # noqa: S506 - a SafeLoader subclass
    except (yaml.YAMLError, RecursionError, ValueError):  # (ValueError: libyaml takes UTF-8, not every str)
        pass
    try:
        return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise yaml.YAMLError("nested too deeply to read") from None


def yaml_problem(exc: yaml.YAMLError) -> str:
    """One line saying what is wrong with a YAML text, and where."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"{problem}{where}"


def load_config_file(path: Path, what: str = "config", where: str = "") -> Any:
    """A YAML file's content (a ``what``: config, mapping, price table); one line naming the file (after
    ``where``, e.g. the option that gave it) when it is missing, unreadable or malformed."""
    from cabench.errors import CabenchError

    named = f"{where}{path}"
    if path.exists() and not path.is_file():  # /dev/null, a folder, a pipe: there, but no file to read
        raise CabenchError(f"{named}: not a file ({'a folder' if path.is_dir() else 'a device, pipe or socket'}); "
                           f"a {what} is a YAML file")
    if not path.is_file():
        raise CabenchError(f"{named}: {what} file not found")
    try:
        return load_yaml(path.read_text())
    except yaml.YAMLError as exc:
        raise CabenchError(f"{named}: malformed YAML ({yaml_problem(exc)}); fix the syntax there") from None
    except UnicodeDecodeError:
        raise CabenchError(f"{named}: not a text file; a {what} is YAML") from None
