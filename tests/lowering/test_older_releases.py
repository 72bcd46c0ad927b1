"""``older_releases``: OpenVINO 2026.4's ONNX frontend writes ScatterND as ScatterNDUpdate-15, which OpenVINO before
2024.4 cannot read; what ``convert`` writes holds ScatterNDUpdate-3 where that is exact (no reduction) and computes
onnxruntime's numbers, and keeps opset 15 where a reduction needs it; the pools of opset 14 likewise. Reading the
written IR in OpenVINO 2023.3 itself: tests/lowering/test_default_portable.py (a real model with a ScatterND,
``RB_OTHER_OPENVINO_PYTHON``)."""

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from resample_bridge.tools.cli import main  # noqa: E402


def _scatter_then_resize(reduction: str | None):
    """X [1, 2, 4, 5] -> ScatterND (rows 1 and 3 of every plane, updates fed at run time) -> a linear x2 Resize."""
    attrs = {} if reduction is None else {"reduction": reduction}
    nodes = [helper.make_node("ScatterND", ["X", "I", "U"], ["S"], **attrs),
             helper.make_node("Resize", ["S", "", "scales"], ["Y"], mode="linear")]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 4, 5]),
         helper.make_tensor_value_info("U", TensorProto.FLOAT, [1, 2, 2, 5])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [helper.make_tensor("I", TensorProto.INT64, [1, 2, 2, 3],
                            [0, 0, 1, 0, 0, 3, 0, 1, 1, 0, 1, 3]),
         helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _versions(xml) -> dict:
    """Type -> version ids of the ops of a written IR, as OpenVINO reads it back."""
    found: dict = {}
    for op in ov.Core().read_model(str(xml)).get_ops():
        found.setdefault(op.get_type_name(), set()).add(op.get_type_info().version_id)
    return found


@pytest.mark.parametrize("reduction, version", [(None, "opset4"), ("none", "opset4"), ("add", "opset15"),
                                                ("mul", "opset15")])
def test_scatter_nd_is_written_in_the_oldest_exact_version(tmp_path, reduction, version):
    import onnx

    src, xml = tmp_path / "m.onnx", tmp_path / "m.xml"
    onnx.save(_scatter_then_resize(reduction), src)
    assert main(["convert", str(src), "-o", str(xml)]) == 0
    assert _versions(xml)["ScatterNDUpdate"] == {version}
    rng = np.random.default_rng(3)
    feeds = {"X": rng.standard_normal((1, 2, 4, 5)).astype(np.float32),
             "U": rng.standard_normal((1, 2, 2, 5)).astype(np.float32)}
    want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    core = ov.Core()
    got = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(
        [feeds["X"], feeds["U"]])[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_the_respelled_op_keeps_its_tensor_names():
    """A model output produced by the ScatterND itself keeps its name (users feed and read by name)."""
    import openvino.opset15 as ops15

    from resample_bridge.lowering.openvino.older_releases import respell_for_older_releases

    data = ov.op.Parameter(ov.Type.f32, ov.PartialShape([4, 3]))
    op = ops15.scatter_nd_update(data, np.array([[1], [2]], np.int64), np.ones((2, 3), np.float32), "none")
    op.output(0).get_tensor().set_names({"scattered"})
    op.set_friendly_name("scatter")
    model = ov.Model([op], [data])
    assert respell_for_older_releases(model) == 1
    produced = model.output(0).get_node().input_value(0)
    assert produced.get_node().get_type_info().version_id == "opset4"
    assert produced.get_node().get_friendly_name() == "scatter"
    assert model.output(0).get_names() == {"scattered"}
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    got = ov.Core().compile_model(model, "CPU")(x)[0]
    np.testing.assert_array_equal(got, np.where(np.isin(np.arange(4), [1, 2])[:, None], 1.0, x))


def test_pools_of_opset_14_are_written_in_their_older_versions():
    """OpenVINO's PyTorch frontend writes max_pool2d as MaxPool-14 (measured: torchvision's FPN detector in
    tests/helpers/torch_corpus.py), which OpenVINO 2023.3 cannot read: MaxPool-14 / AvgPool-14 rounding "floor" or
    "ceil" become MaxPool-8 / AvgPool-1, both outputs (values, indices) computing what they did at every padding
    mode; "ceil_torch", which only opset 14 has, stays."""
    import openvino.opset14 as ops14

    from resample_bridge.lowering.openvino.older_releases import respell_for_older_releases

    x = ov.op.Parameter(ov.Type.f32, ov.PartialShape([1, 2, 8, 9]))
    outs = []
    for rounding in ("floor", "ceil", "ceil_torch"):
        for pad in ("explicit", "same_upper", "valid"):
            pool = ops14.max_pool(x, [2, 2], [1, 1], [1, 0], [0, 1], [3, 3], rounding, pad)
            outs += [pool.output(0), pool.output(1),
                     ops14.avg_pool(x, [2, 2], [1, 0], [0, 1], [3, 3], rounding != "floor", rounding, pad).output(0)]
    model = ov.Model(outs, [x])
    data = np.random.default_rng(0).standard_normal((1, 2, 8, 9)).astype(np.float32)
    f32 = {"INFERENCE_PRECISION_HINT": "f32"}
    want = ov.Core().compile_model(model.clone(), "CPU", f32)(data)
    assert respell_for_older_releases(model) == 12
    versions = {(op.get_type_name(), op.get_type_info().version_id) for op in model.get_ops()
                if op.get_type_name().endswith("Pool")}
    assert versions == {("MaxPool", "opset8"), ("AvgPool", "opset1"), ("MaxPool", "opset14"), ("AvgPool", "opset14")}
    got = ov.Core().compile_model(model, "CPU", f32)(data)
    for i in range(len(outs)):
        np.testing.assert_array_equal(got[i], want[i])
