"""The ONNX target's proof (the pass's postcondition): the written model, re-read, against the source IR.

* rungs 1-2: the written node re-parsed; onnxruntime's semantics of it diffed against the source IR
  (``rungs.ort_gap``); rung 1 must also parse to the source IR itself;
* rung 3: the Gather / Mul / Where constants, found by node name, equal the tap tables recomputed from the
  source IR (``semantics.taps``), axis by axis, and the source node is gone;
* then each lowered node, cut out of the written model, runs on onnxruntime on probe inputs (random, ramps,
  dtype extremes, integers near 2^24 and .5 ties) against ``semantics.reference.run``: bit-exact for integer
  dtypes, rtol 1e-5 / atol 1e-6 for float32.
"""

from __future__ import annotations

import re

import numpy as np

from ...semantics.coords import bind_resize
from ...semantics.errors import BridgeError
from ...semantics.ir import ResizeIR, has_runtime_params, is_static
from ...semantics.reference import run as oracle
from ...semantics.taps import axis_taps
from ..passes import BUILTIN, DECOMPOSE, PassResult, Refusal
from .decompose import check_decomposable, fill_value, tap_name
from .rungs import ort_gap

TOLERANCE = {"float32": (1e-5, 1e-6), "float16": (1e-3, 1e-3), "float64": (1e-9, 1e-9)}  # (rtol, atol)


def prove(result: PassResult, compute: dict, *, probes: bool = True) -> list[str]:
    """Failures (empty = proven)."""
    from onnx import numpy_helper

    from ...translate.onnx import Graph, parse_model

    model = result.model
    try:
        written = dict(parse_model(model))
    except BridgeError as e:
        return [f"the written model does not parse: {e}"]
    nodes = {n.name: n for n in model.graph.node}
    consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    lowered = [r for r in result.records if not r.refused]
    # Shapes and types of GridSample / DeformConv inputs past X, for their probes (one shape inference).
    graph = Graph(model) if any(not isinstance(r.ir, ResizeIR) for r in lowered) else None
    failures = []
    for rec in lowered:
        if rec.rung == DECOMPOSE:
            why = [f"{rec.node}: the source node is still in the written model"] if rec.node in written else \
                prove_tables(rec.node, rec.ir, nodes, consts, compute)
        else:
            why = _spelled(rec, written, nodes.get(rec.node))
        if not why and probes:
            why = _probe(rec, model, consts, graph)
        failures += why
    return failures


def _spelled(rec, written, node) -> list[str]:
    import onnx

    got = written.get(rec.node)
    if got is None:
        return [f"{rec.node}: not found in the written model"]
    if rec.rung == BUILTIN and got != rec.ir:
        return [f"{rec.node}: changed, though rung 1 leaves it as it is"]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute} if node is not None else {}
    gap = ort_gap(rec.ir, got, attrs)
    if isinstance(gap, Refusal):
        return [f"{rec.node}: as written, {gap.reason}"]
    return [] if list(gap) == list(rec.conditions) else [f"{rec.node}: exact only if {'; '.join(gap)}"]


def prove_tables(name: str, ir, nodes: dict, consts: dict, compute: dict) -> list[str]:
    """The decomposition of Resize ``ir`` named ``name`` in a written model (``nodes``: node name -> NodeProto,
    ``consts``: initializer name -> array) carries the source IR's own tap tables, recomputed here."""
    import onnx

    bound, work = check_decomposable(ir, ir.input_shape, None, compute)  # from the source IR, not the lowering
    found = sorted(int(m.group(1)) for n in nodes if (m := re.fullmatch(re.escape(name) + r"/taps(\d+)/gather", n)))
    if found != sorted(ax.axis for ax in bound.axes):
        return [f"{name}: tap tables for axes {found}, the source resizes axes {[ax.axis for ax in bound.axes]}"]
    out = []
    for ax in bound.axes:
        a = ax.axis
        t = axis_taps(ax, bound.sampler, bound.exclude_outside)
        tail = (1,) * (ir.rank - a - 1)
        gather, mul, where = (nodes.get(tap_name(name, a, p)) for p in ("gather", "mul", "where"))
        attrs = {x.name: onnx.helper.get_attribute_value(x) for x in gather.attribute}
        index = consts.get(gather.input[1])
        if mul is None:  # a one-tap table of weight 1
            ok = t.index.shape[1] == 1 and np.all(t.weight == 1.0) and _equal(index, t.index[:, 0])
        else:
            ok = _equal(index, t.index) and _equal(consts.get(mul.input[1]), t.weight.reshape(t.weight.shape + tail)
                                                   .astype(work))
        if not ok or gather.op_type != "Gather" or attrs.get("axis", 0) != a:
            out.append(f"{name}: axis {a}: the Gather/Mul tables differ from the source IR's taps")
        extrapolates = t.extrapolate is not None and t.extrapolate.any()
        if extrapolates != (where is not None) or (where is not None and not (
                _equal(consts.get(where.input[0]), t.extrapolate.reshape((ax.out_len,) + tail))
                and _equal(consts.get(where.input[1]), fill_value(bound, np.dtype(ir.dtype), work)))):
            out.append(f"{name}: axis {a}: the extrapolation mask or value differs from the source IR's")
    return out


def _equal(got, want) -> bool:
    return got is not None and got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)


# ----------------------------------------------------------------------------------------------------------
# Probes on onnxruntime


