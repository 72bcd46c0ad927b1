// CPU launchers over the shared per-element code: OpenVINO's thread pool inside the extension (std::thread
// workers in the ctypes library), contiguous inner loops. Element type T: float, _Float16, double, and the integer
// types (saturating round half to even; exact integer Resize). Accumulation is float64 (the oracle's bits), except
// float X on the paths marked float32 below (GridSample, DeformConv, the fused 2-D Resize with short windows): the
// coordinates and tap weights stay the shared float64 code, only the weighted sums run in float32.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cmath>
#include <exception>
#include <limits>
#include <type_traits>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "bind.hpp"
#include "block_taps.hpp"
#include "common.hpp"
#include "deformconv.hpp"
#include "gridsample.hpp"
#include "points.hpp"
#include "taps.hpp"

namespace rb {
namespace cpu {

#if defined(RB_OPENVINO_THREADS)
// Inside the OpenVINO extension (ops.cpp includes openvino/core/parallel.hpp first): the plugin's own TBB pool,
// no threads started per call.
inline int pool_threads() { return parallel_get_max_threads(); }
template <class F>
void run_chunks(int64_t chunks, F&& run) {
    ov::parallel_for(chunks, [&](int64_t c) { run(c); });
}
#else
inline int pool_threads() {
    const int hw = static_cast<int>(std::thread::hardware_concurrency());
    return hw > 0 ? hw : 1;
}
template <class F>
void run_chunks(int64_t chunks, F&& run) {
    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(chunks - 1));
    for (int64_t c = 1; c < chunks; ++c) pool.emplace_back(run, c);
    run(0);
    for (auto& t : pool) t.join();
}
#endif

inline int thread_count(int requested) {
    const int hw = pool_threads();
    return requested > 0 ? std::min(requested, hw) : hw;
}

// f(begin, end) over [0, n) in contiguous chunks of at least ``grain`` items; the first exception wins.
// Up to 4 chunks per worker, taken from a shared counter: the pool splits statically, so on a shared machine a
// worker that is scheduled late would otherwise hold back its whole share; here the others take its chunks.
// Chunk boundaries depend only on n, grain and the thread count, never on which worker runs what.
template <class F>
void parallel_for(int64_t n, int threads, int64_t grain, F&& f) {
    if (n <= 0) return;
    const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(thread_count(threads), (n + grain - 1) / grain));
    if (workers == 1) {
        f(int64_t(0), n);
        return;
    }
    const int64_t chunks = std::min<int64_t>(4 * workers, std::max<int64_t>(workers, n / std::max<int64_t>(1, grain)));
    std::atomic<int64_t> next{0};
    std::exception_ptr err;
    std::mutex mu;
    auto run = [&](int64_t) {
        for (int64_t c = next++; c < chunks; c = next++) {
            const int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
            try {
                f(b, e);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mu);
                if (!err) err = std::current_exception();
            }
        }
    };
    run_chunks(workers, run);
    if (err) std::rethrow_exception(err);
}

inline int64_t product(const std::vector<int64_t>& v, size_t b, size_t e) {
    int64_t p = 1;
    for (size_t i = b; i < e; ++i) p *= v[i];
    return p;
}

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

// ------------------------------------------------------------------------------------------------------------
// Resize: optional zero padding (OpenVINO pads_begin/pads_end), then one separable pass per table.

// Scratch reused across calls by each worker thread (no allocation in the hot path once warm).
template <class Acc = double>
inline Acc* scratch(size_t n) {
    thread_local std::vector<Acc> buf;
    if (buf.size() < n) buf.resize(n);
    return buf.data();
}

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
// Scalar on purpose: vectorised, this loop becomes hardware gathers, measured 2x slower than scalar loads (AMD
// EPYC, AVX-512).
#if defined(__GNUC__) && !defined(__clang__)
#define RB_SCALAR_LOOP __attribute__((optimize("no-tree-vectorize")))
#else
#define RB_SCALAR_LOOP
#endif

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
        parallel_for(outer, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, Lout)), [&](int64_t b, int64_t e) {
            for (int64_t q = b; q < e; ++q) {
                const T* src = x + q * Lin;
                T* dst = y + q * Lout;
                for (int64_t o = 0; o < Lout; ++o) dst[o] = src[t.index[o]];
            }
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

// Nearest on the last two axes in one pass: out[oh][ow] = x[ih[oh]][iw[ow]]; a repeated source row is a
// memcpy of the output row before it.
template <class T>
void gather_2d(const T* x, T* y, int64_t planes, const TableView& th, const TableView& tw, int threads) {
    const int64_t Hin = th.in_len, Win = tw.in_len, Hout = th.out_len, Wout = tw.out_len;
    std::vector<int32_t> idx32_buf;  // W's indices as int32 for the vector gather (one small table per call)
    if (sizeof(T) == 4 && Win <= std::numeric_limits<int32_t>::max()) idx32_buf.assign(tw.index, tw.index + Wout);
    const int32_t* idx32 = idx32_buf.empty() ? nullptr : idx32_buf.data();
    (void)idx32;
    parallel_for(planes * Hout, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, Wout)),
                 [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const int64_t p = r / Hout, oh = r % Hout;
            T* dst = y + r * Wout;
            if (r > b && oh > 0 && th.index[oh] == th.index[oh - 1]) {
                std::copy_n(dst - Wout, Wout, dst);
                continue;
            }
            const T* src = x + (p * Hin + th.index[oh]) * Win;
            int64_t o = 0;
#if defined(__AVX512F__)
            if constexpr (sizeof(T) == 4)  // 32-bit elements: 16 at a time by index gather (bits copied as is)
                if (idx32)
                    for (; o + 16 <= Wout; o += 16)
                        _mm512_storeu_si512(dst + o, _mm512_mask_i32gather_epi32(
                                                         _mm512_setzero_si512(), __mmask16(0xFFFF),
                                                         _mm512_loadu_si512(idx32 + o), src, 4));
#endif
            for (; o < Wout; ++o) dst[o] = src[tw.index[o]];
        }
    });
}

