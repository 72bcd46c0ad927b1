// A float32 tap row by windows instead of gathers: out[o] = sum_t w[t][o] * line[index[t][o]] where, per block of
// kLanes outputs and per tap, the indices lie within 2 * kLanes consecutive elements (upsampling, downsampling to
// 1/2 and a little past: a Resize's W pass): two vector loads and a two-register lane permute per tap, where a
// gather fetches each element alone (Zen 4's AVX2 gathers made a linear x0.5 resize 1.1x onnxruntime). The same
// elements, operations and order as sample_rows_f32 (w[0] * x0, then + w[t] * xt): the same bits.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu_simd.hpp"

namespace rb {
namespace cpu {

struct RowWindowTaps {
    static constexpr int64_t kLanes = kPermuteLanes;  // 1 (the base build): no windows, the caller's loop
    int64_t blocks = 0, K = 0, ld = 0;
    std::vector<int32_t> base;  // [t][block]: the window's first element
    std::vector<int32_t> perm;  // [t][output]: the lane within the window

    // From a tap-major table (index[t * out_len + o]); false where a block's taps do not fit one window or the
    // line is shorter than one. Built once per call: a few values per output.
    bool build(const int32_t* index, int64_t K_, int64_t out_len, int64_t in_len) {
        constexpr int64_t win = 2 * kLanes;
        if (kLanes == 1 || in_len < win || out_len < kLanes) return false;
        K = K_;
        ld = out_len;
        blocks = out_len / kLanes;
        base.assign(static_cast<size_t>(K * blocks), 0);
        perm.assign(static_cast<size_t>(K * blocks * kLanes), 0);
        for (int64_t t = 0; t < K; ++t)
            for (int64_t b = 0; b < blocks; ++b) {
                const int64_t tb = t * blocks + b;
                base[static_cast<size_t>(tb)] =
                    index_window(index + t * out_len + b * kLanes, kLanes, win, in_len, perm.data() + tb * kLanes);
                if (base[static_cast<size_t>(tb)] < 0) return false;
            }
        return true;
    }

    // out[o] for o < blocks * kLanes; ``w`` tap-major as the index table (row ``ld``).
    void apply(const float* line, const float* w, float* out) const {
#if defined(__AVX512F__) || defined(__AVX2__)
        for (int64_t b = 0; b < blocks; ++b) {
#if defined(__AVX512F__)
            __m512 acc = _mm512_setzero_ps();
            for (int64_t t = 0; t < K; ++t) {
                const float* p = line + base[static_cast<size_t>(t * blocks + b)];
                const __m512i pi = _mm512_loadu_si512(perm.data() + (t * blocks + b) * kLanes);
                const __m512 v = _mm512_permutex2var_ps(_mm512_loadu_ps(p), pi, _mm512_loadu_ps(p + kLanes));
                const __m512 wv = _mm512_mul_ps(_mm512_loadu_ps(w + t * ld + b * kLanes), v);
                acc = t == 0 ? wv : _mm512_add_ps(acc, wv);
            }
            _mm512_storeu_ps(out + b * kLanes, acc);
#else
            __m256 acc = _mm256_setzero_ps();
            for (int64_t t = 0; t < K; ++t) {
                const float* p = line + base[static_cast<size_t>(t * blocks + b)];
                const __m256i pi =
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(perm.data() + (t * blocks + b) * kLanes));
                // Lane j: element pi[j] & 7 of the low or (pi[j] >= 8, bit 3 moved to the sign) the high vector.
                const __m256 v = _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(p), pi),
                                                  _mm256_permutevar8x32_ps(_mm256_loadu_ps(p + kLanes), pi),
                                                  _mm256_castsi256_ps(_mm256_slli_epi32(pi, 28)));
                const __m256 wv = _mm256_mul_ps(_mm256_loadu_ps(w + t * ld + b * kLanes), v);
                acc = t == 0 ? wv : _mm256_add_ps(acc, wv);
            }
            _mm256_storeu_ps(out + b * kLanes, acc);
#endif
        }
#else
        (void)line, (void)w, (void)out;
#endif
    }
};

}  // namespace cpu
}  // namespace rb
