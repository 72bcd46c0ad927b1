"""Rung 3 for linear / cubic Resize (antialias, or one no Interpolate takes) whose lengths are known only at run
time (a dynamic input shape, sizes computed in the graph, or a static scale on a dynamic input): the tap window
of every output computed in the graph from the run-time lengths (``semantics.window_form``, which mirrors
``coords.affine`` and ``taps._window_taps`` / ``taps._weights``), then the K taps of each resized axis gathered
and summed by their weights (``summed_taps``: a K the graph fixes, at most ``UNROLL``, tap by tap, ``tap_by_tap``;
else one Gather of all K and ``tap_sum``: a MatMul by the weights on the next-to-last axis, a Multiply by them
summed by a MatMul by ones on the last, a Multiply and ReduceSum on another). K = 2*ceil(R / f) is itself computed
from the lengths, so any scale has its window (a static scale's K folds to a constant); the Gather's [.., K, out, ..]
([.., out, K, ..] on the next-to-last axis) holds at most 2R*(in + out) elements per row of the other axes (R:
the filter radius).

Precision. Every decision is integer arithmetic: the source's left neighbour and the tap's position (floor
divisions fixed by their integer remainder, ``index_ops.floor_div``: OpenVINO's CPU divides integers in
float32), the filter's support and Keys' piece (comparisons of integer numerators). Only the tap's distance
d = n / den (linear: its weight (den - |n|) / den) is a float32 division of two integers, so no rounding can move
a tap or drop one. The weights' float ops are pinned to f32 (``pinned``: every op of the window marked, quotients
as a * b^e with a run-time e = -1): under a bf16 hint, between two Conv layers, OpenVINO's CPU otherwise ran them
in bf16 (measured 0.0235 off onnxruntime where the static conversion is 0.0028; 14x the bf16 bound at 1009 -> 3001
cubic). Pinned, the window is computed in f32 at every precision hint; only the tap sum (Gather, Multiply,
ReduceSum) runs at the hint's precision, which rounds values only (tests/lowering/test_antialias_dynamic.py).

int32. OpenVINO's CPU runs i64 as i32; the largest intermediate, a tap's numerator (i*r - tn)*fn, stays below
(2R + 4)*in*out, so the form is exact for lengths up to ``MAX_LEN``.

Proof by numbers of the weight subgraph itself (``grid_verdict``): compiled alone on CPU and run for every
(in, out) of ``GRID`` against the oracle's own taps (``window_form.oracle_table``, dense, clamped taps summed);
the rung runs it on the subgraph it builds, and the probes run the whole node against the oracle's output.
"""

from __future__ import annotations

import numpy as np

from ...semantics.ir import ResizeIR, RuntimeValue, is_static
from ...semantics.nearest_index import Linear, NoNearestIndex
from ...semantics.window_form import WindowForm, dense, oracle_table, window_form
from ..compiled.build import cache_root, project_hash
from ..index_form import Verdicts, version_of
from ..passes import Candidate, Refusal
from .graph import dims, ops, tag
from .interpolate import inexact_spellings
from .index_ops import cached_verdict, floor_div, linear, signature, tag_of
from .pinned import GraphValue, pin_f32, quotient, run_time_minus_one
from .nearest_index import _lengths
from .round_bf16 import convert_to

FORM = "antialias_taps"
MAX_LEN = 16000  # (2*2 + 4) * 16000^2 < 2^31: cubic's numerators stay inside int32
# Every (in, out) in 1..16 and extreme ratios both ways (the oracle's exact tables and slopes take 2 s here; the
# lengths near MAX_LEN, 30 s more, are run by tests/lowering/test_antialias_dynamic.py).
GRID = [(i, o) for i in range(1, 17) for o in range(1, 17)] + [(200, 3), (3, 200), (401, 1), (1, 401), (97, 100)]
# Past the error bound's own allowance per weight: a few float32 subnormals (a weight of 0 computed as 0).
WEIGHT_FLOOR = 1e-30
REASON = "window decomposition: tap positions and weights computed in the graph from the run-time " \
         "lengths (integer window, float32 weights), one Gather of the K taps and their weighted sum per axis"


