"""The kernels' vector width (:func:`cabench.kernels.full_width_vectors`): 512-bit lanes where the processor has
them, in this process only; numba's target stands where it is set already; nothing changed elsewhere."""

from __future__ import annotations

import os

import pytest
from numba.core import codegen, config

from cabench import kernels
from cabench.kernels import full_width_vectors

_SUFFIX = ",-prefer-256-bit"
#: An AVX-512 processor and no numba target of the environment's (cabench's own setting aside).
_SET_HERE = ("+avx512f" in codegen.get_host_cpu_features().split(",") and config.CPU_NAME is None
             and not os.environ.get("NUMBA_CPU_NAME") and "NUMBA_CPU_FEATURES" not in os.environ
             and (config.CPU_FEATURES is None or config.CPU_FEATURES.endswith(_SUFFIX)))


@pytest.fixture
def host(monkeypatch):
    """The host's features as given, numba's target unset and not built yet; afterwards numba's config and the
    environment as they were (its target, built for the real processor, is not rebuilt)."""
    monkeypatch.setattr(config, "CPU_NAME", None)
    monkeypatch.setattr(config, "CPU_FEATURES", None)
    monkeypatch.setattr(kernels, "_target_built", lambda: False)
    for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"):
        monkeypatch.delenv(name, raising=False)

    def features(flags: str) -> None:
        monkeypatch.setattr(codegen, "get_host_cpu_features", lambda: flags)

    return features


def test_avx512_host_turns_off_the_256_bit_preference_in_this_process(host):
    host("+avx2,+avx512f,+fma")
    before = dict(os.environ)
    full_width_vectors()
    assert config.CPU_FEATURES == "+avx2,+avx512f,+fma,-prefer-256-bit"
    assert dict(os.environ) == before  # nothing a child process (maybe on another host) would inherit


@pytest.mark.parametrize("flags", ["+avx2,+fma", "+avx2,-avx512f,+fma", ""])
def test_no_avx512_changes_nothing(host, flags):
    host(flags)
    full_width_vectors()
    assert config.CPU_FEATURES is None


@pytest.mark.parametrize("setting, value", [("CPU_NAME", "generic"), ("CPU_FEATURES", "+avx2"), ("CPU_FEATURES", "")])
def test_your_numba_target_stands(host, monkeypatch, setting, value):
    """Set by the environment, ``.numba_config.yaml`` or code, numba's config holds it: left as it is."""
    host("+avx2,+avx512f")
    monkeypatch.setattr(config, setting, value)
    full_width_vectors()
    assert getattr(config, setting) == value
    assert config.CPU_FEATURES in (None, "+avx2", "")


@pytest.mark.parametrize("variable", ["NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"])
def test_a_target_in_the_environment_set_after_numba_loaded_stands(host, monkeypatch, variable):
    """Numba reads its environment when it loads and again when it next compiles: a target put there in between is
    the user's, not overridden."""
    host("+avx2,+avx512f")
    monkeypatch.setenv(variable, "+avx2" if variable == "NUMBA_CPU_FEATURES" else "generic")
    full_width_vectors()
    assert config.CPU_FEATURES is None


def test_a_target_numba_built_already_is_left_as_it_is(host, monkeypatch):
    """Numba fixed its target's features when it built it (a function decorated before the kernels were imported):
    a later setting would not reach it, and config would no longer say what the target is."""
    host("+avx2,+avx512f")
    monkeypatch.setattr(kernels, "_target_built", lambda: True)
    full_width_vectors()
    assert config.CPU_FEATURES is None


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
        scale, inverse = streams.reciprocals(size)
        streams.rows(key, 0, length, size, scale, inverse, out)
        return out

    rows(np.uint64(1), 20, 7)
    assert "zmm" in "".join(rows.inspect_asm().values())
