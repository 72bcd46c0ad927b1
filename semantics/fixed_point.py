"""8-bit antialias Resize as onnxruntime and PyTorch compute it (``ResizeIR.integer_rounding`` "q22_per_axis"):
Pillow's resampler, one resized axis at a time from the last, each a fixed-point sum rounded and clipped to the
type before the next axis reads it.

Per axis (onnxruntime's ``SetupUpsampleFilterAntiAlias`` and ``ComputeInterpolationAtLevel1/2``, every step in
float32 as there): the source centre c = 0.5 + the coordinate map evaluated in float32 from the float32 scale s
(``_coordinate``); the support R/min(s, 1) (R: 1 linear, 2 cubic) and the window [floor(c - support + 1/2),
floor(c + support + 1/2)), at most 2*ceil(support) + 1 taps, cut to the input (exclude_outside) or with the
weights outside folded onto the edge taps; each tap's weight Pillow's filter of its distance times min(s, 1),
divided by their float32 sum and rounded to a multiple of 2^-22 (half away from zero). Then each output is
floor((2^21 + sum of value x integer weight) / 2^22) clipped to [0, 255]: the sum stays inside int32. An axis
whose length does not change is copied (``equal_length_identity``), and tf_crop_and_resize's outputs whose
float32 source lies outside [0, in - 1] take the extrapolation value after every axis (``static_cast``'s).

PyTorch's uint8 kernel is the same resampler with its own weight precision (one off on about 1% of outputs,
measured against onnxruntime 1.32 / torch 2.14). onnxruntime's int8 path is this resampler too, clipped to
[0, 255], which loses every negative value (``ort_fixed_point_resize``: its convention, named, so that a model
judged against onnxruntime is not taken for misread); the spec reading of int8 keeps the one exact rounding
(``reference``). numpy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .coords import BoundAxis

F32 = np.float32
ONE_HALF = 1 << 21  # the rounding offset of a 2^-22 fixed-point sum
SHIFT = 22
LOW, HIGH = 0, 255  # onnxruntime's clip table (Pillow's clip8), for int8 too
EIGHT_BIT = ("uint8", "int8")


def fixed_point_resize(ir) -> bool:
    """Whether a Resize's spec reading is this resampler: uint8, linear or cubic, antialias (no other IR kind
    antialiases)."""
    return ir.dtype == "uint8" and _antialias(ir)


def ort_fixed_point_resize(ir) -> bool:
    """Whether onnxruntime computes a Resize with this resampler: 8-bit, linear or cubic, antialias. int8 too,
    clipped to [0, 255] like uint8 and each pass cast to int8 (measured, 1.32: -120 -> 0, 129 -> -127), where the
    spec reading rounds the exact sum once and saturates to int8."""
    return ir.dtype in EIGHT_BIT and _antialias(ir)


def _antialias(ir) -> bool:
    return ir.sampler.antialias and ir.sampler.kind in ("linear", "cubic")


def static_cast(v: float, dtype: str) -> int:
    """C++ static_cast of a float to an integer type on x86-64, as onnxruntime writes an extrapolation value:
    truncated toward zero, then wrapped to the type's width (uint8: -7.5 -> 249, 300.6 -> 44)."""
    info = np.iinfo(np.dtype(dtype))
    span = int(info.max) - int(info.min) + 1
    return (int(math.trunc(v)) - int(info.min)) % span + int(info.min)


def to_f32(q: Fraction) -> np.float32:
    """The float32 nearest ``q`` (a float32 value, or a ratio of integers below 2^24 whose float64 rounding can
    never land on a float32 midpoint it is not: the float32 division onnxruntime does)."""
    return F32(float(q))


@dataclass(frozen=True)
class FixedTaps:
    """One axis: taps ``start[o] + k`` weighted ``weight[o, k]`` (integers over 2^22, 0 past the window), and
    ``outside[o]`` (tf_crop_and_resize: the output takes the extrapolation value)."""

    start: np.ndarray
    weight: np.ndarray
    outside: np.ndarray | None

    def index(self, in_len: int) -> np.ndarray:
        """[out, K] tap indices, clamped into the input where the weight is 0."""
        k = np.arange(self.weight.shape[1], dtype=np.int64)
        return np.clip(self.start[:, None] + k[None, :], 0, max(in_len - 1, 0))


