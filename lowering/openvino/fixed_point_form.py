"""onnxruntime's 8-bit antialias fixed point (``semantics.fixed_point``) on OpenVINO: which nodes take it, its
tables per axis, and where no in-graph form has it (``decompose._decompose_fixed`` writes the static form)."""

from __future__ import annotations

import numpy as np

from ...semantics import fixed_point
from ...semantics.fixed_point import fixed_point_resize
from ...semantics.ir import ResizeIR
from .graph import ops

# Where onnxruntime's 8-bit fixed point (``fixed_point``) has no in-graph form: lengths known only at run time, whose
# float32 weights no exact in-graph arithmetic reproduces yet (the library's kernels compute them: fixed_point.hpp).
FIXED_RUN_TIME = ("uint8 antialias is onnxruntime's and PyTorch's fixed point, whose weights are float32 arithmetic "
                  "on the lengths: no in-graph form computes them from lengths known only at run time (give the "
                  "input shape and sizes: convert --input)")


def fixed_point_rounding(ir: ResizeIR) -> bool:
    """Whether ``ir`` resamples an axis in onnxruntime's 8-bit fixed point (``semantics.fixed_point``); with no
    axis resized it is a copy, whatever the rounding."""
    return fixed_point_resize(ir) and ir.integer_rounding == "q22_per_axis" and bool(ir.axes)


def fixed_tables(bound) -> list:
    """(axis, fixed-point taps) of every resized axis, from the last (``semantics.fixed_point``'s order)."""
    s = bound.sampler
    return [(ax, fixed_point.axis_taps(ax, bound.coord, s.kind, s.cubic_a, bound.exclude_outside, ax.roi))
            for ax in sorted(bound.axes, key=lambda a: -a.axis)]


def last_two_swapped(y, rank: int):
    """``y`` with its last two axes swapped."""
    order = list(range(rank - 2)) + [rank - 1, rank - 2]
    return ops().transpose(y, ops().constant(np.array(order, np.int64))).output(0)
