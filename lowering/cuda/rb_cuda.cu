// CUDA launchers over the shared headers (../kernels/rb): the same per-element code as the CPU launchers,
// one thread per output element (resize pass), per output point (GridSample) or per sampled column entry and
// per output value (DeformConv: im2col, then a tiled contraction in shared memory; no cuBLAS dependency).
// Resize tap tables are bound and built on the host (bind.hpp / taps.hpp) and uploaded once per input shape.
#include "rb_cuda.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rb/attrs.hpp"
#include "rb/c_abi.hpp"
#include "rb/bind.hpp"
#include "rb/deformconv.hpp"
#include "rb/gridsample.hpp"
#include "rb/points.hpp"
#include "rb/taps.hpp"

namespace {

using Acc = float;  // accumulation on the device; coordinates and sampling weights stay float64

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

using rb::capi::guarded;

template <class F>
void dispatch(int32_t dtype, F&& f) {
    rb::capi::dispatch_dtype<__half>(dtype, static_cast<F&&>(f));
}

// Device memory freed in ``stream``'s order (cudaFreeAsync) when the owner goes out of scope.
struct DeviceBuffer {
    void* ptr = nullptr;
    size_t bytes = 0;
    cudaStream_t stream = nullptr;
    DeviceBuffer() = default;
    DeviceBuffer(size_t n, cudaStream_t s) : bytes(n), stream(s) {
        if (n) check(cudaMallocAsync(&ptr, n, s), "cudaMallocAsync");
    }
    ~DeviceBuffer() {
        if (ptr) cudaFreeAsync(ptr, stream);
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr(o.ptr), bytes(o.bytes), stream(o.stream) { o.ptr = nullptr; }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        std::swap(ptr, o.ptr);
        std::swap(bytes, o.bytes);
        std::swap(stream, o.stream);
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    template <class T>
    T* as() const { return static_cast<T*>(ptr); }
};

template <class T>
DeviceBuffer upload(const std::vector<T>& v, cudaStream_t s) {
    DeviceBuffer b(v.size() * sizeof(T), s);
    if (!v.empty()) check(cudaMemcpyAsync(b.ptr, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, s), "upload");
    return b;
}

unsigned blocks_for(int64_t n, int threads) {
    const int64_t b = (n + threads - 1) / threads;
    return static_cast<unsigned>(b < 65535 * 32 ? b : 65535 * 32);
}

// ------------------------------------------------------------------------------------------------------------
// Resize: bound once per input shape (rb_cuda_resize_prepare: the passes' tap tables uploaded, the scratch
// allocated), then queued as often as wanted (rb_cuda_resize_enqueue: kernels only). Index arithmetic in I:
// int32 where every tensor of the plan has fewer than 2^31 elements (64-bit division is slow on the device).

template <class I, class In, class Out>
__global__ void resize_pass_kernel(const In* x, Out* y, I outer, I Lin, I Lout, I inner, I K, const I* index,
                                   const float* weight, const uint8_t* extrap, float extrap_value) {
    const I total = outer * Lout * inner;
    for (I i = blockIdx.x * I(blockDim.x) + threadIdx.x; i < total; i += I(gridDim.x) * blockDim.x) {
        const I in_ = i % inner, r = i / inner, o = r % Lout, q = r / Lout;
        if (extrap && extrap[o]) {
            y[i] = rb::store<Out>(static_cast<Acc>(extrap_value));
            continue;
        }
        y[i] = rb::store<Out>(rb::tap_sum<Acc>(x + q * Lin * inner + in_, inner, index + o * K, weight + o * K, K));
    }
}

// Two passes over the last two axes in one kernel (the usual NCHW resize): first along axis A, then along B.
// The first pass's value at each of B's taps is computed where it is read, with the separable pass's
// operations in its order (tap_sum, rounded to Acc as the scratch holds it), so the numbers are the two passes'
// while the intermediate never goes through memory. sa / sb: X's strides of A and B (1 or the last length).
template <class I, class In, class Out>
__global__ void resize_2d_kernel(const In* x, Out* y, I outer, I in_a, I out_a, I sa, const I* ia, const float* wa,
                                 const uint8_t* ea, I Ka, I in_b, I out_b, I sb, const I* ib, const float* wb,
                                 const uint8_t* eb, I Kb, bool a_last, float ev) {
    // y is [outer, out_a, out_b] when A comes first in memory, else [outer, out_b, out_a]: one row of the last
    // axis per (q, first), the threads of a block along the last axis.
    const I n_last = a_last ? out_a : out_b, n_first = a_last ? out_b : out_a;
    const I last = blockIdx.x * I(blockDim.x) + threadIdx.x;
    if (last >= n_last) return;
    for (I row = blockIdx.y; row < outer * n_first; row += gridDim.y) {
        const I q = row / n_first, first = row % n_first;
        const I oa = a_last ? last : first, ob = a_last ? first : last;
        Out* yi = y + row * n_last + last;
        if (eb && eb[ob]) {
            *yi = rb::store<Out>(static_cast<Acc>(ev));
            continue;
        }
        const In* xq = x + q * in_a * in_b;
        Acc acc = Acc(0);
        for (I kb = 0; kb < Kb; ++kb) {
            const Acc t = (ea && ea[oa]) ? static_cast<Acc>(ev)
                                         : rb::tap_sum<Acc>(xq + ib[ob * Kb + kb] * sb, sa, ia + oa * Ka,
                                                            wa + oa * Ka, Ka);
            acc += static_cast<Acc>(wb[ob * Kb + kb]) * t;
        }
        *yi = rb::store<Out>(acc);
    }
}

// Zero padding of every axis (OpenVINO pads_begin/pads_end): y is zero-filled first.
template <class T>
__global__ void pad_kernel(const T* x, Acc* y, int rank, const int64_t* shape, const int64_t* padded,
                           const int64_t* pads_begin, int64_t total) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
        int64_t rem = i, dst = 0, mul = 1;
        for (int d = rank - 1; d >= 0; --d) {
            const int64_t c = rem % shape[d];
            rem /= shape[d];
            dst += (c + pads_begin[d]) * mul;
            mul *= padded[d];
        }
        y[dst] = rb::load<Acc>(x[i]);
    }
}

