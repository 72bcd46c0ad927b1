// DeformConv's float32 pieces per tile of output points: the compact taps of every (kernel tap, point), the
// columns sampled from X^T (beside cpu_simd.hpp's gathers over X's planes), and the GEMM register block that
// contracts them with W.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "block_taps.hpp"
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

// y[u][q] = (first ? 0 : y[u][q]) + sum_r w[u][r] * cols[r][q] over one chunk of rows (+ bias on the last),
// ``nq`` points: partial sums wait in y between chunks, which keeps each sum's order (the same bits).
template <int MR, int NV = kGemmNV>
RB_FP_CONTRACT void sgemm_block(const float* w, int64_t ldw, const float* cols, int64_t ldc, int64_t R, bool first,
                                bool last, const float* bias, float* y, int64_t ldy, int64_t nq) {
    constexpr int L = kGemmLanes;
    VF a[MR][NV];
    for (int u = 0; u < MR; ++u)
        for (int v = 0; v < NV; ++v) {
            a[u][v] = VF{};
            if (first) continue;
            const float* yr = y + u * ldy;
            if (nq == L * NV)
                __builtin_memcpy(&a[u][v], yr + L * v, sizeof a[u][v]);
            else
                for (int64_t q = L * v; q < std::min<int64_t>(nq, L * (v + 1)); ++q) a[u][v][q - L * v] = yr[q];
        }
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
            if (last && bias) a[u][v] += bias[u];
            if (nq == L * NV) {
                __builtin_memcpy(yr + L * v, &a[u][v], sizeof a[u][v]);
            } else {
                for (int64_t q = L * v; q < std::min<int64_t>(nq, L * (v + 1)); ++q) yr[q] = a[u][v][q - L * v];
            }
        }
    }
}

// The compact taps of every (kernel tap k, point q) of a tile for one offset group (deform_point_taps_at's
// arithmetic per point, as arrays over the tile's points: block_taps.hpp): off / w [k][t][q], rows of ``tile``.
// ``post[k][q]`` multiplies a sample after its sum where ``post_used[k]`` (see fill).
struct DeformTileTaps {
    std::vector<int32_t> off;
    std::vector<float> w, post;
    std::vector<char> post_used;

    void resize(int64_t K, int64_t tile, int nt) {
        off.resize(static_cast<size_t>(K * tile * nt));
        w.resize(static_cast<size_t>(K * tile * nt));
        post.resize(static_cast<size_t>(K * tile));
        post_used.resize(static_cast<size_t>(K));
    }

    // ``kdec``: kernel tap k decoded per axis, kMaxSpatial per tap; the points decoded per axis once per tile.
    template <int D>
    void fill(const DeformConvSpec& s, const float* offset, const float* mask, const int64_t* kdec, int64_t og,
              int64_t n, int64_t p0, int64_t np, int64_t tile, int nt) {
        const int64_t K = s.K, P = s.P;
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
            const int64_t* kk = kdec + k * kMaxSpatial;
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
            // multiplies the sampled value instead (rare: a mask of inf or NaN).
            bool finite = true;
            for (int64_t q = 0; q < np; ++q) finite = finite & (std::abs(factor[q]) <= 1e308);
            post_used[static_cast<size_t>(k)] = !finite;
            if (!finite)
                for (int64_t q = 0; q < np; ++q) post[k * tile + q] = static_cast<float>(factor[q]);
            block_taps<D>(pts, np, s.spatial, s.kind, s.cubic_a, clamp ? Padding::border : Padding::zeros,
                          finite ? factor : block_ones(), tile, off.data() + k * nt * tile, w.data() + k * nt * tile);
        }
    }

    void fill(const DeformConvSpec& s, const float* offset, const float* mask, const int64_t* kdec, int64_t og,
              int64_t n, int64_t p0, int64_t np, int64_t tile, int nt) {
        switch (s.D) {
            case 1: return fill<1>(s, offset, mask, kdec, og, n, p0, np, tile, nt);
            case 2: return fill<2>(s, offset, mask, kdec, og, n, p0, np, tile, nt);
            default: return fill<3>(s, offset, mask, kdec, og, n, p0, np, tile, nt);
        }
    }
};

// ------------------------------------------------------------------------------------------------------------
// X^T: where an offset group has a vector of channels or more, the samples of a vector of channels at a point
// are vector loads from X transposed to [S, C], where X's planes need a gather per point and channel. AMD EPYC:
// the gathers were 70% of a 32-channel 3x3 DeformConv at AVX2; 1x256x32x32 sampled in 1.1 ms from X^T, in 1.8
// by gathers (AVX-512, 2 threads).

// col[c * cstride + q] = the sample of channel c0 + c at point q for kernel tap k, c < cn, q < np: the planes'
// layout, as the gathers write it, from vector loads of X^T, each lane stored to its plane; a vector of channels'
// planes (L rows of the tile) stay in L1 across the tile's points. The lanes do the gathers' operations in the
// same order (sum over t from 0, then the post factor): the same bits.
template <int NT>
inline void sample_planes_from_xt(const float* xt, int64_t C, int64_t c0, int64_t cn, const DeformTileTaps& tt,
                                  int64_t k, int nt, int64_t tile, int64_t np, float* col, int64_t cstride) {
    constexpr int L = kGemmLanes;
    const int n = NT > 0 ? NT : nt;
    const bool post = tt.post_used[static_cast<size_t>(k)];
    const int32_t* off = tt.off.data() + k * n * tile;
    const float* wk = tt.w.data() + k * n * tile;
    int64_t c = 0;
    for (; c + L <= cn; c += L)
        for (int64_t q = 0; q < np; ++q) {
            VF v, acc;
            __builtin_memcpy(&v, xt + static_cast<int64_t>(off[q]) * C + c0 + c, sizeof v);
            acc = wk[q] * v;
            for (int t = 1; t < n; ++t) {
                __builtin_memcpy(&v, xt + static_cast<int64_t>(off[t * tile + q]) * C + c0 + c, sizeof v);
                acc = acc + wk[t * tile + q] * v;
            }
            if (post) acc = acc * tt.post[k * tile + q];
            for (int l = 0; l < L; ++l) col[(c + l) * cstride + q] = acc[l];
        }
    for (; c < cn; ++c) {
        const float* xc = xt + c0 + c;
        for (int64_t q = 0; q < np; ++q) {
            float acc = wk[q] * xc[static_cast<int64_t>(off[q]) * C];
            for (int t = 1; t < n; ++t) acc += wk[t * tile + q] * xc[static_cast<int64_t>(off[t * tile + q]) * C];
            col[c * cstride + q] = post ? acc * tt.post[k * tile + q] : acc;
        }
    }
}

inline void sample_planes_from_xt(const float* xt, int64_t C, int64_t c0, int64_t cn, const DeformTileTaps& tt,
                                  int64_t k, int nt, int64_t tile, int64_t np, float* col, int64_t cstride) {
    with_tap_count(nt, [&](auto n) {
        sample_planes_from_xt<decltype(n)::value>(xt, C, c0, cn, tt, k, nt, tile, np, col, cstride);
    });
}

}  // namespace cpu
}  // namespace rb
