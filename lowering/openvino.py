"""IR -> OpenVINO, through the lowering ladder, each node with its rung and the reason for it.

1. native op whose parsed IR equals the source IR (GridSample-9 for 4-D grids where the padding rule
   agrees);
2. native op after an exact rewrite (DeformableConvolution-8 with bilinear_interpolation_pad=true plus an
   Add for the bias);
3. decomposition into per-axis K-tap Gather / Multiply / ReduceSum with constant tables from
   ``semantics.taps`` (static shapes; exact: the tables are the oracle's own);
4. custom op from the shared C++ kernels (``lowering/native.py``: the resample-bridge OpenVINO extension,
   built on first use): 5-D / 1-D GridSample, N-D DeformConv, padding rules no native op has, dynamic
   shapes, run-time scales/sizes/roi that no native op matches exactly, and anything under
   ``--fallback extension``.

``conversion_extensions()`` returns ONNX-frontend ConversionExtensions that replace OpenVINO's translators
for Resize, Upsample, GridSample and DeformConv, so the rest of a model still goes through OpenVINO's own
importer. openvino is imported lazily: this module imports without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..semantics.coords import bind_resize
from ..semantics.errors import BridgeError
from ..semantics.ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue
from ..semantics.taps import axis_taps

NATIVE, REWRITE, DECOMPOSE, EXTENSION = 1, 2, 3, 4
RUNG_NAMES = {NATIVE: "native", REWRITE: "native after exact rewrite", DECOMPOSE: "decomposition",
              EXTENSION: "extension"}


def _ops():
    import openvino.opset13 as ops

    return ops


TAG = "resample_bridge"


def _tag(node, tag: str) -> None:
    """Mark an op so the proof can find it: the frontend renames a converted node's last op to the ONNX
    output name, so friendly names alone do not survive conversion; rt_info does (in memory)."""
    node.get_rt_info()[TAG] = tag


@dataclass
class Lowered:
    """What one node became."""

    name: str
    ir: object
    rung: int
    reason: str
    condition: str | None = None  # when exactness depends on run-time values
    native_op_name: str | None = None  # rungs 1-2: tag of the op to re-read for the proof
    located: dict = field(default_factory=dict)  # tag -> friendly name, found in memory, reused on disk
    tables_shape: tuple | None = None  # the static input shape the lowering was proven for
    ties_measured: dict | None = None  # native with fp32 ties: settled by a probe run at conversion

    def summary(self) -> str:
        s = f"{self.name}: rung {self.rung} ({RUNG_NAMES[self.rung]}): {self.reason}"
        return s + (f" [exact if {self.condition}]" if self.condition else "")


# ----------------------------------------------------------------------------------------------------------
# Rung 3: decomposition of a static-shape Resize into per-axis tap tables.


def _to_compute(x):
    """f32 for the arithmetic; remember how to go back to the input's type."""
    import openvino as ov

    ops = _ops()
    et = x.get_element_type()
    if et == ov.Type.f32:
        return x, None
    return ops.convert(x, "f32").output(0), et


def _from_compute(y, et):
    """Back to the input type as ONNX casts: integers round half to even and saturate."""
    if et is None:
        return y
    ops = _ops()
    if et.is_integral():
        info = np.iinfo(np.dtype(et.to_dtype()))
        y = ops.round(y, "half_to_even").output(0)
        y = ops.clamp(y, float(info.min), float(info.max)).output(0)
    return ops.convert(y, et).output(0)


