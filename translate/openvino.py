"""OpenVINO -> IR: Interpolate (1, 4, 11), GridSample-9, DeformableConvolution (1, 8).

The IR is what OpenVINO 2026.4's CPU plugin *computes* (f32 inference precision), each rule confirmed by
running the op on CPU against the oracle (``tests/translate/test_openvino_fidelity.py``):

Interpolate
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
GridSample-9: padding on taps (``padding_on="taps"``), nearest rounds half to even, cubic a = -3/4; the
unnormalised coordinate is computed in float64 and rounded to float32 once (``arith="fp32_fused"``, measured:
grid float32(-1/3) on length 6 gives 1.5 and reads row 2, where onnxruntime's float32 steps give 1.4999999
and read row 1). DeformableConvolution-8: ``bilinear_interpolation_pad`` true = zero taps (ONNX); false and
DeformableConvolution-1 = ``border="clamp_in_range"``.

Element types (``dtype_reason``): float16 is computed in float32 and rounded once; 8-bit nearest is a gather;
int32 goes through float32; the other rows are beside the function, each measured.

Parameters come from Constants (and what the CPU folds before running: ShapeOf of a static shape, Convert of
a Constant -- ``save_model``'s default fp16 compression stores Interpolate scales that way, rounded to
float16); anything else is a ``RuntimeValue`` naming its producer. ``openvino`` is imported inside functions
only, so this module imports without it.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from typing import Any

import numpy as np

from ..semantics.coords import MAX_ELEMENTS, bind_resize, exact, normalize_axes
from ..semantics.errors import BridgeError
from ..semantics.ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, Sampler
from ..semantics.reference import deformconv_out_shape
from ..semantics.vocab import GRID_PADDINGS, OPENVINO_COORD_MODES, OPENVINO_GRIDSAMPLE_MODES, \
    OPENVINO_INTERPOLATE1_MODES, OPENVINO_INTERPOLATE4_MODES, OPENVINO_INTERPOLATE11_MODES, OPENVINO_NEAREST_MODES, \
    OPENVINO_RESAMPLING_OPS
from .dtypes import OPENVINO as OPENVINO_DTYPES

RESAMPLING_OPS = OPENVINO_RESAMPLING_OPS  # _PARSERS' keys
_VERSIONS = {"Interpolate": (1, 4, 11), "GridSample": (9,), "DeformableConvolution": (1, 8)}

_V4_MODES, _V11_MODES = OPENVINO_INTERPOLATE4_MODES, OPENVINO_INTERPOLATE11_MODES
_COORD_MODES, _NEAREST_MODES = OPENVINO_COORD_MODES, OPENVINO_NEAREST_MODES


# ----------------------------------------------------------------------------------------------------------
# Loading and node access


def load(model_or_path):
    """An ``openvino.Model`` from a Model, or an IR ``.xml`` path (the ``.bin`` next to it)."""
    import openvino as ov

    if isinstance(model_or_path, ov.Model):
        return model_or_path
    if isinstance(model_or_path, (str, os.PathLike)):
        path = os.fspath(model_or_path)
        if not os.path.exists(path):
            raise BridgeError(f"no such file: {path}")
        if os.path.isdir(path):
            raise BridgeError(f"{path} is a directory, not an OpenVINO model")
        try:
            return ov.Core().read_model(path)
        except Exception as e:  # RuntimeError with OpenVINO's multi-line message
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise BridgeError(f"{path} could not be read as an OpenVINO model ({first})") from None
    raise BridgeError(f"expected an openvino.Model or a path to an IR .xml, got {type(model_or_path).__name__}")


def node_name(node) -> str:
    return node.get_friendly_name()


def op_version(node) -> int:
    """The op's version number: ``opset4`` -> 4."""
    vid = node.get_type_info().version_id
    digits = "".join(c for c in vid if c.isdigit())
    if not digits:
        raise BridgeError(f"unknown op version {vid!r}", node_name(node), "version")
    return int(digits)


def _fold(out, depth: int = 0):
    """The value of an output when it is computable before run time -- a Constant, the ShapeOf of a static
    shape, or an op of such values (the CPU plugin folds them at compile time; ``save_model``'s default
    compress_to_fp16 turns a float Constant into Constant(f16) -> Convert) -- else None."""
    import openvino as ov

    src = out.get_node()
    kind = src.get_type_name()
    if kind == "Constant":
        return np.asarray(src.get_data())
    if kind == "ShapeOf":
        ps = src.get_input_partial_shape(0)
        if ps.is_static:
            return np.array(list(ps.to_shape()), dtype=src.get_output_element_type(0).to_dtype())
        return None
    if depth >= 8 or kind in ("Parameter", "Result") or src.get_output_size() != 1 or \
            not src.get_output_partial_shape(0).is_static:
        return None
    args = []
    for j in range(src.get_input_size()):
        v = _fold(src.input_value(j), depth + 1)
        if v is None:
            return None
        args.append(ov.Tensor(np.ascontiguousarray(v)))
    try:
        res = [ov.Tensor(src.get_output_element_type(0), src.get_output_partial_shape(0).to_shape())]
        if not src.evaluate(res, args):
            return None
        return np.array(res[0].data)
    except Exception:
        return None


