/* resample-bridge CUDA launchers: the C ABI of librb_cuda.so (built by lowering/cuda/CMakeLists.txt where nvcc is
 * found). The structs and conventions of ../kernels/rb_kernels.h; tensor data are device pointers, work is queued
 * on ``stream`` (a cudaStream_t, NULL = the default stream). Accumulation: float (float64 coordinates and
 * sampling weights, as on the CPU). Returns 0, or non-zero with a message in err. */
#ifndef RB_CUDA_H
#define RB_CUDA_H

#include <stdint.h>

#include "rb_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

RB_API int rb_cuda_device_count(void);

/* Resize in two steps, as a TensorRT plugin uses it: prepare binds the attributes to x's and y's shapes (their
 * data unused), builds the tap tables and uploads them with the scratch, once per shape (it waits for ``stream``);
 * enqueue only queues kernels. A plan serves one stream at a time; release frees it in the order of the stream of
 * its last enqueue. rb_cuda_resize_ir is the three in one call. */
typedef struct rb_cuda_resize rb_cuda_resize;
RB_API int rb_cuda_resize_prepare(const char* attrs, const rb_tensor* x, const rb_resize_runtime* runtime,
                                  const rb_tensor* y, void* stream, rb_cuda_resize** plan, char* err, int64_t errlen);
RB_API int rb_cuda_resize_enqueue(rb_cuda_resize* plan, const void* x, void* y, void* stream, char* err,
                                  int64_t errlen);
RB_API void rb_cuda_resize_release(rb_cuda_resize* plan);
RB_API int rb_cuda_resize_ir(const char* attrs, const rb_tensor* x, const rb_resize_runtime* runtime, rb_tensor* y,
                             void* stream, char* err, int64_t errlen);
RB_API int rb_cuda_gridsample(const rb_tensor* inputs, int32_t n_inputs, const rb_gridsample_params* params,
                              rb_tensor* y, void* stream, char* err, int64_t errlen);
RB_API int rb_cuda_deformconv(const rb_tensor* inputs, int32_t n_inputs, const rb_deformconv_params* params,
                              rb_tensor* y, void* stream, char* err, int64_t errlen);

/* Test helpers (Python without a CUDA array library): device memory and copies. */
RB_API int rb_cuda_alloc(void** ptr, int64_t bytes, char* err, int64_t errlen);
RB_API int rb_cuda_free(void* ptr);
RB_API int rb_cuda_copy(void* dst, const void* src, int64_t bytes, int32_t to_device, char* err, int64_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* RB_CUDA_H */
