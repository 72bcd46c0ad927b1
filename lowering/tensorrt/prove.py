"""The proof of a TensorRT-ready model (the pass's postcondition): every rewritten node re-read from the written
model — what the importer builds from it, or the IR a plugin node carries — and compared with its source IR."""

from __future__ import annotations

from ...semantics.coords import bind_resize
from ...semantics.equivalence import field_differences
from ...semantics.errors import BridgeError
from ...semantics.ir import RuntimeValue
from ...translate.onnx import Graph, NodeView, default_opset
from ...translate.onnx_tensorrt import import_node
from ..passes import NodeRecord
from .compare import compare, pass_matches
from .plan import PLUGIN
from .plugin import ir_from_plugin


def _prove_plugin(rec: NodeRecord, n, g: Graph) -> list[str]:
    import onnx

    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
    sizes = getattr(rec.ir, "sizes", None)
    try:
        got = ir_from_plugin(n.op_type, attrs, g.shapes.get(n.input[0]), g.dtypes.get(n.input[0]),
                             sizes_source=sizes.source if isinstance(sizes, RuntimeValue) else None)
    except BridgeError as e:
        return [f"{rec.node}: {e}"]
    # The attributes are the plugin's whole contract: every semantic field must come back as it went in,
    # whether or not it changes the numbers on this shape.
    fields = [str(f) for f in field_differences(rec.ir, got)]
    return [f"{rec.node}: the plugin node's attributes say {'; '.join(fields)}"] if fields else []


def _prove_node(rec: NodeRecord, n, g: Graph, opset: int) -> list[str]:
    imp = import_node(NodeView.from_proto(n, g, n.name), opset)
    if imp.rejected:
        return [f"{rec.node}: the importer rejects the written node: {imp.message}"]
    same, fields, _ = compare(rec.ir, imp.ir) if imp.ir is not None else (False, imp.fields, None)
    return [] if same else [f"{rec.node}: the written node imports as something else: {'; '.join(fields)}"]


def _prove_split(rec: NodeRecord, nodes, g: Graph, opset: int) -> list[str]:
    passes = rec.proof["passes"]
    bound = bind_resize(rec.ir, rec.ir.input_shape)
    by_axis = {ax.axis: ax for ax in bound.axes}
    resizes = [n for n in nodes if n.op_type == "Resize"]
    if len(resizes) != len(passes):
        return [f"{rec.node}: {len(resizes)} passes written, {len(passes)} planned"]
    failures, covered = [], set()
    for n, ps in zip(resizes, passes):
        view = NodeView.from_proto(n, g, n.name)
        view = view.replace(shapes={**view.shapes, n.input[0]: tuple(ps["in_shape"])})
        imp = import_node(view, opset)
        perm = ps["perm"] or list(range(rec.ir.rank))
        if imp.rejected or imp.ir is None or not pass_matches(
                imp.ir, tuple(ps["in_shape"]), [(perm.index(a), by_axis[a]) for a in ps["axes"]], bound):
            failures.append(f"{rec.node}: pass {n.name} does not import as the source's taps on axes {ps['axes']}")
        covered |= set(ps["axes"])
    if covered != set(by_axis):
        failures.append(f"{rec.node}: the passes cover axes {sorted(covered)}, the source resizes {sorted(by_axis)}")
    return failures


def prove(model, records: list[NodeRecord]) -> list[str]:
    """Re-read every rewritten node from ``model`` and compare with the source IR. Returns the failures
    (empty = proven)."""
    g = Graph(model)
    opset = default_opset(model)
    by_name = {n.name: n for n in model.graph.node}
    failures = []
    for rec in records:
        nodes = [by_name.get(n) for n in rec.produced]
        if any(n is None for n in nodes):
            failures.append(f"{rec.node}: a node it became is missing")
        elif rec.rung == PLUGIN:
            failures += _prove_plugin(rec, nodes[0], g)
        elif "passes" in rec.proof:
            failures += _prove_split(rec, nodes, g, opset)
        else:
            failures += _prove_node(rec, nodes[0], g, opset)
    return failures


__all__ = ["prove"]
