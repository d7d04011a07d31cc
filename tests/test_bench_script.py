"""``scripts/bench.py`` reads ``make reproduce``'s recipe as commands, also where ``make bench`` runs it (a make
inside make, which prints "Entering directory" lines unless told not to)."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from tests.conftest import ROOT


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
@pytest.mark.parametrize("level", [None, "1"])
def test_the_recipe_is_commands_only(monkeypatch, level):
    spec = importlib.util.spec_from_file_location("bench_script", ROOT / "scripts" / "bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    if level is None:
        monkeypatch.delenv("MAKELEVEL", raising=False)
    else:
        monkeypatch.setenv("MAKELEVEL", level)
    commands = bench.recipe(ROOT)
    assert [c.split("/cabench ", 1)[-1].split()[0] for c in commands] == ["data", "run", "plot", "report"]
