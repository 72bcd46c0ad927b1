// Sampling a row of points from their taps: float32 sums with explicit gathers where the CPU has them (the
// kernels' only intrinsics, all behind __AVX2__ / __AVX512F__: the base build has none), and the float64
// per-point sums of the other element types.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
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
// coordinates and tap weights are the shared float64 code (points.hpp), except GridSample's float32 taps
// (block_taps.hpp); the weighted sums over the data run in float32: per output a handful of products and a
// short sum, within a few float32 ulps of the float64 result (tests/lowering/test_kernels.py bounds it against
// the oracle, GridSample by the policy's error bound).

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
// undefined register, which g++ 12 reports as maybe-uninitialized. (As scalar loads put together, unlike the pairs
// below, they ran no faster: GridSample nearest at AVX-512 1.0-1.05x the time, AMD EPYC.)
#if defined(__AVX512F__)
inline __m512 gather16(const float* base, __m512i idx) {
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), __mmask16(0xFFFF), idx, base, 4);
}
#elif defined(__AVX2__)
inline __m256 gather8(const float* base, __m256i idx) {
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), base, idx, _mm256_castsi256_ps(_mm256_set1_epi32(-1)), 4);
}
#endif

// Element pairs (base[st[l]], base[st[l] + 1]) of 4 / 8 lanes as one 64-bit scalar load each, put together: the
// 64-bit hardware gathers were slower (AMD EPYC, GridSample 1-16 channels: 0.87-0.97x the time at both widths).
inline double load_pair(const float* p) {
    double d;
    __builtin_memcpy(&d, p, sizeof d);
    return d;
}
#if defined(__AVX512F__) || defined(__AVX2__)
inline __m256d pairs4(const float* base, const int32_t* st) {
    return _mm256_setr_pd(load_pair(base + st[0]), load_pair(base + st[1]), load_pair(base + st[2]),
                          load_pair(base + st[3]));
}
#endif
#if defined(__AVX512F__)
inline __m512d pairs8(const float* base, const int32_t* st) {
    return _mm512_insertf64x4(_mm512_castpd256_pd512(pairs4(base, st)), pairs4(base, st + 4), 1);
}
#endif

// The pair loads run once per vector of points and plane: g++ stopped inlining GatherPair16::load when the
// GridSample lambda around it grew (AVX-512 GridSample 1.4x slower, measured), so it is forced.
#define RB_HOT_INLINE inline __attribute__((always_inline))

