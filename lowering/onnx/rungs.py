"""The ONNX target's three rungs, each judged against the source IR.

Rungs 1 and 2 are judged by what onnxruntime's CPU provider computes for the written node
(``translate.onnxruntime.ort_semantics``), compared with ``semantics.equivalence.diff`` on the static shape;
rung 3 is exact by construction (``decompose.py``). ``ort_gap`` is also the proof's judge of rungs 1-2.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ...semantics.coords import bind_resize
from ...semantics.equivalence import diff, same_taps
from ...semantics.ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, axis_name, has_runtime_params, is_static
from ...semantics.opspec import PerOp
from ...semantics.taps import coarser, float32_reaches_ties, tie_indices
from ...semantics.vocab import ONNX_NEAREST_MODES
from ...translate.dtypes import ONNX as ONNX_DTYPES
from ...translate.onnx import NodeView, parse_view
from ...translate.onnxruntime import ort_output_shape, ort_semantics
from ..passes import Candidate, Refusal
from . import nearest_index
from .decompose import check_decomposable
from .deformconv_decompose import FORM as DEFORM_FORM
from .deformconv_decompose import REASON as DEFORM_REASON
from .deformconv_decompose import check_deformconv
from .gridsample_decompose import FORM as GRID_FORM
from .gridsample_decompose import REASON as GRID_REASON
from .gridsample_decompose import check_gridsample

ORT_RESIZE_TYPES = ONNX_DTYPES["onnxruntime_resize"]  # measured (translate/dtypes.py)
STATIC_ADVICE = "give the input shapes with --input (the tap tables are exact for fixed shapes)"
_COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric",
           "tf_half_pixel_for_nn", "tf_crop_and_resize")


@dataclass
class Node:
    """One resampling node as the rungs see it."""

    name: str
    proto: Any  # onnx NodeProto
    ir: Any
    opset: int
    top_level: bool  # False: inside an If/Loop/Scan body, left as it is
    compute: dict  # the decomposition's dtype policy


def ort_gap(src, written, attrs: dict | None = None):
    """Whether onnxruntime, running a node whose ONNX IR is ``written`` (attributes ``attrs``), computes
    ``src``'s numbers: a Refusal (why not), or the run-time conditions under which it does (() = always)."""
    return ORT_GAP.of(src)(src, written, attrs or {})


def _ort_gap_resize(src: ResizeIR, written: ResizeIR, attrs: dict):
    if src.dtype not in ORT_RESIZE_TYPES:
        return Refusal(f"onnxruntime has no CPU Resize kernel for {src.dtype}", "dtype")
    kind = src.sampler.kind
    fixed = src.integer_rounding == "q22_per_axis"  # onnxruntime's own 8-bit antialias (``ort_semantics``)
    if kind != "nearest" and np.dtype(src.dtype).kind in "iu" and not fixed:
        return Refusal("onnxruntime truncates integer linear/cubic results (no IR field says so)", "dtype")
    if kind == "nearest" and attrs.get("antialias"):
        return Refusal("onnxruntime refuses antialias=1 with mode nearest", "antialias")
    if not _ort_runs(kind, written.rank, _ort_resized_axes(written)):
        if has_runtime_params(written) or not is_static(written.input_shape or (None,)):
            # Not a refusal of onnxruntime's: it runs the node wherever the outer axes keep their length,
            # which nothing known here promises (issue 43: the message claimed a refusal).
            field = "scales" if isinstance(written.scales, RuntimeValue) else "sizes"
            return Refusal(f"onnxruntime runs {kind} resizing at rank {written.rank} only where the outer axes "
                           f"keep their length, and with lengths or {field} known only at run time nothing "
                           f"here promises that; give the shapes with --input (or make {field} an initializer)",
                           "axes")
        return Refusal(f"onnxruntime refuses {kind} resizing of axes {sorted(_ort_resized_axes(written))} "
                       f"at rank {written.rank}", "axes")
    got = ort_semantics(written)
    if not is_static(src.input_shape) or has_runtime_params(src) or has_runtime_params(written):
        return _every_value(src)
    want = bind_resize(src, src.input_shape).out_shape
    if 0 in want or 0 in src.input_shape:
        return Refusal(f"zero-length tensor ({src.input_shape} -> {want}): onnxruntime refuses a scale of 0",
                       "sizes" if src.sizes is not None else "scales")
    if ort_output_shape(written) != want:
        return Refusal(f"onnxruntime's float32 output length gives {ort_output_shape(written)}, "
                       f"the source {want}", "keep_aspect_ratio_policy")
    d = diff(src, got, shapes=src.input_shape)
    if fixed:  # its float32 weights are the convention's own: no tie of another arithmetic to fall on
        return _verdict(d, {})
    # diff lists the ties of both maps (two frameworks, either may round the wrong way); the source is
    # exact, so only the map onnxruntime evaluates in float32 can land on the wrong side of one.
    bound = bind_resize(got, src.input_shape)
    ties = {axis_name(ax.axis, got.rank): t for ax in bound.axes if (t := _fp32_ties(ax, bound, src))}
    return _verdict(d, ties)


