"""Rung 3 for a linear / cubic Resize whose scales are fed at run time (a graph input, or computed in the graph):
per resized axis the output length, the source coordinate of every output and its taps' weights computed in the
graph from the run-time scale, then one Gather of the K taps and their weighted sum (``antialias_taps.tap_sum``).
No native op takes the node: OpenVINO's Interpolate adds 1e-6 to L*s before flooring and copies an axis that
keeps its length at a scale other than 1 (``interpolate._RUNTIME_CONDITIONS``), so without this form the node
needs the extension, which ties the model to one CPU and one OpenVINO release. The same holds for a static
non-integer scale on an input whose lengths are known only at run time (F.interpolate(x, scale_factor=1.5)
exported with dynamic H / W): no tap table can be built, so the scale enters the same window as a constant, and
its proof runs the window the produced model holds (the scale folded into it) over many lengths at that scale.
Antialias widens the window with the scale: K = 2*ceil(R / min(s, 1)) taps, known at run time, their weights
divided by their sum (``_antialias_offsets``, ``_filter``).

The output length floor(L*s) is the exact floor of the product of an integer and a float32 (``size_rule`` floor:
10 * 0.7f is 6.99999988, length 6, where the float32 product rounds to 7). It is computed in integers
(``out_length``): s = M * 2^(e-23) with M its 24-bit significand, found by comparing s with the powers of two
(e) and scaling it by an exact power of two (M); L*M splits into two 12-bit halves of M so that each product
stays inside int32 (OpenVINO's CPU runs i64 as i32), and the division by 2^(23-e) is a shift.

The source coordinate is the IR's map (``semantics.coords.affine``) in float32: a quotient by the run-time scale
(``pinned.quotient``), then Floor for the left tap and the fraction t; linear and cubic are continuous in the
coordinate, so its rounding moves the result by no more than the error bound allows (``error_bound``: C_COORD
roundings of the map's terms), never a tap. The weights are ``taps``' own filter pieces (``cubic_inner`` /
``cubic_outer``) at the taps' distances. Every float op from the scale to the weights is pinned to f32
(``pinned``): under a bf16 hint only the tap sum runs at the hint's precision, which rounds values only.

tf_crop_and_resize with a fixed crop box inside [0, 1] (``coords.crop_inside``) takes the same window, its source
r0*(L-1) + o*(r1-r0)*(L-1)/(out-1) (``_crop_source``): every exact source lies inside the input, so no output takes
the extrapolation value and the float32 one, clamped to [0, L-1], decides nothing. Its scales as above, or its
output lengths given (run-time sizes, or constant sizes on run-time lengths: ``_sizes_rung``; antialias' stretch
min(out / in, 1) then a float32 quotient), proven over (in, out) pairs (``scale_grid.sizes_grid_verdict``). A box
past [0, 1] (which outputs extrapolate is an exact decision), a run-time roi and nearest keep the extension.

Proof by numbers of the window subgraph itself (``grid_verdict``): compiled alone and run for every (L, s) of
``grid`` (scales k/L and their float32 neighbours, the float32 products that round up to an integer, powers of
two, 1 and its neighbours) against the oracle's taps (``window_form.oracle_table``) and output length
(``coords.output_length``); the probes then run the whole node against the oracle's output.
"""

from __future__ import annotations

import numpy as np

from ...semantics.coords import axis_roi, crop_inside
from ...semantics.ir import ResizeIR, RuntimeValue
from ...semantics.nearest_index import NoNearestIndex
from ...semantics.taps import cubic_inner, cubic_outer, window_radius
from ...semantics.window_form import window_form
from ..passes import Candidate, Refusal
from .antialias_taps import as_input, summed_taps, tap_layout
from .graph import dims, ops, tag
from .index_ops import floor_div, tag_of
from ..compiled import resize_inputs
from .interpolate import inexact_spellings
from .nearest_index import _in_length, _lengths
from .pinned import GraphValue, pin_f32, quotient, run_time_minus_one
from .scale_grid import grid, grid_verdict, sizes_grid_verdict, static_scale  # noqa: F401  (grid: the nearest form's too)