def decompose_resize(ir: ResizeIR, x, in_shape, name: str = ""):
    """Exact K-tap decomposition for a static input shape (the proof re-reads the tables from the model)."""
    ops = _ops()
    bound = bind_resize(ir, in_shape)
    y, et = _to_compute(x)
    shape = list(bound.in_shape)
    for ax in bound.axes:
        t = axis_taps(ax, bound.sampler, bound.exclude_outside)
        O, K = t.index.shape
        g = ops.gather(y, ops.constant(t.index.reshape(-1).astype(np.int64)), ops.constant(np.int64(ax.axis)))
        _tag(g, f"{name}/taps_{ax.axis}/gather")
        y = g.output(0)
        if not (K == 1 and np.all(t.weight == 1.0)):
            split = shape[:ax.axis] + [O, K] + shape[ax.axis + 1:]
            y = ops.reshape(y, ops.constant(np.array(split, dtype=np.int64)), False).output(0)
            wshape = (O, K) + (1,) * (len(shape) - ax.axis - 1)
            w = ops.constant(t.weight.reshape(wshape).astype(np.float32))
            w.set_friendly_name(f"{name}/taps_{ax.axis}/weights")
            y = ops.multiply(y, w).output(0)
            y = ops.reduce_sum(y, ops.constant(np.int64(ax.axis + 1)), False).output(0)
        shape[ax.axis] = O
        if t.extrapolate is not None and t.extrapolate.any():
            mshape = (O,) + (1,) * (len(shape) - ax.axis - 1)
            mask = ops.constant(t.extrapolate.reshape(mshape))
            y = ops.select(mask, ops.constant(np.float32(bound.extrapolation_value)), y).output(0)
    return _from_compute(y, et)


# ----------------------------------------------------------------------------------------------------------
# GridSample and DeformConv natives.


def native_gridsample(ir: GridSampleIR, x, grid):
    """GridSample-9: 4-D only; pads each tap (padding_on="taps"), nearest half-to-even, cubic a=-3/4."""
    import openvino.opset9 as ops9

    mode = {"linear": "bilinear", "cubic": "bicubic", "nearest": "nearest"}[ir.sampler.kind]
    return ops9.grid_sample(x, grid, {"align_corners": ir.align_corners, "mode": mode,
                                      "padding_mode": ir.padding}).output(0)


def gridsample_native_reason(ir: GridSampleIR) -> str | None:
    """None if GridSample-9 computes ``ir``'s numbers, else why not."""
    if ir.spatial_rank != 2:
        return f"GridSample-9 is 4-D only; this is {ir.spatial_rank + 2}-D"
    if ir.sampler.kind == "cubic" and ir.padding != "zeros" and ir.padding_on != "taps":
        return ("cubic with padding on the coordinate (ONNX reference) differs from GridSample-9, which pads "
                "each tap (padding_on: coordinate_and_taps vs taps)")
    return None


def rewrite_deformconv(ir: DeformConvIR, x, w, offset, b=None, mask=None, name: str = ""):
    """DeformableConvolution-8 with bilinear_interpolation_pad=true (zero taps outside, the ONNX rule) and
    the bias as an Add."""
    import openvino.opset8 as ops8

    D = ir.spatial_rank
    y = ops8.deformable_convolution(x, offset, w, mask=mask, strides=list(ir.strides), pads_begin=list(ir.pads[:D]),
                                    pads_end=list(ir.pads[D:]), dilations=list(ir.dilations), group=ir.group,
                                    deformable_group=ir.offset_group, bilinear_interpolation_pad=True).output(0)
    _tag(y.get_node(), f"{name}/native")
    if b is not None:
        ops = _ops()
        b = ops.reshape(b, ops.constant(np.array([1, -1] + [1] * D, dtype=np.int64)), False).output(0)
        y = ops.add(y, b).output(0)
    return y


def deformconv_rewrite_reason(ir: DeformConvIR) -> str | None:
    if ir.spatial_rank != 2:
        return f"DeformableConvolution-8 is 2-D only; this is {ir.spatial_rank}-D"
    if ir.border != "zero_taps":
        return f"border {ir.border!r} has no DeformableConvolution-8 spelling"
    return None


# ----------------------------------------------------------------------------------------------------------
# The ladder for one node.


def _static_shape(shape) -> bool:
    return shape is not None and all(d is not None for d in shape)


