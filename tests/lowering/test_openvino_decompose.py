"""Rung 3 on OpenVINO (lowering/openvino/decompose.py): one Gather, Multiply and Add per tap (no ReduceSum over
K copies), judged on OpenVINO CPU against the oracle by the one tolerance policy, and the table proof re-reading
each tap's constants."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino import F32, conv_rewrite  # noqa: E402
from resample_bridge.lowering.openvino.graph import ops, tag, tagged  # noqa: E402
from resample_bridge.lowering.openvino.prove import prove  # noqa: E402
from resample_bridge.lowering.openvino.target import convert  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.models import resize_model  # noqa: E402

# (input shape, sizes, attributes): antialias down (K = 4 and 12 taps), cubic up with exclude_outside (no
# Interpolate spelling); clamped taps on every edge.
CASES = [
    ((1, 3, 30, 40), (1, 3, 15, 20), dict(mode="linear", antialias=1)),
    ((1, 2, 36, 20), (1, 2, 6, 20), dict(mode="cubic", antialias=1)),
    ((1, 2, 7, 9), (1, 2, 11, 17), dict(mode="cubic", exclude_outside=1)),
]


def _converted(tmp_path, shape, sizes, attrs, dtype=TensorProto.FLOAT):
    m = resize_model(shape, sizes=list(sizes), dtype=dtype, **attrs)
    onnx.save(m, tmp_path / "m.onnx")
    with conv_rewrite.forcing("builtin"):  # an integer-ratio antialias takes the strided convolution (rung 2)
        ov_model, (rec,) = convert(str(tmp_path / "m.onnx"), prefer="builtin")
    (_, ir), = parse_model(m)
    return ov_model, rec, ir


def _op_types(ov_model) -> list:
    return [op.get_type_name() for op in ov_model.get_ops()]


@pytest.mark.parametrize("shape, sizes, attrs", CASES)
def test_one_gather_per_tap_within_the_bound(tmp_path, shape, sizes, attrs):
    ov_model, rec, ir = _converted(tmp_path, shape, sizes, attrs)
    assert rec.rung == 3, rec.summary()
    assert "ReduceSum" not in _op_types(ov_model)
    assert prove(ov_model, [rec]) == []
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 100).astype(np.float32)
    x.flat[::17] = np.inf  # non-finite inputs: the oracle's NaN / inf exactly where a tap reads one
    got = ov.Core().compile_model(ov_model, "CPU", F32)([x])[0]
    result = against_oracle(ir, got, run(ir, x), [x])
    assert result.ok, result


def test_integers_stay_bit_exact(tmp_path):
    shape, sizes = (1, 2, 30, 40), (1, 2, 12, 15)
    ov_model, rec, ir = _converted(tmp_path, shape, sizes, dict(mode="linear", antialias=1), TensorProto.UINT8)
    assert rec.rung == 3, rec.summary()
    x = np.random.default_rng(2).integers(0, 256, shape, dtype=np.uint8)
    got = ov.Core().compile_model(ov_model, "CPU", F32)([x])[0]
    np.testing.assert_array_equal(got, run(ir, x))


def test_the_proof_rereads_each_taps_weights(tmp_path):
    ov_model, rec, _ = _converted(tmp_path, *CASES[0])
    key = "r/taps_3/gather2/weights"
    weights = tagged(ov_model)[key]
    wrong = ops().constant(weights.get_data() * np.float32(1.5))  # a table that is not the IR's, same tag
    tag(wrong, key)
    for target in list(weights.output(0).get_target_inputs()):
        target.replace_source_output(wrong.output(0))
    tampered = ov.Model(ov_model.get_results(), ov_model.get_parameters())
    failures = prove(tampered, [rec])
    assert failures == ["r: axis 3 tap 2 weights differ from the source IR's taps"], failures


@pytest.mark.usefixtures("reference_convention")
def test_a_tap_of_weight_one_everywhere(tmp_path):
    """align_corners 2x4 -> 1x2 (onnx.reference's fractional lengths: no Interpolate spelling) reads tap 1 with
    weight 1 and tap 0 with weight 0 on every output: OpenVINO removes a Multiply by a constant 1 and its table
    with it, so there is none, and the proof expects none."""
    shape = (1, 1, 2, 4)
    m = resize_model(shape, scales=[1, 1, 0.6, 0.6], mode="linear", coordinate_transformation_mode="align_corners")
    onnx.save(m, tmp_path / "m.onnx")
    with conv_rewrite.forcing("builtin"):  # an integer-ratio antialias takes the strided convolution (rung 2)
        ov_model, (rec,) = convert(str(tmp_path / "m.onnx"), prefer="builtin")  # proven, or BridgeError
    assert rec.rung == 3, rec.summary()
    (_, ir), = parse_model(m)
    v = np.array([[[[1, 2, np.inf, 4], [5, 6, 7, 8]]]], np.float32)  # inf read with weight 0: NaN, as the oracle
    result = against_oracle(ir, ov.Core().compile_model(ov_model, "CPU", F32)([v])[0], run(ir, v), [v])
    assert result.ok, result


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT16, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT16,
                                   TensorProto.FLOAT])
@pytest.mark.parametrize("coord, nearest_mode, sizes", [("half_pixel", "ceil", (2, 1, 2, 12)),
                                                        ("half_pixel", "floor", (2, 1, 3, 5))])
def test_nearest_exclude_outside_in_every_type_float32_holds(tmp_path, dtype, coord, nearest_mode, sizes):
    """Nearest under exclude_outside: a pick outside the input (ceil of 5.25 on 6 columns, floor of -0.25) weighs
    0, so no Interpolate spelling computes it; the tap table then multiplies by 0 / 1 weights, in float32 for a
    type float32 holds (it was built in float16 and failed on the float32 weights: the extension, a library).
    Bit-equal to the oracle, NaN and inf where a float16 pick reads one (x * 0 = NaN, as the oracle's product)."""
    shape = (2, 1, 2, 6)
    ov_model, rec, ir = _converted(tmp_path, shape, sizes, dict(mode="nearest", coordinate_transformation_mode=coord,
                                                                nearest_mode=nearest_mode, exclude_outside=1),
                                   dtype)
    assert rec.rung == 3 and prove(ov_model, [rec]) == [], rec.summary()
    np_type = onnx.helper.tensor_dtype_to_np_dtype(dtype)
    x = (np.random.default_rng(3).standard_normal(shape) * 50).astype(np_type)
    if dtype == TensorProto.FLOAT16:
        x[0, 0, 0, 5], x[0, 0, 1, 0], x[1, 0, 0, 0] = np.nan, np.inf, -np.inf
    got = ov.Core().compile_model(ov_model, "CPU", F32)([x])[0]
    want = run(ir, x)
    assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), (got, want)
    assert (want == 0).any()  # some pick fell outside: the case is the one it names


@pytest.mark.parametrize("dtype, shape, scales, attrs", [
    (TensorProto.FLOAT16, (1, 1, 4, 1, 1), [1, 1, 0.75, 0.35, 0.6],
     dict(mode="cubic", coordinate_transformation_mode="align_corners", exclude_outside=1)),
    (TensorProto.INT32, (1, 1, 3, 5), [1, 1, 0.25, 0.63], dict(mode="linear")),
    (TensorProto.UINT8, (2, 3, 3, 5), [1, 1, 0.25, 2], dict(mode="linear", antialias=1)),
    (TensorProto.FLOAT, (1, 2, 3, 4), [1, 1, 0.5, 0.2],
     dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.0)),
])
def test_a_zero_length_output_is_an_empty_tensor_not_a_library(tmp_path, dtype, shape, scales, attrs):
    """A scale that gives some axis no element (floor(3 * 0.25) = 0): the output is empty, which no gather form
    writes (a Gather with no indices kills OpenVINO's CPU plugin), so the default wrote the extension library for
    nothing. Now an empty constant of the oracle's shape and the input's type, standard opsets only."""
    roi = [0, 0, 0.1, 0.2, 1, 1, 0.9, 1.1] if attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize" \
        else None
    m = resize_model(shape, scales=scales, roi=roi, dtype=dtype, **attrs)
    onnx.save(m, tmp_path / "m.onnx")
    ov_model, (rec,) = convert(str(tmp_path / "m.onnx"))
    assert rec.rung == 3 and prove(ov_model, [rec]) == [], rec.summary()
    assert "resample_bridge" not in {op.get_type_info().version_id for op in ov_model.get_ops()}
    (_, ir), = parse_model(m)
    x = np.ones(shape, onnx.helper.tensor_dtype_to_np_dtype(dtype))
    got = ov.Core().compile_model(ov_model, "CPU")([x])[0]
    want = run(ir, x)
    assert want.size == 0 and got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
