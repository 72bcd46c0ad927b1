"""The TensorRT-ready ONNX target on the pass interface: plan every node (``plan``), write the rungs in
(``rewrite``), prove every rewritten node (``prove``), refuse the model if a node has no rung or does not prove,
and ``save`` it atomically. ``check --target tensorrt`` runs the same ``lower_checked``, so check and convert
agree on every node by construction."""

from __future__ import annotations

from ...semantics.errors import BridgeError, escape
from ..artifacts import write_proven_onnx
from ..passes import ConvertOptions, NodeRecord, PassResult, Policy, Target, Written
from ..plan import Choice, Plan
from ..record_format import records_json
from .plan import PLUGIN, RUNGS, plan_model
from .plugin import PLUGIN_LIBRARY, PLUGIN_OPS
from .prove import prove, prove_nodes
from .rewrite import rewrite
from ...translate.onnx import load


class RefusedNodes(BridgeError):
    """Nodes without a rung: the first named on the one line the CLI prints, with a count; every node and its
    reason in ``to_dict`` (``--json``)."""

    def __init__(self, refused: list[NodeRecord], total: int):
        first = refused[0]
        more = len(refused) - 1
        # The count first: the CLI caps the line, and the first node's reason can be long.
        message = (f"{more} more of {total} resampling nodes refused (--json lists them); this one: " if more
                   else "") + first.reason
        super().__init__(message, first.node, first.field or "rung")
        self.refused = [{"node": r.node, "op": r.op, "field": r.field, "reason": r.reason}
                        for r in refused]

    def to_dict(self) -> dict:
        return {**super().to_dict(), "refused": [{k: None if v is None else escape(v) for k, v in r.items()}
                                                 for r in self.refused]}


def plan(model, policy: Policy) -> Plan:
    """Every node's choice (``plan_model``: TensorRT's rungs climbed per node, rung 0 folded first); the payload
    is the record's proof, which ``rewrite`` writes in (its form and spelling)."""
    named, records = plan_model(model, policy=policy)
    return Plan(named, tuple(Choice(r, r.proof) for r in records), model)


def emit(p: Plan) -> PassResult:
    """Rewrite and prove; a node whose rewrite does not prove becomes a refusal (rung None, the proof's
    reason). Refused nodes stay as they are in ``result.model``; nothing is raised."""
    written, records = rewrite(p.model, p.records)
    proofs = prove_nodes(written, records)
    # A node whose proof failed is refused here, so every node left lowered is proven on ``written``.
    return PassResult(written, [_unproven(rec, proofs.get(rec.node)) for rec in records], proven=True)


def lower_checked(model, policy: Policy) -> PassResult:
    """The driver's two steps (``plan`` then ``emit``), for check: every node planned, written and proven."""
    return emit(plan(model, policy))


def _unproven(rec: NodeRecord, failures) -> NodeRecord:
    """``rec``, refused when its rewritten node does not prove (``failures``)."""
    if not failures:
        return rec
    why = "; ".join(failures)
    return rec.refuse("the rewritten node does not prove: " + why, "rung",
                      tried=((rec.rung, rec.rung_name, "does not prove: " + why),))


class TensorRTTarget(Target):
    """ONNX that onnx-tensorrt imports exactly: native nodes, exact respellings, decompositions, plugin nodes."""

    name = "tensorrt"
    suffix = ".onnx"
    default_tail = ".tensorrt.onnx"
    # trt_shapes: the follow-up commands' optimization profile (tools/trt_profile.py)
    takes = frozenset({"trt_shapes", "decompose_gridsample"})

    def policy(self, options: ConvertOptions) -> Policy:
        return Policy(allow_conditional=not options.strict,
                      decompose=frozenset({"gridsample"}) if options.decompose_gridsample else frozenset())

    def rungs(self, kind: str = "resize", policy: Policy | None = None):
        return RUNGS

    def plan(self, model, policy: Policy) -> Plan:
        return plan(model, policy)

    def emit(self, p: Plan) -> PassResult:
        """Rewritten and proven node by node: a node whose rewrite does not prove is refused with the proof's
        reason, like a node no rung takes."""
        return emit(p)

    def refusal(self, result: PassResult) -> BridgeError:
        return RefusedNodes(result.refused, len(result.records))  # nothing is written for such a model

    def prove(self, result: PassResult) -> list[str]:
        return prove(result.model, result.records)

    def lower_file(self, path: str, options: ConvertOptions, whole_model: bool = True) -> PassResult:
        return self(load(path), self.policy(options), whole_model)

    def write(self, result: PassResult, out: str, options: ConvertOptions) -> Written:
        """The model written and proven again from disk; the report: per-node rungs, plugins and their library,
        what is unverified on TensorRT."""
        save(result, out)
        return Written(self.name, out, {"onnx": out}, tuple(result.records), {**report(result.records), "output": out})


TARGET = TensorRTTarget()


def lower(model, *, strict: bool = False) -> PassResult:
    """The proven TensorRT-ready ModelProto and one NodeRecord per resampling node. BridgeError when a node has
    no rung (the reasons) or the model does not prove itself. ``strict``: no exactness that rests on undocumented
    TensorRT behaviour (such nodes take the plugin)."""
    return TARGET(model, Policy(allow_conditional=not strict))


def tensorrt_ready(model, *, strict: bool = False):
    """(ONNX ModelProto that onnx-tensorrt imports exactly, report)."""
    result = lower(model, strict=strict)
    return result.model, report(result.records)


def report(records: list[NodeRecord]) -> dict:
    return {
        # The records as every target writes them (``records_json``), with onnx-tensorrt's verdict beside.
        "nodes": [{**d, "importer": {k: v for k, v in r.extra.get("importer", {}).items() if k != "settings"}}
                  for r, d in zip(records, records_json(records))],
        "plugins": sorted({PLUGIN_OPS[r.ir.kind] for r in records if r.rung == PLUGIN}),
        "plugin_library": PLUGIN_LIBRARY if any(r.rung == PLUGIN for r in records) else None,
        "unverified": sorted({a for r in records for a in r.assumptions}),
    }


def save(result: PassResult, out: str) -> None:
    """Write ``result.model`` to ``out``: staged, re-read and proven again, then renamed into place."""
    write_proven_onnx(result.model, out, lambda written: prove(written, result.records))


__all__ = ["TensorRTTarget", "TARGET", "RefusedNodes", "lower", "lower_checked", "tensorrt_ready", "report", "save"]