// A table as compact taps (tap-major int32 indices, float32 weights) for sample_row_f32: a float32 line pass
// along the contiguous axis vectorises with gathers. Built once per call (out_len * K values, small next to the
// pass); false when the line is too long for int32 indices.
struct F32Table {
    std::vector<int32_t> index;
    std::vector<float> weight;
};

inline bool f32_table(const TableView& t, F32Table& out) {
    if (t.in_len > std::numeric_limits<int32_t>::max()) return false;
    out.index.resize(static_cast<size_t>(t.K * t.out_len));
    out.weight.resize(out.index.size());
    for (int64_t o = 0; o < t.out_len; ++o)
        for (int64_t k = 0; k < t.K; ++k) {
            out.index[k * t.out_len + o] = static_cast<int32_t>(t.index[o * t.K + k]);
            out.weight[k * t.out_len + o] = static_cast<float>(t.weight[o * t.K + k]);
        }
    return true;
}

// line_taps in float32 through the compact table when there is one, then the extrapolated outputs.
inline void line_taps_f32(const float* line, float* out, const TableView& t, const F32Table* ft,
                          double extrap_value) {
    if (!ft) return line_taps<float, float, float>(line, out, t, extrap_value);
    sample_row_f32(line, ft->index.data(), ft->weight.data(), t.out_len, t.out_len, static_cast<int>(t.K), out);
    if (t.extrap)
        for (int64_t o = 0; o < t.out_len; ++o)
            if (t.extrap[o]) out[o] = static_cast<float>(extrap_value);
}

// The W pass of a fused 2-D resize: float X with a float accumulator goes through the compact float32 table
// (gathers) where the table fits one; every other type through the generic tap loop.
template <class T, class Acc>
struct WPass {
    static constexpr bool kF32 = std::is_same<T, float>::value && std::is_same<Acc, float>::value;
    const TableView& tw;
    double extrap_value;
    F32Table ft;
    bool compact = false;

    WPass(const TableView& t, double e) : tw(t), extrap_value(e) {
        if constexpr (kF32) compact = f32_table(tw, ft);
    }
    template <class In, class Out>
    void operator()(const In* line, Out* out) const {
        if constexpr (kF32)
            line_taps_f32(line, out, tw, compact ? &ft : nullptr, extrap_value);
        else
            line_taps<In, Out, Acc>(line, out, tw, extrap_value);
    }
};

// Linear / cubic on the last two axes, H's table first (the oracle's order when the op lists H before W): per
// output row, the H taps combine input rows into one row of Acc (contiguous vector loop), whose W taps give the
// output row. No intermediate tensor; with Acc double the bits are those of the two separate passes. Acc float
// (float X, short windows): both passes in float32, the W pass through the compact table (gathers).
template <class T, class Acc>
void resize_2d_hw(const T* x, T* y, int64_t planes, const TableView& th, const TableView& tw, double extrap_value,
                  int threads) {
    const WPass<T, Acc> wpass(tw, extrap_value);
    const int64_t Hin = th.in_len, Win = tw.in_len, Hout = th.out_len, Wout = tw.out_len, Kh = th.K;
    parallel_for(planes * Hout, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, Win * Kh)),
                 [&](int64_t b, int64_t e) {
        Acc* row = scratch<Acc>(static_cast<size_t>(Win));
        for (int64_t r = b; r < e; ++r) {
            const int64_t p = r / Hout, oh = r % Hout;
            T* dst = y + r * Wout;
            if (th.extrap && th.extrap[oh]) {
                for (int64_t i = 0; i < Win; ++i) row[i] = static_cast<Acc>(extrap_value);
            } else {
                tap_line(x + p * Hin * Win, Win, th.index + oh * Kh, th.weight + oh * Kh, Kh, row);
            }
            wpass(row, dst);
        }
    });
}