// Two taps' values for a vector of points, va[i] = xc[ia[i]], vb[i] = xc[ib[i]], where the two taps of a point
// are neighbours or one element (the pairs of a linear / cubic axis, clamped at the edges: (j, j+1), (j, j)):
// one 64-bit load of the element pair per point (pairs4 / pairs8), then lane permutes, loads half the elements one
// 32-bit gather per tap does. ``last`` = the last pair start inside a plane (its length - 2, at least 0). Lanes
// whose taps are not such a pair take the plain gathers. The values are the same elements: the sums' bits do not
// change.
// The index arithmetic is a plan made once per vector of points and applied to every channel's plane (``load``).
#if defined(__AVX512F__)
struct GatherPair16 {
    __m512i ia, ib, pa, pb;
    __mmask16 ok;
    int32_t st[16];  // each lane's pair start, inside the plane
    GatherPair16() = default;
    GatherPair16(__m512i ia_, __m512i ib_, __m512i last) : ia(ia_), ib(ib_) {
        const __m512i one = _mm512_set1_epi32(1);
        // The zero-masked forms: the plain ones start from an undefined register (g++ 12: maybe-uninitialized).
        const __m512i st = _mm512_maskz_min_epi32(__mmask16(0xFFFF), ia, last);
        _mm512_storeu_si512(this->st, st);
        const __m512i da = _mm512_sub_epi32(ia, st), db = _mm512_sub_epi32(ib, st);  // 0 or 1 in a pair
        ok = _mm512_cmple_epu32_mask(da, one) & _mm512_cmple_epu32_mask(db, one);
        // Lane i's pair is floats 2i, 2i+1 of (lo, hi) as one 32-float table.
        const __m512i at =
            _mm512_slli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 1);
        pa = _mm512_add_epi32(at, da);
        pb = _mm512_add_epi32(at, db);
    }
    RB_HOT_INLINE void load(const float* xc, __m512& va, __m512& vb) const {
        const __m512d lo = pairs8(xc, st), hi = pairs8(xc, st + 8);  // every start is inside: all lanes load
        va = _mm512_permutex2var_ps(_mm512_castpd_ps(lo), pa, _mm512_castpd_ps(hi));
        vb = _mm512_permutex2var_ps(_mm512_castpd_ps(lo), pb, _mm512_castpd_ps(hi));
        if (ok != 0xFFFF) {
            va = _mm512_mask_i32gather_ps(va, __mmask16(~ok), ia, xc, 4);
            vb = _mm512_mask_i32gather_ps(vb, __mmask16(~ok), ib, xc, 4);
        }
    }
};
#elif defined(__AVX2__)
struct GatherPair8 {
    __m256i ia, ib, ok, pa, pb;
    int32_t st[8];  // each lane's pair start, inside the plane
    bool all;
    GatherPair8() = default;
    GatherPair8(__m256i ia_, __m256i ib_, __m256i last) : ia(ia_), ib(ib_) {
        const __m256i st = _mm256_min_epi32(ia, last);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(this->st), st);
        const __m256i da = _mm256_sub_epi32(ia, st), db = _mm256_sub_epi32(ib, st);  // 0 or 1 in a pair
        const __m256i bad = _mm256_andnot_si256(_mm256_set1_epi32(1), _mm256_or_si256(da, db));
        ok = _mm256_cmpeq_epi32(bad, _mm256_setzero_si256());
        all = _mm256_movemask_ps(_mm256_castsi256_ps(ok)) == 0xFF;
        // Lane i's pair is floats 2(i mod 4), +1 of lo (lanes 0-3) or hi (lanes 4-7).
        const __m256i at = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        pa = _mm256_add_epi32(at, da);
        pb = _mm256_add_epi32(at, db);
    }
    RB_HOT_INLINE void load(const float* xc, __m256& va, __m256& vb) const {
        // 4 lanes: 4 element pairs as 8 floats; every start is inside: all lanes load
        const __m256 lo = _mm256_castpd_ps(pairs4(xc, st)), hi = _mm256_castpd_ps(pairs4(xc, st + 4));
        va = _mm256_blend_ps(_mm256_permutevar8x32_ps(lo, pa), _mm256_permutevar8x32_ps(hi, pa), 0xF0);
        vb = _mm256_blend_ps(_mm256_permutevar8x32_ps(lo, pb), _mm256_permutevar8x32_ps(hi, pb), 0xF0);
        if (!all) {
            const __m256 rest = _mm256_castsi256_ps(_mm256_xor_si256(ok, _mm256_set1_epi32(-1)));
            va = _mm256_mask_i32gather_ps(va, xc, ia, rest, 4);
            vb = _mm256_mask_i32gather_ps(vb, xc, ib, rest, 4);
        }
    }
};
#endif