def _ort_gap_gridsample(src: GridSampleIR, written: GridSampleIR, attrs: dict):
    if src.spatial_rank not in (2, 3):
        return Refusal("onnxruntime's GridSample runs 4-D and 5-D inputs only (measured, 1.32)", "spatial_rank")
    if src.spatial_rank == 3 and src.sampler.kind == "cubic":
        return Refusal("onnxruntime's GridSample runs cubic on 4-D inputs only (measured, 1.32)", "mode")
    d = diff(src, ort_semantics(written))
    return _verdict(d, d.ties)


def _ort_gap_deformconv(src: DeformConvIR, written: DeformConvIR, attrs: dict):
    if src.spatial_rank != 2 or src.dtype != "float32":
        return Refusal("onnxruntime's DeformConv was measured for 2-D float32 only", "spatial_rank")
    d = diff(src, ort_semantics(written))
    return _verdict(d, d.ties)


def _verdict(d, ties: dict):
    """A Refusal naming what onnxruntime computes otherwise (a field, or a tie its float32 coordinates may
    round the other way), else () (no condition)."""
    if not d.same:
        return Refusal("onnxruntime computes " + "; ".join(map(str, d.fields)), d.fields[0].name)
    if ties:
        return Refusal("onnxruntime's float32 coordinates can fall either side of a rounding tie ("
                       + "; ".join(f"{ax} outputs {idx}" for ax, idx in ties.items()) + ")", "arith")
    return ()


def _fp32_ties(ax, bound, src) -> list[int]:
    """The outputs of ``ax`` onnxruntime's float32 coordinates can put on the wrong side of a rounding boundary:
    the ties within float32's reach, less the exact ones its one division computes exactly (integer-scale
    asymmetric nearest: ``float32_reaches_ties``)."""
    near = tie_indices(ax, bound.sampler, coarser(src.arith, "fp32"), bound.exclude_outside)
    if near and bound.sampler.kind == "nearest" and ax.valid is None and float32_reaches_ties(ax):
        exact = set(tie_indices(ax, bound.sampler, "exact", bound.exclude_outside))
        return [o for o in near if o not in exact]
    return near


def _ort_resized_axes(ir: ResizeIR) -> set:
    """The axes onnxruntime's Resize validation counts as resized: scale not exactly 1; on an unknown length,
    every axis given a size but those whose run-time size is X's own length (``RuntimeValue.same_as_input``)."""
    if isinstance(ir.scales, tuple):
        return {a for a, s in zip(ir.axes, ir.scales) if s != 1}
    shape = ir.input_shape or (None,) * ir.rank
    if isinstance(ir.sizes, tuple) and ir.aspect_policy == "stretch":
        return {a for a, o in zip(ir.axes, ir.sizes) if shape[a] != o}
    if isinstance(ir.sizes, tuple) and is_static(shape):  # one keep-aspect scale for every axis
        out = bind_resize(ir, shape).out_shape
        return set(ir.axes) if out != tuple(shape) else set()
    if isinstance(ir.sizes, RuntimeValue) and ir.aspect_policy == "stretch":  # TorchScript's Concat(Shape[:2], ..)
        return set(ir.axes) - {ir.axes[i] for i in ir.sizes.same_as_input}
    return set(ir.axes)


