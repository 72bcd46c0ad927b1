"""Do two IR values compute the same numbers? ``diff`` answers with named fields, never a tolerance.

Resize values are bound to the given shape and compared through their exact tap tables, so two spellings
of one computation (pytorch_half_pixel vs half_pixel when the output length is above 1, sizes vs the scale
that yields them) compare equal, and any difference that changes a number is reported with the fields
that cause it. Where only the coordinate arithmetic differs (exact / fp64 / fp32), the result lists the
output indices that sit exactly on a rounding boundary: only those can differ.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .coords import BoundAxis, bind_resize
from .errors import BridgeError
from .ir import GridSampleIR, ResizeIR, RuntimeValue, axis_name, same_value
from .opspec import PerOp
from .taps import axis_taps, coarser, tie_indices

_NOT_SEMANTIC = {"origin", "scales_from_sizes", "input_shape", "grid_shape", "weight_shape", "dtype"}


def sizes_as_source_scales(other, src):
    """``other`` (an importer's reading of the same node) in the source's static-scale form, where the source
    reads the node's run-time sizes as k x the input's own lengths (``ResizeIR.scales_from_sizes``) and
    ``other`` reads that tensor at run time: with k integer, every size rule gives k x in, the scale out/in is k
    and no resized axis has equal lengths, so the fields in which the sizes and the scales forms differ cannot
    change a number. ``other`` unchanged otherwise."""
    if not getattr(src, "scales_from_sizes", ()) or not isinstance(getattr(other, "sizes", None), RuntimeValue) \
            or other.scales is not None:
        return other
    return dataclasses.replace(other, **{f: getattr(src, f) for f in (
        "axes", "scales", "sizes", "roi", "size_rule", "scale_source", "equal_length_identity")})


@dataclass(frozen=True)
class FieldDiff:
    name: str
    a: Any
    b: Any

    def __str__(self) -> str:
        return f"{self.name}: {_fmt(self.a)} vs {_fmt(self.b)}"


@dataclass
class Diff:
    fields: list[FieldDiff] = field(default_factory=list)  # differences that change numbers
    ties: dict[str, list[int]] = field(default_factory=dict)  # axis -> output indices on a tie
    immaterial: list[FieldDiff] = field(default_factory=list)  # spelled differently, same numbers

    @property
    def same(self) -> bool:
        return not self.fields

    def __str__(self) -> str:
        if self.same and not self.ties:
            return "same numbers" + (f" (differently spelled: {'; '.join(map(str, self.immaterial))})"
                                     if self.immaterial else "")
        lines = [str(f) for f in self.fields]
        for ax, idx in self.ties.items():
            lines.append(f"{ax}: floating-point ties at output indices {idx}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"same": self.same, "fields": [{"name": f.name, "a": _fmt(f.a), "b": _fmt(f.b)}
                                              for f in self.fields],
                "ties": self.ties, "immaterial": [str(f) for f in self.immaterial]}


def off_ties(d: Diff, rank: int, out_shape) -> "np.ndarray":
    """A boolean mask of ``out_shape``: False at the output indices ``d`` reports as floating-point ties (on
    any axis), where two arithmetics may read other elements; True elsewhere."""
    import numpy as np

    mask = np.ones(out_shape, dtype=bool)
    names = {axis_name(a, rank): a for a in range(rank)}
    for name, idx in d.ties.items():
        if name in names and idx:
            sl = [slice(None)] * rank
            sl[names[name]] = idx
            mask[tuple(sl)] = False
    return mask


def _fmt(v) -> str:
    return str(v)


def field_differences(a, b, prefix: str = "") -> list[FieldDiff]:
    """Named fields whose values differ (nested dataclasses flattened as ``sampler.nearest``)."""
    out = []
    for f in dataclasses.fields(a):
        if f.name in _NOT_SEMANTIC or not f.compare:  # compare=False: a fact about the value, not semantics
            continue
        va, vb = getattr(a, f.name), getattr(b, f.name, None)
        if dataclasses.is_dataclass(va) and dataclasses.is_dataclass(vb):
            out += field_differences(va, vb, prefix + f.name + ".")
        elif not same_value(va, vb):
            out.append(FieldDiff(prefix + f.name, va, vb))
    return out


def number_text(q: Fraction) -> str:
    """Exact when short (``7/6``); a scale that came from a float32 such as 0.63 has a huge denominator,
    so it prints as ``~1.637931`` (the JSON form always carries the exact value)."""
    return str(q) if q.denominator <= 10**4 else f"~{float(q):.7g}"


def affine_text(ax: BoundAxis) -> str:
    """``src = 1/2*dst - 1/4`` style."""
    a, b = ax.a, ax.b
    if a == 0:
        return f"src = {number_text(b)}"
    s = "dst" if a == 1 else f"{number_text(a)}*dst"
    if b > 0:
        s += f" + {number_text(b)}"
    elif b < 0:
        s += f" - {number_text(-b)}"
    return "src = " + s


def _shape_of(ir, shape):
    shape = shape if shape is not None else ir.input_shape
    if shape is None or any(d is None for d in shape):
        raise BridgeError("diff needs a concrete input shape", field="shapes")
    return tuple(shape)


def diff(a, b, shapes=None, runtime: dict | None = None) -> Diff:
    """Differences between IR values ``a`` and ``b`` for the given input shape (default: their own)."""
    if type(a) is not type(b):
        return Diff([FieldDiff("kind", a.kind, b.kind)])
    return DIFF.of(a)(a, b, shapes, runtime)


def _diff_fields(a, b, material) -> Diff:
    """The named field differences, each material or not (``material(a, f)``: whether it can change a number)."""
    d = Diff()
    for f in field_differences(a, b):
        (d.fields if material(a, f) else d.immaterial).append(f)
    return d


def _diff_gridsample(a: GridSampleIR, b: GridSampleIR, shapes, runtime) -> Diff:
    d = _diff_fields(a, b, _material_gridsample)
    if a.sampler.kind == "nearest" and a.arith != b.arith:
        d.ties["grid"] = []  # data-dependent: any grid value whose unnormalised coordinate is a .5 tie
    return d


def _diff_deformconv(a, b, shapes, runtime) -> Diff:
    return _diff_fields(a, b, lambda a, f: True)


def _material_gridsample(a: GridSampleIR, f: FieldDiff) -> bool:
    """Whether a GridSample field difference can change a number."""
    kind = a.sampler.kind
    if f.name == "padding_on":
        # Coordinate vs tap padding differ only for cubic under border/reflection.
        return kind == "cubic" and a.padding != "zeros"
    if f.name == "arith":
        return False  # ties only
    if f.name == "sampler.nearest":
        return kind == "nearest"
    if f.name == "sampler.cubic_a":
        return kind == "cubic"
    return True


def _material_axes(a: ResizeIR, ba, bb) -> list[tuple[str, str, str]]:
    """(axis name, map a, map b) for every axis whose exact tap tables differ."""
    axes_a = {x.axis: x for x in ba.axes}
    axes_b = {x.axis: x for x in bb.axes}
    out = []
    for ax in sorted(set(axes_a) | set(axes_b)):
        xa, xb = axes_a.get(ax), axes_b.get(ax)
        if not _same_taps(xa or _identity(xb), ba, xb or _identity(xa), bb):
            out.append((axis_name(ax, a.rank), affine_text(xa) if xa else "identity",
                        affine_text(xb) if xb else "identity"))
    return out


# Fields listed per resized axis: a spelling over other axes changes them together (all four axes with N and
# C at scale 1 is the same op as H and W alone), so one is never taken without the others.
_PER_AXIS = ("axes", "scales", "sizes", "roi")


def _with_field(ir: ResizeIR, other: ResizeIR, name: str) -> ResizeIR:
    """``ir`` with the one (possibly nested, ``sampler.nearest``) field ``name`` taken from ``other``; a
    per-axis field comes with the other per-axis fields."""
    if name in _PER_AXIS:
        return dataclasses.replace(ir, **{f: getattr(other, f) for f in _PER_AXIS})
    head, _, tail = name.partition(".")
    if tail:
        inner = dataclasses.replace(getattr(ir, head), **{tail: getattr(getattr(other, head), tail)})
        return dataclasses.replace(ir, **{head: inner})
    return dataclasses.replace(ir, **{head: getattr(other, head)})


def _changes_numbers(a: ResizeIR, ba, b: ResizeIR, name: str, shape, runtime) -> bool:
    """Whether taking field ``name`` alone from ``b`` changes what ``a`` computes on ``shape``."""
    try:
        # A sampler field taken alone can leave a sampler with no value for its kind (cubic with no cubic_a,
        # nearest with no rounding): binding passes it, reading its taps fails.
        one = bind_resize(_with_field(a, b, name), shape, runtime)
        return one.out_shape != ba.out_shape or bool(_material_axes(a, ba, one))
    except (BridgeError, TypeError, ValueError):
        return True  # not even valid alone: it certainly matters


def _diff_resize(a: ResizeIR, b: ResizeIR, shapes, runtime) -> Diff:
    shape = _shape_of(a, shapes)
    ba, bb = bind_resize(a, shape, runtime), bind_resize(b, shape, runtime)
    named = [f for f in field_differences(a, b) if f.name != "arith"]
    d = Diff()
    axes = [] if ba.out_shape != bb.out_shape else _material_axes(a, ba, bb)
    if ba.out_shape != bb.out_shape:
        d.fields.append(FieldDiff("output shape", ba.out_shape, bb.out_shape))
    for name, fa, fb in axes:
        if fa != fb:
            d.fields.append(FieldDiff(f"{name} coordinate map", fa, fb))
    if d.fields or axes:
        # Name the fields that explain it: those that change the numbers on their own; if none does alone
        # (they only matter together), all of them.
        alone = [f for f in named if _changes_numbers(a, ba, b, f.name, shape, runtime)]
        d.fields += alone or named
        d.immaterial = [f for f in named if f not in alone] if alone else []
        if not d.fields:
            d.fields.append(FieldDiff("taps on " + ", ".join(n for n, _, _ in axes), "differ", "differ"))
    else:
        d.immaterial = named
    # The same taps rounded otherwise: integer outputs differ wherever a value is resampled (the field is set
    # for 8-bit antialias only, ``fixed_point_resize``).
    rounding = [f for f in d.immaterial if f.name == "integer_rounding"]
    if rounding and (ba.axes or bb.axes):
        d.immaterial.remove(rounding[0])
        d.fields.append(rounding[0])
    if a.arith != b.arith:
        # Ties of either side's coordinate maps, within the reach of the coarser arithmetic.
        arith = coarser(a.arith, b.arith)
        for bound in (ba, bb):
            for x in bound.axes:
                t = tie_indices(x, bound.sampler, arith, exclude_outside=bound.exclude_outside)
                if t:
                    name = axis_name(x.axis, a.rank)
                    d.ties[name] = sorted(set(d.ties.get(name, [])) | set(t))
    return d


DIFF = PerOp("diff", resize=_diff_resize, gridsample=_diff_gridsample, deformconv=_diff_deformconv)


def _identity(like: BoundAxis) -> BoundAxis:
    """The axis an op leaves alone, in the form of ``like``'s axis (to compare tap tables)."""
    L = like.in_len - like.pad_begin - like.pad_end
    return BoundAxis(like.axis, L, L, Fraction(1), Fraction(0), Fraction(1), "floor", None)


def _same_taps(xa: BoundAxis, ba, xb: BoundAxis, bb) -> bool:
    """Exact equality of the two axes' tap tables (same inputs, same weights, same extrapolation)."""
    if xa.out_len != xb.out_len or \
            xa.in_len - xa.pad_begin - xa.pad_end != xb.in_len - xb.pad_begin - xb.pad_end:
        return False
    ta = axis_taps(xa, ba.sampler, ba.exclude_outside, exact=True)
    tb = axis_taps(xb, bb.sampler, bb.exclude_outside, exact=True)
    if ta.extrapolate is not None or tb.extrapolate is not None:
        ea = ta.extrapolate if ta.extrapolate is not None else [False] * xa.out_len
        eb = tb.extrapolate if tb.extrapolate is not None else [False] * xb.out_len
        if list(ea) != list(eb):
            return False
        if any(ea) and ba.extrapolation_value != bb.extrapolation_value:
            return False
    for o in range(xa.out_len):
        if ta.extrapolate is not None and ta.extrapolate[o]:
            continue
        if _taps_as_map(ta, o, xa) != _taps_as_map(tb, o, xb):
            return False
    return True


same_taps = _same_taps  # public: lowerings prove per-axis passes with it


def _taps_as_map(t, o, axis: BoundAxis | None = None) -> dict:
    """index -> total weight, dropping zero weights: equal maps read the same values the same way.
    Indices are of the unpadded input: taps that land in an axis's zero padding read 0 and are dropped."""
    pb = axis.pad_begin if axis is not None else 0
    L = axis.in_len - axis.pad_begin - axis.pad_end if axis is not None else None
    m: dict[int, Any] = {}
    for j, w in zip(t.index[o].tolist(), t.weight[o]):
        j -= pb
        if L is not None and not 0 <= j < L:
            continue
        m[j] = m.get(j, 0) + w
    return {j: w for j, w in m.items() if w != 0}
