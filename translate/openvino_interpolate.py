"""OpenVINO Interpolate (1, 4, 11) -> ResizeIR: what OpenVINO 2026.4's CPU plugin computes (f32 inference
precision), each rule confirmed by running the op on CPU against the oracle
(``tests/translate/test_openvino_fidelity.py``):

  * SCALES mode: output length float32(L) * (s + 1e-6f) truncated (``size_rule="floor_eps"``), the given
    scale enters the coordinate formula; SIZES mode: out/in. Lengths and scales are of the padded input.
  * an axis whose output length equals its input length is copied (``equal_length_identity``);
  * align_corners uses the integer output length (``formula_length="integer"``); pytorch_half_pixel at
    output length 1 reads coordinate 0 (``length1="zero"``);
  * coordinates are float32, rounded at every step, so a coordinate within float32 reach of a rounding
    boundary goes either way (``arith="fp32"``: diff reports those indices as ties);
  * pads_begin/pads_end zero-pad every axis first (``pads``) -- but where the common transformation
    WrapInterpolateIntoTransposes moves the axes to the end (at most rank-2 explicit axes, one of them 0 or
    1) the pads are not permuted with them, so they land on other axes; ``pads`` says where they land;
  * NEAREST: all five rounding rules, ``simple`` per axis (ceil when that axis down-samples, else floor);
  * LINEAR_ONNX: 2 taps, edge clamp, ``antialias`` ignored; CUBIC: 4 taps, edge clamp (exclude_outside
    false), ``antialias`` ignored, a = cube_coeff;
  * LINEAR below rank 5 runs as LINEAR_ONNX (the CPU node remaps it; antialias dropped). Rank 5 (CPU node):
    triangle over in-range taps, renormalised (exclude_outside), under antialias stretched by each axis's
    own scale even above 1 (``filter_stretch="unclamped"``); rank 6+ (core reference fallback): the same, but
    stretched only when some axis down-samples (``"any_down"``);
  * BILINEAR_PILLOW / BICUBIC_PILLOW (v11): antialias + exclude_outside + half_pixel with the out/in ratio
    whatever the coordinate mode and the scales say; bicubic_pillow's coefficient is fixed to -0.5 on CPU;
  * Interpolate-1 as ConvertInterpolate1ToInterpolate4 rewrites it: SIZES, nearest ``simple``, cubic a=-0.75,
    asymmetric coordinates (align_corners when asked; half_pixel for linear without pads unless a 4-D input
    is resized on axes {2, 3}); linear below rank 5 as LINEAR_ONNX, rank 5 as LINEAR.
  Refused (BridgeError, field ``axes``) because the CPU computes garbage or crashes there: CUBIC below rank 5
  changing an axis other than the last two without the transposition above; pillow modes on axes other than
  the last two (NHWC [1, 2] without pads is fine).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..semantics.coords import bind_resize, exact, normalize_axes
from ..semantics.errors import BridgeError
from ..semantics.ir import ResizeIR, RuntimeValue, Sampler
from ..semantics.vocab import OPENVINO_COORD_MODES, OPENVINO_INTERPOLATE1_MODES, OPENVINO_INTERPOLATE4_MODES, \
    OPENVINO_INTERPOLATE11_MODES, OPENVINO_NEAREST_MODES
from .openvino_nodes import choice, flat, input_dtype, input_shape, input_value, node_name, supported_version

_VERSIONS = (1, 4, 11)
_V4_MODES, _V11_MODES = OPENVINO_INTERPOLATE4_MODES, OPENVINO_INTERPOLATE11_MODES
_COORD_MODES, _NEAREST_MODES = OPENVINO_COORD_MODES, OPENVINO_NEAREST_MODES


def _pads(attrs: dict, rank: int, name: str) -> tuple[int, ...]:
    """pads_begin + pads_end, zero-filled to the rank; () when all zero."""
    out = []
    for key in ("pads_begin", "pads_end"):
        v = [int(p) for p in attrs.get(key, []) or []]
        if len(v) > rank:
            raise BridgeError(f"{key} has {len(v)} values for rank {rank}", name, key)
        if any(p < 0 for p in v):
            raise BridgeError(f"{key} {v} must not be negative (cropping is not supported)", name, key)
        out += v + [0] * (rank - len(v))
    return tuple(out) if any(out) else ()


def _scales(values, name: str) -> tuple[Fraction, ...]:
    out = []
    for s in values:
        s = np.float32(s)
        if not np.isfinite(s) or s <= 0:
            raise BridgeError(f"scale {float(s)} is not a positive finite number", name, "scales")
        out.append(exact(s))
    return tuple(out)


def _sizes(values, name: str) -> tuple[int, ...]:
    sizes = tuple(int(s) for s in values)
    if any(s < 0 for s in sizes):
        raise BridgeError(f"sizes {list(sizes)} has a negative length", name, "sizes")
    return sizes


def parse_interpolate(node) -> ResizeIR:
    name = node_name(node)
    version = supported_version(node, _VERSIONS)
    attrs = node.get_attributes()
    in_shape = input_shape(node, 0)
    if in_shape is None:
        raise BridgeError("the input rank is unknown (dynamic rank)", name, "X")
    rank = len(in_shape)
    if version == 1:
        return _parse_interpolate1(node, attrs, in_shape, name)

    mode = choice(attrs, "mode", _V11_MODES if version == 11 else _V4_MODES, name)
    calc = choice(attrs, "shape_calculation_mode", ("sizes", "scales"), name)
    coord = choice(attrs, "coordinate_transformation_mode", _COORD_MODES, name)
    nearest = choice(attrs, "nearest_mode", _NEAREST_MODES, name)
    antialias = bool(attrs.get("antialias", False))
    cube = exact(np.float32(attrs.get("cube_coeff", -0.75)))
    pads = _pads(attrs, rank, name)

    axes_in = 3 if version == 4 else 2
    axes_v = input_value(node, axes_in)
    if isinstance(axes_v, RuntimeValue):
        raise BridgeError(f"axes are computed at run time ({axes_v.source}); a Constant is needed", name, "axes")
    axes = normalize_axes(flat(axes_v), rank, name) if axes_v is not None else tuple(range(rank))
    wrapped = axes_v is not None and mode not in ("bilinear_pillow", "bicubic_pillow") and \
        _is_wrapped(flat(axes_v), rank)
    if wrapped:
        pads = _wrapped_pads(pads, flat(axes_v), rank, name)

    if version == 4:
        raw = input_value(node, 2 if calc == "scales" else 1)
    else:
        raw = input_value(node, 1)
    raw = flat(raw)
    field_name = calc
    if isinstance(raw, list) and len(raw) != len(axes):
        raise BridgeError(f"{field_name} has {len(raw)} values, expected {len(axes)} (one per axis)", name,
                          field_name)
    scales = sizes = None
    size_rule = "floor_eps"
    multiples = _own_multiples(node, axes) if version == 11 and calc == "sizes" and not any(pads) else None
    if multiples is not None:
        # k x the input's own lengths, in integers: output k*L at every length, its map the ratio out/in = k
        scales, size_rule = tuple(Fraction(k) for k in multiples), "floor"
    elif calc == "scales":
        scales = raw if isinstance(raw, RuntimeValue) else _scales(raw, name)
    else:
        sizes = raw if isinstance(raw, RuntimeValue) else _sizes(raw, name)

    common = dict(rank=rank, axes=axes, scales=scales, sizes=sizes, roi=None, size_rule=size_rule,
                  formula_length="integer", length1="zero", arith="fp32", input_shape=in_shape,
                  dtype=input_dtype(node, 0), origin=f"Interpolate-{version}", pads=pads,
                  equal_length_identity=True)
    if mode == "nearest":
        ir = ResizeIR(coord=coord, sampler=Sampler("nearest", nearest=nearest), **common)
    elif mode == "linear_onnx" or (mode == "linear" and rank < 5):
        # CPU: rank < 5 LINEAR is remapped to LINEAR_ONNX in the node constructor; LINEAR_ONNX has no
        # antialias code path (measured: output with antialias equals the one without).
        ir = ResizeIR(coord=coord, sampler=Sampler("linear"), **common)
    elif mode == "linear":
        ir = ResizeIR(coord=coord, sampler=Sampler("linear", antialias=antialias), exclude_outside=True,
                      filter_stretch=_linear_stretch(rank), **common)
    elif mode == "cubic":
        ir = ResizeIR(coord=coord, sampler=Sampler("cubic", cubic_a=cube), **common)
        if rank <= 4 and not wrapped:
            _check_cpu_cubic_axes(ir, name)
    else:
        if len(axes) != 2:
            raise BridgeError(f"{mode} resizes exactly 2 axes, got {len(axes)}", name, "axes")
        if set(axes) != {rank - 2, rank - 1} and not (rank == 4 and axes == (1, 2) and not pads):
            # Measured on CPU: axes [0,1]/[1,0]/[0,2] of rank 3, [2,1]/[1,3]/[3,1]/[0,1] of rank 4 and [1,2]
            # with pads give wrong numbers, NaN or 1e37 and sometimes corrupt the heap; the last two axes
            # (either order, any pads) and NHWC [1,2] without pads are right.
            raise BridgeError(f"{mode} on axes {list(axes)}: OpenVINO's CPU plugin computes it correctly only on "
                              f"the last two axes (or axes [1, 2] of a 4-D input without pads)", name, "axes")
        # Pillow: coordinate mode and antialias ignored; always half_pixel with out/in, antialias,
        # exclude_outside. bicubic_pillow: the CPU plugin fixes a = -0.5 whatever cube_coeff says.
        sampler = (Sampler("linear", antialias=True) if mode == "bilinear_pillow" else
                   Sampler("cubic", cubic_a=Fraction(-1, 2), antialias=True))
        ir = ResizeIR(coord="half_pixel", sampler=sampler, exclude_outside=True, scale_source="ratio",
                      **common)
    _check_static_output(ir, name)
    if wrapped:
        _check_wrapped_empty(ir, name, calc)
    return ir


def _own_multiples(node, axes: tuple) -> tuple[int, ...] | None:
    """k per listed axis where an Interpolate-11's sizes are Multiply(Gather(ShapeOf(X), axes), k) of its own data
    input X with integer k >= 1 (how ``lowering.openvino.interpolate`` feeds a dynamic length: OpenVINO's scales
    mode would add 1e-6 to k), else None."""
    prod = node.input_value(1).get_node()
    if prod.get_type_name() != "Multiply":
        return None
    for i in (0, 1):
        gather, k = prod.input_value(i).get_node(), input_value(prod, 1 - i)
        if gather.get_type_name() != "Gather" or k is None or isinstance(k, RuntimeValue):
            continue
        shape, index, along = gather.input_value(0).get_node(), *(input_value(gather, j) for j in (1, 2))
        if shape.get_type_name() != "ShapeOf" or shape.input_value(0) != node.input_value(0) or \
                isinstance(index, RuntimeValue) or isinstance(along, RuntimeValue) or index is None or \
                flat(along) != [0] or flat(index) != list(axes):
            continue
        ks = np.asarray(k).reshape(-1)
        ks = np.repeat(ks, len(axes)) if ks.size == 1 else ks
        if ks.size == len(axes) and np.issubdtype(ks.dtype, np.integer) and (ks >= 1).all():
            return tuple(int(v) for v in ks)
    return None


def _is_wrapped(raw_axes: list, rank: int) -> bool:
    """Whether WrapInterpolateIntoTransposes moves this Interpolate's axes to the end (see _wrapped_pads)."""
    return rank >= 3 and len(raw_axes) <= rank - 2 and any(a in (0, 1) for a in raw_axes)


