"""Finishing on TensorRT: the plugin library (where it is, or the one command that builds it), the trtexec and
polygraphy commands, and ``build_engine`` where the tensorrt package imports.

What needs TensorRT: building the plugin library (TensorRT headers and libnvinfer, the CUDA toolkit and nvcc),
building and running engines (the tensorrt package or trtexec/polygraphy, an NVIDIA GPU). Nothing else here
does; the tensorrt package is imported lazily, only by ``build_engine``.
"""

from __future__ import annotations

import glob
import os
import shlex

from ...semantics.errors import BridgeError
from ...translate.tensorrt.layers import tensorrt_missing
from .plugin import PLUGIN_LIBRARY

tensorrt_available = tensorrt_missing  # None when the tensorrt package imports, else why not

PLUGIN_TARGET = "resample_bridge_tensorrt"  # the CMake target (lowering/tensorrt_plugin)
# Where CMake's find_path / find_library look too (lowering/tensorrt_plugin/CMakeLists.txt).
_TRT_HINTS = ("/usr/local/TensorRT", "/opt/tensorrt", "/usr")
_INCLUDE_SUFFIXES = ("include", "include/x86_64-linux-gnu", "include/aarch64-linux-gnu")
_LIB_SUFFIXES = ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu")


def plugin_library_path() -> str:
    """Where ``resample-bridge build-plugin`` puts the plugin library by default (the build cache), and where
    ``convert`` looks for it."""
    from ..compiled.build import cache_root

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

    from ..compiled import build

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


def trtexec_command(onnx_path: str, needs_plugin: bool, engine_path: str | None = None) -> str:
    """trtexec builds the engine in FP32 (no --fp16/--best: the decomposition and the plugin are exact in
    float32)."""
    engine = engine_path or (onnx_path[:-5] if onnx_path.endswith(".onnx") else onnx_path) + ".engine"
    cmd = f"trtexec --onnx={shlex.quote(onnx_path)} --saveEngine={shlex.quote(engine)}"
    if needs_plugin:
        cmd += f" --staticPlugins={shlex.quote(plugin_library_path())}"
    return cmd


def polygraphy_command(onnx_path: str, needs_plugin: bool, source: str | None = None) -> str:
    """Polygraphy comparing TensorRT (the plugin loaded) with onnxruntime on the same inputs. onnxruntime runs
    the source model (it has no plugin ops, and refuses some TensorRT-parser spellings); where the source is not
    known, both run the written model if no plugin is needed, else the command says SOURCE.onnx."""
    q = shlex.quote
    plugins = f" --plugins {q(plugin_library_path())}" if needs_plugin else ""
    tol = " --atol 1e-5 --rtol 1e-5"
    if source is None and not needs_plugin:
        return f"polygraphy run {q(onnx_path)} --trt --onnxrt{plugins}{tol}"
    source = source or "SOURCE.onnx"  # the model before conversion (not known here)
    stem = onnx_path[:-5] if onnx_path.endswith(".onnx") else onnx_path
    inputs, outputs = q(stem + ".inputs.json"), q(stem + ".onnxrt.json")
    return (f"polygraphy run {q(source)} --onnxrt --save-inputs {inputs} --save-outputs {outputs} && "
            f"polygraphy run {q(onnx_path)} --trt{plugins} --load-inputs {inputs} --load-outputs {outputs}{tol}")


def build_engine(onnx_path: str, engine_path: str, plugin_library: str | None = None) -> dict:
    """Parse the TensorRT-ready ONNX with TensorRT's own parser, re-read every resize/grid-sample layer it
    built into IR, and write a serialized engine. Needs the tensorrt package (and the plugin library when the
    model has plugin nodes)."""
    why = tensorrt_available()
    if why:
        raise BridgeError(why + "; run: " + trtexec_command(onnx_path, plugin_library is not None, engine_path))
    import ctypes

    import tensorrt as trt

    from ...translate.tensorrt.layers import parse_network

    if plugin_library:
        if not os.path.exists(plugin_library):
            raise BridgeError(f"plugin library {plugin_library} is not built; run: {build_plugin_command()}")
        ctypes.CDLL(plugin_library)  # REGISTER_TENSORRT_PLUGIN registers the creators at load time
    logger = trt.Logger(trt.Logger.WARNING)
    trt.init_libnvinfer_plugins(logger, "")
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(onnx_path):
        errs = [str(parser.get_error(i)) for i in range(parser.num_errors)]
        raise BridgeError("TensorRT's parser refused the model: " + "; ".join(errs))
    layers = parse_network(network)
    config = builder.create_builder_config()
    blob = builder.build_serialized_network(network, config)
    if blob is None:
        raise BridgeError("TensorRT could not build an engine (see its log)")
    with open(engine_path, "wb") as f:
        f.write(bytes(blob))
    return {"engine": engine_path, "layers": [(n, ir.origin) for n, ir in layers]}


def finish(out: str, needs_plugin: bool, source: str | None = None) -> dict:
    """How the written model becomes an engine: the plugin library's path and whether it is built (else
    ``build_command``, the one command that builds it), the trtexec command, the polygraphy command comparing
    TensorRT with onnxruntime (``source``: the model onnxruntime runs), and, where the tensorrt package imports
    and the library is there, the engine built beside ``out`` (or why it could not be)."""
    lib = plugin_library_path() if needs_plugin else None
    built = lib is None or os.path.isfile(lib)
    rep = {"plugin_library_path": lib, "plugin_library_built": bool(lib) and built,
           "build_command": None if built else build_plugin_command(),
           "command": trtexec_command(out, needs_plugin),
           "polygraphy_command": polygraphy_command(out, needs_plugin, source)}
    why = tensorrt_available()
    rep["tensorrt"] = why or "available"
    if why is None and not built:
        rep["engine_error"] = f"the plugin library {lib} is not built; run: {rep['build_command']}"
    elif why is None:
        try:
            rep["engine"] = build_engine(out, out[:-5] + ".engine", rep["plugin_library_path"])
        except BridgeError as e:
            rep["engine_error"] = e.message
    return rep


__all__ = ["tensorrt_available", "plugin_library_path", "find_tensorrt", "build_plugin", "build_plugin_command",
           "trtexec_command", "polygraphy_command", "build_engine", "finish", "PLUGIN_TARGET"]
