"""Build the C++/CUDA libraries on first use, into a cache keyed by their sources.

One CMake project (``lowering/CMakeLists.txt``) holds every library; each build configures it with the options
that library needs and builds that one target, into ``cache_root()/<target>-<key>/``, where ``key`` hashes the
sources (and the toolchain the caller names). CMake comes from PATH or from the package index's ``cmake``
wheel (the openvino extra depends on it); make or, without it, Ninja (PATH or the ``ninja`` wheel) drives it.
A machine without CMake or a C++17 compiler gets a one-line BridgeError naming what to install.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ...semantics.errors import BridgeError
from .isa import DESCRIPTION, isa_level

LOWERING_DIR = Path(__file__).resolve().parent.parent
CMAKE_ROOT = LOWERING_DIR  # the top-level CMakeLists.txt
KERNELS_DIR = LOWERING_DIR / "kernels"
OPENVINO_EXT_DIR = LOWERING_DIR / "openvino_ext"
CUDA_DIR = LOWERING_DIR / "cuda"
_SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cu", ".cuh", ".txt", ".cmake", ".in")


_progress = logging.getLogger("resample_bridge.build")  # the CLI shows it on stderr (tools/logs.py)


def cache_root() -> Path:
    env = os.environ.get("RESAMPLE_BRIDGE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "resample_bridge"


def source_hash(*paths: Path, extra: str = "") -> str:
    """Hash of every source file in or under ``paths`` (names and contents) plus ``extra``: the cache key."""
    h = hashlib.sha256(extra.encode())
    for d in paths:
        for p in sorted(d.rglob("*")) if d.is_dir() else [d]:
            if p.is_file() and p.suffix in _SOURCE_SUFFIXES:
                h.update(str(p.relative_to(d.parent)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:16]


def project_hash(*dirs: Path, extra: str = "") -> str:
    """The cache key of a library built from the top-level project: its folders, the kernels, the root and the
    x86 level it is compiled for (``isa.isa_level()``: a cache shared by different CPUs keeps one per level)."""
    return source_hash(CMAKE_ROOT / "CMakeLists.txt", KERNELS_DIR, *dirs, extra=f"{extra} isa={isa_level()}")


def _compiler() -> str | None:
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


CMAKE_MIN = (3, 18)  # lowering/CMakeLists.txt's cmake_minimum_required


def _from_package(module: str, attr: str, exe: str) -> str | None:
    """``exe`` from the package index's wheel of that name (``pip install cmake`` / ``ninja``, which the
    openvino extra brings), found through the module even where its scripts folder is not on PATH."""
    import importlib

    try:
        path = os.path.join(getattr(importlib.import_module(module), attr), exe)
    except (ImportError, AttributeError):
        return None
    return path if os.path.isfile(path) else None


@functools.lru_cache(maxsize=None)
def _cmake_version(path: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
        return tuple(int(v) for v in out.split()[2].split(".")[:2])
    except (OSError, subprocess.SubprocessError, IndexError, ValueError):
        return ()


def cmake() -> str | None:
    """A CMake >= 3.18: the one on PATH, else the ``cmake`` package's (a dependency of the openvino extra)."""
    for cand in (shutil.which("cmake"), _from_package("cmake", "CMAKE_BIN_DIR", "cmake")):
        if cand and _cmake_version(cand) >= CMAKE_MIN:
            return cand
    return None


def _generator() -> list[str]:
    """CMake's default generator needs make; without it, Ninja (on PATH or the ``ninja`` package's)."""
    if os.environ.get("CMAKE_GENERATOR") or shutil.which("make"):
        return []
    ninja = shutil.which("ninja") or _from_package("ninja", "BIN_DIR", "ninja")
    return ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"] if ninja else []


