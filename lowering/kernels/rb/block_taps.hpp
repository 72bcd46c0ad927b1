// The taps of a block of points at once (CPU, float X): per point the same operations in the same order as
// point_taps_d + compact_taps (points.hpp, cpu.hpp), but laid out as arrays over the block's points so that g++
// vectorises every loop. Per-point tap code was most of GridSample's time (2-D border 1.8x OpenVINO's
// GridSample-9 before this). Zeros and border tap padding, and reflection where block_reflection allows it.
// The number type N: double (DeformConv, and GridSample where float32 could move a nearest tie), or float
// (GridSample's linear / cubic taps and float32-coordinate nearest): twice the lanes, and within the error
// bound that defines exact (semantics/error_bound.py: the coordinate, each weight and the sum in float32).
#pragma once

#include <cmath>
#include <cstdint>

#include "common.hpp"
#include "gridsample.hpp"
#include "points.hpp"

namespace rb {
namespace cpu {

constexpr int64_t kBlock = 64;  // points per block: the rows of the compact tap tables

// factor[q] for samplers without one (GridSample).
template <class N = double>
inline const N* block_ones() {
    static const struct Ones {
        N v[kBlock];
        Ones() { for (N& x : v) x = N(1); }
    } ones;
    return ones.v;
}

// Tap position of a floor/trunc value as int32 without overflow: anything beyond [-4, L + 4] (and NaN, which
// to_index sends far below) reads as far outside as any tap of a point there, so clamping changes no tap.
template <class N>
inline int32_t block_index(N fl, N len) {
    const N c = !(fl >= N(-4)) ? N(-4) : (fl > len + N(4) ? len + N(4) : fl);
    return static_cast<int32_t>(c);
}

// rint (round half to even under the default rounding mode) and floor as additions and selects, which g++
// vectorises (std::floor / std::rint need -fno-trapping-math to vectorise): below 2^52 (float: 2^23) adding and
// subtracting it rounds to an integer exactly as rint does; at or above it every value is an integer already.
template <class N>
inline N rint_add(N p) {
    const N big = sizeof(N) == 8 ? N(4503599627370496.0) : N(8388608.0f);  // 2^52, 2^23
    const N t = p < 0 ? -big : big;
    return abs_of(p) < big ? (p + t) - t : p;
}
template <class N>
inline N floor_add(N x) {
    const N r = rint_add(x);
    return r > x ? r - N(1) : r;
}

// Per-axis taps of the block: first tap index and up to 4 weights per point (taps_1d).
template <class N>
struct BlockAxis {
    int32_t j0[kBlock];
    N w[4][kBlock];
};

template <Kind K, class N>
inline void block_axis_taps(const N* x, int64_t np, int64_t len, N cubic_a, BlockAxis<N>& t) {
    const N L = static_cast<N>(len);
    if (K == Kind::nearest) {  // trunc: block_index's conversion truncates, and its bounds are integers
        for (int64_t q = 0; q < np; ++q) t.j0[q] = block_index(x[q], L);
        return;
    }
    for (int64_t q = 0; q < np; ++q) {
        const N fl = floor_add(x[q]);
        const N f = x[q] - fl;
        if (K == Kind::linear) {
            t.j0[q] = block_index(fl, L);
            t.w[0][q] = N(1) - f;
            t.w[1][q] = f;
        } else {
            t.j0[q] = block_index(fl, L) - 1;
            for (int i = 0; i < 4; ++i) t.w[i][q] = cubic_filter<N>(f - static_cast<N>(i - 1), cubic_a);
        }
    }
}

// The compact taps (tap-major, row length ``ld``) of np points whose coordinates are pts[d][q]: offsets into
// the [spatial...] block and float32 weights times factor[q]. Tap order is point_taps_d's odometer.
template <int D, Kind K, class N>
inline void block_taps_k(const N (*pts)[kBlock], int64_t np, const int64_t* spatial, N cubic_a, bool zeros,
                         const N* factor, int64_t ld, int32_t* off, float* w, const int32_t* past) {
    constexpr int per_axis = K == Kind::nearest ? 1 : K == Kind::linear ? 2 : 4;
    BlockAxis<N> t[D];
    int32_t stride[D], len[D], top[D];
    int32_t s = 1;
    for (int d = D - 1; d >= 0; --d) {
        stride[d] = s;
        len[d] = static_cast<int32_t>(spatial[d]);
        top[d] = past ? past[d] : len[d] - 1;
        s *= len[d];
        block_axis_taps<K>(pts[d], np, spatial[d], cubic_a, t[d]);
    }
    int total = 1;
    for (int d = 0; d < D; ++d) total *= per_axis;
    int ks[D] = {};
    for (int c = 0; c < total; ++c) {
        if (c > 0)
            for (int d = D - 1; d >= 0; --d) {
                if (++ks[d] < per_axis) break;
                ks[d] = 0;
            }
        const N* wa[D];
        for (int d = 0; d < D; ++d) wa[d] = t[d].w[ks[d]];
        int32_t* oc = off + c * ld;
        float* wc = w + c * ld;
        for (int64_t q = 0; q < np; ++q) {
            N wq = N(1);
            int32_t lin = 0;
            bool ok = true;
            for (int d = 0; d < D; ++d) {
                int32_t j = t[d].j0[q] + ks[d];
                if (K != Kind::nearest) wq = wq * wa[d][q];
                ok = ok & (j >= 0) & (j < len[d]);  // no short circuit: branch-free, vectorises
                j = j < 0 ? 0 : (j > len[d] - 1 ? top[d] : j);
                lin += j * stride[d];
            }
            const N wt = zeros && !ok ? N(0) : wq;
            oc[q] = lin;
            wc[q] = static_cast<float>(wt * factor[q]);  // times 1.0 changes no bit
        }
    }
}

// ``past``: per axis, the element a tap past the end reads (reflection's mirror of it; null: the last one).
template <int D, class N>
inline void block_taps(const N (*pts)[kBlock], int64_t np, const int64_t* spatial, Kind kind, N cubic_a,
                       Padding padding, const N* factor, int64_t ld, int32_t* off, float* w,
                       const int32_t* past = nullptr) {
    const bool zeros = padding == Padding::zeros;
    if (kind == Kind::nearest)
        block_taps_k<D, Kind::nearest, N>(pts, np, spatial, cubic_a, zeros, factor, ld, off, w, past);
    else if (kind == Kind::linear)
        block_taps_k<D, Kind::linear, N>(pts, np, spatial, cubic_a, zeros, factor, ld, off, w, past);
    else block_taps_k<D, Kind::cubic, N>(pts, np, spatial, cubic_a, zeros, factor, ld, off, w, past);
}

// unnormalize(_f32) of one grid component (stride D) over np points, align_corners a constant: a branch on it
// inside the loop kept the loop scalar (g++ 12).
template <int D, bool AC, class N, class G>
inline void unnormalize_block(const G* gc, int64_t np, int64_t L, Arith arith, N* p) {
    if (arith == Arith::fp32) {
        for (int64_t q = 0; q < np; ++q) p[q] = static_cast<N>(unnormalize_f32(load<float>(gc[q * D]), L, AC));
        return;
    }
    for (int64_t q = 0; q < np; ++q) p[q] = static_cast<N>(unnormalize(load<double>(gc[q * D]), L, AC));
    if (sizeof(N) == 8 && arith == Arith::fp32_fused)
        for (int64_t q = 0; q < np; ++q) p[q] = static_cast<N>(static_cast<float>(p[q]));
}

// GridSample's coordinates of np points (grid values g[q * D + component], x first), the per-point rule of
// gridsample_point_taps (reflection only where block_reflection allows it): unnormalise in the spec's
// arithmetic, round nearest half to even, then the coordinate-level padding. N = float: fp32 arithmetic
// computes in float32 as the spec's framework does; fp32_fused rounds its float64 value once, as defined; other
// arithmetic rounds the float64 value to float32 (linear and cubic only: gridsample_taps_in_float).
template <int D, class N, class G>
inline void gridsample_block_coords(const GridSampleSpec& s, const G* g, int64_t np, N (*pts)[kBlock]) {
    for (int d = 0; d < D; ++d) {
        const int64_t L = s.spatial[d];
        const G* gc = g + (D - 1 - d);  // this axis' grid component (x first)
        N* p = pts[d];
        if (s.align_corners) unnormalize_block<D, true>(gc, np, L, s.arith, p);
        else unnormalize_block<D, false>(gc, np, L, s.arith, p);
        if (s.kind == Kind::nearest)
            for (int64_t q = 0; q < np; ++q) p[q] = rint_add(p[q]);
        if (s.padding == Padding::reflection) {  // coordinate_padding's rule in float64 (block_reflection's cases)
            double lo, hi;
            grid_bounds(L, s.align_corners, lo, hi);
            const double last = static_cast<double>(L - 1);
            for (int64_t q = 0; q < np; ++q)
                p[q] = static_cast<N>(reflect_clip(static_cast<double>(p[q]), lo, hi, last));
            continue;
        }
        if (s.padding != Padding::border) continue;  // zeros moves no coordinate
        const BorderArgs a = border_args(L, s);  // loop-invariant locals: the loop below vectorises
        const N lo = static_cast<N>(a.lo), hi = static_cast<N>(a.hi), last = static_cast<N>(a.last);
        for (int64_t q = 0; q < np; ++q) p[q] = border_coordinate(p[q], lo, hi, last, a.outside_only, a.taps_only);
    }
}

// Whether GridSample's block taps may be float32: not where a float64 coordinate decides a nearest tie, and
// only while float32 holds every index and bound exactly (lengths below 2^22).
inline bool gridsample_taps_in_float(const GridSampleSpec& s) {
    for (int d = 0; d < s.D; ++d)
        if (s.spatial[d] >= (int64_t(1) << 22)) return false;
    return s.kind != Kind::nearest || s.arith == Arith::fp32 || s.arith == Arith::fp32_fused;
}

// Whether reflection can take the block path: linear and nearest with padding on the taps, whose coordinate is
// reflected and clipped to [0, L - 1] first, so that the only tap outside is L (a linear tap of weight 0 at the
// last element); point_taps_d mirrors it to the same element for every point: ``past`` (block_taps).
// Cubic mirrors every tap and the ONNX reference reflects before its taps: those stay per point. So does a
// float64 coordinate that the float32 block taps would round before mirroring (far outside, that is another point).
inline bool block_reflection(const GridSampleSpec& s, int32_t* past) {
    if (s.padding != Padding::reflection || s.kind == Kind::cubic || s.padding_on != PaddingOn::taps) return false;
    if (s.arith != Arith::fp32 && s.arith != Arith::fp32_fused && gridsample_taps_in_float(s)) return false;
    for (int d = 0; d < s.D; ++d) {
        double lo, hi;
        grid_bounds(s.spatial[d], s.align_corners, lo, hi);
        const int64_t j = to_index(trunc(reflect(static_cast<double>(s.spatial[d]), lo, hi)));
        past[d] = static_cast<int32_t>(j < 0 ? 0 : (j > s.spatial[d] - 1 ? s.spatial[d] - 1 : j));
    }
    return true;
}

}  // namespace cpu
}  // namespace rb
