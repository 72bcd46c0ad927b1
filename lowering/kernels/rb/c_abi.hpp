// Error plumbing shared by the C ABIs (kernels/capi.cpp, cuda/rb_cuda.cu): a C++ exception becomes return
// code 1 with its message copied into the caller's buffer, so nothing throws across the C boundary.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

namespace rb {
namespace capi {

inline void set_err(char* err, int64_t errlen, const std::string& msg) {
    if (!err || errlen <= 0) return;
    const size_t n = std::min<size_t>(msg.size(), static_cast<size_t>(errlen - 1));
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
}

template <class F>
inline int guarded(char* err, int64_t errlen, F&& f) {
    try {
        f();
        return 0;
    } catch (const std::exception& e) {
        set_err(err, errlen, e.what());
    } catch (...) {
        set_err(err, errlen, "unknown error");
    }
    return 1;
}

// The C ABI's dtype codes: 0 float32, 1 float16 (``Half``: _Float16 on the host, __half on the device),
// 2 float64. ``f`` is called with a null pointer of the element type, a tag to deduce it from.
template <class Half, class F>
inline void dispatch_dtype(int32_t dtype, F&& f) {
    switch (dtype) {
        case 0: f(static_cast<float*>(nullptr)); break;
        case 1: f(static_cast<Half*>(nullptr)); break;
        case 2: f(static_cast<double*>(nullptr)); break;
        default: throw std::invalid_argument("unsupported dtype code " + std::to_string(dtype));
    }
}

}  // namespace capi
}  // namespace rb
