#include "ops.hpp"

#include <string>
#include <vector>

#include "openvino/core/parallel.hpp"
#include "openvino/op/constant.hpp"

#define RB_OPENVINO_THREADS 1  // the launchers run on OpenVINO's thread pool (rb/cpu.hpp)
#include "rb/bind.hpp"
#include "rb/cpu.hpp"

namespace resample_bridge {
namespace {

bool float_type(const ov::element::Type& t) {
    return t.is_dynamic() || t == ov::element::f32 || t == ov::element::f16 || t == ov::element::f64;
}

// The element types of X (lowering/compiled/openvino_ext.py EXTENSION_DTYPES lists the same for the ladder).
bool data_type(const ov::element::Type& t) {
    return float_type(t) || t == ov::element::u8 || t == ov::element::i8 || t == ov::element::u16 ||
           t == ov::element::i16 || t == ov::element::i32 || t == ov::element::i64;
}

// f(T*) for a float element type: the kernels' float, _Float16 (ov::float16 has the same IEEE binary16 layout)
// and double.
template <class F>
void dispatch_float(const ov::element::Type& t, F&& f) {
    if (t == ov::element::f32) f(static_cast<float*>(nullptr));
    else if (t == ov::element::f16) f(static_cast<_Float16*>(nullptr));
    else if (t == ov::element::f64) f(static_cast<double*>(nullptr));
    else OPENVINO_THROW("resample_bridge ops take f32, f16 or f64 here, not ", t);
}

// ... and the integer types (results rounded half to even and saturated, as ONNX's cast).
template <class F>
void dispatch(const ov::element::Type& t, F&& f) {
    if (t == ov::element::u8) f(static_cast<uint8_t*>(nullptr));
    else if (t == ov::element::i8) f(static_cast<int8_t*>(nullptr));
    else if (t == ov::element::u16) f(static_cast<uint16_t*>(nullptr));
    else if (t == ov::element::i16) f(static_cast<int16_t*>(nullptr));
    else if (t == ov::element::i32) f(static_cast<int32_t*>(nullptr));
    else if (t == ov::element::i64) f(static_cast<int64_t*>(nullptr));
    else dispatch_float(t, static_cast<F&&>(f));
}

std::vector<double> doubles(const ov::Tensor& t) {
    std::vector<double> out(t.get_size());
    const auto et = t.get_element_type();
    for (size_t i = 0; i < out.size(); ++i) {
        if (et == ov::element::f32) out[i] = t.data<const float>()[i];
        else if (et == ov::element::f64) out[i] = t.data<const double>()[i];
        else if (et == ov::element::f16) out[i] = static_cast<double>(t.data<const ov::float16>()[i]);
        else if (et == ov::element::bf16) out[i] = static_cast<double>(t.data<const ov::bfloat16>()[i]);
        else OPENVINO_THROW("roi and scales must be floating point, not ", et);
    }
    return out;
}

std::vector<int64_t> int64s(const ov::Tensor& t) {
    std::vector<int64_t> out(t.get_size());
    const auto et = t.get_element_type();
    for (size_t i = 0; i < out.size(); ++i) {
        if (et == ov::element::i64) out[i] = t.data<const int64_t>()[i];
        else if (et == ov::element::i32) out[i] = t.data<const int32_t>()[i];
        else OPENVINO_THROW("sizes must be i64 or i32, not ", et);
    }
    return out;
}

std::vector<int64_t> dims(const ov::Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }

ov::Shape shape_of(const std::vector<int64_t>& v) { return ov::Shape(v.begin(), v.end()); }

double cubic_a_of(const std::string& text) { return rb::parse_rat(text, "cubic_a").to_double(); }

// What a Resize's memos are keyed by: X's shape and the run-time values.
struct ResizeKey {
    std::vector<int64_t> shape;
    rb::ResizeRuntime rt;
    bool same(const std::vector<int64_t>& s, const rb::ResizeRuntime& r) const {
        return shape == s && rt.roi == r.roi && rt.scales == r.scales && rt.sizes == r.sizes;
    }
};

// The memo of type T (a ResizeKey) in ``slot`` for (shape, rt): the slot's where it is for them, else a fresh one
// that make(T&) fills, kept in the slot.
template <class T, class Make>
std::shared_ptr<const T> memoised(MemoSlot& slot, const std::vector<int64_t>& shape, const rb::ResizeRuntime& rt,
                                  Make&& make) {
    auto memo = slot.get<T>();
    if (memo && memo->same(shape, rt)) return memo;
    auto fresh = std::make_shared<T>();
    fresh->shape = shape;
    fresh->rt = rt;
    make(*fresh);
    slot.set(fresh);
    return fresh;
}

size_t runtime_inputs(const rb::ResizeAttrs& a) {
    return (a.roi == "input") + (a.scales == "input") + (a.sizes == "input");
}

}  // namespace

// ------------------------------------------------------------------------------------------------------------
// Resize

void infer_output(ov::Node& op, const rb::ResizeAttrs& a) {
    const auto et = op.get_input_element_type(0);
    NODE_VALIDATION_CHECK(&op, data_type(et), "X must be f32, f16, f64, u8, i8, u16, i16, i32 or i64, got ", et);
    NODE_VALIDATION_CHECK(&op, op.get_input_size() == 1 + runtime_inputs(a), "expected ",
                          1 + runtime_inputs(a), " inputs (X, then roi / scales / sizes fed at run time), got ",
                          op.get_input_size());
    const auto& ps = op.get_input_partial_shape(0);
    ov::PartialShape out = ov::PartialShape::dynamic();
    if (ps.rank().is_static()) {
        const int64_t rank = ps.rank().get_length();
        NODE_VALIDATION_CHECK(&op, rank == a.rank, "X has rank ", rank, ", the op expects ", a.rank);
        // Run-time roi / scales / sizes that are constants in the graph (initializers) still fix the shape.
        rb::ResizeRuntime rt;
        bool all_constant = true;
        size_t k = 1;
        auto constant = [&](std::vector<double>* f, std::vector<int64_t>* i) {
            auto c = ov::as_type_ptr<ov::op::v0::Constant>(op.input_value(k++).get_node_shared_ptr());
            if (!c) {
                all_constant = false;
                return;
            }
            if (f) *f = c->cast_vector<double>();
            if (i) *i = c->cast_vector<int64_t>();
        };
        rt.has_roi = a.roi == "input";
        rt.has_scales = a.scales == "input";
        rt.has_sizes = a.sizes == "input";
        if (rt.has_roi) constant(&rt.roi, nullptr);  // inputs follow X in this order
        if (rt.has_scales) constant(&rt.scales, nullptr);
        if (rt.has_sizes) constant(nullptr, &rt.sizes);
        if (ps.is_static() && all_constant) {
            struct Bound : ResizeKey {
                ov::PartialShape out;
            };
            const std::vector<int64_t> shape = dims(ps.to_shape());
            out = memoised<Bound>(static_cast<const Resize&>(op).memos().shape, shape, rt, [&](Bound& b) {
                      try {
                          b.out = shape_of(rb::bind_resize(a, shape, rt).out_shape);
                      } catch (const std::exception& e) {
                          NODE_VALIDATION_CHECK(&op, false, e.what());
                      }
                  })->out;
        } else {
            out = ps;
            for (int64_t i = 0; i < rank; ++i)
                if (!a.pads.empty() && static_cast<int64_t>(a.pads.size()) == 2 * rank)
                    out[i] = out[i] + (a.pads[i] + a.pads[rank + i]);
            for (int64_t ax : a.axes)
                if (ax >= 0 && ax < rank) out[ax] = ov::Dimension::dynamic();
        }
    }
    op.set_output_type(0, et, out);
}

void run(const ov::Node& op, const rb::ResizeAttrs& a, ov::TensorVector& outputs, const ov::TensorVector& inputs) {
    const ov::Tensor& x = inputs[0];
    rb::ResizeRuntime rt;
    size_t k = 1;
    if (a.roi == "input") {
        rt.has_roi = true;
        rt.roi = doubles(inputs[k++]);
    }
    if (a.scales == "input") {
        rt.has_scales = true;
        rt.scales = doubles(inputs[k++]);
    }
    if (a.sizes == "input") {
        rt.has_sizes = true;
        rt.sizes = int64s(inputs[k++]);
    }
    // The plan (binding + tap tables) depends only on the shape and the run-time values (Memos).
    struct Planned : ResizeKey {
        rb::ResizePlan plan;
    };
    const std::vector<int64_t> shape = dims(x.get_shape());
    const auto memo = memoised<Planned>(static_cast<const Resize&>(op).memos().plan, shape, rt, [&](Planned& p) {
        try {
            p.plan = rb::plan_resize(rb::bind_resize(a, shape, rt));
        } catch (const std::exception& e) {
            OPENVINO_THROW(op.get_type_name(), " '", op.get_friendly_name(), "': ", e.what());
        }
    });
    const rb::ResizePlan& plan = memo->plan;
    outputs[0].set_shape(shape_of(plan.bound.out_shape));
    dispatch(x.get_element_type(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        rb::cpu::resize(static_cast<const T*>(x.data()), static_cast<T*>(outputs[0].data()), plan, 0);
    });
}

// ------------------------------------------------------------------------------------------------------------
// GridSample

void infer_output(ov::Node& op, const rb::GridSampleAttrs& a) {
    NODE_VALIDATION_CHECK(&op, op.get_input_size() == 2, "expected inputs X and grid");
    const auto et = op.get_input_element_type(0);
    NODE_VALIDATION_CHECK(&op, data_type(et), "X must be f32, f16, f64, u8, i8, u16, i16, i32 or i64, got ", et);
    NODE_VALIDATION_CHECK(&op, float_type(op.get_input_element_type(1)), "grid must be f32, f16 or f64");
    try {
        rb::kind_of(a.sampler);
        rb::padding_of(a.padding);
        rb::padding_on_of(a.padding_on);
        rb::arith_of(a.arith);
        cubic_a_of(a.cubic_a);
    } catch (const std::exception& e) {
        NODE_VALIDATION_CHECK(&op, false, e.what());
    }
    NODE_VALIDATION_CHECK(&op, a.sampler != "nearest" || a.nearest == "half_even",
                          "GridSample nearest rounds half to even; rule '", a.nearest, "' is not implemented");
    const auto& xs = op.get_input_partial_shape(0);
    const auto& gs = op.get_input_partial_shape(1);
    ov::PartialShape out = ov::PartialShape::dynamic();
    if (xs.rank().is_static() || gs.rank().is_static()) {
        const int64_t rank = xs.rank().is_static() ? xs.rank().get_length() : gs.rank().get_length();
        const int64_t D = rank - 2;
        NODE_VALIDATION_CHECK(&op, D >= 1 && D <= rb::kMaxSpatial, "GridSample supports 1 to ", rb::kMaxSpatial,
                              " spatial axes, got rank ", rank);
        NODE_VALIDATION_CHECK(&op, a.spatial_rank == 0 || a.spatial_rank == D, "the op has ",
                              a.spatial_rank, " spatial axes, the input ", D);
        NODE_VALIDATION_CHECK(&op, gs.rank().is_dynamic() || gs.rank().get_length() == rank,
                              "grid must have the rank of X");
        NODE_VALIDATION_CHECK(&op, gs.rank().is_dynamic() || gs[rank - 1].compatible(D),
                              "grid's last axis must be ", D);
        std::vector<ov::Dimension> d(static_cast<size_t>(rank), ov::Dimension::dynamic());
        if (xs.rank().is_static()) {
            d[0] = xs[0];
            d[1] = xs[1];
        }
        if (gs.rank().is_static()) {
            ov::Dimension n = d[0];
            NODE_VALIDATION_CHECK(&op, ov::Dimension::merge(d[0], n, gs[0]), "X and grid disagree on N");
            for (int64_t i = 0; i < D; ++i) d[2 + i] = gs[1 + i];
        }
        out = ov::PartialShape(d);
    }
    op.set_output_type(0, et, out);
}

void run(const ov::Node& op, const rb::GridSampleAttrs& a, ov::TensorVector& outputs, const ov::TensorVector& inputs) {
    const ov::Tensor& x = inputs[0];
    const ov::Tensor& grid = inputs[1];
    const auto xs = dims(x.get_shape()), gs = dims(grid.get_shape());
    const int D = static_cast<int>(xs.size()) - 2;
    if (gs.size() != xs.size() || gs.back() != D || gs[0] != xs[0])
        OPENVINO_THROW(op.get_type_name(), ": X ", x.get_shape(), " and grid ", grid.get_shape(),
                       " do not fit a ", D, "-D GridSample");
    rb::GridSampleSpec s;
    try {
        s = rb::make_gridsample_spec(D, xs.data(), gs.data() + 1, rb::kind_of(a.sampler),
                                     cubic_a_of(a.cubic_a), rb::padding_of(a.padding),
                                     rb::padding_on_of(a.padding_on), a.align_corners,
                                     rb::arith_of(a.arith));
    } catch (const std::exception& e) {
        OPENVINO_THROW(op.get_type_name(), " '", op.get_friendly_name(), "': ", e.what());
    }
    std::vector<int64_t> out{xs[0], xs[1]};
    out.insert(out.end(), gs.begin() + 1, gs.end() - 1);
    outputs[0].set_shape(shape_of(out));
    if (rb::element_count(out) == 0) return;
    dispatch(x.get_element_type(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        dispatch_float(grid.get_element_type(), [&](auto* gtag) {
            using G = std::remove_pointer_t<decltype(gtag)>;
            rb::cpu::gridsample(s, static_cast<const T*>(x.data()), static_cast<const G*>(grid.data()),
                                static_cast<T*>(outputs[0].data()), 0);
        });
    });
}

// ------------------------------------------------------------------------------------------------------------
// DeformConv

namespace {

std::vector<int64_t> or_default(const std::vector<int64_t>& v, size_t n, int64_t def) {
    return v.empty() ? std::vector<int64_t>(n, def) : v;
}

}  // namespace

void infer_output(ov::Node& op, const rb::DeformConvAttrs& a) {
    const size_t n_in = 3 + a.has_bias + a.has_mask;
    NODE_VALIDATION_CHECK(&op, op.get_input_size() == n_in, "expected ", n_in, " inputs (X, W, offset",
                          a.has_bias ? ", B" : "", a.has_mask ? ", mask" : "", "), got ", op.get_input_size());
    const auto et = op.get_input_element_type(0);
    NODE_VALIDATION_CHECK(&op, data_type(et), "X must be f32, f16, f64, u8, i8, u16, i16, i32 or i64, got ", et);
    for (size_t i = 1; i < n_in; ++i)
        NODE_VALIDATION_CHECK(&op, op.get_input_element_type(i).compatible(et), "input ", i, " must have X's type ", et);
    NODE_VALIDATION_CHECK(&op, a.offset_layout == "group,kernel...,(d...)", "offset layout '",
                          a.offset_layout, "' is not the kernels' group,kernel...,(d...)");
    try {
        rb::kind_of(a.sampler);
        rb::border_of(a.border);
        cubic_a_of(a.cubic_a);
    } catch (const std::exception& e) {
        NODE_VALIDATION_CHECK(&op, false, e.what());
    }
    const auto& xs = op.get_input_partial_shape(0);
    const auto& ws = op.get_input_partial_shape(1);
    ov::PartialShape out = ov::PartialShape::dynamic();
    if (xs.rank().is_static()) {
        const int64_t rank = xs.rank().get_length(), D = rank - 2;
        NODE_VALIDATION_CHECK(&op, D >= 1 && D <= rb::kMaxSpatial, "DeformConv supports 1 to ", rb::kMaxSpatial,
                              " spatial axes, got rank ", rank);
        std::vector<ov::Dimension> d(static_cast<size_t>(rank), ov::Dimension::dynamic());
        d[0] = xs[0];
        if (ws.rank().is_static()) d[1] = ws[0];
        const auto strides = or_default(a.strides, D, 1), dil = or_default(a.dilations, D, 1),
                   pads = or_default(a.pads, 2 * D, 0);
        NODE_VALIDATION_CHECK(&op, static_cast<int64_t>(strides.size()) == D &&
                                        static_cast<int64_t>(dil.size()) == D &&
                                        static_cast<int64_t>(pads.size()) == 2 * D,
                              "strides, dilations and pads must have ", D, ", ", D, " and ", 2 * D, " values");
        for (int64_t i = 0; i < D; ++i) {
            int64_t k = -1;
            if (!a.kernel_shape.empty()) k = a.kernel_shape[i];
            else if (ws.rank().is_static() && ws[2 + i].is_static()) k = ws[2 + i].get_length();
            if (k > 0 && xs[2 + i].is_static()) {
                const int64_t eff = (k - 1) * dil[i] + 1;
                const int64_t span = xs[2 + i].get_length() + pads[i] + pads[D + i] - eff;
                NODE_VALIDATION_CHECK(&op, span >= 0, "output is empty on spatial axis ", i);
                d[2 + i] = span / strides[i] + 1;
            }
        }
        out = ov::PartialShape(d);
    }
    op.set_output_type(0, et, out);
}

void run(const ov::Node& op, const rb::DeformConvAttrs& a, ov::TensorVector& outputs, const ov::TensorVector& inputs) {
    const auto xs = dims(inputs[0].get_shape()), ws = dims(inputs[1].get_shape());
    const int D = static_cast<int>(xs.size()) - 2;
    const ov::Tensor* b = a.has_bias ? &inputs[3] : nullptr;
    const ov::Tensor* mask = a.has_mask ? &inputs[3 + a.has_bias] : nullptr;
    rb::DeformConvSpec s;
    try {
        if (static_cast<int>(ws.size()) != D + 2) throw std::invalid_argument("W must have the rank of X");
        for (int i = 0; i < D && !a.kernel_shape.empty(); ++i)
            if (a.kernel_shape[i] != ws[2 + i]) throw std::invalid_argument("W does not have kernel_shape");
        const auto strides = or_default(a.strides, D, 1), dil = or_default(a.dilations, D, 1),
                   pads = or_default(a.pads, 2 * D, 0);
        s = rb::make_deformconv_spec(D, xs.data(), ws.data(), strides.data(), pads.data(), dil.data(), a.group,
                                     a.offset_group, rb::kind_of(a.sampler), cubic_a_of(a.cubic_a),
                                     rb::border_of(a.border));
        std::vector<int64_t> off{s.N, s.offset_group * s.K * D}, msk{s.N, s.offset_group * s.K};
        for (int i = 0; i < D; ++i) {
            off.push_back(s.out[i]);
            msk.push_back(s.out[i]);
        }
        if (dims(inputs[2].get_shape()) != off) throw std::invalid_argument("offset does not have the expected shape");
        if (mask && dims(mask->get_shape()) != msk) throw std::invalid_argument("mask does not have the expected shape");
        if (b && b->get_size() != static_cast<size_t>(s.OC)) throw std::invalid_argument("B must hold OC values");
    } catch (const std::exception& e) {
        OPENVINO_THROW(op.get_type_name(), " '", op.get_friendly_name(), "': ", e.what());
    }
    std::vector<int64_t> out{s.N, s.OC};
    for (int i = 0; i < D; ++i) out.push_back(s.out[i]);
    outputs[0].set_shape(shape_of(out));
    dispatch(inputs[0].get_element_type(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        auto ptr = [](const ov::Tensor* t) { return t ? static_cast<const T*>(t->data()) : nullptr; };
        rb::cpu::deformconv(s, static_cast<const T*>(inputs[0].data()), static_cast<const T*>(inputs[1].data()),
                            static_cast<const T*>(inputs[2].data()), ptr(b), ptr(mask),
                            static_cast<T*>(outputs[0].data()), 0);
    });
}

}  // namespace resample_bridge
