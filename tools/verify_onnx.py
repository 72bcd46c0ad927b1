"""``verify --target onnx | tensorrt``: the converted ONNX run on onnxruntime (CPU), where ``verify_openvino``
runs an OpenVINO IR on OpenVINO CPU. The rest of ``verify`` (the source on onnxruntime, each resampling node
against the oracle, the statistics) is shared.

TensorRT is not installed here, so the TensorRT-ready ONNX runs on onnxruntime: that checks every rewrite and
decomposition the conversion made, not what TensorRT's own kernels compute (the printed ``polygraphy run``
command does that on a machine with TensorRT). A plugin node only TensorRT can run is refused (exit 2): a
verify that passed without running it would tell a CI gate something it never checked.
"""

from __future__ import annotations

import os
import tempfile

from ..lowering.passes import ConvertOptions
from ..semantics.errors import BridgeError, clip, first_line
from ..lowering.model_check import import_onnxruntime
from ..lowering.tensorrt.plugin import is_plugin_node
from ..lowering.tensorrt.spell import opset_spelled
from ..translate.tensorrt.layers import tensorrt_missing
from .verify_source import ort_options, ort_text

# What verify's lines call the runtime, per target (each registry entry names its own, ``targets``).
ONNX_NAME = "the converted ONNX on onnxruntime"
TENSORRT_NAME = "the TensorRT-ready ONNX on onnxruntime"


def tensorrt_note() -> str:
    head = "TensorRT absent" if tensorrt_missing() else "TensorRT not run by verify"
    return (f"{head}: the TensorRT-ready ONNX was run on onnxruntime (GridSample in TensorRT's parser spelling "
            "given back its ONNX name); what TensorRT's own kernels compute stays unverified (run the polygraphy "
            "command convert printed, on a machine with TensorRT)")


def _converted_model(target: str, path: str, converted: str | None, options: ConvertOptions, convert_file):
    """(the converted ModelProto, its conversion records or ()) from the user's file or a conversion here
    (``convert_file(path, out, options)``: the registry's, for ``target``)."""
    import onnx

    if converted is not None:
        if not os.path.exists(converted):
            raise BridgeError(f"no such file: {clip(converted)}", field="converted")
        if not os.path.isfile(converted) or not converted.endswith(".onnx"):
            raise BridgeError(f"{clip(converted)} is not an .onnx file (--target {target} writes ONNX)",
                              field="converted")
        try:
            return onnx.load(converted), ()
        except Exception as e:  # noqa: BLE001 -- the parser's own words, on one line
            raise BridgeError(f"cannot read {clip(converted)} as ONNX: {clip(first_line(e), 160)}",
                              field="converted") from None
    with tempfile.TemporaryDirectory(prefix="rb-verify-") as d:
        written, _ = convert_file(path, os.path.join(d, "converted.onnx"), options)
        return onnx.load(written.output), written.records


def _refuse_plugins(model, target: str) -> None:
    plugins = [n for n in model.graph.node if is_plugin_node(n)]
    if plugins:
        first = plugins[0]
        more = f" (and {len(plugins) - 1} more plugin nodes)" if len(plugins) > 1 else ""
        raise BridgeError(f"not verified: the converted model runs it as the TensorRT plugin {first.op_type}{more}, "
                          f"which only TensorRT runs (absent here); run convert --target {target}'s polygraphy "
                          "command where TensorRT is", first.name or first.output[0], "target")


def run_converted_onnx(source, path: str, feeds: dict, observe: list[str], *, target: str, convert_file,
                       converted: str | None = None, fallback: str = "decompose", strict: bool = False,
                       allow_conditional: bool | None = None, extensions=(),
                       precision: str = "f32") -> tuple[dict, list[str]]:
    """verify's runner of the ONNX targets (``targets.Runner``): (every observable tensor of the converted model
    by name, the conversion's rung lines): ``observe`` are the tensors wanted beside the model's outputs (each
    resampling node's inputs and output, where the converted graph still has them); ``convert_file(path, out,
    options)``: the registry's conversion for ``target`` (``source``, ``extensions`` and ``precision`` are the
    OpenVINO runner's)."""
    import onnx
    from onnx import numpy_helper

    options = ConvertOptions(fallback=fallback, strict=strict, allow_conditional=allow_conditional)
    model, records = _converted_model(target, path, converted, options, convert_file)
    _refuse_plugins(model, target)
    model = opset_spelled(model)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.ir_version = min(m.ir_version, 10)  # onnxruntime 1.31 reads IR <= 13 (see verify_openvino)
    consts = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    produced = {o for n in m.graph.node for o in n.output}
    have = {o.name for o in m.graph.output}
    for name in observe:
        if name in produced and name not in have:
            m.graph.output.append(onnx.ValueInfoProto(name=name))
            have.add(name)

    ort = import_onnxruntime()

    inputs = {i.name for i in m.graph.input}
    try:
        sess = ort.InferenceSession(m.SerializeToString(), ort_options(), providers=["CPUExecutionProvider"])
        values = sess.run(None, {k: v for k, v in feeds.items() if k in inputs})
    except Exception as e:  # noqa: BLE001 -- onnxruntime's own words, on one line
        msg = ort_text(" ".join(str(e).split())) if str(e) else type(e).__name__
        raise BridgeError(f"onnxruntime cannot run the converted model: {clip(msg, 400)}", field="converted") from None
    out = {**{k: v for k, v in consts.items() if k in observe}, **feeds}
    out.update(zip([o.name for o in sess.get_outputs()], values))
    return out, [r.summary() for r in records]


__all__ = ["ONNX_NAME", "TENSORRT_NAME", "tensorrt_note", "run_converted_onnx"]
