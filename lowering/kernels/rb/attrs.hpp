// The op attribute schema, in C++: one struct per op kind whose fields are the IR fields (semantics/ir.py),
// named as the IR names them. visit() lists them once; the OpenVINO op (AttributeVisitor), the ONNX frontend
// mapping (NodeContext attributes of the custom-domain node) and the text form used by the C ABI all go
// through it, and the C ABI lists it (rb_attribute) for the TensorRT plugin's fields. The Python side is
// semantics/schema.py FIELDS (same names, types and order); test_kernels.py compares the two through the C ABI.
//
// Exact rationals travel as text ("3/2", "-3/4"); lists of them space-separated. scales / sizes / roi hold
// "" (absent), "input" (fed at run time through the node's input 1 roi, 2 scales, 3 sizes) or the values.
// Booleans are bool in OpenVINO and 0/1 ints in ONNX.
#pragma once

#include <charconv>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "rb_kernels.h"

namespace rb {

constexpr const char* kDomain = RB_DOMAIN;
constexpr int kSchemaVersion = RB_SCHEMA_VERSION;  // also the custom ONNX domain's opset version

// Each struct also names its op: ``op_type`` (OpenVINO op, TensorRT plugin) and ``onnx_op_type`` (the
// custom-domain ONNX node), as semantics/schema.py OP_TYPES / ONNX_OP_TYPES.
struct ResizeAttrs {
    static constexpr const char* op_type = "ResampleBridgeResize";
    static constexpr const char* onnx_op_type = "Resize";
    int64_t rank = 0;
    std::vector<int64_t> axes;
    std::string scales, sizes, roi;
    std::string coord = "half_pixel";
    std::string sampler = "linear";  // semantics/schema.py's default (an absent sampler reads the same there)
    std::string nearest = "round_prefer_floor";
    std::string cubic_a = "-3/4";
    bool antialias = false;
    bool exclude_outside = false;
    float extrapolation_value = 0.0f;
    std::string aspect_policy = "stretch";
    std::string size_rule = "floor";
    std::string scale_source = "user";
    std::string formula_length = "fractional";
    std::string length1 = "minus_half";
    std::string arith = "exact";  // carried for proofs; the kernels decide ties exactly, as the oracle does
    std::vector<int64_t> pads;
    bool equal_length_identity = false;
    bool unit_scale_identity = false;
    std::string filter_stretch = "clamped";
    std::string integer_rounding = "once";

    template <class V>
    void visit(V&& v) {
        v("rank", rank);
        v("axes", axes);
        v("scales", scales);
        v("sizes", sizes);
        v("roi", roi);
        v("coord", coord);
        v("sampler", sampler);
        v("nearest", nearest);
        v("cubic_a", cubic_a);
        v("antialias", antialias);
        v("exclude_outside", exclude_outside);
        v("extrapolation_value", extrapolation_value);
        v("aspect_policy", aspect_policy);
        v("size_rule", size_rule);
        v("scale_source", scale_source);
        v("formula_length", formula_length);
        v("length1", length1);
        v("arith", arith);
        v("pads", pads);
        v("equal_length_identity", equal_length_identity);
        v("unit_scale_identity", unit_scale_identity);
        v("filter_stretch", filter_stretch);
        v("integer_rounding", integer_rounding);
    }
};

struct GridSampleAttrs {
    static constexpr const char* op_type = "ResampleBridgeGridSample";
    static constexpr const char* onnx_op_type = "GridSample";
    int64_t spatial_rank = 0;  // 0: taken from X
    std::string sampler = "linear";
    std::string nearest = "half_even";
    std::string cubic_a = "-3/4";
    std::string padding = "zeros";
    bool align_corners = false;
    std::string padding_on = "coordinate_and_taps";
    std::string arith = "fp32";

