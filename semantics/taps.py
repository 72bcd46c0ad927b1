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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .coords import BoundAxis
from .ir import Sampler

HALF = Fraction(1, 2)


def linear_filter(x):
    x = abs(x)
    return 1 - x if x < 1 else 0 * x


def cubic_filter(x, a):
    """Keys cubic convolution kernel with coefficient ``a``."""
    x = abs(x)
    if x <= 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0 * x


def nearest_pick(src: Fraction, rule: str) -> int:
    """The input index a nearest sampler reads for an exact source coordinate."""
    fl = math.floor(src)
    frac = src - fl
    if rule == "floor":
        return fl
    if rule == "ceil":
        return math.ceil(src)
    if rule == "round_prefer_floor":
        return fl + 1 if frac > HALF else fl
    if rule == "round_prefer_ceil":
        return fl + 1 if frac >= HALF else fl
    if rule == "half_even":
        if frac == HALF:
            return fl if fl % 2 == 0 else fl + 1
        return fl + 1 if frac > HALF else fl
    raise ValueError(f"unknown nearest rounding {rule!r}")


def is_tie(src: Fraction, rule: str) -> bool:
    """True where an inexact evaluation of src could change the nearest pick: exactly on the boundary."""
    frac = src - math.floor(src)
    if rule in ("floor", "ceil"):
        return frac == 0
    return frac == HALF


def window_radius(sampler: Sampler) -> int:
    return 1 if sampler.kind == "linear" else 2


def stretch(sampler: Sampler, filter_scale: Fraction) -> Fraction:
    """f = min(scale, 1) under antialias (linear/cubic), else 1."""
    if sampler.antialias and sampler.kind != "nearest":
        return min(filter_scale, Fraction(1))
    return Fraction(1)


def tap_count(sampler: Sampler, filter_scale: Fraction) -> int:
    if sampler.kind == "nearest":
        return 1
    f = stretch(sampler, filter_scale)
    return 2 * math.ceil(window_radius(sampler) / f)


@dataclass
class TapTable:
    index: np.ndarray  # int64 [out_len, K], already clamped into [0, in_len-1]
    weight: np.ndarray | list  # float64 [out_len, K], or a list of lists of Fractions when exact
    extrapolate: np.ndarray | None  # bool [out_len]: output takes the extrapolation value


def source_coords(axis: BoundAxis) -> list[Fraction]:
    a, b = axis.a, axis.b
    return [a * o + b for o in range(axis.out_len)]


def axis_taps(axis: BoundAxis, sampler: Sampler, exclude_outside: bool, exact: bool = False) -> TapTable:
    """The tap table of one bound axis."""
    L = axis.in_len
    srcs = source_coords(axis)
    f = stretch(sampler, axis.filter_scale)
    K = tap_count(sampler, axis.filter_scale)
    m = K // 2
    index = np.zeros((axis.out_len, K), dtype=np.int64)
    weights: list[list] = []
    for o, src in enumerate(srcs):
        if sampler.kind == "nearest":
            taps = [nearest_pick(src, axis.nearest)]
            w = [Fraction(1)]
        else:
            x0 = math.ceil(src) - 1
            t = src - x0
            taps = [x0 + i for i in range(1 - m, m + 1)]
            if sampler.kind == "linear":
                w = [linear_filter((i - t) * f) for i in range(1 - m, m + 1)]
            else:
                w = [cubic_filter((i - t) * f, sampler.cubic_a) for i in range(1 - m, m + 1)]
            if sampler.antialias:
                total = sum(w)
                w = [x / total for x in w]
        if exclude_outside:
            w = [x if 0 <= j < L else 0 * x for x, j in zip(w, taps)]
            total = sum(w)
            if total != 0:
                w = [x / total for x in w]
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


def tie_indices(axis: BoundAxis, sampler: Sampler) -> list[int]:
    """Output indices whose exact source coordinate sits on a discontinuity of the sampler: a nearest
    rounding boundary, or the edge of tf_crop_and_resize's valid range. Only these can change when a
    framework evaluates coordinates in floating point instead of exactly."""
    out = []
    for o, src in enumerate(source_coords(axis)):
        if sampler.kind == "nearest" and is_tie(src, axis.nearest):
            out.append(o)
        elif axis.valid is not None and src in axis.valid and axis.in_len > 1:
            out.append(o)
    return out
