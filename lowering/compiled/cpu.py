"""The CPU launchers: run an IR value with the kernel library, taking exactly the oracle's arguments
(``semantics.reference.run``); float32, float16 and float64, float64 accumulation as the oracle.

The argument checks and the C structs of GridSample / DeformConv / attribute-bound Resize are built here once
and shared with the CUDA launchers (``cuda.py``), which differ only in where the data live.
"""

from __future__ import annotations

import ctypes
import math
from fractions import Fraction

import numpy as np

from ...semantics.coords import BoundAxis, bind_resize
from ...semantics.errors import BridgeError
from ...semantics.ir import DeformConvIR, GridSampleIR, ResizeIR, Sampler
from ...semantics.opspec import PerOp
from ...semantics.reference import deformconv_out_shape, runtime_values
from ...semantics.taps import TapTable, axis_taps
from ...semantics.vocab import (ARITH, DEFORM_BORDERS, GRID_PADDINGS, NEAREST_RULES, PADDING_ON,
                                SAMPLER_KINDS)
from .abi import (Axis, DeformConvParams, GridSampleParams, Number, ResizeSampler, Table, call, dtype_code, i64,
                  ir_text, library, number, ptr, runtime_struct, tensor, tensors)


GRIDSAMPLE_INPUTS = ("X", "grid")
DEFORMCONV_INPUTS = ("X", "W", "offset", "B", "mask")


def _threads(threads: int | None) -> int:
    return 0 if threads is None else int(threads)


def _cubic_a(sampler: Sampler) -> float:
    return float(sampler.cubic_a) if sampler.cubic_a is not None else -0.75


# ----------------------------------------------------------------------------------------------------------
# Resize


def _sampler(sampler: Sampler, exclude_outside: bool) -> ResizeSampler:
    a = sampler.cubic_a if sampler.cubic_a is not None else Fraction(-3, 4)
    return ResizeSampler(SAMPLER_KINDS.index(sampler.kind), int(sampler.antialias), int(exclude_outside),
                         number(a))


def _axis(ax: BoundAxis) -> Axis:
    if ax.valid is not None and ax.valid != (0, ax.in_len - 1):
        raise BridgeError(f"valid range {ax.valid} on axis {ax.axis} is not [0, in_len - 1]", field="roi")
    nearest = NEAREST_RULES.index(ax.nearest) if ax.nearest in NEAREST_RULES[:5] else 0
    return Axis(ax.axis, ax.in_len, ax.out_len, number(ax.a), number(ax.b), number(ax.filter_scale), nearest,
                int(ax.stretch_clamp), int(ax.valid is not None))


def tap_table(axis: BoundAxis, sampler: Sampler, exclude_outside: bool) -> TapTable:
    """The table of one bound axis as the C++ port of ``semantics.taps.axis_taps`` builds it."""
    lib = library()
    ca, cs = _axis(axis), _sampler(sampler, exclude_outside)
    K = lib.rb_tap_count(ctypes.byref(ca), ctypes.byref(cs))
    if K < 1:
        raise BridgeError("the kernel library could not count the taps")
    index = np.zeros((axis.out_len, K), dtype=np.int64)
    weight = np.zeros((axis.out_len, K), dtype=np.float64)
    extrap = np.zeros(axis.out_len, dtype=np.uint8)
    call(lib.rb_build_taps, ctypes.byref(ca), ctypes.byref(cs), K, ptr(index), ptr(weight), ptr(extrap))
    return TapTable(index, weight, extrap.astype(bool) if axis.valid is not None else None)


def bind_native(ir: ResizeIR, in_shape, runtime: dict | None = None):
    """The C++ port of ``bind_resize`` on ``ir``'s attributes: (out_shape, [BoundAxis-like dicts])."""
    lib = library()
    rank = len(in_shape)
    out_shape = np.zeros(rank, dtype=np.int64)
    n_axes = ctypes.c_int32(0)
    axes = (Axis * (rank + 1))()
    call(lib.rb_resize_bind, ir_text(ir), rank, ptr(i64(in_shape)), ctypes.byref(runtime_struct(runtime or {})),
         ptr(out_shape), ctypes.byref(n_axes), axes)

    def value(n: Number):
        return Fraction(n.num, n.den) if n.den > 0 else n.value

    bound = [dict(axis=a.axis, in_len=a.in_len, out_len=a.out_len, a=value(a.a), b=value(a.b),
                  filter_scale=value(a.filter_scale), nearest=NEAREST_RULES[a.nearest],
                  stretch_clamp=bool(a.stretch_clamp), has_valid=bool(a.has_valid)) for a in axes[:n_axes.value]]
    return tuple(int(d) for d in out_shape), bound