// ... W's table first: each plane's input rows through the W taps into a per-thread float64 plane [Hin, Wout],
// then each output row from the H taps over it (contiguous vector loop).
template <class T, class Acc>
void resize_2d_wh(const T* x, T* y, int64_t planes, const TableView& th, const TableView& tw, double extrap_value,
                  int threads) {
    const WPass<T, Acc> wpass(tw, extrap_value);
    const int64_t Hin = th.in_len, Win = tw.in_len, Hout = th.out_len, Wout = tw.out_len, Kh = th.K;
    parallel_for(planes, threads, 1, [&](int64_t b, int64_t e) {
        Acc* buf = scratch<Acc>(static_cast<size_t>(Hin * Wout + Wout));
        Acc* acc = buf + Hin * Wout;
        for (int64_t p = b; p < e; ++p) {
            const T* xp = x + p * Hin * Win;
            for (int64_t ih = 0; ih < Hin; ++ih) wpass(xp + ih * Win, buf + ih * Wout);
            for (int64_t oh = 0; oh < Hout; ++oh) {
                T* dst = y + (p * Hout + oh) * Wout;
                if (th.extrap && th.extrap[oh]) {
                    for (int64_t o = 0; o < Wout; ++o) dst[o] = store<T>(extrap_value);
                    continue;
                }
                tap_line(buf, Wout, th.index + oh * Kh, th.weight + oh * Kh, Kh, acc);
                for (int64_t o = 0; o < Wout; ++o) dst[o] = store<T>(acc[o]);
            }
        }
    });
}

// The last two axes (in either order) and nothing else: one fused 2-D pass. False when the tables are not that.
template <class T>
bool resize_last_two(const T* x, T* y, const std::vector<int64_t>& shape, const std::vector<TableView>& tables,
                     double extrap_value, int threads) {
    const int64_t r = static_cast<int64_t>(shape.size());
    if (r < 2 || tables.size() != 2) return false;
    const bool hw = tables[0].axis == r - 2 && tables[1].axis == r - 1;
    const bool wh = tables[0].axis == r - 1 && tables[1].axis == r - 2;
    if (!hw && !wh) return false;
    const TableView& th = hw ? tables[0] : tables[1];
    const TableView& tw = hw ? tables[1] : tables[0];
    if (th.in_len != shape[r - 2] || tw.in_len != shape[r - 1]) return false;
    const int64_t planes = product(shape, 0, static_cast<size_t>(r - 2));
    if (pure_gather(th) && pure_gather(tw)) {
        gather_2d(x, y, planes, th, tw, threads);
        return true;
    }
    if constexpr (std::is_same<T, float>::value) {
        if (th.K <= kF32MaxTaps && tw.K <= kF32MaxTaps) {
            if (hw) resize_2d_hw<T, float>(x, y, planes, th, tw, extrap_value, threads);
            else resize_2d_wh<T, float>(x, y, planes, th, tw, extrap_value, threads);
            return true;
        }
    }
    if (hw) resize_2d_hw<T, double>(x, y, planes, th, tw, extrap_value, threads);
    else resize_2d_wh<T, double>(x, y, planes, th, tw, extrap_value, threads);
    return true;
}

// Zero padding of every axis: pads holds begins then ends (2*rank values).
template <class T>
std::vector<double> pad_input(const T* x, const std::vector<int64_t>& shape, const std::vector<int64_t>& pads,
                              std::vector<int64_t>& padded) {
    const size_t r = shape.size();
    padded.resize(r);
    for (size_t i = 0; i < r; ++i) padded[i] = shape[i] + pads[i] + pads[r + i];
    std::vector<double> out(static_cast<size_t>(product(padded, 0, r)), 0.0);
    const int64_t total = product(shape, 0, r);
    std::vector<int64_t> idx(r, 0);
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t rem = lin, dst = 0;
        for (size_t d = r; d-- > 0;) {
            idx[d] = rem % shape[d];
            rem /= shape[d];
        }
        for (size_t d = 0; d < r; ++d) dst = dst * padded[d] + idx[d] + pads[d];
        out[static_cast<size_t>(dst)] = load<double>(x[lin]);
    }
    return out;
}

// Exact integer Resize (semantics.reference._run_resize_integer): per axis, sum the integer tap numerators times
// the values in 128-bit integers (scale = product of the tables' denominators), then round half to even and
// saturate once. Refuses (std::overflow_error) when the worst case could leave 128 bits.
inline i128 round_half_even_div(i128 v, i128 scale) {
    const i128 q = floor_div(v, scale), r = v - q * scale;
    return (2 * r > scale || (2 * r == scale && (q & 1))) ? q + 1 : q;
}

