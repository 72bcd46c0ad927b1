"""What onnx.checker and onnxruntime refuse in a resampling node, refused here first, in one line naming the
node and the field: unknown attributes, attributes of a later opset, attribute types, input and output
counts, input element types, and deprecated ops (Upsample from opset 10 on).

The rules are read from ONNX's own operator schemas (``onnx.defs``), so they follow the installed onnx
package instead of a copy of the spec.
"""

from __future__ import annotations

import re

import onnx
import onnx.defs
from onnx import shape_inference

from ..semantics.errors import BridgeError, clip, first_line
from .onnx_walk import node_name, walk
from ..semantics.vocab import ONNX_DOMAINS

# onnx.defs AttrType names -> what the attribute's proto carries.
_ATTR_TYPES = {"FLOAT": "a float", "INT": "an int", "STRING": "a string", "FLOATS": "a list of floats",
               "INTS": "a list of ints", "STRINGS": "a list of strings", "TENSOR": "a tensor", "GRAPH": "a graph"}


def _schema(op_type: str, opset: int, name: str):
    try:
        schema = onnx.defs.get_schema(op_type, opset, "")
    except Exception:
        raise BridgeError(f"{op_type} does not exist in opset {opset}", name, "opset") from None
    if schema.deprecated:
        raise BridgeError(f"{op_type} is deprecated in opset {opset} (since version {schema.since_version}); "
                          f"use Resize", name, "op_type")
    return schema


def _attr_type(attr) -> str:
    return onnx.AttributeProto.AttributeType.Name(attr.type)


def validate_node(node, opset: int, name: str, dtypes: dict) -> None:
    """Raise BridgeError for what the ONNX checker or onnxruntime would refuse in ``node`` (a NodeProto);
    ``dtypes`` maps tensor names to numpy dtype names where known."""
    schema = _schema(node.op_type, opset, name)
    version = f"{node.op_type}-{schema.since_version}"
    for attr in node.attribute:
        spec = schema.attributes.get(attr.name)
        if spec is None:
            raise BridgeError(f"{version} has no attribute '{clip(attr.name, 40)}'", name, attr.name)
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


# ----------------------------------------------------------------------------------------------------------
# The whole model: what onnx.checker (full_check) and onnxruntime refuse before any node is looked at.



def check_header(model) -> None:
    """An IR version and a default-domain opset this onnx package knows (onnxruntime refuses newer ones)."""
    if model.ir_version > onnx.IR_VERSION:
        raise BridgeError(f"IR version {model.ir_version} is newer than the newest known ({onnx.IR_VERSION})",
                          field="ir_version")
    newest = onnx.defs.onnx_opset_version()
    for o in model.opset_import:
        if o.domain in ONNX_DOMAINS and not 1 <= o.version <= newest:
            raise BridgeError(f"default-domain opset {o.version} is not one of 1 to {newest}", field="opset")


def check_structure(graph, outer: frozenset = frozenset(), prefix: str = "") -> None:
    """Every node reads only tensors defined before it (a graph input, an initializer, an earlier node's
    output or, in a body, an outer name), every tensor is defined once, and every graph output is computed:
    the checker's topological-order and SSA rules, which also refuse cycles."""
    defined = set(outer) | {i.name for i in graph.input} | {t.name for t in graph.initializer}
    defined |= {t.values.name for t in graph.sparse_initializer}
    outputs_of_inputs = {i.name for i in graph.input}
    seen: set = set()
    for i, node in enumerate(graph.node):
        name = prefix + node_name(node, i)
        for k, t in enumerate(node.input):
            if t and t not in defined:
                why = ("a later node computes it (the graph is cyclic or not in topological order)"
                       if any(t in n.output for n in graph.node[i:]) else "nothing defines it")
                raise BridgeError(f"input {k} {t!r}: {why}", name, _formal_name(node, k))
        if not any(node.output) and _min_outputs(node) > 0:
            raise BridgeError(f"{clip(node.op_type, 40)} has no outputs (it needs at least {_min_outputs(node)})",
                              name, "outputs")
        for a in node.attribute:
            for j, g in enumerate([a.g] if a.HasField("g") else list(a.graphs)):
                check_structure(g, frozenset(defined), f"{name}/{a.name}{j if len(a.graphs) else ''}/")
        for t in node.output:
            if not t:
                continue
            if t in seen or t in outputs_of_inputs:
                raise BridgeError(f"output {t!r} is defined twice (ONNX graphs assign each tensor once)", name,
                                  "outputs")
            seen.add(t)
            defined.add(t)
    for o in graph.output:
        if o.name not in defined:
            raise BridgeError(f"graph output {o.name!r} is computed by no node", field="outputs")


