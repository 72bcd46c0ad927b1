// Resize of the last two axes in one fused pass: nearest as a 2-D copy, linear / cubic / short antialias with
// one row of accumulators per output row.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu_resize_lines.hpp"
#include "cpu_row_window.hpp"

namespace rb {
namespace cpu {

// Nearest on the last two axes in one pass: out[oh][ow] = x[ih[oh]][iw[ow]]; a repeated source row is a
// memcpy of the output row before it.
template <class T>
void gather_2d(const T* x, T* y, int64_t planes, const TableView& th, const TableView& tw, int threads) {
    const int64_t Hin = th.in_len, Win = tw.in_len, Hout = th.out_len, Wout = tw.out_len;
    const RowGather row(tw.index, Wout, Win, sizeof(T));
    parallel_for(planes * Hout, threads, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, Wout)),
                 [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
            const int64_t p = r / Hout, oh = r % Hout;
            T* dst = y + r * Wout;
            if (r > b && oh > 0 && th.index[oh] == th.index[oh - 1]) {
                std::copy_n(dst - Wout, Wout, dst);
                continue;
            }
            row(x + (p * Hin + th.index[oh]) * Win, dst);
        }
    });
}

// A table as compact taps (tap-major int32 indices, float32 weights): a float32 line pass along the contiguous
// axis vectorises with windows of lane permutes (RowWindowTaps) where every block's taps fit one, else with
// sample_row_f32's gathers. Built once per call (out_len * K values, small next to the pass); false when the
// line is too long for int32 indices.
struct F32Table {
    std::vector<int32_t> index;
    std::vector<float> weight;
    RowWindowTaps window;  // whole blocks of outputs by lane permutes, where every block's taps fit (``windowed``)
    bool windowed = false;
};

inline bool f32_table(const TableView& t, F32Table& out) {
    if (t.in_len > std::numeric_limits<int32_t>::max()) return false;
    out.index.resize(static_cast<size_t>(t.K * t.out_len));
    out.weight.resize(out.index.size());
    for (int64_t o = 0; o < t.out_len; ++o)
        for (int64_t k = 0; k < t.K; ++k) {
            out.index[k * t.out_len + o] = static_cast<int32_t>(t.index[o * t.K + k]);
            out.weight[k * t.out_len + o] = static_cast<float>(t.weight[o * t.K + k]);
        }
    out.windowed = out.window.build(out.index.data(), t.K, t.out_len, t.in_len);
    return true;
}

// line_taps in float32 through the compact table when there is one, then the extrapolated outputs.
inline void line_taps_f32(const float* line, float* out, const TableView& t, const F32Table* ft,
                          double extrap_value) {
    if (!ft) return line_taps<float, float, float>(line, out, t, extrap_value);
    int64_t q0 = 0;  // the outputs done by windows
    if (ft->windowed) {
        ft->window.apply(line, ft->weight.data(), out);
        q0 = ft->window.blocks * RowWindowTaps::kLanes;
    }
    sample_row_f32(line, t.in_len, ft->index.data() + q0, ft->weight.data() + q0, t.out_len, t.out_len - q0,
                   static_cast<int>(t.K), out + q0);
    if (t.extrap)
        for (int64_t o = 0; o < t.out_len; ++o)
            if (t.extrap[o]) out[o] = static_cast<float>(extrap_value);
}

// The W pass of a fused 2-D resize: float X with a float accumulator goes through the compact float32 table
// (gathers) where the table fits one; every other type through the generic tap loop.
template <class T, class Acc>
struct WPass {
    static constexpr bool kF32 = std::is_same<T, float>::value && std::is_same<Acc, float>::value;
    const TableView& tw;
    double extrap_value;
    F32Table ft;
    bool compact = false;