def lower(name: str, ir, inputs: list, *, fallback: str = "decompose", strict: bool = False):
    """Lower one node. ``inputs`` are OpenVINO outputs in ONNX order (None for omitted optional inputs).
    Returns (list of outputs, Lowered)."""
    if isinstance(ir, ResizeIR):
        return _lower_resize(name, ir, inputs, fallback, strict)
    if isinstance(ir, GridSampleIR):
        why = gridsample_native_reason(ir)
        if why is None and fallback != "extension":
            out = native_gridsample(ir, inputs[0], inputs[1])
            _tag(out.get_node(), f"{name}/native")
            return [out], Lowered(name, ir, NATIVE, "GridSample-9 computes the same numbers",
                                  native_op_name=f"{name}/native")
        return _extension(name, ir, inputs, why or "requested with --fallback extension")
    if isinstance(ir, DeformConvIR):
        why = deformconv_rewrite_reason(ir)
        if why is None and fallback != "extension":
            x, w, off = inputs[:3]
            b = inputs[3] if len(inputs) > 3 else None
            m = inputs[4] if len(inputs) > 4 else None
            out = rewrite_deformconv(ir, x, w, off, b, m, name)
            return [out], Lowered(name, ir, REWRITE, "DeformableConvolution-8 with bilinear_interpolation_pad="
                                  "true" + (" + Add for the bias" if b is not None else ""),
                                  native_op_name=f"{name}/native")
        return _extension(name, ir, inputs, why or "requested with --fallback extension")
    raise BridgeError(f"cannot lower {type(ir).__name__}", name)


def _extension(name: str, ir, inputs: list, why: str):
    """Rung 4: the extension op whose attributes are the IR fields (its kernels are tested against the
    oracle in tests/lowering/test_kernels.py)."""
    from . import native

    try:
        node = native.openvino_node(ir, inputs)
    except BridgeError as e:
        raise BridgeError(f"needs the resample-bridge OpenVINO extension ({why}), which is unavailable: "
                          f"{e.message}", name, e.field or "rung") from None
    _tag(node, f"{name}/extension")
    return [node.output(0)], Lowered(name, ir, EXTENSION, f"resample-bridge extension op: {why}",
                                     native_op_name=f"{name}/extension")


# ----------------------------------------------------------------------------------------------------------
# Rungs 1-2 for Resize: native Interpolate candidates, each parsed back into IR and compared.

_OV_COORDS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners")


def _interpolate_mode(ir: ResizeIR) -> dict | None:
    """The Interpolate mode spelling the sampler, or None (antialias / exclude_outside: only the pillow modes
    come near, and only under their own conditions)."""
    s = ir.sampler
    if s.kind == "nearest":
        return dict(mode="nearest", nearest_mode=s.nearest)
    if s.antialias or ir.exclude_outside:
        return None
    return dict(mode="linear_onnx") if s.kind == "linear" else dict(mode="cubic", cube_coeff=float(s.cubic_a))


