"""The target-neutral half of rung 2's in-graph forms (issue 45): what the convolution form and the matrix form
compute, planned once from the oracle's tap tables (``semantics.taps.axis_taps``); each target only builds its
nodes from the plan and re-reads them (OpenVINO: ``lowering/openvino/conv_rewrite.py``, ``matmul_rewrite.py``;
ONNX: ``lowering/onnx/conv_form.py``).

The convolution form (``plan``): a static integer-ratio upsampling (r = out/in from 2 to 8 on each resized
spatial axis) as an edge Pad and one depthwise ConvTranspose per axis, cropped by its pads; an integer
downsampling (antialias included) as a strided depthwise convolution. Why it is exact: the oracle's tap table of
the bound axis is read and checked to be periodic (``periodic_taps``): output o = r*q + p reads taps first[p] + q +
k with weights W[p, k], every index clamped into the input. Edge padding replicates the border, which is the
table's clamping; a ConvTranspose of stride r with a kernel of K*r taps gives each output exactly K contributions,
the same K products the table sums (a weight 0 too, so 0 * inf is NaN on both sides), its kernel read from W. A
table that is not periodic (align_corners, exclude_outside at a border, a non-integer ratio) is refused with the
output where it breaks.

The matrix form (``dense_plan``): one [out, in] matrix per resized axis whose row holds that output's taps, each
weight at its clamped input index, every other entry an exact 0: exact only where every input element is finite
(``CONDITION``).

Precision: the kernels and matrices are float32 (the float32 of the oracle's exact weights, as the
decomposition's); ``bf16_exact`` says whether every weight survives bf16 (OpenVINO's CPU inference hint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..semantics.coords import bind_resize
from ..semantics.errors import BridgeError
from ..semantics.ir import has_runtime_params
from ..semantics.taps import axis_taps

CONDITION = "every input element is finite (a MatMul row multiplies each input of its axis, and 0 * inf is NaN)"
MAX_MATRIX = 1 << 20  # entries of one axis's matrix (4 MiB of float32): past it the dense form is not weighed
# Coordinate maps src = o / r + b whose b does not read the length: one form serves every run-time length.
LENGTH_FREE = ("asymmetric", "half_pixel", "pytorch_half_pixel")
RATIOS = range(2, 9)  # integer ratios the rewrite takes (up: a ConvTranspose kernel of K*r taps; down: stride r)


@dataclass(frozen=True)
class Periodic:
    """An axis whose tap table repeats with period ``r``: output r*q + p reads input first[p] + step*q + k (k < K,
    clamped) with weight ``weights[p][k]`` (exact Fractions, from the oracle's table). Upsampling: step 1;
    downsampling by an integer: period 1, ``step`` the ratio (a strided convolution)."""

    axis: int
    in_len: int
    out_len: int
    r: int
    first: tuple
    weights: tuple
    step: int = 1

    @property
    def K(self) -> int:
        return len(self.weights[0])

    def unclamped_first(self, o):
        q, p = np.divmod(np.asarray(o), self.r)
        return np.asarray(self.first)[p] + q * self.step

    @property
    def down(self) -> bool:
        return self.step > 1

    def pads(self) -> tuple[int, int]:
        """Edge elements the clamped taps read before and after the input; downsampling: exactly the span the
        strided convolution reads (negative: elements cut off), so that it makes out_len outputs."""
        lo = int(self.unclamped_first(0))
        hi = int(self.unclamped_first(self.out_len - 1)) + self.K - 1 - (self.in_len - 1)
        return (-lo, hi) if self.down else (max(0, -lo), max(0, hi))

    def kernel(self) -> np.ndarray:
        """The ConvTranspose kernel (K*r taps): ConvTranspose output n sums x[n // r - j] * w[n % r + j*r] over
        j < K; output o of the resize is n = o + shift, so phase p sits at (p + s) % r, tap k at j = K-1-k.
        Downsampling: the strided convolution's K taps, in order."""
        if self.down:
            return np.array([float(w) for w in self.weights[0]], np.float32)
        r, K, s = self.r, self.K, self._s()
        w = np.zeros(K * r, dtype=np.float32)
        for p in range(r):
            for k in range(K):
                w[(p + s) % r + (K - 1 - k) * r] = np.float32(float(self.weights[p][k]))
        return w

    def _s(self) -> int:
        """s with first tap index(o) = floor((o + s) / r) + first[0]: the phases before the step."""
        return self.r - sum(1 for f in self.first if f == self.first[0])

    def crop(self) -> tuple[int, int]:
        """(begin, end) pads of the ConvTranspose: its output is (Lp - 1)*r + K*r long, the resize's out_len."""
        lo, hi = self.pads()
        shift = self._s() + self.r * (self.first[0] + lo + self.K - 1)
        total = (self.in_len + lo + hi - 1) * self.r + self.K * self.r
        return shift, total - shift - self.out_len

    def geometry(self) -> tuple[int, tuple[int, int]]:
        """(stride, (begin, end) pads) of the depthwise convolution along the axis: a ConvTranspose cropped by its
        pads (up), a strided convolution of the span the Pad left (down)."""
        return (self.step, (0, 0)) if self.down else (self.r, self.crop())

    def bf16_exact(self) -> bool:
        w = self.kernel()
        return bool(np.array_equal(w, to_bf16(w)))


def to_bf16(w: np.ndarray) -> np.ndarray:
    """``w`` rounded to bfloat16 (to nearest even) and back."""
    bits = w.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def periodic_taps(axis, sampler, exclude_outside: bool) -> Periodic | str:
    """The axis's tap table (the oracle's own) as a ``Periodic``, or why it is not one. Downsampling: where the
    map steps an integer number of inputs per output (src = r*o + b)."""
    L, O = axis.in_len, axis.out_len
    if axis.pad_begin or axis.pad_end:
        return f"axis {axis.axis} is zero-padded first"
    table = axis_taps(axis, sampler, exclude_outside, exact=True) if O else None
    if 0 < O < L and axis.a.denominator == 1 and axis.a in RATIOS:
        return periodic_table(table, axis.axis, L, 1, step=int(axis.a))
    if O % L or O // L not in RATIOS:
        return f"axis {axis.axis}: the ratio {O}/{L} is not an integer from {RATIOS[0]} to {RATIOS[-1]} (up) or " \
               f"the map's step {axis.a} one of them (down)"
    return periodic_table(table, axis.axis, L, O // L)


def periodic_table(t, axis: int, L: int, r: int, step: int = 1) -> Periodic | str:
    """The one periodicity test: ``t`` (an exact ``TapTable`` of an axis of input length ``L``) as a ``Periodic``
    of period ``r`` advancing ``step`` inputs a period, or why not. The rewrite is exact only where every row of
    the table, index and weight of each tap, equals the periodic prediction clamped into the input (the edge
    Pad's reading)."""
    if t.extrapolate is not None and t.extrapolate.any():
        return f"axis {axis}: some outputs take the extrapolation value"
    index, K = np.asarray(t.index), t.index.shape[1]
    O = index.shape[0]
    if step == 1 and O != r * L:
        return f"axis {axis}: {O} outputs are not {r} per input"
    interior = _interior_period(index, r, L)
    if interior is None:
        return f"axis {axis}: no period of {r} outputs reads clear of the borders (input length {L})"
    rows = [interior * r + p for p in range(r)]
    got = Periodic(axis, L, O, r, tuple(int(index[o, 0]) - interior * step for o in rows),
                   tuple(tuple(t.weight[o]) for o in rows), step)
    steps = np.diff(got.first)
    if np.any(steps < 0) or steps.sum() > 1:
        return f"axis {axis}: the first tap does not advance one input per {r} outputs"
    want = np.clip(got.unclamped_first(np.arange(O))[:, None] + np.arange(K), 0, L - 1)
    period = f"period {r}" if step == 1 else f"stride {step}"
    for row in np.flatnonzero(np.any(want != index, axis=1))[:1]:
        return f"axis {axis}: the taps of output {row} are not periodic with {period}"
    for row in range(O):
        if tuple(t.weight[row]) != got.weights[row % r]:
            return f"axis {axis}: the weights of output {row} are not periodic with {period}"
    return got


def _interior_period(index: np.ndarray, r: int, L: int) -> int | None:
    """A q whose r outputs each read K consecutive inputs, middle first: unclamped, since clamping K >= 2 taps
    reads one element twice (one tap, K = 1: strictly inside the input). Which q only decides whether the rewrite
    is found; ``periodic_table`` checks every row against it."""
    K = index.shape[1]
    for q in sorted(range(index.shape[0] // r), key=lambda q: abs(q - index.shape[0] // (2 * r))):
        rows = index[q * r:(q + 1) * r]
        inside = K > 1 or (np.all(rows > 0) and np.all(rows < L - 1))
        if inside and np.all(rows == rows[:, :1] + np.arange(K)):
            return q
    return None


def plan(ir, shape) -> list[Periodic] | str:
    """Each resized axis as a ``Periodic``, or why the node has no convolution form."""
    if has_runtime_params(ir):
        return "the rewrite needs the values of scales / sizes / roi"
    if shape is None or len(shape) < 3 or len(shape) > 5:
        return "ConvTranspose takes ranks 3 to 5"
    if str(ir.dtype) != "float32":
        return f"{ir.dtype}: the convolution form is written for float32"
    resized = set(ir.axes)
    if resized & {0, 1}:
        return "a resized batch or channel axis is not a convolution's spatial axis"
    if shape[1] is None:
        return "the channel count must be static (one kernel per channel)"
    run_time = [a for a in resized if shape[a] is None]
    if run_time and not (isinstance(ir.scales, tuple) and ir.sizes is None and ir.coord in LENGTH_FREE):
        return f"axis {run_time[0]} has a run-time length and the map reads it (scales in {', '.join(LENGTH_FREE)} " \
               "only)"
    # A run-time length: the tables at two lengths must give the same kernels, pads and crop (they do wherever
    # src = o / r + b with b free of the length: then the form is one graph for every length).
    got = [_plan_at(ir, tuple(d if d is not None else n for d in shape)) for n in ((16, 17) if run_time else (1,))]
    if any(isinstance(g, str) for g in got):
        return next(g for g in got if isinstance(g, str))
    if len({tuple((ax.r, ax.first, ax.weights, ax.pads(), ax.crop()) for ax in g) for g in got}) > 1:
        return "the taps change with the run-time length"
    return got[0]


def bound_for_rewrite(ir, shape):
    """``ir`` bound at ``shape`` for a rewrite of its resized axes (this form and the matrix form), or why not:
    a zero-padded input (OpenVINO pads) or nothing resized is no such rewrite."""
    try:
        bound = bind_resize(ir, shape)
    except BridgeError as e:
        return e.message
    if bound.pads and any(bound.pads):
        return "the input is zero-padded first"
    if not bound.axes:
        return "nothing is resized"
    return bound


def _plan_at(ir, shape) -> list[Periodic] | str:
    bound = bound_for_rewrite(ir, shape)
    if isinstance(bound, str):
        return bound
    out = []
    for ax in bound.axes:
        got = periodic_taps(ax, bound.sampler, bound.exclude_outside)
        if isinstance(got, str):
            return got
        out.append(got)
    return out


@dataclass(frozen=True)
class Dense:
    """One resized axis as its [out_len, in_len] float32 matrix."""

    axis: int
    in_len: int
    out_len: int
    matrix: np.ndarray

    def bf16_exact(self) -> bool:
        return bool(np.array_equal(self.matrix, to_bf16(self.matrix)))


def dense_matrix(t, in_len: int) -> np.ndarray:
    """The tap table ``t`` (float weights) as a dense [out, in] float32 matrix: each tap's weight at its index."""
    index, weight = np.asarray(t.index), np.asarray(t.weight, dtype=np.float64)
    m = np.zeros((index.shape[0], in_len), np.float64)
    np.add.at(m, (np.repeat(np.arange(index.shape[0]), index.shape[1]), index.reshape(-1)), weight.reshape(-1))
    return m.astype(np.float32)


def dense_plan(ir, shape) -> list[Dense] | str:
    """Each resized axis as a ``Dense``, in the order applied (the most shrinking first), or why not."""
    if has_runtime_params(ir):
        return "the matrices need the values of scales / sizes / roi"
    if shape is None or any(d is None for d in shape):
        return "the matrices need a static input shape"
    if str(ir.dtype) != "float32":
        return f"{ir.dtype}: the matrix form is written for float32"
    bound = bound_for_rewrite(ir, shape)
    if isinstance(bound, str):
        return bound
    out = []
    for ax in bound.axes:
        if ax.in_len * ax.out_len > MAX_MATRIX:
            return f"axis {ax.axis}: a {ax.out_len} x {ax.in_len} matrix is past {MAX_MATRIX} entries"
        t = axis_taps(ax, bound.sampler, bound.exclude_outside)
        if t.extrapolate is not None and t.extrapolate.any():
            return f"axis {ax.axis}: some outputs take the extrapolation value"
        out.append(Dense(ax.axis, ax.in_len, ax.out_len, dense_matrix(t, ax.in_len)))
    return sorted(out, key=lambda d: (d.out_len / d.in_len, d.axis))


def macs(axes: list[Dense], shape) -> int:
    """Multiply-accumulates of the form on ``shape``: each axis's outputs so far times its input length."""
    cur, total = list(shape), 0
    for d in axes:
        cur[d.axis] = d.out_len
        total += int(np.prod(cur)) * d.in_len
    return total