template <class T>
void resize_integer(const T* x, T* y, std::vector<int64_t> shape, const std::vector<TableView>& tables,
                    int64_t extrap_value, int threads) {
    const size_t r = shape.size();
    const int64_t n_in = product(shape, 0, r);
    double bound = 0.0, scale_bound = 1.0;
    for (int64_t i = 0; i < n_in; ++i) bound = std::max(bound, std::fabs(static_cast<double>(x[i])));
    for (const TableView& t : tables) {
        double row_max = 0.0;
        for (int64_t o = 0; o < t.out_len; ++o) {
            double sum = 0.0;
            for (int64_t k = 0; k < t.K; ++k) sum += std::fabs(static_cast<double>(t.num[o * t.K + k]));
            row_max = std::max(row_max, sum);
        }
        scale_bound *= static_cast<double>(t.den);
        bound = std::max(bound * row_max, std::fabs(static_cast<double>(extrap_value)) * scale_bound);
    }
    if (!(bound < pow2(124)))
        throw std::overflow_error("integer Resize: exact accumulation would exceed 128 bits for these weights");
    std::vector<i128> cur(x, x + n_in), next;
    i128 scale = 1;
    for (const TableView& t : tables) {
        const int64_t outer = product(shape, 0, t.axis), inner = product(shape, t.axis + 1, r);
        const int64_t Lin = t.in_len, Lout = t.out_len, K = t.K;
        scale *= t.den;
        const i128 fill = i128(extrap_value) * scale;
        next.assign(static_cast<size_t>(outer * Lout * inner), 0);
        parallel_for(outer * Lout, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner * K)),
                     [&](int64_t b, int64_t e) {
            for (int64_t row = b; row < e; ++row) {
                const int64_t q = row / Lout, o = row % Lout;
                const i128* src = cur.data() + q * Lin * inner;
                i128* dst = next.data() + (q * Lout + o) * inner;
                if (t.extrap && t.extrap[o]) {
                    std::fill(dst, dst + inner, fill);
                    continue;
                }
                for (int64_t k = 0; k < K; ++k) {
                    const i128 w = t.num[o * K + k];
                    const i128* line = src + t.index[o * K + k] * inner;
                    for (int64_t i = 0; i < inner; ++i) dst[i] += w * line[i];
                }
            }
        });
        shape[t.axis] = Lout;
        cur.swap(next);
    }
    constexpr bool is_signed = T(-1) < T(0);
    const i128 lo = is_signed ? i128(std::numeric_limits<T>::min()) : i128(0);
    const i128 hi = i128(std::numeric_limits<T>::max());
    parallel_for(static_cast<int64_t>(cur.size()), threads, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            const i128 v = round_half_even_div(cur[i], scale);
            y[i] = static_cast<T>(v < lo ? lo : v > hi ? hi : v);
        }
    });
}

template <class T>
void resize(const T* x, T* y, std::vector<int64_t> shape, const std::vector<int64_t>& pads,
            const std::vector<TableView>& tables, double extrap_value, int threads,
            bool exact_integers = false) {
    const size_t r = shape.size();
    if constexpr (std::is_integral<T>::value) {
        // Linear / cubic on integers: exact, as the oracle (nearest, OpenVINO pads or a fractional extrapolation
        // value take the float64 path below, as there).
        const bool no_pads = std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; });
        if (exact_integers && no_pads && !tables.empty() && std::nearbyint(extrap_value) == extrap_value &&
            product(shape, 0, r) > 0) {
            for (const TableView& t : tables)
                if (!t.num || t.den <= 0)
                    throw std::invalid_argument("integer Resize needs exact tap weights; these scales have none "
                                                "within 128 bits");
            resize_integer(x, y, shape, tables, static_cast<int64_t>(extrap_value), threads);
            return;
        }
    }
    std::vector<double> cur;  // float64 between passes, as the oracle
    bool padded = false;
    if (!pads.empty() && std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
        if (pads.size() != 2 * r) throw std::invalid_argument("pads must hold 2*rank values");
        std::vector<int64_t> ps;
        cur = pad_input(x, shape, pads, ps);
        shape = ps;
        padded = true;
    }
    std::vector<int64_t> out_shape = shape;
    for (const auto& t : tables) {
        if (t.axis < 0 || static_cast<size_t>(t.axis) >= r) throw std::invalid_argument("table axis out of range");
        if (out_shape[t.axis] != t.in_len)
            throw std::invalid_argument("table for axis " + std::to_string(t.axis) + " expects length " +
                                        std::to_string(t.in_len) + ", the tensor has " +
                                        std::to_string(out_shape[t.axis]));
        out_shape[t.axis] = t.out_len;
    }
    const int64_t total_out = product(out_shape, 0, r);
    if (total_out == 0) return;
    if (product(shape, 0, r) == 0) {  // an empty input axis resized to a non-empty one: zeros, as the oracle
        std::fill(y, y + total_out, store<T>(0.0));
        return;
    }
    if (tables.empty()) {
        for (int64_t i = 0; i < total_out; ++i) y[i] = padded ? store<T>(cur[i]) : x[i];
        return;
    }
    if (!padded && resize_last_two(x, y, shape, tables, extrap_value, threads)) return;
    if (!padded && std::all_of(tables.begin(), tables.end(), pure_gather)) {
        // Copies only: every pass in T, exact, no float64 intermediate.
        std::vector<T> a, b;
        const T* src = x;
        for (size_t n = 0; n < tables.size(); ++n) {
            const TableView& t = tables[n];
            const int64_t outer = product(shape, 0, t.axis), inner = product(shape, t.axis + 1, r);
            const bool last = n + 1 == tables.size();
            T* dst = y;
            if (!last) {
                std::vector<T>& buf = (n % 2 == 0) ? a : b;
                buf.resize(static_cast<size_t>(outer * t.out_len * inner));
                dst = buf.data();
            }
            gather_pass(src, dst, outer, inner, t, threads);
            shape[t.axis] = t.out_len;
            src = dst;
        }
        return;
    }
    for (size_t n = 0; n < tables.size(); ++n) {
        const TableView& t = tables[n];
        const int64_t outer = product(shape, 0, t.axis), inner = product(shape, t.axis + 1, r);
        const bool last = n + 1 == tables.size();
        std::vector<double> next;
        if (!last) next.resize(static_cast<size_t>(outer * t.out_len * inner));
        if (n == 0 && !padded) {
            if (last) resize_pass(x, y, outer, inner, t, extrap_value, threads);
            else resize_pass(x, next.data(), outer, inner, t, extrap_value, threads);
        } else {
            if (last) resize_pass(cur.data(), y, outer, inner, t, extrap_value, threads);
            else resize_pass(cur.data(), next.data(), outer, inner, t, extrap_value, threads);
        }
        shape[t.axis] = t.out_len;
        cur.swap(next);
    }
}

