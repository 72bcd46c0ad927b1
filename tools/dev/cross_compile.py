"""`make cross`: the C++ kernels (and the OpenVINO extension over them) compiled for CPUs this machine is not:
64-bit ARM Linux and macOS, with Zig's clang (the ``ziglang`` package, ``pip install ziglang``). Compile only:
nothing here runs ARM code. It checks that the plain build (no x86 intrinsics: they all sit behind __AVX2__ /
__AVX512F__) and the GNU-only vector paths' fallbacks compile with another compiler for another architecture,
and that the objects are that architecture's.

    python tools/dev/cross_compile.py [--target aarch64-linux-gnu] [--jobs 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "lowering" / "kernels"
EXTENSION = ROOT / "lowering" / "openvino_ext"

# rb.cmake's flags for every kernel build, less the x86 level: C++17 with GNU extensions (_Float16), no FMA
# contraction, no trapping math.
FLAGS = ["-std=gnu++17", "-O0", "-Wall", "-ffp-contract=off", "-fno-trapping-math"]

# Zig target -> (object file magic, architecture field check): ELF e_machine 183 is AArch64; Mach-O's cputype
# 0x0100000c is ARM64.
TARGETS = {
    "aarch64-linux-gnu": "elf-aarch64",
    "aarch64-macos": "macho-arm64",
}


def zig_available() -> bool:
    return importlib.util.find_spec("ziglang") is not None


def architecture(obj: bytes) -> str:
    """The object file's format and architecture, read from its header."""
    if obj[:4] == b"\x7fELF":
        machine = int.from_bytes(obj[18:20], "little")
        return "elf-aarch64" if machine == 183 else f"elf-machine-{machine}"
    if obj[:4] == b"\xcf\xfa\xed\xfe":  # 64-bit Mach-O, little-endian
        cputype = int.from_bytes(obj[4:8], "little")
        return "macho-arm64" if cputype == 0x0100000C else f"macho-cputype-{cputype:#x}"
    return "unknown"


def sources(target: str) -> list:
    """(source, extra include folders): the kernels' C ABI library everywhere; the OpenVINO extension where the
    installed openvino wheel's headers are here (they are architecture-independent)."""
    out = [(KERNELS / "capi.cpp", [])]
    spec = importlib.util.find_spec("openvino")
    if spec and spec.origin and target.endswith("linux-gnu"):
        include = Path(spec.origin).parent / "include"
        if include.is_dir():
            out += [(EXTENSION / name, [include]) for name in ("ops.cpp", "extension.cpp", "entry.cpp")]
    return out


def compile_one(target: str, source: Path, includes: list, out_dir: str) -> tuple:
    """(target, source name, error text or None): one object file, checked for the target's architecture."""
    obj = os.path.join(out_dir, f"{target}-{source.stem}.o")
    cmd = [sys.executable, "-m", "ziglang", "c++", "-target", target, *FLAGS, f"-I{KERNELS}",
           *(f"-I{i}" for i in includes), "-c", str(source), "-o", obj]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        return target, source.name, done.stderr.strip() or f"exit status {done.returncode}"
    if done.stderr.strip():
        return target, source.name, "warnings:\n" + done.stderr.strip()
    got = architecture(Path(obj).read_bytes()[:32])
    if got != TARGETS[target]:
        return target, source.name, f"the object is {got}, not {TARGETS[target]}"
    return target, source.name, None


def cross_compile(targets, jobs: int = 2) -> list:
    """Every (target, source) compiled; [(target, source name, error or None)]."""
    with tempfile.TemporaryDirectory() as d, ThreadPoolExecutor(max_workers=jobs) as pool:
        work = [(t, s, inc) for t in targets for s, inc in sources(t)]
        return list(pool.map(lambda w: compile_one(w[0], w[1], w[2], d), work))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", action="append", choices=sorted(TARGETS), help="default: every target")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    if not zig_available():
        print("cross_compile: Zig's compiler is not installed here (pip install ziglang)", file=sys.stderr)
        return 2
    failed = 0
    for target, name, err in cross_compile(args.target or sorted(TARGETS), args.jobs):
        print(f"{target:20s} {name:16s} {'ok' if err is None else 'FAILED'}")
        if err is not None:
            failed += 1
            print("    " + err.replace("\n", "\n    "))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
