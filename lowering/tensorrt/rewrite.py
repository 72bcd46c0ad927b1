"""Writing the planned rungs into the model with onnx-graphsurgeon: a respelled node in place, a split as
Transpose / Resize passes, a decomposition as the ONNX target's tap-table ops, a plugin node with compacted
inputs. The user's other nodes stay as they are. Every tensor keeps the shape and type ONNX shape inference gave
it in the source model (as value_info): a plugin node's output has no shape inference of its own, and the nodes
after it need their input's shape to be re-read and proven."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..passes import NodeRecord
from ..onnx.decompose import decompose_resize
from ..onnx.deformconv_decompose import FORM as DEFORM_FORM
from ..onnx.deformconv_decompose import decompose_deformconv
from ..onnx.gridsample_decompose import FORM as GRID_FORM
from ..onnx.gridsample_decompose import decompose_gridsample
from ..onnx.nearest_index import FORM as INDEX_FORM
from ..onnx.nearest_index import decompose_nearest_index
from ..passes import DECOMPOSE, FOLDED
from .plugin import PLUGIN_DOMAIN, PLUGIN_DOMAIN_VERSION, PLUGIN_OPS, plugin_attributes, plugin_inputs
from .rungs import NATIVE, PLUGIN, TENSORRT_COMPUTE
from ...translate.onnx import default_opset, node_name
from ..gs import import_graph


def named_copy(model):
    """A copy whose every node has a unique name (graphsurgeon and the report need them)."""
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    seen = set()
    for i, node in enumerate(m.graph.node):
        name = node.name or node_name(node, i)
        while name in seen:
            name += "_"
        node.name = name
        seen.add(name)
    return m


def _resize_inputs(gs, x, spelling: dict, prefix: str) -> list:
    """[X, roi, scales(, sizes)] for a Resize spelling, its sizes or scales as a constant."""
    if spelling.get("sizes") is not None:
        return [x, gs.Variable.empty(), gs.Variable.empty(),
                gs.Constant(f"{prefix}/sizes", values=np.asarray(spelling["sizes"], dtype=np.int64))]
    return [x, gs.Variable.empty(),
            gs.Constant(f"{prefix}/scales", values=np.asarray(spelling["scales"], dtype=np.float32))]


def _apply(graph, gs, rec: NodeRecord, opset: int) -> NodeRecord:
    """Write ``rec``'s rung into ``graph``; the record naming what the node became."""
    node = next(n for n in graph.nodes if n.name == rec.node)
    if rec.rung == DECOMPOSE:
        x, y = node.inputs[0], node.outputs[0]
        inputs = [t.name for t in node.inputs]
        node.outputs.clear()
        graph.nodes.remove(node)
        if rec.proof.get("form") == DEFORM_FORM:
            added = decompose_deformconv(graph, rec.ir, [t if t.name else None for t in node.inputs], y, rec.node,
                                         compute=TENSORRT_COMPUTE, opset=opset)
        elif rec.proof.get("form") == GRID_FORM:
            added = decompose_gridsample(graph, rec.ir, x, node.inputs[1], y, rec.node, compute=TENSORRT_COMPUTE,
                                         opset=opset)
        elif rec.proof.get("form") == INDEX_FORM:  # run-time lengths: the nearest index form
            added = decompose_nearest_index(graph, rec.ir, x, node.inputs[3] if len(inputs) > 3 else None, y,
                                            rec.node)
        else:
            added = decompose_resize(graph, rec.ir, x, y, rec.ir.input_shape, rec.node, compute=TENSORRT_COMPUTE,
                                     opset=opset)
            inputs = [x.name]
        # The ONNX target's proof reads inputs / output / top_level.
        return replace(rec, produced=[n.name for n in added],
                       proof={**rec.proof, "inputs": inputs, "output": y.name, "top_level": True})
    if rec.rung == PLUGIN:
        inputs, extra = plugin_inputs(rec.ir, list(node.inputs))
        node.op, node.domain = PLUGIN_OPS[rec.ir.kind], PLUGIN_DOMAIN
        node.attrs = {**plugin_attributes(rec.ir), **extra}
        node.inputs.clear()
        node.inputs.extend(inputs)
    elif rec.rung != NATIVE and "passes" not in rec.proof:  # rung 2, one node respelled
        sp = rec.proof["spelling"]
        node.op, node.attrs = sp["op_type"], dict(sp["attrs"])
        if sp["op_type"] == "Resize":
            ins = _resize_inputs(gs, node.inputs[0], sp, rec.node)
            node.inputs.clear()
            node.inputs.extend(ins)
    elif rec.rung != NATIVE:
        return replace(rec, produced=_apply_split(graph, gs, node, rec))
    return replace(rec, produced=[node.name])


def _apply_split(graph, gs, node, rec: NodeRecord) -> list[str]:
    x, y = node.inputs[0], node.outputs[0]
    dtype = x.dtype
    node.outputs.clear()
    graph.nodes.remove(node)
    cur = x
    names = []

    def add(op, name, attrs, ins, outs):
        graph.nodes.append(gs.Node(op, name, attrs, ins, outs))
        names.append(name)

    passes = rec.proof["passes"]
    for i, ps in enumerate(passes):
        last = i == len(passes) - 1
        at = f"{rec.node}/pass{i}"
        if ps["perm"] is not None:
            t = gs.Variable(f"{at}/in", dtype=dtype, shape=ps["in_shape"])
            add("Transpose", f"{at}/transpose_in", {"perm": ps["perm"]}, [cur], [t])
            cur = t
        out = y if last and ps["perm"] is None else gs.Variable(f"{at}/out", dtype=dtype, shape=ps["out_shape"])
        add("Resize", at, dict(ps["spelling"]["attrs"]), _resize_inputs(gs, cur, ps["spelling"], at), [out])
        cur = out
        if ps["perm"] is not None:
            inv = [ps["perm"].index(a) for a in range(len(ps["perm"]))]
            back = y if last else gs.Variable(f"{at}/back", dtype=dtype)
            add("Transpose", f"{at}/transpose_out", {"perm": inv}, [cur], [back])
            cur = back
    return names


def _with_shapes(model):
    """``model`` with the shapes and types ONNX shape inference finds (as value_info), or as it is."""
    from onnx import shape_inference

    try:
        return shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # shape inference is a convenience; the proof says what it cannot re-read
        return model


def rewrite(named, records: list[NodeRecord]):
    """(the ModelProto with every record's rung written in, the records naming the nodes each became);
    ``named``: the model ``plan_model`` returned, whose node names the records use."""
    import onnx
    import onnx_graphsurgeon as gs

    graph = import_graph(_with_shapes(named))
    opset = default_opset(named)
    # A refused node stays as it is (check rewrites the others to prove them).
    records = [rec if rec.refused or rec.rung == FOLDED else _apply(graph, gs, rec, opset) for rec in records]
    graph.toposort()  # no cleanup: the user's other nodes stay as they are; unused constants are not exported
    out = gs.export_onnx(graph)
    out.ir_version = named.ir_version
    del out.opset_import[:]
    out.opset_import.extend(named.opset_import)
    if any(r.rung == PLUGIN for r in records) and not any(o.domain == PLUGIN_DOMAIN for o in out.opset_import):
        out.opset_import.append(onnx.helper.make_opsetid(PLUGIN_DOMAIN, PLUGIN_DOMAIN_VERSION))
    for key in ("producer_name", "producer_version", "doc_string"):
        setattr(out, key, getattr(named, key))
    return out, records


__all__ = ["named_copy", "rewrite"]
