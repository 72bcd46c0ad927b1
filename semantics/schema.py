"""The resample-bridge custom ops: their names, their domain and ONE table of their attributes.

An IR value travels as op attributes in three carriers, all derived from ``FIELDS``:

* ``onnx``: custom-domain ONNX nodes (domain ``resample_bridge``, op types ``ONNX_OP_TYPES``), which the
  OpenVINO extension's ONNX-frontend mapping reads;
* ``openvino``: the extension's ops (``OP_TYPES``), booleans as bool, DeformConv's optional inputs as
  has_bias / has_mask;
* ``tensorrt``: the TensorRT plugin nodes (``OP_TYPES``; ``plugin_fields()``), whose TensorRT-only fields
  (namespace, version, rb_schema, origin) the TensorRT lowering adds.

``to_attributes`` writes a carrier's attributes, ``from_attributes`` reads any of them back. The C++ side is
lowering/kernels/rb/attrs.hpp ``visit()`` (same names, types, order and defaults; the kernel tests compare
the two through the C ABI). Encoding: exact rationals as text ("3/2"), lists of them space-separated; booleans as 0/1
ints (bool on OpenVINO); scales / sizes / roi hold "" (absent), "input" (fed at run time: the node's input 1
roi, 2 scales, 3 sizes) or the values.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from . import vocab
from .errors import BridgeError
from .ir import RuntimeValue, Sampler
from .opspec import SPECS, PerOp

DOMAIN = "resample_bridge"  # the ONNX domain, the OpenVINO ops' version string, the TensorRT plugin namespace
SCHEMA_VERSION = 1  # this table's version: the domain's opset version, the plugins' rb_schema
DOMAIN_VERSION = SCHEMA_VERSION
KINDS = tuple(SPECS)  # IR kinds, in the C ABI's op order
ONNX_OP_TYPES = {k: s.domain_op for k, s in SPECS.items()}
# The OpenVINO extension's op types and the TensorRT plugins' names: one spelling, unique across domains.
OP_TYPES = {k: s.custom_op for k, s in SPECS.items()}
TARGETS = ("onnx", "openvino", "tensorrt")
ATTRIBUTE_TYPES = ("INT", "FLOAT", "STRING", "INTS")  # in the order of the C ABI's type codes (rb_attribute)


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()


@dataclass(frozen=True)
class Field:
    """One op attribute: ``name`` (the IR field's own name), ``type`` (ATTRIBUTE_TYPES), ``path`` (the IR field it
    spells; ``sampler.x`` is a Sampler field), ``default`` (the attribute value read when it is absent, REQUIRED
    when it must be there; also written for an unset sampler part), ``meaning``; ``choices`` (the allowed
    strings), ``codec`` (how the value is spelled when the type alone does not say: bool, rational,
    runtime_rationals, runtime_ints, optional_ints), ``targets`` (the carriers that hold it)."""

    name: str
    type: str
    path: str
    default: Any
    meaning: str
    choices: tuple[str, ...] | None = None
    codec: str | None = None
    targets: tuple[str, ...] = TARGETS

    def describe(self) -> str:
        """The meaning with the allowed values."""
        choices = ("0", "1") if self.codec == "bool" else self.choices
        return self.meaning + (f" ({' | '.join(choices)})" if choices else "")


def _f(name, type_, default, meaning, choices=None, codec=None, path=None, targets=TARGETS):
    return Field(name, type_, path or name, default, meaning, choices, codec, targets)


def _sampler_fields(nearest_default: str | None, antialias: bool) -> list[Field]:
    out = [_f("sampler", "STRING", "linear", "how values are read", vocab.SAMPLER_KINDS, path="sampler.kind")]
    if nearest_default:
        out.append(_f("nearest", "STRING", nearest_default, "rounding rule; read for nearest only",
                      vocab.NEAREST_RULES, path="sampler.nearest"))
    out.append(_f("cubic_a", "STRING", "-3/4", "Keys coefficient, exact rational; read for cubic only",
                  codec="rational", path="sampler.cubic_a"))
    if antialias:
        out.append(_f("antialias", "INT", 0, "stretch the filter when down-sampling", codec="bool",
                      path="sampler.antialias"))
    return out


R = REQUIRED
FIELDS: dict[str, tuple[Field, ...]] = PerOp(
    "schema fields",
    resize=(
        _f("rank", "INT", R, "input rank"),
        _f("axes", "INTS", R, "resized axes, non-negative, in the source's order"),
        _f("scales", "STRING", R, "per axis in `axes`, exact rationals; '' when sizes are given; "
           "'input': fed at run time",
           codec="runtime_rationals"),
        _f("sizes", "STRING", "", "per axis in `axes`; '' when scales are given; 'input': fed at run time",
           codec="runtime_ints"),
        _f("roi", "STRING", "", "tf_crop_and_resize: starts then ends per axis in `axes`, exact rationals; "
           "'input': fed at run time", codec="runtime_rationals"),
        _f("coord", "STRING", R, "output index -> source coordinate", vocab.COORD_MODES),
        *_sampler_fields("round_prefer_floor", antialias=True),
        _f("exclude_outside", "INT", R, "zero taps outside the input and renormalise", codec="bool"),
        _f("extrapolation_value", "FLOAT", R, "tf_crop_and_resize: the value outside the roi"),
        _f("aspect_policy", "STRING", R, "sizes with a kept aspect ratio", vocab.ASPECT_POLICIES),
        _f("size_rule", "STRING", R, "output length from a scale", vocab.SIZE_RULES),
        _f("scale_source", "STRING", R, "the scale in the coordinate formula", vocab.SCALE_SOURCES),
        _f("formula_length", "STRING", R, "output length in the coordinate formula", vocab.FORMULA_LENGTHS),
        _f("length1", "STRING", R, "pytorch_half_pixel at output length 1", vocab.LENGTH1_RULES),
        _f("arith", "STRING", R, "how ties resolve", vocab.ARITH),
        _f("pads", "INTS", (), "zeros added first, begins then ends per axis; empty: none"),
        _f("equal_length_identity", "INT", R, "an axis whose length does not change is copied", codec="bool"),
        _f("unit_scale_identity", "INT", R, "an axis whose run-time scale is exactly 1 is copied", codec="bool"),
        _f("filter_stretch", "STRING", R, "antialias filter stretch per axis", vocab.FILTER_STRETCHES),
        # Not TensorRT's: its plugin's CUDA kernels round once; a node that needs the fixed point is refused there.
        _f("integer_rounding", "STRING", "once", "how an integer linear / cubic output is rounded",
           vocab.INTEGER_ROUNDINGS, targets=("onnx", "openvino")),
    ),
    gridsample=(
        # TensorRT plugins read the spatial rank from the input's rank.
        _f("spatial_rank", "INT", R, "number of spatial axes", targets=("onnx", "openvino")),
        *_sampler_fields("half_even", antialias=False),
        _f("padding", "STRING", R, "value outside the input", vocab.GRID_PADDINGS),
        _f("align_corners", "INT", R, "-1 and 1 are the corner pixels' centres", codec="bool"),
        _f("padding_on", "STRING", R, "where padding applies", vocab.PADDING_ON),
        _f("arith", "STRING", R, "unnormalised coordinates' arithmetic", vocab.ARITH),
    ),
    deformconv=(
        _f("kernel_shape", "INTS", (), "kernel spatial shape; empty: from W", codec="optional_ints"),
        _f("strides", "INTS", R, "per spatial axis"),
        _f("pads", "INTS", R, "begins then ends"),
        _f("dilations", "INTS", R, "per spatial axis"),
        _f("group", "INT", R, "convolution groups"),
        _f("offset_group", "INT", R, "offset groups"),
        *_sampler_fields(None, antialias=False),
        _f("border", "STRING", R, "taps outside the input", vocab.DEFORM_BORDERS),
        _f("offset_layout", "STRING", R, "offset tensor layout", vocab.OFFSET_LAYOUTS),
        # The ONNX node's input list says which optional inputs follow (B at 3, mask at 4).
        _f("has_bias", "INT", 0, "input B follows offset", codec="bool", targets=("openvino", "tensorrt")),
        _f("has_mask", "INT", 0, "input mask follows (B or) offset", codec="bool", targets=("openvino", "tensorrt")),
    ),
)
del R
# IR fields no attribute carries, read from those that do.
def _resize_derived(kw: dict) -> dict:
    """A Resize of no resized axis (every scale 1: the IR copies it) writes its empty scales as '', as it writes
    absent ones; every Resize has scales or sizes, so both absent read as those empty scales."""
    return {"scales": ()} if kw["scales"] is None and kw["sizes"] is None and not kw["axes"] else {}


_DERIVED = PerOp("schema's derived fields", resize=_resize_derived, gridsample=None,
                 deformconv=lambda kw: {"spatial_rank": len(kw["strides"])})
_KIND_OF_OP = {**{v: k for k, v in ONNX_OP_TYPES.items()}, **{v: k for k, v in OP_TYPES.items()}}


def fields(kind: str, target: str = "onnx") -> tuple[Field, ...]:
    """The attributes ``target`` carries for an IR kind, in the table's (and attrs.hpp's) order."""
    if target not in TARGETS:
        raise BridgeError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    return tuple(f for f in FIELDS[kind] if target in f.targets)


def plugin_fields() -> dict[str, dict[str, tuple[str, str]]]:
    """Per TensorRT plugin name: field -> (attribute type, meaning), the TensorRT-only common fields excepted."""
    return {OP_TYPES[k]: {f.name: (f.type, f.describe()) for f in fields(k, "tensorrt")} for k in KINDS}


# ----------------------------------------------------------------------------------------------------------
# Writing


def _runtime_text(value, text) -> str:
    if value is None:
        return ""
    if isinstance(value, RuntimeValue):
        return "input"
    return text(value)


def _encode(f: Field, v, target: str):
    if (v is None or v == "") and f.default is not REQUIRED and f.codec in (None, "rational"):
        return f.default  # an unset sampler part
    if f.codec == "bool":
        return bool(v) if target == "openvino" else int(bool(v))
    if f.codec == "rational":
        return str(v)
    if f.codec == "runtime_rationals":
        return _runtime_text(v, lambda vs: " ".join(str(Fraction(x)) for x in vs))
    if f.codec == "runtime_ints":
        return _runtime_text(v, lambda vs: " ".join(str(int(x)) for x in vs))
    if f.type == "INTS":
        return [int(x) for x in (v or ())]
    return {"INT": int, "FLOAT": float}.get(f.type, lambda x: x)(v)


def _value(ir, path: str):
    head, _, part = path.partition(".")
    v = getattr(ir, head)
    return getattr(v, part) if part else v


def to_attributes(ir, target: str = "onnx") -> dict:
    """The IR's fields as ``target``'s op attributes (``TARGETS``), in the table's order. "onnx" is what
    ``onnx.helper.make_node`` takes; "openvino" what ``NodeFactory.create`` takes; "tensorrt" the plugin fields
    before TensorRT's own narrowing (int32, float32) and common fields."""
    kind = getattr(ir, "kind", None)
    if kind not in SPECS or not isinstance(ir, SPECS[kind].ir):
        raise BridgeError(f"not an IR value: {type(ir).__name__}")
    return {f.name: _encode(f, _value(ir, f.path), target) for f in fields(kind, target)}