// A bound and planned Resize (bind.hpp): what the OpenVINO op's evaluate and rb_resize_ir run.
template <class T>
void resize(const T* x, T* y, const ResizePlan& plan, int threads) {
    const int64_t total = element_count(plan.bound.out_shape);
    if (total == 0) return;
    if (plan.views.empty() && !plan.bound.axes.empty()) {  // an empty axis on the way: zeros, as the oracle
        std::fill(y, y + total, store<T>(0.0));
        return;
    }
    resize(x, y, plan.bound.in_shape, plan.bound.pads, plan.views, plan.bound.extrapolation_value, threads,
           plan.bound.sampler.kind != Kind::nearest);
}

// ------------------------------------------------------------------------------------------------------------
// GridSample: x [N, C, spatial...], grid [N, out..., D], y [N, C, out...].

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

// GridSample, float X: per block of points their compact taps once, then every channel over the block.
template <class G>
void gridsample_f32(const GridSampleSpec& s, const float* x, const G* grid, float* y, int threads) {
    int64_t S = 1;
    for (int d = 0; d < s.D; ++d) S *= s.spatial[d];
    const int nt = taps_per_point(s.kind, s.D);
    constexpr int64_t block = kBlock;
    const int64_t blocks = (s.P + block - 1) / block;
    parallel_for(s.N * blocks, threads, 2, [&](int64_t b, int64_t e) {
        thread_local std::vector<int32_t> off;  // kept by each worker across calls
        thread_local std::vector<float> w;
        off.resize(static_cast<size_t>(block * nt));
        w.resize(static_cast<size_t>(block * nt));
        PointTaps taps;
        double pts[kMaxSpatial][kBlock];
        // The block's taps at once (block_taps.hpp); reflection's repeated mirroring stays per point.
        auto fill = [&](auto rank, const G* g, int64_t np) {
            constexpr int D = decltype(rank)::value;
            gridsample_block_coords<D>(s, g, np, pts);
            block_taps<D>(pts, np, s.spatial, s.kind, s.cubic_a, s.padding, block_ones(), block, off.data(), w.data());
        };
        for (int64_t it = b; it < e; ++it) {
            const int64_t n = it / blocks, p0 = (it % blocks) * block, np = std::min(block, s.P - p0);
            const G* g = grid + (n * s.P + p0) * s.D;
            if (s.padding == Padding::reflection) {
                for (int64_t q = 0; q < np; ++q) {
                    gridsample_point_taps(s, g + q * s.D, taps);
                    compact_taps(taps, 1.0, block, off.data() + q, w.data() + q);
                }
            } else if (s.D == 1) {
                fill(std::integral_constant<int, 1>(), g, np);
            } else if (s.D == 2) {
                fill(std::integral_constant<int, 2>(), g, np);
            } else {
                fill(std::integral_constant<int, 3>(), g, np);
            }
            const float* xn = x + n * s.C * S;
            float* yn = y + n * s.C * s.P + p0;
            for (int64_t c = 0; c < s.C; ++c)
                sample_row_f32(xn + c * S, off.data(), w.data(), block, np, nt, yn + c * s.P);
        }
    });
}

// Per block of output points: their taps once (the grid read and the coordinate arithmetic), then every channel
// over the block (contiguous output, one input plane at a time).
template <class T, class G>
void gridsample(const GridSampleSpec& s, const T* x, const G* grid, T* y, int threads) {
    int64_t S = 1;
    for (int d = 0; d < s.D; ++d) S *= s.spatial[d];
    if constexpr (std::is_same<T, float>::value)
        if (S <= std::numeric_limits<int32_t>::max()) return gridsample_f32(s, x, grid, y, threads);
    constexpr int64_t block = 32;
    const int64_t blocks = (s.P + block - 1) / block;
    parallel_for(s.N * blocks, threads, 2, [&](int64_t b, int64_t e) {
        thread_local std::vector<PointTaps> taps;  // kept by each worker across calls
        taps.resize(block);
        for (int64_t it = b; it < e; ++it) {
            const int64_t n = it / blocks, p0 = (it % blocks) * block, np = std::min(block, s.P - p0);
            for (int64_t q = 0; q < np; ++q) gridsample_point_taps(s, grid + (n * s.P + p0 + q) * s.D, taps[q]);
            const T* xn = x + n * s.C * S;
            T* yn = y + n * s.C * s.P + p0;
            for (int64_t c = 0; c < s.C; ++c) apply_block(xn + c * S, taps.data(), np, yn + c * s.P);
        }
    });
}

