"""onnx-tensorrt's importer rules (translate/onnx_tensorrt.py), without TensorRT: what it builds from a node, or
its refusal with its own message."""

import numpy as np
import pytest

from resample_bridge.translate.onnx import NodeView
from resample_bridge.translate.onnx_tensorrt import import_node


def _view(op, attrs, x_shape=(1, 1, 4, 4), inputs=None, consts=None, shapes=None, dtypes=None):
    inputs = inputs or ["X"]
    return NodeView(op, "n", attrs, inputs, consts or {}, {"X": x_shape, **(shapes or {})},
                    {"X": "float32", **(dtypes or {})})


def _resize(attrs, *, scales=None, sizes=None, x_shape=(1, 1, 4, 4), opset=19):
    inputs, consts = ["X", "", "", ""], {}
    if scales is not None:
        inputs[2] = "scales"
        consts["scales"] = np.asarray(scales, dtype=np.float32)
    if sizes is not None:
        inputs[3] = "sizes"
        consts["sizes"] = np.asarray(sizes, dtype=np.int64)
    while not inputs[-1]:
        inputs.pop()
    return import_node(_view("Resize", attrs, x_shape, inputs, consts), opset)


def test_importer_resize_defaults_and_mapping():
    imp = _resize({"mode": b"nearest"}, scales=[1, 1, 2, 2])
    s = imp.settings
    assert (s["coordinate_transformation"], s["nearest_rounding"], s["selector_for_single_pixel"]) == (
        "HALF_PIXEL", "HALF_DOWN", "FORMULA")  # ONNX defaults half_pixel / round_prefer_floor
    assert s["scales"] == (1.0, 1.0, 2.0, 2.0)
    s = _resize({"mode": b"linear", "coordinate_transformation_mode": b"pytorch_half_pixel"}, sizes=[1, 1, 3, 3]).settings
    assert (s["coordinate_transformation"], s["selector_for_single_pixel"], s["shape"]) == (
        "HALF_PIXEL", "UPPER", (1, 1, 3, 3))
    s = _resize({"mode": b"cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}, scales=[1, 1, 2, 2]).settings
    assert s["cubic_coeff"] == -0.5 and s["exclude_outside"]


def test_importer_tf_half_pixel_for_nn():
    imp = _resize({"mode": b"nearest", "coordinate_transformation_mode": b"tf_half_pixel_for_nn"}, scales=[1, 1, 2, 2])
    assert (imp.settings["coordinate_transformation"], imp.settings["nearest_rounding"]) == ("HALF_PIXEL", "CEIL")
    imp = _resize({"mode": b"nearest", "coordinate_transformation_mode": b"tf_half_pixel_for_nn",
                   "nearest_mode": b"floor"}, scales=[1, 1, 2, 2])
    assert imp.rejected and "only support round_prefer_floor nearest mode" in imp.message and imp.quoted
    imp = _resize({"mode": b"nearest", "coordinate_transformation_mode": b"tf_half_pixel_for_nn"}, sizes=[1, 1, 8, 8])
    assert imp.rejected and "only reads the scales input" in imp.message and not imp.quoted


def test_importer_silent_defaults():
    imp = _resize({"mode": b"nearest", "nearest_mode": b"simple"}, scales=[1, 1, 2, 2])
    assert imp.settings["nearest_rounding"] == "HALF_DOWN" and "silently kept at kHALF_DOWN" in imp.notes[0]
    g = import_node(_view("GridSample", {"mode": b"linear"}, inputs=["X", "G"], shapes={"G": (1, 2, 2, 2)}), 22)
    assert g.settings["interpolation_mode"] == "NEAREST" and "silently runs kNEAREST" in g.notes[0]
    g = import_node(_view("GridSample", {}, inputs=["X", "G"], shapes={"G": (1, 2, 2, 2)}), 22)
    assert g.settings["interpolation_mode"] == "LINEAR" and not g.notes  # the importer's default is "bilinear"
    g = import_node(_view("GridSample", {"mode": b"bicubic", "padding_mode": b"mirror"}, inputs=["X", "G"]), 16)
    assert (g.settings["interpolation_mode"], g.settings["sample_mode"]) == ("CUBIC", "FILL")
    assert "silently becomes kFILL" in g.notes[0]


@pytest.mark.parametrize("attrs,message", [
    ({"antialias": 1, "mode": b"linear"}, "Antialiasing is not supported currently."),
    ({"keep_aspect_ratio_policy": b"not_larger"}, "Only `stretch` is supported currently"),
    ({"coordinate_transformation_mode": b"half_pixel_symmetric"}, "TensorRT only supports half_pixel, pytorch_half_pixel"),
    ({"coordinate_transformation_mode": b"tf_crop_and_resize"}, "TensorRT only supports half_pixel, pytorch_half_pixel"),
    ({"mode": b"area"}, "Invalid Resize mode"),
])
def test_importer_resize_rejections(attrs, message):
    imp = _resize(attrs, sizes=[1, 1, 8, 8])
    assert imp.rejected and message in imp.message and imp.quoted and imp.stage == "checker"


def test_importer_linear_window_on_scales():
    imp = _resize({"mode": b"linear"}, scales=[2, 1, 2, 2])
    assert imp.rejected and imp.message == ("This version of TensorRT only supports linear resizing on the outermost 3 "
                                            "dimensions")
    assert not _resize({"mode": b"linear"}, scales=[1, 2, 2, 2]).rejected  # innermost 3: fine


def test_importer_axes_scatter_and_runtime_scales():
    s = _resize({"mode": b"nearest", "axes": [3, 2]}, sizes=[8, 6]).settings
    assert s["shape"] == (1, 1, 6, 8)
    s = _resize({"mode": b"nearest", "axes": [2]}, scales=[2.0]).settings
    assert s["scales"] == (1.0, 1.0, 2.0, 1.0)
    view = _view("Resize", {"mode": b"linear"}, inputs=["X", "", "sc"])
    imp = import_node(view, 19)
    ir = imp.ir
    assert imp.settings["shape_input_scales"] == "sc"
    assert (ir.size_rule, ir.scale_source) == ("floor_fp32", "ratio")  # floor(float32(shape) * scales) as dims


def test_importer_opset_10_and_upsample():
    view = _view("Resize", {"mode": b"nearest"}, inputs=["X", "sc"], consts={"sc": np.array([1, 1, 2, 2], np.float32)})
    s = import_node(view, 10).settings
    assert (s["coordinate_transformation"], s["nearest_rounding"]) == ("ASYMMETRIC", "FLOOR")
    s = import_node(_view("Upsample", {"mode": b"bilinear", "scales": [1.0, 1.0, 2.0, 2.0]}), 7).settings
    assert (s["resize_mode"], s["coordinate_transformation"], s["scales"]) == ("LINEAR", "ASYMMETRIC", (1, 1, 2, 2))
    imp = import_node(_view("Upsample", {"mode": b"cubic", "scales": [1.0, 1.0, 2.0, 2.0]}), 7)
    assert imp.rejected and imp.message == "The attribute mode can only be nearest, linear, or bilinear."


def test_importer_gridsample_5d_and_deformconv_rules():
    g = import_node(_view("GridSample", {}, x_shape=(1, 1, 2, 3, 4), inputs=["X", "G"],
                          shapes={"G": (1, 2, 2, 2, 3)}), 22)
    assert g.rejected and "addGridSample: Error Code 3: API Usage Error" in g.message and g.stage == "build"

    def dc(attrs, x_shape=(1, 2, 6, 6), inputs=("X", "W", "O")):
        return import_node(NodeView("DeformConv", "d", attrs, list(inputs), {}, {"X": x_shape, "W": (3, 2, 3, 3)},
                                    {"X": "float32", "W": "float32", "O": "float32"}), 22)

    assert "3D, or 4D tensors" in dc({}, x_shape=(1, 2, 4, 4, 4)).message
    assert "pads begin == end" in dc({"pads": [1, 0, 0, 0]}).message
    assert "null tensor" in dc({}, inputs=("X", "W", "O", "", "M")).message
    ok = dc({"pads": [1, 1, 1, 1], "offset_group": 2})
    assert ok.settings["fields"]["padding"] == [1, 1] and ok.settings["fields"]["deformable_group"] == 2
    assert ok.ir.kernel_shape == (3, 3) and ok.ir.border == "zero_taps"
    # Anisotropic strides reach the kernel swapped (derived from the plugin's enqueue): the IR says so.
    assert dc({"strides": [1, 2]}).ir.strides == (2, 1)
