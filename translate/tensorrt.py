"""TensorRT -> IR: IResizeLayer and IGridSampleLayer, and what onnx-tensorrt's ONNX importer builds from a node.

Two entry points, one vocabulary:

* ``parse_settings(settings)``: the IR of what an IResizeLayer / IGridSampleLayer computes, from a plain
  mapping of its settings (no TensorRT needed). Keys (enum values as TensorRT names them, with or without
  the ``k``, any case)::

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

  Defaults in brackets are the layer's own (NvInfer.h; seed 004). ``settings_from_layer`` reads the same
  mapping from a live ``tensorrt`` layer (lazy import; the only code here that needs TensorRT).

* ``import_node(view, opset)``: the settings onnx-tensorrt 10.10-10.15 builds for an ONNX Resize / Upsample /
  GridSample / DeformConv node, or its refusal with the importer's own message, predicted from the importer
  and checker source (notes/tensorrt-facts.md section 1; messages quoted from ``onnxOpCheckers.cpp`` /
  ``onnxOpImporters.cpp`` where ``quoted`` is True, paraphrased otherwise).

What the IR says TensorRT computes, rule by rule (documented in NvInfer.h / the operator page unless marked):

* coordinates: ALIGN_CORNERS / ASYMMETRIC / HALF_PIXEL as documented, with the *integer* output length
  (``formula_length="integer"``); HALF_PIXEL + selector UPPER is pytorch_half_pixel with source 0 at output
  length 1 (``length1="zero"``; "Select the upper left pixel");
* output length floor(L * scale) with setScales (documented), the given length with setOutputDimensions;
* rounding HALF_UP / HALF_DOWN / FLOOR / CEIL = round_prefer_ceil / round_prefer_floor / floor / ceil;
* cubic: Keys kernel with cubic_coeff, exclude_outside renormalises (documented);
* GridSample: kFILL / kCLAMP / kREFLECT = zeros / border / reflection padding.

Undocumented, so assumed and reported by ``assumptions(settings)`` (each line says "unverified on TensorRT"):
the scale that enters the formula under setScales with a fractional L*scale (the given one, as Torch-TensorRT's
tests imply; ``scale_source="user"``); how cubic taps outside the input are read without exclude_outside (the
edge element, as ONNX); ALIGN_CORNERS at output length 1 (source 0); float32 coordinates at an exact rounding
boundary (resolved as exact arithmetic: seed 004's 5*2/5 = 2 is); exclude_outside under NEAREST (ignored);
GridSample's cubic coefficient (-0.75), nearest ties (half to even), fill value (0) and where cubic padding
applies (per tap, as PyTorch); the OSS ModulatedDeformConv2d plugin's sampling (read in its source, not run).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from ..semantics.coords import bind_resize, exact
from ..semantics.errors import BridgeError
from ..semantics.ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, Sampler, axis_name
from ..semantics.taps import cubic_filter, tie_indices

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

# GridSample: what IGridSampleLayer is assumed to compute where NvInfer.h is silent (section 2.3).
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
    if kind == "resize":
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
    else:
        for key, default in GRID_DEFAULTS.items():
            out[key] = s.get(key, default) if s.get(key) is not None else default
        out["interpolation_mode"] = _enum(out["interpolation_mode"], RESIZE_MODES, "interpolation_mode")
        out["sample_mode"] = _enum(out["sample_mode"], SAMPLE_MODES, "sample_mode")
        out["align_corners"] = bool(out["align_corners"])
        out["grid_shape"] = _dims(s.get("grid_shape"), "grid_shape")
    return out


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
        scale_source = "user"  # undocumented: see assumptions()
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
    if all(d is not None for d in shape_in) and not isinstance(scales, RuntimeValue) and \
            not isinstance(sizes, RuntimeValue):
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


# ----------------------------------------------------------------------------------------------------------
# Assumptions


def _static(shape) -> bool:
    return shape is not None and all(d is not None for d in shape)


def _cubic_taps_outside(ax, a: Fraction) -> bool:
    """True when some output of this bound axis gives a non-zero cubic weight to a tap outside [0, L)."""
    L = ax.in_len
    for o in range(ax.out_len):
        src = ax.a * o + ax.b
        x0 = math.ceil(src) - 1
        t = src - x0
        for i in range(-1, 3):
            j = x0 + i
            if (j < 0 or j >= L) and cubic_filter(i - t, a) != 0:
                return True
    return False


def assumptions(settings: Mapping) -> list[str]:
    """Every undocumented rule the IR of these settings rests on, for their shape; [] when the numbers follow
    from TensorRT's documentation alone. Each line says what is assumed and ends with "unverified on
    TensorRT"."""
    return [text for _, text in keyed_assumptions(settings)]


