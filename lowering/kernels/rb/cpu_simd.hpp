// Sampling a row of points from their taps: float32 sums with explicit gathers where the CPU has them (the
// kernels' only intrinsics, all behind __AVX2__ / __AVX512F__: the base build has none), and the float64
// per-point sums of the other element types.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

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

// Two taps' values for a vector of points, va[i] = xc[ia[i]], vb[i] = xc[ib[i]], where the two taps of a point
// are neighbours or one element (the pairs of a linear / cubic axis, clamped at the edges: (j, j+1), (j, j)):
// one 64-bit gather of the element pair per point, then lane permutes, loads half the elements one 32-bit gather
// per tap does. ``last`` = the last pair start inside xc (its length - 2, at least 0). Lanes whose taps are not
// such a pair take the plain gathers. The values are the same elements: the sums' bits do not change.
#if defined(__AVX512F__)
inline void gather_pair16(const float* xc, __m512i ia, __m512i ib, __m512i last, __m512& va, __m512& vb) {
    const __m512i one = _mm512_set1_epi32(1);
    // The zero-masked forms: the plain ones start from an undefined register (g++ 12: maybe-uninitialized).
    const __m512i st = _mm512_maskz_min_epi32(__mmask16(0xFFFF), ia, last);
    const __m512i da = _mm512_sub_epi32(ia, st), db = _mm512_sub_epi32(ib, st);  // 0 or 1 in a pair
    const __mmask16 ok = _mm512_cmple_epu32_mask(da, one) & _mm512_cmple_epu32_mask(db, one);
    const __m512d lo = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), __mmask8(ok),
                                                _mm512_maskz_extracti64x4_epi64(__mmask8(0xFF), st, 0), xc, 4);
    const __m512d hi = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), __mmask8(ok >> 8),
                                                _mm512_maskz_extracti64x4_epi64(__mmask8(0xFF), st, 1), xc, 4);
    // Lane i's pair is floats 2i, 2i+1 of (lo, hi) as one 32-float table.
    const __m512i at = _mm512_slli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 1);
    va = _mm512_permutex2var_ps(_mm512_castpd_ps(lo), _mm512_add_epi32(at, da), _mm512_castpd_ps(hi));
    vb = _mm512_permutex2var_ps(_mm512_castpd_ps(lo), _mm512_add_epi32(at, db), _mm512_castpd_ps(hi));
    if (ok != 0xFFFF) {
        va = _mm512_mask_i32gather_ps(va, __mmask16(~ok), ia, xc, 4);
        vb = _mm512_mask_i32gather_ps(vb, __mmask16(~ok), ib, xc, 4);
    }
}
#elif defined(__AVX2__)
inline void gather_pair8(const float* xc, __m256i ia, __m256i ib, __m256i last, __m256& va, __m256& vb) {
    const __m256i st = _mm256_min_epi32(ia, last);
    const __m256i da = _mm256_sub_epi32(ia, st), db = _mm256_sub_epi32(ib, st);  // 0 or 1 in a pair
    const __m256i bad = _mm256_andnot_si256(_mm256_set1_epi32(1), _mm256_or_si256(da, db));
    const __m256i ok = _mm256_cmpeq_epi32(bad, _mm256_setzero_si256());
    auto pairs = [&](__m128i idx, __m128i mask) {  // 4 lanes: 4 element pairs as 8 floats
        return _mm256_castpd_ps(_mm256_mask_i32gather_pd(_mm256_setzero_pd(), reinterpret_cast<const double*>(xc),
                                                         idx, _mm256_castsi256_pd(_mm256_cvtepi32_epi64(mask)), 4));
    };
    const __m256 lo = pairs(_mm256_castsi256_si128(st), _mm256_castsi256_si128(ok));
    const __m256 hi = pairs(_mm256_extracti128_si256(st, 1), _mm256_extracti128_si256(ok, 1));
    // Lane i's pair is floats 2(i mod 4), +1 of lo (lanes 0-3) or hi (lanes 4-7).
    const __m256i at = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    auto pick = [&](__m256i d) {
        const __m256i i = _mm256_add_epi32(at, d);
        return _mm256_blend_ps(_mm256_permutevar8x32_ps(lo, i), _mm256_permutevar8x32_ps(hi, i), 0xF0);
    };
    va = pick(da);
    vb = pick(db);
    if (_mm256_movemask_ps(_mm256_castsi256_ps(ok)) != 0xFF) {
        const __m256 rest = _mm256_castsi256_ps(_mm256_xor_si256(ok, _mm256_set1_epi32(-1)));
        va = _mm256_mask_i32gather_ps(va, xc, ia, rest, 4);
        vb = _mm256_mask_i32gather_ps(vb, xc, ib, rest, 4);
    }
}
#endif

