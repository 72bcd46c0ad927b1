"""A linear Interpolate of rank 1-3 written over a rank-4 view: leading unit axes added before it (Unsqueeze) and
removed after it (Squeeze), so that OpenVINO's CPU runs its rank-4 code.

Why: OpenVINO's CPU computes a rank 1-3 ``linear_onnx`` / ``linear`` Interpolate wrong on CPUs without AVX2
(measured, 2026.4.1 under ``qemu-x86_64 -cpu Nehalem``, SSE4.2: ``[1, 1, 5]`` x2 half_pixel reads
``[0, 1, 3, 3, 1, 4e-45, ...]``; a TorchScript 1-D ``F.interpolate(mode="linear")`` 3.2 to 1.9e12 off, run to
run), while ranks 4 and 5, nearest and cubic at every rank, and every rank under AVX2 are exact. A leading unit
axis is never resized, so the rank-4 op computes the same numbers: its IR, those axes dropped (``unlifted``), is
what the proof compares with the source IR. Which axes OpenVINO's CPU resizes at each rank (``first_spatial``) lives
here too: the view keeps every resized axis among them."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...semantics.errors import BridgeError
from ...semantics.ir import ResizeIR
from ...semantics.opspec import PerOp
from .graph import ops

# Why a view, in the words convert and check print (one place: ``view_clause``, ``AVX2_ONLY``).
WRONG_WITHOUT_AVX2 = ("OpenVINO's CPU computes a linear Interpolate below rank 4 wrong on SSE4.2-only CPUs, measured "
                      "under qemu -cpu Nehalem")
AVX2_ONLY = "the CPU it runs on has AVX2: " + WRONG_WITHOUT_AVX2  # check's condition on the importer's op
VIEW_RANK = 4  # the lowest rank at which OpenVINO's CPU computes linear Interpolate right on SSE4.2


def first_spatial(rank: int) -> int:
    """The first axis OpenVINO's CPU Interpolate resizes linear / cubic on at this rank. Measured (2026.4.1, sizes
    fed at run time, each axis x2 and x0.5 alone): rank 4 linear on axis 0 and rank 5 on axes 0 and 1 throw at
    inference ("only supports resize on spatial dimensions"); rank 4 cubic on axis 1 and rank 3 cubic on axis 0
    compute garbage (values near 1e35: a read out of bounds); every axis from this one is exact at ranks 1-5."""
    return {1: 0, 2: 0, 3: 1}.get(rank, 2)


def leading_units(ir: ResizeIR) -> int:
    """How many unit axes to add in front of ``ir``'s input before its Interpolate (0: written as it is): up to
    rank 4, and more where a resized axis would otherwise land before the spatial ones (rank 3 on axis 0)."""
    if ir.sampler.kind != "linear" or ir.rank >= VIEW_RANK:
        return 0
    spatial = first_spatial(VIEW_RANK)
    return max(VIEW_RANK - ir.rank, spatial - min(ir.axes, default=spatial))


# Per op: GridSample-9 and DeformableConvolution-8 are 4-D ops of their own (no rank below 4 to view).
LEADING_UNITS = PerOp("leading_units", resize=leading_units, gridsample=lambda ir: 0, deformconv=lambda ir: 0)


def view_clause(ir: ResizeIR, k: int) -> str:
    """The clause a written node's reason ends with when it is written over a view."""
    if k == 0:
        return ""
    return f", over a rank-{ir.rank + k} view ({k} leading unit {'axes' if k > 1 else 'axis'}: {WRONG_WITHOUT_AVX2})"


def unlifted(got: ResizeIR, k: int) -> ResizeIR:
    """The IR of an Interpolate read over a view with ``k`` leading unit axes, as the IR of the op it stands
    for: those axes dropped. A leading axis listed must keep its length 1 (a constant listing every axis lists
    them at scale / length 1); one resized, padded or not of length 1 is not a view: refused."""
    if k == 0:
        return got
    r = got.rank - k
    shape = got.input_shape
    keep = [i for i, a in enumerate(got.axes) if a >= k]
    dropped = [i for i, a in enumerate(got.axes) if a < k]
    if r < 1 or (shape is not None and any(d not in (1, None) for d in shape[:k])) or \
            any(got.pads[:k]) or any(got.pads[got.rank:got.rank + k]) or \
            any(not _keeps_unit(got, i) for i in dropped):
        raise BridgeError(f"the Interpolate is not over a view with {k} leading unit axes", field="rank")
    return dataclasses.replace(
        got, rank=r, axes=tuple(got.axes[i] - k for i in keep),
        scales=_at(got.scales, keep), sizes=_at(got.sizes, keep),
        roi=None if got.roi is None else _at(got.roi[:len(got.axes)], keep) + _at(got.roi[len(got.axes):], keep)
        if isinstance(got.roi, tuple) else got.roi,
        input_shape=None if shape is None else tuple(shape[k:]),
        pads=got.pads[k:got.rank] + got.pads[got.rank + k:] if got.pads else (),
        scales_from_sizes=tuple(a - k for a in got.scales_from_sizes if a >= k))


def _keeps_unit(got: ResizeIR, i: int) -> bool:
    """The ``i``-th listed axis (length 1 in a view) keeps length 1: scale 1, or size 1."""
    values = got.sizes if isinstance(got.sizes, tuple) else got.scales
    return isinstance(values, tuple) and values[i] == 1


def _at(values, keep: list):
    """A per-listed-axis value (scales, sizes) at the kept positions; a run-time value or None as it is."""
    return tuple(values[i] for i in keep) if isinstance(values, tuple) else values


def lifted_attrs(attrs: dict, k: int) -> dict:
    """Interpolate ``attrs`` (``interpolate.build``) for the input with ``k`` unit axes in front; a constant
    listing every axis (no axes input) lists the new ones at scale / length 1."""
    if k == 0:
        return attrs
    if attrs.get("axes") is not None:
        return dict(attrs, axes=[a + k for a in attrs["axes"]])
    return dict(attrs, values=[1.0 if attrs["calc"] == "scales" else 1] * k + list(attrs["values"]))


def viewed(x, k: int):
    """``x`` with ``k`` unit axes in front (an Unsqueeze: the same elements in the same order); 0: ``x``."""
    return ops().unsqueeze(x, ops().constant(np.arange(k, dtype=np.int64))).output(0) if k else x


def unviewed(y, k: int):
    """``y`` with its ``k`` leading unit axes removed again; 0: ``y``."""
    return ops().squeeze(y, ops().constant(np.arange(k, dtype=np.int64))).output(0) if k else y


def view_proof(k: int) -> dict:
    """What a Candidate's proof records of the view (``prove`` reads it back with ``view_of``): nothing at none."""
    return {"view": k} if k else {}


def view_of(op, k: int) -> str | None:
    """None if the produced Interpolate ``op`` reads an input with ``k`` leading unit axes and its output loses
    them again before anything else reads it (the written form, maybe an Unsqueeze / Squeeze that OpenVINO
    turned into a Reshape), else what is wrong."""
    shape = op.get_input_partial_shape(0)
    if shape.rank.is_dynamic or shape.rank.get_length() < k or \
            any(not (shape[i].is_static and shape[i].get_length() == 1) for i in range(k)):
        return f"its input is not a view with {k} leading unit axes"
    readers = [t.get_node() for t in op.output(0).get_target_inputs()]
    if not readers or any(r.get_type_name() not in ("Squeeze", "Reshape") or
                          r.get_output_partial_shape(0).rank.get_length() != shape.rank.get_length() - k
                          for r in readers):
        return f"its output is read before its {k} leading unit axes are removed"
    return None
