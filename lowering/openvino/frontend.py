"""The ONNX-frontend hook: ConversionExtensions that replace OpenVINO's translators for Resize, Upsample,
GridSample and DeformConv with resample-bridge's ladder, so the rest of a model still goes through OpenVINO's own
importer; and OpenVINO's own words when its importer refuses."""

from __future__ import annotations

from .graph import dims
from .ladder import lower

_ATTRS = {
    "Resize": ("mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
               "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"),
    "Upsample": ("mode", "scales"),
    "GridSample": ("mode", "padding_mode", "align_corners"),
    "DeformConv": ("dilations", "group", "kernel_shape", "offset_group", "pads", "strides"),
}
OPS = tuple(_ATTRS)


def view_from_context(ctx, op_type: str, index: int):
    """A translate.onnx.NodeView of the node OpenVINO's ONNX frontend is converting."""
    from ...translate.onnx import NodeView

    attrs = {a: ctx.get_attribute(a) for a in _ATTRS[op_type] if ctx.has_attribute(a)}
    inputs, consts, shapes, dtypes = [], {}, {}, {}
    for i in range(ctx.get_input_size()):
        out = ctx.get_input(i)
        node = out.get_node()
        if node.get_type_name() == "NullNode":
            inputs.append("")
            continue
        key = f"input{i}:" + (sorted(out.get_names())[0] if out.get_names() else node.get_friendly_name())
        inputs.append(key)
        if node.get_type_name() == "Constant":
            consts[key] = node.get_data()
        shape = dims(out)
        if shape is not None:
            shapes[key] = shape
        if out.get_element_type().is_static():
            dtypes[key] = out.get_element_type().to_dtype().name
    # A node name is not exposed by the frontend; name it by its first input's tensor.
    return NodeView(op_type, f"{op_type}({_first_tensor(inputs) or '?'})#{index}", attrs, inputs, consts, shapes,
                    dtypes)


def _first_tensor(inputs: list) -> str | None:
    """The ONNX tensor name of a view's first input (its key is ``input0:NAME``)."""
    return inputs[0].split(":", 1)[1] if inputs and inputs[0] else None


def _infer_opset(op_type: str, attrs: dict, n_inputs: int) -> int:
    """Best guess of the node's version when the caller did not say: what its attributes allow."""
    if op_type == "Resize":
        if n_inputs == 2:
            return 10
        return 19
    if op_type == "GridSample":
        return 16 if attrs.get("mode") in ("bilinear", "bicubic") else 22
    if op_type == "Upsample":
        return 7 if "scales" in attrs else 9
    return 22


class ConversionLog(list):
    """The NodeRecord of every node converted through the extensions, in conversion order."""


def conversion_extensions(opset: int | None = None, fallback: str = "decompose", strict: bool = False,
                          log: ConversionLog | None = None, names: dict | None = None, policy=None):
    """ConversionExtensions for ``openvino.convert_model(path, extension=...)`` replacing OpenVINO's
    translators for Resize, Upsample, GridSample and DeformConv with resample-bridge's lowering. ``names``:
    from :func:`node_names`, so records carry the ONNX node names."""
    from openvino.frontend.onnx import ConversionExtension

    from ...translate.onnx import parse_view

    counter = [0]

    def make(op_type):
        def convert(ctx):
            counter[0] += 1
            view = view_from_context(ctx, op_type, counter[0])
            first = _first_tensor(view.inputs)
            if names and names.get((op_type, first)):
                view.name = names[(op_type, first)].pop(0)
            ir = parse_view(view, opset or _infer_opset(op_type, view.attrs, len(view.inputs)))
            inputs = [None if not n else ctx.get_input(i) for i, n in enumerate(view.inputs)]
            outs, rec = lower(view.name, ir, inputs, fallback=fallback, strict=strict, policy=policy)
            if log is not None:
                log.append(rec)
            return outs

        return ConversionExtension(op_type, convert)

    return [make(op) for op in OPS]


def node_names(model) -> dict:
    """(op_type, first input tensor) -> ONNX node names in graph order: how extension calls, which see no
    node name, are matched back to the nodes users know."""
    from ...translate.onnx import RESAMPLING_OPS, node_name

    names: dict = {}
    for i, node in enumerate(model.graph.node):
        if node.op_type in RESAMPLING_OPS and node.domain in ("", "ai.onnx"):
            names.setdefault((node.op_type, node.input[0]), []).append(node_name(node, i))
    return names


def conversion_message(e: Exception) -> str:
    """OpenVINO wraps errors raised inside a conversion extension in a long report; keep the reason."""
    text = str(e)
    for line in text.splitlines():
        if "BridgeError" in line or "node '" in line and "field" in line:
            return line.split("BridgeError:", 1)[-1].strip()
    return "OpenVINO could not convert the model: " + openvino_error_reason(text)


_NOISE = ("Check 'false' failed at src/frontends/common_translators", "FrontEnd API failed", "Model wasn't fully",
          "Failed operations detailed log", "[ONNX Frontend] Conversion failed", "Summary:",
          "-- Conversion is failed", "While validating", "Check '")


def openvino_error_reason(text: str) -> str:
    """OpenVINO's own words for a refusal, without the wrapper lines of its conversion report."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        # A Python exception raised inside a conversion extension: keep its type and message.
        if ln.startswith("While validating ONNX node") and "Error: " in ln:
            return "internal error in a conversion extension: " + ln.split(">': ", 1)[-1][:300]
    useful = [ln for ln in lines if not ln.startswith(_NOISE) and not (ln.startswith("--") and "message" in ln)]
    reason = useful[-1] if useful else (lines[-1] if lines else "unknown error")
    return reason.lstrip("- ")[:300]
