"""IR -> exact IResizeLayer / IGridSampleLayer settings (``lower_settings``): the settings whose parsed IR
(``translate.tensorrt.parse_settings``) computes the source IR's numbers, or BridgeError naming the fields no
setting reproduces."""

from __future__ import annotations

from ...semantics.coords import bind_resize
from ...semantics.errors import BridgeError
from ...semantics.ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, has_runtime_params, is_static
from ...semantics.opspec import PerOp
from ...translate import tensorrt as ttrt
from .compare import compare

def _resize_candidates(ir: ResizeIR, shape):
    """IResizeLayer settings to try, the natural spelling first."""
    rank = ir.rank
    s = ir.sampler
    mode = {"nearest": "NEAREST", "linear": "LINEAR", "cubic": "CUBIC"}[s.kind]
    base = {"layer": "resize", "input_shape": tuple(shape), "dtype": ir.dtype, "resize_mode": mode,
            "exclude_outside": bool(ir.exclude_outside)}
    if s.kind == "cubic":
        base["cubic_coeff"] = float(s.cubic_a)
    natural = {"half_pixel": ("HALF_PIXEL", "FORMULA"), "pytorch_half_pixel": ("HALF_PIXEL", "UPPER"),
               "asymmetric": ("ASYMMETRIC", "FORMULA"), "align_corners": ("ALIGN_CORNERS", "FORMULA"),
               "half_pixel_symmetric": ("HALF_PIXEL", "FORMULA"), "tf_half_pixel_for_nn": ("HALF_PIXEL", "FORMULA"),
               "tf_crop_and_resize": ("ALIGN_CORNERS", "FORMULA")}[ir.coord]
    coords = [natural] + [c for c in (("HALF_PIXEL", "FORMULA"), ("HALF_PIXEL", "UPPER"), ("ASYMMETRIC", "FORMULA"),
                                      ("ALIGN_CORNERS", "FORMULA"), ("ALIGN_CORNERS", "UPPER")) if c != natural]
    if s.kind == "nearest":
        nat = ttrt.ROUNDING_FROM_IR.get(s.nearest)
        if ir.coord == "tf_half_pixel_for_nn":  # (x+.5)/s rounded = ((x+.5)/s - .5) rounded the other way
            nat = {"round_prefer_floor": "CEIL", "floor": "HALF_UP"}.get(s.nearest, nat)
        roundings = ([nat] if nat else []) + [r for r in ttrt.ROUND_MODES if r != nat]
    else:
        roundings = ["FLOOR"]
    sizings = []
    if isinstance(ir.scales, tuple):
        sizings.append(("scales", tuple(float(ir.scales[ir.axes.index(a)]) if a in ir.axes else 1.0
                                        for a in range(rank))))
    if isinstance(ir.sizes, RuntimeValue) and ir.aspect_policy == "stretch":
        sizings.append(("shape_input", ir.sizes.source))
    elif is_static(shape) and not has_runtime_params(ir, ("scales", "sizes")):
        sizings.insert(0 if ir.sizes is not None else len(sizings), ("shape", bind_resize(ir, shape).out_shape))
    for key, val in sizings:
        for coord, sel in coords:
            for r in roundings:
                yield {**base, key: val, "coordinate_transformation": coord, "selector_for_single_pixel": sel,
                       "nearest_rounding": r}


def lower_settings(ir, shape=None, *, strict: bool = False) -> dict:
    """Exact IResizeLayer / IGridSampleLayer settings for ``ir`` on ``shape`` (default: the IR's own), or
    BridgeError naming the fields no setting reproduces. Settings that rest on no undocumented rule are
    preferred; ``strict`` refuses the others."""
    return LAYER_SETTINGS.of(ir)(ir, shape, strict)


def _no_deformconv_layer(ir: DeformConvIR, shape, strict: bool) -> dict:
    raise BridgeError("TensorRT has no deformable-convolution layer (NvInfer.h); DeformConv goes through the "
                      "OSS ModulatedDeformConv2d plugin or resample-bridge's", field="kind")


def _lower_resize_settings(ir: ResizeIR, shape, strict: bool) -> dict:
    shape = tuple(shape) if shape is not None else ir.input_shape
    if shape is None:
        raise BridgeError("the input shape is unknown; IResizeLayer settings need its rank", field="X")
    if ir.sampler.antialias and ir.sampler.kind != "nearest":
        raise BridgeError("IResizeLayer has no antialias filter", field="sampler.antialias")
    if ir.pads:
        raise BridgeError("IResizeLayer does not pad (OpenVINO pads)", field="pads")
    if has_runtime_params(ir, ("roi", "scales")):
        raise BridgeError("scales/roi fed at run time: IResizeLayer takes run-time output dims only (the length "
                          "ratio), which cannot be proven equal for every value", field="scales")
    first_fields, fallback = None, None
    for cand in _resize_candidates(ir, shape):
        try:
            got = ttrt.parse_settings(cand)
        except BridgeError as e:
            first_fields = first_fields or [str(e)]
            continue
        same, fields, _ = compare(ir, got, shape)
        if not same:
            first_fields = first_fields or fields
            continue
        if not ttrt.assumptions(cand):
            return cand
        fallback = fallback or cand
    if fallback is not None and not strict:
        return fallback
    why = "; ".join(first_fields or ["no candidate"])
    if fallback is not None:
        why = "only settings that rest on undocumented TensorRT behaviour match: " + "; ".join(ttrt.assumptions(fallback))
    raise BridgeError(f"no IResizeLayer settings compute these numbers: {why}", field="settings")


def _lower_grid_settings(ir: GridSampleIR, shape, strict: bool) -> dict:
    if ir.spatial_rank != 2:
        raise BridgeError(f"IGridSampleLayer is 4-D only; this is {ir.spatial_rank + 2}-D", field="spatial_rank")
    s = {"layer": "grid_sample", "input_shape": ir.input_shape, "grid_shape": ir.grid_shape, "dtype": ir.dtype,
         "interpolation_mode": {"nearest": "NEAREST", "linear": "LINEAR", "cubic": "CUBIC"}[ir.sampler.kind],
         "align_corners": ir.align_corners, "sample_mode": ttrt.PADDING_TO_SAMPLE[ir.padding]}
    same, fields, _ = compare(ir, ttrt.parse_settings(s))
    if not same:
        raise BridgeError("IGridSampleLayer computes something else: " + "; ".join(fields), field="settings")
    if strict and ttrt.assumptions(s):
        raise BridgeError("exact only under undocumented behaviour: " + "; ".join(ttrt.assumptions(s)),
                          field="settings")
    return s


__all__ = ["lower_settings"]


LAYER_SETTINGS = PerOp("TensorRT layer settings", resize=_lower_resize_settings, gridsample=_lower_grid_settings,
                       deformconv=_no_deformconv_layer)