def _interpolate_candidates(ir: ResizeIR, bound):
    """(rung, description, attrs) to try in order: the ONNX spelling first, then exact rewrites."""
    axes = [a.axis for a in bound.axes] or list(ir.axes)
    sizes = [bound.out_shape[a] for a in axes]
    s = ir.sampler
    mode = _interpolate_mode(ir)
    if mode is not None:
        coord = ir.coord if ir.coord in _OV_COORDS else None
        if coord and isinstance(ir.scales, tuple):
            # Spelled as OpenVINO's own importer does (every listed axis, no axes input when all are): the
            # same op, and measured 2-4% faster on CPU than passing only the resized axes.
            yield NATIVE, "Interpolate-11 with the same attributes", dict(
                mode, coord=coord, calc="scales", values=[float(s) for s in ir.scales],
                axes=None if list(ir.axes) == list(range(ir.rank)) else list(ir.axes))
        if coord:
            yield (NATIVE if ir.sizes is not None and ir.aspect_policy == "stretch" else REWRITE,
                   "Interpolate-11 in sizes mode", dict(mode, coord=coord, calc="sizes", values=sizes, axes=axes))
        for other in _OV_COORDS:  # another spelling of the same coordinate map for these lengths
            if other != coord:
                yield REWRITE, f"Interpolate-11, {ir.coord} spelled as {other}", dict(
                    mode, coord=other, calc="sizes", values=sizes, axes=axes)
    if s.antialias and ir.exclude_outside and len(axes) == 2 and \
            (s.kind == "linear" or s.cubic_a == Fraction(-1, 2)):
        pillow = "bilinear_pillow" if s.kind == "linear" else "bicubic_pillow"
        yield REWRITE, f"Interpolate-11 {pillow} (= antialias + exclude_outside, half_pixel)", dict(
            mode=pillow, coord="half_pixel", calc="sizes", values=sizes, axes=sorted(axes))


def _build_interpolate(x, attrs: dict):
    import openvino.opset11 as ops11

    dtype = np.float32 if attrs["calc"] == "scales" else np.int64
    axes = attrs.get("axes")
    values = attrs["values"]  # constants, or the run-time tensor itself
    if isinstance(values, (list, tuple)):
        values = ops11.constant(np.array(values, dtype=dtype))
    return ops11.interpolate(
        x, values, attrs["mode"], attrs["calc"],
        coordinate_transformation_mode=attrs["coord"], nearest_mode=attrs.get("nearest_mode", "round_prefer_floor"),
        cube_coeff=attrs.get("cube_coeff", -0.75),
        axes=None if axes is None else ops11.constant(np.array(axes, dtype=np.int64)),
    )


def ties_text(ties: dict, show: int = 6) -> str:
    """``H [1, 4]; W [0, 2, 4, 6, 8, 10, ... 160 in all]``: short enough for a one-line reason."""
    parts = []
    for ax, idx in ties.items():
        body = ", ".join(map(str, idx[:show])) + (f", ... {len(idx)} in all" if len(idx) > show else "")
        parts.append(f"{ax} [{body}]")
    return "; ".join(parts)


def _probe_matches(ir: ResizeIR, node, shape) -> bool:
    """Run one candidate on distinct values and compare with the oracle: which element a resize reads does not
    depend on the data, so equality here proves how fp32 coordinates resolve the ties on this shape."""
    import openvino as ov

    from ..semantics.reference import run

    model = ov.Model([node.output(0)], [p.get_node() for p in node.input_values()
                                        if p.get_node().get_type_name() == "Parameter"])
    x = (np.random.default_rng(7).permutation(int(np.prod(shape))).reshape(shape) / 7.0).astype(np.float32)
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    want = run(ir, x, None, None, None)
    return got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-6)


def native_resize(ir: ResizeIR, shape, et):
    """The first native Interpolate whose parsed IR equals ``ir`` on ``shape``: (rung, description, attrs,
    ties_measured) or None with the reasons each candidate failed."""
    import openvino.opset11 as ops11

    from ..semantics.equivalence import diff
    from ..translate import openvino as tov

    bound = bind_resize(ir, shape)
    reasons = []
    for rung, desc, attrs in _interpolate_candidates(ir, bound):
        param = ops11.parameter(list(shape), et)
        try:
            node = _build_interpolate(param, attrs)
            got = tov.parse_node(node)
            d = diff(ir, got, shapes=shape)
        except (BridgeError, RuntimeError) as e:
            reasons.append(f"{desc}: {e}")
            continue
        if not d.same:
            reasons.append(f"{desc} differs in " + ", ".join(
                f.name for f in d.fields if not f.name.endswith("coordinate map")) or "its coordinate map")
            continue
        if d.ties:
            if not _probe_matches(ir, node, shape):
                reasons.append(f"{desc}: fp32 coordinates resolve the ties at {ties_text(d.ties)} differently")
                continue
            return rung, desc, attrs, d.ties, reasons
        return rung, desc, attrs, None, reasons
    return None, None, None, None, reasons


