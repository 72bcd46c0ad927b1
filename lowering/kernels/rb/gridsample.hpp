// GridSample with 1, 2 or 3 spatial axes (port of semantics/reference.py run_gridsample): per output point,
// unnormalise each grid component in the framework's arithmetic (float64, float32 steps, or float64 rounded once),
// round half to even for nearest, apply the coordinate-level padding, then sample with tap-level padding.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common.hpp"
#include "points.hpp"

namespace rb {

struct GridSampleSpec {
    int D = 2;
    int64_t N = 0, C = 0;
    int64_t spatial[kMaxSpatial] = {1, 1, 1};  // input spatial lengths, outermost first
    int64_t P = 0;                              // output points per image (product of the grid's middle axes)
    Kind kind = Kind::linear;
    double cubic_a = -0.75;
    Padding padding = Padding::zeros;
    PaddingOn padding_on = PaddingOn::coordinate_and_taps;
    bool align_corners = false;
    Arith arith = Arith::fp32;
};

// reference._coordinate_padding, border padding: plain arguments and selects, so that a loop over points
// (block_taps.hpp) inlines and vectorises it.
// N: double, or float on the CPU's float32 taps (block_taps.hpp).
template <class N>
RB_HD inline N border_coordinate(N x, N lo, N hi, N last, bool outside_only, bool taps_only) {
    // ONNX reference (outside_only): only coordinates outside [lo, hi] move. PyTorch / onnxruntime / OpenVINO:
    // linear and nearest clip; cubic pads each tap only (taps_only).
    const N c = x < N(0) ? N(0) : (x > last ? last : x);  // clip(x, 0, last)
    return outside_only ? ((x < lo || x > hi) ? c : x) : (taps_only ? x : c);
}

// The arguments of border_coordinate for axis length L: (lo, hi, last, outside_only, taps_only).
struct BorderArgs {
    double lo, hi, last;
    bool outside_only, taps_only;
};
RB_HD inline BorderArgs border_args(int64_t L, const GridSampleSpec& s) {
    BorderArgs a;
    grid_bounds(L, s.align_corners, a.lo, a.hi);
    a.last = static_cast<double>(L - 1);
    a.outside_only = s.padding_on == PaddingOn::coordinate_and_taps;
    a.taps_only = s.kind == Kind::cubic;
    return a;
}

// Reflection on the taps (PyTorch / onnxruntime / OpenVINO) for linear and nearest: reflected, then clipped.
RB_HD inline double reflect_clip(double x, double lo, double hi, double last) {
    return clip(reflect(x, lo, hi), 0.0, last);
}

// reference._coordinate_padding.
RB_HD inline double coordinate_padding(double x, int64_t L, const GridSampleSpec& s) {
    if (s.padding == Padding::border) {
        const BorderArgs a = border_args(L, s);
        return border_coordinate(x, a.lo, a.hi, a.last, a.outside_only, a.taps_only);
    }
    if (s.padding != Padding::reflection) return x;
    double lo, hi;
    grid_bounds(L, s.align_corners, lo, hi);
    if (s.padding_on == PaddingOn::coordinate_and_taps) return (x < lo || x > hi) ? reflect(x, lo, hi) : x;
    // PyTorch / onnxruntime / OpenVINO: reflected, then clipped; cubic pads each tap only.
    return s.kind == Kind::cubic ? x : reflect_clip(x, lo, hi, static_cast<double>(L - 1));
}

// Taps of one output point; ``g`` points at its D grid values, listed innermost axis first (x, y[, z]).
template <class T>
RB_HD inline void gridsample_point_taps(const GridSampleSpec& s, const T* g, PointTaps& taps) {
    double pts[kMaxSpatial], lo[kMaxSpatial], hi[kMaxSpatial];
    for (int d = 0; d < s.D; ++d) {
        const int64_t L = s.spatial[d];
        // Which element nearest reads at a .5 tie depends on the arithmetic (semantics/coords.py unnormalize_as).
        double p = s.arith == Arith::fp32 ? static_cast<double>(unnormalize_f32(load<float>(g[s.D - 1 - d]), L,
                                                                                  s.align_corners))
                                          : unnormalize(load<double>(g[s.D - 1 - d]), L, s.align_corners);
        if (s.arith == Arith::fp32_fused) p = static_cast<double>(static_cast<float>(p));
        if (s.kind == Kind::nearest) p = rint(p);  // half to even under the default rounding mode
        pts[d] = coordinate_padding(p, L, s);
        grid_bounds(L, s.align_corners, lo[d], hi[d]);
    }
    point_taps(pts, s.D, s.spatial, s.kind, s.cubic_a, s.padding, lo, hi, taps);
}

// Host: a checked spec from the tensor shapes. x_shape: D + 2 values; out_shape: the grid's D middle values.
inline GridSampleSpec make_gridsample_spec(int D, const int64_t* x_shape, const int64_t* out_shape, Kind kind,
                                           double cubic_a, Padding padding, PaddingOn padding_on,
                                           bool align_corners, Arith arith) {
    if (D < 1 || D > kMaxSpatial)
        throw std::invalid_argument("GridSample supports 1 to " + std::to_string(kMaxSpatial) +
                                    " spatial axes, got " + std::to_string(D));
    GridSampleSpec s;
    s.D = D;
    s.N = x_shape[0];
    s.C = x_shape[1];
    s.P = 1;
    for (int d = 0; d < D; ++d) {
        s.spatial[d] = x_shape[2 + d];
        if (s.spatial[d] <= 0) throw std::invalid_argument("GridSample input has an empty spatial axis");
        s.P *= out_shape[d];
    }
    s.kind = kind;
    s.cubic_a = cubic_a;
    s.padding = padding;
    s.padding_on = padding_on;
    s.align_corners = align_corners;
    s.arith = arith;
    return s;
}

}  // namespace rb
