// The C ABI of the CPU library (rb_kernels.h): argument checks, C structs -> the header templates' specs,
// dtype dispatch, exceptions -> error strings.
#include "rb_kernels.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "rb/attrs.hpp"
#include "rb/c_abi.hpp"
#include "rb/bind.hpp"
#include "rb/cpu.hpp"

namespace {

using rb::Kind;

using rb::capi::guarded;
using rb::capi::set_err;

template <class E>
E checked_enum(int32_t v, int32_t count, const char* what) {
    if (v < 0 || v >= count) throw std::invalid_argument(std::string("invalid ") + what + " code " + std::to_string(v));
    return static_cast<E>(v);
}

rb_number c_number(const rb::Number& n) {
    const rb::i128 lim = rb::i128(1) << 62;
    rb_number r{0, 0, n.value};
    if (n.exact() && rb::i128_abs(n.num) < lim && n.den < lim) {
        r.num = static_cast<int64_t>(n.num);
        r.den = static_cast<int64_t>(n.den);
    }
    return r;
}

rb::BoundResize bind_from_c(const char* attrs, int32_t rank, const int64_t* in_shape, const double* roi,
                            int64_t n_roi, const double* scales, int64_t n_scales, const int64_t* sizes,
                            int64_t n_sizes) {
    const auto a = rb::attrs_from_text<rb::ResizeAttrs>(attrs ? attrs : "");
    rb::ResizeRuntime rt;
    rt.has_roi = roi != nullptr;
    rt.has_scales = scales != nullptr;
    rt.has_sizes = sizes != nullptr;
    if (roi) rt.roi.assign(roi, roi + n_roi);
    if (scales) rt.scales.assign(scales, scales + n_scales);
    if (sizes) rt.sizes.assign(sizes, sizes + n_sizes);
    return rb::bind_resize(a, std::vector<int64_t>(in_shape, in_shape + rank), rt);
}

rb::Number number(const rb_number& n) {
    rb::Number r;
    r.num = n.num;
    r.den = n.den;
    r.value = n.value;
    return r;
}

rb::ResizeSampler sampler_of(const rb_resize_sampler& s) {
    rb::ResizeSampler r;
    r.kind = checked_enum<Kind>(s.kind, 3, "sampler kind");
    r.antialias = s.antialias != 0;
    r.exclude_outside = s.exclude_outside != 0;
    r.cubic_a = number(s.cubic_a);
    return r;
}

rb::AxisSpec axis_of(const rb_axis& a, const rb::ResizeSampler& s) {
    rb::AxisSpec r;
    r.axis = a.axis;
    r.in_len = a.in_len;
    r.out_len = a.out_len;
    r.a = number(a.a);
    r.b = number(a.b);
    r.filter_scale = number(a.filter_scale);
    r.nearest = s.kind == Kind::nearest ? checked_enum<rb::Nearest>(a.nearest, 5, "resolved nearest rule")
                                        : rb::Nearest::round_prefer_floor;
    r.stretch_clamp = a.stretch_clamp != 0;
    r.has_valid = a.has_valid != 0;
    return r;
}

template <class F>
void dispatch(int32_t dtype, F&& f) {
    rb::capi::dispatch_dtype<_Float16>(dtype, static_cast<F&&>(f));
}

void resize_with(int32_t dtype, const void* x, void* y, int32_t rank, const int64_t* in_shape, const int64_t* pads,
                 const std::vector<rb::TableView>& tables, double extrap, int32_t threads) {
    if (rank < 1) throw std::invalid_argument("rank must be at least 1");
    std::vector<int64_t> shape(in_shape, in_shape + rank);
    std::vector<int64_t> pv;
    if (pads) pv.assign(pads, pads + 2 * rank);
    dispatch(dtype, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        rb::cpu::resize(static_cast<const T*>(x), static_cast<T*>(y), shape, pv, tables, extrap, threads);
    });
}

}  // namespace

extern "C" {

int rb_abi_version(void) { return RB_ABI_VERSION; }

const char* rb_vocabulary(int32_t field, int32_t index) {
    const char* const* names = rb::vocabulary(field);
    if (!names || index < 0) return nullptr;
    for (int32_t i = 0; names[i]; ++i)
        if (i == index) return names[i];
    return nullptr;
}

int64_t rb_tap_count(const rb_axis* axis, const rb_resize_sampler* sampler) {
    try {
        rb::ResizeSampler s = sampler_of(*sampler);
        return rb::tap_count(s, number(axis->filter_scale), axis->stretch_clamp != 0);
    } catch (...) {
        return -1;
    }
}

int rb_build_taps(const rb_axis* axis, const rb_resize_sampler* sampler, int64_t K, int64_t* index, double* weight,
                  uint8_t* extrap, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        rb::ResizeSampler s = sampler_of(*sampler);
        rb::TapTable t = rb::build_taps(axis_of(*axis, s), s);
        if (t.K != K) throw std::invalid_argument("K does not match rb_tap_count");
        std::memcpy(index, t.index.data(), t.index.size() * sizeof(int64_t));
        std::memcpy(weight, t.weight.data(), t.weight.size() * sizeof(double));
        if (extrap && !t.extrap.empty()) std::memcpy(extrap, t.extrap.data(), t.extrap.size());
    });
}