def _wrapped_pads(pads: tuple[int, ...], raw_axes: list, rank: int, name: str) -> tuple[int, ...]:
    """The pads the CPU actually applies. WrapInterpolateIntoTransposes (common transformations) rewrites an
    Interpolate-4 whose explicit axes number at most rank-2 and include axis 0 or 1 into Transpose (other axes
    first, then ``axes``) -> Interpolate on the trailing axes -> Transpose back, and keeps pads_begin/pads_end
    as they were, so pad k lands on original axis perm[k]. Measured: [2,3,7] axes [0], pads (0,0,2)/(0,0,1)
    -> output (5,3,7) where the node's own shape inference says (2,3,10); [2,3,4,7] axes [2,1] -> (2,4,6,7)."""
    if not pads or not _is_wrapped(raw_axes, rank):
        return pads
    if any(a < 0 for a in raw_axes):
        raise BridgeError(f"negative axes {raw_axes} with pads: the CPU's transposition of this Interpolate is "
                          f"not defined for them", name, "axes")
    perm = [a for a in range(rank) if a not in raw_axes] + [int(a) for a in raw_axes]
    out = [0] * (2 * rank)
    for k, ax in enumerate(perm):
        out[ax], out[rank + ax] = pads[k], pads[rank + k]
    return tuple(out) if any(out) else ()


