// CPU launchers over the shared per-element code: OpenVINO's thread pool inside the extension (std::thread
// workers in the ctypes library), contiguous inner loops. Element type T: float, _Float16, double, and the integer
// types (saturating round half to even; exact integer Resize). Accumulation is float64 (the oracle's bits), except
// float X on the paths marked float32 below (GridSample, DeformConv, the fused 2-D Resize with short windows): the
// coordinates and tap weights stay the shared float64 code, only the weighted sums run in float32.
//
// The parts, by op: cpu_pool (threads), cpu_simd (row sampling), cpu_resize*, cpu_gridsample, cpu_deformconv.
#pragma once

#include "cpu_deformconv.hpp"
#include "cpu_gridsample.hpp"
#include "cpu_resize.hpp"
