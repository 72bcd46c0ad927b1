// Sampling a row of points from their taps: float32 sums with explicit gathers where the CPU has them (the
// kernels' only intrinsics, all behind __AVX2__ / __AVX512F__: the base build has none), and the float64
// per-point sums of the other element types.
#pragma once

#include <cstdint>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "common.hpp"
#include "points.hpp"

namespace rb {
namespace cpu {

// ------------------------------------------------------------------------------------------------------------
// float32 accumulation (float X only; float16 and the integer types keep the oracle's float64 bits). The
// coordinates and tap weights are still the shared float64 code (points.hpp); only the weighted sums over the
// data run in float32: per output a handful of products and a short sum, within a few float32 ulps of the
// float64 result (tests/lowering/test_kernels.py bounds it against the oracle).

// Taps of points in a compact layout, ``nt`` per point, tap-major ([t][q], row length ``ld``) so that a row of
// points is a vector loop: int32 element offsets (planes below 2^31 elements; the callers check) and float32
// weights (times ``factor``, the mask / inside test of DeformConv).
inline void compact_taps(const PointTaps& taps, double factor, int64_t ld, int32_t* off, float* w) {
    for (int c = 0; c < taps.n; ++c) {
        off[c * ld] = static_cast<int32_t>(taps.offset[c]);
        w[c * ld] = static_cast<float>(taps.weight[c] * factor);
    }
}

// Full-width gathers through the masked forms with a zero source: the unmasked intrinsics start from an
// undefined register, which g++ 12 reports as maybe-uninitialized.
#if defined(__AVX512F__)
inline __m512 gather16(const float* base, __m512i idx) {
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), __mmask16(0xFFFF), idx, base, 4);
}
#elif defined(__AVX2__)
inline __m256 gather8(const float* base, __m256i idx) {
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), base, idx, _mm256_castsi256_ps(_mm256_set1_epi32(-1)), 4);
}
#endif

// out[q] = sum_t w[t][q] * xc[off[t][q]], float32, q in [0, np): vectorised over points with explicit gathers
// (g++ does not vectorise gathers under its Intel tunings). Measured on an AVX-512 Xeon: 16 float32 lanes with
// int32 indices beat scalar loads (linear x2 Resize 1.6x, GridSample 1.2x); the float64 / int64 gathers that
// line_taps_k avoids were the slow case on AMD. The lanes do the scalar tail's operations in the same order (no
// FMA), so a point's value does not depend on where a row starts.
template <int NT>
inline void sample_row_f32_n(const float* xc, const int32_t* off, const float* w, int64_t ld, int64_t np,
                             float* out) {
    int64_t q0 = 0;
#if defined(__AVX512F__)
    for (; q0 + 16 <= np; q0 += 16) {
        __m512 acc = _mm512_mul_ps(_mm512_loadu_ps(w + q0), gather16(xc, _mm512_loadu_si512(off + q0)));
        for (int t = 1; t < NT; ++t) {
            const __m512i i = _mm512_loadu_si512(off + t * ld + q0);
            acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_loadu_ps(w + t * ld + q0), gather16(xc, i)));
        }
        _mm512_storeu_ps(out + q0, acc);
    }
#elif defined(__AVX2__)
    for (; q0 + 8 <= np; q0 += 8) {
        auto idx = [&](int64_t at) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(off + at)); };
        __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(w + q0), gather8(xc, idx(q0)));
        for (int t = 1; t < NT; ++t)
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(w + t * ld + q0),
                                                   gather8(xc, idx(t * ld + q0))));
        _mm256_storeu_ps(out + q0, acc);
    }
#endif
    for (int64_t q = q0; q < np; ++q) {
        float acc = w[q] * xc[off[q]];
        for (int t = 1; t < NT; ++t) acc += w[t * ld + q] * xc[off[t * ld + q]];
        out[q] = acc;
    }
}

inline void sample_row_f32(const float* xc, const int32_t* off, const float* w, int64_t ld, int64_t np, int nt,
                           float* out) {
    switch (nt) {
        case 1: return sample_row_f32_n<1>(xc, off, w, ld, np, out);
        case 2: return sample_row_f32_n<2>(xc, off, w, ld, np, out);
        case 4: return sample_row_f32_n<4>(xc, off, w, ld, np, out);
        case 8: return sample_row_f32_n<8>(xc, off, w, ld, np, out);
        case 16: return sample_row_f32_n<16>(xc, off, w, ld, np, out);
        default:
            for (int64_t q = 0; q < np; ++q) {
                float acc = 0.0f;
                for (int t = 0; t < nt; ++t) acc += w[t * ld + q] * xc[off[t * ld + q]];
                out[q] = acc;
            }
    }
}

// Per-point tap loops stay scalar on purpose: vectorised, they become hardware gathers, measured 2x slower than
// scalar loads (AMD EPYC, AVX-512).
#if defined(__GNUC__) && !defined(__clang__)
#define RB_SCALAR_LOOP __attribute__((optimize("no-tree-vectorize")))
#else
#define RB_SCALAR_LOOP
#endif

// apply_taps with the tap count known at compile time for the common sets (nearest 1, linear 2-D 4 and 3-D 8,
// cubic 2-D 16): same operations in the same order, unrolled.
template <int N, class T>
inline double apply_taps_n(const T* data, const PointTaps& taps) {
    double acc = 0.0;
    for (int c = 0; c < N; ++c) acc += taps.weight[c] * load<double>(data[taps.offset[c]]);
    return acc;
}

template <class T>
RB_SCALAR_LOOP inline void apply_block(const T* xc, const PointTaps* taps, int64_t count, T* out) {
    switch (count > 0 ? taps[0].n : 0) {  // every point of a spec has the same tap count
        case 1: for (int64_t i = 0; i < count; ++i) out[i] = store<T>(apply_taps_n<1>(xc, taps[i])); return;
        case 4: for (int64_t i = 0; i < count; ++i) out[i] = store<T>(apply_taps_n<4>(xc, taps[i])); return;
        case 8: for (int64_t i = 0; i < count; ++i) out[i] = store<T>(apply_taps_n<8>(xc, taps[i])); return;
        case 16: for (int64_t i = 0; i < count; ++i) out[i] = store<T>(apply_taps_n<16>(xc, taps[i])); return;
        default: for (int64_t i = 0; i < count; ++i) out[i] = store<T>(apply_taps(xc, taps[i]));
    }
}

// Taps per point of a sampler over D axes (every point of a spec has the same count).
inline int taps_per_point(Kind kind, int D) {
    const int per_axis = kind == Kind::nearest ? 1 : kind == Kind::linear ? 2 : 4;
    int n = 1;
    for (int d = 0; d < D; ++d) n *= per_axis;
    return n;
}

}  // namespace cpu
}  // namespace rb
