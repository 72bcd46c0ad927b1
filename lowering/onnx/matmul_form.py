"""Rung 2's matrix form on the ONNX target (issue 45), guarded: one MatMul per resized axis by the dense matrices
of the oracle's tap tables (``lowering.resize_forms.dense_plan``, the plan OpenVINO's ``matmul_rewrite`` builds),
exact only where every input element is finite (``resize_forms.CONDITION``). The ONNX target takes no condition,
so the matrices sit in the then branch of an If on "every element finite" (``ReduceSum(X * 0) == 0``: x * 0 is 0
for a finite x, NaN for an inf or NaN, and a sum with a NaN is NaN), and the else branch is the decomposition
(rung 3, ``decompose.decompose_resize``), exact for every input: the node is exact for every input.

Both branches read X from the outer graph and hold their own constants, so the node's cut (``cut.submodel``) needs
X alone. The proof (``prove_form``) re-reads the guard, each MatMul's matrix against the plan recomputed from the
source IR and the else branch's tap tables (``prove.prove_tables``); the probes, one with inf and NaN, prove the
numbers of both branches on onnxruntime.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..resize_forms import Dense, dense_plan
from .decompose import PORTABLE, decompose_resize

FORM = "matmul"


@dataclass(frozen=True)
class Guarded:
    """The rung's payload: the plan of the then branch."""

    axes: tuple


def part(name: str, what: str) -> str:
    return f"{name}/{FORM}/{what}"


def build(graph, ir, g: Guarded, x, y, name: str, compute: dict = PORTABLE) -> list:
    """Add to ``graph`` (onnx-graphsurgeon) the guard and its If (the matrices, else the decomposition) from
    Variable ``x`` into Variable ``y``; return the nodes added to ``graph``."""
    import onnx_graphsurgeon as gs

    zero = gs.Constant(part(name, "zero"), np.zeros((), np.float32))
    v = [gs.Variable(f"{part(name, w)}:0") for w in ("times_zero", "sum", "finite")]
    added = [gs.Node("Mul", part(name, "times_zero"), {}, [x, zero], [v[0]]),
             gs.Node("ReduceSum", part(name, "sum"), {"keepdims": 0}, [v[0]], [v[1]]),
             gs.Node("Equal", part(name, "finite"), {}, [v[1], zero], [v[2]])]
    then_y, else_y = (gs.Variable(f"{part(name, w)}/y:0", dtype=np.float32) for w in ("then", "else"))
    then = gs.Graph(nodes=_matmuls(g.axes, x, then_y, ir.rank, name), outputs=[then_y], name=part(name, "then"))
    other = gs.Graph(outputs=[else_y], name=part(name, "else"))
    decompose_resize(other, ir, x, else_y, ir.input_shape, name, compute=compute)
    added.append(gs.Node("If", part(name, "guard"), {"then_branch": then, "else_branch": other}, [v[2]], [y]))
    graph.nodes.extend(added)
    return added


def _matmuls(axes, x, y, rank: int, name: str) -> list:
    """The last axis X @ M^T, the one before M @ X (``plan`` takes no other)."""
    import onnx_graphsurgeon as gs

    nodes, cur = [], x
    for i, d in enumerate(axes):
        out = y if i == len(axes) - 1 else gs.Variable(f"{part(name, f'axis{d.axis}')}:0")
        m = gs.Constant(part(name, f"axis{d.axis}/matrix"), _stored(d, rank))
        inputs = [cur, m] if d.axis == rank - 1 else [m, cur]
        nodes.append(gs.Node("MatMul", part(name, f"axis{d.axis}"), {}, inputs, [out]))
        cur = out
    return nodes


def _stored(d: Dense, rank: int) -> np.ndarray:
    """The matrix as the MatMul holds it: M^T on the last axis (X @ M^T), M on the one before (M @ X)."""
    return np.ascontiguousarray(d.matrix.T if d.axis == rank - 1 else d.matrix)


def plan(ir, opset: int) -> Guarded | str:
    """The guarded form's plan, or why not: static shapes, resized axes among the last two (a MatMul each, no
    Reshape), opset 13 (ReduceSum's axes optional)."""
    if opset < 13:
        return f"the matrix form needs opset 13; the model imports {opset}"
    axes = dense_plan(ir, ir.input_shape)
    if isinstance(axes, str):
        return axes
    if any(d.axis < ir.rank - 2 for d in axes):
        return "an axis before the last two is resized (the form multiplies the last two)"
    return Guarded(tuple(axes))


def prove_form(rec, nodes: dict, consts: dict, compute: dict, prove_tables) -> list[str]:
    """The written form re-read against the source IR (the plan recomputed here): the guard (Mul by an exact 0 of X,
    ReduceSum of every axis, Equal to 0, If on it writing the node's output), the then branch's MatMuls and
    matrices in order from X, and the else branch's tap tables (``prove_tables``)."""
    import onnx
    from onnx import numpy_helper

    name, ir = rec.node, rec.ir
    got = plan(ir, rec.proof.get("opset", 13))
    if isinstance(got, str):
        return [f"{name}: the source IR has no matrix form here: {got}"]
    x = rec.proof["inputs"][0]
    mul, total, eq, guard = (nodes.get(part(name, w)) for w in ("times_zero", "sum", "finite", "guard"))
    zero = None if mul is None else consts.get(mul.input[1])
    attrs = {} if total is None else {a.name: onnx.helper.get_attribute_value(a) for a in total.attribute}
    if None in (mul, total, eq, guard) or mul.op_type != "Mul" or list(mul.input) != [x, part(name, "zero")] or \
            zero is None or zero.shape != () or zero != 0 or total.op_type != "ReduceSum" or \
            list(total.input) != [mul.output[0]] or attrs != {"keepdims": 0} or eq.op_type != "Equal" or \
            list(eq.input) != [total.output[0], mul.input[1]] or guard.op_type != "If" or \
            list(guard.input) != [eq.output[0]] or list(guard.output) != [rec.proof["output"]]:
        return [f"{name}: the finite-input guard (If on ReduceSum(X * 0) == 0) is missing or differs"]
    branches = {a.name: a.g for a in guard.attribute}
    then, other = branches.get("then_branch"), branches.get("else_branch")
    out, prev = [], x
    then_nodes = list(then.node) if then is not None else []
    then_consts = {i.name: numpy_helper.to_array(i) for i in then.initializer} if then is not None else {}
    if len(then_nodes) != len(got.axes):
        return [f"{name}: the then branch holds {len(then_nodes)} nodes, the plan {len(got.axes)} MatMuls"]
    for node, d in zip(then_nodes, got.axes):
        want = _stored(d, ir.rank)
        m = part(name, f"axis{d.axis}/matrix")
        order = [prev, m] if d.axis == ir.rank - 1 else [m, prev]
        w = then_consts.get(m)
        if node.op_type != "MatMul" or list(node.input) != order or w is None or w.dtype != np.float32 or \
                not np.array_equal(w, want):
            out.append(f"{name}: axis {d.axis}: the MatMul or its matrix differs from the source IR's taps")
        prev = node.output[0]
    if then is not None and [o.name for o in then.output] != [prev]:
        out.append(f"{name}: the then branch does not return its last MatMul")
    if other is None:
        return out + [f"{name}: the If has no else branch"]
    else_nodes = {n.name: n for n in other.node}
    else_consts = {i.name: numpy_helper.to_array(i) for i in other.initializer}
    return out + prove_tables(name, ir, else_nodes, else_consts, compute)
