"""A correctly rounded float32 quotient in OpenVINO's standard ops, for the index arithmetic of the user's graph
(``index_arithmetic``).

OpenVINO's CPU plugin computes a float32 Divide as a * (1 / b): two roundings, not IEEE division's one. Measured
(OpenVINO 2026.4.1, AMD EPYC Zen 4, f32 hint): 25,628 of 100,000 random quotients one ulp off onnxruntime's and
PyTorch's, 925 of the 2,999 lengths n / (1.5 n). Where the quotient is then floored into an index, the index moves
(the dynamo exporter's nearest-exact: trunc((i + 0.5) * (n / (1.5 n))) picked other columns at W = 90).

``exact_quotient`` corrects the plugin's quotient q0 (within 1 ulp, measured; two ulps at most: a * (1 / b) has a
relative error below 2^-23; a and b scaled into [1, 2) first, 1.5 ulps: ``_corrected``) by deciding, exactly, on which side of the two midpoints q0 +- ulp / 2 the true a / b
lies: a - m * b for a midpoint m is a sum of six float32 terms each computed without rounding (b and q0 split into
halves of at most 12 significant bits, ``_split``, whose products fit float32's 24), and its sign is that of the
top component of the nonoverlapping expansion their TwoSums grow (Shewchuk's Grow-Expansion): only Add, Subtract,
Multiply by exact operands, Floor and comparisons, no step that a fused multiply-add or a reduced precision would
change. A quotient of two float32 numbers is never a midpoint itself, so no tie is left to break.

a and b are first scaled into [1, 2) by their powers of two (exact; rounding commutes with it). Where a, b or a / b
lies beyond 2^+-124 (zeros, infinities, NaNs, subnormals) the plugin's quotient is kept: index arithmetic lives
well inside. Operands of another float type are divided in float32 and the quotient rounded to their type
(f16, bf16: still the correctly rounded quotient, 24 bits being at least twice theirs plus two; f64, which
OpenVINO's CPU computes in float32 anyway: float32's). Cost: about 200 ops per Divide, over tensors of a few
thousand elements at most (lengths, index vectors).
"""

from __future__ import annotations

import numpy as np

from .graph import constant_of, ops
from .pinned import pin_f32

_EXPONENT0 = -126
_POW = np.array([2.0 ** k for k in range(_EXPONENT0, 128)], np.float32)  # every normal power of two
_INV = np.array([2.0 ** -k for k in range(_EXPONENT0, 128)], np.float64).astype(np.float32)  # 2^-127: subnormal, exact
_RANGE = 2.0 ** 125  # |a|, |b| in [2^-125, 2^125] and |a / b| in [2^-124, 2^124]: the scalings stay normal


def _c(v):
    return ops().constant(np.asarray(v, np.float32)).output(0)


def _binade(x):
    """(P, 1 / P): the largest power of two <= |x| and its inverse, exactly (|x| normal; 1 elsewhere): read from a
    table at log2 |x| (OpenVINO's Log is approximate: its floor may miss by one next to a power of two), then moved
    one entry down or up where the table says so."""
    o = ops()
    ax = o.abs(x)
    ax = o.select(_within(ax, 2.0 ** 126), ax, _c(1.0))
    guess = o.floor(o.multiply(o.log(ax), _c(1 / np.log(2))))
    at = o.convert(o.clamp(o.add(guess, _c(-_EXPONENT0)), 0, len(_POW) - 1), "i32")

    def table(values, index):
        return o.gather(_c(values), index, o.constant(np.int32(0))).output(0)
    at = o.subtract(at, o.convert(o.less(ax, table(_POW, at)), "i32"))
    at = o.add(at, o.convert(o.greater_equal(ax, o.multiply(table(_POW, at), _c(2.0))), "i32"))
    at = o.clamp(at, 0, len(_POW) - 1)
    return table(_POW, at), table(_INV, at)


def _split(v, scale):
    """v = hi + lo exactly, hi = floor(v * scale) / scale and lo = v - hi, each of at most 12 significant bits for
    v in [2^11, 2^12) / scale (a power of two): any product of two halves is exact in float32."""
    o = ops()
    hi = o.multiply(o.floor(o.multiply(v, scale)), o.divide(_c(1.0), scale))
    return hi.output(0), o.subtract(v, hi).output(0)


def _two_sum(a, b):
    """(s, e): s = fl(a + b) and a + b = s + e exactly (Knuth's TwoSum: additions only)."""
    o = ops()
    s = o.add(a, b)
    bb = o.subtract(s, a)
    return s.output(0), o.add(o.subtract(a, o.subtract(s, bb)), o.subtract(b, bb)).output(0)


def _grown(expansion: list, t) -> list:
    """The nonoverlapping expansion of sum(expansion) + t, exactly (Shewchuk's Grow-Expansion)."""
    grown = []
    for component in expansion:
        t, err = _two_sum(t, component)
        grown.append(err)
    return [*grown, t]


def _expansion(terms: list) -> list:
    expansion = [terms[0]]
    for t in terms[1:]:
        expansion = _grown(expansion, t)
    return expansion