    template <class V>
    void visit(V&& v) {
        v("spatial_rank", spatial_rank);
        v("sampler", sampler);
        v("nearest", nearest);
        v("cubic_a", cubic_a);
        v("padding", padding);
        v("align_corners", align_corners);
        v("padding_on", padding_on);
        v("arith", arith);
    }
};

struct DeformConvAttrs {
    static constexpr const char* op_type = "ResampleBridgeDeformConv";
    static constexpr const char* onnx_op_type = "DeformConv";
    std::vector<int64_t> kernel_shape;  // empty: from W
    std::vector<int64_t> strides, pads, dilations;
    int64_t group = 1;
    int64_t offset_group = 1;
    std::string sampler = "linear";
    std::string cubic_a = "-3/4";
    std::string border = "zero_taps";
    std::string offset_layout = "group,kernel...,(d...)";
    bool has_bias = false;  // which optional inputs follow offset (ONNX: B, mask)
    bool has_mask = false;

    template <class V>
    void visit(V&& v) {
        v("kernel_shape", kernel_shape);
        v("strides", strides);
        v("pads", pads);
        v("dilations", dilations);
        v("group", group);
        v("offset_group", offset_group);
        v("sampler", sampler);
        v("cubic_a", cubic_a);
        v("border", border);
        v("offset_layout", offset_layout);
        v("has_bias", has_bias);
        v("has_mask", has_mask);
    }
};

// f(Attrs{}) for the C ABI's op index (0 resize, 1 gridsample, 2 deformconv); false past the end.
template <class F>
bool with_attrs(int op, F&& f) {
    switch (op) {
        case 0: f(ResizeAttrs{}); return true;
        case 1: f(GridSampleAttrs{}); return true;
        case 2: f(DeformConvAttrs{}); return true;
        default: return false;
    }
}

// The attribute types of the schema (semantics/schema.py ATTRIBUTE_TYPES, in this order).
enum class AttrType : int32_t { INT = 0, FLOAT = 1, STRING = 2, INTS = 3 };

struct AttrField {
    const char* name;
    AttrType type;
    std::string default_text;  // the value read when the attribute is absent, in the text form (TextReader's)
};

// Lists a default-constructed struct's fields: names, types and defaults.
struct FieldLister {
    std::vector<AttrField> out;
    void operator()(const char* n, std::string& f) { out.push_back({n, AttrType::STRING, f}); }
    void operator()(const char* n, bool& f) { out.push_back({n, AttrType::INT, f ? "1" : "0"}); }
    void operator()(const char* n, int64_t& f) { out.push_back({n, AttrType::INT, std::to_string(f)}); }
    void operator()(const char* n, float& f) {
        char buf[32];  // printf's %g: 6 significant digits
        const auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::general, 6);
        out.push_back({n, AttrType::FLOAT, std::string(buf, r.ptr)});
    }
    void operator()(const char* n, std::vector<int64_t>& f) {
        std::string s;
        for (size_t i = 0; i < f.size(); ++i) s += (i ? " " : "") + std::to_string(f[i]);
        out.push_back({n, AttrType::INTS, s});
    }
};

template <class Attrs>
std::vector<AttrField> attribute_fields() {
    Attrs a;
    FieldLister l;
    a.visit(l);
    return l.out;
}

// ------------------------------------------------------------------------------------------------------------
// Vocabulary strings -> enums (the IR's tuples, in order; see common.hpp).

// The fields, in rb_vocabulary()'s numbering.
enum VocabField : int { kKindField = 0, kNearestField, kPaddingField, kPaddingOnField, kArithField, kBorderField };

inline const char* const* vocabulary(int field) {
    static const char* kind[] = {"nearest", "linear", "cubic", nullptr};
    static const char* nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "half_even",
                                    "simple", nullptr};
    static const char* padding[] = {"zeros", "border", "reflection", nullptr};
    static const char* padding_on[] = {"coordinate_and_taps", "taps", nullptr};
    static const char* arith[] = {"exact", "fp64", "fp32", "fp32_fused", nullptr};
    static const char* border[] = {"zero_taps", "clamp_in_range", nullptr};
    static const char* const* fields[] = {kind, nearest, padding, padding_on, arith, border};
    return field >= 0 && field < 6 ? fields[field] : nullptr;
}

