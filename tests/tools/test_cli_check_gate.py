"""`check` as a CI gate, through the real CLI entry point: exit 1 on a node OpenVINO's importer gets silently
wrong (measured: cubic exclude_outside, issue 9's conformance list), 0 on one it gets right, --fail-on, the
shared summary in text and JSON, and the batched importer run agreeing with the one-node-per-model run."""


import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("openvino")

from resample_bridge.tools.cli import main  # noqa: E402
from tests.helpers.models import EXTENSION_ONLY, EXTENSION_ROI, resize_model, saved, strict_json  # noqa: E402

F = TensorProto.FLOAT




WRONG = dict(mode="cubic", exclude_outside=1, cubic_coeff_a=-0.5)   # OpenVINO ignores exclude_outside
RIGHT = dict(mode="linear", coordinate_transformation_mode="half_pixel")


def test_check_exits_1_on_a_silently_different_node_and_0_on_an_exact_one(tmp_path, capsys):
    wrong = saved(resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], name="cub", **WRONG), tmp_path, "w.onnx")
    right = saved(resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], name="lin", **RIGHT), tmp_path, "r.onnx")
    assert main(["check", wrong, "--target", "openvino"]) == 1
    out = capsys.readouterr().out
    assert "ONNX convention: spec" in out
    assert "openvino's importer: exact 0, different 1, refused 0, conditional 0, unproven 0" in out
    assert "gate (--fail-on different,unproven): FAILED: 1 node(s) cub" in out
    assert main(["check", right, "--target", "openvino"]) == 0
    assert "gate (--fail-on different,unproven): PASSED" in capsys.readouterr().out
    assert main(["check", wrong, "--target", "openvino", "--fail-on", "none"]) == 0
    capsys.readouterr()


def test_check_json_carries_the_same_counts_and_only_json(tmp_path, capsys):
    wrong = saved(resize_model((1, 1, 6, 6), scales=[1, 1, 2, 2], name="cub", **WRONG), tmp_path)
    assert main(["check", wrong, "--json"]) == 1
    doc = strict_json(capsys.readouterr().out)
    assert doc["convention"] == "spec" and doc["target"] == "openvino"
    s = doc["summary"]
    assert s["importer"] == {"exact": 0, "different": 1, "refused": 0, "conditional": 0, "unproven": 0}
    assert s["gate"] == {"fail_on": ["different", "unproven"], "passed": False, "failing": [{"node": "cub",
                                                                                    "outcome": "different"}]}
    assert doc["nodes"][0]["openvino"]["verdict"] == "silently different"


def _deformconv_model():
    rng = np.random.default_rng(0)
    node = helper.make_node("DeformConv", ["X", "W", "off"], ["Y"], name="dc", kernel_shape=[2, 2])
    inits = [numpy_helper.from_array(rng.standard_normal((2, 1, 2, 2)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal((1, 8, 4, 4)).astype(np.float32), "off")]
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", F, [1, 1, 5, 5])],
                          [helper.make_tensor_value_info("Y", F, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)


def test_fail_on_refused(tmp_path, capsys):
    """OpenVINO's ONNX frontend has no DeformConv translator: refused, which fails only --fail-on refused."""
    p = saved(_deformconv_model(), tmp_path)
    assert main(["check", p]) == 0
    assert "refused 1" in capsys.readouterr().out
    assert main(["check", p, "--fail-on", "different,refused"]) == 1
    capsys.readouterr()
    assert main(["check", p, "--fail-on", "bogus"]) == 2
    assert "field 'fail-on'" in capsys.readouterr().err


def _many_nodes_model():
    """Twelve Resize nodes reading one input: six configurations, each twice under another name, some that
    OpenVINO's importer computes exactly and some it does not; and one DeformConv it refuses."""
    configs = [dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
               dict(mode="linear", coordinate_transformation_mode="align_corners"),
               dict(mode="cubic", exclude_outside=1), dict(mode="linear", antialias=1),
               dict(mode="nearest", nearest_mode="round_prefer_ceil"), dict(mode="cubic", cubic_coeff_a=-0.5)]
    nodes, inits, outs = [], [], []
    for i in range(12):
        cfg, sc = configs[i % 6], [1, 1, 0.5, 0.5] if i % 4 == 3 else [1, 1, 2, 1.5]
        inits.append(numpy_helper.from_array(np.array(sc, np.float32), f"s{i}"))
        nodes.append(helper.make_node("Resize", ["X", "", f"s{i}"], [f"Y{i}"], name=f"r{i}", **cfg))
        outs.append(helper.make_tensor_value_info(f"Y{i}", F, None))
    dc = _deformconv_model().graph
    nodes.append(dc.node[0])
    inits += list(dc.initializer)
    outs.append(helper.make_tensor_value_info("Y", F, None))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", F, [1, 1, 5, 5])], outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)


@pytest.mark.slow
def test_batched_check_agrees_with_one_model_per_node(tmp_path):
    """The batched importer run (one model for all distinct configurations, halves on refusal) gives each
    node the verdict the one-node model gives it, and resample-bridge the same rung."""
    from resample_bridge.tools.check_openvino import check_openvino
    from resample_bridge.tools.check_openvino_node import _ours, single_node_models
    from resample_bridge.tools.check_openvino_verdict import _native_verdict

    model = _many_nodes_model()
    path = saved(model, tmp_path)
    rows = check_openvino(path)
    singles = list(single_node_models(model))
    assert [r["name"] for r in rows] == [n for n, *_ in singles]
    verdicts = set()
    for row, (name, ir, one, feeds) in zip(rows, singles):
        p = str(tmp_path / f"{name}.onnx")
        onnx.save(one, p)
        alone = _native_verdict(p, ir, one, feeds)
        assert row["openvino"]["verdict"] == alone["verdict"], name
        assert row["openvino"].get("fields", []) == alone.get("fields", []), name
        assert row["resample_bridge"]["rung"] == _ours(p)["rung"], name
        verdicts.add(alone["verdict"])
    assert verdicts == {"exact", "silently different", "refused"}
    assert rows[6]["same_config_as"] == ["r0"]   # r0 and r6 share a configuration: judged once


@pytest.mark.compiled
def test_input_fixes_shapes_for_check(tmp_path, capsys):
    """Dynamic H/W: no tap table can be built, and no in-graph form takes a crop box on a run-time length
    (``EXTENSION_ONLY``), so resample-bridge needs its extension (rung 4); with --input the shapes are static
    before anything reads the model and the decomposition (rung 3) is exact."""
    p = saved(resize_model((1, 1, "H", "W"), scales=[1, 1, 2, 2], roi=EXTENSION_ROI, name="crop", **EXTENSION_ONLY),
              tmp_path)
    main(["check", p, "--json"])
    dynamic = strict_json(capsys.readouterr().out)["nodes"][0]["resample_bridge"]["rung"]
    main(["check", p, "--json", "--input", "X[1,1,6,6]"])
    static = strict_json(capsys.readouterr().out)["nodes"][0]["resample_bridge"]["rung"]
    assert (dynamic, static) == (4, 3)
