"""Rung 3 for a linear / cubic Resize whose scales are fed at run time (a graph input, or computed in the graph):
per resized axis the output length, the source coordinate of every output and its taps' weights computed in the
graph from the run-time scale, then the K taps gathered and summed by their weights (``antialias_taps.summed_taps``:
linear's 2 and cubic's 4 tap by tap, antialias' run-time K by one Gather and ``tap_sum``).
No native op takes the node: OpenVINO's Interpolate adds 1e-6 to L*s before flooring and copies an axis that
keeps its length at a scale other than 1 (``interpolate._RUNTIME_CONDITIONS``), so without this form the node
needs the extension, which ties the model to one CPU and one OpenVINO release. The same holds for a static
non-integer scale on an input whose lengths are known only at run time (F.interpolate(x, scale_factor=1.5)
exported with dynamic H / W): no tap table can be built, so the scale enters the same window as a constant, and
its proof runs the window the produced model holds (the scale folded into it) over many lengths at that scale.
Antialias widens the window with the scale: K = 2*ceil(R / min(s, 1)) taps, known at run time, their weights
divided by their sum (``_antialias_offsets``, ``_filter``).

The output length is the node's size rule's (onnxruntime's float32 product, or the exact floor) in int32
(``scale_length``); the source coordinate is the IR's map in
float32, tf_crop_and_resize's inside its crop box (``scale_source``). The weights are ``taps``' own filter pieces
(``cubic_inner`` / ``cubic_outer``) at the taps' distances. Every float op from the scale to the weights is pinned
to f32 (``pinned``): under a bf16 hint only the tap sum runs at the hint's precision, which rounds values only.

Proof by numbers of the window subgraph itself (``grid_verdict``): compiled alone and run for every (L, s) of
``grid`` (scales k/L and their float32 neighbours, the float32 products that round up to an integer, powers of
two, 1 and its neighbours) against the oracle's taps (``window_form.oracle_table``) and output length
(``lengths.output_length``); the probes then run the whole node against the oracle's output.
"""

from __future__ import annotations

import numpy as np

from ...semantics.coords import axis_roi, box_past, crop_inside
from ...semantics.ir import ResizeIR, RuntimeValue
from ...semantics.nearest_index import NoNearestIndex
from ...semantics.taps import cubic_inner, cubic_outer, window_radius
from ...semantics.window_form import window_form
from ..passes import Candidate, Refusal
from .antialias_taps import as_input, summed_taps, tap_layout
from .graph import dims, ops, tag
from .index_ops import tag_of
from ..compiled import resize_inputs
from .interpolate import inexact_spellings
from .nearest_index import _in_length, _lengths
from .pinned import pin_f32, quotient, run_time_minus_one
from .scale_grid import grid_verdict, sizes_grid_verdict, static_scale
from .scale_length import MAX_LEN, MAX_SCALE, RULES as LENGTH_RULES, _f32, _i64, element, out_length, unit_axes
from .scale_source import CROP_MAX_OUT, _Value, crop_outside, minus, source

FORM = "scale_taps"
COORDS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners", "half_pixel_symmetric",
          "tf_crop_and_resize")
_FLOATS = ("float32", "float16", "bfloat16", "float64")  # float64: as float32, as OpenVINO runs it
# Refusals the scale and the sizes window share: (why, field)
_PADS = ("OpenVINO pads have no run-time window form", "pads")
_CROP_RUN_TIME = ("a crop box (roi) fed at run time: whether an output lies outside the input (the extrapolation "
                  "value) is exact arithmetic on its float32 ends, which no float32 coordinate decides", "roi")
_CROP_FRACTIONAL = ("a crop box past [0, 1] read at the fractional output length L*s: its outside outputs are looked "
                    "up per integer length", "formula_length")
REASON = "run-time scale window decomposition: output length, source coordinates and tap weights computed in " \
         "the graph from the run-time scale (integer length, float32 coordinates and weights), the K taps " \
         "gathered and summed by their weights, per axis"
SIZES_REASON = "crop window decomposition: source coordinates inside the crop box and tap weights computed in the " \
    "graph from the run-time input and output lengths (float32 coordinates and weights), the K taps gathered " \
    "and summed by their weights, per axis"
STATIC_REASON = "static scale window decomposition on run-time lengths: output length, source coordinates and " \
    "tap weights computed in the graph from the input's run-time length and the model's scale (integer length, " \
    "float32 coordinates and weights), the K taps gathered and summed by their weights, per axis"


