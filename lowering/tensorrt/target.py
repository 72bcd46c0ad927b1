"""The TensorRT-ready ONNX target on the pass interface: plan every node (``plan``), refuse the model if a node
has no rung, write the rungs in (``rewrite``), prove the result (``prove``), and ``save`` it atomically."""

from __future__ import annotations

from ...semantics.errors import BridgeError
from ..artifacts import write_proven_onnx
from ..passes import NodeRecord, PassResult, Policy, Target
from .plan import PLUGIN, RUNGS, plan_model
from .plugin import PLUGIN_LIBRARY, PLUGIN_OPS
from .prove import prove
from .rewrite import rewrite


class TensorRTTarget(Target):
    """ONNX that onnx-tensorrt imports exactly: native nodes, exact respellings, plugin nodes."""

    name = "tensorrt"

    def rungs(self, policy: Policy):
        return RUNGS

    def lower_model(self, model, policy: Policy) -> PassResult:
        named, records = plan_model(model, policy=policy)
        refused = [r for r in records if r.refused]
        if refused:  # nothing is written for a model with a node that has no rung
            raise BridgeError("; ".join(f"node {r.node!r}: {r.reason}" for r in refused))
        return PassResult(rewrite(named, records), records)

    def prove(self, result: PassResult) -> list[str]:
        return prove(result.model, result.records)


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
        "nodes": [{"name": r.node, "op": r.op, "rung": r.rung, "rung_name": r.rung_name, "reason": r.reason,
                   "assumptions": r.assumptions,
                   "importer": {k: v for k, v in r.extra.get("importer", {}).items() if k != "settings"},
                   "nodes": r.produced} for r in records],
        "plugins": sorted({PLUGIN_OPS[r.ir.kind] for r in records if r.rung == PLUGIN}),
        "plugin_library": PLUGIN_LIBRARY if any(r.rung == PLUGIN for r in records) else None,
        "unverified": sorted({a for r in records for a in r.assumptions}),
    }


def save(result: PassResult, out: str) -> None:
    """Write ``result.model`` to ``out``: staged, re-read and proven again, then renamed into place."""
    write_proven_onnx(result.model, out, lambda written: prove(written, result.records))


__all__ = ["TensorRTTarget", "TARGET", "lower", "tensorrt_ready", "report", "save"]
