"""Linear / cubic Resize under keep_aspect_ratio_policy with lengths known only at run time
(``lowering/openvino/window_aspect.py``): an image of any size fitted into a box (a letterbox's resize: constant
sizes on a dynamic input) and sizes fed at run time convert by default to standard opsets, no library (the
extension before), and compute the oracle's numbers (verify, per node and per output) at every shape, f32, and
under this CPU's default precision (bf16 here) off by value rounding only; onnxruntime agrees within its own float32
scale's rounding."""

from __future__ import annotations


import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from tests.helpers.aspect import proves_only_its_policy  # noqa: E402
from tests.helpers.written import written_default  # noqa: E402

FORM = "window_aspect"
SHAPES = ((1, 1), (3, 9), (9, 3), (7, 5), (14, 10), (11, 4), (2, 13), (40, 23))


def _box(mode: str, coord: str, policy: str, antialias: int = 0, run_time_sizes: bool = False,
         dtype=TensorProto.FLOAT):
    """An image of any height and width resized to fit (not_larger) or cover (not_smaller) a 7 x 5 box, or a box
    fed at run time."""
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], name="r", mode=mode, axes=[2, 3],
                            keep_aspect_ratio_policy=policy, coordinate_transformation_mode=coord, antialias=antialias)
    inputs = [helper.make_tensor_value_info("X", dtype, [1, 2, "h", "w"])]
    inits = [] if run_time_sizes else [onnx.numpy_helper.from_array(np.array([7, 5], np.int64), "S")]
    if run_time_sizes:
        inputs.append(helper.make_tensor_value_info("S", TensorProto.INT64, [2]))
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("Y", dtype, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


@pytest.mark.parametrize("mode,coord,policy,antialias", [("linear", "half_pixel", "not_larger", 1),
                                                         ("cubic", "align_corners", "not_smaller", 0),
                                                         ("linear", "asymmetric", "not_smaller", 0)])
def test_dynamic_image_fit_to_a_box(mode, coord, policy, antialias, tmp_path):
    xml, src = written_default(_box(mode, coord, policy, antialias), tmp_path, FORM)
    rng = np.random.default_rng(0)
    session = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    default = ov.Core().compile_model(xml, "CPU")  # this CPU's default precision (bf16 here)
    for h, w in SHAPES:
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        result = api.verify(src, xml, inputs={"X": x})  # the oracle per node, onnxruntime per output, f32
        assert result.ok and all(n["ok"] for n in result.raw["nodes"]), (h, w, result.raw["nodes"])
        want = session.run(None, {"X": x})[0]
        got = default({"X": x})[0]
        assert got.shape == want.shape and np.abs(got - want).max() <= 0.05 * (1 + np.abs(want).max()), (h, w)
    bf16 = api.verify(src, xml, inputs={"X": rng.standard_normal((1, 2, 11, 4)).astype(np.float32)},
                      precision="bf16")
    assert bf16.ok, bf16.raw


def test_sizes_fed_at_run_time(tmp_path):
    xml, src = written_default(_box("linear", "half_pixel", "not_larger", 1, run_time_sizes=True), tmp_path, FORM)
    x = np.random.default_rng(1).standard_normal((1, 2, 13, 6)).astype(np.float32)
    for sizes in ((4, 7), (10, 3), (1, 1), (26, 40)):
        result = api.verify(src, xml, inputs={"X": x, "S": np.array(sizes, np.int64)})
        assert result.ok and all(n["ok"] for n in result.raw["nodes"]), sizes


def test_proof_fails_for_another_policy(tmp_path):
    """The written model's windows, re-read and run over the grid, prove the node's own IR and not the other
    policy's."""
    model = _box("linear", "half_pixel", "not_larger", 1)
    written_default(model, tmp_path, FORM)
    proves_only_its_policy(str(tmp_path / "m.onnx"), str(tmp_path / "again" / "m.xml"))


@pytest.mark.parametrize("dtype,coord,policy", [(TensorProto.UINT8, "half_pixel", "not_larger"),
                                                (TensorProto.INT8, "align_corners", "not_smaller")])
def test_an_integer_image_fit_to_a_box_is_exact(dtype, coord, policy, tmp_path):
    """A uint8 / int8 image (a camera frame letterboxed in the model) takes the exact integer window: the oracle's
    numbers bit for bit (its exact sum rounded half to even, where onnxruntime truncates), at this CPU's default
    precision too (no float op)."""
    xml, src = written_default(_box("linear", coord, policy, dtype=dtype), tmp_path, FORM)
    np_type = onnx.helper.tensor_dtype_to_np_dtype(dtype)
    info = np.iinfo(np_type)
    rng = np.random.default_rng(2)
    default = ov.Core().compile_model(xml, "CPU")
    exact = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for h, w in SHAPES:
        x = rng.integers(info.min, info.max, (1, 2, h, w), endpoint=True).astype(np_type)
        result = api.verify(src, xml, inputs={"X": x})  # integers: the oracle's, bit for bit
        assert result.ok and all(n["ok"] for n in result.raw["nodes"]), (h, w, result.raw["nodes"])
        assert np.array_equal(default({"X": x})[0], exact({"X": x})[0]), (h, w)


def test_integer_antialias_keeps_the_library_and_says_why(tmp_path):
    """The integer window's den grows with the lengths under antialias: the extension, its reason naming that (int8:
    uint8 antialias is onnxruntime's fixed point, tests/lowering/test_fixed_point.py)."""
    src = tmp_path / "m.onnx"
    onnx.save(_box("linear", "half_pixel", "not_larger", 1, dtype=TensorProto.INT8), src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    (rec,) = done.records
    assert rec.rung == 4 and "den grows with the lengths" in rec.tried[-1][2], rec.tried


def test_the_integer_windows_bound_follows_from_the_lengths_bound():
    """The integer form states one bound, lengths and sizes up to MAX_LEN: each axis' den (at most 2 * MAX_LEN)
    then stays below the exact sum's per-axis bound for 16-bit types and two axes' product within MAX_DEN."""
    from resample_bridge.lowering.openvino.antialias_taps import MAX_LEN
    from resample_bridge.lowering.openvino.integer_taps import MAX_DEN
    from resample_bridge.lowering.openvino.integer_window import max_den

    assert (2 * MAX_LEN) ** 2 <= MAX_DEN and 2 * MAX_LEN < max_den("uint16") and 2 * MAX_LEN < max_den("int16")


def test_a_cubic_of_any_coefficient_copies_an_identity_axis_exactly(tmp_path):
    """Keys' cubic at a coefficient that is not dyadic (-0.4768, as a fuzz case had it) rounds its pieces at whole
    distances (1 + 2^-23, 2^-24) where the oracle copies an axis (in = out with the map the identity): the proof
    refused the form there (the extension before). At a whole distance the window's weight is now exactly 1 or 0."""
    model = _box("cubic", "asymmetric", "not_smaller", run_time_sizes=True)
    model.graph.node[0].attribute.append(helper.make_attribute("cubic_coeff_a", -0.4767648))
    xml, src = written_default(model, tmp_path, FORM)
    x = np.random.default_rng(3).standard_normal((1, 2, 2, 1)).astype(np.float32)
    for sizes in ((2, 2), (0, 1), (5, 3)):
        result = api.verify(src, xml, inputs={"X": x, "S": np.array(sizes, np.int64)})
        assert result.ok and all(n["ok"] for n in result.raw["nodes"]), sizes
