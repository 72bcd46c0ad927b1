"""A Resize whose form resizes no axis on lengths known only at run time (every scale 1, or sizes that are the
input's own lengths) keeps the written model's input and output names: the form's output was the input tensor
itself, which the frontend then named after the node's output, so the written model's input X read as Y and X fed
by name was refused (fuzz seed 16903 case 108, where the campaign's runner fed nothing and read an empty output)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T, helper, numpy_helper

ov = pytest.importorskip("openvino")

from resample_bridge import api  # noqa: E402


def _unit_scales():
    """The fuzz case: uint8 bicubic antialias, align_corners, scales 1 on a rank-3 input of run-time length."""
    node = helper.make_node("Resize", ["X", "", "s"], ["Y"], name="resize", mode="cubic", antialias=1,
                            coordinate_transformation_mode="align_corners", cubic_coeff_a=-0.8311713337898254)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", T.UINT8, [1, "d1", 2])],
                          [helper.make_tensor_value_info("Y", T.UINT8, None)],
                          [numpy_helper.from_array(np.ones(3, np.float32), "s")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def _own_sizes():
    """Nearest fed sizes = Shape(X): every axis keeps its run-time length."""
    nodes = [helper.make_node("Shape", ["X"], ["sz"]),
             helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], name="resize", mode="nearest")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", T.FLOAT, [1, 2, "h", "w"])],
                          [helper.make_tensor_value_info("Y", T.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


@pytest.mark.parametrize("make,shape,dtype", [(_unit_scales, (1, 5, 2), np.uint8),
                                              (_own_sizes, (1, 2, 3, 7), np.float32)])
def test_input_and_output_keep_their_names(make, shape, dtype, tmp_path):
    onnx.save(make(), tmp_path / "m.onnx")
    api.convert(str(tmp_path / "m.onnx"), str(tmp_path / "out" / "m.xml"))
    compiled = ov.Core().compile_model(str(tmp_path / "out" / "m.xml"), "CPU")
    assert [p.get_names() for p in compiled.inputs] == [{"X"}]
    assert "Y" in compiled.outputs[0].get_names()
    x = (np.arange(np.prod(shape)) % 200).astype(dtype).reshape(shape)
    got = compiled({"X": x})[compiled.outputs[0]]
    assert got.shape == x.shape and np.array_equal(got, x)
