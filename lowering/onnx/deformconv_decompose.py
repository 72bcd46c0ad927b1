"""Rung 3 for DeformConv: bilinear samples at every kernel tap in standard ONNX ops, then one MatMul with the
weights, plus the bias. The sampler is the GridSample decomposition's own (``gridsample_decompose.point_taps``
and ``gather_taps``: linear taps, each tap outside the input weighted 0); only the coordinates differ.

Per offset group og, kernel tap k, output position o and spatial axis d the sample sits at
``o*stride - pad_begin + k*dilation + offset[n, og, k, d, o]`` (a float32 constant plus the float32 offset; the
error bound covers its rounding). One Gather per tap combination reads X as rows [N*OG*M, C/OG]; the samples,
times the mask, become columns [N, group, C/group*K, P], and ``MatMul(W as [group, OC/group, C/group*K], cols)``
gives [N, group, OC/group, P]. Needs the input's channel and spatial lengths and the kernel (static); the batch
may be dynamic.
"""

from __future__ import annotations

import math

import numpy as np

from ...semantics.errors import BridgeError
from ...semantics.ir import DeformConvIR, GridSampleIR, Sampler
from ...semantics.reference import deformconv_out_shape
from .decompose import PORTABLE
from .gridsample_decompose import Builder, Sym, gather_taps, point_taps, spatial_strides

FORM = "deformconv"
REASON = ("DeformConv decomposition: bilinear samples at every kernel tap (the GridSample decomposition's taps, "
          "zeros outside), times the mask, one MatMul with the weights plus the bias (standard ONNX ops)")
# The sampler at each tap: linear, zero weight for a tap outside the input, no coordinate padding.
_TAPS = GridSampleIR(1, Sampler("linear"), "zeros", False, padding_on="taps")


def check_deformconv(ir: DeformConvIR, opset: int | None = None, compute: dict = PORTABLE):
    """(work dtype, kernel, output spatial shape), or BridgeError naming the field that prevents the
    decomposition."""
    dtype = str(ir.dtype)
    if compute.get(dtype) is None or np.dtype(dtype).kind != "f":
        raise BridgeError(f"element type {dtype}: the DeformConv decomposition computes float types only",
                          field="dtype")
    if ir.border != "zero_taps" or ir.sampler.kind != "linear":
        raise BridgeError(f"the decomposition samples bilinearly with zero taps, not {ir.border}", field="border")
    shape = ir.input_shape
    if shape is None or any(d is None for d in shape[1:]):
        raise BridgeError(f"input shape {shape}: the decomposition needs the channel and spatial lengths",
                          field="input_shape")
    kernel = ir.kernel_shape or (tuple(ir.weight_shape[2:]) if ir.weight_shape else None)
    if kernel is None or any(k is None for k in kernel):
        raise BridgeError("the kernel shape is not known", field="kernel_shape")
    if opset is not None and opset < 13:
        raise BridgeError(f"the decomposition needs opset 13; the model imports opset {opset}", field="opset")
    return compute[dtype], tuple(kernel), deformconv_out_shape(ir, shape[2:], kernel)


def _base(ir: DeformConvIR, kernel, out_sp) -> list[np.ndarray]:
    """Per axis, the tap positions without offset, o*stride - pad_begin + k*dilation, as [1, 1, K, P]."""
    D = ir.spatial_rank
    ogrid = np.indices(out_sp).reshape(D, -1)
    kgrid = np.indices(kernel).reshape(D, -1)
    return [(ogrid[d][None, :] * ir.strides[d] - ir.pads[d] + kgrid[d][:, None] * ir.dilations[d])
            .astype(np.float32)[None, None] for d in range(D)]


