// The extension library's ops for IR read/write (ov::OpExtension) and ONNX-frontend mappings of the custom-domain
// nodes resample_bridge::Resize / GridSample / DeformConv, whose attributes are the ops'. Compiled once per x86
// level where the library dispatches (CMakeLists.txt); entry.cpp picks one at load.
#include <string>
#include <vector>

#include "openvino/core/extension.hpp"
#include "openvino/core/op_extension.hpp"
#include "openvino/frontend/onnx/extension/conversion.hpp"
#include "ops.hpp"

namespace {

using ov::frontend::NodeContext;

// Reads the custom node's attributes into an attrs struct, through the same visit() as the OpenVINO op.
struct OnnxReader {
    const NodeContext& ctx;
    void operator()(const char* n, std::string& f) const { f = ctx.get_attribute<std::string>(n, f); }
    void operator()(const char* n, bool& f) const { f = ctx.get_attribute<int64_t>(n, f ? 1 : 0) != 0; }
    void operator()(const char* n, int64_t& f) const { f = ctx.get_attribute<int64_t>(n, f); }
    void operator()(const char* n, float& f) const { f = ctx.get_attribute<float>(n, f); }
    void operator()(const char* n, std::vector<int64_t>& f) const { f = ctx.get_attribute<std::vector<int64_t>>(n, f); }
};

bool present(const NodeContext& ctx, size_t i) {
    return ctx.get_input_size() > i && std::string(ctx.get_input(static_cast<int>(i)).get_node()->get_type_name()) !=
                                           "NullNode";
}

// The op's inputs from the node's (see ops.hpp), completing attributes the node's inputs decide.
ov::OutputVector op_inputs(const NodeContext& ctx, rb::ResizeAttrs& a) {
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
    return args;
}

ov::OutputVector op_inputs(const NodeContext& ctx, rb::GridSampleAttrs&) {
    return {ctx.get_input(0), ctx.get_input(1)};
}

ov::OutputVector op_inputs(const NodeContext& ctx, rb::DeformConvAttrs& a) {
    // Which optional inputs exist is the node's input list (ONNX: B at 3, mask at 4), not an attribute.
    a.has_bias = present(ctx, 3);
    a.has_mask = present(ctx, 4);
    ov::OutputVector args{ctx.get_input(0), ctx.get_input(1), ctx.get_input(2)};
    if (a.has_bias) args.push_back(ctx.get_input(3));
    if (a.has_mask) args.push_back(ctx.get_input(4));
    return args;
}

template <class Attrs>
ov::OutputVector convert(const NodeContext& ctx) {
    Attrs a;
    a.visit(OnnxReader{ctx});
    const ov::OutputVector args = op_inputs(ctx, a);
    return {std::make_shared<resample_bridge::BridgeOp<Attrs>>(args, a)->output(0)};
}

template <class Attrs>
void add(std::vector<ov::Extension::Ptr>& out) {
    out.push_back(std::make_shared<ov::OpExtension<resample_bridge::BridgeOp<Attrs>>>());
    out.push_back(std::make_shared<ov::frontend::onnx::ConversionExtension>(Attrs::onnx_op_type, rb::kDomain,
                                                                            convert<Attrs>));
}

}  // namespace

// This copy's extensions, appended to *out (a std::vector<ov::Extension::Ptr>): entry.cpp calls the copy
// compiled for this CPU's x86 level (C linkage: the isolated copies' names are this one with a prefix).
extern "C" void rb_isa_extensions(void* out) {
    auto& v = *static_cast<std::vector<ov::Extension::Ptr>*>(out);
    add<rb::ResizeAttrs>(v);
    add<rb::GridSampleAttrs>(v);
    add<rb::DeformConvAttrs>(v);
}
