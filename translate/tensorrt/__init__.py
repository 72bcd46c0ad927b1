"""TensorRT -> IR: IResizeLayer / IGridSampleLayer settings (``settings``), the undocumented rules they rest on
(``assumptions``) and live TensorRT layers (``layers``, the only part that needs the tensorrt package).

What onnx-tensorrt's importer builds from an ONNX node is ``translate.onnx_tensorrt``; its names are also
reachable from here, as they were before the split.
"""

from __future__ import annotations

from .assumptions import assumptions, keyed_assumptions
from .layers import parse_layer, parse_network, settings_from_layer, tensorrt_missing
from .settings import (COORD_TRANSFORMS, GRID_CUBIC_A, GRID_NEAREST, GRID_PADDING_ON, PADDING_TO_SAMPLE,
                       RESIZE_MODES, RESIZE_WINDOW, ROUND_MODES, ROUNDING_FROM_IR, ROUNDING_TO_IR, SAMPLE_MODES,
                       SAMPLE_TO_PADDING, SELECTORS, UNVERIFIED, normalize_settings, parse_settings)

_IMPORTER = ("import_node", "Imported", "sizes_name")


def __getattr__(name: str):
    # Lazily: translate.onnx_tensorrt imports this package's settings, so importing it here eagerly would cycle.
    if name in _IMPORTER:
        from .. import onnx_tensorrt

        return getattr(onnx_tensorrt, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["parse_settings", "normalize_settings", "assumptions", "keyed_assumptions", "settings_from_layer",
           "parse_layer", "parse_network", "tensorrt_missing", "import_node", "Imported", "UNVERIFIED",
           "RESIZE_MODES", "COORD_TRANSFORMS", "SELECTORS", "ROUND_MODES", "SAMPLE_MODES", "RESIZE_WINDOW",
           "ROUNDING_TO_IR", "ROUNDING_FROM_IR", "SAMPLE_TO_PADDING", "PADDING_TO_SAMPLE", "GRID_CUBIC_A",
           "GRID_NEAREST", "GRID_PADDING_ON"]
