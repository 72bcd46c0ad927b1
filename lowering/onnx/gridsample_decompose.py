"""Rung 3 for GridSample with a run-time grid: the sampler written in standard ONNX ops (default domain), for
every rank, mode, padding and both align_corners, with every length read from ``Shape`` at run time.

Per spatial axis d (the grid's last axis lists them innermost first):

* coordinate: ``semantics.coords.unnormalize`` evaluated on tensors in float32, one op per step — the IR's
  ``arith="fp32"`` (onnxruntime's GsDenormalize), so a nearest pick lands on the same side of a .5 tie as the
  oracle's bit for bit; nearest then ``Round`` (half to even). Another coordinate arithmetic (OpenVINO's
  ``fp32_fused``, ``exact``) is refused for nearest: float32 steps can read the element next to a tie. Linear
  and cubic take any arithmetic: the error bound covers a coordinate off by a few float32 roundings;
* padding, as ``semantics.reference`` applies it: on the coordinate (border clip; reflection as a triangle wave,
  ``_reflect_float``, exact for the integral coordinates nearest reads below 2^23 and within the bound for
  linear) and then on each integer tap in int64 (zeros: weight 0 outside; border: clamp; reflection:
  ``_reflect_int``, exact for every tap, any number of bounces);
* taps and weights: floor(c) + {0, 1} (linear) or {-1, 0, 1, 2} (cubic), t = c - floor(c) (exact in float32);
  linear weights 1 - t, t; cubic ``semantics.taps.cubic_outer/cubic_inner`` (the oracle's own Keys pieces)
  at distances t + 1, t, 1 - t, 2 - t.

Then every combination of one tap per axis reads ``Gather(X as [N*M, C], n*M + sum_d j_d*stride_d)`` ->
[N, P, C], multiplied by the product of its weights, and the K^D terms are added. A NaN coordinate indexes as
-2^62 (the oracle's ``_to_index``): it reads as an outside tap; its weights stay NaN.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from ...semantics import coords
from ...semantics.errors import BridgeError
from ...semantics.ir import GridSampleIR
from ...semantics.taps import cubic_inner, cubic_outer
from .decompose import PORTABLE

_INDEX_LIMIT = 2.0 ** 62  # the oracle's (reference._to_index): NaN and beyond-range coordinates saturate here
FORM = "gridsample"  # the records' proof["form"]: the proof probes it (``prove_grid``)
REASON = ("GridSample decomposition: grid unnormalised in float32 steps, per-axis taps and weights, padding "
          "on int64 tap indices, one Gather per tap combination (standard ONNX ops, run-time shapes)")


def check_gridsample(ir: GridSampleIR, opset: int | None = None, compute: dict = PORTABLE, picks: tuple = ()) -> str:
    """The arithmetic dtype of the decomposition of ``ir``, or BridgeError naming the field that prevents it.
    ``picks``: the integer types whose nearest sampling the target gathers in their own type (a pick moves an
    element; zeros padding multiplies it by an integer 0 / 1, exact)."""
    dtype = str(ir.dtype)
    if ir.sampler.kind == "nearest" and dtype in picks:
        work = dtype
    else:
        work = compute.get(dtype)
    if work is None or (np.dtype(dtype).kind != "f" and work != dtype):
        raise BridgeError(f"element type {dtype}: the GridSample decomposition computes float types only"
                          + (" (nearest: and the integer types the target gathers exactly)" if picks else ""),
                          field="dtype")
    if ir.sampler.kind == "nearest" and ir.arith != "fp32":
        raise BridgeError(f"nearest: the source unnormalises in {ir.arith} arithmetic, the decomposition in "
                          "float32 steps; next to a .5 tie they read different elements", field="arith")
    if opset is not None and opset < 13:
        raise BridgeError(f"the decomposition needs opset 13; the model imports opset {opset}", field="opset")
    return work


class Builder:
    """Nodes under one name prefix; constants shared by (dtype, value)."""

    def __init__(self, name: str):
        import onnx
        import onnx_graphsurgeon as gs

        self.gs, self.onnx, self.name, self.nodes, self._consts, self._count = gs, onnx, name, [], {}, {}

    def const(self, value, dtype):
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self._consts:
            self._consts[key] = self.gs.Constant(f"{self.name}/c{len(self._consts)}", arr)
        return self._consts[key]

    def op(self, kind: str, suffix: str, inputs, **attrs):
        k = self._count[suffix] = self._count.get(suffix, -1) + 1
        at = f"{self.name}/{suffix}" + (f"_{k}" if k else "")
        out = self.gs.Variable(f"{at}:0")
        self.nodes.append(self.gs.Node(kind, at, attrs, [i.v if isinstance(i, Sym) else i for i in inputs], [out]))
        return out

    def cast(self, v, dtype, suffix: str):
        return self.op("Cast", suffix, [v], to=self.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))


class Sym:
    """A float tensor of the graph with Python's arithmetic, so that semantics' formulas (``unnormalize``,
    ``grid_bounds``, Keys' pieces) are evaluated as nodes: one formula, here and in the oracle."""

    def __init__(self, b: Builder, v, dtype=np.float32):
        self.b, self.v, self.dtype = b, v, dtype

    def _in(self, o):
        if isinstance(o, Sym):
            return o.v
        return self.b.const(float(o) if isinstance(o, Fraction) else o, self.dtype)

    def _bin(self, kind, a, b):
        return Sym(self.b, self.b.op(kind, kind.lower(), [self._in(a), self._in(b)]), self.dtype)

    def __add__(self, o): return self._bin("Add", self, o)
    def __radd__(self, o): return self._bin("Add", o, self)
    def __sub__(self, o): return self._bin("Sub", self, o)
    def __rsub__(self, o): return self._bin("Sub", o, self)
    def __mul__(self, o): return self._bin("Mul", self, o)
    def __rmul__(self, o): return self._bin("Mul", o, self)
    def __truediv__(self, o): return self._bin("Div", self, o)

    def unary(self, kind: str):
        return Sym(self.b, self.b.op(kind, kind.lower(), [self.v]), self.dtype)

    def cmp(self, kind: str, o):
        return self.b.op(kind, kind.lower(), [self.v, self._in(o)])


def _select(b: Builder, cond, yes, no):
    return b.op("Where", "where", [cond, yes, no])


def _clamp_float(c: Sym, hi: Sym) -> Sym:
    """clip(c, 0, hi) that keeps NaN (np.clip's; Clip's NaN is the runtime's business)."""
    low = Sym(c.b, _select(c.b, c.cmp("Less", 0.0), c._in(0.0), c.v))
    return Sym(c.b, _select(c.b, low.cmp("Greater", hi), hi.v, low.v))


def _reflect_float(c: Sym, lo, hi: Sym) -> Sym:
    """``coords.reflect`` as a triangle wave of period 2*(hi - lo): u = c - lo reduced modulo the period (a
    quotient rounded across an integer is corrected by one period: the remainder is exact below 2^23), folded
    back, lo added; the coordinate itself where it lies in [lo, hi]; lo where the range is one point."""
    b = c.b
    rng = hi - lo
    period = rng * 2.0
    safe = Sym(b, _select(b, period.cmp("Greater", 0.0), period.v, c._in(1.0)))
    u = c - lo
    m = u - (u / safe).unary("Floor") * safe
    m = Sym(b, _select(b, m.cmp("Less", 0.0), (m + safe).v, m.v))
    m = Sym(b, _select(b, b.op("Not", "not", [m.cmp("Less", safe)]), (m - safe).v, m.v))
    y = lo + Sym(b, _select(b, m.cmp("Greater", rng), (safe - m).v, m.v))
    y = Sym(b, _select(b, rng.cmp("Greater", 0.0), y.v, c._in(lo) if not isinstance(lo, Sym) else lo.v))
    inside = b.op("And", "and", [b.op("Not", "not", [c.cmp("Less", lo)]), b.op("Not", "not", [c.cmp("Greater", hi)])])
    return Sym(b, _select(b, inside, c.v, y.v))


def _to_index(b: Builder, c: Sym):
    """Integral float -> int64 as the oracle's ``_to_index``: NaN to -2^62, saturated at +-2^62."""
    lim = _INDEX_LIMIT
    v = _select(b, c.cmp("Equal", c), c.v, b.const(-lim, np.float32))
    v = b.op("Clip", "clip", [v, b.const(-lim, np.float32), b.const(lim, np.float32)])
    return b.cast(v, np.int64, "index")


def _reflect_int(b: Builder, j, L, align_corners: bool):
    """``coords.reflect`` of integer taps, in int64 (Mod fmod=0 takes the divisor's sign): period 2L mirrored
    about -1/2 and L - 1/2, or period 2(L-1) about 0 and L-1 (align_corners; one element: always 0)."""
    one = b.const(1, np.int64)
    if align_corners:
        rng = b.op("Sub", "rng", [L, one])
        period = b.op("Mul", "period", [rng, b.const(2, np.int64)])
        period = _select(b, b.op("Less", "less", [period, one]), one, period)
        m = b.op("Mod", "mod", [j, period], fmod=0)
        return _select(b, b.op("Greater", "greater", [m, rng]), b.op("Sub", "fold", [period, m]), m)
    period = b.op("Mul", "period", [L, b.const(2, np.int64)])
    m = b.op("Mod", "mod", [j, period], fmod=0)
    back = b.op("Sub", "fold", [b.op("Sub", "fold", [period, one]), m])
    return _select(b, b.op("Less", "less", [m, L]), m, back)


def _clamp_int(b: Builder, j, last):
    """clip(j, 0, last) on int64 (Max / Min: opset 12)."""
    return b.op("Min", "min", [b.op("Max", "max", [j, b.const(0, np.int64)]), last])


def _axis_taps(b: Builder, ir: GridSampleIR, g: Sym, L, work):
    """``point_taps`` of the grid's float32 coordinates ``g`` on one axis, unnormalised."""
    Lf = Sym(b, b.cast(L, np.float32, "length"))
    scale = Lf
    if ir.sampler.kind == "nearest":
        # The length times a tensor of ones drawn from the grid (0 where g is NaN: NaN either way), so that no
        # step of the unnormalisation is a linear op with constants only: OpenVINO folds a static length into
        # a constant and then re-associates ((g+1)*L - 1)/2 (measured: a point one float32 step above a .5 tie
        # read the other element), which moves a nearest pick; each step must round as the oracle's does.
        scale = Lf * Sym(b, b.cast(g.cmp("Equal", g), np.float32, "ones"))
    return point_taps(b, ir, coords.unnormalize(g, scale, ir.align_corners), L, Lf, work)  # float32 steps: arith fp32


def point_taps(b: Builder, ir, c: Sym, L, Lf: Sym, work):
    """[(index int64 in [0, L-1], weight in ``work`` or None for 1)], the taps of pixel coordinates ``c``
    (float32) on an axis of int64 length ``L`` (``Lf`` as float32), padded as ``ir`` (a GridSampleIR: sampler,
    padding, padding_on, align_corners) says."""
    kind, padding, ac = ir.sampler.kind, ir.padding, ir.align_corners
    last = b.op("Sub", "last", [L, b.const(1, np.int64)])
    lo, hi = coords.grid_bounds(Lf, ac)
    if kind == "nearest":
        # Integral from here on: every padding in int64, exact (on the coordinate or on the tap alike).
        js, fracs = [_to_index(b, c.unary("Round"))], None
    else:
        if ir.padding_on == "coordinate_and_taps" and padding != "zeros":
            outside = b.op("Or", "or", [c.cmp("Less", lo), c.cmp("Greater", hi)])
            moved = _clamp_float(c, Lf - 1.0) if padding == "border" else _reflect_float(c, lo, hi)
            c = Sym(b, _select(b, outside, moved.v, c.v))
        elif kind == "linear" and padding != "zeros":  # the "taps" convention: linear moves the coordinate
            c = _clamp_float(c if padding == "border" else _reflect_float(c, lo, hi), Lf - 1.0)
        fl = c.unary("Floor")
        t = c - fl
        j0 = _to_index(b, fl)
        offsets = (0, 1) if kind == "linear" else (-1, 0, 1, 2)
        js = [j0 if k == 0 else b.op("Add", "tap", [j0, b.const(k, np.int64)]) for k in offsets]
        if work != np.float32:
            t = Sym(b, b.cast(t.v, work, "t"), work)
        if kind == "linear":
            fracs = [1.0 - t, t]
        else:
            a = ir.sampler.cubic_a
            fracs = [cubic_outer(t + 1.0, a), cubic_inner(t, a), cubic_inner(1.0 - t, a), cubic_outer(2.0 - t, a)]
    out = []
    for k, j in enumerate(js):
        w = None if fracs is None else fracs[k]
        if padding == "reflection":
            j = _reflect_int(b, j, L, ac)
        inside = _clamp_int(b, j, last)
        if padding == "zeros":  # a tap the clamp moved is outside: weight 0 (times the clamped element, as the oracle)
            ok = b.op("Equal", "inside", [j, inside])
            w = Sym(b, b.cast(ok, work, "valid"), work) if w is None else \
                Sym(b, _select(b, ok, w.v, b.const(0, work)), work)
        out.append((inside, w))
    return out


def spatial_strides(b: Builder, lengths: list):
    """(the int64 stride of each spatial axis, None for the innermost; the number of elements M)."""
    strides, s = [None] * len(lengths), None
    for d in reversed(range(len(lengths))):
        strides[d] = s
        s = lengths[d] if s is None else b.op("Mul", "stride", [s, lengths[d]])
    return strides, s


def gather_taps(b: Builder, data, base, taps: list, strides: list, rows: bool = False):
    """Sum over every combination of one tap per axis of Gather(data, base + sum_d j_d*stride_d, axis 0) times
    the product of the taps' weights. ``data``: X's elements in one axis (``base``: the offset of each (image,
    channel), broadcast against the taps' indices; one element per index, so nothing of X is read but the taps),
    or with ``rows`` X as rows of channels [R, C] (one row per index; the weights broadcast over C)."""
    i64 = lambda v: b.const(v, np.int64)  # noqa: E731
    acc = None
    for combo in itertools.product(*[range(len(t)) for t in taps]):
        lin, w = None, None
        for d, k in enumerate(combo):
            j, wd = taps[d][k]
            j = j if strides[d] is None else b.op("Mul", "lin", [j, strides[d]])
            lin = j if lin is None else b.op("Add", "lin", [lin, j])
            w = wd if w is None else (w if wd is None else w * wd)
        if not rows:  # int32 from here: the index tensor is as large as the output (OpenVINO computes int64 as
            lin = b.cast(lin, np.int32, "lin32")  # int32 anyway; the rung refuses X of 2^31 elements or more)
        term = b.op("Gather", "gather", [data, b.op("Add", "index", [base, lin])], axis=0)
        if w is not None:
            term = b.op("Mul", "term", [term, b.op("Unsqueeze", "w", [w.v, i64([-1])]) if rows else w.v])
        acc = term if acc is None else b.op("Add", "sum", [acc, term])
    return acc


def decompose_gridsample(graph, ir: GridSampleIR, x, grid, y, name: str, *, compute: dict = PORTABLE,
                         opset: int | None = None, gather: str = "rows", picks: tuple = ()) -> list:
    """Add to ``graph`` (onnx-graphsurgeon) the nodes computing GridSample ``ir`` from Variables ``x`` and
    ``grid`` into ``y`` (which must have no producer); return the nodes added. ``gather``: how X is read, the
    same numbers either way — ``rows`` (X transposed to rows of channels, one row per tap: onnxruntime is 2.4-4x
    faster so) or ``elements`` (one element per tap and channel, nothing of X copied: OpenVINO 1.3x faster on a
    deformable attention, which reads a few hundred points of large maps; tools/dev/bench_decompose.py)."""
    work = np.dtype(check_gridsample(ir, opset, compute, picks)).type
    dtype = np.dtype(ir.dtype)
    D = ir.spatial_rank
    b = Builder(name)
    i64 = lambda v: b.const(v, np.int64)  # noqa: E731
    xs = b.op("Shape", "x_shape", [x])
    gshape = b.op("Shape", "grid_shape", [grid])
    lengths = [b.op("Gather", f"L{d}", [xs, i64(2 + d)], axis=0) for d in range(D)]
    g32 = b.cast(grid, np.float32, "grid_f32")
    if D == 1:
        # [N, P] in one Reshape: OpenVINO's CPU plugin rebuilt a Gather of the one coordinate, with the Reshape
        # before it, into a new Reshape that lost its f32 pin and rounded the grid to bf16 (1.4% of the range off)
        coords = [b.op("Reshape", "g0", [g32, i64([0, -1])])]
    else:
        g3 = b.op("Reshape", "grid_flat", [g32, i64([0, -1, D])])
        coords = [b.op("Gather", f"g{d}", [g3, i64(D - 1 - d)], axis=2) for d in range(D)]
    taps = [_axis_taps(b, ir, Sym(b, g), lengths[d], work) for d, g in enumerate(coords)]
    xw = x if dtype == work else b.cast(x, work, "x_work")
    strides, M = spatial_strides(b, lengths)
    N = b.op("Slice", "N", [xs, i64([0]), i64([1])])
    if gather == "rows":  # X as [N*M, C]: row n*M + flat spatial index; the sum [N, P, C]
        xt = b.op("Transpose", "x_last", [xw], perm=[0] + list(range(2, D + 2)) + [1])
        data = b.op("Reshape", "x_rows", [xt, b.op("Concat", "rows_shape", [i64([-1]), b.op(
            "Slice", "C", [xs, i64([1]), i64([2])])], axis=0)])
        first = b.op("Range", "n", [i64(0), b.op("Squeeze", "N", [N, i64([0])]), i64(1)])
        base = b.op("Reshape", "base", [b.op("Mul", "base", [first, M]), i64([-1, 1])])
    else:  # X's elements in one axis: (n, c, i) at (n*C + c)*M + i; the taps as [N, 1, P]; the sum [N, C, P]
        data = b.op("Reshape", "x_flat", [xw, i64([-1])])
        NC = b.op("ReduceProd", "NC", [b.op("Slice", "NC", [xs, i64([0]), i64([2])])], keepdims=0)
        first = b.op("Reshape", "rows", [b.op("Range", "rows", [i64(0), NC, i64(1)]), b.op(
            "Concat", "rows_shape", [N, i64([-1, 1])], axis=0)])
        base = b.cast(b.op("Mul", "base", [first, M]), np.int32, "base32")  # [N, C, 1]
        taps = [[(b.op("Unsqueeze", "tap", [j, i64([1])]), None if w is None else
                  Sym(b, b.op("Unsqueeze", "w", [w.v, i64([1])]), w.dtype)) for j, w in t] for t in taps]
    acc = gather_taps(b, data, base, taps, strides, rows=gather == "rows")
    if gather == "rows":
        acc = b.op("Transpose", "channels", [acc], perm=[0, 2, 1])
    out_shape = b.op("Concat", "out_shape", [b.op("Slice", "NC", [xs, i64([0]), i64([2])]),
                                             b.op("Slice", "O", [gshape, i64([1]), i64([1 + D])])], axis=0)
    cur = b.op("Reshape", "out", [acc, out_shape])
    if dtype != work:
        cur = b.cast(cur, dtype, "cast_out")
    b.nodes[-1].outputs = [y]
    graph.nodes.extend(b.nodes)
    return b.nodes


def decomposition_model(ir: GridSampleIR, grid_dtype="float32", *, compute: dict = PORTABLE, opset: int = 20,
                        gather: str = "rows", picks: tuple = ()):
    """The decomposition alone as an ONNX model: inputs ``x`` (``ir.dtype``) and ``grid``, output ``y``, every
    dimension dynamic (the OpenVINO target reads it with OpenVINO's ONNX frontend; tests and benchmarks run it)."""
    import onnx_graphsurgeon as gs

    D = ir.spatial_rank
    x = gs.Variable("x", np.dtype(ir.dtype), ["N", "C"] + [f"s{d}" for d in range(D)])
    grid = gs.Variable("grid", np.dtype(grid_dtype), ["N"] + [f"o{d}" for d in range(D)] + [D])
    y = gs.Variable("y", np.dtype(ir.dtype))
    graph = gs.Graph(inputs=[x, grid], outputs=[y], opset=opset)
    decompose_gridsample(graph, ir, x, grid, y, "gridsample", compute=compute, opset=opset, gather=gather,
                         picks=picks)
    model = gs.export_onnx(graph, do_type_check=False)
    model.ir_version = 10
    return model


__all__ = ["FORM", "REASON", "Builder", "Sym", "check_gridsample", "decompose_gridsample", "decomposition_model",
           "gather_taps", "point_taps", "spatial_strides"]
