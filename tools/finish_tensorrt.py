"""Finishing ``convert --target tensorrt`` on TensorRT: the trtexec and polygraphy commands, ``build_engine``
where the tensorrt package imports, ``finish`` (what the convert report says about all that) and the report's
text (``format_convert``). The plugin library itself is lowering's (``lowering/tensorrt/plugin_build.py``).

What needs TensorRT: building and running engines (the tensorrt package or trtexec/polygraphy, an NVIDIA GPU).
The tensorrt package is imported lazily, only by ``build_engine``.
"""

from __future__ import annotations

import os
import shlex

from ..lowering.tensorrt.plugin_build import build_plugin_command, plugin_library_path
from ..semantics.errors import BridgeError, clip
from ..semantics.text import counted
from ..translate.tensorrt.layers import parse_network, tensorrt_missing
from .check_tensorrt import unverified_lines
from .trt_profile import missing_line, polygraphy_shapes, polygraphy_trt_flags, settle, trtexec_flags
from ..translate.onnx_shapes import declared_shape, graph_inputs

tensorrt_available = tensorrt_missing  # None when the tensorrt package imports, else why not


def trtexec_command(onnx_path: str, needs_plugin: bool, engine_path: str | None = None, profile=None) -> str:
    """trtexec builds the engine in FP32 (no --fp16/--best: the decomposition and the plugin are exact in
    float32); ``profile``: the min/opt/max shapes of the dynamic inputs (``trt_profile.settle``)."""
    engine = engine_path or (onnx_path[:-5] if onnx_path.endswith(".onnx") else onnx_path) + ".engine"
    cmd = f"trtexec --onnx={shlex.quote(onnx_path)} --saveEngine={shlex.quote(engine)}{trtexec_flags(profile)}"
    if needs_plugin:
        cmd += f" --staticPlugins={shlex.quote(plugin_library_path())}"
    return cmd


def polygraphy_command(onnx_path: str, needs_plugin: bool, source: str | None = None, profile=None,
                       data_shapes=None) -> str:
    """Polygraphy comparing TensorRT (the plugin loaded) with onnxruntime on the same inputs. onnxruntime runs
    the source model (it has no plugin ops, and refuses some TensorRT-parser spellings) fed ``data_shapes``
    ({input: dims}: the opt shapes, or what ``--input`` fixed; Polygraphy would feed 1 for every dynamic
    dimension); TensorRT builds the written model with ``profile``'s min/opt/max shapes. Where the source is
    not known, both run the written model if no plugin is needed, else the command says SOURCE.onnx."""
    q = shlex.quote
    plugins = f" --plugins {q(plugin_library_path())}" if needs_plugin else ""
    tol = " --atol 1e-5 --rtol 1e-5"
    feed, trt = polygraphy_shapes("--input-shapes", data_shapes or {}), polygraphy_trt_flags(profile or {})
    if source is None and not needs_plugin:
        return f"polygraphy run {q(onnx_path)} --trt --onnxrt{plugins}{trt}{feed}{tol}"
    source = source or "SOURCE.onnx"  # the model before conversion (not known here)
    stem = onnx_path[:-5] if onnx_path.endswith(".onnx") else onnx_path
    inputs, outputs = q(stem + ".inputs.json"), q(stem + ".onnxrt.json")
    return (f"polygraphy run {q(source)} --onnxrt{feed} --save-inputs {inputs} --save-outputs {outputs} && "
            f"polygraphy run {q(onnx_path)} --trt{plugins}{trt} --load-inputs {inputs} --load-outputs {outputs}{tol}")


def _shapes(out: str, source: str | None, trt_shapes: dict | None) -> tuple[dict, dict, str | None]:
    """(the profile of the written model's dynamic inputs, the shapes onnxruntime's run of the source is fed
    where the source leaves them dynamic, the line saying which option to add when a length is missing)."""
    import onnx

    def inputs(path):
        return [(vi.name, declared_shape(vi)) for vi in graph_inputs(onnx.load(path, load_external_data=False))]

    written = inputs(out)
    profile, missing = settle(written, trt_shapes or {})
    static = {n: d for n, d in written if d is not None and n not in profile and n not in missing}
    feed = {}
    for name, decl in inputs(source) if source and os.path.isfile(source) else written:
        if decl is None or not all(isinstance(d, int) and d > 0 for d in decl):
            dims = profile[name]["opt"] if name in profile else static.get(name)
            if dims is not None:
                feed[name] = dims
    return profile, feed, missing_line(missing, written) if missing else None


