"""The coordinate arithmetic that generates a GridSample's grid (a DeformConv's offsets, a Resize's scales / roi /
sizes fed at run time) inside the model, kept in float32 under OpenVINO's reduced inference precision (issue 42:
"reduced precision may round values, never move an index").

The grid is not ours: the importer converts its producer (ONNX AffineGrid-20 becomes a MatMul of the base grid by
theta; kornia's warps, a MatMul, a Divide, a 3x3 matrix built by Pad and scatters). Under the CPU's default bf16
hint the plugin runs that MatMul, and what feeds it, in bf16 (8-bit mantissa): a 2^-9 error of a normalised
coordinate in [-1, 1] moves a sample by 1 px at 640 px. Measured (OpenVINO 2026.4.1, AMD EPYC Zen 4, default
precision, a Conv after the sampler, against onnxruntime): AffineGrid-20 at 24 px 0.147 off, at 224 px 1.82 off;
pinned 0.0058 and 0.0084 (the Conv's bf16: value rounding only).

``mark`` stamps the producer of each grid as the frontend hands it to the planner; ``pin`` (after the plan's
forms are emitted) walks the producer cone from there to Parameters and Constants and marks every op of
coordinate arithmetic that reads or writes floats ``pinned.PRECISE`` (elementwise, comparisons, shape and layout
ops, reductions, a MatMul contracting at most 4 terms: homogeneous coordinates), respelling the few the plugin
would rebuild without the mark (``respelled``). It stops at anything else (a Convolution, a MatMul over
features): a grid or offsets predicted by a network stay at the model's precision, as the importer leaves them,
and what follows that layer is pinned. It never enters a ShapeOf's input (a shape is exact at any precision).

The mark takes effect in a model read from its IR (``DisablePrecisionConversion``, as it is deployed) and in the
model ``convert_model`` hands over in memory (``pinned.take_effect_in_memory``). The data-movement ops the plugin
rebuilds in its own pipeline without the mark (a Reshape beside a division, Tile, a Split it fuses from Gathers;
kornia's TorchScript exports were 0.033 / 0.065 off behind a Conv, the importer 0.25 / 0.33) and every marked op in
a release that does not read the mark are kept in f32 by the graph-tail tie (``pinned_tail``).
"""

from __future__ import annotations

from ...semantics.ir import RuntimeValue
from ...semantics.opspec import PerOp
from ..compiled import resize_inputs
from .graph import all_ops, constant_of, ops
from .exact_division import exact_quotient, ieee_already
from .pinned import PRECISE

GRID_OF = "resample_bridge_grid_of"  # rt_info on a grid's producer: the node keys that sample with it
LENGTHS_OF = "resample_bridge_lengths_of"  # the same on a Resize's scales / roi / sizes producer (``_division_exact``)


def _resize_positions(ir, inputs: list) -> list:
    at = resize_inputs(ir, inputs)  # (X, roi, scales, sizes) whatever the op's own order
    return [at[k] for k, f in ((1, ir.roi), (2, ir.scales), (3, ir.sizes))
            if isinstance(f, RuntimeValue) and at[k] is not None]


def _port(port: int):
    return lambda ir, inputs: [inputs[port]] if port < len(inputs) and inputs[port] is not None else []


# The inputs that place the taps, per op, and their name: a GridSample's grid, a DeformConv's offsets (its mask is
# a weight: value rounding only), a Resize's scales / roi / sizes fed at run time (ONNX input order; sizes computed
# in floats from the input's shape, as the dynamo exporter writes scale_factor on dynamic H / W, moved an output
# length under the bf16 hint: floor(90 * 0.41) came out 37).
POSITIONS = PerOp("the inputs that place the taps", resize=(_resize_positions, "scales / roi / sizes", LENGTHS_OF),
                  gridsample=(_port(1), "grid", GRID_OF), deformconv=(_port(2), "offsets", GRID_OF))
MAX_CONTRACTION = 4  # a MatMul over at most this many terms is coordinate arithmetic (x, y, z, 1), not a layer

_COORDINATE_OPS = frozenset({
    "Add", "Subtract", "Multiply", "Divide", "Power", "Negative", "Abs", "Sqrt", "Floor", "Ceiling", "Round",
    "Clamp", "Maximum", "Minimum", "Mod", "FloorMod", "SquaredDifference", "Sin", "Cos", "Tan", "Atan", "Exp",
    "Log", "Tanh", "Sigmoid", "Select", "Convert", "ConvertLike", "Reshape", "Squeeze", "Unsqueeze", "Transpose",
    "Concat", "Split", "VariadicSplit", "Slice", "StridedSlice", "Gather", "GatherND", "GatherElements", "Broadcast",
    "Tile", "Range", "Pad", "ScatterUpdate", "ScatterNDUpdate", "ScatterElementsUpdate", "Inverse",
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
    # the guards of a safe division (kornia's homogeneous coordinates): booleans, their float operands pinned
    "Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual", "LogicalAnd", "LogicalOr", "LogicalNot",
    "LogicalXor", "BitwiseAnd", "BitwiseOr", "BitwiseNot", "BitwiseXor", "IsInf", "IsNaN", "IsFinite", "Sign",
})


