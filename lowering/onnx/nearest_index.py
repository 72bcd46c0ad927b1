"""Rung 3 for nearest Resize whose lengths are known only at run time: the source index of every output position
computed in the graph by exact integer arithmetic from the run-time lengths, then one Gather per resized axis.

The formula is ``semantics.nearest_index`` (floor((p*x + q) / r) clamped to [0, in-1], p, q, r
integer-linear in (in, out)); here it is written in plain ONNX ops on int64 scalars: in = Gather(Shape(X), axis),
out = Gather(sizes, i) (or the static size, or in*k for a static integer scale k), x = Range(0, out, 1). No float
coordinate, so no float32 rounding boundary: exact for every dtype a Gather moves.

Arithmetic. ONNX's integer Div truncates toward zero, so every floor division is ``Div(n - Mod(n, r), r)`` with
``Mod`` fmod=0 (the divisor's sign, r > 0): the Div is then exact, whichever way a runtime rounds. The graph never
forms p*x + q: with p = a*r + b and q = c*r + d (0 <= b, d < r, reduced once on scalars) the index is
a*x + c + floor((b*x + d) / r), whose largest intermediate b*x + d stays below r*out <= 4*out^2. In int64
(onnxruntime, any conforming runtime) that is exact for every length; computed in int32 it would stay exact for
output lengths up to ``INT32_MAX_OUT`` (the bound TensorRT's record states). Clamps are Where/Less/Greater rather
than Min/Max/Clip, which take integers only from opset 12.

The proof (``prove.prove_index``) cuts the index subgraph of each axis out of the written model, its two lengths
made inputs, and runs it on onnxruntime over ``GRID`` against ``oracle_nearest_indices`` (``grid_verdict``).
"""

from __future__ import annotations

import numpy as np

from ...semantics.errors import first_line
from ...semantics.nearest_index import NearestIndex, integer_scales
from ...semantics.ir import ResizeIR, RuntimeValue, is_static
from ..index_form import GRID as _GRID, INT32_MAX_OUT, Verdicts, axis_key, copied_axes, form_of, grid_mismatch, \
    version_of
from ..model_check import import_onnxruntime
from ..passes import Candidate, Refusal

# The shared grid, and pairs past the int32 bound: int64 must stay exact there.
GRID = _GRID + [(30001, 30000), (100000, 3)]
FORM = "nearest_index"
REASON = ("index decomposition: source indices computed in int64 from the run-time lengths (Shape, Range, "
          "Mul/Add, floor division by Mod/Div, Where clamps), one Gather per resized axis")
# Intermediates stay below r*out <= 4*out^2 (module note): int64 holds them for every length a tensor can have.
EXACT_INT64 = "; exact for every length (int64: no intermediate reaches 4*out^2)"
_VERDICTS = Verdicts(version_of("onnxruntime"))


def index_name(name: str, axis: int, part: str) -> str:
    """Where the proof finds axis ``axis``'s nodes: ``gather`` (the data), ``in`` / ``out`` (the lengths)."""
    return f"{name}/index{axis}/{part}"


def runtime_lengths(ir: ResizeIR) -> bool:
    """Lengths known only at run time: some input length unknown here or sizes fed at run time."""
    return not is_static(ir.input_shape) or isinstance(ir.sizes, RuntimeValue)


def candidate(ir, opset: int, *, dtypes=None, reason: str = REASON + EXACT_INT64,
              assumptions: tuple = ()) -> Candidate | Refusal:
    """Rung 3's index form for ``ir`` (``dtypes``: the element types the target's Gather moves; None = any)."""
    form = form_of(ir)
    if isinstance(form, Refusal):
        return form
    if not runtime_lengths(ir):
        return Refusal("static lengths: the tap-table decomposition applies", "input_shape")
    if opset < 11:
        return Refusal(f"the index form needs Range (opset 11); the model imports opset {opset}", "opset")
    if dtypes is not None and str(ir.dtype) not in dtypes:
        return Refusal(f"the target's Gather does not take {ir.dtype} ({', '.join(dtypes)})", "dtype")
    return Candidate(form, reason, assumptions=tuple(assumptions), proof={"form": FORM, "axes": list(ir.axes), "copied": list(copied_axes(ir))})


