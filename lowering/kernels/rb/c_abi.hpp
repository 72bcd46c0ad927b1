// What the C ABIs (kernels/capi.cpp, cuda/rb_cuda.cu) share: C arguments (rb_kernels.h structs) -> the header
// templates' specs, checked; and the error plumbing: a C++ exception becomes return code 1 with its message
// copied into the caller's buffer, so nothing throws across the C boundary.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "attrs.hpp"
#include "bind.hpp"
#include "deformconv.hpp"
#include "gridsample.hpp"
#include "rb_kernels.h"

namespace rb {
namespace capi {

inline void set_err(char* err, int64_t errlen, const std::string& msg) {
    if (!err || errlen <= 0) return;
    const size_t n = std::min<size_t>(msg.size(), static_cast<size_t>(errlen - 1));
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
}

template <class F>
inline int guarded(char* err, int64_t errlen, F&& f) {
    try {
        f();
        return 0;
    } catch (const std::exception& e) {
        set_err(err, errlen, e.what());
    } catch (...) {
        set_err(err, errlen, "unknown error");
    }
    return 1;
}

// The C ABI's dtype codes: 0 float32, 1 float16 (``Half``: _Float16 on the host, __half on the device),
// 2 float64. ``f`` is called with a null pointer of the element type, a tag to deduce it from.
template <class Half, class F>
inline void dispatch_dtype(int32_t dtype, F&& f) {
    switch (dtype) {
        case 0: f(static_cast<float*>(nullptr)); break;
        case 1: f(static_cast<Half*>(nullptr)); break;
        case 2: f(static_cast<double*>(nullptr)); break;
        default: throw std::invalid_argument("unsupported dtype code " + std::to_string(dtype));
    }
}

template <class E>
E checked_enum(int32_t v, int32_t count, const char* what) {
    if (v < 0 || v >= count) throw std::invalid_argument(std::string("invalid ") + what + " code " + std::to_string(v));
    return static_cast<E>(v);
}

// A code of vocabulary ``field`` (attrs.hpp), checked against that table's length (no count to keep in step).
template <class E>
E vocab_enum(int32_t v, int field, const char* what) {
    return checked_enum<E>(v, vocabulary_size(field), what);
}

inline std::vector<int64_t> shape_of(const rb_tensor& t) {
    if (t.rank < 0 || (t.rank > 0 && !t.shape)) throw std::invalid_argument("a tensor has no shape");
    return std::vector<int64_t>(t.shape, t.shape + t.rank);
}

// y must hold ``count`` elements of x's dtype.
inline void check_output(const rb_tensor& y, const rb_tensor& x, int64_t count) {
    if (y.dtype != x.dtype) throw std::invalid_argument("y must have X's dtype");
    const int64_t have = element_count(shape_of(y));
    if (have != count)
        throw std::invalid_argument("y holds " + std::to_string(have) + " elements, the output has " +
                                    std::to_string(count));
}

inline BoundResize bind_resize_c(const char* attrs, int32_t rank, const int64_t* in_shape,
                                 const rb_resize_runtime* runtime) {
    ResizeRuntime rt;
    if (runtime) {
        rt.has_roi = runtime->roi != nullptr;
        rt.has_scales = runtime->scales != nullptr;
        rt.has_sizes = runtime->sizes != nullptr;
        if (rt.has_roi) rt.roi.assign(runtime->roi, runtime->roi + runtime->n_roi);
        if (rt.has_scales) rt.scales.assign(runtime->scales, runtime->scales + runtime->n_scales);
        if (rt.has_sizes) rt.sizes.assign(runtime->sizes, runtime->sizes + runtime->n_sizes);
    }
    if (rank < 1) throw std::invalid_argument("rank must be at least 1");
    return bind_resize(attrs_from_text<ResizeAttrs>(attrs ? attrs : ""),
                       std::vector<int64_t>(in_shape, in_shape + rank), rt);
}

// The resize plan for X's shape, y checked against its output shape.
inline ResizePlan resize_plan_c(const char* attrs, const rb_tensor& x, const rb_resize_runtime* runtime,
                                const rb_tensor& y) {
    ResizePlan plan = plan_resize(bind_resize_c(attrs, x.rank, shape_of(x).data(), runtime));
    check_output(y, x, element_count(plan.bound.out_shape));
    return plan;
}

inline const rb_tensor& input(const rb_tensor* inputs, int32_t n, int32_t i, const char* what) {
    if (i >= n || !inputs[i].data) throw std::invalid_argument(std::string(what) + " is missing");
    return inputs[i];
}

inline GridSampleSpec gridsample_spec_c(const rb_tensor* inputs, int32_t n, const rb_gridsample_params& p,
                                        const rb_tensor& y) {
    const rb_tensor& x = input(inputs, n, 0, "X");
    const rb_tensor& grid = input(inputs, n, 1, "grid");
    const std::vector<int64_t> xs = shape_of(x), gs = shape_of(grid);
    const int D = x.rank - 2;
    if (gs.size() != xs.size() || gs.back() != D || gs[0] != xs[0])
        throw std::invalid_argument("X and grid do not fit a " + std::to_string(D) + "-D GridSample");
    GridSampleSpec s = make_gridsample_spec(
        D, xs.data(), gs.data() + 1, vocab_enum<Kind>(p.kind, kKindField, "sampler kind"), p.cubic_a,
        vocab_enum<Padding>(p.padding, kPaddingField, "padding"),
        vocab_enum<PaddingOn>(p.padding_on, kPaddingOnField, "padding_on"), p.align_corners != 0,
        vocab_enum<Arith>(p.arith, kArithField, "arith"));
    check_output(y, x, s.N * s.C * s.P);
    return s;
}

inline DeformConvSpec deformconv_spec_c(const rb_tensor* inputs, int32_t n, const rb_deformconv_params& p,
                                        const rb_tensor& y) {
    const rb_tensor& x = input(inputs, n, 0, "X");
    const rb_tensor& w = input(inputs, n, 1, "W");
    input(inputs, n, 2, "offset");
    for (int32_t i = 1; i < n; ++i)
        if (inputs[i].data && inputs[i].dtype != x.dtype) throw std::invalid_argument("inputs must have X's dtype");
    const std::vector<int64_t> xs = shape_of(x), ws = shape_of(w);
    if (ws.size() != xs.size()) throw std::invalid_argument("W must have the rank of X");
    DeformConvSpec s = make_deformconv_spec(
        x.rank - 2, xs.data(), ws.data(), p.strides, p.pads, p.dilations, p.group, p.offset_group,
        vocab_enum<Kind>(p.kind, kKindField, "sampler kind"), p.cubic_a,
        vocab_enum<DeformBorder>(p.border, kBorderField, "border"));
    // The kernels index offset, mask and B by the spec's lengths: their shapes must be those exactly.
    std::vector<int64_t> off{s.N, s.offset_group * s.K * s.D}, msk{s.N, s.offset_group * s.K};
    for (int d = 0; d < s.D; ++d) {
        off.push_back(s.out[d]);
        msk.push_back(s.out[d]);
    }
    if (shape_of(inputs[2]) != off) throw std::invalid_argument("offset does not have the expected shape");
    if (n > 3 && inputs[3].data && shape_of(inputs[3]) != std::vector<int64_t>{s.OC})
        throw std::invalid_argument("B must hold one value per output channel");
    if (n > 4 && inputs[4].data && shape_of(inputs[4]) != msk)
        throw std::invalid_argument("mask does not have the expected shape");
    check_output(y, x, s.N * s.OC * s.P);
    return s;
}

// B and mask, or nullptr where omitted.
inline const void* optional_input(const rb_tensor* inputs, int32_t n, int32_t i) {
    return i < n ? inputs[i].data : nullptr;
}

}  // namespace capi
}  // namespace rb
