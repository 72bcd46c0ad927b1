"""``check --target tensorrt`` and ``convert --target tensorrt`` as functions (tools/tensorrt.py), without
TensorRT: the importer's verdicts are predicted from its encoded rules."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from resample_bridge.lowering.tensorrt import plugin_library_path as low_plugin_library
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.tools.tensorrt import (check_tensorrt, convert_to_tensorrt, format_check_tensorrt,
                                            format_convert_tensorrt, run_tensorrt_ready)
from resample_bridge.translate.tensorrt import UNVERIFIED
from tests.helpers.models import resize_model

F = TensorProto.FLOAT


def _save(tmp_path, model, name="m.onnx"):
    path = tmp_path / name
    onnx.save(model, path)
    return str(path)


def _gridsample(tmp_path, x_shape, g_shape, opset=20, **attrs):
    node = helper.make_node("GridSample", ["X", "G"], ["Y"], name="gs", **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", F, x_shape),
                                        helper.make_tensor_value_info("G", F, g_shape)],
                          [helper.make_tensor_value_info("Y", F, None)])
    return _save(tmp_path, helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=10))


def _one(rows):
    (row,) = rows
    return row["tensorrt"], row["resample_bridge"]


def test_gridsample_20_linear_runs_nearest(tmp_path):
    imp, ours = _one(check_tensorrt(_gridsample(tmp_path, [1, 1, 4, 4], [1, 3, 3, 2], mode="linear")))
    assert imp["verdict"] == "silently different"
    assert imp["fields"] == ["sampler.kind: linear vs nearest"]
    assert any("silently runs kNEAREST" in n for n in imp["notes"])
    assert ours["rung"] == 2 and "mode attribute left out" in ours["reason"]
    # Without the attribute (ONNX default linear, importer default bilinear) the importer is right.
    imp, ours = _one(check_tensorrt(_gridsample(tmp_path, [1, 1, 4, 4], [1, 3, 3, 2], padding_mode="border")))
    assert imp["verdict"] == "exact" and not imp["assumptions"] and ours["rung"] == 1


def test_gridsample_5d_is_rejected(tmp_path):
    imp, ours = _one(check_tensorrt(_gridsample(tmp_path, [1, 1, 3, 4, 5], [1, 2, 2, 2, 3], opset=22)))
    assert imp["verdict"] == "rejected" and imp["stage"] == "build"
    assert "INetworkDefinition::addGridSample: Error Code 3: API Usage Error" in imp["message"]
    assert ours["rung"] == 3 and "decomposition" in ours["rung_name"]  # no plugin to ship


@pytest.mark.parametrize("attrs,kind,message", [
    (dict(mode="linear", antialias=1), "sizes", "Antialiasing is not supported currently."),
    (dict(mode="linear", coordinate_transformation_mode="half_pixel_symmetric"), "scales",
     "TensorRT only supports half_pixel, pytorch_half_pixel, tf_half_pixel_for_nn, asymmetric and align_corners "
     "transformation modes!"),
    (dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize"), "roi",
     "TensorRT only supports half_pixel, pytorch_half_pixel, tf_half_pixel_for_nn, asymmetric and align_corners "
     "transformation modes!"),
    (dict(mode="nearest", keep_aspect_ratio_policy="not_larger", axes=[2, 3]), "policy",
     "Only `stretch` is supported currently as `keep_aspect_ratio_policy`."),
])
def test_resize_rejections_with_the_importers_message(tmp_path, attrs, kind, message):
    if kind == "sizes":
        model = resize_model((1, 1, 8, 8), sizes=[1, 1, 3, 5], **attrs)
    elif kind == "scales":
        model = resize_model((1, 1, 5, 5), scales=[1, 1, 1.7, 0.7], **attrs)
    elif kind == "roi":
        model = resize_model((1, 1, 5, 5), roi=[0, 0, 0.2, 0.1, 1, 1, 0.9, 0.7], sizes=[1, 1, 3, 4], **attrs)
    else:
        model = resize_model((1, 1, 4, 6), sizes=[9, 9], **attrs)
    imp, ours = _one(check_tensorrt(_save(tmp_path, model)))
    assert imp["verdict"] == "rejected" and imp["message"] == message and imp["quoted"]
    if kind == "policy":  # 4 x 6 -> policy scale 9/6: sizes [6, 9] as stretch, which the importer takes
        assert ours["rung"] == 2 and "sizes=[1, 1, 6, 9]" in ours["reason"]
    else:
        assert ours["rung"] == 3  # static shapes: the tap-table decomposition


def test_format_names_what_is_unverified(tmp_path):
    # Cubic upsampling reads taps beyond the edge: exact only if TensorRT replicates the edge (undocumented).
    path = _save(tmp_path, resize_model((1, 1, 4, 4), scales=[1, 1, 2, 2], mode="cubic"))
    rows = check_tensorrt(path)
    text = format_check_tensorrt(rows)
    assert f"onnx-tensorrt importer: exact ({UNVERIFIED})" in text
    assert f"{UNVERIFIED}: cubic taps outside the input" in text
    assert "1 of onnx-tensorrt's exact verdicts are unverified on TensorRT" in text
    strict = check_tensorrt(path, strict=True)
    assert strict[0]["resample_bridge"]["rung"] == 3
    # A documented case says nothing of the kind.
    text = format_check_tensorrt(check_tensorrt(_save(tmp_path, resize_model((1, 1, 4, 4), sizes=[1, 1, 8, 8],
                                                                             mode="linear"), "d.onnx")))
    assert UNVERIFIED not in text and "exact\n" in text


def test_no_resampling_nodes(tmp_path):
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g", [helper.make_tensor_value_info("X", F, [2])],
                          [helper.make_tensor_value_info("Y", F, None)])
    path = _save(tmp_path, helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10))
    assert format_check_tensorrt(check_tensorrt(path)) == "no resampling nodes in this model"


# ----------------------------------------------------------------------------------------------------------
# convert


def _chain(tmp_path):
    """Conv -> antialias Resize (plugin: the batch is dynamic) -> GridSample-20 linear (respelled)."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["X", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Resize", ["c", "", "", "sz"], ["r"], mode="linear", antialias=1, name="resize"),
             helper.make_node("GridSample", ["r", "G"], ["Y"], mode="linear", name="grid")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", F, ["n", 2, 8, 8]),
                                       helper.make_tensor_value_info("G", F, ["n", 3, 3, 2])],
                          [helper.make_tensor_value_info("Y", F, None)],
                          [numpy_helper.from_array(rng.standard_normal((2, 2, 3, 3)).astype(np.float32), "w"),
                           numpy_helper.from_array(np.array([1, 2, 5, 5], np.int64), "sz")])
    return _save(tmp_path, helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10))


