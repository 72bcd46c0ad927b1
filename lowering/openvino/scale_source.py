"""The source coordinate of a window form's outputs in float32 (``scale_taps``): the IR's map
(``semantics.coords.affine``) from the run-time lengths and scale, or tf_crop_and_resize's crop box.

The source coordinate is the IR's map (``semantics.coords.affine``) in float32: a quotient by the run-time scale
(``pinned.quotient``), then Floor for the left tap and the fraction t; linear and cubic are continuous in the
coordinate, so its rounding moves the result by no more than the error bound allows (``error_bound``: C_COORD
roundings of the map's terms), never a tap. Its float ops are pinned to f32 with the window's (``pinned``).

tf_crop_and_resize with a fixed crop box inside [0, 1] (``coords.crop_inside``) takes the same window, its source
r0*(L-1) + o*(r1-r0)*(L-1)/(out-1) (``_crop_source``): every exact source lies inside the input, so no output takes
the extrapolation value and the float32 one, clamped to [0, L-1], decides nothing. Its scales as above, or its
output lengths given (run-time sizes, or constant sizes on run-time lengths: ``scale_taps._sizes_rung``;
antialias' stretch min(out / in, 1) then a float32 quotient), proven over (in, out) pairs
(``scale_grid.sizes_grid_verdict``). A fixed box past [0, 1] takes the same window and its outputs outside the
input take the extrapolation value, an exact decision in int32 limbs (``crop_outside``). A run-time
roi and nearest keep the extension.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...semantics.ir import ResizeIR
from .graph import ops
from .index_ops import floor_div, floor_pow2
from .pinned import GraphValue, quotient
from .scale_length import _f32, _i64

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
    """The constant c as max(c, -1) of the run-time -1 (c >= -1; else -max(-c, -1), by the run-time -1): a value
    the plugin does not see as a constant, so a product with it is not rewritten into an op of its own that loses
    the f32 pin (``_symmetric_source``). A crop box past [0, 1] has ends and spans below -1."""
    o = ops()
    if c >= -1:
        return o.maximum(_f32(c), minus_one).output(0)
    return o.multiply(o.maximum(_f32(-c), minus_one), minus_one).output(0)


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
    same = copies(ir, in_len, out_len, s)
    return src if same is None else o.select(same, x, src).output(0)


def copies(ir: ResizeIR, in_len, out_len, s):
    """Where the axis maps each output onto itself (a boolean scalar; None where it never does): a scale of exactly 1
    (every mode here but tf_crop_and_resize does at s = 1; the IR's ``unit_scale_identity`` copies it), or equal
    lengths that the IR copies (``equal_length_identity``; align_corners' map of the lengths alone is the identity
    there)."""
    o = ops()
    crop = ir.coord == "tf_crop_and_resize"
    same = o.equal(s, o.constant(np.float32(1))) if s is not None and (not crop or ir.unit_scale_identity) else None
    if ir.equal_length_identity or ir.coord == "align_corners":
        equal = o.equal(in_len, out_len)
        same = equal if same is None else o.logical_or(same, equal)
    return same


# Output lengths below 2^21: n * (an 8-bit limb) and its carries stay inside int32 (``_at_least``)
CROP_MAX_OUT = 1 << 21
_LIMB = 8


def _at_least(m, p, c: Fraction):
    """m >= c*p (bool) for i64 scalars |m|, p below ``CROP_MAX_OUT`` + 2 and a rational constant c = A/B: the sign of
    m*B - p*A, exact, from the two constants' 8-bit limbs (each product m*B_i - p*A_i below 2^31 in magnitude; the
    carries floor(s / 2^8) from the lowest limb up, ``floor_pow2``): the sum is >= 0 iff the last carry is."""
    o = ops()
    A, B = c.numerator, c.denominator
    carry = None
    for k in range(max(abs(A).bit_length(), B.bit_length()) // _LIMB + 1):
        b_k, a_k = (B >> (_LIMB * k)) & 0xFF, (abs(A) >> (_LIMB * k)) & 0xFF
        t = o.subtract(o.multiply(m, _i64(b_k)), o.multiply(p, _i64(a_k if A >= 0 else -a_k)))
        carry = floor_pow2((t if carry is None else o.add(t, carry)).output(0), _LIMB)
    return o.greater_equal(carry, _i64(0)).output(0)


def _ceil_times(c: Fraction, p, n):
    """ceil(c*p) exactly for a rational constant c and the i64 scalar p = n - 1 (n below ``CROP_MAX_OUT``), clamped
    to [-n - 2, n + 2] (either way past every output): a float32 estimate e (c*p rounded twice: within a quarter of it where |c*p| < 2^21, so e is the
    answer or beside it; clamped before its conversion, so a huge c stays finite), then the least of e - 1, e, e + 1
    that is >= c*p by ``_at_least``."""
    o = ops()
    scaled = o.multiply(o.constant(np.float32(min(max(float(c), -2.0 ** 60), 2.0 ** 60))), o.convert(p, "f32"))
    bounded = o.minimum(o.maximum(scaled, _f32(-(1 << 21))), _f32(1 << 21))
    e = o.convert(o.ceiling(bounded), "i64")
    reach = o.add(n, _i64(1)).output(0)
    e = o.minimum(o.maximum(e, o.negative(reach)), reach).output(0)
    below = o.subtract(e, _i64(1)).output(0)
    above = o.add(e, _i64(1)).output(0)
    return o.select(_at_least(below, p, c), below, o.select(_at_least(e, p, c), e, above)).output(0)


def crop_outside(ir: ResizeIR, roi, in_len, out_len, s):
    """bool [out]: the outputs of tf_crop_and_resize whose exact source lies outside the input, for a fixed crop box
    ``roi`` = (r0, r1) past [0, 1]. With p = n - 1 and D = r1 - r0, output o is inside where 0 <= D*o + r0*p <= p,
    i.e. between c*p for the constants c = -r0/D and (1 - r0)/D: lo = ceil(min c * p), hi = floor(max c * p), each
    exact (``_ceil_times``: products of 38 bits and more, which neither a float32 coordinate nor one int32 holds);
    a side no box end passes is not computed. At n = 1 the source is the box's middle (r0 + r1)/2 (times L - 1): a
    constant decision. An axis of one element (source 0) and an axis the IR copies (``copies``) extrapolate nothing.
    Checked against ``coords.crop_inside_range`` (the oracle's own map) by the proof's grid."""
    o = ops()
    r0, r1 = (Fraction(v) for v in roi)
    xi = o.range(_i64(0), out_len, _i64(1), "i64")
    p = o.subtract(out_len, _i64(1)).output(0)
    if r1 == r0:
        outside = o.constant(np.bool_(not 0 <= r0 <= 1))
    else:
        low, high = sorted((-r0 / (r1 - r0), (1 - r0) / (r1 - r0)))
        parts = []
        if low > 0:
            parts.append(o.less(xi, _ceil_times(low, p, out_len)))
        if high < 1:  # floor(high*p) = -ceil(-high*p)
            parts.append(o.greater(o.add(xi, _ceil_times(-high, p, out_len)), _i64(0)))
        outside = parts[0] if len(parts) == 1 else o.logical_or(*parts)
        middle = not 0 <= (r0 + r1) / 2 <= 1
        outside = o.select(o.equal(out_len, _i64(1)), o.constant(np.bool_(middle)), outside)
    outside = o.logical_and(outside, o.greater(in_len, _i64(1)))
    same = copies(ir, in_len, out_len, s)
    return outside.output(0) if same is None else o.logical_and(outside, o.logical_not(same)).output(0)
