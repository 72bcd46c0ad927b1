"""What the ONNX parsers (``onnx_ops``, ``onnx_grid_ops``) share: the conventions and reading a string attribute
with its allowed values."""

from __future__ import annotations

from ..semantics.errors import BridgeError, clip

# Where the ONNX spec text (as onnxruntime, OpenVINO and PyTorch compute it) and onnx.reference with its
# conformance data disagree, "spec" follows the text and the runtimes, "reference" the reference evaluator:
# the output length in align_corners-type formulas (integer vs fractional L*s), pytorch_half_pixel at output
# length 1 (0 vs -1/2), and axes that are not resized (copied vs sent through the coordinate map).
CONVENTIONS = ("spec", "reference")
DEFAULT_CONVENTION = "spec"


def attr_text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def choice(attrs: dict, name: str, default: str, allowed, node_name: str) -> str:
    """String attribute ``name`` (``default`` when absent), refused in one line unless one of ``allowed``."""
    v = attr_text(attrs.get(name, default))
    if v not in allowed:
        raise BridgeError(f"unknown value '{clip(v, 24)}'; expected one of {', '.join(allowed)}", node_name, name)
    return v
