"""The forward error bound of a float32 evaluation of the spec's formula: what "exact" means for floats.

``bound(ir, *inputs)`` takes the oracle's inputs (``reference.run``'s) and returns, per output element, a
first-order bound of |fl32(result) - exact(result)| for a straightforward float32 implementation that computes
the source coordinate, each tap weight and the weighted sum in float32 (in any order, fused or not). An
implementation whose error exceeds it anywhere is not computing the spec's formula; one within it is. Nearest
and integer outputs get 0 (bit-exact: a tie read on the wrong side is another element, not a rounding).

The bound, with u = 2^-24 (float32's unit roundoff), per output element:

* coordinate: dc = C_COORD * u * (|c| + |terms of the map|): Resize's a*o + b, GridSample's unnormalisation
  ((g+1)*L-1)/2 or (g+1)/2*(L-1) (plus the fold's terms under reflection), DeformConv's p0 + k*dil + offset;
* weight of tap i: dw_i = |w_i'| * dc + C_W * u * (K*|w_i| + T_i / |S|), w' the slope of the (stretched,
  renormalised) filter at the coordinate, taken from the oracle's own weight functions by one-sided
  differences; K the taps on the axis (a normalisation sums K of them); T_i the magnitude of the filter
  polynomial's terms at the tap's distance (Horner's rounding is relative to them, not to the result: Keys'
  outer piece near 2 is ~2e-4 made of terms ~15, measured 0.3% off on onnxruntime's bicubic) and S the sum
  the weights are normalised by (1 without antialias / exclude_outside);
* N-D taps are products of per-axis weights (product rule), and
* total = sum_i |x_i - y| * |dw_i(coordinate)| + sum_i |x_i| * |dw_i(rounding)| + C_SUM * K * u * sum_i |w_i x_i|
  (+ an ulp of the output dtype times sum_i |w_i x_i|: it and the oracle's output are each rounded to it).
  The coordinate's weight changes sum to zero (every filter is a partition of unity, renormalised ones
  included), so a coordinate error moves the result by the *gap* between the values it blends, not by their
  size: centring on the result y keeps a large common offset (values near 1e6 that differ by little) from
  loosening the bound. Separable axes propagate (values, bound, sum of |w x|).
The constants are 4: each term above is at most 2-3 float32 roundings of its terms (multiply, add, the scale's
own reciprocal; a sum of K products rounds at most K-1 times plus the products); 4 leaves room for a fused
(FMA) or reordered evaluation and float32 intermediates between separable passes without loosening the bound
by orders of magnitude, which would let real semantic differences (a shifted coordinate, another filter) pass.

DeformConv: each bilinear sample as above, then the convolution's accumulation over C*K:
sum |W| (sample bound) + C_SUM * (C*K + 1) * u * (sum |W| |v| + |B|).

Non-finite: where the oracle's output is NaN or infinite the comparison asks for the same value, not a bound
(``compare``); a bound that would come out NaN there (0 * inf) is reported 0. Not covered (bound 0 there, as
for nearest): a discontinuity reached by rounding — a tf_crop_and_resize source on the crop edge, DeformConv's
clamp_in_range sample on the input's edge. Imports numpy and the semantics package only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import coords
from .coords import bind_resize
from .ir import DeformConvIR, GridSampleIR, ResizeIR, Sampler
from .opspec import PerOp
from .reference import (_coordinate_padding, contract_taps, deform_geometry, deform_points, extrapolate,
                        grouped_conv, pad_input, planes, run, runtime_values, sample_points,
                        tap_reads, tap_window, window_weights)
from .taps import _weights, axis_taps, cache_if_hashable, raw_filter, source_coords, stretch

U = 2.0 ** -24  # float32 unit roundoff
C_COORD = C_W = C_SUM = 4  # the constants of the module docstring's bound, each term's roundings and room
# The step of the one-sided differences that give a weight's slope: small against any coordinate error that
# matters, large against float64's rounding of the weights (the slope is then exact to ~1e-10).
_H = 2.0 ** -20


def bound(ir, *inputs) -> np.ndarray:
    """Per output element (the oracle's output shape), float64 >= 0: the forward error bound of a float32
    evaluation of ``ir``'s formula on these inputs; 0 for integer inputs and nearest sampling."""
    out = BOUND.of(ir)(ir, *inputs).total()
    if inputs and _wider_than_float32(inputs[0]) and getattr(getattr(ir, "sampler", None), "kind", "") == "nearest":
        # A float32 evaluation reads float64 (or wider) data in float32: the picked element rounded once.
        out = np.maximum(out, U * np.abs(np.asarray(run(ir, *inputs), dtype=np.float64)))
    return np.nan_to_num(out, nan=0.0, posinf=np.inf)


def magnitude(ir, *inputs) -> np.ndarray:
    """Per output element, sum_i |w_i| |x_i| over the taps (the bound's A; DeformConv: through |W|, plus |B|): the
    size a reduced-precision evaluation rounds, each tap value and weight and the sum (``tolerance.reduced_bound``).
    Not the oracle on |X|: cubic's negative weights cancel there (sum w |x| near 0 where sum |w| |x| is not)."""
    return np.nan_to_num(BOUND.of(ir)(ir, *inputs).a, nan=0.0, posinf=np.inf)


@dataclass(frozen=True)
class Parts:
    """A bound's two terms: ``e`` (coordinate and weight roundings, propagated) and ``a`` (sum |w x|), which the
    sum's ``terms`` roundings and the output's own rounding (relative ``rounding``) scale."""

    e: np.ndarray
    a: np.ndarray
    terms: int
    rounding: float
    floor: float = 0.0  # the output's rounding where it is subnormal (absolute: ``_output_rounding``)

    def total(self) -> np.ndarray:
        return self.e + (C_SUM * self.terms * U + self.rounding) * self.a + self.floor

    @staticmethod
    def zero(shape) -> "Parts":
        return Parts(np.zeros(shape), np.zeros(shape), 0, 0.0)


def _wider_than_float32(x) -> bool:
    dt = getattr(x, "dtype", None)
    return dt is not None and np.issubdtype(dt, np.floating) and np.dtype(dt).itemsize > 4


def _is_float(x: np.ndarray) -> bool:
    return np.issubdtype(x.dtype, np.floating)


def _output_rounding(dtype) -> tuple[float, float]:
    """(relative, absolute): the result and the oracle's are each cast to the input's dtype, half an ulp each, and
    below the smallest normal half a subnormal step each (float16's 2^-24: float16 outputs near 2e-5 measured)."""
    info = np.finfo(dtype)
    return float(info.eps), float(info.smallest_subnormal)


# ----------------------------------------------------------------------------------------------------------
# Resize: per resized axis, propagate (exact values Y, bound E, sum of |w x| A).


def bound_resize(ir: ResizeIR, x, *rest) -> Parts:
    x = np.asarray(x)
    b = bind_resize(ir, x.shape, runtime_values(ir, (x, *rest)))
    if not _is_float(x) or b.sampler.kind == "nearest" or x.size == 0:
        return Parts.zero(b.out_shape)
    y = pad_input(x.astype(np.float64), b.pads)
    a, e, k_total = np.abs(y), np.zeros_like(y), 1
    with np.errstate(invalid="ignore", over="ignore"):
        for axis in b.axes:
            table = axis_taps(axis, b.sampler, b.exclude_outside)
            slope, terms = _axis_slopes(axis, b.sampler, bool(b.exclude_outside), table.weight.shape[1])
            dc = _axis_dc(axis)
            w_abs = np.abs(table.weight)
            round_w = C_W * U * (table.weight.shape[1] * w_abs + terms)
            new_y = contract_taps(y, axis.axis, table.index, table.weight)
            e = (contract_taps(e, axis.axis, table.index, w_abs)
                 + _centred(y, new_y, axis.axis, table.index, slope * dc[:, None])
                 + _window_edge(y, new_y, axis, b.sampler, table.weight.shape[1], dc)
                 + contract_taps(a, axis.axis, table.index, round_w))
            a = contract_taps(a, axis.axis, table.index, w_abs)
            y = extrapolate(new_y, axis.axis, table.extrapolate, b.extrapolation_value)
            e = extrapolate(e, axis.axis, table.extrapolate, 0.0)
            a = extrapolate(a, axis.axis, table.extrapolate, abs(b.extrapolation_value))
            k_total *= table.weight.shape[1]
    if a.shape != b.out_shape:  # zero-length axes
        return Parts.zero(b.out_shape)
    return Parts(e, a, k_total, *_output_rounding(x.dtype))


def _centred(y: np.ndarray, new_y: np.ndarray, axis: int, index: np.ndarray, dw: np.ndarray) -> np.ndarray:
    """sum_k |y[index[o, k]] - new_y[o]| * dw[o, k] along ``axis``: the coordinate's effect on one axis."""
    g = np.take(y, index, axis=axis)  # [.., out, K, ..]
    shape = (1,) * axis + dw.shape + (1,) * (y.ndim - axis - 1)
    return (np.abs(g - np.expand_dims(new_y, axis + 1)) * dw.reshape(shape)).sum(axis=axis + 1)


def _window_edge(y: np.ndarray, new_y: np.ndarray, axis, sampler: Sampler, K: int, dc: np.ndarray) -> np.ndarray:
    """The tap a rounded-up coordinate brings in: a source within dc below an integer (t near 1, exactly 1 at an
    integer) has its window (x0 - m, x0 + m] one step left of the window a float32 value just above it takes,
    whose new tap x0 + m + 1 enters with the filter's slope at its edge: f for the (stretched) triangle, 0 for
    Keys' cubic. Measured: PyTorch's bilinear 3 -> 21 computes the source 0 as 2.98e-8 (its scale
    float32(3/21) rounds up) and blends element 1 into element 0 at weight 2.98e-8."""
    if sampler.kind != "linear":
        return np.zeros(new_y.shape)
    f = float(stretch(sampler, axis.filter_scale, axis.stretch_clamp))
    src = source_coords(axis)
    edge = np.array([math.ceil(c) - 1 + K // 2 + 1 for c in src], dtype=np.int64)
    near = np.array([float(math.ceil(c) - c) for c in src], dtype=np.float64) <= dc  # 1 - t within its error
    edge = np.clip(edge, 0, y.shape[axis.axis] - 1)
    slope = np.where(near, f * dc, 0.0)[:, None]
    with np.errstate(invalid="ignore"):
        term = _centred(y, new_y, axis.axis, edge[:, None], slope)
    # Only outputs near an integer take the edge tap: elsewhere its weight is 0, even where it reads inf / NaN.
    keep = near.reshape((1,) * axis.axis + near.shape + (1,) * (y.ndim - axis.axis - 1))
    return np.where(keep, term, 0.0)


def _axis_dc(axis) -> np.ndarray:
    """The float32 error of each output's source coordinate a*o + b: C_COORD roundings of its terms (and of the
    map's own intermediates, ``BoundAxis.map_terms``)."""
    o = np.arange(axis.out_len, dtype=np.float64)
    src = np.array([float(s) for s in source_coords(axis)], dtype=np.float64).reshape(axis.out_len)
    return C_COORD * U * (np.abs(src) + abs(float(axis.a)) * (o + 1) + abs(float(axis.b)) + float(axis.map_terms))


@cache_if_hashable(maxsize=1024)
def _axis_slopes(axis, sampler: Sampler, exclude_outside: bool, K: int) -> tuple[np.ndarray, np.ndarray]:
    """(|dw/dc|, T / |S|), each [out, K], of the oracle's tap weights (``taps._weights``): the slope by one-sided
    differences at the exact source (the larger side, so a kink such as linear's peak counts its steeper
    slope), and the filter's term magnitude over the normalising sum (see the module docstring). One pair per
    axis, as ``taps.axis_taps`` keeps one table: every probe of a node asks for the same (exact arithmetic: most
    of a proof's time before)."""
    f = stretch(sampler, axis.filter_scale, axis.stretch_clamp)
    m = K // 2
    h = Fraction(_H)
    memo: dict = {}
    slope, terms = np.zeros((axis.out_len, K)), np.zeros((axis.out_len, K))
    for o, src in enumerate(source_coords(axis)):
        x0 = math.ceil(src) - 1  # the window rule of ``taps``: taps x0 + 1 - m .. x0 + m
        t = src - x0
        inside = tuple(0 <= x0 + i < axis.in_len for i in range(1 - m, m + 1)) if exclude_outside else None
        if (t, inside) not in memo:
            w0, up, down = (_weights(sampler, t + s, f, m, inside) for s in (0, h, -h))
            d = np.array([float((i - t) * f) for i in range(1 - m, m + 1)])
            kept = np.ones(K) if inside is None else np.array(inside, dtype=float)
            _, total = filter_sum(d, sampler, kept, bool(sampler.antialias or inside))
            memo[(t, inside)] = ([float(max(abs(u - w), abs(w - dn)) / h) for w, u, dn in zip(w0, up, down)],
                                 kept * filter_terms(d, sampler) / np.abs(total))
        slope[o], terms[o] = memo[(t, inside)]
    return slope, terms


def filter_sum(d: np.ndarray, sampler: Sampler, kept: np.ndarray, normalised: bool) -> tuple:
    """(the kept taps' filter values at distances d [..., K], the sum [..., 1] the weights are divided by: their
    own under antialias / exclude_outside (``normalised``) where it is not 0, else 1)."""
    w = raw_filter(d, sampler) * kept
    total = w.sum(axis=-1, keepdims=True) if normalised else np.ones(w.shape[:-1] + (1,))
    return w, np.where(total != 0, total, 1.0)


def filter_terms(d: np.ndarray, sampler: Sampler) -> np.ndarray:
    """The magnitude of the filter polynomial's terms at distances d: what a float32 evaluation of the
    filter (``taps.linear_filter`` 1 - |d|; ``taps.cubic_filter``'s two Horner forms) rounds relative to."""
    ad = np.abs(d)
    if sampler.kind == "linear":
        return np.where(ad < 1, 1 + ad, 0.0)
    a = abs(float(sampler.cubic_a))
    inner = abs(float(sampler.cubic_a) + 2) * ad**3 + abs(float(sampler.cubic_a) + 3) * ad**2 + 1
    outer = a * (ad**3 + 5 * ad**2 + 8 * ad + 4)
    return np.where(ad <= 1, inner, np.where(ad < 2, outer, 0.0))


# ----------------------------------------------------------------------------------------------------------
# Points: GridSample and DeformConv sample at float coordinates.


def _point_slopes(t: np.ndarray, sampler: Sampler) -> np.ndarray:
    """|dw/dc| [P, K] of ``reference.window_weights`` at t (same window), by one-sided differences."""
    w0, up, down = (window_weights(t + s, sampler) for s in (0.0, _H, -_H))
    return np.maximum(np.abs(up - w0), np.abs(w0 - down)) / _H


def _product_rule(ws: list[np.ndarray], dws: list[np.ndarray]) -> np.ndarray:
    """First-order error of prod_d ws[d] given each factor's error dws[d] (all >= 0)."""
    total = np.zeros_like(ws[0])
    for d in range(len(ws)):
        term = dws[d]
        for e in range(len(ws)):
            if e != d:
                term = term * ws[e]
        total = total + term
    return total


def sample_bound(data: np.ndarray, pts: list[np.ndarray], dcs: list[np.ndarray], sampler: Sampler, padding: str,
                 bounds: list[tuple[float, float]], batch=None):
    """(values, bound, sum of |w x|), each [C, P], of ``reference.sample_points`` with coordinate errors
    ``dcs[d]`` [P]. Nearest: bound 0 (the element read is exact). ``batch``: as ``reference.planes``."""
    y = sample_points(data, pts, sampler, padding, bounds, batch)
    C, P = y.shape
    flat, spatial, base = planes(data, batch)
    windows = [tap_window(p, sampler) for p in pts]
    if sampler.kind == "nearest":
        w, (w_coord, w_round) = [np.ones((P, 1))] * len(pts), [[np.zeros((P, 1))] * len(pts)] * 2
    else:
        w = [np.abs(window_weights(t, sampler)) for _, t in windows]
        w_coord = [_point_slopes(t, sampler) * dc[:, None] for (_, t), dc in zip(windows, dcs)]
        offsets = np.arange(w[0].shape[1]) - (w[0].shape[1] // 2 - 1)  # the taps' places past the floor
        w_round = [C_W * U * (wd.shape[1] * wd + filter_terms(t[:, None] - offsets[None, :], sampler))
                   for wd, (_, t) in zip(w, windows)]
        windows, w, w_coord, w_round = _window_edges(windows, w, w_coord, w_round, dcs, sampler)
    e, a = np.zeros((C, P)), np.zeros((C, P))
    with np.errstate(invalid="ignore", over="ignore"):
        for combo, lin, ok in tap_reads(spatial, [i for i, _ in windows], padding, bounds, base):
            pick = [lambda arrs, d=d, k=k: arrs[d][:, k] for d, k in enumerate(combo)]
            ws = [p(w) for p in pick]
            # finite values only: a widened window's 0-weight taps may read inf / NaN the sample does not (an
            # implementation that reads them is non-finite, which no bound admits); elsewhere y is not finite
            v = np.where(ok[None, :] & np.isfinite(flat[:, lin]), flat[:, lin], 0.0)
            mag = np.where(ok, math.prod(ws), 0.0)
            # A zero-padded tap still moves with the coordinate: its weight's slope times (0 - y) is part of the
            # output's sensitivity (sum_i w_i' v_i, with sum_i w_i' = 0): at an edge it is most of it. Not where
            # the coordinate is not finite (no slope: every tap is padded).
            coord = _product_rule(ws, [p(w_coord) for p in pick])
            coord = np.where(ok | np.isfinite(coord), coord, 0.0)
            rnd = np.where(ok, _product_rule(ws, [p(w_round) for p in pick]) + len(pts) * U * math.prod(ws), 0.0)
            a += mag[None] * np.abs(v)
            e += coord[None] * np.abs(v - y) + rnd[None] * np.abs(v)
    return y, e, a


def _window_edges(windows, w, w_coord, w_round, dcs, sampler: Sampler):
    """Each axis' window widened by a tap at weight 0 each side: within dc of an integer an error across it moves
    the window, the tap entering at most dc (linear) or |a| dc^2 (Keys near 2: a (e^2 - e^3)). Measured, a float16
    grid on integers sampled unrounded: 1.7e-4 off (linear), 8e-7 (cubic), where the bound without them was 0."""
    pad = lambda a, left, right: np.concatenate([left, a, right], 1)  # noqa: E731

    def widen(idx, t, wd, wc, wr, dc):
        z, enter = np.zeros((len(t), 1)), dc if sampler.kind == "linear" else abs(float(sampler.cubic_a)) * dc * dc
        lo, hi = np.where(t <= dc, enter, 0.0)[:, None], np.where(1 - t <= dc, enter, 0.0)[:, None]
        return (pad(idx, idx[:, :1] - 1, idx[:, -1:] + 1), t), pad(wd, z, z), pad(wc, lo, hi), pad(wr, z, z)
    return [list(v) for v in zip(*(widen(*win, *rest) for win, *rest in zip(windows, w, w_coord, w_round, dcs)))]


def _unnormalize_dc(g: np.ndarray, c: np.ndarray, L: int, align_corners: bool) -> np.ndarray:
    """The float32 error of the unnormalised coordinate c of grid value g: ((g+1)*L-1)/2 or (g+1)/2*(L-1)."""
    terms = (np.abs(g) + 1) * (L - 1 if align_corners else L) / 2 + 0.5
    return C_COORD * U * (np.abs(c) + terms)


def _padded_dc(c: np.ndarray, p: np.ndarray, dc: np.ndarray, L: int, ir: GridSampleIR) -> np.ndarray:
    """The error of the coordinate after coordinate-level padding: a clip far past the edge is exact; a
    reflection's fold adds roundings of the fold's terms."""
    moved = p != c
    if ir.padding == "reflection":
        lo, hi = coords.grid_bounds(L, ir.align_corners)
        return np.where(moved, dc + C_COORD * U * (np.abs(c) + abs(lo) + abs(hi)), dc)
    if ir.padding == "border":
        # An infinite coordinate clipped to the edge is exact too (its own dc is infinite).
        with np.errstate(invalid="ignore"):
            far = ~np.isfinite(c) | (np.abs(p - c) > dc)
        return np.where(moved & far, 0.0, dc)
    return dc


def bound_gridsample(ir: GridSampleIR, x, grid, grid_step: float = 0.0) -> Parts:
    """``grid_step``: grid values known to that share of max(|g|, 2^-14) only (``tolerance.rounded_input_bound``)."""
    x, grid = np.asarray(x), np.asarray(grid)
    want_shape = x.shape[:2] + grid.shape[1:-1]
    if not _is_float(x) or ir.sampler.kind == "nearest" or x.size == 0:
        return Parts.zero(want_shape)
    D = ir.spatial_rank
    N, C = x.shape[:2]
    spatial = x.shape[2:]
    P = int(np.prod(grid.shape[1:-1]))
    bounds = [coords.grid_bounds(L, ir.align_corners) for L in spatial]
    g = grid.reshape(N * P, D).astype(np.float64)  # every image's points at once (``reference.planes``)
    pts, dcs = [], []
    for d in range(D):
        L, gd = spatial[d], g[:, D - 1 - d]
        c = coords.unnormalize_as(gd, L, ir.align_corners, ir.arith)
        p = _coordinate_padding(c, L, ir)
        pts.append(p)
        dc = _padded_dc(c, p, _unnormalize_dc(gd, c, L, ir.align_corners), L, ir)
        dcs.append(dc + grid_step * np.maximum(np.abs(gd), 2.0 ** -14) * (L - 1 if ir.align_corners else L) / 2
                   if grid_step else dc)  # (not 0 * inf where a coordinate is not finite)
    _, e, a = sample_bound(x, pts, dcs, ir.sampler, ir.padding, bounds, batch=np.repeat(np.arange(N), P))
    def shaped(v):
        return np.moveaxis(v.reshape(C, N, P), 0, 1).reshape(want_shape)

    return Parts(shaped(e), shaped(a), ir_taps(ir.sampler) ** D, *_output_rounding(x.dtype))


def ir_taps(sampler: Sampler) -> int:
    """Taps per axis of a point sampler."""
    return {"nearest": 1, "linear": 2}.get(sampler.kind, 4)


# ----------------------------------------------------------------------------------------------------------
# DeformConv: bilinear samples, then the convolution's accumulation over C*K.


def bound_deformconv(ir: DeformConvIR, x, w, offset, b=None, mask=None) -> Parts:
    x, w, offset = np.asarray(x), np.asarray(w), np.asarray(offset)
    N, C = x.shape[:2]
    kernel, out_sp = deform_geometry(ir, x, w, offset)
    OC = w.shape[0]
    if not _is_float(x) or x.size == 0:
        return Parts.zero((N, OC) + out_sp)
    D = ir.spatial_rank
    K, P = math.prod(kernel), math.prod(out_sp)
    msk = None if mask is None else np.abs(np.asarray(mask).reshape(N, ir.offset_group, K, P).astype(np.float64))
    spatial = x.shape[2:]
    # |p0 + k*dil| is at most the padded input's extent: the base terms of each position's sum.
    reach = [spatial[d] + ir.pads[d] + ir.pads[D + d] + (kernel[d] - 1) * ir.dilations[d] for d in range(D)]
    bounds = [(0.0, float(L - 1)) for L in spatial]
    e_cols = np.zeros((N, C, K, P))
    a_cols = np.zeros((N, C, K, P))
    for n, og, sl, pts, padding, inside in deform_points(ir, x, offset, kernel, out_sp):
        dcs = [C_COORD * U * (2 * np.abs(p) + 2 * r) for p, r in zip(pts, reach)]
        _, e, a = sample_bound(x[n, sl], pts, dcs, ir.sampler, padding, bounds)
        keep = np.ones(K * P) if inside is None else inside.astype(np.float64)
        keep = keep.reshape(1, K, P) * (1.0 if msk is None else msk[n, og][None])
        e_cols[n, sl] = e.reshape(-1, K, P) * keep
        a_cols[n, sl] = a.reshape(-1, K, P) * keep
    w_abs = np.abs(w.astype(np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        e_y = grouped_conv(e_cols, w_abs, ir.group)
        a_y = grouped_conv(a_cols, w_abs, ir.group)
        if b is not None:
            a_y = a_y + np.abs(np.asarray(b, dtype=np.float64)).reshape(1, OC, 1)
        terms = C // ir.group * K + 1 + (mask is not None)
    shape = (N, OC) + out_sp
    return Parts(e_y.reshape(shape), a_y.reshape(shape), terms, *_output_rounding(x.dtype))


__all__ = ["bound", "magnitude", "Parts", "bound_resize", "bound_gridsample", "bound_deformconv", "sample_bound",
           "U", "C_COORD", "C_W", "C_SUM"]


BOUND = PerOp("error bound", resize=bound_resize, gridsample=bound_gridsample, deformconv=bound_deformconv)
