"""Coordinate maps: the one place these formulas live (output-length rules: ``lengths``).

``bind_resize`` turns a ResizeIR plus a concrete input shape (and run-time values) into ``BoundResize``:
per resized axis the exact output length and the exact affine map ``src = a*dst + b`` (Fractions). Two
resize ops compute the same numbers on a shape iff their bound forms produce equal tap tables, which is
what ``equivalence.diff`` checks.

Ported to C++ in lowering/kernels/rb/bind.hpp (bind_resize, output_length, affine) and rb/points.hpp
(unnormalize, grid_bounds, reflect); tests/lowering/test_kernels.py proves they agree exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from .errors import BridgeError
from .ir import ResizeIR, RuntimeValue, Sampler
from .lengths import output_length

MAX_ELEMENTS = 2**31


@dataclass(frozen=True)
class BoundAxis:
    axis: int
    in_len: int
    out_len: int
    a: Fraction  # src = a*dst + b, exact
    b: Fraction
    filter_scale: Fraction  # the scale whose inverse stretches an antialias filter (used as min(s, 1))
    nearest: str | None  # rounding rule resolved for this axis ("simple" resolved to floor/ceil)
    valid: tuple[Fraction, Fraction] | None  # tf_crop_and_resize: src outside -> extrapolation value
    # Zeros added before this axis is resampled (OpenVINO pads): in_len counts them, and tap index j reads
    # original element j - pad_begin (zero outside).
    pad_begin: int = 0
    pad_end: int = 0
    stretch_clamp: bool = True  # antialias stretch min(filter_scale, 1); False: filter_scale as is
    # The magnitude of the map's own intermediates beyond a*dst + b, which a float32 evaluation rounds relative to:
    # half_pixel_symmetric's offset L/2 * (1 - out / (L*s)) (``error_bound._axis_dc``)
    map_terms: Fraction = Fraction(0)
    # tf_crop_and_resize: the axis' crop box (start, end), as the op reads it (``fixed_point`` evaluates its map
    # in float32 from it); None elsewhere.
    roi: tuple[Fraction, Fraction] | None = None

    def src(self, o: int) -> Fraction:
        return self.a * o + self.b

    def is_identity(self, exclude_outside: bool = False) -> bool:
        if self.valid is not None or self.in_len != self.out_len or self.pad_begin or self.pad_end:
            return False
        if self.in_len == 1 and not exclude_outside:
            return True  # every tap clamps onto the one element and the weights sum to 1
        return self.a == 1 and self.b == 0


@dataclass(frozen=True)
class BoundResize:
    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    axes: tuple[BoundAxis, ...]  # non-identity axes only, in the op's order
    sampler: Sampler
    exclude_outside: bool
    extrapolation_value: float
    arith: str
    pads: tuple[int, ...] = ()  # zeros added to the input first (begins then ends, every axis); () = none
    integer_rounding: str = "once"  # ResizeIR.integer_rounding
    coord: str = "half_pixel"  # ResizeIR.coord (``fixed_point`` evaluates onnxruntime's float32 maps)


def exact(x: float) -> Fraction:
    """The exact rational value of a binary float (float32 values are exact in float64)."""
    return Fraction(float(x))


def round_half_up(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


def plain_coord(ir: ResizeIR) -> str:
    """The coordinate mode whose map equals ``ir``'s at every length: half_pixel for half_pixel_symmetric where the
    length its offset divides by is the integer output length (given sizes, stretched; or the integer formula
    length), as its offset L/2 * (1 - out / formula length) is then 0 (``affine``); else ``ir.coord``."""
    if ir.coord == "half_pixel_symmetric" and (ir.formula_length == "integer" or
                                               (ir.sizes is not None and ir.aspect_policy == "stretch")):
        return "half_pixel"
    return ir.coord


def affine(coord: str, in_len: int, out_len: int, scale: Fraction, formula_len: Fraction,
           roi: tuple[Fraction, Fraction] | None, length1: str) -> tuple[Fraction, Fraction]:
    """(a, b) with src = a*dst + b for one axis.

    ``scale`` is the scale that enters the formula (user scale or out/in, per ``scale_source``);
    ``formula_len`` is the output length the formula divides by (fractional L*s or the integer length).
    """
    inv = 1 / scale
    if coord == "asymmetric":
        return inv, Fraction(0)
    if coord == "half_pixel":
        return inv, (inv - 1) / 2
    if coord == "tf_half_pixel_for_nn":
        return inv, inv / 2
    if coord == "pytorch_half_pixel":
        if formula_len == 1:
            return Fraction(0), (Fraction(-1, 2) if length1 == "minus_half" else Fraction(0))
        return inv, (inv - 1) / 2
    if coord == "half_pixel_symmetric":
        # Centre the implicit ROI on the output canvas: offset = L/2 * (1 - out_int / out_frac).
        offset = Fraction(in_len, 2) * (1 - Fraction(out_len) / formula_len) if formula_len else Fraction(0)
        return inv, offset + (inv - 1) / 2
    if coord == "align_corners":
        if formula_len == 1:
            return Fraction(0), Fraction(0)
        return Fraction(in_len - 1) / (formula_len - 1), Fraction(0)
    if coord == "tf_crop_and_resize":
        r0, r1 = roi
        if formula_len == 1:
            return Fraction(0), (r1 - r0) * (in_len - 1) / 2 + r0 * (in_len - 1)
        return (r1 - r0) * (in_len - 1) / (formula_len - 1), r0 * (in_len - 1)
    raise BridgeError(f"unknown coordinate mode {coord!r}", field="coordinate_transformation_mode")


def axis_roi(ir, axis: int) -> tuple[Fraction, Fraction] | None:
    """tf_crop_and_resize's crop box (start, end) on ``axis`` where the model fixes it, else None (fed at run time,
    or another mode)."""
    if ir.coord != "tf_crop_and_resize" or ir.roi is None or isinstance(ir.roi, RuntimeValue):
        return None
    i, n = list(ir.axes).index(axis), len(ir.axes)
    return Fraction(ir.roi[i]), Fraction(ir.roi[n + i])


def box_past(roi) -> bool:
    """Whether a crop box (start, end) reaches past [0, 1]: some outputs may take the extrapolation value (None, a
    box fed at run time or another mode's axis: False)."""
    return roi is not None and not all(0 <= r <= 1 for r in roi)


def crop_inside(ir) -> bool:
    """tf_crop_and_resize whose fixed crop box lies inside [0, 1] on every resized axis: every source coordinate
    then lies inside the input (a mean of its ends, scaled by in - 1), so no output takes the extrapolation value,
    whatever the lengths, and a rounded coordinate clamped to the input is as close to the exact one."""
    boxes = [axis_roi(ir, a) for a in ir.axes]
    return bool(boxes) and None not in boxes and not any(box_past(box) for box in boxes)


def crop_inside_range(roi: tuple[Fraction, Fraction], out_len: int) -> tuple[int, int]:
    """(lo, hi): the outputs lo .. hi (empty where lo > hi) of tf_crop_and_resize whose source lies inside the input
    for the crop box ``roi`` and ``out_len`` outputs, on any axis longer than 1 (``affine``'s map is L - 1 times the
    one at L = 2, so whether 0 <= src <= L - 1 is decided alike at every L > 1; an axis of one element reads src 0).
    The rest take the extrapolation value: a box past [0, 1] at lengths known only at run time (``scale_taps``)."""
    n = int(out_len)
    if n <= 0:
        return 0, -1
    a, b = affine("tf_crop_and_resize", 2, n, Fraction(1), Fraction(n), roi, "zero")
    if a == 0:
        return (0, n - 1) if 0 <= b <= 1 else (0, -1)
    # 0 <= a*o + b <= 1: o between -b/a and (1-b)/a, in either order
    ends = sorted((-b / a, (1 - b) / a))
    return max(0, math.ceil(ends[0])), min(n - 1, math.floor(ends[1]))


def _static(value, name: str, runtime: dict | None):
    """The IR's value, or the run-time value supplied for it."""
    if isinstance(value, RuntimeValue):
        if runtime is None or runtime.get(name) is None:
            raise BridgeError(f"{name} is fed at run time ({value.source}); a value is needed to bind it",
                              field=name)
        return runtime[name]
    return value


def bind_resize(ir: ResizeIR, in_shape: Sequence[int], runtime: dict | None = None) -> BoundResize:
    """Resolve lengths and coordinate maps for a concrete input shape.

    ``runtime`` supplies values for RuntimeValue fields: {"scales": [...], "sizes": [...], "roi": [...]}
    as the framework would receive them (already per ``ir.axes``).
    """
    in_shape = tuple(int(d) for d in in_shape)
    if len(in_shape) != ir.rank:
        raise BridgeError(f"input has rank {len(in_shape)}, the op expects {ir.rank}", field="X")
    scales = _static(ir.scales, "scales", runtime)
    sizes = _static(ir.sizes, "sizes", runtime)
    roi = _static(ir.roi, "roi", runtime) if ir.coord == "tf_crop_and_resize" else None
    n = len(ir.axes)
    if scales is not None:
        scales = tuple(exact(s) if not isinstance(s, Fraction) else s for s in scales)
        check_scales(scales, n)
    if sizes is not None:
        sizes = tuple(int(s) for s in sizes)
        check_sizes(sizes, n)
    if roi is not None:
        roi = tuple(exact(r) if not isinstance(r, Fraction) else r for r in roi)
        if len(roi) != 2 * n:
            raise BridgeError(f"roi has {len(roi)} values, expected {2 * n} (starts and ends of "
                              f"{n} axes)", field="roi")

    pads = tuple(int(p) for p in ir.pads)
    if pads and (len(pads) != 2 * ir.rank or any(p < 0 for p in pads)):
        raise BridgeError(f"pads {list(pads)} must be {2 * ir.rank} non-negative values", field="pads")
    if pads:
        # OpenVINO Interpolate: zero-pad every axis first, then resize the padded tensor (measured on CPU:
        # equal to np.pad(zeros) followed by the resize; non-resized axes keep their padded length).
        in_shape_p = tuple(d + pads[i] + pads[ir.rank + i] for i, d in enumerate(in_shape))
    else:
        in_shape_p = in_shape
    lens = [in_shape_p[ax] for ax in ir.axes]
    # Per axis: (out_len, scale used in the formula, length used in the formula)
    if sizes is not None:
        if ir.aspect_policy == "stretch":
            out = list(sizes)
            used = [Fraction(o, l) if l else Fraction(1) for o, l in zip(out, lens)]
        else:
            ratios = [Fraction(o, l) for o, l in zip(sizes, lens)]
            s = min(ratios) if ir.aspect_policy == "not_larger" else max(ratios)
            used = [s] * n
            out = [round_half_up(s * l) for l in lens]
        flen = [Fraction(o) if ir.aspect_policy == "stretch" or ir.formula_length == "integer" else u * l
                for o, u, l in zip(out, used, lens)]
    elif scales is not None:
        out = [output_length(l, s, ir.size_rule) for l, s in zip(lens, scales)]
        if ir.scale_source == "user":
            used = list(scales)
        else:
            used = [Fraction(o, l) if o else s for o, l, s in zip(out, lens, scales)]
        flen = [s * l if ir.formula_length == "fractional" else Fraction(o)
                for s, l, o in zip(scales, lens, out)]
    else:
        raise BridgeError("neither scales nor sizes is given", field="scales")

    out_shape = list(in_shape_p)
    axes = []
    pad_of = (lambda ax: (pads[ax], pads[ir.rank + ax])) if pads else (lambda ax: (0, 0))
    # OpenVINO's LINEAR: the CPU node (rank 5) stretches every axis by its own scale under antialias
    # ("unclamped", measured: 4->9 and 5->7, both up, differ from ONNX by 1.26 and equal this to 1e-7); the
    # core reference (rank 6+) only when some resized axis down-samples ("any_down", measured likewise).
    unclamped = ir.filter_stretch == "unclamped" or (ir.filter_stretch == "any_down" and any(u < 1 for u in used))
    for i, ax in enumerate(ir.axes):
        out_shape[ax] = out[i]
        if out[i] < 0:
            raise BridgeError(f"output length {out[i]} on axis {ax} is negative", field="sizes")
        axis_roi = (roi[i], roi[n + i]) if roi is not None else None
        copy = (ir.equal_length_identity and out[i] == lens[i]) or \
            (ir.unit_scale_identity and sizes is None and scales is not None and scales[i] == 1)
        if out[i] == 0 or lens[i] == 0 or copy:
            # equal_length_identity: OpenVINO and onnxruntime copy an axis whose lengths are equal (measured:
            # L=10, scale 1.05 -> 10, a copy; the ONNX reference would shift by 0.45) — no crop range, no
            # antialias stretch either (onnxruntime, tf_crop_and_resize + antialias, 3 -> 3: copied).
            a, b = Fraction(1), Fraction(0)
        else:
            a, b = affine(ir.coord, lens[i], out[i], used[i], flen[i], axis_roi, ir.length1)
        nearest = ir.sampler.nearest
        if nearest == "simple":
            nearest = "ceil" if used[i] < 1 else "floor"
        valid = (Fraction(0), Fraction(lens[i] - 1)) if ir.coord == "tf_crop_and_resize" and not copy else None
        pb, pe = pad_of(ax)
        symmetric = ir.coord == "half_pixel_symmetric" and not copy and flen[i] != out[i]
        bound = BoundAxis(ax, lens[i], out[i], a, b, Fraction(1) if copy else used[i], nearest, valid, pb, pe,
                          stretch_clamp=not unclamped, map_terms=Fraction(lens[i], 2) if symmetric else Fraction(0),
                          roi=axis_roi)
        if not bound.is_identity(ir.exclude_outside):
            axes.append(bound)
    for ax in range(ir.rank):
        pb, pe = pad_of(ax)
        if ax not in ir.axes and (pb or pe):
            # A padded axis that is not resized: an identity map over the padded length, kept so that
            # equivalence sees the padding.
            L = in_shape_p[ax]
            axes.append(BoundAxis(ax, L, L, Fraction(1), Fraction(0), Fraction(1), "floor", None, pb, pe))
    total = math.prod(out_shape)
    if total > MAX_ELEMENTS:
        raise BridgeError(f"output shape {tuple(out_shape)} has {total} elements, more than 2^31",
                          field="sizes" if sizes is not None else "scales")
    return BoundResize(in_shape, tuple(out_shape), tuple(axes), ir.sampler, ir.exclude_outside,
                       ir.extrapolation_value, ir.arith, pads, ir.integer_rounding, ir.coord)


def normalize_axes(axes: Sequence[int], rank: int, node: str | None = None) -> tuple[int, ...]:
    """Axes as non-negative indices; out-of-range or repeated axes are refused (every framework's rule)."""
    norm = []
    for a in axes:
        a = int(a)
        if not -rank <= a < rank:
            raise BridgeError(f"axis {a} is out of range for rank {rank}", node, "axes")
        norm.append(a % rank)
    if len(set(norm)) != len(norm):
        raise BridgeError(f"axes {list(axes)} repeat an axis", node, "axes")
    return tuple(norm)


def check_scales(scales: Sequence[Fraction], n: int) -> None:
    if len(scales) != n:
        raise BridgeError(f"scales has {len(scales)} values, expected {n}", field="scales")
    for s in scales:
        if not s > 0:
            raise BridgeError(f"scale {float(s)} is not positive", field="scales")


def check_sizes(sizes: Sequence[int], n: int) -> None:
    if len(sizes) != n:
        raise BridgeError(f"sizes has {len(sizes)} values, expected {n}", field="sizes")
    for s in sizes:
        if s < 0:
            raise BridgeError(f"size {s} is negative", field="sizes")


# ----------------------------------------------------------------------------------------------------------
# GridSample / DeformConv coordinate formulas (float, vectorised): one place, shared by the oracle and the
# future decomposition and kernels.


def unnormalize(g, length: int, align_corners: bool):
    """Grid value in [-1, 1] -> pixel coordinate (float64 numpy arithmetic, as the ONNX reference)."""
    if align_corners:
        return (g + 1) / 2.0 * (length - 1)
    return ((g + 1) * length - 1) / 2.0


def unnormalize_as(g, length: int, align_corners: bool, arith: str):
    """``unnormalize`` in a framework's arithmetic (float64 result). It decides only which element nearest
    reads at a .5 tie: ``exact``/``fp64`` evaluate the formula in float64 on the float32 grid value (the ONNX
    reference); ``fp32`` evaluates each operation in float32 (onnxruntime's GsDenormalize); ``fp32_fused``
    rounds the float64 value to float32 once (OpenVINO CPU GridSample-9, measured: grid float32(-1/3) on
    length 6 reads row 2 where the others read row 1; 20,000 random values agree with this rule)."""
    if arith == "fp32":
        f = np.float32
        g = np.asarray(g, dtype=np.float32)
        p = (g + f(1)) / f(2) * f(length - 1) if align_corners else ((g + f(1)) * f(length) - f(1)) / f(2)
        return p.astype(np.float64)
    p = unnormalize(np.asarray(g, dtype=np.float64), length, align_corners)
    if arith == "fp32_fused":
        p = p.astype(np.float32).astype(np.float64)
    return p


def grid_bounds(length: int, align_corners: bool) -> tuple[float, float]:
    """The coordinate range inside which no padding applies; reflection mirrors at these."""
    # length - 1.0, not float(length - 1): a graph decomposition evaluates this on a run-time length tensor.
    return (0.0, length - 1.0) if align_corners else (-0.5, length - 0.5)


def reflect(x, lo: float, hi: float):
    """Mirror x into [lo, hi] by repeated reflection at the borders (vectorised)."""
    x = np.asarray(x, dtype=np.float64)
    rng = hi - lo
    if rng <= 0:
        return np.full_like(x, lo)
    below = x < lo
    dx = np.where(below, lo - x, x - hi)
    flips = np.floor(dx / rng)
    r = dx - flips * rng
    even = (flips % 2) == 0
    low_side = np.where(below, even, ~even)  # where the reflected value is measured from lo
    y = np.where(low_side, lo + r, hi - r)
    return np.where((x >= lo) & (x <= hi), x, y)
