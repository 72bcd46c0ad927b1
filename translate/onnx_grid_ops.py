"""ONNX GridSample (16, 20, 22) and DeformConv (19, 22) -> IR, from a ``NodeView`` (translate/onnx.py): the
sampling ops whose coordinates come from a run-time tensor (Resize and Upsample: ``onnx_ops``)."""

from __future__ import annotations

import math
from fractions import Fraction

from ..semantics.coords import MAX_ELEMENTS
from ..semantics.errors import BridgeError
from ..semantics.ir import DeformConvIR, GridSampleIR, Sampler
from ..semantics.reference import deformconv_out_shape
from ..semantics.vocab import GRID_PADDINGS, ONNX_GRIDSAMPLE_20_MODES, ONNX_GRIDSAMPLE_MODES
from .onnx_attrs import DEFAULT_CONVENTION, choice

def parse_gridsample(node: NodeView, version: int, convention: str = DEFAULT_CONVENTION) -> GridSampleIR:
    attrs, name = node.attrs, node.name
    if version < 20:
        mode = choice(attrs, "mode", "bilinear", ONNX_GRIDSAMPLE_MODES, name)
        mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    else:
        mode = choice(attrs, "mode", "linear", ONNX_GRIDSAMPLE_20_MODES, name)
    padding = choice(attrs, "padding_mode", "zeros", GRID_PADDINGS, name)
    ac = int(attrs.get("align_corners", 0))
    if ac not in (0, 1):
        raise BridgeError(f"align_corners must be 0 or 1, got {ac}", name, "align_corners")
    in_shape, grid_shape = node.shape(0), node.shape(1)
    rank = len(in_shape) if in_shape else (len(grid_shape) if grid_shape else None)
    if rank is None:
        raise BridgeError("the input rank is unknown (no shape information for X or grid)", name, "X")
    if rank < 3:
        raise BridgeError(f"X has rank {rank}; GridSample needs N, C and at least one spatial axis", name, "X")
    if version < 20 and rank != 4:
        raise BridgeError(f"GridSample-{version} is defined for 4-D input only, got rank {rank}", name, "X")
    if grid_shape is not None and len(grid_shape) != rank:
        raise BridgeError(f"grid has rank {len(grid_shape)}, X has rank {rank}", name, "grid")
    if grid_shape is not None and grid_shape[-1] is not None and grid_shape[-1] != rank - 2:
        raise BridgeError(f"grid's last axis is {grid_shape[-1]}, expected {rank - 2}", name, "grid")
    if in_shape and grid_shape and None not in (in_shape[0], grid_shape[0]) and in_shape[0] != grid_shape[0]:
        raise BridgeError(f"grid has batch {grid_shape[0]}, X has {in_shape[0]}", name, "grid")
    sampler = (Sampler("nearest", nearest="half_even") if mode == "nearest" else
               Sampler("cubic", cubic_a=Fraction(-3, 4)) if mode == "cubic" else Sampler("linear"))
    if in_shape and grid_shape and all(d is not None for d in in_shape[:2] + grid_shape[:-1]):
        total = in_shape[0] * in_shape[1] * math.prod(grid_shape[1:-1])
        if total > MAX_ELEMENTS:
            raise BridgeError(f"output has {total} elements, more than 2^31", name, "grid")
    # arith (the default fp32): float32 steps as onnxruntime's GsDenormalize; onnx.reference's float64 agrees
    # but within float32 reach of a .5 tie (which element nearest reads).
    # padding_on: the spec text, PyTorch, onnxruntime and OpenVINO pad each cubic tap (border / reflection);
    # onnx.reference first moves an outside coordinate, then pads the taps (measured: cubic border differs
    # from onnxruntime by 0.12 on random grids under the reference rule, 9e-7 under "taps").
    padding_on = "taps" if convention == "spec" else "coordinate_and_taps"
    # A float64 grid: onnxruntime's GsDenormalize runs in double (measured: a grid value of -4/3 in float64 on
    # length 4, align_corners, reads element 0 in onnxruntime and onnx.reference, -1 (zeros) in float32 steps)
    arith = "fp64" if convention == "spec" and node.dtype(1) == "float64" else "fp32"
    return GridSampleIR(spatial_rank=rank - 2, sampler=sampler, padding=padding, align_corners=bool(ac),
                        padding_on=padding_on, arith=arith, input_shape=in_shape, grid_shape=grid_shape,
                        dtype=node.dtype(0), origin=f"GridSample-{version}")


