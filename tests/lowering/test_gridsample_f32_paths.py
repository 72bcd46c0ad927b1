"""GridSample's float32 sampling (kernels/rb/cpu_simd.hpp's sample_rows_f32): whole vectors of points read each
tap with a gather (nearest), or a linear / cubic axis's two neighbouring taps as one 64-bit load of the element pair
(GatherPair8 / GatherPair16; their plans made once for every plane at AVX2), lanes whose taps are not such a pair
(reflection's mirror past the end) by gathers, the rest of a block point by point. Judged against the float64
oracle by the policy's error bound (semantics/compare.against_oracle) at every x86 level this CPU runs: the levels
take different paths for the same case."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from resample_bridge.semantics import reference
from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.ir import GridSampleIR, Sampler
from tests.helpers.levels import failures_at_level, needs_build

LINEAR, CUBIC, NEAREST = Sampler("linear"), Sampler("cubic", cubic_a=F(-3, 4)), Sampler("nearest", nearest="half_even")
# (sampler, padding, align_corners, padding_on, channels, X's H x W, the grid's H x W): 300-700 points, more than
# two 64-point blocks with a tail; 1 channel (the plans as they are used), 2-4 and 16 (at AVX2 the plans made
# once for every plane); reflection's mirrored taps; a plane of 1 x 2 (the shortest a pair reads).
CASES = [
    (LINEAR, "zeros", False, "taps", 1, (23, 31), (17, 19)),
    (LINEAR, "zeros", False, "taps", 3, (23, 31), (17, 19)),
    (LINEAR, "border", True, "taps", 2, (16, 16), (20, 21)),
    (LINEAR, "reflection", False, "taps", 4, (9, 14), (18, 25)),
    (LINEAR, "reflection", True, "coordinate_and_taps", 16, (7, 5), (13, 23)),
    (CUBIC, "zeros", False, "taps", 3, (12, 17), (21, 15)),
    (CUBIC, "border", False, "taps", 1, (12, 17), (21, 15)),
    (CUBIC, "reflection", True, "coordinate_and_taps", 2, (6, 9), (16, 20)),
    (NEAREST, "border", False, "taps", 3, (11, 13), (19, 17)),
    (LINEAR, "border", False, "taps", 2, (1, 2), (18, 18)),
]


def _judge(i: int) -> dict:
    from resample_bridge.lowering import compiled

    sampler, padding, ac, padding_on, C, xs, gs = CASES[i]
    ir = GridSampleIR(2, sampler, padding, ac, padding_on=padding_on)
    rng = np.random.default_rng(i)
    x = (rng.standard_normal((2, C) + xs) * 100).astype(np.float32)
    x[rng.random(x.shape) < 0.01] = np.inf
    grid = rng.uniform(-1.3, 1.3, (2,) + gs + (2,)).astype(np.float32)
    pick = rng.random(grid.shape) < 0.2  # the borders, the centre and halves: where taps meet the edges
    grid[pick] = rng.choice(np.array([-1.0, 1.0, 0.0, -0.5, 0.5, 1.5, -1.5], np.float32), size=int(pick.sum()))
    got = compiled.gridsample(ir, x, grid)
    with np.errstate(invalid="ignore", over="ignore"):
        want = reference.run(ir, x.astype(np.float64), grid)
        return against_oracle(ir, got, want.astype(np.float32), [x, grid]).to_dict()


@pytest.mark.compiled
@needs_build
@pytest.mark.parametrize("i", range(len(CASES)))
def test_sampling_matches_the_oracle(i):
    verdict = _judge(i)
    assert verdict["ok"], (CASES[i], verdict)


@pytest.mark.slow
@pytest.mark.compiled
@needs_build
@pytest.mark.parametrize("level", ["v3", "base"])
def test_sampling_at_lower_levels(level):
    """AVX2 (8 lanes, a blend of two permutes per pair) and the plain build (point by point)."""
    bad = failures_at_level(level, "tests.lowering.test_gridsample_f32_paths", "[_judge(i) for i in range(len(CASES))]",
                            CASES)
    assert not bad, bad