# ----------------------------------------------------------------------------------------------------------
# The graph (onnx-graphsurgeon)


class _Builder:
    """Nodes under one name prefix, int64 scalar constants shared by value."""

    def __init__(self, name: str):
        import onnx_graphsurgeon as gs

        self.gs, self.name, self.nodes, self._consts, self._count = gs, name, [], {}, {}

    def int64(self, v: int):
        v = int(v)
        if v not in self._consts:
            self._consts[v] = self.gs.Constant(f"{self.name}/i64_{v}".replace("-", "m"), np.asarray(v, np.int64))
        return self._consts[v]

    def op(self, kind: str, suffix: str, inputs, **attrs):
        k = self._count[suffix] = self._count.get(suffix, -1) + 1
        at = f"{self.name}/{suffix}" + (f"_{k}" if k else "")  # unique names: repeated steps get a number
        out = self.gs.Variable(f"{at}:0")
        self.nodes.append(self.gs.Node(kind, at, attrs, list(inputs), [out]))
        return out


def _linear(b: _Builder, f, in_len, out_len, at: str):
    """c_in*in + c_out*out + c_one on int64 scalars (no op for a zero term)."""
    terms = [v if c == 1 else b.op("Mul", f"{at}/mul", [v, b.int64(c)])
             for c, v in ((f.c_in, in_len), (f.c_out, out_len)) if c]
    if f.c_one or not terms:
        terms.append(b.int64(f.c_one))
    acc = terms[0]
    for t in terms[1:]:
        acc = b.op("Add", f"{at}/add", [acc, t])
    return acc


def _floor_div(b: _Builder, n, r, at: str):
    """(floor(n / r), n mod r) for r > 0: Mod fmod=0 takes the divisor's sign, so n - n mod r is a multiple of r
    and the Div is exact (ONNX's integer Div truncates; exact quotients make that moot)."""
    m = b.op("Mod", f"{at}/mod", [n, r], fmod=0)
    return b.op("Div", f"{at}/div", [b.op("Sub", f"{at}/sub", [n, m]), r]), m


def _where(b: _Builder, cond, yes, no, at: str):
    return b.op("Where", f"{at}/where", [cond, yes, no])


def index_nodes(b: _Builder, form: NearestIndex, in_len, out_len, at: str):
    """The index vector [out] (int64) of ``form`` for int64 scalars ``in_len``, ``out_len``."""
    one, zero = b.int64(1), b.int64(0)
    x = b.op("Range", f"{at}/x", [zero, out_len, one])
    r = _linear(b, form.r, in_len, out_len, f"{at}/r")
    # r > 0 wherever the formula is used; r := 1 where it is not (align_corners at out == 1, where out1 takes
    # over; an empty range) keeps a division by zero out of the graph.
    r = _where(b, b.op("Less", f"{at}/r_low", [r, one]), one, r, f"{at}/r")
    a, bb = _floor_div(b, _linear(b, form.p, in_len, out_len, f"{at}/p"), r, f"{at}/p")
    c, d = _floor_div(b, _linear(b, form.q, in_len, out_len, f"{at}/q"), r, f"{at}/q")
    frac, _ = _floor_div(b, b.op("Add", f"{at}/bxd", [b.op("Mul", f"{at}/bx", [x, bb]), d]), r, f"{at}/frac")
    idx = b.op("Add", f"{at}/idx", [b.op("Add", f"{at}/axc", [b.op("Mul", f"{at}/ax", [x, a]), c]), frac])
    if form.out1 is not None:
        idx = _where(b, b.op("Equal", f"{at}/out1", [out_len, one]), b.int64(max(form.out1, 0)), idx, f"{at}/out1")
    # The clamp's sides and the copy only where the formula does not already give them (NearestIndex.needs_*).
    if form.needs_low_clamp():
        idx = _where(b, b.op("Less", f"{at}/below", [idx, zero]), zero, idx, f"{at}/lo")
    if form.needs_high_clamp():
        last = b.op("Sub", f"{at}/last", [in_len, one])
        idx = _where(b, b.op("Greater", f"{at}/above", [idx, last]), last, idx, f"{at}/hi")
    if form.needs_copy():
        idx = _where(b, b.op("Equal", f"{at}/same", [in_len, out_len]), x, idx, f"{at}/copy")
    return idx


