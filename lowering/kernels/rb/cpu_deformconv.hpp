// DeformConv: x [N, C, spatial...], w [OC, C/group, kernel...], offset [N, OG*K*D, out...], b [OC] or null,
// mask [N, OG*K, out...] or null, y [N, OC, out...]. Per image and tile of output points: sample the columns
// [C*K, tile] (float32 for float X, float64 otherwise), then multiply with W per group (inner loop over the
// tile's points).
// Fused (issue 21 item 3): each tile's columns stay in L2, where a columns op + OpenVINO's own MatMul writes all
// [C*K, P] of them to memory. Which is faster depends on the machine: on an AVX-512 Xeon the pair ran at 0.6-1.0x
// this kernel's speed at v4; on an AMD EPYC (Zen 4) at 0.77-0.88x with 128-512 channels, where oneDNN's GEMM is
// the faster part. The ladder's cost model chooses between them per machine.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu_deform_tile.hpp"
#include "cpu_pool.hpp"

namespace rb {
namespace cpu {

// The number of tiles of an image's points for ``T`` threads: whole vectors of points (kGemmLanes) each, at most
// kBlock points (DeformTileTaps' rows), and where the tiles of all N images are few (under 4 per thread) the
// fewest whose count splits evenly over the threads: 64-point tiles of 1x512x12x12 (64, 64, 16) left one of 2
// threads idle a sixth of the time (each tile's GEMM reads all of W: fewer tiles, fewer reads).
inline int64_t deform_tiles(int64_t V, int64_t N, int T) {
    const int64_t most = kBlock / kGemmLanes, t = (V + most - 1) / most;
    if (T <= 1 || N * t >= 4 * T) return t;
    for (int64_t u = t; u <= V; ++u)
        if ((N * u) % T == 0) return u;
    return t;
}

// Tile i of ``tiles`` over V vectors of points: its first vector and how many; the first V mod tiles tiles one
// wider (taken first by the threads, the narrower fill in after).
inline void deform_tile(int64_t V, int64_t tiles, int64_t i, int64_t& v0, int64_t& nv) {
    const int64_t q = V / tiles, r = V % tiles;
    v0 = i * q + std::min(i, r);
    nv = q + (i < r ? 1 : 0);
}

// DeformConv, float X: per image and tile of points, per offset group the compact taps of every (kernel tap,
// point) once (DeformTileTaps, the shared float64 coordinates), reused over the group's channels to sample the
// columns [C*K][tile] in float32; then per group a blocked float32 GEMM with W, points in its lanes. The samples
// come from X^T ([S, C], transposed once per call) where every offset group has a vector of channels or more
// (vector loads over channels), else from X's planes (gathers over points).
inline void deformconv_f32(const DeformConvSpec& s, const float* x, const float* w, const float* offset,
                           const float* b, const float* mask, float* y, int threads) {
    int64_t S = 1;
    for (int d = 0; d < s.D; ++d) S *= s.spatial[d];
    const int64_t K = s.K, P = s.P, C = s.C, OC = s.OC;
    const int64_t icg = C / s.group, ocg = OC / s.group, cpg = C / s.offset_group, R = icg * K;
    const int nt = taps_per_point(s.kind, s.D);
    std::vector<int64_t> kdec(static_cast<size_t>(K * kMaxSpatial));  // kernel tap k decoded per axis
    for (int64_t k = 0; k < K; ++k) decode_index(k, s.D, s.kernel, kdec.data() + k * kMaxSpatial);
    const bool from_xt = cpg >= kGemmLanes;
    const int64_t V = (P + kGemmLanes - 1) / kGemmLanes, tiles = deform_tiles(V, s.N, thread_count(threads));
    const int64_t tile = (V + tiles - 1) / tiles * kGemmLanes;  // the widest tile: the rows' length
    // The GEMM's rows (a group's (c, k)) in chunks of kRowChunk, each chunk of the tile's columns (256 KB) read
    // from L2 by every block of output channels, partial sums waiting in y. AMD EPYC, 1x512x25x34, 512 channels
    // (R = 4608): AVX2 29.3 ms unchunked, 23.7 at 1024 rows (25.5 at 256); AVX-512 22.3 and 22.6.
    constexpr int64_t kRowChunk = 1024;
    std::vector<float> xt;
    if (from_xt) {
        xt.resize(static_cast<size_t>(s.N * S * C));
        const int64_t chunks = (S + kBlock - 1) / kBlock;  // X^T per image, [S, C], a block of positions at once
        parallel_for(s.N * chunks, threads, 1, [&](int64_t b0, int64_t e0) {
            for (int64_t i = b0; i < e0; ++i) {
                const int64_t n = i / chunks, j0 = (i % chunks) * kBlock, nj = std::min(kBlock, S - j0);
                float* dst = xt.data() + (n * S + j0) * C;
                for (int64_t c = 0; c < C; ++c) {
                    const float* src = x + (n * C + c) * S + j0;
                    for (int64_t j = 0; j < nj; ++j) dst[j * C + c] = src[j];
                }
            }
        });
    }
    parallel_for(s.N * tiles, threads, 1, [&](int64_t b0, int64_t e0) {
        thread_local std::vector<float> cols;  // kept by each worker across calls
        thread_local DeformTileTaps tt;
        tt.resize(K, tile, nt);
        cols.resize(static_cast<size_t>(C * K * tile));
        for (int64_t it = b0; it < e0; ++it) {
            const int64_t n = it / tiles;
            int64_t v0, nv;
            deform_tile(V, tiles, it % tiles, v0, nv);
            const int64_t p0 = v0 * kGemmLanes, np = std::min(P, (v0 + nv) * kGemmLanes) - p0;
            const float* xn = x + n * C * S;
            for (int64_t og = 0; og < s.offset_group; ++og) {
                tt.fill(s, offset, mask, kdec.data(), og, n, p0, np, tile, nt);
                for (int64_t k = 0; k < K; ++k) {
                    float* col = cols.data() + (og * cpg * K + k) * tile;
                    if (from_xt) {
                        sample_planes_from_xt(xt.data() + n * S * C, C, og * cpg, cpg, tt, k, nt, tile, np, col,
                                              K * tile);
                    } else {
                        // The group's planes at once: the points' gather plans are made once for all of them.
                        sample_rows_f32(xn + og * cpg * S, S, cpg, S, tt.off.data() + k * nt * tile,
                                        tt.w.data() + k * nt * tile, tile, np, nt, col, K * tile);
                        if (tt.post_used[static_cast<size_t>(k)])
                            for (int64_t c = 0; c < cpg; ++c)
                                for (int64_t q = 0; q < np; ++q) col[c * K * tile + q] *= tt.post[k * tile + q];
                    }
                    for (int64_t c = 0; c < cpg; ++c)  // the GEMM runs whole blocks
                        std::fill(col + c * K * tile + np, col + (c * K + 1) * tile, 0.0f);
                }
            }
            for (int64_t g = 0; g < s.group; ++g)
                for (int64_t r0 = 0; r0 < R; r0 += kRowChunk) {
                    const int64_t nr = std::min(kRowChunk, R - r0);
                    const bool first = r0 == 0, last = r0 + nr == R;
                    const float* gcols = cols.data() + (g * R + r0) * tile;
                    int64_t oc = g * ocg;
                    const int64_t oc_end = (g + 1) * ocg;
                    // Blocks of MR output channels, each over all of the tile's points (points outer, output
                    // channels inner ran 2-3% slower at 256-512 channels, AMD EPYC).
                    auto blocks = [&](auto mr) {
                        constexpr int MR = decltype(mr)::value;
                        for (; oc + MR <= oc_end; oc += MR)
                            for (int64_t q0 = 0; q0 < np; q0 += kGemmNQ) {
                                const int64_t nq = std::min<int64_t>(kGemmNQ, np - q0);
                                // A last vector alone: a block of one (the same operations per lane).
                                (nq <= kGemmLanes ? sgemm_block<MR, 1> : sgemm_block<MR>)(
                                    w + oc * R + r0, R, gcols + q0, tile, nr, first, last, b ? b + oc : nullptr,
                                    y + (n * OC + oc) * P + p0 + q0, P, nq);
                            }
                    };
                    blocks(std::integral_constant<int, kGemmMR>());
                    blocks(std::integral_constant<int, 4>());
                    blocks(std::integral_constant<int, 2>());
                    blocks(std::integral_constant<int, 1>());
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
