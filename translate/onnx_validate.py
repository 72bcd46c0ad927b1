"""What onnx.checker and onnxruntime refuse in a resampling node, refused here first, in one line naming the
node and the field: unknown attributes, attributes of a later opset, attribute types, input and output
counts, input element types, and deprecated ops (Upsample from opset 10 on).

The rules are read from ONNX's own operator schemas (``onnx.defs``), so they follow the installed onnx
package instead of a copy of the spec.
"""

from __future__ import annotations

from ..semantics.errors import BridgeError

# onnx.defs AttrType names -> what the attribute's proto carries.
_ATTR_TYPES = {"FLOAT": "a float", "INT": "an int", "STRING": "a string", "FLOATS": "a list of floats",
               "INTS": "a list of ints", "STRINGS": "a list of strings", "TENSOR": "a tensor", "GRAPH": "a graph"}


def _schema(op_type: str, opset: int, node_name: str):
    import onnx.defs

    try:
        schema = onnx.defs.get_schema(op_type, opset, "")
    except Exception:
        raise BridgeError(f"{op_type} does not exist in opset {opset}", node_name, "opset") from None
    if schema.deprecated:
        raise BridgeError(f"{op_type} is deprecated in opset {opset} (since version {schema.since_version}); "
                          f"use Resize", node_name, "op_type")
    return schema


def _attr_type(attr) -> str:
    import onnx

    return onnx.AttributeProto.AttributeType.Name(attr.type)


def validate_node(node, opset: int, name: str, dtypes: dict) -> None:
    """Raise BridgeError for what the ONNX checker or onnxruntime would refuse in ``node`` (a NodeProto);
    ``dtypes`` maps tensor names to numpy dtype names where known."""
    schema = _schema(node.op_type, opset, name)
    version = f"{node.op_type}-{schema.since_version}"
    for attr in node.attribute:
        spec = schema.attributes.get(attr.name)
        if spec is None:
            raise BridgeError(f"{version} has no attribute {attr.name!r}", name, attr.name)
        want = spec.type.name
        if _attr_type(attr) != want:
            raise BridgeError(f"must be {_ATTR_TYPES.get(want, want)}, got {_attr_type(attr).lower()}", name,
                              attr.name)
    inputs = list(node.input)
    while inputs and not inputs[-1]:
        inputs.pop()  # trailing empty names are omitted optional inputs
    if not schema.min_input <= len(inputs) <= schema.max_input:
        raise BridgeError(f"{version} takes {schema.min_input} to {schema.max_input} inputs, got {len(inputs)}",
                          name, "inputs")
    if len(node.output) < 1 or not node.output[0]:
        raise BridgeError(f"{version} needs an output", name, "outputs")
    if len(node.output) > schema.max_output:
        raise BridgeError(f"{version} has {schema.max_output} output(s), got {len(node.output)}", name, "outputs")
    formal = list(schema.inputs)
    constraints = {t.type_param_str: set(t.allowed_type_strs) for t in schema.type_constraints}
    for i, tensor in enumerate(inputs):
        f = formal[min(i, len(formal) - 1)]
        if not tensor:
            if f.option.name == "Single":
                raise BridgeError(f"input {f.name!r} is required", name, f.name)
            continue
        dt = dtypes.get(tensor)
        if dt is None:
            continue
        allowed = constraints.get(f.type_str, {f.type_str})
        got = _tensor_type(dt)
        if got is not None and got not in allowed:
            raise BridgeError(f"input {f.name!r} has element type {dt}; {version} allows "
                              f"{', '.join(sorted(a[7:-1] for a in allowed))}", name, f.name)


def _tensor_type(np_name: str) -> str | None:
    names = {"float32": "float", "float64": "double", "float16": "float16", "bfloat16": "bfloat16",
             "bool": "bool", "object": "string", "complex64": "complex64", "complex128": "complex128"}
    for bits in (8, 16, 32, 64):
        names[f"int{bits}"] = f"int{bits}"
        names[f"uint{bits}"] = f"uint{bits}"
    t = names.get(np_name)
    return f"tensor({t})" if t else None