template <class T>
__global__ void cast_kernel(const Acc* x, T* y, int64_t total) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
        y[i] = rb::store<T>(x[i]);
}

template <class T>
__global__ void fill_kernel(T* y, int64_t total) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
        y[i] = rb::store<T>(Acc(0));
}

// One separable pass: [outer, in_len, inner] -> [outer, out_len, inner] through its tap table.
struct ResizePass {
    int64_t outer, in_len, out_len, inner, K;
    DeviceBuffer index, weight, extrap;
};

struct ResizeLaunch {
    enum class Mode { kEmpty, kFill, kCopy, kPasses } mode = Mode::kEmpty;
    int32_t dtype = 0;
    int64_t total_in = 0, total_out = 0;
    float extrap_value = 0.f;
    bool narrow = true;  // int32 index arithmetic
    bool fused = false;  // two passes over the last two axes, unpadded: one kernel (resize_2d_kernel)
    int rank = 0;
    DeviceBuffer pad_shape, pad_padded, pad_begin, padded;  // padding: shapes and the padded float copy
    std::vector<ResizePass> passes;
    DeviceBuffer scratch[2];  // float between passes
    cudaStream_t last = nullptr;  // the stream of the last enqueue: buffers are freed in its order

    ~ResizeLaunch() {
        for (DeviceBuffer* b : {&pad_shape, &pad_padded, &pad_begin, &padded, &scratch[0], &scratch[1]}) b->stream = last;
        for (ResizePass& p : passes)
            for (DeviceBuffer* b : {&p.index, &p.weight, &p.extrap}) b->stream = last;
    }
};