def _data_probes(dtype: np.dtype, shape, rng) -> list[np.ndarray]:
    blocks = (np.indices(shape) // 2).sum(0) % 2 == 0  # 2x2.. blocks: filters overshoot at their edges
    if dtype.kind == "f":
        ramp = (np.arange(int(np.prod(shape))) / max(1, int(np.prod(shape)))).reshape(shape)
        big = np.finfo(dtype).max / 16  # large, yet no overshoot or partial sum overflows
        return [rng.uniform(-1, 1, shape).astype(dtype), ramp.astype(dtype),
                np.where(blocks, big, -big).astype(dtype)]
    info = np.iinfo(dtype)
    probes = [rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype),
              np.where(blocks, info.max, info.min).astype(dtype),  # saturation under cubic overshoot
              rng.integers(0, 4, shape).astype(dtype)]  # small values: linear halves are .5 ties
    if info.max > 2**24:  # float32 loses integers past 2^24; float64 must not
        sign = np.where(blocks | (info.min == 0), 1, -1)
        probes.append((sign * (2**24 + rng.integers(-3, 4, shape))).astype(dtype))
    return probes


def _input_probe(op: str, pos: int, dtype, shape, rng) -> np.ndarray:
    lo, hi = {("GridSample", 1): (-1.2, 1.2), ("DeformConv", 2): (-2.5, 2.5), ("DeformConv", 4): (0, 1)}.get(
        (op, pos), (-1, 1))
    return rng.uniform(lo, hi, shape).astype(dtype)


def _probe(rec, model, consts, graph) -> list[str]:
    import onnxruntime as ort

    ir, args = rec.ir, rec.proof["inputs"]
    resize = isinstance(ir, ResizeIR)
    if not rec.proof.get("top_level", True) or has_runtime_params(ir):
        rec.extra["probe"] = "not probed: inside a subgraph or fed run-time parameters (proven on the IR)"
        return []
    dtype = np.dtype(ir.dtype)
    fed = {args[0]: (0, tuple(d if d is not None else 5 for d in ir.input_shape), dtype)}
    for pos, arg in enumerate(args[1:], 1):
        if arg and arg not in consts and not resize:  # GridSample / DeformConv inputs past X
            shape = graph.shapes.get(arg)
            if not (is_static(shape) and is_static(ir.input_shape)):
                rec.extra["probe"] = f"not probed: the shapes of {args[0]} and {arg} are not both known"
                return []
            fed[arg] = (pos, shape, np.dtype(graph.dtypes.get(arg, dtype)))
    rng = np.random.default_rng(0)
    try:
        sub = _submodel(model, {a: d for a, (_, _, d) in fed.items()}, rec.proof["output"])
    except BridgeError as e:
        rec.extra["probe"] = f"not probed: {e.message}"
        return []
    try:
        sess = ort.InferenceSession(sub.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as e:
        return [f"{rec.node}: onnxruntime cannot run the lowered node: {str(e).splitlines()[0]}"]
    for k, x in enumerate(_data_probes(dtype, fed[args[0]][1], rng)):
        feeds = {a: x if p == 0 else _input_probe(rec.op, p, d, s, rng) for a, (p, s, d) in fed.items()}
        values = [None if not a else feeds[a] if a in feeds else consts.get(a) for a in args]
        want = oracle(ir, *(values[:1] if resize else values))
        try:
            got = sess.run(None, feeds)[0]
        except Exception as e:
            return [f"{rec.node}: probe {k}: onnxruntime fails: {str(e).splitlines()[0]}"]
        if got.shape != want.shape or got.dtype != want.dtype:
            return [f"{rec.node}: probe {k}: onnxruntime gives {got.dtype}{got.shape}, the oracle "
                    f"{want.dtype}{want.shape}"]
        rtol, atol = _tolerance(rec, x)
        bad = ~np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            i = tuple(int(v) for v in np.argwhere(bad)[0])
            return [f"{rec.node}: probe {k}: onnxruntime gives {got[i]} at {i}, the oracle {want[i]}"]
    return []


def _tolerance(rec, x: np.ndarray) -> tuple[float, float]:
    """(rtol, atol) for one probe: float rounding scales with the inputs, not the outputs. A Resize left to
    onnxruntime (rungs 1-2) computes coordinates in float32 (the IR's ``arith``): each off by up to a few ulps
    of its magnitude, so each weight too (filter slopes are at most about 1), times the input's range."""
    rtol, atol = TOLERANCE.get(x.dtype.name, (0, 0))
    if x.dtype.kind != "f":
        return rtol, atol
    atol *= max(1.0, float(np.abs(x).max()))
    if rec.rung != DECOMPOSE and isinstance(rec.ir, ResizeIR):
        reach = sum(float(max(abs(ax.b), abs(ax.a * (ax.out_len - 1) + ax.b))) + 1
                    for ax in bind_resize(rec.ir, x.shape).axes)
        atol += 2.0**-21 * reach * float(np.ptp(x.astype(np.float64)))
    return rtol, atol


def _submodel(model, inputs: dict, output: str):
    """The nodes of ``model`` that compute ``output`` from ``inputs`` (name -> dtype) and constants, as a model
    of their own."""
    import onnx

    producers = {o: (i, n) for i, n in enumerate(model.graph.node) for o in n.output}
    inits = {i.name: i for i in model.graph.initializer}
    picked, used, stack, seen = {}, [], [output], set(inputs)  # picked: position in the graph -> node
    while stack:
        t = stack.pop()
        if not t or t in seen:
            continue
        seen.add(t)
        if t in inits:
            used.append(inits[t])
        elif t in producers:
            i, n = producers[t]
            picked[i] = n
            stack.extend(n.input)
        else:
            raise BridgeError(f"{t} is a graph input the probe does not feed")
    graph = onnx.helper.make_graph([picked[i] for i in sorted(picked)], "probe",
                                   [onnx.helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(d), None)
                                    for n, d in inputs.items()], [onnx.ValueInfoProto(name=output)], used)
    sub = onnx.helper.make_model(graph, opset_imports=list(model.opset_import))
    sub.ir_version = model.ir_version
    return sub