# ----------------------------------------------------------------------------------------------------------
# Reading


def _runtime_values(name: str, text: str, cast):
    if text == "":
        return None
    if text == "input":
        return RuntimeValue(name)
    return tuple(cast(w) for w in text.split())


def _decode(f: Field, v):
    if f.codec == "bool":
        return bool(v)
    if f.codec == "rational":
        return Fraction(v)
    if f.codec == "runtime_rationals":
        return _runtime_values(f.name, v, Fraction)
    if f.codec == "runtime_ints":
        return _runtime_values(f.name, v, int)
    if f.type == "INTS":
        out = tuple(int(x) for x in v)
        return (out or None) if f.codec == "optional_ints" else out
    return {"INT": int, "FLOAT": float}.get(f.type, lambda x: x)(v)


def from_attributes(op_type: str, attrs: dict):
    """The IR value an op's attributes spell (the inverse of ``to_attributes`` for every target). ``op_type``:
    the ONNX op type or ``OP_TYPES``' name; ``attrs`` as ``Node.get_attributes()`` or the ONNX attributes (extra
    keys are ignored; a missing REQUIRED one raises KeyError). Shapes and dtypes are not attributes, so they are
    None; run-time fields come back as RuntimeValue(<field name>)."""
    kind = _KIND_OF_OP.get(op_type)
    if kind is None:
        raise BridgeError(f"{op_type!r} is not a resample-bridge op")
    kw, raw_sampler = {}, {}
    for f in FIELDS[kind]:
        raw = attrs[f.name] if f.default is REQUIRED else attrs.get(f.name, f.default)
        if f.path.startswith("sampler."):
            raw_sampler[f.path[len("sampler."):]] = (f, raw)
        else:
            kw[f.path] = _decode(f, raw)
    # Only the parts the sampler kind reads are decoded: a Sampler holds only those.
    reads = {"kind", "antialias", {"nearest": "nearest", "cubic": "cubic_a"}.get(raw_sampler["kind"][1])}
    part = {k: _decode(f, raw) for k, (f, raw) in raw_sampler.items() if k in reads}
    kw["sampler"] = Sampler(part["kind"], nearest=part.get("nearest"), cubic_a=part.get("cubic_a"),
                            antialias=part.get("antialias", False))
    derived = _DERIVED[kind]
    return SPECS[kind].ir(**{**kw, **(derived(kw) if derived else {})}, origin=f"{DOMAIN}::{ONNX_OP_TYPES[kind]}")


__all__ = ["DOMAIN", "DOMAIN_VERSION", "SCHEMA_VERSION", "KINDS", "ONNX_OP_TYPES", "OP_TYPES", "TARGETS",
           "ATTRIBUTE_TYPES", "REQUIRED", "Field", "FIELDS", "fields", "plugin_fields", "to_attributes",
           "from_attributes"]
