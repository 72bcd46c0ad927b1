// Resize: per-axis tap tables and the separable pass that applies one.
//
// build_taps is the C++ port of semantics/taps.py axis_taps (that module is the one truth for tap windows and
// weights; tests/lowering/test_kernels.py builds tables with both and requires equal indices and weights, and
// runs kernels with both against the oracle). The rules, as there: with src = a*dst + b the exact source
// coordinate, x0 = ceil(src) - 1 and t = src - x0 in (0, 1]; taps x0 + i for i in [1-m, m], m = ceil(R/f), R the
// filter radius (1 linear, 2 cubic), f the antialias stretch (min(scale, 1), or the scale itself when the
// stretch is unclamped; 1 without antialias); weight filter((i - t) * f), normalised to sum 1 under antialias;
// exclude_outside zeroes taps outside [0, L) and renormalises; indices are then clamped into [0, L-1]. Nearest
// is one tap chosen by the rounding rule. src is evaluated exactly (rational.hpp) whenever a and b are given as
// exact fractions that fit, else in double.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "rational.hpp"

namespace rb {

// A number known exactly as num/den (den > 0), or only as a double (den == 0).
struct Number {
    i128 num = 0;
    i128 den = 0;
    double value = 0.0;
    bool exact() const { return den > 0; }
    Rat rat() const { return Rat::of(num, den); }
    static Number of(const Rat& r) {
        Number n;
        n.num = r.num;
        n.den = r.den;
        n.value = r.to_double();
        return n;
    }
};

// One bound axis (semantics.coords.BoundAxis after binding): lengths, the affine map and what the sampler
// needs from the axis.
struct AxisSpec {
    int64_t axis = 0;
    int64_t in_len = 0;
    int64_t out_len = 0;
    Number a, b;            // src = a*dst + b
    Number filter_scale;    // scale whose inverse stretches an antialias filter
    Nearest nearest = Nearest::round_prefer_floor;  // resolved rule (never simple), nearest sampler only
    bool stretch_clamp = true;
    bool has_valid = false;  // tf_crop_and_resize: src outside [0, in_len-1] takes the extrapolation value
    // The float32 scale and crop box onnxruntime's fixed point evaluates its map from (fixed_point.hpp).
    float scale32 = 1.0f, roi0 = 0.0f, roi1 = 1.0f;
};

struct ResizeSampler {
    Kind kind = Kind::linear;
    bool antialias = false;
    bool exclude_outside = false;
    Number cubic_a;
};

struct TapTable {
    int64_t out_len = 0;
    int64_t K = 0;
    std::vector<int64_t> index;   // [out_len, K], clamped into [0, in_len-1]
    std::vector<double> weight;   // [out_len, K]
    std::vector<uint8_t> extrap;  // [out_len] when the axis has a valid range, else empty
    // The weights as integer numerators over one denominator (weight = num / den exactly; semantics.taps
    // integer_taps), for exact integer Resize; den == 0 when a weight is not exact or the fractions do not fit.
    std::vector<int64_t> num;  // [out_len, K]
    int64_t den = 0;
};

inline int window_radius(Kind k) { return k == Kind::linear ? 1 : 2; }

// The antialias stretch f (semantics.taps.stretch).
template <class N>
inline N stretch_of(const ResizeSampler& s, N filter_scale, bool clamp) {
    if (s.antialias && s.kind != Kind::nearest) {
        if (clamp && N(1) < filter_scale) return N(1);
        return filter_scale;
    }
    return N(1);
}

// Taps per output (semantics.taps.tap_count): decided exactly when the filter scale is exact.
inline int64_t tap_count(const ResizeSampler& s, const Number& filter_scale, bool clamp) {
    if (s.kind == Kind::nearest) return 1;
    const int R = window_radius(s.kind);
    if (filter_scale.exact()) {
        g_rat_overflow = false;
        Rat f = stretch_of<Rat>(s, filter_scale.rat(), clamp);
        int64_t m = ceil_of(Rat(R) / f);
        if (!g_rat_overflow) return 2 * m;
    }
    double f = stretch_of<double>(s, filter_scale.value, clamp);
    return 2 * static_cast<int64_t>(std::ceil(R / f));
}

// semantics.taps.nearest_pick.
template <class N>
inline int64_t nearest_pick(N src, Nearest rule) {
    int64_t fl = floor_of(src);
    N frac = src - N(fl);
    N half = half_of<N>();
    switch (rule) {
        case Nearest::floor: return fl;
        case Nearest::ceil: return ceil_of(src);
        case Nearest::round_prefer_floor: return frac > half ? fl + 1 : fl;
        case Nearest::round_prefer_ceil: return frac >= half ? fl + 1 : fl;
        case Nearest::half_even:
            if (frac == half) return (fl % 2 == 0) ? fl : fl + 1;
            return frac > half ? fl + 1 : fl;
        default: throw std::invalid_argument("nearest rule 'simple' must be resolved per axis before tables");
    }
}

// One output row of a table in number type N; index/weight have K slots.
template <class N>
inline void tap_row(N src, N f, N cubic_a, const ResizeSampler& s, Nearest rule, int64_t K, int64_t L,
                    int64_t* index, double* weight, N* exact = nullptr) {
    std::vector<int64_t> taps(static_cast<size_t>(K));
    std::vector<N> w(static_cast<size_t>(K));
    if (s.kind == Kind::nearest) {
        taps[0] = nearest_pick(src, rule);
        w[0] = N(1);
    } else {
        const int64_t m = K / 2;
        const int64_t x0 = ceil_of(src) - 1;
        const N t = src - N(x0);
        for (int64_t i = 1 - m; i <= m; ++i) {
            const N d = (N(i) - t) * f;
            const size_t k = static_cast<size_t>(i - (1 - m));
            taps[k] = x0 + i;
            w[k] = s.kind == Kind::linear ? linear_filter(d) : cubic_filter(d, cubic_a);
        }
        if (s.antialias) {
            // total is 0 only under an unclamped stretch f >= 2 (OpenVINO's LINEAR): keep the zeros.
            N total(0);
            for (auto& x : w) total = total + x;
            if (total != N(0))
                for (auto& x : w) x = x / total;
        }
    }
    if (s.exclude_outside) {
        N total(0);
        for (size_t k = 0; k < w.size(); ++k) {
            if (taps[k] < 0 || taps[k] >= L) w[k] = N(0);
            total = total + w[k];
        }
        if (total != N(0))
            for (auto& x : w) x = x / total;
    }
    for (size_t k = 0; k < w.size(); ++k) {
        int64_t j = taps[k] < 0 ? 0 : taps[k];
        index[k] = j > L - 1 ? L - 1 : j;
        weight[k] = as_double(w[k]);
        if (exact) exact[k] = w[k];
    }
}

// num/den of the table's exact weights (one common denominator, every value below 2^62), or den = 0.
inline void integer_weights(TapTable& t, const std::vector<Rat>& w) {
    const i128 lim = i128(1) << 62;
    i128 D = 1;
    for (const Rat& r : w) {
        if (r.den >= lim) return;
        D = D / i128_gcd(D, r.den) * r.den;
        if (D >= lim) return;
    }
    t.num.resize(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
        const i128 n = w[i].num * (D / w[i].den);
        if (i128_abs(n) >= lim) {
            t.num.clear();
            return;
        }
        t.num[i] = static_cast<int64_t>(n);
    }
    t.den = static_cast<int64_t>(D);
}

inline TapTable build_taps(const AxisSpec& ax, const ResizeSampler& s) {
    if (ax.in_len <= 0 || ax.out_len < 0) throw std::invalid_argument("axis lengths must be positive");
    TapTable t;
    t.out_len = ax.out_len;
    t.K = tap_count(s, ax.filter_scale, ax.stretch_clamp);
    t.index.assign(static_cast<size_t>(t.out_len * t.K), 0);
    t.weight.assign(static_cast<size_t>(t.out_len * t.K), 0.0);
    if (ax.has_valid) t.extrap.assign(static_cast<size_t>(t.out_len), 0);
    const bool exact = ax.a.exact() && ax.b.exact() && ax.filter_scale.exact() &&
                       (s.kind != Kind::cubic || s.cubic_a.exact());
    const double fd = stretch_of<double>(s, ax.filter_scale.value, ax.stretch_clamp);
    const int64_t L = ax.in_len;
    std::vector<Rat> exact_w;
    bool all_exact = exact;
    if (exact) exact_w.resize(t.index.size());
    for (int64_t o = 0; o < t.out_len; ++o) {
        int64_t* idx = t.index.data() + o * t.K;
        double* w = t.weight.data() + o * t.K;
        bool done = false;
        if (exact) {
            g_rat_overflow = false;
            const Rat src = ax.a.rat() * Rat(o) + ax.b.rat();
            const Rat f = stretch_of<Rat>(s, ax.filter_scale.rat(), ax.stretch_clamp);
            const Rat ca = s.kind == Kind::cubic ? s.cubic_a.rat() : Rat(0);
            tap_row<Rat>(src, f, ca, s, ax.nearest, t.K, L, idx, w, exact_w.data() + o * t.K);
            if (ax.has_valid) t.extrap[o] = (src < Rat(0) || Rat(L - 1) < src) ? 1 : 0;
            done = !g_rat_overflow;
        }
        all_exact = all_exact && done;
        if (!done) {
            // Fractions too large for 128 bits (or given as doubles): the same rules in double.
            const double src = ax.a.value * static_cast<double>(o) + ax.b.value;
            tap_row<double>(src, fd, s.cubic_a.value, s, ax.nearest, t.K, L, idx, w);
            if (ax.has_valid) t.extrap[o] = (src < 0.0 || src > static_cast<double>(L - 1)) ? 1 : 0;
        }
    }
    if (all_exact) integer_weights(t, exact_w);
    return t;
}

// A table as the pass reads it (built here, or handed over from Python / another process).
struct TableView {
    int64_t axis = 0;
    int64_t in_len = 0;
    int64_t out_len = 0;
    int64_t K = 0;
    const int64_t* index = nullptr;
    const double* weight = nullptr;
    const uint8_t* extrap = nullptr;  // may be null
    const int64_t* num = nullptr;     // exact numerators over den (TapTable::num), null when not known
    int64_t den = 0;
};

// One output element of a separable pass: sum_k w[k] * line[index[k] * stride], in Acc, taps in table order
// (the oracle's order, so float64 accumulation gives the oracle's bits). Ix: the index type (int32 on the
// device where the tensors allow it).
template <class T>
struct same_type {  // a parameter that takes its type from another (not deduced)
    using type = T;
};
template <class Acc, class In, class Ix, class W>
RB_HD inline Acc tap_sum(const In* line, typename same_type<Ix>::type stride, const Ix* index, const W* weight,
                         typename same_type<Ix>::type K) {
    Acc acc = Acc(0);
    for (Ix k = 0; k < K; ++k) acc += static_cast<Acc>(weight[k]) * load<Acc>(line[index[k] * stride]);
    return acc;
}

}  // namespace rb