def applies(node) -> bool:
    """A linear / cubic Resize (antialias too) whose scales are known only at run time, or whose static scales
    resize an axis of a length known only at run time (F.interpolate(scale_factor=1.5) exported with dynamic H / W:
    Interpolate's scales mode adds 1e-6 to L*s, and no table can be built) (rung 3 of the Resize ladder asks:
    ``node.ir`` is a ResizeIR)."""
    ir = node.ir
    if ir.sampler.kind not in ("linear", "cubic"):
        return False
    shape = dims(node.inputs[0])
    on_run_time_lengths = shape is None or any(shape[a] is None for a in ir.axes)
    if ir.sizes is not None:
        # tf_crop_and_resize given its output lengths: the same float window from them (its map, a product of
        # the crop box and both lengths, has no integer window: ``antialias_taps``)
        return ir.coord == "tf_crop_and_resize" and (isinstance(ir.sizes, RuntimeValue) or on_run_time_lengths)
    if ir.scales is None:
        return False
    if isinstance(ir.scales, RuntimeValue):
        return True
    # antialias with a static scale: the exact integer window (``antialias_taps``) where it has one
    return on_run_time_lengths and (not ir.sampler.antialias or isinstance(window_form(ir), NoNearestIndex))


def scale_refusal(ir: ResizeIR) -> tuple[str, str] | None:
    """(why, field) where a run-time scale's length and map are not ``ir``'s (this form's and scale_nearest's)."""
    if ir.pads:
        return _PADS
    if (ir.roi is not None or ir.coord == "tf_crop_and_resize") and not crop_inside(ir):
        crop = _crop_refusal(ir)
        if crop is not None:
            return crop
    if ir.size_rule not in LENGTH_RULES:
        return f"size rule {ir.size_rule} has no run-time scale form ({', '.join(LENGTH_RULES)} only)", "size_rule"
    if ir.scale_source != "user":
        return "the formula's scale is out/in, not the given scale", "scale_source"
    if ir.coord in ("pytorch_half_pixel", "align_corners") and ir.formula_length != "integer":
        return f"{ir.coord} with the fractional output length L*s", "formula_length"
    return None


def _crop_refusal(ir: ResizeIR) -> tuple[str, str] | None:
    """(why, field) where tf_crop_and_resize's crop box has no window form here: fed at run time, or past [0, 1]
    at the fractional formula length (``scale_source.crop_outside`` looks its outputs up per integer length)."""
    if ir.coord != "tf_crop_and_resize":
        return f"a roi with {ir.coord}", "roi"
    if any(axis_roi(ir, a) is None for a in ir.axes):
        return _CROP_RUN_TIME
    if ir.sizes is None and ir.formula_length != "integer" and not crop_inside(ir):
        return _CROP_FRACTIONAL
    return None


def refusal(ir: ResizeIR) -> tuple[str, str] | None:
    """(why, field) where this form does not express ``ir``, else None."""
    if ir.coord not in COORDS:
        return f"coordinate mode {ir.coord} has no run-time scale form", "coordinate_transformation_mode"
    if ir.sizes is not None:
        return _sizes_refusal(ir)
    shared = scale_refusal(ir)
    if shared is not None:
        return shared
    if ir.coord == "pytorch_half_pixel" and ir.length1 != "zero":
        return f"pytorch_half_pixel reads {ir.length1} at output length 1", "length1"
    if str(ir.dtype) not in _FLOATS:
        return f"{ir.dtype}: the run-time scale form sums float32 weights", "dtype"
    if ir.sampler.antialias and ir.filter_stretch != "clamped":
        return f"filter stretch {ir.filter_stretch} (OpenVINO's own) has no run-time scale form", "filter_stretch"
    return None


def _sizes_refusal(ir: ResizeIR) -> tuple[str, str] | None:
    """(why, field) where the window from given output lengths (tf_crop_and_resize's only) does not express ``ir``."""
    if ir.coord != "tf_crop_and_resize":
        return f"{ir.coord} given the output lengths takes the integer window (antialias_taps)", "sizes"
    if not crop_inside(ir) and _crop_refusal(ir) is not None:
        return _crop_refusal(ir)
    if ir.aspect_policy != "stretch":
        return f"keep_aspect_ratio_policy {ir.aspect_policy} derives the lengths from a rounded common scale", \
            "keep_aspect_ratio_policy"
    if ir.pads:
        return _PADS
    if str(ir.dtype) not in _FLOATS:
        return f"{ir.dtype}: the window sums float32 weights", "dtype"
    return None


