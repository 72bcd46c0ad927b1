"""A static integer scale k on a dynamic length, as Interpolate-11 in sizes mode fed k x its input's own lengths in
int64 (``own_lengths``), and that feed kept on the Interpolate's own input after OpenVINO's conversion (``repin``).

Why not scales mode: OpenVINO computes its output length floor(float32(L) * (k + 1e-6)), k*L + 1 from L = 983040
at k = 2, 393216 at k = 16 (``lengths.floor_agrees_below``, measured; its own importer shares it). In sizes mode its
map is out/in = k, the same as the scale's. ``translate.openvino_interpolate`` reads the form back as scale k."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...semantics.lengths import floor_agrees_below
from ..passes import Refusal
from .graph import ops, tagged

OWN_LENGTHS = "resample_bridge_own_lengths"  # rt_info mark of the Multiply that feeds the lengths


def own_lengths(x, attrs: dict) -> dict | Refusal:
    """Scales-mode ``attrs`` in sizes mode, fed k x ``x``'s own lengths on the listed axes. A listed scale that is
    not an integer would read out/in there instead: refused."""
    scales = [Fraction(v) for v in attrs["values"]]
    if any(k.denominator != 1 for k in scales):
        return Refusal(f"a dynamic length's output length needs OpenVINO's scales mode, which adds 1e-6 to the scale "
                       f"(k*L + 1 from L = {floor_agrees_below(2, 'floor_eps')} at k = 2), and in sizes mode the "
                       f"scale {float(next(k for k in scales if k.denominator != 1))} would read out/in")
    o = ops()
    lengths = o.gather(o.shape_of(x, "i64"), o.constant(np.array(attrs["axes"], np.int64)),
                       o.constant(np.array(0, np.int64)))
    sizes = o.multiply(lengths, o.constant(np.array([int(k) for k in scales], np.int64)))
    sizes.get_rt_info()[OWN_LENGTHS] = True
    return dict(attrs, calc="sizes", values=sizes.output(0))


def repin(ov_model) -> int:
    """Every marked feed read from its Interpolate's own input again; how many were moved. OpenVINO's conversion
    shares ShapeOf ops between tensors it proves of equal shape (Depth Anything: the ShapeOf of a residual Add
    became the one of the Conv before it), true but not readable from the written file, whose proof reads
    the form back."""
    moved = 0
    for op in tagged(ov_model).values():
        if op.get_type_name() != "Interpolate" or op.get_input_size() < 2:
            continue
        feed = op.input_value(1).get_node()
        if OWN_LENGTHS not in feed.get_rt_info():
            continue
        for i in range(feed.get_input_size()):
            gather = feed.input_value(i).get_node()
            shape = gather.input_value(0).get_node() if gather.get_type_name() == "Gather" else None
            if shape is not None and shape.get_type_name() == "ShapeOf" and shape.input_value(0) != op.input_value(0):
                gather.input(0).replace_source_output(ops().shape_of(op.input_value(0), "i64").output(0))
                moved += 1
    return moved
