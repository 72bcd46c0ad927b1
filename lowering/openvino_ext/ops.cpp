#include "ops.hpp"

#include <string>

#include "openvino/op/constant.hpp"
#include <vector>

#include "rb/bind.hpp"
#include "rb/cpu.hpp"

namespace resample_bridge {
namespace {

template <class Attrs>
void visit_all(Attrs& a, ov::AttributeVisitor& v) {
    a.visit([&](const char* name, auto& field) { v.on_attribute(name, field); });
}

bool float_type(const ov::element::Type& t) {
    return t.is_dynamic() || t == ov::element::f32 || t == ov::element::f16 || t == ov::element::f64;
}

// f(T*) for the element type: the kernels' float, _Float16 (ov::float16 has the same IEEE binary16 layout) and
// double.
template <class F>
void dispatch(const ov::element::Type& t, F&& f) {
    if (t == ov::element::f32) f(static_cast<float*>(nullptr));
    else if (t == ov::element::f16) f(static_cast<_Float16*>(nullptr));
    else if (t == ov::element::f64) f(static_cast<double*>(nullptr));
    else OPENVINO_THROW("resample_bridge ops run f32, f16 and f64, not ", t);
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

size_t runtime_inputs(const rb::ResizeAttrs& a) {
    return (a.roi == "input") + (a.scales == "input") + (a.sizes == "input");
}

}  // namespace

// ------------------------------------------------------------------------------------------------------------
// Resize

Resize::Resize(const ov::OutputVector& args, const rb::ResizeAttrs& attrs) : Op(args), m_attrs(attrs) {
    constructor_validate_and_infer_types();
}

void Resize::validate_and_infer_types() {
    const auto et = get_input_element_type(0);
    NODE_VALIDATION_CHECK(this, float_type(et), "X must be f32, f16 or f64, got ", et);
    NODE_VALIDATION_CHECK(this, get_input_size() == 1 + runtime_inputs(m_attrs), "expected ",
                          1 + runtime_inputs(m_attrs), " inputs (X, then roi / scales / sizes fed at run time), got ",
                          get_input_size());
    const auto& ps = get_input_partial_shape(0);
    ov::PartialShape out = ov::PartialShape::dynamic();
    if (ps.rank().is_static()) {
        const int64_t rank = ps.rank().get_length();
        NODE_VALIDATION_CHECK(this, rank == m_attrs.rank, "X has rank ", rank, ", the op expects ", m_attrs.rank);
        // Run-time roi / scales / sizes that are constants in the graph (initializers) still fix the shape.
        rb::ResizeRuntime rt;
        bool all_constant = true;
        size_t k = 1;
        auto constant = [&](std::vector<double>* f, std::vector<int64_t>* i) {
            auto c = ov::as_type_ptr<ov::op::v0::Constant>(input_value(k++).get_node_shared_ptr());
            if (!c) {
                all_constant = false;
                return;
            }
            if (f) *f = c->cast_vector<double>();
            if (i) *i = c->cast_vector<int64_t>();
        };
        rt.has_roi = m_attrs.roi == "input";
        rt.has_scales = m_attrs.scales == "input";
        rt.has_sizes = m_attrs.sizes == "input";
        if (rt.has_roi) constant(&rt.roi, nullptr);  // inputs follow X in this order
        if (rt.has_scales) constant(&rt.scales, nullptr);
        if (rt.has_sizes) constant(nullptr, &rt.sizes);
        if (ps.is_static() && all_constant) {
            try {
                out = shape_of(rb::bind_resize(m_attrs, dims(ps.to_shape()), rt).out_shape);
            } catch (const std::exception& e) {
                NODE_VALIDATION_CHECK(this, false, e.what());
            }
        } else {
            out = ps;
            for (int64_t i = 0; i < rank; ++i)
                if (!m_attrs.pads.empty() && static_cast<int64_t>(m_attrs.pads.size()) == 2 * rank)
                    out[i] = out[i] + (m_attrs.pads[i] + m_attrs.pads[rank + i]);
            for (int64_t ax : m_attrs.axes)
                if (ax >= 0 && ax < rank) out[ax] = ov::Dimension::dynamic();
        }
    }
    set_output_type(0, et, out);
}

std::shared_ptr<ov::Node> Resize::clone_with_new_inputs(const ov::OutputVector& new_args) const {
    return std::make_shared<Resize>(new_args, m_attrs);
}

bool Resize::visit_attributes(ov::AttributeVisitor& visitor) {
    visit_all(m_attrs, visitor);
    return true;
}

bool Resize::has_evaluate() const { return true; }

bool Resize::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    const ov::Tensor& x = inputs[0];
    rb::ResizeRuntime rt;
    size_t k = 1;
    if (m_attrs.roi == "input") {
        rt.has_roi = true;
        rt.roi = doubles(inputs[k++]);
    }
    if (m_attrs.scales == "input") {
        rt.has_scales = true;
        rt.scales = doubles(inputs[k++]);
    }
    if (m_attrs.sizes == "input") {
        rt.has_sizes = true;
        rt.sizes = int64s(inputs[k++]);
    }
    rb::ResizePlan plan;
    try {
        plan = rb::plan_resize(rb::bind_resize(m_attrs, dims(x.get_shape()), rt));
    } catch (const std::exception& e) {
        OPENVINO_THROW("ResampleBridgeResize '", get_friendly_name(), "': ", e.what());
    }
    outputs[0].set_shape(shape_of(plan.bound.out_shape));
    dispatch(x.get_element_type(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        rb::cpu::resize(static_cast<const T*>(x.data()), static_cast<T*>(outputs[0].data()), plan, 0);
    });
    return true;
}

// ------------------------------------------------------------------------------------------------------------
// GridSample

GridSample::GridSample(const ov::OutputVector& args, const rb::GridSampleAttrs& attrs) : Op(args), m_attrs(attrs) {
    constructor_validate_and_infer_types();
}

void GridSample::validate_and_infer_types() {
    NODE_VALIDATION_CHECK(this, get_input_size() == 2, "expected inputs X and grid");
    const auto et = get_input_element_type(0);
    NODE_VALIDATION_CHECK(this, float_type(et) && float_type(get_input_element_type(1)),
                          "X and grid must be f32, f16 or f64");
    try {
        rb::kind_of(m_attrs.sampler);
        rb::padding_of(m_attrs.padding);
        rb::padding_on_of(m_attrs.padding_on);
        rb::arith_of(m_attrs.arith);
        cubic_a_of(m_attrs.cubic_a);
    } catch (const std::exception& e) {
        NODE_VALIDATION_CHECK(this, false, e.what());
    }
    NODE_VALIDATION_CHECK(this, m_attrs.sampler != "nearest" || m_attrs.nearest == "half_even",
                          "GridSample nearest rounds half to even; rule '", m_attrs.nearest, "' is not implemented");
    const auto& xs = get_input_partial_shape(0);
    const auto& gs = get_input_partial_shape(1);
    ov::PartialShape out = ov::PartialShape::dynamic();
    if (xs.rank().is_static() || gs.rank().is_static()) {
        const int64_t rank = xs.rank().is_static() ? xs.rank().get_length() : gs.rank().get_length();
        const int64_t D = rank - 2;
        NODE_VALIDATION_CHECK(this, D >= 1 && D <= rb::kMaxSpatial, "GridSample supports 1 to ", rb::kMaxSpatial,
                              " spatial axes, got rank ", rank);
        NODE_VALIDATION_CHECK(this, m_attrs.spatial_rank == 0 || m_attrs.spatial_rank == D, "the op has ",
                              m_attrs.spatial_rank, " spatial axes, the input ", D);
        NODE_VALIDATION_CHECK(this, gs.rank().is_dynamic() || gs.rank().get_length() == rank,
                              "grid must have the rank of X");
        NODE_VALIDATION_CHECK(this, gs.rank().is_dynamic() || gs[rank - 1].compatible(D),
                              "grid's last axis must be ", D);
        std::vector<ov::Dimension> d(static_cast<size_t>(rank), ov::Dimension::dynamic());
        if (xs.rank().is_static()) {
            d[0] = xs[0];
            d[1] = xs[1];
        }
        if (gs.rank().is_static()) {
            ov::Dimension n = d[0];
            NODE_VALIDATION_CHECK(this, ov::Dimension::merge(d[0], n, gs[0]), "X and grid disagree on N");
            for (int64_t i = 0; i < D; ++i) d[2 + i] = gs[1 + i];
        }
        out = ov::PartialShape(d);
    }
    set_output_type(0, et, out);
}

std::shared_ptr<ov::Node> GridSample::clone_with_new_inputs(const ov::OutputVector& new_args) const {
    return std::make_shared<GridSample>(new_args, m_attrs);
}

bool GridSample::visit_attributes(ov::AttributeVisitor& visitor) {
    visit_all(m_attrs, visitor);
    return true;
}

bool GridSample::has_evaluate() const { return true; }

bool GridSample::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    const ov::Tensor& x = inputs[0];
    const ov::Tensor& grid = inputs[1];
    const auto xs = dims(x.get_shape()), gs = dims(grid.get_shape());
    const int D = static_cast<int>(xs.size()) - 2;
    if (gs.size() != xs.size() || gs.back() != D || gs[0] != xs[0])
        OPENVINO_THROW("ResampleBridgeGridSample: X ", x.get_shape(), " and grid ", grid.get_shape(),
                       " do not fit a ", D, "-D GridSample");
    rb::GridSampleSpec s;
    try {
        s = rb::make_gridsample_spec(D, xs.data(), gs.data() + 1, rb::kind_of(m_attrs.sampler),
                                     cubic_a_of(m_attrs.cubic_a), rb::padding_of(m_attrs.padding),
                                     rb::padding_on_of(m_attrs.padding_on), m_attrs.align_corners,
                                     rb::arith_of(m_attrs.arith));
    } catch (const std::exception& e) {
        OPENVINO_THROW("ResampleBridgeGridSample '", get_friendly_name(), "': ", e.what());
    }
    std::vector<int64_t> out{xs[0], xs[1]};
    out.insert(out.end(), gs.begin() + 1, gs.end() - 1);
    outputs[0].set_shape(shape_of(out));
    if (rb::element_count(out) == 0) return true;
    dispatch(x.get_element_type(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        dispatch(grid.get_element_type(), [&](auto* gtag) {
            using G = std::remove_pointer_t<decltype(gtag)>;
            rb::cpu::gridsample(s, static_cast<const T*>(x.data()), static_cast<const G*>(grid.data()),
                                static_cast<T*>(outputs[0].data()), 0);
        });
    });
    return true;
}

