"""IR -> TensorRT: exact IResizeLayer / IGridSampleLayer settings, and ONNX that onnx-tensorrt imports exactly.

* ``lower_settings(ir)`` (``settings``): the IResizeLayer / IGridSampleLayer settings whose parsed IR
  (``translate.tensorrt.parse_settings``) computes the source IR's numbers, or BridgeError naming the fields
  that no setting reproduces.
* ``tensorrt_ready(model)`` / ``lower(model)`` (``target``, on the pass interface of ``lowering.passes``):
  every resampling node rewritten with onnx-graphsurgeon into a form onnx-tensorrt's importer maps exactly, per
  node through the rungs of ``plan`` (1 native, 2 exact respelling or split, 3 the ONNX target's tap-table
  decomposition for static float shapes, 4 plugin node), the written model re-read and proven against the
  source IRs (``prove``).
* ``plugin``: the plugin nodes' op names and attributes (from ``semantics.schema``); ``plugin_build``: the plugin
  library (``build_plugin``: needs TensorRT headers/libs and nvcc).

Nothing here needs TensorRT. The verbs live in tools/: ``check_tensorrt`` (the ``check --target tensorrt`` rows),
``run_tensorrt`` (executing a TensorRT-ready model without TensorRT), ``finish_tensorrt`` (trtexec / polygraphy
commands, ``build_engine``).
"""

from __future__ import annotations

from .compare import compare, importer_verdict
from .plan import DECOMPOSE, NATIVE, PLUGIN, REWRITE, RUNG_NAMES, RUNGS, TENSORRT_COMPUTE, plan_model, plan_node
from .plugin import (PLUGIN_ATTRIBUTES, PLUGIN_DOMAIN, PLUGIN_LIBRARY, PLUGIN_NAMESPACE, PLUGIN_OPS, ir_from_plugin,
                     is_plugin_node, plugin_attributes)
from .plugin_build import build_plugin, build_plugin_command, plugin_library_path
from .prove import prove
from .settings import lower_settings
from .target import TARGET, RefusedNodes, TensorRTTarget, lower, lower_checked, report, save, tensorrt_ready

__all__ = ["lower_settings", "tensorrt_ready", "lower", "lower_checked", "RefusedNodes", "build_plugin",
           "build_plugin_command", "DECOMPOSE", "TENSORRT_COMPUTE", "save", "report", "TensorRTTarget", "TARGET",
           "plan_model", "plan_node", "importer_verdict", "compare", "prove", "plugin_attributes", "ir_from_plugin",
           "is_plugin_node", "plugin_library_path", "PLUGIN_ATTRIBUTES", "PLUGIN_OPS", "PLUGIN_DOMAIN",
           "PLUGIN_NAMESPACE", "PLUGIN_LIBRARY", "RUNG_NAMES", "RUNGS", "NATIVE", "REWRITE", "PLUGIN"]