FORM = "scale_taps"
MAX_LEN = 1 << 18  # L * (a 12-bit half of the significand) < 2^30: inside int32
MAX_SCALE = 1 << 12  # the exponent's comparisons and the shift's table cover scales below 2^12 (and down to 2^-24)
_E_LOW = -24  # s < 2^-24: the exponent reads -25, and floor(L*s) = 0 for every L < 2^24
COORDS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners", "half_pixel_symmetric",
          "tf_crop_and_resize")
_FLOATS = ("float32", "float16", "bfloat16")
REASON = "run-time scale window decomposition: output length, source coordinates and tap weights computed in " \
         "the graph from the run-time scale (integer length, float32 coordinates and weights), one Gather of the " \
         "K taps and their weighted sum per axis"
SIZES_REASON = "crop window decomposition: source coordinates inside the crop box and tap weights computed in the " \
    "graph from the run-time input and output lengths (float32 coordinates and weights), one Gather of the K taps " \
    "and their weighted sum per axis"
STATIC_REASON = "static scale window decomposition on run-time lengths: output length, source coordinates and " \
    "tap weights computed in the graph from the input's run-time length and the model's scale (integer length, " \
    "float32 coordinates and weights), one Gather of the K taps and their weighted sum per axis"


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
        return "OpenVINO pads have no run-time scale form", "pads"
    if (ir.roi is not None or ir.coord == "tf_crop_and_resize") and not crop_inside(ir):
        return "a crop box (roi) outside [0, 1] or fed at run time: whether an output lies outside the input " \
               "(the extrapolation value) is a decision a float32 coordinate cannot make", "roi"
    if ir.size_rule != "floor":
        return f"size rule {ir.size_rule} has no run-time scale form (the exact floor only)", "size_rule"
    if ir.scale_source != "user":
        return "the formula's scale is out/in, not the given scale", "scale_source"
    if ir.coord in ("pytorch_half_pixel", "align_corners") and ir.formula_length != "integer":
        return f"{ir.coord} with the fractional output length L*s", "formula_length"
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
    if not crop_inside(ir):
        return "a crop box (roi) outside [0, 1] or fed at run time: whether an output lies outside the input " \
               "(the extrapolation value) is a decision a float32 coordinate cannot make", "roi"
    if ir.aspect_policy != "stretch":
        return f"keep_aspect_ratio_policy {ir.aspect_policy} derives the lengths from a rounded common scale", \
            "keep_aspect_ratio_policy"
    if ir.pads:
        return "OpenVINO pads have no run-time form", "pads"
    if str(ir.dtype) not in _FLOATS:
        return f"{ir.dtype}: the window sums float32 weights", "dtype"
    return None


# ----------------------------------------------------------------------------------------------------------
# The window of one axis


def _i64(v):
    return ops().constant(np.int64(v)).output(0)


def _f32(v):
    return ops().constant(np.float32(v)).output(0)


def minus(a, b, minus_one):
    """a - b in float32 as a + b * m, m the run-time -1 (``pinned.run_time_minus_one``): OpenVINO's CPU plugin
    rewrites a float Subtract, and a Multiply by a constant -1, into a Multiply of its own that loses the f32 pin
    (measured: the source was read in bf16 under the bf16 hint); a run-time factor it leaves alone. A number
    ``b`` is folded (a + (-b))."""
    o = ops()
    if isinstance(b, (int, float)):
        return o.add(a, _f32(-b)).output(0)
    return o.add(a, o.multiply(b, minus_one)).output(0)


class _Value(GraphValue):
    """``GraphValue`` whose subtractions are ``minus``'s (``taps``' cubic pieces subtract)."""

    def __sub__(self, o):
        return _Value(minus(self.v, o.v if isinstance(o, GraphValue) else float(o), self.minus_one), self.minus_one)

    def __rsub__(self, o):
        return _Value(minus(_f32(o), self.v, self.minus_one), self.minus_one)

    def _bin(self, f, a, b):
        return _Value(f(self._in(a, self.v), self._in(b, self.v)), self.minus_one)


