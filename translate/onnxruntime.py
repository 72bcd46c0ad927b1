"""What onnxruntime's CPU execution provider computes, as IR.

``ort_semantics(ir)`` takes the ONNX-spec IR of a node (as ``translate.onnx.parse_model`` returns it) and
returns the IR of what onnxruntime (measured: 1.31.1, CPUExecutionProvider) actually computes for that node,
by replacing named fields. Every rule below was established by running onnxruntime against the oracle
(``tests/test_differential_onnxruntime.py``); the comment on each rule says which measurement showed it.

What no IR field can express yet (so ``ort_semantics`` leaves the spec value and the differential test marks
the affected configurations): under a keep-aspect policy onnxruntime rounds half away from zero the *float32*
product policy_scale * length; ``ort_output_shape`` computes that length so callers can tell when it differs
from the IR's. Integer outputs of linear/cubic are truncated (or fixed-point rounded per pass under antialias)
instead of rounded half to even.

This module imports numpy and the semantics package only; onnxruntime itself is not needed here.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np

from ..semantics.fixed_point import ort_fixed_point_resize, static_cast
from ..semantics.ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, keep_axes
from ..semantics.opspec import PerOp
from ..semantics.reference import runtime_values


def ort_semantics(ir):
    """The IR of what onnxruntime's CPU provider computes for a node whose ONNX-spec IR is ``ir``."""
    return ORT_SEMANTICS.of(ir)(ir)


def at_run_time(ir, args):
    """``ir`` with what one run fed it (``args``: the node's inputs in the oracle's order) as static values, where
    onnxruntime's rules read them (``AT_RUN_TIME``)."""
    return AT_RUN_TIME.of(ir)(ir, args)


def _resize_at_run_time(ir: ResizeIR, args) -> ResizeIR:
    """The input shape and the roi / scales / sizes one run fed: onnxruntime's rules on unit-scale and
    equal-length axes are stated on known values (``_drop_identity_axes``); left run-time they go unsaid
    (tf_crop_and_resize fed sizes equal to its input's lengths: onnxruntime copies the tensor, the spec crops it)."""
    if not args or args[0] is None:
        return ir
    fields = {"input_shape": tuple(int(d) for d in np.shape(args[0]))}
    for key, values in runtime_values(ir, args).items():
        if values is not None:
            fields[key] = tuple(int(v) for v in values) if key == "sizes" else \
                tuple(Fraction(float(np.float32(v))) for v in values)
    return dataclasses.replace(ir, **fields)


def _deformconv(ir: DeformConvIR) -> DeformConvIR:
    # Measured: 2-D DeformConv-19/22 (groups, offset groups, mask, bias, strides, dilations, pads,
    # offsets far out of bounds and on integer/half-integer positions) equals the spec IR to 2e-6.
    return ir


# ----------------------------------------------------------------------------------------------------------
# Resize / Upsample


def ort_rounds_integers_otherwise(ir) -> bool:
    """onnxruntime's integer outputs of linear / cubic resizing (and GridSample) are truncated where the spec
    rounds half to even: off by one step at most, a deviation no IR field expresses (module docstring). Not
    8-bit antialias, whose fixed point the IR carries (``integer_rounding``, ``_resize``)."""
    return ir.dtype is not None and np.issubdtype(np.dtype(ir.dtype), np.integer) and \
        ir.sampler.kind != "nearest" and not ort_fixed_point_resize(ir)