# ----------------------------------------------------------------------------------------------------------
# The window of one axis


def _filter(ir: ResizeIR, d):
    """``taps``' filter at the taps' distances ``d`` (a ``_Value``, already stretched by f under antialias): the
    triangle, or Keys' two pieces; 0 past the support. Both are continuous at every piece's end, so a distance
    rounded across one moves the weight within the error bound, never a tap."""
    o = ops()
    one, two = o.constant(np.float32(1)), o.constant(np.float32(2))
    if ir.sampler.kind == "linear":
        return o.select(o.less(d.v, one), (1 - d).v, o.constant(np.float32(0))).output(0)
    a = float(ir.sampler.cubic_a)
    w = o.select(o.less_equal(d.v, one), cubic_inner(d, a).v, cubic_outer(d, a).v)
    return o.select(o.less(d.v, two), w, o.constant(np.float32(0))).output(0)


def _antialias_offsets(ir: ResizeIR, f, in_len, minus_one):
    """[K] i64: the taps 1-m .. m around the source's left neighbour, m = ceil(R / f) for the stretch f = min(s, 1)
    (``taps.tap_count``), in float32: where its rounding gives one tap fewer, that tap lies at the support's end,
    where the filter is 0 (its weight, within the error bound of 0, is dropped). m is kept in 1 .. R*L + 1: a
    stretch below 1/L gives no output (floor(L*s) = 0), and a scale of 0 no infinite window."""
    o = ops()
    R = window_radius(ir.sampler)
    m = o.ceiling(quotient(_f32(R), f, minus_one))
    most = o.add(o.multiply(o.convert(in_len, "f32"), _f32(R)), _f32(1))
    m = o.convert(o.minimum(o.maximum(m, _f32(1)), most), "i64")
    return o.range(o.subtract(_i64(1), m), o.add(m, _i64(1)), _i64(1), "i64").output(0)


def window_graph(ir: ResizeIR, in_len, s, taps_axis: int = 0, roi=None, out_len=None):
    """(index i64 [K, out], weight f32 [K, out], out i64 scalar, outside) of one axis for an i64 scalar ``in_len``
    and an f32 scalar ``s`` (and the axis' crop box ``roi``), or the given i64 scalar ``out_len`` (s None: a
    tf_crop_and_resize given its sizes, no antialias); [out, K] where ``taps_axis`` is 1. ``outside``: bool [out],
    the outputs that take the extrapolation value, for a crop box past [0, 1] (``scale_source.crop_outside``);
    else None."""
    o = ops()
    out_len = out_length(in_len, s, rule=ir.size_rule) if out_len is None else out_len
    along, across = _i64(taps_axis), _i64(1 - taps_axis)
    # [1, out], unsqueezed before its conversion: an Unsqueeze of floats ran in bf16 under the hint, pinned or not
    xi = o.unsqueeze(o.range(_i64(0), out_len, _i64(1), "i64"), along).output(0)
    minus_one = run_time_minus_one(in_len, out_len)
    src = source(ir, xi, in_len, out_len, s, minus_one, roi)
    left = o.floor(src).output(0)
    linear, antialias = ir.sampler.kind == "linear", ir.sampler.antialias
    if antialias:
        # the stretch min(s, 1); given sizes min(out / in, 1), a float32 quotient (its rounding moves the distances
        # by a relative u: the grid proof decides whether the weights stay within the bound)
        stretch = s if s is not None else quotient(o.convert(out_len, "f32").output(0),
                                                   o.convert(in_len, "f32").output(0), minus_one)
        f = o.minimum(stretch, _f32(1)).output(0)
        taps = o.unsqueeze(_antialias_offsets(ir, f, in_len, minus_one), across).output(0)  # [K, 1] at run time
    else:
        first, K = (0, 2) if linear else (-1, 4)
        taps = o.unsqueeze(o.constant(np.arange(first, first + K, dtype=np.int64)), across).output(0)  # [K, 1]
    pos = o.add(o.convert(left, "i64"), taps).output(0)
    if antialias:
        d = _Value(o.multiply(o.abs(minus(o.convert(pos, "f32").output(0), src, minus_one)), f).output(0),
                   minus_one)
        w = _filter(ir, d)
    elif linear:
        # taps.linear_filter at distances t and 1 - t, each a difference of two tensors (a constant minus a
        # tensor is an op the plugin rewrites, losing its f32 pin)
        # the weight of tap x0 + i is the distance of the other tap, x0 + 1 - i, from the source: 1 - t and t,
        # each |a float of an integer - the source|, the spelling the plugin keeps in f32 (with a Floor or a sum
        # it turned our Multiply by -1 into a new one of its own, which ran in bf16 under the bf16 hint)
        other = o.add(o.convert(left, "i64"), o.unsqueeze(o.constant(np.array([1, 0], np.int64)), across))
        d = o.abs(minus(o.convert(other, "f32").output(0), src, minus_one))
        # a Select (a no-op: d <= 1) ends the f32 chain: the plugin fused the Abs and the Add before it into the
        # tap sum's Multiply, which runs in bf16 under the hint, and the source was read there in bf16
        w = o.select(o.less(d, _f32(2)), d, _f32(0)).output(0)
    else:
        w = _filter(ir, _Value(o.abs(minus(o.convert(pos, "f32").output(0), src, minus_one)).output(0), minus_one))
    last = o.subtract(in_len, _i64(1)).output(0)
    if ir.exclude_outside or antialias:
        # antialias: the weights divided by their sum; exclude_outside: the taps outside the input dropped first
        # (one normalisation over the taps kept equals the oracle's two wherever their sum is not 0)
        if ir.exclude_outside:
            inside = o.logical_and(o.greater_equal(pos, _i64(0)), o.less_equal(pos, last))
            w = o.select(inside, w, o.constant(np.float32(0))).output(0)
        total = o.reduce_sum(w, along, keep_dims=True)
        nonzero = o.not_equal(total, o.constant(np.float32(0)))
        w = o.select(nonzero, quotient(w, o.select(nonzero, total, o.constant(np.float32(1))), minus_one),
                     w).output(0)
    index = o.minimum(o.maximum(pos, _i64(0)), last).output(0)
    pin_f32([index, w, out_len], [in_len, s if s is not None else out_len])
    outside = crop_outside(ir, roi, in_len, out_len, s) if box_past(roi) else None
    return index, w, out_len, outside