class _Verdicts(Verdicts):
    """The index form's verdict store (memory, and disk per machine), in a file of its own hashed from the
    sources the window's verdicts rest on."""

    def _file(self):
        from pathlib import Path

        if self.sources is None:
            here = Path(__file__).resolve().parent
            self.sources = project_hash(here.parents[1] / "semantics", here / "antialias_taps.py", here / "pinned.py",
                                        here / "nearest_index.py", extra=f"window grid {self.runtime()}")
        return cache_root() / f"window-grid-{self.sources}.json"


VERDICTS = _Verdicts(version_of("openvino"))
_FLOATS = ("float32", "float16", "bfloat16", "float64")  # float64: as float32, as OpenVINO runs it


def applies(node) -> bool:
    """A linear / cubic Resize whose lengths are known only at run time. Without antialias, rung 1 takes most
    (Interpolate fed the run-time sizes); this form takes what it cannot: a batch or channel axis resized
    (``interpolate.outer_resized``), a length one static Interpolate does not hold for every length."""
    ir = node.ir
    return isinstance(ir, ResizeIR) and ir.sampler.kind in ("linear", "cubic") and \
        (not is_static(dims(node.inputs[0])) or isinstance(ir.sizes, RuntimeValue))


def half_width(fd, fn, radius: int):
    """m = ceil(R*fd / fn) (i64 scalars fd, fn > 0): the taps x0 + i, i in 1-m .. m. By the exact integer
    division: a float32 quotient alone ran in bf16 between Conv layers under the bf16 hint (measured: 2 for 3 at in
    175 -> out 87, linear), where a quotient near a whole number rounds across it and drops a tap."""
    o = ops()
    return floor_div(o.add(o.multiply(fd, o.constant(np.int64(radius))),
                           o.subtract(fn, o.constant(np.int64(1)))).output(0), fn)


def window_positions(form: WindowForm, in_len, out_len, taps_axis: int = 0, scale=None):
    """(pos, n, den) of ``WindowForm.table`` in ops for i64 scalars ``in_len``, ``out_len`` (and ``scale``, the
    common scale's (I, S) where the form reads it: ``window_form.aspect_window``): each tap's source position pos
    (i64 [K, out], not yet clamped) and its distance n / den (i64 [K, out] over the i64 scalar den); [out, K]
    where ``taps_axis`` is 1. Integers only (the module note's arithmetic)."""
    o = ops()
    i64 = "i64"
    one, zero = o.constant(np.int64(1)), o.constant(np.int64(0))
    at, by = form.lengths(in_len, out_len, scale)
    p, q, r = (linear(v, *at) for v in (form.p, form.q, form.r))
    fn = o.minimum(by[1], by[0]).output(0) if form.f_min_out else linear(form.fn, *by)
    fd = linear(form.fd, *by)
    if form.out1 is not None:
        at1 = o.equal(out_len, one)
        p = o.select(at1, zero, p).output(0)
        q = o.select(at1, o.constant(np.int64(form.out1.numerator)), q).output(0)
        r = o.select(at1, o.constant(np.int64(form.out1.denominator)), r).output(0)
    same = copy_mask(form, in_len, out_len)
    if same is not None:
        p, q, r = (o.select(same, o.constant(np.int64(v)), s).output(0) for v, s in zip((1, 0, 1), (p, q, r)))
        if not _unstretched(form):  # f = 1 already: a Select would hide its constant K from the graph
            fn, fd = (o.select(same, one, s).output(0) for s in (fn, fd))
    fn = o.maximum(fn, one).output(0)  # out == 0: no output, and no division by 0
    R = form.radius
    m = half_width(fd, fn, R)
    # Taps on the outer axis: the Gather's [.., K, out, ..] then sums K whole planes, which OpenVINO's CPU runs
    # 4-5x faster than a Multiply and ReduceSum over an inner K (measured, Gather + Multiply + ReduceSum of both
    # axes: 2x3x50x64 -> 25x32, K = 8: 101 us vs 476; 1x3x100x100 -> 300x300, K = 4: 1.2 ms vs 4.6); [out, K]
    # (``taps_axis`` 1) for the next-to-last axis' MatMul (``tap_sum``), K next to the last axis.
    along, across = o.constant(np.int64(taps_axis)), o.constant(np.int64(1 - taps_axis))
    x = o.unsqueeze(o.range(zero, out_len, one, i64), along).output(0)  # [1, out] ([out, 1])
    taps = o.unsqueeze(o.range(o.subtract(one, m), o.add(m, one), one, i64), across).output(0)  # [K, 1] ([1, K])
    num = o.add(o.multiply(x, p), q).output(0)
    x0 = floor_div(o.subtract(num, one).output(0), r)
    tn = o.subtract(num, o.multiply(x0, r)).output(0)
    n = o.multiply(o.subtract(o.multiply(taps, r), tn), fn).output(0)
    den = o.multiply(r, fd).output(0)
    return o.add(x0, taps).output(0), n, den


