// The C ABI of the CPU library (rb_kernels.h): the tap-table entry points' structs, dtype dispatch to the CPU
// launchers; the binding shared with the CUDA launchers is rb/c_abi.hpp.
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

using rb::capi::checked_enum;
using rb::capi::vocab_enum;
using rb::capi::guarded;

rb_number c_number(const rb::Number& n) {
    const rb::i128 lim = rb::i128(1) << 62;
    rb_number r{0, 0, n.value};
    if (n.exact() && rb::i128_abs(n.num) < lim && n.den < lim) {
        r.num = static_cast<int64_t>(n.num);
        r.den = static_cast<int64_t>(n.den);
    }
    return r;
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
    r.kind = vocab_enum<Kind>(s.kind, rb::kKindField, "sampler kind");
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

// Floating dtypes (codes 0-2, shared with the CUDA launchers), then the CPU library's integer codes 3-8.
template <class F>
void dispatch_float(int32_t dtype, F&& f) {
    rb::capi::dispatch_dtype<_Float16>(dtype, static_cast<F&&>(f));
}

template <class F>
void dispatch(int32_t dtype, F&& f) {
    switch (dtype) {
        case 3: f(static_cast<uint8_t*>(nullptr)); break;
        case 4: f(static_cast<int8_t*>(nullptr)); break;
        case 5: f(static_cast<uint16_t*>(nullptr)); break;
        case 6: f(static_cast<int16_t*>(nullptr)); break;
        case 7: f(static_cast<int32_t*>(nullptr)); break;
        case 8: f(static_cast<int64_t*>(nullptr)); break;
        default: dispatch_float(dtype, static_cast<F&&>(f));
    }
}

void resize_with(const rb_tensor& x, const rb_tensor& y, const int64_t* pads, const std::vector<rb::TableView>& tables,
                 double extrap, int32_t threads, bool exact_integers = false) {
    const std::vector<int64_t> shape = rb::capi::shape_of(x);
    if (shape.empty()) throw std::invalid_argument("rank must be at least 1");
    if (y.dtype != x.dtype) throw std::invalid_argument("y must have X's dtype");
    std::vector<int64_t> pv;
    if (pads) pv.assign(pads, pads + 2 * shape.size());
    dispatch(x.dtype, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        rb::cpu::resize(static_cast<const T*>(x.data), static_cast<T*>(y.data), shape, pv, tables, extrap, threads,
                        exact_integers);
    });
}

template <class Attrs>
const std::vector<rb::AttrField>& fields_of() {
    static const std::vector<rb::AttrField> fields = rb::attribute_fields<Attrs>();
    return fields;
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

const char* rb_op_type(int32_t op) {
    const char* name = nullptr;
    rb::with_attrs(op, [&](auto a) { name = decltype(a)::op_type; });
    return name;
}

const char* rb_attribute(int32_t op, int32_t index, int32_t* type) {
    const rb::AttrField* f = nullptr;
    rb::with_attrs(op, [&](auto a) {
        const auto& fields = fields_of<decltype(a)>();
        if (index >= 0 && index < static_cast<int32_t>(fields.size())) f = &fields[index];
    });
    if (f && type) *type = static_cast<int32_t>(f->type);
    return f ? f->name : nullptr;
}

const char* rb_attribute_default(int32_t op, int32_t index) {
    const char* text = nullptr;
    rb::with_attrs(op, [&](auto a) {
        const auto& fields = fields_of<decltype(a)>();
        if (index >= 0 && index < static_cast<int32_t>(fields.size())) text = fields[index].default_text.c_str();
    });
    return text;
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

int rb_resize_tables(const rb_tensor* x, rb_tensor* y, const int64_t* pads, int32_t n_tables, const rb_table* tables,
                     double extrapolation_value, int32_t threads, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        std::vector<rb::TableView> views;
        for (int32_t i = 0; i < n_tables; ++i) {
            const rb_table& t = tables[i];
            views.push_back({t.axis, t.in_len, t.out_len, t.K, t.index, t.weight, t.extrap});
        }
        resize_with(*x, *y, pads, views, extrapolation_value, threads);
    });
}