// ------------------------------------------------------------------------------------------------------------
// DeformConv: x [N, C, spatial...], w [OC, C/group, kernel...], offset [N, OG*K*D, out...], b [OC] or null,
// mask [N, OG*K, out...] or null, y [N, OC, out...]. Per image and tile of output points: sample the columns
// [C*K, tile] in float64, then multiply with W per group (inner loop over the tile's points).

// Four float64 lanes (GCC / Clang vector extension): the GEMM's register block, whatever the vector width.
typedef double V4d __attribute__((vector_size(32)));

// float32 GEMM register block: MR output channels x 32 points, y[u][q] = sum_r w[u][r] * cols[r][q] (+ bias),
// r in order. Sixteen float lanes per vector (one AVX-512 register, two AVX2 ones). FMA contraction is allowed
// here only: these sums are float32 anyway, and nothing here decides a tap or a rounding boundary.
typedef float V16f __attribute__((vector_size(64)));
#if defined(__GNUC__) && !defined(__clang__)
#define RB_FP_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define RB_FP_CONTRACT
#endif

template <int MR>
RB_FP_CONTRACT void sgemm_block(const float* w, int64_t ldw, const float* cols, int64_t ldc, int64_t R,
                                const float* bias, float* y, int64_t ldy, int64_t nq) {
    V16f a[MR][2];
    for (int u = 0; u < MR; ++u) a[u][0] = a[u][1] = V16f{};
    for (int64_t r = 0; r < R; ++r) {
        V16f c0, c1;
        __builtin_memcpy(&c0, cols + r * ldc, sizeof c0);
        __builtin_memcpy(&c1, cols + r * ldc + 16, sizeof c1);
        for (int u = 0; u < MR; ++u) {
            const float wv = w[u * ldw + r];
            a[u][0] += wv * c0;
            a[u][1] += wv * c1;
        }
    }
    for (int u = 0; u < MR; ++u) {
        if (bias) {
            a[u][0] += bias[u];
            a[u][1] += bias[u];
        }
        float* yr = y + u * ldy;
        if (nq == 32) {
            __builtin_memcpy(yr, &a[u][0], sizeof a[u][0]);
            __builtin_memcpy(yr + 16, &a[u][1], sizeof a[u][1]);
        } else {
            for (int64_t q = 0; q < nq; ++q) yr[q] = q < 16 ? a[u][0][q] : a[u][1][q - 16];
        }
    }
}