def copy_mask(form: WindowForm, in_len, out_len):
    """Where the form copies the axis (bool scalar: equal lengths, or one element at both), or None."""
    o, one = ops(), ops().constant(np.int64(1))
    if form.copy_equal:
        return o.equal(in_len, out_len).output(0)
    return o.logical_and(o.equal(in_len, one), o.equal(out_len, one)).output(0) if form.copy_one else None


def _den_bound(form: WindowForm) -> int:
    """The largest den = r * fd of the window: the constants' product, else r <= 2 * MAX_LEN and fd <= MAX_LEN
    (``nearest_index._BASE``'s r: 2*out at most; fd: in, or a constant)."""
    r, fd = (v.c_one if not (v.c_in or v.c_out) else None for v in (form.r, form.fd))
    return (r or 2 * MAX_LEN) * (fd or MAX_LEN)


def _unstretched(form: WindowForm) -> bool:
    """The filter is never stretched: f = fn / fd = 1 / 1 at every length (no antialias)."""
    one = Linear(0, 0, 1)
    return not form.f_min_out and form.fn == one and form.fd == one


def window_graph(form: WindowForm, in_len, out_len, taps_axis: int = 0, scale=None):
    """(index i64 [K, out], weight f32 [K, out]) for i64 scalars ``in_len``, ``out_len`` (``scale``: the common
    scale's (I, S) where the form reads it): ``WindowForm.table`` in ops (the same steps, the module note's
    arithmetic); [out, K] where ``taps_axis`` is 1."""
    o = ops()
    zero, one = o.constant(np.int64(0)), o.constant(np.int64(1))
    pos, n, den = window_positions(form, in_len, out_len, taps_axis, scale)
    along = o.constant(np.int64(taps_axis))
    minus_one = run_time_minus_one(in_len, out_len)
    value = lambda v: GraphValue(v.output(0) if hasattr(v, "output") else v, minus_one)  # noqa: E731
    w = form.weights(value(n), value(den), lambda t: value(o.abs(t.v)), lambda c, a, b: value(o.select(c.v, a.v, b.v)),
                     lambda t: value(o.convert(t.v, "f32"))).v
    # At a whole distance n / den (a copied axis, a source on an input element) the filter is exactly 1 at 0 and 0
    # elsewhere, linear and Keys' cubic alike, where the float pieces round (Keys' at a non-dyadic a: 1 + 2^-23)
    if _den_bound(form) <= 1 << 30:  # floor_div's exact range (a static scale's den may pass it: left as is)
        an = o.abs(n).output(0)
        whole = o.equal(o.subtract(an, o.multiply(floor_div(an, den, 1 << 30), den)), zero)
        w = o.select(whole, o.convert(o.equal(n, zero), "f32"), w).output(0)
    last = o.subtract(in_len, one).output(0)
    if form.exclude_outside:
        inside = o.logical_and(o.greater_equal(pos, zero), o.less_equal(pos, last))
        w = o.select(inside, w, o.constant(np.float32(0))).output(0)
    if form.normalise:
        total = o.reduce_sum(w, along, keep_dims=True)
        nonzero = o.not_equal(total, o.constant(np.float32(0)))
        w = o.select(nonzero, quotient(w, o.select(nonzero, total, o.constant(np.float32(1))), minus_one),
                     w).output(0)
    index = o.minimum(o.maximum(pos, zero), last).output(0)
    pin_f32([index, w], [in_len, out_len, *(scale or ())])
    return index, w


# ----------------------------------------------------------------------------------------------------------
# Proof by numbers of the window subgraph, over a grid of lengths


