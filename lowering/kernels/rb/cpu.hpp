// CPU launchers over the shared per-element code: std::thread workers (at most hardware_concurrency), float64
// accumulation (the oracle's), contiguous inner loops. Element type T: float, _Float16, double.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bind.hpp"
#include "common.hpp"
#include "deformconv.hpp"
#include "gridsample.hpp"
#include "points.hpp"
#include "taps.hpp"

namespace rb {
namespace cpu {

inline int thread_count(int requested) {
    int hw = static_cast<int>(std::thread::hardware_concurrency());
    if (hw <= 0) hw = 1;
    return requested > 0 ? std::min(requested, hw) : hw;
}

// f(begin, end) over [0, n) in contiguous chunks of at least ``grain`` items; the first exception wins.
template <class F>
void parallel_for(int64_t n, int threads, int64_t grain, F&& f) {
    if (n <= 0) return;
    const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(thread_count(threads), (n + grain - 1) / grain));
    if (chunks == 1) {
        f(int64_t(0), n);
        return;
    }
    std::exception_ptr err;
    std::mutex mu;
    auto run = [&](int64_t c) {
        const int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
        try {
            f(b, e);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mu);
            if (!err) err = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(chunks - 1));
    for (int64_t c = 1; c < chunks; ++c) pool.emplace_back(run, c);
    run(0);
    for (auto& t : pool) t.join();
    if (err) std::rethrow_exception(err);
}

inline int64_t product(const std::vector<int64_t>& v, size_t b, size_t e) {
    int64_t p = 1;
    for (size_t i = b; i < e; ++i) p *= v[i];
    return p;
}

// ------------------------------------------------------------------------------------------------------------
// Resize: optional zero padding (OpenVINO pads_begin/pads_end), then one separable pass per table.

template <class In, class Out>
void resize_pass(const In* x, Out* y, int64_t outer, int64_t inner, const TableView& t, double extrap_value,
                 int threads) {
    const int64_t Lin = t.in_len, Lout = t.out_len, K = t.K;
    parallel_for(outer * Lout, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner * K)),
                 [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const int64_t q = r / Lout, o = r % Lout;
            const In* src = x + q * Lin * inner;
            Out* dst = y + (q * Lout + o) * inner;
            const int64_t* idx = t.index + o * K;
            const double* w = t.weight + o * K;
            if (t.extrap && t.extrap[o]) {
                for (int64_t i = 0; i < inner; ++i) dst[i] = store<Out>(extrap_value);
                continue;
            }
            for (int64_t i = 0; i < inner; ++i) dst[i] = store<Out>(tap_sum<double>(src + i, inner, idx, w, K));
        }
    });
}

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
            const std::vector<TableView>& tables, double extrap_value, int threads) {
    const size_t r = shape.size();
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
    resize(x, y, plan.bound.in_shape, plan.bound.pads, plan.views, plan.bound.extrapolation_value, threads);
}

// ------------------------------------------------------------------------------------------------------------
// GridSample: x [N, C, spatial...], grid [N, out..., D], y [N, C, out...].

template <class T, class G>
void gridsample(const GridSampleSpec& s, const T* x, const G* grid, T* y, int threads) {
    int64_t S = 1;
    for (int d = 0; d < s.D; ++d) S *= s.spatial[d];
    parallel_for(s.N * s.P, threads, 64, [&](int64_t b, int64_t e) {
        PointTaps taps;
        for (int64_t i = b; i < e; ++i) {
            const int64_t n = i / s.P, p = i % s.P;
            gridsample_point_taps(s, grid + i * s.D, taps);
            const T* xn = x + n * s.C * S;
            T* yn = y + n * s.C * s.P + p;
            for (int64_t c = 0; c < s.C; ++c) yn[c * s.P] = store<T>(apply_taps(xn + c * S, taps));
        }
    });
}

// ------------------------------------------------------------------------------------------------------------
// DeformConv: x [N, C, spatial...], w [OC, C/group, kernel...], offset [N, OG*K*D, out...], b [OC] or null,
// mask [N, OG*K, out...] or null, y [N, OC, out...]. Per image and tile of output points: sample the columns
// [C*K, tile] in float64, then multiply with W per group (inner loop over the tile's points).

template <class T>
void deformconv(const DeformConvSpec& s, const T* x, const T* w, const T* offset, const T* b, const T* mask, T* y,
                int threads) {
    int64_t S = 1;
    for (int d = 0; d < s.D; ++d) S *= s.spatial[d];
    const int64_t K = s.K, P = s.P, C = s.C, OC = s.OC;
    const int64_t icg = C / s.group, ocg = OC / s.group, cpg = C / s.offset_group;
    std::vector<double> wd(static_cast<size_t>(OC * icg * K));
    for (size_t i = 0; i < wd.size(); ++i) wd[i] = load<double>(w[i]);
    const int64_t tile = 64;
    const int64_t tiles = (P + tile - 1) / tile;
    parallel_for(s.N * tiles, threads, 1, [&](int64_t b0, int64_t e0) {
        std::vector<double> cols(static_cast<size_t>(C * K * tile));
        std::vector<double> acc(static_cast<size_t>(tile));
        PointTaps taps;
        for (int64_t it = b0; it < e0; ++it) {
            const int64_t n = it / tiles, p0 = (it % tiles) * tile, np = std::min(tile, P - p0);
            const T* xn = x + n * C * S;
            for (int64_t og = 0; og < s.offset_group; ++og)
                for (int64_t k = 0; k < K; ++k)
                    for (int64_t q = 0; q < np; ++q) {
                        double factor;
                        deform_point_taps(s, offset, mask, n, og, k, p0 + q, taps, factor);
                        for (int64_t c = og * cpg; c < (og + 1) * cpg; ++c)
                            cols[static_cast<size_t>((c * K + k) * tile + q)] = apply_taps(xn + c * S, taps) * factor;
                    }
            for (int64_t oc = 0; oc < OC; ++oc) {
                const int64_t g = oc / ocg;
                std::fill(acc.begin(), acc.begin() + np, 0.0);
                const double* wrow = wd.data() + oc * icg * K;
                for (int64_t r = 0; r < icg * K; ++r) {
                    const double wv = wrow[r];
                    const double* col = cols.data() + ((g * icg) * K + r) * tile;
                    for (int64_t q = 0; q < np; ++q) acc[q] += wv * col[q];
                }
                const double bias = b ? load<double>(b[oc]) : 0.0;
                T* yrow = y + (n * OC + oc) * P + p0;
                for (int64_t q = 0; q < np; ++q) yrow[q] = store<T>(b ? acc[q] + bias : acc[q]);
            }
        }
    });
}

}  // namespace cpu
}  // namespace rb