# Fields in which a native Interpolate fed the run-time values may differ from the source IR, and the
# run-time condition under which that difference changes no number. Any other difference rules it out.
_RUNTIME_CONDITIONS = {
    "size_rule": "no L*s lies within 1e-6 below an integer (OpenVINO adds 1e-6 before flooring)",
    "equal_length_identity": "no resized axis keeps its length with a scale other than 1 (OpenVINO copies it)",
    "formula_length": "L*s is an integer on every resized axis (OpenVINO divides by the integer length)",
    "length1": "no output length is 1 (pytorch_half_pixel reads 0 there in OpenVINO, -1/2 in ONNX)",
    "arith": "no source coordinate falls on a rounding boundary (OpenVINO computes coordinates in float32)",
}


def _runtime_native(name, ir: ResizeIR, x, inputs):
    """A native Interpolate fed the run-time scales/sizes, with the conditions under which it is exact, or
    (None, reason)."""
    from ..translate import openvino as tov

    if ir.roi is not None or ir.aspect_policy != "stretch":
        return None, "roi / keep-aspect policies fed at run time have no native spelling"
    mode = _interpolate_mode(ir)
    if mode is None:
        return None, "antialias / exclude_outside have no native spelling with run-time scales"
    if ir.coord not in _OV_COORDS:
        return None, f"coordinate mode {ir.coord} has no native spelling"
    from .native import resize_inputs

    inputs = resize_inputs(ir, inputs)  # (X, roi, scales, sizes) also for Upsample / Resize-10
    calc, values = ("scales", inputs[2]) if isinstance(ir.scales, RuntimeValue) else ("sizes", inputs[3])
    node = _build_interpolate(x, dict(mode, coord=ir.coord, calc=calc, values=values, axes=list(ir.axes)))
    try:
        got = tov.parse_node(node)
    except BridgeError as e:
        return None, f"OpenVINO's Interpolate cannot take it: {e.message}"
    ok, conditions = runtime_conditions(ir, got)
    return (node, conditions) if ok else (None, conditions)


def runtime_conditions(ir: ResizeIR, got: ResizeIR) -> tuple[bool, list | str]:
    """(True, conditions under which ``got`` computes ``ir``'s numbers) or (False, why it never does)."""
    from ..semantics.equivalence import field_differences

    calc = "scales" if isinstance(ir.scales, RuntimeValue) else "sizes"
    conditions = []
    for f in field_differences(ir, got):
        if f.name in ("scales.source", "sizes.source", "roi.source"):
            continue  # the same run-time tensor, named by each framework
        if f.name == "formula_length" and ir.coord not in ("align_corners", "half_pixel_symmetric",
                                                          "tf_crop_and_resize"):
            continue  # only these modes use the output length in their formula
        if f.name == "length1" and ir.coord != "pytorch_half_pixel":
            continue
        if f.name == "arith" and ir.sampler.kind != "nearest":
            continue  # linear and cubic are continuous in the coordinate: no ties
        if f.name == "size_rule" and calc == "sizes":
            continue
        if f.name not in _RUNTIME_CONDITIONS:
            return False, f"Interpolate differs in {f.name} ({f.a} vs {f.b})"
        conditions.append(_RUNTIME_CONDITIONS[f.name])
    return True, conditions


