"""IR -> TensorRT: exact IResizeLayer / IGridSampleLayer settings, and ONNX that onnx-tensorrt imports exactly.

* ``lower_settings(ir)`` (``settings``): the IResizeLayer / IGridSampleLayer settings whose parsed IR
  (``translate.tensorrt.parse_settings``) computes the source IR's numbers, or BridgeError naming the fields
  that no setting reproduces.
* ``tensorrt_ready(model)`` / ``lower(model)`` (``target``, on the pass interface of ``lowering.passes``):
  every resampling node rewritten with onnx-graphsurgeon into a form onnx-tensorrt's importer maps exactly, per
  node through the rungs of ``plan`` (1 native, 2 exact respelling or split, 3 the ONNX target's tap-table
  decomposition for static float shapes, 4 plugin node), the written model re-read and proven against the
  source IRs (``prove``).
* ``plugin``: the plugin nodes' op names and attributes (from ``semantics.schema``); ``engine``: the plugin
  library (``build_plugin``: needs TensorRT headers/libs and nvcc), trtexec / polygraphy commands and
  ``build_engine`` (needs TensorRT); ``check``: the ``check --target tensorrt`` rows and texts; ``run``:
  executing a TensorRT-ready model without TensorRT.

TensorRT itself is imported lazily and only by ``build_engine``; everything else runs without it.
"""

from __future__ import annotations

from .check import check_rows, conformance_rows, format_check, format_conformance_table, format_convert
from .compare import compare, importer_verdict
from .engine import (build_engine, build_plugin, build_plugin_command, finish, plugin_library_path,
                     polygraphy_command, tensorrt_available, trtexec_command)
from .plan import DECOMPOSE, NATIVE, PLUGIN, REWRITE, RUNG_NAMES, RUNGS, TENSORRT_COMPUTE, plan_model, plan_node
from .plugin import (PLUGIN_ATTRIBUTES, PLUGIN_DOMAIN, PLUGIN_LIBRARY, PLUGIN_NAMESPACE, PLUGIN_OPS, ir_from_plugin,
                     is_plugin_node, plugin_attributes)
from .prove import prove
from .run import run_tensorrt_ready
from .settings import lower_settings
from .target import TARGET, RefusedNodes, TensorRTTarget, lower, lower_checked, report, save, tensorrt_ready

__all__ = ["lower_settings", "tensorrt_ready", "lower", "lower_checked", "RefusedNodes", "build_plugin",
           "build_plugin_command", "DECOMPOSE", "TENSORRT_COMPUTE", "save", "report", "TensorRTTarget", "TARGET",
           "plan_model",
           "plan_node", "importer_verdict", "compare", "prove", "plugin_attributes", "ir_from_plugin",
           "is_plugin_node", "build_engine", "finish", "trtexec_command", "polygraphy_command",
           "plugin_library_path", "tensorrt_available", "check_rows", "format_check", "format_convert",
           "conformance_rows", "format_conformance_table", "run_tensorrt_ready", "PLUGIN_ATTRIBUTES", "PLUGIN_OPS",
           "PLUGIN_DOMAIN", "PLUGIN_NAMESPACE", "PLUGIN_LIBRARY", "RUNG_NAMES", "RUNGS", "NATIVE", "REWRITE",
           "PLUGIN"]
