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
# -fno-trapping-math (clang's default): no FP exception is observed, so g++ may compute both sides of a select;
# without it the per-point coordinate loops (block_taps.hpp) stay scalar on AVX2, which has no masked vector
# ops (GridSample 5-D 4.7x slower than the AVX-512 build, measured). Every result keeps its IEEE value.
target_compile_options(rb_headers INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-O3 -ffp-contract=off -fno-trapping-math>
                       $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)

# The x86 level the CPU code is compiled for: one library per level, the loader (lowering/compiled/build.py)
# picks the level from the CPU's features (or RB_ISA) and keys its cache by it. base: the compiler's default
# target (x86-64, or any other architecture: the kernels' intrinsics are all behind __AVX2__ / __AVX512F__);
# v3: x86-64-v3 (AVX2, FMA, BMI2, F16C); v4: x86-64-v4 (AVX-512 F/BW/CD/DQ/VL); native: -march=native.
# The level changes speed only: FP contraction stays off and nothing reassociates.
set(RB_ISA "base" CACHE STRING "x86 level of the CPU kernels: base, v3, v4 or native")
set_property(CACHE RB_ISA PROPERTY STRINGS base v3 v4 native)
include(CheckCXXCompilerFlag)
set(_rb_v3 -mavx -mavx2 -mfma -mbmi -mbmi2 -mf16c -mlzcnt -mmovbe -mpopcnt -msse4.2)  # x86-64-v3 spelled out
set(_rb_v4 ${_rb_v3} -mavx512f -mavx512bw -mavx512cd -mavx512dq -mavx512vl)         # for compilers before
if(RB_ISA STREQUAL "v3" OR RB_ISA STREQUAL "v4")                                    # gcc 11 / clang 12
  check_cxx_compiler_flag(-march=x86-64-${RB_ISA} RB_HAS_MARCH_${RB_ISA})
  if(RB_HAS_MARCH_${RB_ISA})
    set(_rb_isa_flags -march=x86-64-${RB_ISA})
  else()
    set(_rb_isa_flags ${_rb_${RB_ISA}})
  endif()
elseif(RB_ISA STREQUAL "native")
  set(_rb_isa_flags -march=native)
elseif(NOT RB_ISA STREQUAL "base")
  message(FATAL_ERROR "RB_ISA must be base, v3, v4 or native, not '${RB_ISA}'")
endif()
target_compile_options(rb_headers INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_rb_isa_flags}>)
