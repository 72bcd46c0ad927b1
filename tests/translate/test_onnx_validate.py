"""Models onnxruntime refuses are refused by the parser too, in one line naming node and field; hostile
files are refused before anything large is allocated."""

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from resample_bridge.semantics.errors import BridgeError
from resample_bridge.translate.onnx import load, parse_model

X = helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 1, 4, 4])
Y = helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)


def _model(node, opset=13, inits=None):
    inits = [numpy_helper.from_array(np.full(4, 2, np.float32), "s")] if inits is None else inits
    return helper.make_model(helper.make_graph([node], "g", [X], [Y], inits),
                             opset_imports=[helper.make_opsetid("", opset)])


def _resize(**attrs):
    return helper.make_node("Resize", ["X", "", "s"], ["Y"], name="r", **attrs)


INVALID = {
    "unknown attribute": (_model(_resize(foo=1)), "foo"),
    "antialias before opset 18": (_model(_resize(antialias=1, mode="linear")), "antialias"),
    "mode given as an int": (_model(_resize(mode=1)), "mode"),
    "int64 scales": (_model(_resize(), inits=[numpy_helper.from_array(np.full(4, 2, np.int64), "s")]), "scales"),
    "float sizes": (_model(helper.make_node("Resize", ["X", "", "", "s"], ["Y"], name="r")), "sizes"),
    "Upsample in opset 10": (_model(helper.make_node("Upsample", ["X", "s"], ["Y"], name="r"), opset=10), "op_type"),
    "too many inputs": (_model(helper.make_node("Resize", ["X", "", "s", "", "s"], ["Y"], name="r")), "inputs"),
    "cubic_coeff_a NaN": (_model(_resize(mode="cubic", cubic_coeff_a=float("nan"))), "cubic_coeff_a"),
    "cubic_coeff_a string": (_model(_resize(mode="cubic", cubic_coeff_a="x")), "cubic_coeff_a"),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_model_refused_like_onnxruntime(case):
    model, field = INVALID[case]
    if case != "cubic_coeff_a NaN":  # onnxruntime takes NaN and computes NaN everywhere; we refuse it
        with pytest.raises(Exception):
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(BridgeError) as e:
        parse_model(model)
    assert e.value.node == "r" and e.value.field == field
    assert "\n" not in str(e.value)


def test_deformconv_bias_of_the_wrong_length_refused():
    xs = helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 2, 5, 5])
    inits = [numpy_helper.from_array(np.zeros((3, 2, 3, 3), np.float32), "W"),
             numpy_helper.from_array(np.zeros((1, 18, 3, 3), np.float32), "off"),
             numpy_helper.from_array(np.zeros(4, np.float32), "B")]
    node = helper.make_node("DeformConv", ["X", "W", "off", "B"], ["Y"], name="dc")
    m = helper.make_model(helper.make_graph([node], "g", [xs], [Y], inits), opset_imports=[helper.make_opsetid("", 19)])
    with pytest.raises(BridgeError) as e:
        parse_model(m)
    assert (e.value.node, e.value.field) == ("dc", "B")


def test_fifo_device_and_directory_refused(tmp_path):
    fifo = tmp_path / "m.onnx"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero", tmp_path):
        with pytest.raises(BridgeError, match="not a regular file|is a directory"):
            load(str(path))


def test_huge_claimed_tensor_refused_before_allocation(tmp_path):
    m = _model(_resize())
    m.graph.initializer[0].dims[:] = [1 << 28]  # 1 GiB claimed, 16 bytes of data
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    with pytest.raises(BridgeError, match="need 1073741824 bytes, the data has 16"):
        load(str(path))


def test_external_data_outside_the_models_folder_refused(tmp_path):
    m = _model(_resize())
    onnx.save(m, tmp_path / "m.onnx", save_as_external_data=True, location="w.bin", size_threshold=0)
    assert parse_model(str(tmp_path / "m.onnx"))  # inside: fine
    m = onnx.load(tmp_path / "m.onnx", load_external_data=False)
    for e in m.graph.initializer[0].external_data:
        if e.key == "location":
            e.value = "../outside.bin"
    (tmp_path.parent / "outside.bin").write_bytes(b"\0" * 16)
    onnx.save(m, tmp_path / "bad.onnx")
    with pytest.raises(BridgeError, match="outside the model's folder"):
        load(str(tmp_path / "bad.onnx"))
