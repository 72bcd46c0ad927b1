"""The whole-model postcondition's probe inputs (``model_check``): seeded arrays at the model's own shape and, where
a dimension is dynamic, at two more shapes of other aspect ratios and another batch."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..semantics.errors import clip
from ..translate.onnx_shapes import bounds, graph_inputs

# Lengths a dynamic dimension takes in the probes: the model's shape (the probe convention of every verb: 1 for
# batch and channels, 16 elsewhere), then two shapes whose spatial lengths swap their ratio (3:2, 2:3; multiples
# of 32, as strided backbones need) and a batch of 2.
_SPATIAL = ((16, 16), (64, 96), (96, 64))
_BATCH = (1, 2, 1)
MAX_ELEMENTS = 1 << 21  # per input: the probes stay cheap; a shape past it takes the smaller lengths


@dataclass(frozen=True)
class Probe:
    """One set of inputs: the shape of each and the arrays."""

    shapes: dict
    feeds: dict
    scale: int = 1  # the spatial lengths' factor (``probes``)
    index: int = 0  # which of ``probes``' shapes

    def text(self) -> str:
        return ", ".join(f"{clip(k, 40)}{list(v)}" for k, v in self.shapes.items())


def probes(model, seed: int = 0, scale: int = 1) -> list[Probe]:
    """Seeded inputs at the model's shape and, where a dimension is dynamic, at two more; ``scale``: their dynamic
    spatial lengths that many times longer (a model that computes nothing at the first lengths)."""

    inputs = graph_inputs(model)
    out = []
    for k in range(len(_SPATIAL) if dynamic(model) else 1):
        rng = np.random.default_rng(seed + k)
        params: dict = {}
        shapes, feeds = {}, {}
        for vi in inputs:
            dims, _ = _dims(vi)
            shape = []
            for axis, d in enumerate(dims):
                if isinstance(d, int) and d > 0:
                    shape.append(d)
                    continue
                spatial = axis - 2 if axis >= 2 else None
                v = _within(bounds(d), _BATCH[k] if axis == 0 else 1 if axis == 1 else
                            _SPATIAL[k][spatial % 2] * scale)
                shape.append(params.setdefault(d, v) if isinstance(d, str) and d else v)
            if math.prod(shape) > MAX_ELEMENTS:
                shape = [_within(bounds(d), min(s, 16)) if isinstance(d, str) or d is None or d <= 0 else s
                         for s, d in zip(shape, dims)]
            shapes[vi.name] = tuple(shape)
            feeds[vi.name] = _array(vi, shape, rng)
        out.append(Probe(shapes, feeds, scale, k))
    return out


def _within(limits, v: int) -> int:
    """``v`` moved into the bounds ``--input`` gave the dimension (``onnx_shapes.bounds``), if any: a model that
    runs only from some length on is not judged at a length the user ruled out (Deformable DETR at 16 x 16)."""
    if limits is None:
        return v
    lo, hi = limits
    return max(lo, v) if hi is None else min(max(lo, v), hi)


def dynamic(model) -> bool:
    """Whether any graph input of ``model`` has a dimension known only at run time."""
    return any(_dims(vi)[1] for vi in graph_inputs(model))


def _dims(vi) -> tuple[list, bool]:
    """(per dim an int or the symbolic name / None, whether any is dynamic)."""
    t = vi.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else (d.dim_param or None)
            for d in t.shape.dim] if t.HasField("shape") else []
    return dims, any(not isinstance(d, int) for d in dims)


def _array(vi, shape, rng) -> np.ndarray:
    import onnx

    dt = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dt, np.integer):
        return rng.integers(0, 8, shape).astype(dt)
    return rng.uniform(0.0, 1.0, shape).astype(dt)  # image-like values
