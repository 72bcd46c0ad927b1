"""Two resampling nodes that OpenVINO merges into one op (the same op reading the same inputs: TorchScript's YOLOS
resizes its position embedding twice to the input's run-time size): each node is proven by the op both share
(``prove.shared_by_twins``); before, the one whose tag the merge dropped refused the model ("native op not found
in the produced model"). The written model computes onnxruntime's numbers at several input shapes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402


def _sizes(tag: str) -> list:
    """[1, 16, H // 8, W // 8] from X's run-time shape, as nodes whose names end in ``tag``."""
    return [helper.make_node("Shape", ["x"], [f"s{tag}"]),
            helper.make_node("Slice", [f"s{tag}", "two", "four"], [f"hw{tag}"]),
            helper.make_node("Div", [f"hw{tag}", "eight"], [f"small{tag}"]),
            helper.make_node("Concat", ["head", f"small{tag}"], [f"sizes{tag}"], axis=0)]


def _twins(mode: str) -> onnx.ModelProto:
    """Y = Resize(P, sizes) + mean(X) and Z = Resize(Identity(P), sizes'), P a constant [1, 16, 4, 6]."""
    attrs = dict(mode=mode, coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.75)
    nodes = _sizes("a") + _sizes("b") + [
        helper.make_node("Identity", ["pe"], ["pe2"]),
        helper.make_node("Resize", ["pe", "", "", "sizesa"], ["ra"], name="first", **attrs),
        helper.make_node("Resize", ["pe2", "", "", "sizesb"], ["rb"], name="second", **attrs),
        helper.make_node("ReduceMean", ["x"], ["m"], keepdims=1),
        helper.make_node("Add", ["ra", "m"], ["y"]), helper.make_node("Mul", ["rb", "m"], ["z"])]
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((1, 16, 4, 6)).astype(np.float32), "pe"),
             numpy_helper.from_array(np.array([2], np.int64), "two"),
             numpy_helper.from_array(np.array([4], np.int64), "four"),
             numpy_helper.from_array(np.array([8], np.int64), "eight"),
             numpy_helper.from_array(np.array([1, 16], np.int64), "head")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "z")], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("mode", ["cubic", "linear"])
def test_nodes_merged_by_openvino_are_both_proven(mode, tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(_twins(mode), src)
    done = api.convert(str(src), str(tmp_path / "m.xml"))
    assert sorted(r.node for r in done.records) == ["first", "second"] and {r.rung for r in done.records} == {1}
    interpolates = [op for op in ov.Core().read_model(done.output).get_ops() if op.get_type_name() == "Interpolate"]
    assert len(interpolates) == 1  # merged: what the fix is about (two ops would not need it)
    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    compiled = ov.Core().compile_model(done.output, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for hw in ((40, 56), (64, 48), (72, 104)):
        x = np.random.default_rng(hw[0]).standard_normal((1, 3, *hw)).astype(np.float32)
        want = sess.run(None, {"x": x})
        got = compiled([x])
        for w, g in zip(want, (got[compiled.output(0)], got[compiled.output(1)])):
            assert g.shape == w.shape and np.allclose(g, w, rtol=1e-5, atol=1e-5), hw


@pytest.mark.parametrize("rounding", ["floor", "round_prefer_ceil"])
def test_a_constant_resized_to_run_time_sizes_by_nearest(rounding, tmp_path):
    """Nearest of a constant (a position embedding) to sizes from X's run-time shape: the index form's input length
    is the constant's, static, which the produced model reads as a constant; the proof took that for OpenVINO having
    derived in == out from the shapes, ran the index subgraph on the diagonal only and refused the model. Proven
    at the static length, it computes onnxruntime's numbers at every shape tried."""
    model = _twins("nearest")
    resize = next(n for n in model.graph.node if n.name == "first")
    resize.attribute.append(helper.make_attribute("nearest_mode", rounding))
    model.graph.node.remove(next(n for n in model.graph.node if n.name == "second"))
    del model.graph.output[1]
    model.graph.node.remove(next(n for n in model.graph.node if n.output[0] == "z"))
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    done = api.convert(str(src), str(tmp_path / "m.xml"))
    (rec,) = done.records
    assert rec.rung == 3 and rec.proof.get("form") == "nearest_index", rec.summary()
    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    compiled = ov.Core().compile_model(done.output, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for hw in ((40, 56), (8, 8), (72, 104), (24, 200)):
        x = np.random.default_rng(hw[1]).standard_normal((1, 3, *hw)).astype(np.float32)
        (want,) = sess.run(None, {"x": x})
        got = compiled([x])[0]  # (a pick of another element is O(1) off: the embedding is N(0, 1))
        assert got.shape == want.shape and np.allclose(got, want, rtol=1e-6, atol=1e-6), hw
