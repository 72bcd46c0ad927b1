"""Readable one-line-per-axis form of an IR value, and its tie report, for humans (``inspect``)."""

from __future__ import annotations

from .coords import bind_resize
from .equivalence import affine_text
from .ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, axis_name
from .opspec import PerOp
from .taps import float32_reaches_ties, tie_indices


_DEFORM_BORDER = {"zero_taps": "zero outside (per tap)",
                  "clamp_in_range": "zero outside [0, L) (per sample), taps clamped inside"}


def _border(ir: ResizeIR) -> str:
    s = "exclude_outside" if ir.exclude_outside else "clamp"
    if ir.coord == "tf_crop_and_resize":
        s += f", extrapolate {ir.extrapolation_value:g} outside [0, L-1]"
    if ir.pads:
        r = len(ir.pads) // 2
        s += f", zero pads {list(ir.pads[:r])}/{list(ir.pads[r:])} first"
    if ir.filter_stretch != "clamped" and ir.sampler.antialias:
        s += f", antialias stretch {ir.filter_stretch}"
    if ir.integer_rounding == "q22_per_axis":
        s += ", 8-bit fixed point per axis (onnxruntime's / PyTorch's)"
    return s


def _static_shape(ir) -> bool:
    return ir.input_shape is not None and all(d is not None for d in ir.input_shape)


def _runtime_fields(ir: ResizeIR) -> list[str]:
    return [f"{k} {getattr(ir, k)}" for k in ("scales", "sizes", "roi") if isinstance(getattr(ir, k), RuntimeValue)]


def _values(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]" if values is not None else "?"


def _shape(shape) -> str:
    return "unknown" if shape is None else "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def describe(ir) -> list[str]:
    """Lines such as ``H 224->448: src = 1/2*dst - 1/4, linear, clamp``."""
    return DESCRIBE.of(ir)(ir)


def _describe_gridsample(ir: GridSampleIR) -> list[str]:
    norm = "x = (g+1)/2*(L-1)" if ir.align_corners else "x = ((g+1)*L - 1)/2"
    return [f"{ir.spatial_rank}-D grid sample: {ir.sampler}, {norm}, padding {ir.padding} "
            f"(on {ir.padding_on.replace('_', ' ')}), coordinates {ir.arith}"]


def _describe_deformconv(ir: DeformConvIR) -> list[str]:
    k = "x".join(map(str, ir.kernel_shape)) if ir.kernel_shape else "from W"
    extras = [x for x, on in (("mask", ir.has_mask), ("bias", ir.has_bias)) if on]
    return [f"{ir.spatial_rank}-D deformable conv: kernel {k}, strides {list(ir.strides)}, pads "
            f"{list(ir.pads)}, dilations {list(ir.dilations)}, group {ir.group}, offset_group "
            f"{ir.offset_group}{', ' + ', '.join(extras) if extras else ''}; taps {ir.sampler}, "
            f"{_DEFORM_BORDER.get(ir.border, ir.border)}"]


def _describe_resize(ir: ResizeIR) -> list[str]:
    tail = f"{ir.sampler}, {_border(ir)}"
    rt = _runtime_fields(ir)
    axes = ", ".join(axis_name(a, ir.rank) for a in ir.axes)
    if rt:
        return [f"axes {axes}: {ir.coord}; bound at run time ({', '.join(rt)}); {tail}"]
    if not _static_shape(ir):
        # Constant scales or sizes: only the lengths wait for the input's run-time shape.
        given = f"scales {_values(ir.scales)}" if ir.scales is not None else f"sizes {_values(ir.sizes)}"
        return [f"axes {axes}: {ir.coord}; {given} constant, lengths follow the run-time input shape "
                f"{_shape(ir.input_shape)}; {tail}"]
    bound = bind_resize(ir, ir.input_shape)
    if not bound.axes:
        return [f"identity ({'x'.join(map(str, bound.in_shape))}), {tail}"]
    lines = []
    for ax in bound.axes:
        extra = f", nearest {ax.nearest}" if ir.sampler.nearest == "simple" else ""
        lines.append(f"{axis_name(ax.axis, ir.rank)} {ax.in_len}->{ax.out_len}: {affine_text(ax)}, {tail}{extra}")
    return lines


DESCRIBE = PerOp("describe", resize=_describe_resize, gridsample=_describe_gridsample,
                 deformconv=_describe_deformconv)


def ties(ir) -> dict[str, list[int]]:
    """Output indices whose exact source coordinate sits on a rounding boundary, per axis name (Resize's: a
    sampled position's ties depend on the data, ``equivalence.diff`` names them)."""
    return TIES.get_for(ir, lambda ir: {})(ir)


def _ties_resize(ir: ResizeIR) -> dict[str, list[int]]:
    if not _static_shape(ir) or _runtime_fields(ir):
        return {}
    bound = bind_resize(ir, ir.input_shape)
    out = {}
    for ax in bound.axes:
        # Exact ties only: what any arithmetic may resolve either way (diff adds near ones per arithmetic).
        t = tie_indices(ax, bound.sampler, "exact", exclude_outside=ir.exclude_outside)
        if bound.sampler.kind == "nearest" and ax.valid is None and float32_reaches_ties(ax):
            # A float32 evaluation lands exactly where the exact coordinate does, and the rounding mode then
            # decides as the spec says: nothing for a framework to get wrong (integer-scale asymmetric).
            t = []
        if t:
            out[axis_name(ax.axis, ir.rank)] = t
    return out


TIES = PerOp("ties", resize=_ties_resize, gridsample=None, deformconv=None)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """"1 resampling node", "2 resampling nodes": a count with its noun in the right number."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