def _ort_runs(kind: str, rank: int, resized: set) -> bool:
    """Measured (onnxruntime 1.32 CPU, every subset of axes at ranks 1-6): linear resizes any axes at rank 2-3,
    axes within {1, 2} or {2, 3} at rank 4, within {2, 3, 4} at rank 5; cubic the same at ranks 2 and 4 only;
    nearest anything."""
    if kind == "nearest" or not resized:
        return True
    allowed = {2: [set(range(2))], 3: [set(range(3))] if kind == "linear" else [],
               4: [{1, 2}, {2, 3}], 5: [{2, 3, 4}] if kind == "linear" else []}.get(rank, [])
    return any(resized <= a for a in allowed)


def _every_value(src: ResizeIR):
    """Exact on every input shape and run-time value: only where no field onnxruntime replaces (output
    length rule, formula length, length-1 rule, float32 coordinates, copied axes) can change a number."""
    if src.sampler.kind == "nearest" and not _integer_scales_asymmetric(src):
        return Refusal("nearest on a shape not known here: float32 coordinates can fall either side of a "
                       "rounding tie", "input_shape")
    if src.coord in ("tf_crop_and_resize", "tf_half_pixel_for_nn"):
        return Refusal(f"{src.coord} on a shape not known here: onnxruntime copies axes of scale 1 and "
                       "crops in float32", "coordinate_transformation_mode")
    if src.aspect_policy != "stretch":
        return Refusal("onnxruntime rounds the float32 keep-aspect length", "keep_aspect_ratio_policy")
    if isinstance(src.scales, RuntimeValue):
        return Refusal("scales fed at run time: onnxruntime's float32 output length differs for some values",
                       "scales")
    if src.scales is not None:
        if any(s.denominator != 1 for s in src.scales):
            return Refusal("a non-integer scale on a shape not known here: onnxruntime's float32 output "
                           "length and formula length differ from the exact ones on some lengths", "scales")
        if src.coord == "pytorch_half_pixel" and 1 in src.scales:
            return Refusal("pytorch_half_pixel at output length 1 (onnxruntime reads 0)", "length1")
        if src.sampler.kind == "nearest":
            # dst / k in float32 is exact on a tie and no nearer to one than 1/(2k) elsewhere below 2^23: a limit
            # stated with the rung (as OpenVINO's rung 1 states its own), not a condition on values.
            return ()
        return ("every resized input length times its scale is below 2^24 (onnxruntime's float32 "
                "output length)",)
    if isinstance(src.sizes, tuple) and 0 in src.sizes:
        return Refusal("a zero-length output: onnxruntime refuses a scale of 0", "sizes")
    if src.coord == "pytorch_half_pixel" and (isinstance(src.sizes, RuntimeValue) or 1 in src.sizes):
        return Refusal("pytorch_half_pixel at output length 1 (onnxruntime reads 0)", "length1")
    return ()


def _integer_scales_asymmetric(src: ResizeIR) -> bool:
    """Nearest whose float32 coordinates are exact on every shape: asymmetric with constant integer scales."""
    return src.coord == "asymmetric" and isinstance(src.scales, tuple) and \
        all(s.denominator == 1 and s >= 1 for s in src.scales)


def as_is(n: Node):
    """Rung 1: the node unchanged."""
    import onnx

    gap = ort_gap(n.ir, n.ir, {a.name: onnx.helper.get_attribute_value(a) for a in n.proto.attribute})
    limit = (" for every output length below 2^23 (its float32 coordinates dst / scale)"
             if n.ir.kind == "resize" and n.ir.sampler.kind == "nearest" and _integer_scales_asymmetric(n.ir)
             and not is_static(n.ir.input_shape or (None,)) else "")
    return gap if isinstance(gap, Refusal) else \
        Candidate(None, "onnxruntime computes the source IR's numbers" + limit, conditions=gap)


