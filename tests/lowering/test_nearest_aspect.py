"""Nearest Resize under keep_aspect_ratio_policy with lengths known only at run time (``lowering/openvino/
nearest_aspect.py``): the ONNX conformance models as they ship (sizes a graph input) and a dynamic image resized to
fit a box convert by default to standard opsets, no library (the extension before), and compute the conformance
data's outputs, onnxruntime's and the oracle's, under this CPU's default precision (bf16 here) too."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from resample_bridge.tools.conformance import conformance_cases  # noqa: E402
from tests.helpers.aspect import proves_only_its_policy  # noqa: E402
from tests.helpers.written import written_default  # noqa: E402

FORM = "nearest_aspect"
CASES = {c.name: c for c in conformance_cases() if "sizes_nearest_not_" in c.name}


def _session(path):
    so = ort.SessionOptions()
    so.log_severity_level = 4
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_conformance_model_as_shipped(name, tmp_path):
    case = CASES[name]
    assert len(CASES) == 4
    xml, src = written_default(case.model, tmp_path, FORM)
    names = [i.name for i in case.model.graph.input]
    ins, outs = case.data_sets[0]
    session = _session(src)
    for hint in ({"INFERENCE_PRECISION_HINT": "f32"}, {}):  # {}: this CPU's default (bf16 here)
        compiled = ov.Core().compile_model(xml, "CPU", hint)
        assert np.array_equal(compiled(dict(zip(names, ins)))[0], outs[0])
        for sizes in itertools.product((1, 2, 3, 5, 8, 13), repeat=2):
            feeds = {names[0]: ins[0], names[1]: np.array(sizes, np.int64)}
            got, want = compiled(feeds)[0], session.run(None, feeds)[0]
            assert got.shape == want.shape and np.array_equal(got, want), (hint, sizes)


def _fit_box(coord: str, rule: str, policy: str, exclude_outside: int = 0):
    """An image of any height and width resized to fit (not_larger) or cover (not_smaller) a 7 x 5 box."""
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], name="r", mode="nearest", axes=[2, 3],
                            keep_aspect_ratio_policy=policy, coordinate_transformation_mode=coord, nearest_mode=rule,
                            exclude_outside=exclude_outside)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(np.array([7, 5], np.int64), "S")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


@pytest.mark.parametrize("coord,rule,policy", [("half_pixel", "round_prefer_floor", "not_larger"),
                                               ("align_corners", "round_prefer_ceil", "not_smaller"),
                                               ("pytorch_half_pixel", "floor", "not_larger")])
def test_dynamic_image_fit_to_a_box(coord, rule, policy, tmp_path):
    xml, src = written_default(_fit_box(coord, rule, policy), tmp_path, FORM)
    rng = np.random.default_rng(0)
    for h, w in ((1, 1), (3, 9), (9, 3), (7, 5), (14, 10), (11, 4), (2, 13)):
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        result = api.verify(src, xml, inputs={"X": x})  # the oracle per node, onnxruntime per output
        assert result.ok and all(n["ok"] for n in result.raw["nodes"]), (h, w, result.raw["nodes"])


@pytest.mark.parametrize("coord,rule,policy", [("half_pixel", "floor", "not_larger"),
                                               ("asymmetric", "ceil", "not_smaller")])
def test_exclude_outside_zeroes_the_picks_outside_the_input(coord, rule, policy, tmp_path):
    """A pick outside the input weighs 0 (the oracle's tap table): in the graph (the library before), at the f32
    and bf16 hints; the elements are 1 and above, so a zeroed pick differs from each; the proof reads the Multiply
    by which picks lie inside and fails without it."""
    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model
    from tests.helpers.outside import bypass_fails_the_proof

    xml, src = written_default(_fit_box(coord, rule, policy, exclude_outside=1), tmp_path, FORM)
    (_, ir), = parse_model(src)
    rng, zeroed = np.random.default_rng(0), 0
    for hint in ("f32", "bf16"):
        compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for h, w in ((1, 1), (3, 9), (9, 3), (7, 5), (14, 10), (2, 13)):
            x = rng.integers(1, 200, (1, 2, h, w)).astype(np.float32)  # exact in bf16
            got, want = compiled([x])[0], run(ir, x, None, None, None)
            assert got.shape == want.shape and np.array_equal(got, want), (hint, h, w)
            zeroed += int((want == 0).sum())
    assert zeroed, "no case picks outside the input"
    bypass_fails_the_proof(src, "r/index_3/outside")


def test_proof_fails_for_another_policy(tmp_path):
    """The written model's index subgraphs, re-read and run over the grid, prove the node's own IR and not the
    other policy's."""
    model = _fit_box("half_pixel", "round_prefer_floor", "not_larger")
    written_default(model, tmp_path, FORM)
    proves_only_its_policy(str(tmp_path / "m.onnx"), str(tmp_path / "again" / "m.xml"))


def _twins(same_input: bool):
    """Two keep-aspect Resizes reading one run-time sizes input: of one tensor (other modes), or of a tensor and its
    Relu (one shape). OpenVINO merges their identical length ops, one tag kept, unless each node's differ."""
    nodes = [helper.make_node("Relu", ["X"], ["R"])] + [
        helper.make_node("Resize", [x, "", "", "S"], [y], name=y, mode="nearest", axes=[2, 3],
                         keep_aspect_ratio_policy="not_larger", coordinate_transformation_mode=coord)
        for x, y, coord in (("X", "Y1", "half_pixel"), ("X" if same_input else "R", "Y2",
                                                        "asymmetric" if same_input else "half_pixel"))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"]),
                                           helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, None) for y in ("Y1", "Y2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


@pytest.mark.parametrize("same_input", (False, True))
def test_two_nodes_reading_one_sizes_input(same_input, tmp_path):
    """Both nodes take the form and are proven (each one's lengths its own): the conversion was refused, the proof
    finding one node's lengths under the other's tag."""
    src = tmp_path / "m.onnx"
    onnx.save(_twins(same_input), src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    assert [r.proof.get("form") for r in done.records] == [FORM, FORM] and done.extension is None
    x = np.random.default_rng(0).standard_normal((1, 2, 9, 5)).astype(np.float32)
    for sizes in ((4, 7), (10, 3)):
        result = api.verify(str(src), str(tmp_path / "out" / "m.xml"), inputs={"X": x, "S": np.array(sizes)})
        assert result.ok and all(n["ok"] for n in result.raw["nodes"]), sizes