def _standalone(form: WindowForm, taps_axis: int = 0):
    import openvino as ov

    o = ops()
    pi, po = o.parameter([], np.int64, name="in"), o.parameter([], np.int64, name="out")
    index, weight = window_graph(form, pi.output(0), po.output(0), taps_axis)
    return ov.Model([index, weight], [pi, po], "antialias_window")


def grid_verdict(model, ir: ResizeIR, form: WindowForm, fixed: tuple = (None, None),
                 taps_axis: int = 0) -> str | None:
    """None when ``model`` (parameters: the i64 scalars in and out, each unless ``fixed`` gives its value;
    outputs: index [K, out], weight [K, out], or both [out, K] where ``taps_axis`` is 1) gives the oracle's taps
    of ``ir`` (dense, within the error bound's allowance per weight) on OpenVINO CPU for every (in, out) of
    ``GRID`` (out from the static scale where ``form`` has one; the fixed length in place of the grid's), else
    where it does not."""
    return cached_verdict(VERDICTS, (signature(model), form, fixed, taps_axis), model, "window",
                          lambda run: _grid_mismatch(run, ir, form, fixed, taps_axis))


def _grid_mismatch(run, ir: ResizeIR, form: WindowForm, fixed: tuple, taps_axis: int = 0) -> str | None:
    fi, fo = fixed
    pairs = sorted({(fi or i, fo or form.out_len(fi or i, o)) for i, o in GRID})
    for i, o in pairs:
        if o == 0:
            continue
        run.infer([np.array(v, np.int64) for v, f in ((i, fi), (o, fo)) if f is None])
        index, weight = (run.get_output_tensor(k).data for k in (0, 1))
        index, weight = (index.T, weight.T) if taps_axis == 0 else (index, weight)  # [out, K]
        if index.shape != weight.shape or index.shape[0] != o or index.min(initial=0) < 0 or \
                index.max(initial=0) >= i:
            return f"the window subgraph reads outside the input at in={i}, out={o} (shape {index.shape})"
        want, allow = oracle_table(ir, i, o, form.scale)
        why = taps_mismatch(index, weight, i, want, allow, f"in={i}, out={o}")
        if why is not None:
            return why
    return None


def taps_mismatch(index, weight, in_len: int, want, allow, at: str) -> str | None:
    """Where the taps (index, weight) [out, K] of a window subgraph, summed into a dense [out, in] matrix, differ
    from the oracle's ``want`` by more than its allowance ``allow`` (``oracle_table``) and ``WEIGHT_FLOOR``, in
    words naming the lengths ``at``; None where they do not."""
    over = np.abs(dense(index, weight, in_len) - want) - allow
    if over.max() <= WEIGHT_FLOOR:
        return None
    where = np.unravel_index(int(np.argmax(over)), over.shape)
    return f"tap weights differ from the oracle's at {at} (output {where[0]}, input {where[1]}: off by " \
           f"{float(over[where] + allow[where]):.3g}, bound {float(allow[where]):.3g})"


# ----------------------------------------------------------------------------------------------------------
# The rung


def _out_length(node, shape_of, i: int, axis: int, form: WindowForm):
    """(in, out) i64 scalars of the i-th resized axis, tagged as the index form's (``nearest_index._lengths``);
    a static fractional scale P/Q: out = floor(in*P/Q) in int32 (``window_form.MAX_SCALED_IN``)."""
    if form.scale is None or form.scale.denominator == 1:
        return _lengths(node, shape_of, i, axis)
    o = ops()
    zero = o.constant(np.int64(0))
    in_len = o.maximum(o.gather(shape_of, o.constant(np.int64(axis)), zero), zero)
    tag(in_len, tag_of(node.name, axis, "in"))
    P, Q = form.scale.numerator, form.scale.denominator
    out_len = floor_div(o.multiply(in_len, o.constant(np.int64(P))).output(0), o.constant(np.int64(Q)).output(0), Q)
    out_len = o.maximum(out_len, zero)
    tag(out_len, tag_of(node.name, axis, "out"))
    return in_len.output(0), out_len.output(0)


UNROLL = 4  # the most taps ``tap_by_tap`` sums one by one: linear's 2, cubic's 4


def tap_layout(rank: int, axis: int) -> int:
    """Where the window of ``axis`` keeps its taps: [out, K] (1) for the next-to-last axis, summed by a MatMul,
    else [K, out] (0), summed by ``tap_sum``'s Multiply and ReduceSum."""
    return 1 if axis == rank - 2 else 0