def decompose_nearest_index(graph, ir: ResizeIR, x, sizes, y, name: str) -> list:
    """Add to ``graph`` the nodes computing nearest Resize ``ir`` from Variable ``x`` (its run-time ``sizes``
    tensor, when ``ir.sizes`` is one) into ``y`` (which must have no producer); return the nodes added."""
    form = form_of(ir)
    if isinstance(form, Refusal):
        raise ValueError(form.reason)
    b = _Builder(name)
    shape = b.op("Shape", "shape", [x])  # of the original X: gathers on other axes leave an axis' length alone
    cur = x
    copied = copied_axes(ir)  # X's own length at run time, and the oracle copies them: nothing to gather
    for i, axis in enumerate(ir.axes):
        if axis in copied:
            continue
        in_len = b.op("Gather", f"index{axis}/in", [shape, b.int64(axis)], axis=0)
        if isinstance(ir.sizes, RuntimeValue):
            if sizes is None or not sizes.name:
                raise ValueError("the run-time sizes input is missing")
            out_len = b.op("Gather", f"index{axis}/out", [sizes, b.int64(i)], axis=0)
        elif ir.sizes is not None:
            out_len = b.op("Identity", f"index{axis}/out", [b.int64(ir.sizes[i])])
        else:  # a static integer scale k: out = k*in exactly (semantics.nearest_index.integer_scales)
            out_len = b.op("Mul", f"index{axis}/out", [in_len, b.int64(integer_scales(ir)[i])])
        idx = index_nodes(b, form, in_len, out_len, f"index{axis}")
        cur = b.op("Gather", f"index{axis}/gather", [cur, idx], axis=axis)
    if cur is x:  # every axis copied: the node is the identity
        cur = b.op("Identity", "copy", [x])
    b.nodes[-1].outputs = [y]
    graph.nodes.extend(b.nodes)
    return b.nodes


def index_model(form: NearestIndex, opset: int = 13):
    """The index subgraph alone (inputs ``in``, ``out``: int64 scalars; output ``index``), for tests and tools."""
    import onnx
    import onnx_graphsurgeon as gs

    i64 = np.int64
    in_len, out_len = gs.Variable("in", dtype=i64, shape=()), gs.Variable("out", dtype=i64, shape=())
    b = _Builder("nearest_index")
    idx = index_nodes(b, form, in_len, out_len, "index")
    idx.name, idx.dtype, idx.shape = "index", i64, ["out"]
    graph = gs.Graph(nodes=b.nodes, inputs=[in_len, out_len], outputs=[idx], opset=opset)
    model = gs.export_onnx(graph, do_type_check=False)
    model.ir_version = min(model.ir_version, 10)
    onnx.checker.check_model(model)
    return model


# ----------------------------------------------------------------------------------------------------------
# Proof by numbers of an index subgraph, over a grid of lengths


def grid_verdict(model, ir: ResizeIR, in_name: str = "in", out_name: str = "out") -> str | None:
    """None when ``model`` (inputs: the int64 scalars ``in_name``, ``out_name``; first output: the index vector)
    computes the oracle's nearest taps of ``ir`` on onnxruntime for every (in, out) of ``GRID``, else where it
    does not. Verdicts are cached by the serialized subgraph."""
    data = model.SerializeToString()
    key = (data, axis_key(ir), in_name, out_name)
    found, verdict = _VERDICTS.get(key)
    if found:
        return verdict
    try:
        ort = import_onnxruntime()
    except ImportError:
        return "onnxruntime is needed to run the index subgraph over the grid of lengths"
    try:
        sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 -- onnxruntime's own words
        verdict = f"onnxruntime cannot run the index subgraph: {first_line(e)}"
    else:
        verdict = grid_mismatch(ir, GRID, lambda i, o: sess.run(
            None, {in_name: np.array(i, np.int64), out_name: np.array(o, np.int64)})[0])
    _VERDICTS.put(key, verdict)
    return verdict


__all__ = ["EXACT_INT64", "FORM", "GRID", "INT32_MAX_OUT", "REASON", "candidate", "decompose_nearest_index", "form_of",
           "grid_verdict", "index_model", "index_name", "index_nodes", "runtime_lengths"]