int rb_resize_tables(int32_t dtype, const void* x, void* y, int32_t rank, const int64_t* in_shape,
                     const int64_t* pads, int32_t n_tables, const rb_table* tables, double extrapolation_value,
                     int32_t threads, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        std::vector<rb::TableView> views;
        for (int32_t i = 0; i < n_tables; ++i) {
            const rb_table& t = tables[i];
            views.push_back({t.axis, t.in_len, t.out_len, t.K, t.index, t.weight, t.extrap});
        }
        resize_with(dtype, x, y, rank, in_shape, pads, views, extrapolation_value, threads);
    });
}

int rb_resize_axes(int32_t dtype, const void* x, void* y, int32_t rank, const int64_t* in_shape,
                   const int64_t* pads, int32_t n_axes, const rb_axis* axes, const rb_resize_sampler* sampler,
                   double extrapolation_value, int32_t threads, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        rb::ResizeSampler s = sampler_of(*sampler);
        std::vector<rb::TapTable> built;
        std::vector<rb::TableView> views;
        built.reserve(static_cast<size_t>(n_axes));
        for (int32_t i = 0; i < n_axes; ++i) {
            built.push_back(rb::build_taps(axis_of(axes[i], s), s));
            const rb::TapTable& t = built.back();
            views.push_back({axes[i].axis, axes[i].in_len, t.out_len, t.K, t.index.data(), t.weight.data(),
                             t.extrap.empty() ? nullptr : t.extrap.data()});
        }
        resize_with(dtype, x, y, rank, in_shape, pads, views, extrapolation_value, threads);
    });
}

int rb_resize_bind(const char* attrs, int32_t rank, const int64_t* in_shape, const double* roi, int64_t n_roi,
                   const double* scales, int64_t n_scales, const int64_t* sizes, int64_t n_sizes, int64_t* out_shape,
                   int32_t* n_axes, rb_axis* axes, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        const rb::BoundResize b = bind_from_c(attrs, rank, in_shape, roi, n_roi, scales, n_scales, sizes, n_sizes);
        for (int32_t i = 0; i < rank; ++i) out_shape[i] = b.out_shape[i];
        *n_axes = static_cast<int32_t>(b.axes.size());
        for (size_t i = 0; i < b.axes.size(); ++i) {
            const rb::AxisSpec& ax = b.axes[i];
            axes[i] = rb_axis{ax.axis, ax.in_len, ax.out_len, c_number(ax.a), c_number(ax.b), c_number(ax.filter_scale),
                              static_cast<int32_t>(ax.nearest), ax.stretch_clamp ? 1 : 0, ax.has_valid ? 1 : 0};
        }
    });
}

int rb_resize_ir(int32_t dtype, const void* x, void* y, int64_t y_size, const char* attrs, int32_t rank,
                 const int64_t* in_shape, const double* roi, int64_t n_roi, const double* scales, int64_t n_scales,
                 const int64_t* sizes, int64_t n_sizes, int32_t threads, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        const rb::ResizePlan plan =
            rb::plan_resize(bind_from_c(attrs, rank, in_shape, roi, n_roi, scales, n_scales, sizes, n_sizes));
        if (rb::element_count(plan.bound.out_shape) != y_size)
            throw std::invalid_argument("y holds " + std::to_string(y_size) + " elements, the output has " +
                                        std::to_string(rb::element_count(plan.bound.out_shape)));
        dispatch(dtype, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            rb::cpu::resize(static_cast<const T*>(x), static_cast<T*>(y), plan, threads);
        });
    });
}

int rb_gridsample(int32_t dtype, int32_t grid_dtype, const void* x, const void* grid, void* y, int32_t D, const int64_t* x_shape,
                  const int64_t* out_shape, int32_t kind, double cubic_a, int32_t padding, int32_t padding_on,
                  int32_t align_corners, int32_t arith, int32_t threads, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        rb::GridSampleSpec s = rb::make_gridsample_spec(
            D, x_shape, out_shape, checked_enum<Kind>(kind, 3, "sampler kind"), cubic_a,
            checked_enum<rb::Padding>(padding, 3, "padding"), checked_enum<rb::PaddingOn>(padding_on, 2, "padding_on"),
            align_corners != 0, checked_enum<rb::Arith>(arith, 3, "arith"));
        dispatch(dtype, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            dispatch(grid_dtype, [&](auto* gtag) {
                using G = std::remove_pointer_t<decltype(gtag)>;
                rb::cpu::gridsample(s, static_cast<const T*>(x), static_cast<const G*>(grid), static_cast<T*>(y),
                                    threads);
            });
        });
    });
}

int rb_deformconv(int32_t dtype, const void* x, const void* w, const void* offset, const void* b, const void* mask,
                  void* y, int32_t D, const int64_t* x_shape, const int64_t* w_shape, const int64_t* strides,
                  const int64_t* pads, const int64_t* dilations, int64_t group, int64_t offset_group, int32_t kind,
                  double cubic_a, int32_t border, int32_t threads, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        rb::DeformConvSpec s = rb::make_deformconv_spec(
            D, x_shape, w_shape, strides, pads, dilations, group, offset_group,
            checked_enum<Kind>(kind, 3, "sampler kind"), cubic_a, checked_enum<rb::DeformBorder>(border, 2, "border"));
        dispatch(dtype, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            rb::cpu::deformconv(s, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(offset),
                                static_cast<const T*>(b), static_cast<const T*>(mask), static_cast<T*>(y), threads);
        });
    });
}

}  // extern "C"
