// Error plumbing shared by the C ABIs (kernels/capi.cpp, cuda/rb_cuda.cu): a C++ exception becomes return
// code 1 with its message copied into the caller's buffer, so nothing throws across the C boundary.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
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

}  // namespace capi
}  // namespace rb