def resize_ir_args(ir: ResizeIR, x: np.ndarray, onnx_inputs):
    """(output array, attribute text, rb_resize_runtime) of a resize bound in C++ from the op's attributes."""
    runtime = runtime_values(ir, (x, *onnx_inputs))
    out_shape, _ = bind_native(ir, x.shape, runtime)
    return np.zeros(out_shape, dtype=x.dtype), ir_text(ir), runtime_struct(runtime)


def resize(ir: ResizeIR, x, *onnx_inputs, tables: str = "python", threads: int | None = None) -> np.ndarray:
    """Run a ResizeIR with the kernel library. ``onnx_inputs``: what the node receives after X (roi, scales,
    sizes; or scales for Upsample), as for ``semantics.reference.run``.

    ``tables``: "python" applies ``semantics.taps`` tables to ``bind_resize``'s axes; "native" builds the tables
    in C++ from those bound axes; "ir" does everything in C++ from the op's attributes (binding included), which
    is what the OpenVINO op runs."""
    if tables not in ("python", "native", "ir"):
        raise BridgeError(f"tables must be 'python', 'native' or 'ir', not {tables!r}")
    lib = library()
    x = np.ascontiguousarray(x)
    dtype_code(x, "X")
    if tables == "ir" or (x.dtype == np.uint8 and ir.integer_rounding == "q22_per_axis"):
        # onnxruntime's 8-bit fixed point: its tables are built in C++ from the op (fixed_point.hpp) only
        y, text, rt = resize_ir_args(ir, x, onnx_inputs)
        call(lib.rb_resize_ir, text, ctypes.byref(tensor(x)), ctypes.byref(rt), ctypes.byref(tensor(y)),
             _threads(threads))
        return y
    bound = bind_resize(ir, x.shape, runtime_values(ir, (x, *onnx_inputs)))
    y = np.zeros(bound.out_shape, dtype=x.dtype)
    if y.size == 0 or x.size == 0:
        return y
    pads = i64(bound.pads) if bound.pads else None
    n = len(bound.axes)
    tx, ty = tensor(x), tensor(y)
    if tables == "python":
        keep = []  # the arrays must outlive the call
        arr = (Table * max(n, 1))()
        for i, ax in enumerate(bound.axes):
            t = axis_taps(ax, bound.sampler, bound.exclude_outside)
            idx = np.ascontiguousarray(t.index, dtype=np.int64)
            w = np.ascontiguousarray(t.weight, dtype=np.float64)
            ex = None if t.extrapolate is None else np.ascontiguousarray(t.extrapolate, dtype=np.uint8)
            keep += [idx, w, ex]
            arr[i] = Table(ax.axis, ax.in_len, ax.out_len, idx.shape[1], idx.ctypes.data, w.ctypes.data,
                           None if ex is None else ex.ctypes.data)
        call(lib.rb_resize_tables, ctypes.byref(tx), ctypes.byref(ty), ptr(pads), n, arr,
             float(bound.extrapolation_value), _threads(threads))
    else:
        arr = (Axis * max(n, 1))(*[_axis(ax) for ax in bound.axes])
        cs = _sampler(bound.sampler, bound.exclude_outside)
        call(lib.rb_resize_axes, ctypes.byref(tx), ctypes.byref(ty), ptr(pads), n, arr, ctypes.byref(cs),
             float(bound.extrapolation_value), _threads(threads))
    return y


# ----------------------------------------------------------------------------------------------------------
# GridSample and DeformConv


def gridsample_args(ir: GridSampleIR, x, grid):
    """(X, grid, output array, rb_gridsample_params), checked."""
    x = np.ascontiguousarray(x)
    grid = np.ascontiguousarray(grid)
    dtype_code(grid, "grid", floats_only=True)
    D = ir.spatial_rank
    if D != x.ndim - 2 or grid.ndim != x.ndim or grid.shape[-1] != D or grid.shape[0] != x.shape[0]:
        raise BridgeError(f"X {x.shape} and grid {grid.shape} do not fit a {D}-D GridSample", field="grid")
    if ir.sampler.kind == "nearest" and ir.sampler.nearest not in (None, "half_even"):
        raise BridgeError(f"GridSample nearest rounds half to even; rule {ir.sampler.nearest!r} is not implemented",
                          field="nearest")
    y = np.zeros(x.shape[:2] + grid.shape[1:-1], dtype=x.dtype)
    params = GridSampleParams(SAMPLER_KINDS.index(ir.sampler.kind), GRID_PADDINGS.index(ir.padding),
                              PADDING_ON.index(ir.padding_on), int(ir.align_corners), ARITH.index(ir.arith),
                              _cubic_a(ir.sampler))
    return x, grid, y, params


