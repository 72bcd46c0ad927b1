"""Static sizes on an input whose resized lengths are dynamic (a depth head resized to a fixed grid): linear and
cubic take Interpolate-11 in sizes mode (rung 1), whose map reads the run-time length through the same formula as
the source; each converted model is compared with the oracle, under the one tolerance policy, at lengths from 1 to
1000. Nearest is not taken this way (its ties move with the length): the index form takes it."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from resample_bridge.semantics.compare import against_oracle
from resample_bridge.semantics.reference import run
from resample_bridge.translate.onnx import parse_model

ov = pytest.importorskip("openvino")
from resample_bridge.lowering.openvino import convert  # noqa: E402

pytestmark = pytest.mark.openvino
SIZES = np.array([24, 20], np.int64)
LENGTHS = [(1, 1), (2, 3), (5, 7), (17, 9), (48, 40), (100, 37), (333, 1000)]


def _model(mode, coord):
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="r", mode=mode,
                            coordinate_transformation_mode=coord, axes=[2, 3])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4, "h", "w"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(SIZES, "sizes")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("mode,coord,rung", [("linear", "align_corners", 1), ("linear", "pytorch_half_pixel", 1),
                                             ("cubic", "half_pixel", 1), ("cubic", "asymmetric", 1),
                                             ("nearest", "asymmetric", 3)])
def test_static_sizes_on_dynamic_lengths(mode, coord, rung, tmp_path):
    onnx.save(_model(mode, coord), tmp_path / "m.onnx")
    (_, ir), = parse_model(str(tmp_path / "m.onnx"))
    model, (rec,) = convert(str(tmp_path / "m.onnx"), prefer="builtin")  # the rung under test, not the cost model
    assert rec.rung == rung, rec.summary()
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for h, w in LENGTHS:
        x = np.random.default_rng(h * w).standard_normal((2, 4, h, w)).astype(np.float32) * 100
        args = [x, None, None, SIZES]
        assert against_oracle(ir, compiled([x])[0], run(ir, *args), args).ok, (h, w)
