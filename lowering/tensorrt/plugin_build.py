"""The TensorRT plugin library: where it is, the one command that builds it, and ``build_plugin`` (TensorRT
headers and libnvinfer, the CUDA toolkit and nvcc). Engines are built and run by the verbs
(``tools/finish_tensorrt.py``)."""

from __future__ import annotations

import glob
import os
import shlex

from ...semantics.errors import BridgeError
from .plugin import PLUGIN_LIBRARY
from ..compiled import build
from ..compiled.build import cache_root

PLUGIN_TARGET = "resample_bridge_tensorrt"  # the CMake target (lowering/tensorrt_plugin)
# Where CMake's find_path / find_library look too (lowering/tensorrt_plugin/CMakeLists.txt).
_TRT_HINTS = ("/usr/local/TensorRT", "/opt/tensorrt", "/usr")
_INCLUDE_SUFFIXES = ("include", "include/x86_64-linux-gnu", "include/aarch64-linux-gnu")
_LIB_SUFFIXES = ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu")


def plugin_library_path() -> str:
    """Where ``resample-bridge build-plugin`` puts the plugin library by default (the build cache), and where
    ``convert`` looks for it."""

    return str(cache_root() / "tensorrt" / PLUGIN_LIBRARY)


def find_tensorrt() -> tuple[str | None, str | None]:
    """(folder with NvInferRuntime.h, folder with libnvinfer.so) found on this machine, each None if absent."""
    roots = [r for r in (os.environ.get("TensorRT_ROOT"), os.environ.get("TENSORRT_ROOT")) if r] + list(_TRT_HINTS)
    include = next((os.path.join(r, s) for r in roots for s in _INCLUDE_SUFFIXES
                    if os.path.isfile(os.path.join(r, s, "NvInferRuntime.h"))), None)
    lib = next((os.path.join(r, s) for r in roots for s in _LIB_SUFFIXES
                if glob.glob(os.path.join(r, s, "libnvinfer.so*"))), None)
    return include, lib


def build_plugin_command(include: str | None = None, lib: str | None = None) -> str:
    """The one command that builds the plugin library (``build_plugin``), with the TensorRT folders found here
    filled in."""
    found = find_tensorrt()
    include, lib = include or found[0], lib or found[1]
    return ("resample-bridge build-plugin --tensorrt-include " + (shlex.quote(include) if include else
                                                                  "<TensorRT>/include") +
            " --tensorrt-lib " + (shlex.quote(lib) if lib else "<TensorRT>/lib"))


def build_plugin(include: str | None, lib: str | None, out_dir: str | None = None) -> str:
    """Build ``libresample_bridge_tensorrt.so`` from lowering/tensorrt_plugin (the shared kernels and CUDA
    launchers, through ``lowering.compiled.build``) against the TensorRT headers in ``include`` and libnvinfer in
    ``lib`` (found on this machine where None), and copy it into ``out_dir`` (default: ``plugin_library_path()``'s
    folder). Returns the library's path. BridgeError naming what is missing: TensorRT headers, libnvinfer, the
    CUDA compiler — checked before anything is compiled."""
    import shutil

    found = find_tensorrt()
    include, lib = include or found[0], lib or found[1]
    if not include:
        raise BridgeError("TensorRT headers not found (NvInferRuntime.h under /usr/local/TensorRT, /opt/tensorrt "
                          "or TensorRT_ROOT): pass --tensorrt-include DIR", field="tensorrt-include")
    if not os.path.isfile(os.path.join(include, "NvInferRuntime.h")):
        raise BridgeError(f"no NvInferRuntime.h in {include}: pass the TensorRT include folder",
                          field="tensorrt-include")
    if not lib:
        raise BridgeError("libnvinfer not found (under /usr/local/TensorRT, /opt/tensorrt or TensorRT_ROOT): pass "
                          "--tensorrt-lib DIR", field="tensorrt-lib")
    libs = sorted(glob.glob(os.path.join(lib, "libnvinfer.so*")))
    if not libs:
        raise BridgeError(f"no libnvinfer.so in {lib}: pass the TensorRT library folder", field="tensorrt-lib")
    nvcc = build.nvcc()
    if not nvcc:
        raise BridgeError("the CUDA compiler nvcc was not found (install the CUDA toolkit or set CUDACXX)",
                          field="cuda")
    why = build.missing_tools()
    if why:
        raise BridgeError(f"the plugin is compiled with CMake and C++17: {why}", field="cmake")
    plugin_dir = build.LOWERING_DIR / "tensorrt_plugin"
    key = build.project_hash(plugin_dir, build.CUDA_DIR, extra=f"{include}|{libs[0]}|{nvcc}")
    built = build.build_library(build.CMAKE_ROOT, PLUGIN_TARGET, key=key, what="the resample-bridge TensorRT plugin",
                                cmake_args=("-DRB_TENSORRT=ON", f"-DTensorRT_INCLUDE_DIR={include}",
                                            f"-DTensorRT_LIBRARY={libs[0]}", f"-DCMAKE_CUDA_COMPILER={nvcc}"))
    out_dir = out_dir or os.path.dirname(plugin_library_path())
    os.makedirs(out_dir, exist_ok=True)
    dest = os.path.join(out_dir, PLUGIN_LIBRARY)
    tmp = dest + f".{os.getpid()}.tmp"
    shutil.copy2(built, tmp)
    os.replace(tmp, dest)  # a reader sees the old library or the new one, never half of one
    return dest


__all__ = ["plugin_library_path", "find_tensorrt", "build_plugin", "build_plugin_command", "PLUGIN_TARGET"]
