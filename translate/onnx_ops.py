"""ONNX op -> IR: the parsers of Resize (10, 11, 13, 18, 19), Upsample (7, 9), GridSample (16, 20, 22) and
DeformConv (19, 22), from a ``NodeView`` (translate/onnx.py), whatever the node was read from.

GridSample and DeformConv live in ``onnx_grid_ops``. The IR follows the ONNX specification; where the spec text (as onnxruntime, OpenVINO and PyTorch compute it)
and onnx.reference with its conformance data disagree, ``convention`` picks one ("spec" or "reference"),
and every such choice is a named IR field (see ``semantics/ir.py``).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np

from ..semantics.coords import bind_resize, exact, normalize_axes
from ..semantics.errors import BridgeError
from ..semantics.fixed_point import fixed_point_resize
from ..semantics.ir import COORD_MODES, ResizeIR, RuntimeValue, Sampler, keep_axes
from ..semantics.opspec import BY_ONNX_OP, PerOp
from ..semantics.vocab import ONNX_NEAREST_MODES, ONNX_RESIZE_MODES, ONNX_UPSAMPLE_MODES
from .onnx_attrs import CONVENTIONS, DEFAULT_CONVENTION, attr_text, choice  # noqa: F401 (CONVENTIONS: public here)
from .onnx_grid_ops import parse_deformconv, parse_gridsample

_str, _choice = attr_text, choice  # the Resize parser's short names


def _param(node, i: int):
    """Input i's value; a run-time tensor whose static shape has no elements is as empty as a constant one
    (an empty constant through Cast, which OpenVINO's frontend does not fold, and hands over 0-d: a real 0-d
    parameter is refused in the model first, ``translate.onnx._check_parameter_ranks``)."""
    v = node.const(i)
    shape = node.shape(i)
    if isinstance(v, RuntimeValue) and shape is not None and (0 in shape or shape == ()):
        return np.zeros((0,), np.float32)
    return v


def _as_list(v, name, node_name):
    """A constant as a flat list; empty tensors count as absent (opset 11-12 pass an empty scales), and so do
    0-d ones: OpenVINO's frontend hands an empty constant over as 0-d, and a real scalar is refused in the
    model before any parse (``translate.onnx._check_parameter_ranks``)."""
    if v is None or isinstance(v, RuntimeValue):
        return v
    arr = np.asarray(v)
    if arr.size == 0 or arr.ndim == 0:
        return None
    return arr.reshape(-1).tolist()


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


def parse_resize(node: NodeView, version: int, convention: str = DEFAULT_CONVENTION) -> ResizeIR:
    attrs, name = node.attrs, node.name
    in_shape = node.shape(0)
    if version == 10 or node.op_type == "Upsample":
        return _parse_upsample_like(node, version, in_shape, convention)

    mode = _choice(attrs, "mode", "nearest", ONNX_RESIZE_MODES, name)
    coord_allowed = tuple(c for c in COORD_MODES if version >= 19 or c != "half_pixel_symmetric")
    coord = _choice(attrs, "coordinate_transformation_mode", "half_pixel", coord_allowed, name)
    nearest = _choice(attrs, "nearest_mode", "round_prefer_floor", ONNX_NEAREST_MODES, name)
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
    cubic_a = attrs.get("cubic_coeff_a", -0.75)
    if not isinstance(cubic_a, (int, float)) or not math.isfinite(cubic_a):
        raise BridgeError(f"must be a finite float, got {_str(cubic_a)[:40]!r}", name, "cubic_coeff_a")
    cubic_a = exact(np.float32(cubic_a))
    extrapolation = float(np.float32(attrs.get("extrapolation_value", 0.0)))

    rank = len(in_shape) if in_shape is not None else None
    if rank is None:
        # Rank is needed to place axes; a length of scales/sizes also tells it.
        for i in (2, 3):
            v = _as_list(_param(node, i), "", name)
            if isinstance(v, list):
                rank = len(v) if axes_attr is None else None
    if rank is None:
        raise BridgeError("the input rank is unknown (no shape information for X)", name, "X")
    axes = normalize_axes(axes_attr, rank, name) if axes_attr is not None else tuple(range(rank))
    negative = tuple(a for raw, a in zip(axes_attr, axes) if raw < 0) if axes_attr is not None else ()

    roi = _as_list(_param(node, 1), "roi", name)
    scales = _as_list(_param(node, 2), "scales", name)
    sizes = _as_list(_param(node, 3), "sizes", name)
    if scales is not None and sizes is not None:
        raise BridgeError("both scales and sizes are given; exactly one is allowed", name, "scales")
    if scales is None and sizes is None:
        raise BridgeError("neither scales nor sizes is given", name, "scales")
    if isinstance(scales, list):
        if len(scales) != len(axes):
            raise BridgeError(f"scales has {len(scales)} values, expected {len(axes)}", name, "scales")
        scales = _scales(scales, name)
    origin, read_as_scales = f"Resize-{version}", ()
    if isinstance(sizes, RuntimeValue) and convention == "spec" and policy == "stretch":
        multiples = _own_multiples(node, axes)
        if multiples is not None:
            scales, sizes, read_as_scales = tuple(Fraction(k) for k in multiples), None, axes
            origin += f"; {_multiples_note(multiples, axes)}"
        else:
            axes, sizes = _known_sizes(node, axes, sizes)
    if isinstance(sizes, list):
        if len(sizes) != len(axes):
            raise BridgeError(f"sizes has {len(sizes)} values, expected {len(axes)}", name, "sizes")
        if any(s < 0 for s in sizes):
            raise BridgeError(f"sizes {sizes} has a negative length", name, "sizes")
        sizes = tuple(int(s) for s in sizes)
        for a, s in zip(axes, sizes):
            if s == 0 and (in_shape is None or in_shape[a] != 0):
                raise BridgeError(f"sizes {list(sizes)} asks for a zero-length axis {a} from a non-empty one: a "
                                  f"scale of 0, which the spec and onnxruntime refuse (scales must be > 0)",
                                  name, "sizes")
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
        input_shape=in_shape, dtype=node.dtype(0), origin=origin, scales_from_sizes=read_as_scales,
        given_negative=negative,
    )
    if convention == "spec":
        ir = _spec_convention(ir)
    _check_static_output(ir, name)
    return ir


def _known_sizes(node, axes, sizes):
    """Run-time sizes read in part from the graph (``F.interpolate(size=...)`` with a dynamic batch writes
    Concat(Shape(x)[:2], [h, w])): axes whose size is X's own length at run time are not resized (the spec
    convention copies them); if every other size is a constant, those axes are resized to it."""
    known = node.partial(3)
    if known is None or len(known) != len(axes):
        return axes, sizes
    same = [_own_length(node, k, a) for k, a in zip(known, axes)]
    rest = [(a, k) for a, k, s in zip(axes, known, same) if not s]
    if not all(isinstance(k, int) for _, k in rest):
        # Still fed at run time; the positions that are X's own length are noted (an index form copies them).
        return axes, RuntimeValue(sizes.source, same_as_input=tuple(i for i, s in enumerate(same) if s))
    return tuple(a for a, _ in rest), [k for _, k in rest]


def _own_length(node, known, a: int) -> bool:
    """Whether an entry of a partial value (``NodeView.partial``) is X's own length on axis a."""
    in_shape = node.shape(0) or ()
    return known == ("dim", node.input(0), a) or (isinstance(known, int) and a < len(in_shape)
                                                   and known == in_shape[a])