def tap_sum(g, weight, rank: int, axis: int):
    """sum_k weight[k, o] * g[.., k, o, ..]: a Multiply and a ReduceSum over K on the outer axes. A MatMul sums
    one pass fewer over the K taps (measured 1x3x480x640 -> 240x320, OpenVINO 2026.4.1, 1 thread, Zen 4): on the
    next-to-last axis, g [.., out, K, last], the weights [out, 1, K] by the taps batched over out (0.92 ms vs
    1.46 at K = 4, 2.02 vs 2.81 at K = 8); on the last axis, g [.., K, out], ones [1, K] by the Multiply (1.35x
    at K = 4 and 8, where the weights' own MatMul would be a dot of K per output, 4x slower). The 1 is squeezed.
    Under a bf16 hint OpenVINO's CPU runs a MatMul in bf16 whatever its rt_info (measured: a PRECISE mark is not
    kept) and the Gather before it with it: the tap sum rounds the values and the (pinned f32) weights once, within
    ``tolerance.reduced_bound`` (tests/lowering/test_antialias_dynamic.py). A Resize standing alone, whose
    Multiply and ReduceSum stayed f32 as the graph's tail, so now rounds to bf16 under that hint (1x3x480x640 ->
    240x320 on N(0, 1): 1.1e-2 off onnxruntime, was 2.4e-7; between two Conv layers 3.3e-3, was 3.0e-3)."""
    o = ops()
    if tap_layout(rank, axis):
        mm = o.matmul(o.unsqueeze(weight, o.constant(np.int64(1))), g, False, False)  # [.., out, 1, last]
        return o.squeeze(mm, o.constant(np.array([axis + 1], np.int64))).output(0)
    if axis == rank - 1:
        k = o.gather(o.shape_of(weight, "i64"), o.constant(np.array([0], np.int64)), o.constant(np.int64(0)))
        ones = o.broadcast(o.constant(np.float32(1)), o.concat([o.constant(np.array([1], np.int64)), k], 0))
        mm = o.matmul(ones, o.multiply(g, weight), False, False)  # [.., 1, out]
        return o.squeeze(mm, o.constant(np.array([axis], np.int64))).output(0)
    tail = list(range(2, 2 + rank - axis - 1))
    w = o.unsqueeze(weight, o.constant(np.array(tail, np.int64))) if tail else weight
    return o.reduce_sum(o.multiply(g, w), o.constant(np.int64(axis)), keep_dims=False).output(0)


def fixed_taps(index, rank: int, axis: int) -> int | None:
    """K where the window's index fixes it in the graph at most ``UNROLL`` (linear 2, cubic 4, no antialias),
    else None (the antialias window's K is computed at run time)."""
    k = index.get_partial_shape()[tap_layout(rank, axis)]
    return k.get_length() if k.is_static and k.get_length() <= UNROLL else None


def summed_taps(name: str, y, index, weight, rank: int, axis: int):
    """One axis of a window form: the taps of ``index`` on ``axis`` summed by ``weight``, tagged where the proof
    finds them (``antialias_proof.taps_read``): tap by tap where K is fixed (``fixed_taps``, ``tap_by_tap``),
    else one Gather of all K taps ([.., K, out, ..]) and ``tap_sum``."""
    K = fixed_taps(index, rank, axis)
    if K is not None:
        y, first = tap_by_tap(y, index, weight, rank, axis, K)
    else:
        first = ops().gather(y, index, ops().constant(np.int64(axis)))
        y = tap_sum(first, weight, rank, axis)
    tag(first, tag_of(name, axis, "gather"))
    tag(y.get_node(), tag_of(name, axis, "sum"))
    return y


