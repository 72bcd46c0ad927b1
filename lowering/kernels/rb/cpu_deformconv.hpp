// DeformConv: x [N, C, spatial...], w [OC, C/group, kernel...], offset [N, OG*K*D, out...], b [OC] or null,
// mask [N, OG*K, out...] or null, y [N, OC, out...]. Per image and tile of output points: sample the columns
// [C*K, tile] (float32 for float X, float64 otherwise), then multiply with W per group (inner loop over the
// tile's points).
// Fused on purpose (issue 21 item 3, measured on an AVX-512 Xeon): a columns op + OpenVINO's own MatMul ran at
// 0.6-1.0x this kernel's speed at v4; at v3, 1.15x on 2 of 4 shapes only because OpenVINO's GEMM used AVX-512.
// Writing the [C*K, P] columns to memory costs what its GEMM saves; here each tile's columns stay in L2.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "block_taps.hpp"
#include "cpu_pool.hpp"
#include "cpu_simd.hpp"
#include "deformconv.hpp"

namespace rb {
namespace cpu {

// Four float64 lanes (GCC / Clang vector extension): the GEMM's register block, whatever the vector width.
typedef double V4d __attribute__((vector_size(32)));

// float32 GEMM register block: MR output channels x NV vectors of points, y[u][q] = sum_r w[u][r] * cols[r][q]
// (+ bias), r in order. FMA contraction is allowed here only: these sums are float32 anyway, and nothing here
// decides a tap or a rounding boundary.
#if defined(__GNUC__) && !defined(__clang__)
#define RB_FP_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define RB_FP_CONTRACT
#endif

// The block per x86 level, in vectors of the machine's own width (g++ keeps arrays of wider vectors in memory:
// 16-float vectors on AVX2 made DeformConv 9x onnxruntime on an AVX2-only EPYC, 70x our AVX-512 build here):
// MR*NV accumulators, NV loaded column vectors and a broadcast weight within the register file.
// AVX-512: 8 x 32 points (16 of 32 registers); AVX2: 6 x 16 (12 of 16); SSE / NEON: 4 x 8 (8 of 16).
#if defined(__AVX512F__)
constexpr int kGemmMR = 8, kGemmNV = 2, kGemmLanes = 16;
#elif defined(__AVX__)
constexpr int kGemmMR = 6, kGemmNV = 2, kGemmLanes = 8;
#else
constexpr int kGemmMR = 4, kGemmNV = 2, kGemmLanes = 4;
#endif
typedef float VF __attribute__((vector_size(4 * kGemmLanes)));
constexpr int64_t kGemmNQ = kGemmLanes * kGemmNV;  // points per block

template <int MR, int NV = kGemmNV>
RB_FP_CONTRACT void sgemm_block(const float* w, int64_t ldw, const float* cols, int64_t ldc, int64_t R,
                                const float* bias, float* y, int64_t ldy, int64_t nq) {
    constexpr int L = kGemmLanes;
    VF a[MR][NV];
    for (int u = 0; u < MR; ++u)
        for (int v = 0; v < NV; ++v) a[u][v] = VF{};
    for (int64_t r = 0; r < R; ++r) {
        VF c[NV];
        for (int v = 0; v < NV; ++v) __builtin_memcpy(&c[v], cols + r * ldc + L * v, sizeof c[v]);
        for (int u = 0; u < MR; ++u) {
            const float wv = w[u * ldw + r];
            for (int v = 0; v < NV; ++v) a[u][v] += wv * c[v];
        }
    }
    for (int u = 0; u < MR; ++u) {
        float* yr = y + u * ldy;
        for (int v = 0; v < NV; ++v) {
            if (bias) a[u][v] += bias[u];
            if (nq == L * NV) {
                __builtin_memcpy(yr + L * v, &a[u][v], sizeof a[u][v]);
            } else {
                for (int64_t q = L * v; q < std::min<int64_t>(nq, L * (v + 1)); ++q) yr[q] = a[u][v][q - L * v];
            }
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
    constexpr int64_t tile = kBlock;  // a multiple of the GEMM block's points
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
                        sample_row_f32(xn + c * S, S, toff.data() + k * nt * tile, tw.data() + k * nt * tile, tile,
                                       np, nt, col);
                        if (tpost_used[static_cast<size_t>(k)])
                            for (int64_t q = 0; q < np; ++q) col[q] *= tpost[k * tile + q];
                        std::fill(col + np, col + tile, 0.0f);  // the GEMM runs whole blocks
                    }
            }
            for (int64_t g = 0; g < s.group; ++g) {
                const float* gcols = cols.data() + g * R * tile;
                for (int64_t q0 = 0; q0 < np; q0 += kGemmNQ) {
                    const int64_t nq = std::min<int64_t>(kGemmNQ, np - q0);
                    int64_t oc = g * ocg;
                    const int64_t oc_end = (g + 1) * ocg;
                    auto at = [&](int64_t o) { return y + (n * OC + o) * P + p0 + q0; };
                    for (; oc + kGemmMR <= oc_end; oc += kGemmMR)
                        sgemm_block<kGemmMR>(w + oc * R, R, gcols + q0, tile, R, b ? b + oc : nullptr, at(oc), P, nq);
                    for (; oc + 4 <= oc_end; oc += 4)
                        sgemm_block<4>(w + oc * R, R, gcols + q0, tile, R, b ? b + oc : nullptr, at(oc), P, nq);
                    for (; oc + 2 <= oc_end; oc += 2)
                        sgemm_block<2>(w + oc * R, R, gcols + q0, tile, R, b ? b + oc : nullptr, at(oc), P, nq);
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
