// Output lengths and per-axis coordinate maps for a concrete input shape: the C++ port of
// semantics/coords.py bind_resize / output_length / affine / BoundAxis.is_identity (that module is the one truth;
// tests/lowering/test_kernels.py binds the same IR values through both and requires equal lengths and equal
// exact maps a, b). Exact rationals throughout; a value that does not fit 128-bit rationals is refused.
// Used where the shape or the scales are only known at run time (the OpenVINO op's evaluate).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "attrs.hpp"
#include "fixed_point.hpp"
#include "rational.hpp"
#include "taps.hpp"

namespace rb {

struct ResizeRuntime {  // values fed at run time (the node's inputs), only read for fields set to "input"
    bool has_roi = false, has_scales = false, has_sizes = false;
    std::vector<double> roi, scales;
    std::vector<int64_t> sizes;
};

struct BoundResize {
    std::vector<int64_t> in_shape, out_shape;
    std::vector<AxisSpec> axes;  // non-identity axes in the op's order, then padded-only axes
    std::vector<int64_t> pads;   // zeros added first (begins then ends), empty = none
    ResizeSampler sampler;
    double extrapolation_value = 0.0;
    bool fixed_point = false;  // integer_rounding q22_per_axis on an antialias linear / cubic (uint8: fixed_point.hpp)
    std::string coord;
};

inline std::invalid_argument bind_error(const std::string& field, const std::string& msg) {
    return std::invalid_argument("field '" + field + "': " + msg);
}

inline Rat checked(const Rat& r, const std::string& field) {
    if (g_rat_overflow) throw bind_error(field, "the value does not fit 128-bit exact rationals");
    return r;
}

// "p/q" or "p" -> exact rational.
inline Rat parse_rat(const std::string& s, const std::string& field) {
    const auto slash = s.find('/');
    auto parse_int = [&](const std::string& t) {
        if (t.empty()) throw bind_error(field, "'" + s + "' is not a fraction");
        i128 v = 0;
        size_t i = 0;
        bool neg = false;
        if (t[0] == '-' || t[0] == '+') {
            neg = t[0] == '-';
            i = 1;
        }
        if (i == t.size()) throw bind_error(field, "'" + s + "' is not a fraction");
        for (; i < t.size(); ++i) {
            if (t[i] < '0' || t[i] > '9') throw bind_error(field, "'" + s + "' is not a fraction");
            v = add_checked(mul_checked(v, 10), t[i] - '0');
        }
        return neg ? -v : v;
    };
    g_rat_overflow = false;
    const i128 num = parse_int(s.substr(0, slash));
    const i128 den = slash == std::string::npos ? 1 : parse_int(s.substr(slash + 1));
    if (den == 0) throw bind_error(field, "'" + s + "' has a zero denominator");
    return checked(Rat::of(num, den), field);
}

inline std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && s[i] == ' ') ++i;
        size_t j = i;
        while (j < s.size() && s[j] != ' ') ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

inline int64_t round_half_up(const Rat& x) { return floor_of(x + half_of<Rat>()); }

// coords.output_length.
inline int64_t output_length(int64_t L, const Rat& scale, const std::string& rule) {
    if (rule == "floor") return floor_of(Rat(L) * scale);
    if (rule == "round") {  // half to even, as Fraction.__round__
        const Rat x = Rat(L) * scale;
        const int64_t fl = floor_of(x);
        const Rat frac = x - Rat(fl);
        if (frac < half_of<Rat>()) return fl;
        if (frac > half_of<Rat>()) return fl + 1;
        return fl % 2 == 0 ? fl : fl + 1;
    }
    if (rule == "floor_eps") {  // OpenVINO: float32(L) * float32(s + 1e-6f), truncated; L itself when s == 1
        if (scale == Rat(1)) return L;
        const float s32 = static_cast<float>(scale.to_double());
        const float eps = static_cast<float>(1e-6);
        const float prod = static_cast<float>(L) * static_cast<float>(s32 + eps);
        return static_cast<int64_t>(prod);
    }
    if (rule == "floor_fp32") {  // onnxruntime: float32(s) * L in float32, truncated
        const float prod = static_cast<float>(scale.to_double()) * static_cast<float>(L);
        return static_cast<int64_t>(prod);
    }
    if (rule == "floor_fp64") {  // PyTorch: the float64 product L * s, truncated
        return static_cast<int64_t>(std::floor(static_cast<double>(L) * scale.to_double()));
    }
    throw bind_error("size_rule", "unknown size rule '" + rule + "'");
}