def _own_multiples(node, axes) -> tuple[int, ...] | None:
    """Per axis, the integer k >= 1 such that run-time sizes is k times X's own length there for EVERY length,
    as the shape subgraph computes it (``F.interpolate(scale_factor=k, recompute_scale_factor=True)`` with
    dynamic H/W exports Shape(X) -> Mul k -> Concat); None unless every entry is one. The spec's scale out/in
    is then exactly k on every axis, and every coordinate mode maps as it does for scales = k: the node is the
    static-scale node. Not for a fraction (floor(1.5 * H) / H is no constant) nor for another tensor's length."""
    known, x = node.partial(3), node.input(0)
    if known is None or len(known) != len(axes):
        return None
    out = []
    for k, a in zip(known, axes):
        if _own_length(node, k, a):
            out.append(1)
        elif isinstance(k, tuple) and k[0] == "multiple" and k[2:] == (x, a):
            out.append(k[1])
        else:
            return None
    return tuple(out) if any(k > 1 for k in out) else None


def _multiples_note(multiples, axes) -> str:
    """Why a run-time sizes is read as static scales, for the record."""
    parts = ", ".join(f"{k} x axis {a}" for k, a in zip(multiples, axes) if k > 1)
    return f"sizes = {parts} of the input's own length for every length (shape subgraph evaluated): static scales"


