"""Rung 2 for Resize, in matrix ops: a static resize (any coordinate map, align_corners included, any ratio,
linear / cubic / nearest, antialias) as one MatMul per resized axis by a constant [out, in] matrix whose row
holds that output's taps (``semantics.taps.axis_taps``, the oracle's own table: each tap's weight added at its
clamped input index, every other entry an exact 0). The last axis is ``X @ M^T`` (OpenVINO's fully connected
path); another axis ``M @ X`` over the axes after it, flattened into one (a Reshape, no Transpose).

Why it is exact, and the condition: a row sums the taps' products and products of exact zeros, and x * 0 = 0
adds nothing for a finite x; but an inf or NaN anywhere on the axis makes every output of its row NaN, where the
oracle reads it only through the taps. So the form alone is exact only for finite inputs: with
``--allow-conditional`` it is taken so, the condition stated; the default policy takes it guarded instead
(``guarded``): an If on "every input element is finite" (IsFinite, ReduceLogicalAnd) runs the matrices, else the
exact rung the ladder chose, built in the other branch, so the node is exact for every input. MatMul's own order
and fused multiply-adds are within the forward error bound (``semantics.error_bound``: any order, fused or not,
float32 between separable passes); two clamped taps on one index add their weights once (float64, then rounded
to float32), within the weights' rounding term.

Precision: the matrices are float32 (the oracle's weights). Under a bf16 inference hint the CPU runs MatMul in
bf16, the weights rounded there: value rounding only (no index moves, the matrix is constant); the record says
whether every weight survives it (``bf16_exact_weights``).
"""

from __future__ import annotations

import numpy as np

from ..passes import Candidate, Refusal
from ..resize_forms import CONDITION, Dense, macs  # noqa: F401  (macs: read by the cost model)
from ..resize_forms import dense_plan as plan
from .graph import dims, ops, tag

FORM = "matmul"


def build(x, axes: list[Dense], shape, name: str):
    o = ops()
    cur = list(shape)
    y = x
    for d in axes:
        w = o.constant(d.matrix)
        tag(w, f"{name}/{FORM}/axis{d.axis}/matrix")
        if d.axis == len(cur) - 1:
            mm = o.matmul(y, w, transpose_a=False, transpose_b=True)
        elif d.axis == len(cur) - 2:
            mm = o.matmul(w, y, transpose_a=False, transpose_b=False)
        else:  # the axes after it flattened into one: [..., L, rest] -> M @ -> [..., O, rest]
            flat = o.reshape(y, o.constant(np.array(cur[:d.axis] + [d.in_len, -1], np.int64)), False)
            mm = o.matmul(w, flat, transpose_a=False, transpose_b=False)
        cur[d.axis] = d.out_len
        tag(mm, f"{name}/{FORM}/axis{d.axis}")
        y = mm.output(0)
        if d.axis < len(cur) - 2:
            y = o.reshape(y, o.constant(np.array(cur, np.int64)), False).output(0)
    return y


def guarded(x, axes: list[Dense], shape, name: str, otherwise):
    """If every element of ``x`` is finite, the matrices; else ``otherwise(input)`` (the exact rung the ladder
    chose, built on the else branch's own input: its output)."""
    import openvino as ov

    o = ops()
    # untagged: read through the If (``_guard_failures``), since OpenVINO merges the identical tests of several
    # nodes guarded on one tensor into one op, which keeps one tag
    finite = o.reduce_logical_and(o.is_finite(x), o.constant(np.arange(len(shape), dtype=np.int64)), False)
    branch = o.if_op(finite.output(0))
    then_in, else_in = (o.parameter(list(shape), x.get_element_type()) for _ in range(2))
    bodies = [ov.Model([o.result(y)], [p]) for y, p in ((build(then_in.output(0), axes, shape, name), then_in),
                                                         (otherwise(else_in.output(0)), else_in))]
    branch.set_then_body(bodies[0])
    branch.set_else_body(bodies[1])
    branch.set_input(x, then_in, else_in)
    out = branch.set_output(bodies[0].get_results()[0], bodies[1].get_results()[0])
    tag(branch, f"{name}/{FORM}/guard")
    return out


def body_inputs(node, x) -> list:
    """``node``'s inputs with ``x`` for X and copies of its constants (a branch's body has its own)."""
    o = ops()
    return [x] + [None if i is None else o.constant(np.array(i.get_node().get_data(), copy=True),
                                                    dtype=i.get_element_type()).output(0) for i in node.inputs[1:]]