// coords.affine: (a, b) with src = a*dst + b.
inline void affine(const std::string& coord, int64_t in_len, int64_t out_len, const Rat& scale,
                   const Rat& formula_len, const Rat* roi, const std::string& length1, Rat& a, Rat& b) {
    const Rat inv = Rat(1) / scale;
    const Rat one(1), two(2);
    if (coord == "asymmetric") {
        a = inv;
        b = Rat(0);
    } else if (coord == "half_pixel") {
        a = inv;
        b = (inv - one) / two;
    } else if (coord == "tf_half_pixel_for_nn") {
        a = inv;
        b = inv / two;
    } else if (coord == "pytorch_half_pixel") {
        if (formula_len == one) {
            a = Rat(0);
            b = length1 == "minus_half" ? Rat::of(-1, 2) : Rat(0);
        } else {
            a = inv;
            b = (inv - one) / two;
        }
    } else if (coord == "half_pixel_symmetric") {
        const Rat offset = formula_len != Rat(0)
                               ? Rat::of(in_len, 2) * (one - Rat(out_len) / formula_len)
                               : Rat(0);
        a = inv;
        b = offset + (inv - one) / two;
    } else if (coord == "align_corners") {
        if (formula_len == one) {
            a = Rat(0);
            b = Rat(0);
        } else {
            a = Rat(in_len - 1) / (formula_len - one);
            b = Rat(0);
        }
    } else if (coord == "tf_crop_and_resize") {
        const Rat r0 = roi[0], r1 = roi[1];
        const Rat L1(in_len - 1);
        if (formula_len == one) {
            a = Rat(0);
            b = (r1 - r0) * L1 / two + r0 * L1;
        } else {
            a = (r1 - r0) * L1 / (formula_len - one);
            b = r0 * L1;
        }
    } else {
        throw bind_error("coord", "unknown coordinate mode '" + coord + "'");
    }
}

// BoundAxis.is_identity.
inline bool is_identity(const AxisSpec& ax, bool exclude_outside, int64_t pb, int64_t pe) {
    if (ax.has_valid || ax.in_len != ax.out_len || pb || pe) return false;
    if (ax.in_len == 1 && !exclude_outside) return true;
    return ax.a.rat() == Rat(1) && ax.b.rat() == Rat(0);
}

