// DeformConv with 1, 2 or 3 spatial axes (port of semantics/reference.py run_deformconv): the convolution's
// taps are sampled at o*stride - pad_begin + k*dilation + offset (float64), with zeros outside the input on each
// tap (zero_taps: ONNX / torchvision / OpenVINO bilinear_interpolation_pad=true) or, for clamp_in_range
// (OpenVINO bilinear_interpolation_pad=false), 0 for a sample outside [0, L) on any axis and clamped taps
// inside; then multiplied by the mask, then contracted with W per group.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common.hpp"
#include "points.hpp"

namespace rb {

struct DeformConvSpec {
    int D = 2;
    int64_t N = 0, C = 0, OC = 0;
    int64_t spatial[kMaxSpatial] = {1, 1, 1};
    int64_t kernel[kMaxSpatial] = {1, 1, 1};
    int64_t out[kMaxSpatial] = {1, 1, 1};
    int64_t K = 1;  // product of kernel
    int64_t P = 1;  // product of out
    int64_t stride[kMaxSpatial] = {1, 1, 1};
    int64_t pad_begin[kMaxSpatial] = {0, 0, 0};
    int64_t dilation[kMaxSpatial] = {1, 1, 1};
    int64_t group = 1, offset_group = 1;
    Kind kind = Kind::linear;
    double cubic_a = -0.75;
    DeformBorder border = DeformBorder::zero_taps;
};

// Taps of kernel tap k at output point p for image n, offset group og; ``factor`` receives what multiplies the
// sampled value (the clamp_in_range inside test times the mask). offset is [N, OG, K, D, P]; mask [N, OG, K, P]
// or null. ``o`` and ``kk`` are p and k decoded per axis; the rank D is a compile-time constant here (the CPU's
// per-point loop calls this directly, with the decoding hoisted).
template <int D, class T>
RB_HD inline void deform_point_taps_at(const DeformConvSpec& s, const T* offset, const T* mask, int64_t n,
                                       int64_t og, int64_t k, const int64_t* kk, int64_t p, const int64_t* o,
                                       PointTaps& taps, double& factor) {
    const int64_t okd = ((n * s.offset_group + og) * s.K + k);
    double pts[kMaxSpatial], lo[kMaxSpatial], hi[kMaxSpatial];
    bool inside = true;
    for (int d = 0; d < D; ++d) {
        const double base = static_cast<double>(o[d] * s.stride[d] - s.pad_begin[d] + kk[d] * s.dilation[d]);
        pts[d] = base + load<double>(offset[(okd * D + d) * s.P + p]);
        lo[d] = 0.0;
        hi[d] = static_cast<double>(s.spatial[d] - 1);
        inside = inside && pts[d] >= 0.0 && pts[d] < static_cast<double>(s.spatial[d]);
    }
    const bool clamp = s.border == DeformBorder::clamp_in_range;
    point_taps_d<D>(pts, s.spatial, s.kind, s.cubic_a, clamp ? Padding::border : Padding::zeros, lo, hi, taps);
    factor = 1.0;
    if (clamp) factor = inside ? 1.0 : 0.0;
    if (mask) factor = factor * load<double>(mask[okd * s.P + p]);
}

// p = sum o[d] * prod(out[d+1:]) (and k over kernel), decoded per axis, last axis fastest.
RB_HD inline void decode_index(int64_t i, int D, const int64_t* lens, int64_t* out) {
    for (int d = D - 1; d >= 0; --d) {
        out[d] = i % lens[d];
        i /= lens[d];
    }
}

template <class T>
RB_HD inline void deform_point_taps(const DeformConvSpec& s, const T* offset, const T* mask, int64_t n,
                                    int64_t og, int64_t k, int64_t p, PointTaps& taps, double& factor) {
    int64_t o[kMaxSpatial] = {}, kk[kMaxSpatial] = {};  // zeroed: g++ cannot see that only D are read
    decode_index(p, s.D, s.out, o);
    decode_index(k, s.D, s.kernel, kk);
    if (s.D == 1) deform_point_taps_at<1>(s, offset, mask, n, og, k, kk, p, o, taps, factor);
    else if (s.D == 2) deform_point_taps_at<2>(s, offset, mask, n, og, k, kk, p, o, taps, factor);
    else deform_point_taps_at<3>(s, offset, mask, n, og, k, kk, p, o, taps, factor);
}

// Host: a checked spec from the shapes (ONNX DeformConv rules). pads: begins then ends.
inline DeformConvSpec make_deformconv_spec(int D, const int64_t* x_shape, const int64_t* w_shape,
                                           const int64_t* strides, const int64_t* pads, const int64_t* dilations,
                                           int64_t group, int64_t offset_group, Kind kind, double cubic_a,
                                           DeformBorder border) {
    if (D < 1 || D > kMaxSpatial)
        throw std::invalid_argument("DeformConv supports 1 to " + std::to_string(kMaxSpatial) +
                                    " spatial axes, got " + std::to_string(D));
    DeformConvSpec s;
    s.D = D;
    s.N = x_shape[0];
    s.C = x_shape[1];
    s.OC = w_shape[0];
    s.group = group;
    s.offset_group = offset_group;
    if (group < 1 || offset_group < 1 || s.C % group || s.OC % group || w_shape[1] * group != s.C ||
        s.C % offset_group)
        throw std::invalid_argument("X channels " + std::to_string(s.C) + ", W " + std::to_string(s.OC) + "x" +
                                    std::to_string(w_shape[1]) + " do not fit group=" + std::to_string(group) +
                                    ", offset_group=" + std::to_string(offset_group));
    s.K = 1;
    s.P = 1;
    for (int d = 0; d < D; ++d) {
        s.spatial[d] = x_shape[2 + d];
        s.kernel[d] = w_shape[2 + d];
        s.stride[d] = strides[d];
        s.pad_begin[d] = pads[d];
        s.dilation[d] = dilations[d];
        if (s.stride[d] < 1 || s.dilation[d] < 1 || s.kernel[d] < 1 || s.spatial[d] < 1)
            throw std::invalid_argument("DeformConv strides, dilations, kernel and input lengths must be positive");
        const int64_t eff = (s.kernel[d] - 1) * s.dilation[d] + 1;
        s.out[d] = (s.spatial[d] + pads[d] + pads[D + d] - eff) / s.stride[d] + 1;
        if (s.spatial[d] + pads[d] + pads[D + d] - eff < 0 || s.out[d] <= 0)
            throw std::invalid_argument("DeformConv output is empty on spatial axis " + std::to_string(d));
        s.K *= s.kernel[d];
        s.P *= s.out[d];
    }
    s.kind = kind;
    s.cubic_a = cubic_a;
    s.border = border;
    return s;
}

}  // namespace rb
