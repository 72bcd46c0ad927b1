"""The OpenVINO ladder of each IR kind on the pass interface (``lowering.passes``), and ``lower`` for one node.

Resize: native Interpolate (1), Interpolate after an exact rewrite (2), decomposition (3: tap tables for
static shapes, nearest's integer index form for run-time lengths), extension (4). GridSample: GridSample-9 (1),
extension (4). DeformConv: DeformableConvolution-8 + Add (2), extension (4). Every candidate is proven by numbers against the oracle before it is taken (``probe``). The
extension is the last resort; a native op exact only under run-time conditions is taken before it only with
``--allow-conditional`` (``policy_for``; never with ``--strict``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...semantics.errors import BridgeError
from ...semantics.ir import DeformConvIR, GridSampleIR, ResizeIR
from ..passes import BUILTIN, CUSTOM, DECOMPOSE, REWRITE, Candidate, NodeRecord, Policy, Refusal, Rung, climb, \
    rung_names, take
from . import builtin, cost, decompose, extension, interpolate, nearest_index
from .probe import proven

TARGET = "openvino"
NATIVE, EXTENSION = BUILTIN, CUSTOM
RUNG_NAMES = rung_names("extension")


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
    user_strict: bool = False  # --strict itself (``strict`` is also set when the policy declines conditions)
    tried: list = field(default_factory=list)  # the record's (rung, name, why) of the rungs asked so far

    def refuse(self, reason: str, *, decisive: bool = False) -> Refusal:
        """A refusal; ``decisive``: it, not a later rung's, says why the node goes to the extension."""
        if decisive and self.why_custom is None:
            self.why_custom = reason
        return Refusal(reason)


def policy_for(fallback: str = "decompose", strict: bool = False, allow_conditional: bool = False,
               prefer: str = "builtin") -> Policy:
    """``--fallback extension`` starts at rung 4. By default only candidates exact for every run-time value are
    taken; ``allow_conditional`` (``--allow-conditional``) also takes one exact under stated run-time conditions
    (recorded, and written into the model's rt_info); ``--strict`` declines conditions and assumptions whatever
    ``allow_conditional`` says. ``prefer="fastest"``: a Resize takes the extension instead of the exact rung the
    ladder chose where the cost model (``cost``) estimates it faster by a margin."""
    return Policy(allow_conditional=bool(allow_conditional) and not strict,
                  floor=EXTENSION if fallback == "extension" else NATIVE, prefer=prefer)


def _rung(number: int, lower) -> Rung:
    """A rung whose candidates are proven by numbers (``probe``) before ``climb`` sees them."""
    return proven(Rung(number, RUNG_NAMES[number], lower))


def _why_custom(node) -> str | None:
    """The reason the node needs the extension, in the words of the policy in force (the Interpolate rung
    words a declined condition as --strict's; without --allow-conditional the default policy declined it)."""
    why = node.why_custom
    if why and why.startswith("--strict: ") and not node.user_strict:
        why = "needs --allow-conditional: " + why[len("--strict: "):]
    return why


def _extension(own=lambda node: None) -> Rung:
    """Rung 4. Its printed reason: the rung's own (``own(node)``: what no built-in op of the kind has), else the
    decisive refusal, else what the lower rungs said, else ``--fallback extension`` (nothing lower was asked).
    An element type the extension cannot compute exactly is refused here, with the field."""
    def lower(node):
        from .. import compiled

        x = node.inputs[0]
        dtype = x.get_element_type().to_dtype() if hasattr(x, "get_element_type") else None
        bad = None if dtype is None else compiled.extension_dtype_refusal(node.ir, dtype)
        if bad is not None:
            return Refusal(bad, "dtype")
        why = own(node) or _why_custom(node) or (refusal_text(node.tried) if node.tried else extension.FALLBACK)
        return extension.lower(node, why)
    return _rung(EXTENSION, lower)


def _decomposition(node):
    """Rung 3: the static tap tables; where lengths are known only at run time, nearest's integer index form
    instead (one refusal naming both when neither applies)."""
    got = decompose.rung(node)
    if not isinstance(got, Refusal) or not nearest_index.applies(node):
        return got
    other = nearest_index.rung(node)
    return other if not isinstance(other, Refusal) else Refusal(f"{got.reason}; {other.reason}",
                                                                   other.field or got.field)


LADDERS = {
    "resize": (_rung(NATIVE, interpolate.native), _rung(REWRITE, interpolate.rewrite),
               _rung(DECOMPOSE, _decomposition), _extension()),
    "gridsample": (_rung(NATIVE, builtin.gridsample),
                   _extension(lambda n: builtin.gridsample_native_reason(n.ir))),
    "deformconv": (_rung(REWRITE, builtin.deformconv),
                   _extension(lambda n: builtin.deformconv_rewrite_reason(n.ir))),
}


def lower(name: str, ir, inputs: list, *, fallback: str = "decompose", strict: bool = False,
          policy: Policy | None = None):
    """Lower one node. ``inputs`` are OpenVINO outputs in ONNX order (None for omitted optional inputs).
    Returns (list of outputs, NodeRecord); BridgeError naming the node when no rung takes it."""
    if not isinstance(ir, (ResizeIR, GridSampleIR, DeformConvIR)):
        raise BridgeError(f"cannot lower {type(ir).__name__}", name)
    policy = policy or policy_for(fallback, strict)
    node = Node(name, ir, list(inputs), strict=not policy.allow_conditional, user_strict=strict)
    record = NodeRecord(name, ir.origin, ir, TARGET)
    node.tried = record.tried
    chosen = climb(LADDERS[ir.kind], node, record, policy, last_resort=EXTENSION)
    if chosen is None:
        refusal = node.refusal or Refusal(refusal_text(record.tried), "rung")
        raise BridgeError(refusal.reason, name, refusal.field)
    if policy.prefer == "fastest" and ir.kind == "resize" and record.rung != EXTENSION and not record.conditions:
        chosen = _fastest(node, record, chosen)
    return chosen.produced, record


def _fastest(node, record, chosen):
    """The extension instead of ``chosen`` where the cost model estimates it faster (its proof by numbers runs
    as on the ladder); the rung given up is kept in ``record.tried`` with the estimate."""
    why = cost.faster_extension(node, record)
    if why is None:
        return chosen
    rung = LADDERS["resize"][-1]
    got = rung.lower(node)
    if isinstance(got, Refusal):
        record.extra["cost"]["extension_refused"] = got.reason
        return chosen
    record.tried.append((record.rung, record.rung_name, "exact, but estimated slower (--prefer fastest)"))
    take(record, rung, Candidate(got.produced, f"{got.reason.split(': ', 1)[0]}: {why}", proof=got.proof))
    return got


def refusal_text(tried: list, limit: int = 230) -> str:
    """Why no rung took the node, on one short line: rungs refused for the same reason share it; past
    ``limit`` characters only the last two rungs (the decisive ones: decomposition / extension) are named."""
    groups: list = []  # [names, why]
    for _, name, why in tried:
        if groups and groups[-1][1] == why:
            groups[-1][0].append(name)
        else:
            groups.append([[name], why])
    parts = [f"{', '.join(names)}: {why}" for names, why in groups]
    text = "; ".join(parts)
    if len(text) > limit:
        each = limit // min(2, len(parts)) - 2
        text = "; ".join(p if len(p) <= each else p[:each - 3].rstrip() + "..." for p in parts[-2:])
    return text or "no rung applies"