inline BoundResize bind_resize(const ResizeAttrs& ir, const std::vector<int64_t>& in_shape,
                               const ResizeRuntime& rt = ResizeRuntime()) {
    const int64_t rank = static_cast<int64_t>(in_shape.size());
    if (ir.rank != rank)
        throw bind_error("X", "input has rank " + std::to_string(rank) + ", the op expects " + std::to_string(ir.rank));
    const size_t n = ir.axes.size();
    for (int64_t ax : ir.axes)
        if (ax < 0 || ax >= rank) throw bind_error("axes", "axis " + std::to_string(ax) + " is out of range");
    g_rat_overflow = false;

    // scales / sizes / roi: static text, or the run-time values.
    auto rats = [&](const std::string& text, bool has_rt, const std::vector<double>& values, const std::string& field) {
        std::vector<Rat> out;
        if (text == "input") {
            if (!has_rt || values.empty())
                throw bind_error(field, field + " is fed at run time; a value is needed to bind it");
            for (double v : values) out.push_back(checked(Rat::from_double(v), field));
        } else {
            for (const auto& w : words(text)) out.push_back(parse_rat(w, field));
        }
        return out;
    };
    const bool has_scales = !ir.scales.empty(), has_sizes = !ir.sizes.empty();
    const std::vector<Rat> scales = rats(ir.scales, rt.has_scales, rt.scales, "scales");
    std::vector<int64_t> sizes;
    if (ir.sizes == "input") {
        if (!rt.has_sizes || rt.sizes.empty())
            throw bind_error("sizes", "sizes is fed at run time; a value is needed to bind it");
        sizes = rt.sizes;
    } else {
        sizes = text_numbers<int64_t>("sizes", ir.sizes);
    }
    std::vector<Rat> roi;
    if (ir.coord == "tf_crop_and_resize") roi = rats(ir.roi, rt.has_roi, rt.roi, "roi");
    if (has_scales) {
        if (scales.size() != n)
            throw bind_error("scales", "scales has " + std::to_string(scales.size()) + " values, expected " +
                                           std::to_string(n));
        for (const Rat& s : scales)
            if (!(Rat(0) < s)) throw bind_error("scales", "scale " + std::to_string(s.to_double()) + " is not positive");
    }
    if (has_sizes) {
        if (sizes.size() != n)
            throw bind_error("sizes", "sizes has " + std::to_string(sizes.size()) + " values, expected " +
                                          std::to_string(n));
        for (int64_t s : sizes)
            if (s < 0) throw bind_error("sizes", "size " + std::to_string(s) + " is negative");
    }
    if (ir.coord == "tf_crop_and_resize" && roi.size() != 2 * n)
        throw bind_error("roi", "roi has " + std::to_string(roi.size()) + " values, expected " + std::to_string(2 * n));

    BoundResize out;
    out.in_shape = in_shape;
    const std::vector<int64_t>& pads = ir.pads;
    if (!pads.empty()) {
        if (static_cast<int64_t>(pads.size()) != 2 * rank)
            throw bind_error("pads", "pads must be " + std::to_string(2 * rank) + " non-negative values");
        for (int64_t p : pads)
            if (p < 0) throw bind_error("pads", "pads must be " + std::to_string(2 * rank) + " non-negative values");
        out.pads = pads;
    }
    std::vector<int64_t> shape_p(in_shape);
    if (!pads.empty())
        for (int64_t i = 0; i < rank; ++i) shape_p[i] += pads[i] + pads[rank + i];
    std::vector<int64_t> lens;
    for (int64_t ax : ir.axes) lens.push_back(shape_p[ax]);

    std::vector<int64_t> olen(n);
    std::vector<Rat> used(n), flen(n);
    if (has_sizes) {
        if (ir.aspect_policy == "stretch") {
            for (size_t i = 0; i < n; ++i) {
                olen[i] = sizes[i];
                used[i] = lens[i] ? Rat::of(sizes[i], lens[i]) : Rat(1);
            }
        } else {
            if (ir.aspect_policy != "not_larger" && ir.aspect_policy != "not_smaller")
                throw bind_error("aspect_policy", "unknown policy '" + ir.aspect_policy + "'");
            Rat s;
            for (size_t i = 0; i < n; ++i) {
                if (!lens[i]) throw bind_error("sizes", "keep_aspect_ratio_policy needs non-empty input axes");
                const Rat r = Rat::of(sizes[i], lens[i]);
                if (i == 0 || (ir.aspect_policy == "not_larger" ? r < s : s < r)) s = r;
            }
            for (size_t i = 0; i < n; ++i) {
                used[i] = s;
                olen[i] = round_half_up(s * Rat(lens[i]));
            }
        }
        for (size_t i = 0; i < n; ++i)
            flen[i] = (ir.aspect_policy == "stretch" || ir.formula_length == "integer") ? Rat(olen[i])
                                                                                       : used[i] * Rat(lens[i]);
    } else if (has_scales) {
        for (size_t i = 0; i < n; ++i) {
            olen[i] = output_length(lens[i], scales[i], ir.size_rule);
            if (ir.scale_source == "user") used[i] = scales[i];
            else if (ir.scale_source == "ratio") used[i] = olen[i] ? Rat::of(olen[i], lens[i]) : scales[i];
            else throw bind_error("scale_source", "unknown scale source '" + ir.scale_source + "'");
            if (ir.formula_length == "fractional") flen[i] = scales[i] * Rat(lens[i]);
            else if (ir.formula_length == "integer") flen[i] = Rat(olen[i]);
            else throw bind_error("formula_length", "unknown formula length '" + ir.formula_length + "'");
        }
    } else if (n != 0) {  // no resized axis (an identity the importer kept): the output is the input
        throw bind_error("scales", "neither scales nor sizes is given");
    }
    checked(Rat(0), "scales");

    bool any_down = false;
    for (const Rat& u : used) any_down = any_down || u < Rat(1);
    if (ir.filter_stretch != "clamped" && ir.filter_stretch != "unclamped" && ir.filter_stretch != "any_down")
        throw bind_error("filter_stretch", "unknown filter stretch '" + ir.filter_stretch + "'");
    const bool unclamped = ir.filter_stretch == "unclamped" || (ir.filter_stretch == "any_down" && any_down);

    out.sampler.kind = kind_of(ir.sampler);
    out.sampler.antialias = ir.antialias;
    out.sampler.exclude_outside = ir.exclude_outside;
    if (out.sampler.kind == Kind::cubic) out.sampler.cubic_a = Number::of(parse_rat(ir.cubic_a, "cubic_a"));
    out.extrapolation_value = ir.extrapolation_value;
    if (ir.integer_rounding != "once" && ir.integer_rounding != "q22_per_axis")
        throw bind_error("integer_rounding", "unknown integer rounding '" + ir.integer_rounding + "'");
    out.fixed_point = ir.integer_rounding == "q22_per_axis" && ir.antialias && out.sampler.kind != Kind::nearest;
    out.coord = ir.coord;
    const Nearest rule = out.sampler.kind == Kind::nearest ? nearest_of(ir.nearest) : Nearest::round_prefer_floor;

    out.out_shape = shape_p;
    const bool crop = ir.coord == "tf_crop_and_resize";
    for (size_t i = 0; i < n; ++i) {
        const int64_t axis = ir.axes[i];
        out.out_shape[axis] = olen[i];
        if (olen[i] < 0) throw bind_error("sizes", "output length " + std::to_string(olen[i]) + " is negative");
        const bool copy = (ir.equal_length_identity && olen[i] == lens[i]) ||
                          (ir.unit_scale_identity && has_scales && !has_sizes && scales[i] == Rat(1));
        Rat a(1), b(0);
        if (!(olen[i] == 0 || lens[i] == 0 || copy)) {
            Rat axis_roi[2];  // (start, end) of this axis
            if (crop) {
                axis_roi[0] = roi[i];
                axis_roi[1] = roi[n + i];
            }
            affine(ir.coord, lens[i], olen[i], used[i], flen[i], axis_roi, ir.length1, a, b);
        }
        checked(a, "coord");
        AxisSpec ax;
        ax.axis = axis;
        ax.in_len = lens[i];
        ax.out_len = olen[i];
        ax.a = Number::of(a);
        ax.b = Number::of(b);
        ax.filter_scale = Number::of(copy ? Rat(1) : used[i]);
        ax.nearest = rule == Nearest::simple ? (used[i] < Rat(1) ? Nearest::ceil : Nearest::floor) : rule;
        ax.stretch_clamp = !unclamped;
        ax.has_valid = crop && !copy;
        ax.scale32 = static_cast<float>((copy ? Rat(1) : used[i]).to_double());  // float32 values, or out / in
        if (crop) {
            ax.roi0 = static_cast<float>(roi[i].to_double());
            ax.roi1 = static_cast<float>(roi[n + i].to_double());
        }
        const int64_t pb = pads.empty() ? 0 : pads[axis], pe = pads.empty() ? 0 : pads[rank + axis];
        if (!is_identity(ax, ir.exclude_outside, pb, pe)) out.axes.push_back(ax);
    }
    for (int64_t axis = 0; axis < rank && !pads.empty(); ++axis) {
        bool resized = false;
        for (int64_t a : ir.axes) resized = resized || a == axis;
        if (!resized && (pads[axis] || pads[rank + axis])) {
            // A padded axis that is not resized: an identity map over the padded length (as coords.py keeps it).
            AxisSpec ax;
            ax.axis = axis;
            ax.in_len = ax.out_len = shape_p[axis];
            ax.a = Number::of(Rat(1));
            ax.b = Number::of(Rat(0));
            ax.filter_scale = Number::of(Rat(1));
            ax.nearest = Nearest::floor;
            out.axes.push_back(ax);
        }
    }
    int64_t total = 1;
    for (int64_t d : out.out_shape) {
        if (d > 0 && total > (int64_t(1) << 31) / d + 1) throw bind_error("sizes", "output has more than 2^31 elements");
        total *= d;
    }
    if (total > (int64_t(1) << 31)) throw bind_error("sizes", "output has more than 2^31 elements");
    return out;
}

