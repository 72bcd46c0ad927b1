// GridSample: x [N, C, spatial...], grid [N, out..., D], y [N, C, out...].
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "block_taps.hpp"
#include "block_taps_vec.hpp"
#include "cpu_pool.hpp"
#include "cpu_simd.hpp"
#include "gridsample.hpp"

namespace rb {
namespace cpu {

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
        float pts32[kMaxSpatial][kBlock];
        const bool in_float = gridsample_taps_in_float(s);
        // The block's taps at once (block_taps.hpp); cubic's reflection of every tap stays per point.
        int32_t past[kMaxSpatial];
        const bool block_reflect = block_reflection(s, past);
        const int32_t* mirror = block_reflect ? past : nullptr;  // the element a tap past the end reads
#if defined(RB_VECTOR_TAPS)
        const bool vector_taps = vector_taps_apply(s);  // block_taps_vec.hpp's case
#endif
        auto fill = [&](auto rank, const G* g, int64_t np) {
            constexpr int D = decltype(rank)::value;
            if (in_float) {
                int64_t q0 = 0;  // points done by the vector path
#if defined(RB_VECTOR_TAPS)
                if constexpr (D == 2 && std::is_same<G, float>::value)
                    if (vector_taps)
                        q0 = s.kind == Kind::linear
                                 ? gridsample_2d_taps<Kind::linear>(s, g, np, block, off.data(), w.data(), mirror)
                                 : gridsample_2d_taps<Kind::cubic>(s, g, np, block, off.data(), w.data(), mirror);
#endif
                if (q0 == np) return;
                gridsample_block_coords<D>(s, g + q0 * D, np - q0, pts32);
                block_taps<D>(pts32, np - q0, s.spatial, s.kind, static_cast<float>(s.cubic_a), s.padding,
                              block_ones<float>(), block, off.data() + q0, w.data() + q0, mirror);
                return;
            }
            gridsample_block_coords<D>(s, g, np, pts);
            block_taps<D>(pts, np, s.spatial, s.kind, s.cubic_a, s.padding, block_ones(), block, off.data(), w.data(),
                          mirror);
        };
        for (int64_t it = b; it < e; ++it) {
            const int64_t n = it / blocks, p0 = (it % blocks) * block, np = std::min(block, s.P - p0);
            const G* g = grid + (n * s.P + p0) * s.D;
            if (s.padding == Padding::reflection && !block_reflect) {
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
            sample_rows_f32(xn, S, s.C, S, off.data(), w.data(), block, np, nt, yn, s.P);
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

}  // namespace cpu
}  // namespace rb
