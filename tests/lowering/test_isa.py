"""The x86 level the kernels are built for (lowering/compiled/isa.py, kernels/rb.cmake): chosen from the CPU's
features, overridable with RB_ISA, part of the cache key; the libraries hold no instruction above their level."""

from __future__ import annotations

import subprocess

import pytest

from resample_bridge.lowering.compiled import abi, build, isa
from resample_bridge.semantics.errors import BridgeError

V3 = frozenset(isa._NEEDS["v3"])
V4 = V3 | frozenset(isa._NEEDS["v4"])


@pytest.mark.parametrize("flags,machine,level", [
    (frozenset(), "x86_64", "base"),
    (V3 - {"fma"}, "x86_64", "base"),  # AVX2 without FMA is no x86-64-v3
    (V3, "x86_64", "v3"),
    (V4 - {"avx512vl"}, "x86_64", "v3"),
    (V4, "x86_64", "v4"),
    (V4, "aarch64", "base"),  # any other architecture: the plain fallback
])
def test_best_level_from_cpu_features(flags, machine, level):
    assert isa.best_level(flags, machine) == level


def _cpu(monkeypatch, flags, machine="x86_64"):
    monkeypatch.setattr(isa, "cpu_flags", lambda: flags)
    monkeypatch.setattr(isa.platform, "machine", lambda: machine)


def test_rb_isa_overrides_within_what_the_cpu_runs(monkeypatch):
    _cpu(monkeypatch, V4)
    monkeypatch.delenv("RB_ISA", raising=False)
    assert isa.isa_level() == "v4"
    for level in isa.LEVELS:
        monkeypatch.setenv("RB_ISA", level)
        assert isa.isa_level() == level


@pytest.mark.parametrize("value,flags,machine,message", [
    ("avx2", V4, "x86_64", "RB_ISA='avx2': expected one of base, v3, v4"),
    ("v4", V3, "x86_64", "RB_ISA=v4: this CPU lacks avx512f, avx512bw, avx512cd, avx512dq, avx512vl"),
    ("v3", V4, "aarch64", "RB_ISA=v3: this CPU lacks x86-64"),
])
def test_rb_isa_refusals_name_the_variable(monkeypatch, value, flags, machine, message):
    _cpu(monkeypatch, flags, machine)
    monkeypatch.setenv("RB_ISA", value)
    with pytest.raises(BridgeError, match=message.replace("(", r"\(")) as e:
        isa.isa_level()
    assert e.value.field == "RB_ISA"


def test_cache_key_names_the_level(monkeypatch):
    _cpu(monkeypatch, V4)
    keys = set()
    for level in isa.LEVELS:
        monkeypatch.setenv("RB_ISA", level)
        keys.add(build.project_hash(extra="x"))
    assert len(keys) == len(isa.LEVELS)


def _disassembly(level: str, monkeypatch) -> str:
    if build.missing_tools() is not None:
        pytest.skip(build.missing_tools())
    monkeypatch.setenv("RB_ISA", level)
    monkeypatch.delenv("RESAMPLE_BRIDGE_KERNELS_LIB", raising=False)
    try:
        path = abi.library_path()
    except BridgeError as e:
        if "RB_ISA" in str(e):
            pytest.skip(str(e))  # this CPU does not run the level
        raise
    return subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(path)], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.slow
@pytest.mark.compiled
@pytest.mark.parametrize("level,absent", [("base", "%ymm"), ("v3", "%zmm")])
def test_a_level_builds_nothing_above_it(level, absent, monkeypatch):
    """The base library has no AVX (it runs on any x86-64), the v3 library no AVX-512 (an AVX2-only CPU would
    stop on an illegal instruction)."""
    if subprocess.run(["which", "objdump"], capture_output=True).returncode:
        pytest.skip("objdump is not installed")
    asm = _disassembly(level, monkeypatch)
    assert "rb_resize_ir" in asm
    assert absent not in asm
