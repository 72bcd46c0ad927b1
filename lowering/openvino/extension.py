"""Rung 4: the resample-bridge extension op (``lowering/openvino_ext``, built on first use by
``lowering.compiled``), whose attributes are the IR fields; its kernels are tested against the oracle in
tests/lowering/test_kernels.py. It takes what no built-in op computes: 5-D / 1-D GridSample, N-D DeformConv,
padding rules no built-in op has, dynamic shapes, run-time scales/sizes/roi that no Interpolate matches exactly,
and anything under ``--fallback extension``."""

from __future__ import annotations

from ...semantics.errors import BridgeError
from ...semantics.schema import from_attributes
from ..passes import Candidate, Refusal
from .graph import RUNTIME_SOURCES, tag
from ...semantics.equivalence import field_differences
from .. import compiled

FALLBACK = "requested with --fallback extension"


def needs_extension(reason: str, field: str | None = None) -> Refusal:
    """A lower rung's refusal that, not a later rung's, says why the node needs the extension (its reason)."""
    return Refusal(reason, field, facts={"why_custom": reason})


def lower(node, why: str):
    """The extension op for ``node``; ``why``: the reason no lower rung took it. A machine that cannot build
    the extension refuses with both reasons: the node's answer (``final``), with its field."""

    try:
        op = compiled.openvino_node(node.ir, node.inputs)
    except BridgeError as e:
        # What to install first: a long reason after it would push it past a clipped line.
        return Refusal(f"{e.message}; the node needs the resample-bridge OpenVINO extension ({why})",
                       e.field or "rung", final=True)
    tag(op, f"{node.name}/extension")
    return Candidate([op.output(0)], f"resample-bridge extension op: {why}", proof={"op": f"{node.name}/extension"})


def prove(rec, by_tag) -> list[str]:
    """The extension op's attributes, read back into IR, must be the source IR's fields."""

    op = by_tag.get(rec.proof["op"])
    if op is None:
        return [f"{rec.node}: extension op not found in the produced model"]
    got = from_attributes(op.get_type_name(), op.get_attributes())
    bad = []
    for f in field_differences(rec.ir, got):
        if f.name in RUNTIME_SOURCES:
            continue  # the op takes the run-time tensor as an input
        if f.name == "roi" and getattr(rec.ir, "coord", None) != "tf_crop_and_resize":
            continue  # only tf_crop_and_resize reads roi
        if f.name in ("scales", "sizes") and getattr(rec.ir, "axes", None) == () and {f.a, f.b} <= {(), None}:
            continue  # no resized axis reads them (an identity): the attribute text spells () as absent, ""
        if f.name in ("has_bias", "has_mask") and getattr(rec.ir, f.name) == getattr(got, f.name, None):
            continue
        bad.append(f"{rec.node}: extension attribute {f}")
    return bad
