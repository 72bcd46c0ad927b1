"""The proof of a TensorRT-ready model (the pass's postcondition): every rewritten node re-read from the written
model — what the importer builds from it, or the IR a plugin node carries — and compared with its source IR; a
decomposition proven as the ONNX target proves its own (tap tables re-read and recomputed from the source IR,
then the ops run on onnxruntime against the oracle where onnxruntime is installed)."""

from __future__ import annotations

from ...semantics.coords import bind_resize
from ...semantics.equivalence import field_differences, sizes_as_source_scales
from ...semantics.errors import BridgeError
from ...semantics.ir import RuntimeValue
from ...translate.onnx import Graph, NodeView, default_opset, parse_view
from ...translate.onnx_tensorrt import import_node
from ..passes import NodeRecord
from .compare import compare, pass_matches
from ..onnx.fold import prove_folded, without_folded
from ..passes import DECOMPOSE, PassResult
from .rungs import PLUGIN, TENSORRT_COMPUTE
from .spell import opset_spelled
from .plugin import ir_from_plugin
from ..onnx.prove import prove as prove_onnx


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
    view = NodeView.from_proto(n, g, n.name)
    imp = import_node(view, opset)
    if imp.rejected:
        return [f"{rec.node}: the importer rejects the written node: {imp.message}"]
    got = imp.ir
    if got is not None and getattr(rec.ir, "scales_from_sizes", ()):
        # A run-time sizes read as static scales: the written model's own graph must prove it again.
        got = sizes_as_source_scales(got, parse_view(view, opset))
    same, fields, _ = compare(rec.ir, got) if got is not None else (False, imp.fields, None)
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


def _prove_decomposed(records: list[NodeRecord], model) -> dict[str, list[str]]:
    """The ONNX target's proof of every decomposition at once (one parse of the model), per node."""
    from importlib.util import find_spec

    if not records:
        return {}
    probes = find_spec("onnxruntime") is not None  # without it the tables alone are the proof
    # A GridSample rewritten into TensorRT's parser spelling ('bicubic') is proven by its own rung; the
    # decompositions are proven on the model as the ONNX parser reads it.
    failures = prove_onnx(PassResult(opset_spelled(model), records), TENSORRT_COMPUTE, probes=probes)
    # Each failure starts with its node's name; the longest matching name claims it.
    out: dict[str, list[str]] = {r.node: [] for r in records}
    for f in failures:
        owner = max((r.node for r in records if f.startswith(f"{r.node}:")), key=len, default=None)
        if owner is None:  # a failure of the whole model (it does not parse): every decomposition shares it
            for r in records:
                out[r.node].append(f"{r.node}: {f}")
        else:
            out[owner].append(f)
    return out


def prove_nodes(model, records: list[NodeRecord]) -> dict[str, list[str]]:
    """Per lowered node (by name), why its rewrite does not re-read as its source IR (empty = proven)."""
    g = Graph(model)
    opset = default_opset(model)
    by_name = {n.name: n for n in model.graph.node}
    out = {}
    decomposed = []
    out.update(prove_folded(model, records))
    for rec in without_folded(records):
        if rec.refused:
            continue
        nodes = [by_name.get(n) for n in rec.produced]
        if any(n is None for n in nodes):
            out[rec.node] = [f"{rec.node}: a node it became is missing"]
        elif rec.rung == DECOMPOSE:
            if rec.node in by_name:
                out[rec.node] = [f"{rec.node}: the source node is still in the written model"]
            else:
                decomposed.append(rec)
        elif rec.rung == PLUGIN:
            out[rec.node] = _prove_plugin(rec, nodes[0], g)
        elif "passes" in rec.proof:
            out[rec.node] = _prove_split(rec, nodes, g, opset)
        else:
            out[rec.node] = _prove_node(rec, nodes[0], g, opset)
    out.update(_prove_decomposed(decomposed, model))
    return out


def prove(model, records: list[NodeRecord]) -> list[str]:
    """Re-read every rewritten node from ``model`` and compare with the source IR. Returns the failures
    (empty = proven)."""
    return [f for fs in prove_nodes(model, records).values() for f in fs]


__all__ = ["prove", "prove_nodes"]