ResizeLaunch* resize_prepare(const rb::ResizePlan& plan, int32_t dtype, cudaStream_t s) {
    auto L = std::make_unique<ResizeLaunch>();
    L->dtype = dtype;
    L->last = s;
    const auto& b = plan.bound;
    L->total_in = rb::element_count(b.in_shape);
    L->total_out = rb::element_count(b.out_shape);
    L->extrap_value = static_cast<float>(b.extrapolation_value);
    if (L->total_out == 0) return L.release();
    if (plan.views.empty() && !b.axes.empty()) {
        L->mode = ResizeLaunch::Mode::kFill;
        return L.release();
    }
    std::vector<int64_t> shape = b.in_shape;
    L->rank = static_cast<int>(shape.size());
    int64_t largest = std::max(L->total_in, L->total_out);
    if (!b.pads.empty()) {
        std::vector<int64_t> pshape(shape);
        for (int d = 0; d < L->rank; ++d) pshape[d] += b.pads[d] + b.pads[L->rank + d];
        L->pad_shape = upload(shape, s);
        L->pad_padded = upload(pshape, s);
        L->pad_begin = upload(std::vector<int64_t>(b.pads.begin(), b.pads.begin() + L->rank), s);
        L->padded = DeviceBuffer(rb::element_count(pshape) * sizeof(Acc), s);
        shape = pshape;
    }
    int64_t scratch[2] = {0, 0};
    for (size_t n = 0; n < plan.views.size(); ++n) {
        const rb::TableView& t = plan.views[n];
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < t.axis; ++d) outer *= shape[d];
        for (int64_t d = t.axis + 1; d < L->rank; ++d) inner *= shape[d];
        largest = std::max({largest, outer * t.in_len * inner, outer * t.out_len * inner});
        if (n + 1 < plan.views.size()) scratch[n % 2] = std::max(scratch[n % 2], outer * t.out_len * inner);
        L->passes.push_back({outer, t.in_len, t.out_len, inner, t.K, DeviceBuffer(0, s),
                             upload(std::vector<float>(t.weight, t.weight + t.out_len * t.K), s),
                             t.extrap ? upload(std::vector<uint8_t>(t.extrap, t.extrap + t.out_len), s)
                                      : DeviceBuffer(0, s)});
        shape[t.axis] = t.out_len;
    }
    L->narrow = largest < (int64_t(1) << 31);
    for (size_t n = 0; n < plan.views.size(); ++n) {
        const rb::TableView& t = plan.views[n];
        const int64_t* const end = t.index + t.out_len * t.K;
        L->passes[n].index = L->narrow ? upload(std::vector<int32_t>(t.index, end), s)
                                       : upload(std::vector<int64_t>(t.index, end), s);
    }
    for (int k = 0; k < 2; ++k) L->scratch[k] = DeviceBuffer(scratch[k] * sizeof(Acc), s);
    L->mode = plan.views.empty() ? ResizeLaunch::Mode::kCopy : ResizeLaunch::Mode::kPasses;
    if (plan.views.size() == 2 && b.pads.empty()) {
        const int64_t a = plan.views[0].axis, c = plan.views[1].axis;
        L->fused = L->rank >= 2 && std::min(a, c) == L->rank - 2 && std::max(a, c) == L->rank - 1;
    }
    check(cudaStreamSynchronize(s), "upload");  // the tables are complete before any other stream reads them
    return L.release();
}

template <class I, class In, class Out>
void resize_pass(const ResizePass& p, const In* x, Out* y, float ev, cudaStream_t s) {
    constexpr int kThreads = 256;
    resize_pass_kernel<I><<<blocks_for(p.outer * p.out_len * p.inner, kThreads), kThreads, 0, s>>>(
        x, y, I(p.outer), I(p.in_len), I(p.out_len), I(p.inner), I(p.K), p.index.as<I>(), p.weight.as<float>(),
        p.extrap.as<uint8_t>(), ev);
    check(cudaGetLastError(), "resize pass kernel");
}

