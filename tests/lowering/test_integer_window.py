"""8- and 16-bit integer linear Resize on run-time lengths (an image resized in its own uint8 / int8 type, the sizes or
the H / W dynamic): the default writes the exact integer window (``lowering/openvino/integer_window.py``), no
library, and the written model gives the oracle's numbers bit for bit (exact rational weights, one rounding half to
even) at every shape tried, under the f32 and the bf16 hint alike (no float op); the proof refuses a window that
is not the source's."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino import integer_window as iw  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.semantics.window_form import window_form  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.written import written_default  # noqa: E402

TYPES = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8, "uint16": TensorProto.UINT16,
         "int16": TensorProto.INT16}


def _model(dtype, coord, scales=None):
    """Resize of X [1, 2, h, w] (dtype) to run-time sizes S [2] on H and W, or by static ``scales``."""
    inputs = ["X", "", "", "S"] if scales is None else ["X", "", "s"]
    node = helper.make_node("Resize", inputs, ["Y"], mode="linear", coordinate_transformation_mode=coord,
                            axes=[2, 3], name="r")
    feeds = [helper.make_tensor_value_info("X", TYPES[dtype], [1, 2, "h", "w"])]
    inits = []
    if scales is None:
        feeds.append(helper.make_tensor_value_info("S", TensorProto.INT64, [2]))
    else:
        inits.append(onnx.numpy_helper.from_array(np.array(scales, np.float32), "s"))
    graph = helper.make_graph([node], "g", feeds, [helper.make_tensor_value_info("Y", TYPES[dtype], None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _inputs(dtype, hw, seed):
    """Values at both ends of the type and many equal neighbours: the sums land on exact halves often."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, (1, 2, *hw), dtype=dtype, endpoint=True)
    x[0, 1] = rng.choice(np.array([info.min, info.min + 1, info.max - 1, info.max], dtype), hw)
    return x


@pytest.mark.parametrize("dtype,coord", [("uint8", "half_pixel"), ("int8", "align_corners"),
                                         ("uint8", "asymmetric"), ("uint8", "pytorch_half_pixel"),
                                         ("uint16", "half_pixel"), ("int16", "tf_half_pixel_for_nn")])