// ------------------------------------------------------------------------------------------------------------
// DeformConv

namespace {

std::vector<int64_t> or_default(const std::vector<int64_t>& v, size_t n, int64_t def) {
    return v.empty() ? std::vector<int64_t>(n, def) : v;
}

}  // namespace

DeformConv::DeformConv(const ov::OutputVector& args, const rb::DeformConvAttrs& attrs) : Op(args), m_attrs(attrs) {
    constructor_validate_and_infer_types();
}

void DeformConv::validate_and_infer_types() {
    const size_t n_in = 3 + m_attrs.has_bias + m_attrs.has_mask;
    NODE_VALIDATION_CHECK(this, get_input_size() == n_in, "expected ", n_in, " inputs (X, W, offset",
                          m_attrs.has_bias ? ", B" : "", m_attrs.has_mask ? ", mask" : "", "), got ", get_input_size());
    const auto et = get_input_element_type(0);
    NODE_VALIDATION_CHECK(this, float_type(et), "X must be f32, f16 or f64, got ", et);
    for (size_t i = 1; i < n_in; ++i)
        NODE_VALIDATION_CHECK(this, get_input_element_type(i).compatible(et), "input ", i, " must have X's type ", et);
    NODE_VALIDATION_CHECK(this, m_attrs.offset_layout == "group,kernel...,(d...)", "offset layout '",
                          m_attrs.offset_layout, "' is not the kernels' group,kernel...,(d...)");
    try {
        rb::kind_of(m_attrs.sampler);
        rb::border_of(m_attrs.border);
        cubic_a_of(m_attrs.cubic_a);
    } catch (const std::exception& e) {
        NODE_VALIDATION_CHECK(this, false, e.what());
    }
    const auto& xs = get_input_partial_shape(0);
    const auto& ws = get_input_partial_shape(1);
    ov::PartialShape out = ov::PartialShape::dynamic();
    if (xs.rank().is_static()) {
        const int64_t rank = xs.rank().get_length(), D = rank - 2;
        NODE_VALIDATION_CHECK(this, D >= 1 && D <= rb::kMaxSpatial, "DeformConv supports 1 to ", rb::kMaxSpatial,
                              " spatial axes, got rank ", rank);
        std::vector<ov::Dimension> d(static_cast<size_t>(rank), ov::Dimension::dynamic());
        d[0] = xs[0];
        if (ws.rank().is_static()) d[1] = ws[0];
        const auto strides = or_default(m_attrs.strides, D, 1), dil = or_default(m_attrs.dilations, D, 1),
                   pads = or_default(m_attrs.pads, 2 * D, 0);
        NODE_VALIDATION_CHECK(this, static_cast<int64_t>(strides.size()) == D &&
                                        static_cast<int64_t>(dil.size()) == D &&
                                        static_cast<int64_t>(pads.size()) == 2 * D,
                              "strides, dilations and pads must have ", D, ", ", D, " and ", 2 * D, " values");
        for (int64_t i = 0; i < D; ++i) {
            int64_t k = -1;
            if (!m_attrs.kernel_shape.empty()) k = m_attrs.kernel_shape[i];
            else if (ws.rank().is_static() && ws[2 + i].is_static()) k = ws[2 + i].get_length();
            if (k > 0 && xs[2 + i].is_static()) {
                const int64_t eff = (k - 1) * dil[i] + 1;
                const int64_t span = xs[2 + i].get_length() + pads[i] + pads[D + i] - eff;
                NODE_VALIDATION_CHECK(this, span >= 0, "output is empty on spatial axis ", i);
                d[2 + i] = span / strides[i] + 1;
            }
        }
        out = ov::PartialShape(d);
    }
    set_output_type(0, et, out);
}

