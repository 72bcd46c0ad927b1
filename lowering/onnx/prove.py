"""The ONNX target's proof (the pass's postcondition): the written model, re-read, against the source IR.

* rungs 1-2: the written node re-parsed; onnxruntime's semantics of it diffed against the source IR
  (``rungs.ort_gap``); rung 1 must also parse to the source IR itself;
* rung 2's convolution form: the Pad and each ConvTranspose / Conv, found by node name, re-read against the plan
  recomputed from the source IR (``conv_form.prove_form``), and the source node is gone;
* rung 3: the Gather / Mul / Where constants, found by node name, equal the tap tables recomputed from the
  source IR (``semantics.taps``), axis by axis, and the source node is gone; for the nearest index form (run-time
  lengths), the Gathers' axes and wiring, their lengths' sources, and each index subgraph, cut out with its
  lengths as inputs, run on onnxruntime over a grid of lengths against the oracle's taps (``prove_index``);
* then each lowered node, cut out of the written model, runs on onnxruntime on probe inputs (random, ramps,
  dtype extremes, integers near 2^24 and .5 ties) against ``semantics.reference.run``: bit-exact for integer
  dtypes, rtol 1e-5 / atol 1e-6 for float32; the index form on concrete shapes and sizes, bit-exact for every
  dtype (``_probe_index``).
"""

from __future__ import annotations

import re

import numpy as np

from ...semantics.compare import against_oracle
from ...semantics.errors import BridgeError, first_line
from ...semantics.ir import RuntimeValue, has_runtime_params, is_static, pinned_positions
from ...semantics.opspec import spec
from ...semantics.reference import run as oracle
from ...semantics.taps import axis_taps
from ..index_form import copied_axes
from ..passes import BUILTIN, DECOMPOSE, REWRITE, PassResult, Refusal
from .conv_form import FORM as CONV_FORM
from .conv_form import prove_form
from .matmul_form import FORM as MATMUL_FORM
from .matmul_form import prove_form as prove_matmul
from .decompose import check_decomposable, fill_value, tap_name
from .cut import cut_session, submodel
from .deformconv_decompose import FORM as DEFORM_FORM
from .fold import prove_folded, without_folded
from .gridsample_decompose import FORM as GRID_FORM
from .nearest_index import FORM, grid_verdict, index_name
from .prove_grid import prove_grid
from .rungs import ort_gap
from ...semantics.nearest_index import integer_scales
from ...translate.onnx import Graph, parse_model
from ..model_check import import_onnxruntime


def prove(result: PassResult, compute: dict, *, probes: bool = True) -> list[str]:
    """Failures (empty = proven)."""
    from onnx import numpy_helper

    model = result.model
    try:
        written = dict(parse_model(model))
    except BridgeError as e:
        return [f"the written model does not parse: {e}"]
    nodes = {n.name: n for n in model.graph.node}
    consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    folded = prove_folded(model, result.records)
    lowered = [r for r in without_folded(result.records) if not r.refused]
    # Shapes and types of GridSample / DeformConv inputs past X, for their probes (one shape inference).
    graph = Graph(model) if any(len(spec(r.ir).arrays) > 1 for r in lowered) else None
    failures = [f for fs in folded.values() for f in fs]
    for rec in lowered:
        index = rec.proof.get("form") == FORM
        if rec.rung == DECOMPOSE and rec.proof.get("form") in (GRID_FORM, DEFORM_FORM):
            failures += [f"{rec.node}: the source node is still in the written model"] if rec.node in written else \
                _prove_grid(rec, model, graph, probes)
            continue
        if rec.rung == DECOMPOSE or rec.proof.get("form") in (CONV_FORM, MATMUL_FORM):
            why = [f"{rec.node}: the source node is still in the written model"] if rec.node in written else \
                prove_index(rec, model, nodes, consts) if index else \
                prove_form(rec, nodes, consts) if rec.proof.get("form") == CONV_FORM else \
                prove_matmul(rec, nodes, consts, compute, prove_tables) if rec.rung == REWRITE else \
                prove_tables(rec.node, rec.ir, nodes, consts, compute)
        else:
            why = _spelled(rec, written, nodes.get(rec.node))
        if not why and probes:
            why = _probe_index(rec, model) if index else _probe(rec, model, consts, graph)
        failures += why
    return failures