template <class I, class T>
void resize_enqueue(ResizeLaunch& L, const T* x, T* y, cudaStream_t s) {
    constexpr int kThreads = 256;
    L.last = s;
    if (L.mode == ResizeLaunch::Mode::kEmpty) return;
    if (L.mode == ResizeLaunch::Mode::kFill) {
        fill_kernel<<<blocks_for(L.total_out, kThreads), kThreads, 0, s>>>(y, L.total_out);
        check(cudaGetLastError(), "fill kernel");
        return;
    }
    const Acc* cur = nullptr;  // float between passes
    if (L.padded.ptr) {
        check(cudaMemsetAsync(L.padded.ptr, 0, L.padded.bytes, s), "memset");
        pad_kernel<<<blocks_for(L.total_in, kThreads), kThreads, 0, s>>>(
            x, L.padded.as<Acc>(), L.rank, L.pad_shape.as<int64_t>(), L.pad_padded.as<int64_t>(),
            L.pad_begin.as<int64_t>(), L.total_in);
        check(cudaGetLastError(), "pad kernel");
        cur = L.padded.as<Acc>();
    }
    if (L.mode == ResizeLaunch::Mode::kCopy) {  // identity: copy (through the padded buffer when there is one)
        if (cur) cast_kernel<<<blocks_for(L.total_out, kThreads), kThreads, 0, s>>>(cur, y, L.total_out);
        else check(cudaMemcpyAsync(y, x, L.total_out * sizeof(T), cudaMemcpyDeviceToDevice, s), "copy");
        check(cudaGetLastError(), "copy kernel");
        return;
    }
    if (L.fused) {  // two passes over the last two axes, unpadded
        const ResizePass &a = L.passes[0], &b = L.passes[1];
        const bool a_last = a.inner == 1;  // A is the last axis: B's stride is A's input length
        const I sa = a_last ? 1 : I(b.in_len), sb = a_last ? I(a.in_len) : 1;
        const int64_t n_last = a_last ? a.out_len : b.out_len, rows = L.total_out / n_last;
        const dim3 grid(static_cast<unsigned>((n_last + 127) / 128),
                        static_cast<unsigned>(std::min<int64_t>(rows, 65535)));
        resize_2d_kernel<I><<<grid, 128, 0, s>>>(
            x, y, I(a_last ? b.outer : a.outer), I(a.in_len), I(a.out_len), sa, a.index.as<I>(), a.weight.as<float>(),
            a.extrap.as<uint8_t>(), I(a.K), I(b.in_len), I(b.out_len), sb, b.index.as<I>(), b.weight.as<float>(),
            b.extrap.as<uint8_t>(), I(b.K), a_last, L.extrap_value);
        check(cudaGetLastError(), "resize 2-D kernel");
        return;
    }
    for (size_t n = 0; n < L.passes.size(); ++n) {
        const ResizePass& p = L.passes[n];
        if (n + 1 == L.passes.size()) {
            if (cur) resize_pass<I>(p, cur, y, L.extrap_value, s);
            else resize_pass<I>(p, x, y, L.extrap_value, s);
        } else {
            Acc* next = L.scratch[n % 2].as<Acc>();
            if (cur) resize_pass<I>(p, cur, next, L.extrap_value, s);
            else resize_pass<I>(p, x, next, L.extrap_value, s);
            cur = next;
        }
    }
}

// ------------------------------------------------------------------------------------------------------------
// GridSample

template <class T, class G>
__global__ void gridsample_kernel(rb::GridSampleSpec s, const T* x, const G* grid, T* y) {
    int64_t S = 1;
    for (int d = 0; d < s.D; ++d) S *= s.spatial[d];
    const int64_t total = s.N * s.P;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
        const int64_t n = i / s.P, p = i % s.P;
        rb::PointTaps taps;
        rb::gridsample_point_taps(s, grid + i * s.D, taps);
        const T* xn = x + n * s.C * S;
        T* yn = y + n * s.C * s.P + p;
        for (int64_t c = 0; c < s.C; ++c) yn[c * s.P] = rb::store<T>(static_cast<Acc>(rb::apply_taps(xn + c * S, taps)));
    }
}

// ------------------------------------------------------------------------------------------------------------
// DeformConv: columns [N, C, K, P] in float, then y[n, oc, p] = sum over the group's (ic, k) + bias.

