"""IResizeLayer / IGridSampleLayer settings -> IR (no TensorRT needed).

``parse_settings(settings)``: the IR of what an IResizeLayer / IGridSampleLayer computes, from a plain mapping of
its settings. Keys (enum values as TensorRT names them, with or without the ``k``, any case)::

    IResizeLayer:      layer="resize", input_shape, dtype, resize_mode (NEAREST), exactly one of
                       shape (setOutputDimensions) | scales (setScales) | shape_input (setInput(1): output
                       dims fed at run time; with shape_input_scales the importer computed them as
                       floor(float32(shape(X)) * scales)), coordinate_transformation (ASYMMETRIC),
                       selector_for_single_pixel (FORMULA), nearest_rounding (FLOOR), cubic_coeff (-0.75),
                       exclude_outside (False)
    IGridSampleLayer:  layer="grid_sample", input_shape, grid_shape, dtype, interpolation_mode (LINEAR),
                       align_corners (False), sample_mode (FILL)
    ModulatedDeformConv2d (the OSS plugin the importer uses for DeformConv): layer="ModulatedDeformConv2d",
                       fields stride/padding/dilation/group/deformable_group, spatial_rank, has_bias, has_mask

Defaults in brackets are the layer's own (NvInfer.h, and the worked examples of TensorRT's IResizeLayer
operator page).

What the IR says TensorRT computes, rule by rule (documented in NvInfer.h / the operator page unless marked):

* coordinates: ALIGN_CORNERS / ASYMMETRIC / HALF_PIXEL as documented, with the *integer* output length
  (``formula_length="integer"``); HALF_PIXEL + selector UPPER is pytorch_half_pixel with source 0 at output
  length 1 (``length1="zero"``; "Select the upper left pixel");
* output length floor(L * scale) with setScales (documented), the given length with setOutputDimensions;
* rounding HALF_UP / HALF_DOWN / FLOOR / CEIL = round_prefer_ceil / round_prefer_floor / floor / ceil;
* cubic: Keys kernel with cubic_coeff, exclude_outside renormalises (documented);
* GridSample: kFILL / kCLAMP / kREFLECT = zeros / border / reflection padding.

What is undocumented, and so assumed: ``translate.tensorrt.assumptions``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from ...semantics.coords import bind_resize, exact
from ...semantics.errors import BridgeError
from ...semantics.ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, Sampler, has_runtime_params, is_static

UNVERIFIED = "unverified on TensorRT"

RESIZE_MODES = ("NEAREST", "LINEAR", "CUBIC")
COORD_TRANSFORMS = ("ALIGN_CORNERS", "ASYMMETRIC", "HALF_PIXEL")
SELECTORS = ("FORMULA", "UPPER")
ROUND_MODES = ("HALF_UP", "HALF_DOWN", "FLOOR", "CEIL")
SAMPLE_MODES = ("STRICT_BOUNDS", "WRAP", "CLAMP", "FILL", "REFLECT")

RESIZE_DEFAULTS = {"resize_mode": "NEAREST", "coordinate_transformation": "ASYMMETRIC",
                   "selector_for_single_pixel": "FORMULA", "nearest_rounding": "FLOOR", "cubic_coeff": -0.75,
                   "exclude_outside": False}
GRID_DEFAULTS = {"interpolation_mode": "LINEAR", "align_corners": False, "sample_mode": "FILL"}

# IResizeLayer: which innermost axes each mode may resize (NvInfer.h class doc: nearest min(8, N), linear
# min(3, N); Python docstring: cubic the innermost 2, N >= 2).
RESIZE_WINDOW = {"NEAREST": 8, "LINEAR": 3, "CUBIC": 2}

ROUNDING_TO_IR = {"HALF_UP": "round_prefer_ceil", "HALF_DOWN": "round_prefer_floor", "FLOOR": "floor",
                  "CEIL": "ceil"}
ROUNDING_FROM_IR = {v: k for k, v in ROUNDING_TO_IR.items()}
SAMPLE_TO_PADDING = {"FILL": "zeros", "CLAMP": "border", "REFLECT": "reflection"}
PADDING_TO_SAMPLE = {v: k for k, v in SAMPLE_TO_PADDING.items()}

# GridSample: what IGridSampleLayer is assumed to compute where NvInfer.h is silent (translate.tensorrt.assumptions).
GRID_CUBIC_A = Fraction(-3, 4)
GRID_NEAREST = "half_even"
GRID_PADDING_ON = "taps"


# ----------------------------------------------------------------------------------------------------------
# Settings


def _enum(value, allowed, field: str) -> str:
    """'kLINEAR', 'LINEAR', 'linear', 'InterpolationMode.LINEAR' or an enum object -> 'LINEAR'."""
    name = getattr(value, "name", value)
    s = str(name).rsplit(".", 1)[-1].strip()
    if s[:1] == "k" and s[1:].upper() == s[1:] and len(s) > 1:
        s = s[1:]
    s = s.upper()
    if s not in allowed:
        raise BridgeError(f"unknown value {value!r}; expected one of {', '.join(allowed)}", field=field)
    return s


def _dims(v, field: str) -> tuple | None:
    if v is None:
        return None
    out = []
    for d in v:
        if d is None or (isinstance(d, (int, np.integer)) and d < 0):
            out.append(None)  # TensorRT writes -1 for a dynamic dimension
        else:
            out.append(int(d))
    return tuple(out)


def _layer_kind(s: Mapping) -> str:
    kind = s.get("layer")
    if kind is None:
        if "interpolation_mode" in s or "sample_mode" in s or "grid_shape" in s:
            return "grid_sample"
        return "resize"
    k = str(kind).lower().replace("igridsamplelayer", "grid_sample").replace("iresizelayer", "resize")
    if k in ("resize", "grid_sample", "gridsample"):
        return "grid_sample" if k.startswith("grid") else "resize"
    if str(kind) == "ModulatedDeformConv2d":
        return "ModulatedDeformConv2d"
    raise BridgeError(f"unknown layer {kind!r}; expected resize, grid_sample or ModulatedDeformConv2d",
                      field="layer")


def normalize_settings(settings: Mapping) -> dict:
    """The settings with enum names canonical, defaults filled in and shapes as tuples (None = dynamic)."""
    s = dict(settings)
    kind = _layer_kind(s)
    if kind == "ModulatedDeformConv2d":
        return {**s, "layer": kind}
    shape_in = _dims(s.get("input_shape"), "input_shape")
    out: dict[str, Any] = {"layer": kind, "input_shape": shape_in, "dtype": s.get("dtype")}
    _LAYER_SETTINGS[kind](s, out)
    return out


def _resize_settings(s: dict, out: dict) -> None:
    """An IResizeLayer's settings into ``out``."""
    for key, default in RESIZE_DEFAULTS.items():
        out[key] = s.get(key, default) if s.get(key) is not None else default
    out["resize_mode"] = _enum(out["resize_mode"], RESIZE_MODES, "resize_mode")
    out["coordinate_transformation"] = _enum(out["coordinate_transformation"], COORD_TRANSFORMS,
                                             "coordinate_transformation")
    out["selector_for_single_pixel"] = _enum(out["selector_for_single_pixel"], SELECTORS,
                                             "selector_for_single_pixel")
    out["nearest_rounding"] = _enum(out["nearest_rounding"], ROUND_MODES, "nearest_rounding")
    out["cubic_coeff"] = float(np.float32(out["cubic_coeff"]))
    out["exclude_outside"] = bool(out["exclude_outside"])
    given = [k for k in ("shape", "scales", "shape_input") if s.get(k) is not None]
    if len(given) != 1:
        raise BridgeError("an IResizeLayer has exactly one of shape (setOutputDimensions), scales (setScales) "
                          f"or shape_input (setInput(1)); got {given or 'none'}", field="shape")
    out["shape"] = _dims(s["shape"], "shape") if s.get("shape") is not None else None
    out["scales"] = tuple(float(np.float32(x)) for x in s["scales"]) if s.get("scales") is not None else None
    out["shape_input"] = str(s["shape_input"]) if s.get("shape_input") is not None else None
    out["shape_input_scales"] = s.get("shape_input_scales")