// out[q] = sum_t w[t][q] * xc[off[t][q]], float32, q in [0, np), ``len`` values readable at xc: vectorised over
// points with explicit gathers (g++ does not vectorise gathers under its Intel tunings), taps (0, 1), (2, 3) ...
// as element pairs (gather_pair*: linear and cubic taps come in neighbours). Measured on an AVX-512 Xeon: 16
// float32 lanes with int32 indices beat scalar loads (linear x2 Resize 1.6x, GridSample 1.2x); the float64 /
// int64 gathers that line_taps_k avoids were the slow case on AMD. The lanes do the scalar tail's operations in
// the same order (no FMA), so a point's value does not depend on where a row starts.
// The float32 lanes of the widest vector (GNU vector types: + and * act per lane) and what sample_row_f32_n does
// with them, one spelling per ISA so that the loop is written once.
#if defined(__AVX512F__)
struct Lanes {
    static constexpr int64_t n = 16;
    using V = __m512;
    using I = __m512i;
    static I index(const int32_t* p) { return _mm512_loadu_si512(p); }
    static I splat(int32_t v) { return _mm512_set1_epi32(v); }
    static V load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
    static V gather(const float* base, I i) { return gather16(base, i); }
    static void pair(const float* xc, I ia, I ib, I last, V& va, V& vb) { gather_pair16(xc, ia, ib, last, va, vb); }
};
#elif defined(__AVX2__)
struct Lanes {
    static constexpr int64_t n = 8;
    using V = __m256;
    using I = __m256i;
    static I index(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
    static I splat(int32_t v) { return _mm256_set1_epi32(v); }
    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
    static V gather(const float* base, I i) { return gather8(base, i); }
    static void pair(const float* xc, I ia, I ib, I last, V& va, V& vb) { gather_pair8(xc, ia, ib, last, va, vb); }
};
#endif

// out[q] = sum_t w[t][q] * xc[off[t][q]], float32, q in [0, np), ``len`` values readable at xc: vectorised over
// points with explicit gathers (g++ does not vectorise gathers under its Intel tunings), taps (0, 1), (2, 3) ...
// as element pairs (gather_pair*: linear and cubic taps come in neighbours). Measured on an AVX-512 Xeon: 16
// float32 lanes with int32 indices beat scalar loads (linear x2 Resize 1.6x, GridSample 1.2x); the float64 /
// int64 gathers that line_taps_k avoids were the slow case on AMD. The lanes do the scalar tail's operations in
// the same order (no FMA), so a point's value does not depend on where a row starts.
template <int NT>
inline void sample_row_f32_n(const float* xc, [[maybe_unused]] int64_t len, const int32_t* off, const float* w,
                             int64_t ld, int64_t np, float* out) {
    int64_t q0 = 0;
#if defined(__AVX512F__) || defined(__AVX2__)
    using L = Lanes;
    constexpr bool kPairs = NT % 2 == 0;
    const L::I last = L::splat(
        static_cast<int32_t>(std::max<int64_t>(0, std::min<int64_t>(len - 2, std::numeric_limits<int32_t>::max()))));
    for (; q0 + L::n <= np && (!kPairs || len >= 2); q0 += L::n) {
        auto idx = [&](int t) { return L::index(off + t * ld + q0); };
        auto wt = [&](int t) { return L::load(w + t * ld + q0); };
        if constexpr (kPairs) {
            L::V va, vb;
            L::pair(xc, idx(0), idx(1), last, va, vb);
            L::V acc = wt(0) * va;
            acc = acc + wt(1) * vb;
            for (int t = 2; t < NT; t += 2) {
                L::pair(xc, idx(t), idx(t + 1), last, va, vb);
                acc = acc + wt(t) * va;
                acc = acc + wt(t + 1) * vb;
            }
            L::store(out + q0, acc);
        } else {
            L::V acc = wt(0) * L::gather(xc, idx(0));
            for (int t = 1; t < NT; ++t) acc = acc + wt(t) * L::gather(xc, idx(t));
            L::store(out + q0, acc);
        }
    }
#endif
    for (int64_t q = q0; q < np; ++q) {
        float acc = w[q] * xc[off[q]];
        for (int t = 1; t < NT; ++t) acc += w[t * ld + q] * xc[off[t * ld + q]];
        out[q] = acc;
    }
}

inline void sample_row_f32(const float* xc, int64_t len, const int32_t* off, const float* w, int64_t ld, int64_t np,
                           int nt, float* out) {
    switch (nt) {
        case 1: return sample_row_f32_n<1>(xc, len, off, w, ld, np, out);
        case 2: return sample_row_f32_n<2>(xc, len, off, w, ld, np, out);
        case 4: return sample_row_f32_n<4>(xc, len, off, w, ld, np, out);
        case 8: return sample_row_f32_n<8>(xc, len, off, w, ld, np, out);
        case 16: return sample_row_f32_n<16>(xc, len, off, w, ld, np, out);
        default:
            for (int64_t q = 0; q < np; ++q) {
                float acc = 0.0f;
                for (int t = 0; t < nt; ++t) acc += w[t * ld + q] * xc[off[t * ld + q]];
                out[q] = acc;
            }
    }
}

// Copying a row by an index table (nearest along the contiguous axis): out[o] = src[index[o]], bits as they are.
// 32-bit elements: a block of kLanes outputs whose sources lie within kLanes consecutive elements (upsampling,
// mild downsampling) is one unaligned load and a lane permute, another block an index gather; other element
// types, the base build and the tail copy element by element. Built once per call (a few values per output).
struct RowGather {
#if defined(__AVX512F__)
    static constexpr int64_t kLanes = 16;
#elif defined(__AVX2__)
    static constexpr int64_t kLanes = 8;
#else
    static constexpr int64_t kLanes = 1;
#endif
    const int64_t* index;
    int64_t n;
    std::vector<int32_t> idx;   // per output, int32 (empty: element by element)
    std::vector<int32_t> base;  // per whole block: the window's first source, or -1 where the block gathers
    std::vector<int32_t> perm;  // per whole block: kLanes lanes into the window

