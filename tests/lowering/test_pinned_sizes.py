"""Sizes the graph computes as Concat(Shape(x)[:2], L) (``F.interpolate(x, size=L)`` on a 3-D input): the channel
axis is one of the last two listed but pinned to x's own length. The node's probes never resize it
(``probes.runtime_probes``), so the exact index form of nearest is proven and written by default, no library;
its numbers are onnxruntime's, element for element, at every length tried. (The probes once doubled the channel
axis too, the index form "differed" there, and the default wrote the extension.)"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from tests.helpers.written import written_default  # noqa: E402


def _model(coord: str, rule: str):
    i64 = lambda name, v: helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(  # noqa: E731
        np.array(v, np.int64), name))
    nodes = [helper.make_node("Shape", ["X"], ["shape"]), i64("start", [0]), i64("end", [2]),
             helper.make_node("Slice", ["shape", "start", "end"], ["lead"]),
             helper.make_node("Concat", ["lead", "L"], ["sizes"], axis=0),
             helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], mode="nearest", name="r",
                              coordinate_transformation_mode=coord, nearest_mode=rule)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 5]),
                                           helper.make_tensor_value_info("L", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("coord,rule", [("align_corners", "floor"), ("half_pixel", "round_prefer_ceil")])
def test_pinned_channel_axis_keeps_the_exact_index_form(coord, rule, tmp_path):
    import openvino as ov

    model = _model(coord, rule)
    xml, src = written_default(model, tmp_path, "nearest_index")
    compiled = ov.Core().compile_model(xml, "CPU")  # this CPU's default precision (bf16 here)
    session = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 3, 5)).astype(np.float32)
    for length in (1, 2, 3, 5, 8, 9, 13, 40):
        feeds = {"X": x, "L": np.array([length], np.int64)}
        want = session.run(None, feeds)[0]
        got = compiled(feeds)[0]
        assert got.shape == want.shape and np.array_equal(got, want), length


# Image shapes at which the sizes torchvision's detection transform computes (scale = min_size *
# Reciprocal(min(H, W)), output length floor(H * scale)) came out a pixel short while the sizes producer's
# Divide was respelled as a refined reciprocal (within 1 ulp, not onnxruntime's correctly rounded quotient; no
# longer written anywhere): measured, OpenVINO 2026.4.1 f32, 42 of 380 shapes; the importer's own Divide, 0.
DETECTION_SHAPES = [(60, 115), (60, 159), (60, 214), (67, 115), (67, 159), (81, 203), (102, 148)]


def test_detection_transform_sizes_are_onnxruntimes_at_every_shape(tmp_path):
    """The sizes producer of a Resize keeps its Divide of 1 (marked f32; IEEE division already): the written
    model's output lengths, and so its numbers, are onnxruntime's at every image shape tried."""
    import os

    import openvino as ov

    from resample_bridge import api

    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models",
                       "ts16_tv_rcnn_transform_dynhw", "model.onnx")
    done = api.convert(src, str(tmp_path / "m.xml"))
    assert done.extension is None
    compiled = ov.Core().compile_model(str(tmp_path / "m.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    session = ort.InferenceSession(src)
    rng = np.random.default_rng(0)
    for h, w in DETECTION_SHAPES:
        x = rng.uniform(0, 1, (1, 3, h, w)).astype(np.float32)
        want = session.run(None, {"image": x})[0]
        got = compiled({"image": x})[0]
        assert got.shape == want.shape, (h, w)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"image {h}x{w}")
