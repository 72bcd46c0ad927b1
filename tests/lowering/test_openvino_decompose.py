"""Rung 3 on OpenVINO (lowering/openvino/decompose.py): one Gather, Multiply and Add per tap (no ReduceSum over
K copies), judged on OpenVINO CPU against the oracle by the one tolerance policy, and the table proof re-reading
each tap's constants."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino import F32  # noqa: E402
from resample_bridge.lowering.openvino.graph import ops, tag, tagged  # noqa: E402
from resample_bridge.lowering.openvino.ladder import LADDERS, Node  # noqa: E402
from resample_bridge.lowering.openvino.prove import prove  # noqa: E402
from resample_bridge.lowering.openvino.target import convert  # noqa: E402
from resample_bridge.lowering.passes import DECOMPOSE, NodeRecord, Policy, climb  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.models import resize_model  # noqa: E402

pytestmark = pytest.mark.openvino

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


def test_a_weight_column_of_ones_is_kept(tmp_path):
    """Linear asymmetric x0.5 reads tap 1 with weight 1 and tap 0 with weight 0 everywhere (the ladder takes
    Interpolate for it, so the decomposition rung is climbed alone): OpenVINO may fold neither Multiply, or the
    proof would miss its table."""
    shape = (1, 2, 8, 10)
    m = resize_model(shape, sizes=[1, 2, 4, 5], mode="linear", coordinate_transformation_mode="asymmetric")
    (name, ir), = parse_model(m)
    x = ov.opset13.parameter(list(shape), np.float32)
    rung = next(r for r in LADDERS["resize"] if r.number == DECOMPOSE)
    climbed = climb([rung], Node(name, ir, [x.output(0)]), NodeRecord(name, "Resize", ir, "openvino"),
                    Policy(allow_conditional=False))
    assert climbed.record.rung == DECOMPOSE, climbed.record.summary()
    ov_model = ov.Model(climbed.candidate.produced, [x])
    compiled = ov.Core().compile_model(ov_model, "CPU", F32)
    assert prove(ov_model, [climbed.record]) == []
    v = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    v[0, 0, 2, 4] = np.inf  # read with weight 0 by a neighbour: NaN there, as the oracle computes
    result = against_oracle(ir, compiled([v])[0], run(ir, v), [v])
    assert result.ok, result