def significand(s):
    """(M, F) as i64 with s = M * 2^-F exactly, M the 24-bit significand of the f32 s (a scalar or a vector, each
    element) in [2^-24, ``MAX_SCALE``) and F = 23 - floor(log2 s) in [12, 48]: e by comparisons with the powers
    of two, M by an exact power-of-two scaling. A non-positive s gives M = 0."""
    o = ops()
    # [P, 1, ..]: each power against every scale, summed over the powers (a float is never unsqueezed: under the
    # bf16 hint the plugin ran an Unsqueeze of floats in bf16, pinned or not)
    powers = (np.float32(2.0) ** np.arange(_E_LOW, 12, dtype=np.float32)).reshape([-1] + [1] * len(s.get_shape()))
    count = o.reduce_sum(o.convert(o.greater_equal(s, o.constant(powers)), "i64"), o.constant(np.int64(0)))
    sh = o.subtract(_i64(-_E_LOW + 23 + 1), count).output(0)  # 23 - e, in [12, 48]
    # powers of two, exact in bf16 too (the plugin runs a Gather of floats in bf16 under that hint, pinned or not)
    table = o.constant(np.float32(2.0) ** np.arange(0, 49, dtype=np.float32))
    m = o.convert(o.floor(o.multiply(o.maximum(s, o.constant(np.float32(0))), o.gather(table, sh, _i64(0)))), "i64")
    return m.output(0), sh


def halves(m):
    """(Mh, Ml) with M = Mh * 2^12 + Ml: a length times either stays inside int32."""
    o = ops()
    mh = o.convert(o.floor(o.multiply(o.convert(m, "f32"), o.constant(np.float32(2.0 ** -12)))), "i64")
    return mh.output(0), o.subtract(m, o.multiply(mh, _i64(4096))).output(0)


def out_length(in_len, s, parts=None):
    """floor(L*s) exactly (i64) for i64 L < ``MAX_LEN`` and f32 s < ``MAX_SCALE`` (scalars, or vectors elementwise);
    0 for s <= 0. See the module note: L*M = (L*Mh)*2^12 + L*Ml, shifted right by F (``significand``; ``parts``:
    its (M, F) where already built)."""
    import openvino.opset15 as ops15

    o = ops()
    m, sh = parts or significand(s)
    mh, ml = halves(m)
    low = ops15.bitwise_right_shift(o.multiply(in_len, ml), _i64(12))
    total = o.add(o.multiply(in_len, mh), low)
    shift = o.minimum(o.subtract(sh, _i64(12)), _i64(31))
    return o.maximum(ops15.bitwise_right_shift(total, shift), _i64(0)).output(0)


def _symmetric_source(xi, in_len, out_len, s, minus_one):
    """half_pixel_symmetric's offset + (o + 1/2)/s - 1/2, offset = L/2 * (1 - out / (L*s)), as
    (2o + 1 + rho) / (2s) - 1/2 with rho = L*s - out in [0, 1): no cancellation between the offset and the
    quotient. rho's only rounding is the float32 product L*s (exact where L*s is an integer, as the spec's own
    offset is then exactly 0; else within u*L*s, the offset's L/2 that the error bound counts:
    ``BoundAxis.map_terms``); the difference with out is exact (Sterbenz). No float is multiplied by a constant
    (the plugin rewrote such a Multiply into one of its own, unpinned): 2s is s + s."""
    o = ops()
    f = lambda v: o.convert(v, "f32").output(0)  # noqa: E731
    rho = minus(o.multiply(f(in_len), s).output(0), f(out_len), minus_one)
    num = o.add(f(o.add(o.add(xi, xi), _i64(1))), rho).output(0)
    return minus(quotient(num, o.add(s, s).output(0), minus_one), 0.5, minus_one)


def _held(c: float, minus_one):
    """The constant c in [-1, 1] as max(c, -1) of the run-time -1: a value the plugin does not see as a constant,
    so a product with it is not rewritten into an op of its own that loses the f32 pin (``_symmetric_source``)."""
    return ops().maximum(_f32(c), minus_one).output(0)


