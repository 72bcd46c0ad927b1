// Shared by every kernel: host/device qualifiers, the IR vocabulary as C++ enums, element conversions and the
// two filter kernels. Header-only C++17; compiles under g++ (host) and nvcc (host + device).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define RB_HD __host__ __device__
// The filter templates are host+device but are also instantiated with the host-only exact rational
// (rational.hpp) when tables are built on the host: tell nvcc those instantiations are not device code.
#define RB_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#include <cuda_fp16.h>
#else
#define RB_HD
#define RB_EXEC_CHECK_DISABLE
#endif

namespace rb {

// The IR vocabulary (semantics/vocab.py), in the order of the IR's own tuples: the C ABI passes a field as its
// index in that tuple, so there is no second naming scheme to drift. tests/lowering/test_kernels.py reads the
// names back through rb_vocabulary() and compares them with the tuples.
enum class Kind : int32_t { nearest = 0, linear = 1, cubic = 2 };  // SAMPLER_KINDS
enum class Nearest : int32_t {                                      // NEAREST_RULES
    round_prefer_floor = 0, round_prefer_ceil = 1, floor = 2, ceil = 3, half_even = 4, simple = 5 };
enum class Padding : int32_t { zeros = 0, border = 1, reflection = 2 };          // GRID_PADDINGS
enum class PaddingOn : int32_t { coordinate_and_taps = 0, taps = 1 };            // PADDING_ON
enum class Arith : int32_t { exact = 0, fp64 = 1, fp32 = 2, fp32_fused = 3 };                   // ARITH
enum class DeformBorder : int32_t { zero_taps = 0, clamp_in_range = 1 };         // DEFORM_BORDERS

// Largest spatial rank of GridSample / DeformConv: a cubic tap set is 4^D points, kept on the stack.
constexpr int kMaxSpatial = 3;

// Element <-> accumulator conversions. _Float16 (g++ >= 12 on x86-64) and __half (CUDA) both convert through
// static_cast; __half has no direct double constructor on every toolkit, so it goes through float.
// 2^n as a double, n < 1024 (integer bounds without numeric_limits, which device code cannot call).
RB_HD inline double pow2(int n) {
    double p = 1.0;
    for (int i = 0; i < n; ++i) p *= 2.0;
    return p;
}

// ONNX's saturate cast of a float64 result to an integer type (semantics.reference.cast_like): round half to
// even (rint under the default rounding mode), then clip to the type's range. Compared in double before the
// cast, so no value reaches an out-of-range (undefined) conversion; NaN gives 0.
template <class T>
RB_HD inline T saturate_round(double v) {
    constexpr bool is_signed = T(-1) < T(0);
    constexpr int bits = 8 * static_cast<int>(sizeof(T));
    const T tmax = is_signed ? T(~(T(1) << (bits - 1))) : T(~T(0));
    const T tmin = is_signed ? T(T(1) << (bits - 1)) : T(0);
    if (!(v == v)) return T(0);
    v = rint(v);
    if (v >= (is_signed ? pow2(bits - 1) : pow2(bits))) return tmax;  // 2^63 - 1 has no double: compare 2^63
    if (v <= (is_signed ? -pow2(bits - 1) : 0.0)) return tmin;
    return static_cast<T>(v);
}

template <class Acc, class T>
RB_HD inline Acc load(T v) { return static_cast<Acc>(v); }
template <class T, class Acc>
RB_HD inline T store(Acc v) {
    if constexpr (std::is_integral<T>::value) return saturate_round<T>(static_cast<double>(v));
    else return static_cast<T>(v);
}
#if !defined(__CUDACC__) && defined(__FLT16_MAX__)
// binary16 -> binary32 is exact and one instruction (F16C); g++ widens _Float16 to double through a library call.
template <>
inline double load<double, _Float16>(_Float16 v) { return static_cast<double>(static_cast<float>(v)); }
// double -> binary16 rounded once, without g++'s library call: to float rounding to odd (truncate, then set the
// last bit when inexact), which float -> binary16 then rounds to nearest even exactly as the direct conversion.
template <>
inline _Float16 store<_Float16, double>(double d) {
    float f = static_cast<float>(d);
    if (static_cast<double>(f) != d && d == d) {
        uint32_t u;
        __builtin_memcpy(&u, &f, 4);
        if (__builtin_fabs(static_cast<double>(f)) > __builtin_fabs(d)) u -= 1;  // toward zero
        u |= 1;
        __builtin_memcpy(&f, &u, 4);
    }
    return static_cast<_Float16>(f);
}
#endif
#if defined(__CUDACC__)
template <>
RB_HD inline double load<double, __half>(__half v) { return static_cast<double>(__half2float(v)); }
template <>
RB_HD inline float load<float, __half>(__half v) { return __half2float(v); }
template <>
RB_HD inline __half store<__half, double>(double v) { return __float2half_rn(static_cast<float>(v)); }
template <>
RB_HD inline __half store<__half, float>(float v) { return __float2half_rn(v); }
#endif

RB_EXEC_CHECK_DISABLE
template <class N>
RB_HD inline N abs_of(N x) { return x < N(0) ? N(0) - x : x; }

// Filter kernels, written once for any number type N (double on every path that runs per element; the exact
// rational of rational.hpp when tap tables are built). Port of semantics/taps.py linear_filter / cubic_filter
// (the Keys kernel with coefficient a); test_kernels.py proves the tables agree.
RB_EXEC_CHECK_DISABLE
template <class N>
RB_HD inline N linear_filter(N x) {
    x = abs_of(x);
    return x < N(1) ? N(1) - x : N(0);
}

RB_EXEC_CHECK_DISABLE
template <class N>
RB_HD inline N cubic_filter(N x, N a) {
    x = abs_of(x);
    // Both pieces, then a select: the same operations as branches, but a loop over points vectorises.
    const N near = ((a + N(2)) * x - (a + N(3))) * x * x + N(1);
    const N far = ((a * x - N(5) * a) * x + N(8) * a) * x - N(4) * a;
    return x <= N(1) ? near : (x < N(2) ? far : N(0) * x);  // NaN stays NaN (as the oracle and PyTorch)
}

// float64 -> int64 as numpy's astype after trunc/floor, without the undefined behaviour of an out-of-range
// cast: values beyond +-2^62 (and NaN) land far outside any tensor, so they are padded like any outside tap.
RB_HD inline int64_t to_index(double v) {
    const double lim = 4611686018427387904.0;  // 2^62
    if (!(v > -lim)) return -(int64_t(1) << 62);
    if (v >= lim) return int64_t(1) << 62;
    return static_cast<int64_t>(v);
}

}  // namespace rb
