"""Every allowed string of the IR, in one place (plain tuples, so values print and serialise as they are).

The order of the tuples the C ABI passes as indices (SAMPLER_KINDS, NEAREST_RULES, GRID_PADDINGS, PADDING_ON,
ARITH, DEFORM_BORDERS) is the order of the C++ enums (lowering/kernels/rb/common.hpp); the kernel tests read
the compiled names back and compare. What each field means: semantics/ir.py.

The framework spellings live here too, once, because parsers, lowerings and tools all need them: the
resampling op types of ONNX and OpenVINO (the predicates: translate/onnx.py and translate/openvino.py
``is_resampling``) and the values of their attributes (modes, nearest modes, coordinate modes) wherever the
IR's own tuples do not already spell them. They are not IR values.
"""

from __future__ import annotations

COORD_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "tf_half_pixel_for_nn",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)
SAMPLER_KINDS = ("nearest", "linear", "cubic")
# Sampler.nearest: how a nearest coordinate rounds. half_even is GridSample's; simple is onnxruntime's
# Resize-10 / Upsample (floor when upsampling, ceil when downsampling).
NEAREST_RULES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "half_even", "simple")
# floor_eps: OpenVINO's SCALES-mode length, float32(L) * float32(s + 1e-6f) truncated (L itself when s == 1).
# floor_fp32: onnxruntime, floor of the float32 product float32(s) * L. floor_fp64: PyTorch
# (aten compute_output_size, static_cast<int64_t>(L * scale) in double: L=10, s=0.6 -> 6 where the exact floor of
# 10 * 0.59999999999999998 is 5).
SIZE_RULES = ("floor", "round", "floor_eps", "floor_fp32", "floor_fp64")
ASPECT_POLICIES = ("stretch", "not_larger", "not_smaller")
SCALE_SOURCES = ("user", "ratio")
FORMULA_LENGTHS = ("fractional", "integer")
LENGTH1_RULES = ("minus_half", "zero")
# How coordinates are computed (decides only ties): exactly, in float64, in float32 steps, or (GridSample) in
# float64 rounded once to float32 (OpenVINO CPU GridSample-9, measured; semantics/coords.py unnormalize_as).
ARITH = ("exact", "fp64", "fp32", "fp32_fused")
# The antialias filter stretch f per resized axis: ``clamped`` = min(scale, 1) (ONNX); ``unclamped`` = the axis
# scale itself, so an up-sampled axis gets a triangle narrower than one input step (OpenVINO CPU, LINEAR at
# rank 5); ``any_down`` = unclamped when any resized axis down-samples, else 1 (OpenVINO's core reference,
# which the CPU runs for LINEAR at rank 6 and above).
FILTER_STRETCHES = ("clamped", "any_down", "unclamped")
# ResizeIR.integer_rounding: ``once`` = the exact sum rounded half to even and saturated (the spec's cast,
# onnx.reference); ``q22_per_axis`` = Pillow's resampler as onnxruntime and PyTorch run 8-bit antialias: float32
# weights in 2^-22 fixed point, each axis rounded half up and clipped before the next (semantics/fixed_point.py).
INTEGER_ROUNDINGS = ("once", "q22_per_axis")
GRID_PADDINGS = ("zeros", "border", "reflection")
# Where GridSample applies padding: on the source coordinate and then on each tap (ONNX reference), or on
# each tap only (PyTorch, onnxruntime for cubic). Nearest and linear give the same numbers either way.
PADDING_ON = ("coordinate_and_taps", "taps")
# DeformConvIR.border: a tap outside the input reads zero (ONNX, DeformableConvolution-8 with
# bilinear_interpolation_pad) or only sampling points inside the input are taken (DeformableConvolution-1).
DEFORM_BORDERS = ("zero_taps", "clamp_in_range")
# DeformConvIR.offset_layout: ONNX's [N, offset_group*prod(K)*D, out...], D fastest; the only one the kernels read.
OFFSET_LAYOUTS = ("group,kernel...,(d...)",)

# Framework spellings.
ONNX_RESAMPLING_OPS = ("Resize", "Upsample", "GridSample", "DeformConv")  # default domain ("" / "ai.onnx")
ONNX_RESIZE_OPS = ("Resize", "Upsample")  # the ops whose IR is a ResizeIR (their scales / sizes are parameters)
# The parsers that take a convention (semantics/schema.py CONVENTIONS): the ops whose spec text is read two ways.
ONNX_CONVENTION_OPS = ONNX_RESIZE_OPS + ("GridSample",)
ONNX_DOMAINS = ("", "ai.onnx")  # the default domain's two spellings
OPENVINO_RESAMPLING_OPS = ("Interpolate", "GridSample", "DeformableConvolution")
# Attribute values, in the order refusals list them. ONNX's coordinate_transformation_mode values are the IR's
# COORD_MODES (half_pixel_symmetric from Resize-19); GridSample's padding_mode, in ONNX and OpenVINO, is
# GRID_PADDINGS.
ONNX_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")  # Resize nearest_mode
ONNX_RESIZE_MODES = ("nearest", "linear", "cubic")  # Resize-11+ mode (Resize-10: the first two)
ONNX_UPSAMPLE_MODES = ("nearest", "linear", "bilinear")
ONNX_GRIDSAMPLE_MODES = ("bilinear", "nearest", "bicubic")  # GridSample-16
ONNX_GRIDSAMPLE_20_MODES = ("linear", "nearest", "cubic")  # GridSample-20+
OPENVINO_COORD_MODES = ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners")
OPENVINO_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")
OPENVINO_INTERPOLATE1_MODES = ("nearest", "linear", "linear_onnx", "cubic", "area")
OPENVINO_INTERPOLATE4_MODES = ("nearest", "linear", "linear_onnx", "cubic")
OPENVINO_INTERPOLATE11_MODES = OPENVINO_INTERPOLATE4_MODES + ("bilinear_pillow", "bicubic_pillow")
OPENVINO_GRIDSAMPLE_MODES = ("bilinear", "bicubic", "nearest")  # GridSample-9

__all__ = ["COORD_MODES", "SAMPLER_KINDS", "NEAREST_RULES", "SIZE_RULES", "ASPECT_POLICIES", "SCALE_SOURCES",
           "FORMULA_LENGTHS", "LENGTH1_RULES", "ARITH", "FILTER_STRETCHES", "INTEGER_ROUNDINGS", "GRID_PADDINGS",
           "PADDING_ON", "DEFORM_BORDERS", "OFFSET_LAYOUTS", "ONNX_RESAMPLING_OPS", "ONNX_RESIZE_OPS",
           "ONNX_CONVENTION_OPS", "ONNX_DOMAINS", "OPENVINO_RESAMPLING_OPS",
           "ONNX_NEAREST_MODES", "OPENVINO_COORD_MODES", "OPENVINO_NEAREST_MODES", "ONNX_RESIZE_MODES",
           "ONNX_UPSAMPLE_MODES", "ONNX_GRIDSAMPLE_MODES", "ONNX_GRIDSAMPLE_20_MODES", "OPENVINO_INTERPOLATE1_MODES",
           "OPENVINO_INTERPOLATE4_MODES", "OPENVINO_INTERPOLATE11_MODES", "OPENVINO_GRIDSAMPLE_MODES"]