// How many names a vocabulary field has: the largest valid code plus one.
inline int32_t vocabulary_size(int field) {
    int32_t n = 0;
    for (const char* const* names = vocabulary(field); names && names[n];) ++n;
    return n;
}

template <class E>
E enum_of(int field, const std::string& name, const char* what) {
    const char* const* names = vocabulary(field);
    std::string allowed;
    for (int i = 0; names[i]; ++i) {
        if (name == names[i]) return static_cast<E>(i);
        allowed += std::string(i ? ", " : "") + names[i];
    }
    throw std::invalid_argument(std::string(what) + " '" + name + "' is not one of " + allowed);
}

inline Kind kind_of(const std::string& s) { return enum_of<Kind>(kKindField, s, "sampler"); }
inline Nearest nearest_of(const std::string& s) { return enum_of<Nearest>(kNearestField, s, "nearest"); }
inline Padding padding_of(const std::string& s) { return enum_of<Padding>(kPaddingField, s, "padding"); }
inline PaddingOn padding_on_of(const std::string& s) { return enum_of<PaddingOn>(kPaddingOnField, s, "padding_on"); }
inline Arith arith_of(const std::string& s) { return enum_of<Arith>(kArithField, s, "arith"); }
inline DeformBorder border_of(const std::string& s) { return enum_of<DeformBorder>(kBorderField, s, "border"); }

// ------------------------------------------------------------------------------------------------------------
// The text form "name=value\n..." (lists space-separated; bools 0/1): how the C ABI receives attributes.

// Numbers of the text form through std::from_chars, not iostreams: a library built against a static
// libstdc++ (an H100 host's toolchain did that) crashed inside istream's locale facets beside the process's own
// libstdc++ (AddressSanitizer: codecvt::do_unshift from istream::operator>>), and from_chars reads a decimal
// point whatever the C locale says. Space-separated; anything else is an error naming the attribute.
template <class T>
std::vector<T> text_numbers(const char* name, const std::string& s) {
    std::vector<T> out;
    const char *p = s.data(), *end = p + s.size();
    for (;;) {
        while (p < end && *p == ' ') ++p;
        if (p == end) return out;
        T v{};
        const auto r = std::from_chars(p, end, v);
        if (r.ec != std::errc() || (r.ptr < end && *r.ptr != ' '))
            throw std::invalid_argument(std::string("attribute ") + name + " = '" + s + "' is not a list of numbers");
        out.push_back(v);
        p = r.ptr;
    }
}

template <class T>
T text_number(const char* name, const std::string& s) {
    const std::vector<T> v = text_numbers<T>(name, s);
    if (v.size() != 1) throw std::invalid_argument(std::string("attribute ") + name + " = '" + s + "' is not a number");
    return v[0];
}

struct TextReader {
    std::map<std::string, std::string> values;
    void operator()(const char* name, std::string& f) const {
        auto it = values.find(name);
        if (it != values.end()) f = it->second;
    }
    void operator()(const char* name, bool& f) const {
        auto it = values.find(name);
        if (it != values.end()) f = it->second == "1" || it->second == "true";
    }
    void operator()(const char* name, int64_t& f) const {
        auto it = values.find(name);
        if (it != values.end()) f = text_number<int64_t>(name, it->second);
    }
    void operator()(const char* name, float& f) const {
        auto it = values.find(name);
        if (it != values.end()) f = text_number<float>(name, it->second);
    }
    void operator()(const char* name, std::vector<int64_t>& f) const {
        auto it = values.find(name);
        if (it != values.end()) f = text_numbers<int64_t>(name, it->second);
    }
};

// "name=value" lines as a map; a line without '=' is skipped.
inline std::map<std::string, std::string> text_values(const std::string& text) {
    std::map<std::string, std::string> values;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const auto eq = text.find('=', start);
        if (eq < end) values[text.substr(start, eq - start)] = text.substr(eq + 1, end - eq - 1);
        start = end + 1;
    }
    return values;
}

template <class Attrs>
Attrs attrs_from_text(const std::string& text) {
    const TextReader r{text_values(text)};
    Attrs a;
    a.visit(r);
    return a;
}

}  // namespace rb
