"""Nearest source index for a static scale that is not a whole number, on input lengths known only at run time:
the output length from the node's own size rule, then the index as exact integer arithmetic in (x, in, out).

A binary scale is exactly s = n / 2^E (n odd). Where the user scale enters the coordinate map (scale_source
"user", ONNX's default), 1/s = 2^E / n, so the index is floor((p*x + q) / r) with p, q, r integer constants
(half_pixel: p = 2^(E+1), q = 2^E - n, r = 2n, then the rounding folded in as for sizes); where the map reads
out / in (scale_source "ratio") it is the sizes form of ``nearest_index`` at the computed length (its own bound,
``INT32_MAX_OUT``). The constants pass 2^26, so ``compact`` first looks for a short equivalent fraction over every
x below ``MAX_LEN`` (5/3 for 0.6f: the float32 error decides only exact ties); where there is none (0.999f) a
lowering evaluates p*x + q without forming it (its terms pass 2^37): p = a*r + b, q = c*r + d, and
floor((b*x + d) / r) by a long division over the base-2^DIGIT_BITS digits of x (``DIGITS`` of them, so lengths
below ``MAX_LEN``), every intermediate below 2^(DIGIT_BITS + 1) * r < 2^31 (``MAX_R``).

tests/semantics/test_nearest_scale.py checks ``ScaleIndex.indices`` against the oracle's own taps for every
input length in 1..200 and many float32 scales, each coordinate mode and rounding.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .coords import bind_resize
from .lengths import output_length
from .ir import ResizeIR, RuntimeValue
from .nearest_index import INT32_MAX_OUT, Linear, NearestIndex, NoNearestIndex, _rounded, common_refusal, \
    nearest_index, picks, resolved_simple

DIGIT_BITS = 4
DIGITS = 4
MAX_LEN = 1 << (DIGIT_BITS * DIGITS)  # input and output lengths below this (x has DIGITS digits)
MAX_R = 1 << (30 - DIGIT_BITS)  # a divisor below this keeps R*2^k + digit*b < 2^31
# Size rules with an exact in-graph form: the exact floor (n*in / 2^E by 12-bit halves of n) and the float32
# products of onnxruntime and OpenVINO (the same floor after half the unit float32 rounds n*in to).
SIZE_RULES = ("floor", "floor_fp32", "floor_eps")
# floor(in*n / 2^E) splits n into two halves of this many bits, so in*half stays below 2^(16+12).
HALF_BITS = 12


@dataclass(frozen=True)
class ScaleIndex:
    """One resized axis: out = output_length(in, scale, size_rule), then ``form`` at (in, out)."""

    scale: Fraction
    size_rule: str
    form: NearestIndex

    def out_len(self, in_len: int) -> int:
        return output_length(int(in_len), self.scale, self.size_rule)

    def indices(self, in_len: int):
        """The index table (int64 [out]) in numpy: what a lowering computes in the graph."""
        return self.form.indices(int(in_len), self.out_len(in_len))

    @property
    def constant(self) -> bool:
        """p, q, r are constants (the user scale's map); else the sizes form's, in (in, out)."""
        return all(f.c_in == 0 and f.c_out == 0 for f in (self.form.p, self.form.q, self.form.r))

    @property
    def max_out(self) -> int:
        """The largest output length the int32 arithmetic holds: ``MAX_LEN`` - 1 for the long division, the sizes
        form's bound where p, q, r come from the lengths."""
        return MAX_LEN - 1 if self.constant else INT32_MAX_OUT

    def max_in(self) -> int:
        """The largest input length below ``MAX_LEN`` whose output length is at most ``max_out``."""
        lo, hi = 1, MAX_LEN - 1
        while lo < hi:  # out is non-decreasing in in
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if self.out_len(mid) <= self.max_out else (lo, mid - 1)
        return lo


# The largest divisor of a compacted index form: b*x + d then stays below COMPACT_R * MAX_LEN = 2^30, so one float32
# quotient fixed by its remainder divides it (the sizes form's arithmetic, far fewer ops than the long division).
COMPACT_R = 1 << 14


@functools.lru_cache(maxsize=None)
def compact(p: int, q: int, r: int) -> tuple[int, int, int]:
    """(p', q', r') with floor((p'*x + q') / r') == floor((p*x + q) / r) for every x in [0, MAX_LEN) and r' below
    ``COMPACT_R``, else (p, q, r). A float32 scale's 1/s is a short fraction (5/3 for 0.6f) moved by 2^-24, which
    only decides the exact ties, so a convergent of p/r (or a small multiple, for the room the ties need) with
    the offset q' chosen from the whole range is found for the usual scales; the check is exhaustive."""
    x = np.arange(MAX_LEN, dtype=np.int64)
    k = (p * x + q) // r  # p < MAX_LEN * r < 2^42 (``_axis``): p*x stays inside int64
    dens, (h0, h1), rest = [], (1, 0), Fraction(p, r)
    while len(dens) < 24:  # continued fraction of p/r: the denominators of its convergents
        a = rest.numerator // rest.denominator
        h0, h1 = h1, a * h1 + h0
        dens.append(h1)
        if rest == a or h1 >= COMPACT_R:
            break
        rest = 1 / (rest - a)
    for den in sorted({m * d for d in dens for m in range(1, 9) if m * d < COMPACT_R}):
        for p2 in {p * den // r, -(-p * den // r)}:
            lo, hi = int(np.max(k * den - p2 * x)), int(np.min((k + 1) * den - 1 - p2 * x))
            if lo <= hi:
                return p2, lo, den
    return p, q, r


# src = (p*x + q) / r for the user scale n/m (``coords.affine`` with scale n/m, formula length out).
def _user_map(coord: str, n: int, m: int):
    if coord == "asymmetric":
        return Linear(0, 0, m), Linear(0, 0, 0), Linear(0, 0, n)  # x*m/n
    if coord == "tf_half_pixel_for_nn":
        return Linear(0, 0, 2 * m), Linear(0, 0, m), Linear(0, 0, 2 * n)  # (2x+1)*m / 2n
    # half_pixel; pytorch_half_pixel apart from out == 1; half_pixel_symmetric with the integer formula length
    return Linear(0, 0, 2 * m), Linear(0, 0, m - n), Linear(0, 0, 2 * n)  # ((2x+1)*m - n) / 2n


def _formula_length_refusal(ir: ResizeIR, s: Fraction) -> NoNearestIndex | None:
    """The fractional formula length in*s enters align_corners always and pytorch_half_pixel where in*s == 1
    (s = 1/2^E): no constant form then; half_pixel_symmetric's has its own (``CentredIndex``) for the user scale."""
    if ir.formula_length != "fractional":
        return None
    if ir.coord == "align_corners" or (ir.coord == "pytorch_half_pixel" and s.numerator == 1) or \
            (ir.coord == "half_pixel_symmetric" and ir.scale_source == "ratio"):  # the ratio's map, the user's offset
        return NoNearestIndex(f"{ir.coord} divides by the fractional output length in*{float(s)}",
                              "formula_length")
    return None


def _int32_refusal(s: Fraction, p: int, r: int) -> NoNearestIndex | None:
    """Why floor((p*x + q) / r) leaves the lowerings' int32 arithmetic (a divisor from ``MAX_R``, a step from
    ``MAX_LEN``), or None."""
    if r >= MAX_R or p // r >= MAX_LEN:
        return NoNearestIndex(f"scale {float(s)} = {s.numerator}/{s.denominator}: the index's divisor {r} or step "
                              f"{p // r} leaves int32 arithmetic", "scales")
    return None


# A rule seen from the input's far end: pick(in-1 - y) = in-1 - pick'(y) (a tie goes the other way)
MIRRORED = {"floor": "ceil", "ceil": "floor", "round_prefer_floor": "round_prefer_ceil",
           "round_prefer_ceil": "round_prefer_floor"}


@dataclass(frozen=True)
class CentredIndex(ScaleIndex):
    """half_pixel_symmetric at its fractional output length in*s (ONNX's formula, onnxruntime's): the source
    x = (in-1)/2 + (2o+1-out) / (2s) reads in and out through its centring offset, so no constant (p, q, r) holds.
    The map is symmetric about the input's centre: with s = n/m, c = (in-1) mod 2, B = (in-1-c)/2 and
    a = |2o+1-out|, an output on the far half (2o+1 >= out) has x = B + v and one on the near half
    x = in-1 - (B + v), v = (a*m + c*n) / (2n), where the mirrored rule picks. Each pick of v is a constant
    floor((p*a + q) / r), a < out below ``MAX_LEN``: ``picks[mirrored][c]`` (compacted as the user scale's)."""

    picks: tuple = ()

    @property
    def constant(self) -> bool:
        return True

    def indices(self, in_len: int):
        last, out = int(in_len) - 1, self.out_len(in_len)
        n = 2 * np.arange(out, dtype=np.int64) + 1 - out
        a, c = np.abs(n), last % 2
        base = (last - c) // 2
        (p, q, r), (pm, qm, rm) = self.picks[0][c], self.picks[1][c]
        idx = np.where(n >= 0, base + (p * a + q) // r, last - base - (pm * a + qm) // rm)
        return np.clip(idx, 0, max(last, 0))


def _centred(ir: ResizeIR, s: Fraction, ratio_form: NearestIndex) -> CentredIndex | NoNearestIndex:
    n, m = s.numerator, s.denominator
    picks = []
    for rule in (ir.sampler.nearest, MIRRORED[ir.sampler.nearest]):
        row = []
        for c in (0, 1):
            p, q, r = (f.c_one for f in _rounded(Linear(0, 0, m), Linear(0, 0, c * n), Linear(0, 0, 2 * n), rule))
            refused = _int32_refusal(s, p, r)
            if refused is not None:
                return refused
            row.append(compact(p, q, r))
        picks.append(tuple(row))
    return CentredIndex(s, ir.size_rule, ratio_form, picks=tuple(picks))


def _axis(ir: ResizeIR, s: Fraction, ratio_form: NearestIndex) -> ScaleIndex | NoNearestIndex:
    n, m = s.numerator, s.denominator
    if m & (m - 1):  # a whole number too, beside a fractional scale (whole ones alone: ``integer_scales``)
        return NoNearestIndex(f"scale {float(s)} = {n}/{m} is not a binary fraction", "scales")
    if n >= 1 << 2 * HALF_BITS or m.bit_length() - 1 > HALF_BITS + 30:  # every rule's length: the exact floor's
        return NoNearestIndex(f"scale {float(s)} = {n}/{m}: floor(in*s) needs more than a float32 scale's "
                              f"24 bits in int32", "scales")
    refused = _formula_length_refusal(ir, s)
    if refused is not None:
        return refused
    if ir.formula_length == "fractional" and ir.coord == "pytorch_half_pixel":
        ratio_form = dataclasses.replace(ratio_form, out1=None)  # in*s != 1 here: out == 1 reads the map
    if ir.scale_source == "ratio" or ir.coord == "align_corners":  # align_corners reads out and in only
        return ScaleIndex(s, ir.size_rule, ratio_form)
    if ir.coord == "half_pixel_symmetric" and ir.formula_length == "fractional":
        return _centred(ir, s, ratio_form)
    p, q, r = _rounded(*_user_map(ir.coord, n, m), ir.sampler.nearest)
    refused = _int32_refusal(s, p.c_one, r.c_one)
    if refused is not None:
        return refused
    p, q, r = (Linear(0, 0, v) for v in compact(p.c_one, q.c_one, r.c_one))
    return ScaleIndex(s, ir.size_rule, dataclasses.replace(ratio_form, p=p, q=q, r=r))


def scale_indices(ir: ResizeIR) -> tuple[ScaleIndex, ...] | NoNearestIndex:
    """Per resized axis, the exact index form of a nearest Resize whose output lengths come from static scales
    (``nearest_index`` covers whole-number scales; this the rest), or why there is none."""
    ir = resolved_simple(ir)
    refused = common_refusal(ir)
    if refused is not None:
        return refused
    if not isinstance(ir.scales, tuple) or ir.sizes is not None:
        return NoNearestIndex("the output lengths do not come from static scales", "scales")
    if ir.size_rule not in SIZE_RULES:
        return NoNearestIndex(f"the output lengths come from scales by the {ir.size_rule} rule (exact in "
                              f"int32: {', '.join(SIZE_RULES)})", "size_rule")
    # The map of out / in at the computed length: the sizes form, its out == 1 and equal-length rules included.
    ratio_form = nearest_index(dataclasses.replace(ir, scales=None, sizes=RuntimeValue("out")))
    if isinstance(ratio_form, NoNearestIndex):
        return ratio_form
    axes = tuple(_axis(ir, Fraction(s), ratio_form) for s in ir.scales)
    refused = next((a for a in axes if isinstance(a, NoNearestIndex)), None)
    return refused if refused is not None else axes


def oracle_scale_indices(ir: ResizeIR, scale: Fraction, in_len: int):
    """The oracle's own nearest taps (``bind_resize`` + ``taps.axis_taps``) of one axis of ``ir`` resized by the
    static ``scale`` from in_len: what ``ScaleIndex.indices`` must equal (its length is the output length)."""
    return oracle_scale_taps(ir, scale, in_len)[0]


def oracle_scale_taps(ir: ResizeIR, scale: Fraction, in_len: int):
    """(index int64 [out], inside bool [out]) of ``oracle_scale_indices``: ``inside`` False where the tap weighs
    0, a pick outside the input under exclude_outside (``taps._nearest_taps``)."""
    one = dataclasses.replace(ir, rank=1, axes=(0,), sizes=None, scales=(Fraction(scale),), roi=None,
                              input_shape=None, pads=())
    bound = bind_resize(one, (int(in_len),))
    return picks(bound, bound.axes[0] if bound.axes else None, bound.out_shape[0])


__all__ = ["ScaleIndex", "CentredIndex", "scale_indices", "oracle_scale_indices", "oracle_scale_taps", "MAX_LEN"]
