"""Each op's part of the OpenVINO cost model (``cost.py``), one row of ``COST_OPS`` per op (issue 41): which
rung classes it is weighed on, the key of its rates (``cost_timing``), which axes it resamples, its elements in
and out at static sizes, and what one unit of its rates is (an output element; a DeformConv's multiply-accumulate).
``cost.estimate`` holds the part that is the same for every op."""

from __future__ import annotations

import numpy as np

from .cost_timing import deform_key, deform_variant, grid_key, key_of
from ...semantics.coords import bind_resize
from ...semantics.errors import BridgeError
from ...semantics.opspec import PerOp


class OpCost:
    """The defaults: an op weighed on every rung class, its rates per output element of a static size."""

    per = None  # the unit of its rates where not an output element (the estimate's "per")

    def weighs(self, ir, cls: str) -> bool:
        """Whether the model weighs the node on rung class ``cls`` against the extension at all."""
        return True

    def static_rate(self, ir, cls: str) -> bool:
        """Whether ``cls``'s rate stands for the node at static sizes (the rates are timed on one form)."""
        return True

    def resampled(self, ir, rank: int) -> set:
        """The axes whose lengths the node's elements depend on: known only at run time, no static size."""
        return set(range(2, rank))

    def per_unit(self, ir) -> tuple[float | None, float]:
        """(input elements, output elements) per unit of the rates at sizes known only at run time (the input's
        None where the node does not fix it)."""
        return None, 1.0

    def units(self, ir, n_out: int) -> int:
        """Units of the rates at ``n_out`` output elements."""
        return n_out

    def integer_rates(self, ir) -> bool:
        """Whether the node reads the rates timed on integers (``cost_timing.INTEGER``)."""
        return False

    def few_channel_rates(self, ir) -> bool:
        """Whether at most ``cost_timing.FEW`` channels read the rates timed at few channels (against a built-in
        op, where the table has both)."""
        return False


class ResizeCost(OpCost):
    def weighs(self, ir, cls: str) -> bool:
        return bool(ir.axes)  # nothing resampled: every rung passes X through

    def static_rate(self, ir, cls: str) -> bool:
        # Static nearest's decomposition is a Gather per axis, not the index form (lengths known at run time)
        # whose chain "decomposition/nearest" times: no rate.
        return not (cls == "decomposition" and ir.sampler.kind == "nearest")

    def key(self, ir, cls: str, up: bool) -> str:
        return key_of(cls, ir.sampler.kind, bool(ir.sampler.antialias and ir.sampler.kind != "nearest"), up)

    def resampled(self, ir, rank: int) -> set:
        return set(ir.axes)

    def elements(self, ir, shape: tuple) -> tuple[int, int, bool] | None:
        try:
            bound = bind_resize(ir, shape)
        except BridgeError:  # run-time scales / sizes: no static size to estimate with
            return None
        return int(np.prod(bound.in_shape)), int(np.prod(bound.out_shape)), False

    def per_unit(self, ir) -> tuple[float | None, float]:
        scales = getattr(ir, "scales", None)
        if not isinstance(scales, tuple) or getattr(ir, "sizes", None) is not None:
            return None, 1.0
        return float(1 / np.prod([float(s) for s in scales])), 1.0

    def integer_rates(self, ir) -> bool:
        dtype = getattr(ir, "dtype", None)
        return ir.sampler.kind != "nearest" and bool(dtype) and np.issubdtype(np.dtype(dtype), np.integer)

    def few_channel_rates(self, ir) -> bool:
        return 1 not in ir.axes


class GridSampleCost(OpCost):
    def weighs(self, ir, cls: str) -> bool:
        return cls == "decomposition"  # GridSample-9, where exact, is the importer's own op

    def key(self, ir, cls: str, up: bool) -> str:
        return grid_key(cls, ir.sampler.kind, ir.spatial_rank)  # by sampler and rank (cost_timing.GRID_SHAPE)

    def elements(self, ir, shape: tuple) -> tuple[int, int, bool] | None:
        grid = ir.grid_shape
        if grid is None or any(d is None for d in grid[1:-1]):
            return None
        return int(np.prod(shape)), int(np.prod(shape[:2])) * int(np.prod(grid[1:-1])), grid[0] is None


class DeformConvCost(OpCost):
    per = "multiply-accumulate"  # each output element takes C/group x taps of them

    def weighs(self, ir, cls: str) -> bool:
        return not (ir.weight_shape is None or None in ir.weight_shape or ir.kernel_shape is None)  # W at run time

    def key(self, ir, cls: str, up: bool) -> str:
        return deform_key(cls, deform_variant(ir))  # by group and offset group (cost_timing.DEFORM_VARIANTS)

    def elements(self, ir, shape: tuple) -> tuple[int, int, bool] | None:
        return int(np.prod(shape)), shape[0] * ir.weight_shape[0] * int(np.prod(self._out(ir, shape))), False

    def per_unit(self, ir) -> tuple[float | None, float]:
        # Its spatial lengths in and out taken alike, strides aside.
        oc, cg, taps = ir.weight_shape[0], ir.weight_shape[1], int(np.prod(ir.kernel_shape))
        return float(np.prod(ir.strides)) / (oc // ir.group * taps), 1.0 / (cg * taps)

    def units(self, ir, n_out: int) -> int:
        return n_out * ir.weight_shape[1] * int(np.prod(ir.kernel_shape))

    @staticmethod
    def _out(ir, shape) -> list:
        """The output spatial lengths at input ``shape`` (the convolution's)."""
        D = ir.spatial_rank
        return [(shape[2 + d] + ir.pads[d] + ir.pads[D + d] - ir.dilations[d] * (ir.kernel_shape[d] - 1) - 1)
                // ir.strides[d] + 1 for d in range(D)]


COST_OPS = PerOp("OpenVINO cost model", resize=ResizeCost(), gridsample=GridSampleCost(), deformconv=DeformConvCost())

__all__ = ["OpCost", "COST_OPS"]
