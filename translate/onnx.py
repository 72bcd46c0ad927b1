"""ONNX -> IR: Resize (10, 11, 13, 18, 19), Upsample (7, 9), GridSample (16, 20, 22), DeformConv (19, 22).

The IR follows the ONNX specification and, where the spec text and its reference/test data disagree, the
data (fractional output length in align_corners, -0.5 for pytorch_half_pixel at length 1); see
``semantics/ir.py`` for the named fields that carry each such choice.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..semantics.coords import MAX_ELEMENTS, bind_resize, exact, normalize_axes
from ..semantics.errors import BridgeError
from ..semantics.ir import (COORD_MODES, DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, Sampler)
from ..semantics.reference import deformconv_out_shape

RESAMPLING_OPS = ("Resize", "Upsample", "GridSample", "DeformConv")
_VERSIONS = {
    "Resize": (10, 11, 13, 18, 19),
    "Upsample": (7, 9, 10),
    "GridSample": (16, 20, 22),
    "DeformConv": (19, 22),
}
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def since_version(op: str, opset: int) -> int:
    """The version of ``op`` in effect for a model importing ``opset`` of the default domain."""
    found = [v for v in _VERSIONS[op] if v <= opset]
    if not found:
        raise BridgeError(f"{op} does not exist in opset {opset} (first version {_VERSIONS[op][0]})",
                          field="opset")
    return found[-1]


def load(model_or_path):
    """A ModelProto from a path, bytes or a ModelProto; a clear error for anything that is not ONNX."""
    import onnx

    if isinstance(model_or_path, onnx.ModelProto):
        return model_or_path
    try:
        if isinstance(model_or_path, (bytes, bytearray)):
            model = onnx.load_from_string(bytes(model_or_path))
        else:
            model = onnx.load(str(model_or_path))
    except FileNotFoundError:
        raise BridgeError(f"no such file: {model_or_path}") from None
    except IsADirectoryError:
        raise BridgeError(f"{model_or_path} is a directory, not an ONNX model") from None
    except Exception as e:  # protobuf raises DecodeError and friends
        raise BridgeError(f"{model_or_path} is not an ONNX model ({type(e).__name__})") from None
    if not model.graph.node and not model.graph.input:
        raise BridgeError(f"{model_or_path} is not an ONNX model (no graph)")
    return model


class _Graph:
    """Constants and shapes of one graph, for looking up a node's inputs."""

    def __init__(self, model):
        import onnx
        from onnx import numpy_helper, shape_inference

        try:
            inferred = shape_inference.infer_shapes(model, strict_mode=False)
        except Exception:
            inferred = model  # shape inference is a convenience; parsing works without it
        g = inferred.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
        self.consts: dict[str, np.ndarray] = {}
        for init in g.initializer:
            self.consts[init.name] = numpy_helper.to_array(init)
        for node in g.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                for a in node.attribute:
                    if a.name == "value":
                        self.consts[node.output[0]] = numpy_helper.to_array(a.t)
                    elif a.name in ("value_float", "value_int"):
                        self.consts[node.output[0]] = np.array(onnx.helper.get_attribute_value(a))
                    elif a.name in ("value_floats", "value_ints"):
                        self.consts[node.output[0]] = np.array(list(onnx.helper.get_attribute_value(a)))
        self.shapes: dict[str, tuple | None] = {}
        self.dtypes: dict[str, str] = {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            t = vi.type.tensor_type
            if t.HasField("shape"):
                self.shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else None
                                             for d in t.shape.dim)
            if t.elem_type:
                self.dtypes[vi.name] = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name
        for name, arr in self.consts.items():
            self.shapes[name] = tuple(arr.shape)
            self.dtypes[name] = arr.dtype.name
        self.graph = model.graph


class NodeView:
    """What a parser needs of one node, independent of where the node lives: an ONNX NodeProto in a
    model (``from_proto``) or OpenVINO's ONNX-frontend NodeContext (``lowering/openvino.py``)."""

    def __init__(self, op_type: str, name: str, attrs: dict[str, Any], inputs: list[str], consts: dict,
                 shapes: dict, dtypes: dict):
        self.op_type, self.name, self.attrs, self.inputs = op_type, name, attrs, inputs
        self._consts, self._shapes, self._dtypes = consts, shapes, dtypes

    @classmethod
    def from_proto(cls, node, g: "_Graph", name: str) -> "NodeView":
        import onnx

        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        return cls(node.op_type, name, attrs, list(node.input), g.consts, g.shapes, g.dtypes)

    def input(self, i: int) -> str:
        return self.inputs[i] if len(self.inputs) > i else ""

    def const(self, i: int):
        """Input i's constant value, RuntimeValue if computed at run time, None if omitted."""
        name = self.input(i)
        if not name:
            return None
        if name in self._consts:
            return self._consts[name]
        return RuntimeValue(name)

    def shape(self, i: int):
        return self._shapes.get(self.input(i))

    def dtype(self, i: int):
        return self._dtypes.get(self.input(i))


