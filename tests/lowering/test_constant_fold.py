"""Rung 0 on every target: a resampling node whose every input the model fixes (a position embedding resized to
a fixed grid) is written as the oracle's exact output. The written model, run on onnxruntime / OpenVINO CPU, must
give the oracle's numbers; an input a user may feed (an initializer that is also a graph input) is not folded; a
written constant that is not the oracle's output fails the proof."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from resample_bridge.lowering.onnx import OnnxTarget
from resample_bridge.lowering.onnx.fold import folded_name, prove_folded
from resample_bridge.lowering.passes import FOLDED, Policy
from resample_bridge.lowering.tensorrt.target import lower_checked
from resample_bridge.semantics.reference import run as oracle
from resample_bridge.translate.onnx import parse_model

RNG = np.random.default_rng(3)
EMBED = RNG.standard_normal((1, 4, 6, 7)).astype(np.float32) * 3
EMBED[0, 0, 0, :3] = [1e30, -1e30, 0.5]


def _model(overridable: bool = False):
    """out = img + Resize(embed -> 9x11, cubic antialias exclude_outside), the sizes from a Concat of Constants
    (the exporters' spelling) and embed reshaped first: every input of the Resize is computed from constants."""
    nodes = [
        helper.make_node("Constant", [], ["shape"], value=numpy_helper.from_array(np.array(EMBED.shape, np.int64))),
        helper.make_node("Reshape", ["embed", "shape"], ["embed4"]),
        helper.make_node("Constant", [], ["nc"], value=numpy_helper.from_array(np.array([1, 4], np.int64))),
        helper.make_node("Constant", [], ["hw"], value=numpy_helper.from_array(np.array([9, 11], np.int64))),
        helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0),
        helper.make_node("Resize", ["embed4", "", "", "sizes"], ["pos"], name="posembed", mode="cubic", antialias=1,
                         exclude_outside=1, cubic_coeff_a=-0.5),
        helper.make_node("Add", ["img", "pos"], ["out"], name="add"),
    ]
    inputs = [helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 4, 9, 11])]
    if overridable:
        inputs.append(helper.make_tensor_value_info("embed", TensorProto.FLOAT, list(EMBED.shape)))
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4, 9, 11])],
                              [numpy_helper.from_array(EMBED.reshape(-1), "embed")] if not overridable else
                              [numpy_helper.from_array(EMBED, "embed")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    onnx.checker.check_model(model, full_check=True)
    return model


def _want(img):
    (name, ir), = parse_model(_model())
    with np.errstate(over="ignore", invalid="ignore"):
        return img + oracle(ir, EMBED, None, None, np.array([1, 4, 9, 11], np.int64))


def _ort(model, img):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"img": img})[0]


IMG = RNG.standard_normal((1, 4, 9, 11)).astype(np.float32)


@pytest.mark.parametrize("target", ["onnx", "tensorrt"])
def test_onnx_targets_write_the_oracle_output(target):
    result = OnnxTarget().lower_model(_model()) if target == "onnx" else lower_checked(_model(), Policy())
    rec, = result.records
    assert (rec.rung, rec.node) == (FOLDED, "posembed")
    assert not any(n.op_type == "Resize" for n in result.model.graph.node)
    assert prove_folded(result.model, result.records) == {"posembed": []}
    got = _ort(result.model, IMG)
    np.testing.assert_array_equal(got, _want(IMG))  # the constant is the oracle's; the Add is onnxruntime's


@pytest.mark.openvino
def test_openvino_target_writes_the_oracle_output(tmp_path):
    import openvino as ov

    from resample_bridge.lowering.openvino import convert

    onnx.save(_model(), tmp_path / "m.onnx")
    model, records = convert(str(tmp_path / "m.onnx"))
    assert [r.rung for r in records] == [FOLDED]
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    np.testing.assert_array_equal(compiled({"img": IMG})[0], _want(IMG))


def test_an_input_a_user_may_feed_is_not_folded():
    result = OnnxTarget().lower_model(_model(overridable=True))
    assert [r.rung for r in result.records] != [FOLDED]
    assert any(n.op_type in ("Resize", "Gather") for n in result.model.graph.node)


def test_a_constant_other_than_the_oracle_output_fails_the_proof():
    result = OnnxTarget().lower_model(_model())
    node = next(n for n in result.model.graph.node if n.name == folded_name("posembed"))
    value = numpy_helper.to_array(node.attribute[0].t).copy()
    value[0, 1, 4, 5] += 1e-3
    node.attribute[0].t.CopyFrom(numpy_helper.from_array(value, node.output[0]))
    assert prove_folded(result.model, result.records)["posembed"]
    assert OnnxTarget().prove(result)


def test_fallback_to_the_custom_op_is_not_folded():
    from resample_bridge.lowering.passes import CUSTOM

    result = lower_checked(_model(), Policy(floor=CUSTOM))
    assert [r.rung for r in result.records] != [FOLDED]