def _lower_resize(name, ir: ResizeIR, inputs, fallback, strict):
    if fallback == "extension":
        return _extension(name, ir, inputs, "requested with --fallback extension")
    x = inputs[0]
    shape = tuple(d.get_length() if d.is_static else None for d in x.get_partial_shape()) \
        if x.get_partial_shape().rank.is_static else None
    static_params = not any(isinstance(getattr(ir, k), RuntimeValue) for k in ("scales", "sizes", "roi"))
    why_not_native = []
    if _static_shape(shape) and static_params and str(x.get_element_type()) == "<Type: 'float32'>":
        rung, desc, attrs, ties, why_not_native = native_resize(ir, shape, x.get_element_type())
        if rung is not None:
            node = _build_interpolate(x, attrs)
            _tag(node, f"{name}/native")
            reason = desc + " computes the same numbers" + (
                f" (fp32 ties at {ties_text(ties)} measured to resolve as exact arithmetic)" if ties else "")
            return [node.output(0)], Lowered(name, ir, rung, reason, native_op_name=f"{name}/native",
                                             tables_shape=shape, ties_measured=ties)
    if not static_params:
        node, conditions = _runtime_native(name, ir, x, inputs)
        key = next(k for k in ("scales", "sizes", "roi") if isinstance(getattr(ir, k), RuntimeValue))
        if node is None:
            return _extension(name, ir, inputs, f"{key} is fed at run time and {conditions}")
        if conditions and strict:
            return _extension(name, ir, inputs, f"--strict: a native Interpolate is exact only if "
                                                f"{'; and '.join(conditions)}")
        _tag(node, f"{name}/native")
        return [node.output(0)], Lowered(name, ir, NATIVE, "Interpolate-11 fed the run-time " + key,
                                         condition="; and ".join(conditions) or None,
                                         native_op_name=f"{name}/native")
    if not _static_shape(shape):
        return _extension(name, ir, inputs, f"input shape {shape} is not static (decomposition needs static "
                                            f"shapes)")
    out = decompose_resize(ir, x, shape, name)
    reason = "per-axis tap tables from the oracle's tap module (Gather/Multiply/ReduceSum)"
    if why_not_native:
        reason += "; no native Interpolate is exact (" + "; ".join(why_not_native[:2]) + ")"
    return [out], Lowered(name, ir, DECOMPOSE, reason, tables_shape=shape)


# ----------------------------------------------------------------------------------------------------------
# ONNX frontend hook.

_ATTRS = {
    "Resize": ("mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
               "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"),
    "Upsample": ("mode", "scales"),
    "GridSample": ("mode", "padding_mode", "align_corners"),
    "DeformConv": ("dilations", "group", "kernel_shape", "offset_group", "pads", "strides"),
}


def _view_from_context(ctx, op_type: str, index: int):
    """A translate.onnx.NodeView of the node OpenVINO's ONNX frontend is converting."""
    from ..translate.onnx import NodeView

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
        ps = out.get_partial_shape()
        if ps.rank.is_static:
            shapes[key] = tuple(d.get_length() if d.is_static else None for d in ps)
        if out.get_element_type().is_static():
            dtypes[key] = out.get_element_type().to_dtype().name
    # A node name is not exposed by the frontend; name it by its first input's tensor.
    first = inputs[0].split(":", 1)[1] if inputs and inputs[0] else "?"
    return NodeView(op_type, f"{op_type}({first})#{index}", attrs, inputs, consts, shapes, dtypes)


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
    """The Lowered record of every node converted through the extensions, in conversion order."""


def conversion_extensions(opset: int | None = None, fallback: str = "decompose", strict: bool = False,
                          log: ConversionLog | None = None, names: dict | None = None):
    """ConversionExtensions for ``openvino.convert_model(path, extension=...)`` replacing OpenVINO's
    translators for Resize, Upsample, GridSample and DeformConv with resample-bridge's lowering."""
    from openvino.frontend.onnx import ConversionExtension

    from ..translate.onnx import parse_view

    counter = [0]

    def make(op_type):
        def convert(ctx):
            counter[0] += 1
            view = _view_from_context(ctx, op_type, counter[0])
            first = view.inputs[0].split(":", 1)[-1] if view.inputs and view.inputs[0] else None
            if names and names.get((op_type, first)):
                view.name = names[(op_type, first)].pop(0)
            ir = parse_view(view, opset or _infer_opset(op_type, view.attrs, len(view.inputs)))
            inputs = [None if not n else ctx.get_input(i) for i, n in enumerate(view.inputs)]
            outs, rec = lower(view.name, ir, inputs, fallback=fallback, strict=strict)
            if log is not None:
                log.append(rec)
            return outs

        return ConversionExtension(op_type, convert)

    return [make(op) for op in ("Resize", "Upsample", "GridSample", "DeformConv")]