def tap_by_tap(y, index, weight, rank: int, axis: int, K: int):
    """(0 + w0 * y[i0] + w1 * y[i1] ..., the first Gather): per tap k its index and weight vectors (a Gather of
    row k of the [K, out] / [out, K] tables), one Gather of ``y`` by them, a Multiply by the weights (unsqueezed
    to [out, 1, ..] on an outer axis) and a running Add, in the taps' order (``taps.tap_sum``'s). Measured
    (1x16x120x160 -> 240x320 linear half_pixel, OpenVINO 2026.4.1, 1 thread, Zen 4): both axes 2.32 ms against
    ``tap_sum``'s 3.55 (onnxruntime 1.55); on the next-to-last axis alone 1.61 ms vs 2.64 at K = 2, 2.82 vs 3.71
    at K = 4: K Gathers of whole rows and one fused sum, where ``tap_sum`` batches K-long dot products. Under a
    bf16 hint the Gathers of the weights run in bf16 (value rounding, within ``tolerance.reduced_bound``)."""
    o = ops()
    along = o.constant(np.int64(tap_layout(rank, axis)))
    trail = o.constant(np.arange(1, rank - axis, dtype=np.int64)) if axis < rank - 1 else None
    total, first = None, None
    for k in range(K):
        pick = o.constant(np.int64(k))
        w = o.gather(weight, pick, along).output(0)
        g = o.gather(y, o.gather(index, pick, along), o.constant(np.int64(axis)))
        first = g if first is None else first
        term = o.multiply(g, o.unsqueeze(w, trail) if trail is not None else w)
        total = term if total is None else o.add(total, term)
    return total.output(0), first


def as_f32(x, ir: ResizeIR):
    """X in the float32 the window's taps are summed in."""
    return x if str(ir.dtype) == "float32" else ops().convert(x, "f32").output(0)


def as_input(y, x, ir: ResizeIR):
    """The window form's f32 result ``y`` in the element type of its input ``x`` (a copy of ``x`` where no axis
    was computed)."""
    if y is x:
        y = ops().convert(x, "f32").output(0)
    return y if str(ir.dtype) == "float32" else convert_to(y, x.get_element_type())


def copied(ir: ResizeIR) -> tuple:
    """The resized axes whose run-time size is X's own length there (``RuntimeValue.same_as_input``) and that
    the oracle copies at equal lengths (the IR's ``equal_length_identity``): nothing to compute."""
    return ir.pinned_axes() if ir.equal_length_identity else ()


def window_refusal(ir: ResizeIR, form) -> Refusal | None:
    """Why the float window ``form`` of ``ir`` (or the reason there is none) cannot lower it, else None."""
    if isinstance(form, NoNearestIndex):
        return Refusal(f"no run-time window form: {form.reason}", form.field)
    if str(ir.dtype) not in _FLOATS:
        return Refusal(f"{ir.dtype}: the run-time window form sums float32 weights (exact integer sums have no "
                       f"run-time form)", "dtype")
    return None


def rung(node, not_native=()):
    """Rung 3 for a linear / cubic antialias Resize with run-time lengths (``applies``)."""
    ir = node.ir
    form = window_form(ir)
    refused = window_refusal(ir, form)
    if refused is not None:
        return refused
    rank, skipped = ir.rank, copied(ir)
    for along in sorted({tap_layout(rank, a) for a in ir.axes if a not in skipped}):
        verdict = grid_verdict(_standalone(form, along), ir, form, taps_axis=along)
        if verdict is not None:
            return Refusal(verdict, "rung")
    x = node.inputs[0]
    y, shape_of = as_f32(x, ir), ops().shape_of(x, "i64").output(0)
    for i, axis in enumerate(ir.axes):
        if axis in skipped:
            continue
        in_len, out_len = _out_length(node, shape_of, i, axis, form)
        index, weight = window_graph(form, in_len, out_len, tap_layout(rank, axis))
        y = summed_taps(node.name, y, index, weight, rank, axis)
    y = as_input(y, x, ir)
    reason = REASON + f", exact for lengths up to {MAX_LEN}" + inexact_spellings(not_native)
    fixed = {axis: _fixed(ir, form, i, dims(x)[axis]) for i, axis in enumerate(ir.axes)}
    return Candidate([y], reason, proof={"form": FORM, "axes": [a for a in ir.axes if a not in skipped],
                                         "copied": list(skipped), "fixed": fixed})


def _fixed(ir: ResizeIR, form: WindowForm, i: int, in_len) -> tuple:
    """(in, out) of the i-th resized axis where known at lowering (None where known only at run time)."""
    if isinstance(ir.sizes, tuple):
        return in_len, int(ir.sizes[i])
    return in_len, (form.out_len(int(in_len)) if in_len is not None and form.scale is not None else None)