def mark(name: str, ir, inputs: list) -> None:
    """Stamp the op producing the positions ``inputs`` hands node ``name`` (an OpenVINO output, frontend order):
    a GridSample's grid, a DeformConv's offsets, a Resize's scales / roi / sizes computed in the graph (the scales a
    run-time form floors into lengths: under the bf16 hint the plugin ran the model's own Concat of [1, 1] and
    two run-time scales in bf16, 0.8 read as 0.80078: another output length)."""
    key = POSITIONS.of(ir)[2]
    for v in _positions(ir, inputs):
        node = v.get_node()
        if node.get_type_name() in ("Parameter", "Constant"):
            continue
        rt = node.get_rt_info()
        before = str(rt[key].astype(str)) if key in rt else ""
        rt[key] = ",".join(filter(None, (before, name)))


def _positions(ir, inputs: list) -> list:
    """The inputs (OpenVINO outputs) that place ``ir``'s taps."""
    return POSITIONS.of(ir)[0](ir, inputs)


def positions_name(ir) -> str:
    """What the inputs that place the taps are called: grid, offsets, scales / roi / sizes."""
    return POSITIONS.of(ir)[1]


def pin(ov_model) -> dict[str, dict]:
    """Mark the producer cone of every stamped grid PRECISE and drop the stamps: node key -> {"ops": float ops
    pinned, "stops": the types of the ops the walk stopped at (a learned layer: left at the model's precision)}."""
    tops: dict[tuple, list] = {}  # a rewrite that copies rt_info may leave a stamp on several ops
    for op in list(all_ops(ov_model)):
        rt = op.get_rt_info()
        for key in (GRID_OF, LENGTHS_OF):
            if key in rt:
                for name in str(rt[key].astype(str)).split(","):
                    tops.setdefault((name, key), []).append(op)
                del rt[key]
    counts = {}
    for (name, key), ops_of in tops.items():
        n, stops = _pin_cone(ops_of, _division_exact if key == LENGTHS_OF else respelled)
        counts[name] = {"ops": n, "stops": sorted(stops)}
    return counts


def _division_exact(node):
    """``respelled`` but for a Divide, which a Resize's scales / roi / sizes producer computes as IEEE division
    (``exact_division``): there the quotients are scalars of shape arithmetic whose floor is an output length, and
    they must be onnxruntime's correctly rounded ones, which OpenVINO's own Divide (a * (1 / b)) computes only where
    it is ``ieee_already`` (1 / b, a power of two): 224 / min(H, W) compiled into 224 * (1 / min(H, W)) (16 x 16
    resized to 0 x 0: tests/lowering/test_model_check.py), its own importer's model too."""
    if node.get_type_name() != "Divide" or not node.output(0).get_element_type().is_real() or ieee_already(node):
        return respelled(node)
    return replaced(node, exact_quotient(*node.input_values()))


def _pin_cone(tops: list, respell) -> tuple[int, set]:
    stops = set()

    def enters(node) -> bool:  # coordinate arithmetic; what stops the walk is reported (a learned layer)
        if coordinate_op(node):
            return True
        if node.get_type_name() not in ("Parameter", "Constant", "ShapeOf"):
            stops.add(node.get_type_name())
        return False
    return mark_upstream(tops, enters, respell), stops


def pin_form(outputs, stops) -> int:
    """Mark every op of one of our own in-graph forms PRECISE, from ``outputs`` back to the ops ``stops`` (the
    node's inputs, excluded), respelled where the plugin would rebuild it without the mark (``respelled``,
    ``_respelled_own``); returns how many ops were marked. Its coordinate arithmetic then stays in f32 under a
    bf16 / f16 hint (the GridSample decomposition followed by a Conv, measured at the bf16 default before: nearest
    picks moved, 4.0 off on values 0..4; linear 0.020 off, pinned 0.0009: the Conv's own rounding)."""
    stop = {v.get_node().get_name() for v in stops}
    return mark_upstream([v.get_node() for v in outputs],
                          lambda n: n.get_name() not in stop and n.get_type_name() not in ("Parameter", "Constant"),
                          lambda n: respelled(_respelled_own(n)))