# ----------------------------------------------------------------------------------------------------------
# Whole-model conversion with proof.


def _node_names(model) -> dict:
    """(op_type, first input tensor) -> ONNX node names in graph order: how extension calls, which see no
    node name, are matched back to the nodes users know."""
    from ..translate.onnx import RESAMPLING_OPS, node_name

    names: dict = {}
    for i, node in enumerate(model.graph.node):
        if node.op_type in RESAMPLING_OPS and node.domain in ("", "ai.onnx"):
            names.setdefault((node.op_type, node.input[0]), []).append(node_name(node, i))
    return names


def prove(ov_model, records: list[Lowered]) -> list[str]:
    """Re-read every lowered node from the produced model and compare it with its source IR.
    Returns the list of failures (empty = proven)."""
    by_name = {}
    for op in ov_model.get_ops():
        rt = op.get_rt_info()
        if TAG in rt:
            by_name[str(rt[TAG].astype(str))] = op
    names = {op.get_friendly_name(): op for op in ov_model.get_ops()}
    for rec in records:
        for tag, fname in rec.located.items():  # a re-read model has lost rt_info: use the names seen before
            if tag not in by_name and fname in names:
                by_name[tag] = names[fname]
        for tag, op in by_name.items():
            if tag.startswith(rec.name + "/"):
                rec.located[tag] = op.get_friendly_name()
    failures = []
    for rec in records:
        if rec.rung == DECOMPOSE:
            failures += _prove_tables(rec, by_name)
        elif rec.rung == EXTENSION:
            failures += _prove_extension(rec, by_name)
        else:
            failures += _prove_native(rec, by_name)
    return failures


def _prove_extension(rec: Lowered, by_name) -> list[str]:
    """The extension op's attributes, read back into IR, must be the source IR's fields."""
    from . import native
    from ..semantics.equivalence import field_differences

    op = by_name.get(rec.native_op_name)
    if op is None:
        return [f"{rec.name}: extension op not found in the produced model"]
    got = native.parse_attributes(op.get_type_name(), op.get_attributes())
    bad = []
    for f in field_differences(rec.ir, got):
        if f.name in ("scales.source", "sizes.source", "roi.source"):
            continue  # a run-time tensor: the op takes it as an input, its name is not semantics
        if f.name == "roi" and getattr(rec.ir, "coord", None) != "tf_crop_and_resize":
            continue  # only tf_crop_and_resize reads roi
        if f.name in ("has_bias", "has_mask") and getattr(rec.ir, f.name) == getattr(got, f.name, None):
            continue
        bad.append(f"{rec.name}: extension attribute {f}")
    return bad


def _constant_of(op, port: int):
    src = op.input_value(port).get_node()
    return src.get_data() if src.get_type_name() == "Constant" else None


def _consumer(op, type_name: str):
    """The single consumer of ``op``'s output of the given type, or None."""
    users = [i.get_node() for i in op.output(0).get_target_inputs()]
    users = [u for u in users if u.get_type_name() == type_name]
    return users[0] if len(users) == 1 else None


