"""DeformConv's float32 paths (kernels/rb/cpu_deformconv.hpp, cpu_deform_tile.hpp): where an offset group has a
vector of channels or more (16 at AVX-512, 8 at AVX2, 4 in the plain build), the samples are vector loads of X
transposed to [S, C], else gathers over X's planes; the GEMM runs a group's rows in chunks of 1024, partial sums
kept in the output. Judged against the float64 oracle by the policy's error bound
(semantics/compare.against_oracle), non-finite values equal, at every x86 level this CPU runs: the levels'
vector widths, and so the paths taken and the register blocks, differ."""

from __future__ import annotations

import math

import numpy as np
import pytest

from resample_bridge.semantics import reference
from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.ir import DeformConvIR
from resample_bridge.semantics.reference import deformconv_out_shape
from tests.helpers.kernel_cases import kind_sampler
from tests.helpers.levels import failures_at_level, needs_build

# (D, kind, group, offset_group, channels per offset group, output channels per group, spatial, N, border, mask)
# Channels per offset group 8 (gathers at AVX-512), 16, 17 (a tail past whole vectors), 24, 32, 120; output
# channels per group below, at and past the register blocks; more points than one tile, with a tail; a group's
# rows (channels x 9 taps) past one chunk of 1024. 143, 144 and 2 x 135 points on 2 threads: few tiles, split evenly
# over the threads (cpu_deformconv.hpp's deform_tiles), of unequal whole vectors, GEMM blocks of one vector.
CASES = [
    (2, "linear", 1, 1, 32, 32, (13, 11), 1, "zero_taps", True),
    (2, "linear", 2, 1, 16, 20, (9, 15), 2, "zero_taps", False),
    (2, "linear", 1, 2, 17, 33, (12, 12), 1, "clamp_in_range", True),
    (2, "cubic", 1, 1, 24, 7, (10, 9), 1, "zero_taps", True),
    (2, "nearest", 2, 2, 16, 16, (9, 9), 1, "zero_taps", True),
    (1, "linear", 1, 1, 16, 9, (150,), 2, "zero_taps", True),
    (3, "linear", 1, 1, 16, 17, (5, 6, 7), 1, "clamp_in_range", False),
    (2, "linear", 1, 1, 64, 24, (11, 13), 1, "zero_taps", True),
    (2, "linear", 1, 1, 120, 10, (6, 7), 1, "zero_taps", True),  # 1080 rows: two chunks
    (2, "linear", 2, 2, 120, 9, (5, 6), 1, "clamp_in_range", True),  # per group
    (2, "cubic", 1, 16, 8, 12, (6, 5), 1, "zero_taps", True),  # 1152 rows, 8 channels per offset group
    (3, "cubic", 1, 1, 16, 9, (4, 5, 6), 1, "zero_taps", True),  # 64 taps a point
]


def _case(i: int, extreme: bool = False):
    D, kind, G, OG, cpg, ocg, spatial, N, border, has_m = CASES[i]
    rng = np.random.default_rng(i)
    C = OG * cpg
    C = C if C % G == 0 else C * G
    kernel = (3, 3, 2)[:D]
    ir = DeformConvIR(D, kernel, (1,) * D, (1,) * (2 * D), (1,) * D, G, OG, True, has_m, sampler=kind_sampler(kind),
                      border=border)
    out, K = deformconv_out_shape(ir, spatial, kernel), math.prod(kernel)
    x = rng.standard_normal((N, C) + spatial).astype(np.float32)
    w = (rng.standard_normal((G * ocg, C // G) + kernel) / math.sqrt(C * K)).astype(np.float32)
    off = (rng.standard_normal((N, OG * K * D) + out) * 2).astype(np.float32)
    off[rng.random(off.shape) < 0.05] = 7.5  # past the edge
    b = rng.standard_normal(G * ocg).astype(np.float32)
    m = rng.uniform(0, 1, (N, OG * K) + out).astype(np.float32) if has_m else None
    if extreme:
        x[rng.random(x.shape) < 0.01] = np.inf
        x *= np.float32(1e4)
        if m is not None:  # the mask then multiplies the sampled value, not each tap
            pick = rng.random(m.shape) < 0.05
            m[pick] = rng.choice(np.array([np.nan, np.inf, 0.0], np.float32), size=int(pick.sum()))
    return ir, (x, w, off, b, m)


def _judge(i: int, extreme: bool) -> dict:
    from resample_bridge.lowering import compiled

    ir, inputs = _case(i, extreme)
    got = compiled.deformconv(ir, *inputs)
    with np.errstate(invalid="ignore", over="ignore"):
        want = reference.run(ir, *inputs)
        return against_oracle(ir, got, want, list(inputs)).to_dict()


@pytest.mark.compiled
@needs_build
@pytest.mark.parametrize("extreme", [False, True], ids=["normal", "inf and NaN"])
@pytest.mark.parametrize("i", range(len(CASES)))
def test_float32_paths_match_the_oracle(i, extreme):
    verdict = _judge(i, extreme)
    assert verdict["ok"], (CASES[i], verdict)


@pytest.mark.slow
@pytest.mark.compiled
@needs_build
@pytest.mark.parametrize("level", ["v3", "base"])
def test_float32_paths_at_lower_levels(level):
    """AVX2 (vectors of 8, 6 x 2 register blocks) and plain (vectors of 4, 4 x 2), on a CPU that runs them."""
    bad = failures_at_level(level, "tests.lowering.test_deformconv_f32_paths",
                            "[_judge(i, e) for i in range(len(CASES)) for e in (False, True)]",
                            [case for case in CASES for _ in (False, True)])
    assert not bad, bad