def _resize(ir: ResizeIR) -> ResizeIR:
    fields = {
        # Measured: align_corners and tf_crop_and_resize with scales whose product L*s is fractional
        # (0.6, 1.7, 2.5, 0.35 ...) match only the integer output length in the formula ...
        # ... while half_pixel_symmetric matches only the fractional one (ORT divides by scale*L there).
        "formula_length": "fractional" if ir.coord == "half_pixel_symmetric" else "integer",
        # Measured: pytorch_half_pixel with output length 1 (cubic, antialias) reads source coordinate 0,
        # not -0.5; ORT tests the integer output length (> 1), which formula_length="integer" supplies.
        "length1": "zero",
        # Measured: coordinates are float32 expressions (x_resized / x_scale ...), which decides ties:
        # half_pixel_symmetric, nearest floor, length 3 -> 1 has the exact source 1 but ORT reads index 0
        # (float32 0.99999994); the differential test masks exactly the tie indices diff() reports.
        "arith": "fp32",
        # Measured: the output length from scales is the float32 product, truncated (0.7f on length 10 -> 7;
        # the exact floor is 6). Under a keep-aspect policy onnxruntime rounds the float32 product half away
        # from zero, which no IR value carries yet (ort_output_shape computes it).
        "size_rule": "floor_fp32",
    }
    if ort_fixed_point_resize(ir):
        # Measured: 8-bit antialias is Pillow's fixed point per axis, bit for bit (tests/semantics/
        # test_fixed_point.py), whatever convention the source IR was read under (its unchanged lengths copied:
        # ``_drop_identity_axes``, as every antialias); int8 clipped to [0, 255] as uint8 is.
        fields["integer_rounding"] = "q22_per_axis"
    if ir.dtype is not None and np.issubdtype(np.dtype(ir.dtype), np.integer) and ir.coord == "tf_crop_and_resize":
        # Measured: static_cast<T>(extrapolation_value) - truncated toward zero, then wrapped to the type
        # (uint8: -7.5 -> 249, 300.6 -> 44, 2.5 -> 2; int32: -7.5 -> -7), in every mode, antialias included.
        fields["extrapolation_value"] = float(static_cast(ir.extrapolation_value, ir.dtype))
    # Not replaced, measured equal to the spec: scale_source "user" (also under antialias, scales
    # 0.6/1.7/0.35/1.3/0.9 on lengths 4..7), nearest rounding rules, cubic_coeff_a, exclude_outside (cubic and
    # antialias), antialias filter windows and edge handling, extrapolation_value, Upsample/Resize-10 "simple".
    out = _listed_non_negative(dataclasses.replace(ir, **fields))
    return _drop_identity_axes(out)


def _listed_non_negative(ir: ResizeIR) -> ResizeIR:
    """Measured (1.32): under keep_aspect_ratio_policy not_larger / not_smaller, an axis the node lists as a negative
    number keeps its input length and stays out of the policy's min / max (axes [-2, -1]: X itself; [2, -1]: H
    alone resized): the IR of the axes listed non-negative (``ResizeIR.given_negative``). Values known only at run
    time are left as they are (``at_run_time`` binds them first); with none left, no policy has an axis to read."""
    if ir.aspect_policy == "stretch" or not ir.given_negative or \
            any(isinstance(v, RuntimeValue) for v in (ir.scales, ir.sizes, ir.roi)):
        return ir
    keep = [i for i, a in enumerate(ir.axes) if a not in ir.given_negative]
    return dataclasses.replace(keep_axes(ir, keep), given_negative=(),
                               aspect_policy=ir.aspect_policy if keep else "stretch")


def _static(ir: ResizeIR) -> bool:
    return _static_lengths(ir) and not isinstance(ir.roi, RuntimeValue)


def _static_lengths(ir: ResizeIR) -> bool:
    """The input shape and the scales or sizes are known before run time (the roi may not be)."""
    shape = ir.input_shape
    if shape is None or any(d is None for d in shape):
        return False
    return not any(isinstance(v, RuntimeValue) for v in (ir.scales, ir.sizes))