int rb_resize_axes(const rb_tensor* x, rb_tensor* y, const int64_t* pads, int32_t n_axes, const rb_axis* axes,
                   const rb_resize_sampler* sampler, double extrapolation_value, int32_t threads, char* err,
                   int64_t errlen) {
    return guarded(err, errlen, [&] {
        rb::ResizeSampler s = sampler_of(*sampler);
        std::vector<rb::TapTable> built;
        std::vector<rb::TableView> views;
        built.reserve(static_cast<size_t>(n_axes));
        for (int32_t i = 0; i < n_axes; ++i) {
            built.push_back(rb::build_taps(axis_of(axes[i], s), s));
            const rb::TapTable& t = built.back();
            views.push_back({axes[i].axis, axes[i].in_len, t.out_len, t.K, t.index.data(), t.weight.data(),
                             t.extrap.empty() ? nullptr : t.extrap.data(), t.num.empty() ? nullptr : t.num.data(),
                             t.den});
        }
        resize_with(*x, *y, pads, views, extrapolation_value, threads, s.kind != rb::Kind::nearest);
    });
}

int rb_resize_bind(const char* attrs, int32_t rank, const int64_t* in_shape, const rb_resize_runtime* runtime,
                   int64_t* out_shape, int32_t* n_axes, rb_axis* axes, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        const rb::BoundResize b = rb::capi::bind_resize_c(attrs, rank, in_shape, runtime);
        for (int32_t i = 0; i < rank; ++i) out_shape[i] = b.out_shape[i];
        *n_axes = static_cast<int32_t>(b.axes.size());
        for (size_t i = 0; i < b.axes.size(); ++i) {
            const rb::AxisSpec& ax = b.axes[i];
            axes[i] = rb_axis{ax.axis, ax.in_len, ax.out_len, c_number(ax.a), c_number(ax.b), c_number(ax.filter_scale),
                              static_cast<int32_t>(ax.nearest), ax.stretch_clamp ? 1 : 0, ax.has_valid ? 1 : 0};
        }
    });
}

int rb_resize_ir(const char* attrs, const rb_tensor* x, const rb_resize_runtime* runtime, rb_tensor* y, int32_t threads,
                 char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        const rb::ResizePlan plan = rb::capi::resize_plan_c(attrs, *x, runtime, *y);
        dispatch(x->dtype, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            rb::cpu::resize(static_cast<const T*>(x->data), static_cast<T*>(y->data), plan, threads);
        });
    });
}

int rb_gridsample(const rb_tensor* inputs, int32_t n_inputs, const rb_gridsample_params* params, rb_tensor* y,
                  int32_t threads, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        const rb::GridSampleSpec s = rb::capi::gridsample_spec_c(inputs, n_inputs, *params, *y);
        dispatch(inputs[0].dtype, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            dispatch_float(inputs[1].dtype, [&](auto* gtag) {
                using G = std::remove_pointer_t<decltype(gtag)>;
                rb::cpu::gridsample(s, static_cast<const T*>(inputs[0].data), static_cast<const G*>(inputs[1].data),
                                    static_cast<T*>(y->data), threads);
            });
        });
    });
}

int rb_deformconv(const rb_tensor* inputs, int32_t n_inputs, const rb_deformconv_params* params, rb_tensor* y,
                  int32_t threads, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        const rb::DeformConvSpec s = rb::capi::deformconv_spec_c(inputs, n_inputs, *params, *y);
        dispatch(inputs[0].dtype, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            auto in = [&](int32_t i) { return static_cast<const T*>(rb::capi::optional_input(inputs, n_inputs, i)); };
            rb::cpu::deformconv(s, in(0), in(1), in(2), in(3), in(4), static_cast<T*>(y->data), threads);
        });
    });
}

}  // extern "C"