# Which IR fields (as ``diff`` names them; "coordinate map" matches any axis's map) each assumption decides:
# a difference in one of them rests on the assumption.
_KEYS = {
    "scales": ("scale_source", "size_rule", "formula_length", "coordinate map", "output shape"),
    "cubic_edge": ("exclude_outside",),
    "align1": ("coordinate map", "length1", "coord"),
    "ties": (),
    "nearest_excl": ("exclude_outside",),
    "runtime": (),  # a caution about shapes not yet known, not the cause of a difference
    "grid_a": ("sampler.cubic_a",),
    "grid_pad": ("padding_on",),
    "grid_ties": ("sampler.nearest",),
    "grid_fill": ("padding",),
    "mdc": ("border", "sampler.kind"),
    "mdc_swap": ("strides", "pads", "dilations"),
}


def keyed_assumptions(settings: Mapping) -> list[tuple[tuple, str]]:
    """``assumptions`` with, for each, the IR fields it decides (``_KEYS``)."""
    s = normalize_settings(settings)
    if s["layer"] == "grid_sample":
        return _grid_assumptions(s)
    if s["layer"] == "ModulatedDeformConv2d":
        return _mdc_assumptions(s)
    return [(_KEYS[k], t) for k, t in _resize_assumptions(s)]


def _resize_assumptions(s: dict) -> list[tuple[str, str]]:
    out = []
    mode = s["resize_mode"]
    if mode == "NEAREST" and s["exclude_outside"]:
        out.append(("nearest_excl", f"exclude_outside with NEAREST is assumed to change nothing ({UNVERIFIED})"))
    ir = parse_settings(s)
    shape = s["input_shape"]
    if not _static(shape) or isinstance(ir.scales, RuntimeValue) or isinstance(ir.sizes, RuntimeValue):
        out.append(("runtime", "shapes known only at run time: on some shapes the result may rest on setScales "
                    "with a fractional input*scale, cubic taps outside the input, ALIGN_CORNERS at output length 1 "
                    f"or float32 coordinates at a rounding boundary ({UNVERIFIED})"))
        return out
    bound = bind_resize(ir, shape)
    if s["scales"] is not None:
        frac = [(a, shape[a], Fraction(shape[a]) * ir.scales[a]) for a in range(ir.rank)
                if (Fraction(shape[a]) * ir.scales[a]).denominator != 1]
        if frac:
            where = ", ".join(f"{axis_name(a, ir.rank)}: {L}*{float(ir.scales[a]):.7g} = {float(p):.7g}"
                              for a, L, p in frac)
            if s["coordinate_transformation"] == "ALIGN_CORNERS":
                what = "the integer output length floor(L*scale) is assumed to enter the ALIGN_CORNERS formula"
            else:
                what = "the given scale (not the length ratio) is assumed to enter the coordinate formula " \
                       "(Torch-TensorRT's tests imply it; the docs state the formula with lengths)"
            out.append(("scales", f"setScales with a fractional input*scale ({where}): {what}, and the output "
                       f"length to be the exact floor ({UNVERIFIED})"))
    if mode == "CUBIC" and not s["exclude_outside"]:
        outside = [axis_name(ax.axis, ir.rank) for ax in bound.axes if _cubic_taps_outside(ax, ir.sampler.cubic_a)]
        if outside:
            out.append(("cubic_edge", f"cubic taps outside the input (axes {', '.join(outside)}) are assumed to "
                       f"read the edge element, as ONNX does ({UNVERIFIED})"))
    if s["coordinate_transformation"] == "ALIGN_CORNERS" and s["selector_for_single_pixel"] == "FORMULA":
        one = [axis_name(ax.axis, ir.rank) for ax in bound.axes if ax.out_len == 1 and ax.in_len > 1]
        if one:
            out.append(("align1", f"ALIGN_CORNERS at output length 1 (axes {', '.join(one)}; 0/0 in the "
                       f"documented formula) is assumed to read source coordinate 0 ({UNVERIFIED})"))
    if mode == "NEAREST":
        # Output 0 of a map with offset 0 is 0*a + 0 = 0 in any arithmetic: not a tie that can go either way.
        ties = {axis_name(ax.axis, ir.rank): [o for o in tie_indices(ax, ir.sampler, "fp32")
                                              if not (o == 0 and ax.b == 0)] for ax in bound.axes}
        ties = {k: v for k, v in ties.items() if v}
        if ties:
            where = "; ".join(f"{k} output indices {_short(v)}" for k, v in ties.items())
            out.append(("ties", f"coordinates on a rounding boundary ({where}) are assumed to round as exact "
                       f"arithmetic does, though TensorRT computes them in floating point ({UNVERIFIED})"))
    return out