def _grid_settings(s: dict, out: dict) -> None:
    """An IGridSampleLayer's settings into ``out``."""
    for key, default in GRID_DEFAULTS.items():
        out[key] = s.get(key, default) if s.get(key) is not None else default
    out["interpolation_mode"] = _enum(out["interpolation_mode"], RESIZE_MODES, "interpolation_mode")
    out["sample_mode"] = _enum(out["sample_mode"], SAMPLE_MODES, "sample_mode")
    out["align_corners"] = bool(out["align_corners"])
    out["grid_shape"] = _dims(s.get("grid_shape"), "grid_shape")


_LAYER_SETTINGS = {"resize": _resize_settings, "grid_sample": _grid_settings}  # by ``_layer_kind``


# ----------------------------------------------------------------------------------------------------------
# Settings -> IR


def parse_settings(settings: Mapping):
    """The IR of what the layer (or the OSS DeformConv plugin) computes."""
    s = normalize_settings(settings)
    if s["layer"] == "resize":
        return _resize_ir(s)
    if s["layer"] == "grid_sample":
        return _grid_ir(s)
    return _mdc_ir(s)


def _changed_axes(s: dict) -> list[int] | None:
    """Axes an IResizeLayer resizes (scale != 1, or an output dim != input dim); None when unknown."""
    if s["scales"] is not None:
        return [i for i, v in enumerate(s["scales"]) if v != 1.0]
    if s["shape"] is not None and s["input_shape"] is not None:
        return [i for i, (o, n) in enumerate(zip(s["shape"], s["input_shape"])) if n is None or o != n]
    return None