def test_convert_writes_a_proven_model_and_names_the_plugin(tmp_path):
    src = _chain(tmp_path)
    out = str(tmp_path / "trt.onnx")
    rep = convert_to_tensorrt(src, out)
    assert os.path.exists(out) and sorted(os.listdir(tmp_path)) == ["m.onnx", "trt.onnx"]
    assert [n["rung"] for n in rep["nodes"]] == [4, 2]
    assert rep["plugins"] == ["ResampleBridgeResize"]
    assert rep["plugin_library_path"].endswith("libresample_bridge_tensorrt.so")
    text = format_convert_tensorrt(rep)
    # The library exists, or the one command that builds it is printed.
    assert rep["plugin_library_built"] == os.path.isfile(rep["plugin_library_path"])
    if not rep["plugin_library_built"]:
        assert rep["build_command"].startswith("resample-bridge build-plugin --tensorrt-include ")
        assert rep["build_command"] in text
    # Polygraphy compares TensorRT (plugin loaded) with onnxruntime running the source, on the same inputs.
    poly = rep["polygraphy_command"]
    assert f"polygraphy run {src} --onnxrt" in poly and f"polygraphy run {out} --trt --plugins " \
        f"{rep['plugin_library_path']}" in poly and "--load-outputs" in poly and poly in text
    if rep["tensorrt"] != "available":
        assert rep["command"] == f"trtexec --onnx={out} --saveEngine={out[:-5]}.engine " \
                                 f"--staticPlugins={rep['plugin_library_path']}"
        assert "TensorRT is not available here" in text and rep["command"] in text
    # The written model computes the source's numbers (plugin on the oracle, the rest on onnxruntime).
    model = onnx.load(out)
    x = np.random.default_rng(1).standard_normal((1, 2, 8, 8)).astype(np.float32)
    gr = np.random.default_rng(2).uniform(-1.1, 1.1, (1, 3, 3, 2)).astype(np.float32)
    want = run_tensorrt_ready(onnx.load(src), {"X": x, "G": gr}, resampling="oracle")["Y"]
    got = run_tensorrt_ready(model, {"X": x, "G": gr})["Y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_convert_without_plugins_needs_no_library(tmp_path):
    src = _save(tmp_path, resize_model((1, 1, 4, 4), sizes=[1, 1, 8, 8], mode="linear"))
    rep = convert_to_tensorrt(src, str(tmp_path / "o.onnx"))
    assert rep["plugin_library"] is None and "--staticPlugins" not in rep["command"]


def test_convert_refuses_to_overwrite_and_leaves_nothing_behind(tmp_path):
    src = _chain(tmp_path)
    out = str(tmp_path / "trt.onnx")
    convert_to_tensorrt(src, out)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(BridgeError, match="--force"):
        convert_to_tensorrt(src, out)
    convert_to_tensorrt(src, out, force=True)
    with pytest.raises(BridgeError, match="must end in .onnx"):
        convert_to_tensorrt(src, str(tmp_path / "x.engine"))
    with pytest.raises(BridgeError, match="does not exist"):
        convert_to_tensorrt(src, str(tmp_path / "nope" / "o.onnx"))
    # A model that cannot be made TensorRT-ready (run-time scales) writes nothing.
    node = helper.make_node("Resize", ["X", "", "sc"], ["Y"], mode="linear")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", F, [1, 1, 4, 5]),
                                        helper.make_tensor_value_info("sc", F, [4])],
                          [helper.make_tensor_value_info("Y", F, None)])
    bad = _save(tmp_path, helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), "bad.onnx")
    with pytest.raises(BridgeError, match="run time"):
        convert_to_tensorrt(bad, str(tmp_path / "bad_out.onnx"))
    assert sorted(os.listdir(tmp_path)) == sorted(before + ["bad.onnx"])


