// Resize: optional zero padding (OpenVINO pads_begin/pads_end), then one separable pass per table (or the fused
// 2-D pass); exact integer Resize (cpu_resize_int.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bind.hpp"
#include "cpu_resize_2d.hpp"
#include "cpu_resize_int.hpp"
#include "fixed_point.hpp"

namespace rb {
namespace cpu {

// Zero padding of every axis: pads holds begins then ends (2*rank values).
template <class T>
std::vector<double> pad_input(const T* x, const std::vector<int64_t>& shape, const std::vector<int64_t>& pads,
                              std::vector<int64_t>& padded) {
    const size_t r = shape.size();
    padded.resize(r);
    for (size_t i = 0; i < r; ++i) padded[i] = shape[i] + pads[i] + pads[r + i];
    std::vector<double> out(static_cast<size_t>(product(padded, 0, r)), 0.0);
    const int64_t total = product(shape, 0, r);
    std::vector<int64_t> idx(r, 0);
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t rem = lin, dst = 0;
        for (size_t d = r; d-- > 0;) {
            idx[d] = rem % shape[d];
            rem /= shape[d];
        }
        for (size_t d = 0; d < r; ++d) dst = dst * padded[d] + idx[d] + pads[d];
        out[static_cast<size_t>(dst)] = load<double>(x[lin]);
    }
    return out;
}

template <class T>
void resize(const T* x, T* y, std::vector<int64_t> shape, const std::vector<int64_t>& pads,
            const std::vector<TableView>& tables, double extrap_value, int threads,
            bool exact_integers = false) {
    const size_t r = shape.size();
    if constexpr (std::is_integral<T>::value) {
        // Linear / cubic on integers: exact, as the oracle (nearest, OpenVINO pads or a fractional extrapolation
        // value take the float64 path below, as there).
        const bool no_pads = std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; });
        if (exact_integers && no_pads && !tables.empty() && std::nearbyint(extrap_value) == extrap_value &&
            product(shape, 0, r) > 0) {
            for (const TableView& t : tables)
                if (!t.num || t.den <= 0)
                    throw std::invalid_argument("integer Resize needs exact tap weights; these scales have none "
                                                "within 128 bits");
            resize_integer(x, y, shape, tables, static_cast<int64_t>(extrap_value), threads);
            return;
        }
    }
    std::vector<double> cur;  // float64 between passes, as the oracle
    bool padded = false;
    if (!pads.empty() && std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
        if (pads.size() != 2 * r) throw std::invalid_argument("pads must hold 2*rank values");
        std::vector<int64_t> ps;
        cur = pad_input(x, shape, pads, ps);
        shape = ps;
        padded = true;
    }
    std::vector<int64_t> out_shape = shape;
    for (const auto& t : tables) {
        if (t.axis < 0 || static_cast<size_t>(t.axis) >= r) throw std::invalid_argument("table axis out of range");
        if (out_shape[t.axis] != t.in_len)
            throw std::invalid_argument("table for axis " + std::to_string(t.axis) + " expects length " +
                                        std::to_string(t.in_len) + ", the tensor has " +
                                        std::to_string(out_shape[t.axis]));
        out_shape[t.axis] = t.out_len;
    }
    const int64_t total_out = product(out_shape, 0, r);
    if (total_out == 0) return;
    if (product(shape, 0, r) == 0) {  // an empty input axis resized to a non-empty one: zeros, as the oracle
        std::fill(y, y + total_out, store<T>(0.0));
        return;
    }
    if (tables.empty()) {
        for (int64_t i = 0; i < total_out; ++i) y[i] = padded ? store<T>(cur[i]) : x[i];
        return;
    }
    if (!padded && resize_last_two(x, y, shape, tables, extrap_value, threads)) return;
    if (!padded && resize_last_three(x, y, shape, tables, extrap_value, threads)) return;
    if (!padded && std::all_of(tables.begin(), tables.end(), pure_gather)) {
        // Copies only: every pass in T, exact, no float64 intermediate.
        std::vector<T> a, b;
        const T* src = x;
        for (size_t n = 0; n < tables.size(); ++n) {
            const TableView& t = tables[n];
            const int64_t outer = product(shape, 0, t.axis), inner = product(shape, t.axis + 1, r);
            const bool last = n + 1 == tables.size();
            T* dst = y;
            if (!last) {
                std::vector<T>& buf = (n % 2 == 0) ? a : b;
                buf.resize(static_cast<size_t>(outer * t.out_len * inner));
                dst = buf.data();
            }
            gather_pass(src, dst, outer, inner, t, threads);
            shape[t.axis] = t.out_len;
            src = dst;
        }
        return;
    }
    for (size_t n = 0; n < tables.size(); ++n) {
        const TableView& t = tables[n];
        const int64_t outer = product(shape, 0, t.axis), inner = product(shape, t.axis + 1, r);
        const bool last = n + 1 == tables.size();
        std::vector<double> next;
        if (!last) next.resize(static_cast<size_t>(outer * t.out_len * inner));
        if (n == 0 && !padded) {
            if (last) resize_pass(x, y, outer, inner, t, extrap_value, threads);
            else resize_pass(x, next.data(), outer, inner, t, extrap_value, threads);
        } else {
            if (last) resize_pass(cur.data(), y, outer, inner, t, extrap_value, threads);
            else resize_pass(cur.data(), next.data(), outer, inner, t, extrap_value, threads);
        }
        shape[t.axis] = t.out_len;
        cur.swap(next);
    }
}

// A bound and planned Resize (bind.hpp): what the OpenVINO op's evaluate and rb_resize_ir run.
template <class T>
void resize(const T* x, T* y, const ResizePlan& plan, int threads) {
    const int64_t total = element_count(plan.bound.out_shape);
    if (total == 0) return;
    if (plan.views.empty() && !plan.bound.axes.empty()) {  // an empty axis on the way: zeros, as the oracle
        std::fill(y, y + total, store<T>(0.0));
        return;
    }
    if constexpr (std::is_same<T, uint8_t>::value) {
        if (plan.bound.fixed_point) {
            resize_fixed(x, y, plan.bound.in_shape, plan.fixed, plan.bound.extrapolation_value);
            return;
        }
    }
    resize(x, y, plan.bound.in_shape, plan.bound.pads, plan.views, plan.bound.extrapolation_value, threads,
           plan.bound.sampler.kind != Kind::nearest);
}

}  // namespace cpu
}  // namespace rb