    WPass(const TableView& t, double e) : tw(t), extrap_value(e) {
        if constexpr (kF32) compact = f32_table(tw, ft);
    }
    template <class In, class Out>
    void operator()(const In* line, Out* out) const {
        if constexpr (kF32)
            line_taps_f32(line, out, tw, compact ? &ft : nullptr, extrap_value);
        else
            line_taps<In, Out, Acc>(line, out, tw, extrap_value);
    }
};

// One output row (oh) of a plane ``xp`` [Hin, Win] under the H-then-W pass: the H taps combine input rows into
// ``row`` (Win values of Acc, contiguous vector loop), whose W taps give the output row ``dst``.
template <class T, class Acc>
inline void hw_row(const T* xp, T* dst, int64_t oh, const TableView& th, const WPass<T, Acc>& wpass,
                   double extrap_value, Acc* row) {
    const int64_t Win = wpass.tw.in_len, Kh = th.K;
    if (th.extrap && th.extrap[oh]) {
        for (int64_t i = 0; i < Win; ++i) row[i] = static_cast<Acc>(extrap_value);
    } else {
        tap_line(xp, Win, th.index + oh * Kh, th.weight + oh * Kh, Kh, row);
    }
    wpass(row, dst);
}

// Linear / cubic on the last two axes, H's table first (the oracle's order when the op lists H before W): per
// output row, ``hw_row``. No intermediate tensor; with Acc double the bits are those of the two separate passes.
// Acc float (float X, short windows): both passes in float32, the W pass through the compact table (gathers).
template <class T, class Acc>
void resize_2d_hw(const T* x, T* y, int64_t planes, const TableView& th, const TableView& tw, double extrap_value,
                  int threads) {
    const WPass<T, Acc> wpass(tw, extrap_value);
    const int64_t Hin = th.in_len, Win = tw.in_len, Hout = th.out_len, Wout = tw.out_len, Kh = th.K;
    parallel_for(planes * Hout, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, Win * Kh)),
                 [&](int64_t b, int64_t e) {
        Acc* row = scratch<Acc>(static_cast<size_t>(Win));
        for (int64_t r = b; r < e; ++r)
            hw_row(x + (r / Hout) * Hin * Win, y + r * Wout, r % Hout, th, wpass, extrap_value, row);
    });
}

// ... W's table first: each plane's input rows through the W taps into a per-thread float64 plane [Hin, Wout],
// then each output row from the H taps over it (contiguous vector loop).
template <class T, class Acc>
void resize_2d_wh(const T* x, T* y, int64_t planes, const TableView& th, const TableView& tw, double extrap_value,
                  int threads) {
    const WPass<T, Acc> wpass(tw, extrap_value);
    const int64_t Hin = th.in_len, Win = tw.in_len, Hout = th.out_len, Wout = tw.out_len, Kh = th.K;
    parallel_for(planes, threads, 1, [&](int64_t b, int64_t e) {
        Acc* buf = scratch<Acc>(static_cast<size_t>(Hin * Wout + Wout));
        Acc* acc = buf + Hin * Wout;
        for (int64_t p = b; p < e; ++p) {
            const T* xp = x + p * Hin * Win;
            for (int64_t ih = 0; ih < Hin; ++ih) wpass(xp + ih * Win, buf + ih * Wout);
            for (int64_t oh = 0; oh < Hout; ++oh) {
                T* dst = y + (p * Hout + oh) * Wout;
                if (th.extrap && th.extrap[oh]) {
                    for (int64_t o = 0; o < Wout; ++o) dst[o] = store<T>(extrap_value);
                    continue;
                }
                tap_line(buf, Wout, th.index + oh * Kh, th.weight + oh * Kh, Kh, acc);
                for (int64_t o = 0; o < Wout; ++o) dst[o] = store<T>(acc[o]);
            }
        }
    });
}

