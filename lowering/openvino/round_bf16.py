"""A float32 tensor rounded to bfloat16 in float32 arithmetic, so that the Convert to bf16 after it meets only
values it holds exactly. OpenVINO's CPU converts f32 to bf16 to nearest where the CPU has AVX512_BF16, but not on
one without it (measured, OpenVINO 2026.4.1 on an AVX2 AMD EPYC: a value whose dropped half is above the midpoint
rounds up only where the kept last bit is odd, so ~25% of random values come out one bfloat16 step toward zero).
A model proven on the one CPU would compute other numbers on the other; rounded here first, it computes the same
on both.

To nearest, ties to even, as ONNX's cast: with e = floor(log2 |y|) (from Log, then corrected against a table of
exact powers of two: Log's rounding near a power may be a step off), |y| * 2^(7 - e) lies in [128, 256) and is
exact (a power-of-two scaling), Round(half_to_even) keeps the bfloat16 significand, and the scaling back is exact.
e is clamped to -126, where bfloat16's subnormals have float32's spacing 2^-133; 2^(7 - e) is applied as two
normal halves (2^133 itself overflows float32). Zeros keep their sign, infinities pass, NaN stays NaN."""

from __future__ import annotations

import numpy as np

from .graph import ops

_MIN_E, _MAX_E = -126, 127  # float32's normal exponents: bfloat16 shares its range
_HALF = 70  # the halves of 2^(7 - e) and 2^(e - 7) lie within 2^-70 .. 2^70
_POWERS = np.ldexp(np.float32(1), np.arange(_MIN_E, _MAX_E + 1)).astype(np.float32)
_HALVES = np.ldexp(np.float32(1), np.arange(-_HALF, _HALF + 1)).astype(np.float32)


def _i32(v: int):
    return ops().constant(np.int32(v))


def _f32(v: float):
    return ops().constant(np.float32(v))


def _take(table: np.ndarray, index, offset: int):
    o = ops()
    return o.gather(o.constant(table), o.add(index, _i32(offset)), _i32(0))


def _exponent(a):
    """floor(log2 a) for a > 0, clamped to float32's normal exponents, as an int32 tensor (exact: Log's estimate
    moved a step down where 2^e > a and a step up where 2^(e+1) <= a)."""
    o = ops()
    e = o.clamp(o.floor(o.multiply(o.log(a), _f32(1 / np.log(2)))), float(_MIN_E), float(_MAX_E))
    e = o.convert(e, "i32")
    below = o.logical_and(o.greater(_take(_POWERS, e, -_MIN_E), a), o.greater(e, _i32(_MIN_E)))
    e = o.subtract(e, o.convert(below, "i32"))
    above = o.logical_and(o.greater_equal(a, o.multiply(_take(_POWERS, e, -_MIN_E), _f32(2))),
                          o.less(e, _i32(_MAX_E)))
    return o.add(e, o.convert(above, "i32"))


def _times_power(v, k):
    """v * 2^k for an int32 tensor k within [-2 * 70, 2 * 70], as two exact multiplications by normal powers."""
    o = ops()
    first = o.divide(k, _i32(2))
    return o.multiply(o.multiply(v, _take(_HALVES, first, _HALF)), _take(_HALVES, o.subtract(k, first), _HALF))


def round_to_bfloat16(y):
    """``y`` (an f32 output) rounded to the nearest bfloat16 value, ties to even, still f32."""
    o = ops()
    a = o.abs(y)
    e = _exponent(a)
    q = o.round(_times_power(a, o.subtract(_i32(7), e)), "half_to_even")
    r = _times_power(q, o.subtract(e, _i32(7)))
    r = o.multiply(r, o.select(o.less(y, _f32(0)), _f32(-1), _f32(1)))  # -0 where a negative rounds to zero
    r = o.select(o.logical_or(o.equal(a, _f32(0)), o.logical_not(o.is_finite(y))), y, r)
    return o.select(o.is_nan(y), _f32(np.nan), r).output(0)  # a NaN of any payload: the quiet one


def convert_to(y, element_type):
    """An f32 result ``y`` in ``element_type``: bfloat16 rounded first (``round_to_bfloat16``), others converted."""
    if element_type.get_type_name() == "bf16":
        y = round_to_bfloat16(y)
    return ops().convert(y, element_type).output(0)
