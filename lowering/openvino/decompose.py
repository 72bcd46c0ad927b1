"""Rung 3: a static-shape Resize as per-axis K-tap Gather / Multiply / ReduceSum with constant tables from
``semantics.taps`` (exact: the tables are the oracle's own), and its proof (the tables re-read from the model)."""

from __future__ import annotations

import numpy as np

from ...semantics.coords import bind_resize
from ...semantics.ir import ResizeIR, has_runtime_params, is_static
from ...semantics.taps import axis_taps
from ..passes import Candidate, Refusal
from .graph import constant_of, consumer, dims, ops, tag


def _to_compute(x):
    """f32 for the arithmetic; remember how to go back to the input's type."""
    import openvino as ov

    et = x.get_element_type()
    if et == ov.Type.f32:
        return x, None
    return ops().convert(x, "f32").output(0), et


def _from_compute(y, et):
    """Back to the input type as ONNX casts: integers round half to even and saturate."""
    if et is None:
        return y
    o = ops()
    if et.is_integral():
        info = np.iinfo(np.dtype(et.to_dtype()))
        y = o.round(y, "half_to_even").output(0)
        y = o.clamp(y, float(info.min), float(info.max)).output(0)
    return o.convert(y, et).output(0)


def _gather_tag(name: str, axis: int) -> str:
    return f"{name}/taps_{axis}/gather"


def decompose_resize(ir: ResizeIR, x, in_shape, name: str = ""):
    """Exact K-tap decomposition for a static input shape (the proof re-reads the tables from the model)."""
    o = ops()
    bound = bind_resize(ir, in_shape)
    y, et = _to_compute(x)
    shape = list(bound.in_shape)
    for ax in bound.axes:
        t = axis_taps(ax, bound.sampler, bound.exclude_outside)
        O, K = t.index.shape
        g = o.gather(y, o.constant(t.index.reshape(-1).astype(np.int64)), o.constant(np.int64(ax.axis)))
        tag(g, _gather_tag(name, ax.axis))
        y = g.output(0)
        if not (K == 1 and np.all(t.weight == 1.0)):
            split = shape[:ax.axis] + [O, K] + shape[ax.axis + 1:]
            y = o.reshape(y, o.constant(np.array(split, dtype=np.int64)), False).output(0)
            wshape = (O, K) + (1,) * (len(shape) - ax.axis - 1)
            w = o.constant(t.weight.reshape(wshape).astype(np.float32))
            w.set_friendly_name(f"{name}/taps_{ax.axis}/weights")
            y = o.multiply(y, w).output(0)
            y = o.reduce_sum(y, o.constant(np.int64(ax.axis + 1)), False).output(0)
        shape[ax.axis] = O
        if t.extrapolate is not None and t.extrapolate.any():
            mshape = (O,) + (1,) * (len(shape) - ax.axis - 1)
            mask = o.constant(t.extrapolate.reshape(mshape))
            y = o.select(mask, o.constant(np.float32(bound.extrapolation_value)), y).output(0)
    return _from_compute(y, et)


def rung(node):
    """Rung 3 for a Resize with static scales/sizes/roi on a static input shape."""
    if has_runtime_params(node.ir):
        return Refusal("the tap tables need the values of scales / sizes / roi")
    x = node.inputs[0]
    shape = dims(x)
    if not is_static(shape):
        return node.refuse(f"input shape {shape} is not static (decomposition needs static shapes)", decisive=True)
    out = decompose_resize(node.ir, x, shape, node.name)
    reason = "per-axis tap tables from the oracle's tap module (Gather/Multiply/ReduceSum)"
    if node.not_native:
        reason += "; no native Interpolate is exact (" + "; ".join(node.not_native[:2]) + ")"
    return Candidate([out], reason, proof={"shape": shape})


def prove(rec, by_tag) -> list[str]:
    """The Gather indices and the Multiply weights that follow it must be the source IR's own tap tables
    (recomputed here from the IR, not taken from the lowering). The frontend renames constants, so the
    weights are found by walking from the tagged Gather: Gather -> Reshape -> Multiply(constant)."""
    bound = bind_resize(rec.ir, rec.proof["shape"])
    out = []
    for ax in bound.axes:
        want = axis_taps(ax, bound.sampler, bound.exclude_outside)
        gather = by_tag.get(_gather_tag(rec.node, ax.axis))
        if gather is None:
            out.append(f"{rec.node}: axis {ax.axis}: no gather in the produced model")
            continue
        idx = constant_of(gather, 1)
        if idx is None or idx.size != want.index.size or not np.array_equal(idx.reshape(want.index.shape),
                                                                              want.index):
            out.append(f"{rec.node}: axis {ax.axis}: gather indices differ from the source IR's taps")
        if want.index.shape[1] == 1 and np.all(want.weight == 1.0):
            continue
        reshape = consumer(gather, "Reshape")
        mul = consumer(reshape, "Multiply") if reshape is not None else None
        w = constant_of(mul, 1) if mul is not None else None
        if w is None or w.size != want.weight.size or w.dtype != np.float32 or \
                not np.array_equal(w.reshape(want.weight.shape), want.weight.astype(np.float32)):
            out.append(f"{rec.node}: axis {ax.axis}: weights differ from the source IR's taps "
                       f"(float32 {'present' if w is not None else 'missing'}"
                       f"{', dtype ' + str(w.dtype) if w is not None else ''})")
    return out