def mark_upstream(tops: list, enters, respell) -> int:
    """Mark PRECISE every op that reads or writes floats upstream of ``tops``, as far as ``enters(op)`` lets the
    walk in, each first respelled by ``respell``; returns how many were marked. An op already marked is where
    another walk (or a form, or a respelling that pins its own ops: ``exact_quotient``) has been: the walk goes
    on from what the op read before its respelling."""
    seen, stack, pinned = set(), list(tops), 0
    while stack:
        node = stack.pop()
        if node.get_name() in seen or PRECISE in node.get_rt_info() or not enters(node):
            continue
        read = node.input_values()
        seen.add(node.get_name())  # (``read`` may hold it again once it is respelled: it is done)
        node = respell(node)
        seen.add(node.get_name())
        if PRECISE not in node.get_rt_info() and \
                any(v.get_element_type().is_real() for v in [*node.outputs(), *node.input_values()]):
            node.get_rt_info()[PRECISE] = ""
            pinned += 1
        stack += [v.get_node() for v in [*node.input_values(), *read]]
    return pinned


def respelled(node):
    """``node`` in the spelling the CPU plugin keeps (the op that replaces it, or ``node``). The PRECISE mark does
    not survive a rewrite (``pinned``), and the plugin rewrites these ops into new ones that run in bf16
    (measured, OpenVINO 2026.4.1, a Conv after the sampler): Unsqueeze / Squeeze into a Reshape (the dynamo export's
    Unsqueeze of theta: 0.114 off), Pad-12 into Pad-1 and ScatterElementsUpdate-12 into -3 (kornia's 3x3 matrix),
    a MatMul of a few terms into products summed (``_summed_products``: what older releases keep in f32). Only
    float ops are respelled. A Divide stays OpenVINO's (a * (1 / b), as the importer's model computes it): the
    plugin makes it a Multiply by a new, unmarked Power -1, which the cone's tie to the graph's tail
    (``pinned_tail``) keeps in f32 in every release (kornia's warp_perspective then a Conv, at the bf16 default:
    0.0069 off onnxruntime in 2023.3, 2024.6, 2025.4 and 2026.4.1, the importer 0.81; untied, 0.54). The refined
    reciprocal it was spelled as before cost 2.9x the Divide's kernel there (0.35 ms against 0.12 at 224 x 224)."""
    import numpy as np

    o, out, kind = ops(), node.output(0), node.get_type_name()
    if not out.get_element_type().is_real():
        return node
    version = node.get_type_info().version_id
    args = node.input_values()
    if kind in ("Unsqueeze", "Squeeze") or (kind == "Gather" and _picks_a_unit_axis(node)):
        # the target shape a constant: the output's, -1 for at most one length known only at run time
        shape = out.get_partial_shape()
        if not shape.rank.is_static or sum(not d.is_static for d in shape) > 1:
            return node
        target = [d.get_length() if d.is_static else -1 for d in shape]
        new = o.reshape(args[0], o.constant(np.array(target, np.int64)), False)
    elif kind == "Pad" and version == "opset12" and _non_negative(node):
        new = _opset(1).pad(*args[:3], node.get_attributes()["pad_mode"], *args[3:])
    elif kind == "ScatterElementsUpdate" and version == "opset12" and \
            node.get_attributes().get("reduction") == "none":
        new = _opset(3).scatter_elements_update(*args)
    elif kind == "MatMul":
        new = _summed_products(node)
        if new is None:
            return node
    else:
        return node
    return replaced(node, new)


def replaced(node, new):
    """``new`` (an op or its output) in the place of ``node``, under its friendly name (what the proofs find)."""
    new = new.get_node() if hasattr(new, "get_node") else new
    new.set_friendly_name(node.get_friendly_name())
    node.output(0).replace(new.output(0))
    return new


