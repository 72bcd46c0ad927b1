"""Rung 2 for Resize, in convolution ops: a static integer-ratio upsampling (r = out/in from 2 to 8 on each resized
spatial axis) as an edge Pad and one depthwise ConvTranspose (GroupConvolutionBackpropData) per axis, cropped by
its pads. OpenVINO's CPU plugin runs these 2-3x faster than Interpolate (measured: linear x2 1x16x160x200).

Why it is exact: the oracle's tap table of the bound axis (``semantics.taps.axis_taps``) is read and checked to
be periodic (``periodic_taps``): output o = r*q + p reads taps first[p] + q + k with weights W[p, k], every index
clamped into the input. Edge padding replicates the border, which is the table's clamping; a ConvTranspose of
stride r with a kernel of K*r taps gives each output exactly K contributions, the same K products the table
sums (a weight 0 too, so 0 * inf is NaN on both sides), its kernel read from W. A table that is not periodic
(align_corners, exclude_outside at a border, a non-integer ratio) is refused with the output where it breaks.

Precision: the kernel is float32 (the float32 of the oracle's exact weights, as the decomposition's). Under a
bf16 inference hint the CPU rounds the input and the kernel to bf16; ``bf16_exact`` says whether every weight
survives that (linear x2/x4, cubic x2 with a = -0.5/-0.75: yes), and the record says so.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ...semantics.compare import compare
from ...semantics.coords import bind_resize
from ...semantics.errors import BridgeError
from ...semantics.ir import has_runtime_params
from ...semantics.taps import axis_taps
from ..passes import Candidate, Refusal
from .graph import dims, ops, tag

FORM = "conv"
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

    def conv(self) -> tuple[str, int, tuple[int, int]]:
        """(the depthwise op, its stride, its (begin, end) pads) along the axis: a ConvTranspose cropped by its
        pads (up), a strided convolution of the span the Pad left (down)."""
        if self.down:
            return "GroupConvolution", self.step, (0, 0)
        return "GroupConvolutionBackpropData", self.r, self.crop()

    def bf16_exact(self) -> bool:
        w = self.kernel()
        return bool(np.array_equal(w, _to_bf16(w)))


def _to_bf16(w: np.ndarray) -> np.ndarray:
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


# The in-graph choice between this form and Interpolate: None follows the cost model; "conv" / "builtin" force
# it (the cost model's calibration times each class on its own).
_forced: list = []


@contextlib.contextmanager
def forcing(choice: str):
    _forced.append(choice)
    try:
        yield
    finally:
        _forced.pop()


def forced() -> str | None:
    return _forced[-1] if _forced else None


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


def build(x, axes: list[Periodic], channels: int, rank: int, name: str):
    """Edge Pad, then one depthwise ConvTranspose per axis (stride r, cropped to the output by its pads), or a
    strided depthwise convolution (downsampling)."""
    o = ops()
    begin, end = [0] * rank, [0] * rank
    for ax in axes:
        begin[ax.axis], end[ax.axis] = ax.pads()
    y = x
    if any(begin) or any(end):
        y = o.pad(x, o.constant(np.array(begin, np.int64)), o.constant(np.array(end, np.int64)), "edge").output(0)
        tag(y.get_node(), f"{name}/{FORM}/pad")
    spatial = rank - 2
    for ax in axes:
        d = ax.axis - 2
        kshape = [1] * spatial
        kshape[d] = len(ax.kernel())
        w = o.constant(np.tile(ax.kernel().reshape(kshape), (channels, 1, 1) + (1,) * spatial).reshape(
            [channels, 1, 1] + kshape))
        tag(w, f"{name}/{FORM}/axis{ax.axis}/weights")
        op, stride, (b, e) = ax.conv()
        strides, pb, pe = [1] * spatial, [0] * spatial, [0] * spatial
        strides[d], pb[d], pe[d] = stride, b, e
        make = o.group_convolution if ax.down else o.group_convolution_backprop_data
        conv = make(y, w, strides=strides, pads_begin=pb, pads_end=pe, dilations=[1] * spatial)
        tag(conv, f"{name}/{FORM}/axis{ax.axis}")
        y = conv.output(0)
    return y


def rung(node):
    """Rung 2, the convolution form (``plan``), where the in-graph choice allows it (``forced``)."""
    if forced() == "builtin":
        return Refusal("the convolution form is not asked for here", facts={"quiet": True})
    x = node.inputs[0]
    shape = dims(x)
    got = plan(node.ir, shape)
    if isinstance(got, str):
        return Refusal(f"no convolution form: {got}", facts={"quiet": True})
    out = build(x, got, shape[1], len(shape), node.name)
    ratios = " x ".join(f"/{ax.step}" if ax.down else f"x{ax.r}" for ax in got)
    ops_ = " and ".join(dict.fromkeys("a strided depthwise Conv" if ax.down else "a depthwise ConvTranspose"
                                      for ax in got))
    bf16 = all(ax.bf16_exact() for ax in got)
    reason = (f"edge Pad and {ops_} per axis ({ratios}), kernels from the oracle's periodic tap tables (float32 "
              f"weights, {'exact' if bf16 else 'rounded'} in bf16)")
    return Candidate([out], reason, proof={"form": FORM, "shape": tuple(shape), "bf16_exact_weights": bf16})


def prove(rec, by_tag) -> list[str]:
    """The produced ops re-read against the source IR's tap tables (recomputed here, not taken from the lowering):
    the edge Pad's pads, each convolution's op, stride, crop, group and kernel. The probes prove the numbers."""
    shape = rec.proof["shape"]
    axes = plan(rec.ir, shape)
    if isinstance(axes, str):
        return [f"{rec.node}: the source IR has no convolution form here: {axes}"]
    out = []
    begin, end = [0] * len(shape), [0] * len(shape)
    for ax in axes:
        begin[ax.axis], end[ax.axis] = ax.pads()
    pad = by_tag.get(f"{rec.node}/{FORM}/pad")
    if any(begin) or any(end):
        if pad is None or pad.get_type_name() != "Pad" or pad.get_attributes().get("pad_mode") != "edge":
            out.append(f"{rec.node}: the edge Pad is missing from the produced model")
        elif [list(_const(pad, 1)), list(_const(pad, 2))] != [begin, end]:
            out.append(f"{rec.node}: the edge Pad's pads differ from the source IR's borders")
    for ax in axes:
        op, stride, (pb, pe) = ax.conv()
        conv, fused = _located_conv(by_tag.get(f"{rec.node}/{FORM}/axis{ax.axis}"), op)
        if conv is None or conv.get_type_name() != op:
            out.append(f"{rec.node}: axis {ax.axis}: the {op} is missing from the produced model")
            continue
        a = conv.get_attributes()
        d = ax.axis - 2
        spatial = len(shape) - 2
        want = ([stride if i == d else 1 for i in range(spatial)], [pb if i == d else 0 for i in range(spatial)],
                [pe if i == d else 0 for i in range(spatial)])
        if (list(a["strides"]), list(a["pads_begin"]), list(a["pads_end"])) != want or set(a["dilations"]) != {1}:
            out.append(f"{rec.node}: axis {ax.axis}: the {op}'s stride or crop differs from the taps")
        w = _const(conv, 1)
        if w is None or w.shape[:3] != (shape[1], 1, 1) or not _same_kernel(w.reshape(shape[1], -1), ax.kernel(),
                                                                            fused):
            out.append(f"{rec.node}: axis {ax.axis}: the kernel differs from the source IR's taps")
        elif fused:
            rec.proof["fused_scale"] = "OpenVINO folded a multiply by a per-channel constant before it into the kernel"
    return out


def _located_conv(op, conv_type: str):
    """(the ``conv_type`` op a tag found, whether OpenVINO fused a Multiply by a constant before it into its kernel):
    that fusion (its MultiplyConvolutionBackpropDataFusion, measured on a VAE decoder's x / c -> upsample) makes a
    new kernel Constant and hands the tag to it."""
    if op is None or op.get_type_name() != "Constant":
        return op, False
    users = [i.get_node() for i in op.output(0).get_target_inputs()
             if i.get_node().get_type_name() == conv_type]
    return (users[0], True) if len(users) == 1 else (None, False)


def _same_kernel(got: np.ndarray, kernel: np.ndarray, fused: bool) -> bool:
    """``got`` (channels x taps) is ``kernel`` on every channel; ``fused``: times one factor per channel (the
    fused constant, each product rounded once to float32), zeros where the kernel's are."""
    want = np.tile(kernel, (got.shape[0], 1))
    if not fused:
        return np.array_equal(got, want)
    if not np.array_equal(got == 0, want == 0):
        return False
    nz = kernel != 0
    factor = got[:, nz][:, :1] / kernel[nz][0]
    return compare(got, (factor * want).astype(np.float32), atol=0.0, rtol=4 * 2.0 ** -24).ok


def _const(op, port: int):
    src = op.input_value(port).get_node()
    return src.get_data() if src.get_type_name() == "Constant" else None
