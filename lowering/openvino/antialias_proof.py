"""The proof of rung 3's run-time antialias window form (``antialias_taps``): the window subgraphs re-read from the
produced model, each axis' tap sum by its structure (``antialias_taps.tap_sum``), the window's numbers by the
grid verdict (``antialias_taps.grid_verdict``)."""

from __future__ import annotations

import numpy as np

from ...semantics.nearest_index import NoNearestIndex
from ...semantics.window_form import WindowForm, window_form
from .antialias_taps import copied, grid_verdict, tap_layout
from .graph import ops
from .index_ops import cut, tag_of
from .nearest_index import tags_in_copy


def prove(rec, by_tag, ov_model) -> list[str]:
    """Every resized axis has its Gather (on that axis, fed by the one before) and its sum over the taps
    (``tap_sum``'s, by structure: ``_weights_of``, ``_matmul_weights``), and its window subgraph, taken out of a
    copy of the produced model with parameters in place of the run-time lengths it reads (the tagged Maximum ops;
    a length OpenVINO folded is a Constant, fixed there), gives the oracle's taps over ``GRID``."""
    form = window_form(rec.ir)
    if isinstance(form, NoNearestIndex):
        return [f"{rec.node}: the source IR has no run-time window form ({form.reason})"]
    tags = tags_in_copy(rec, by_tag, ov_model)
    if list(rec.proof.get("copied", ())) != list(copied(rec.ir)):
        return [f"{rec.node}: the axes left as they are are not the ones the source IR copies"]
    out, prev = [], None
    for axis in rec.proof.get("axes", ()):
        why = _prove_axis(tags, rec, axis, form, prev)
        out += [f"{rec.node}: axis {axis}: {m}" for m in why]
        prev = tags.get(tag_of(rec.node, axis, "sum"))
    return out


def taps_read(tags, rec, axis: int, prev):
    """(index, weight) that the axis' Gather and tap sum read, found by structure (``tap_sum``'s: the weights
    reshaped to the index's [K, out] or [out, K]), or why they are not there."""
    g, total = tags.get(tag_of(rec.node, axis, "gather")), tags.get(tag_of(rec.node, axis, "sum"))
    if g is None or g.get_type_name() != "Gather" or total is None:
        return "no Gather of the window in the produced model"
    if _constant(g.input_value(2)) != [axis]:
        return "the Gather reads another axis"
    if prev is not None and g.input_value(0).get_node().get_name() != prev.get_name():
        return "the Gather does not read the previous axis' result"
    along = tap_layout(rec.ir.rank, axis)
    if total.get_type_name() == "Add":
        return _tap_by_tap_read(total, g, axis, rec.ir.rank)
    side = _matmul_weights(total, g, axis) if along else _weights_of(total, g, axis, rec.ir.rank)
    if side is None:
        return "the taps are not " + ("a MatMul of the weights [out, 1, K] by the Gather" if along else
                                      "a Multiply of the Gather by the weights") + " summed over K"
    index = g.input_value(1)
    return index, side if along else ops().reshape(side, ops().shape_of(index), False).output(0)


def _prove_axis(tags, rec, axis: int, form: WindowForm, prev) -> list[str]:
    read = taps_read(tags, rec, axis, prev)
    if isinstance(read, str):
        return [read]
    index, weight = read
    cut = window_cut(tags, rec, axis, [index, weight])
    if isinstance(cut, str):
        return [cut]
    model, fixed = cut
    verdict = grid_verdict(model, rec.ir, form, fixed, tap_layout(rec.ir.rank, axis))
    return [] if verdict is None else [verdict]


def window_cut(tags, rec, axis: int, outputs: list):
    """(model, fixed): the window subgraph of ``outputs`` taken out of a copy of the produced model, a parameter
    in place of each run-time length it reads (the tagged in / out), each length OpenVINO folded fixed at the
    static one recorded at lowering (None where a parameter stands); or why it cannot be cut."""
    import openvino as ov

    o = ops()
    params, fixed = [], []
    for role, known in zip(("in", "out"), rec.proof.get("fixed", {}).get(axis, (None, None))):
        # A length OpenVINO folded (its tag may then sit on another folded constant) is the static one
        # recorded at lowering.
        op = tags.get(tag_of(rec.node, axis, role))
        if op is None or op.get_type_name() == "Constant":
            if known is None:
                return f"the window's run-time {role} length is not in the produced model"
            fixed.append(int(known))
            continue
        p = o.parameter([], np.int64, name=role)
        cut(op.output(0), p.output(0))
        params.append(p)
        fixed.append(None)
    try:
        return ov.Model(outputs, params, "window_proof"), tuple(fixed)
    except RuntimeError as e:
        return f"the window subgraph depends on more than its lengths ({str(e).splitlines()[-1][:120]})"


