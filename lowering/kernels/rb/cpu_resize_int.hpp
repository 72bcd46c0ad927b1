// Exact integer Resize (semantics.reference._run_resize_integer): per axis, sum the integer tap numerators times
// the values (scale = the product of the tables' denominators), then round half to even and saturate once.
// The sums run in the narrowest type that holds the worst case's integers exactly: int32 for 8- and 16-bit
// images at the usual scales (u8 480x640 -> 224x224 linear: a denominator of 7 per axis), float64 below 2^52
// (antialias), int64, else 128 bits; the same integers whatever the type, so the bits do not depend on it. The
// first pass reads the elements as they are.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "cpu_pool.hpp"
#include "rational.hpp"
#include "taps.hpp"

namespace rb {
namespace cpu {

// v / scale rounded half to even, scale > 0: int64 and int128 by their own division; int32 and float64 through a
// float64 quotient (off by at most one, which the remainder corrects), vectorisable where integer division is
// not. The caller's bounds: |v| + scale < 2^31 for int32, every value below 2^52 for float64 (then each product
// and remainder is an exact integer).
template <class Acc>
inline Acc round_half_even_div(Acc v, Acc scale, double inv) {
    if constexpr (std::is_same<Acc, double>::value) {  // integers below 2^52: every step exact in float64
        double q = std::floor(v * inv);
        q = v - q * scale < 0.0 ? q - 1.0 : (v - q * scale >= scale ? q + 1.0 : q);
        const double r = v - q * scale, h = scale - r;
        const bool odd = q * 0.5 != std::floor(q * 0.5);
        return (r > h || (r == h && odd)) ? q + 1.0 : q;
    } else {
        Acc q;
        if constexpr (std::is_same<Acc, int32_t>::value) {
            q = static_cast<int32_t>(std::floor(static_cast<double>(v) * inv));
        } else {
            (void)inv;
            q = v / scale - ((v % scale != 0) & ((v < 0) != (scale < 0)));  // floor
        }
        Acc r = v - q * scale;
        // The corrections as masks (0 or all ones), not branches.
        const Acc below = -static_cast<Acc>(r < 0);
        q += below;
        r += scale & below;
        const Acc above = -static_cast<Acc>(r >= scale);
        q -= above;
        r -= scale & above;
        return q + static_cast<Acc>((r > scale - r) | ((r == scale - r) & (q & 1)));
    }
}

#if defined(__GNUC__)
// round_half_even_div<int32_t> of four sums at once, clamped to [lo, hi]: g++ 12 leaves the scalar loop
// unvectorised (int32 <-> float64 lanes of two widths), and it was most of an int8 x2 resize. GNU vector types,
// so each build level picks its instructions; every lane computes the scalar function's integers.
typedef int32_t I32x4 __attribute__((vector_size(16)));
typedef double F64x4 __attribute__((vector_size(32)));

inline I32x4 select4(I32x4 mask, I32x4 a, I32x4 b) { return (a & mask) | (b & ~mask); }

inline I32x4 clamp4(I32x4 q, int32_t lo, int32_t hi) {  // saturation to the element type
    const I32x4 zero = q - q;
    q = select4(q < lo, zero + lo, q);
    return select4(q > hi, zero + hi, q);
}

inline I32x4 round_half_even_div4(I32x4 v, int32_t scale, double inv, int32_t lo, int32_t hi) {
    const F64x4 d = __builtin_convertvector(v, F64x4) * inv;
    I32x4 q = __builtin_convertvector(d, I32x4);  // toward zero: one less where that went up (floor)
    q += __builtin_convertvector(__builtin_convertvector(q, F64x4) > d, I32x4);
    I32x4 r = v - q * scale;
    const I32x4 below = r < 0, zero = v - v;  // masks are 0 or -1
    q += below;
    r += below & scale;
    const I32x4 above = r >= scale;
    q -= above;
    r -= above & scale;
    const I32x4 h = scale - r;
    q -= (r > h) | ((r == h) & ((q & 1) != zero));
    return clamp4(q, lo, hi);
}

// The same for a power-of-two scale (x2, x4 upscales): an arithmetic shift floors, a mask is the remainder.
inline I32x4 round_half_even_shift4(I32x4 v, int32_t scale, int sh, int32_t lo, int32_t hi) {
    const I32x4 zero = v - v, half = zero + (scale >> 1);
    I32x4 q = v >> sh;
    const I32x4 r = v & (scale - 1);
    if (scale > 1) q -= (r > half) | ((r == half) & ((q & 1) != zero));  // masks are 0 or -1
    return clamp4(q, lo, hi);
}
#endif

// One axis of ``t``: dst[q, o, i] = sum_k num[o, k] * src[q, index[o, k], i] over ``outer`` x ``inner``
// (``fill`` where the output's source lies outside a crop), taps in table order.
template <class Acc, class S>
void integer_pass(const S* src, Acc* dst, int64_t outer, int64_t inner, const TableView& t, Acc fill, int threads) {
    const int64_t Lin = t.in_len, Lout = t.out_len, K = t.K;
    if (inner == 1) {  // the contiguous axis: a K-tap dot product per output
        // The numerators in Acc once, K fixed for linear and cubic.
        const std::vector<Acc> num(t.num, t.num + Lout * K);
        const int64_t* at = t.index;
        auto rows = [&](auto k_fixed) {
            constexpr int KF = decltype(k_fixed)::value;  // 0: K at run time
            const int64_t k_n = KF ? KF : K;
            parallel_for(outer, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, Lout * K)),
                         [&](int64_t b, int64_t e) {
                for (int64_t q = b; q < e; ++q) {
                    const S* s = src + q * Lin;
                    Acc* d = dst + q * Lout;
                    for (int64_t o = 0; o < Lout; ++o) {
                        if (t.extrap && t.extrap[o]) {  // its taps are not read
                            d[o] = fill;
                            continue;
                        }
                        Acc acc = 0;
                        for (int64_t k = 0; k < k_n; ++k)
                            acc += num[o * k_n + k] * static_cast<Acc>(s[at[o * k_n + k]]);
                        d[o] = acc;
                    }
                }
            });
        };
        if (K == 2) rows(std::integral_constant<int, 2>());
        else if (K == 4) rows(std::integral_constant<int, 4>());
        else rows(std::integral_constant<int, 0>());
        return;
    }
    parallel_for(outer * Lout, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner * K)),
                 [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
            const int64_t q = row / Lout, o = row % Lout;
            Acc* d = dst + row * inner;
            if (t.extrap && t.extrap[o]) {
                std::fill(d, d + inner, fill);
                continue;
            }
            const S* base = src + q * Lin * inner;
            if (K == 0) std::fill(d, d + inner, Acc(0));  // nothing to sum (the buffers start uninitialised)
            for (int64_t k = 0; k < K; ++k) {
                const Acc w = static_cast<Acc>(t.num[o * K + k]);
                const S* line = base + t.index[o * K + k] * inner;
                if (k == 0)
                    for (int64_t i = 0; i < inner; ++i) d[i] = w * static_cast<Acc>(line[i]);
                else
                    for (int64_t i = 0; i < inner; ++i) d[i] += w * static_cast<Acc>(line[i]);
            }
        }
    });
}