def _short(idx: list[int], n: int = 8) -> str:
    return str(idx) if len(idx) <= n else f"[{', '.join(map(str, idx[:n]))}, ... ({len(idx)} in all)]"


def _grid_assumptions(s: dict) -> list[tuple[tuple, str]]:
    out = []
    mode, sample = s["interpolation_mode"], s["sample_mode"]
    if mode == "CUBIC":
        out.append((_KEYS["grid_a"], f"IGridSampleLayer's cubic coefficient is assumed to be -0.75, as PyTorch's "
                    f"({UNVERIFIED})"))
        if sample != "FILL":
            out.append((_KEYS["grid_pad"], f"cubic with k{sample}: padding is assumed to apply to each of the 4x4 "
                        f"taps, as PyTorch does ({UNVERIFIED})"))
    if mode == "NEAREST":
        out.append((_KEYS["grid_ties"], "nearest grid coordinates exactly halfway between two pixels are assumed "
                    f"to round half to even, as PyTorch's nearbyint ({UNVERIFIED})"))
    if sample == "FILL":
        out.append((_KEYS["grid_fill"], f"kFILL is assumed to fill with 0 ({UNVERIFIED})"))
    return out


def _mdc_assumptions(s: dict) -> list[tuple[tuple, str]]:
    f = s["fields"]
    out = [(_KEYS["mdc"], "ModulatedDeformConv2d (OSS plugin): bilinear sampling with zero outside taps, read in "
            f"its source (modulatedDeformConvPluginKernel.cu), not run ({UNVERIFIED})")]
    if list(f["stride"])[0] != list(f["stride"])[1] or list(f["padding"])[0] != list(f["padding"])[1] or \
            list(f["dilation"])[0] != list(f["dilation"])[1]:
        out.append((_KEYS["mdc_swap"], "anisotropic stride/padding/dilation reach the plugin's kernel H/W-swapped "
                    f"(derived from its enqueue; {UNVERIFIED})"))
    return out


# ----------------------------------------------------------------------------------------------------------
# Live TensorRT layers (the only code that needs the tensorrt package)


def _trt():
    try:
        import tensorrt as trt  # noqa: F401
    except ImportError as e:
        raise BridgeError(f"the tensorrt Python package is not installed ({e}); settings_from_layer reads a "
                          "live layer — pass a settings mapping to parse_settings instead") from None
    return trt


def _np_dtype(trt, dt) -> str | None:
    try:
        return np.dtype(trt.nptype(dt)).name
    except Exception:
        return None


def settings_from_layer(layer) -> dict:
    """The settings mapping of a live IResizeLayer / IGridSampleLayer (TensorRT Python API)."""
    trt = _trt()
    if layer.type == trt.LayerType.RESIZE:
        layer.__class__ = trt.IResizeLayer
        x = layer.get_input(0)
        s = {"layer": "resize", "input_shape": tuple(x.shape), "dtype": _np_dtype(trt, x.dtype),
             "resize_mode": layer.resize_mode.name, "coordinate_transformation": layer.coordinate_transformation.name,
             "selector_for_single_pixel": layer.selector_for_single_pixel.name,
             "nearest_rounding": layer.nearest_rounding.name, "cubic_coeff": float(layer.cubic_coeff),
             "exclude_outside": bool(layer.exclude_outside)}
        dyn = layer.num_inputs > 1 and layer.get_input(1) is not None
        if dyn:
            s["shape_input"] = layer.get_input(1).name
        else:
            scales = list(layer.scales) if layer.scales is not None else []
            if scales and all(v > 0 for v in scales):
                s["scales"] = scales
            else:
                s["shape"] = tuple(layer.shape)
        return s
    if layer.type == trt.LayerType.GRID_SAMPLE:
        layer.__class__ = trt.IGridSampleLayer
        x, g = layer.get_input(0), layer.get_input(1)
        return {"layer": "grid_sample", "input_shape": tuple(x.shape), "grid_shape": tuple(g.shape),
                "dtype": _np_dtype(trt, x.dtype), "interpolation_mode": layer.interpolation_mode.name,
                "align_corners": bool(layer.align_corners), "sample_mode": layer.sample_mode.name}
    raise BridgeError(f"layer {layer.name!r} is a {layer.type}, not an IResizeLayer or IGridSampleLayer",
                      node=layer.name)


