"""The float32 W pass of a fused 2-D Resize by windows (kernels/rb/cpu_row_window.hpp): where each block of 8
(AVX2) or 16 (AVX-512) outputs reads, per tap, within 2 blocks' worth of consecutive inputs, two vector loads and a
lane permute replace a gather. Judged against the float64 oracle by the policy's error bound
(semantics/compare.against_oracle) at every x86 level this CPU runs; the cases put lines at, below and far past
one window, outputs with and without a tail past whole blocks, scales whose blocks fit and ones whose blocks do
not (the gathers then), clamped cubic taps at both edges and extrapolated columns."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from resample_bridge.semantics import reference
from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.ir import ResizeIR, Sampler
from tests.helpers.levels import failures_at_level, needs_build

LINEAR, CUBIC = Sampler("linear"), Sampler("cubic", cubic_a=F(-3, 4))
# (sampler, W in, W scale, coordinate mode, axes order): H is resized x3/2 alongside.
CASES = [
    (LINEAR, 40, F(2), "half_pixel", (2, 3)),  # upsampling: every block fits
    (LINEAR, 64, F(1, 2), "half_pixel", (2, 3)),  # 2 inputs per output: the last window ends at the line's end
    (LINEAR, 61, F(1, 2), "asymmetric", (3, 2)),  # a tail past whole blocks, W first
    (LINEAR, 80, F(2, 5), "half_pixel", (2, 3)),  # 2.5 inputs per output: no window fits, the gathers
    (CUBIC, 37, F(3, 2), "half_pixel", (2, 3)),  # 4 taps, clamped at both edges
    (CUBIC, 33, F(3, 4), "align_corners", (2, 3)),
    (LINEAR, 16, F(1), "align_corners", (2, 3)),  # one AVX2 window exactly, W copied through its taps
    (LINEAR, 15, F(7, 3), "half_pixel", (2, 3)),  # shorter than any window
    (LINEAR, 50, F(5, 3), "tf_crop_and_resize", (2, 3)),  # extrapolated columns
]


def _judge(i: int) -> dict:
    from resample_bridge.lowering import compiled

    sampler, w_in, scale, coord, axes = CASES[i]
    kw = dict(roi=None, extrapolation_value=0.0)
    if coord == "tf_crop_and_resize":
        kw = dict(roi=(F(-1, 4), F(-1, 5), F(5, 4), F(6, 5)), extrapolation_value=-2.5)
        if axes == (3, 2):
            kw["roi"] = kw["roi"][1::-1] + kw["roi"][:1:-1]
    scales = (F(3, 2), scale) if axes == (2, 3) else (scale, F(3, 2))
    ir = ResizeIR(rank=4, axes=axes, scales=scales, sizes=None, coord=coord, sampler=sampler, **kw)
    rng = np.random.default_rng(i)
    x = (rng.standard_normal((2, 3, 9, w_in)) * 100).astype(np.float32)
    x[rng.random(x.shape) < 0.01] = np.inf
    got = compiled.resize(ir, x)
    with np.errstate(invalid="ignore", over="ignore"):
        want = reference.run(ir, x.astype(np.float64))
        return against_oracle(ir, got, want.astype(np.float32), [x]).to_dict()


@pytest.mark.compiled
@needs_build
@pytest.mark.parametrize("i", range(len(CASES)))
def test_windows_match_the_oracle(i):
    verdict = _judge(i)
    assert verdict["ok"], (CASES[i], verdict)


@pytest.mark.slow
@pytest.mark.compiled
@needs_build
@pytest.mark.parametrize("level", ["v3", "base"])
def test_windows_at_lower_levels(level):
    """AVX2 (windows of 16, permutes within 8 lanes and a blend) and the plain build (the gathers' scalar loop)."""
    bad = failures_at_level(level, "tests.lowering.test_row_window", "[_judge(i) for i in range(len(CASES))]", CASES)
    assert not bad, bad