def _linear_stretch(rank: int) -> str:
    """LINEAR's antialias stretch. Rank 5 runs in the CPU node (buildTblLinear: a = antialias ? scale : 1 on
    every axis, measured: sizes 4->9, 5->7 both up-sampling differ from ONNX by 1.26, equal to "unclamped"
    to 1e-7); rank >= 6 falls back to the core reference (a = scale only when some axis down-samples,
    measured equal to "any_down" with the same data)."""
    return "unclamped" if rank == 5 else "any_down"


def _parse_interpolate1(node, attrs, in_shape, name) -> ResizeIR:
    """Interpolate-1, as ConvertInterpolate1ToInterpolate4 rewrites it before the CPU plugin sees it."""
    rank = len(in_shape)
    mode = choice(attrs, "mode", OPENVINO_INTERPOLATE1_MODES, name)
    if mode == "area":
        raise BridgeError("mode 'area' is not converted to Interpolate-4 and does not run on CPU", name, "mode")
    if mode == "linear" and rank > 5:
        raise BridgeError(f"linear Interpolate-1 of rank {rank} is not converted (rank 5 at most)", name,
                          "mode")
    axes = normalize_axes(attrs.get("axes", []), rank, name)
    pads = _wrapped_pads(_pads(attrs, rank, name), [int(a) for a in attrs.get("axes", [])], rank, name)
    raw = flat(input_value(node, 1))
    if isinstance(raw, list):
        if len(raw) != len(axes):
            raise BridgeError(f"the target shape has {len(raw)} values, expected {len(axes)}", name, "sizes")
        sizes = _sizes(raw, name)
    else:
        sizes = raw
    linear = mode in ("linear", "linear_onnx")
    if attrs.get("align_corners", False):
        coord = "align_corners"
    elif linear and not pads and not (rank == 4 and set(axes) == {2, 3}):
        coord = "half_pixel"
    else:
        coord = "asymmetric"
    common = dict(rank=rank, axes=axes, scales=None, sizes=sizes, roi=None, coord=coord,
                  formula_length="integer", length1="zero", arith="fp32", input_shape=in_shape,
                  dtype=input_dtype(node, 0), origin="Interpolate-1", pads=pads, equal_length_identity=True)
    if mode == "nearest":
        ir = ResizeIR(sampler=Sampler("nearest", nearest="simple"), **common)
    elif mode == "cubic":
        ir = ResizeIR(sampler=Sampler("cubic", cubic_a=Fraction(-3, 4)), **common)
        if rank <= 4 and not _is_wrapped([int(a) for a in attrs.get("axes", [])], rank):
            _check_cpu_cubic_axes(ir, name)
    elif mode == "linear" and rank == 5:
        ir = ResizeIR(sampler=Sampler("linear", antialias=bool(attrs.get("antialias", False))),
                      exclude_outside=True, filter_stretch=_linear_stretch(rank), **common)
    else:
        ir = ResizeIR(sampler=Sampler("linear"), **common)
    _check_static_output(ir, name)
    if _is_wrapped([int(a) for a in attrs.get("axes", [])], rank):
        _check_wrapped_empty(ir, name, "sizes")
    return ir