def _resize_ir(s: dict) -> ResizeIR:
    shape_in = s["input_shape"]
    if shape_in is None:
        raise BridgeError("the input shape is needed (its rank places the scales)", field="input_shape")
    rank = len(shape_in)
    if rank == 0:
        raise BridgeError("IResizeLayer does not take a scalar", field="input_shape")
    mode = s["resize_mode"]
    if mode == "CUBIC" and rank < 2:
        raise BridgeError("CUBIC resizes the innermost 2 axes of an N-D tensor, N >= 2", field="resize_mode")
    for key in ("shape", "scales"):
        if s[key] is not None and len(s[key]) != rank:
            raise BridgeError(f"{key} has {len(s[key])} values; the input has rank {rank}", field=key)
    if s["scales"] is not None and any(not (v > 0) or not math.isfinite(v) for v in s["scales"]):
        raise BridgeError(f"scales {list(s['scales'])} must be positive and finite", field="scales")
    if s["shape"] is not None and any(d is None or d < 0 for d in s["shape"]):
        raise BridgeError(f"shape {list(s['shape'])} must be non-negative integers", field="shape")
    changed = _changed_axes(s)
    window = RESIZE_WINDOW[mode]
    if changed:
        outer = [a for a in changed if a < rank - window]
        if outer:
            raise BridgeError(f"IResizeLayer {mode} resizes at most the innermost {min(window, rank)} axes; "
                              f"axes {outer} change", field="scales" if s["scales"] is not None else "shape")
    transform = s["coordinate_transformation"]
    upper = s["selector_for_single_pixel"] == "UPPER"
    coord = {"ALIGN_CORNERS": "align_corners", "ASYMMETRIC": "asymmetric",
             "HALF_PIXEL": "pytorch_half_pixel" if upper else "half_pixel"}[transform]
    if mode == "NEAREST":
        sampler = Sampler("nearest", nearest=ROUNDING_TO_IR[s["nearest_rounding"]])
    elif mode == "LINEAR":
        sampler = Sampler("linear")
    else:
        sampler = Sampler("cubic", cubic_a=exact(np.float32(s["cubic_coeff"])))
    scales = sizes = None
    size_rule, scale_source = "floor", "ratio"
    if s["scales"] is not None:
        scales = tuple(exact(np.float32(v)) for v in s["scales"])
        # undocumented, see assumptions(): the given scale in the map, the length its float32 product truncated
        # (TensorRT's scales are float32, as onnx-tensorrt's own shape path and onnxruntime compute it)
        scale_source, size_rule = "user", "floor_fp32"
    elif s["shape"] is not None:
        sizes = tuple(int(d) for d in s["shape"])
    elif s.get("shape_input_scales"):
        # onnx-tensorrt's resizeShapeTensor: floor(float32(shape(X)) * scales) fed as output dims, so the
        # layer maps with the length ratio (it never sees the scales).
        scales = RuntimeValue(str(s["shape_input_scales"]))
        size_rule = "floor_fp32"
    else:
        sizes = RuntimeValue(s["shape_input"])
    ir = ResizeIR(
        rank=rank, axes=tuple(range(rank)), scales=scales, sizes=sizes, roi=None, coord=coord, sampler=sampler,
        # exclude_outside is read by the linear and cubic kernels; NEAREST is assumed to ignore it.
        exclude_outside=bool(s["exclude_outside"]) and mode != "NEAREST",
        size_rule=size_rule, scale_source=scale_source, formula_length="integer", length1="zero", arith="fp32",
        input_shape=shape_in, dtype=s.get("dtype"), origin="IResizeLayer",
    )
    if is_static(shape_in) and not has_runtime_params(ir, ("scales", "sizes")):
        bind_resize(ir, shape_in)  # impossible lengths are refused now, with the field
    return ir