// Every table's pass in Acc, then the one rounding into T.
template <class Acc, class T>
void resize_integer_in(const T* x, T* y, std::vector<int64_t> shape, const std::vector<TableView>& tables,
                       int64_t extrap_value, int threads) {
    const size_t r = shape.size();
    std::unique_ptr<Acc[]> cur, next;  // uninitialised: every element is written by its pass
    Acc scale = 1;
    for (size_t n = 0; n < tables.size(); ++n) {
        const TableView& t = tables[n];
        const int64_t outer = product(shape, 0, t.axis), inner = product(shape, t.axis + 1, r);
        scale *= static_cast<Acc>(t.den);
        next.reset(new Acc[static_cast<size_t>(outer * t.out_len * inner)]);
        const Acc fill = static_cast<Acc>(extrap_value) * scale;
        if (n == 0)
            integer_pass<Acc>(x, next.get(), outer, inner, t, fill, threads);
        else
            integer_pass<Acc>(static_cast<const Acc*>(cur.get()), next.get(), outer, inner, t, fill, threads);
        shape[t.axis] = t.out_len;
        cur.swap(next);
    }
    constexpr bool is_signed = T(-1) < T(0);
    const Acc lo = is_signed ? Acc(std::numeric_limits<T>::min()) : Acc(0);
    const Acc hi = Acc(std::numeric_limits<T>::max());
    const double inv = 1.0 / static_cast<double>(scale);
    const Acc* v = cur.get();
    parallel_for(product(shape, 0, r), threads, 1 << 14, [&](int64_t b, int64_t e) {
        // Locals: a store through T* (a char type) may alias anything captured by reference, which kept
        // this loop scalar (62% of an int8 x2 resize).
        const Acc* __restrict in = v;
        T* __restrict out = y;
        const Acc s = scale, lo_ = lo, hi_ = hi;
        const double inv_ = inv;
        int64_t i = b;
#if defined(__GNUC__)
        if constexpr (std::is_same<Acc, int32_t>::value) {
            const bool pow2 = (s & (s - 1)) == 0;
            const int sh = __builtin_ctz(static_cast<unsigned>(s));
            for (; i + 4 <= e; i += 4) {
                I32x4 v4;
                std::memcpy(&v4, in + i, sizeof v4);
                const I32x4 q = pow2 ? round_half_even_shift4(v4, s, sh, lo_, hi_)
                                     : round_half_even_div4(v4, s, inv_, lo_, hi_);
                for (int k = 0; k < 4; ++k) out[i + k] = static_cast<T>(q[k]);
            }
        }
#endif
        for (; i < e; ++i) {
            const Acc q = round_half_even_div<Acc>(in[i], s, inv_);
            out[i] = static_cast<T>(q < lo_ ? lo_ : (q > hi_ ? hi_ : q));
        }
    });
}

