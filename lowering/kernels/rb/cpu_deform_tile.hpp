// DeformConv's float32 pieces per tile of output points: the compact taps of every (kernel tap, point), the
// sampled columns in either layout, and the GEMM register blocks that contract them with W.
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
// The channels-last block (output channels in the lanes) holds kClMQ points x 2 vectors of channels alike.
#if defined(__AVX512F__)
constexpr int kGemmMR = 8, kGemmNV = 2, kGemmLanes = 16, kClMQ = 8;
#elif defined(__AVX__)
constexpr int kGemmMR = 6, kGemmNV = 2, kGemmLanes = 8, kClMQ = 6;
#else
constexpr int kGemmMR = 4, kGemmNV = 2, kGemmLanes = 4, kClMQ = 4;
#endif
typedef float VF __attribute__((vector_size(4 * kGemmLanes)));
constexpr int64_t kGemmNQ = kGemmLanes * kGemmNV;  // points per block

// Both layouts' register block: a[u][v] += s[u * lds + r] * vector v of row r of m (row length ldm), r in [0, R)
// in order; MR scalars broadcast against NV vectors a step. Inlined into its callers, which keep ``a`` in
// registers.
template <int MR, int NV>
RB_FP_CONTRACT inline __attribute__((always_inline)) void gemm_accumulate(VF (&a)[MR][NV], const float* s,
                                                                          int64_t lds, const float* m, int64_t ldm,
                                                                          int64_t R) {
    constexpr int L = kGemmLanes;
    for (int64_t r = 0; r < R; ++r) {
        VF c[NV];
        for (int v = 0; v < NV; ++v) __builtin_memcpy(&c[v], m + r * ldm + L * v, sizeof c[v]);
        for (int u = 0; u < MR; ++u) {
            const float sv = s[u * lds + r];
            for (int v = 0; v < NV; ++v) a[u][v] += sv * c[v];
        }
    }
}

template <int MR, int NV = kGemmNV>
RB_FP_CONTRACT void sgemm_block(const float* w, int64_t ldw, const float* cols, int64_t ldc, int64_t R,
                                const float* bias, float* y, int64_t ldy, int64_t nq) {
    constexpr int L = kGemmLanes;
    VF a[MR][NV];
    for (int u = 0; u < MR; ++u)
        for (int v = 0; v < NV; ++v) a[u][v] = VF{};
    gemm_accumulate<MR, NV>(a, w, ldw, cols, ldc, R);
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
// Channels last: where an offset group has a vector of channels or more, a sample of every channel at a point is
// a contiguous run of X transposed to [S, C] (plain vector loads) where the planes' layout needs a gather per
// point and channel (measured on an AMD EPYC, AVX2: sampling was 70% of a 32-channel 3x3 DeformConv).

// cols[q * ldq + k * C + c] for c in [c0, c0 + cn), q < np: the tile's samples, xt = X^T [S, C]. The lanes do
// the planes' operations in the same order (sum over t from 0, then the post factor): the same bits.
// NT: the tap count where with_tap_count unrolls it, else 0 and ``nt`` at run time.
template <int NT>
inline void sample_tile_channels_last(const float* xt, int64_t C, int64_t c0, int64_t cn, const DeformTileTaps& tt,
                                      int64_t K, int nt, int64_t tile, int64_t np, float* cols, int64_t ldq) {
    constexpr int L = kGemmLanes;
    const int n = NT > 0 ? NT : nt;
    for (int64_t q = 0; q < np; ++q)
        for (int64_t k = 0; k < K; ++k) {
            const float* x[NT > 0 ? NT : kMaxPointTaps];
            float w[NT > 0 ? NT : kMaxPointTaps];
            for (int t = 0; t < n; ++t) {
                const int64_t i = (k * n + t) * tile + q;
                x[t] = xt + static_cast<int64_t>(tt.off[i]) * C + c0;
                w[t] = tt.w[i];
            }
            const bool post = tt.post_used[static_cast<size_t>(k)];
            const float f = post ? tt.post[k * tile + q] : 1.0f;
            float* dst = cols + q * ldq + k * C + c0;
            int64_t c = 0;
            for (; c + L <= cn; c += L) {
                VF v, acc;
                __builtin_memcpy(&v, x[0] + c, sizeof v);
                acc = w[0] * v;
                for (int t = 1; t < n; ++t) {
                    __builtin_memcpy(&v, x[t] + c, sizeof v);
                    acc = acc + w[t] * v;
                }
                if (post) acc = acc * f;
                __builtin_memcpy(dst + c, &acc, sizeof acc);
            }
            for (; c < cn; ++c) {
                float acc = w[0] * x[0][c];
                for (int t = 1; t < n; ++t) acc += w[t] * x[t][c];
                dst[c] = post ? acc * f : acc;
            }
        }
}

inline void sample_tile_channels_last(const float* xt, int64_t C, int64_t c0, int64_t cn, const DeformTileTaps& tt,
                                      int64_t K, int nt, int64_t tile, int64_t np, float* cols, int64_t ldq) {
    with_tap_count(nt, [&](auto n) {
        sample_tile_channels_last<decltype(n)::value>(xt, C, c0, cn, tt, K, nt, tile, np, cols, ldq);
    });
}

// W [OC, icg, K] -> [group][K][icg][ocp]: per group, row r = (k, c') holds the group's output channels padded
// with zeros to ``ocp`` (a multiple of the lanes), the order in which the channels-last GEMM reads them.
inline void pack_weights_channels_last(const float* w, int64_t group, int64_t ocg, int64_t icg, int64_t K,
                                       int64_t ocp, std::vector<float>& out) {
    out.assign(static_cast<size_t>(group * K * icg * ocp), 0.0f);
    for (int64_t g = 0; g < group; ++g)
        for (int64_t o = 0; o < ocg; ++o)
            for (int64_t c = 0; c < icg; ++c)
                for (int64_t k = 0; k < K; ++k)
                    out[((g * K + k) * icg + c) * ocp + o] = w[((g * ocg + o) * icg + c) * K + k];
}

// Register block with output channels in the lanes: MQ points x NV vectors of output channels,
// y[o][u] = sum_(k, c) wt[k][c][o] * cols[u][k][c] (+ bias), over k then c; ``noc`` channels stored (the rest
// are padding), ``nq`` points. cols at the block's first point and the group's first channel (row ldq, k stride
// ``kstride``), wt at the block's first channel (row ocp), y at (first channel, first point) with row P.
template <int MQ, int NV>
RB_FP_CONTRACT void sgemm_block_channels_last(const float* cols, int64_t ldq, int64_t kstride, int64_t K,
                                              int64_t icg, const float* wt, int64_t ocp, const float* bias,
                                              int64_t noc, float* y, int64_t P, int64_t nq) {
    constexpr int L = kGemmLanes;
    VF a[MQ][NV];
    for (int u = 0; u < MQ; ++u)
        for (int v = 0; v < NV; ++v) a[u][v] = VF{};
    for (int64_t k = 0; k < K; ++k) gemm_accumulate<MQ, NV>(a, cols + k * kstride, ldq, wt + k * icg * ocp, ocp, icg);
    for (int v = 0; v < NV; ++v)
        for (int l = 0; l < L && v * L + l < noc; ++l) {
            const int64_t o = v * L + l;
            float* yo = y + o * P;
            for (int u = 0; u < nq; ++u) yo[u] = bias ? a[u][v][l] + bias[o] : a[u][v][l];
        }
}

}  // namespace cpu
}  // namespace rb