def _coordinate(coord: str, i: np.ndarray, s, out: int, inn: int, roi) -> np.ndarray:
    """onnxruntime's ``GetOriginalCoordinateFromResizedCoordinate`` in float32 (its double steps where it has
    them: tf_crop_and_resize at one output, half_pixel_symmetric)."""
    out_f, in_f = F32(out), F32(inn)
    if coord == "asymmetric":
        return i / s
    if coord == "pytorch_half_pixel":
        return (i + F32(0.5)) / s - F32(0.5) if out > 1 else np.zeros_like(i)
    if coord == "tf_half_pixel_for_nn":
        return (i + F32(0.5)) / s
    if coord == "align_corners":
        return np.zeros_like(i) if out == 1 else i * (in_f - F32(1)) / (out_f - F32(1))
    if coord == "tf_crop_and_resize":
        r0, r1 = roi
        if out > 1:
            return r0 * (in_f - F32(1)) + (i * (r1 - r0) * (in_f - F32(1))) / (out_f - F32(1))
        return np.full_like(i, F32(0.5 * float(r0 + r1) * float(in_f - F32(1))))
    if coord == "half_pixel_symmetric":
        adjustment = out_f / (s * in_f)
        offset = (in_f / F32(2)) * (F32(1) - adjustment)
        return (float(offset) + (i.astype(np.float64) + 0.5) / float(s) - 0.5).astype(F32)
    return ((i + F32(0.5)) / s) - F32(0.5)  # half_pixel


def _filter(kind: str, a, x: np.ndarray) -> np.ndarray:
    """Pillow's triangle / Keys filter in float32, onnxruntime's spelling."""
    x = np.abs(x)
    if kind == "linear":
        return np.where(x < 1, F32(1) - x, F32(0)).astype(F32)
    inner = ((a + F32(2)) * x - (a + F32(3))) * x * x + F32(1)
    outer = (((x - F32(5)) * x + F32(8)) * x - F32(4)) * a
    return np.where(x < 1, inner, np.where(x < 2, outer, F32(0))).astype(F32)


