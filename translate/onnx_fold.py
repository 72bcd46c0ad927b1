"""Values of roi / scales / sizes that exporters compute in the graph instead of writing as constants.

PyTorch and friends write ``sizes`` as Shape -> Gather/Slice -> Concat (-> Cast, Mul, Div, Floor...), and
empty roi/scales through Identity or Cast. When every leaf of such a chain is a constant or the Shape of a
tensor whose shape is static, the chain is evaluated here (with ONNX's own reference evaluator, so every op
means what the spec says) and the value joins the graph's constants. Anything else stays a run-time value.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..semantics.vocab import ONNX_DOMAINS

# Ops whose output is not a function of their inputs, or that carry subgraphs: never folded.
_UNFOLDABLE = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial",
               "Bernoulli", "If", "Loop", "Scan", "SequenceMap"}
_MAX_NODES = 64  # a parameter chain longer than this is not an exporter's shape arithmetic


def fold_parameters(nodes, producers: dict, consts: dict, shapes: dict, opset: int,
                    dim_params: dict | None = None) -> tuple[dict, dict]:
    """({tensor: value}, {tensor: partial}) for the parameter inputs (roi / scales / sizes) of ``nodes``:
    values that fold completely, and, for the rest, a partial value where the chain reads dynamic dims.
    ``producers`` maps a tensor name to the NodeProto that outputs it."""
    folded, partial = {}, {}
    for node in nodes:
        params = range(1, len(node.input)) if node.op_type in ("Resize", "Upsample") else ()
        for i in params:
            name = node.input[i]
            if not name or name in consts or name in folded or name in partial:
                continue
            value = _evaluate(name, producers, consts, shapes, opset)
            if value is not None:
                folded[name] = value
            elif dim_params is not None:
                p = _partial(name, producers, consts, shapes, opset, dim_params, node.input[0])
                if p is not None:
                    partial[name] = p
    return folded, partial


# Two sets of stand-ins for unknown dims: large primes no exporter's shape arithmetic produces by accident.
_STANDINS = ((1000003, 1000033, 1000037, 1000039, 1000081, 1000099, 1000117, 1000121),
             (2000003, 2000029, 2000039, 2000081, 2000083, 2000093, 2000107, 2000113))


def _partial(name, producers, consts, shapes, opset, dim_params, x: str = ""):
    """A chain over Shape of tensors with dynamic dims, evaluated twice with stand-ins for the unknown dims:
    an entry equal in both runs is a constant; one equal to the stand-in of dim d of tensor t in both runs
    is ("dim", t, d), i.e. the same length at run time; anything else is None (unknown). Dims that share a
    symbolic name share a stand-in. None when the chain does not fold at all."""
    keys: dict = {}

    def key(t, d):
        params = dim_params.get(t)
        return ("param", params[d]) if params and params[d] else ("dim", t, d)

    # Stand-ins for the tensors whose Shape the chain reads, and for X (the resized input) first, so that an
    # entry equal to one of X's dims (the same tensor, or the same symbolic dim) is reported as X's own.
    read = _shapes_read(name, producers, consts)
    tensors = [x] * bool(x) + sorted(read - {x})
    runs = []
    for standins in _STANDINS:
        filled, where = {}, {}
        for t in tensors:
            shape = shapes.get(t)
            if shape is None or all(v is not None for v in shape):
                continue
            dims = []
            for d, v in enumerate(shape):
                if v is None:
                    k = keys.setdefault(key(t, d), len(keys))
                    if k >= len(standins):
                        return None
                    v = standins[k]
                    where.setdefault(v, (t, d))
                dims.append(v)
            filled[t] = tuple(dims)
        value = _evaluate(name, producers, consts, {**shapes, **filled}, opset)
        if value is None or value.ndim != 1 or not np.issubdtype(value.dtype, np.integer):
            return None
        runs.append((value, where))
    (a, where_a), (b, where_b) = runs
    out = []
    for ea, eb in zip(a.tolist(), b.tolist()):
        if ea == eb:
            out.append(int(ea))
        elif ea in where_a and eb in where_b and _same_dim(where_a[ea], where_b[eb], dim_params):
            out.append(("dim",) + where_a[ea])
        else:
            out.append(None)
    return tuple(out)


def _shapes_read(name: str, producers: dict, consts: dict) -> set:
    """The tensors whose Shape the chain computing ``name`` reads (walking up to constants and Shape ops)."""
    read, seen, todo = set(), set(), [name]
    while todo and len(seen) <= 4 * _MAX_NODES:
        t = todo.pop()
        if not t or t in seen or t in consts:
            continue
        seen.add(t)
        node = producers.get(t)
        if node is None:
            continue
        if node.op_type == "Shape":
            read.add(node.input[0])
        else:
            todo += list(node.input)
    return read


def _same_dim(a, b, dim_params) -> bool:
    if a == b:
        return True
    pa, pb = dim_params.get(a[0]), dim_params.get(b[0])
    return bool(pa and pb and pa[a[1]] and pa[a[1]] == pb[b[1]])


def _chain(name: str, producers: dict, consts: dict, shapes: dict):
    """The nodes computing ``name`` in dependency order, with the constants and static Shape values they
    read, or None when a leaf is only known at run time."""
    order, leaves, seen = [], {}, set()

    def visit(t: str) -> bool:
        if not t or t in seen:
            return True
        seen.add(t)
        if t in consts:
            leaves[t] = consts[t]
            return True
        node = producers.get(t)
        if node is None or node.domain not in ONNX_DOMAINS or node.op_type in _UNFOLDABLE:
            return False
        if node.op_type == "Shape":
            shape = shapes.get(node.input[0])
            if shape is None or any(d is None for d in shape):
                return False
            leaves[t] = _shape_value(node, shape)
            return True
        if len(order) >= _MAX_NODES or not all(visit(i) for i in node.input):
            return False
        order.append(node)
        return True

    return (order, leaves) if visit(name) else None


def _shape_value(node, shape) -> np.ndarray:
    """Shape-15's start/end attributes applied to a static shape."""
    attrs = {a.name: a.i for a in node.attribute}
    r = len(shape)
    start, end = attrs.get("start", 0), attrs.get("end", r)
    start, end = (max(0, min(r, v + r if v < 0 else v)) for v in (start, end))
    return np.array(shape[start:end], dtype=np.int64)


def _evaluate(name: str, producers: dict, consts: dict, shapes: dict, opset: int):
    found = _chain(name, producers, consts, shapes)
    if found is None:
        return None
    order, leaves = found
    if not order:
        return leaves.get(name)
    from onnx.reference import ReferenceEvaluator  # here: importing it costs ~0.15 s, and few models need it

    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in leaves.items()]
    out = helper.make_tensor_value_info(name, onnx.TensorProto.UNDEFINED, None)
    graph = helper.make_graph(list(order), "fold", [], [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    try:
        (value,) = ReferenceEvaluator(model).run(None, {})
    except Exception:
        return None  # a chain the reference cannot evaluate stays a run-time value
    return np.asarray(value)
