// GridSample's commonest cases, 2-D linear and cubic with zeros or border padding on the taps (and linear with
// reflection) and float32 grid arithmetic, as whole vectors of points: grid read, unnormalised, padded, floored, its
// taps and weights, straight into the compact tap rows (block_taps.hpp's layout). The operations and their order are
// those of gridsample_block_coords + block_taps_k<2, K, float>, or ones of provably equal result (each says why), so
// the bits are the same (test_kernels.py compares the two on every point); the general code passes each step through
// per-axis arrays and was most of a 1-channel GridSample's time (AVX2: 4.1 ns per point, against about 2 for
// OpenVINO's whole GridSample-9). GNU vector types: g++ picks the instructions for the build's level (v4: 16 lanes,
// v3: 8, base: 4). Other compilers take the general code.
#pragma once

#include <climits>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "block_taps.hpp"

namespace rb {
namespace cpu {

#if defined(__GNUC__) && !defined(__clang__)
#define RB_VECTOR_TAPS 1

#if defined(__AVX512F__)
constexpr int kTapLanes = 16;
#elif defined(__AVX2__)
constexpr int kTapLanes = 8;
#else
constexpr int kTapLanes = 4;
#endif

typedef float VF __attribute__((vector_size(4 * kTapLanes)));
typedef int32_t VI __attribute__((vector_size(4 * kTapLanes)));

inline VF splat_f(float v) { return VF{} + v; }
inline VI splat_i(int32_t v) { return VI{} + v; }
inline VF load_f(const float* p) {
    VF v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void store_f(float* p, VF v) { std::memcpy(p, &v, sizeof v); }
inline void store_i(int32_t* p, VI v) { std::memcpy(p, &v, sizeof v); }

// The grid's (x, y) pairs of kTapLanes points: two vector loads and two lane shuffles (a scalar loop here was a
// third of the vector taps' time).
inline void deinterleave(const float* g, VF& x, VF& y) {
#if defined(__AVX512F__)
    const VI even = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
#elif defined(__AVX2__)
    const VI even = {0, 2, 4, 6, 8, 10, 12, 14};
#else
    const VI even = {0, 2, 4, 6};
#endif
    const VF a = load_f(g), b = load_f(g + kTapLanes);
    x = __builtin_shuffle(a, b, even);
    y = __builtin_shuffle(a, b, even + 1);
}

// Bit i set where lane i of a compare result is true.
inline unsigned lane_bits(VI m) {
#if defined(__AVX512F__)
    return _mm512_test_epi32_mask(reinterpret_cast<__m512i>(m), reinterpret_cast<__m512i>(m));
#elif defined(__AVX__)
    return static_cast<unsigned>(_mm256_movemask_ps(reinterpret_cast<__m256>(m)));
#else
    unsigned b = 0;
    for (int i = 0; i < kTapLanes; ++i) b |= (m[i] != 0 ? 1u : 0u) << i;
    return b;
#endif
}

// Lane-wise min / max with the selects' exact meaning: vmin(a, b) = a < b ? a : b, vmax(a, b) = a > b ? a : b
// (NaN and signed zeros included: the second operand whenever the compare is false), which is what the x86 min /
// max instructions compute; g++ does not use them for the selects without -ffinite-math-only.
template <bool kMax>
inline VF vminmax(VF a, VF b) {
#if defined(__AVX512F__)
    const __m512 x = reinterpret_cast<__m512>(a), y = reinterpret_cast<__m512>(b);
    return reinterpret_cast<VF>(kMax ? _mm512_max_ps(x, y) : _mm512_min_ps(x, y));
#elif defined(__AVX__)
    const __m256 x = reinterpret_cast<__m256>(a), y = reinterpret_cast<__m256>(b);
    return reinterpret_cast<VF>(kMax ? _mm256_max_ps(x, y) : _mm256_min_ps(x, y));
#else
    return kMax ? (a > b ? a : b) : (a < b ? a : b);
#endif
}
inline VF vmin(VF a, VF b) { return vminmax<false>(a, b); }
inline VF vmax(VF a, VF b) { return vminmax<true>(a, b); }

inline VI bits_of(VF v) { return reinterpret_cast<VI>(v); }
inline VF float_of(VI v) { return reinterpret_cast<VF>(v); }

// floor_add and block_index (block_taps.hpp), lane by lane: the same values from cheaper operations, the floor
// instruction where the build has one (AVX: taps 1.41 -> 1.01 ns per point, Xeon), else bit operations for its
// selects (select-with-mask is 2-3 uops per lane vector on x86).
inline VF floor_add_v(VF x) {
#if defined(__AVX512F__) || defined(__AVX__)
    // The floor instruction, one uop, equals floor_add everywhere but at -0, which it keeps and floor_add sends to
    // +0 (rint_add's (x + t) - t): + 0.0f makes that +0 and changes no other value (NaN keeps its payload).
#if defined(__AVX512F__)
    const VF f = reinterpret_cast<VF>(
        _mm512_roundscale_ps(reinterpret_cast<__m512>(x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
#else
    const VF f = reinterpret_cast<VF>(
        _mm256_round_ps(reinterpret_cast<__m256>(x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
#endif
    return f + splat_f(0.0f);
#else
    const VF big = splat_f(8388608.0f);  // 2^23
    // p < 0 ? -big : big as copysign: at -0 either gives r = +0, and NaN fails the compare below anyway
    const VF t = float_of(bits_of(big) | (bits_of(x) & splat_i(INT32_MIN)));
    const VF ax = float_of(bits_of(x) & splat_i(INT32_MAX));  // abs_of, only compared
    const VF r = ax < big ? (x + t) - t : x;
    return r - float_of(bits_of(splat_f(1.0f)) & (r > x));  // r - 1 where r > x, else r - 0 (= r, -0 and NaN too)
#endif
}
inline VI block_index_v(VF fl, float len) {
    // !(fl >= -4) ? -4 : (fl > hi ? hi : fl): min(hi, fl) keeps NaN, max(., -4) sends it (and below) to -4.
    const VF c = vmax(vmin(splat_f(len + 4.0f), fl), splat_f(-4.0f));
    return __builtin_convertvector(c, VI);  // truncates, as static_cast<int32_t>
}

// common.hpp's cubic_filter, lane by lane, for tap i of a fraction f in [0, 1) (or NaN): x = |f - (i - 1)|.
// Taps 1 and 2 have x in [0, 1], the near piece only; taps 0 and 3 have x in [1, 2] (an end when f - (i - 1)
// rounds to it), the far piece but at x = 1 (near's value there) and x = 2 (0 * x). A NaN takes the NaN of x
// on every piece (each operation returns its NaN operand), so the bits are the full select's.
inline VF cubic_filter_v(VF f, int i, float a) {
    const VF zero = VF{}, one = splat_f(1.0f);
    VF x = f - splat_f(static_cast<float>(i - 1));
    x = x < zero ? zero - x : x;
    auto near = [&](VF v) { return ((splat_f(a + 2.0f) * v - splat_f(a + 3.0f)) * v) * v + one; };
    if (i == 1 || i == 2) return near(x);
    const VF far = ((splat_f(a) * x - splat_f(5.0f * a)) * x + splat_f(8.0f * a)) * x - splat_f(4.0f * a);
    return x <= one ? near(one) : (x < splat_f(2.0f) ? far : zero * x);
}

// One axis' tap positions of a vector of points (block_taps_k's per-axis step): clamped into [0, len - 1], a
// tap past the end reading ``top`` (reflection's mirror of it, block_reflection's past; else the last element),
// and whether the tap is inside (zeros' weight mask).
template <bool Reflect>
inline void axis_tap_v(VI j, int32_t len, int32_t top, VI& jc, VI& ok) {
    const VI zero = VI{}, last = splat_i(len - 1);
    ok = (j >= zero) & (j <= last);
    jc = j < zero ? zero : (j > last ? (Reflect ? splat_i(top) : last) : j);
}

// gridsample.hpp's reflect_clip lane by lane: a lane inside [lo, hi] is only clipped to [0, last] (the bounds
// are integers or halves below 2^22, exact in float32); the others (the grid's margins, NaN) go through the
// float64 rule one at a time, as the per-point code does. An empty range (one element, align_corners) sends
// every lane there.
inline VF reflect_clip_v(VF x, double lo, double hi, float last) {
    const VI inside = (x >= splat_f(static_cast<float>(lo))) & (x <= splat_f(static_cast<float>(hi)));
    VF r = vmax(VF{}, vmin(splat_f(last), x));  // x < 0 ? 0 : (x > last ? last : x)
    constexpr unsigned all = (1u << kTapLanes) - 1;
    unsigned out = hi - lo <= 0.0 ? all : ~lane_bits(inside) & all;
    if (out) {  // through memory once: lane inserts would each stall a store-to-load forward
        float xs[kTapLanes], rs[kTapLanes];
        store_f(xs, x);
        store_f(rs, r);
        for (; out; out &= out - 1) {
            const int i = __builtin_ctz(out);
            rs[i] = static_cast<float>(reflect_clip(static_cast<double>(xs[i]), lo, hi, static_cast<double>(last)));
        }
        r = load_f(rs);
    }
    return r;
}

// Whether a spec takes this path: 2-D, linear or cubic, float32 grid arithmetic (and float32 taps:
// gridsample_taps_in_float), padding on the taps: zeros, border, or reflection for linear (block_reflection's
// case: the coordinate reflected and clipped, ``past`` its mirror of a tap past the end).
inline bool vector_taps_apply(const GridSampleSpec& s) {
    return s.D == 2 && s.kind != Kind::nearest && s.arith == Arith::fp32 && s.padding_on == PaddingOn::taps &&
           (s.padding != Padding::reflection || s.kind == Kind::linear) && gridsample_taps_in_float(s);
}

// Points [0, np) of a block of a spec that vector_taps_apply takes: whole vectors here; the rest (returned: the
// first point not done) by the caller. K: linear or cubic; Reflect: reflection (linear), else zeros or border.
template <Kind K, bool Reflect>
inline int64_t gridsample_2d_taps_k(const GridSampleSpec& s, const float* g, int64_t np, int64_t ld, int32_t* off,
                                    float* w, const int32_t* past) {
    static_assert(K == Kind::linear || K == Kind::cubic, "linear or cubic");
    static_assert(!Reflect || K == Kind::linear, "reflection: linear only");
    constexpr int per_axis = K == Kind::linear ? 2 : 4;
    const int32_t H = static_cast<int32_t>(s.spatial[0]), W = static_cast<int32_t>(s.spatial[1]);
    const int32_t top[2] = {past ? past[0] : H - 1, past ? past[1] : W - 1};
    double lo[2], hi[2];
    for (int d = 0; d < 2; ++d) grid_bounds(s.spatial[d], s.align_corners, lo[d], hi[d]);
    const float L[2] = {static_cast<float>(s.spatial[0]), static_cast<float>(s.spatial[1])};
    const bool border = s.padding == Padding::border, zeros = s.padding == Padding::zeros, ac = s.align_corners;
    const float cubic_a = static_cast<float>(s.cubic_a);
    const VF one = splat_f(1.0f), half = splat_f(0.5f), zero = VF{};
    // taps_1d's weight i of an axis whose coordinate has fraction f (linear 1 - f, f; cubic the filter at
    // f - (i - 1)).
    auto weight = [&](VF f, int i) {
        if (K == Kind::linear) return i == 0 ? one - f : f;
        return cubic_filter_v(f, i, cubic_a);
    };
    int64_t q = 0;
    for (; q + kTapLanes <= np; q += kTapLanes) {
        VF gx, gy;
        deinterleave(g + 2 * q, gx, gy);
        const VF c[2] = {gy, gx};  // axis 0 is y (H), axis 1 is x (W)
        VI j0[2];
        VF frac[2];
        for (int d = 0; d < 2; ++d) {
            // unnormalize_f32 (its / 2 as * 0.5: the same value, without a division's latency);
            // border_coordinate clips the coordinate to [0, L - 1] for linear (cubic pads taps).
            VF x = ac ? (c[d] + one) * half * splat_f(L[d] - 1.0f) : ((c[d] + one) * splat_f(L[d]) - one) * half;
            if (border && K == Kind::linear) {
                const VF last = splat_f(L[d] - 1.0f);
                x = vmax(zero, vmin(last, x));  // x < 0 ? 0 : (x > last ? last : x), NaN kept
            }
            if (Reflect) x = reflect_clip_v(x, lo[d], hi[d], L[d] - 1.0f);
            const VF fl = floor_add_v(x);
            frac[d] = x - fl;
            j0[d] = block_index_v(fl, L[d]) - (K == Kind::linear ? 0 : 1);
        }
        // Axis x's positions, masks and weights once, axis y's per row (fewer live vectors: AVX2 has 16
        // registers), then the taps in point_taps_d's odometer order: offset row * W + column, weight
        // (1 * w_y) * w_x as block_taps_k multiplies, zeros' outside taps weight 0 (times factor 1.0 changes no
        // bit). Cubic: 8 position steps instead of 32.
        VI col[per_axis], ok_col[per_axis];
        VF wx[per_axis];
        for (int k = 0; k < per_axis; ++k) {
            axis_tap_v<Reflect>(j0[1] + k, W, top[1], col[k], ok_col[k]);
            wx[k] = weight(frac[1], k);
        }
        for (int ky = 0; ky < per_axis; ++ky) {
            VI row, ok_row;
            axis_tap_v<Reflect>(j0[0] + ky, H, top[0], row, ok_row);
            row = row * W;
            const VF wy = one * weight(frac[0], ky);
            for (int kx = 0; kx < per_axis; ++kx) {
                const int t = ky * per_axis + kx;
                const VF wq = wy * wx[kx];
                store_i(off + t * ld + q, row + col[kx]);
                store_f(w + t * ld + q, zeros ? ((ok_row & ok_col[kx]) != 0 ? wq : VF{}) : wq);
            }
        }
    }
    return q;
}

template <Kind K>
inline int64_t gridsample_2d_taps(const GridSampleSpec& s, const float* g, int64_t np, int64_t ld, int32_t* off,
                                  float* w, const int32_t* past) {
    if constexpr (K == Kind::linear)
        if (s.padding == Padding::reflection) return gridsample_2d_taps_k<K, true>(s, g, np, ld, off, w, past);
    return gridsample_2d_taps_k<K, false>(s, g, np, ld, off, w, past);
}

#endif

}  // namespace cpu
}  // namespace rb