def _check_cpu_cubic_axes(ir: ResizeIR, name: str) -> None:
    """The CPU's CUBIC kernel (ranks 1-4; rank 5 runs the core reference) tabulates only the last two axes.
    Measured: a length change on any other axis either fails to compile ("only supports resize on spatial
    dimensions") or reads out of bounds -- rank 3 [2,3,5] -> [3,5,8] and rank 4 C 3->5 with all axes listed
    return values from 1e12 to NaN that change from run to run. No IR describes that, so refuse."""
    if ir.input_shape is None or any(d is None for d in ir.input_shape):
        return
    if any(isinstance(v, RuntimeValue) for v in (ir.scales, ir.sizes)):
        return
    bound = bind_resize(ir, ir.input_shape)
    pads = ir.pads or (0,) * (2 * ir.rank)
    for ax in range(ir.rank - 2):
        if bound.out_shape[ax] != ir.input_shape[ax] + pads[ax] + pads[ir.rank + ax]:
            raise BridgeError(f"cubic changes the length of axis {ax} ({ir.input_shape[ax]} -> "
                              f"{bound.out_shape[ax]}); OpenVINO's CPU cubic resamples only the last two axes "
                              f"and computes out-of-bounds values or refuses otherwise", name, "axes")


def _check_wrapped_empty(ir: ResizeIR, name: str, field_name: str) -> None:
    """An output length 0 on an Interpolate that the CPU wraps in Transposes comes back non-empty and
    uninitialised. Measured: [1,1,1] axes [0] scale 0.45 -> shape (1,1,1) holding 6.8e-18 (the op says
    (0,1,1)); [1,1,5,2,3] axes [4,1,0] -> (1,1,5,2,1). Unwrapped ops return the empty tensor."""
    if ir.input_shape is None or any(d is None for d in ir.input_shape):
        return
    if any(isinstance(v, RuntimeValue) for v in (ir.scales, ir.sizes)):
        return
    out = bind_resize(ir, ir.input_shape).out_shape
    if 0 in out:
        raise BridgeError(f"output shape {out} is empty; OpenVINO's CPU plugin returns uninitialised values of "
                          f"another shape for it (axes moved by WrapInterpolateIntoTransposes)", name, field_name)


def _check_static_output(ir: ResizeIR, name: str) -> None:
    """Bind where the shape and parameters are static, to reject impossible values now."""
    if ir.input_shape is None or any(d is None for d in ir.input_shape):
        return
    if any(isinstance(v, RuntimeValue) for v in (ir.scales, ir.sizes)):
        return
    try:
        bind_resize(ir, ir.input_shape)
    except BridgeError as e:
        raise e.at(name) from None