def _ort_axes(ir: ResizeIR):
    """Per axis in ``ir.axes``: (input length, ORT's float32 scale, ORT's output length)."""
    lens = [ir.input_shape[a] for a in ir.axes]
    f32 = np.float32
    if ir.scales is not None:
        scales = [f32(float(s)) for s in ir.scales]
        # ComputeOutputShape: static_cast<int64_t>(scale * input_dim), evaluated in float32.
        outs = [int(f32(s * f32(n))) for s, n in zip(scales, lens)]
        return lens, scales, outs
    ratios = [f32(f32(o) / f32(n)) if n else f32(1) for o, n in zip(ir.sizes, lens)]
    if ir.aspect_policy == "stretch":
        return lens, ratios, [int(o) for o in ir.sizes]
    p = min(ratios) if ir.aspect_policy == "not_larger" else max(ratios)
    # AdjustOutputSizeAsPolicy: std::round(scale * input_dim) in float32, halves away from zero.
    outs = [int(math.floor(float(f32(p * f32(n))) + 0.5)) for n in lens]
    return lens, [p] * len(lens), outs


def ort_output_shape(ir: ResizeIR) -> tuple[int, ...] | None:
    """The output shape onnxruntime allocates for a Resize/Upsample IR with static shape and parameters
    (None when something is only known at run time). It differs from ``bind_resize(ort_semantics(ir))``
    exactly where ORT's float32 length rule has no IR value (see the module docstring)."""
    if not isinstance(ir, ResizeIR) or not _static(ir):
        return None
    ir = _listed_non_negative(ir)
    _, _, outs = _ort_axes(ir)
    shape = list(ir.input_shape)
    for ax, o in zip(ir.axes, outs):
        shape[ax] = o
    return tuple(shape)


def _drop_identity_axes(ir: ResizeIR) -> ResizeIR:
    """The axes ORT copies unchanged, whatever the coordinate mode says (roi and extrapolation of
    tf_crop_and_resize included)."""
    if ir.sampler.antialias and ir.sampler.kind != "nearest":
        # Measured: under antialias every axis whose output length equals its input length is copied
        # (linear and cubic, e.g. scale 1.25 on length 3, or a keep-aspect scale 0.8 on length 2, where the
        # spec resamples).
        ir = dataclasses.replace(ir, equal_length_identity=True)
    if not _static_lengths(ir) or not ir.axes:
        return ir
    lens, scales, outs = _ort_axes(ir)
    if all(o == m for o, m in zip(outs, lens)):
        # Measured: when every output length equals the input length the tensor is copied (e.g. scale
        # 1.1 on length 5 under half_pixel, where the spec shifts by 0.05; tf_crop_and_resize's roi ignored,
        # given or fed at run time).
        return dataclasses.replace(ir, equal_length_identity=True)
    if not _static(ir):  # the axes removed below take their roi entries with them: a roi known now
        return ir
    # Measured: an axis whose float32 scale is exactly 1 is copied, in every mode (e.g. the N and C axes
    # under tf_half_pixel_for_nn, whose spec map src = dst + 0.5 blends neighbours; a roi on a scale-1 axis is
    # ignored). Without antialias an axis with scale != 1 is resampled even at equal length (linear
    # half_pixel, scale 1.25 on length 3), so these axes are removed rather than marked equal-length.
    # (sizes: a keep-aspect scale of 1 makes every length equal, handled above, so only stretch gets here)
    keep = [i for i, s in enumerate(scales) if s != np.float32(1)]
    return ir if len(keep) == len(ir.axes) else keep_axes(ir, keep)


# ----------------------------------------------------------------------------------------------------------
# GridSample


def _gridsample(ir: GridSampleIR) -> GridSampleIR:
    # Measured: cubic with padding_mode=border differs from the spec IR (coordinate clamped, then taps)
    # and matches padding applied to each of the 4x4 taps only (GridSample-16/20/22, both align_corners).
    # Nearest (rint half to even) and linear measured equal to the spec; both use float32 coordinates.
    return dataclasses.replace(ir, padding_on="taps", arith="fp32")


ORT_SEMANTICS = PerOp("onnxruntime semantics", resize=_resize, gridsample=_gridsample, deformconv=_deformconv)
# GridSample and DeformConv: no rule of onnxruntime's reads a run-time value (their IRs hold none)
AT_RUN_TIME = PerOp("onnxruntime's rules at run time", resize=_resize_at_run_time, gridsample=lambda ir, args: ir,
                    deformconv=lambda ir, args: ir)
