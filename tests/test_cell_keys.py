"""Cell keys hash the code that computes cells, and only that code.

Each test edits one file of a copy of the package and compares the code hash
(part of every cell key) before and after: an equal hash keeps every cached
cell, a new one recomputes them all.
"""

from __future__ import annotations

import ast
import contextlib
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cabench.cell_keys import DISPLAY_ONLY, imported_modules, source_files, sources_hash
from tests.conftest import ROOT

PACKAGE = ROOT / "cabench"
COLOUR = re.compile(r"#[0-9a-fA-F]{6}")
CAPTION = "Figure 6: deterministic against realised"


def _found(pattern: str) -> list[str]:
    return sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.glob(pattern))


DISPLAY_FILES = {"/".join(m.split(".")[1:]) + ".py" for m in DISPLAY_ONLY}
#: Engines, method rules, streams, the problem and its normalisation, and the cell itself.
COMPUTING_FILES = sorted({"cells.py", "online/engine.py", "psi/engine.py", "streams.py", "problem.py", "synthetic.py",
                          "data/dataset.py", "data/normalisation.py", *_found("methods/*.py")} - DISPLAY_FILES)


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    """A copy of the package, whose files a test edits and restores."""
    pkg = tmp_path_factory.mktemp("copy") / "cabench"
    shutil.copytree(PACKAGE, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    return pkg


@contextlib.contextmanager
def _edited(package: Path, relative: str, edit: Callable[[str], str]) -> Iterator[None]:
    """``package`` with one file replaced by ``edit(its text)`` (a new file when it is missing), then restored."""
    path = package / relative
    original = path.read_text() if path.exists() else None
    edited = edit(original or "")
    assert edited != original, relative
    path.write_text(edited)
    try:
        yield
    finally:
        if original is None:
            path.unlink()
        else:
            path.write_text(original)


def _hash_after(package: Path, relative: str, edit: Callable[[str], str]) -> str:
    with _edited(package, relative, edit):
        return sources_hash(package)


def _hashed(package: Path) -> set[str]:
    return {str(p.relative_to(package)) for p in source_files(package)}


def _holds_a_colour(path: Path) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and COLOUR.fullmatch(n.value)
               for n in ast.walk(ast.parse(path.read_text())))


def test_the_hashed_code_is_the_code_that_computes_cells(package):
    hashed = _hashed(package)
    assert set(COMPUTING_FILES) | {"__init__.py", "online/__init__.py", "quantize.py", "pareto.py"} <= hashed
    for elsewhere in ("plan.py", "cell_keys.py", "config.py", "record.py", "runner.py", "backends.py", "tune.py",
                      "plots.py", "report.py", "recommend.py", "cli.py", "results.py", *DISPLAY_FILES):
        assert elsewhere not in hashed, elsewhere


def test_display_modules_hide_no_code():
    for module in DISPLAY_ONLY:  # not followed: they must not import what computes
        path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
        assert not imported_modules(ast.parse(path.read_text()), module, False), module


def test_editing_a_colour_or_a_caption_keeps_every_key(package):
    before = sources_hash(package)
    colours = [str(p.relative_to(package)) for p in sorted(package.rglob("*.py")) if _holds_a_colour(p)]
    assert len(colours) >= 2  # the methods' colours and the figures'
    for relative in colours:
        assert _hash_after(package, relative, lambda t: COLOUR.sub("#123456", t, count=1)) == before, relative
    assert _hash_after(package, "plots.py", lambda t: t.replace(CAPTION, "Figure 6: fixed against realised")) \
        == before


@pytest.mark.parametrize("relative", COMPUTING_FILES)
def test_editing_computing_code_makes_every_key_new(package, relative):
    assert _hash_after(package, relative, lambda t: t + "\n# edited\n") != sources_hash(package)


def test_a_new_import_joins_the_hashed_code(package):
    with _edited(package, "extra_helper.py", lambda _: "X = 1\n"), \
            _edited(package, "psi/engine.py", lambda t: t.replace(
                "from __future__ import annotations", "from __future__ import annotations\n\nfrom ..extra_helper "
                "import X", 1)):
        assert "extra_helper.py" in _hashed(package)
    assert "extra_helper.py" not in _hashed(package)


def test_imports_are_found_in_every_kind_of_block_and_not_under_type_checking():
    source = """
from typing import TYPE_CHECKING
import cabench.a
if TYPE_CHECKING:
    import cabench.hint_only
else:
    import cabench.b
class C:
    import cabench.c
    def f(self):
        try:
            import cabench.d
        except ImportError:
            from cabench import e
        else:
            from . import f
        finally:
            with open("x"):
                from .g import h
    async def g(self):
        async for _ in x:
            import cabench.i
        while True:
            import cabench.j
        match self:
            case 1:
                import cabench.k
x = [lambda: 0 for _ in ()]
"""
    found = imported_modules(ast.parse(source), "cabench.m", False)
    assert found == {"cabench.a", "cabench.b", "cabench.c", "cabench.d", "cabench", "cabench.e", "cabench.f",
                     "cabench.g", "cabench.g.h", "cabench.i", "cabench.j", "cabench.k"}
