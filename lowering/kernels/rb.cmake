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
target_compile_options(rb_headers INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-O3 -ffp-contract=off>
                       $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)
# The CPU libraries are built on first use on the machine that runs them (lowering/compiled keys its cache by
# the CPU's flags too): let the compiler use that CPU's vector units. No effect on results: FP contraction stays
# off and nothing reassociates.
option(RB_NATIVE_ARCH "compile the CPU kernels for the build machine's CPU (-march=native)" ON)
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-march=native RB_HAS_MARCH_NATIVE)
if(RB_NATIVE_ARCH AND RB_HAS_MARCH_NATIVE)
  target_compile_options(rb_headers INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()