def parse_layer(layer):
    return parse_settings(settings_from_layer(layer))


def parse_network(network) -> list[tuple[str, Any]]:
    """``[(layer name, IR), ...]`` for every resize and grid-sample layer of a live INetworkDefinition."""
    trt = _trt()
    out = []
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        if layer.type in (trt.LayerType.RESIZE, trt.LayerType.GRID_SAMPLE):
            try:
                out.append((layer.name, parse_layer(layer)))
            except BridgeError as e:
                raise e.at(layer.name) from None
    return out


# ----------------------------------------------------------------------------------------------------------
# onnx-tensorrt's importer, predicted


class Imported:
    """What the importer does with one node: ``settings`` of the layer it builds (or the plugin it calls), or
    ``rejected`` with its ``message``. ``quoted``: the message is the importer's own text; ``stage``: where it
    fails (checker / importer / build). ``ir``: what the built layer computes. ``notes``: silent choices the
    importer makes (an attribute it does not read, an unknown string it maps to a default)."""

    def __init__(self, settings=None, message=None, quoted=True, stage="checker", notes=None, ir=None,
                 fields=None):
        self.settings = settings
        self.message = message
        self.quoted = quoted
        self.stage = stage
        self.notes = list(notes or [])
        self.ir = ir
        self.fields = fields  # a textual difference where no IR value can carry the importer's result

    @property
    def rejected(self) -> bool:
        return self.message is not None

    def __repr__(self) -> str:
        return f"Imported(rejected: {self.message!r})" if self.rejected else f"Imported({self.settings!r})"


def _reject(msg, quoted=True, stage="checker") -> Imported:
    return Imported(message=msg, quoted=quoted, stage=stage)


