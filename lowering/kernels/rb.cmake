# The kernel headers (this folder: rb/*.hpp, rb_kernels.h) as the INTERFACE target rb_headers, with the flags
# every target compiling them needs, written once. Included by the root project (../CMakeLists.txt) and by a
# sub-project configured on its own.
include_guard(GLOBAL)

if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()
set(CMAKE_CXX_EXTENSIONS ON)  # _Float16 and __int128 are GNU extensions

add_library(rb_headers INTERFACE)
target_include_directories(rb_headers INTERFACE ${CMAKE_CURRENT_LIST_DIR})
target_compile_features(rb_headers INTERFACE cxx_std_17)
# No FMA contraction (-ffp-contract=off, nvcc --fmad=false): coordinates are evaluated in the oracle's
# operation order; a fused multiply-add would move nearest ties and floor boundaries by an ulp.
target_compile_options(rb_headers INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-O2 -ffp-contract=off>
                       $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)