def rung(node, otherwise=None, fallback=None):
    """The matrix form of ``node``, or why it has none: conditional (finite inputs) alone; guarded where
    ``otherwise`` builds the exact rung the ladder chose on a given X (``fallback``: that rung's record)."""
    x = node.inputs[0]
    shape = dims(x)
    got = plan(node.ir, shape)
    if isinstance(got, str):
        return Refusal(f"no matrix form: {got}", facts={"quiet": True})
    out = build(x, got, shape, node.name) if otherwise is None else guarded(x, got, shape, node.name, otherwise)
    bf16 = all(d.bf16_exact() for d in got)
    lengths = ", ".join(f"{d.in_len} -> {d.out_len}" for d in got)
    reason = (f"a MatMul per axis ({lengths}) by matrices of the oracle's tap tables (float32 weights, "
              f"{'exact' if bf16 else 'rounded'} in bf16)")
    proof = {"form": FORM, "shape": tuple(shape), "bf16_exact_weights": bf16}
    if otherwise is None:
        return Candidate([out], reason, conditions=(CONDITION,), proof=proof)
    reason += f", where every input element is finite; else {fallback.reason.split(': ')[0]} (rung {fallback.rung})"
    return Candidate([out], reason, proof={**proof, "fallback": fallback})


def prove(rec, by_tag) -> list[str]:
    """Each axis's MatMul re-read against the source IR's tap tables (recomputed here): its matrix constant and
    which side it multiplies from; alone, the record must carry the finite-input condition, guarded, the guard is
    re-read (``_guard_failures``). The probes prove the numbers."""
    shape = rec.proof["shape"]
    axes = plan(rec.ir, shape)
    if isinstance(axes, str):
        return [f"{rec.node}: the source IR has no matrix form here: {axes}"]
    guard = by_tag.get(f"{rec.node}/{FORM}/guard")
    if "fallback" not in rec.proof and CONDITION not in rec.conditions:
        return [f"{rec.node}: the matrix form's record lost its finite-input condition"]
    out = [] if "fallback" not in rec.proof else _guard_failures(rec, guard)
    for d in axes:
        mm = by_tag.get(f"{rec.node}/{FORM}/axis{d.axis}")
        if mm is None or mm.get_type_name() != "MatMul":
            out.append(f"{rec.node}: axis {d.axis}: the MatMul is missing from the produced model")
            continue
        last = d.axis == len(shape) - 1
        port = 1 if last else 0
        src = mm.input_value(port).get_node()
        got = src.get_data() if src.get_type_name() == "Constant" else None
        # Last axis X @ M^T (M stored with transpose_b, or M^T without); another M @ X (M, or M^T with transpose_a).
        flag = bool(mm.get_attributes().get("transpose_b" if last else "transpose_a"))
        want = d.matrix if flag == last else d.matrix.T
        if got is None or got.dtype != np.float32 or got.shape != want.shape or not np.array_equal(got, want):
            out.append(f"{rec.node}: axis {d.axis}: the matrix differs from the source IR's taps")
    return out


def _guard_failures(rec, guard) -> list[str]:
    """The guard re-read: an If whose condition is every element of the tensor it hands its branches finite
    (IsFinite of that tensor, then ReduceLogicalAnd over every axis), the matrices in its then branch (``prove``
    finds them by tag). The fallback in the else branch is proven as its own rung's record
    (``lowering.openvino.prove``)."""
    if guard is None or guard.get_type_name() != "If" or guard.get_input_size() < 2:
        return [f"{rec.node}: the finite-input guard (If) is missing from the produced model"]
    finite = guard.input_value(0).get_node()
    test = finite.input_value(0) if finite.get_input_size() == 2 else None
    axes = finite.input_value(1).get_node() if test is not None else None
    if finite.get_type_name() != "ReduceLogicalAnd" or test.get_node().get_type_name() != "IsFinite" or \
            not _same_output(test.get_node().input_value(0), guard.input_value(1)) or \
            axes.get_type_name() != "Constant" or \
            sorted(axes.get_data().tolist()) != list(range(len(rec.proof["shape"]))):
        return [f"{rec.node}: the guard does not test every input element for being finite"]
    return []


def _same_output(a, b) -> bool:
    return a.get_node().get_name() == b.get_node().get_name() and a.get_index() == b.get_index()