// DeformConv, float X: per image and tile of points, per offset group the compact taps of every (kernel tap,
// point) once (deform_point_taps, the shared float64 coordinates), reused over the group's channels to sample
// the columns [C*K, tile] in float32; then per group a blocked float32 GEMM with W, points in the vector lanes.
inline void deformconv_f32(const DeformConvSpec& s, const float* x, const float* w, const float* offset,
                           const float* b, const float* mask, float* y, int threads) {
    int64_t S = 1;
    for (int d = 0; d < s.D; ++d) S *= s.spatial[d];
    const int64_t K = s.K, P = s.P, C = s.C, OC = s.OC;
    const int64_t icg = C / s.group, ocg = OC / s.group, cpg = C / s.offset_group, R = icg * K;
    const int nt = taps_per_point(s.kind, s.D);
    constexpr int64_t tile = kBlock;  // a multiple of the GEMM block's 32 points
    const int64_t tiles = (P + tile - 1) / tile;
    std::vector<int64_t> kdec(static_cast<size_t>(K * kMaxSpatial));  // kernel tap k decoded per axis
    for (int64_t k = 0; k < K; ++k) decode_index(k, s.D, s.kernel, kdec.data() + k * kMaxSpatial);
    parallel_for(s.N * tiles, threads, 1, [&](int64_t b0, int64_t e0) {
        thread_local std::vector<float> cols, tw;  // kept by each worker across calls
        thread_local std::vector<int32_t> toff;
        thread_local std::vector<float> tpost;  // per kernel tap, a factor applied after sampling (see below)
        thread_local std::vector<char> tpost_used;
        tpost.resize(static_cast<size_t>(K * tile));
        tpost_used.resize(static_cast<size_t>(K));
        cols.resize(static_cast<size_t>(C * K * tile));
        toff.resize(static_cast<size_t>(K * tile * nt));
        tw.resize(static_cast<size_t>(K * tile * nt));
        // Compact taps of every (kernel tap, point) of the tile (deform_point_taps_at's arithmetic per point,
        // as arrays over the tile's points: block_taps.hpp); the points decoded per axis once per tile.
        auto fill_taps = [&](auto rank, int64_t og, int64_t n, int64_t p0, int64_t np) {
            constexpr int D = decltype(rank)::value;
            int64_t ob[D][kBlock];  // o[d] * stride[d] per point
            int64_t o[kMaxSpatial] = {};
            for (int64_t q = 0; q < np; ++q) {
                decode_index(p0 + q, D, s.out, o);
                for (int d = 0; d < D; ++d) ob[d][q] = o[d] * s.stride[d];
            }
            double pts[D][kBlock], factor[kBlock];
            bool inside[kBlock];
            const bool clamp = s.border == DeformBorder::clamp_in_range;
            for (int64_t k = 0; k < K; ++k) {
                const int64_t okd = (n * s.offset_group + og) * K + k;
                const int64_t* kk = kdec.data() + k * kMaxSpatial;
                for (int64_t q = 0; q < np; ++q) inside[q] = true;
                for (int d = 0; d < D; ++d) {
                    const int64_t shift = kk[d] * s.dilation[d] - s.pad_begin[d];
                    const float* od = offset + (okd * D + d) * P + p0;
                    const double L = static_cast<double>(s.spatial[d]);
                    for (int64_t q = 0; q < np; ++q) {
                        pts[d][q] = static_cast<double>(ob[d][q] + shift) + static_cast<double>(od[q]);
                        inside[q] = inside[q] & (pts[d][q] >= 0.0) & (pts[d][q] < L);
                    }
                }
                for (int64_t q = 0; q < np; ++q) factor[q] = clamp ? (inside[q] ? 1.0 : 0.0) : 1.0;
                if (mask) {
                    const float* mk = mask + okd * P + p0;
                    for (int64_t q = 0; q < np; ++q) factor[q] = factor[q] * static_cast<double>(mk[q]);
                }
                // The factor is folded into the tap weights, except where it is not finite: the oracle's
                // (sum of taps) * inf is +-inf, a tap weighing 0 times inf would make it NaN. Then it
                // multiplies the sampled column instead (rare: a mask of inf or NaN).
                bool finite = true;
                for (int64_t q = 0; q < np; ++q) finite = finite & (std::abs(factor[q]) <= 1e308);
                float* post = tpost.data() + k * tile;
                tpost_used[static_cast<size_t>(k)] = !finite;
                if (!finite)
                    for (int64_t q = 0; q < np; ++q) post[q] = static_cast<float>(factor[q]);
                block_taps<D>(pts, np, s.spatial, s.kind, s.cubic_a, clamp ? Padding::border : Padding::zeros,
                              finite ? factor : block_ones(), tile, toff.data() + k * nt * tile,
                              tw.data() + k * nt * tile);
            }
        };
        for (int64_t it = b0; it < e0; ++it) {
            const int64_t n = it / tiles, p0 = (it % tiles) * tile, np = std::min(tile, P - p0);
            const float* xn = x + n * C * S;
            for (int64_t og = 0; og < s.offset_group; ++og) {
                switch (s.D) {
                    case 1: fill_taps(std::integral_constant<int, 1>(), og, n, p0, np); break;
                    case 2: fill_taps(std::integral_constant<int, 2>(), og, n, p0, np); break;
                    default: fill_taps(std::integral_constant<int, 3>(), og, n, p0, np);
                }
                for (int64_t c = og * cpg; c < (og + 1) * cpg; ++c)
                    for (int64_t k = 0; k < K; ++k) {
                        float* col = cols.data() + (c * K + k) * tile;
                        sample_row_f32(xn + c * S, toff.data() + k * nt * tile, tw.data() + k * nt * tile, tile, np, nt,
                                       col);
                        if (tpost_used[static_cast<size_t>(k)])
                            for (int64_t q = 0; q < np; ++q) col[q] *= tpost[k * tile + q];
                        std::fill(col + np, col + tile, 0.0f);  // the GEMM runs whole blocks
                    }
            }
            for (int64_t g = 0; g < s.group; ++g) {
                const float* gcols = cols.data() + g * R * tile;
                for (int64_t q0 = 0; q0 < np; q0 += 32) {
                    const int64_t nq = std::min<int64_t>(32, np - q0);
                    int64_t oc = g * ocg;
                    const int64_t oc_end = (g + 1) * ocg;
                    auto at = [&](int64_t o) { return y + (n * OC + o) * P + p0 + q0; };
#if defined(__AVX512F__)
                    // 8 x 2 accumulators fit AVX-512's 32 registers (not AVX2's 16): fewer loads per FMA.
                    for (; oc + 8 <= oc_end; oc += 8)
                        sgemm_block<8>(w + oc * R, R, gcols + q0, tile, R, b ? b + oc : nullptr, at(oc), P, nq);
#endif
                    for (; oc + 4 <= oc_end; oc += 4)
                        sgemm_block<4>(w + oc * R, R, gcols + q0, tile, R, b ? b + oc : nullptr, at(oc), P, nq);
                    for (; oc < oc_end; ++oc)
                        sgemm_block<1>(w + oc * R, R, gcols + q0, tile, R, b ? b + oc : nullptr, at(oc), P, nq);
                }
            }
        }
    });
}