// Tables for every bound axis, and the views a launcher reads.
struct ResizePlan {
    BoundResize bound;
    std::vector<TapTable> tables;
    std::vector<TableView> views;
    std::vector<FixedTable> fixed;  // bound.fixed_point: the axes' fixed-point taps, the last axis first
};

inline ResizePlan plan_resize(BoundResize bound) {
    ResizePlan p;
    p.bound = std::move(bound);
    p.tables.reserve(p.bound.axes.size());
    for (const AxisSpec& ax : p.bound.axes) {
        if (ax.in_len == 0 || ax.out_len == 0) {  // nothing to read or nothing to write: the launcher zero-fills
            p.tables.clear();
            p.views.clear();
            return p;
        }
        p.tables.push_back(build_taps(ax, p.bound.sampler));
    }
    if (p.bound.fixed_point) {
        const float a = static_cast<float>(p.bound.sampler.cubic_a.value);
        for (const AxisSpec& ax : p.bound.axes)
            p.fixed.push_back(fixed_taps(ax, p.bound.coord, p.bound.sampler.kind, a, p.bound.sampler.exclude_outside,
                                         ax.scale32, ax.roi0, ax.roi1));
        std::sort(p.fixed.begin(), p.fixed.end(),
                  [](const FixedTable& u, const FixedTable& v) { return u.axis > v.axis; });  // the last axis first
    }
    for (size_t i = 0; i < p.tables.size(); ++i) {
        const AxisSpec& ax = p.bound.axes[i];
        const TapTable& t = p.tables[i];
        p.views.push_back({ax.axis, ax.in_len, ax.out_len, t.K, t.index.data(), t.weight.data(),
                           t.extrap.empty() ? nullptr : t.extrap.data(), t.num.empty() ? nullptr : t.num.data(),
                           t.den});
    }
    return p;
}

inline int64_t element_count(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

}  // namespace rb