def test_cli_tensorrt_verbs(tmp_path, capsys):
    """check / convert --target tensorrt through the CLI; verify of a model that needs the plugin says plainly
    that it needs TensorRT (exit 2: nothing was verified)."""
    import onnx

    from resample_bridge.tools.cli import main
    from tests.helpers.models import resize_model

    src = tmp_path / "aa.onnx"
    onnx.save(resize_model(("n", 1, 12, 12), sizes=[1, 1, 5, 5], mode="linear", antialias=1, name="aa"), src)
    assert main(["check", str(src), "--target", "tensorrt"]) == 0
    assert "Antialiasing is not supported" in capsys.readouterr().out
    out = tmp_path / "ready.onnx"
    assert main(["convert", str(src), "--target", "tensorrt", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert out.exists() and "ResampleBridgeResize" in text and "trtexec" in text and "polygraphy run" in text
    assert os.path.isfile(low_plugin_library()) or "resample-bridge build-plugin" in text
    assert main(["convert", str(src), "--target", "tensorrt", "-o", str(out)]) == 2  # exists, no --force
    capsys.readouterr()
    assert main(["verify", str(src), "--target", "tensorrt", "--input-shapes", "X:[1,1,12,12]"]) == 2
    err = capsys.readouterr().err
    assert "node 'aa', field 'target': not verified" in err and "only TensorRT runs" in err, err