def _s(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _flat(v):
    if v is None or isinstance(v, RuntimeValue):
        return v
    a = np.asarray(v).reshape(-1)
    return None if a.size == 0 else a


_BAD_TYPES = ("bool", "uint8")


def import_node(view, opset: int) -> Imported:
    """What onnx-tensorrt 10.10-10.15 builds for ``view`` (a ``translate.onnx.NodeView``) in a model of
    default-domain ``opset``. The node's domain is ignored, as the importer ignores it."""
    op = view.op_type
    try:
        if op == "Resize":
            imp = _import_resize(view, opset)
        elif op == "Upsample":
            imp = _import_upsample(view, opset)
        elif op == "GridSample":
            imp = _import_gridsample(view)
        elif op == "DeformConv":
            return _import_deformconv(view)
        else:
            raise BridgeError(f"{op} is not a resampling op", view.name)
    except BridgeError as e:
        # A layer setting that TensorRT's API refuses (e.g. linear on more than 3 axes through setOutputDimensions).
        return Imported(message=e.message, quoted=False, stage="build")
    if not imp.rejected and imp.ir is None:
        try:
            imp.ir = parse_settings(imp.settings)
        except BridgeError as e:
            return Imported(message=e.message, quoted=False, stage="build", notes=imp.notes)
    return imp


def _input_checks(view) -> Imported | None:
    dt = view.dtype(0)
    if dt in _BAD_TYPES:
        return _reject(f"input of type {dt.upper()} is not supported (checkNotInvalidType BOOL, UINT8)", False,
                       "importer")
    shp = view.shape(0)
    if shp is not None and len(shp) == 0:
        return _reject("a scalar input is not supported", False, "importer")
    return None


def _scatter(values, axes, full, fill):
    out = list(full) if full is not None else [fill] * len(axes)
    for v, a in zip(values, axes):
        out[a] = v
    return out


def _import_resize(view, opset: int) -> Imported:
    a = view.attrs
    mode = _s(a.get("mode", "nearest"))
    # --- checker (onnxOpCheckers.cpp DEFINE_OP_CHECKER(Resize)), all static errors of the node
    errors = []
    if mode not in ("cubic", "linear", "nearest"):
        errors.append("Invalid Resize mode")
    coord = _s(a.get("coordinate_transformation_mode", "half_pixel"))
    nearest_mode = _s(a.get("nearest_mode", "round_prefer_floor"))
    if opset >= 11:
        if coord == "tf_half_pixel_for_nn" and nearest_mode != "round_prefer_floor":
            errors.append("This version of TensorRT only support round_prefer_floor nearest mode in "
                          "tf_half_pixel_for_nn!")
        if coord not in ("align_corners", "tf_half_pixel_for_nn", "pytorch_half_pixel", "half_pixel", "asymmetric"):
            errors.append("TensorRT only supports half_pixel, pytorch_half_pixel, tf_half_pixel_for_nn, asymmetric "
                          "and align_corners transformation modes!")
    if int(a.get("antialias", 0)) != 0:
        errors.append("Antialiasing is not supported currently.")
    if _s(a.get("keep_aspect_ratio_policy", "stretch")) != "stretch":
        errors.append("Only `stretch` is supported currently as `keep_aspect_ratio_policy`.")
    axes_attr = a.get("axes")
    if axes_attr is not None and len(set(axes_attr)) != len(list(axes_attr)):
        errors.append("The input axes must have unique elements.")
    if errors:
        return _reject("; ".join(errors))
    bad = _input_checks(view)
    if bad:
        return bad
    # --- importer (onnxOpImporters.cpp DEFINE_BUILTIN_OP_IMPORTER(Resize))
    shape = view.shape(0)
    rank = len(shape) if shape is not None else None
    notes = []
    s: dict[str, Any] = {"layer": "resize", "input_shape": shape, "dtype": view.dtype(0),
                         "resize_mode": {"cubic": "CUBIC", "linear": "LINEAR"}.get(mode, "NEAREST"),
                         "selector_for_single_pixel": "FORMULA", "nearest_rounding": "HALF_DOWN",
                         "cubic_coeff": -0.75, "exclude_outside": False}
    if opset < 11:
        s["coordinate_transformation"] = "ASYMMETRIC"
        s["nearest_rounding"] = "FLOOR"
        return _sizing_from_scales(view, 1, s, rank, None, notes, mode)
    if coord == "tf_half_pixel_for_nn":
        s["coordinate_transformation"] = "HALF_PIXEL"
        s["nearest_rounding"] = "CEIL"
        for key in ("exclude_outside", "cubic_coeff_a"):
            if key in a:
                notes.append(f"{key} is not read under tf_half_pixel_for_nn")
        if _flat(view.const(2)) is None and view.input(3):
            return _reject("tf_half_pixel_for_nn with sizes: the importer only reads the scales input, which is "
                           "empty here (it fails or errors)", False, "importer")
        axes = _axes(axes_attr, rank)
        return _sizing_from_scales(view, 2, s, rank, axes, notes, mode)
    s["coordinate_transformation"] = {"align_corners": "ALIGN_CORNERS", "asymmetric": "ASYMMETRIC"}.get(
        coord, "HALF_PIXEL")
    if coord == "pytorch_half_pixel":
        s["selector_for_single_pixel"] = "UPPER"
    if mode == "nearest":
        rounding = {"floor": "FLOOR", "ceil": "CEIL", "round_prefer_floor": "HALF_DOWN",
                    "round_prefer_ceil": "HALF_UP"}.get(nearest_mode)
        if rounding is None:
            notes.append(f"unknown nearest_mode {nearest_mode!r} silently kept at kHALF_DOWN")
            rounding = "HALF_DOWN"
        s["nearest_rounding"] = rounding
    s["exclude_outside"] = bool(int(a.get("exclude_outside", 0)))
    if mode == "cubic":
        s["cubic_coeff"] = float(np.float32(a.get("cubic_coeff_a", -0.75)))
    axes = _axes(axes_attr, rank)
    sizes = view.const(3) if view.input(3) else None
    if sizes is not None and not (isinstance(sizes, np.ndarray) and np.asarray(sizes).size == 0):
        if isinstance(sizes, RuntimeValue):
            s["shape_input"] = sizes.source
            return Imported(s, notes=notes)
        vals = [int(v) for v in np.asarray(sizes).reshape(-1)]
        if axes is not None:
            if shape is None or any(shape[i] is None for i in range(rank) if i not in axes):
                s["shape_input"] = f"{sizes_name(view)} interlaced with shape(X)"
                return Imported(s, notes=notes)
            vals = _scatter(vals, axes, shape, None)
        s["shape"] = tuple(vals)
        return Imported(s, notes=notes)
    return _sizing_from_scales(view, 2, s, rank, axes, notes, mode)


def sizes_name(view) -> str:
    return view.input(3) or "sizes"


def _axes(axes_attr, rank):
    if axes_attr is None or rank is None:
        return None
    axes = [int(x) % rank for x in axes_attr]
    return None if axes == list(range(rank)) else axes


def _window_check(s, scales, mode) -> Imported | None:
    if mode in ("linear", "bilinear", "cubic"):
        n = 2 if mode == "cubic" else 3
        if len(scales) > n and any(v != 1 for v in scales[:len(scales) - n]):
            word = "cubic" if mode == "cubic" else "linear"
            return _reject(f"This version of TensorRT only supports {word} resizing on the outermost {n} dimensions",
                           True, "importer")
    return None


def _sizing_from_scales(view, idx, s, rank, axes, notes, mode) -> Imported:
    scales = view.const(idx) if view.input(idx) else None
    if isinstance(scales, RuntimeValue):
        if axes is not None:
            return _reject("axes with a run-time scales tensor must list every axis", False, "importer")
        s["shape_input"] = f"floor(float32(shape(X)) * {scales.source})"
        s["shape_input_scales"] = scales.source
        return Imported(s, notes=notes)
    vals = _flat(scales)
    if vals is None:
        return _reject("neither a constant sizes nor a scales input is given", False, "importer")
    vals = [float(np.float32(v)) for v in vals]
    if axes is not None:
        vals = _scatter(vals, axes, None if rank is None else [1.0] * rank, 1.0)
    if rank is not None and len(vals) != rank:
        return _reject("The shape of the scales input must aligin with the dimensions of the input.", True, "importer")
    bad = _window_check(s, vals, mode)
    if bad:
        return bad
    s["scales"] = tuple(vals)
    return Imported(s, notes=notes)


def _import_upsample(view, opset: int) -> Imported:
    a = view.attrs
    mode = _s(a.get("mode", "nearest"))
    if mode not in ("nearest", "linear", "bilinear"):
        return _reject("The attribute mode can only be nearest, linear, or bilinear.")
    bad = _input_checks(view)
    if bad:
        return bad
    shape = view.shape(0)
    rank = len(shape) if shape is not None else None
    s = {"layer": "resize", "input_shape": shape, "dtype": view.dtype(0),
         "resize_mode": "NEAREST" if mode == "nearest" else "LINEAR", "coordinate_transformation": "ASYMMETRIC",
         "selector_for_single_pixel": "FORMULA", "nearest_rounding": "FLOOR"}
    if opset < 9:
        vals = [float(np.float32(v)) for v in a.get("scales", [])]
        bad = _window_check(s, vals, mode)
        if bad:
            return bad
        s["scales"] = tuple(vals)
        return Imported(s)
    return _sizing_from_scales(view, 1, s, rank, None, [], mode)


def _import_gridsample(view) -> Imported:
    a = view.attrs
    if len([i for i in view.inputs]) != 2:
        return _reject("GridSample takes exactly 2 inputs", False, "importer")
    for i in (0, 1):
        if view.dtype(i) in _BAD_TYPES:
            return _reject(f"input of type {view.dtype(i).upper()} is not supported", False, "importer")
    xs, gs_ = view.shape(0), view.shape(1)
    if xs is not None and gs_ is not None and len(xs) != len(gs_):
        return _reject("X and grid must have the same rank", False, "importer")
    notes = []
    padding = _s(a.get("padding_mode", "zeros"))
    sample = {"zeros": "FILL", "border": "CLAMP", "reflection": "REFLECT"}.get(padding)
    if sample is None:
        notes.append(f"unknown padding_mode {padding!r} silently becomes kFILL")
        sample = "FILL"
    mode = _s(a.get("mode", "bilinear"))  # the importer's default string is the opset-16 name
    interp = {"nearest": "NEAREST", "bilinear": "LINEAR", "bicubic": "CUBIC"}.get(mode)
    if interp is None:
        notes.append(f"mode {mode!r} is not one of nearest/bilinear/bicubic: the importer silently runs kNEAREST "
                     "(NVIDIA/TensorRT #4646, onnx-tensorrt PR #1060)")
        interp = "NEAREST"
    rank = len(xs) if xs is not None else (len(gs_) if gs_ is not None else None)
    if rank is not None and rank != 4:
        return Imported(message="INetworkDefinition::addGridSample: Error Code 3: API Usage Error (input and grid "
                        f"must be rank 4; this is rank {rank})", quoted=True, stage="build", notes=notes)
    s = {"layer": "grid_sample", "input_shape": xs, "grid_shape": gs_, "dtype": view.dtype(0),
         "interpolation_mode": interp, "align_corners": bool(int(a.get("align_corners", 0))), "sample_mode": sample}
    return Imported(s, notes=notes)


def _import_deformconv(view) -> Imported:
    """DeformConv -> the OSS ModulatedDeformConv2d plugin (importerUtils.cpp modulatedDeformableConvPluginHelper)."""
    a = view.attrs
    xs, ws = view.shape(0), view.shape(1)
    rank = len(xs) if xs is not None else (len(ws) if ws is not None else None)
    if rank not in (3, 4):
        return _reject("TensorRT only supports DeformConv on 3D, or 4D tensors!", True, "importer")
    types = {view.dtype(i) for i in (0, 1, 2)}
    if len(types) != 1 or types.pop() not in ("float32", "float16", None):
        return _reject("X, W and offset must all be FLOAT or all FLOAT16", False, "importer")
    D = rank - 2
    pads = [int(p) for p in a.get("pads", [0] * 2 * D)]
    if pads[:D] != pads[D:]:
        return _reject("TensorRT only supports DeformConv where the same number of pixels are added to the "
                       "beginning and the end of each axis (pads begin == end)", False, "importer")
    if view.input(4) and not view.input(3):
        return _reject("Trying to access weights or a null tensor! (an empty B with a mask)", True, "importer")
    stride = [int(v) for v in a.get("strides", [1] * D)]
    dil = [int(v) for v in a.get("dilations", [1] * D)]
    if D == 1:  # unsqueezed on axis 3 with stride 1, pad 0, dilation 1
        stride, pads, dil = stride + [1], [pads[0], 0], dil + [1]
    fields = {"stride": stride, "padding": pads[:2] if D == 2 else pads, "dilation": dil,
              "group": int(a.get("group", 1)), "deformable_group": int(a.get("offset_group", 1))}
    ks = a.get("kernel_shape")
    if ks is None and ws is not None and all(d is not None for d in ws[2:]):
        ks = list(ws[2:])
    s = {"layer": "ModulatedDeformConv2d", "version": "1 (10.10) / 2 (10.15)", "fields": fields,
         "kernel_shape": tuple(int(k) for k in ks) if ks is not None and D == 2 else None,
         "input_shape": xs, "weight_shape": ws, "dtype": view.dtype(0), "has_bias": bool(view.input(3)),
         "has_mask": bool(view.input(4))}
    notes = [] if view.input(4) else ["the mask is a ones tensor made by the importer (harmless)"]
    if D == 1:
        s1, p1, d1 = stride[0], pads[0], dil[0]
        if (s1, p1, d1) == (1, 0, 1):
            ir = DeformConvIR(1, (int(ks[0]),) if ks is not None else None, (1,), (0, 0), (1,), fields["group"],
                              fields["deformable_group"], s["has_bias"], s["has_mask"], input_shape=xs,
                              weight_shape=ws, dtype=view.dtype(0), origin="ModulatedDeformConv2d")
            return Imported(s, notes=notes, ir=ir)
        return Imported(s, notes=notes, fields=[
            f"1-D stride {s1}, pad {p1}, dilation {d1} reach the plugin on the unsqueezed axis after its H/W swap "
            f"(derived from the plugin source; {UNVERIFIED})"])
    return Imported(s, notes=notes, ir=parse_settings(s))


__all__ = ["parse_settings", "normalize_settings", "assumptions", "keyed_assumptions", "settings_from_layer", "parse_layer",
           "parse_network", "import_node", "Imported", "UNVERIFIED"]
