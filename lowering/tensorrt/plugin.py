"""The TensorRT plugin nodes: ``ResampleBridgeResize`` / ``ResampleBridgeGridSample`` / ``ResampleBridgeDeformConv``
in domain ``resample_bridge``, their attributes carrying the IR.

The op names, the domain and the IR fields come from the one attribute table (``semantics.schema``: the same
names and encoding as the OpenVINO extension and the shared kernels, so the plugin parses them with the same
code). Only INT, FLOAT, STRING and INTS travel (what onnx-tensorrt's fallback importer hands a creator: INT
narrowed to int32, STRING as kCHAR); an empty INTS is left out (absent = empty). TensorRT-specific here: the
op types are unique (so onnx-tensorrt's built-in checkers never see them), inputs are compacted (an empty input
in the middle would reach the plugin as a null tensor), and the fields of ``COMMON`` are added.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np

from ...semantics import schema
from ...semantics.errors import BridgeError
from ...semantics.ir import ResizeIR, RuntimeValue, has_runtime_params
from ...semantics.opspec import PerOp

PLUGIN_DOMAIN = schema.DOMAIN
PLUGIN_DOMAIN_VERSION = schema.DOMAIN_VERSION
PLUGIN_NAMESPACE = schema.DOMAIN
PLUGIN_VERSION = "1"
PLUGIN_SCHEMA_VERSION = schema.SCHEMA_VERSION
PLUGIN_OPS = dict(schema.OP_TYPES)
PLUGIN_LIBRARY = "libresample_bridge_tensorrt.so"

# The fields every plugin node carries besides the IR's: name -> (ONNX attribute type, meaning).
COMMON = {
    "plugin_namespace": ("STRING", f"'{PLUGIN_NAMESPACE}': the creator's namespace (10.15+ routes the node to the "
                                   "plugin first; older parsers find it through the fallback importer)"),
    "plugin_version": ("STRING", f"'{PLUGIN_VERSION}': the creator's version"),
    "rb_schema": ("INT", f"{PLUGIN_SCHEMA_VERSION}: this attribute schema's version"),
    "rb_origin": ("STRING", "the source op and opset (informative, not semantic)"),
    "tensorrt_plugin_shape_input_indices": ("INTS", "[1] when sizes arrive as input 1 (read by onnx-tensorrt "
                                                    "itself, routed to addPluginV3's shape inputs)"),
}
# Per plugin op (and "common"): field -> (ONNX attribute type, meaning).
PLUGIN_ATTRIBUTES = {"common": COMMON, **schema.plugin_fields()}


def _f32(v, name: str) -> float:
    f = float(np.float32(float(v)))
    if Fraction(f) != Fraction(v):
        raise BridgeError(f"{name} {v} is not a float32 value; the FLOAT attribute would round it", field=name)
    return f


def _i32(v, name: str) -> int:
    v = int(v)
    if not -2**31 <= v < 2**31:
        raise BridgeError(f"{name} {v} does not fit int32 (onnx-tensorrt narrows INT attributes)", field=name)
    return v


def plugin_attributes(ir) -> dict:
    """The plugin node's attributes for ``ir`` (``PLUGIN_ATTRIBUTES``; an empty INTS is left out), or
    BridgeError when a value cannot travel exactly: narrowed the way onnx-tensorrt narrows attributes (INT ->
    int32, FLOAT -> float32), refusing a value that would change."""
    if has_runtime_params(ir, ("scales", "roi")):
        raise BridgeError("scales/roi fed at run time: the plugin takes them as attributes only (its output "
                          "shape must come from constants or an int sizes shape input); make them initializers",
                          field="scales")
    attrs = schema.to_attributes(ir, "tensorrt")
    for k, v in attrs.items():
        if isinstance(v, int):
            attrs[k] = _i32(v, k)
        elif isinstance(v, float):
            attrs[k] = _f32(v, k)
        elif isinstance(v, list):
            attrs[k] = [_i32(i, k) for i in v]
    out = {"plugin_namespace": PLUGIN_NAMESPACE, "plugin_version": PLUGIN_VERSION,
           "rb_schema": PLUGIN_SCHEMA_VERSION, "rb_origin": ir.origin or "", **attrs}
    return {k: v for k, v in out.items() if not (isinstance(v, list) and not v)}


def plugin_inputs(ir, inputs: list) -> tuple[list, dict]:
    """(the plugin node's inputs, the attributes that go with them) from the source node's ``inputs`` (objects
    with a ``name``: onnx-graphsurgeon tensors)."""
    return PLUGIN_INPUTS.of(ir)(ir, inputs)


def _resize_inputs(ir, inputs: list) -> tuple[list, dict]:
    if isinstance(ir.sizes, RuntimeValue):
        return [inputs[0], inputs[3]], {"tensorrt_plugin_shape_input_indices": [1]}  # only Resize-11+ has sizes
    return [inputs[0]], {}


PLUGIN_INPUTS = PerOp("TensorRT plugin inputs", resize=_resize_inputs,
                      gridsample=lambda ir, inputs: (list(inputs[:2]), {}),
                      # Compacted: [X, W, offset] + [B] if has_bias + [mask] if has_mask.
                      deformconv=lambda ir, inputs: ([t for t in inputs if t.name], {}))


def _attr(attrs: dict, key: str, default=None):
    v = attrs.get(key, default)
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, (list, tuple)):
        return [x.decode() if isinstance(x, bytes) else x for x in v]
    return v


def ir_from_plugin(op_type: str, attrs: dict, input_shape=None, dtype=None, sizes_source: str | None = None):
    """The IR a plugin node carries (``attrs`` as ``onnx.helper.get_attribute_value`` gives them; the input's
    shape and dtype come from the graph)."""
    if _attr(attrs, "rb_schema") != PLUGIN_SCHEMA_VERSION:
        raise BridgeError(f"plugin node schema {_attr(attrs, 'rb_schema')!r}; this version reads "
                          f"{PLUGIN_SCHEMA_VERSION}", field="rb_schema")
    if op_type not in PLUGIN_OPS.values():
        raise BridgeError(f"{op_type} is not a resample-bridge plugin op", field="op_type")
    kind = next(k for k, name in PLUGIN_OPS.items() if name == op_type)
    # an empty INTS is left out when written (``plugin_attributes``; the plugin's own reader takes it as empty)
    text = {**{f.name: [] for f in schema.fields(kind, "tensorrt") if f.type == "INTS"},
            **{k: _attr(attrs, k) for k in attrs}}
    input_shape = tuple(input_shape) if input_shape is not None else None
    if op_type == PLUGIN_OPS["gridsample"]:
        if input_shape is None:
            raise BridgeError("the input's rank is needed to know the spatial rank", field="X")
        text["spatial_rank"] = len(input_shape) - 2
    try:
        ir = schema.from_attributes(op_type, text)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        raise BridgeError(f"plugin node attributes do not parse: {e!r}", field="attributes") from None
    extra = {}
    if isinstance(ir, ResizeIR) and isinstance(ir.sizes, RuntimeValue) and sizes_source:
        extra["sizes"] = RuntimeValue(sizes_source)
    return dataclasses.replace(ir, input_shape=input_shape, dtype=dtype, origin=_attr(attrs, "rb_origin", ""),
                               **extra)


def is_plugin_node(node) -> bool:
    return node.domain == PLUGIN_DOMAIN and node.op_type in PLUGIN_OPS.values()


__all__ = ["PLUGIN_ATTRIBUTES", "PLUGIN_OPS", "PLUGIN_DOMAIN", "PLUGIN_DOMAIN_VERSION", "PLUGIN_NAMESPACE",
           "PLUGIN_VERSION", "PLUGIN_SCHEMA_VERSION", "PLUGIN_LIBRARY", "COMMON", "plugin_attributes", "plugin_inputs",
           "ir_from_plugin", "is_plugin_node"]