// The last two axes (in either order) and nothing else: one fused 2-D pass. False when the tables are not that.
template <class T>
bool resize_last_two(const T* x, T* y, const std::vector<int64_t>& shape, const std::vector<TableView>& tables,
                     double extrap_value, int threads) {
    const int64_t r = static_cast<int64_t>(shape.size());
    if (r < 2 || tables.size() != 2) return false;
    const bool hw = tables[0].axis == r - 2 && tables[1].axis == r - 1;
    const bool wh = tables[0].axis == r - 1 && tables[1].axis == r - 2;
    if (!hw && !wh) return false;
    const TableView& th = hw ? tables[0] : tables[1];
    const TableView& tw = hw ? tables[1] : tables[0];
    if (th.in_len != shape[r - 2] || tw.in_len != shape[r - 1]) return false;
    const int64_t planes = product(shape, 0, static_cast<size_t>(r - 2));
    if (pure_gather(th) && pure_gather(tw)) {
        gather_2d(x, y, planes, th, tw, threads);
        return true;
    }
    if constexpr (std::is_same<T, float>::value) {
        if (th.K <= kF32MaxTaps && tw.K <= kF32MaxTaps) {
            if (hw) resize_2d_hw<T, float>(x, y, planes, th, tw, extrap_value, threads);
            else resize_2d_wh<T, float>(x, y, planes, th, tw, extrap_value, threads);
            return true;
        }
    }
    if (hw) resize_2d_hw<T, double>(x, y, planes, th, tw, extrap_value, threads);
    else resize_2d_wh<T, double>(x, y, planes, th, tw, extrap_value, threads);
    return true;
}

// Linear / cubic on the last three axes in the table order D, H, W (a volume), float X with short windows: per
// output plane (volume, od), the D taps combine input planes into one float32 plane, whose rows the fused 2-D
// pass (``hw_row``) resizes into the output plane. The passes run in the oracle's order, each in float32 as the
// 2-D path's (three separate passes held float64 tensors between them: 1.1-1.2x OpenVINO's Interpolate on
// 1x8x16x32x32 x2). False when the tables are not that.
template <class T>
bool resize_last_three(const T* x, T* y, const std::vector<int64_t>& shape, const std::vector<TableView>& tables,
                       double extrap_value, int threads) {
    if constexpr (!std::is_same<T, float>::value) {
        return false;
    } else {
        const int64_t r = static_cast<int64_t>(shape.size());
        if (r < 3 || tables.size() != 3) return false;
        const TableView &td = tables[0], &th = tables[1], &tw = tables[2];
        if (td.axis != r - 3 || th.axis != r - 2 || tw.axis != r - 1 || td.in_len != shape[r - 3] ||
            th.in_len != shape[r - 2] || tw.in_len != shape[r - 1])
            return false;
        if (td.K > kF32MaxTaps || th.K > kF32MaxTaps || tw.K > kF32MaxTaps ||
            (pure_gather(td) && pure_gather(th) && pure_gather(tw)))
            return false;
        const int64_t Din = td.in_len, Dout = td.out_len, in_plane = th.in_len * tw.in_len, Hout = th.out_len;
        const int64_t out_plane = Hout * tw.out_len, volumes = product(shape, 0, static_cast<size_t>(r - 3));
        const WPass<float, float> wpass(tw, extrap_value);  // the compact W table once, for every plane
        parallel_for(volumes * Dout, threads, 1, [&](int64_t b, int64_t e) {
            float* plane = scratch<float, 1>(static_cast<size_t>(in_plane));
            float* row = scratch<float>(static_cast<size_t>(tw.in_len));
            for (int64_t task = b; task < e; ++task) {
                const int64_t v = task / Dout, od = task % Dout;
                if (td.extrap && td.extrap[od])
                    std::fill(plane, plane + in_plane, static_cast<float>(extrap_value));
                else
                    tap_line(x + v * Din * in_plane, in_plane, td.index + od * td.K, td.weight + od * td.K, td.K,
                             plane);
                for (int64_t oh = 0; oh < Hout; ++oh)
                    hw_row(plane, y + task * out_plane + oh * tw.out_len, oh, th, wpass, extrap_value, row);
            }
        });
        return true;
    }
}

}  // namespace cpu
}  // namespace rb
