"""translate/openvino's model of what the CPU plugin computes per element type (``dtype_reason``) and of
GridSample-9's coordinate arithmetic (``arith="fp32_fused"``), each row checked by running the op on
OpenVINO CPU (f32 inference precision) against the oracle: a row said exact must be (bit-exact for
integers, an f16 ulp for float16), a row said inexact must have a measured counterexample."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")

import openvino.opset9 as ops9  # noqa: E402
import openvino.opset11 as ops11  # noqa: E402

from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate import openvino as tov  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
MODES = {"nearest": "nearest", "linear": "linear_onnx", "cubic": "cubic"}
GS_MODES = {"nearest": "nearest", "linear": "bilinear", "cubic": "bicubic"}


def _compile(op, params):
    return ov.Core().compile_model(ov.Model([op.output(0)], params), "CPU", F32)


def _draw(dtype, shape, rng):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 10).astype(dt)
    info = np.iinfo(dt)
    x = rng.integers(int(info.min), int(info.max), shape, endpoint=True).astype(dt)
    x.flat[:3] = [info.min, info.max, min(int(info.max), 2**24 + 1)]
    return x


def _agrees(got, want, dtype) -> bool:
    if np.dtype(dtype).kind == "f":
        w = want.astype(np.float64)
        return bool(np.all(np.abs(got.astype(np.float64) - w) <= np.abs(w) * 2**-10 + 1e-3))
    return bool(np.array_equal(got, want))


def _interpolate(dtype, kind, coord, scales):
    p = ops11.parameter([1, 2, 4, 5], ov.Type(np.dtype(dtype)))
    op = ops11.interpolate(p, ops11.constant(np.array(scales, np.float32)), MODES[kind], "scales",
                           coordinate_transformation_mode=coord)
    return _compile(op, [p]), tov.parse_node(op)


@pytest.mark.parametrize("dtype", ["float16", "uint8", "int8"])
@pytest.mark.parametrize("kind", ["nearest", "linear", "cubic"])
def test_interpolate_rows_said_exact_are_exact(dtype, kind):
    if tov.dtype_reason("Interpolate", kind, dtype) is not None:
        pytest.skip("said inexact: see the counterexamples below")
    rng = np.random.default_rng(0)
    for coord, scales in (("half_pixel", [1, 1, 1.5, 2.5]), ("align_corners", [1, 1, 2, 3]),
                          ("asymmetric", [1, 1, 2, 0.5])):
        compiled, ir = _interpolate(dtype, kind, coord, scales)
        for _ in range(20):
            x = _draw(dtype, (1, 2, 4, 5), rng)
            assert _agrees(compiled([x])[0], run(ir, x), dtype), (coord, x)


def test_the_model_says_which_interpolate_rows_are_exact():
    assert tov.dtype_reason("Interpolate", "linear", "float16") is None
    assert tov.dtype_reason("Interpolate", "nearest", "uint8") is None
    for kind, dtype in (("linear", "uint8"), ("cubic", "int8"), ("nearest", "int32"), ("nearest", "int64"),
                        ("nearest", "int16")):
        assert tov.dtype_reason("Interpolate", kind, dtype), (kind, dtype)


def test_interpolate_u8_linear_rounds_some_results_one_off():
    """The counterexample behind refusing u8/i8 linear/cubic: exact halves and near-halves go one off."""
    compiled, ir = _interpolate("uint8", "linear", "half_pixel", [1, 1, 1.5, 2.5])
    rng = np.random.default_rng(0)
    off = 0
    for _ in range(30):
        x = _draw("uint8", (1, 2, 4, 5), rng)
        off += int(np.sum(compiled([x])[0] != run(ir, x)))
    assert off > 0


def test_interpolate_int32_nearest_goes_through_float32():
    compiled, ir = _interpolate("int32", "nearest", "asymmetric", [1, 1, 2, 2])
    x = np.full((1, 2, 4, 5), 2**24 + 1, np.int32)
    assert not np.array_equal(compiled([x])[0], run(ir, x))


def test_interpolate_refuses_int16_itself():
    with pytest.raises(Exception):
        _interpolate("int16", "nearest", "asymmetric", [1, 1, 2, 2])
    assert "does not accept" in tov.dtype_reason("Interpolate", "nearest", "int16")


def _gridsample(dtype, kind, padding="border"):
    p = ops9.parameter([1, 2, 5, 6], ov.Type(np.dtype(dtype)))
    g = ops9.parameter([1, 4, 7, 2], ov.Type.f32)
    op = ops9.grid_sample(p, g, {"align_corners": False, "mode": GS_MODES[kind], "padding_mode": padding})
    return _compile(op, [p, g]), tov.parse_node(op)


@pytest.mark.parametrize("dtype", ["float16", "uint8", "int8", "int16", "int32"])
@pytest.mark.parametrize("kind", ["nearest", "linear", "cubic"])
def test_gridsample_rows_said_exact_are_exact(dtype, kind):
    if tov.dtype_reason("GridSample", kind, dtype) is not None:
        pytest.skip("said inexact")
    rng = np.random.default_rng(1)
    for padding in ("zeros", "border", "reflection"):
        compiled, ir = _gridsample(dtype, kind, padding)
        for _ in range(10):
            x = _draw(dtype, (1, 2, 5, 6), rng)
            g = rng.uniform(-1.2, 1.2, (1, 4, 7, 2)).astype(np.float32)
            assert _agrees(compiled([x, g])[0], run(ir, x, g), dtype), padding


@pytest.mark.parametrize("dtype,kind", [("int16", "linear"), ("int32", "linear"), ("int32", "cubic")])
def test_gridsample_rows_said_inexact_differ(dtype, kind):
    assert tov.dtype_reason("GridSample", kind, dtype)
    compiled, ir = _gridsample(dtype, kind)
    rng = np.random.default_rng(2)
    x = _draw(dtype, (1, 2, 5, 6), rng)
    g = rng.uniform(-1.2, 1.2, (1, 4, 7, 2)).astype(np.float32)
    assert not np.array_equal(compiled([x, g])[0], run(ir, x, g))


@pytest.mark.parametrize("kind", ["nearest", "linear", "cubic"])
def test_gridsample9_float64_is_float32_within_the_bound(kind):
    """float64 GridSample-9 runs in float32 on the CPU: linear and cubic within the policy's float32 bound, as
    dtype_reason says; nearest hands back each value rounded to float32, which is a float32 evaluation of nearest
    on float64 data: within the policy's bound for float64 nearest (semantics/error_bound.py), so the numeric
    proof decides there too (issue 40: a float64 nearest GridSample was refused with no rung left)."""
    rng = np.random.default_rng(4)
    said_exact = tov.dtype_reason("GridSample", kind, "float64") is None
    assert said_exact
    for padding in ("zeros", "border", "reflection"):
        compiled, ir = _gridsample("float64", kind, padding)
        oks = []
        for x in (rng.standard_normal((1, 2, 5, 6)), rng.permutation(60).reshape(1, 2, 5, 6) / 7 + 0.25,
                  rng.uniform(-1e6, 1e6, (1, 2, 5, 6))):
            g = rng.uniform(-1.2, 1.2, (1, 4, 7, 2)).astype(np.float32)
            oks.append(against_oracle(ir, compiled([x, g])[0], run(ir, x, g), [x, g]).ok)
        assert all(oks), (padding, oks)


def test_gridsample9_unnormalises_in_float64_rounded_once():
    """grid float32(-1/3) on length 6: the exact coordinate 1.49999997 rounds to 1.5 in float32, and half to
    even reads row 2 (onnxruntime's float32 steps read row 1). The IR says fp32_fused, and the oracle run on
    that IR reads what OpenVINO reads, also on random grids."""
    p = ops9.parameter([1, 1, 6, 1], ov.Type.f32)
    g = ops9.parameter([1, 1, 1, 2], ov.Type.f32)
    op = ops9.grid_sample(p, g, {"align_corners": False, "mode": "nearest", "padding_mode": "border"})
    ir = tov.parse_node(op)
    assert ir.arith == "fp32_fused"
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 6, 1)
    grid = np.array([0.0, -1 / 3], np.float32).reshape(1, 1, 1, 2)
    got = _compile(op, [p, g])([x, grid])[0]
    assert got.item() == 2.0 and run(ir, x, grid).item() == 2.0
    compiled, ir = _gridsample("float32", "nearest")
    rng = np.random.default_rng(3)
    for _ in range(20):
        xs = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
        # thirds and sixths land next to .5 ties on these lengths
        gs = (rng.integers(-7, 8, (1, 4, 7, 2)) / rng.choice([3, 6, 12], (1, 4, 7, 2))).astype(np.float32)
        np.testing.assert_array_equal(compiled([xs, gs])[0], run(ir, xs, gs))
