"""Seeded random cases for the shared C++ kernels (test_kernels) and the OpenVINO extension over them
(test_openvino_extension): one seed, one IR value with inputs the oracle binds, the same for every caller."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np

from resample_bridge.semantics import reference
from resample_bridge.semantics.coords import bind_resize
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.semantics.ir import (ASPECT_POLICIES, COORD_MODES, FILTER_STRETCHES, FORMULA_LENGTHS,
                                          GRID_PADDINGS, LENGTH1_RULES, NEAREST_MODES, PADDING_ON, SAMPLER_KINDS,
                                          SIZE_RULES, DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, Sampler)
from resample_bridge.semantics.reference import deformconv_out_shape

SCALES = [0.25, 0.3, 1 / 3, 0.4, 0.5, 0.6, 2 / 3, 0.7, 0.75, 0.8, 1.0, 1.05, 1.2, 1.25, 1.5, 1.7, 2.0, 2.5, 3.0]


def f32(v) -> F:
    return F(float(np.float32(v)))


def resize_case(seed: int):
    """(ir, inputs after X, x shape) for one seed; only values the oracle binds."""
    rng = np.random.default_rng(seed)
    while True:
        rank = int(rng.integers(1, 6))
        shape = tuple(int(rng.integers(1, 8 if rank <= 3 else 4)) for _ in range(rank))
        axes = tuple(int(a) for a in rng.permutation(rank)[: int(rng.integers(1, rank + 1))])
        kind = str(rng.choice(SAMPLER_KINDS))
        if kind == "nearest":
            sampler = Sampler("nearest", nearest=str(rng.choice(NEAREST_MODES)))
        elif kind == "linear":
            sampler = Sampler("linear", antialias=bool(rng.random() < 0.4))
        else:
            sampler = Sampler("cubic", cubic_a=[F(-3, 4), F(-1, 2), F(-3, 5)][int(rng.integers(3))],
                              antialias=bool(rng.random() < 0.4))
        coord = str(rng.choice(COORD_MODES))
        use_sizes = rng.random() < 0.35
        scales = sizes = roi = None
        if use_sizes:
            sizes = tuple(int(rng.integers(1, 10)) for _ in axes)
            aspect = str(rng.choice(ASPECT_POLICIES)) if rng.random() < 0.3 else "stretch"
        else:
            scales = tuple(f32(SCALES[int(rng.integers(len(SCALES)))]) for _ in axes)
            aspect = "stretch"
        if coord == "tf_crop_and_resize":
            starts = [f32(rng.uniform(-0.3, 0.6)) for _ in axes]
            roi = tuple(starts + [f32(s + F(rng.uniform(0.1, 1.0))) for s in starts])
        pads = tuple(int(p) for p in rng.integers(0, 3, 2 * rank)) if rng.random() < 0.15 else ()
        ir = ResizeIR(
            rank=rank, axes=axes, scales=scales, sizes=sizes, roi=roi, coord=coord, sampler=sampler,
            exclude_outside=bool(rng.random() < 0.3), extrapolation_value=float(np.float32(rng.uniform(-2, 2))),
            aspect_policy=aspect, size_rule=str(rng.choice(SIZE_RULES)), scale_source=str(rng.choice(("user", "ratio"))),
            formula_length=str(rng.choice(FORMULA_LENGTHS)), length1=str(rng.choice(LENGTH1_RULES)), pads=pads,
            equal_length_identity=bool(rng.random() < 0.3), filter_stretch=str(rng.choice(FILTER_STRETCHES)),
        )
        # Some values arrive at run time: the kernels must bind exactly what the oracle binds.
        inputs = [None, None, None]
        if rng.random() < 0.25:
            for i, key in enumerate(("roi", "scales", "sizes")):
                val = getattr(ir, key)
                if val is not None:
                    dt = np.int64 if key == "sizes" else np.float32
                    inputs[i] = np.array([float(v) for v in val], dtype=dt)
                    ir = ResizeIR(**{**ir.__dict__, key: RuntimeValue(key)})
        try:
            bound = bind_resize(ir, shape, reference.runtime_values(ir, (None, *inputs)))
        except BridgeError:
            continue
        if 0 in bound.out_shape or math.prod(bound.out_shape) > 20000:
            continue
        return ir, inputs, shape


def kind_sampler(kind: str) -> Sampler:
    """The sampler of a kind as the tests use it: nearest rounds half to even, cubic a = -3/4."""
    return (Sampler("nearest", nearest="half_even") if kind == "nearest" else
            Sampler("cubic", cubic_a=F(-3, 4)) if kind == "cubic" else Sampler(kind))


def gridsample_case(seed: int, dtype):
    rng = np.random.default_rng(seed)
    D = int(rng.integers(1, 4))
    sampler = kind_sampler(str(rng.choice(SAMPLER_KINDS)))
    ir = GridSampleIR(spatial_rank=D, sampler=sampler, padding=str(rng.choice(GRID_PADDINGS)),
                      align_corners=bool(rng.random() < 0.5), padding_on=str(rng.choice(PADDING_ON)),
                      arith=str(rng.choice(("fp32", "fp32", "fp64"))))
    N, C = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    spatial = tuple(int(rng.integers(1, 6 if D < 3 else 4)) for _ in range(D))
    out = tuple(int(rng.integers(1, 5 if D < 3 else 3)) for _ in range(D))
    x = (rng.standard_normal((N, C) + spatial) * 2).astype(dtype)
    grid = rng.uniform(-1.7, 1.7, (N,) + out + (D,))
    # Exact values on the borders, the centre and half-pixel positions: where rounding and padding decide.
    special = np.array([-1.0, 1.0, 0.0, -0.5, 0.5, 1.5, -1.5, 2.0 / 3.0, 0.2])
    pick = rng.random(grid.shape) < 0.3
    grid[pick] = rng.choice(special, size=int(pick.sum()))
    gdtype = np.float32 if rng.random() < 0.3 else dtype
    return ir, x, grid.astype(gdtype)


def deformconv_case(seed: int, dtype):
    rng = np.random.default_rng(seed)
    while True:
        D = int(rng.integers(1, 4))
        G, OG = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        C = math.lcm(G, OG) * int(rng.integers(1, 3))
        OC = G * int(rng.integers(1, 3))
        kernel = tuple(int(rng.integers(1, 4 if D < 3 else 3)) for _ in range(D))
        spatial = tuple(int(rng.integers(2, 7 if D < 3 else 4)) for _ in range(D))
        strides = tuple(int(rng.integers(1, 3)) for _ in range(D))
        dil = tuple(int(rng.integers(1, 3)) for _ in range(D))
        pads = tuple(int(p) for p in rng.integers(0, 3, 2 * D))
        kind = "linear" if rng.random() < 0.8 else str(rng.choice(("nearest", "cubic")))
        sampler = Sampler("cubic", cubic_a=F(-3, 4)) if kind == "cubic" else Sampler(kind)
        has_b, has_m = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        ir = DeformConvIR(D, kernel if rng.random() < 0.5 else None, strides, pads, dil, G, OG, has_b, has_m,
                          sampler=sampler, border="zero_taps" if rng.random() < 0.75 else "clamp_in_range")
        out = deformconv_out_shape(ir, spatial, kernel)
        if any(o <= 0 for o in out):
            continue
        N, K = int(rng.integers(1, 3)), math.prod(kernel)
        x = rng.standard_normal((N, C) + spatial).astype(dtype)
        w = (rng.standard_normal((OC, C // G) + kernel) / math.sqrt(C * K)).astype(dtype)
        off = rng.standard_normal((N, OG * K * D) + out) * 1.5
        ints = rng.random(off.shape) < 0.2  # whole-pixel offsets: taps exactly on the grid
        off[ints] = np.round(off[ints])
        off[rng.random(off.shape) < 0.05] = 7.5  # far outside
        b = rng.standard_normal(OC).astype(dtype) if has_b else None
        m = rng.uniform(0, 1, (N, OG * K) + out).astype(dtype) if has_m else None
        return ir, (x, w, off.astype(dtype), b, m)


def int_input(rng, shape, dtype):
    """Values across the whole range, extremes included, so results saturate; i64 kept where float64 is exact
    (the oracle's float64 paths read it through float64)."""
    info = np.iinfo(dtype)
    lo, hi = (max(info.min, -(2**40)), min(info.max, 2**40)) if dtype == np.int64 else (info.min, info.max)
    x = rng.integers(lo, hi, shape, dtype=np.int64, endpoint=True)
    x.flat[:: 7] = hi
    x.flat[3:: 11] = lo
    return x.astype(dtype)
