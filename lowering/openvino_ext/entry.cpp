// The extension library's entry point: it refuses another OpenVINO release in one line, then hands OpenVINO the
// ops of the copy compiled for this CPU's x86 level (RB_ISA_DISPATCH: base, x86-64-v3, x86-64-v4, each an
// isolated copy of ops.cpp + extension.cpp whose symbols carry a prefix, CMakeLists.txt), so the one library
// runs on every x86-64 CPU OpenVINO runs on and never executes an instruction the CPU lacks. RB_ISA (base, v3,
// v4) picks a lower level, as it does for the kernels' own library (tests, benchmarks).
#if defined(__linux__)
#include <link.h>  // dl_iterate_phdr: the OpenVINO cores loaded in the process
#endif

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "openvino/core/extension.hpp"
#include "openvino/core/except.hpp"
#include "openvino/core/version.hpp"

using Extensions = void (*)(void*);

#ifdef RB_ISA_DISPATCH
extern "C" void rbbase_rb_isa_extensions(void*);
extern "C" void rbv3_rb_isa_extensions(void*);
extern "C" void rbv4_rb_isa_extensions(void*);
#else
extern "C" void rb_isa_extensions(void*);
#endif

namespace {

// The release this library was compiled against, "2026.4.1": an op's layout and the plugin's calls into it are
// that release's, so loading into another one is refused here, in one line naming both, instead of crashing.
std::string built_for() {
    return std::to_string(OPENVINO_VERSION_MAJOR) + "." + std::to_string(OPENVINO_VERSION_MINOR) + "." +
           std::to_string(OPENVINO_VERSION_PATCH);
}

#if defined(__linux__)
// libopenvino.so.<suffix> of this release: "2641" for 2026.4.1 (the wheel's soname).
std::string soname_suffix() {
    return std::to_string(OPENVINO_VERSION_MAJOR % 100) + std::to_string(OPENVINO_VERSION_MINOR) +
           std::to_string(OPENVINO_VERSION_PATCH);
}

// The suffixes of every libopenvino.so.<suffix> in the process: another release's core loaded beside ours (a
// library path that reaches this release's libraries from another release's process) means two OpenVINOs.
int collect_cores(struct dl_phdr_info* info, size_t, void* data) {
    const std::string name = info->dlpi_name ? info->dlpi_name : "";
    const std::string key = "libopenvino.so.";
    const size_t at = name.rfind(key);
    if (at != std::string::npos && (at == 0 || name[at - 1] == '/')) {
        static_cast<std::vector<std::string>*>(data)->push_back(name.substr(at + key.size()));
    }
    return 0;
}

std::string release_of(const std::string& suffix) {  // "2541" -> "2025.4.1"
    if (suffix.size() != 4) return "libopenvino.so." + suffix;
    return "20" + suffix.substr(0, 2) + "." + suffix.substr(2, 1) + "." + suffix.substr(3);
}
#endif

void check_release() {
    const std::string running = ov::get_openvino_version().buildNumber;  // "2026.4.1-22982-..."
    const std::string want = built_for();
    std::string other;
    if (running.compare(0, want.size(), want) != 0 ||
        (running.size() > want.size() && running[want.size()] != '-')) {
        other = running.substr(0, running.find('-'));
    }
#if defined(__linux__)
    std::vector<std::string> cores;
    dl_iterate_phdr(collect_cores, &cores);
    for (const auto& c : cores)
        if (other.empty() && c != soname_suffix()) other = release_of(c);
#endif
    if (!other.empty()) {
        OPENVINO_THROW("the resample-bridge extension was built for OpenVINO ", want, " and is loaded into OpenVINO ",
                       other, ": convert the model again with the OpenVINO release that runs it");
    }
}

#ifdef RB_ISA_DISPATCH
// The x86 levels this CPU (and its OS, which must save the AVX / AVX-512 state) runs: libgcc's CPU model checks
// both. The order of the levels: base, v3, v4.
int best_level() {
    __builtin_cpu_init();
    const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
                    __builtin_cpu_supports("f16c") && __builtin_cpu_supports("popcnt") &&
                    __builtin_cpu_supports("sse4.2");
    const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                    __builtin_cpu_supports("avx512vl");
    return v4 ? 2 : v3 ? 1 : 0;
}

Extensions pick() {
    static const Extensions copies[] = {rbbase_rb_isa_extensions, rbv3_rb_isa_extensions, rbv4_rb_isa_extensions};
    static const char* names[] = {"base", "v3", "v4"};
    int level = best_level();
    if (const char* want = std::getenv("RB_ISA")) {  // a lower level on request; never one the CPU lacks
        for (int i = 0; i < level; ++i)
            if (std::strcmp(want, names[i]) == 0) level = i;
    }
    return copies[level];
}
#else
Extensions pick() { return rb_isa_extensions; }
#endif

std::vector<ov::Extension::Ptr> extensions() {
    check_release();
    std::vector<ov::Extension::Ptr> out;
    pick()(&out);
    return out;
}

}  // namespace

OPENVINO_CREATE_EXTENSIONS(extensions());
