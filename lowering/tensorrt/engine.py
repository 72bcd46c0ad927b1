"""Finishing on TensorRT: the plugin library, the trtexec / polygraphy commands, and ``build_engine`` where the
tensorrt package imports (lazily; nothing else here needs it)."""

from __future__ import annotations

import os

from ...semantics.errors import BridgeError
from ...translate.tensorrt.layers import tensorrt_missing
from .plugin import PLUGIN_LIBRARY

tensorrt_available = tensorrt_missing  # None when the tensorrt package imports, else why not


def plugin_library_path() -> str:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(here, "tensorrt_plugin", "build", PLUGIN_LIBRARY)


def trtexec_command(onnx_path: str, needs_plugin: bool, engine_path: str | None = None) -> str:
    engine = engine_path or (onnx_path[:-5] if onnx_path.endswith(".onnx") else onnx_path) + ".engine"
    cmd = f"trtexec --onnx={onnx_path} --saveEngine={engine}"
    if needs_plugin:
        cmd += f" --staticPlugins={plugin_library_path()}"
    return cmd


def polygraphy_command(onnx_path: str, needs_plugin: bool) -> str:
    cmd = f"polygraphy run {onnx_path} --trt"
    if needs_plugin:
        cmd += f" --plugins {plugin_library_path()}"
    return cmd


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
            raise BridgeError(f"plugin library {plugin_library} is not built (lowering/tensorrt_plugin)")
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


def finish(out: str, needs_plugin: bool) -> dict:
    """How the written model becomes an engine: the plugin library's path, the trtexec and polygraphy commands,
    and, where the tensorrt package imports, the engine built beside ``out`` (or why it could not be)."""
    rep = {"plugin_library_path": plugin_library_path() if needs_plugin else None,
           "command": trtexec_command(out, needs_plugin),
           "polygraphy_command": polygraphy_command(out, needs_plugin)}  # runs it and compares, if preferred
    why = tensorrt_available()
    rep["tensorrt"] = why or "available"
    if why is None:
        try:
            rep["engine"] = build_engine(out, out[:-5] + ".engine", rep["plugin_library_path"])
        except BridgeError as e:
            rep["engine_error"] = e.message
    return rep


__all__ = ["tensorrt_available", "plugin_library_path", "trtexec_command", "polygraphy_command", "build_engine",
           "finish"]
