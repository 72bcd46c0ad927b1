"""A native Interpolate taken for every run-time value of its sizes (no condition), whose sizes OpenVINO folds to a
constant once the input shape is static (``--input``, or a reshape of the written model), is proven at that
constant: RAFT's TorchScript export converted with ``--input`` at its export shape was refused ("the native op no
longer matches its stated condition"), our reading of its sizes through Tile and Expand left them run-time. The
proof still fails an IR the op does not compute."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T, helper, numpy_helper

ov = pytest.importorskip("openvino")

from resample_bridge import api  # noqa: E402
from resample_bridge.lowering.openvino import prove  # noqa: E402


def _model():
    """sizes = Concat(Shape(X)[:2], int64(float(Shape(X)[2:]) * 2.5)): read as sizes fed at run time."""
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    nodes = [helper.make_node("Shape", ["X"], ["s"]),
             helper.make_node("Slice", ["s", "zero", "two"], ["lead"]),
             helper.make_node("Slice", ["s", "two", "four"], ["hw"]),
             helper.make_node("Cast", ["hw"], ["hwf"], to=T.FLOAT),
             helper.make_node("Mul", ["hwf", "k"], ["big"]),
             helper.make_node("Cast", ["big"], ["tail"], to=T.INT64),
             helper.make_node("Concat", ["lead", "tail"], ["sizes"], axis=0),
             helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], name="r", mode="linear",
                              coordinate_transformation_mode="align_corners")]
    inits = [i64("zero", [0]), i64("two", [2]), i64("four", [4]),
             numpy_helper.from_array(np.array([2.5], np.float32), "k")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", T.FLOAT, [1, 2, "h", "w"])],
                          [helper.make_tensor_value_info("Y", T.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_sizes_folded_by_openvino_are_proven_at_their_value(tmp_path):
    from openvino import passes

    onnx.save(_model(), tmp_path / "m.onnx")
    done = api.convert(str(tmp_path / "m.onnx"), str(tmp_path / "out" / "m.xml"))
    (rec,) = done.records
    assert rec.rung == 1 and rec.condition is None and "run-time sizes" in rec.summary()
    written = ov.Core().read_model(str(tmp_path / "out" / "m.xml"))
    written.reshape({written.inputs[0].get_any_name(): [1, 2, 6, 8]})
    manager = passes.Manager()
    manager.register_pass(passes.ConstantFolding())
    manager.run_passes(written)
    (interpolate,) = [op for op in written.get_ops() if op.get_type_name() == "Interpolate"]
    assert interpolate.input_value(1).get_node().get_type_name() == "Constant"  # the sizes, folded
    assert prove(written, [rec]) == []
    other = dataclasses.replace(rec, ir=dataclasses.replace(rec.ir, coord="half_pixel"))
    assert any("coord" in f for f in prove(written, [other]))