def _grid_ir(s: dict) -> GridSampleIR:
    shp, gshp = s["input_shape"], s["grid_shape"]
    rank = len(shp) if shp is not None else (len(gshp) if gshp is not None else None)
    if (rank is not None and rank != 4) or (gshp is not None and len(gshp) != 4):
        raise BridgeError(f"IGridSampleLayer takes rank-4 input and grid (NvInfer.h; addGridSample fails with "
                          f"'Error Code 3: API Usage Error' otherwise); got input rank {rank}", field="X")
    if s["sample_mode"] not in SAMPLE_TO_PADDING:
        raise BridgeError(f"setSampleMode(k{s['sample_mode']}) returns false: IGridSampleLayer supports kCLAMP, "
                          "kFILL and kREFLECT only", field="sample_mode")
    mode = s["interpolation_mode"]
    sampler = (Sampler("nearest", nearest=GRID_NEAREST) if mode == "NEAREST" else
               Sampler("cubic", cubic_a=GRID_CUBIC_A) if mode == "CUBIC" else Sampler("linear"))
    return GridSampleIR(spatial_rank=2, sampler=sampler, padding=SAMPLE_TO_PADDING[s["sample_mode"]],
                        align_corners=s["align_corners"], padding_on=GRID_PADDING_ON, arith="fp32",
                        input_shape=shp, grid_shape=gshp, dtype=s.get("dtype"), origin="IGridSampleLayer")


def _mdc_ir(s: dict) -> DeformConvIR:
    """ModulatedDeformConv2d as onnx-tensorrt feeds it. Its enqueue passes stride/padding/dilation d[0], d[1]
    into parameters named (W, H) while the importer fills them as (H, W): derived from the plugin source, not
    run, so the IR swaps them (an anisotropic case is reported unverified)."""
    f = s["fields"]
    stride, pad, dil = list(f["stride"]), list(f["padding"]), list(f["dilation"])
    return DeformConvIR(
        spatial_rank=2, kernel_shape=s.get("kernel_shape"), strides=(stride[1], stride[0]),
        pads=(pad[1], pad[0], pad[1], pad[0]), dilations=(dil[1], dil[0]), group=int(f["group"]),
        offset_group=int(f["deformable_group"]), has_bias=bool(s.get("has_bias")), has_mask=bool(s.get("has_mask")),
        input_shape=_dims(s.get("input_shape"), "input_shape"), weight_shape=_dims(s.get("weight_shape"), "W"),
        dtype=s.get("dtype"), origin="ModulatedDeformConv2d")



__all__ = ["parse_settings", "normalize_settings", "UNVERIFIED", "RESIZE_MODES", "COORD_TRANSFORMS", "SELECTORS",
           "ROUND_MODES", "SAMPLE_MODES", "RESIZE_WINDOW", "ROUNDING_TO_IR", "ROUNDING_FROM_IR", "SAMPLE_TO_PADDING",
           "PADDING_TO_SAMPLE", "GRID_CUBIC_A", "GRID_NEAREST", "GRID_PADDING_ON"]