def _crop_source(xi, in_len, out_len, roi, minus_one):
    """tf_crop_and_resize's r0*(L-1) + o*(r1-r0)*(L-1)/(out-1) ((r0+r1)/2 * (L-1) at out = 1) for a crop box
    inside [0, 1] (``coords.crop_inside``), clamped to [0, L-1], where the exact coordinate lies: the clamp only
    brings a rounded one closer. Roundings: r1-r0 and (r0+r1)/2 as float32 constants, the products, the quotient,
    the sum: within the error bound's C_COORD roundings of the map's terms (|a|*o, |b|)."""
    o = ops()
    f = lambda v: o.convert(v, "f32").output(0)  # noqa: E731
    r0, r1 = roi
    span = f(o.subtract(in_len, _i64(1)))
    steps = f(o.maximum(o.subtract(out_len, _i64(1)), _i64(1)))
    slope = quotient(o.multiply(_held(float(r1 - r0), minus_one), span).output(0), steps, minus_one)
    src = o.add(o.multiply(_held(float(r0), minus_one), span), o.multiply(f(xi), slope)).output(0)
    middle = o.multiply(_held(float((r0 + r1) / 2), minus_one), span).output(0)
    src = o.select(o.equal(out_len, _i64(1)), middle, src).output(0)
    return o.minimum(o.maximum(src, _f32(0)), span).output(0)


def source(ir: ResizeIR, xi, in_len, out_len, s, minus_one, roi=None):
    """The source coordinate (f32) of outputs ``xi`` (i64) by ``coords.affine``'s map for ``ir.coord`` with the given
    scale (and the axis' crop box ``roi``: ``coords.axis_roi``); an axis whose scale is exactly 1 maps each output
    onto itself (every mode here but tf_crop_and_resize does at s = 1; the IR's ``unit_scale_identity`` copies
    it), and an axis the IR copies at equal lengths (``equal_length_identity``) too."""
    o = ops()
    f = lambda v: o.convert(v, "f32").output(0)  # noqa: E731
    half = o.constant(np.float32(0.5))
    x = f(xi)
    if ir.coord == "asymmetric":
        src = quotient(x, s, minus_one)
    elif ir.coord == "align_corners":
        # o*(L-1)/(out-1), a quotient of integers: its whole part by the exact integer division, so that a source
        # on an input element is that element (the float32 quotient a * b^-1 lands an ulp beside it)
        span = o.maximum(o.subtract(out_len, _i64(1)), _i64(1)).output(0)
        num = o.multiply(xi, o.subtract(in_len, _i64(1))).output(0)
        whole = floor_div(num, span)
        part = quotient(f(o.subtract(num, o.multiply(whole, span))), f(span), minus_one)
        src = o.add(f(whole), part)
        src = o.select(o.equal(out_len, _i64(1)), o.constant(np.float32(0)), src).output(0)
    elif ir.coord == "tf_crop_and_resize":
        src = _crop_source(xi, in_len, out_len, roi, minus_one)
    elif ir.coord == "half_pixel_symmetric" and ir.formula_length != "integer":
        src = _symmetric_source(xi, in_len, out_len, s, minus_one)
    else:  # half_pixel, pytorch_half_pixel (half_pixel_symmetric of the integer length: no offset)
        src = minus(quotient(o.add(x, half), s, minus_one), 0.5, minus_one)
        if ir.coord == "pytorch_half_pixel":
            src = o.select(o.equal(out_len, _i64(1)), o.constant(np.float32(0)), src).output(0)
    # At L = 1 every tap reads the one element and the oracle copies it: a source of 0 gives the weights 1 and 0s
    # exactly (any other leaves their sum's rounding)
    src = o.select(o.equal(in_len, _i64(1)), o.constant(np.float32(0)), src).output(0)
    crop = ir.coord == "tf_crop_and_resize"
    same = o.equal(s, o.constant(np.float32(1))) if s is not None and (not crop or ir.unit_scale_identity) else None
    if ir.equal_length_identity or ir.coord == "align_corners":  # align_corners: a map of the lengths alone
        equal = o.equal(in_len, out_len)
        same = equal if same is None else o.logical_or(same, equal)
    return src if same is None else o.select(same, x, src).output(0)


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
    """(index i64 [K, out], weight f32 [K, out], out i64 scalar) of one axis for an i64 scalar ``in_len`` and
    an f32 scalar ``s`` (and the axis' crop box ``roi``), or the given i64 scalar ``out_len`` (s None: a
    tf_crop_and_resize given its sizes, no antialias); [out, K] where ``taps_axis`` is 1."""
    o = ops()
    out_len = out_length(in_len, s) if out_len is None else out_len
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
    return index, w, out_len


