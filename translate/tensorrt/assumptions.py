"""The undocumented TensorRT rules an IR of layer settings rests on (``assumptions(settings)``).

Each is reported, ending "unverified on TensorRT": the scale that enters the formula under setScales with a
fractional L*scale (the given one, as Torch-TensorRT's tests imply; ``scale_source="user"``); how cubic taps
outside the input are read without exclude_outside (the edge element, as ONNX); ALIGN_CORNERS at output length
1 (source 0); float32 coordinates at an exact rounding boundary (resolved as exact arithmetic: the operator
page's nearest example maps 5 * 2/5 = 2 exactly); exclude_outside under NEAREST (ignored); GridSample's cubic
coefficient (-0.75), nearest ties (half to even), fill value (0) and where cubic padding applies (per tap, as
PyTorch); the OSS ModulatedDeformConv2d plugin's sampling (read in its source, not run).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Mapping

from ...semantics.coords import bind_resize
from ...semantics.ir import axis_name, has_runtime_params, is_static
from ...semantics.taps import cubic_filter, tie_indices
from .settings import UNVERIFIED, normalize_settings, parse_settings


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
    if not is_static(shape) and not has_runtime_params(ir, ("scales", "sizes")):
        every = _every_length(s, shape)
        if every is not None:
            return out + every
    if not is_static(shape) or has_runtime_params(ir, ("scales", "sizes")):
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
                       f"length to be the float32 product L*scale truncated ({UNVERIFIED})"))
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


PROBE_LENGTHS = (1, 2, 3, 5, 8, 13)


def _every_length(s: dict, shape) -> list[tuple[str, str]] | None:
    """The assumptions of a layer with constant scales on an input with dynamic dimensions, where they are the
    same for every value of those dimensions; None where that is not shown (the caller keeps its caution).

    A dynamic dimension the layer does not resize (scale exactly 1) maps every output to its own input index,
    whatever its length, so the other axes decide alone (probed with it at a few lengths). A dynamic dimension
    resized by an integer scale s >= 1 under NEAREST (not ALIGN_CORNERS) or LINEAR: L*s is an integer for every
    L (no setScales assumption), the output length is at least 2 unless L = s = 1 (no ALIGN_CORNERS length-1
    case), and the coordinate o/s + c repeats with period s in o, independent of L (the same rounding boundaries
    at every length: probed at lengths whose outputs cover a period; a coordinate off a boundary is at least
    1/(2s) from it, a margin float32 keeps for outputs below about 2^20). CUBIC and fractional scales are left
    to the caution: taps outside the input and fractional L*s depend on L."""
    if s["scales"] is None:
        return None
    dynamic = [a for a, d in enumerate(shape) if d is None]
    resized = [a for a in dynamic if s["scales"][a] != 1.0]
    if resized:
        if s["resize_mode"] not in ("NEAREST", "LINEAR"):
            return None
        if s["resize_mode"] == "NEAREST" and s["coordinate_transformation"] == "ALIGN_CORNERS":
            return None  # (L-1)/(sL-1) moves the boundaries with L
        if any(not float(s["scales"][a]).is_integer() or s["scales"][a] < 1 for a in resized):
            return None
    found = None
    for L in PROBE_LENGTHS:
        got = _resize_assumptions({**s, "input_shape": tuple(L if d is None else d for d in shape)})
        if resized and got:
            return None  # some length rests on an undocumented rule: not shown for every length
        found = got if found is None else found
        if [k for k, _ in got] != [k for k, _ in found]:
            return None
    return found or []


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


__all__ = ["assumptions", "keyed_assumptions"]
