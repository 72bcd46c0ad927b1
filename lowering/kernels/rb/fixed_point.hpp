// uint8 antialias as onnxruntime and PyTorch compute it (semantics/fixed_point.py, ResizeIR.integer_rounding
// "q22_per_axis"): Pillow's resampler, one resized axis at a time from the last, float32 weights rounded to
// multiples of 2^-22, each output floor((2^21 + sum value * weight) / 2^22) clipped to [0, 255] before the next
// axis reads it. The weights are float32 arithmetic in the order the Python module spells it (the library is
// built with -ffp-contract=off: no step is fused), so the tables are the oracle's; the sums are exact int32.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "taps.hpp"

namespace rb {

struct FixedTable {
    int64_t axis = 0, in_len = 0, out_len = 0, K = 0;
    std::vector<int64_t> start;    // [out]: first tap
    std::vector<int32_t> weight;   // [out, K]: integers over 2^22, 0 past the window
    std::vector<uint8_t> outside;  // [out] (tf_crop_and_resize): takes the extrapolation value; else empty
};

constexpr int32_t kFixedHalf = 1 << 21;
constexpr int kFixedShift = 22;

// onnxruntime's coordinate map in float32 (its double steps where it has them).
inline float fixed_coordinate(const std::string& coord, float i, float s, int64_t out, int64_t in, float r0, float r1) {
    const float out_f = static_cast<float>(out), in_f = static_cast<float>(in);
    if (coord == "asymmetric") return i / s;
    if (coord == "pytorch_half_pixel") return out > 1 ? (i + 0.5f) / s - 0.5f : 0.0f;
    if (coord == "tf_half_pixel_for_nn") return (i + 0.5f) / s;
    if (coord == "align_corners") return out == 1 ? 0.0f : i * (in_f - 1.0f) / (out_f - 1.0f);
    if (coord == "tf_crop_and_resize") {
        if (out > 1) return r0 * (in_f - 1.0f) + (i * (r1 - r0) * (in_f - 1.0f)) / (out_f - 1.0f);
        return static_cast<float>(0.5 * static_cast<double>(r0 + r1) * static_cast<double>(in_f - 1.0f));
    }
    if (coord == "half_pixel_symmetric") {
        const float adjustment = out_f / (s * in_f);
        const float offset = (in_f / 2.0f) * (1.0f - adjustment);
        return static_cast<float>(static_cast<double>(offset) + (static_cast<double>(i) + 0.5) / s - 0.5);
    }
    return ((i + 0.5f) / s) - 0.5f;  // half_pixel
}

inline float fixed_filter(Kind kind, float a, float x) {
    x = std::fabs(x);
    if (kind == Kind::linear) return x < 1.0f ? 1.0f - x : 0.0f;
    if (x < 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
    if (x < 2.0f) return (((x - 5.0f) * x + 8.0f) * x - 4.0f) * a;
    return 0.0f;
}

// std::round of a float32 value: half away from zero.
inline int32_t round_away(float v) {
    const double r = std::floor(std::fabs(static_cast<double>(v)) + 0.5);
    return static_cast<int32_t>(v < 0 ? -r : r);
}

// One axis' fixed-point taps (semantics/fixed_point.py axis_taps): ``s`` the float32 scale, (r0, r1) the crop box.
inline FixedTable fixed_taps(const AxisSpec& ax, const std::string& coord, Kind kind, float a, bool exclude, float s,
                             float r0, float r1) {
    FixedTable t;
    t.axis = ax.axis;
    t.in_len = ax.in_len;
    t.out_len = ax.out_len;
    const int64_t in = ax.in_len;
    const float scale = 1.0f / s;
    float support = (kind == Kind::linear ? 2.0f : 4.0f) * 0.5f;
    if (scale >= 1.0f) support = support * scale;
    const int64_t window = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
    const float inv = scale >= 1.0f ? 1.0f / scale : 1.0f;
    t.K = window;
    t.start.assign(static_cast<size_t>(ax.out_len), 0);
    t.weight.assign(static_cast<size_t>(ax.out_len * window), 0);
    if (coord == "tf_crop_and_resize") t.outside.assign(static_cast<size_t>(ax.out_len), 0);
    std::vector<float> w(static_cast<size_t>(window));
    for (int64_t o = 0; o < ax.out_len; ++o) {
        const float fo = static_cast<float>(o);
        const float centre = 0.5f + (scale == 1.0f ? fo : fixed_coordinate(coord, fo, s, ax.out_len, in, r0, r1));
        int64_t lo = static_cast<int64_t>(std::floor(centre - support + 0.5f));
        int64_t hi = static_cast<int64_t>(std::floor(centre + support + 0.5f));
        hi = lo + std::clamp<int64_t>(hi - lo, 0, window);
        const int64_t cut_lo = std::clamp<int64_t>(lo, 0, in), cut_hi = std::clamp<int64_t>(hi, 0, in);
        const int64_t first = exclude ? cut_lo : lo, n = (exclude ? cut_hi : hi) - first;
        std::fill(w.begin(), w.end(), 0.0f);
        float total = 0.0f;
        for (int64_t k = 0; k < n; ++k) {
            w[static_cast<size_t>(k)] = fixed_filter(kind, a, (static_cast<float>(first + k) - centre + 0.5f) * inv);
            total += w[static_cast<size_t>(k)];
        }
        const int64_t kept = cut_hi - cut_lo;
        if (!exclude && kept > 0) {  // the weights outside onto the edge taps, in order, then moved to the first inside
            const int64_t neg = std::clamp<int64_t>(-first, 0, n - 1);
            for (int64_t k = 0; k < neg; ++k) w[static_cast<size_t>(neg)] += w[static_cast<size_t>(k)];
            const int64_t past = std::clamp<int64_t>(n + first - in, 0, n - 1);
            for (int64_t k = n - past; k < n; ++k) w[static_cast<size_t>(n - past - 1)] += w[static_cast<size_t>(k)];
            if (neg || past)
                for (int64_t k = 0; k < kept; ++k) w[static_cast<size_t>(k)] = w[static_cast<size_t>(k + neg)];
        }
        const float total_inv = total == 0.0f ? 1.0f : 1.0f / total;
        t.start[static_cast<size_t>(o)] = cut_lo;
        for (int64_t k = 0; k < kept && k < window; ++k) {
            const float normalized = w[static_cast<size_t>(k)] * total_inv;
            const float fixed = normalized * static_cast<float>(1 << kFixedShift);
            t.weight[static_cast<size_t>(o * window + k)] = round_away(fixed);
        }
        if (!t.outside.empty()) {
            const float src = centre - 0.5f;
            t.outside[static_cast<size_t>(o)] = src < 0.0f || src > static_cast<float>(in - 1);
        }
    }
    return t;
}

// onnxruntime's static_cast of the extrapolation value to uint8 on x86-64: truncated, wrapped to 8 bits.
inline uint8_t fixed_fill(double v) {
    const int64_t t = static_cast<int64_t>(std::trunc(v));
    return static_cast<uint8_t>(((t % 256) + 256) % 256);
}

namespace cpu {

// The resampler on uint8 ``x`` of ``shape`` through ``tables`` (last axis first), then the extrapolated outputs.
inline void resize_fixed(const uint8_t* x, uint8_t* y, std::vector<int64_t> shape,
                         const std::vector<FixedTable>& tables, double extrapolation_value) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    std::vector<uint8_t> cur(x, x + count);
    for (const FixedTable& t : tables) {
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < t.axis; ++d) outer *= shape[static_cast<size_t>(d)];
        for (size_t d = static_cast<size_t>(t.axis) + 1; d < shape.size(); ++d) inner *= shape[d];
        std::vector<uint8_t> next(static_cast<size_t>(outer * t.out_len * inner));
        for (int64_t p = 0; p < outer; ++p) {
            const uint8_t* src = cur.data() + p * t.in_len * inner;
            uint8_t* dst = next.data() + p * t.out_len * inner;
            for (int64_t o = 0; o < t.out_len; ++o) {
                const int32_t* w = t.weight.data() + o * t.K;
                const int64_t first = t.start[static_cast<size_t>(o)];
                const int64_t taps = std::min<int64_t>(t.K, t.in_len - first);
                for (int64_t q = 0; q < inner; ++q) {
                    int32_t acc = kFixedHalf;
                    for (int64_t k = 0; k < taps; ++k) acc += static_cast<int32_t>(src[(first + k) * inner + q]) * w[k];
                    dst[o * inner + q] = static_cast<uint8_t>(std::clamp(acc >> kFixedShift, 0, 255));
                }
            }
        }
        shape[static_cast<size_t>(t.axis)] = t.out_len;
        cur.swap(next);
    }
    const uint8_t fill = fixed_fill(extrapolation_value);
    for (const FixedTable& t : tables) {
        if (t.outside.empty()) continue;
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < t.axis; ++d) outer *= shape[static_cast<size_t>(d)];
        for (size_t d = static_cast<size_t>(t.axis) + 1; d < shape.size(); ++d) inner *= shape[d];
        for (int64_t p = 0; p < outer; ++p)
            for (int64_t o = 0; o < t.out_len; ++o)
                if (t.outside[static_cast<size_t>(o)])
                    std::fill_n(cur.data() + (p * t.out_len + o) * inner, inner, fill);
    }
    std::copy(cur.begin(), cur.end(), y);
}

}  // namespace cpu
}  // namespace rb
