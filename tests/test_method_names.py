"""No module outside the registry and the method modules branches on a method's name.

Behaviour, feasibility, style and roles (the comparison base, the tuned method) live on each method's
object (``cabench/methods/``) and are asked through ``cabench/registry.py``; a name written elsewhere, or
a ``":" in name`` test for "is this a method of one's own", is a second source of truth.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cabench import registry

PACKAGE = Path(__file__).resolve().parents[1] / "cabench"
#: Where a method's name may be written: the methods themselves, and the queries about them.
HOME = ("methods/", "registry.py")
#: Modules allowed to, and why.
ALLOWED_NAMES = {
    "paper.py": "the paper's published numbers, which the paper gives by method",
}
ALLOWED_COLON = {
    "live/client.py": "brackets an IPv6 host in a URL; not a method name",
}
BUILT_IN = {name for setting in ("online", "psi") for name in registry.names(setting)
            if registry.spec(name, setting).origin != "user"}


def _modules() -> list[tuple[str, ast.AST]]:
    return [(path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(), str(path)))
            for path in sorted(PACKAGE.rglob("*.py"))]


def method_names(tree: ast.AST) -> list[tuple[int, str]]:
    """String literals that are exactly a built-in method's name."""
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in BUILT_IN]


def colon_tests(tree: ast.AST) -> list[int]:
    """``":" in x`` and ``":" not in x``."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and node.left.value == ":"
            and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)]


def test_the_scan_sees_names_and_colon_tests():
    tree = ast.parse('if name == "copsi" or ":" in name or ":" not in other:\n    pass\nx = "copsi is fine"\n')
    assert method_names(tree) == [(1, "copsi")] and colon_tests(tree) == [1, 1]
    assert {"cohv-ucb", "uniform", "copsi-r", "ege-sh"} <= BUILT_IN


@pytest.mark.parametrize("check, allowed", [(method_names, ALLOWED_NAMES), (colon_tests, ALLOWED_COLON)])
def test_no_method_name_outside_the_registry_and_the_method_modules(check, allowed):
    found = {module: hits for module, tree in _modules()
             if not module.startswith(HOME) and module not in allowed and (hits := check(tree))}
    assert not found, f"a method's name (or a ':' test) outside cabench/methods and cabench/registry.py: {found}"
