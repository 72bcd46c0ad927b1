"""The portable ONNX target (``convert --target onnx``): resampling nodes rewritten so that any conforming ONNX
runtime computes the source IR's numbers, on the shared pass interface (``lowering/passes.py``).

Rungs: (1) the node as it is, where onnxruntime's semantics of it equal the source IR; (2) a Resize respelling
judged the same way; (3) for static shapes, the exact tap-table decomposition in plain ONNX ops
(``decompose_resize``, reused by the TensorRT target with its own dtype policy), and for nearest with lengths known
only at run time the integer index form (``nearest_index.py``); a GridSample onnxruntime does not run exactly as
the in-graph sampler for run-time grids (``gridsample_decompose.py``). Each lowered node is proven
by re-reading the written model and by probe runs on onnxruntime against the oracle (``prove.py``).
"""

from .decompose import PORTABLE, check_decomposable, decompose_resize
from .prove import prove_tables
from .target import DEFAULT_POLICY, OnnxTarget, convert, convert_to_onnx, format_convert_onnx, write_proven

__all__ = ["OnnxTarget", "convert", "convert_to_onnx", "format_convert_onnx", "decompose_resize",
           "check_decomposable", "prove_tables", "write_proven", "PORTABLE", "DEFAULT_POLICY"]
