"""The tap window in exact integer arithmetic of the run-time lengths (in, out): the form a decomposition
computes in the graph when a linear / cubic Resize has lengths known only at run time (antialias or not: without
it the stretch is f = 1 and the weights are not divided by their sum, as in the oracle).

It is ``coords.affine`` + ``taps._window_taps`` / ``taps._weights`` rewritten so that every decision (which
input a tap reads, whether it lies inside the filter's support, inside the input, in which Keys piece) is an
integer comparison, and only the tap's distance d = (i - t) * f is a float (one division of two integers):

    src = (p*o + q) / r             p, q, r integer-linear in (in, out) (``nearest_index._BASE``), or constants
                                    of a static scale P/Q; a constant at out == 1 where the mode has a length-1 rule
    x0 = ceil(src) - 1 = floor((p*o + q - 1) / r),   t = src - x0 = tn / r with tn in (0, r]
    f = fn / fd                     min(out, in) / in (sizes), min(P, Q) / Q (a static scale)
    m = ceil(R / f) = ceil(R*fd / fn),   taps x0 + i for i in 1-m .. m  (K = 2m, known at run time)
    d_i = (i - t) * f = n_i / den   n_i = (i*r - tn) * fn, den = r * fd
    weight_i = filter(n_i / den) where |n_i| < R*den (else 0), Keys' inner piece where |n_i| <= den;
               0 outside the input under exclude_outside; then divided by their sum (where it is not 0)
    index_i = clamp(x0 + i, 0, in - 1)

Equal to the oracle's tables for every length (tests/semantics/test_window_form.py: every in, out in 1..40,
both samplers, every mode it takes, indices equal and weights within 1e-12 after the clamped taps are summed).
The single normalisation over the taps kept equals the oracle's two (antialias, then exclude_outside) wherever
the window's sum is not 0, which a clamped stretch (f <= 1) never gives.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import error_bound as eb
from .coords import bind_resize
from .lengths import floor_agrees_below
from .ir import ResizeIR, RuntimeValue
from .nearest_index import (_BASE, Linear, NoNearestIndex, aspect_refusal, integer_scales, reads_scale,
                            run_time_form_refusal)
from .taps import axis_taps, cubic_inner, cubic_outer, source_coords, stretch

ZERO = Linear(0, 0, 0)
# The scalars of the identity map src = o, f = 1: each output reads its own element with weight 1 (every other
# tap sits at a whole distance 1 or 2 from it, where both filters are 0).
IDENTITY = (1, 0, 1, 1, 1)


@dataclass(frozen=True)
class WindowForm:
    """One resized axis' window for every (in, out) with in, out >= 1 (see the module note). ``scale`` is the
    static scale P/Q whose output length floor(in*P/Q) the graph computes, None where out is given."""

    p: Linear
    q: Linear
    r: Linear
    fn: Linear  # f = fn / fd; a Linear of (in, out) or a constant, min(out, in) where ``f_min_out``
    fd: Linear
    f_min_out: bool  # fn = min(out, in): the sizes form's clamped stretch
    out1: Fraction | None  # the source at out == 1 where the mode has a length-1 rule
    kind: str
    cubic_a: float
    exclude_outside: bool
    scale: Fraction | None = None
    copy_equal: bool = False  # an axis whose lengths agree is copied (``equal_length_identity``)
    # The weights divided by their sum: antialias or exclude_outside (``error_bound.filter_sum``'s rule). Plain
    # linear / cubic weights sum to 1 in exact arithmetic; dividing by a float32 sum would add a rounding.
    normalise: bool = True
    # Under a keep-aspect policy (``aspect_window``) the map (``map_by_scale``: every mode but align_corners) and
    # the filter's stretch (``stretch_by_scale``) read the common scale's (I, S) in place of (in, out); the clamp,
    # the out == 1 piece and the copy still read the axis' own lengths.
    map_by_scale: bool = False
    stretch_by_scale: bool = False
    # An axis of one element at both lengths is copied (``BoundAxis.is_identity``: every tap clamps onto it), where
    # a map read at (I, S) would leave two float32 weights whose sum rounds below 1
    copy_one: bool = False

    @property
    def radius(self) -> int:
        return 1 if self.kind == "linear" else 2

    def out_len(self, in_len: int, given: int | None = None) -> int:
        if self.scale is None:
            return int(given)
        return in_len * self.scale.numerator // self.scale.denominator

    def lengths(self, in_len, out_len, scale=None) -> tuple[tuple, tuple]:
        """((in, out) the map reads, (in, out) the stretch reads): the axis' own, or the common scale's (I, S)
        ``scale`` where the form reads it (numbers here, ops in the graph)."""
        own = (in_len, out_len)
        return (scale if self.map_by_scale else own), (scale if self.stretch_by_scale else own)

    def scalars(self, in_len: int, out_len: int, scale: tuple | None = None) -> tuple[int, int, int, int, int]:
        """(p, q, r, fn, fd) at these lengths (and the common scale's (I, S) where the form reads it): what the
        graph computes from them."""
        if in_len == out_len and (self.copy_equal or self.copy_one and in_len == 1):
            return IDENTITY
        at, by = self.lengths(in_len, out_len, scale)
        p, q, r = (int(v(*at)) for v in (self.p, self.q, self.r))
        if self.out1 is not None and out_len == 1:
            p, q, r = 0, self.out1.numerator, self.out1.denominator
        fn = min(by[1], by[0]) if self.f_min_out else int(self.fn(*by))
        return p, q, r, fn, int(self.fd(*by))

    def table(self, in_len: int, out_len: int, scale: tuple | None = None):
        """(index int64 [out, K], weight float64 [out, K]) in numpy, step by step as the graph computes them."""
        p, q, r, fn, fd = self.scalars(in_len, out_len, scale)
        R = self.radius
        m = -(-R * fd // fn)
        o = np.arange(out_len, dtype=np.int64)[:, None]
        i = np.arange(1 - m, m + 1, dtype=np.int64)[None, :]
        num = p * o + q
        x0 = (num - 1) // r
        tn = num - x0 * r
        n = (i * r - tn) * fn
        den = r * fd
        weight = self.weights(n, den, np.abs, np.where, lambda v: np.asarray(v, dtype=np.float64))
        pos = x0 + i
        if self.exclude_outside:
            weight = np.where((pos >= 0) & (pos < in_len), weight, 0.0)
        if self.normalise:
            total = weight.sum(axis=1, keepdims=True)
            weight = np.where(total != 0, weight / np.where(total != 0, total, 1.0), weight)
        return np.clip(pos, 0, in_len - 1), weight

    def weights(self, n, den, absolute, select, to_float):
        """The filter at d = n / den with the support and the Keys piece decided on the integers: one
        expression for numpy (``table``) and the graph (``lowering/openvino/antialias_taps.py``), both
        ``taps``' own filter pieces."""
        an = absolute(n)
        if self.kind == "linear":
            # taps.linear_filter's 1 - d with the subtraction on the integers, one division of two integers (a
            # constant minus a tensor is an op OpenVINO's CPU rewrites, losing its f32 pin under a bf16 hint)
            w = to_float(den - an) / to_float(den)
        else:
            d = absolute(to_float(n) / to_float(den))
            w = select(an <= den, cubic_inner(d, self.cubic_a), cubic_outer(d, self.cubic_a))
        return select(an < self.radius * den, w, 0 * w)


def window_form(ir: ResizeIR, constant_scalars: bool = False) -> WindowForm | NoNearestIndex:
    """The window form shared by every resized axis of a linear / cubic Resize, or why there is none
    (``field``: the IR field that decides it). ``constant_scalars``: a static whole scale k by the scale's form,
    whose scalars p, q, r are constants where the mode's are homogeneous in (in, out) (half_pixel's 2*in, in - out,
    2*out at out = k*in, divided by in: 2, 1 - k, 2k); the sizes form's r = 2*out grows with the run-time length
    (the exact integer cubic's weights are cubes over r^3)."""
    s = ir.sampler
    if s.kind not in ("linear", "cubic"):
        return NoNearestIndex("not a linear / cubic resize", "mode")
    if s.antialias and ir.filter_stretch != "clamped":
        return NoNearestIndex(f"filter stretch {ir.filter_stretch} (OpenVINO's own)", "filter_stretch")
    refused = run_time_form_refusal(ir)
    if refused is not None:
        return refused
    # An axis the IR copies at equal lengths is copied bit for bit: the identity's scalars give weights 0 and 1
    # exactly, where the general ones (in/out) leave a float32 division's rounding; so is one of one element at
    # both lengths, which the oracle copies (``BoundAxis.is_identity``) where a static scale's map (1.5: source
    # -1/6) leaves two float32 weights whose normalised sum rounds below 1 (antialias x1.5 on dynamic H / W).
    common = dict(kind=s.kind, cubic_a=float(s.cubic_a or 0), exclude_outside=bool(ir.exclude_outside),
                  copy_equal=bool(ir.equal_length_identity), normalise=bool(s.antialias or ir.exclude_outside),
                  copy_one=not ir.exclude_outside)  # (tf_crop_and_resize and pads are refused above)
    form = _sizes_form(ir, common, constant_scalars) if ir.sizes is not None or integer_scales(ir) is not None \
        else _scale_form(ir, common)
    if isinstance(form, NoNearestIndex) or s.antialias:
        return form
    one = Linear(0, 0, 1)  # no antialias: the filter is never stretched (f = 1)
    return dataclasses.replace(form, fn=one, fd=one, f_min_out=False)


def aspect_window(ir: ResizeIR) -> WindowForm | NoNearestIndex:
    """The window form of a linear / cubic Resize whose sizes are kept to the input's aspect
    (keep_aspect_ratio_policy not_larger / not_smaller), or why there is none: the sizes form with (in, out) read
    as the common scale's (I, S) where the map reads the scale (``nearest_index.reads_scale``) and in the filter's
    stretch (f = min(S, I) / I), as ``nearest_index.aspect_index`` reads the nearest map."""
    refused = aspect_refusal(ir)
    if refused is not None:
        return refused
    form = window_form(dataclasses.replace(ir, aspect_policy="stretch"))
    if isinstance(form, NoNearestIndex):
        return form
    # align_corners' map at equal lengths is the identity, which the oracle copies (``BoundAxis.is_identity``)
    # where the common scale would still stretch the filter
    return dataclasses.replace(form, map_by_scale=reads_scale(ir), stretch_by_scale=True,
                               copy_equal=form.copy_equal or not reads_scale(ir))


def _out1(ir: ResizeIR) -> Fraction | None:
    """The source at output length 1 of the modes with a length-1 rule (``coords.affine``)."""
    if ir.coord == "align_corners":
        return Fraction(0)
    if ir.coord == "pytorch_half_pixel":
        return Fraction(-1, 2) if ir.length1 == "minus_half" else Fraction(0)
    return None


def _sizes_form(ir: ResizeIR, common: dict, constant_scalars: bool = False) -> WindowForm | NoNearestIndex:
    """Output lengths given (sizes, or out = k*in for a static integer scale k): the scale is out / in."""
    p, q, r = _BASE[ir.coord]
    ks = integer_scales(ir) if ir.sizes is None else None
    if ks is not None and len(set(ks)) != 1:
        return NoNearestIndex("the integer scales differ per axis", "scales")
    if ks is not None and constant_scalars and not any(v.c_one for v in (p, q, r)):
        p, q, r = (Linear(0, 0, v(1, ks[0])) for v in (p, q, r))  # (p*o + q) / r divided by in
    return WindowForm(p, q, r, ZERO, Linear(1, 0, 0), True, _out1(ir), scale=Fraction(ks[0]) if ks else None,
                      **common)


# A static scale's output length floor(in*P/Q) is computed in int32 for inputs up to this length.
MAX_SCALED_IN = 1 << 16


def _scale_form(ir: ResizeIR, common: dict) -> WindowForm | NoNearestIndex:
    """A static scale s = P/Q on run-time input lengths: out = floor(in*P/Q), the map of the user scale."""
    if isinstance(ir.scales, RuntimeValue):
        return NoNearestIndex("scales fed at run time: the output length floor(in*s) of a float32 scale has no "
                              "exact int32 form", "scales")
    ks = [Fraction(v) for v in ir.scales]
    if len(set(ks)) != 1 or ir.scale_source != "user":
        return NoNearestIndex("the scales differ per axis, or the coordinate map reads another scale than the "
                              "user's", "scales")
    s = ks[0]
    if floor_agrees_below(s, ir.size_rule) < MAX_SCALED_IN:
        return NoNearestIndex(f"the output length by the {ir.size_rule} rule at scale {float(s)} is not "
                              f"floor(in*s) for every input below {MAX_SCALED_IN}", "scales")
    if s.numerator * MAX_SCALED_IN >= 2**31 or s.denominator >= 2**22:
        return NoNearestIndex(f"scale {float(s)} = {s.numerator}/{s.denominator}: floor(in*s) leaves int32 for "
                              f"inputs below {MAX_SCALED_IN}", "scales")
    if ir.coord not in ("asymmetric", "half_pixel", "tf_half_pixel_for_nn"):
        return NoNearestIndex(f"{ir.coord} with a static scale reads the fractional output length",
                              "coordinate_transformation_mode")
    P, Q = s.numerator, s.denominator
    if s == 1 and ir.unit_scale_identity:
        one = Linear(0, 0, 1)
        return WindowForm(one, ZERO, one, one, one, False, None, scale=s, **common)
    # src = o*Q/P + b: asymmetric b = 0, half_pixel (Q/P - 1)/2, tf_half_pixel_for_nn Q/(2P) (``coords.affine``)
    q = {"asymmetric": 0, "half_pixel": Q - P, "tf_half_pixel_for_nn": Q}[ir.coord]
    two = 1 if ir.coord == "asymmetric" else 2
    return WindowForm(Linear(0, 0, two * Q), Linear(0, 0, q), Linear(0, 0, two * P), Linear(0, 0, min(P, Q)),
                      Linear(0, 0, Q), False, None, scale=s, **common)


def one_axis_bound(ir: ResizeIR, in_len: int, out_len: int, scale: Fraction | None = None, roi=None):
    """``ir``'s one resized axis bound from in_len to out_len (given, or of the static ``scale``; the axis' crop box
    ``roi`` (start, end) for tf_crop_and_resize): the oracle's view of the axis a window form computes."""
    given = dict(sizes=None, scales=(scale,)) if scale is not None else dict(sizes=(int(out_len),), scales=None)
    one = dataclasses.replace(ir, rank=1, axes=(0,), roi=tuple(roi) if roi is not None else None, input_shape=None,
                              pads=(), **given)
    return bind_resize(one, (int(in_len),))


def oracle_table(ir: ResizeIR, in_len: int, out_len: int, scale: Fraction | None = None, roi=None):
    """The oracle's own taps of one axis of ``ir`` from in_len to out_len (given, or of the static ``scale``; the
    axis' crop box ``roi`` (start, end) for tf_crop_and_resize) as
    dense [out, in] matrices (clamped taps summed): the weights ``WindowForm.table`` must equal, and how far a
    float32 evaluation of them may land (the error bound's per-tap allowance, ``error_bound``: the coordinate's
    error times the weight's slope, and the filter's and the normalisation's roundings). An axis the oracle
    copies is the identity."""
    bound = one_axis_bound(ir, in_len, out_len, scale, roi)
    if bound.axes and bound.out_shape[0] != out_len:
        raise ValueError(f"the oracle's output length is {bound.out_shape[0]}, not {out_len}")
    return _bound_table(bound, bound.axes[0] if bound.axes else None, in_len, out_len)


def oracle_outside(ir: ResizeIR, in_len: int, out_len: int, scale: Fraction | None = None, roi=None) -> np.ndarray:
    """bool [out]: the outputs of one axis of ``ir`` (as ``oracle_table``'s) that take tf_crop_and_resize's
    extrapolation value in the oracle; none where it copies the axis."""
    bound = one_axis_bound(ir, in_len, out_len, scale, roi)
    if not bound.axes:
        return np.zeros(out_len, bool)
    t = axis_taps(bound.axes[0], bound.sampler, bound.exclude_outside)
    return np.zeros(out_len, bool) if t.extrapolate is None else np.asarray(t.extrapolate, bool)


def oracle_aspect_table(ir: ResizeIR, in_lens: tuple, sizes: tuple, k: int):
    """``oracle_table`` of the k-th resized axis of ``ir`` (keep_aspect_ratio_policy) for input lengths ``in_lens``
    and ``sizes`` of its resized axes (the policy's common scale and output lengths, ``coords.bind_resize``):
    what ``aspect_window``'s table must give there. (dense weights, allowance, output length)."""
    bound, axis, out_len = aspect_bound(ir, in_lens, sizes, k)
    return (*_bound_table(bound, axis, int(in_lens[k]), out_len), out_len)


def aspect_bound(ir: ResizeIR, in_lens: tuple, sizes: tuple, k: int):
    """(the oracle's bound resize, its k-th axis or None where it copies it, that axis' output length) of ``ir``'s
    resized axes alone at input lengths ``in_lens`` and ``sizes`` (keep_aspect_ratio_policy: the common scale)."""
    n = len(in_lens)
    all_axes = dataclasses.replace(ir, rank=n, axes=tuple(range(n)), sizes=tuple(int(v) for v in sizes), scales=None,
                                   roi=None, input_shape=None, pads=())
    bound = bind_resize(all_axes, tuple(int(v) for v in in_lens))
    mine = [a for a in bound.axes if a.axis == k]
    return bound, mine[0] if mine else None, bound.out_shape[k]


def _bound_table(bound, axis, in_len: int, out_len: int):
    """(dense weights [out, in], allowance [out, in]) of one bound ``axis`` of ``bound`` (None: copied, the
    identity)."""
    if axis is None:
        return np.eye(out_len, in_len), np.zeros((out_len, in_len))
    t = axis_taps(axis, bound.sampler, bound.exclude_outside)
    K = t.weight.shape[1]
    slope, terms = eb._axis_slopes(axis, bound.sampler, bool(bound.exclude_outside), K)
    dc = eb._axis_dc(axis)
    rounding = eb.C_W * eb.U * (K * np.abs(t.weight) + terms)
    moved_index, moved = _moved_weights(axis, bound.sampler, bool(bound.exclude_outside), K, dc)
    allow = np.maximum(dense(t.index, rounding + slope * dc[:, None], in_len),
                       dense(t.index, rounding, in_len) + dense(moved_index, moved, in_len))
    return dense(t.index, t.weight, in_len), allow


def _moved_weights(axis, sampler, exclude_outside: bool, K: int, dc: np.ndarray):
    """(index, change) [out, K + 2]: how far each tap's weight moves when the source moves by its float32 error
    dc either way, plus the rounding of the filter's terms there, on the window widened by a tap each side: the
    slope and terms at the exact source (``_axis_slopes``) miss a kink within dc of it, a tap the rounded source
    brings inside the filter's support (antialias' edge at R / f: the exact tap just outside has weight 0, slope 0
    and no terms there; its float32 evaluation ~f*dc, Keys' outer piece a few ulps of its terms ~15). Float64:
    its own error is far below the float32 allowance it widens."""
    f = float(stretch(sampler, axis.filter_scale, axis.stretch_clamp))
    m = K // 2 + 1
    src = np.array([float(v) for v in source_coords(axis)])
    x0 = np.ceil(src) - 1
    taps = x0[:, None] + np.arange(1 - m, m + 1)[None, :]  # [out, K + 2]
    kept = ((taps >= 0) & (taps < axis.in_len)) if exclude_outside else np.ones(taps.shape, bool)

    def weights(c):
        """(weights, the float32 rounding allowance of their filter's terms: ``error_bound``'s C_W*u*T/|S|)."""
        d = (taps - c[:, None]) * f
        w, total = eb.filter_sum(d, sampler, kept, bool(sampler.antialias or exclude_outside))
        return w / total, eb.C_W * eb.U * kept * eb.filter_terms(d, sampler) / np.abs(total)

    (w0, _), (up, r_up), (down, r_down) = weights(src), weights(src + dc), weights(src - dc)
    change = np.maximum(np.abs(up - w0) + r_up, np.abs(down - w0) + r_down)
    return np.clip(taps, 0, axis.in_len - 1).astype(np.int64), change


def dense(index, weight, in_len: int) -> np.ndarray:
    """[out, in]: the weights of each output on each input element (a clamped tap's added to the edge's)."""
    out = np.zeros((index.shape[0], in_len))
    rows = np.repeat(np.arange(index.shape[0]), index.shape[1])
    np.add.at(out, (rows, np.asarray(index).reshape(-1)), np.asarray(weight, dtype=np.float64).reshape(-1))
    return out


__all__ = ["WindowForm", "window_form", "aspect_window", "aspect_bound", "one_axis_bound", "oracle_table",
           "oracle_outside", "oracle_aspect_table", "dense", "MAX_SCALED_IN"]