def _value(node, i: int):
    """Input ``i`` as a numpy array when it is known before run time (see _fold), else a RuntimeValue naming
    its producer, None when the node has no such input."""
    if i >= node.get_input_size():
        return None
    out = node.input_value(i)
    v = _fold(out)
    if v is not None:
        return v
    src = out.get_node()
    name = src.get_friendly_name()
    if src.get_output_size() > 1:
        name += f":{out.get_index()}"
    return RuntimeValue(name)


def _shape(node, i: int) -> tuple[int | None, ...] | None:
    ps = node.get_input_partial_shape(i)
    if ps.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in ps)


def _dtype(node, i: int) -> str | None:
    try:
        return np.dtype(node.get_input_element_type(i).to_dtype()).name
    except Exception:
        return None


def _choice(attrs: dict, name: str, allowed, node: str) -> str:
    v = str(attrs.get(name, "")).lower()
    if v not in allowed:
        raise BridgeError(f"unsupported value {attrs.get(name)!r}; expected one of {', '.join(allowed)}", node,
                          name)
    return v


def _flat(v):
    if v is None or isinstance(v, RuntimeValue):
        return v
    return np.asarray(v).reshape(-1).tolist()


# ----------------------------------------------------------------------------------------------------------
# Interpolate


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
    version = op_version(node)
    if version not in _VERSIONS["Interpolate"]:
        raise BridgeError(f"Interpolate-{version} is not supported (1, 4, 11 are)", name, "version")
    attrs = node.get_attributes()
    in_shape = _shape(node, 0)
    if in_shape is None:
        raise BridgeError("the input rank is unknown (dynamic rank)", name, "X")
    rank = len(in_shape)
    if version == 1:
        return _parse_interpolate1(node, attrs, in_shape, name)

    mode = _choice(attrs, "mode", _V11_MODES if version == 11 else _V4_MODES, name)
    calc = _choice(attrs, "shape_calculation_mode", ("sizes", "scales"), name)
    coord = _choice(attrs, "coordinate_transformation_mode", _COORD_MODES, name)
    nearest = _choice(attrs, "nearest_mode", _NEAREST_MODES, name)
    antialias = bool(attrs.get("antialias", False))
    cube = exact(np.float32(attrs.get("cube_coeff", -0.75)))
    pads = _pads(attrs, rank, name)

    axes_in = 3 if version == 4 else 2
    axes_v = _value(node, axes_in)
    if isinstance(axes_v, RuntimeValue):
        raise BridgeError(f"axes are computed at run time ({axes_v.source}); a Constant is needed", name, "axes")
    axes = normalize_axes(_flat(axes_v), rank, name) if axes_v is not None else tuple(range(rank))
    wrapped = axes_v is not None and mode not in ("bilinear_pillow", "bicubic_pillow") and \
        _is_wrapped(_flat(axes_v), rank)
    if wrapped:
        pads = _wrapped_pads(pads, _flat(axes_v), rank, name)

    if version == 4:
        raw = _value(node, 2 if calc == "scales" else 1)
    else:
        raw = _value(node, 1)
    raw = _flat(raw)
    field_name = calc
    if isinstance(raw, list) and len(raw) != len(axes):
        raise BridgeError(f"{field_name} has {len(raw)} values, expected {len(axes)} (one per axis)", name,
                          field_name)
    scales = sizes = None
    if calc == "scales":
        scales = raw if isinstance(raw, RuntimeValue) else _scales(raw, name)
    else:
        sizes = raw if isinstance(raw, RuntimeValue) else _sizes(raw, name)

    common = dict(rank=rank, axes=axes, scales=scales, sizes=sizes, roi=None, size_rule="floor_eps",
                  formula_length="integer", length1="zero", arith="fp32", input_shape=in_shape,
                  dtype=_dtype(node, 0), origin=f"Interpolate-{version}", pads=pads,
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
    mode = _choice(attrs, "mode", OPENVINO_INTERPOLATE1_MODES, name)
    if mode == "area":
        raise BridgeError("mode 'area' is not converted to Interpolate-4 and does not run on CPU", name, "mode")
    if mode == "linear" and rank > 5:
        raise BridgeError(f"linear Interpolate-1 of rank {rank} is not converted (rank 5 at most)", name,
                          "mode")
    axes = normalize_axes(attrs.get("axes", []), rank, name)
    pads = _wrapped_pads(_pads(attrs, rank, name), [int(a) for a in attrs.get("axes", [])], rank, name)
    raw = _flat(_value(node, 1))
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
                  dtype=_dtype(node, 0), origin="Interpolate-1", pads=pads, equal_length_identity=True)
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


