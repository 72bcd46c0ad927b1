"""``index_ops.floor_div`` on OpenVINO CPU against Python's floor division: the integer Divide's estimate and its
remainder fix, on the quotients where a float32 estimate is off (dividends past 2^24, near multiples of the divisor,
negative dividends that the Divide truncates toward zero), under the f32 and bf16 hints."""

import numpy as np
import pytest

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino.graph import ops  # noqa: E402
from resample_bridge.lowering.openvino.index_ops import SMALL_R, floor_div  # noqa: E402


def _cases(rng, r_hi: int, n: int = 200_000):
    """(n, r) with r in [1, r_hi], quotients below 2^22, |n| + 2r < 2^31 (and n - 4r >= -2^31): near multiples
    k*r + {-1, 0, 1}, random large dividends, negative ones down to -2^24."""
    r = rng.integers(1, r_hi + 1, n)
    q = rng.integers(0, np.minimum((2**31 - 1 - 2 * r) // r, 2**22 - 1) + 1)
    near = q * r + rng.integers(-1, 2, n)
    wide = rng.integers(0, 2**31 - 1 - 2 * r)
    neg = -rng.integers(1, 2**24, n)
    ns = np.concatenate([near, wide, neg])
    rs = np.concatenate([r, r, r])
    keep = (np.abs(ns) + 2 * rs < 2**31) & (np.abs(ns // rs) < 2**22)
    return ns[keep], rs[keep]


@pytest.mark.parametrize("hint", ["f32", "bf16"])
@pytest.mark.parametrize("r_max", [SMALL_R, 1 << 26])
def test_floor_div_is_floor_division(hint, r_max):
    o = ops()
    pn, pr = o.parameter([-1], np.int64, name="n"), o.parameter([-1], np.int64, name="r")
    model = ov.Model([floor_div(pn.output(0), pr.output(0), r_max)], [pn, pr], "floor_div")
    run = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})
    n, r = _cases(np.random.default_rng(r_max % 97), r_max)
    if r_max > SMALL_R:  # the wide divisors' callers divide non-negative numbers only
        n, r = n[n >= 0], r[n >= 0]
    got = run([n, r])[0].astype(np.int64)
    bad = np.flatnonzero(got != n // r)
    assert bad.size == 0, [(int(n[k]), int(r[k]), int(got[k]), int(n[k] // r[k])) for k in bad[:5]]


@pytest.mark.parametrize("hint", ["f32", "bf16"])
@pytest.mark.parametrize("e", [0, 4, 12, 24])
def test_floor_div_by_a_constant_power_of_two_is_a_shift(hint, e):
    """A constant divisor 2^e takes one shift: floor division of every sampled int32, negatives and both ends."""
    o = ops()
    pn = o.parameter([-1], np.int64, name="n")
    model = ov.Model([floor_div(pn.output(0), o.constant(np.int64(1 << e)).output(0))], [pn], "floor_div_pow2")
    assert "BitwiseRightShift" in {op.get_type_name() for op in model.get_ops()}
    rng = np.random.default_rng(e)
    n = np.concatenate([rng.integers(-2**31, 2**31, 100_000), np.arange(-70_000, 70_000), [2**31 - 1, -2**31],
                        (rng.integers(-2**15, 2**15, 1000) << e) + rng.integers(-1, 2, 1000)]).astype(np.int64)
    n = n[(n >= -2**31) & (n < 2**31)]
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})([n])[0].astype(np.int64)
    bad = np.flatnonzero(got != n // (1 << e))
    assert bad.size == 0, [(int(n[k]), int(got[k])) for k in bad[:5]]
