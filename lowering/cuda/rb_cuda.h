/* resample-bridge CUDA launchers: the C ABI of librb_cuda.so (built by lowering/cuda/CMakeLists.txt where nvcc is
 * found). Same argument conventions as ../kernels/rb_kernels.h; tensors are device pointers, work is queued on
 * ``stream`` (a cudaStream_t, NULL = the default stream). Accumulation: float (float64 coordinates and sampling
 * weights, as on the CPU). Returns 0, or non-zero with a message in err. */
#ifndef RB_CUDA_H
#define RB_CUDA_H

#include <stdint.h>

#ifndef RB_API
#define RB_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

RB_API int rb_cuda_device_count(void);

RB_API int rb_cuda_resize_ir(int32_t dtype, const void* x, void* y, int64_t y_size, const char* attrs, int32_t rank,
                             const int64_t* in_shape, const double* roi, int64_t n_roi, const double* scales,
                             int64_t n_scales, const int64_t* sizes, int64_t n_sizes, void* stream, char* err,
                             int64_t errlen);

RB_API int rb_cuda_gridsample(int32_t dtype, int32_t grid_dtype, const void* x, const void* grid, void* y, int32_t D,
                              const int64_t* x_shape, const int64_t* out_shape, int32_t kind, double cubic_a,
                              int32_t padding, int32_t padding_on, int32_t align_corners, int32_t arith, void* stream,
                              char* err, int64_t errlen);

RB_API int rb_cuda_deformconv(int32_t dtype, const void* x, const void* w, const void* offset, const void* b,
                              const void* mask, void* y, int32_t D, const int64_t* x_shape, const int64_t* w_shape,
                              const int64_t* strides, const int64_t* pads, const int64_t* dilations, int64_t group,
                              int64_t offset_group, int32_t kind, double cubic_a, int32_t border, void* stream,
                              char* err, int64_t errlen);

/* Test helpers (Python without a CUDA array library): device memory and copies. */
RB_API int rb_cuda_alloc(void** ptr, int64_t bytes, char* err, int64_t errlen);
RB_API int rb_cuda_free(void* ptr);
RB_API int rb_cuda_copy(void* dst, const void* src, int64_t bytes, int32_t to_device, char* err, int64_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* RB_CUDA_H */
