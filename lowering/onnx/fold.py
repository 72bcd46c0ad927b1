"""Rung 0 on the ONNX-writing targets (portable ONNX and TensorRT-ready ONNX): a resampling node whose every
input is computable before run time (a ViT position embedding resized to a fixed grid) becomes a Constant
holding the oracle's exact output. A runtime or TensorRT's builder would otherwise fold it with its own op,
which need not be exact (OpenVINO's bicubic antialias: 8e-3 off). The OpenVINO target's rung 0 is
``openvino.frontend.fold``; both write ``semantics.reference.run`` of the same values.

The inputs' values come from the model's own constant subgraph, evaluated by ``onnx.reference`` (the
specification's evaluator); the proof re-reads the written Constant and compares it with the oracle's output on
those values."""

from __future__ import annotations

import numpy as np

from ...semantics.compare import against_oracle
from ...semantics.errors import BridgeError
from ...semantics.reference import run as oracle
from .cut import submodel
from ..passes import CUSTOM, FOLDED, NodeRecord, Policy, folded_record
from ...translate.onnx import Graph, NodeView, default_opset, is_resampling, parse_view

# Ops whose output is not a function of their inputs: never folded (nor anything downstream of them).
_RANDOM = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}


def _oracle_output(ir, args: list) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):  # constants may hold extremes: the oracle's own inf / NaN
        return np.asarray(oracle(ir, *args))


def folded_name(name: str) -> str:
    return f"{name}/folded"


def constant_tensors(graph) -> set:
    """Names of the main graph's tensors whose value the model fixes: initializers that are not also graph
    inputs (a user may feed those), and the outputs of deterministic nodes, without subgraphs, whose every input
    is such a tensor."""
    fed = {i.name for i in graph.input}
    known = {i.name for i in graph.initializer if i.name not in fed}
    for node in graph.node:
        if node.op_type in _RANDOM or node.domain not in ("", "ai.onnx"):
            continue
        if any(a.type in (5, 10) for a in node.attribute):  # GRAPH, GRAPHS: a body may read outer values
            continue
        if all(not n or n in known for n in node.input):
            known.update(o for o in node.output if o)
    return known


def _evaluate(model, names: list[str]) -> dict:
    """{name: value} of constant tensors ``names``, from the smallest subgraph that computes them."""
    from onnx.reference import ReferenceEvaluator

    values = ReferenceEvaluator(submodel(model, {}, names)).run(None, {})
    return {n: np.asarray(v) for n, v in zip(names, values)}


def fold_constant_nodes(model, target: str, policy: Policy | None = None):
    """``model`` (nodes already uniquely named) with each top-level resampling node whose inputs are all
    constants replaced in place by a Constant of the oracle's output; and their records (rung 0). A node that
    does not parse, or whose inputs ``onnx.reference`` cannot evaluate, is left to the target's ladder."""
    import onnx

    if policy is not None and policy.floor >= CUSTOM:  # the user asked for the custom op
        return model, []
    known = constant_tensors(model.graph)
    picked = [n for n in model.graph.node if is_resampling(n) and n.output and n.output[0]
              and all(not i or i in known for i in n.input)]
    if not picked:
        return model, []
    try:
        values = _evaluate(model, sorted({i for n in picked for i in n.input if i}))
    except Exception:  # noqa: BLE001 -- not evaluable here: the ladder takes the nodes as usual
        return model, []
    g, opset = Graph(model), default_opset(model)
    records, replaced = [], {}
    for node in picked:
        try:
            ir = parse_view(NodeView.from_proto(node, g, node.name), opset)
            args = [values[i] if i else None for i in node.input]
            want = _oracle_output(ir, args)
        except BridgeError:
            continue
        const = onnx.helper.make_node("Constant", [], [node.output[0]], folded_name(node.name),
                                      value=onnx.numpy_helper.from_array(want, node.output[0]))
        replaced[node.name] = const
        records.append(folded_record(node.name, ir, target, [const.name], {"inputs": args, "output": node.output[0]}))
    if not replaced:
        return model, []
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes = [replaced.get(n.name, n) for n in out.graph.node]
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    return out, records


def in_model_order(model, records: list[NodeRecord]) -> list[NodeRecord]:
    """``records`` in the order of their nodes in ``model`` (the source, before folding); bodies' nodes last."""
    order = {n.name: i for i, n in enumerate(model.graph.node)}
    return sorted(records, key=lambda r: order.get(r.node, len(order)))


def prove_folded(model, records: list[NodeRecord]) -> dict[str, list[str]]:
    """Per folded node, why its Constant in ``model`` (re-read) is not the oracle's output on the inputs' values
    (empty = proven)."""
    from onnx import numpy_helper

    by_name = {n.name: n for n in model.graph.node}
    out = {}
    for rec in records:
        if rec.rung != FOLDED:
            continue
        node = by_name.get(folded_name(rec.node))
        if rec.node in by_name or node is None or node.op_type != "Constant" or list(node.output) != [rec.proof["output"]]:
            out[rec.node] = [f"{rec.node}: no Constant in its place in the written model"]
            continue
        got = numpy_helper.to_array(next(a.t for a in node.attribute if a.name == "value"))
        args = rec.proof["inputs"]
        want = _oracle_output(rec.ir, args)
        ok = got.shape == want.shape and got.dtype == want.dtype and against_oracle(rec.ir, got, want, args).ok
        out[rec.node] = [] if ok else [f"{rec.node}: the written constant differs from the oracle's output"]
    return out


def without_folded(records: list[NodeRecord]) -> list[NodeRecord]:
    return [r for r in records if r.rung != FOLDED]


__all__ = ["fold_constant_nodes", "prove_folded", "in_model_order", "without_folded", "constant_tensors",
           "folded_name"]
