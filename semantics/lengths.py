"""Output-length rules: how each framework rounds L * scale to an output length (``output_length``), and up to
which input length a rule is the exact floor (``floor_agrees_below``). Ported to C++ with ``coords`` in
lowering/kernels/rb/bind.hpp."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from .errors import BridgeError


# Significand bits of the float products a size rule rounds L * s in (floor_fp32: onnxruntime; floor_fp64: PyTorch).
_PRODUCT_BITS = {"floor_fp32": 24, "floor_fp64": 53}


def floor_agrees_below(scale: Fraction, rule: str) -> float:
    """An input length below which ``output_length(L, scale, rule)`` is the exact floor(L * scale) for every L
    (0 where none is known): the float product of L and a binary scale n / 2^E (n odd) is exact while L * n
    stays below 2^24 (float32) or 2^53 (float64), so a form computing the exact floor holds there; any length for
    "floor" itself; OpenVINO's floor_eps at scale 1, and below its first length off (``_floor_eps_agrees_below``)
    at an integer scale."""
    scale = Fraction(scale)
    if rule == "floor" or (rule == "floor_eps" and scale == 1):
        return math.inf
    if rule == "floor_eps":
        return _floor_eps_agrees_below(scale) if scale.denominator == 1 and scale > 0 else 0
    bits = _PRODUCT_BITS.get(rule)
    if bits is None or scale <= 0 or scale.denominator & (scale.denominator - 1):
        return 0
    n = scale.numerator >> ((scale.numerator & -scale.numerator).bit_length() - 1)  # its odd part
    return -(-(1 << bits) // n)


@functools.lru_cache(maxsize=64)
def _floor_eps_agrees_below(k: Fraction) -> int:
    """The first input length at which OpenVINO's scales-mode output length (``output_length``'s floor_eps) is not
    k * L, for an integer k, counted length by length up to 2^24 / k (float32 L * k is exact below): the 1e-6 it
    adds to k reaches an integer well before 10^6 (measured on CPU: L = 983040 at k = 2 gives 1966081; k = 16 from
    L = 393216)."""
    k = int(k)
    top = (1 << 24) // k
    for start in range(1, top + 1, 1 << 20):
        lengths = np.arange(start, min(start + (1 << 20), top + 1), dtype=np.int64)
        off = np.flatnonzero(_floor_eps(lengths, k) != lengths * k)
        if off.size:
            return int(lengths[off[0]])
    return top + 1


def output_length(in_len: int, scale: Fraction, rule: str) -> int:
    if rule == "floor":
        return math.floor(in_len * scale)
    if rule == "round":
        return round(in_len * scale)  # Fraction.__round__: half to even
    if rule == "floor_eps":
        # OpenVINO 2026.4 (ov::util::dim::scale): s != 1 -> float32(L) * float32(s + 1e-6f), truncated.
        # Measured on CPU: L=100, s=0.29999998f/0.2999999f/0.299999f -> 30 (ONNX floor: 29), 0.29999f -> 29;
        # 300 random (L, k/L and its float32 predecessor) agree, static and dynamic input shapes.
        return in_len if scale == 1 else int(_floor_eps(np.int64(in_len), scale))
    if rule == "floor_fp32":
        # onnxruntime: static_cast<int64_t>(scale * input_dim) evaluated in float32 (measured: 0.7f * 10 -> 7,
        # where the exact floor of 10 * 0.699999988 is 6).
        return int(np.float32(np.float32(float(scale)) * np.float32(in_len)))
    if rule == "floor_fp64":
        # PyTorch: the float64 product L * s, truncated (vocab.SIZE_RULES).
        return math.floor(float(in_len) * float(scale))
    raise BridgeError(f"unknown size rule {rule!r}", field="size_rule")


def _floor_eps(lengths, scale):
    """OpenVINO's scales-mode output length of ``lengths`` (an int64 scalar or array) at ``scale`` != 1: the
    float32 product float32(L) * float32(float32(s) + 1e-6f), truncated."""
    e = np.float32(np.float32(float(scale)) + np.float32(1e-6))
    return (np.asarray(lengths).astype(np.float32) * e).astype(np.int64)
