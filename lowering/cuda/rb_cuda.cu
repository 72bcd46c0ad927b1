// CUDA launchers over the shared headers (../kernels/rb): the same per-element code as the CPU launchers,
// one thread per output element (resize pass), per output point (GridSample) or per sampled column entry and
// per output value (DeformConv: im2col, then a plain per-output contraction; no cuBLAS dependency).
// Tap tables are built and bound on the host (bind.hpp / taps.hpp) and uploaded.
#include "rb_cuda.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstring>
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

// Device memory freed with the stream's order (cudaFreeAsync) when the owner goes out of scope.
struct DeviceBuffer {
    void* ptr = nullptr;
    cudaStream_t stream = nullptr;
    DeviceBuffer(size_t bytes, cudaStream_t s) : stream(s) {
        if (bytes) check(cudaMallocAsync(&ptr, bytes, s), "cudaMallocAsync");
    }
    ~DeviceBuffer() {
        if (ptr) cudaFreeAsync(ptr, stream);
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr(o.ptr), stream(o.stream) { o.ptr = nullptr; }
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
// Resize

template <class In, class Out>
__global__ void resize_pass_kernel(const In* x, Out* y, int64_t outer, int64_t Lin, int64_t Lout, int64_t inner,
                                   int64_t K, const int64_t* index, const float* weight, const uint8_t* extrap,
                                   float extrap_value) {
    const int64_t total = outer * Lout * inner;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
        const int64_t in_ = i % inner, r = i / inner, o = r % Lout, q = r / Lout;
        if (extrap && extrap[o]) {
            y[i] = rb::store<Out>(static_cast<Acc>(extrap_value));
            continue;
        }
        y[i] = rb::store<Out>(rb::tap_sum<Acc>(x + q * Lin * inner + in_, inner, index + o * K, weight + o * K, K));
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

template <class T>
void resize_cuda(const rb::ResizePlan& plan, const T* x, T* y, cudaStream_t s) {
    constexpr int kThreads = 256;
    const auto& b = plan.bound;
    const int64_t total_out = rb::element_count(b.out_shape);
    if (total_out == 0) return;
    if (plan.views.empty() && !b.axes.empty()) {
        fill_kernel<<<blocks_for(total_out, kThreads), kThreads, 0, s>>>(y, total_out);
        return;
    }
    std::vector<int64_t> shape = b.in_shape;
    const int rank = static_cast<int>(shape.size());
    const Acc* cur = nullptr;  // float between passes
    DeviceBuffer padded_buf(0, s);
    const bool padded = !b.pads.empty();
    std::vector<int64_t> pshape(shape);
    if (padded) {
        for (int d = 0; d < rank; ++d) pshape[d] += b.pads[d] + b.pads[rank + d];
        DeviceBuffer tmp(rb::element_count(pshape) * sizeof(Acc), s);
        std::swap(padded_buf.ptr, tmp.ptr);
        check(cudaMemsetAsync(padded_buf.ptr, 0, rb::element_count(pshape) * sizeof(Acc), s), "memset");
        const std::vector<int64_t> begins(b.pads.begin(), b.pads.begin() + rank);
        DeviceBuffer dshape = upload(shape, s), dpadded = upload(pshape, s), dbegin = upload(begins, s);
        const int64_t n = rb::element_count(shape);
        pad_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(x, padded_buf.as<Acc>(), rank, dshape.as<int64_t>(),
                                                                 dpadded.as<int64_t>(), dbegin.as<int64_t>(), n);
        check(cudaGetLastError(), "pad kernel");
        cur = padded_buf.as<Acc>();
        shape = pshape;
    }
    if (plan.views.empty()) {  // identity: copy (through the padded buffer when there is one)
        if (padded) cast_kernel<<<blocks_for(total_out, kThreads), kThreads, 0, s>>>(cur, y, total_out);
        else check(cudaMemcpyAsync(y, x, total_out * sizeof(T), cudaMemcpyDeviceToDevice, s), "copy");
        return;
    }
    DeviceBuffer bufs[2] = {DeviceBuffer(0, s), DeviceBuffer(0, s)};
    for (size_t n = 0; n < plan.views.size(); ++n) {
        const rb::TableView& t = plan.views[n];
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < t.axis; ++d) outer *= shape[d];
        for (int64_t d = t.axis + 1; d < rank; ++d) inner *= shape[d];
        std::vector<float> w(t.weight, t.weight + t.out_len * t.K);
        std::vector<int64_t> idx(t.index, t.index + t.out_len * t.K);
        std::vector<uint8_t> ex;
        if (t.extrap) ex.assign(t.extrap, t.extrap + t.out_len);
        DeviceBuffer didx = upload(idx, s), dw = upload(w, s), dex = upload(ex, s);
        const int64_t count = outer * t.out_len * inner;
        const bool last = n + 1 == plan.views.size();
        const float ev = static_cast<float>(b.extrapolation_value);
        const uint8_t* exp = t.extrap ? dex.as<uint8_t>() : nullptr;
        const unsigned blocks = blocks_for(count, kThreads);
        if (last) {
            if (cur) resize_pass_kernel<<<blocks, kThreads, 0, s>>>(cur, y, outer, t.in_len, t.out_len, inner, t.K,
                                                                    didx.as<int64_t>(), dw.as<float>(), exp, ev);
            else resize_pass_kernel<<<blocks, kThreads, 0, s>>>(x, y, outer, t.in_len, t.out_len, inner, t.K,
                                                                didx.as<int64_t>(), dw.as<float>(), exp, ev);
        } else {
            DeviceBuffer& next = bufs[n % 2];
            DeviceBuffer fresh(count * sizeof(Acc), s);
            std::swap(next.ptr, fresh.ptr);  // the previous contents of this slot are no longer read
            if (cur) resize_pass_kernel<<<blocks, kThreads, 0, s>>>(cur, next.as<Acc>(), outer, t.in_len, t.out_len,
                                                                    inner, t.K, didx.as<int64_t>(), dw.as<float>(),
                                                                    exp, ev);
            else resize_pass_kernel<<<blocks, kThreads, 0, s>>>(x, next.as<Acc>(), outer, t.in_len, t.out_len, inner,
                                                                t.K, didx.as<int64_t>(), dw.as<float>(), exp, ev);
            cur = next.as<Acc>();
        }
        check(cudaGetLastError(), "resize pass kernel");
        shape[t.axis] = t.out_len;
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

template <class T>
__global__ void deform_contract_kernel(rb::DeformConvSpec s, const T* w, const T* b, const Acc* cols, T* y) {
    const int64_t icg = s.C / s.group, ocg = s.OC / s.group;
    const int64_t total = s.N * s.OC * s.P;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
        const int64_t p = i % s.P, oc = (i / s.P) % s.OC, n = i / (s.P * s.OC), g = oc / ocg;
        Acc acc = 0;
        const T* wrow = w + oc * icg * s.K;
        const Acc* col = cols + (n * s.C + g * icg) * s.K * s.P + p;
        for (int64_t r = 0; r < icg * s.K; ++r) acc += rb::load<Acc>(wrow[r]) * col[r * s.P];
        if (b) acc += rb::load<Acc>(b[oc]);
        y[i] = rb::store<T>(acc);
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

int rb_cuda_resize_ir(const char* attrs, const rb_tensor* x, const rb_resize_runtime* runtime, rb_tensor* y,
                      void* stream, char* err, int64_t errlen) {
    return guarded(err, errlen, [&] {
        const rb::ResizePlan plan = rb::capi::resize_plan_c(attrs, *x, runtime, *y);
        dispatch(x->dtype, [&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            resize_cuda(plan, static_cast<const T*>(x->data), static_cast<T*>(y->data),
                        static_cast<cudaStream_t>(stream));
        });
    });
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
            const int64_t n1 = s.N * s.offset_group * s.K * s.P, n2 = s.N * s.OC * s.P;
            deform_columns_kernel<<<blocks_for(n1, 128), 128, 0, st>>>(s, in(0), in(2), in(4), cols.as<Acc>());
            check(cudaGetLastError(), "deformconv columns kernel");
            deform_contract_kernel<<<blocks_for(n2, 256), 256, 0, st>>>(s, in(1), in(3), cols.as<Acc>(),
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