def test_run_time_sizes_are_exact_in_graph(dtype, coord, tmp_path):
    model = _model(dtype, coord)
    xml, src = written_default(model, tmp_path, iw.FORM)
    (_, ir), = parse_model(src)
    core = ov.Core()
    compiled = [core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": p}) for p in ("f32", "bf16")]
    runs = [((7, 9), (14, 18)), ((9, 7), (4, 3)), ((16, 16), (23, 5)), ((1, 5), (3, 1)), ((33, 48), (33, 31)),
            ((480, 640), (240, 320)), ((37, 53), (111, 106))]
    for seed, (hw, out) in enumerate(runs):
        x, sizes = _inputs(np.dtype(dtype), hw, seed), np.array(out, np.int64)
        want = run(ir, x, None, None, sizes)
        for c in compiled:
            got = c([x, sizes])[0]
            assert got.dtype == want.dtype and np.array_equal(got, want), (hw, out, np.abs(
                got.astype(int) - want.astype(int)).max())


@pytest.mark.parametrize("scales", [(0.5, 0.5), (2.0, 2.0), (0.25, 0.25), (3.0, 0.5)])
def test_static_scale_on_dynamic_lengths_is_exact_in_graph(scales, tmp_path):
    """F.interpolate(uint8 image, scale_factor) exported with dynamic H / W: the window of each axis' static scale
    (they may differ per axis)."""
    model = _model("uint8", "half_pixel", scales=list(scales))
    xml, src = written_default(model, tmp_path, iw.FORM)
    (_, ir), = parse_model(src)
    compiled = ov.Core().compile_model(xml, "CPU")  # this CPU's default: bf16
    for seed, hw in enumerate(((8, 12), (17, 5), (64, 96))):
        x = _inputs(np.dtype("uint8"), hw, seed)
        want = run(ir, x)
        got = compiled([x])[0]
        assert np.array_equal(got, want), (hw, scales)


def _antialias_model(dtype, coord, hw, out, mode="linear"):
    """torchvision's ``resize(uint8 image, size, antialias=True)`` as the dynamo exporter writes it: a static input,
    constant sizes, linear antialias (bicubic: a = -1/2), exclude_outside."""
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode=mode, antialias=1, exclude_outside=1,
                            coordinate_transformation_mode=coord, name="r", cubic_coeff_a=-0.5)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TYPES[dtype], [1, 2, *hw])],
                              [helper.make_tensor_value_info("Y", TYPES[dtype], None)],
                              [onnx.numpy_helper.from_array(np.array([1, 2, *out], np.int64), "S")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


@pytest.mark.parametrize("dtype,coord,hw,out,mode", [("int8", "half_pixel", (20, 24), (9, 10), "linear"),
                                                     ("int8", "pytorch_half_pixel", (61, 47), (17, 30), "linear"),
                                                     ("int16", "asymmetric", (30, 21), (11, 8), "linear"),
                                                     ("int8", "half_pixel", (40, 48), (20, 24), "cubic")])
def test_static_lengths_given_sizes_are_exact_in_graph(dtype, coord, hw, out, mode, tmp_path):
    """Static lengths and given sizes whose static tap tables need a common den past int32 (20 -> 9 and 24 -> 10:
    10^14; torchvision's 1080 x 1920 -> 224 x 224, 10^38, was refused outright): each axis read as its static scale
    out / in takes the integer window, den per output; the oracle's numbers bit for bit at f32 and bf16. Bicubic
    at half the size: its bound counts only the runs of taps that can stay inside (``integer_taps.axis_bound``;
    all runs gave a ratio of 7, and the extension took it). 8-bit as int8: uint8 antialias is onnxruntime's fixed
    point (tests/lowering/test_fixed_point.py)."""
    model = _antialias_model(dtype, coord, hw, out, mode)
    xml, src = written_default(model, tmp_path, iw.FORM)
    (_, ir), = parse_model(src)
    core = ov.Core()
    for seed in range(3):
        x = _inputs(np.dtype(dtype), hw, seed)
        want = run(ir, x)
        for hint in ("f32", "bf16"):
            got = core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": hint})([x])[0]
            assert got.dtype == want.dtype and np.array_equal(got, want), (hint, seed, np.abs(
                got.astype(int) - want.astype(int)).max())


def test_proof_refuses_another_window():
    """The grid verdict of one coordinate mode's window against another mode's IR names where they differ."""
    (_, ir), = parse_model(_model("uint8", "half_pixel"))
    (_, other), = parse_model(_model("uint8", "align_corners"))
    (_, form), = iw.axis_forms(dataclasses.replace(ir, axes=(2,), sizes=None, scales=(2,)))
    (_, wrong), = iw.axis_forms(dataclasses.replace(other, axes=(2,), sizes=None, scales=(2,)))
    ir = dataclasses.replace(ir, axes=(2,), sizes=None, scales=(2,))
    assert iw.grid_verdict(iw._standalone(form), ir, form) is None
    verdict = iw.grid_verdict(iw._standalone(wrong), ir, form)
    assert verdict is not None and "differs from the oracle's taps" in verdict


@pytest.mark.parametrize("dtype,mode", [("int32", "linear"), ("uint8", "nearest")])
def test_what_it_does_not_take_says_why(dtype, mode):
    (_, ir), = parse_model(_model("uint8", "half_pixel"))
    ir = dataclasses.replace(ir, dtype=dtype, sampler=dataclasses.replace(ir.sampler, kind=mode))
    got = iw.refusal(ir)
    assert got is not None and got.field == ("dtype" if dtype == "int32" else "mode")