template <class T>
__global__ void deform_columns_kernel(rb::DeformConvSpec s, const T* x, const T* offset, const T* mask, Acc* cols) {
    int64_t S = 1;
    for (int d = 0; d < s.D; ++d) S *= s.spatial[d];
    const int64_t cpg = s.C / s.offset_group;
    const int64_t total = s.N * s.offset_group * s.K * s.P;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
        const int64_t p = i % s.P, k = (i / s.P) % s.K, og = (i / (s.P * s.K)) % s.offset_group,
                      n = i / (s.P * s.K * s.offset_group);
        rb::PointTaps taps;
        double factor;
        rb::deform_point_taps(s, offset, mask, n, og, k, p, taps, factor);
        for (int64_t c = og * cpg; c < (og + 1) * cpg; ++c)
            cols[((n * s.C + c) * s.K + k) * s.P + p] =
                static_cast<Acc>(rb::apply_taps(x + (n * s.C + c) * S, taps) * factor);
    }
}

// y[n, oc, p] = sum over r of W[oc, r] * cols[n, group's rows + r, p] (+ B), r in order: a tiled product, the
// W and column tiles staged in shared memory. Grid: (P tiles, the group's OC tiles, N * group).
constexpr int kContractTile = 16;

template <class T>
__global__ void deform_contract_kernel(rb::DeformConvSpec s, const T* w, const T* b, const Acc* cols, T* y) {
    constexpr int kT = kContractTile;
    __shared__ Acc ws[kT][kT + 1], cs[kT][kT + 1];
    const int64_t icg = s.C / s.group, ocg = s.OC / s.group, R = icg * s.K;
    const int64_t n = blockIdx.z / s.group, g = blockIdx.z % s.group;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t p = blockIdx.x * int64_t(kT) + tx, ocl = blockIdx.y * int64_t(kT) + ty, oc = g * ocg + ocl;
    const Acc* col = cols + (n * s.C + g * icg) * s.K * s.P;
    Acc acc = Acc(0);
    for (int64_t r0 = 0; r0 < R; r0 += kT) {
        ws[ty][tx] = (ocl < ocg && r0 + tx < R) ? rb::load<Acc>(w[oc * R + r0 + tx]) : Acc(0);  // this row's W
        cs[ty][tx] = (p < s.P && r0 + ty < R) ? col[(r0 + ty) * s.P + p] : Acc(0);
        __syncthreads();
        const int kn = R - r0 < kT ? static_cast<int>(R - r0) : kT;
        for (int k = 0; k < kn; ++k) acc += ws[ty][k] * cs[k][tx];
        __syncthreads();
    }
    if (ocl < ocg && p < s.P) {
        if (b) acc += rb::load<Acc>(b[oc]);
        y[(n * s.OC + oc) * s.P + p] = rb::store<T>(acc);
    }
}

}  // namespace

extern "C" {

int rb_cuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no driver / no device" error
        return 0;
    }
    return n;
}

int rb_cuda_resize_prepare(const char* attrs, const rb_tensor* x, const rb_resize_runtime* runtime,
                           const rb_tensor* y, void* stream, rb_cuda_resize** plan, char* err, int64_t errlen) {
    *plan = nullptr;
    return guarded(err, errlen, [&] {
        const rb::ResizePlan p = rb::capi::resize_plan_c(attrs, *x, runtime, *y);
        dispatch(x->dtype, [](auto*) {});  // a supported dtype
        *plan = reinterpret_cast<rb_cuda_resize*>(resize_prepare(p, x->dtype, static_cast<cudaStream_t>(stream)));
    });
}

int rb_cuda_resize_enqueue(rb_cuda_resize* plan, const void* x, void* y, void* stream, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        if (!plan) throw std::invalid_argument("no resize plan");
        ResizeLaunch& L = *reinterpret_cast<ResizeLaunch*>(plan);
        dispatch(L.dtype, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            const auto s = static_cast<cudaStream_t>(stream);
            if (L.narrow) resize_enqueue<int32_t>(L, static_cast<const T*>(x), static_cast<T*>(y), s);
            else resize_enqueue<int64_t>(L, static_cast<const T*>(x), static_cast<T*>(y), s);
        });
    });
}