def respell(n: Node):
    """Rung 2: an ONNX Resize spelling of the same numbers (sizes for scales, a scale that is the exact ratio,
    another coordinate mode or nearest mode, antialias off where it cannot act)."""
    respelled = RESPELLED.get_for(n.ir)
    if respelled is None:
        return Refusal(f"no exact respelling of {n.proto.op_type} on onnxruntime is known", "op")
    return respelled(n)


def _respell_resize(n: Node):
    ir = n.ir
    if not n.top_level:
        return Refusal("inside an If/Loop/Scan body: only rung 1 applies there", "graph")
    if n.opset < 11:
        return Refusal(f"respelling needs Resize-11; the model imports opset {n.opset}", "opset")
    if not is_static(ir.input_shape) or has_runtime_params(ir):
        return Refusal("respellings are judged on a static shape with static scales/sizes/roi", "input_shape")
    first = ort_gap(ir, ir)
    if isinstance(first, Refusal) and first.field in ("dtype", "axes", "sizes", "scales"):
        return first  # every spelling runs the same kernel
    tried, want = 0, bind_resize(ir, ir.input_shape)
    for attrs, consts in spellings(ir, want.out_shape, n.opset):
        x = n.proto.input[0]
        names = {k: f"{x}/{k}" for k in consts}  # the constants under names X cannot have
        view = NodeView("Resize", n.name, attrs, [x] + list(names.values()),
                        {names[k]: c for k, c in consts.items()}, {x: ir.input_shape}, {x: ir.dtype})
        try:
            got = parse_view(view, n.opset)
        except Exception:  # a spelling the parser refuses is simply not a candidate
            continue
        tried += 1
        if not _first_taps_differ(want, got) and not isinstance(ort_gap(ir, got, attrs), Refusal):
            text = ", ".join(f"{k}={v}" for k, v in attrs.items()) + "; " + \
                   "; ".join(f"{k}={c.tolist()}" for k, c in consts.items() if c.size)
            return Candidate((attrs, consts), f"Resize spelled {text}: onnxruntime computes the source IR's "
                             "numbers")
    return Refusal(f"none of {tried} Resize spellings computes the source numbers on onnxruntime", "spelling")


def _first_taps_differ(want, got: ResizeIR, n: int = 8) -> bool:
    """A cheap exact screen before the full diff: the first ``n`` outputs of some axis read other taps."""
    try:
        b = bind_resize(ort_semantics(got), got.input_shape)
    except Exception:
        return True
    if b.out_shape != want.out_shape:
        return True
    mine = {ax.axis: ax for ax in b.axes}
    for ax in want.axes:
        other = mine.get(ax.axis)
        if other is not None and not same_taps(dataclasses.replace(ax, out_len=min(n, ax.out_len)), want,
                                                dataclasses.replace(other, out_len=min(n, other.out_len)), b):
            return True
    return False


def spellings(ir: ResizeIR, out_shape, opset: int):
    """(attributes, {"roi", "scales", "sizes"} constants) of Resize spellings, the source's own choices first."""
    rank, shape = ir.rank, ir.input_shape
    empty = np.zeros(0, np.float32)
    sizings = [{"sizes": np.asarray(out_shape, np.int64)}]
    ratios = [np.float32(o / i) if i else np.float32(1) for o, i in zip(out_shape, shape)]
    if all(Fraction(float(r)) * i == o for r, o, i in zip(ratios, out_shape, shape)):  # exact float32 ratios
        sizings.append({"scales": np.asarray(ratios, np.float32)})
    if isinstance(ir.scales, tuple):
        full = np.ones(rank, np.float32)
        full[list(ir.axes)] = [float(s) for s in ir.scales]
        sizings.insert(0, {"scales": full})
    roi = empty
    if ir.coord == "tf_crop_and_resize":
        roi = np.concatenate([np.zeros(rank), np.ones(rank)]).astype(np.float32)
        k = len(ir.axes)
        roi[list(ir.axes)] = [float(r) for r in ir.roi[:k]]
        roi[[rank + a for a in ir.axes]] = [float(r) for r in ir.roi[k:]]
    coords = [ir.coord] + [c for c in _COORDS if c != ir.coord and c != "tf_crop_and_resize"
                           and (c != "half_pixel_symmetric" or opset >= 19)
                           and (c != "tf_half_pixel_for_nn" or opset < 18)]
    s = ir.sampler
    nearests = ([s.nearest] + [m for m in ONNX_NEAREST_MODES if m != s.nearest]) if s.kind == "nearest" else [None]
    for sizing, coord, nearest, antialias in itertools.product(sizings, coords, nearests,
                                                                [1, 0] if s.antialias else [None]):
        attrs = {"mode": s.kind, "coordinate_transformation_mode": coord, "nearest_mode": nearest,
                 "cubic_coeff_a": float(s.cubic_a) if s.kind == "cubic" else None,
                 "exclude_outside": 1 if ir.exclude_outside else None, "antialias": antialias,
                 "extrapolation_value": float(ir.extrapolation_value) if coord == "tf_crop_and_resize" else None}
        yield {k: v for k, v in attrs.items() if v is not None}, \
            {"roi": roi if coord == "tf_crop_and_resize" else empty, "scales": sizing.get("scales", empty),
             "sizes": sizing.get("sizes", np.zeros(0, np.int64))}