def _str(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _choice(attrs: dict, name: str, default: str, allowed, node_name: str) -> str:
    v = _str(attrs.get(name, default))
    if v not in allowed:
        raise BridgeError(f"unknown value {v!r}; expected one of {', '.join(allowed)}", node_name, name)
    return v


def _as_list(v, name, node_name):
    """A constant as a flat list; empty tensors count as absent (opset 11-12 pass an empty scales)."""
    if v is None or isinstance(v, RuntimeValue):
        return v
    arr = np.asarray(v).reshape(-1)
    if arr.size == 0:
        return None
    return arr.tolist()


def _scales(values, node_name) -> tuple[Fraction, ...]:
    out = []
    for s in values:
        if not np.isfinite(s):
            raise BridgeError(f"scale {s} is not finite", node_name, "scales")
        if s <= 0:
            raise BridgeError(f"scale {s} is not positive", node_name, "scales")
        # Exact value of the float32 the framework receives.
        out.append(exact(np.float32(s)))
    return tuple(out)


def parse_resize(node: NodeView, version: int) -> ResizeIR:
    attrs, name = node.attrs, node.name
    in_shape = node.shape(0)
    if version == 10 or node.op_type == "Upsample":
        return _parse_upsample_like(node, version, in_shape)

    mode = _choice(attrs, "mode", "nearest", ("nearest", "linear", "cubic"), name)
    coord_allowed = tuple(c for c in COORD_MODES if version >= 19 or c != "half_pixel_symmetric")
    coord = _choice(attrs, "coordinate_transformation_mode", "half_pixel", coord_allowed, name)
    nearest = _choice(attrs, "nearest_mode", "round_prefer_floor", NEAREST_MODES, name)
    policy = "stretch"
    antialias = False
    axes_attr = None
    if version >= 18:
        policy = _choice(attrs, "keep_aspect_ratio_policy", "stretch", ("stretch", "not_larger", "not_smaller"),
                         name)
        antialias = bool(attrs.get("antialias", 0))
        axes_attr = attrs.get("axes")
    exclude = int(attrs.get("exclude_outside", 0))
    if exclude not in (0, 1):
        raise BridgeError(f"exclude_outside must be 0 or 1, got {exclude}", name, "exclude_outside")
    cubic_a = exact(np.float32(attrs.get("cubic_coeff_a", -0.75)))
    extrapolation = float(np.float32(attrs.get("extrapolation_value", 0.0)))

    rank = len(in_shape) if in_shape is not None else None
    if rank is None:
        # Rank is needed to place axes; a length of scales/sizes also tells it.
        for i in (2, 3):
            v = _as_list(node.const(i), "", name)
            if isinstance(v, list):
                rank = len(v) if axes_attr is None else None
    if rank is None:
        raise BridgeError("the input rank is unknown (no shape information for X)", name, "X")
    axes = normalize_axes(axes_attr, rank, name) if axes_attr is not None else tuple(range(rank))

    roi = _as_list(node.const(1), "roi", name)
    scales = _as_list(node.const(2), "scales", name)
    sizes = _as_list(node.const(3), "sizes", name)
    if scales is not None and sizes is not None:
        raise BridgeError("both scales and sizes are given; exactly one is allowed", name, "scales")
    if scales is None and sizes is None:
        raise BridgeError("neither scales nor sizes is given", name, "scales")
    if isinstance(scales, list):
        if len(scales) != len(axes):
            raise BridgeError(f"scales has {len(scales)} values, expected {len(axes)}", name, "scales")
        scales = _scales(scales, name)
    if isinstance(sizes, list):
        if len(sizes) != len(axes):
            raise BridgeError(f"sizes has {len(sizes)} values, expected {len(axes)}", name, "sizes")
        if any(s < 0 for s in sizes):
            raise BridgeError(f"sizes {sizes} has a negative length", name, "sizes")
        sizes = tuple(int(s) for s in sizes)
    if coord == "tf_crop_and_resize":
        if roi is None:
            raise BridgeError("tf_crop_and_resize needs roi", name, "roi")
        if isinstance(roi, list):
            if len(roi) != 2 * len(axes):
                raise BridgeError(f"roi has {len(roi)} values, expected {2 * len(axes)}", name, "roi")
            if not all(np.isfinite(roi)):
                raise BridgeError(f"roi {roi} is not finite", name, "roi")
            roi = tuple(exact(np.float32(r)) for r in roi)
    else:
        roi = None  # only tf_crop_and_resize reads it
    sampler = _sampler(mode, nearest, cubic_a, antialias)
    ir = ResizeIR(
        rank=rank, axes=axes, scales=scales, sizes=sizes, roi=roi, coord=coord, sampler=sampler,
        exclude_outside=bool(exclude), extrapolation_value=extrapolation, aspect_policy=policy,
        input_shape=in_shape, dtype=node.dtype(0), origin=f"Resize-{version}",
    )
    _check_static_output(ir, name)
    return ir


def _sampler(mode: str, nearest: str, cubic_a: Fraction, antialias: bool) -> Sampler:
    if mode == "nearest":
        # The spec defines antialias for linear and cubic only.
        return Sampler("nearest", nearest=nearest)
    if mode == "linear":
        return Sampler("linear", antialias=antialias)
    return Sampler("cubic", cubic_a=cubic_a, antialias=antialias)


def _parse_upsample_like(node: NodeView, version: int, in_shape) -> ResizeIR:
    """Upsample-7/9 and Resize-10: asymmetric coordinates, scales only, nearest or linear."""
    attrs, name = node.attrs, node.name
    modes = ("nearest", "linear", "bilinear") if node.op_type == "Upsample" else ("nearest", "linear")
    mode = _choice(attrs, "mode", "nearest", modes, name)
    mode = "linear" if mode == "bilinear" else mode
    if node.op_type == "Upsample" and version < 9:
        scales = attrs.get("scales")
        if scales is None:
            raise BridgeError("Upsample-7 needs the scales attribute", name, "scales")
        scales = list(scales)
    else:
        scales = _as_list(node.const(1), "scales", name)
        if scales is None:
            raise BridgeError("scales is not given", name, "scales")
    rank = len(in_shape) if in_shape is not None else (len(scales) if isinstance(scales, list) else None)
    if rank is None:
        raise BridgeError("the input rank is unknown (no shape information for X)", name, "X")
    if isinstance(scales, list):
        if len(scales) != rank:
            raise BridgeError(f"scales has {len(scales)} values, expected {rank}", name, "scales")
        scales = _scales(scales, name)
    # Nearest picks floor when upsampling and ceil when downsampling ("simple"): what onnxruntime
    # implements and the old Resize-10 conformance data encodes.
    sampler = Sampler("nearest", nearest="simple") if mode == "nearest" else Sampler("linear")
    ir = ResizeIR(rank=rank, axes=tuple(range(rank)), scales=scales, sizes=None, roi=None, coord="asymmetric",
                  sampler=sampler, input_shape=in_shape, dtype=node.dtype(0),
                  origin=f"{node.op_type}-{version}")
    _check_static_output(ir, name)
    return ir


def _check_static_output(ir: ResizeIR, name: str) -> None:
    """Bind where the shape and parameters are static, to reject impossible values now."""
    if ir.input_shape is None or any(d is None for d in ir.input_shape):
        return
    if any(isinstance(v, RuntimeValue) for v in (ir.scales, ir.sizes, ir.roi)):
        return
    try:
        bind_resize(ir, ir.input_shape)
    except BridgeError as e:
        raise e.at(name) from None


def parse_gridsample(node: NodeView, version: int) -> GridSampleIR:
    attrs, name = node.attrs, node.name
    if version < 20:
        mode = _choice(attrs, "mode", "bilinear", ("bilinear", "nearest", "bicubic"), name)
        mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    else:
        mode = _choice(attrs, "mode", "linear", ("linear", "nearest", "cubic"), name)
    padding = _choice(attrs, "padding_mode", "zeros", ("zeros", "border", "reflection"), name)
    ac = int(attrs.get("align_corners", 0))
    if ac not in (0, 1):
        raise BridgeError(f"align_corners must be 0 or 1, got {ac}", name, "align_corners")
    in_shape, grid_shape = node.shape(0), node.shape(1)
    rank = len(in_shape) if in_shape else (len(grid_shape) if grid_shape else None)
    if rank is None:
        raise BridgeError("the input rank is unknown (no shape information for X or grid)", name, "X")
    if rank < 3:
        raise BridgeError(f"X has rank {rank}; GridSample needs N, C and at least one spatial axis", name, "X")
    if version < 20 and rank != 4:
        raise BridgeError(f"GridSample-{version} is defined for 4-D input only, got rank {rank}", name, "X")
    if grid_shape is not None and grid_shape[-1] is not None and grid_shape[-1] != rank - 2:
        raise BridgeError(f"grid's last axis is {grid_shape[-1]}, expected {rank - 2}", name, "grid")
    sampler = (Sampler("nearest", nearest="half_even") if mode == "nearest" else
               Sampler("cubic", cubic_a=Fraction(-3, 4)) if mode == "cubic" else Sampler("linear"))
    if in_shape and grid_shape and all(d is not None for d in in_shape[:2] + grid_shape[:-1]):
        total = in_shape[0] * in_shape[1] * math.prod(grid_shape[1:-1])
        if total > MAX_ELEMENTS:
            raise BridgeError(f"output has {total} elements, more than 2^31", name, "grid")
    return GridSampleIR(spatial_rank=rank - 2, sampler=sampler, padding=padding, align_corners=bool(ac),
                        input_shape=in_shape, grid_shape=grid_shape, dtype=node.dtype(0),
                        origin=f"GridSample-{version}")


def parse_deformconv(node: NodeView, version: int) -> DeformConvIR:
    attrs, name = node.attrs, node.name
    in_shape, w_shape = node.shape(0), node.shape(1)
    rank = len(in_shape) if in_shape else (len(w_shape) if w_shape else None)
    ks = attrs.get("kernel_shape")
    if rank is None and ks is not None:
        rank = len(ks) + 2
    if rank is None:
        raise BridgeError("the input rank is unknown (no shape information for X or W)", name, "X")
    D = rank - 2
    if D < 1:
        raise BridgeError(f"X has rank {rank}; DeformConv needs at least one spatial axis", name, "X")

    def ints(key, default, n):
        v = list(attrs.get(key, default))
        if len(v) != n:
            raise BridgeError(f"{key} has {len(v)} values, expected {n}", name, key)
        return tuple(int(i) for i in v)

    strides = ints("strides", [1] * D, D)
    dil = ints("dilations", [1] * D, D)
    pads = ints("pads", [0] * 2 * D, 2 * D)
    if any(s <= 0 for s in strides):
        raise BridgeError(f"strides {strides} must be positive", name, "strides")
    if any(s <= 0 for s in dil):
        raise BridgeError(f"dilations {dil} must be positive", name, "dilations")
    if any(p < 0 for p in pads):
        raise BridgeError(f"pads {pads} must not be negative", name, "pads")
    kernel = ints("kernel_shape", [], D) if ks is not None else (
        tuple(w_shape[2:]) if w_shape and all(d is not None for d in w_shape[2:]) else None)
    group = int(attrs.get("group", 1))
    og = int(attrs.get("offset_group", 1))
    if group < 1:
        raise BridgeError(f"group must be at least 1, got {group}", name, "group")
    if og < 1:
        raise BridgeError(f"offset_group must be at least 1, got {og}", name, "offset_group")
    if in_shape and in_shape[1] is not None:
        if in_shape[1] % og:
            raise BridgeError(f"{in_shape[1]} input channels are not divisible by offset_group {og}", name,
                              "offset_group")
        if w_shape and w_shape[1] is not None and w_shape[1] * group != in_shape[1]:
            raise BridgeError(f"W has {w_shape[1]} channels per group, X has {in_shape[1]} channels and "
                              f"group={group}", name, "group")
    if in_shape and kernel and all(d is not None for d in in_shape):
        ir_probe = DeformConvIR(D, kernel, strides, pads, dil, group, og, False, False)
        out_sp = deformconv_out_shape(ir_probe, in_shape[2:], kernel)
        if any(o <= 0 for o in out_sp):
            raise BridgeError(f"output spatial shape {out_sp} is empty", name, "pads")
        if w_shape and w_shape[0] is not None and in_shape[0] * w_shape[0] * math.prod(out_sp) > MAX_ELEMENTS:
            raise BridgeError("output has more than 2^31 elements", name, "W")
    return DeformConvIR(
        spatial_rank=D, kernel_shape=kernel, strides=strides, pads=pads, dilations=dil, group=group,
        offset_group=og, has_bias=bool(node.input(3)), has_mask=bool(node.input(4)),
        input_shape=in_shape, weight_shape=w_shape, dtype=node.dtype(0), origin=f"DeformConv-{version}",
    )


_PARSERS = {"Resize": parse_resize, "Upsample": parse_resize, "GridSample": parse_gridsample,
            "DeformConv": parse_deformconv}


def node_name(node, index: int) -> str:
    return node.name or f"{node.op_type}_{index}"


def parse_model(model_or_path) -> list[tuple[str, Any]]:
    """``[(node_name, ir), ...]`` in graph order for every resampling node of the main graph."""
    model = load(model_or_path)
    g = _Graph(model)
    out = []
    for i, node in enumerate(model.graph.node):
        if node.op_type not in _PARSERS or node.domain not in ("", "ai.onnx"):
            continue
        view = NodeView.from_proto(node, g, node_name(node, i))
        out.append((view.name, parse_view(view, g.opset)))
    return out


def parse_view(view: NodeView, opset: int):
    """The IR of one node, whatever it was read from; every refusal names the node."""
    try:
        return _PARSERS[view.op_type](view, since_version(view.op_type, opset))
    except BridgeError as e:
        raise e.at(view.name) from None


__all__ = ["parse_model", "parse_view", "NodeView", "load", "RESAMPLING_OPS"]