// The largest magnitude any partial sum can reach (the elements' bound times each table's largest row of
// |numerators|, or the extrapolation value times the scale so far), and the final scale, as doubles.
template <class T>
void integer_bounds(const T* x, int64_t n_in, const std::vector<TableView>& tables, int64_t extrap_value,
                    double& bound, double& scale) {
    bound = 0.0;
    if constexpr (sizeof(T) <= 2) {  // the type's range: no pass over the data
        bound = std::max(std::fabs(static_cast<double>(std::numeric_limits<T>::min())),
                         static_cast<double>(std::numeric_limits<T>::max()));
        (void)x;
        (void)n_in;
    } else {
        for (int64_t i = 0; i < n_in; ++i) bound = std::max(bound, std::fabs(static_cast<double>(x[i])));
    }
    scale = 1.0;
    for (const TableView& t : tables) {
        double row_max = 0.0;
        for (int64_t o = 0; o < t.out_len; ++o) {
            double sum = 0.0;
            for (int64_t k = 0; k < t.K; ++k) sum += std::fabs(static_cast<double>(t.num[o * t.K + k]));
            row_max = std::max(row_max, sum);
        }
        scale *= static_cast<double>(t.den);
        bound = std::max(bound * row_max, std::fabs(static_cast<double>(extrap_value)) * scale);
    }
}

// Refuses (std::overflow_error) when the worst case could leave 128 bits.
template <class T>
void resize_integer(const T* x, T* y, const std::vector<int64_t>& shape, const std::vector<TableView>& tables,
                    int64_t extrap_value, int threads) {
    double bound, scale;
    integer_bounds(x, product(shape, 0, shape.size()), tables, extrap_value, bound, scale);
    // int32: |partial sums| + scale below 2^31 (round_half_even_div's int32 condition).
    if (bound < pow2(30) && scale < pow2(30))
        return resize_integer_in<int32_t>(x, y, shape, tables, extrap_value, threads);
    // float64 holds every integer below 2^53 exactly, and its lanes multiply where AVX2 has no 64-bit integer
    // multiply (uint8 antialias 512 -> 224: denominators of 131400 per axis).
    if (bound < pow2(52) && scale < pow2(52))
        return resize_integer_in<double>(x, y, shape, tables, extrap_value, threads);
    if (bound < pow2(62) && scale < pow2(62))
        return resize_integer_in<int64_t>(x, y, shape, tables, extrap_value, threads);
    if (!(bound < pow2(124) && scale < pow2(124)))
        throw std::overflow_error("integer Resize: exact accumulation would exceed 128 bits for these weights");
    resize_integer_in<i128>(x, y, shape, tables, extrap_value, threads);
}

}  // namespace cpu
}  // namespace rb
