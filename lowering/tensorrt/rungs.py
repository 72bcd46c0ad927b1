"""The TensorRT target's rung numbers and names and the decomposition's compute dtypes: what the plan
(``plan``) decides with and the rewrite (``rewrite``) writes with."""

from __future__ import annotations

from ...translate.dtypes import TENSORRT as TENSORRT_DTYPES
from ..passes import BUILTIN, CUSTOM, DECOMPOSE, REWRITE, rung_names

NATIVE, PLUGIN = BUILTIN, CUSTOM
# Named as on every target (lowering/passes.py): native = onnx-tensorrt maps the node as it is.
RUNG_NAMES = rung_names("plugin")
# The decomposition's dtype policy on TensorRT (no float64 tensors; translate/dtypes.py).
TENSORRT_COMPUTE = TENSORRT_DTYPES["decompose"]

__all__ = ["NATIVE", "PLUGIN", "REWRITE", "DECOMPOSE", "RUNG_NAMES", "TENSORRT_COMPUTE"]
