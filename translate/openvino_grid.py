"""OpenVINO GridSample-9 -> GridSampleIR and DeformableConvolution (1, 8) -> DeformConvIR, as the CPU plugin
computes them (measured against the oracle, ``tests/translate/test_openvino_fidelity.py``).

GridSample-9: padding on taps (``padding_on="taps"``), nearest rounds half to even, cubic a = -3/4; the
unnormalised coordinate is computed in float64 and rounded to float32 once (``arith="fp32_fused"``, measured:
grid float32(-1/3) on length 6 gives 1.5 and reads row 2, where onnxruntime's float32 steps give 1.4999999
and read row 1). DeformableConvolution-8: ``bilinear_interpolation_pad`` true = zero taps (ONNX); false and
DeformableConvolution-1 = ``border="clamp_in_range"``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..semantics.coords import MAX_ELEMENTS
from ..semantics.errors import BridgeError
from ..semantics.ir import DeformConvIR, GridSampleIR, Sampler
from ..semantics.reference import deformconv_out_shape
from ..semantics.vocab import GRID_PADDINGS, OPENVINO_GRIDSAMPLE_MODES
from .openvino_nodes import choice, input_dtype, input_shape, node_name, supported_version

_DEFORM_VERSIONS = (1, 8)


def parse_gridsample(node) -> GridSampleIR:
    name = node_name(node)
    attrs = node.get_attributes()
    mode = choice(attrs, "mode", OPENVINO_GRIDSAMPLE_MODES, name)
    padding = choice(attrs, "padding_mode", GRID_PADDINGS, name)
    in_shape, grid_shape = input_shape(node, 0), input_shape(node, 1)
    if in_shape is not None and len(in_shape) != 4:
        raise BridgeError(f"GridSample-9 is defined for 4-D input only, got rank {len(in_shape)}", name, "X")
    if grid_shape is not None and (len(grid_shape) != 4 or grid_shape[-1] not in (None, 2)):
        raise BridgeError(f"grid has shape {grid_shape}, expected [N, H, W, 2]", name, "grid")
    if in_shape and grid_shape and all(d is not None for d in in_shape[:2] + grid_shape[1:3]):
        if in_shape[0] * in_shape[1] * grid_shape[1] * grid_shape[2] > MAX_ELEMENTS:
            raise BridgeError("output has more than 2^31 elements", name, "grid")
    sampler = (Sampler("nearest", nearest="half_even") if mode == "nearest" else
               Sampler("cubic", cubic_a=Fraction(-3, 4)) if mode == "bicubic" else Sampler("linear"))
    return GridSampleIR(spatial_rank=2, sampler=sampler, padding=padding,
                        align_corners=bool(attrs.get("align_corners", False)), padding_on="taps",
                        arith="fp32_fused", input_shape=in_shape, grid_shape=grid_shape, dtype=input_dtype(node, 0),
                        origin="GridSample-9")


def parse_deformconv(node) -> DeformConvIR:
    name = node_name(node)
    version = supported_version(node, _DEFORM_VERSIONS)
    attrs = node.get_attributes()
    in_shape, w_shape = input_shape(node, 0), input_shape(node, 2)
    rank = len(in_shape) if in_shape is not None else (len(w_shape) if w_shape is not None else None)
    if rank is None:
        raise BridgeError("the input rank is unknown (dynamic rank of data and filters)", name, "X")
    if rank != 4:
        raise BridgeError(f"DeformableConvolution is 2-D (rank 4), got rank {rank}", name, "X")
    D = rank - 2
    auto_pad = str(attrs.get("auto_pad", "explicit")).lower()
    if auto_pad not in ("explicit", "notset", "valid", "same_upper", "same_lower"):
        raise BridgeError(f"unsupported value {auto_pad!r}", name, "auto_pad")
    if auto_pad in ("same_upper", "same_lower") and (in_shape is None or any(d is None for d in in_shape[2:])):
        raise BridgeError(f"auto_pad {auto_pad} needs static spatial input dimensions", name, "auto_pad")

    def ints(key):
        v = tuple(int(i) for i in attrs.get(key, []))
        if len(v) != D:
            raise BridgeError(f"{key} has {len(v)} values, expected {D}", name, key)
        return v

    strides, dil = ints("strides"), ints("dilations")
    if any(s <= 0 for s in strides):
        raise BridgeError(f"strides {strides} must be positive", name, "strides")
    if any(s <= 0 for s in dil):
        raise BridgeError(f"dilations {dil} must be positive", name, "dilations")
    # For auto_pad, OpenVINO's shape inference has already written the resolved pads into the attributes.
    pads = (0,) * 2 * D if auto_pad == "valid" else ints("pads_begin") + ints("pads_end")
    if any(p < 0 for p in pads):
        raise BridgeError(f"pads {pads} must not be negative", name, "pads_begin")
    group, dg = int(attrs.get("group", 1)), int(attrs.get("deformable_group", 1))
    if group < 1:
        raise BridgeError(f"group must be at least 1, got {group}", name, "group")
    if dg < 1:
        raise BridgeError(f"deformable_group must be at least 1, got {dg}", name, "deformable_group")
    kernel = tuple(w_shape[2:]) if w_shape is not None and all(d is not None for d in w_shape[2:]) else None
    if in_shape is not None and in_shape[1] is not None:
        if in_shape[1] % dg:
            raise BridgeError(f"{in_shape[1]} input channels are not divisible by deformable_group {dg}", name,
                              "deformable_group")
        if w_shape is not None and w_shape[1] is not None and w_shape[1] * group != in_shape[1]:
            raise BridgeError(f"filters have {w_shape[1]} channels per group, data has {in_shape[1]} "
                              f"channels and group={group}", name, "group")
    if in_shape is not None and kernel and all(d is not None for d in in_shape):
        probe = DeformConvIR(D, kernel, strides, pads, dil, group, dg, False, False)
        out_sp = deformconv_out_shape(probe, in_shape[2:], kernel)
        if any(o <= 0 for o in out_sp):
            raise BridgeError(f"output spatial shape {out_sp} is empty", name, "pads_begin")
        if w_shape[0] is not None and in_shape[0] * w_shape[0] * math.prod(out_sp) > MAX_ELEMENTS:
            raise BridgeError("output has more than 2^31 elements", name, "filters")
    has_mask = version == 8 and node.get_input_size() > 3
    bip = bool(attrs.get("bilinear_interpolation_pad", False)) if version == 8 else False
    return DeformConvIR(spatial_rank=D, kernel_shape=kernel, strides=strides, pads=pads, dilations=dil,
                        group=group, offset_group=dg, has_bias=False, has_mask=has_mask,
                        border="zero_taps" if bip else "clamp_in_range", input_shape=in_shape,
                        weight_shape=w_shape, dtype=input_dtype(node, 0), origin=f"DeformableConvolution-{version}")
