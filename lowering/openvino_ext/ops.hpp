// OpenVINO ops over the shared kernels: one ov::op::Op shell for every op kind, whose attributes are the IR
// fields (../kernels/rb/attrs.hpp, type name Attrs::op_type) and whose shape inference and evaluate (the CPU
// launcher) are the overloads below. Dynamic shapes: the output shape is set in evaluate (and inferred ahead
// where the shapes are static).
#pragma once

#include <memory>
#include <mutex>

#include "openvino/op/op.hpp"
#include "rb/attrs.hpp"

namespace resample_bridge {

// Per op kind, in ops.cpp: check the inputs and set the output type (validate_and_infer_types), and run.
void infer_output(ov::Node& op, const rb::ResizeAttrs& a);
void infer_output(ov::Node& op, const rb::GridSampleAttrs& a);
void infer_output(ov::Node& op, const rb::DeformConvAttrs& a);
void run(const ov::Node& op, const rb::ResizeAttrs& a, ov::TensorVector& outputs, const ov::TensorVector& inputs);
void run(const ov::Node& op, const rb::GridSampleAttrs& a, ov::TensorVector& outputs, const ov::TensorVector& inputs);
void run(const ov::Node& op, const rb::DeformConvAttrs& a, ov::TensorVector& outputs, const ov::TensorVector& inputs);

// The last value derived from an op's input shapes and run-time values, replaced whole (a reader keeps the one it
// took).
class MemoSlot {
public:
    template <class T>
    std::shared_ptr<const T> get() const {
        std::lock_guard<std::mutex> lock(m_mutex);
        return std::static_pointer_cast<const T>(m_value);
    }
    void set(std::shared_ptr<const void> value) {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_value = std::move(value);
    }

private:
    mutable std::mutex m_mutex;
    std::shared_ptr<const void> m_value;
};

// An op's memos, shared with its clones, so that repeated inferences on the same shapes rebuild nothing:
// * shape: what shape inference derived (Resize: the bound output shape). Where a length is known only at run
//   time, OpenVINO's CPU plugin infers a custom op's output shape by cloning and validating the clone at every
//   call (its shape-inference fallback); binding a Resize afresh there took 1.3-4 us of a call.
// * plan: what evaluate derived (Resize: the bound plan with its tap tables).
struct Memos {
    MemoSlot shape, plan;
};

template <class Attrs>
class BridgeOp : public ov::op::Op {
public:
    OPENVINO_OP(Attrs::op_type, rb::kDomain);
    BridgeOp() = default;
    BridgeOp(const ov::OutputVector& args, const Attrs& attrs,
             std::shared_ptr<Memos> memos = std::make_shared<Memos>())
        : ov::op::Op(args), m_attrs(attrs), m_memos(std::move(memos)) {
        constructor_validate_and_infer_types();
    }
    void validate_and_infer_types() override { infer_output(*this, m_attrs); }
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& new_args) const override {
        return std::make_shared<BridgeOp>(new_args, m_attrs, m_memos);  // same attributes: the same memos
    }
    bool visit_attributes(ov::AttributeVisitor& visitor) override {
        m_attrs.visit([&](const char* name, auto& field) { visitor.on_attribute(name, field); });
        m_memos = std::make_shared<Memos>();  // a visitor may have set the attributes
        return true;
    }
    bool has_evaluate() const override { return true; }
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override {
        run(*this, m_attrs, outputs, inputs);
        return true;
    }
    const Attrs& attrs() const { return m_attrs; }
    Memos& memos() const { return *m_memos; }

private:
    Attrs m_attrs;
    std::shared_ptr<Memos> m_memos = std::make_shared<Memos>();
};

// Resize inputs: X, then roi, scales, sizes for each of those attributes set to "input", in that order.
using Resize = BridgeOp<rb::ResizeAttrs>;
// GridSample inputs: X [N, C, spatial...], grid [N, out..., D]; 1 to 3 spatial axes.
using GridSample = BridgeOp<rb::GridSampleAttrs>;
// DeformConv inputs (ONNX order): X, W, offset, then B if has_bias, then mask if has_mask.
using DeformConv = BridgeOp<rb::DeformConvAttrs>;

}  // namespace resample_bridge