// The float32 lanes of the widest vector (GNU vector types: + and * act per lane) and what sample_rows_f32_n does
// with them, one spelling per ISA so that the loop is written once.
#if defined(__AVX512F__)
struct Lanes {
    static constexpr int64_t n = 16;
    static constexpr bool plan_ahead = false;  // a pair's plan is 5 operations on mask registers: recomputed
    using V = __m512;
    using I = __m512i;
    static I index(const int32_t* p) { return _mm512_loadu_si512(p); }
    static I splat(int32_t v) { return _mm512_set1_epi32(v); }
    static V load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
    static V gather(const float* base, I i) { return gather16(base, i); }
    using Pair = GatherPair16;
};
#elif defined(__AVX2__)
struct Lanes {
    static constexpr int64_t n = 8;
    static constexpr bool plan_ahead = true;  // a pair's plan is a dozen operations: made once for all planes
    using V = __m256;
    using I = __m256i;
    static I index(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
    static I splat(int32_t v) { return _mm256_set1_epi32(v); }
    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
    static V gather(const float* base, I i) { return gather8(base, i); }
    using Pair = GatherPair8;
};
#endif

// The tap counts a point can have (taps_per_point, up to 3 axes) in one place: f(std::integral_constant<int, N>)
// with N = nt where the samplers unroll it (nearest 1; linear 2, 4, 8; cubic 4, 16), else N = 0, a count known
// only at run time (cubic 3-D, kMaxPointTaps).
constexpr int kMaxPointTaps = 64;
template <class F>
inline void with_tap_count(int nt, F&& f) {
    switch (nt) {
        case 1: return f(std::integral_constant<int, 1>());
        case 2: return f(std::integral_constant<int, 2>());
        case 4: return f(std::integral_constant<int, 4>());
        case 8: return f(std::integral_constant<int, 8>());
        case 16: return f(std::integral_constant<int, 16>());
        default: return f(std::integral_constant<int, 0>());
    }
}

// out[c * ostride + q] = sum_t w[t][q] * xc[c * cstride + off[t][q]] for ``channels`` planes, float32, q in
// [0, np), ``len`` values readable at each plane: vectorised over points with explicit gathers (g++ does not
// vectorise gathers under its Intel tunings), taps (0, 1), (2, 3) ... as element pairs (GatherPair*: linear and
// cubic taps come in neighbours), the points' index plans made once for all planes. Measured on an AVX-512
// Xeon: 16 float32 lanes with int32 indices beat scalar loads (linear x2 Resize 1.6x, GridSample 1.2x); the
// float64 / int64 gathers that line_taps_k avoids were the slow case on AMD. The lanes do the scalar tail's
// operations in the same order (no FMA), so a point's value does not depend on where a row starts.
template <int NT>
inline void sample_rows_f32_n(const float* xc, int64_t cstride, int64_t channels, [[maybe_unused]] int64_t len,
                              const int32_t* off, const float* w, int64_t ld, int64_t np, float* out,
                              int64_t ostride) {
    int64_t q0 = 0;
#if defined(__AVX512F__) || defined(__AVX2__)
    using L = Lanes;
    constexpr bool kPairs = NT % 2 == 0;
    constexpr int kPlans = kPairs ? NT / 2 : 1;
    const int64_t groups = kPairs && len < 2 ? 0 : np / L::n;  // whole vectors of points
    q0 = groups * L::n;
    auto idx = [&](int t, int64_t g) { return L::index(off + t * ld + g * L::n); };
    auto wt = [&](int t, int64_t g) { return L::load(w + t * ld + g * L::n); };
    const L::I last = L::splat(
        static_cast<int32_t>(std::max<int64_t>(0, std::min<int64_t>(len - 2, std::numeric_limits<int32_t>::max()))));
    // One vector of points of plane x; pair(t) the plan of taps (t, t + 1). ``pairs`` a constant: each loop below
    // compiled for one of the two (the pairs' scalar loads in the plain gathers' loop made it 1.1x slower, AVX2).
    // Pairs for a single plane too, at both levels, since their loads are scalar (AMD EPYC, AVX2, 1 plane, pairs
    // against 4 gathers: GridSample linear 0.93-0.96x the time, cubic 0.86x; Resize's W pass linear 0.90-0.97x,
    // cubic 1.1x). With 64-bit gathers a Xeon ran a single plane faster by plain gathers (26.5 us against 27.9).
    constexpr bool use_pairs = kPairs;
    auto group = [&](auto pairs, const float* x, int64_t g, auto&& pair) {
        L::V acc;
        if constexpr (decltype(pairs)::value) {
            L::V va, vb;
            pair(0).load(x, va, vb);
            acc = wt(0, g) * va;
            acc = acc + wt(1, g) * vb;
            for (int t = 2; t < NT; t += 2) {
                pair(t).load(x, va, vb);
                acc = acc + wt(t, g) * va;
                acc = acc + wt(t + 1, g) * vb;
            }
        } else {
            acc = wt(0, g) * L::gather(x, idx(0, g));
            for (int t = 1; t < NT; ++t) acc = acc + wt(t, g) * L::gather(x, idx(t, g));
        }
        return acc;
    };
    if constexpr (!use_pairs) {
        for (int64_t c = 0; c < channels; ++c)
            for (int64_t g = 0; g < groups; ++g)
                L::store(out + c * ostride + g * L::n, group(std::false_type(), xc + c * cstride, g, 0));
    } else if (channels == 1 || !L::plan_ahead) {  // the plans as they are used
        for (int64_t c = 0; c < channels; ++c)
            for (int64_t g = 0; g < groups; ++g)
                L::store(out + c * ostride + g * L::n, group(std::true_type(), xc + c * cstride, g, [&](int t) {
                             return L::Pair(idx(t, g), idx(t + 1 < NT ? t + 1 : t, g), last); }));
    } else {
        // The pairs' plans of every vector of points once, then plane by plane (a plane stays in cache while its
        // points are read: the other order, every plane per vector of points, was 1.25x slower on a random grid).
        // GridSample 2-D linear, 16 planes, AVX2: 0.22 ms against 0.28 recomputing the plans per plane.
        thread_local std::vector<typename L::Pair> plans;
        plans.resize(static_cast<size_t>(groups * kPlans));
        for (int64_t g = 0; g < groups; ++g)
            for (int t = 0; t < NT; t += 2) plans[g * kPlans + t / 2] = L::Pair(idx(t, g), idx(t + 1, g), last);
        for (int64_t c = 0; c < channels; ++c)
            for (int64_t g = 0; g < groups; ++g)
                L::store(out + c * ostride + g * L::n, group(std::true_type(), xc + c * cstride, g,
                                                             [&](int t) -> const typename L::Pair& {
                                                                 return plans[g * kPlans + t / 2]; }));
    }
#endif
    for (int64_t c = 0; c < channels; ++c) {
        const float* x = xc + c * cstride;
        for (int64_t q = q0; q < np; ++q) {
            float acc = w[q] * x[off[q]];
            for (int t = 1; t < NT; ++t) acc += w[t * ld + q] * x[off[t * ld + q]];
            out[c * ostride + q] = acc;
        }
    }
}

inline void sample_rows_f32(const float* xc, int64_t cstride, int64_t channels, int64_t len, const int32_t* off,
                            const float* w, int64_t ld, int64_t np, int nt, float* out, int64_t ostride) {
    with_tap_count(nt, [&](auto n) {
        constexpr int N = decltype(n)::value;
        if constexpr (N > 0) {
            sample_rows_f32_n<N>(xc, cstride, channels, len, off, w, ld, np, out, ostride);
        } else {
            for (int64_t c = 0; c < channels; ++c)
                for (int64_t q = 0; q < np; ++q) {
                    float acc = 0.0f;
                    for (int t = 0; t < nt; ++t) acc += w[t * ld + q] * xc[c * cstride + off[t * ld + q]];
                    out[c * ostride + q] = acc;
                }
        }
    });
}

// One plane.
inline void sample_row_f32(const float* xc, int64_t len, const int32_t* off, const float* w, int64_t ld, int64_t np,
                           int nt, float* out) {
    sample_rows_f32(xc, 0, 1, len, off, w, ld, np, nt, out, 0);
}

// 32-bit lanes of the widest vector the build permutes and gathers in (1: none, the base build).
#if defined(__AVX512F__) || defined(__AVX2__)
constexpr int64_t kPermuteLanes = Lanes::n;
#else
constexpr int64_t kPermuteLanes = 1;
#endif

// The window that a block of ``n`` int32 source indices i[0, n) reads as ``win`` consecutive elements of a line of
// ``in_len``: its first element, placed so that the window stays inside the line, with lanes[j] = i[j] - start;
// -1 (lanes untouched) where the indices span ``win`` or more, or the line is shorter than a window.
inline int32_t index_window(const int32_t* i, int64_t n, int64_t win, int64_t in_len, int32_t* lanes) {
    const int32_t lo = *std::min_element(i, i + n), hi = *std::max_element(i, i + n);
    if (hi - lo >= win || in_len < win) return -1;
    const int32_t start = std::min<int32_t>(lo, static_cast<int32_t>(in_len - win));
    for (int64_t j = 0; j < n; ++j) lanes[j] = i[j] - start;
    return start;
}

// Copying a row by an index table (nearest along the contiguous axis): out[o] = src[index[o]], bits as they are.
// 32-bit elements: a block of kLanes outputs whose sources lie within kLanes consecutive elements (upsampling,
// mild downsampling) is one unaligned load and a lane permute, another block an index gather; other element
// types, the base build and the tail copy element by element. Built once per call (a few values per output).
struct RowGather {
    static constexpr int64_t kLanes = kPermuteLanes;
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
        for (int64_t b = 0; b < blocks; ++b)
            base[static_cast<size_t>(b)] =
                index_window(idx.data() + b * kLanes, kLanes, kLanes, in_len, perm.data() + b * kLanes);
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