def extrapolated(name: str, y, outside, ir: ResizeIR, axis: int):
    """``y`` with the extrapolation value at the outputs ``outside`` along ``axis`` (None: ``y``), as the oracle
    sets them after each axis (``reference.extrapolate``); the Select tagged "crop" for the proof
    (``scale_proof.crop_read``)."""
    if outside is None:
        return y
    o = ops()
    others = [a for a in range(ir.rank) if a != axis]
    where = o.unsqueeze(outside, o.constant(np.array(others, np.int64))) if others else outside
    chosen = o.select(where, o.constant(np.float32(ir.extrapolation_value)), y)
    tag(chosen, tag_of(name, axis, "crop"))
    return chosen.output(0)


# ----------------------------------------------------------------------------------------------------------
# The proof's standalone window


def _standalone(ir: ResizeIR, taps_axis: int, roi=None):
    """The window of one axis alone, its parameters the run-time length and scale (or output length where the IR
    gives sizes)."""
    import openvino as ov

    o = ops()
    if ir.sizes is not None:
        pi, po = o.parameter([], np.int64, name="in"), o.parameter([], np.int64, name="out")
        *taps, _, outside = window_graph(ir, pi.output(0), None, taps_axis, roi, po.output(0))
        return ov.Model(taps + ([outside] if outside is not None else []), [pi, po], "sizes_window")
    pi, ps = o.parameter([], np.int64, name="in"), o.parameter([], np.float32, name="s")
    *taps, _, outside = window_graph(ir, pi.output(0), ps.output(0), taps_axis, roi)
    return ov.Model(taps + ([outside] if outside is not None else []), [pi, ps], "scale_window")


# ----------------------------------------------------------------------------------------------------------
# The rung


