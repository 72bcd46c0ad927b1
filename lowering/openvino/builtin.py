"""Built-in OpenVINO ops for GridSample and DeformConv: GridSample-9 (rung 1) and DeformableConvolution-8 with
bilinear_interpolation_pad=true plus an Add for the bias (rung 2)."""

from __future__ import annotations

import numpy as np

from ...semantics.ir import DeformConvIR, GridSampleIR
from ..passes import Candidate, Refusal
from .graph import constant_of, ops, tag
from ...semantics.coords import unnormalize_as
from ...semantics.equivalence import diff
from ...translate import openvino as tov
from ...translate.openvino import dtype_reason


def native_gridsample(ir: GridSampleIR, x, grid):
    """GridSample-9: 4-D only; pads each tap (padding_on="taps"), nearest half-to-even, cubic a=-3/4."""
    import openvino.opset9 as ops9

    mode = {"linear": "bilinear", "cubic": "bicubic", "nearest": "nearest"}[ir.sampler.kind]
    return ops9.grid_sample(x, grid, {"align_corners": ir.align_corners, "mode": mode,
                                      "padding_mode": ir.padding}).output(0)


def gridsample_native_reason(ir: GridSampleIR) -> str | None:
    """None if GridSample-9 computes ``ir``'s numbers, else why not."""

    if ir.dtype is not None and (why := dtype_reason("GridSample", ir.sampler.kind, ir.dtype)):
        return why
    if ir.spatial_rank != 2:
        return f"GridSample-9 is 4-D only; this is {ir.spatial_rank + 2}-D"
    if ir.sampler.kind == "cubic" and ir.padding != "zeros" and ir.padding_on != "taps":
        return ("cubic with padding on the coordinate (ONNX reference) differs from GridSample-9, which pads "
                "each tap (padding_on: coordinate_and_taps vs taps)")
    return None


def rewrite_deformconv(ir: DeformConvIR, x, w, offset, b=None, mask=None, name: str = ""):
    """DeformableConvolution-8 with bilinear_interpolation_pad=true (zero taps outside, the ONNX rule) and
    the bias as an Add."""
    import openvino.opset8 as ops8

    D = ir.spatial_rank
    y = ops8.deformable_convolution(x, offset, w, mask=mask, strides=list(ir.strides), pads_begin=list(ir.pads[:D]),
                                    pads_end=list(ir.pads[D:]), dilations=list(ir.dilations), group=ir.group,
                                    deformable_group=ir.offset_group, bilinear_interpolation_pad=True).output(0)
    tag(y.get_node(), f"{name}/native")
    if b is not None:
        o = ops()
        b = o.reshape(b, o.constant(np.array([1, -1] + [1] * D, dtype=np.int64)), False).output(0)
        y = o.add(y, b).output(0)
    return y


def deformconv_rewrite_reason(ir: DeformConvIR) -> str | None:
    if ir.spatial_rank != 2:
        return f"DeformableConvolution-8 is 2-D only; this is {ir.spatial_rank}-D"
    if ir.border != "zero_taps":
        return f"border {ir.border!r} has no DeformableConvolution-8 spelling"
    return None


def gridsample(node):
    """Rung 1 for GridSample: GridSample-9, parsed back into IR and diffed with the source IR; nearest with
    another coordinate arithmetic only where the grid is a constant whose every point reads the same element
    in both (``nearest_ties``)."""

    why = gridsample_native_reason(node.ir)
    if why is not None:
        return Refusal(why)
    out = native_gridsample(node.ir, node.inputs[0], node.inputs[1])
    got = tov.parse_node(out.get_node())
    d = diff(node.ir, got)
    if d.fields:
        return Refusal("GridSample-9 differs in " + ", ".join(f.name for f in d.fields), d.fields[0].name)
    if "grid" in d.ties:
        grid = constant_of(out.get_node(), 1)
        ties = None if grid is None else nearest_ties(node.ir, got, grid)
        if ties is None or ties:
            where = "a grid fed at run time can" if grid is None else f"grid points {ties[:6]} do"
            return Refusal(f"nearest: GridSample-9 unnormalises in {got.arith} arithmetic, the source in "
                           f"{node.ir.arith}; {where} fall next to a .5 tie and read another element", "grid")
    tag(out.get_node(), f"{node.name}/native")
    return Candidate([out], "GridSample-9 computes the same numbers" + (
        " (no point of the constant grid is next to a .5 tie)" if d.ties else ""),
        proof={"op": f"{node.name}/native", "ties": d.ties or None})


def nearest_ties(ir: GridSampleIR, other: GridSampleIR, grid: np.ndarray) -> list[int]:
    """The flat indices of the points of a constant ``grid`` [N, *out, D] whose nearest pick differs between
    ``ir``'s and ``other``'s coordinate arithmetic (padding aside: it moves both picks alike)."""

    D = ir.spatial_rank
    shape = ir.input_shape
    if shape is None or any(d is None for d in shape[2:]):
        return [0]
    g = np.asarray(grid, dtype=np.float32).reshape(-1, D)
    bad = np.zeros(g.shape[0], dtype=bool)
    for d in range(D):
        L = shape[2 + d]
        a = np.rint(unnormalize_as(g[:, D - 1 - d], L, ir.align_corners, ir.arith))
        b = np.rint(unnormalize_as(g[:, D - 1 - d], L, other.align_corners, other.arith))
        bad |= a != b
    return [int(i) for i in np.flatnonzero(bad)]


def deformconv(node):
    """Rung 2 for DeformConv (inputs X, W, offset, then the optional B and mask)."""
    why = deformconv_rewrite_reason(node.ir)
    if why is not None:
        return Refusal(why)
    x, w, off = node.inputs[:3]
    b, m = (list(node.inputs[3:5]) + [None, None])[:2]
    out = rewrite_deformconv(node.ir, x, w, off, b, m, node.name)
    # A bias of zeros (the dynamo exporter writes one for DeformConv2d(bias=False)): OpenVINO removes its Add
    zero_bias = b is not None and b.get_node().get_type_name() == "Constant" and not np.any(b.get_node().get_data())
    return Candidate([out], "DeformableConvolution-8 with bilinear_interpolation_pad=true"
                     + (" + Add for the bias" if b is not None else ""),
                     proof={"op": f"{node.name}/native", **({"zero_bias": True} if zero_bias else {})})
