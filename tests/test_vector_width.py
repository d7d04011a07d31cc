"""The kernels' vector width (:func:`cabench.kernels.full_width_vectors`): 512-bit lanes where the processor has
them, your own numba target where you set one, nothing changed elsewhere."""

from __future__ import annotations

import os

import pytest
from numba.core import codegen, config

from cabench.kernels import full_width_vectors

#: An AVX-512 processor and no numba target of the environment's (cabench's own setting aside).
_SET_HERE = ("+avx512f" in codegen.get_host_cpu_features().split(",") and not os.environ.get("NUMBA_CPU_NAME")
             and os.environ.get("NUMBA_CPU_FEATURES", ",-prefer-256-bit").endswith(",-prefer-256-bit"))


@pytest.fixture
def host(monkeypatch):
    """The host's features as given and no numba target variables; afterwards both variables as they were (numba
    compiles for the real processor) and numba's config read again."""
    before = {name: os.environ.get(name) for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")}
    for name in before:
        monkeypatch.delenv(name, raising=False)

    def features(flags: str) -> None:
        monkeypatch.setattr(codegen, "get_host_cpu_features", lambda: flags)

    yield features
    monkeypatch.undo()
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    config.reload_config()


def test_avx512_host_turns_off_the_256_bit_preference(host, monkeypatch):
    host("+avx2,+avx512f,+fma")
    full_width_vectors()
    assert os.environ["NUMBA_CPU_FEATURES"] == "+avx2,+avx512f,+fma,-prefer-256-bit"
    assert config.CPU_FEATURES == "+avx2,+avx512f,+fma,-prefer-256-bit"


@pytest.mark.parametrize("flags", ["+avx2,+fma", "+avx2,-avx512f,+fma", ""])
def test_no_avx512_changes_nothing(host, flags):
    host(flags)
    full_width_vectors()
    assert "NUMBA_CPU_FEATURES" not in os.environ


@pytest.mark.parametrize("variable, value", [("NUMBA_CPU_NAME", "generic"), ("NUMBA_CPU_FEATURES", "+avx2")])
def test_your_numba_target_stands(host, monkeypatch, variable, value):
    host("+avx2,+avx512f")
    monkeypatch.setenv(variable, value)
    full_width_vectors()
    assert os.environ[variable] == value
    assert os.environ.get("NUMBA_CPU_FEATURES", "") in ("", "+avx2")


@pytest.mark.skipif(not _SET_HERE, reason="not an AVX-512 processor, or numba's target set by the environment")
def test_kernels_use_512_bit_vectors_here():
    """On this AVX-512 processor the bootstrap rows' loop compiles with 512-bit registers (a function of its own:
    numba shows no machine code of a cached one)."""
    import numba
    import numpy as np

    from cabench.kernels import streams

    @numba.njit
    def rows(key, length, size):
        out = np.empty(length + 8, np.int64)
        streams.rows(key, 0, length, size, out)
        return out

    rows(np.uint64(1), 20, 7)
    assert "zmm" in "".join(rows.inspect_asm().values())