def nvcc() -> str | None:
    """The CUDA compiler, or None."""
    for cand in (os.environ.get("CUDACXX"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if cand and os.path.exists(cand):
            return cand
    return None


def missing_tools() -> str | None:
    """Why nothing can be built here (one line naming what to install), or None."""
    missing = _missing_tool()
    return missing and missing[1]


def _missing_tool() -> tuple[str, str] | None:
    """(the field a refusal names, the line saying what to install), or None."""
    if not cmake():
        return "cmake", "CMake 3.18 or newer is needed: pip install 'cmake>=3.18' (the openvino extra brings it)"
    if not _compiler():
        return "compiler", "a C++17 compiler is needed: apt-get install g++ (or clang++; CXX names one)"
    if not (os.environ.get("CMAKE_GENERATOR") or shutil.which("make") or _generator()):
        return "make", "make or ninja is needed: pip install ninja (the openvino extra brings it)"
    return None


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock across processes (pytest-xdist workers, two notebooks) while one of them builds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        try:
            import fcntl

            fcntl.flock(fh, fcntl.LOCK_EX)
        except ImportError:  # not POSIX: builds are still atomic by rename
            pass
        yield


def built_library(target: str, key: str) -> Path | None:
    """``lib<target>.so`` of ``key`` where an earlier build left it in the cache, else None (nothing is built)."""
    lib = cache_root() / f"{target}-{key}" / f"lib{target}.so"
    return lib if lib.exists() else None


def build_library(src: Path, target: str, *, key: str, cmake_args: tuple[str, ...] = (),
                  what: str = "the resample-bridge kernels", level: str | None = None,
                  level_text: str | None = None) -> Path:
    """``lib<target>.so`` built from the CMake project ``src`` (normally ``CMAKE_ROOT``) into
    ``cache_root()/<target>-<key>/``, reusing an earlier build with the same key. Older builds of the same
    target beyond the newest few are removed (a process that loaded one keeps its mapping). The CPU code is
    compiled for ``level`` (default ``isa_level()``; ``-DRB_ISA``, kernels/rb.cmake); ``key`` should name it
    (``project_hash``)."""
    out_dir = cache_root() / f"{target}-{key}"
    lib = out_dir / f"lib{target}.so"
    if lib.exists():
        return lib
    missing = _missing_tool()
    if missing:
        raise BridgeError(f"{missing[1]}: {what} is compiled on first use", field=missing[0])
    with _locked(out_dir / ".lock"):
        if lib.exists():
            return lib
        _reap_stale(out_dir, target)
        level = level or isa_level()
        _progress.info(f"building {what} for {level_text or DESCRIPTION[level]} (first use; cached in {out_dir}) ...")
        started = time.perf_counter()
        build = Path(tempfile.mkdtemp(prefix="build-", dir=out_dir))
        log = out_dir / "build.log"
        jobs = os.environ.get("RESAMPLE_BRIDGE_BUILD_JOBS") or str(max(1, min(4, os.cpu_count() or 1)))
        exe = cmake()
        cmds = [[exe, "-S", str(src), "-B", str(build), *_generator(), "-DCMAKE_BUILD_TYPE=Release",
                 f"-DCMAKE_CXX_COMPILER={_compiler()}", f"-DRB_ISA={level}", *cmake_args],
                [exe, "--build", str(build), "--target", target, "-j", jobs]]
        try:
            with open(log, "w") as fh:
                for cmd in cmds:
                    fh.write("$ " + " ".join(cmd) + "\n")
                    fh.flush()
                    if subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT).returncode:
                        fh.flush()
                        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
                        raise BridgeError(f"building {what} failed (log: {log}):\n{tail}")
            built = next(build.rglob(f"lib{target}.so"), None)
            if built is None:
                raise BridgeError(f"building {what} produced no lib{target}.so (log: {log})")
            tmp = out_dir / f".lib{target}.so.{os.getpid()}"
            shutil.copy2(built, tmp)
            os.replace(tmp, lib)  # atomic: a concurrent reader sees no library or the finished one
            _progress.info(f"built {what} in {time.perf_counter() - started:.1f} s")
        finally:
            shutil.rmtree(build, ignore_errors=True)
    _prune(target, keep=out_dir)
    return lib


def _reap_stale(out_dir: Path, target: str) -> None:
    """Leftovers of a builder killed mid-build (its ``build-*`` tree, its half-copied ``.lib*.so.<pid>``):
    whoever holds the folder's lock is the only builder, so nothing else there is live."""
    for d in out_dir.glob("build-*"):
        shutil.rmtree(d, ignore_errors=True)
    for f in out_dir.glob(f".lib{target}.so.*"):
        with contextlib.suppress(OSError):
            f.unlink()


def _prune(target: str, keep: Path, newest: int = 3) -> None:
    dirs = sorted((d for d in cache_root().glob(f"{target}-*") if d.is_dir() and d != keep),
                  key=lambda d: d.stat().st_mtime, reverse=True)
    for d in dirs[newest - 1:]:
        shutil.rmtree(d, ignore_errors=True)