# The output length of a scale under the spec convention: the float32 product L * s truncated, as onnxruntime
# computes it, and OpenVINO's importer and PyTorch agree (an opset-10 export of size=(37, 53) on 48 x 64 writes the
# scale 0.7708333f: 48 * 0.7708333f is 36.99999904 exactly, 37.0 in float32; all three give 37 rows).
# onnx.reference takes the exact floor (36): the "reference" convention keeps "floor".
SPEC_SIZE_RULE = "floor_fp32"


def _spec_convention(ir: ResizeIR) -> ResizeIR:
    """The spec text as the runtimes compute it: the integer output length in align_corners and
    tf_crop_and_resize, source 0 at
    output length 1, and axes that are not resized (scale exactly 1, no crop) left out of the resize, i.e.
    copied. A scale is known to be 1 from a static scale, or from a static size equal to a static input
    length under the stretch policy. Where a size or an input length is known only at run time the axis
    stays in, marked ``equal_length_identity``: under stretch its scale out/in is 1 exactly when the lengths
    agree, and it is copied then (tf_half_pixel_for_nn would otherwise shift it by half a pixel)."""
    if fixed_point_resize(ir):
        # 8-bit antialias: onnxruntime and PyTorch both run Pillow's fixed-point resampler (``fixed_point``),
        # which copies an axis of unchanged length; onnx.reference rounds the exact sum once.
        ir = dataclasses.replace(ir, integer_rounding="q22_per_axis", equal_length_identity=True)
    # half_pixel_symmetric's own formula is the ratio of the integer to the fractional length (spec text,
    # onnxruntime and the conformance data agree), so only the other modes take the integer length.
    ir = dataclasses.replace(ir, length1="zero",
                             formula_length="fractional" if ir.coord == "half_pixel_symmetric" else "integer")
    if ir.sizes is None:
        ir = dataclasses.replace(ir, size_rule=SPEC_SIZE_RULE)
    n = len(ir.axes)
    if isinstance(ir.scales, RuntimeValue) and ir.sizes is None and ir.coord == "tf_half_pixel_for_nn":
        # Its map moves a scale-1 axis by half a pixel; onnxruntime copies it (measured: run-time scales
        # [1, 1, 2, 1.5], N and C copied) as the static form leaves it out. Other modes map scale 1 to itself.
        return dataclasses.replace(ir, unit_scale_identity=True)
    if isinstance(ir.scales, tuple):
        unit = [s == 1 for s in ir.scales]
    elif ir.sizes is not None and ir.aspect_policy == "stretch":
        ir = _equal_lengths_copied(ir)
        if not isinstance(ir.sizes, tuple) or ir.input_shape is None:
            return ir
        unit = [ir.input_shape[a] is not None and ir.input_shape[a] == s for a, s in zip(ir.axes, ir.sizes)]
    else:
        return ir
    if isinstance(ir.roi, tuple):  # a crop on a unit-scale axis still moves it
        unit = [u and ir.roi[i] == 0 and ir.roi[n + i] == 1 for i, u in enumerate(unit)]
    elif isinstance(ir.roi, RuntimeValue):
        return ir
    keep = [i for i, u in enumerate(unit) if not u]
    return ir if len(keep) == n else keep_axes(ir, keep)