def _prove_grid(rec, model, graph, probes: bool) -> list[str]:
    """A GridSample / DeformConv decomposition has no tables to re-read: it is proven by numbers alone
    (``prove_grid``)."""
    if not probes:
        rec.extra["probe"] = "not probed: onnxruntime is not installed (exact by construction only)"
        return []
    return prove_grid(rec, model, graph)


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


def prove_index(rec, model, nodes: dict, consts: dict) -> list[str]:
    """The index decomposition of ``rec`` in the written model: one Gather per resized axis, on that axis, in the
    op's order from X to the node's output; each reading in = Shape(X)[axis] and out = sizes[i] (or the static
    size); and each index subgraph, cut out with its two lengths as inputs, computes the oracle's taps over
    ``nearest_index.GRID`` on onnxruntime."""
    import onnx

    name, ir, args = rec.node, rec.ir, rec.proof["inputs"]
    if list(rec.proof.get("axes", [])) != list(ir.axes):
        return [f"{name}: the index form was recorded for axes {rec.proof.get('axes')}, the source resizes "
                f"{list(ir.axes)}"]
    copied = copied_axes(ir)  # left as they are: X's own length by the graph's arithmetic, copied by the oracle
    if list(rec.proof.get("copied", [])) != list(copied):
        return [f"{name}: the index form left axes {rec.proof.get('copied')} as they are, the source copies "
                f"{list(copied)}"]
    producer = {o: n for n in model.graph.node for o in n.output}

    def attrs(node):
        return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}

    out, prev = [], args[0]
    for i, axis in enumerate(ir.axes):
        if axis in copied:
            continue
        gather = nodes.get(index_name(name, axis, "gather"))
        if gather is None or gather.op_type != "Gather":
            out.append(f"{name}: axis {axis}: no index Gather in the written model")
            continue
        if attrs(gather).get("axis", 0) % ir.rank != axis:
            out.append(f"{name}: axis {axis}: the Gather reads axis {attrs(gather).get('axis', 0)}")
        if gather.input[0] != prev:
            out.append(f"{name}: axis {axis}: the Gather does not read the previous axis' result")
        prev = gather.output[0]
        in_node = nodes.get(index_name(name, axis, "in"))
        lengths = [_length_in(in_node, producer, consts, args[0], axis, attrs),
                   _length_out(nodes.get(index_name(name, axis, "out")), consts, args, ir, i, attrs, in_node)]
        out += [f"{name}: axis {axis}: {m}" for m in lengths if m]
        if any(lengths):
            continue
        try:
            cut = submodel(model, {index_name(name, axis, r) + ":0": np.dtype(np.int64) for r in ("in", "out")},
                            gather.input[1])
        except BridgeError as e:
            out.append(f"{name}: axis {axis}: the index subgraph reads more than its lengths ({e.message})")
            continue
        verdict = grid_verdict(cut, ir, index_name(name, axis, "in") + ":0", index_name(name, axis, "out") + ":0")
        if verdict:
            out.append(f"{name}: axis {axis}: {verdict}")
    last = producer.get(rec.proof["output"])
    if prev == args[0] and last is not None and last.op_type == "Identity" and list(last.input) == [args[0]]:
        prev = rec.proof["output"]  # every axis copied: the node is X itself
    if prev != rec.proof["output"]:
        out.append(f"{name}: the last index Gather does not write the node's output")
    return out


def _length_in(node, producer: dict, consts: dict, x: str, axis: int, attrs) -> str | None:
    """None when ``node`` is Gather(Shape(X), axis) along axis 0 with no Shape start/end, else what differs."""
    shape = producer.get(node.input[0]) if node is not None and node.op_type == "Gather" else None
    if shape is None or shape.op_type != "Shape" or shape.input[0] != x or attrs(shape) or attrs(node).get("axis", 0):
        return "its input length is not Shape(X)[axis]"
    k = consts.get(node.input[1])
    return None if k is not None and k.shape == () and int(k) == axis else "its input length reads another axis"