# ----------------------------------------------------------------------------------------------------------
# Element types: what the CPU plugin computes for each (measured; the table and why: translate/dtypes.py)

_FLOATS = OPENVINO_DTYPES["floats"]
_INTERPOLATE_GATHER_EXACT = OPENVINO_DTYPES["interpolate_gather_exact"]
_GRIDSAMPLE_GATHER_EXACT = OPENVINO_DTYPES["gridsample_gather_exact"]


def dtype_reason(op: str, sampler_kind: str, dtype: str | None) -> str | None:
    """None where OpenVINO CPU's ``op`` ("Interpolate" / "GridSample") computes the oracle's numbers for
    ``dtype`` (bit-exact for integers, float tolerance for float16), else why not -- one sentence."""
    dtype = str(dtype)
    if dtype in _FLOATS:
        return None
    exact_gather = _INTERPOLATE_GATHER_EXACT if op == "Interpolate" else _GRIDSAMPLE_GATHER_EXACT
    if sampler_kind == "nearest" and dtype in exact_gather:
        return None
    if op == "Interpolate" and dtype not in ("uint8", "int8", "int32", "int64"):
        return f"OpenVINO's Interpolate does not accept {dtype} input"
    if dtype not in ("uint8", "int8", "int16", "int32", "int64") or (sampler_kind == "nearest" and op != "Interpolate"):
        return f"OpenVINO's CPU {op} is not known to compute {dtype} {sampler_kind} exactly (the CPU runs " \
               f"64-bit types as 32-bit)"
    if dtype in ("int32", "int64") or (op == "GridSample" and dtype == "int16"):
        return f"OpenVINO's CPU {op} computes {dtype} {sampler_kind} through float32 (values above 2^24 " \
               f"lose their low bits) or with its own rounding"
    return f"OpenVINO's CPU {op} rounds {dtype} {sampler_kind} with float32 weights: results at or near " \
           f"an exact half come out one off"


# ----------------------------------------------------------------------------------------------------------
# GridSample-9


def parse_gridsample(node) -> GridSampleIR:
    name = node_name(node)
    attrs = node.get_attributes()
    mode = _choice(attrs, "mode", OPENVINO_GRIDSAMPLE_MODES, name)
    padding = _choice(attrs, "padding_mode", GRID_PADDINGS, name)
    in_shape, grid_shape = _shape(node, 0), _shape(node, 1)
    if in_shape is not None and len(in_shape) != 4:
        raise BridgeError(f"GridSample-9 is defined for 4-D input only, got rank {len(in_shape)}", name, "X")
    if grid_shape is not None and (len(grid_shape) != 4 or grid_shape[-1] not in (None, 2)):
        raise BridgeError(f"grid has shape {grid_shape}, expected [N, H, W, 2]", name, "grid")
    if in_shape and grid_shape and all(d is not None for d in in_shape[:2] + grid_shape[1:3]):
        if in_shape[0] * in_shape[1] * grid_shape[1] * grid_shape[2] > MAX_ELEMENTS:
            raise BridgeError("output has more than 2^31 elements", name, "grid")
    sampler = (Sampler("nearest", nearest="half_even") if mode == "nearest" else
               Sampler("cubic", cubic_a=Fraction(-3, 4)) if mode == "bicubic" else Sampler("linear"))
    return GridSampleIR(spatial_rank=2, sampler=sampler, padding=padding,
                        align_corners=bool(attrs.get("align_corners", False)), padding_on="taps",
                        arith="fp32_fused", input_shape=in_shape, grid_shape=grid_shape, dtype=_dtype(node, 0),
                        origin="GridSample-9")


# ----------------------------------------------------------------------------------------------------------
# DeformableConvolution-1/8