def _sign(expansion: list):
    """The sign (-1, 0, 1) of an expansion's sum: its largest nonzero component's (nonoverlapping)."""
    o = ops()
    sign = o.sign(expansion[0])
    for component in expansion[1:]:
        sign = o.select(o.not_equal(component, _c(0.0)), o.sign(component), sign)
    return sign.output(0)


def exact_quotient(a, b):
    """a / b (float32 OpenVINO outputs, broadcast as a Divide's) rounded to nearest, as IEEE division (see the
    module note); its ops marked ``pinned.PRECISE``."""
    o = ops()
    given = (a, b)
    a, b = (v if v.get_element_type().get_type_name() == "f32" else o.convert(v, "f32").output(0) for v in (a, b))
    q0 = o.divide(a, b).output(0)
    na, nb = o.abs(a).output(0), o.abs(b).output(0)
    # |a| / |b| = (x / y) * (Pa / Pb), x and y in [1, 2): rounding commutes with the exact scaling by Pa / Pb
    pa, inverse_a = _binade(na)
    pb, inverse_b = _binade(nb)
    x, y = o.multiply(na, inverse_a).output(0), o.multiply(nb, inverse_b).output(0)
    q = _corrected(x, y, o.divide(x, y).output(0))
    q = o.multiply(o.multiply(q, pa), inverse_b)
    covered = o.logical_and(o.logical_and(_within(na, _RANGE), _within(nb, _RANGE)),
                            _within(o.abs(q0).output(0), _RANGE / 2))
    out = o.select(covered, o.multiply(q, o.multiply(o.sign(a), o.sign(b))), q0).output(0)
    if given[0].get_element_type().get_type_name() != "f32":  # f16 / bf16: rounded once more, still IEEE's
        out = o.convert_like(out, given[0]).output(0)
    pin_f32([out], given)  # every op PRECISE: kept in f32, and where the pinning walks stop (``grid_pin``)
    return out


def _corrected(x, y, q0):
    """x / y correctly rounded, from q0 = fl(x * fl(1 / y)), x and y in [1, 2): |q0 - x / y| stays below 1.5 ulps
    (x * ulp(1 / y) / 2 + ulp(q0) / 2), so q0 is the correctly rounded quotient or a neighbour of it, which the
    exact sign of x - m * y at the two midpoints m next to q0 decides."""
    o = ops()
    at_least_one = o.greater_equal(q0, _c(1.0))
    ulp = o.select(at_least_one, _c(2.0 ** -23), _c(2.0 ** -24))  # q0 in (0.5, 2]
    ulp_down = o.select(o.greater(q0, _c(1.0)), _c(2.0 ** -23),
                        o.select(o.greater(q0, _c(0.5)), _c(2.0 ** -24), _c(2.0 ** -25)))
    hy, ly = _split(y, _c(2.0 ** 11))
    hq, lq = _split(q0, o.select(at_least_one, _c(2.0 ** 11), _c(2.0 ** 12)).output(0))
    # x - q0 * y as a nonoverlapping expansion (its products exact), grown by -(+-ulp / 2) * y for each midpoint
    residual = _expansion([x, *(o.negative(o.multiply(u, v)).output(0) for u in (hq, lq) for v in (hy, ly))])
    up = o.greater(_sign(_grown(residual, o.multiply(o.multiply(ulp, _c(-0.5)), y).output(0))), _c(0.0))
    down = o.less(_sign(_grown(residual, o.multiply(o.multiply(ulp_down, _c(0.5)), y).output(0))), _c(0.0))
    return o.select(up, o.add(q0, ulp), o.select(down, o.subtract(q0, ulp_down), q0)).output(0)


def _within(x, limit: float):
    """Where the correction applies: x in [1 / limit, limit] (NaN: false)."""
    o = ops()
    return o.logical_and(o.greater_equal(x, _c(1 / limit)), o.less_equal(x, _c(limit))).output(0)


def ieee_already(divide) -> bool:
    """Whether OpenVINO's own float32 ``divide``, a * (1 / b), is IEEE division already: its divisor or its
    numerator a constant of powers of two (ONNX's Reciprocal is 1 / b). 1 / b is correctly rounded (measured,
    OpenVINO 2026.4.1 CPU, f32: 0 of 100,000 off; 800 / b: 26,520) and a scaling by 2^k exact, so it needs no
    respelling: kornia's pyramid divides lengths by 2 four times (1,300 ops per inference on shapes for nothing),
    torchvision's detection transform takes 1 / min(H, W) and 1 / max(H, W) (two exact quotients, 143 runtime ops).
    Kept in f32 at any hint as every pinned op is (``pinned_tail``)."""
    return any(c is not None and power_of_two(c) for c in (constant_of(divide, 0), constant_of(divide, 1)))


def power_of_two(values) -> bool:
    """Whether every element of the constant ``values`` is a power of two whose reciprocal is a normal float32."""
    d = np.asarray(values, np.float64)
    if d.size == 0 or not np.all(np.isfinite(d)) or np.any(d == 0):
        return False
    mantissa, exponent = np.frexp(np.abs(d))
    return bool(np.all(mantissa == 0.5) and np.all(np.abs(exponent - 1) <= 126))
