"""Cell keys: a hash of everything that determines a cell's result, the code that computes it included.

A key hashes the problem's identity, the setting, the seed, the cell
(:meth:`cabench.cells.Cell.describe`), the package version and
:func:`code_hash`: the source of the modules in :data:`COMPUTING` and of every
``cabench`` module they import, found by parsing their import statements (so a
new module is covered without a list to maintain). Display data (method names as
shown, colours, markers, figure captions) is not computing code: it lives in
the modules of :data:`DISPLAY_ONLY` or downstream (plots, report), so editing
it keeps every cached cell, while any byte changed in an engine, a method's
rule, the streams or the normalisation makes every key new.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import cabench
from cabench.cells import Cell
from cabench.methods.spec import modules_named
from cabench.record import stable_hash

#: The modules that compute a cell's result: the cell (engines, method rules and streams, by its
#: imports) and the problems it runs on (log replay with its normalisation; synthetic instances).
COMPUTING = ("cabench.cells", "cabench.problem", "cabench.synthetic")
#: Modules that computing code imports for display data only (names as shown, colours, markers):
#: neither hashed nor followed, so they import no ``cabench`` module.
DISPLAY_ONLY = ("cabench.methods.styles",)


def _module_file(package: Path, module: str) -> Path | None:
    parts = module.split(".")[1:]
    base = package.joinpath(*parts) if parts else package
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)  # what a statement list holds


def _run_time_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement of ``tree`` less the bodies of ``if TYPE_CHECKING:`` blocks (imports for type hints only).

    Imports are statements, so only statement lists are followed (bodies, ``else``, ``finally``, exception
    handlers, ``match`` cases), never an expression's subtree."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            todo += node.orelse
            continue
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                todo += (v for v in value if isinstance(v, _BLOCKS))


def imported_modules(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """``cabench`` modules a parsed module imports when it runs (absolute and relative imports)."""
    return {name for node in _run_time_nodes(tree) for name in modules_named(node, module, is_package)
            if name.split(".")[0] == "cabench"}


@cache
def _imports_of(text: str, filename: str, module: str, is_package: bool) -> frozenset[str]:
    """:func:`imported_modules` of a module's source text, parsed once per text (a process hashing an edited
    copy of the package parses only the files that changed)."""
    return frozenset(imported_modules(ast.parse(text, filename=filename), module, is_package))


def source_files(package: Path | None = None) -> list[Path]:
    """The computing sources: :data:`COMPUTING` and every module they import, with their parent packages,
    less :data:`DISPLAY_ONLY`."""
    package = package or Path(cabench.__file__).resolve().parent
    seen: dict[str, Path] = {}
    todo = list(COMPUTING)
    while todo:
        module = todo.pop()
        if module in seen or module in DISPLAY_ONLY:
            continue
        path = _module_file(package, module)
        if path is None:
            continue  # a name imported from a module, not a module
        seen[module] = path
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += sorted(_imports_of(path.read_text(), str(path), module, path.name == "__init__.py"))
    return sorted(set(seen.values()))


def sources_hash(package: Path) -> str:
    """SHA-256 (first 16 hex digits) of the computing sources of the package folder ``package``."""
    h = hashlib.sha256()
    for path in source_files(package):
        h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@cache
def code_hash() -> str:
    """The hash of this installation's computing sources (part of every cell key; in ``config.yaml``)."""
    return sources_hash(Path(cabench.__file__).resolve().parent)


def cell_key(identity: dict[str, Any], setting: str, seed: int, cell: Cell) -> str:
    """Hash of everything that determines a cell's result, including the code that computes it."""
    payload = {"problem": identity, "setting": setting, "seed": seed, "cell": cell.describe(),
               "code": code_hash(), "version": cabench.__version__}
    return stable_hash(payload, 32)
