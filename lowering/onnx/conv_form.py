"""Rung 2's convolution form on the ONNX target (issue 45): the plan ``lowering.resize_forms.plan`` makes for
OpenVINO (periodic tap tables read from the oracle's), written in plain ONNX ops: an edge Pad (negative pads
cut what a strided convolution does not read), then per resized axis a depthwise ConvTranspose (group = C,
stride r, cropped by its pads: upsampling) or a strided depthwise Conv (downsampling, antialias included).
No Slice: the ConvTranspose's own pads crop it to the output, as ONNX defines them.

The nodes and constants carry names the proof finds them by (``part``); the proof (``prove_form``) re-reads them
against the plan recomputed from the source IR, and the probes (``prove._probe``) prove the numbers on
onnxruntime. Where it is taken instead of the rung the ladder chose: ``cost_in_graph``.
"""

from __future__ import annotations

import numpy as np

from ..resize_forms import Periodic, plan

FORM = "conv"
OP = {False: "ConvTranspose", True: "Conv"}  # the depthwise op along an axis, by whether it downsamples
MIN_OPSET = 11  # Pad reads its pads from an input (edge mode; negative pads cut)


def part(name: str, what: str) -> str:
    """Where the proof looks for the form's pieces: node ``pad`` / ``axis{a}``, constant ``pads`` /
    ``axis{a}/weights``."""
    return f"{name}/{FORM}/{what}"


def form_plan(ir, opset: int) -> list[Periodic] | str:
    """Each resized axis as a ``Periodic`` (``resize_forms.plan`` at the node's input shape), or why not."""
    if opset < MIN_OPSET:
        return f"the convolution form needs opset {MIN_OPSET} (Pad's pads as an input); the model imports {opset}"
    return plan(ir, ir.input_shape)


def pads(axes: list[Periodic], rank: int) -> np.ndarray:
    """The edge Pad's pads in ONNX order (every begin, then every end)."""
    begin, end = [0] * rank, [0] * rank
    for ax in axes:
        begin[ax.axis], end[ax.axis] = ax.pads()
    return np.array(begin + end, np.int64)


def weights(ax: Periodic, channels: int, rank: int) -> np.ndarray:
    """The depthwise kernel of ``ax`` for every channel: [C, 1, k...] with the taps along the axis (ConvTranspose's
    [C_in, C_out / group, ...] and Conv's [C_out, C_in / group, ...] are the same shape at group = C)."""
    k = ax.kernel()
    shape = [1] * (rank - 2)
    shape[ax.axis - 2] = len(k)
    return np.tile(k.reshape([1, 1] + shape), [channels, 1] + [1] * (rank - 2))


def attributes(ax: Periodic, channels: int, rank: int) -> dict:
    """The Conv / ConvTranspose attributes along ``ax`` (1 and 0 on the other spatial axes)."""
    spatial = rank - 2
    stride, (b, e) = ax.geometry()
    d = ax.axis - 2
    strides, pb, pe = [1] * spatial, [0] * spatial, [0] * spatial
    strides[d], pb[d], pe[d] = stride, b, e
    return {"group": channels, "strides": strides, "pads": pb + pe, "dilations": [1] * spatial,
            "kernel_shape": list(weights(ax, 1, rank).shape[2:])}


def build(graph, axes: list[Periodic], x, y, shape, name: str) -> list:
    """Add to ``graph`` (onnx-graphsurgeon) the form's nodes from Variable ``x`` into Variable ``y``; return them."""
    import onnx_graphsurgeon as gs

    rank, channels = len(shape), shape[1]
    added: list = []

    def op(kind, what, inputs, **attrs):
        out = gs.Variable(f"{part(name, what)}:0")
        added.append(gs.Node(kind, part(name, what), attrs, list(inputs), [out]))
        return out

    cur, p = x, pads(axes, rank)
    if p.any():
        cur = op("Pad", "pad", [x, gs.Constant(part(name, "pads"), p)], mode="edge")
    for ax in axes:
        w = gs.Constant(part(name, f"axis{ax.axis}/weights"), weights(ax, channels, rank))
        cur = op(OP[ax.down], f"axis{ax.axis}", [cur, w], **attributes(ax, channels, rank))
    added[-1].outputs = [y]
    graph.nodes.extend(added)
    return added


def prove_form(rec, nodes: dict, consts: dict) -> list[str]:
    """The written form re-read against the plan recomputed from the source IR (not taken from the lowering): the
    edge Pad and its pads, then per axis the op, its input (the previous piece), attributes and kernel; the last
    writes the node's output."""
    import onnx

    name, ir = rec.node, rec.ir
    axes = form_plan(ir, rec.proof.get("opset", MIN_OPSET))
    if isinstance(axes, str):
        return [f"{name}: the source IR has no convolution form here: {axes}"]
    rank, channels = ir.rank, ir.input_shape[1]
    prev, out = rec.proof["inputs"][0], []
    pad = nodes.get(part(name, "pad"))
    want = pads(axes, rank)
    if want.any():
        attrs = {} if pad is None else {a.name: onnx.helper.get_attribute_value(a) for a in pad.attribute}
        got = None if pad is None else consts.get(pad.input[1])
        if pad is None or pad.op_type != "Pad" or attrs.get("mode") not in ("edge", b"edge") or \
                pad.input[0] != prev or got is None or not np.array_equal(got, want):
            return [f"{name}: the edge Pad differs from the source IR's borders (or is missing)"]
        prev = pad.output[0]
    for ax in axes:
        node = nodes.get(part(name, f"axis{ax.axis}"))
        if node is None or node.op_type != OP[ax.down] or node.input[0] != prev or len(node.input) != 2:
            out.append(f"{name}: axis {ax.axis}: the {OP[ax.down]} is missing or reads another tensor")
            return out
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        want_attrs = attributes(ax, channels, rank)
        extra = set(attrs) - set(want_attrs)
        if any(attrs.get(k) != v for k, v in want_attrs.items()) or extra:
            out.append(f"{name}: axis {ax.axis}: the {OP[ax.down]}'s attributes differ from the taps")
        w = consts.get(node.input[1])
        if w is None or w.dtype != np.float32 or not np.array_equal(w, weights(ax, channels, rank)):
            out.append(f"{name}: axis {ax.axis}: the kernel differs from the source IR's taps")
        prev = node.output[0]
    if prev != rec.proof["output"]:
        out.append(f"{name}: the convolution form does not write the node's output")
    return out
