// The taps of a block of points at once (CPU, float X): per point the same float64 operations in the same order
// as point_taps_d + compact_taps (points.hpp, cpu.hpp), but laid out as arrays over the block's points so that
// g++ vectorises every loop. Per-point tap code was most of GridSample's time (2-D border 1.8x OpenVINO's
// GridSample-9 before this). Zeros and border tap padding; reflection stays on the per-point code.
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
inline const double* block_ones() {
    static const struct Ones {
        double v[kBlock];
        Ones() { for (double& x : v) x = 1.0; }
    } ones;
    return ones.v;
}

// Tap position of a floor/trunc value as int32 without overflow: anything beyond [-4, L + 4] (and NaN, which
// to_index sends far below) reads as far outside as any tap of a point there, so clamping changes no tap.
inline int32_t block_index(double fl, double len) {
    const double c = !(fl >= -4.0) ? -4.0 : (fl > len + 4.0 ? len + 4.0 : fl);
    return static_cast<int32_t>(c);
}

// rint (round half to even under the default rounding mode) and floor as additions and selects, which g++
// vectorises (std::floor / std::rint need -fno-trapping-math to vectorise): below 2^52 adding and subtracting
// 2^52 rounds to an integer exactly as rint does; at or above it every double is an integer already.
inline double rint_add(double p) {
    const double big = 4503599627370496.0;  // 2^52
    const double t = p < 0 ? -big : big;
    return abs_of(p) < big ? (p + t) - t : p;
}
inline double floor_add(double x) {
    const double r = rint_add(x);
    return r > x ? r - 1.0 : r;
}

// Per-axis taps of the block: first tap index and up to 4 weights per point (taps_1d).
struct BlockAxis {
    int32_t j0[kBlock];
    double w[4][kBlock];
};

template <Kind K>
inline void block_axis_taps(const double* x, int64_t np, int64_t len, double cubic_a, BlockAxis& t) {
    const double L = static_cast<double>(len);
    if (K == Kind::nearest) {  // trunc: block_index's conversion truncates, and its bounds are integers
        for (int64_t q = 0; q < np; ++q) t.j0[q] = block_index(x[q], L);
        return;
    }
    for (int64_t q = 0; q < np; ++q) {
        const double fl = floor_add(x[q]);
        const double f = x[q] - fl;
        if (K == Kind::linear) {
            t.j0[q] = block_index(fl, L);
            t.w[0][q] = 1.0 - f;
            t.w[1][q] = f;
        } else {
            t.j0[q] = block_index(fl, L) - 1;
            for (int i = 0; i < 4; ++i) t.w[i][q] = cubic_filter<double>(f - static_cast<double>(i - 1), cubic_a);
        }
    }
}

// The compact taps (tap-major, row length ``ld``) of np points whose coordinates are pts[d][q]: offsets into
// the [spatial...] block and float32 weights times factor[q]. Tap order is point_taps_d's odometer.
template <int D, Kind K>
inline void block_taps_k(const double (*pts)[kBlock], int64_t np, const int64_t* spatial, double cubic_a,
                         bool zeros, const double* factor, int64_t ld, int32_t* off, float* w) {
    constexpr int per_axis = K == Kind::nearest ? 1 : K == Kind::linear ? 2 : 4;
    BlockAxis t[D];
    int32_t stride[D], len[D];
    int32_t s = 1;
    for (int d = D - 1; d >= 0; --d) {
        stride[d] = s;
        len[d] = static_cast<int32_t>(spatial[d]);
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
        const double* wa[D];
        for (int d = 0; d < D; ++d) wa[d] = t[d].w[ks[d]];
        int32_t* oc = off + c * ld;
        float* wc = w + c * ld;
        for (int64_t q = 0; q < np; ++q) {
            double wq = 1.0;
            int32_t lin = 0;
            bool ok = true;
            for (int d = 0; d < D; ++d) {
                int32_t j = t[d].j0[q] + ks[d];
                if (K != Kind::nearest) wq = wq * wa[d][q];
                ok = ok & (j >= 0) & (j < len[d]);  // no short circuit: branch-free, vectorises
                j = j < 0 ? 0 : (j > len[d] - 1 ? len[d] - 1 : j);
                lin += j * stride[d];
            }
            const double wt = zeros && !ok ? 0.0 : wq;
            oc[q] = lin;
            wc[q] = static_cast<float>(wt * factor[q]);  // times 1.0 changes no bit
        }
    }
}

template <int D>
inline void block_taps(const double (*pts)[kBlock], int64_t np, const int64_t* spatial, Kind kind, double cubic_a,
                       Padding padding, const double* factor, int64_t ld, int32_t* off, float* w) {
    const bool zeros = padding == Padding::zeros;
    if (kind == Kind::nearest) block_taps_k<D, Kind::nearest>(pts, np, spatial, cubic_a, zeros, factor, ld, off, w);
    else if (kind == Kind::linear) block_taps_k<D, Kind::linear>(pts, np, spatial, cubic_a, zeros, factor, ld, off, w);
    else block_taps_k<D, Kind::cubic>(pts, np, spatial, cubic_a, zeros, factor, ld, off, w);
}

// GridSample's coordinates of np points (grid values g[q * D + component], x first), the per-point rule of
// gridsample_point_taps without reflection: unnormalise in the spec's arithmetic, round nearest half to even,
// then the coordinate-level padding.
template <int D, class G>
inline void gridsample_block_coords(const GridSampleSpec& s, const G* g, int64_t np, double (*pts)[kBlock]) {
    for (int d = 0; d < D; ++d) {
        const int64_t L = s.spatial[d];
        const int comp = D - 1 - d;
        double* p = pts[d];
        if (s.arith == Arith::fp32) {
            for (int64_t q = 0; q < np; ++q)
                p[q] = static_cast<double>(unnormalize_f32(load<float>(g[q * D + comp]), L, s.align_corners));
        } else {
            for (int64_t q = 0; q < np; ++q) p[q] = unnormalize(load<double>(g[q * D + comp]), L, s.align_corners);
            if (s.arith == Arith::fp32_fused)
                for (int64_t q = 0; q < np; ++q) p[q] = static_cast<double>(static_cast<float>(p[q]));
        }
        if (s.kind == Kind::nearest)
            for (int64_t q = 0; q < np; ++q) p[q] = rint_add(p[q]);
        if (s.padding != Padding::border) continue;  // zeros moves no coordinate
        const BorderArgs a = border_args(L, s);  // loop-invariant locals: the loop below vectorises
        for (int64_t q = 0; q < np; ++q)
            p[q] = border_coordinate(p[q], a.lo, a.hi, a.last, a.outside_only, a.taps_only);
    }
}

}  // namespace cpu
}  // namespace rb
