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


# ----------------------------------------------------------------------------------------------------------
# The whole model, as onnx.checker (full_check) and onnxruntime see it: refused by ``load`` itself, so every
# verb and target (inspect, check, convert, verify, TensorRT) refuses the same models.

F = onnx.TensorProto.FLOAT
S4 = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")


def _graph_model(nodes, inits=(S4,), outputs=(Y,), opset=19, ir_version=10):
    return helper.make_model(helper.make_graph(nodes, "g", [X], list(outputs), list(inits)),
                             opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


def _ort_refuses(model):
    so = ort.SessionOptions()
    so.log_severity_level = 4
    with pytest.raises(Exception):
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


WHOLE_MODEL = {
    "cycle": (_graph_model([helper.make_node("Resize", ["Z", "", "s"], ["Y"], name="loop_resize"),
                            helper.make_node("Relu", ["Y"], ["Z"], name="loop_relu")]), "loop_resize", "X"),
    "input nothing defines": (_graph_model([helper.make_node("Resize", ["X", "", "nowhere"], ["Y"], name="r")]),
                              "r", "scales"),
    "tensor assigned twice": (_graph_model([helper.make_node("Relu", ["X"], ["Y"], name="a"),
                                            helper.make_node("Relu", ["X"], ["Y"], name="b")]), "b", "outputs"),
    "unknown attribute on another op": (_graph_model([helper.make_node("Relu", ["X"], ["Y"], name="relu", foo=1)]),
                                        "relu", "foo"),
    "unknown op": (_graph_model([helper.make_node("Frobnicate", ["X"], ["Y"], name="f")]), "f", "op_type"),
    "output type an op cannot compute": (
        _graph_model([helper.make_node("Resize", ["X", "", "s"], ["Y"], name="r")],
                     outputs=[helper.make_tensor_value_info("Y", onnx.TensorProto.INT32, None)]), "r", None),
    "tensor data shorter than its dims": (
        _graph_model([helper.make_node("Resize", ["X", "", "s"], ["Y"], name="r")],
                     inits=[helper.make_tensor("s", F, [2], [1.0, 2.0])]), None, "model"),
    "IR version from the future": (
        _graph_model([helper.make_node("Resize", ["X", "", "s"], ["Y"], name="r")], ir_version=99), None,
        "ir_version"),
    "opset from the future": (
        _graph_model([helper.make_node("Resize", ["X", "", "s"], ["Y"], name="r")], opset=99), None, "opset"),
}
WHOLE_MODEL["tensor data shorter than its dims"][0].graph.initializer[0].dims[0] = 4


@pytest.mark.parametrize("case", list(WHOLE_MODEL))
def test_invalid_model_refused_by_load_like_onnxruntime(case, tmp_path):
    model, node, field = WHOLE_MODEL[case]
    _ort_refuses(model)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    for what in (model, str(path)):
        with pytest.raises(BridgeError) as e:
            load(what)
        assert e.value.node == node
        assert e.value.field == field if field else e.value.field
        assert "\n" not in str(e.value)


def test_resize_refusals_reach_load_not_only_parse_model():
    """The parser's own refusals (here: sizes of the wrong length) come out of ``load`` too: the root of
    ``check --target tensorrt`` and ``convert`` exiting 0 on models inspect refuses."""
    node = helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], name="short")
    model = _graph_model([node], inits=[numpy_helper.from_array(np.array([1, 1, 8], np.int64), "sz")])
    _ort_refuses(model)
    with pytest.raises(BridgeError) as e:
        load(model)
    assert (e.value.node, e.value.field) == ("short", "sizes")


def test_valid_forms_runtimes_accept_are_not_refused():
    """What onnxruntime runs is not refused: a declared output shape that disagrees with the inferred one
    (onnxruntime only warns), an unnamed node, a Resize in an If branch reading an outer name, a dynamic rank."""
    wrong_shape = helper.make_tensor_value_info("Y", F, [1, 1, 3, 3])
    unnamed = helper.make_node("Resize", ["X", "", "s"], ["Y"])
    models = [_graph_model([unnamed], outputs=[wrong_shape])]
    branch = helper.make_graph([helper.make_node("Resize", ["X", "", "s"], ["Yb"], name="inner")], "b", [],
                               [helper.make_tensor_value_info("Yb", F, None)])
    cond = numpy_helper.from_array(np.array(True), "c")
    models.append(_graph_model([helper.make_node("If", ["c"], ["Y"], name="if", then_branch=branch,
                                                 else_branch=branch)], inits=[S4, cond]))
    for m, n in zip(models, (1, 2)):
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
            None, {"X": np.ones((1, 1, 4, 4), np.float32)})
        load(m)
        assert len(parse_model(m)) == n
    anyrank = helper.make_model(helper.make_graph(
        [helper.make_node("Resize", ["A", "", "", "sz"], ["Y"], name="r")], "g",
        [helper.make_tensor_value_info("A", F, None)], [Y],
        [numpy_helper.from_array(np.array([1, 1, 8, 8], np.int64), "sz")]),
        opset_imports=[helper.make_opsetid("", 19)])
    load(anyrank)


def test_a_megabyte_attribute_is_not_echoed():
    with pytest.raises(BridgeError) as e:
        load(_graph_model([helper.make_node("Resize", ["X", "", "s"], ["Y"], name="r", mode="A" * (1 << 20))]))
    assert e.value.field == "mode" and len(e.value.message) < 200
    with pytest.raises(BridgeError) as e:
        load(_graph_model([helper.make_node("Resize", ["X", "", "s"], ["Y"], name="r", **{"B" * (1 << 20): 1})]))
    assert len(e.value.message) < 200


def test_resampling_predicate():
    """One spelling of the resampling op types (semantics/vocab.py), the parsers' own, and one predicate: a
    custom domain's Resize is someone else's op."""
    from resample_bridge.semantics.vocab import ONNX_RESAMPLING_OPS
    from resample_bridge.translate.onnx import is_resampling
    from resample_bridge.translate.onnx_ops import PARSERS

    assert tuple(PARSERS) == ONNX_RESAMPLING_OPS
    assert is_resampling(_resize()) and is_resampling(helper.make_node("Upsample", ["X", "s"], ["Y"], domain="ai.onnx"))
    assert not is_resampling(helper.make_node("Resize", ["X"], ["Y"], domain="resample_bridge"))
    assert not is_resampling(helper.make_node("Relu", ["X"], ["Y"]))