def _prove_tables(rec: Lowered, by_name) -> list[str]:
    """The Gather indices and the Multiply weights that follow it must be the source IR's own tap tables
    (recomputed here from the IR, not taken from the lowering). The frontend renames constants, so the
    weights are found by walking from the named Gather: Gather -> Reshape -> Multiply(constant)."""
    ir = rec.ir
    bound = bind_resize(ir, rec.tables_shape)
    out = []
    for ax in bound.axes:
        want = axis_taps(ax, bound.sampler, bound.exclude_outside)
        gather = by_name.get(f"{rec.name}/taps_{ax.axis}/gather")
        if gather is None:
            out.append(f"{rec.name}: axis {ax.axis}: no gather in the produced model")
            continue
        idx = _constant_of(gather, 1)
        if idx is None or idx.size != want.index.size or not np.array_equal(idx.reshape(want.index.shape),
                                                                              want.index):
            out.append(f"{rec.name}: axis {ax.axis}: gather indices differ from the source IR's taps")
        if want.index.shape[1] == 1 and np.all(want.weight == 1.0):
            continue
        reshape = _consumer(gather, "Reshape")
        mul = _consumer(reshape, "Multiply") if reshape is not None else None
        w = _constant_of(mul, 1) if mul is not None else None
        if w is None or w.size != want.weight.size or w.dtype != np.float32 or \
                not np.array_equal(w.reshape(want.weight.shape), want.weight.astype(np.float32)):
            out.append(f"{rec.name}: axis {ax.axis}: weights differ from the source IR's taps "
                       f"(float32 {'present' if w is not None else 'missing'}"
                       f"{', dtype ' + str(w.dtype) if w is not None else ''})")
    return out


def _prove_native(rec: Lowered, by_name) -> list[str]:
    try:
        from ..translate import openvino as tov
    except ImportError:  # the OpenVINO parser is not there: nothing can be proven
        return [f"{rec.name}: no OpenVINO parser to re-read the native op"]
    ops = [op for name, op in by_name.items() if name == rec.native_op_name]
    if not ops:
        return [f"{rec.name}: native op not found in the produced model"]
    from ..semantics.equivalence import diff

    got = tov.parse_node(ops[0])
    if isinstance(rec.ir, DeformConvIR) and rec.ir.has_bias:
        # Rung 2 spells the bias as an Add right after the convolution.
        import dataclasses

        if _consumer(ops[0], "Add") is None:
            return [f"{rec.name}: the bias Add after DeformableConvolution-8 is missing"]
        got = dataclasses.replace(got, has_bias=True)
    if rec.condition is not None or any(isinstance(getattr(rec.ir, k, None), RuntimeValue)
                                        for k in ("scales", "sizes", "roi")):
        # Run-time parameters: nothing to bind; the op must be the one the condition was derived for.
        ok, conditions = runtime_conditions(rec.ir, got)
        return [] if ok and "; and ".join(conditions) == (rec.condition or "") else \
            [f"{rec.name}: the native op no longer matches its stated condition"]
    d = diff(rec.ir, got, shapes=rec.tables_shape or rec.ir.input_shape)
    if not d.same:
        return [f"{rec.name}: {f}" for f in d.fields]
    if d.ties and d.ties != rec.ties_measured:
        return [f"{rec.name}: fp32 ties at {d.ties} were not settled by a probe run"]
    return []


def convert(model_path: str, *, fallback: str = "decompose", strict: bool = False):
    """ONNX file -> (openvino.Model, [Lowered]): resampling nodes through resample-bridge, the rest through
    OpenVINO's importer; every lowered node proven, or BridgeError with the reasons."""
    import openvino as ov

    from ..translate.onnx import load

    model = load(model_path)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    log = ConversionLog()
    exts = conversion_extensions(opset=opset, fallback=fallback, strict=strict, log=log,
                                 names=_node_names(model))
    try:
        ov_model = ov.convert_model(str(model_path), extension=exts)
    except BridgeError:
        raise
    except Exception as e:
        raise BridgeError(_conversion_message(e)) from None
    failures = prove(ov_model, log)
    if failures:
        raise BridgeError("conversion could not prove itself: " + "; ".join(failures))
    return ov_model, list(log)


def _conversion_message(e: Exception) -> str:
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

