"""The OpenVINO ladder of each IR kind on the pass interface (``lowering.passes``), and ``lower`` for one node.

Resize: native Interpolate (1), Interpolate after an exact rewrite (2), tap-table decomposition (3),
extension (4). GridSample: GridSample-9 (1), extension (4). DeformConv: DeformableConvolution-8 + Add (2),
extension (4). The extension is the last resort: a native op exact only under run-time conditions is taken
before it unless the policy refuses conditions (``--strict``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...semantics.errors import BridgeError
from ...semantics.ir import DeformConvIR, GridSampleIR, ResizeIR
from ..passes import BUILTIN, CUSTOM, DECOMPOSE, REWRITE, NodeRecord, Policy, Refusal, Rung, climb
from . import builtin, decompose, extension, interpolate

TARGET = "openvino"
NATIVE, EXTENSION = BUILTIN, CUSTOM
RUNG_NAMES = {NATIVE: "native", REWRITE: "native after exact rewrite", DECOMPOSE: "decomposition",
              EXTENSION: "extension"}


@dataclass
class Node:
    """One node on its way up the ladder: what every rung reads, and what a rung leaves for later ones."""

    name: str
    ir: Any
    inputs: list  # OpenVINO outputs in ONNX input order, None for omitted optional inputs
    strict: bool = False
    why_custom: str | None = None  # the first decisive refusal: the reason the extension is needed
    not_native: list = field(default_factory=list)  # why each Interpolate candidate failed, in order tried
    candidates: list | None = None  # the Interpolate candidates, computed once for rungs 1 and 2
    refusal: Refusal | None = None  # the extension's refusal, when it cannot be built

    def refuse(self, reason: str, *, decisive: bool = False) -> Refusal:
        """A refusal; ``decisive``: it, not a later rung's, says why the node goes to the extension."""
        if decisive and self.why_custom is None:
            self.why_custom = reason
        return Refusal(reason)


def policy_for(fallback: str = "decompose", strict: bool = False) -> Policy:
    """``--fallback extension`` starts at rung 4; ``--strict`` declines exactness under run-time conditions."""
    return Policy(allow_conditional=not strict, floor=EXTENSION if fallback == "extension" else NATIVE)


def _rung(number: int, lower) -> Rung:
    return Rung(number, RUNG_NAMES[number], lower)


def _extension(why) -> Rung:
    """Rung 4; ``why(node)``: the reason printed for taking it."""
    return _rung(EXTENSION, lambda node: extension.lower(node, why(node)))


LADDERS = {
    "resize": (_rung(NATIVE, interpolate.native), _rung(REWRITE, interpolate.rewrite),
               _rung(DECOMPOSE, decompose.rung),
               _extension(lambda n: n.why_custom or extension.FALLBACK)),
    "gridsample": (_rung(NATIVE, builtin.gridsample),
                   _extension(lambda n: builtin.gridsample_native_reason(n.ir) or extension.FALLBACK)),
    "deformconv": (_rung(REWRITE, builtin.deformconv),
                   _extension(lambda n: builtin.deformconv_rewrite_reason(n.ir) or extension.FALLBACK)),
}


def lower(name: str, ir, inputs: list, *, fallback: str = "decompose", strict: bool = False,
          policy: Policy | None = None):
    """Lower one node. ``inputs`` are OpenVINO outputs in ONNX order (None for omitted optional inputs).
    Returns (list of outputs, NodeRecord); BridgeError naming the node when no rung takes it."""
    if not isinstance(ir, (ResizeIR, GridSampleIR, DeformConvIR)):
        raise BridgeError(f"cannot lower {type(ir).__name__}", name)
    policy = policy or policy_for(fallback, strict)
    node = Node(name, ir, list(inputs), strict=not policy.allow_conditional)
    record = NodeRecord(name, ir.origin, ir, TARGET)
    chosen = climb(LADDERS[ir.kind], node, record, policy, last_resort=EXTENSION)
    if chosen is None:
        refusal = node.refusal or Refusal(record.reason, "rung")
        raise BridgeError(refusal.reason, name, refusal.field)
    return chosen.produced, record