template <class T>
void deformconv(const DeformConvSpec& s, const T* x, const T* w, const T* offset, const T* b, const T* mask, T* y,
                int threads) {
    int64_t S = 1;
    for (int d = 0; d < s.D; ++d) S *= s.spatial[d];
    if constexpr (std::is_same<T, float>::value)
        if (S <= std::numeric_limits<int32_t>::max()) return deformconv_f32(s, x, w, offset, b, mask, y, threads);
    const int64_t K = s.K, P = s.P, C = s.C, OC = s.OC;
    const int64_t icg = C / s.group, ocg = OC / s.group, cpg = C / s.offset_group;
    std::vector<double> wd(static_cast<size_t>(OC * icg * K));
    for (size_t i = 0; i < wd.size(); ++i) wd[i] = load<double>(w[i]);
    const int64_t tile = 64;
    const int64_t tiles = (P + tile - 1) / tile;
    parallel_for(s.N * tiles, threads, 1, [&](int64_t b0, int64_t e0) {
        thread_local std::vector<double> cols, acc;  // kept by each worker across calls
        cols.resize(static_cast<size_t>(C * K * tile));
        acc.resize(static_cast<size_t>(tile));
        PointTaps taps;
        for (int64_t it = b0; it < e0; ++it) {
            const int64_t n = it / tiles, p0 = (it % tiles) * tile, np = std::min(tile, P - p0);
            const T* xn = x + n * C * S;
            // Output channel oc over points [q0, np) of this tile, one at a time.
            auto dot_tail = [&](int64_t oc, int64_t q0) {
                const int64_t g = oc / ocg;
                std::fill(acc.begin() + q0, acc.begin() + np, 0.0);
                const double* wrow = wd.data() + oc * icg * K;
                for (int64_t r = 0; r < icg * K; ++r) {
                    const double wv = wrow[r];
                    const double* col = cols.data() + ((g * icg) * K + r) * tile;
                    for (int64_t q = q0; q < np; ++q) acc[q] += wv * col[q];
                }
                const double bias = b ? load<double>(b[oc]) : 0.0;
                T* yrow = y + (n * OC + oc) * P + p0;
                for (int64_t q = q0; q < np; ++q) yrow[q] = store<T>(b ? acc[q] + bias : acc[q]);
            };
            for (int64_t og = 0; og < s.offset_group; ++og)
                for (int64_t k = 0; k < K; ++k)
                    for (int64_t q = 0; q < np; ++q) {
                        double factor;
                        deform_point_taps(s, offset, mask, n, og, k, p0 + q, taps, factor);
                        double* col = cols.data() + (og * cpg * K + k) * tile + q;  // channel c: + c' * K * tile
                        if (taps.n == 4) {  // linear 2-D: the unrolled sum, same order
                            for (int64_t c = og * cpg; c < (og + 1) * cpg; ++c, col += K * tile)
                                *col = apply_taps_n<4>(xn + c * S, taps) * factor;
                        } else {
                            for (int64_t c = og * cpg; c < (og + 1) * cpg; ++c, col += K * tile)
                                *col = apply_taps(xn + c * S, taps) * factor;
                        }
                    }
            for (int64_t g = 0; g < s.group; ++g) {
                const double* gcols = cols.data() + (g * icg) * K * tile;
                int64_t oc = g * ocg;
                // Register blocks of 4 output channels x 8 points; per output the sum runs over r in order from
                // 0 (the oracle's float64 order), so blocking changes no bits.
                for (; oc + 4 <= (g + 1) * ocg; oc += 4) {
                    const double* w0 = wd.data() + oc * icg * K;
                    int64_t q0 = 0;
                    for (; q0 + 8 <= np; q0 += 8) {
                        V4d a[4][2] = {};
                        for (int64_t r = 0; r < icg * K; ++r) {
                            const double* c = gcols + r * tile + q0;
                            V4d c0, c1;
                            __builtin_memcpy(&c0, c, sizeof c0);
                            __builtin_memcpy(&c1, c + 4, sizeof c1);
                            for (int u = 0; u < 4; ++u) {
                                const double wv = w0[u * icg * K + r];
                                a[u][0] += wv * c0;
                                a[u][1] += wv * c1;
                            }
                        }
                        for (int u = 0; u < 4; ++u) {
                            const double bias = b ? load<double>(b[oc + u]) : 0.0;
                            T* yrow = y + (n * OC + oc + u) * P + p0 + q0;
                            for (int v = 0; v < 8; ++v) {
                                const double t = a[u][v / 4][v % 4];
                                yrow[v] = store<T>(b ? t + bias : t);
                            }
                        }
                    }
                    for (int64_t u = 0; u < 4 && q0 < np; ++u) dot_tail(oc + u, q0);
                }
                for (; oc < (g + 1) * ocg; ++oc) dot_tail(oc, 0);
            }
        }
    });
}

}  // namespace cpu
}  // namespace rb