void rb_cuda_resize_release(rb_cuda_resize* plan) { delete reinterpret_cast<ResizeLaunch*>(plan); }

int rb_cuda_resize_ir(const char* attrs, const rb_tensor* x, const rb_resize_runtime* runtime, rb_tensor* y,
                      void* stream, char* err, int64_t errlen) {
    rb_cuda_resize* plan = nullptr;
    int rc = rb_cuda_resize_prepare(attrs, x, runtime, y, stream, &plan, err, errlen);
    if (rc == 0) rc = rb_cuda_resize_enqueue(plan, x->data, y->data, stream, err, errlen);
    rb_cuda_resize_release(plan);
    return rc;
}

int rb_cuda_gridsample(const rb_tensor* inputs, int32_t n_inputs, const rb_gridsample_params* params, rb_tensor* y,
                       void* stream, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        const rb::GridSampleSpec s = rb::capi::gridsample_spec_c(inputs, n_inputs, *params, *y);
        const int64_t total = s.N * s.P;
        if (total == 0 || s.C == 0) return;
        dispatch(inputs[0].dtype, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            dispatch(inputs[1].dtype, [&](auto* gtag) {
                using G = std::remove_pointer_t<decltype(gtag)>;
                gridsample_kernel<<<blocks_for(total, 128), 128, 0, static_cast<cudaStream_t>(stream)>>>(
                    s, static_cast<const T*>(inputs[0].data), static_cast<const G*>(inputs[1].data),
                    static_cast<T*>(y->data));
            });
        });
        check(cudaGetLastError(), "gridsample kernel");
    });
}

int rb_cuda_deformconv(const rb_tensor* inputs, int32_t n_inputs, const rb_deformconv_params* params, rb_tensor* y,
                       void* stream, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        const rb::DeformConvSpec s = rb::capi::deformconv_spec_c(inputs, n_inputs, *params, *y);
        cudaStream_t st = static_cast<cudaStream_t>(stream);
        DeviceBuffer cols(static_cast<size_t>(s.N * s.C * s.K * s.P) * sizeof(Acc), st);
        dispatch(inputs[0].dtype, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            auto in = [&](int32_t i) { return static_cast<const T*>(rb::capi::optional_input(inputs, n_inputs, i)); };
            const int64_t n1 = s.N * s.offset_group * s.K * s.P;
            deform_columns_kernel<<<blocks_for(n1, 128), 128, 0, st>>>(s, in(0), in(2), in(4), cols.as<Acc>());
            check(cudaGetLastError(), "deformconv columns kernel");
            const int64_t ocg = s.OC / s.group, t = kContractTile;
            if (s.N * s.group > 65535 || (ocg + t - 1) / t > 65535)
                throw std::invalid_argument("DeformConv: N * group or OC / group is too large for the CUDA grid");
            const dim3 grid(static_cast<unsigned>((s.P + t - 1) / t), static_cast<unsigned>((ocg + t - 1) / t),
                            static_cast<unsigned>(s.N * s.group));
            if (s.N * s.OC * s.P)
                deform_contract_kernel<<<grid, dim3(t, t), 0, st>>>(s, in(1), in(3), cols.as<Acc>(),
                                                                   static_cast<T*>(y->data));
            check(cudaGetLastError(), "deformconv contraction kernel");
        });
    });
}

int rb_cuda_alloc(void** ptr, int64_t bytes, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] { check(cudaMalloc(ptr, static_cast<size_t>(bytes)), "cudaMalloc"); });
}

int rb_cuda_free(void* ptr) { return cudaFree(ptr) == cudaSuccess ? 0 : 1; }

int rb_cuda_copy(void* dst, const void* src, int64_t bytes, int32_t to_device, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        check(cudaDeviceSynchronize(), "kernel");
        check(cudaMemcpy(dst, src, static_cast<size_t>(bytes), to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost),
              "cudaMemcpy");
    });
}

}  // extern "C"