def _equal_lengths_copied(ir: ResizeIR) -> ResizeIR:
    """Sizes (stretch) on an axis whose scale cannot be told here (a run-time size or input length): copied
    at run time when its lengths agree, as onnxruntime does (measured: tf_half_pixel_for_nn, ceil, sizes fed
    [1, 3, 8, 5] on [1, 3, 4, 5]: N, C and W copied). tf_crop_and_resize is left alone: its crop still moves
    a unit-scale axis under this convention."""
    if ir.coord == "tf_crop_and_resize":
        return ir
    shape = ir.input_shape
    runtime = isinstance(ir.sizes, RuntimeValue) or shape is None or any(shape[a] is None for a in ir.axes)
    return dataclasses.replace(ir, equal_length_identity=True) if runtime else ir


def _sampler(mode: str, nearest: str, cubic_a: Fraction, antialias: bool) -> Sampler:
    if mode == "nearest":
        # The spec defines antialias for linear and cubic only.
        return Sampler("nearest", nearest=nearest)
    if mode == "linear":
        return Sampler("linear", antialias=antialias)
    return Sampler("cubic", cubic_a=cubic_a, antialias=antialias)


def _parse_upsample_like(node: NodeView, version: int, in_shape, convention: str) -> ResizeIR:
    """Upsample-7/9 and Resize-10: asymmetric coordinates, scales only, nearest or linear; the output length
    under ``convention`` as Resize-11's (``SPEC_SIZE_RULE``)."""
    attrs, name = node.attrs, node.name
    modes = ONNX_UPSAMPLE_MODES if node.op_type == "Upsample" else ONNX_RESIZE_MODES[:2]
    if node.op_type == "Upsample" and _str(attrs.get("mode", "")) == "bilinear":
        # Upsample-7/9 name "nearest" and "linear" only; onnxruntime and OpenVINO refuse "bilinear" (TensorRT's
        # parser alone reads it as linear), so a model that spells it is not a valid ONNX model.
        raise BridgeError("unknown value 'bilinear' (TensorRT's parser's alias of 'linear', not an ONNX mode: "
                          "onnxruntime and OpenVINO refuse it); expected one of nearest, linear", name, "mode")
    mode = _choice(attrs, "mode", "nearest", tuple(m for m in modes if m != "bilinear"), name)
    if node.op_type == "Upsample" and version < 9:
        scales = attrs.get("scales")
        if scales is None:
            raise BridgeError("Upsample-7 needs the scales attribute", name, "scales")
        scales = list(scales)
    else:
        scales = _as_list(_param(node, 1), "scales", name)
        if scales is None:
            raise BridgeError("scales is not given", name, "scales")
    rank = len(in_shape) if in_shape is not None else (len(scales) if isinstance(scales, list) else None)
    if rank is None:
        raise BridgeError("the input rank is unknown (no shape information for X)", name, "X")
    if isinstance(scales, list):
        if len(scales) != rank:
            raise BridgeError(f"scales has {len(scales)} values, expected {rank}", name, "scales")
        scales = _scales(scales, name)
        if node.op_type == "Upsample" and any(s < 1 for s in scales):
            raise BridgeError(f"Upsample scales must be at least 1, got {[float(s) for s in scales]}", name,
                              "scales")
    # Nearest picks floor when upsampling and ceil when downsampling ("simple"): what onnxruntime
    # implements and the old Resize-10 conformance data encodes.
    sampler = Sampler("nearest", nearest="simple") if mode == "nearest" else Sampler("linear")
    ir = ResizeIR(rank=rank, axes=tuple(range(rank)), scales=scales, sizes=None, roi=None, coord="asymmetric",
                  sampler=sampler, input_shape=in_shape, dtype=node.dtype(0),
                  origin=f"{node.op_type}-{version}", size_rule=SPEC_SIZE_RULE if convention == "spec" else "floor")
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


# Each op's parser (one per IR kind, every ONNX op type of it: Resize and Upsample alike), checked complete at import.
PARSER = PerOp("ONNX parsers", resize=parse_resize, gridsample=parse_gridsample, deformconv=parse_deformconv)
PARSERS = {op: PARSER[s.kind] for op, s in BY_ONNX_OP.items()}  # by ONNX op type
