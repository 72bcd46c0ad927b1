"""IR -> OpenVINO on the pass interface (``lowering.passes``): each resampling node climbs its ladder and gets a
``NodeRecord`` with its rung and the reason for it; every lowered node is proven.

1. native op whose parsed IR equals the source IR (Interpolate-11; GridSample-9 for 4-D grids where the
   padding rule agrees) — ``interpolate``, ``builtin``;
2. native op after an exact rewrite (Interpolate in sizes mode or another coordinate spelling, the pillow
   modes; DeformableConvolution-8 with bilinear_interpolation_pad=true plus an Add for the bias);
3. decomposition into per-axis K-tap Gather / Multiply / Add with constant tables from
   ``semantics.taps`` (static shapes) — ``decompose``;
4. the resample-bridge extension op over the shared C++ kernels — ``extension``.

``ladder`` holds the rungs per IR kind and ``lower`` (one node); ``frontend`` the ONNX-frontend hook
(``conversion_extensions()``, so the rest of a model goes through OpenVINO's own importer); ``prove`` the proof;
``target`` ``convert``; ``write`` the atomic save proven again from disk. A PyTorch program as the source:
``torch_frontend`` the PyTorch-frontend hook (the same ladder per call), ``torch_source`` what the target does with
such a source (converted, then proven against the module in eager PyTorch). The verbs that run a produced model to
judge it live in tools/: ``check_openvino`` (what OpenVINO's own importer does with each node) and
``verify_openvino`` (the converted model run against onnxruntime and the oracle). openvino is imported lazily:
the package imports without it.
"""

from .builtin import deformconv_rewrite_reason, gridsample_native_reason, native_gridsample, rewrite_deformconv
from .decompose import decompose_resize
from .frontend import Planner, conversion_extensions, openvino_error_reason, stamped
from .graph import F32, TAG
from .interpolate import runtime_conditions, ties_text
from .ladder import DECOMPOSE, EXTENSION, LADDERS, NATIVE, REWRITE, RUNG_NAMES, TARGET, Node, lower, policy_for
from .prove import prove
from .target import OPENVINO, OpenVINOTarget, convert
from .write import EXTENSION_NAME, extension_path, save

__all__ = ["deformconv_rewrite_reason", "gridsample_native_reason", "native_gridsample", "rewrite_deformconv",
           "decompose_resize", "Planner", "conversion_extensions", "stamped", "openvino_error_reason", "F32",
           "TAG", "runtime_conditions", "ties_text", "DECOMPOSE", "EXTENSION", "LADDERS", "NATIVE", "REWRITE",
           "RUNG_NAMES", "TARGET", "Node", "lower", "policy_for", "prove", "OPENVINO", "OpenVINOTarget", "convert",
           "EXTENSION_NAME", "extension_path", "save"]
