"""The tolerance policy: how far a computed array may stand from the oracle's (or a reference runtime's) and
still count as the same numbers. Integers and bools are bit-exact everywhere; floats get a tolerance.

This module is the policy's one home: the OpenVINO proof (``lowering/openvino/probe.py``, ``frontend.py``), the
ONNX target's proof (``lowering/onnx/prove.py``), ``verify``, ``check`` and the report take their values from
here. The uses still hold different values (a later change unifies them); each is a named entry below that
says which use takes it and why. Pairs are (atol, rtol) throughout. Imports numpy and the semantics package.

The policy issue 21 decided (the callers move to it next): exact, for floats, is within the forward error bound
of a float32 evaluation of the spec's formula, per element (``float_bound``, computed by
``semantics/error_bound.py``; compared by ``compare.within_bound``). Integers and nearest stay bit-exact."""

from __future__ import annotations

import numpy as np

from . import error_bound

# verify's report threshold, the default of ``compare``: float32 rounding of a weighted sum, with atol per unit
# of the data's magnitude (``compare`` scales it by max(1, max|want|)).
FLOAT = (1e-5, 1e-4)
# verify's report threshold for float16 outputs: a few of its ulps (2^-11 relative) at unit magnitude.
FLOAT16_REPORT = (1e-2, 1e-3)
# The OpenVINO ladder's proof for float16: two ulps (2^-9 relative), tighter than verify's report threshold
# because a rung is taken on this proof alone.
FLOAT16_PROOF = (2.0**-9, 2.0**-9)
# The ONNX target's proof (onnxruntime running the written node against the oracle), per input dtype; atol is
# scaled by the input's magnitude (``onnx_proof_tolerance``), not the output's.
ONNX_PROOF = {"float32": (1e-6, 1e-5), "float16": (1e-3, 1e-3), "float64": (1e-9, 1e-9)}
# The ONNX target's proof: a Resize left to onnxruntime computes coordinates in float32, each off by a few ulps
# of its magnitude (2^-21 per unit of coordinate reach, times the input's range).
ONNX_COORDINATE_ULPS = 2.0**-21
# ``check --target openvino``'s verdict on the importer's output: FLOAT's values, with atol absolute and rtol per
# unit of max|want| for the node as a whole (exact / silently different), per element for its tie indices.
CHECK = FLOAT
# The report's heatmaps: errors below this share of max(1, max|exact|) stay dark (float32 rounding noise).
REPORT_FLOOR = FLOAT[1]


# The bound's absolute floor: a few float32 subnormals' worth (2^-126 is the smallest normal), so that an
# implementation that flushes subnormal products to zero is not refused on values that are 0 to float32.
BOUND_FLOOR = 16 * 2.0**-126


def float_bound(ir, *inputs) -> np.ndarray:
    """Per output element: how far a float32 evaluation of ``ir``'s formula may land from the oracle's output
    on these inputs (the oracle's inputs, in ``reference.run``'s order); 0 for integers and nearest."""
    return error_bound.bound(ir, *inputs)


def default_tolerance(dtype) -> tuple[float, float]:
    """(atol, rtol) of ``verify`` (and ``compare``'s default): FLOAT for floats, FLOAT16_REPORT for float16,
    bit-exact for integers and bools."""
    dt = np.dtype(dtype)
    if dt == np.float16:
        return FLOAT16_REPORT
    if np.issubdtype(dt, np.floating):
        return FLOAT
    return 0.0, 0.0


def proof_tolerance(dtype) -> tuple[float, float]:
    """(atol, rtol) of the OpenVINO ladder's proof by numbers: ``default_tolerance`` except float16, held to
    FLOAT16_PROOF."""
    if np.dtype(dtype) == np.float16:
        return FLOAT16_PROOF
    return default_tolerance(dtype)


def onnx_proof_tolerance(x: np.ndarray, coordinate_reach: float = 0.0) -> tuple[float, float]:
    """(atol, rtol) of the ONNX target's proof on one probe input ``x``: float rounding scales with the inputs,
    not the outputs, so atol is per unit of max(1, max|x|); ``coordinate_reach`` (the sum over resized axes of
    the largest coordinate magnitude plus one, for coordinates computed in float32) adds their rounding times
    the input's range."""
    atol, rtol = ONNX_PROOF.get(x.dtype.name, (0, 0))
    if x.dtype.kind != "f":
        return atol, rtol
    atol *= max(1.0, float(np.abs(x).max()))
    if coordinate_reach:
        atol += ONNX_COORDINATE_ULPS * coordinate_reach * float(np.ptp(x.astype(np.float64)))
    return atol, rtol


def report_floor(exact: np.ndarray) -> float:
    """The error the report's heatmaps start at (REPORT_FLOOR of the exact output's magnitude)."""
    return REPORT_FLOOR * max(1.0, float(np.abs(exact).max(initial=0)))


__all__ = ["FLOAT", "FLOAT16_REPORT", "FLOAT16_PROOF", "ONNX_PROOF", "ONNX_COORDINATE_ULPS", "CHECK", "REPORT_FLOOR",
           "BOUND_FLOOR", "float_bound", "default_tolerance", "proof_tolerance", "onnx_proof_tolerance", "report_floor"]
