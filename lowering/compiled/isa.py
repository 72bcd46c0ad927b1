"""The x86 level the CPU libraries are compiled for, picked at run time from this CPU's features.

One library per level (``kernels/rb.cmake`` maps the level to compile flags), built on first use and cached
under a key that names the level: ``base`` (the compiler's default target: x86-64, or any other architecture),
``v3`` (x86-64-v3: AVX2, FMA, BMI2, F16C), ``v4`` (x86-64-v4: AVX-512 F/BW/CD/DQ/VL). ``RB_ISA`` overrides the
choice (``RB_ISA=v3`` runs the AVX2 build on an AVX-512 machine, for benchmarks and tests); a level this CPU
cannot run is refused rather than left to die on an illegal instruction.
"""

from __future__ import annotations

import os
import platform

from ...semantics.errors import BridgeError

LEVELS = ("base", "v3", "v4")
DESCRIPTION = {"base": "baseline (no AVX)", "v3": "x86-64-v3 (AVX2+FMA)", "v4": "x86-64-v4 (AVX-512)"}

# /proc/cpuinfo names of what each level needs beyond the one before (x86-64-v2 folded into v3); "abm" is
# LZCNT, "osxsave" is the kernel having enabled the AVX state.
_NEEDS = {
    "v3": ("cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3", "avx", "avx2", "bmi1", "bmi2", "f16c", "fma",
           "abm", "movbe", "xsave"),
    "v4": ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"),
}


def cpu_flags() -> frozenset[str]:
    """This CPU's feature flags as Linux lists them (empty elsewhere: the base level is then chosen)."""
    try:
        with open("/proc/cpuinfo", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_model() -> str:
    """This CPU's model name (for benchmark tables), or the architecture where Linux does not say."""
    try:
        with open("/proc/cpuinfo", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine() or "unknown CPU"


def missing(level: str, flags: frozenset[str]) -> list[str]:
    """The features ``level`` needs that ``flags`` lacks (everything below it included)."""
    need = [f for lv in LEVELS[1:LEVELS.index(level) + 1] for f in _NEEDS[lv]]
    return [f for f in need if f not in flags]


def best_level(flags: frozenset[str], machine: str | None = None) -> str:
    """The highest level ``flags`` supports; ``base`` on a CPU that is not x86-64."""
    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64"):
        return "base"
    return next(lv for lv in reversed(LEVELS) if not missing(lv, flags))


def isa_level() -> str:
    """The level to build and load: ``RB_ISA`` when set (checked against this CPU), else the best one."""
    flags = cpu_flags()
    want = os.environ.get("RB_ISA", "").strip()
    if not want:
        return best_level(flags)
    if want not in LEVELS:
        raise BridgeError(f"RB_ISA={want!r}: expected one of {', '.join(LEVELS)}", field="RB_ISA")
    if want == "base":
        return want
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    lacks = missing(want, flags) if x86 else ["x86-64"]
    if lacks:
        where = "" if flags or not x86 else " (or its features could not be read from /proc/cpuinfo)"
        raise BridgeError(f"RB_ISA={want}: this CPU lacks {', '.join(lacks)}{where}", field="RB_ISA")
    return want