def gridsample(ir: GridSampleIR, x, grid, threads: int | None = None) -> np.ndarray:
    x, grid, y, params = gridsample_args(ir, x, grid)
    if y.size == 0:
        return y
    inputs, n = tensors((x, grid), GRIDSAMPLE_INPUTS)
    call(library().rb_gridsample, inputs, n, ctypes.byref(params), ctypes.byref(tensor(y)), _threads(threads))
    return y


def deformconv_args(ir: DeformConvIR, x, w, offset, b=None, mask=None):
    """([X, W, offset, B, mask] (None where omitted), output array, rb_deformconv_params), checked."""
    x = np.ascontiguousarray(x)
    dtype_code(x, "X")
    w, offset = (np.ascontiguousarray(a, dtype=x.dtype) for a in (w, offset))
    b = None if b is None else np.ascontiguousarray(b, dtype=x.dtype)
    mask = None if mask is None else np.ascontiguousarray(mask, dtype=x.dtype)
    D = ir.spatial_rank
    if ir.offset_layout != DeformConvIR.offset_layout:
        raise BridgeError(f"offset layout {ir.offset_layout!r} is not the kernels' {DeformConvIR.offset_layout!r}",
                          field="offset_layout")
    if x.ndim != D + 2 or w.ndim != D + 2:
        raise BridgeError(f"X {x.shape} and W {w.shape} do not fit a {D}-D DeformConv", field="X")
    kernel = tuple(w.shape[2:])
    if ir.kernel_shape and tuple(ir.kernel_shape) != kernel:
        raise BridgeError(f"W has kernel {kernel}, the op says {tuple(ir.kernel_shape)}", field="kernel_shape")
    out_sp = deformconv_out_shape(ir, x.shape[2:], kernel)
    K = math.prod(kernel)
    N, OG = x.shape[0], ir.offset_group
    if offset.shape != (N, OG * K * D) + out_sp:
        raise BridgeError(f"offset has shape {offset.shape}, expected {(N, OG * K * D) + out_sp}", field="offset")
    if mask is not None and mask.shape != (N, OG * K) + out_sp:
        raise BridgeError(f"mask has shape {mask.shape}, expected {(N, OG * K) + out_sp}", field="mask")
    if b is not None and b.shape != (w.shape[0],):
        raise BridgeError(f"B has shape {b.shape}, expected {(w.shape[0],)}", field="B")
    if any(o <= 0 for o in out_sp):
        raise BridgeError(f"output spatial shape {out_sp} is empty", field="pads")
    y = np.zeros((N, w.shape[0]) + out_sp, dtype=x.dtype)
    geometry = [i64(v) for v in (ir.strides, ir.pads, ir.dilations)]
    params = DeformConvParams(*[ptr(g) for g in geometry], ir.group, ir.offset_group,
                              SAMPLER_KINDS.index(ir.sampler.kind), DEFORM_BORDERS.index(ir.border),
                              _cubic_a(ir.sampler))
    params._keep = geometry
    return [x, w, offset, b, mask], y, params


def deformconv(ir: DeformConvIR, x, w, offset, b=None, mask=None, threads: int | None = None) -> np.ndarray:
    arrays, y, params = deformconv_args(ir, x, w, offset, b, mask)
    if y.size == 0:
        return y
    inputs, n = tensors(arrays, DEFORMCONV_INPUTS)
    call(library().rb_deformconv, inputs, n, ctypes.byref(params), ctypes.byref(tensor(y)), _threads(threads))
    return y


def run(ir, *inputs, **kw) -> np.ndarray:
    """Dispatch like ``semantics.reference.run``."""
    return KERNEL.of(ir)(ir, *inputs, **kw)


KERNEL = PerOp("C++ kernel", resize=resize, gridsample=gridsample, deformconv=deformconv)
