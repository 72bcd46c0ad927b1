"""The canonical semantic IR: one frozen, hashable value per op instance.

A value carries every field that decides the numbers and nothing else. Framework vocabulary (mode strings,
enums) is translated into these fields by ``translate/``; the oracle (``reference.py``) executes them; ``bind``
turns a value plus concrete shapes into per-axis exact affine coordinate maps, which is what equality is
decided on. Fields the framework feeds at run time hold a ``RuntimeValue`` until bound.

Vocabulary (all plain strings, so values print and serialise without ceremony; the tuples of allowed values
are in vocab.py):

* ``coord``: how an output index maps to a source coordinate, before the length/scale are known —
  half_pixel, half_pixel_symmetric, pytorch_half_pixel, tf_half_pixel_for_nn, align_corners, asymmetric,
  tf_crop_and_resize.
* ``size_rule``: output length from a user scale: ``floor`` (the exact floor(L*s): onnx.reference, the
  "reference" convention), ``round`` (round half to even, observed elsewhere), ``floor_eps`` (OpenVINO: float32
  L*(s+1e-6), truncated) or ``floor_fp32`` (onnxruntime: float32 L*s, truncated; the ONNX spec convention) or
  ``floor_fp64`` (PyTorch: float64 L*s, truncated).
* ``scale_source``: which scale enters the coordinate formula: ``user`` (the given scale) or ``ratio``
  (out_len / in_len).
* ``formula_length``: which output length enters align_corners / half_pixel_symmetric / tf_crop_and_resize
  and the length-1 test: ``fractional`` (L*s, what the ONNX reference and its test data use) or
  ``integer`` (the actual output length, what onnxruntime uses).
* ``length1``: pytorch_half_pixel's source coordinate when the output length is 1: ``minus_half`` (ONNX
  reference and its data) or ``zero`` (ONNX spec text, onnxruntime).
* nearest rounding: round_prefer_floor, round_prefer_ceil, floor, ceil, half_even, and ``simple``
  (floor when upsampling, ceil when downsampling; onnxruntime's Resize-10 / Upsample).
* ``arith``: how the framework computes coordinates (``exact``, ``fp64``, ``fp32``). It decides only ties;
  ``diff`` reports the tie indices instead of a tolerance: the indices whose exact coordinate is on a
  rounding boundary or within reach of one in the coarser of the two arithmetics.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Union

# The allowed strings live in vocab.py; the names below stay importable from here. NEAREST_MODES is the IR's
# rounding rules (vocab.NEAREST_RULES), not ONNX's nearest_mode attribute (vocab.ONNX_NEAREST_MODES).
from .vocab import (ARITH, ASPECT_POLICIES, COORD_MODES, DEFORM_BORDERS, FILTER_STRETCHES,  # noqa: F401
                    FORMULA_LENGTHS, GRID_PADDINGS, INTEGER_ROUNDINGS, LENGTH1_RULES, OFFSET_LAYOUTS, PADDING_ON,
                    SAMPLER_KINDS, SCALE_SOURCES, SIZE_RULES)
from .vocab import NEAREST_RULES as NEAREST_MODES  # noqa: F401


NAN = float("nan")


def same_value(a, b) -> bool:
    """``a == b``, with NaN equal to NaN (a float field such as extrapolation_value may hold NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


@dataclass(frozen=True)
class RuntimeValue:
    """A parameter fed at run time (a graph input or a computed tensor). Bound by ``bind``. ``same_as_input``:
    the positions whose value is, by the graph's own arithmetic, the input's run-time length on the axis at that
    position (``F.interpolate`` writes Concat(Shape(x)[:2], ...)); a fact about where the value comes from,
    not a field of the semantics (it takes no part in comparisons)."""

    source: str
    same_as_input: tuple = field(default=(), compare=False)

    def __str__(self) -> str:
        return f"<runtime {self.source}>"


def pinned_positions(value) -> frozenset:
    """The positions of a run-time scales / sizes value that the graph pins to the input's own length
    (``RuntimeValue.same_as_input``); none for a static value or none at all."""
    return frozenset(value.same_as_input) if isinstance(value, RuntimeValue) else frozenset()


Static = Union[tuple, None]


@dataclass(frozen=True)
class Sampler:
    """How values are read at a source coordinate."""

    kind: str  # nearest | linear | cubic
    nearest: str | None = None  # rounding rule, nearest only
    cubic_a: Fraction | None = None  # Keys coefficient, cubic only
    antialias: bool = False  # stretch the filter by max(1, 1/scale) when downscaling (linear/cubic)

    def __str__(self) -> str:
        if self.kind == "nearest":
            return f"nearest({self.nearest})"
        s = self.kind if self.kind == "linear" else f"cubic(a={self.cubic_a})"
        return s + (", antialias" if self.antialias else "")


@dataclass(frozen=True)
class ResizeIR:
    """ONNX Resize / Upsample, OpenVINO Interpolate, TensorRT IResizeLayer: one separable resample."""

    rank: int
    axes: tuple[int, ...]  # resized axes, non-negative, in the order the op lists them
    scales: tuple[Fraction, ...] | RuntimeValue | None  # per axis in ``axes``; exact value of the float
    sizes: tuple[int, ...] | RuntimeValue | None
    roi: tuple[Fraction, ...] | RuntimeValue | None  # starts then ends, per axis in ``axes``
    coord: str
    sampler: Sampler
    exclude_outside: bool = False  # zero taps outside the input and renormalise, instead of edge-clamping
    extrapolation_value: float = 0.0  # tf_crop_and_resize only
    aspect_policy: str = "stretch"
    size_rule: str = "floor"
    scale_source: str = "user"
    formula_length: str = "fractional"
    length1: str = "minus_half"
    arith: str = "exact"
    input_shape: tuple[int | None, ...] | None = None
    dtype: str | None = None
    # Where the value came from (op and opset); never part of equality.
    origin: str = field(default="", compare=False)
    # The axes a run-time sizes input lists, where the graph's own arithmetic computes it as ``scales`` times
    # the input's own lengths for every length (translate/onnx_ops.py): read as these static scales, never at
    # run time (a node fed that tensor is fed the lengths the scales give). Where the value came from, like
    # ``origin``; never part of equality.
    scales_from_sizes: tuple[int, ...] = field(default=(), compare=False)
    # The axes the node listed as negative numbers (``axes`` holds them normalised): a fact about the spelling,
    # never part of equality, which onnxruntime's keep-aspect policies read (they leave those axes out:
    # translate/onnxruntime.py).
    given_negative: tuple[int, ...] = field(default=(), compare=False)
    # OpenVINO Interpolate: zeros added before resizing, begins then ends for every input axis (2*rank
    # values; () = none). Lengths, scales and coordinates refer to the padded input.
    pads: tuple[int, ...] = ()
    # OpenVINO (and onnxruntime): an axis whose output length equals its (padded) input length is copied,
    # whatever the scale says.
    equal_length_identity: bool = False
    # onnxruntime (and the spec convention): an axis whose run-time scale is exactly 1 is copied, where the
    # coordinate map would move it (tf_half_pixel_for_nn: src = dst + 1/2). Set only for scales fed at run time;
    # static ones leave such an axis out of ``axes``.
    unit_scale_identity: bool = False
    filter_stretch: str = "clamped"  # see FILTER_STRETCHES
    # How an integer linear / cubic output is rounded (INTEGER_ROUNDINGS): once, the exact sum (the spec's
    # saturate cast), or onnxruntime's and PyTorch's 8-bit antialias fixed point, per axis (semantics/fixed_point).
    integer_rounding: str = "once"

    kind = "resize"

    def pinned_axes(self, value=None) -> tuple:
        """The resized axes whose run-time ``value`` (default: the sizes) the graph pins to X's own length
        there, in the order the op lists them (``pinned_positions``)."""
        pinned = pinned_positions(self.sizes if value is None else value)
        return tuple(a for i, a in enumerate(self.axes) if i in pinned)

    def __post_init__(self):
        # A NaN extrapolation_value is a valid value (the spec takes any float): one NaN object, so that the
        # field-tuple hash and equality treat every NaN alike (NaN != NaN as floats).
        if isinstance(self.extrapolation_value, float) and math.isnan(self.extrapolation_value):
            object.__setattr__(self, "extrapolation_value", NAN)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(same_value(getattr(self, f.name), getattr(other, f.name))
                   for f in dataclasses.fields(self) if f.compare)


def keep_axes(ir: ResizeIR, keep) -> ResizeIR:
    """``ir`` resizing only the axes at positions ``keep`` of ``ir.axes`` (their scales, sizes and crop box entries
    kept; a value known only at run time as it is): the axes it leaves out are copied."""
    n = len(ir.axes)

    def pick(t):
        return tuple(t[i] for i in keep) if isinstance(t, tuple) else t

    roi = pick(ir.roi[:n]) + pick(ir.roi[n:]) if isinstance(ir.roi, tuple) else ir.roi
    return dataclasses.replace(ir, axes=pick(ir.axes), scales=pick(ir.scales), sizes=pick(ir.sizes), roi=roi)


@dataclass(frozen=True)
class GridSampleIR:
    """ONNX GridSample (N-D), OpenVINO GridSample-9, TensorRT IGridSampleLayer."""

    spatial_rank: int
    sampler: Sampler
    padding: str  # zeros | border | reflection
    align_corners: bool
    padding_on: str = "coordinate_and_taps"
    arith: str = "fp32"  # unnormalised coordinates are rounded to float32 before sampling
    input_shape: tuple[int | None, ...] | None = None
    grid_shape: tuple[int | None, ...] | None = None
    dtype: str | None = None
    origin: str = field(default="", compare=False)

    kind = "gridsample"


@dataclass(frozen=True)
class DeformConvIR:
    """ONNX DeformConv, OpenVINO DeformableConvolution: a convolution whose taps are sampled bilinearly at
    ``o*stride - pad_begin + k*dilation + offset`` with zero outside the input (on each tap)."""

    spatial_rank: int
    kernel_shape: tuple[int, ...] | None  # None: taken from W at run time
    strides: tuple[int, ...]
    pads: tuple[int, ...]  # begins then ends
    dilations: tuple[int, ...]
    group: int
    offset_group: int
    has_bias: bool
    has_mask: bool
    sampler: Sampler = Sampler("linear")
    border: str = "zero_taps"  # see DEFORM_BORDERS
    offset_layout: str = "group,kernel...,(d...)"  # ONNX: [N, offset_group*prod(K)*D, out...], D fastest
    input_shape: tuple[int | None, ...] | None = None
    weight_shape: tuple[int | None, ...] | None = None
    dtype: str | None = None
    origin: str = field(default="", compare=False)

    kind = "deformconv"


IR = Union[ResizeIR, GridSampleIR, DeformConvIR]

RUNTIME_FIELDS = ("scales", "sizes", "roi")  # the ResizeIR fields that may hold a RuntimeValue


def has_runtime_params(ir, fields: tuple[str, ...] = RUNTIME_FIELDS) -> bool:
    """Whether any of ``fields`` (default: scales, sizes, roi) is fed at run time; False for IR kinds without
    them."""
    return any(isinstance(getattr(ir, k, None), RuntimeValue) for k in fields)


def is_static(shape) -> bool:
    """A known shape whose every dimension is known (None is an unknown shape or dimension)."""
    return shape is not None and all(d is not None for d in shape)


# ----------------------------------------------------------------------------------------------------------
# Serialisation


def _jsonable(v: Any) -> Any:
    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, RuntimeValue):
        return {"runtime": v.source}
    if dataclasses.is_dataclass(v):
        return {f.name: _jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, (tuple, list)):
        return [_jsonable(x) for x in v]
    return v


def to_dict(ir: IR) -> dict:
    """JSON-ready dict: Fractions as "p/q" strings, runtime values as {"runtime": name}."""
    d = _jsonable(ir)
    d["kind"] = ir.kind
    return d


def to_json(ir: IR) -> str:
    return json.dumps(to_dict(ir), sort_keys=True)


def axis_name(axis: int, rank: int) -> str:
    """NCHW-style names for the common ranks, ``axis k`` otherwise."""
    names = {3: "NCW", 4: "NCHW", 5: "NCDHW"}.get(rank)
    return names[axis] if names else f"axis{axis}"
