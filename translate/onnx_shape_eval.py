"""Shape arithmetic over lengths known only at run time, read soundly.

Exporters compute Resize ``sizes`` in the graph from the input's own shape: ``Concat(Shape(x)[:2], [h, w])``
for ``F.interpolate(size=...)``, and torchvision's detection transform ``floor(H * min(s / min(H, W),
t / max(H, W)))``. Where a length is dynamic, ``partial_value`` says of each entry of such a vector whether it
is a constant (the same for every run-time length), exactly one of the run-time lengths, or unknown.

The answer is decided by dependence, never by comparing numbers: the chain is evaluated once with large
stand-ins for the dynamic lengths (ONNX's reference evaluator, so every op means what the spec says), and beside
each value a *tag* per element is propagated: CONST (depends on no dynamic length), a copy of dynamic length k
(moved by Gather / Slice / Concat / Reshape / Cast... only, or multiplied by 1), or UNKNOWN. An element that
reads a dynamic length through arithmetic is UNKNOWN even where its value at the stand-ins looks constant:
``floor(W * 224 / H)`` is 224 for any two close stand-ins, and 320 at 210x300 (issue 40: torchvision FCOS
was converted to a frozen 224x224 that way, when two runs of stand-ins were compared).
A second run with other stand-ins (other aspect ratios) checks every CONST element; a disagreement makes it
UNKNOWN, so a defect in a tag rule can only lose knowledge, never invent it.

A small tensor on the chain that cannot be read further (``Concat(Shape(x)[:2], hw)`` with hw fed by the user, or
read from a box inside a Loop body) is a leaf whose every element is UNKNOWN, given other stand-ins in each run:
what does not depend on it (N and C, x's own) is still read.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..semantics.vocab import ONNX_DOMAINS
from .onnx_shape_affine import affine_values, slices as _slices

CONST, UNKNOWN = 0, -1  # tags; k > 0: a copy of dynamic length number k

# Ops whose output is not a function of their inputs, or that carry subgraphs: never evaluated.
UNFOLDABLE = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial",
              "Bernoulli", "If", "Loop", "Scan", "SequenceMap"}
MAX_NODES = 64  # a parameter chain longer than this is not an exporter's shape arithmetic

# Stand-ins for dynamic lengths, in key order: large (no accidental equality with a constant), below 2^24 (exact
# in float32), and in the two runs of other orders and ratios, so min/max and ratios of lengths change.
_RUNS = ((1000003, 1000033, 1000037, 1000039, 1000081, 1000099, 1000117, 1000121),
         (3000017, 1500007, 2500009, 1200007, 2700023, 1700021, 2200013, 1300021))

# Ops that move elements without computing with them (a copy of a length stays one).
_MOVES = {"Identity", "Squeeze", "Unsqueeze", "Reshape", "Flatten", "Concat", "Gather", "Slice", "Expand",
          "Transpose"}
# Elementwise ops that keep an integer-valued element as it is.
_KEEPS = {"Floor", "Ceil", "Round", "Abs", "Identity"}
_EXACT_CASTS = {onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.UINT64, onnx.TensorProto.FLOAT,
                onnx.TensorProto.DOUBLE}
_ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Min", "Max", "Pow", "Mod", "Floor", "Ceil", "Round", "Cast", "Abs",
                "Neg", "Sqrt", "Reciprocal", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not",
                "And", "Or", "Xor", "Where", "Sum", "Mean", "Clip", "Sign", "Exp", "Log", "CastLike", "Relu",
                "Trunc"}


def partial_value(name: str, producers: dict, consts: dict, shapes: dict, opset: int, dim_params: dict,
                  x: str = "", inputs=None) -> tuple | None:
    """Per entry of the 1-D integer tensor ``name``: an int (the same for every run-time length), ("dim", t, d)
    (the run-time length of dim d of tensor t; X's own where it is one of them), ("multiple", k, t, d) (k times
    that length, k >= 2 an integer) or None (unknown). None when the chain cannot be evaluated at all.
    ``inputs``: the graph inputs it may read as values known only at run time (``chain``): every element they
    reach is UNKNOWN (``Concat(Shape(X)[:2], a graph input)`` still pins N and C); their stand-ins differ
    between the two runs, so an element wrongly tagged CONST would differ too and become UNKNOWN."""
    found = chain(name, producers, consts, shapes, dynamic=True, inputs=inputs)
    if found is None:
        return None
    order, leaves, shape_leaves, opaque = found
    keys, where = _keys(shape_leaves, shapes, dim_params, x)
    if not keys and not opaque:
        return None
    runs = []
    for r, standins in enumerate(_RUNS):
        if len(keys) > len(standins):
            return None
        filled = {**leaves, **{t: _shape_value(node, _filled(shapes[node.input[0]], node.input[0], keys, standins))
                               for t, node in shape_leaves.items()},
                  **{t: _opaque_value(shape, dtype, r) for t, (shape, dtype) in opaque.items()}}
        values = evaluate(order, filled, opset, [o for n in order for o in n.output if o])
        if values is None or name not in values:
            return None
        runs.append(values)
    tags = propagate(order, {**{t: np.zeros(np.shape(v), np.int64) for t, v in leaves.items()},
                             **{t: _shape_tags(node, shapes[node.input[0]], node.input[0], keys)
                                for t, node in shape_leaves.items()},
                             **{t: np.full(shape, UNKNOWN, np.int64) for t, (shape, _) in opaque.items()}}, runs[0])
    value, other, tag = np.asarray(runs[0][name]), np.asarray(runs[1][name]), tags.get(name)
    if tag is None or value.ndim != 1 or not np.issubdtype(value.dtype, np.integer) or other.shape != value.shape:
        return None
    out = []
    for v, w, k in zip(value.tolist(), other.tolist(), tag.tolist()):
        if k == CONST and v == w:
            out.append(int(v))
        elif k > 0:
            out.append(("dim",) + where[k])
        else:
            out.append(None)
    if None in out:
        out = _multiples(out, name, (order, leaves, shape_leaves), shapes, keys, where, runs)
    if opaque and all(v is None for v in out):
        return None  # a graph input read whole (sizes fed as they are): nothing known, as before it was read
    return tuple(out)


def _multiples(out: list, name: str, found, shapes: dict, keys: dict, where: dict, runs: list) -> list:
    """``out`` with each unknown entry that is, by the chain's own arithmetic, an integer k >= 2 times one
    run-time length (onnx_shape_affine) written ("multiple", k, tensor, dim). Each such reading is checked
    against both numeric runs, so a defect in the symbolic rules can only lose knowledge."""
    order, leaves, shape_leaves = found

    def shape_keys(node):
        t = node.input[0]
        full = [(True, keys[(t, d)]) if v is None else (False, v) for d, v in enumerate(shapes[t])]
        return full[_shape_range(node, len(full))]

    got = affine_values(order, leaves, shape_leaves, shape_keys, runs[0]).get(name)
    if got is None or got[0].shape != (len(out),):
        return out
    lengths = [dict(enumerate(standins, 1)) for standins in _RUNS]
    for i, a in enumerate(got[0]):
        if out[i] is not None or a is None or a.const or len(a.terms) != 1:
            continue
        key, k = a.terms[0]
        if k.denominator == 1 and k >= 2 and all(a.at(ls) == int(np.asarray(r[name])[i])
                                                 for ls, r in zip(lengths, runs)):
            out[i] = ("multiple", int(k)) + where[key]
    return out


def chain(name: str, producers: dict, consts: dict, shapes: dict, dynamic: bool = False, inputs=None):
    """(nodes computing ``name`` in dependency order, constant leaves, {tensor: Shape node} leaves, {tensor:
    (shape, numpy dtype)} leaves) or None when a leaf is only known at run time. Where ``dynamic``, a Shape of a
    tensor with dynamic dims is a leaf, and so is a tensor that ``inputs`` ({name: (shape, dtype)}) names and
    whose producer cannot be read: a small vector whose value is not known at all (``partial_value`` reads what
    does not depend on it)."""
    order, leaves, shape_leaves, opaque, seen = [], {}, {}, {}, {}  # (dicts: insertion order, for rollback)

    def visit(t: str) -> bool:
        if not t or t in seen:
            return True
        seen[t] = True
        if t in consts:
            leaves[t] = consts[t]
            return True
        tables = (order, seen, leaves, shape_leaves, opaque)
        before = [len(table) for table in tables]
        if computed(t):
            return True
        # What computes t cannot be read (a graph or Loop-body input, a value read from data, a Loop's output):
        # where t is small and its shape static, its value is unknown, not the whole chain (a Loop body's
        # ``Concat(Shape(mask)[:2], [h, w])`` with h, w read from the iteration's box still pins N and C). What
        # the failed reading added is taken back first.
        del order[before[0]:]
        for table, n in zip(tables[1:], before[1:]):
            for k in list(table)[n:]:
                del table[k]
        if dynamic and t in (inputs or {}):
            opaque[t] = inputs[t]
            return True
        return False

    def computed(t: str) -> bool:
        node = producers.get(t)
        if node is None or node.domain not in ONNX_DOMAINS or node.op_type in UNFOLDABLE:
            return False
        if node.op_type == "Shape":
            shape = shapes.get(node.input[0])
            if shape is None:
                return False
            if all(d is not None for d in shape):
                leaves[t] = _shape_value(node, shape)
                return True
            if not dynamic:
                return False
            shape_leaves[t] = node
            return True
        if len(order) >= MAX_NODES or not all(visit(i) for i in node.input):
            return False
        order.append(node)
        return True

    return (order, leaves, shape_leaves, opaque) if visit(name) else None


def evaluate(order, leaves: dict, opset: int, names: list[str]) -> dict | None:
    """{name: value} of ``names`` computed by ``order`` from ``leaves`` (ONNX's reference evaluator), or None
    where it cannot evaluate them."""
    if not order:
        return dict(leaves)
    from onnx.reference import ReferenceEvaluator  # here: importing it costs ~0.15 s, and few models need it

    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in leaves.items()]
    outs = [helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None) for n in names]
    graph = helper.make_graph(list(order), "fold", [], outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    try:
        got = ReferenceEvaluator(model).run(None, {})
    except Exception:
        return None  # a chain the reference cannot evaluate stays a run-time value
    return {**leaves, **{n: np.asarray(v) for n, v in zip(names, got)}}


def propagate(order, tags: dict, values: dict) -> dict:
    """Tags of every tensor ``order`` computes, from the tags of its leaves (``values``: one run's numbers, which
    give shapes and the indices Gather and Slice read)."""
    for node in order:
        ins = [tags.get(i) if i else None for i in node.input]
        ins_v = [values.get(i) if i else None for i in node.input]
        outs = [np.asarray(values[o]) if o in values else None for o in node.output]
        for o, t in zip(node.output, _node_tags(node, ins, ins_v, outs)):
            if o and t is not None:
                tags[o] = t
    return tags


def _node_tags(node, ins: list, ins_v: list, outs: list) -> list:
    op = node.op_type
    if any(v is None for v in outs):
        return [None] * len(outs)
    fallback = [np.full(v.shape, CONST if all(_all_const(t) for t in ins if t is not None) else UNKNOWN, np.int64)
                for v in outs]
    if any(t is None for i, t in zip(node.input, ins) if i):
        return [np.full(v.shape, UNKNOWN, np.int64) for v in outs]
    try:
        if op in _MOVES:
            moved = _moved(node, ins, ins_v, outs[0])
            return [moved] if moved is not None else fallback
        if op in _ELEMENTWISE:
            return [_elementwise(node, ins, ins_v, outs[0])]
    except (ValueError, IndexError, TypeError):
        pass  # a shape these rules do not follow: the conservative answer
    return fallback


def _all_const(t) -> bool:
    return bool(np.all(t == CONST))


def _moved(node, ins, ins_v, out):
    """The tags of a data-movement op, moved as its values are; None where a parameter (indices, axes, shape) is
    not itself constant."""
    op, data = node.op_type, ins[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if any(not _all_const(t) for t in ins[1:] if t is not None) and op != "Concat":
        return None
    if op in ("Identity", "Squeeze", "Unsqueeze", "Reshape", "Flatten"):
        return data.reshape(out.shape)
    if op == "Concat":
        return np.concatenate([np.broadcast_to(t, t.shape) for t in ins], axis=attrs.get("axis", 0))
    if op == "Gather":
        return np.take(data, np.asarray(ins_v[1]).astype(np.int64), axis=attrs.get("axis", 0))
    if op == "Transpose":
        return np.transpose(data, attrs.get("perm"))
    if op == "Expand":
        return np.broadcast_to(data, out.shape).copy()
    if op == "Slice":
        return data[_slices(node, attrs, ins_v, data.ndim)]
    return None


def _elementwise(node, ins, ins_v, out) -> np.ndarray:
    """CONST where every operand element is; a copy of a length kept by the ops that keep integers (Floor of a
    length, Cast to a type that holds it, multiplied or divided by 1, plus or minus 0); else UNKNOWN."""
    op = node.op_type
    ts = [np.broadcast_to(t, out.shape) for t in ins if t is not None]
    const = np.all([t == CONST for t in ts], axis=0)
    tags = np.where(const, CONST, UNKNOWN).astype(np.int64)
    first = ts[0]
    keeps = op in _KEEPS or op == "Cast" and _attr(node, "to") in _EXACT_CASTS
    if keeps:
        return np.where(first > 0, first, tags)
    if op in ("Mul", "Div", "Add", "Sub") and len(ts) == 2:
        neutral = 1 if op in ("Mul", "Div") else 0
        other_v = np.broadcast_to(np.asarray(ins_v[1]), out.shape)
        tags = np.where((first > 0) & (ts[1] == CONST) & (other_v == neutral), first, tags)
        if op in ("Mul", "Add"):  # commutative: the length may be the second operand
            first_v = np.broadcast_to(np.asarray(ins_v[0]), out.shape)
            tags = np.where((ts[1] > 0) & (first == CONST) & (first_v == neutral), ts[1], tags)
    return tags


def _attr(node, name):
    return next((helper.get_attribute_value(a) for a in node.attribute if a.name == name), None)


# -- the dynamic lengths --------------------------------------------------------------------------------------


def _keys(shape_leaves: dict, shapes: dict, dim_params: dict, x: str) -> tuple[dict, dict]:
    """({(tensor, dim) or ("param", name): key}, {key: (tensor, dim)}) for every dynamic length the Shape leaves
    read, X's first, so that a length equal to one of X's is reported as X's own. Dims that share a symbolic
    name share a key."""
    keys, by_dim, where = {}, {}, {}
    tensors = [x] * bool(x) + sorted({n.input[0] for n in shape_leaves.values()} - {x})
    for t in tensors:
        shape = shapes.get(t)
        if shape is None:
            continue
        params = dim_params.get(t) or ()
        for d, v in enumerate(shape):
            if v is not None:
                continue
            k = ("param", params[d]) if d < len(params) and params[d] else ("dim", t, d)
            if k not in keys:
                keys[k] = len(keys) + 1
                where[keys[k]] = (t, d)
            by_dim[(t, d)] = keys[k]
    return by_dim, where


# The most elements a graph input read as a value known only at run time may have (a sizes or scales vector).
MAX_OPAQUE = 8


def _opaque_value(shape, dtype: str, run: int) -> np.ndarray:
    """Stand-ins for a graph input's unknown value in run ``run``: other numbers in each run, none equal to a
    length's stand-in (integers) or an integer (floats)."""
    n = int(np.prod(shape, dtype=np.int64))
    base = np.arange(n).reshape(shape)
    if np.issubdtype(np.dtype(dtype), np.integer):
        return (base * 7 + (4000037 if run == 0 else 5000011)).astype(dtype)
    return (base * 0.37 + (1.3 if run == 0 else 2.6)).astype(dtype)


def runtime_values(consts: dict, shapes: dict, dtypes: dict) -> dict:
    """{name: (shape, numpy dtype)} of the tensors ``partial_value`` may read as values known only at run time
    where what computes them cannot be read (``chain``): not constants, a static shape of at most MAX_OPAQUE
    elements, integer or float."""
    out = {}
    for name, shape in shapes.items():
        dtype = dtypes.get(name)
        if name in consts or shape is None or None in shape or np.prod(shape, dtype=np.int64) > MAX_OPAQUE or \
                _kind(dtype) not in ("i", "u", "f"):
            continue
        out[name] = (tuple(shape), dtype)
    return out


def _kind(dtype) -> str:
    """numpy's kind of a dtype name ("" for none or a name numpy does not know)."""
    try:
        return np.dtype(dtype).kind if dtype else ""
    except TypeError:
        return ""


def _filled(shape, t, keys: dict, standins) -> tuple:
    return tuple(standins[keys[(t, d)] - 1] if v is None else v for d, v in enumerate(shape))


def _shape_tags(node, shape, t, keys: dict) -> np.ndarray:
    full = np.array([keys[(t, d)] if v is None else CONST for d, v in enumerate(shape)], np.int64)
    return full[_shape_range(node, len(shape))]


def _shape_range(node, r: int) -> slice:
    """Shape-15's start/end attributes, as a slice of the dims."""
    attrs = {a.name: a.i for a in node.attribute}
    start, end = attrs.get("start", 0), attrs.get("end", r)
    start, end = (max(0, min(r, v + r if v < 0 else v)) for v in (start, end))
    return slice(start, end)


def _shape_value(node, shape) -> np.ndarray:
    """Shape-15's start/end attributes applied to a (filled) shape."""
    return np.array(shape[_shape_range(node, len(shape))], dtype=np.int64)
