"""Bad input: one line naming the node and field, non-zero exit, no traceback."""

import subprocess
import sys

import numpy as np
import pytest

from resample_bridge.semantics.errors import BridgeError
from resample_bridge.tools.cli import main
from resample_bridge.translate.onnx import parse_model
from tests.helpers.models import resize_model

BAD = {
    "unknown mode": (dict(scales=[1, 1, 2, 2], mode="bilinear"), "mode"),
    "unknown coordinate mode": (dict(scales=[1, 1, 2, 2], coordinate_transformation_mode="corners"),
                                "coordinate_transformation_mode"),
    "unknown nearest mode": (dict(scales=[1, 1, 2, 2], nearest_mode="round"), "nearest_mode"),
    "unknown aspect policy": (dict(sizes=[1, 1, 4, 4], keep_aspect_ratio_policy="fit"),
                              "keep_aspect_ratio_policy"),
    "both scales and sizes": (dict(scales=[1, 1, 2, 2], sizes=[1, 1, 4, 4]), "scales"),
    "neither scales nor sizes": (dict(), "scales"),
    "short scales": (dict(scales=[2, 2]), "scales"),
    "long sizes": (dict(sizes=[1, 1, 4, 4, 4]), "sizes"),
    "wrong roi length": (dict(sizes=[1, 1, 4, 4], roi=[0, 0, 1, 1],
                              coordinate_transformation_mode="tf_crop_and_resize"), "roi"),
    "negative scale": (dict(scales=[1, 1, -2, 2]), "scales"),
    "zero scale": (dict(scales=[1, 1, 0, 2]), "scales"),
    "nan scale": (dict(scales=[1, 1, np.nan, 2]), "scales"),
    "inf scale": (dict(scales=[1, 1, np.inf, 2]), "scales"),
    "negative size": (dict(sizes=[1, 1, -4, 4]), "sizes"),
    "duplicate axes": (dict(scales=[2, 2], axes=[2, -2]), "axes"),
    "axis out of range": (dict(scales=[2, 2], axes=[2, 4]), "axes"),
    "more than 2^31 elements": (dict(sizes=[1, 1, 50000, 50000]), "sizes"),
    "half_pixel_symmetric before opset 19": (dict(scales=[1, 1, 2, 2], opset=18,
                                                  coordinate_transformation_mode="half_pixel_symmetric"),
                                             "coordinate_transformation_mode"),
}


@pytest.mark.parametrize("kwargs,field", BAD.values(), ids=BAD.keys())
def test_parse_refuses_with_node_and_field(kwargs, field):
    with pytest.raises(BridgeError) as e:
        parse_model(resize_model((1, 1, 4, 4), name="up1", **kwargs))
    assert e.value.node == "up1" and e.value.field == field
    assert "up1" in str(e.value) and field in str(e.value)


@pytest.mark.parametrize("kwargs,field", list(BAD.values())[:3], ids=list(BAD)[:3])
def test_cli_prints_one_line_and_exits_non_zero(tmp_path, capsys, kwargs, field):
    import onnx

    path = tmp_path / "bad.onnx"
    onnx.save(resize_model((1, 1, 4, 4), name="up1", **kwargs), path)
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "up1" in err and field in err


@pytest.mark.parametrize("content", [b"this is not a model\x00\x01\xff", b""])
def test_not_onnx_file_in_a_fresh_process(tmp_path, content):
    path = tmp_path / "model.onnx"
    path.write_bytes(content)
    r = subprocess.run([sys.executable, "-m", "resample_bridge.tools.cli", "inspect", str(path)],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "not an ONNX model" in r.stderr


def test_missing_file(capsys):
    assert main(["inspect", "/nonexistent/m.onnx"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_gridsample_and_deformconv_refusals():
    from onnx import TensorProto, helper

    def model(node, inputs):
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                            for n, s in inputs], [helper.make_tensor_value_info("Y", 1, None)])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)])

    gs = helper.make_node("GridSample", ["X", "G"], ["Y"], name="gs", padding_mode="mirror")
    with pytest.raises(BridgeError, match="padding_mode"):
        parse_model(model(gs, [("X", [1, 1, 4, 4]), ("G", [1, 2, 2, 2])]))
    dc = helper.make_node("DeformConv", ["X", "W", "O"], ["Y"], name="dc", strides=[0, 1])
    with pytest.raises(BridgeError, match="strides") as e:
        parse_model(model(dc, [("X", [1, 2, 5, 5]), ("W", [2, 2, 3, 3]), ("O", [1, 18, 3, 3])]))
    assert e.value.node == "dc"
