"""Per-axis tap tables (indices + weights): the one truth for filter weights and tap windows.

The oracle applies them now; the decomposition lowering turns them into Gather/Multiply/Add constants and
the C++/CUDA kernels are tested against them. A table is computed from the exact source coordinate of each
output index, so window choice and rounding are exact; weights are returned as float64 or, for equality
checks, as exact Fractions.

Window rule (ONNX Resize, also what onnxruntime computes): with src the source coordinate, let
x0 = ceil(src) - 1 and t = src - x0 in (0, 1]. Taps sit at x0 + i for i in [1-m, m] where m = ceil(R / f),
R the filter radius (1 linear, 2 cubic) and f = min(scale, 1) under antialias, else 1. The weight of tap i
is filter((i - t) * f), normalised to sum 1 under antialias. Nearest is a one-tap window chosen by the
rounding rule. Out-of-range taps are clamped to the edge, or (exclude_outside) given weight 0 and the rest
renormalised.

Ported to C++ in lowering/kernels/rb/taps.hpp (for kernels that build tables at run time);
tests/lowering/test_kernels.py proves the two agree (equal indices, weights within 1e-12).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, is_dataclass
from fractions import Fraction

import numpy as np

from .coords import BoundAxis
from .ir import Sampler

HALF = Fraction(1, 2)


def linear_filter(x):
    x = abs(x)
    return 1 - x if x < 1 else 0 * x


def cubic_inner(x, a):
    """Keys' piece for 0 <= x <= 1. Plain arithmetic only, so the graph decompositions evaluate this very
    expression on tensors (``lowering/onnx/gridsample_decompose.py``)."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def cubic_outer(x, a):
    """Keys' piece for 1 <= x < 2 (0 at both ends, as the inner piece is at 1)."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def cubic_filter(x, a):
    """Keys cubic convolution kernel with coefficient ``a``."""
    x = abs(x)
    if x <= 1:
        return cubic_inner(x, a)
    if x < 2:
        return cubic_outer(x, a)
    return 0 * x


def raw_filter(d: np.ndarray, sampler) -> np.ndarray:
    """The unnormalised filter (``linear_filter`` / ``cubic_filter``) at distances d, as floats."""
    if sampler.kind == "linear":
        return np.array([float(linear_filter(v)) for v in d.reshape(-1)]).reshape(d.shape)
    return np.array([float(cubic_filter(v, float(sampler.cubic_a))) for v in d.reshape(-1)]).reshape(d.shape)


def rounded_quotient(num, den: int, rule: str):
    """num / den (den > 0) rounded by a nearest rule, in exact integer arithmetic: for one int or an integer
    array of numerators at once (``nearest_indices``). The one table of the nearest rules."""
    fl = num // den  # floor, also for negative numerators
    twice_rem = 2 * (num - fl * den)  # 2*frac*den, in [0, 2*den)
    if rule == "floor":
        return fl
    if rule == "ceil":
        return fl + (twice_rem > 0)
    if rule == "round_prefer_floor":
        return fl + (twice_rem > den)
    if rule == "round_prefer_ceil":
        return fl + (twice_rem >= den)
    if rule == "half_even":
        return fl + ((twice_rem > den) | ((twice_rem == den) & (fl % 2 == 1)))
    raise ValueError(f"unknown nearest rounding {rule!r}")


def nearest_pick(src: Fraction, rule: str) -> int:
    """The input index a nearest sampler reads for an exact source coordinate."""
    return int(rounded_quotient(src.numerator, src.denominator, rule))


def is_tie(src: Fraction, rule: str, tol: Fraction = Fraction(0)) -> bool:
    """True where an inexact evaluation of src could change the nearest pick: exactly on the boundary, or
    (``tol`` > 0) within ``tol`` of it."""
    frac = src - math.floor(src)
    if rule in ("floor", "ceil"):
        return min(frac, 1 - frac) <= tol
    return abs(frac - HALF) <= tol


# How far (relative to |src| + 1) an evaluation of a source coordinate in this arithmetic can land from the
# exact value: a few roundings of 2^-24 (float32) or 2^-53 (float64) on terms of that size, with margin.
_REACH = {"exact": Fraction(0), "fp64": Fraction(1, 2**49), "fp32": Fraction(1, 2**20)}
ARITH_ORDER = ("exact", "fp64", "fp32")


def near_tolerance(src: Fraction, arith: str) -> Fraction:
    """How close to a boundary an exact source coordinate must be for ``arith`` to land on either side.
    Measured on OpenVINO CPU (fp32): scale 0.33333334f, tf_half_pixel_for_nn, 0.5/s = 1.49999996 exactly but
    1.5 in float32, so round_prefer_ceil reads index 2 where the exact pick is 1; and on onnxruntime: scale
    0.4f, asymmetric floor, output 2 has exact source 4.99999993 but float32 5.0."""
    return (abs(src) + 1) * _REACH[arith]


def coarser(a: str, b: str) -> str:
    """The less precise of two arithmetics: it decides which ties two frameworks can resolve differently."""
    return max(a, b, key=ARITH_ORDER.index)


def window_radius(sampler: Sampler) -> int:
    return 1 if sampler.kind == "linear" else 2


def stretch(sampler: Sampler, filter_scale: Fraction, clamp: bool = True) -> Fraction:
    """f = min(scale, 1) under antialias (linear/cubic), else 1. ``clamp=False`` (OpenVINO's LINEAR, see
    ``filter_stretch``): f = scale, so an up-sampled axis (f > 1) gets a triangle narrower than one input
    step."""
    if sampler.antialias and sampler.kind != "nearest":
        return min(filter_scale, Fraction(1)) if clamp else filter_scale
    return Fraction(1)


def tap_count(sampler: Sampler, filter_scale: Fraction, clamp: bool = True) -> int:
    if sampler.kind == "nearest":
        return 1
    f = stretch(sampler, filter_scale, clamp)
    return 2 * math.ceil(window_radius(sampler) / f)


@dataclass
class TapTable:
    index: np.ndarray  # int64 [out_len, K], already clamped into [0, in_len-1]
    weight: np.ndarray | list  # float64 [out_len, K], or a list of lists of Fractions when exact
    extrapolate: np.ndarray | None  # bool [out_len]: output takes the extrapolation value


def source_coords(axis: BoundAxis) -> list[Fraction]:
    a, b = axis.a, axis.b
    return [a * o + b for o in range(axis.out_len)]


def cache_if_hashable(maxsize: int):
    """``functools.lru_cache`` for a function of IR values, called uncached where an argument does not hash (an
    unhashable field, never in the IR's own values). Numpy arrays in its answer are made read-only: one answer
    serves every caller."""
    def wrap(f):
        @functools.lru_cache(maxsize=maxsize)
        def cached(*args):
            got = f(*args)
            parts = got if isinstance(got, tuple) else vars(got).values() if is_dataclass(got) else ()
            for a in parts:
                if isinstance(a, np.ndarray):
                    a.setflags(write=False)
            return got

        @functools.wraps(f)
        def call(*args):
            try:
                return cached(*args)
            except TypeError:  # an argument that does not hash (lru_cache's own error)
                return f(*args)
        return call
    return wrap


def axis_taps(axis: BoundAxis, sampler: Sampler, exclude_outside: bool, exact: bool = False) -> TapTable:
    """The tap table of one bound axis (read-only: one table serves every caller that asks for the same
    axis, since oracle, proof, probes and decomposition all ask for the same few, in exact arithmetic)."""
    t = _axis_taps_cached(axis, sampler, bool(exclude_outside), bool(exact))
    return TapTable(t.index, [list(w) for w in t.weight], t.extrapolate) if exact else t


@cache_if_hashable(maxsize=4096)
def _axis_taps_cached(axis: BoundAxis, sampler: Sampler, exclude_outside: bool, exact: bool) -> TapTable:
    return _axis_taps(axis, sampler, exclude_outside, exact)


def nearest_indices(axis: BoundAxis, rule: str) -> np.ndarray:
    """``nearest_pick`` of every output's source a*o + b, in exact integer arithmetic over all outputs at once
    (the same picks, without one Fraction per output: proofs ask for thousands of axes). Not clamped."""
    den = math.lcm(axis.a.denominator, axis.b.denominator)
    A, B = int(axis.a * den), int(axis.b * den)
    o = np.arange(axis.out_len, dtype=np.int64)
    # int64 where A*o + B cannot overflow, Python ints (object) beyond.
    big = abs(A) * max(axis.out_len, 1) + abs(B) + 2 * den >= 2**62
    num = (o.astype(object) if big else o) * A + B  # src = num / den
    pick = rounded_quotient(num, den, rule)
    return np.asarray(pick, dtype=np.int64) if not big else np.array([int(v) for v in pick], dtype=object)


def _nearest_taps(axis: BoundAxis, exclude_outside: bool, exact: bool) -> TapTable:
    """Nearest's one-tap table (no extrapolation window): ``nearest_indices`` clamped into the input; under
    exclude_outside a tap outside the input weighs 0, as ``_weights`` gives it."""
    picks = nearest_indices(axis, axis.nearest)
    index = np.asarray(np.clip(picks, 0, axis.in_len - 1), dtype=np.int64).reshape(axis.out_len, 1)
    one = np.ones(axis.out_len, dtype=bool)
    if exclude_outside:
        one = np.asarray((picks >= 0) & (picks < axis.in_len), dtype=bool)
    if exact:
        return TapTable(index, [[Fraction(int(k))] for k in one], None)
    return TapTable(index, one.astype(np.float64).reshape(axis.out_len, 1), None)


def _axis_taps(axis: BoundAxis, sampler: Sampler, exclude_outside: bool, exact: bool) -> TapTable:
    if axis.out_len == 0:  # no output, no taps (an antialias filter at scale 0 would be infinitely wide)
        return TapTable(np.zeros((0, 1), np.int64), [] if exact else np.zeros((0, 1)), None)
    if sampler.kind == "nearest" and axis.valid is None:
        return _nearest_taps(axis, exclude_outside, exact)
    return _window_taps(axis, sampler, exclude_outside, exact)


def _window_taps(axis: BoundAxis, sampler: Sampler, exclude_outside: bool, exact: bool) -> TapTable:
    """The table output by output, from each exact source coordinate (every sampler; the definition)."""
    L = axis.in_len
    srcs = source_coords(axis)
    f = stretch(sampler, axis.filter_scale, axis.stretch_clamp)
    K = tap_count(sampler, axis.filter_scale, axis.stretch_clamp)
    m = K // 2
    index = np.zeros((axis.out_len, K), dtype=np.int64)
    weights: list[list] = []
    # The weights depend only on the source's position past its left neighbour (and, with exclude_outside,
    # on which taps fall outside): a rational scale repeats a few of them, so each is computed once.
    memo: dict = {}
    for o, src in enumerate(srcs):
        if sampler.kind == "nearest":
            taps = [nearest_pick(src, axis.nearest)]
            t = None
        else:
            x0 = math.ceil(src) - 1
            t = src - x0
            taps = [x0 + i for i in range(1 - m, m + 1)]
        inside = tuple(0 <= j < L for j in taps) if exclude_outside else None
        w = memo.get((t, inside))
        if w is None:
            w = memo[(t, inside)] = _weights(sampler, t, f, m, inside)
        index[o] = [min(max(j, 0), L - 1) for j in taps]
        weights.append(w)
    extrap = None
    if axis.valid is not None:
        lo, hi = axis.valid
        extrap = np.array([not (lo <= s <= hi) for s in srcs], dtype=bool)
    if exact:
        return TapTable(index, weights, extrap)
    return TapTable(index, np.array([[float(x) for x in w] for w in weights], dtype=np.float64).reshape(
        axis.out_len, K), extrap)


def _weights(sampler: Sampler, t: Fraction | None, f: Fraction, m: int, inside: tuple | None) -> list:
    """The weights of the 2m taps around a source ``t`` past its left neighbour (t in [0, 1); None for
    nearest's one tap), the filter stretched by 1/f; ``inside``: which taps lie in the input under
    exclude_outside (their weights renormalised), None otherwise."""
    if sampler.kind == "nearest":
        w = [Fraction(1)]
    else:
        if sampler.kind == "linear":
            w = [linear_filter((i - t) * f) for i in range(1 - m, m + 1)]
        else:
            w = [cubic_filter((i - t) * f, sampler.cubic_a) for i in range(1 - m, m + 1)]
        if sampler.antialias:
            total = sum(w)
            # total is 0 only under an unclamped stretch f >= 2, where every tap can be 1/f or more away
            # from the source: OpenVINO's LINEAR then writes 0 (wsum == 0 -> 0; measured on CPU).
            w = [x / total for x in w] if total != 0 else w
    if inside is not None:
        w = [x if ok else 0 * x for x, ok in zip(w, inside)]
        total = sum(w)
        if total != 0:
            w = [x / total for x in w]
    return w


def _vanishing(axis: BoundAxis, sampler: Sampler, src: Fraction, exclude_outside: bool, tol: Fraction) -> bool:
    """True where every filter weight at ``src`` is (within ``tol`` of) zero while the nearest tap sits (within
    ``tol`` of) the edge of the filter's support: the normalised output switches between 0 and a value
    there. Zero weights well inside a gap (every tap further than the support) are robustly 0, not a tie."""
    f = stretch(sampler, axis.filter_scale, axis.stretch_clamp)
    m = tap_count(sampler, axis.filter_scale, axis.stretch_clamp) // 2
    x0 = math.ceil(src) - 1
    t = src - x0
    total, nearest = Fraction(0), None
    for i in range(1 - m, m + 1):
        if exclude_outside and not 0 <= x0 + i < axis.in_len:
            continue
        d = (i - t) * f
        total += linear_filter(d) if sampler.kind == "linear" else cubic_filter(d, sampler.cubic_a)
        nearest = abs(d) if nearest is None else min(nearest, abs(d))
    tol_w = tol * f
    return nearest is not None and abs(total) <= tol_w and nearest <= window_radius(sampler) + tol_w


def tie_indices(axis: BoundAxis, sampler: Sampler, arith: str = "exact",
                exclude_outside: bool = False) -> list[int]:
    """Output indices whose exact source coordinate sits on a discontinuity of the sampler: a nearest
    rounding boundary, the edge of tf_crop_and_resize's valid range, or (an unclamped antialias stretch
    only) a point where every filter weight vanishes, so the normalised output jumps between 0 and a
    value. Only these can change when a framework evaluates coordinates in floating point instead of
    exactly: exactly on such a point, or (``arith`` fp32/fp64) within that arithmetic's reach of it."""
    out = []
    if axis.a == 1 and axis.b == 0 and axis.in_len == axis.out_len and axis.valid is None:
        return out  # a copy (an axis that is only zero-padded): no coordinate is computed
    unclamped = sampler.antialias and sampler.kind != "nearest" and not axis.stretch_clamp
    for o, src in enumerate(source_coords(axis)):
        tol = near_tolerance(src, arith)
        if sampler.kind == "nearest" and is_tie(src, axis.nearest, tol):
            out.append(o)
        elif axis.valid is not None and axis.in_len > 1 and any(abs(src - e) <= tol for e in axis.valid):
            out.append(o)
        elif unclamped and _vanishing(axis, sampler, src, exclude_outside, tol):
            # OpenVINO LINEAR, stretch f >= 2 on an up-sampled axis: at |src - nearest tap| = 1/f every
            # weight is 0 (output 0) but float32 leaves one weight ~1e-7, which normalises to 1. Measured:
            # rank 5, H 2->10 half_pixel, src(1) = -1/5 exactly, -0.19999999 in float32 -> x[0], not 0.
            out.append(o)
    return out


def float32_reaches_ties(axis: BoundAxis) -> bool:
    """Whether float32 computes every exact nearest tie of ``axis`` exactly: the spec's ``dst / scale`` with b = 0
    (asymmetric) and a scale that is a float32 value is one correctly rounded division, so an integer or
    half-integer quotient (below 2^23) comes out exact and the rounding mode decides it as the spec does. Near
    ties (an exact source just off a boundary) are another matter: ``tie_indices`` with a float arithmetic."""
    a, b = Fraction(axis.a), Fraction(axis.b)
    if b != 0 or a <= 0 or axis.out_len >= 2 ** 23:
        return False
    scale = 1 / a
    return Fraction(float(np.float32(float(scale)))) == scale


def integer_taps(axis: BoundAxis, sampler: Sampler, exclude_outside: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """The tap table with its weights as integer numerators over one denominator: (index [O, K],
    numerators [O, K] as Python ints in an object array, D) with weight = numerator / D exactly. Integer
    outputs accumulate these exactly and round once (oracle and decomposition alike): float64 weights can
    put an exact half on the wrong side (251/2 with sevenths in the cubic weights came out below 125.5)."""
    t = axis_taps(axis, sampler, exclude_outside, exact=True)
    D = 1
    for row in t.weight:
        for w in row:
            D = D * w.denominator // math.gcd(D, w.denominator)
    num = np.array([[int(w * D) for w in row] for row in t.weight], dtype=object).reshape(t.index.shape)
    return t.index, num, D
