"""The run-time scale of a window form read exactly (``scale_taps``, ``scale_nearest``): its output length and the
values the graph fixes.

The output length is the float32 product L*s truncated (``size_rule`` floor_fp32, the ONNX spec convention:
onnxruntime's; 10 * 0.7f is 6.99999988, 7.0 in float32, length 7) or the exact floor (floor, onnx.reference's: 6).
It is computed in integers
(``out_length``): s = M * 2^(e-23) with M its 24-bit significand, found by comparing s with the powers of two
(e) and scaling it by an exact power of two (M); L*M splits into two 12-bit halves of M so that each product
stays inside int32 (OpenVINO's CPU runs i64 as i32), and the division by 2^(23-e) is exact
(``index_ops.floor_pow2``, opset-1 ops); the float32 product adds half the unit float32 rounds L*M to before
the division (``_fp32_half_unit``): no float op a reduced inference precision could round.

The scales' values the graph fixes (F.interpolate's Concat([1, 1], s)) are read from the produced graph
(``known_values``): an axis of scale exactly 1 is left as it is (``unit_axes``).
"""

from __future__ import annotations

import numpy as np

from ...semantics.coords import axis_roi
from ...semantics.ir import ResizeIR
from .graph import ops
from .index_ops import floor_pow2

MAX_LEN = 1 << 18  # L * (a 12-bit half of the significand) < 2^30: inside int32
MAX_SCALE = 1 << 12  # the exponent's comparisons and the shift's table cover scales below 2^12 (and down to 2^-24)
_E_LOW = -24  # s < 2^-24: the exponent reads -25, and floor(L*s) = 0 for every L < 2^24


def _i64(v):
    return ops().constant(np.int64(v)).output(0)


def _f32(v):
    return ops().constant(np.float32(v)).output(0)


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


# The size rules ``out_length`` computes: the exact floor, and onnxruntime's float32 product truncated (for
# products L*s below FP32_EXACT_OUT: above 2^24 a float32 rounds to multiples of 2 and more, which the half unit
# added before the floor does not model).
RULES = ("floor", "floor_fp32")
FP32_EXACT_OUT = 1 << 24


def out_length(in_len, s, parts=None, rule: str = "floor"):
    """The output length (i64) by ``rule`` for i64 L < ``MAX_LEN`` and f32 s < ``MAX_SCALE`` (scalars, or vectors
    elementwise); 0 for s <= 0. See the module note: L*M = (L*Mh)*2^12 + L*Ml, shifted right by F
    (``significand``; ``parts``: its (M, F) where already built). floor_fp32 first rounds L*M to the 24 bits a
    float32 keeps (``_fp32_half_unit``), so the length is the truncated float32 product, in integers: no float
    op the bf16 hint could round."""
    o = ops()
    m, sh = parts or significand(s)
    mh, ml = halves(m)
    low = o.multiply(in_len, ml).output(0)
    if rule == "floor_fp32":
        low = o.add(low, _fp32_half_unit(o.add(o.multiply(in_len, mh), floor_pow2(low, 12)).output(0))).output(0)
    low = floor_pow2(low, 12)
    total = o.add(o.multiply(in_len, mh), low).output(0)
    # total < L * 2^12 < 2^30: a shift of 30 or more leaves 0
    shift = o.minimum(o.subtract(sh, _i64(12)), _i64(30)).output(0)
    return o.maximum(floor_pow2(total, shift), _i64(0)).output(0)


def _fp32_half_unit(top):
    """Half the unit a float32 rounds L*M to, given top = floor(L*M / 2^12) (>= 2^11: M has 24 bits): L*M has
    b = bitlength(top) + 12 bits, a float32 keeps 24, so it rounds to multiples of 2^(b-24), half of which,
    added before the shift, rounds L*M to nearest; a tie lands on a whole output length, where half to even
    rounds up too (its unit is below 1 for lengths below 2^23). 0 where L*M has 24 bits or fewer (exact).
    The bit count from the signs of exact int32 differences (``index_ops._sign_steps``' reason)."""
    o = ops()
    powers = o.constant(np.int64(2) ** np.arange(12, 31, dtype=np.int64))
    above = o.greater_equal(o.subtract(o.unsqueeze(top, _i64(-1)), powers), _i64(0))
    count = o.reduce_sum(o.convert(above, "i64"), _i64(-1))  # bitlength(top) - 12, at least 0
    table = o.constant(np.array([0] + [1 << k for k in range(19)], np.int64))
    return o.gather(table, count, _i64(0)).output(0)


def element(scales, i: int, n: int):
    """scales[i] (f32 scalar) by a Select and a ReduceSum, exact (the others are 0, whatever they hold): a
    Gather of floats ran in bf16 under the bf16 hint, pinned or not (0.7 read as 0.69921875: every tap moved)."""
    o = ops()
    one_hot = o.constant(np.arange(n) == i)
    return o.reduce_sum(o.select(one_hot, scales, _f32(0)), _i64(0)).output(0)


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
    """The resized axes whose scale the graph fixes at exactly 1 (``known_values``) and that the window maps onto
    themselves there (``unit_maps_onto_itself``), so they are left as they are, no Gather over the whole tensor for
    nothing."""
    return tuple(a for a, v in zip(ir.axes, known_values(scales, len(ir.axes)))
                 if v == 1.0 and unit_maps_onto_itself(ir, a))


def unit_maps_onto_itself(ir: ResizeIR, axis: int) -> bool:
    """Whether a scale of exactly 1 maps ``axis`` onto itself: every mode but tf_crop_and_resize (``source``), which
    crops at scale 1 too unless the IR copies such an axis (``unit_scale_identity``) or its box is the whole axis.
    Measured (fuzz sweep, scales [1, 0.3], box -1.7 .. 0.5 on the first): left as it was, the probes refused it."""
    return ir.coord != "tf_crop_and_resize" or ir.unit_scale_identity or axis_roi(ir, axis) == (0, 1)