def rung(node, not_native=()):
    """Rung 3 for a linear / cubic Resize with run-time scales (``applies``)."""
    ir = node.ir
    refused = refusal(ir)
    if refused is not None:
        return Refusal(f"no run-time scale form: {refused[0]}", refused[1])
    rank = ir.rank
    verdict_of = sizes_grid_verdict if ir.sizes is not None else grid_verdict
    for along, roi in sorted({(tap_layout(rank, a), axis_roi(ir, a)) for a in ir.axes}, key=str):
        verdict = verdict_of(_standalone(ir, along, roi), ir, along, roi=roi)
        if verdict is not None:
            return Refusal(verdict, "rung")
    if ir.sizes is not None:
        return _sizes_rung(node, not_native)
    o = ops()
    x = node.inputs[0]
    fixed_scales = [static_scale(ir, a) for a in ir.axes]
    # the IR's static scales, one per resized axis (the node's own input lists every axis)
    scales = o.constant(np.array(fixed_scales, np.float32)).output(0) if None not in fixed_scales else \
        resize_inputs(ir, node.inputs)[2]
    if scales.get_element_type().get_type_name() != "f32":
        scales = o.convert(scales, "f32").output(0)
    y = x if str(ir.dtype) == "float32" else o.convert(x, "f32").output(0)
    shape_of = o.shape_of(x, "i64").output(0)
    copied = unit_axes(ir, scales)
    for i, axis in enumerate(ir.axes):
        if axis in copied:
            continue
        in_len = _in_length(node, shape_of, axis)
        # A Maximum with 0 ends the scale (a non-positive scale gives length 0): OpenVINO leaves it where it is,
        # and its tag with it (``nearest_index._lengths``)
        s = o.maximum(element(scales, i, len(ir.axes)), o.constant(np.float32(0)))
        tag(s, tag_of(node.name, axis, "scale"))
        pin_f32([s.output(0)], [scales])
        index, weight, _, outside = window_graph(ir, in_len, s.output(0), tap_layout(rank, axis), axis_roi(ir, axis))
        y = extrapolated(node.name, summed_taps(node.name, y, index, weight, rank, axis), outside, ir, axis)
    y = as_input(y, x, ir)
    limit = " (align_corners: out * (in - 1) below 2^31, the integer division's)" if ir.coord == "align_corners" else ""
    reason = (STATIC_REASON if None not in fixed_scales else REASON) + f", exact for lengths up to {MAX_LEN} and scales below {MAX_SCALE}{limit}" + _crop_limit(ir) + \
        inexact_spellings(not_native)
    fixed = {axis: dims(x)[axis] if dims(x) is not None else None for axis in ir.axes}
    return Candidate([y], reason, proof={"form": FORM, "axes": [a for a in ir.axes if a not in copied],
                                         "copied": list(copied), "fixed": fixed})


def _crop_limit(ir: ResizeIR) -> str:
    """The bound of the outside decision (``scale_source.crop_outside``) where a crop box reaches past [0, 1]."""
    if crop_inside(ir) or ir.coord != "tf_crop_and_resize":
        return ""
    return f"; outputs outside a crop box past [0, 1] take the extrapolation value (output lengths below 2^" \
           f"{CROP_MAX_OUT.bit_length() - 1})"


def crop_copied(ir: ResizeIR) -> tuple:
    """The resized axes the window given sizes leaves as they are: the graph's arithmetic makes their size X's own
    length (``ResizeIR.pinned_axes``) and their crop box is the whole axis, (0, 1), where the crop's map is the
    identity (src = o*(L-1)/(L-1))."""
    return tuple(a for a in ir.pinned_axes() if axis_roi(ir, a) == (0, 1))


def _sizes_rung(node, not_native):
    """The window per resized axis from its run-time input and given output lengths (``nearest_index._lengths``),
    tagged "in" / "out" for the proof; the axes ``crop_copied`` left as they are."""
    ir, o = node.ir, ops()
    x = node.inputs[0]
    y = x if str(ir.dtype) == "float32" else o.convert(x, "f32").output(0)
    shape_of = o.shape_of(x, "i64").output(0)
    copied = crop_copied(ir)
    for i, axis in enumerate(ir.axes):
        if axis in copied:
            continue
        in_len, out_len = _lengths(node, shape_of, i, axis)
        index, weight, _, outside = window_graph(ir, in_len, None, tap_layout(ir.rank, axis), axis_roi(ir, axis),
                                                 out_len)
        y = extrapolated(node.name, summed_taps(node.name, y, index, weight, ir.rank, axis), outside, ir, axis)
    fixed = {axis: dims(x)[axis] if dims(x) is not None else None for axis in ir.axes}
    reason = SIZES_REASON + f", exact for lengths up to {MAX_LEN}" + _crop_limit(ir) + inexact_spellings(not_native)
    return Candidate([as_input(y, x, ir)], reason, proof={
        "form": FORM, "axes": [a for a in ir.axes if a not in copied], "copied": list(copied), "fixed": fixed,
        "given": "sizes"})
