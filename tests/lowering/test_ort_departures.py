"""onnxruntime's own departures from a node's IR, named (``model_reference.ort_departure``), where the node's
parameters are computed in the graph: the whole-model check judged onnxruntime's output there as a misreading of
the graph ("the graph around it was read wrong") and refused two valid models. Now they convert, the written model
computes the oracle's numbers on OpenVINO, and verify says which rule of onnxruntime's differs."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")
pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402


def _model(resize, dtype, extra_nodes, inits):
    g = helper.make_graph([helper.make_node("Shape", ["X"], ["shp"])] + extra_nodes + [resize], "g",
                          [helper.make_tensor_value_info("X", dtype, [1, 2, "H", "W"])],
                          [helper.make_tensor_value_info("Y", dtype, None)],
                          [helper.make_tensor(n, TensorProto.INT64, [len(v)], v) for n, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])


def int8_antialias_on_own_lengths():
    """int8 cubic antialias to twice X's own H and W (Concat(Shape(X)[:2], 2 Shape(X)[2:])): onnxruntime clips each
    pass to [0, 255] and casts it to int8."""
    nodes = [helper.make_node("Slice", ["shp", "s0", "s2"], ["nc"]), helper.make_node("Slice", ["shp", "s2", "s4"], ["hw"]),
             helper.make_node("Mul", ["hw", "two"], ["hw2"]), helper.make_node("Concat", ["nc", "hw2"], ["sizes"], axis=0)]
    resize = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], mode="cubic", antialias=1, name="resize")
    return _model(resize, TensorProto.INT8, nodes, {"s0": [0], "s2": [2], "s4": [4], "two": [2]}), "onnxruntime's own"


def negative_axes_keep_aspect():
    """linear on axes [-2, -1] under not_larger to (2H, 3W) of X's own lengths: onnxruntime returns X itself."""
    nodes = [helper.make_node("Slice", ["shp", "s2", "s4"], ["hw"]), helper.make_node("Mul", ["hw", "k"], ["sizes"])]
    resize = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], mode="linear", axes=[-2, -1], name="resize",
                              keep_aspect_ratio_policy="not_larger")
    return _model(resize, TensorProto.FLOAT, nodes, {"s2": [2], "s4": [4], "k": [2, 3]}), "onnxruntime's own axes"


@pytest.mark.parametrize("build", [int8_antialias_on_own_lengths, negative_axes_keep_aspect])
def test_converted_exact_and_named(build, tmp_path):
    import onnx

    model, named = build()
    src, xml = tmp_path / "m.onnx", tmp_path / "m.xml"
    onnx.save(model, src)
    api.convert(str(src), str(xml))  # refused before: "the graph around it was read wrong"
    x = np.random.default_rng(3).integers(-128, 128, (1, 2, 9, 13)).astype(
        np.int8 if build is int8_antialias_on_own_lengths else np.float32)
    compiled = ov.Core().compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    got = compiled([x])[compiled.output(0)]
    (_, ir), = parse_model(onnx.shape_inference.infer_shapes(model))
    want = run(ir, x, None, None, np.array([1, 2, 18, 26] if build is int8_antialias_on_own_lengths else [18, 39]))
    assert got.shape == want.shape and np.allclose(got, want, rtol=1e-6, atol=1e-5), np.abs(got - want).max()
    result = api.verify(str(src), inputs={"X": x}, converted=str(xml))
    node = result.raw["nodes"][0]
    assert result.ok and named in node["onnxruntime_vs_oracle"]["departure"], node
