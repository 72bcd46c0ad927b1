"""The ops pinned to f32 (``pinned.PRECISE``) kept in f32 by the OpenVINO releases that do not honour the mark
(issue 42: what ``convert`` writes runs wherever its user deploys it, at that release's default precision).

An IR written by OpenVINO 2026 spells the mark ``DisablePrecisionConversion``, which 2023.3 to 2025.4 do not read;
written in their own spelling (``precise``) 2024.6 and 2025.4 read it, yet run the marked ops in bf16 where they
fuse them into a snippet Subgraph or an Eltwise chain, and refuse to compile a marked integer op (i32 against i64).
Measured (AMD EPYC Zen 4, bf16 default hint): a run-time scale window followed by a Conv, written by 2026.4.1,
came out with output shape (1, 4, 0, 0) in 2025.4.1; the antialias window, 0.10 off its f32 numbers in 2023.3 to
2025.4 (value rounding in 2026.4.1: 0.005).

What every release keeps at the model's own precision is the graph's *tail*: the ops from which an output is
reached without passing a Convolution, MatMul, FullyConnected, RNN, ROIPooling or Interpolate (the CPU plugin's
``EnforceInferencePrecision``, unchanged from 2023.3 to 2026.4). So ``keep_in_tail`` ties the pinned regions to the
model's first output: that output becomes y - z, z a 0 computed from each region's ends (the least of 0 and their
first elements, compared with itself: false, NaN included), which the plugin cannot fold, so its walk from the
output reaches every pinned op. The Subtract is one elementwise pass over the output; each end costs a Reshape and a
Slice of one element. Where the regions have ancestors on the data path (a ShapeOf of the resized tensor), those
run in f32 too, up to the last Convolution or MatMul before them.
"""

from __future__ import annotations

import numpy as np

from .graph import bodies, ops
from .pinned import PRECISE

# The mark as OpenVINO 2026 writes it into an IR, which 2023.3 to 2025.4 do not read: removed from a written IR, the
# model reads as those releases read it (``unread``; tests and the precision fuzz campaign).
WRITTEN_MARK = '<attribute name="DisablePrecisionConversion" version="0" value="dynamic:f16" />'


# An op whose outputs are ends of their own: a Convert of pinned floats into integers (``index_arithmetic``), whose
# float input OpenVINO 2024.6 and 2025.4 read in bf16 unless the Convert itself is in the tail (measured: the dynamo
# export's nearest-exact indices, a Conv after it, 0.98 off at bf16 with the region before the Convert tied, 0 so).
TAIL_END = "resample_bridge_tail_end"


def unread(xml_path, out_path) -> int:
    """Copy the IR at ``xml_path`` (its .bin beside it) to ``out_path`` with every ``WRITTEN_MARK`` removed;
    returns how many there were."""
    import shutil
    from pathlib import Path

    text = Path(xml_path).read_text(encoding="utf-8")
    Path(out_path).write_text(text.replace(WRITTEN_MARK, ""), encoding="utf-8")
    shutil.copyfile(Path(xml_path).with_suffix(".bin"), Path(out_path).with_suffix(".bin"))
    return text.count(WRITTEN_MARK)


def _marked(node) -> bool:
    return PRECISE in node.get_rt_info()


def _float(out) -> bool:
    return out.get_element_type().is_real()


def region_ends(ov_model) -> list:
    """The float outputs of marked ops of ``ov_model`` (not of its bodies) that no marked op reads as a float
    result of its own, and the outputs of ops stamped ``TAIL_END`` (the stamp dropped), less those another such
    output already reaches back to (the plugin's walk from an end goes through all its ancestors; the region's
    integer ops keep their precision anyway). Otherwise only floats are read: OpenVINO 2023.3 computed a run-time
    nearest form's output shape as (0, 0, 0, 0) once an i64 tensor of it had a second reader (measured)."""
    ends = [out for op in ov_model.get_ops() if _marked(op) for out in op.outputs()
            if _float(out) and not any(_marked(t.get_node()) and any(_float(o) for o in t.get_node().outputs())
                                       for t in out.get_target_inputs())]
    for op in ov_model.get_ops():
        if TAIL_END in op.get_rt_info():
            del op.get_rt_info()[TAIL_END]
            ends += list(op.outputs())
    tail = graph_tail(ov_model)
    ends = [e for e in ends if e.get_node().get_name() not in tail]  # kept in f32 already: no tie to pay for
    reached = set()
    for end in ends:
        stack = [v.get_node() for v in end.get_node().input_values()]
        while stack:
            node = stack.pop()
            key = node.get_name()
            if key in reached or not _marked(node) or node.get_type_name() in SIGNIFICANT:
                continue
            reached.add(key)
            stack += [v.get_node() for v in node.input_values()]
    return [e for e in ends if e.get_node().get_name() not in reached]