def _round_away(v: np.ndarray) -> np.ndarray:
    """std::round: half away from zero (exact on float32 values, which float64 holds)."""
    v = v.astype(np.float64)
    return (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(np.int64)


def axis_taps(axis: BoundAxis, coord: str, kind: str, cubic_a, exclude_outside: bool, roi=None) -> FixedTaps:
    """The fixed-point taps of one resized axis (module note). ``roi``: the axis' (start, end) as exact
    rationals, tf_crop_and_resize only; ``cubic_a``: Keys' coefficient (a float32 value)."""
    inn, out = axis.in_len, axis.out_len
    s = to_f32(axis.filter_scale)
    scale = F32(1) / s
    support = (F32(2 if kind == "linear" else 4) * F32(0.5))
    support = support * scale if scale >= 1 else support
    window = int(np.ceil(support)) * 2 + 1
    inv = F32(1) / scale if scale >= 1 else F32(1)
    a = to_f32(cubic_a) if cubic_a is not None else F32(0)
    r = tuple(to_f32(v) for v in roi) if roi is not None else (F32(0), F32(1))
    i = np.arange(out, dtype=F32)
    centre = F32(0.5) + (i if scale == 1 else _coordinate(coord, i, s, out, inn, r))
    lo = np.floor(centre - support + F32(0.5)).astype(np.int64)
    hi = np.floor(centre + support + F32(0.5)).astype(np.int64)
    hi = lo + np.clip(hi - lo, 0, window)
    cut_lo, cut_hi = np.clip(lo, 0, inn), np.clip(hi, 0, inn)
    first, last = (cut_lo, cut_hi) if exclude_outside else (lo, hi)
    k = np.arange(window, dtype=np.int64)
    taken = k[None, :] < (last - first)[:, None]
    w = np.where(taken, _filter(kind, a, ((first[:, None] + k[None, :]).astype(F32) - centre[:, None] + F32(0.5))
                                * inv), F32(0)).astype(F32)
    total = np.zeros(out, F32)
    for j in range(window):  # in tap order, as onnxruntime adds them
        total = (total + w[:, j]).astype(F32)
    if not exclude_outside:
        w = np.stack([_folded(w[o], int(first[o]), int(last[o] - first[o]), inn, int(cut_hi[o] - cut_lo[o]))
                      for o in range(out)]) if out else w
    total_inv = (F32(1) / np.where(total == 0, F32(1), total)).astype(F32)  # 1 where the taps sum to 0
    count = cut_hi - cut_lo
    fixed = _round_away((w * total_inv[:, None]).astype(F32) * F32(1 << SHIFT))
    fixed = np.where(k[None, :] < count[:, None], fixed, 0)
    outside = None
    if coord == "tf_crop_and_resize":
        src = (centre - F32(0.5)).astype(F32)
        outside = (src < 0) | (src > F32(inn - 1))
    return FixedTaps(cut_lo, fixed, outside)


def _folded(w: np.ndarray, first: int, n: int, inn: int, kept: int) -> np.ndarray:
    """One output's weights with those outside the input added onto the edge taps (in onnxruntime's order),
    then moved to start at the first tap inside."""
    w = w.copy()
    if kept <= 0:
        return w
    neg = min(max(-first, 0), n - 1)
    for j in range(neg):
        w[neg] = F32(w[neg] + w[j])
    past = min(max(n + first - inn, 0), n - 1)
    for j in range(n - past, n):
        w[n - past - 1] = F32(w[n - past - 1] + w[j])
    if neg or past:
        w[:kept] = w[neg:neg + kept].copy()
    return w


def resample_axis(y: np.ndarray, axis: int, taps: FixedTaps, in_len: int) -> np.ndarray:
    """One axis of integer values ``y`` (int64): each output's fixed-point sum, rounded, clipped."""
    g = np.take(y, taps.index(in_len), axis=axis)  # [.., out, K, ..]
    wshape = (1,) * axis + taps.weight.shape + (1,) * (y.ndim - axis - 1)
    acc = ONE_HALF + (g * taps.weight.reshape(wshape)).sum(axis=axis + 1)
    return np.clip(acc >> SHIFT, LOW, HIGH)


def applies(x: np.ndarray, bound) -> bool:
    """Whether ``bound`` (``coords.BoundResize``) resamples 8-bit ``x`` with this resampler."""
    return bound.integer_rounding == "q22_per_axis" and x.dtype.name in EIGHT_BIT and bound.sampler.kind != "nearest" \
        and x.size > 0


def run(x: np.ndarray, bound) -> np.ndarray:
    """The resampler (``applies``): the resized axes from the last, each rounded and clipped; then the
    extrapolated outputs (tf_crop_and_resize), the value cast as onnxruntime casts it."""
    if 0 in bound.out_shape:
        return np.zeros(bound.out_shape, x.dtype)
    s = bound.sampler
    y = x.astype(np.int64)
    outside = []
    for axis in sorted(bound.axes, key=lambda a: -a.axis):
        taps = axis_taps(axis, bound.coord, s.kind, s.cubic_a, bound.exclude_outside, axis.roi)
        # each pass held in the element type before the next reads it (int8: [0, 255] wraps past 127, measured)
        y = resample_axis(y, axis.axis, taps, axis.in_len).astype(x.dtype).astype(np.int64)
        if taps.outside is not None:
            outside.append((axis.axis, taps.outside))
    value = static_cast(float(bound.extrapolation_value), x.dtype.name)
    for axis, where in outside:
        y = np.where(where.reshape((-1,) + (1,) * (y.ndim - axis - 1)), value, y)
    return y.astype(x.dtype).reshape(bound.out_shape)
