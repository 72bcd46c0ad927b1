"""Rung 3: a static-shape Resize written in plain ONNX ops from the source IR's own tap tables.

Per resized axis, in the op's order (the oracle's): ``Gather(y, index[O, K], axis)`` -> ``Mul(weight[O, K, 1..])``
-> the K terms added in the order the oracle adds them -> ``Where(extrapolate, value, y)`` for
tf_crop_and_resize. The constants come from ``semantics.taps.axis_taps`` and carry names the proof finds them
by (``tap_name``). Adds rather than ReduceSum because the summation order must be the oracle's for integer
outputs to round bit-exactly; ReduceSum's order is the runtime's business.

The arithmetic type is a policy (input dtype -> compute dtype): ``PORTABLE`` computes float32 in float32,
float16 in float32 (cast back), and integers in float64, rounded half to even, clipped and cast (ONNX's
saturate cast, as the oracle). A target without float64 (TensorRT) passes its own policy; a dtype missing
from it is refused.
"""

from __future__ import annotations

import math

import numpy as np

from ...semantics.coords import bind_resize
from ...semantics.errors import BridgeError
from ...semantics.taps import axis_taps
from ...translate.dtypes import ONNX as ONNX_DTYPES

PORTABLE = ONNX_DTYPES["decompose"]  # input dtype -> arithmetic dtype (translate/dtypes.py)


def tap_name(name: str, axis: int, part: str) -> str:
    """Where the proof looks for axis ``axis``'s tables: node ``gather``/``mul``/``where``, constant ``index``/
    ``weight``/``mask``."""
    return f"{name}/taps{axis}/{part}"


def check_decomposable(ir, in_shape, opset: int | None = None, compute: dict = PORTABLE):
    """The bound resize and compute dtype, or BridgeError naming the field that prevents the decomposition."""
    bound = bind_resize(ir, in_shape)
    if bound.pads:
        raise BridgeError("zero padding before the resize has no ONNX Resize meaning here", field="pads")
    if 0 in bound.in_shape or 0 in bound.out_shape:
        raise BridgeError(f"zero-length tensor ({bound.in_shape} -> {bound.out_shape}): nothing to gather",
                          field="sizes" if ir.sizes is not None else "scales")
    dtype = str(ir.dtype)
    if dtype not in compute:
        # Short, whole: a refusal line quotes it among the other rungs' reasons and cuts long ones.
        raise BridgeError(f"element type {dtype} has no exact compute type in this target's dtype policy",
                          field="dtype")
    need = 7  # Mul/Add broadcasting
    if any(ax.valid is not None for ax in bound.axes):
        need = 9  # Where, for tf_crop_and_resize
    if np.issubdtype(np.dtype(dtype), np.integer):
        need = 11  # Round
    if opset is not None and opset < need:
        raise BridgeError(f"the decomposition needs opset {need}; the model imports opset {opset}", field="opset")
    return bound, compute[dtype]


def sum_order(n: int, innermost: bool):
    """Nested pairs of term indices in the order numpy's ``sum`` adds them (the oracle's
    ``(g * w).sum(axis)``): left to right, unless the summed axis is innermost in memory (nothing but unit axes
    after it), where numpy sums pairwise with eight accumulators over blocks of up to 128."""
    def seq(ids):
        tree = ids[0]
        for i in ids[1:]:
            tree = (tree, i)
        return tree

    def pairwise(ids):
        m = len(ids)
        if m < 8:
            return seq(ids)
        if m <= 128:
            acc = [seq(ids[j:m - m % 8:8]) for j in range(8)]
            tree = (((acc[0], acc[1]), (acc[2], acc[3])), ((acc[4], acc[5]), (acc[6], acc[7])))
            return seq([tree] + ids[m - m % 8:])
        h = m // 2 - (m // 2) % 8
        return (pairwise(ids[:h]), pairwise(ids[h:]))

    return (pairwise if innermost else seq)(list(range(n)))


def fill_value(bound, dtype, work) -> np.ndarray:
    """tf_crop_and_resize's extrapolation value as the oracle applies it: in the input's float type for floats
    (so float16 is not rounded twice), in float64 for integers (the saturate cast comes after)."""
    v = np.asarray(bound.extrapolation_value, dtype=dtype if np.dtype(dtype).kind == "f" else np.float64)
    return v.astype(work)


def decompose_resize(graph, ir, x, y, in_shape, name: str, *, compute: dict = PORTABLE,
                     opset: int | None = None) -> list:
    """Add to ``graph`` (onnx-graphsurgeon) the nodes computing Resize ``ir`` from Variable ``x`` into Variable
    ``y`` (which must have no producer) for the static ``in_shape``; return the nodes added."""
    import onnx
    import onnx_graphsurgeon as gs

    bound, work = check_decomposable(ir, in_shape, opset, compute)
    dtype = np.dtype(ir.dtype)
    added: list = []

    def const(suffix, value):
        return gs.Constant(f"{name}/{suffix}", np.asarray(value))

    def op(kind, suffix, inputs, **attrs):
        out = gs.Variable(f"{name}/{suffix}:0")
        added.append(gs.Node(kind, f"{name}/{suffix}", attrs, list(inputs), [out]))
        return out

    def cast(v, to, suffix):
        return op("Cast", suffix, [v], to=onnx.helper.np_dtype_to_tensor_dtype(np.dtype(to)))

    cur = x if dtype == work else cast(x, work, "cast_in")
    shape = list(bound.in_shape)
    rank = len(shape)
    for ax in bound.axes:
        a = ax.axis
        t = axis_taps(ax, bound.sampler, bound.exclude_outside)
        O, K = t.index.shape
        tail = (1,) * (rank - a - 1)
        if K == 1 and np.all(t.weight == 1.0):  # nearest: the gather is the whole axis
            cur = op("Gather", f"taps{a}/gather", [cur, const(f"taps{a}/index", t.index[:, 0])], axis=a)
        else:
            g = op("Gather", f"taps{a}/gather", [cur, const(f"taps{a}/index", t.index)], axis=a)
            p = op("Mul", f"taps{a}/mul", [g, const(f"taps{a}/weight", t.weight.reshape((O, K) + tail).astype(work))])
            terms = [op("Gather", f"taps{a}/term{k}", [p, const(f"taps{a}/k{k}", np.int64(k))], axis=a + 1)
                     for k in range(K)]
            count = iter(range(K))

            def emit(tree):
                if isinstance(tree, int):
                    return terms[tree]
                left, right = emit(tree[0]), emit(tree[1])
                return op("Add", f"taps{a}/add{next(count)}", [left, right])

            cur = emit(sum_order(K, math.prod(shape[a + 1:]) == 1))
        shape[a] = O
        if t.extrapolate is not None and t.extrapolate.any():
            cur = op("Where", f"taps{a}/where", [const(f"taps{a}/mask", t.extrapolate.reshape((O,) + tail)),
                                                  const(f"taps{a}/value", fill_value(bound, dtype, work)), cur])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        cur = op("Round", "round", [cur])  # half to even, as ONNX's saturate cast
        cur = op("Max", "clip_min", [cur, const("min", np.asarray(info.min, dtype=work))])
        cur = op("Min", "clip_max", [cur, const("max", np.asarray(info.max, dtype=work))])
    if dtype != work:
        cur = cast(cur, dtype, "cast_out")
    if not added:  # every axis is the identity
        op("Identity", "copy", [x])
    added[-1].outputs = [y]
    graph.nodes.extend(added)
    return added


__all__ = ["PORTABLE", "decompose_resize", "check_decomposable", "fill_value", "sum_order", "tap_name"]