def parse_deformconv(node) -> DeformConvIR:
    name = node_name(node)
    version = op_version(node)
    if version not in _VERSIONS["DeformableConvolution"]:
        raise BridgeError(f"DeformableConvolution-{version} is not supported (1, 8 are)", name, "version")
    attrs = node.get_attributes()
    in_shape, w_shape = _shape(node, 0), _shape(node, 2)
    rank = len(in_shape) if in_shape is not None else (len(w_shape) if w_shape is not None else None)
    if rank is None:
        raise BridgeError("the input rank is unknown (dynamic rank of data and filters)", name, "X")
    if rank != 4:
        raise BridgeError(f"DeformableConvolution is 2-D (rank 4), got rank {rank}", name, "X")
    D = rank - 2
    auto_pad = str(attrs.get("auto_pad", "explicit")).lower()
    if auto_pad not in ("explicit", "notset", "valid", "same_upper", "same_lower"):
        raise BridgeError(f"unsupported value {auto_pad!r}", name, "auto_pad")
    if auto_pad in ("same_upper", "same_lower") and (in_shape is None or any(d is None for d in in_shape[2:])):
        raise BridgeError(f"auto_pad {auto_pad} needs static spatial input dimensions", name, "auto_pad")

    def ints(key):
        v = tuple(int(i) for i in attrs.get(key, []))
        if len(v) != D:
            raise BridgeError(f"{key} has {len(v)} values, expected {D}", name, key)
        return v

    strides, dil = ints("strides"), ints("dilations")
    if any(s <= 0 for s in strides):
        raise BridgeError(f"strides {strides} must be positive", name, "strides")
    if any(s <= 0 for s in dil):
        raise BridgeError(f"dilations {dil} must be positive", name, "dilations")
    # For auto_pad, OpenVINO's shape inference has already written the resolved pads into the attributes.
    pads = (0,) * 2 * D if auto_pad == "valid" else ints("pads_begin") + ints("pads_end")
    if any(p < 0 for p in pads):
        raise BridgeError(f"pads {pads} must not be negative", name, "pads_begin")
    group, dg = int(attrs.get("group", 1)), int(attrs.get("deformable_group", 1))
    if group < 1:
        raise BridgeError(f"group must be at least 1, got {group}", name, "group")
    if dg < 1:
        raise BridgeError(f"deformable_group must be at least 1, got {dg}", name, "deformable_group")
    kernel = tuple(w_shape[2:]) if w_shape is not None and all(d is not None for d in w_shape[2:]) else None
    if in_shape is not None and in_shape[1] is not None:
        if in_shape[1] % dg:
            raise BridgeError(f"{in_shape[1]} input channels are not divisible by deformable_group {dg}", name,
                              "deformable_group")
        if w_shape is not None and w_shape[1] is not None and w_shape[1] * group != in_shape[1]:
            raise BridgeError(f"filters have {w_shape[1]} channels per group, data has {in_shape[1]} "
                              f"channels and group={group}", name, "group")
    if in_shape is not None and kernel and all(d is not None for d in in_shape):
        probe = DeformConvIR(D, kernel, strides, pads, dil, group, dg, False, False)
        out_sp = deformconv_out_shape(probe, in_shape[2:], kernel)
        if any(o <= 0 for o in out_sp):
            raise BridgeError(f"output spatial shape {out_sp} is empty", name, "pads_begin")
        if w_shape[0] is not None and in_shape[0] * w_shape[0] * math.prod(out_sp) > MAX_ELEMENTS:
            raise BridgeError("output has more than 2^31 elements", name, "filters")
    has_mask = version == 8 and node.get_input_size() > 3
    bip = bool(attrs.get("bilinear_interpolation_pad", False)) if version == 8 else False
    return DeformConvIR(spatial_rank=D, kernel_shape=kernel, strides=strides, pads=pads, dilations=dil,
                        group=group, offset_group=dg, has_bias=False, has_mask=has_mask,
                        border="zero_taps" if bip else "clamp_in_range", input_shape=in_shape,
                        weight_shape=w_shape, dtype=_dtype(node, 0), origin=f"DeformableConvolution-{version}")


# ----------------------------------------------------------------------------------------------------------

_PARSERS = {"Interpolate": parse_interpolate, "GridSample": parse_gridsample,
            "DeformableConvolution": parse_deformconv}


def is_resampling(op) -> bool:
    """A resampling op (``RESAMPLING_OPS``, which ``parse_node`` reads): the one test walks over a model use."""
    return op.get_type_name() in RESAMPLING_OPS


def parse_node(node) -> Any:
    """The IR of one OpenVINO op node (Interpolate-1/4/11, GridSample-9, DeformableConvolution-1/8)."""
    kind = node.get_type_name()
    if kind not in _PARSERS:
        raise BridgeError(f"{kind} is not a resampling op ({', '.join(RESAMPLING_OPS)} are)",
                          node_name(node), "type")
    try:
        return _PARSERS[kind](node)
    except BridgeError as e:
        raise e.at(node_name(node)) from None


def parse_model(model_or_path) -> list[tuple[str, Any]]:
    """``[(friendly_name, ir), ...]`` in topological order for every resampling op of the model."""
    model = load(model_or_path)
    return [(node_name(op), parse_node(op)) for op in model.get_ordered_ops() if is_resampling(op)]


__all__ = ["parse_model", "parse_node", "is_resampling", "load", "RESAMPLING_OPS"]