def _length_out(node, consts: dict, args, ir, i: int, attrs, in_node=None) -> str | None:
    """None when ``node`` gives the i-th output length: Gather(sizes, i) of the node's run-time sizes input,
    Identity of the static size, or Mul(in, k) for a static integer scale k (``in_node``: the input length)."""
    if ir.sizes is None:

        k = integer_scales(ir)
        ok = k is not None and node is not None and node.op_type == "Mul" and in_node is not None \
            and node.input[0] == in_node.output[0]
        c = consts.get(node.input[1]) if ok else None
        return None if c is not None and c.shape == () and int(c) == k[i] else \
            f"its output length is not the input length times the scale {ir.scales[i]}"
    if isinstance(ir.sizes, RuntimeValue):
        ok = node is not None and node.op_type == "Gather" and len(args) > 3 and node.input[0] == args[3] \
            and not attrs(node).get("axis", 0)
        k = consts.get(node.input[1]) if ok else None
        return None if k is not None and k.shape == () and int(k) == i else \
            f"its output length is not sizes[{i}] of the node's sizes input"
    k = consts.get(node.input[0]) if node is not None and node.op_type == "Identity" else None
    return None if k is not None and k.shape == () and int(k) == ir.sizes[i] else \
        f"its output length is not the static size {ir.sizes[i]}"


