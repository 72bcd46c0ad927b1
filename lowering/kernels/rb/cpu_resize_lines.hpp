// Resize passes along one axis: weighted tap sums (float64 as the oracle, or float32 for float X on the fused
// 2-D path) and pure copies (nearest).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common.hpp"
#include "cpu_pool.hpp"
#include "cpu_simd.hpp"
#include "taps.hpp"

namespace rb {
namespace cpu {

// The fused 2-D Resize passes accumulate in float32 for float X when every output sums at most this many taps
// per axis (linear, cubic, antialias down to 1/4): the error stays a few float32 ulps of the inputs' magnitude,
// well inside the proof's tolerance (tests/lowering/test_kernels.py measures it on adversarial inputs); longer
// antialias windows keep float64.
constexpr int64_t kF32MaxTaps = 8;

// One output line of a pass along an axis with ``inner`` > 1 contiguous values per position: acc[0:inner] =
// sum_k w[k] * src[idx[k]][0:inner], k outermost so the inner loop is a contiguous vector loop; per element the
// operations are tap_sum's (0 + w0*x0 + w1*x1 ...), so the bits are the oracle's float64 order.
// Acc float (float X only): the same loop in float32 lanes, weights rounded once to float.
template <class In, class Acc>
inline void tap_line(const In* src, int64_t inner, const int64_t* idx, const double* w, int64_t K, Acc* acc) {
    const In* l0 = src + idx[0] * inner;
    const Acc w0 = static_cast<Acc>(w[0]);
    for (int64_t i = 0; i < inner; ++i) acc[i] = Acc(0) + w0 * load<Acc>(l0[i]);
    for (int64_t k = 1; k < K; ++k) {
        const In* l = src + idx[k] * inner;
        const Acc wk = static_cast<Acc>(w[k]);
        for (int64_t i = 0; i < inner; ++i) acc[i] += wk * load<Acc>(l[i]);
    }
}

// A pass along the contiguous axis over one line: out[o] = sum_k w[k] * line[idx[k]] (tap_sum's order), with
// the tap count a compile-time constant for the common windows (1, 2, 4, 6, 8) so the loop unrolls.

template <int K, class Acc, class In, class Out>
RB_SCALAR_LOOP inline void line_taps_k(const In* line, Out* out, const TableView& t, double extrap_value) {
    for (int64_t o = 0; o < t.out_len; ++o) {
        if (t.extrap && t.extrap[o]) {
            out[o] = store<Out>(extrap_value);
            continue;
        }
        const int64_t* idx = t.index + o * K;
        const double* w = t.weight + o * K;
        Acc acc = Acc(0);
        for (int k = 0; k < K; ++k) acc += static_cast<Acc>(w[k]) * load<Acc>(line[idx[k]]);
        out[o] = store<Out>(acc);
    }
}

// Acc: double (the oracle's bits), or float for a float32 line into float32 (the fused 2-D pass on float X).
template <class In, class Out, class Acc = double>
inline void line_taps(const In* line, Out* out, const TableView& t, double extrap_value) {
    switch (t.K) {
        case 1: return line_taps_k<1, Acc>(line, out, t, extrap_value);
        case 2: return line_taps_k<2, Acc>(line, out, t, extrap_value);
        case 4: return line_taps_k<4, Acc>(line, out, t, extrap_value);
        case 6: return line_taps_k<6, Acc>(line, out, t, extrap_value);
        case 8: return line_taps_k<8, Acc>(line, out, t, extrap_value);
        default:
            for (int64_t o = 0; o < t.out_len; ++o)
                out[o] = t.extrap && t.extrap[o] ? store<Out>(extrap_value)
                                                 : store<Out>(tap_sum<Acc>(line, 1, t.index + o * t.K,
                                                                           t.weight + o * t.K, t.K));
    }
}

template <class In, class Out>
void resize_pass(const In* x, Out* y, int64_t outer, int64_t inner, const TableView& t, double extrap_value,
                 int threads) {
    const int64_t Lin = t.in_len, Lout = t.out_len, K = t.K;
    if (inner == 1) {
        parallel_for(outer, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, Lout * K)),
                     [&](int64_t b, int64_t e) {
            for (int64_t q = b; q < e; ++q) line_taps(x + q * Lin, y + q * Lout, t, extrap_value);
        });
        return;
    }
    parallel_for(outer * Lout, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner * K)),
                 [&](int64_t b, int64_t e) {
        double* acc = std::is_same<Out, double>::value ? nullptr : scratch(static_cast<size_t>(inner));
        for (int64_t r = b; r < e; ++r) {
            const int64_t q = r / Lout, o = r % Lout;
            const In* src = x + q * Lin * inner;
            Out* dst = y + (q * Lout + o) * inner;
            const int64_t* idx = t.index + o * K;
            const double* w = t.weight + o * K;
            if (t.extrap && t.extrap[o]) {
                for (int64_t i = 0; i < inner; ++i) dst[i] = store<Out>(extrap_value);
                continue;
            }
            if (inner == 1) {
                dst[0] = store<Out>(tap_sum<double>(src, 1, idx, w, K));
                continue;
            }
            double* a = acc ? acc : reinterpret_cast<double*>(dst);
            tap_line(src, inner, idx, w, K, a);
            if (acc)
                for (int64_t i = 0; i < inner; ++i) dst[i] = store<Out>(acc[i]);
        }
    });
}

// A table that only copies (one tap of weight 1, nothing extrapolated): nearest, and identity-length axes.
inline bool pure_gather(const TableView& t) {
    if (t.K != 1 || t.extrap) return false;
    for (int64_t o = 0; o < t.out_len; ++o)
        if (t.weight[o] != 1.0) return false;
    return true;
}

// A copying pass in the element type itself (exact: no arithmetic): rows of ``inner`` values are memcpy'd,
// and a row equal to the previous output row (nearest upsampling repeats rows) is copied from there.
template <class T>
void gather_pass(const T* x, T* y, int64_t outer, int64_t inner, const TableView& t, int threads) {
    const int64_t Lin = t.in_len, Lout = t.out_len;
    if (inner == 1) {
        const RowGather row(t.index, Lout, Lin, sizeof(T));
        parallel_for(outer, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, Lout)), [&](int64_t b, int64_t e) {
            for (int64_t q = b; q < e; ++q) row(x + q * Lin, y + q * Lout);
        });
        return;
    }
    parallel_for(outer * Lout, threads, std::max<int64_t>(1, 16384 / inner), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const int64_t q = r / Lout, o = r % Lout;
            std::copy_n(x + (q * Lin + t.index[o]) * inner, inner, y + r * inner);
        }
    });
}

}  // namespace cpu
}  // namespace rb