std::shared_ptr<ov::Node> DeformConv::clone_with_new_inputs(const ov::OutputVector& new_args) const {
    return std::make_shared<DeformConv>(new_args, m_attrs);
}

bool DeformConv::visit_attributes(ov::AttributeVisitor& visitor) {
    visit_all(m_attrs, visitor);
    return true;
}

bool DeformConv::has_evaluate() const { return true; }

bool DeformConv::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    const auto xs = dims(inputs[0].get_shape()), ws = dims(inputs[1].get_shape());
    const int D = static_cast<int>(xs.size()) - 2;
    const ov::Tensor* b = m_attrs.has_bias ? &inputs[3] : nullptr;
    const ov::Tensor* mask = m_attrs.has_mask ? &inputs[3 + m_attrs.has_bias] : nullptr;
    rb::DeformConvSpec s;
    try {
        if (static_cast<int>(ws.size()) != D + 2) throw std::invalid_argument("W must have the rank of X");
        for (int i = 0; i < D && !m_attrs.kernel_shape.empty(); ++i)
            if (m_attrs.kernel_shape[i] != ws[2 + i]) throw std::invalid_argument("W does not have kernel_shape");
        const auto strides = or_default(m_attrs.strides, D, 1), dil = or_default(m_attrs.dilations, D, 1),
                   pads = or_default(m_attrs.pads, 2 * D, 0);
        s = rb::make_deformconv_spec(D, xs.data(), ws.data(), strides.data(), pads.data(), dil.data(), m_attrs.group,
                                     m_attrs.offset_group, rb::kind_of(m_attrs.sampler), cubic_a_of(m_attrs.cubic_a),
                                     rb::border_of(m_attrs.border));
        std::vector<int64_t> off{s.N, s.offset_group * s.K * D}, msk{s.N, s.offset_group * s.K};
        for (int i = 0; i < D; ++i) {
            off.push_back(s.out[i]);
            msk.push_back(s.out[i]);
        }
        if (dims(inputs[2].get_shape()) != off) throw std::invalid_argument("offset does not have the expected shape");
        if (mask && dims(mask->get_shape()) != msk) throw std::invalid_argument("mask does not have the expected shape");
        if (b && b->get_size() != static_cast<size_t>(s.OC)) throw std::invalid_argument("B must hold OC values");
    } catch (const std::exception& e) {
        OPENVINO_THROW("ResampleBridgeDeformConv '", get_friendly_name(), "': ", e.what());
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
    return true;
}

}  // namespace resample_bridge
