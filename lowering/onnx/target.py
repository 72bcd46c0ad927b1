"""``OnnxTarget``: portable ONNX that computes the source IR's numbers on any conforming runtime, on the shared
pass interface (``lowering/passes.py``). Everything but the resampling nodes is left as it is."""

from __future__ import annotations

from dataclasses import replace

import onnx
import onnx_graphsurgeon as gs

from ...semantics.opspec import PerOp
from ...semantics.nearest_index import NearestIndex
from ...semantics.errors import BridgeError
from ...semantics.text import counted
from ..artifacts import write_proven_onnx as write_proven
from ...translate.onnx import default_opset, inline_functions, load, parse_model, resampling_nodes
from ..gs import import_graph
from ..passes import BUILTIN, DECOMPOSE, REWRITE, RUNG_NAMES, ConvertOptions, NodeRecord, PassResult, Policy, Rung, Target, \
    Written
from ..plan import Plan
from ..record_format import records_json, summary_counts
from . import conv_form, cost_in_graph, matmul_form, rungs
from .decompose import PORTABLE, decompose_resize
from .deformconv_decompose import decompose_deformconv
from .fold import fold_constant_nodes, in_model_order
from .gridsample_decompose import decompose_gridsample
from .nearest_index import decompose_nearest_index
from .prove import prove
from ..model_check import SourceRunner

# Run-time conditions are never taken by default: a portable model must be exact for every value.
DEFAULT_POLICY = Policy(allow_conditional=False)


def _decompose_resize(graph, node, inputs: list, y, produced, compute) -> list:
    if isinstance(produced, NearestIndex):  # run-time lengths: the index form
        return decompose_nearest_index(graph, node.ir, inputs[0], inputs[3] if len(inputs) > 3 else None, y,
                                       node.name)
    return decompose_resize(graph, node.ir, inputs[0], y, node.ir.input_shape, node.name, compute=compute,
                            opset=node.opset)


def _decompose_gridsample(graph, node, inputs: list, y, produced, compute) -> list:
    return decompose_gridsample(graph, node.ir, inputs[0], inputs[1], y, node.name, compute=compute, opset=node.opset)


def _decompose_deformconv(graph, node, inputs: list, y, produced, compute) -> list:
    return decompose_deformconv(graph, node.ir, [t if t.name else None for t in inputs], y, node.name,
                                compute=compute, opset=node.opset)


# Each op's decomposition into standard ONNX ops (the node's tensors in ONNX order, its output, the rung's payload).
DECOMPOSITIONS = PerOp("ONNX decomposition", resize=_decompose_resize, gridsample=_decompose_gridsample,
                       deformconv=_decompose_deformconv)


