"""8- and 16-bit integer cubic, antialiased or exclude_outside Resize by a static scale on run-time lengths (an
image bicubic-resized or antialias-shrunk in its own uint8 type with dynamic H / W): the default writes the exact
integer window (``integer_window``, ``integer_taps``: Keys' weights as integer cubes over a constant denominator,
a den per output where the weights are divided by their sum), no library, and the written model gives the
oracle's numbers bit for bit under the f32 and the bf16 hint. What the window cannot hold exactly is refused with
its field: cubic or antialias on run-time sizes (their den grows with the lengths), a Keys coefficient whose
terms leave int32, 16-bit sums past int32."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino import integer_window as iw  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.written import written_default  # noqa: E402

TYPES = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8, "uint16": TensorProto.UINT16,
         "int16": TensorProto.INT16}
SHAPES = ((1, 1), (2, 3), (7, 9), (16, 5), (33, 48))


def _model(dtype, scales, coord="half_pixel", mode="cubic", **attrs):
    """Resize of X [1, 2, h, w] (dtype) by the static ``scales`` on H and W."""
    node = helper.make_node("Resize", ["X", "", "s"], ["Y"], mode=mode, coordinate_transformation_mode=coord,
                            axes=[2, 3], name="r", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TYPES[dtype], [1, 2, "h", "w"])],
                              [helper.make_tensor_value_info("Y", TYPES[dtype], None)],
                              [onnx.numpy_helper.from_array(np.array(scales, np.float32), "s")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _inputs(dtype, hw, seed):
    """Both ends of the type beside each other (cubic overshoots: the saturation is checked) and random values."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, (1, 2, *hw), dtype=dtype, endpoint=True)
    x[0, 1] = rng.choice(np.array([info.min, info.max], dtype), hw)
    return x


def _exact_everywhere(model, tmp_path):
    xml, src = written_default(model, tmp_path, iw.FORM)
    (_, ir), = parse_model(src)
    core = ov.Core()
    for hint in ("f32", "bf16"):
        compiled = core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for seed, hw in enumerate(SHAPES):
            x = _inputs(np.dtype(ir.dtype), hw, seed)
            want, got = run(ir, x), compiled(x)[0]
            assert got.dtype == want.dtype and np.array_equal(got, want), (hint, hw, np.abs(
                got.astype(int) - want.astype(int)).max())


@pytest.mark.parametrize("dtype,scales,coord", [
    ("uint8", (2.0, 2.0), "half_pixel"), ("uint8", (2.0, 2.0), "pytorch_half_pixel"),
    ("int8", (1.5, 1.5), "half_pixel"), ("uint8", (0.75, 0.75), "asymmetric"),
    ("uint16", (3.0, 0.5), "tf_half_pixel_for_nn"), ("int16", (2.0, 4.0), "half_pixel")])
def test_cubic_static_scale_on_dynamic_lengths_is_exact_in_graph(dtype, scales, coord, tmp_path):
    _exact_everywhere(_model(dtype, scales, coord), tmp_path)


def test_cubic_coefficient_of_tensorflow_is_exact_in_graph(tmp_path):
    _exact_everywhere(_model("uint8", (2.0, 2.0), cubic_coeff_a=-0.5), tmp_path)


@pytest.mark.parametrize("dtype,mode,scales,attrs", [
    ("int8", "linear", (2.0, 1.5), {"antialias": 1}), ("int8", "cubic", (2.0, 1.5), {"antialias": 1}),
    ("int8", "linear", (0.5, 0.5), {"antialias": 1}), ("int8", "linear", (0.75, 0.25), {"antialias": 1}),
    ("int8", "cubic", (0.5, 0.5), {"antialias": 1}), ("uint16", "linear", (2.0, 0.5), {"antialias": 1}),
    ("uint8", "cubic", (2.0, 2.0), {"exclude_outside": 1}),
    ("int16", "linear", (0.5, 1.5), {"exclude_outside": 1, "antialias": 1}),
    ("int16", "cubic", (0.5, 1.5), {"exclude_outside": 1, "antialias": 1})])
def test_weights_divided_by_their_sum_are_exact_in_graph(dtype, mode, scales, attrs, tmp_path):
    """Antialias (shrinking or not) and exclude_outside: a den per output, the sum of its numerators. Cubic's kept
    taps on a short input: each run of them holds a tap beside the source, whose weight is the filter's largest,
    so the sums are never small beside the negative lobes (``integer_taps.axis_bound``; refused before, counting
    runs of outer lobes alone). 8-bit antialias as int8: uint8's is onnxruntime's fixed point (test_fixed_point.py)."""
    _exact_everywhere(_model(dtype, scales, mode=mode, **attrs), tmp_path)


@pytest.mark.parametrize("model,field", [
    (lambda: _sizes_model("uint8"), "sizes"),
    (lambda: _sizes_model("uint8", mode="linear", antialias=1), "sizes"),
    (lambda: _model("uint8", (2.0, 2.0), cubic_coeff_a=-0.6), "scales"),
    (lambda: _model("int16", (4.5, 4.5)), "scales")])
def test_what_the_integer_window_cannot_hold_is_refused_with_its_field(model, field):
    from resample_bridge.lowering.rungs import Refusal
    from resample_bridge.translate.onnx import parse_model as parse

    (name, ir), = parse(model())
    got = iw.lower(_Node(name, ir))
    assert isinstance(got, Refusal) and got.field == field, got


def _sizes_model(dtype, mode="cubic", **attrs):
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode=mode, axes=[2, 3], name="r", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TYPES[dtype], [1, 2, "h", "w"]),
                                            helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("Y", TYPES[dtype], None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


class _Node:
    """What ``integer_window.lower`` reads of a node before it builds anything: its name and IR."""

    def __init__(self, name, ir):
        self.name, self.ir = name, ir


@pytest.mark.parametrize("dtype,coord", [("uint8", "asymmetric"), ("int16", "align_corners")])
def test_linear_exclude_outside_on_run_time_sizes_is_exact_in_graph(dtype, coord, tmp_path):
    """Linear exclude_outside without antialias: a den per output, at most the window's run-time den (the kept
    taps' numerators), so linear's run-time bound holds; onnxruntime refuses the mode, the oracle decides."""
    model = _sizes_model(dtype, mode="linear", exclude_outside=1, coordinate_transformation_mode=coord)
    xml, src = written_default(model, tmp_path, iw.FORM)
    (_, ir), = parse_model(src)
    for hint in ("f32", "bf16"):
        compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for seed, (hw, out) in enumerate((((3, 3), (6, 3)), ((5, 4), (3, 7)), ((1, 6), (4, 11)), ((17, 9), (5, 9)))):
            x, sizes = _inputs(np.dtype(dtype), hw, seed), np.array(out, np.int64)
            want, got = run(ir, x, None, None, sizes), compiled([x, sizes])[0]
            assert np.array_equal(got, want), (hint, hw, out)
