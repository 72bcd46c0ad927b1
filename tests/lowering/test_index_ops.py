"""``index_ops.floor_div`` on OpenVINO CPU against Python's floor division: the integer Divide's estimate and its
remainder fix, on the quotients where a float32 estimate is off (dividends past 2^24, near multiples of the divisor,
negative dividends that the Divide truncates toward zero), under the f32 and bf16 hints; ``floor_pow2`` against
Python's >>; and the opsets the run-time forms write."""

import numpy as np
import pytest

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino.graph import ops  # noqa: E402
from resample_bridge.lowering.openvino.index_ops import SMALL_R, floor_div, floor_pow2  # noqa: E402


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


def _int32s(rng, e: int = 0):
    """Every sampled int32: random ones, all below 2^16 in magnitude, both ends, and near multiples of 2^e."""
    n = np.concatenate([rng.integers(-2**31, 2**31, 100_000), np.arange(-70_000, 70_000), [2**31 - 1, -2**31],
                        (rng.integers(-2**15, 2**15, 1000) << e) + rng.integers(-1, 2, 1000)]).astype(np.int64)
    return n[(n >= -2**31) & (n < 2**31)]


@pytest.mark.parametrize("hint", ["f32", "bf16"])
@pytest.mark.parametrize("e", [0, 4, 12, 15, 24, 30])
def test_floor_div_by_a_constant_power_of_two(hint, e):
    """A constant divisor 2^e takes ``floor_pow2`` (opset-1 ops, no opset-15 shift): floor division of every
    sampled int32, negatives and both ends."""
    o = ops()
    pn = o.parameter([-1], np.int64, name="n")
    model = ov.Model([floor_div(pn.output(0), o.constant(np.int64(1 << e)).output(0))], [pn], "floor_div_pow2")
    assert not {op.get_type_name() for op in model.get_ops()} & {"BitwiseRightShift", "BitwiseLeftShift"}
    n = _int32s(np.random.default_rng(e), e)
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})([n])[0].astype(np.int64)
    bad = np.flatnonzero(got != n // (1 << e))
    assert bad.size == 0, [(int(n[k]), int(got[k])) for k in bad[:5]]


@pytest.mark.parametrize("hint", ["f32", "bf16"])
def test_floor_pow2_by_a_run_time_exponent(hint):
    """``floor_pow2`` with the exponent a tensor (``scale_length.out_length``'s shift): every exponent 0..30 on
    every sampled int32, each element its own exponent."""
    o = ops()
    pn, pe = o.parameter([-1], np.int64, name="n"), o.parameter([-1], np.int64, name="e")
    model = ov.Model([floor_pow2(pn.output(0), pe.output(0))], [pn, pe], "floor_pow2")
    run = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})
    rng = np.random.default_rng(7)
    n = _int32s(rng)
    for e in [np.full(n.shape, k, np.int64) for k in range(31)] + [rng.integers(0, 31, n.shape)]:
        got = run([n, e])[0].astype(np.int64)
        bad = np.flatnonzero(got != n >> e)
        assert bad.size == 0, [(int(n[k]), int(e[k]), int(got[k])) for k in bad[:5]]


def test_the_run_time_forms_write_opset_13_ops_at_most():
    """OpenVINO 2023.3 refuses an IR with an opset-15 op ("Cannot create BitwiseRightShift layer ... from
    unsupported opset: opset15", measured): every run-time index and window form writes opset-13 ops at most
    (the nearest index form given sizes, the run-time scale forms nearest and half_pixel_symmetric, the scale
    window, the antialias window)."""
    from onnx import TensorProto, helper

    from resample_bridge.lowering.openvino import convert
    from tests.lowering.test_scale_nearest import scales_model as nearest_model
    from tests.lowering.test_scale_taps import scales_model

    sizes = helper.make_graph([helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="nearest")], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None] * 4),
                               helper.make_tensor_value_info("S", TensorProto.INT64, [4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    models = {"sizes": helper.make_model(sizes, opset_imports=[helper.make_opsetid("", 19)]),
              "nearest scales": nearest_model("half_pixel", "round_prefer_floor"),
              "symmetric scales": nearest_model("half_pixel_symmetric", "round_prefer_ceil"),
              "linear scales": scales_model("linear", "half_pixel", axes=[2, 3]),
              "antialias scales": scales_model("cubic", "half_pixel", axes=[2, 3], antialias=True)}
    for name, model in models.items():
        ov_model, records = convert(model)
        assert {r.rung for r in records} == {3}, (name, [r.summary() for r in records])
        newer = {(op.get_type_name(), op.get_type_info().version_id) for op in ov_model.get_ops()
                 if int(op.get_type_info().version_id.removeprefix("opset")) > 13}
        assert not newer, (name, newer)


def test_a_negative_quotient_is_one_value_in_a_model_compiled_from_memory():
    """A nearest index form (uint8, half_pixel, sizes [1, 3, 7, 14] on X [?, ?, ?, 7]: its numerator (2o+1)*7 - 14
    is negative at o = 0) converted and compiled in memory, as the whole-model check runs it: OpenVINO 2026.4.1's CPU
    read one integer Divide of -7 by 28 as -1 in the remainder and as 0 in the sum after it, and the picks moved
    by one (the same model read back from its IR folded it right). Against the oracle at three input shapes."""
    import onnx
    from onnx import TensorProto, helper

    from resample_bridge.lowering.openvino.target import convert
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    node = helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], mode="nearest", nearest_mode="floor",
                            coordinate_transformation_mode="half_pixel", name="r")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.UINT8, ["a", "b", "c", 7])],
                              [helper.make_tensor_value_info("Y", TensorProto.UINT8, None)],
                              [onnx.numpy_helper.from_array(np.array([1, 3, 7, 14], np.int64), "sz")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    ov_model, _ = convert(model)  # the whole-model check ran it in memory: it refused before
    (_, ir), = parse_model(model)
    compiled = ov.Core().compile_model(ov_model, "CPU")
    for shape in ((1, 1, 16, 7), (2, 1, 64, 7), (1, 3, 5, 7)):
        x = np.arange(np.prod(shape), dtype=np.int64).reshape(shape).astype(np.uint8)
        assert np.array_equal(compiled([x])[0], run(ir, x)), shape
