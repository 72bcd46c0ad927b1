"""Rung 2 for Resize, in convolution ops: a static integer-ratio upsampling (r = out/in from 2 to 8 on each resized
spatial axis) as an edge Pad and one depthwise ConvTranspose (GroupConvolutionBackpropData) per axis, cropped by
its pads. OpenVINO's CPU plugin runs these 2-3x faster than Interpolate (measured: linear x2 1x16x160x200).

The plan (its periodic tap tables, why it is exact, what it refuses) is target-neutral: ``lowering.resize_forms``
(the ONNX target builds the same plan in ONNX ops); this module builds and re-reads OpenVINO's ops.

Precision: the kernel is float32 (the float32 of the oracle's exact weights, as the decomposition's). Under a
bf16 inference hint the CPU rounds the input and the kernel to bf16; ``bf16_exact`` says whether every weight
survives that (linear x2/x4, cubic x2 with a = -0.5/-0.75: yes), and the record says so.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ...semantics.compare import compare
from ..passes import Candidate, Refusal
from ..resize_forms import Periodic, periodic_table, plan  # noqa: F401  (the plan, read by this target's tests)
from .graph import dims, ops, tag

FORM = "conv"
# The depthwise op along an axis, by whether it downsamples (``Periodic.geometry``: its stride and crop).
OV_OP = {False: "GroupConvolutionBackpropData", True: "GroupConvolution"}

# The in-graph choice between this form and Interpolate: None follows the cost model; "conv" / "builtin" force
# it (the cost model's calibration times each class on its own).
_forced: list = []


@contextlib.contextmanager
def forcing(choice: str):
    _forced.append(choice)
    try:
        yield
    finally:
        _forced.pop()


def forced() -> str | None:
    return _forced[-1] if _forced else None


def build(x, axes: list[Periodic], channels: int, rank: int, name: str):
    """Edge Pad, then one depthwise ConvTranspose per axis (stride r, cropped to the output by its pads), or a
    strided depthwise convolution (downsampling)."""
    o = ops()
    begin, end = [0] * rank, [0] * rank
    for ax in axes:
        begin[ax.axis], end[ax.axis] = ax.pads()
    y = x
    if any(begin) or any(end):
        y = o.pad(x, o.constant(np.array(begin, np.int64)), o.constant(np.array(end, np.int64)), "edge").output(0)
        tag(y.get_node(), f"{name}/{FORM}/pad")
    spatial = rank - 2
    for ax in axes:
        d = ax.axis - 2
        kshape = [1] * spatial
        kshape[d] = len(ax.kernel())
        w = o.constant(np.tile(ax.kernel().reshape(kshape), (channels, 1, 1) + (1,) * spatial).reshape(
            [channels, 1, 1] + kshape))
        tag(w, f"{name}/{FORM}/axis{ax.axis}/weights")
        stride, (b, e) = ax.geometry()
        strides, pb, pe = [1] * spatial, [0] * spatial, [0] * spatial
        strides[d], pb[d], pe[d] = stride, b, e
        make = o.group_convolution if ax.down else o.group_convolution_backprop_data
        conv = make(y, w, strides=strides, pads_begin=pb, pads_end=pe, dilations=[1] * spatial)
        tag(conv, f"{name}/{FORM}/axis{ax.axis}")
        y = conv.output(0)
    return y


def rung(node):
    """Rung 2, the convolution form (``plan``), where the in-graph choice allows it (``forced``)."""
    if forced() == "builtin":
        return Refusal("the convolution form is not asked for here", facts={"quiet": True})
    x = node.inputs[0]
    shape = dims(x)
    got = plan(node.ir, shape)
    if isinstance(got, str):
        return Refusal(f"no convolution form: {got}", facts={"quiet": True})
    out = build(x, got, shape[1], len(shape), node.name)
    ratios = " x ".join(f"/{ax.step}" if ax.down else f"x{ax.r}" for ax in got)
    ops_ = " and ".join(dict.fromkeys("a strided depthwise Conv" if ax.down else "a depthwise ConvTranspose"
                                      for ax in got))
    bf16 = all(ax.bf16_exact() for ax in got)
    reason = (f"edge Pad and {ops_} per axis ({ratios}), kernels from the oracle's periodic tap tables (float32 "
              f"weights, {'exact' if bf16 else 'rounded'} in bf16)")
    return Candidate([out], reason, proof={"form": FORM, "shape": tuple(shape), "bf16_exact_weights": bf16})


def prove(rec, by_tag) -> list[str]:
    """The produced ops re-read against the source IR's tap tables (recomputed here, not taken from the lowering):
    the edge Pad's pads, each convolution's op, stride, crop, group and kernel. The probes prove the numbers."""
    shape = rec.proof["shape"]
    axes = plan(rec.ir, shape)
    if isinstance(axes, str):
        return [f"{rec.node}: the source IR has no convolution form here: {axes}"]
    out = []
    begin, end = [0] * len(shape), [0] * len(shape)
    for ax in axes:
        begin[ax.axis], end[ax.axis] = ax.pads()
    pad = by_tag.get(f"{rec.node}/{FORM}/pad")
    if any(begin) or any(end):
        if pad is None or pad.get_type_name() != "Pad" or pad.get_attributes().get("pad_mode") != "edge":
            out.append(f"{rec.node}: the edge Pad is missing from the produced model")
        elif [list(_const(pad, 1)), list(_const(pad, 2))] != [begin, end]:
            out.append(f"{rec.node}: the edge Pad's pads differ from the source IR's borders")
    for ax in axes:
        op, (stride, (pb, pe)) = OV_OP[ax.down], ax.geometry()
        conv, fused = _located_conv(by_tag.get(f"{rec.node}/{FORM}/axis{ax.axis}"), op)
        if conv is None or conv.get_type_name() != op:
            out.append(f"{rec.node}: axis {ax.axis}: the {op} is missing from the produced model")
            continue
        a = conv.get_attributes()
        d = ax.axis - 2
        spatial = len(shape) - 2
        want = ([stride if i == d else 1 for i in range(spatial)], [pb if i == d else 0 for i in range(spatial)],
                [pe if i == d else 0 for i in range(spatial)])
        if (list(a["strides"]), list(a["pads_begin"]), list(a["pads_end"])) != want or set(a["dilations"]) != {1}:
            out.append(f"{rec.node}: axis {ax.axis}: the {op}'s stride or crop differs from the taps")
        w = _const(conv, 1)
        if w is None or w.shape[:3] != (shape[1], 1, 1) or not _same_kernel(w.reshape(shape[1], -1), ax.kernel(),
                                                                            fused):
            out.append(f"{rec.node}: axis {ax.axis}: the kernel differs from the source IR's taps")
        elif fused:
            rec.proof["fused_scale"] = "OpenVINO folded a multiply by a per-channel constant before it into the kernel"
    return out


def _located_conv(op, conv_type: str):
    """(the ``conv_type`` op a tag found, whether OpenVINO fused a Multiply by a constant before it into its kernel):
    that fusion (its MultiplyConvolutionBackpropDataFusion, measured on a VAE decoder's x / c -> upsample) makes a
    new kernel Constant and hands the tag to it."""
    if op is None or op.get_type_name() != "Constant":
        return op, False
    users = [i.get_node() for i in op.output(0).get_target_inputs()
             if i.get_node().get_type_name() == conv_type]
    return (users[0], True) if len(users) == 1 else (None, False)


def _same_kernel(got: np.ndarray, kernel: np.ndarray, fused: bool) -> bool:
    """``got`` (channels x taps) is ``kernel`` on every channel; ``fused``: times one factor per channel (the
    fused constant, each product rounded once to float32), zeros where the kernel's are."""
    want = np.tile(kernel, (got.shape[0], 1))
    if not fused:
        return np.array_equal(got, want)
    if not np.array_equal(got == 0, want == 0):
        return False
    nz = kernel != 0
    factor = got[:, nz][:, :1] / kernel[nz][0]
    return compare(got, (factor * want).astype(np.float32), atol=0.0, rtol=4 * 2.0 ** -24).ok


def _const(op, port: int):
    src = op.input_value(port).get_node()
    return src.get_data() if src.get_type_name() == "Constant" else None