def _min_outputs(node) -> int:
    """The schema's least output count of a default-domain node (1 where unknown: every ONNX op computes
    something; other domains: 0, their runtime's business)."""
    if node.domain not in ONNX_DOMAINS:
        return 0
    try:
        return onnx.defs.get_schema(node.op_type, onnx.defs.onnx_opset_version(), "").min_output
    except Exception:
        return 1


def _formal_name(node, k: int) -> str:
    """The schema's name of input ``k`` of ``node`` ("X", "scales"...), or "inputs"."""
    if node.domain in ONNX_DOMAINS:
        try:
            formal = list(onnx.defs.get_schema(node.op_type, onnx.defs.onnx_opset_version(), "").inputs)
            return formal[min(k, len(formal) - 1)].name if formal else "inputs"
        except Exception:
            pass
    return "inputs"


def check_nodes(model, graph=None, prefix: str = "") -> None:
    """onnx.checker's per-node rules (the op exists in the model's opset, attribute names and types, input
    and output counts) for every node of the default domain, bodies included; other domains are the
    runtime's business (custom ops)."""
    if graph is None:
        graph = model.graph
    ctx = onnx.checker.C.CheckerContext()
    ctx.ir_version = max(model.ir_version, 3)
    ctx.opset_imports = {d.domain or "": d.version for d in model.opset_import}
    for i, node in enumerate(graph.node):
        name = prefix + node_name(node, i)
        if node.domain not in ONNX_DOMAINS and node.domain not in ctx.opset_imports:
            raise BridgeError(f"domain '{clip(node.domain, 40)}' of {clip(node.op_type, 40)} is not imported by the "
                              f"model (no opset_import entry for it)", name, "domain")
        if node.domain in ONNX_DOMAINS:
            if "" not in ctx.opset_imports and "ai.onnx" not in ctx.opset_imports:
                raise BridgeError("the model imports no opset of the default ONNX domain", name, "opset")
            try:
                onnx.checker.check_node(_without_bodies(node), ctx)
            except Exception as e:
                raise BridgeError(_first_line(e), name, _checker_field(str(e))) from None
        for a in node.attribute:
            for j, g in enumerate([a.g] if a.HasField("g") else list(a.graphs)):
                check_nodes(model, g, f"{name}/{a.name}{j if len(a.graphs) else ''}/")


def _without_bodies(node):
    """``node`` with If / Loop / Scan bodies emptied: the bodies are checked node by node here, with the
    outer names in scope (the checker alone would not see them)."""
    if not any(a.HasField("g") or len(a.graphs) for a in node.attribute):
        return node
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    for a in copy.attribute:
        for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
            g.Clear()
            g.name = "body"
    return copy


def _first_line(e) -> str:
    text = str(e).strip()
    return "onnx.checker: " + clip(first_line(text, type(e).__name__), 160)


def _checker_field(msg: str) -> str:
    m = re.search(r"attribute: (\S+) for operator|attribute type in '[^':]* : ([^']*)'", msg)
    if m:
        return m.group(1) or m.group(2)
    low = msg.lower()
    if "input size" in low or " input" in low:
        return "inputs"
    if "output size" in low or " output" in low:
        return "outputs"
    if "attribute" in low:
        return "attributes"
    return "op_type"


def check_types(model):
    """ONNX's type and shape inference in strict mode, as the checker's full_check and onnxruntime's graph
    resolution run it: (inferred model or None, BridgeError or None). An element type that does not fit an op
    is an error naming the node and the tensor; a declared output shape that disagrees with the inferred one
    is not (onnxruntime only warns). None for the model where inference cannot run (over protobuf's limit)."""
    try:
        return shape_inference.infer_shapes(model, check_type=True, strict_mode=True), None
    except shape_inference.InferenceError as e:
        errors = re.findall(r"\(op_type:([^,]*), node name: ([^)]*)\): (.*?)(?=\s*\(op_type:|\s*$)", str(e),
                            re.S)
        for op_type, name, what in errors:
            if "existing shape differ" in what:
                continue
            what = first_line(what, "type inference failed")
            return None, BridgeError("onnx shape inference: " + clip(what, 160), name or op_type,
                                     _tensor_field(model, name, what))
        return None, None
    except Exception:
        return None, None  # inference is a check, not a requirement (over 2 GiB, ops without inference)


def _tensor_field(model, name: str, what: str) -> str:
    """The formal input name of the tensor an inference message names, or "type"."""
    m = re.search(r"tensor: (\S+?)\.? |[Ii]nput (\d+)", what + " ")
    if not m:
        return "type"
    node = next((n for nm, n in walk(model.graph) if nm == name or n.name == name), None)
    if node is None:
        return "type"
    k = int(m.group(2)) if m.group(2) else (list(node.input).index(m.group(1)) if m.group(1) in node.input else -1)
    return _formal_name(node, k) if k >= 0 else "type"
