"""Two Resizes of one tensor whose lengths are known only at run time (a detector's mask resized to each feature
level, as Deformable DETR exported with dynamic H / W does): both read the same run-time length, and OpenVINO
merges the two identical ops computing it into one, which keeps the tag of one node only. The proof of the other
node then found no length to cut its index subgraph at, and convert refused the model ("the index subgraph's
run-time in length is not in the produced model"). It now takes the merged op where it is the only one tagged with
that axis and role that the node's own Gathers read. Judged against the oracle on shapes of both orientations."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T, helper, numpy_helper

ov = pytest.importorskip("openvino")

from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.tools.convert import convert_openvino_model  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
DIVISORS = (2, 3)  # the two nodes' output lengths: the input's halved and thirded
ROI = [0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7]
VARIANTS = {
    "nearest sizes": dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    "antialias sizes": dict(mode="linear", antialias=1),
    "crop sizes": dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize"),
    "scales": dict(mode="linear"),
    "nearest scales": dict(mode="nearest", nearest_mode="floor"),
}


def _model(variant: str):
    """X[1, 2, H, W] resized twice: given sizes (H, W) // d from X's own shape, or one run-time scales input S
    (the second node cubic / ceil, so that the two nodes differ and only their lengths or scale are shared)."""
    attrs = VARIANTS[variant]
    scales = "scales" in variant
    nodes = [helper.make_node("Shape", ["X"], ["shp"]), helper.make_node("Slice", ["shp", "s0", "s2"], ["nc"]),
             helper.make_node("Slice", ["shp", "s2", "s4"], ["hw"])]
    inits = [numpy_helper.from_array(np.array([v], np.int64), f"s{v}") for v in (0, 2, 4)]
    inits.append(numpy_helper.from_array(np.array(ROI, np.float32), "roi"))
    ins = [helper.make_tensor_value_info("X", T.FLOAT, [1, 2, "H", "W"])]
    if scales:
        ins.append(helper.make_tensor_value_info("S", T.FLOAT, [4]))
    outs = []
    for k, d in enumerate(DIVISORS):
        own = dict(attrs)
        if scales and k == 1:
            own.update(mode="cubic") if attrs["mode"] == "linear" else own.update(nearest_mode="ceil")
        inits.append(numpy_helper.from_array(np.array([d], np.int64), f"d{k}"))
        nodes += [helper.make_node("Div", ["hw", f"d{k}"], [f"hw{k}"]),
                  helper.make_node("Concat", ["nc", f"hw{k}"], [f"sizes{k}"], axis=0)]
        inputs = ["X", "", "S"] if scales else \
            ["X", "roi" if "crop" in variant else "", "", f"sizes{k}"]
        nodes.append(helper.make_node("Resize", inputs, [f"Y{k}"], name=f"r{k}", **own))
        outs.append(helper.make_tensor_value_info(f"Y{k}", T.FLOAT, None))
    g = helper.make_graph(nodes, "g", ins, outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def _both_in_graph(m, tmp_path):
    """``m`` converted (both nodes in-graph, rung 3) and compiled on CPU at f32, with its nodes' IRs by name."""
    p = tmp_path / "m.onnx"
    p.write_bytes(m.SerializeToString())
    ov_model, records = convert_openvino_model(str(p))
    assert [r.rung for r in records] == [3, 3], [r.reason for r in records]
    return ov.Core().compile_model(ov_model, "CPU", F32), dict(parse_model(m))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_two_resizes_of_one_tensor_with_run_time_lengths_convert_exactly(tmp_path, variant):
    m = _model(variant)
    compiled, irs = _both_in_graph(m, tmp_path)
    rng = np.random.default_rng(0)
    s = np.array([1, 1, 0.7, 1.6], np.float32)
    for shape in [(1, 2, 9, 14), (1, 2, 13, 6)]:
        x = rng.standard_normal(shape).astype(np.float32)
        got = compiled([x, s] if "scales" in variant else [x])
        for k, d in enumerate(DIVISORS):
            sizes = np.array([1, 2, shape[2] // d, shape[3] // d], np.int64)
            extra = (None, s) if "scales" in variant else (np.array(ROI, np.float32), None, sizes)
            want = run(irs[f"r{k}"], x, *extra)
            np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=1e-5, err_msg=f"r{k} at {shape}")


def _pooled_and_resized_back():
    """timm GhostNetV2's attention branch exported by dynamo with dynamic H / W: "up" brings a pooled X back to X's
    own lengths (sizes = Shape(X)), "down" shrinks X to a third of them. Up's out length and down's in length are
    then one op (OpenVINO resolves the Gather of the Concat'ed sizes to X's length): another role of another node."""
    nodes = [helper.make_node("MaxPool", ["X"], ["P"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Shape", ["X"], ["shp"]),
             helper.make_node("Resize", ["P", "", "", "shp"], ["A"], name="up", mode="nearest", nearest_mode="floor",
                              coordinate_transformation_mode="asymmetric"),
             helper.make_node("Slice", ["shp", "s0", "s2"], ["nc"]),
             helper.make_node("Slice", ["shp", "s2", "s4"], ["hw"]), helper.make_node("Div", ["hw", "three"], ["hw3"]),
             helper.make_node("Concat", ["nc", "hw3"], ["sz"], axis=0),
             helper.make_node("Resize", ["X", "", "", "sz"], ["B"], name="down", mode="nearest", nearest_mode="ceil")]
    inits = [numpy_helper.from_array(np.array([v], np.int64), f"s{v}") for v in (0, 2, 4)]
    inits.append(numpy_helper.from_array(np.array([3], np.int64), "three"))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", T.FLOAT, [1, 2, "H", "W"])],
                          [helper.make_tensor_value_info(n, T.FLOAT, None) for n in ("A", "B")], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_an_out_length_merged_into_another_nodes_in_length(tmp_path):
    m = _pooled_and_resized_back()
    compiled, irs = _both_in_graph(m, tmp_path)
    for shape in [(1, 2, 9, 14), (1, 2, 12, 7)]:
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        pooled = x[:, :, :shape[2] // 2 * 2, :shape[3] // 2 * 2].reshape(1, 2, shape[2] // 2, 2, shape[3] // 2, 2)
        pooled = pooled.max(axis=(3, 5))
        got = compiled([x])
        up, down = got[0], got[1]
        np.testing.assert_array_equal(up, run(irs["up"], pooled, None, None, np.array(shape, np.int64)))
        sizes = np.array([1, 2, shape[2] // 3, shape[3] // 3], np.int64)
        np.testing.assert_array_equal(down, run(irs["down"], x, None, None, sizes))