    RowGather(const int64_t* index_, int64_t out_len, int64_t in_len, size_t elem_size)
        : index(index_), n(out_len) {
        if (kLanes == 1 || elem_size != 4 || in_len > std::numeric_limits<int32_t>::max()) return;
        idx.assign(index, index + out_len);
        const int64_t blocks = out_len / kLanes;
        base.assign(static_cast<size_t>(blocks), -1);
        perm.assign(static_cast<size_t>(blocks * kLanes), 0);
        for (int64_t b = 0; b < blocks && in_len >= kLanes; ++b) {
            const int32_t* i = idx.data() + b * kLanes;
            const int32_t lo = *std::min_element(i, i + kLanes), hi = *std::max_element(i, i + kLanes);
            if (hi - lo >= kLanes) continue;
            const int32_t start = std::min<int32_t>(lo, static_cast<int32_t>(in_len - kLanes));  // stays inside
            base[static_cast<size_t>(b)] = start;
            for (int64_t j = 0; j < kLanes; ++j) perm[static_cast<size_t>(b * kLanes + j)] = i[j] - start;
        }
    }

    template <class T>
    void operator()(const T* src, T* dst) const {
        int64_t o = 0;
#if defined(__AVX512F__) || defined(__AVX2__)
        if constexpr (sizeof(T) == 4) {
            const int* s = reinterpret_cast<const int*>(src);
            for (int64_t b = 0; !idx.empty() && o + kLanes <= n; ++b, o += kLanes) {
                const int32_t at = base[static_cast<size_t>(b)];
#if defined(__AVX512F__)
                const __m512i v = at >= 0 ? _mm512_maskz_permutexvar_epi32(__mmask16(0xFFFF),
                                                                           _mm512_loadu_si512(perm.data() + o),
                                                                           _mm512_loadu_si512(s + at))
                                          : _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), __mmask16(0xFFFF),
                                                                        _mm512_loadu_si512(idx.data() + o), s, 4);
                _mm512_storeu_si512(dst + o, v);
#else
                auto ld = [](const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
                const __m256i v = at >= 0 ? _mm256_permutevar8x32_epi32(ld(s + at), ld(perm.data() + o))
                                          : _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), s, ld(idx.data() + o),
                                                                        _mm256_set1_epi32(-1), 4);
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + o), v);
#endif
            }
        }
#endif
        for (; o < n; ++o) dst[o] = src[index[o]];
    }
};

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
