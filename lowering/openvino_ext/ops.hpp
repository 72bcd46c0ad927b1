// OpenVINO ops over the shared kernels: one ov::op::Op per op kind, attributes = the IR fields
// (../kernels/rb/attrs.hpp), evaluate = the CPU launcher. Dynamic shapes: the output shape is set in evaluate
// (and inferred ahead where the shapes are static).
#pragma once

#include <memory>

#include "openvino/op/op.hpp"
#include "rb/attrs.hpp"

namespace resample_bridge {

// Resize inputs: X, then roi, scales, sizes for each of those attributes set to "input", in that order.
class Resize : public ov::op::Op {
public:
    OPENVINO_OP("ResampleBridgeResize", "resample_bridge");
    Resize() = default;
    Resize(const ov::OutputVector& args, const rb::ResizeAttrs& attrs);
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& new_args) const override;
    bool visit_attributes(ov::AttributeVisitor& visitor) override;
    bool has_evaluate() const override;
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;
    const rb::ResizeAttrs& attrs() const { return m_attrs; }

private:
    rb::ResizeAttrs m_attrs;
};

// GridSample inputs: X [N, C, spatial...], grid [N, out..., D]; 1 to 3 spatial axes.
class GridSample : public ov::op::Op {
public:
    OPENVINO_OP("ResampleBridgeGridSample", "resample_bridge");
    GridSample() = default;
    GridSample(const ov::OutputVector& args, const rb::GridSampleAttrs& attrs);
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& new_args) const override;
    bool visit_attributes(ov::AttributeVisitor& visitor) override;
    bool has_evaluate() const override;
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;

private:
    rb::GridSampleAttrs m_attrs;
};

// DeformConv inputs (ONNX order): X, W, offset, then B if has_bias, then mask if has_mask.
class DeformConv : public ov::op::Op {
public:
    OPENVINO_OP("ResampleBridgeDeformConv", "resample_bridge");
    DeformConv() = default;
    DeformConv(const ov::OutputVector& args, const rb::DeformConvAttrs& attrs);
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& new_args) const override;
    bool visit_attributes(ov::AttributeVisitor& visitor) override;
    bool has_evaluate() const override;
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;

private:
    rb::DeformConvAttrs m_attrs;
};

}  // namespace resample_bridge
