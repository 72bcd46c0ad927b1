// The extension library: the three ops for IR read/write (ov::OpExtension) and ONNX-frontend mappings of the
// custom-domain nodes resample_bridge::Resize / GridSample / DeformConv, whose attributes are the ops'.
#include <string>

#include "openvino/core/extension.hpp"
#include "openvino/core/op_extension.hpp"
#include "openvino/frontend/onnx/extension/conversion.hpp"
#include "ops.hpp"

namespace {

const char* kDomain = "resample_bridge";

// Reads the custom node's attributes into an attrs struct, through the same visit() as the OpenVINO op.
struct OnnxReader {
    const ov::frontend::NodeContext& ctx;
    void operator()(const char* n, std::string& f) const { f = ctx.get_attribute<std::string>(n, f); }
    void operator()(const char* n, bool& f) const { f = ctx.get_attribute<int64_t>(n, f ? 1 : 0) != 0; }
    void operator()(const char* n, int64_t& f) const { f = ctx.get_attribute<int64_t>(n, f); }
    void operator()(const char* n, float& f) const { f = ctx.get_attribute<float>(n, f); }
    void operator()(const char* n, std::vector<int64_t>& f) const { f = ctx.get_attribute<std::vector<int64_t>>(n, f); }
};

bool present(const ov::frontend::NodeContext& ctx, size_t i) {
    return ctx.get_input_size() > i && std::string(ctx.get_input(static_cast<int>(i)).get_node()->get_type_name()) !=
                                           "NullNode";
}

ov::OutputVector convert_resize(const ov::frontend::NodeContext& ctx) {
    rb::ResizeAttrs a;
    a.visit(OnnxReader{ctx});
    const auto& ps = ctx.get_input(0).get_partial_shape();
    if (!ctx.has_attribute("rank") && ps.rank().is_static()) a.rank = ps.rank().get_length();
    ov::OutputVector args{ctx.get_input(0)};
    const std::string* fields[] = {&a.roi, &a.scales, &a.sizes};
    const char* names[] = {"roi", "scales", "sizes"};
    for (size_t i = 0; i < 3; ++i) {
        if (*fields[i] != "input") continue;
        FRONT_END_GENERAL_CHECK(present(ctx, i + 1), "resample_bridge::Resize: ", names[i],
                                "=\"input\" but input ", i + 1, " is missing");
        args.push_back(ctx.get_input(static_cast<int>(i + 1)));
    }
    return {std::make_shared<resample_bridge::Resize>(args, a)->output(0)};
}

ov::OutputVector convert_gridsample(const ov::frontend::NodeContext& ctx) {
    rb::GridSampleAttrs a;
    a.visit(OnnxReader{ctx});
    return {std::make_shared<resample_bridge::GridSample>(ov::OutputVector{ctx.get_input(0), ctx.get_input(1)}, a)
                ->output(0)};
}

ov::OutputVector convert_deformconv(const ov::frontend::NodeContext& ctx) {
    rb::DeformConvAttrs a;
    a.visit(OnnxReader{ctx});
    // Which optional inputs exist is the node's input list (ONNX: B at 3, mask at 4), not an attribute.
    a.has_bias = present(ctx, 3);
    a.has_mask = present(ctx, 4);
    ov::OutputVector args{ctx.get_input(0), ctx.get_input(1), ctx.get_input(2)};
    if (a.has_bias) args.push_back(ctx.get_input(3));
    if (a.has_mask) args.push_back(ctx.get_input(4));
    return {std::make_shared<resample_bridge::DeformConv>(args, a)->output(0)};
}

}  // namespace

OPENVINO_CREATE_EXTENSIONS(std::vector<ov::Extension::Ptr>({
    std::make_shared<ov::OpExtension<resample_bridge::Resize>>(),
    std::make_shared<ov::OpExtension<resample_bridge::GridSample>>(),
    std::make_shared<ov::OpExtension<resample_bridge::DeformConv>>(),
    std::make_shared<ov::frontend::onnx::ConversionExtension>("Resize", kDomain, convert_resize),
    std::make_shared<ov::frontend::onnx::ConversionExtension>("GridSample", kDomain, convert_gridsample),
    std::make_shared<ov::frontend::onnx::ConversionExtension>("DeformConv", kDomain, convert_deformconv),
}));
