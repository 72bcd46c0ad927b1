// The N-D point sampler shared by GridSample and DeformConv (port of semantics/reference.py sample_points and
// _tap_weights_1d, and of semantics/coords.py unnormalize / grid_bounds / reflect). Everything is float64 and
// evaluated in the oracle's operation order, so a float64 accumulation reproduces the oracle's bits; builds
// must not contract a*b+c into FMA (CMake passes -ffp-contract=off / --fmad=false).
#pragma once

#include <cstdint>

#include "common.hpp"

namespace rb {

// coords.unnormalize: grid value in [-1, 1] -> pixel coordinate.
RB_HD inline double unnormalize(double g, int64_t L, bool align_corners) {
    if (align_corners) return (g + 1.0) / 2.0 * static_cast<double>(L - 1);
    return ((g + 1.0) * static_cast<double>(L) - 1.0) / 2.0;
}

// coords.unnormalize_as(arith="fp32"): the same formula in float32 steps (onnxruntime's GsDenormalize); the
// build's -ffp-contract=off keeps each step rounded.
RB_HD inline float unnormalize_f32(float g, int64_t L, bool align_corners) {
    if (align_corners) return (g + 1.0f) / 2.0f * static_cast<float>(L - 1);
    return ((g + 1.0f) * static_cast<float>(L) - 1.0f) / 2.0f;
}

// coords.grid_bounds: the range inside which no padding applies; reflection mirrors at these.
RB_HD inline void grid_bounds(int64_t L, bool align_corners, double& lo, double& hi) {
    if (align_corners) {
        lo = 0.0;
        hi = static_cast<double>(L - 1);
    } else {
        lo = -0.5;
        hi = static_cast<double>(L) - 0.5;
    }
}

// coords.reflect: mirror x into [lo, hi] by repeated reflection at the borders.
RB_HD inline double reflect(double x, double lo, double hi) {
    const double rng = hi - lo;
    if (rng <= 0) return lo;
    if (x >= lo && x <= hi) return x;
    const bool below = x < lo;
    const double dx = below ? lo - x : x - hi;
    const double flips = floor(dx / rng);
    const double r = dx - flips * rng;
    const bool even = fmod(flips, 2.0) == 0.0;
    const bool low_side = below ? even : !even;
    return low_side ? lo + r : hi - r;
}

RB_HD inline double clip(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

// Per-axis taps of one point: up to 4 positions and weights (reference._tap_weights_1d).
struct Taps1D {
    int n = 0;
    int64_t j[4] = {0, 0, 0, 0};
    double w[4] = {0, 0, 0, 0};
};

RB_HD inline void taps_1d(double x, Kind kind, double cubic_a, Taps1D& t) {
    if (kind == Kind::nearest) {  // x is already rounded (GridSample) or truncated here (DeformConv)
        t.n = 1;
        t.j[0] = to_index(trunc(x));
        t.w[0] = 1.0;
        return;
    }
    const double fl = floor(x);
    const double f = x - fl;
    const int64_t j0 = to_index(fl);
    if (kind == Kind::linear) {
        t.n = 2;
        t.j[0] = j0;
        t.j[1] = j0 + 1;
        t.w[0] = 1.0 - f;
        t.w[1] = f;
        return;
    }
    t.n = 4;
    for (int i = 0; i < 4; ++i) {
        t.j[i] = j0 + (i - 1);
        t.w[i] = cubic_filter<double>(f - static_cast<double>(i - 1), cubic_a);
    }
}

// The combined taps of one point over D axes, in itertools.product order (axis 0 outermost): the offset into
// the [spatial...] block and the weight (0 for a tap that the zeros padding drops; its clamped element is
// still read, as the oracle reads it, so a non-finite input propagates identically).
struct PointTaps {
    int n = 0;
    int64_t offset[64];
    double weight[64];
};

// Tap-level padding: zeros (outside taps weigh 0), border (clamp), reflection (mirror at [lo, hi], then clamp).
// The body is written for a rank D known at compile time (the loops over axes unroll; once per output point, this
// is most of GridSample's and DeformConv's cost) and dispatched from the rank below: one formula.
template <int D>
RB_HD inline void point_taps_d(const double* pts, const int64_t* spatial, Kind kind, double cubic_a,
                               Padding padding, const double* lo, const double* hi, PointTaps& out) {
    Taps1D t[kMaxSpatial];
    int64_t stride[kMaxSpatial];
    int64_t s = 1;
    for (int d = D - 1; d >= 0; --d) {
        stride[d] = s;
        s *= spatial[d];
    }
    for (int d = 0; d < D; ++d) {
        taps_1d(pts[d], kind, cubic_a, t[d]);
        if (padding == Padding::reflection)  // mirrored here; every padding clamps below
            for (int k = 0; k < t[d].n; ++k)
                t[d].j[k] = to_index(trunc(reflect(static_cast<double>(t[d].j[k]), lo[d], hi[d])));
    }
    int total = 1;
    for (int d = 0; d < D; ++d) total *= t[d].n;
    out.n = total;
    // The combinations as an odometer, the last axis fastest (no integer division per tap).
    int ks[kMaxSpatial] = {};
    for (int c = 0; c < total; ++c) {
        if (c > 0)
            for (int d = D - 1; d >= 0; --d) {
                if (++ks[d] < t[d].n) break;
                ks[d] = 0;
            }
        double w = 1.0;
        int64_t lin = 0;
        bool ok = true;
        for (int d = 0; d < D; ++d) {
            int64_t j = t[d].j[ks[d]];
            w = w * t[d].w[ks[d]];
            const int64_t L = spatial[d];
            if (padding == Padding::zeros) ok = ok && j >= 0 && j < L;
            j = j < 0 ? 0 : (j > L - 1 ? L - 1 : j);
            lin += j * stride[d];
        }
        out.offset[c] = lin;
        out.weight[c] = ok ? w : 0.0;
    }
}

RB_HD inline void point_taps(const double* pts, int D, const int64_t* spatial, Kind kind, double cubic_a,
                             Padding padding, const double* lo, const double* hi, PointTaps& out) {
    if (D == 1) point_taps_d<1>(pts, spatial, kind, cubic_a, padding, lo, hi, out);
    else if (D == 2) point_taps_d<2>(pts, spatial, kind, cubic_a, padding, lo, hi, out);
    else point_taps_d<3>(pts, spatial, kind, cubic_a, padding, lo, hi, out);
}

// sum_c weight[c] * data[offset[c]] in float64, in tap order.
template <class T>
RB_HD inline double apply_taps(const T* data, const PointTaps& taps) {
    double acc = 0.0;
    for (int c = 0; c < taps.n; ++c) acc += taps.weight[c] * load<double>(data[taps.offset[c]]);
    return acc;
}

}  // namespace rb
