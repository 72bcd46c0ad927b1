/* resample-bridge kernels: the C ABI of the CPU library (librb_kernels.so), loaded by lowering/compiled with
 * ctypes; the CUDA launchers (../cuda/rb_cuda.h) take the same structs.
 *
 * Enumerations are indices into the IR's vocabulary tuples (semantics/vocab.py: SAMPLER_KINDS, NEAREST_RULES,
 * GRID_PADDINGS, PADDING_ON, ARITH, DEFORM_BORDERS); rb_vocabulary() lists the names this build was compiled
 * with. dtype: 0 float32, 1 float16, 2 float64; this CPU library also 3 uint8, 4 int8, 5 uint16, 6 int16,
 * 7 int32, 8 int64 (results rounded half to even and saturated; Resize linear / cubic exactly). Tensors are dense, row-major. Every function returning int
 * returns 0, or non-zero with a message in err (errlen bytes, NUL-terminated).
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

#define RB_ABI_VERSION 3
/* The custom ops' domain (ONNX domain, OpenVINO op version, TensorRT plugin namespace) and attribute schema
 * version: semantics/schema.py DOMAIN, SCHEMA_VERSION. */
#define RB_DOMAIN "resample_bridge"
#define RB_SCHEMA_VERSION 1

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

/* A tensor: data (device memory for the CUDA launchers; NULL = an omitted optional input), dtype, shape. An
 * output has the input's dtype and the op's output shape. */
typedef struct {
    void* data;
    int32_t dtype;
    int32_t rank;
    const int64_t* shape;
} rb_tensor;

/* A resize's run-time roi / scales / sizes: the node's inputs for attributes set to "input" (NULL: not fed). */
typedef struct {
    const double* roi;
    int64_t n_roi;
    const double* scales;
    int64_t n_scales;
    const int64_t* sizes;
    int64_t n_sizes;
} rb_resize_runtime;

typedef struct {
    int32_t kind, padding, padding_on, align_corners, arith;
    double cubic_a;
} rb_gridsample_params;

typedef struct {
    const int64_t* strides;   /* D values */
    const int64_t* pads;      /* 2*D values, begins then ends */
    const int64_t* dilations; /* D values */
    int64_t group, offset_group;
    int32_t kind, border;
    double cubic_a;
} rb_deformconv_params;

RB_API int rb_abi_version(void);
RB_API const char* rb_vocabulary(int32_t field, int32_t index); /* field: 0 kind, 1 nearest, 2 padding,
                                                3 padding_on, 4 arith, 5 deform border; NULL past the end */

/* The op attribute schema (rb/attrs.hpp visit()): op 0 resize, 1 gridsample, 2 deformconv. rb_op_type: the
 * OpenVINO op / TensorRT plugin name; rb_attribute: the index-th attribute's name and type (0 INT, 1 FLOAT,
 * 2 STRING, 3 INTS); rb_attribute_default: the value it takes when absent, in the text form (lists
 * space-separated, bools 0/1); NULL past the end. */
RB_API const char* rb_op_type(int32_t op);
RB_API const char* rb_attribute(int32_t op, int32_t index, int32_t* type);
RB_API const char* rb_attribute_default(int32_t op, int32_t index);

/* Tap tables built in C++ (the port of semantics/taps.py). */
RB_API int64_t rb_tap_count(const rb_axis* axis, const rb_resize_sampler* sampler);
RB_API int rb_build_taps(const rb_axis* axis, const rb_resize_sampler* sampler, int64_t K, int64_t* index,
                         double* weight, uint8_t* extrap, char* err, int64_t errlen);

/* Resize with the given tables (applied in order), or with tables built from bound axes. pads: 2*rank values
 * (begins then ends) or NULL. */
RB_API int rb_resize_tables(const rb_tensor* x, rb_tensor* y, const int64_t* pads, int32_t n_tables,
                            const rb_table* tables, double extrapolation_value, int32_t threads, char* err,
                            int64_t errlen);
RB_API int rb_resize_axes(const rb_tensor* x, rb_tensor* y, const int64_t* pads, int32_t n_axes, const rb_axis* axes,
                          const rb_resize_sampler* sampler, double extrapolation_value, int32_t threads, char* err,
                          int64_t errlen);

/* Resize from the op's attributes (the text form "name=value" per line of rb/attrs.hpp ResizeAttrs), bound
 * in C++ (the port of semantics/coords.py bind_resize) for this input shape and the run-time values.
 * rb_resize_bind reports the output shape (rank values) and the bound axes (at most rank); rb_resize_ir runs it. */
RB_API int rb_resize_bind(const char* attrs, int32_t rank, const int64_t* in_shape, const rb_resize_runtime* runtime,
                          int64_t* out_shape, int32_t* n_axes, rb_axis* axes, char* err, int64_t errlen);
RB_API int rb_resize_ir(const char* attrs, const rb_tensor* x, const rb_resize_runtime* runtime, rb_tensor* y,
                        int32_t threads, char* err, int64_t errlen);

/* GridSample: inputs X [N, C, spatial...] and grid [N, out..., D] (its own float dtype: ONNX types them
 * apart); y [N, C, out...]. */
RB_API int rb_gridsample(const rb_tensor* inputs, int32_t n_inputs, const rb_gridsample_params* params, rb_tensor* y,
                         int32_t threads, char* err, int64_t errlen);

/* DeformConv, inputs in ONNX order: X [N, C, spatial...], W [OC, C/group, kernel...], offset [N, OG*K*D, out...],
 * then B [OC] and mask [N, OG*K, out...] (data NULL or n_inputs short: omitted); y [N, OC, out...]. */
RB_API int rb_deformconv(const rb_tensor* inputs, int32_t n_inputs, const rb_deformconv_params* params,
                         rb_tensor* y, int32_t threads, char* err, int64_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* RB_KERNELS_H */
