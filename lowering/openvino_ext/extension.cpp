// The extension library: the three ops for IR read/write (ov::OpExtension) and ONNX-frontend mappings of the
// custom-domain nodes resample_bridge::Resize / GridSample / DeformConv, whose attributes are the ops'.
#include <link.h>

#include <string>
#include <vector>

#include "openvino/core/extension.hpp"
#include "openvino/core/op_extension.hpp"
#include "openvino/core/version.hpp"
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

// The release this library was compiled against, "2026.4.1": an op's layout and the plugin's calls into it are
// that release's, so loading into another one is refused here, in one line naming both, instead of crashing.
std::string built_for() {
    return std::to_string(OPENVINO_VERSION_MAJOR) + "." + std::to_string(OPENVINO_VERSION_MINOR) + "." +
           std::to_string(OPENVINO_VERSION_PATCH);
}

// libopenvino.so.<suffix> of this release: "2641" for 2026.4.1 (the wheel's soname).
std::string soname_suffix() {
    return std::to_string(OPENVINO_VERSION_MAJOR % 100) + std::to_string(OPENVINO_VERSION_MINOR) +
           std::to_string(OPENVINO_VERSION_PATCH);
}

// The suffixes of every libopenvino.so.<suffix> in the process: another release's core loaded beside ours (a
// library path that reaches this release's libraries from another release's process) means two OpenVINOs.
int collect_cores(struct dl_phdr_info* info, size_t, void* data) {
    const std::string name = info->dlpi_name ? info->dlpi_name : "";
    const std::string key = "libopenvino.so.";
    const size_t at = name.rfind(key);
    if (at != std::string::npos && (at == 0 || name[at - 1] == '/')) {
        static_cast<std::vector<std::string>*>(data)->push_back(name.substr(at + key.size()));
    }
    return 0;
}

std::string release_of(const std::string& suffix) {  // "2541" -> "2025.4.1"
    if (suffix.size() != 4) return "libopenvino.so." + suffix;
    return "20" + suffix.substr(0, 2) + "." + suffix.substr(2, 1) + "." + suffix.substr(3);
}

void check_release() {
    const std::string running = ov::get_openvino_version().buildNumber;  // "2026.4.1-22982-..."
    const std::string want = built_for();
    std::string other;
    if (running.compare(0, want.size(), want) != 0 ||
        (running.size() > want.size() && running[want.size()] != '-')) {
        other = running.substr(0, running.find('-'));
    }
    std::vector<std::string> cores;
    dl_iterate_phdr(collect_cores, &cores);
    for (const auto& c : cores)
        if (other.empty() && c != soname_suffix()) other = release_of(c);
    if (!other.empty()) {
        OPENVINO_THROW("the resample-bridge extension was built for OpenVINO ", want, " and is loaded into OpenVINO ",
                       other, ": convert the model again with the OpenVINO release that runs it");
    }
}

std::vector<ov::Extension::Ptr> extensions() {
    check_release();
    std::vector<ov::Extension::Ptr> out;
    add<rb::ResizeAttrs>(out);
    add<rb::GridSampleAttrs>(out);
    add<rb::DeformConvAttrs>(out);
    return out;
}

}  // namespace

OPENVINO_CREATE_EXTENSIONS(extensions());