# ----------------------------------------------------------------------------------------------------------
# The proof's standalone window


def _standalone(ir: ResizeIR, taps_axis: int, roi=None):
    """The window of one axis alone, its parameters the run-time length and scale (or output length where the IR
    gives sizes)."""
    import openvino as ov

    o = ops()
    if ir.sizes is not None:
        pi, po = o.parameter([], np.int64, name="in"), o.parameter([], np.int64, name="out")
        index, weight, _ = window_graph(ir, pi.output(0), None, taps_axis, roi, po.output(0))
        return ov.Model([index, weight], [pi, po], "sizes_window")
    pi, ps = o.parameter([], np.int64, name="in"), o.parameter([], np.float32, name="s")
    index, weight, _ = window_graph(ir, pi.output(0), ps.output(0), taps_axis, roi)
    return ov.Model([index, weight], [pi, ps], "scale_window")


# ----------------------------------------------------------------------------------------------------------
# The rung


def element(scales, i: int, n: int):
    """scales[i] (f32 scalar) by a Select and a ReduceSum, exact (the others are 0, whatever they hold): a
    Gather of floats ran in bf16 under the bf16 hint, pinned or not (0.7 read as 0.69921875: every tap moved)."""
    o = ops()
    one_hot = o.constant(np.arange(n) == i)
    return o.reduce_sum(o.select(one_hot, scales, _f32(0)), _i64(0)).output(0)


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
        index, weight, _ = window_graph(ir, in_len, s.output(0), tap_layout(rank, axis), axis_roi(ir, axis))
        y = summed_taps(node.name, y, index, weight, rank, axis)
    y = as_input(y, x, ir)
    limit = " (align_corners: out * (in - 1) below 2^31, the integer division's)" if ir.coord == "align_corners" else ""
    reason = (STATIC_REASON if None not in fixed_scales else REASON) + f", exact for lengths up to {MAX_LEN} and scales below {MAX_SCALE}{limit}" + \
        inexact_spellings(not_native)
    fixed = {axis: dims(x)[axis] if dims(x) is not None else None for axis in ir.axes}
    return Candidate([y], reason, proof={"form": FORM, "axes": [a for a in ir.axes if a not in copied],
                                         "copied": list(copied), "fixed": fixed})


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
        index, weight, _ = window_graph(ir, in_len, None, tap_layout(ir.rank, axis), axis_roi(ir, axis), out_len)
        y = summed_taps(node.name, y, index, weight, ir.rank, axis)
    fixed = {axis: dims(x)[axis] if dims(x) is not None else None for axis in ir.axes}
    reason = SIZES_REASON + f", exact for lengths up to {MAX_LEN}" + inexact_spellings(not_native)
    return Candidate([as_input(y, x, ir)], reason, proof={
        "form": FORM, "axes": [a for a in ir.axes if a not in copied], "copied": list(copied), "fixed": fixed,
        "given": "sizes"})


def known_values(v, n: int) -> list:
    """Per position of the 1-D tensor ``v`` (``n`` long), its value where the graph fixes it (a Constant, or a
    Concat / Convert of parts that are), else None: F.interpolate's scales Concat([1, 1], s) fix the outer two."""
    node, kind = v.get_node(), v.get_node().get_type_name()
    if kind == "Constant":
        data = node.get_data().reshape(-1)
        return [float(d) for d in data] if len(data) == n else [None] * n
    if kind == "Convert":
        return known_values(node.input_value(0), n)
    if kind == "Concat":
        out = []
        for part in node.input_values():
            shape = part.get_partial_shape()
            if not shape.is_static or len(shape) != 1:
                return [None] * n
            out += known_values(part, shape[0].get_length())
        return out if len(out) == n else [None] * n
    return [None] * n


def unit_axes(ir: ResizeIR, scales) -> tuple:
    """The resized axes whose scale the graph fixes at exactly 1 (``known_values``): the window maps such an axis
    onto itself (``source``), so it is left as it is, no Gather over the whole tensor for nothing."""
    return tuple(a for a, v in zip(ir.axes, known_values(scales, len(ir.axes))) if v == 1.0)