def decompose(n: Node):
    """Rung 3: the tap-table decomposition (static shapes, Resize only); where lengths are known only at run time,
    the nearest index form (``nearest_index.py``) instead."""
    if not n.top_level:
        return Refusal("inside an If/Loop/Scan body: only rung 1 applies there", "graph")
    return DECOMPOSABLE.of(n.ir)(n)


def _decompose_gridsample(n: Node):
    work = check_gridsample(n.ir, n.opset, n.compute)
    return Candidate(None, f"{GRID_REASON} ({work})", proof={"form": GRID_FORM})


def _decompose_deformconv(n: Node):
    work, _, _ = check_deformconv(n.ir, n.opset, n.compute)
    return Candidate(None, f"{DEFORM_REASON} ({work})", proof={"form": DEFORM_FORM})


def _decompose_resize(n: Node):
    ir = n.ir
    static = _static_refusal(ir)
    if static is not None:
        index = nearest_index.candidate(ir, n.opset)
        # One rung 3 either way; a node neither takes is told both reasons.
        if isinstance(index, Candidate):
            return index
        # What the user can do, last (the clause a cut message keeps): fixed shapes make the tap tables.
        return Refusal(f"{static.reason}; {index.reason}; {STATIC_ADVICE}", static.field)
    bound, work = check_decomposable(ir, ir.input_shape, n.opset, n.compute)
    return Candidate(None, f"per-axis tap tables from semantics.taps (Gather/Mul/Add, {work})",
                     proof={"shape": list(ir.input_shape), "axes": [ax.axis for ax in bound.axes]})


# Each op's rung 3 on the ONNX target (the decomposition's builders: ``target.DECOMPOSITIONS``) and how onnxruntime
# computes it (rung 1).
DECOMPOSABLE = PerOp("ONNX rung 3", resize=_decompose_resize, gridsample=_decompose_gridsample,
                     deformconv=_decompose_deformconv)
RESPELLED = PerOp("ONNX rung 2", resize=_respell_resize, gridsample=None, deformconv=None)
ORT_GAP = PerOp("onnxruntime's kernel", resize=_ort_gap_resize, gridsample=_ort_gap_gridsample,
                deformconv=_ort_gap_deformconv)


def _static_refusal(ir: ResizeIR) -> Refusal | None:
    """Why the tap tables cannot be built here (a length or parameter known only at run time), or None."""
    if not is_static(ir.input_shape):
        return Refusal(f"input shape {ir.input_shape} is not static: the tap tables need every length",
                       "input_shape")
    for f in ("scales", "sizes", "roi"):
        if has_runtime_params(ir, (f,)):
            return Refusal(f"{f} is fed at run time: the tap tables need its value", f)
    return None


__all__ = ["Node", "ort_gap", "as_is", "respell", "decompose", "spellings", "ORT_RESIZE_TYPES"]
