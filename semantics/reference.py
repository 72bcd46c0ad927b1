"""The oracle: executes any IR value in numpy, float64 accumulation, cast to the input dtype as ONNX does
(round half to even and saturate for integer dtypes).

``run(ir, *inputs)`` takes exactly the arrays the ONNX node receives, in order, None for an omitted
optional input: Resize (X, roi, scales, sizes), Upsample (X, scales), GridSample (X, grid),
DeformConv (X, W, offset, B, mask). Static fields of the IR win over the arrays; run-time fields are bound
from them.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import coords, fixed_point
from .coords import bind_resize
from .errors import BridgeError
from .ir import DeformConvIR, GridSampleIR, ResizeIR, RuntimeValue, Sampler
from .opspec import PerOp
from .taps import axis_taps, cubic_filter, integer_taps


def run(ir, *inputs):
    return ORACLE.of(ir)(ir, *inputs)


def cast_like(y: np.ndarray, dtype) -> np.ndarray:
    """ONNX's saturate cast: integers round half to even, then clip to the dtype's range."""
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.round(y), info.min, info.max).astype(dtype)
    # Past the type's largest finite value is infinity, as ONNX's cast, and no warning: a float16 output beyond
    # 65504 printed numpy's RuntimeWarning, with this file's path, on verify's stderr.
    with np.errstate(over="ignore"):
        return (round_to_bfloat16(y) if dtype.name == "bfloat16" else y).astype(dtype)


def round_to_bfloat16(y: np.ndarray) -> np.ndarray:
    """float64 ``y`` rounded to the nearest bfloat16 value, ties to even, as float64. Once: a cast through
    float32 (ml_dtypes' float64 -> bfloat16 is one) rounds twice and can land on the other neighbour
    (1 + 2^-8 + 2^-30 is 1 + 2^-7, not 1)."""
    y = np.asarray(y, dtype=np.float64)
    _, e = np.frexp(y)  # |y| = m * 2^e, m in [1/2, 1): bfloat16 keeps 8 significant bits
    step = np.maximum(e - 8, -133)  # below 2^-126 the subnormal spacing 2^-133
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.ldexp(np.round(np.ldexp(y, -step)), step)  # scaling by a power of two is exact
    return np.where(np.isfinite(y), r, y)


def runtime_values(ir: ResizeIR, inputs) -> dict:
    """Map the node's inputs onto the IR's run-time fields, by the input layout of the op."""
    names = ("X", "scales") if ir.origin.startswith(("Upsample", "Resize-10")) else ("X", "roi", "scales", "sizes")
    got = dict(zip(names, inputs))
    rt = {}
    for key in ("scales", "sizes", "roi"):
        if isinstance(getattr(ir, key), RuntimeValue):
            v = got.get(key)
            rt[key] = None if v is None or np.asarray(v).size == 0 else np.asarray(v).reshape(-1).tolist()
    return rt


def run_resize(ir: ResizeIR, x, *rest):
    x = np.asarray(x)
    bound = bind_resize(ir, x.shape, runtime_values(ir, (x, *rest)))
    if fixed_point.applies(x, bound):
        return fixed_point.run(x, bound)
    if _exact_integer(x, bound):
        return _run_resize_integer(x, bound)
    y = pad_input(x.astype(np.float64), bound.pads)
    for axis in bound.axes:
        table = axis_taps(axis, bound.sampler, bound.exclude_outside)
        y = contract_taps(y, axis.axis, table.index, table.weight)
        y = extrapolate(y, axis.axis, table.extrapolate, bound.extrapolation_value)
    if y.shape != bound.out_shape:  # zero-length axes skip the loop above
        y = np.zeros(bound.out_shape, dtype=np.float64)
    return cast_like(y, x.dtype)


def pad_input(y: np.ndarray, pads: tuple[int, ...]) -> np.ndarray:
    """OpenVINO Interpolate pads_begin/pads_end (begins then ends, every axis): zeros first, then resize the
    padded tensor (measured on CPU for every mode, ranks 3-5: equal to this within float32 rounding)."""
    if not pads:
        return y
    r = len(pads) // 2
    return np.pad(y, [(pads[i], pads[r + i]) for i in range(r)])


def contract_taps(y: np.ndarray, axis: int, index: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """One resampled axis: gather [.., out, K, ..] along ``axis`` and contract K with ``weight`` [out, K]
    (the oracle's weights, or the error bound's weight errors on the values' magnitudes)."""
    g = np.take(y, index, axis=axis)
    wshape = (1,) * axis + weight.shape + (1,) * (y.ndim - axis - 1)
    return (g * weight.reshape(wshape)).sum(axis=axis + 1)


def extrapolate(y: np.ndarray, axis: int, where: np.ndarray | None, value) -> np.ndarray:
    """tf_crop_and_resize: the outputs along ``axis`` whose source lies outside the crop take ``value``."""
    if where is None or not where.any():
        return y
    mshape = (1,) * axis + (where.size,) + (1,) * (y.ndim - axis - 1)
    return np.where(where.reshape(mshape), value, y)


def _exact_integer(x: np.ndarray, bound) -> bool:
    """Integer linear/cubic Resize is computed exactly (rational weights, one rounding): float64 weights
    and sums can land an exact half on the wrong side. Not with OpenVINO pads or a fractional
    extrapolation value (float64 as before there)."""
    return (np.issubdtype(x.dtype, np.integer) and bound.sampler.kind != "nearest" and bool(bound.axes)
            and not bound.pads and x.size > 0 and float(bound.extrapolation_value).is_integer()
            and all(a.out_len > 0 for a in bound.axes))  # an empty output has nothing to accumulate


def _run_resize_integer(x: np.ndarray, bound):
    """Exact integer accumulation over the tap numerators (``taps.integer_taps``), then round half to even
    and saturate: the value ONNX's saturate cast gives the exact real result."""
    tables = [integer_taps(axis, bound.sampler, bound.exclude_outside) for axis in bound.axes]
    reach = max(abs(int(x.min())), abs(int(x.max())), abs(int(bound.extrapolation_value)))
    for _, num, D in tables:
        reach *= max(sum(abs(n) for n in row) for row in num) + D
    # int64 where no sum can leave it (every practical case), Python integers otherwise
    kind = np.int64 if reach < 2**62 else object
    y = x.astype(kind)
    scale = 1
    for axis, (index, num, D) in zip(bound.axes, tables):
        num = num.astype(kind)
        y = contract_taps(y, axis.axis, index, num)
        scale *= D
        valid = axis_taps(axis, bound.sampler, bound.exclude_outside).extrapolate if axis.valid else None
        y = extrapolate(y, axis.axis, valid, int(bound.extrapolation_value) * scale)
    q = y // scale  # floor
    r = y - q * scale
    up = (2 * r > scale) | ((2 * r == scale) & (q % 2 == 1))
    info = np.iinfo(x.dtype)
    return np.clip(q + up.astype(kind), info.min, info.max).astype(x.dtype).reshape(bound.out_shape)


# ----------------------------------------------------------------------------------------------------------
# Point sampler shared by GridSample and DeformConv: N-D separable taps at arbitrary float coordinates.


def _rint_half_even(x):
    return np.rint(x)


_INDEX_LIMIT = 2.0 ** 62


def _to_index(v: np.ndarray) -> np.ndarray:
    """Integral float64 -> int64 with the out-of-range cases defined: beyond +-2^62 saturates and NaN goes far
    below, so such a tap is padded like any outside tap. (numpy's cast, like the frameworks' C++ casts, is
    platform-defined there: x86 gives INT64_MIN even for +1e30, reading the first element at the far end.)"""
    v = np.where(np.isnan(v), -_INDEX_LIMIT, np.clip(v, -_INDEX_LIMIT, _INDEX_LIMIT))
    return v.astype(np.int64)


def tap_window(x: np.ndarray, sampler: Sampler):
    """Tap positions [P, K] for float coordinates x [P], and t = x - floor(x) [P] (None for nearest)."""
    if sampler.kind == "nearest":
        return _to_index(np.trunc(x))[:, None], None
    fl = np.floor(x)
    t = x - fl
    fl = _to_index(fl)
    if sampler.kind == "linear":
        return np.stack([fl, fl + 1], 1), t
    return np.stack([fl - 1, fl, fl + 1, fl + 2], 1), t


def window_weights(t: np.ndarray, sampler: Sampler) -> np.ndarray:
    """The weights [P, K] of ``tap_window``'s linear or cubic taps, t past the floor of the coordinate."""
    if sampler.kind == "linear":
        return np.stack([1 - t, t], 1)
    a = float(sampler.cubic_a)
    return np.stack([np.vectorize(lambda d: float(cubic_filter(d, a)))(t - i) for i in (-1, 0, 1, 2)], 1) \
        if t.size else np.zeros((0, 4))


def _tap_weights_1d(x: np.ndarray, sampler: Sampler):
    """Tap positions [P, K] and weights [P, K] for float coordinates x [P]."""
    index, t = tap_window(x, sampler)
    return index, (np.ones((x.size, 1)) if t is None else window_weights(t, sampler))


def tap_reads(spatial, index: list[np.ndarray], padding: str, bounds: list[tuple[float, float]], base=None):
    """For each combination of one tap per axis (``index[d]`` [P, K_d]): (combo, flat element index [P], in
    range [P]) after tap-level padding: zeros (out-of-range taps read 0: in range False), border (clamp),
    reflection (mirror at ``bounds``, then clamp). ``base`` [P]: where each point's plane starts (``planes``)."""
    P = index[0].shape[0]
    strides = [int(np.prod(spatial[d + 1:])) for d in range(len(spatial))]
    for combo in itertools.product(*[range(i.shape[1]) for i in index]):
        lin = np.zeros(P, dtype=np.int64) if base is None else base.copy()
        ok = np.ones(P, dtype=bool)
        for d, k in enumerate(combo):
            j = index[d][:, k]
            L = spatial[d]
            if padding == "zeros":
                ok &= (j >= 0) & (j < L)
            elif padding == "reflection":
                j = _to_index(np.trunc(coords.reflect(j.astype(np.float64), *bounds[d])))
            j = np.clip(j, 0, L - 1)
            lin += j * strides[d]
        yield combo, lin, ok


def planes(data: np.ndarray, batch=None):
    """(data as float64 [C, elements], the spatial shape, where each point's plane starts or None): ``data`` is
    [C, *spatial], or with ``batch`` (each point's image, [P]) [N, C, *spatial], every image's points sampled
    in one pass (a GridSample over a 64-image batch took 64 passes of numpy calls on a few points each)."""
    if batch is None:
        return data.reshape(data.shape[0], -1).astype(np.float64), data.shape[1:], None
    spatial = data.shape[2:]
    return (np.moveaxis(data, 1, 0).reshape(data.shape[1], -1).astype(np.float64), spatial,
            np.asarray(batch, np.int64) * int(np.prod(spatial)))


def sample_points(data: np.ndarray, pts: list[np.ndarray], sampler: Sampler, padding: str,
                  bounds: list[tuple[float, float]], batch=None) -> np.ndarray:
    """Sample ``data`` [C, *spatial] at P points (pts[d] is [P], pixel coordinates, after any
    coordinate-level padding), tap-level padding as ``tap_reads``. Returns [C, P] float64. ``batch``: see
    ``planes``."""
    P = pts[0].size
    taps = [_tap_weights_1d(p, sampler) for p in pts]
    flat, spatial, base = planes(data, batch)
    out = np.zeros((flat.shape[0], P), dtype=np.float64)
    for combo, lin, ok in tap_reads(spatial, [t[0] for t in taps], padding, bounds, base):
        w = np.ones(P)
        for d, k in enumerate(combo):
            w = w * taps[d][1][:, k]
        out += np.where(ok, w, 0.0)[None, :] * flat[:, lin]
    return out


def _coordinate_padding(x: np.ndarray, L: int, ir: GridSampleIR) -> np.ndarray:
    """Padding applied to the source coordinate before taps are taken."""
    lo, hi = coords.grid_bounds(L, ir.align_corners)
    if ir.padding_on == "coordinate_and_taps":
        # ONNX reference: only coordinates outside [lo, hi] are moved.
        outside = (x < lo) | (x > hi)
        if ir.padding == "border":
            return np.where(outside, np.clip(x, 0, L - 1), x)
        if ir.padding == "reflection":
            return np.where(outside, coords.reflect(x, lo, hi), x)
        return x
    # PyTorch / onnxruntime: linear and nearest clip (after reflecting); cubic pads each tap only.
    if ir.sampler.kind == "cubic":
        return x
    if ir.padding == "border":
        return np.clip(x, 0, L - 1)
    if ir.padding == "reflection":
        return np.clip(coords.reflect(x, lo, hi), 0, L - 1)
    return x


def run_gridsample(ir: GridSampleIR, x, grid):
    x = np.asarray(x)
    grid = np.asarray(grid)
    D = x.ndim - 2
    if D != ir.spatial_rank or grid.ndim != x.ndim or grid.shape[-1] != D or grid.shape[0] != x.shape[0]:
        raise BridgeError(f"X {x.shape} and grid {grid.shape} do not fit a {ir.spatial_rank}-D GridSample",
                          field="grid")
    N, C = x.shape[:2]
    spatial = x.shape[2:]
    out_sp = grid.shape[1:-1]
    P = int(np.prod(out_sp))
    bounds = [coords.grid_bounds(L, ir.align_corners) for L in spatial]
    g = grid.reshape(N * P, D).astype(np.float64)  # every image's points at once (``planes``)
    pts = []
    for d in range(D):
        L = spatial[d]
        # grid's last axis lists coordinates innermost-first: (x, y[, z]).
        p = coords.unnormalize_as(g[:, D - 1 - d], L, ir.align_corners, ir.arith)
        if ir.sampler.kind == "nearest":
            p = _rint_half_even(p)
        pts.append(_coordinate_padding(p, L, ir))
    y = sample_points(x, pts, ir.sampler, ir.padding, bounds, batch=np.repeat(np.arange(N), P))
    return cast_like(np.moveaxis(y.reshape(C, N, P), 0, 1).reshape((N, C) + tuple(out_sp)), x.dtype)


# ----------------------------------------------------------------------------------------------------------


def deformconv_out_shape(ir: DeformConvIR, spatial, kernel) -> tuple[int, ...]:
    D = ir.spatial_rank
    out = []
    for d in range(D):
        eff = (kernel[d] - 1) * ir.dilations[d] + 1
        out.append((spatial[d] + ir.pads[d] + ir.pads[D + d] - eff) // ir.strides[d] + 1)
    return tuple(out)


def deform_geometry(ir: DeformConvIR, x: np.ndarray, w: np.ndarray, offset: np.ndarray):
    """(kernel, out_sp) of a DeformConv on these arrays, their shapes checked."""
    D = ir.spatial_rank
    C = x.shape[1]
    kernel = tuple(ir.kernel_shape) if ir.kernel_shape else tuple(w.shape[2:])
    K = math.prod(kernel)
    OC = w.shape[0]
    G, OG = ir.group, ir.offset_group
    if C % G or OC % G or w.shape[1] * G != C or C % OG:
        raise BridgeError(f"X {x.shape}, W {w.shape} do not fit group={G}, offset_group={OG}", field="W")
    out_sp = deformconv_out_shape(ir, x.shape[2:], kernel)
    if offset.shape != (x.shape[0], OG * K * D) + out_sp:
        raise BridgeError(f"offset has shape {offset.shape}, expected {(x.shape[0], OG * K * D) + out_sp}",
                          field="offset")
    return kernel, out_sp


def deform_points(ir: DeformConvIR, x: np.ndarray, offset: np.ndarray, kernel, out_sp):
    """Per batch n and offset group og: (n, og, channel slice, pts, padding, inside). pts[d] [K*P] are the
    sampling positions o*stride - pad_begin + k*dilation + offset; ``padding`` is the tap padding; ``inside``
    [K*P] (or None) the samples kept, the rest 0."""
    D = ir.spatial_rank
    N, C = x.shape[:2]
    spatial = x.shape[2:]
    K, P = math.prod(kernel), math.prod(out_sp)
    OG = ir.offset_group
    off = offset.reshape(N, OG, K, D, P).astype(np.float64)
    # Base tap positions: o*stride - pad_begin + k*dilation, per axis, [K, P].
    ogrid = np.indices(out_sp).reshape(D, P)
    kgrid = np.indices(kernel).reshape(D, K)
    base = [(ogrid[d][None, :] * ir.strides[d] - ir.pads[d] + kgrid[d][:, None] * ir.dilations[d])
            .astype(np.float64) for d in range(D)]
    cpg = C // OG
    for n in range(N):
        for og in range(OG):
            pts = [(base[d] + off[n, og, :, d, :]).reshape(-1) for d in range(D)]
            sl = slice(og * cpg, (og + 1) * cpg)
            if ir.border == "clamp_in_range":
                # OpenVINO bilinear_interpolation_pad=false (and DeformableConvolution-1), measured on CPU:
                # a sample outside [0, L) on any axis is 0; inside, the taps clamp to the last element
                # (x2 = min(ceil(x), L-1)), so a sample in (L-1, L) reads element L-1 at full weight.
                inside = np.ones(pts[0].shape, dtype=bool)
                for d in range(D):
                    inside &= (pts[d] >= 0) & (pts[d] < spatial[d])
                yield n, og, sl, pts, "border", inside
            elif ir.border == "zero_taps":
                yield n, og, sl, pts, "zeros", None
            else:
                raise BridgeError(f"unknown DeformConv border {ir.border!r}", field="border")


def grouped_conv(cols: np.ndarray, w: np.ndarray, group: int) -> np.ndarray:
    """The convolution of sampled columns [N, C, K, P] with W [OC, C/group, *kernel]: [N, OC, P] float64."""
    N, C, K, P = cols.shape
    OC = w.shape[0]
    icg, ocg = C // group, OC // group
    y = np.zeros((N, OC, P), dtype=np.float64)
    wf = w.reshape(OC, icg * K).astype(np.float64)
    for g in range(group):
        colg = cols[:, g * icg:(g + 1) * icg].reshape(N, icg * K, P)
        y[:, g * ocg:(g + 1) * ocg] = np.einsum("ok,nkp->nop", wf[g * ocg:(g + 1) * ocg], colg)
    return y


def run_deformconv(ir: DeformConvIR, x, w, offset, b=None, mask=None):
    x = np.asarray(x)
    w = np.asarray(w)
    offset = np.asarray(offset)
    N, C = x.shape[:2]
    kernel, out_sp = deform_geometry(ir, x, w, offset)
    K, P = math.prod(kernel), math.prod(out_sp)
    msk = None if mask is None else np.asarray(mask).reshape(N, ir.offset_group, K, P).astype(np.float64)
    cols = np.zeros((N, C, K, P), dtype=np.float64)
    bounds = [(0.0, float(L - 1)) for L in x.shape[2:]]
    for n, og, sl, pts, padding, inside in deform_points(ir, x, offset, kernel, out_sp):
        vals = sample_points(x[n, sl], pts, ir.sampler, padding, bounds)
        if inside is not None:
            vals = vals * inside[None, :]
        vals = vals.reshape(-1, K, P)
        if msk is not None:
            vals = vals * msk[n, og][None]
        cols[n, sl] = vals
    y = grouped_conv(cols, w, ir.group)
    if b is not None:
        y += np.asarray(b, dtype=np.float64).reshape(1, w.shape[0], 1)
    return cast_like(y.reshape((N, w.shape[0]) + out_sp), x.dtype)


ORACLE = PerOp("oracle", resize=run_resize, gridsample=run_gridsample, deformconv=run_deformconv)