class OnnxTarget(Target):
    name = "onnx"
    suffix = ".onnx"
    default_tail = ".portable.onnx"
    requires = ("onnxruntime",)  # the proof runs each lowered node on it
    default_policy = DEFAULT_POLICY

    def __init__(self, compute: dict = PORTABLE, probes: bool = True):
        self.compute = compute  # the decomposition's dtype policy
        self.probes = probes  # the proof also runs each lowered node on onnxruntime

    def rungs(self, kind: str = "resize", policy: Policy | None = None):
        return (Rung(BUILTIN, RUNG_NAMES[BUILTIN], rungs.as_is),  # the node as it is
                Rung(REWRITE, RUNG_NAMES[REWRITE], rungs.respell),  # a Resize respelled
                Rung(DECOMPOSE, RUNG_NAMES[DECOMPOSE], rungs.decompose))

    def prepare(self, model, policy: Policy = DEFAULT_POLICY):
        """The model inlined, every node named, constant nodes folded (rung 0, before anything is parsed)."""
        m = onnx.ModelProto()
        m.CopyFrom(inline_functions(load(model)))
        taken = {n.name for n in m.graph.node}
        for i, node in enumerate(m.graph.node):
            # Records, the written model and its proof refer to nodes by name; the parser's default name for
            # an unnamed node is its position, which the decomposition shifts.
            if not node.name and f"{node.op_type}_{i}" not in taken:
                node.name = f"{node.op_type}_{i}"
        prepared, folded = fold_constant_nodes(m, self.name, policy)
        return m, prepared, folded

    def nodes(self, prepared):
        opset = default_opset(prepared)
        # Main-graph nodes by their first output: unique, and never an output name inside a body (ONNX forbids
        # shadowing), where protobuf wrappers give no stable identity.
        top = {p.output[0] for p in prepared.graph.node if p.output}
        for (name, ir), (_, proto) in zip(parse_model(prepared), resampling_nodes(prepared)):
            node = rungs.Node(name, proto, ir, opset, proto.output[0] in top, self.compute)
            yield node, NodeRecord(name, proto.op_type, ir, self.name)

    def plan(self, model, policy: Policy) -> Plan:
        """The climb's choices, then an in-graph form where it is faster (``cost_in_graph``)."""
        got = super().plan(model, policy)
        return replace(got, choices=tuple(cost_in_graph.AFTER_CLIMB.get_for(c.record.ir, lambda c: c)(c)
                                          for c in got.choices))

    def emit(self, plan: Plan) -> PassResult:
        m = plan.model
        position = {p.output[0]: i for i, p in enumerate(m.graph.node) if p.output}
        graph = import_graph(m)
        gs_nodes = list(graph.nodes)  # in m's order; lowering reorders graph.nodes
        records = []
        for choice in plan.choices:
            rec, node = choice.record, choice.node
            if node is not None and not rec.refused:
                proto = node.proto
                gs_node = gs_nodes[position[proto.output[0]]] if node.top_level else None
                rec = replace(rec, produced=self._apply(graph, gs_node, node, rec.rung, choice.payload),
                              proof={**rec.proof, "inputs": list(proto.input), "output": proto.output[0],
                                     "top_level": node.top_level})
            records.append(rec)
        graph.toposort()
        out = gs.export_onnx(graph, do_type_check=False)
        out.ir_version = m.ir_version
        del out.metadata_props[:]
        out.metadata_props.extend(m.metadata_props)
        return PassResult(out, in_model_order(plan.source, records))

    def _apply(self, graph, gs_node, node, rung: int, produced) -> list[str]:
        if rung == BUILTIN:
            return [node.name]
        if rung == REWRITE and isinstance(produced, tuple):  # a Resize respelled
            attrs, consts = produced
            gs_node.op, gs_node.attrs = "Resize", dict(attrs)
            # roi and scales stay as empty constants (Resize-11 requires scales); an empty sizes is left out.
            gs_node.inputs = [gs_node.inputs[0]] + [gs.Constant(f"{node.name}/{k}", c) for k, c in consts.items()
                                                    if k != "sizes" or c.size]
            return [node.name]
        y = gs_node.outputs[0]  # the node replaced: its output is the new nodes' last
        gs_node.outputs.clear()
        graph.nodes.remove(gs_node)
        if rung == REWRITE and isinstance(produced, matmul_form.Guarded):  # ``cost_in_graph._decomposed``
            added = matmul_form.build(graph, node.ir, produced, gs_node.inputs[0], y, node.name, self.compute)
        elif rung == REWRITE:  # the convolution form (``cost_in_graph.swap``: its plan)
            added = conv_form.build(graph, produced, gs_node.inputs[0], y, node.ir.input_shape, node.name)
        else:
            added = DECOMPOSITIONS.of(node.ir)(graph, node, list(gs_node.inputs), y, produced, self.compute)
        return [n.name for n in added]

    def prove(self, result: PassResult) -> list[str]:
        return prove(result, self.compute, probes=self.probes)

    def policy(self, options: ConvertOptions) -> Policy:
        return DEFAULT_POLICY  # ``strict`` changes nothing: no candidate exact only under conditions is taken

    def lower_file(self, path: str, options: ConvertOptions, whole_model: bool = True) -> PassResult:
        """Lowered, refused nodes named; the proof runs once, on the written file (``write``)."""
        result = self.lower_model(path, self.policy(options))
        if result.refused:
            r = result.refused[0]
            raise BridgeError(r.reason, r.node, "rung")
        result.source = path
        if whole_model:
            self.agrees(result)
        return result

    def run_written(self, result: PassResult, produced=None):
        """The produced ONNX on onnxruntime, as its users run it (every tensor observed)."""

        runner = SourceRunner(result.model if produced is None else produced)
        if not runner.usable:
            return None  # the node proofs ran it; a model it cannot load says so there

        def run(feeds: dict, observe: list) -> dict:
            got = runner.run(feeds)
            if got is None:
                raise BridgeError("onnxruntime cannot run the converted model", field="model")
            return got

        return run

    def write(self, result: PassResult, out: str, options: ConvertOptions) -> Written:
        def proven(written) -> list[str]:
            failures = self.prove(PassResult(written, result.records))
            if not failures:
                self.agrees(result, written)  # the whole model as written, against the source
            return failures

        write_proven(result.model, out, proven)
        report = {"target": self.name, "output": out, "nodes": records_json(result.records),
                  "lines": [r.summary() for r in result.records], "summary": summary_counts(result.records)}
        return Written(self.name, out, {"onnx": out}, tuple(result.records), report)


def convert(model_path_or_proto, *, strict: bool = False) -> PassResult:
    """The portable ONNX model and one record per resampling node, proven; BridgeError naming the first
    refused node otherwise. ``strict`` is accepted for the CLI's symmetry: this target takes no candidate that
    is exact only under run-time conditions in either case."""
    return OnnxTarget()(model_path_or_proto, DEFAULT_POLICY)


def convert_to_onnx(model_path, out_path: str, *, force: bool = False, strict: bool = False) -> dict:
    """Write the portable model to ``out_path`` (proven again from disk; nothing partial is left on failure) and
    return the report. ``strict``: as for ``convert``."""
    return OnnxTarget().convert_file(model_path, out_path, ConvertOptions(force=force, strict=strict)).report


def format_convert_onnx(report: dict) -> str:
    lines = list(report["lines"]) or ["no resampling nodes in this model"]
    lines.append(f"summary: {report['summary']}" if report["nodes"] else "")
    lines.append(f"wrote {report['output']} ({counted(len(report['nodes']), 'resampling node')} lowered and proven: rungs 1-2 "
                 "against onnxruntime's semantics, rung 2's convolution form and rung 3 plain ONNX ops exact on any "
                 "conforming runtime)")
    return "\n".join(x for x in lines if x)
