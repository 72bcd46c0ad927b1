"""Comparing what TensorRT computes with the source IR: ``compare`` (any two IRs, probing run-time values),
``pass_matches`` (one per-axis pass of a split resize) and ``importer_verdict`` (what onnx-tensorrt builds from a
node, judged)."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np

from ...semantics.coords import bind_resize, exact
from ...semantics.equivalence import diff, same_taps, sizes_as_source_scales
from ...semantics.errors import BridgeError
from ...semantics.ir import ResizeIR, RuntimeValue, has_runtime_params, is_static
from ...semantics.opspec import PerOp
from ...translate import tensorrt as ttrt
from ...translate.onnx_tensorrt import import_node


def _probe_shapes(shape):
    if is_static(shape):
        return [tuple(shape)]
    return [tuple(d if d is not None else p for d in shape) for p in (3, 8, 13)]


def _freeze(ir: ResizeIR, shape, outs_full: list[int] | None, scales_full: list[float] | None) -> ResizeIR:
    """``ir`` with its run-time sizes/scales replaced by the probe's values (full-rank lists mapped onto
    ``ir.axes``)."""
    rep = {}
    if isinstance(ir.sizes, RuntimeValue):
        rep["sizes"] = tuple(outs_full[a] for a in ir.axes)
    if isinstance(ir.scales, RuntimeValue):
        rep["scales"] = tuple(exact(np.float32(scales_full[a])) for a in ir.axes)
    return dataclasses.replace(ir, **rep) if rep else ir


def _resize_probes(src: ResizeIR, shape):
    """(outs_full, scales_full) probe values for run-time sizes / scales of ``src`` on ``shape``."""
    rank = len(shape)
    spatial = [a for a in src.axes][-2:] if len(src.axes) >= 2 else list(src.axes)
    probes = []
    for f in (2, Fraction(17, 10), Fraction(3, 5), Fraction(1, 1)):
        outs = [int(math.floor(shape[a] * f)) if a in spatial else shape[a] for a in range(rank)]
        outs = [max(o, 1) for o in outs]
        scales = [float(f) if a in spatial else 1.0 for a in range(rank)]
        probes.append((outs, scales))
    probes.append(([1 if a in spatial else shape[a] for a in range(rank)], [1.0 / shape[a] if a in spatial else 1.0
                                                                           for a in range(rank)]))
    return probes


def compare(src, got, shape=None) -> tuple[bool, list[str], str | None]:
    """(same numbers?, the differing fields as text, how it was decided). Resize IRs are compared through their
    exact tap tables on the shape (static), or on probe shapes and probe run-time values (then ``how`` says
    so)."""
    if type(src) is not type(got):
        return False, [f"kind: {src.kind} vs {got.kind}"], None
    return _COMPARE.of(src)(src, got, shape)


def _by_fields(src, got, shape=None) -> tuple[bool, list[str], None]:
    d = diff(src, got)
    return d.same, [str(f) for f in d.fields], None


def _by_taps(src: ResizeIR, got: ResizeIR, shape=None) -> tuple[bool, list[str], str | None]:
    """Resize: through the exact tap tables (``compare``)."""
    shape = shape if shape is not None else src.input_shape
    if shape is None:
        return False, ["the input shape is unknown: nothing can be proven"], None
    runtime = has_runtime_params(src, ("scales", "sizes")) or has_runtime_params(got, ("scales", "sizes"))
    if isinstance(src.roi, RuntimeValue):
        return False, ["roi is fed at run time"], None
    how = None
    if runtime or not is_static(shape):
        how = "decided on probe shapes and run-time values"
    for shp in _probe_shapes(shape):
        probes = _resize_probes(src, shp) if runtime else [(None, None)]
        for outs, scales in probes:
            a, b = _freeze(src, shp, outs, scales), _freeze(got, shp, outs, scales)
            try:
                d = diff(a, b, shapes=shp)
            except BridgeError as e:
                return False, [str(e)], how
            if not d.same:
                fields = [str(f) for f in d.fields]
                if how:
                    fields.append(f"(probe: input {shp}" + (f", output lengths {outs}" if outs else "") + ")")
                return False, fields, how
    return True, [], how


_COMPARE = PerOp("TensorRT IR comparison", resize=_by_taps, gridsample=_by_fields, deformconv=_by_fields)


def pass_matches(trt_ir: ResizeIR, tin, want: list, src_bound) -> bool:
    """The pass changes exactly the wanted positions (``want``: [(position, the source's bound axis)]), each
    with the source axis's exact taps."""
    try:
        b = bind_resize(trt_ir, tin)
    except BridgeError:
        return False
    got = {ax.axis: ax for ax in b.axes}
    if set(got) != {pos for pos, _ in want}:
        return False
    return all(same_taps(sax, src_bound, got[pos], b) for pos, sax in want)


def imported_assumptions(imp) -> list[str]:
    """The undocumented rules what the importer built rests on."""
    return ttrt.assumptions(imp.settings) if imp.settings is not None else []


def importer_verdict(view, opset: int, src, shape=None) -> dict:
    """What onnx-tensorrt does with the node: {"verdict": exact | silently different | rejected, "message",
    "fields", "assumptions", "notes", "settings"}. ``assumptions`` lists the undocumented rules the verdict rests
    on (each "unverified on TensorRT")."""
    imp = import_node(view, opset)
    out = {"notes": imp.notes, "settings": imp.settings}
    if imp.rejected:
        return {**out, "verdict": "rejected", "message": imp.message, "quoted": imp.quoted, "stage": imp.stage,
                "fields": [], "assumptions": []}
    assumed = imported_assumptions(imp)
    if imp.ir is None:
        return {**out, "verdict": "silently different", "fields": imp.fields or [], "assumptions": assumed}
    same, fields, how = compare(src, sizes_as_source_scales(imp.ir, src), shape)
    if how:
        out["decided"] = how
    if not same:
        # Only the assumptions that decide a differing field bear on this verdict.
        names = [f.split(":", 1)[0] for f in fields]
        assumed = [t for keys, t in ttrt.keyed_assumptions(imp.settings)
                   if any(k == n or (k == "coordinate map" and n.endswith(k)) for k in keys for n in names)]
    return {**out, "verdict": "exact" if same else "silently different", "fields": fields, "assumptions": assumed}


__all__ = ["compare", "pass_matches", "importer_verdict", "imported_assumptions"]
