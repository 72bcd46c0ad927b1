"""OpenVINO -> IR: Interpolate (1, 4, 11), GridSample-9, DeformableConvolution (1, 8).

The IR is what OpenVINO 2026.4's CPU plugin *computes* (f32 inference precision), each rule confirmed by
running the op on CPU against the oracle (``tests/translate/test_openvino_fidelity.py``). The rules live beside
their readers: ``openvino_interpolate`` (Interpolate), ``openvino_grid`` (GridSample-9,
DeformableConvolution); loading and node access (parameters folded as the CPU folds them) in
``openvino_nodes``. This module is the one the rest of the code imports.

Element types (``dtype_reason``): float16 is computed in float32 and rounded once; float64 GridSample linear /
cubic in float32, within the policy's bound; 8-bit nearest is a gather; int32 goes through float32; the other
rows are beside the function, each measured.

``openvino`` is imported inside functions only (``openvino_nodes``), so this module imports without it.
"""

from __future__ import annotations

from typing import Any

from ..semantics.errors import BridgeError
from ..semantics.vocab import OPENVINO_RESAMPLING_OPS
from .dtypes import OPENVINO as OPENVINO_DTYPES
from .openvino_grid import parse_deformconv, parse_gridsample
from .openvino_interpolate import parse_interpolate
from .openvino_nodes import load, node_name, op_version  # noqa: F401 (op_version: public here as before)

RESAMPLING_OPS = OPENVINO_RESAMPLING_OPS  # _PARSERS' keys


# ----------------------------------------------------------------------------------------------------------
# Element types: what the CPU plugin computes for each (measured; the table and why: translate/dtypes.py)

_FLOATS = OPENVINO_DTYPES["floats"]
_INTERPOLATE_GATHER_EXACT = OPENVINO_DTYPES["interpolate_gather_exact"]
_GRIDSAMPLE_GATHER_EXACT = OPENVINO_DTYPES["gridsample_gather_exact"]
_GRIDSAMPLE_F32_BOUND = OPENVINO_DTYPES["gridsample_float32_within_bound"]


def dtype_reason(op: str, sampler_kind: str, dtype: str | None, fixed_point: bool = False) -> str | None:
    """None where OpenVINO CPU's ``op`` ("Interpolate" / "GridSample") computes the oracle's numbers for
    ``dtype`` (bit-exact for integers, float tolerance for float16), else why not -- one sentence.
    ``fixed_point``: the node is onnxruntime's 8-bit antialias resampler (``ResizeIR.integer_rounding``)."""
    if fixed_point:
        return "OpenVINO's Interpolate resamples uint8 antialias from float weights, rounded once (measured up to " \
               "164 off), where onnxruntime and PyTorch round each axis in 8-bit fixed point"
    dtype = str(dtype)
    if dtype in _FLOATS:
        return None
    if op == "GridSample" and dtype in _GRIDSAMPLE_F32_BOUND:
        return None  # computed in float32: within the policy's float32 bound (translate/dtypes.py)
    exact_gather = _INTERPOLATE_GATHER_EXACT if op == "Interpolate" else _GRIDSAMPLE_GATHER_EXACT
    if sampler_kind == "nearest" and dtype in exact_gather:
        return None
    if op == "Interpolate" and dtype not in ("uint8", "int8", "int32", "int64"):
        return f"OpenVINO's Interpolate does not accept {dtype} input"
    if dtype not in ("uint8", "int8", "int16", "int32", "int64") or (sampler_kind == "nearest" and op != "Interpolate"):
        return f"OpenVINO's CPU {op} is not known to compute {dtype} {sampler_kind} exactly (the CPU runs " \
               f"64-bit types as 32-bit)"
    if dtype in ("int32", "int64") or (op == "GridSample" and dtype == "int16"):
        return f"OpenVINO's CPU {op} computes {dtype} {sampler_kind} through float32 (values above 2^24 " \
               f"lose their low bits) or with its own rounding"
    return f"OpenVINO's CPU {op} rounds {dtype} {sampler_kind} with float32 weights: results at or near " \
           f"an exact half come out one off"


# ----------------------------------------------------------------------------------------------------------

_PARSERS = {"Interpolate": parse_interpolate, "GridSample": parse_gridsample,
            "DeformableConvolution": parse_deformconv}


def is_resampling(op) -> bool:
    """A resampling op (``RESAMPLING_OPS``, which ``parse_node`` reads): the one test walks over a model use."""
    return op.get_type_name() in RESAMPLING_OPS


def parse_node(node) -> Any:
    """The IR of one OpenVINO op node (Interpolate-1/4/11, GridSample-9, DeformableConvolution-1/8)."""
    kind = node.get_type_name()
    if kind not in _PARSERS:
        raise BridgeError(f"{kind} is not a resampling op ({', '.join(RESAMPLING_OPS)} are)",
                          node_name(node), "type")
    try:
        return _PARSERS[kind](node)
    except BridgeError as e:
        raise e.at(node_name(node)) from None


def parse_model(model_or_path) -> list[tuple[str, Any]]:
    """``[(friendly_name, ir), ...]`` in topological order for every resampling op of the model."""
    model = load(model_or_path)
    return [(node_name(op), parse_node(op)) for op in model.get_ordered_ops() if is_resampling(op)]


__all__ = ["parse_model", "parse_node", "is_resampling", "load", "RESAMPLING_OPS"]
