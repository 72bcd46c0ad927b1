"""Static sizes on an input whose resized lengths are dynamic (a depth head resized to a fixed grid): linear and
cubic take Interpolate-11 in sizes mode (rung 1), whose map reads the run-time length through the same formula as
the source; each converted model is compared with the oracle, under the one tolerance policy, at lengths from 1 to
1000. Nearest is not taken this way (its ties move with the length): the index form takes it. Sizes fed at run
time: half_pixel_symmetric, whose offset is 0 at a given size, is Interpolate-11's half_pixel."""

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


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_run_time_sizes_half_pixel_symmetric_is_half_pixel(mode, tmp_path):
    """Its offset L/2 * (1 - out / L*(out/L)) is 0 for every given size (``coords.plain_coord``): Interpolate-11
    fed the run-time sizes in half_pixel, no library; the proof re-reads it; the oracle's numbers at sizes up, down,
    equal and 1."""
    from resample_bridge.lowering.openvino.prove import prove

    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="r", mode=mode,
                            coordinate_transformation_mode="half_pixel_symmetric")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "h", "w"]),
                                            helper.make_tensor_value_info("sizes", TensorProto.INT64, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), tmp_path / "m.onnx")
    (_, ir), = parse_model(str(tmp_path / "m.onnx"))
    model, (rec,) = convert(str(tmp_path / "m.onnx"))
    assert rec.rung == 1 and "run-time sizes" in rec.summary() and prove(model, [rec]) == [], rec.summary()
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for (h, w), out in (((11, 13), (23, 5)), ((11, 13), (7, 20)), ((5, 7), (5, 7)), ((9, 3), (1, 8)),
                        ((48, 40), (97, 13))):
        x = np.random.default_rng(h * w).standard_normal((1, 2, h, w)).astype(np.float32) * 100
        args = [x, None, None, np.array([1, 2, *out], np.int64)]
        assert against_oracle(ir, compiled(args[:1] + args[3:])[0], run(ir, *args), args).ok, (h, w, out)
