"""Sizes computed from shapes that ONNX shape inference loses and OpenVINO's knows (DETR's mask head exported by
TorchScript: F.interpolate(x, size=fpn.shape[-2:]) after a Reshape to a computed target, on a model with static
inputs): the default reads them as constants and writes OpenVINO's own Interpolate (rung 1; it wrote the index
decomposition, rung 3), which computes onnxruntime's numbers; a dynamic model is left as it was."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T, helper, numpy_helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from resample_bridge.lowering.openvino.importer_shapes import _downstream_of_resampling  # noqa: E402


def lost_shape_model(mode: str, x_shape=(1, 4, 5, 6), f_shape=(1, 4, 10, 12)):
    """Y = Reshape(F, computed target) + Resize(X, sizes = Shape(X)[:2] ++ Shape(that Reshape)[2:])."""
    ints = lambda n, v: numpy_helper.from_array(np.array(v, np.int64), n)  # noqa: E731
    nodes = [helper.make_node("Shape", ["F"], ["sf"]), helper.make_node("Slice", ["sf", "z", "one"], ["n"]),
             helper.make_node("Slice", ["sf", "two", "four"], ["fhw"]),
             helper.make_node("Concat", ["n", "minus1", "fhw"], ["target"], axis=0),
             helper.make_node("Reshape", ["F", "target"], ["cur"]),
             helper.make_node("Shape", ["X"], ["sx"]), helper.make_node("Slice", ["sx", "z", "two"], ["nc"]),
             helper.make_node("Shape", ["cur"], ["sc"]), helper.make_node("Slice", ["sc", "two", "four"], ["hw"]),
             helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0),
             helper.make_node("Resize", ["X", "", "", "sizes"], ["R"], mode=mode, name="up"),
             helper.make_node("Add", ["cur", "R"], ["Y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", T.FLOAT, list(x_shape)),
                                       helper.make_tensor_value_info("F", T.FLOAT, list(f_shape))],
                          [helper.make_tensor_value_info("Y", T.FLOAT, None)],
                          [ints("z", [0]), ints("one", [1]), ints("two", [2]), ints("four", [4]),
                           ints("minus1", [-1])])
    # As TorchScript writes it: the rank it traced, the dims it could not name.
    g.value_info.append(helper.make_tensor_value_info("cur", T.FLOAT, ["a", "b", "c", "d"]))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _run_both(src, xml, shapes):
    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    rng = np.random.default_rng(0)
    for xs, fs in shapes:
        feeds = {"X": rng.standard_normal(xs).astype(np.float32), "F": rng.standard_normal(fs).astype(np.float32)}
        yield sess.run(None, feeds)[0], compiled([feeds["X"], feeds["F"]])[0]


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_sizes_from_shapes_only_openvino_knows_are_constants(tmp_path, mode):
    src = tmp_path / "m.onnx"
    onnx.save(lost_shape_model(mode), src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    (rec,) = done.records
    assert rec.rung == 1 and done.extension is None, rec.reason
    for want, got in _run_both(src, done.output, [((1, 4, 5, 6), (1, 4, 10, 12))]):
        if mode == "nearest":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_dynamic_model_is_left_as_it_was(tmp_path):
    """Dynamic H / W: OpenVINO knows no more than ONNX, so the sizes stay run-time values, and the written model
    computes onnxruntime's numbers at two shapes."""
    src = tmp_path / "m.onnx"
    onnx.save(lost_shape_model("nearest", (1, 4, "h", "w"), (1, 4, "H", "W")), src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    assert done.records[0].rung != 1 and done.extension is None
    for want, got in _run_both(src, done.output, [((1, 4, 5, 6), (1, 4, 10, 12)), ((1, 4, 3, 7), (1, 4, 9, 8))]):
        np.testing.assert_array_equal(got, want)


def test_shapes_downstream_of_a_resize_onnx_does_not_confirm_are_not_taken():
    """OpenVINO's importer computes some Resize output lengths otherwise than ONNX: what a Resize whose output
    shape ONNX inference does not give reaches is left to the hook's own graph; a Resize whose output shape ONNX
    gives as the importer does is no such source."""
    g = onnx.shape_inference.infer_shapes(lost_shape_model("nearest")).graph
    known = {"R": [1, 4, 10, 12]}
    assert {"R", "Y"} <= _downstream_of_resampling(g, known)
    for vi in g.value_info:
        if vi.name == "R":
            for d, v in zip(vi.type.tensor_type.shape.dim, known["R"]):
                d.dim_value = v
    assert not {"R", "Y"} & _downstream_of_resampling(g, known)
    assert {"R", "Y"} <= _downstream_of_resampling(g, {"R": [1, 4, 11, 12]})