def build_engine(onnx_path: str, engine_path: str, plugin_library: str | None = None, profile=None) -> dict:
    """Parse the TensorRT-ready ONNX with TensorRT's own parser, re-read every resize/grid-sample layer it
    built into IR, and write a serialized engine. Needs the tensorrt package (and the plugin library when the
    model has plugin nodes)."""
    why = tensorrt_available()
    if why:
        raise BridgeError(why + "; run: " + trtexec_command(onnx_path, plugin_library is not None, engine_path))
    import ctypes

    import tensorrt as trt

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
    if profile:  # the dynamic inputs' min/opt/max (trt_profile.settle); unverified here: TensorRT is absent
        shapes = builder.create_optimization_profile()
        for name, s in profile.items():
            shapes.set_shape(name, s["min"], s["opt"], s["max"])
        config.add_optimization_profile(shapes)
    blob = builder.build_serialized_network(network, config)
    if blob is None:
        raise BridgeError("TensorRT could not build an engine (see its log)")
    with open(engine_path, "wb") as f:
        f.write(bytes(blob))
    return {"engine": engine_path, "layers": [(n, ir.origin) for n, ir in layers]}


def finish(out: str, needs_plugin: bool, source: str | None = None, trt_shapes: dict | None = None) -> dict:
    """How the written model becomes an engine: the plugin library's path and whether it is built (else
    ``build_command``, the one command that builds it), the trtexec command, the polygraphy command comparing
    TensorRT with onnxruntime (``source``: the model onnxruntime runs), and, where the tensorrt package imports
    and the library is there, the engine built beside ``out`` (or why it could not be). ``trt_shapes``: the
    optimization profile asked for (``trt_profile.requested``); both commands carry it."""
    lib = plugin_library_path() if needs_plugin else None
    profile, feed, missing = _shapes(out, source, trt_shapes)
    built = lib is None or os.path.isfile(lib)
    rep = {"plugin_library_path": lib, "plugin_library_built": bool(lib) and built,
           "build_command": None if built else build_plugin_command(),
           "command": trtexec_command(out, needs_plugin, profile=profile),
           "polygraphy_command": polygraphy_command(out, needs_plugin, source, profile, feed),
           "profile": profile, "profile_missing": missing}
    why = tensorrt_available()
    rep["tensorrt"] = why or "available"
    if why is None and not built:
        rep["engine_error"] = f"the plugin library {lib} is not built; run: {rep['build_command']}"
    elif why is None:
        try:
            rep["engine"] = build_engine(out, out[:-5] + ".engine", rep["plugin_library_path"], profile)
        except BridgeError as e:
            rep["engine_error"] = e.message
    return rep


def format_convert(rep: dict, quiet: bool = False) -> str:
    """The convert report (``target.report`` + ``finish`` + "output") as text: the rungs (not under ``quiet``),
    the plugin library (built, or the one command that builds it), then how to finish on TensorRT and compare
    it with onnxruntime."""
    lines = []
    for n in () if quiet else rep["nodes"]:
        lines.append(f"{clip(n['node'], 80)}: rung {n['rung']} ({n['rung_name']}): {n['reason']}")
        lines += unverified_lines(n["assumptions"])
    lines.append(f"wrote {rep['output']} ({counted(len(rep['nodes']), 'resampling node')}, each proven against its source IR)")
    if rep["plugin_library"]:
        plugins = ", ".join(rep["plugins"])
        if rep.get("plugin_library_built"):
            lines.append(f"plugin nodes {plugins} need the plugin library {rep['plugin_library_path']} (built)")
        else:
            lines.append(f"plugin nodes {plugins} need the plugin library {rep['plugin_library_path']}, not built "
                         "yet; build it where TensorRT and the CUDA toolkit are installed:")
            lines.append(f"  {rep['build_command']}")
    if rep.get("profile_missing"):
        lines.append(rep["profile_missing"])
    if rep.get("engine"):
        lines.append(f"built {rep['engine']['engine']} with TensorRT")
    else:
        if rep.get("engine_error"):
            lines.append(f"TensorRT could not build the engine here: {rep['engine_error']}")
        else:
            lines.append(f"TensorRT is not available here ({rep['tensorrt']}); to finish on a machine with it:")
        lines.append(f"  {rep['command']}")
    if rep.get("polygraphy_command"):
        lines.append("compare TensorRT with onnxruntime (polygraphy, on a machine with TensorRT and a GPU):")
        lines.append(f"  {rep['polygraphy_command']}")
    return "\n".join(lines)


__all__ = ["tensorrt_available", "trtexec_command", "polygraphy_command", "build_engine", "finish", "format_convert"]