def _tap_by_tap_read(total, first, axis: int, rank: int):
    """(index, weight) of ``antialias_taps.tap_by_tap``'s sum ``total``: an Add of terms, each a Multiply of a
    Gather on ``axis`` of what the first Gather reads by the tap's index vector, and the tap's weight vector
    [out] (unsqueezed [out, 1, ..] on an outer axis). Read back as the [K, out] / [out, K] tables of the taps
    the graph holds, whatever built each vector (OpenVINO may have folded it), or why they are not there."""
    terms, node = [], total
    while node.get_type_name() == "Add":
        left, right = node.input_values()
        terms.append(right.get_node())
        node = left.get_node()
    terms.append(node)
    o = ops()
    indices, weights = [], []
    for mul in reversed(terms):
        g = mul.input_value(0).get_node() if mul.get_type_name() == "Multiply" else None
        if g is None or g.get_type_name() != "Gather" or _constant(g.input_value(2)) != [axis] or \
                g.get_attributes().get("batch_dims", 0) != 0 or \
                g.input_value(0).get_node().get_name() != first.input_value(0).get_node().get_name():
            return "the taps are not each a Gather on the axis of the previous result times its weights, summed"
        w = mul.input_value(1)
        shape = w.get_partial_shape()
        if shape.rank.is_dynamic or shape.rank.get_length() != rank - axis or \
                any(not d.is_static or d.get_length() != 1 for d in list(shape)[1:]):
            return "a tap's weights are not one per output of the axis"
        index = g.input_value(1)
        indices.append(o.unsqueeze(index, o.constant(np.int64(0))).output(0))
        weights.append(o.unsqueeze(o.reshape(w, o.shape_of(index), False), o.constant(np.int64(0))).output(0))
    along = tap_layout(rank, axis)

    def table(rows):
        t = o.concat(rows, 0).output(0)
        return o.transpose(t, o.constant(np.array([1, 0], np.int64))).output(0) if along else t
    return table(indices), table(weights)


def _weights_of(total, g, axis: int, rank: int):
    """The weights ``tap_sum`` multiplies the Gather ``g`` by, where ``total`` sums that Multiply over the taps
    on ``axis`` (the last axis: squeezes MatMul(Broadcast(1), Multiply), neither transposed; else a ReduceSum on
    ``axis``), else None."""
    if axis == rank - 1:
        mm = _squeezed_matmul(total, axis)
        ones = None if mm is None else mm.input_value(0).get_node()
        if ones is None or ones.get_type_name() != "Broadcast" or _constant(ones.input_value(0)) != [1.0]:
            return None
        mul = mm.input_value(1).get_node()
    elif total.get_type_name() == "ReduceSum" and _constant(total.input_value(1)) == [axis]:
        mul = total.input_value(0).get_node()
    else:
        return None
    ins = mul.input_values()
    if mul.get_type_name() != "Multiply" or len(ins) != 2 or ins[0].get_node().get_name() != g.get_name():
        return None
    return ins[1]


def _squeezed_matmul(total, axis: int):
    """The MatMul (neither operand transposed) whose 1 on ``axis`` ``total`` squeezes, else None."""
    mm = total.input_value(0).get_node()
    if total.get_type_name() != "Squeeze" or _constant(total.input_value(1)) != [axis] or \
            mm.get_type_name() != "MatMul" or any(mm.get_attributes().get(k) for k in ("transpose_a", "transpose_b")):
        return None
    return mm


def _matmul_weights(total, g, axis: int):
    """The weights [out, K] of ``tap_sum``'s MatMul on the next-to-last axis: ``total`` squeezes the 1 of
    MatMul(Unsqueeze(weights, 1), g), else None. The grid verdict then checks that they have the index's shape
    [out, K]."""
    mm = _squeezed_matmul(total, axis + 1)
    if mm is None:
        return None
    side, taps = (v.get_node() for v in mm.input_values())
    if taps.get_name() != g.get_name() or side.get_type_name() != "Unsqueeze" or \
            _constant(side.input_value(1)) != [1]:
        return None
    return side.input_value(0)


def _constant(v):
    node = v.get_node()
    return node.get_data().reshape(-1).tolist() if node.get_type_name() == "Constant" else None