def decompose_deformconv(graph, ir: DeformConvIR, inputs: list, y, name: str, *, compute: dict = PORTABLE,
                         opset: int | None = None) -> list:
    """Add to ``graph`` the nodes computing DeformConv ``ir`` from ``inputs`` (X, W, offset, B or None, mask or
    None: graphsurgeon tensors) into ``y``; return the nodes added."""
    work_name, kernel, out_sp = check_deformconv(ir, opset, compute)
    work, dtype = np.dtype(work_name).type, np.dtype(ir.dtype)
    x, w, offset, bias, mask = (list(inputs) + [None] * 5)[:5]
    D, C, S = ir.spatial_rank, ir.input_shape[1], tuple(ir.input_shape[2:])
    OG, G, K, P, M = ir.offset_group, ir.group, math.prod(kernel), math.prod(out_sp), math.prod(S)
    b = Builder(name)
    i64 = lambda v: b.const(v, np.int64)  # noqa: E731

    def as_work(v, suffix):
        return v if dtype == work else b.cast(v, work, suffix)

    # X as rows [N*OG*M, C/OG]: row (n*OG + og)*M + flat spatial index.
    xg = b.op("Reshape", "x_groups", [as_work(x, "x_work"), i64([0, OG, C // OG, M])])
    rows = b.op("Reshape", "x_rows", [b.op("Transpose", "x_last", [xg], perm=[0, 1, 3, 2]), i64([-1, C // OG])])
    N = b.op("Gather", "N", [b.op("Shape", "x_shape", [x]), i64(0)], axis=0)
    n_base = b.op("Reshape", "n_base", [b.op("Mul", "n_base", [b.op("Range", "n", [i64(0), N, i64(1)]),
                                                              i64(OG * M)]), i64([-1, 1, 1, 1])])
    base = b.op("Add", "base", [n_base, i64((np.arange(OG) * M).reshape(1, OG, 1, 1))])  # [N, OG, 1, 1]
    off = b.cast(offset, np.float32, "offset_f32")
    if D > 1:
        off = b.op("Reshape", "offsets", [off, i64([0, OG, K, D, P])])
    taps = []
    for d, p0 in enumerate(_base(ir, kernel, out_sp)):
        # [N, OG, K, P]. 1-D: one Reshape, as OpenVINO's CPU plugin keeps it under a bf16 hint (a Gather of the
        # one coordinate it rebuilt, with the Reshape before it, into a new Reshape that ran in bf16: offsets
        # rounded to 8 bits, measured 0.0047 of the output's range off)
        od = Sym(b, b.op("Gather", f"offset{d}", [off, i64(d)], axis=3) if D > 1 else
                 b.op("Reshape", "offsets", [off, i64([0, OG, K, P])]))
        taps.append(point_taps(b, _TAPS, od + p0, i64(S[d]), Sym(b, b.const(S[d], np.float32)), work))
    strides, _ = spatial_strides(b, [i64(L) for L in S])
    cols = gather_taps(b, rows, base, taps, strides, rows=True)  # [N, OG, K, P, C/OG]
    if mask is not None:
        cols = b.op("Mul", "masked", [cols, b.op("Reshape", "mask", [as_work(mask, "mask_work"),
                                                                     i64([0, OG, K, P, 1])])])
    cols = b.op("Transpose", "cols", [cols], perm=[0, 1, 4, 2, 3])  # [N, OG, C/OG, K, P]: channel og*C/OG + c
    cols = b.op("Reshape", "cols", [cols, i64([0, G, C // G * K, P])])
    wg = b.op("Reshape", "w_groups", [as_work(w, "w_work"), i64([G, -1, C // G * K])])
    cur = b.op("Reshape", "out", [b.op("MatMul", "matmul", [wg, cols]), i64([0, -1] + list(out_sp))])
    if bias is not None:
        cur = b.op("Add", "bias", [cur, b.op("Reshape", "b", [as_work(bias, "b_work"), i64([-1] + [1] * D)])])
    if dtype != work:
        cur = b.cast(cur, dtype, "cast_out")
    b.nodes[-1].outputs = [y]
    graph.nodes.extend(b.nodes)
    return b.nodes


def decomposition_model(ir: DeformConvIR, dtypes: list, *, compute: dict = PORTABLE, opset: int = 20):
    """The decomposition alone as an ONNX model: inputs ``x``, ``w``, ``offset`` and, where ``dtypes`` (one per
    ONNX input, None for an omitted one) names them, ``b`` and ``mask``; output ``y``; the batch dynamic (the
    OpenVINO target reads it with OpenVINO's ONNX frontend and splices it onto the node's inputs)."""
    import onnx_graphsurgeon as gs

    names = ("x", "w", "offset", "b", "mask")
    inputs = [None if dt is None else gs.Variable(n, np.dtype(dt)) for n, dt in zip(names, list(dtypes) + [None] * 5)]
    y = gs.Variable("y", np.dtype(ir.dtype))
    graph = gs.Graph(inputs=[v for v in inputs if v is not None], outputs=[y], opset=opset)
    decompose_deformconv(graph, ir, inputs, y, "deformconv", compute=compute, opset=opset)
    model = gs.export_onnx(graph, do_type_check=False)
    model.ir_version = 10
    return model


__all__ = ["FORM", "REASON", "check_deformconv", "decompose_deformconv", "decomposition_model"]
