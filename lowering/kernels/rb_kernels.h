/* resample-bridge kernels: the C ABI of the CPU library (librb_kernels.so), loaded by lowering/native.py.
 *
 * Enumerations are indices into the IR's vocabulary tuples (semantics/ir.py: SAMPLER_KINDS, NEAREST_MODES,
 * GRID_PADDINGS, PADDING_ON, ARITH; DeformConv border: zero_taps = 0, clamp_in_range = 1); rb_vocabulary()
 * lists the names this build was compiled with. dtype: 0 float32, 1 float16, 2 float64. Tensors are dense,
 * row-major. Every function returns 0, or non-zero with a message in err (errlen bytes, NUL-terminated).
 */
#ifndef RB_KERNELS_H
#define RB_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifndef RB_API
#if defined(__GNUC__)
#define RB_API __attribute__((visibility("default")))
#else
#define RB_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define RB_ABI_VERSION 1

typedef struct { int64_t num, den; double value; } rb_number; /* exact num/den when den > 0, else value */

typedef struct {
    int64_t axis, in_len, out_len;
    rb_number a, b, filter_scale; /* src = a*dst + b */
    int32_t nearest;              /* resolved rounding rule (not "simple") */
    int32_t stretch_clamp;
    int32_t has_valid;            /* tf_crop_and_resize: src outside [0, in_len-1] -> extrapolation value */
} rb_axis;

typedef struct {
    int32_t kind;
    int32_t antialias;
    int32_t exclude_outside;
    rb_number cubic_a;
} rb_resize_sampler;

typedef struct {
    int64_t axis, in_len, out_len, K;
    const int64_t* index;    /* [out_len, K] */
    const double* weight;    /* [out_len, K] */
    const uint8_t* extrap;   /* [out_len] or NULL */
} rb_table;

RB_API int rb_abi_version(void);
RB_API const char* rb_vocabulary(int32_t field, int32_t index); /* field: 0 kind, 1 nearest, 2 padding, 3 padding_on,
                                                             4 arith, 5 deform border; NULL past the end */

/* Tap tables built in C++ (the port of semantics/taps.py). */
RB_API int64_t rb_tap_count(const rb_axis* axis, const rb_resize_sampler* sampler);
RB_API int rb_build_taps(const rb_axis* axis, const rb_resize_sampler* sampler, int64_t K, int64_t* index, double* weight,
                  uint8_t* extrap, char* err, int64_t errlen);

/* Resize with the given tables (applied in order), or with tables built from bound axes. pads: 2*rank values
 * (begins then ends) or NULL. */
RB_API int rb_resize_tables(int32_t dtype, const void* x, void* y, int32_t rank, const int64_t* in_shape,
                     const int64_t* pads, int32_t n_tables, const rb_table* tables, double extrapolation_value,
                     int32_t threads, char* err, int64_t errlen);
RB_API int rb_resize_axes(int32_t dtype, const void* x, void* y, int32_t rank, const int64_t* in_shape,
                   const int64_t* pads, int32_t n_axes, const rb_axis* axes, const rb_resize_sampler* sampler,
                   double extrapolation_value, int32_t threads, char* err, int64_t errlen);

/* Resize from the op's attributes (the text form "name=value" per line of rb/attrs.hpp ResizeAttrs), bound
 * in C++ (the port of semantics/coords.py bind_resize) for this input shape and the run-time roi / scales /
 * sizes (NULL when not fed). rb_resize_bind reports the output shape (rank values) and the bound axes
 * (at most rank); rb_resize_ir runs it (y holds y_size elements). */
RB_API int rb_resize_bind(const char* attrs, int32_t rank, const int64_t* in_shape, const double* roi, int64_t n_roi,
                          const double* scales, int64_t n_scales, const int64_t* sizes, int64_t n_sizes,
                          int64_t* out_shape, int32_t* n_axes, rb_axis* axes, char* err, int64_t errlen);
RB_API int rb_resize_ir(int32_t dtype, const void* x, void* y, int64_t y_size, const char* attrs, int32_t rank,
                        const int64_t* in_shape, const double* roi, int64_t n_roi, const double* scales,
                        int64_t n_scales, const int64_t* sizes, int64_t n_sizes, int32_t threads, char* err,
                        int64_t errlen);

/* GridSample: x [N, C, spatial...] (x_shape: D + 2 values), grid [N, out..., D] (out_shape: D values),
 * y [N, C, out...]; y has x's dtype, the grid its own (ONNX types them apart). */
RB_API int rb_gridsample(int32_t dtype, int32_t grid_dtype, const void* x, const void* grid, void* y, int32_t D, const int64_t* x_shape,
                  const int64_t* out_shape, int32_t kind, double cubic_a, int32_t padding, int32_t padding_on,
                  int32_t align_corners, int32_t arith, int32_t threads, char* err, int64_t errlen);

/* DeformConv (ONNX input order): x [N, C, spatial...], w [OC, C/group, kernel...], offset [N, OG*K*D, out...],
 * b [OC] or NULL, mask [N, OG*K, out...] or NULL; y [N, OC, out...]. pads: begins then ends. */
RB_API int rb_deformconv(int32_t dtype, const void* x, const void* w, const void* offset, const void* b, const void* mask,
                  void* y, int32_t D, const int64_t* x_shape, const int64_t* w_shape, const int64_t* strides,
                  const int64_t* pads, const int64_t* dilations, int64_t group, int64_t offset_group, int32_t kind,
                  double cubic_a, int32_t border, int32_t threads, char* err, int64_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* RB_KERNELS_H */
