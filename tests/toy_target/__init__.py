"""A toy fourth target, to keep the promise "a new target is its own folder and one registry line" measurable.

It writes ONNX in which each resampling node stays as it is, on the one driver (``passes.Target``: prepare ->
nodes -> plan -> emit -> prove -> write) and the shared pieces (the ONNX parser, the staged writer, the record
format); nothing in the package names it. Its runtime is the spec itself, so its one rung keeps a node whose
re-parsed IR equals the source's; its proof re-parses the written file and compares every node's IR with the source's.
"""

from __future__ import annotations

from resample_bridge.lowering.artifacts import write_proven_onnx
from resample_bridge.lowering.passes import BUILTIN, Candidate, NodeRecord, PassResult, Rung, Target, Written
from resample_bridge.lowering.record_format import records_json, summary_counts
from resample_bridge.tools.targets import Entry
from resample_bridge.translate.onnx import load, parse_model, resampling_nodes


def _as_is(node) -> Candidate:
    return Candidate(node.name, "the node as it is: this target computes the spec")


class ToyTarget(Target):
    name = "toy"
    suffix = ".onnx"
    default_tail = ".toy.onnx"

    def rungs(self, kind, policy):
        return (Rung(BUILTIN, "as is", _as_is),)

    def prepare(self, model, policy):
        m = load(model)
        return m, m, []

    def nodes(self, prepared):
        for (name, ir), (_, proto) in zip(parse_model(prepared), resampling_nodes(prepared)):
            yield proto, NodeRecord(name, proto.op_type, ir, self.name)

    def emit(self, plan) -> PassResult:
        return PassResult(plan.model, plan.records)

    def prove(self, result: PassResult) -> list[str]:
        written = dict(parse_model(result.model))
        return [f"{r.node}: the written node's IR differs: {written.get(r.node)}" for r in result.records
                if written.get(r.node) != r.ir]

    def write(self, result: PassResult, out: str, options) -> Written:
        write_proven_onnx(result.model, out, lambda m: self.prove(PassResult(m, result.records)))
        report = {"target": self.name, "output": out, "files": {"ONNX": out},
                  "nodes": records_json(result.records), "summary": summary_counts(result.records)}
        return Written(self.name, out, {"onnx": out}, tuple(result.records), report)


ENTRY = Entry("toy", ToyTarget)