# The op types the CPU plugin's tail walk stops at (EnforceInferencePrecision: Convolution, FullyConnected, MatMul,
# RNN cells and sequences, ROIPooling, Interpolate, and attention / MLP ops fused from MatMuls in 2024 on), as
# OpenVINO ops, with every op the plugin may turn into one of them: a superset, so an op the walk may stop at
# never counts as passed (an end wrongly thought in the tail would run in bf16).
SIGNIFICANT = frozenset({
    "Convolution", "GroupConvolution", "ConvolutionBackpropData", "GroupConvolutionBackpropData",
    "BinaryConvolution", "DeformableConvolution", "MatMul", "Einsum", "ScaledDotProductAttention", "Interpolate",
    "ROIPooling", "PSROIPooling", "RNNCell", "RNNSequence", "LSTMCell", "LSTMSequence", "GRUCell", "GRUSequence",
    "AUGRUCell", "AUGRUSequence", "PagedAttentionExtension"})


def graph_tail(ov_model) -> set:
    """The names of the ops the CPU plugin keeps at the model's own precision whatever the hint: those an output
    reaches without passing a ``SIGNIFICANT`` op (the module note). A region end among them needs no tie: the
    graph's tail is what a tie makes of it (measured on the corpus: 16 of the 28 models whose pins were tied had
    every end there already, and the tie's Subtract over the first output cost a pass over it: 3.8 ms of 16.6 at
    480 x 640, 1 thread)."""
    tail, stack = set(), list(ov_model.get_results())
    while stack:
        for v in stack.pop().input_values():
            parent = v.get_node()
            if parent.get_type_name() not in SIGNIFICANT and parent.get_name() not in tail:
                tail.add(parent.get_name())
                stack.append(parent)
    return tail


def _first(end):
    """[0 or 1] f32: the first element of ``end`` (none where it is empty), flattened and sliced (a Slice over
    every axis of the unflattened tensor: OpenVINO 2023.3 made a Squeeze of it that failed, measured)."""
    o = ops()
    flat = o.reshape(end, o.constant(np.array([-1], np.int64)), False)
    first = o.slice(flat, *(o.constant(np.array([v], np.int64)) for v in (0, 1, 1)))
    return first.output(0) if end.get_element_type().get_type_name() == "f32" else o.convert(first, "f32").output(0)


def keep_in_tail(ov_model) -> int:
    """Tie every pinned region of ``ov_model`` to its first output (see the module note), and of each If / Loop
    body to the body's (the plugin compiles a body as a graph of its own); returns how many ends."""
    tied = sum(keep_in_tail(body) for op in ov_model.get_ops() for body in bodies(op))
    return tied + _tie(ov_model, region_ends(ov_model))


def _tie(ov_model, ends) -> int:
    results = ov_model.get_results()
    if not ends or not results:
        return 0
    o = ops()
    # a 0 first, so the list is never empty (OpenVINO 2023.3 failed a reduction of an empty tensor, measured: a
    # window's tables are empty at an output length of 0), and the least kept as [1] (2023.3 made a Squeeze of it)
    firsts = o.concat([o.constant(np.zeros(1, np.float32)).output(0)] + [_first(e) for e in ends], 0)
    least = o.reduce_min(firsts, o.constant(np.array([0], np.int64)), keep_dims=True)
    result = results[0]
    y = result.input_value(0)
    never = o.reshape(o.greater(least, least), o.constant(np.zeros(0, np.int64)), False)  # false, NaN included
    # y - 0: every value as it is (-0 too, which y + 0 turns into +0). Measured: a Reshape to a shape read from the
    # ends was miscomputed by OpenVINO 2026.4.1 read from its IR (RAFT's flow, 1.75 off), a Select by 2023.3 (a
    # run-time nearest form's output shape)
    boolean = y.get_element_type().get_type_name() == "boolean"
    kept = o.logical_or(y, never) if boolean else o.subtract(y, o.convert_like(never, y))
    names = y.get_names()
    y.get_tensor().set_names(set())
    kept.output(0).get_tensor().set_names(names)
    result.input(0).replace_source_output(kept.output(0))
    ov_model.validate_nodes_and_infer_types()
    return len(ends)