def parse_deformconv(node: NodeView, version: int) -> DeformConvIR:
    attrs, name = node.attrs, node.name
    in_shape, w_shape = node.shape(0), node.shape(1)
    rank = len(in_shape) if in_shape else (len(w_shape) if w_shape else None)
    ks = attrs.get("kernel_shape")
    if rank is None and ks is not None:
        rank = len(ks) + 2
    if rank is None:
        raise BridgeError("the input rank is unknown (no shape information for X or W)", name, "X")
    D = rank - 2
    if D < 1:
        raise BridgeError(f"X has rank {rank}; DeformConv needs at least one spatial axis", name, "X")
    for i, field in ((1, "W"), (2, "offset"), (4, "mask")):
        shape = node.shape(i) if node.input(i) else None
        if shape is not None and len(shape) != rank:
            raise BridgeError(f"{field} has rank {len(shape)}, X has rank {rank}", name, field)
    b_shape = node.shape(3) if node.input(3) else None
    if b_shape is not None and len(b_shape) != 1:
        raise BridgeError(f"B has rank {len(b_shape)}, expected 1", name, "B")

    def ints(key, default, n):
        v = list(attrs.get(key, default))
        if len(v) != n:
            raise BridgeError(f"{key} has {len(v)} values, expected {n}", name, key)
        return tuple(int(i) for i in v)

    strides = ints("strides", [1] * D, D)
    dil = ints("dilations", [1] * D, D)
    pads = ints("pads", [0] * 2 * D, 2 * D)
    if any(s <= 0 for s in strides):
        raise BridgeError(f"strides {strides} must be positive", name, "strides")
    if any(s <= 0 for s in dil):
        raise BridgeError(f"dilations {dil} must be positive", name, "dilations")
    if any(p < 0 for p in pads):
        raise BridgeError(f"pads {pads} must not be negative", name, "pads")
    kernel = ints("kernel_shape", [], D) if ks is not None else (
        tuple(w_shape[2:]) if w_shape and all(d is not None for d in w_shape[2:]) else None)
    group = int(attrs.get("group", 1))
    og = int(attrs.get("offset_group", 1))
    if group < 1:
        raise BridgeError(f"group must be at least 1, got {group}", name, "group")
    if og < 1:
        raise BridgeError(f"offset_group must be at least 1, got {og}", name, "offset_group")
    if w_shape and w_shape[0] is not None and w_shape[0] % group:
        raise BridgeError(f"W has {w_shape[0]} output channels, not divisible by group {group}", name, "group")
    if w_shape and kernel and all(d is not None for d in w_shape[2:]) and tuple(w_shape[2:]) != tuple(kernel):
        raise BridgeError(f"kernel_shape {list(kernel)} does not match W's spatial shape {list(w_shape[2:])}",
                          name, "kernel_shape")
    if in_shape and in_shape[1] is not None:
        if in_shape[1] % group:
            raise BridgeError(f"{in_shape[1]} input channels are not divisible by group {group}", name, "group")
        if in_shape[1] % og:
            raise BridgeError(f"{in_shape[1]} input channels are not divisible by offset_group {og}", name,
                              "offset_group")
        if w_shape and w_shape[1] is not None and w_shape[1] * group != in_shape[1]:
            raise BridgeError(f"W has {w_shape[1]} channels per group, X has {in_shape[1]} channels and "
                              f"group={group}", name, "group")
    if in_shape and kernel and all(d is not None for d in in_shape):
        ir_probe = DeformConvIR(D, kernel, strides, pads, dil, group, og, False, False)
        out_sp = deformconv_out_shape(ir_probe, in_shape[2:], kernel)
        if any(o <= 0 for o in out_sp):
            raise BridgeError(f"output spatial shape {out_sp} is empty", name, "pads")
        if w_shape and w_shape[0] is not None and in_shape[0] * w_shape[0] * math.prod(out_sp) > MAX_ELEMENTS:
            raise BridgeError("output has more than 2^31 elements", name, "W")
        _check_per_output_inputs(node, in_shape[0], out_sp)
    if in_shape and in_shape[0] is not None:
        _check_per_output_inputs(node, in_shape[0], None)
    _check_deformconv_inputs(node, D, kernel, og)
    return DeformConvIR(
        spatial_rank=D, kernel_shape=kernel, strides=strides, pads=pads, dilations=dil, group=group,
        offset_group=og, has_bias=bool(node.input(3)), has_mask=bool(node.input(4)),
        input_shape=in_shape, weight_shape=w_shape, dtype=node.dtype(0), origin=f"DeformConv-{version}",
    )


def _check_per_output_inputs(node: NodeView, batch: int, out_sp) -> None:
    """offset and mask hold one value per output position of every image (onnxruntime checks it)."""
    for i, field in ((2, "offset"), (4, "mask")):
        shape = node.shape(i) if node.input(i) else None
        if shape is None:
            continue
        if shape[0] is not None and shape[0] != batch:
            raise BridgeError(f"{field} has batch {shape[0]}, X has {batch}", node.name, field)
        if out_sp is not None and all(d is not None for d in shape[2:]) and tuple(shape[2:]) != tuple(out_sp):
            raise BridgeError(f"{field} has spatial shape {list(shape[2:])}, the output has {list(out_sp)}",
                              node.name, field)


def _check_deformconv_inputs(node: NodeView, D: int, kernel, og: int) -> None:
    """Lengths onnxruntime checks before running: B per output channel, offset and mask per kernel tap."""
    name, w_shape = node.name, node.shape(1)
    b_shape = node.shape(3) if node.input(3) else None
    if b_shape is not None and w_shape and w_shape[0] is not None and tuple(b_shape) != (w_shape[0],):
        raise BridgeError(f"B has shape {list(b_shape)}, expected [{w_shape[0]}] (one per output channel)",
                          name, "B")
    if kernel is None:
        return
    taps = og * math.prod(kernel)
    for i, field, want in ((2, "offset", taps * D), (4, "mask", taps)):
        shape = node.shape(i) if node.input(i) else None
        if shape is not None and len(shape) > 1 and shape[1] is not None and shape[1] != want:
            raise BridgeError(f"{field} has {shape[1]} channels, expected {want} (offset_group x kernel taps"
                              + (" x spatial rank)" if field == "offset" else ")"), name, field)
