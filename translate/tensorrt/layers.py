"""Live TensorRT layers -> settings -> IR: the only code here that needs the tensorrt package (imported lazily)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...semantics.errors import BridgeError
from .settings import parse_settings


def _import_tensorrt():
    # The one import of the optional tensorrt package: this module must import without it.
    import tensorrt

    return tensorrt


def tensorrt_missing() -> str | None:
    """None when the tensorrt package imports, else why not."""
    try:
        _import_tensorrt()
    except ImportError as e:
        return f"the tensorrt Python package is not installed ({e})"
    return None


def _trt():
    why = tensorrt_missing()
    if why:
        raise BridgeError(why + "; settings_from_layer reads a live layer — pass a settings mapping to "
                                "parse_settings instead")
    return _import_tensorrt()


def _np_dtype(trt, dt) -> str | None:
    try:
        return np.dtype(trt.nptype(dt)).name
    except Exception:
        return None


def settings_from_layer(layer) -> dict:
    """The settings mapping of a live IResizeLayer / IGridSampleLayer (TensorRT Python API)."""
    trt = _trt()
    if layer.type == trt.LayerType.RESIZE:
        layer.__class__ = trt.IResizeLayer
        x = layer.get_input(0)
        s = {"layer": "resize", "input_shape": tuple(x.shape), "dtype": _np_dtype(trt, x.dtype),
             "resize_mode": layer.resize_mode.name, "coordinate_transformation": layer.coordinate_transformation.name,
             "selector_for_single_pixel": layer.selector_for_single_pixel.name,
             "nearest_rounding": layer.nearest_rounding.name, "cubic_coeff": float(layer.cubic_coeff),
             "exclude_outside": bool(layer.exclude_outside)}
        dyn = layer.num_inputs > 1 and layer.get_input(1) is not None
        if dyn:
            s["shape_input"] = layer.get_input(1).name
        else:
            scales = list(layer.scales) if layer.scales is not None else []
            if scales and all(v > 0 for v in scales):
                s["scales"] = scales
            else:
                s["shape"] = tuple(layer.shape)
        return s
    if layer.type == trt.LayerType.GRID_SAMPLE:
        layer.__class__ = trt.IGridSampleLayer
        x, g = layer.get_input(0), layer.get_input(1)
        return {"layer": "grid_sample", "input_shape": tuple(x.shape), "grid_shape": tuple(g.shape),
                "dtype": _np_dtype(trt, x.dtype), "interpolation_mode": layer.interpolation_mode.name,
                "align_corners": bool(layer.align_corners), "sample_mode": layer.sample_mode.name}
    raise BridgeError(f"layer {layer.name!r} is a {layer.type}, not an IResizeLayer or IGridSampleLayer",
                      node=layer.name)


def parse_layer(layer):
    return parse_settings(settings_from_layer(layer))


def parse_network(network) -> list[tuple[str, Any]]:
    """``[(layer name, IR), ...]`` for every resize and grid-sample layer of a live INetworkDefinition."""
    trt = _trt()
    out = []
    for i in range(network.num_layers):
        layer = network.get_layer(i)
        if layer.type in (trt.LayerType.RESIZE, trt.LayerType.GRID_SAMPLE):
            try:
                out.append((layer.name, parse_layer(layer)))
            except BridgeError as e:
                raise e.at(layer.name) from None
    return out


__all__ = ["tensorrt_missing", "settings_from_layer", "parse_layer", "parse_network"]