def _equal(got, want) -> bool:
    # NaN equals NaN: a NaN extrapolation_value is a valid fill (the Where's constant).
    return (got is not None and got.shape == want.shape and got.dtype == want.dtype
            and np.array_equal(got, want, equal_nan=got.dtype.kind in "fc"))


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
    ort = import_onnxruntime()

    ir, args = rec.ir, rec.proof["inputs"]
    arrays = len(spec(ir).arrays)  # past them, parameters the IR holds (Resize's roi, scales, sizes)
    if not rec.proof.get("top_level", True) or has_runtime_params(ir):
        rec.extra["probe"] = "not probed: inside a subgraph or fed run-time parameters (proven on the IR)"
        return []
    dtype = np.dtype(ir.dtype)
    fed = {args[0]: (0, tuple(d if d is not None else 5 for d in ir.input_shape), dtype)}
    for pos, arg in enumerate(args[1:], 1):
        if arg and arg not in consts and pos < arrays:  # GridSample / DeformConv inputs past X
            shape = graph.shapes.get(arg)
            if not (is_static(shape) and is_static(ir.input_shape)):
                rec.extra["probe"] = f"not probed: the shapes of {args[0]} and {arg} are not both known"
                return []
            fed[arg] = (pos, shape, np.dtype(graph.dtypes.get(arg, dtype)))
    rng = np.random.default_rng(0)
    try:
        sub = submodel(model, {a: d for a, (_, _, d) in fed.items()}, rec.proof["output"])
    except BridgeError as e:
        rec.extra["probe"] = f"not probed: {e.message}"
        return []
    try:
        sess = ort.InferenceSession(sub.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as e:
        return [f"{rec.node}: onnxruntime cannot run the lowered node: {first_line(e)}"]
    data = _data_probes(dtype, fed[args[0]][1], rng)
    if rec.proof.get("form") == MATMUL_FORM:  # the guard's else branch: an inf and a NaN among finite values
        odd = data[0].copy()
        odd.reshape(-1)[[0, odd.size // 2]] = [np.inf, np.nan]
        data.append(odd)
    for k, x in enumerate(data):
        feeds = {a: x if p == 0 else _input_probe(rec.op, p, d, s, rng) for a, (p, s, d) in fed.items()}
        values = [None if not a else feeds[a] if a in feeds else consts.get(a) for a in args]
        want = oracle(ir, *values[:arrays])
        try:
            got = sess.run(None, feeds)[0]
        except Exception as e:
            return [f"{rec.node}: probe {k}: onnxruntime fails: {first_line(e)}"]
        if got.shape != want.shape or got.dtype != want.dtype:
            return [f"{rec.node}: probe {k}: onnxruntime gives {got.dtype}{got.shape}, the oracle "
                    f"{want.dtype}{want.shape}"]
        # The bound from the finite values: an inf or NaN tap's term is no finite output's error (where it has a
        # weight, the output is not finite and compared as such).
        bounded = [v if v is None or v.dtype.kind != "f" else np.where(np.isfinite(v), v, 0) for v in values]
        c = against_oracle(ir, got, want, bounded[:arrays])
        if not c.ok:
            i = c.first_mismatch
            return [f"{rec.node}: probe {k}: onnxruntime gives {got[i]} at {i}, the oracle {want[i]}"]
    return []


# (in, out) per resized axis for the index form's probes (taken in turn across axes): up, down, out == 1,
# in == 1, equal, odd ratios.
INDEX_PROBES = [(3, 7), (9, 4), (5, 1), (1, 6), (6, 6), (13, 17), (7, 3)]


def _index_shapes(ir):
    """(input shape, sizes fed or None) for the index form's probes: unknown lengths and run-time sizes from
    ``INDEX_PROBES``, the static ones as they are; other unknown lengths 2; a size the graph's arithmetic makes
    X's own length (``RuntimeValue.same_as_input``) fed as that length."""
    shape = ir.input_shape or (None,) * ir.rank
    same = pinned_positions(ir.sizes)
    for k in range(len(INDEX_PROBES)):
        dims, outs = [d if d is not None else 2 for d in shape], []
        for j, axis in enumerate(ir.axes):
            i, o = INDEX_PROBES[(k + j) % len(INDEX_PROBES)]
            if shape[axis] is None:
                dims[axis] = i
            outs.append(dims[axis] if j in same else o)  # a size the graph makes X's own length stays that
        yield tuple(dims), (np.asarray(outs, np.int64) if isinstance(ir.sizes, RuntimeValue) else None)


def _index_data(dtype: np.dtype, shape, rng) -> list[np.ndarray]:
    """Probe inputs for the index form. 64-bit integers stay within 2^53: the oracle resamples them in float64,
    which rounds larger values (a Gather moves every value; the grid proves the indices)."""
    if dtype.kind in "iu" and dtype.itemsize == 8:
        lo = 0 if dtype.kind == "u" else -2**53
        return [rng.integers(lo, 2**53, shape, endpoint=True).astype(dtype),
                np.where(rng.integers(0, 2, shape) == 1, 2**53, lo).astype(dtype)]
    return _data_probes(dtype, shape, rng) if dtype.kind in "fiu" else [rng.integers(0, 2, shape).astype(dtype)]


def _probe_index(rec, model) -> list[str]:
    """The index decomposition cut out of the written model (inputs X and, when fed at run time, the sizes) run
    on onnxruntime on concrete shapes against ``semantics.reference.run``: bit-exact, whatever the dtype."""
    ir, args = rec.ir, rec.proof["inputs"]
    dtype = np.dtype(ir.dtype)
    fed = {args[0]: dtype}
    if isinstance(ir.sizes, RuntimeValue):
        fed[args[3]] = np.dtype(np.int64)
    sess, failed = cut_session(rec, model, fed, "index decomposition", "X and sizes")
    if failed:
        return failed
    rng = np.random.default_rng(0)
    for shape, sizes in _index_shapes(ir):
        for k, x in enumerate(_index_data(dtype, shape, rng)):
            feeds = {args[0]: x, **({args[3]: sizes} if sizes is not None else {})}
            want = oracle(ir, x, None, None, sizes) if sizes is not None else oracle(ir, x)
            try:
                got = sess.run(None, feeds)[0]
            except Exception as e:  # noqa: BLE001
                return [f"{rec.node}: input {shape}: onnxruntime fails: {first_line(e)}"]
            if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
                return [f"{rec.node}: input {shape}, sizes {None if sizes is None else sizes.tolist()}, probe {k}: "
                        f"onnxruntime gives {got.dtype}{got.shape}, not the oracle's numbers ({want.dtype}"
                        f"{want.shape})"]
    rec.extra["probe"] = f"probed on {len(INDEX_PROBES)} input shapes, bit-exact"
    return []
