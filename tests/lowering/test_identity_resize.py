"""A Resize that resizes nothing (scales all 1: ``nn.Upsample(scale_factor=1)`` in a configurable head, exported
with dynamic axes) is the identity on every shape. Before, rung 1 built an Interpolate listing no axis (an empty
Constant OpenVINO refuses) and the default wrote the library for it; now it lists the first axis at scale 1. An
antialias one, or one in a coordinate mode OpenVINO does not spell, still took the library (no Interpolate mode
spells antialias): the identity's sampler does not matter, so it is nearest at scale 1."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino.target import convert  # noqa: E402


def unit_scales(mode: str, dtype, opset: int = 18, **attrs) -> onnx.ModelProto:
    node = helper.make_node("Resize", ["x", "", "s"], ["y"], mode=mode, name="r", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", dtype, ["n", 4, "h", "w"])],
                              [helper.make_tensor_value_info("y", dtype, None)],
                              [helper.make_tensor("s", TensorProto.FLOAT, [4], [1, 1, 1, 1])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.FLOAT16])
def test_a_resize_of_scale_one_on_dynamic_shapes_is_native_and_the_identity(tmp_path, mode, dtype):
    path = tmp_path / "m.onnx"
    onnx.save(unit_scales(mode, dtype), str(path))
    written, records = convert(str(path), prefer="builtin")
    assert [r.rung for r in records] == [1], [r.summary() for r in records]
    compiled = ov.Core().compile_model(written, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for shape in ((1, 4, 5, 7), (2, 4, 1, 9)):
        x = np.random.default_rng(0).standard_normal(shape).astype(helper.tensor_dtype_to_np_dtype(dtype))
        np.testing.assert_array_equal(compiled({"x": x})[0], x)


@pytest.mark.parametrize("attrs", [dict(mode="linear", antialias=1), dict(mode="cubic", antialias=1),
                                   dict(mode="cubic", antialias=1, exclude_outside=1),
                                   dict(mode="linear", coordinate_transformation_mode="half_pixel_symmetric", opset=19)])
@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.UINT8])
def test_an_antialias_resize_of_scale_one_is_native_by_default(tmp_path, attrs, dtype):
    path = tmp_path / "m.onnx"
    onnx.save(unit_scales(dtype=dtype, **attrs), str(path))
    written, records = convert(str(path))
    assert [r.rung for r in records] == [1], [r.summary() for r in records]
    compiled = ov.Core().compile_model(written, "CPU")  # the default precision hint (bf16 on this CPU)
    for shape in ((1, 4, 5, 7), (3, 4, 1, 1)):
        x = (np.random.default_rng(1).random(shape) * 255).astype(helper.tensor_dtype_to_np_dtype(dtype))
        np.testing.assert_array_equal(compiled({"x": x})[0], x)