def _summed_products(node):
    """A MatMul of coordinate arithmetic (``coordinate_op``: at most ``MAX_CONTRACTION`` terms) as K products summed
    in order, or None where an operand's rank is not static. OpenVINO before 2026 runs a MatMul in bf16 whatever its
    mark, and the graph-tail tie (``pinned_tail``) stops at one: kornia's warp_affine, its grid a MatMul of the base
    grid by theta, was 0.12 / 0.24 off in 2023.3 / 2025.4 at bf16 (0 now). The same sums of products in float32
    (their order may differ: within float32's rounding of the MatMul's). Term k is a's column k repeated N times
    (a Gather: the plugin folds it where a is a constant, kornia's base grid) times b's row k, so that every op is
    elementwise over the output's own layout and the plugin fuses the products and sums into one kernel: a
    Multiply over [.., M, K, N] and a ReduceSum over its short axis cost kornia's warp_perspective at 224 x 224
    1.15 ms against the MatMul's 0.06 (2.7x the importer's whole model; AMD EPYC Zen 4, f32 hint, 2 threads)."""
    import numpy as np

    o, attrs = ops(), node.get_attributes()
    a, b = node.input_values()
    ranks = [v.get_partial_shape().rank for v in (a, b)]
    if not all(r.is_static for r in ranks):
        return None
    ra, rb = (r.get_length() for r in ranks)

    def axis(k):
        return o.constant(np.int64(k))

    def last_two_swapped(v, rank):
        return o.transpose(v, o.constant(np.array([*range(rank - 2), rank - 1, rank - 2], np.int64))).output(0)
    # a vector is a one-row (a) or one-column (b) matrix, that axis dropped after (the MatMul's own rule)
    a = o.unsqueeze(a, axis(0)).output(0) if ra == 1 else last_two_swapped(a, ra) if attrs.get("transpose_a") else a
    b = o.unsqueeze(b, axis(1)).output(0) if rb == 1 else last_two_swapped(b, rb) if attrs.get("transpose_b") else b
    # sum over k of a[.., :, k] (repeated N times where N is known) * b[.., k, :]
    k_terms, n = a.get_partial_shape()[-1], b.get_partial_shape()[-1]
    if not k_terms.is_static:
        return None
    out = None
    for k in range(k_terms.get_length()):
        column = o.gather(a, o.constant(np.full(n.get_length() if n.is_static else 1, k, np.int64)), axis(-1))
        term = o.multiply(column, o.gather(b, o.constant(np.array([k], np.int64)), axis(-2)))
        out = term if out is None else o.add(out, term)
    out = o.squeeze(out, axis(-1)) if rb == 1 else out
    return o.squeeze(out, axis(-2 if rb != 1 else -1)) if ra == 1 else out


def _respelled_own(node):
    """Beyond ``respelled``, for our own forms' ops (their NaN handling is theirs, decided before these ops), the
    rewrites the CPU plugin makes (measured, OpenVINO 2026.4.1, bf16: a 1-D DeformConv with a dynamic batch 0.7% of
    the output's range off, a 3-D GridSample 1.4%; fuzz_precision found the second): a float Subtract becomes
    a + b * -1 in new, unmarked ops (spelled so here: exact, a negation by a -1 that is not a constant), and a
    Maximum / Minimum with a constant bound is fused with its partner into a new, unmarked Clamp (spelled as a
    comparison and a Select)."""
    import numpy as np

    o, out, kind = ops(), node.output(0), node.get_type_name()
    if not out.get_element_type().is_real():
        return node
    args = node.input_values()
    constant = [a.get_node().get_type_name() == "Constant" for a in args]
    if kind == "Subtract" and not constant[1]:
        # a + b * -1 with the -1 drawn from b (b < b is false, NaN included; 0 - 1 is exact at any precision): with
        # a constant -1 OpenVINO's SubtractFusion turns it back into the Subtract, which the plugin then rewrites
        dtype = out.get_element_type()
        minus_one = o.subtract(o.convert(o.less(args[1], args[1]), dtype), o.constant(np.asarray(1, dtype.to_dtype())))
        new = o.add(args[0], o.multiply(args[1], minus_one))
    elif kind in ("Maximum", "Minimum") and constant.count(True) == 1:
        v, bound = (args[1], args[0]) if constant[0] else (args[0], args[1])
        new = o.select((o.less if kind == "Maximum" else o.greater)(v, bound), bound, v)
    else:
        return node
    return replaced(node, new)


def _picks_a_unit_axis(gather) -> bool:
    """A Gather of one scalar index on an axis of length 1: the plugin rebuilds it as a Reshape (unmarked: bf16)."""
    index, axis = constant_of(gather, 1), constant_of(gather, 2)
    shape = gather.input_value(0).get_partial_shape()
    if index is None or axis is None or index.ndim != 0 or int(index) not in (0, -1) or not shape.rank.is_static:
        return False  # (an index past the axis reads zeros in OpenVINO's Gather, not the element)
    dim = shape[int(axis) % shape.rank.get_length()]
    return dim.is_static and dim.get_length() == 1


def _non_negative(pad) -> bool:
    """A Pad's begins and ends are constants >= 0 (Pad-1 has no crop)."""
    values = [constant_of(pad, port) for port in (1, 2)]
    return all(v is not None and (v >= 0).all() for v in values)


def _opset(n: int):
    import importlib

    return importlib.import_module(f"openvino.opset{n}")


def coordinate_op(node) -> bool:
    """An op of coordinate arithmetic the walk pins and passes through (ShapeOf: pinned nothing, passed not)."""
    t = node.get_type_name()
    if t == "MatMul":
        shape = node.input_value(0).get_partial_shape()
        if not shape.rank.is_static:
            return False
        rank = shape.rank.get_length()
        k = shape[rank - 2 if rank > 1 and node.get_attributes().get("transpose_a") else rank - 1]
        return k.is_static and k.get_length() <= MAX_CONTRACTION
    return t in _COORDINATE_OPS
