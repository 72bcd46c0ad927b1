"""The TensorRT target's rung numbers and names and the decomposition's compute dtypes: what the plan
(``plan``) decides with and the rewrite (``rewrite``) writes with."""

from __future__ import annotations

from ..passes import BUILTIN, CUSTOM, DECOMPOSE, REWRITE

NATIVE, PLUGIN = BUILTIN, CUSTOM
# Named as on every target (lowering/passes.py): native = onnx-tensorrt maps the node as it is.
RUNG_NAMES = {NATIVE: "native", REWRITE: "native after exact rewrite", DECOMPOSE: "decomposition",
              PLUGIN: "plugin"}
# The decomposition's dtype policy on TensorRT (no float64 tensors): float32 in float32, float16 computed in
# float32 and cast back (as the oracle). Integer dtypes are absent: their exact rounding needs float64.
TENSORRT_COMPUTE = {"float32": "float32", "float16": "float32"}

__all__ = ["NATIVE", "PLUGIN", "REWRITE", "DECOMPOSE", "RUNG_NAMES", "TENSORRT_COMPUTE"]
