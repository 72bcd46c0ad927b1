"""GridSample nearest at a .5 tie: which element is read depends only on how the unnormalised coordinate is
computed (IR field ``arith``). Each rule is checked against the framework it names."""

import dataclasses

import numpy as np
import pytest
from onnx import helper

from resample_bridge.semantics.reference import run
from resample_bridge.translate.onnx import parse_model
from resample_bridge.translate.onnxruntime import ort_semantics

L = 6
# float32(-1/3) on length 6, align_corners=0: exact source row 1.49999997 (rounds to 1); rounded once to
# float32 it is 1.5 (rounds half to even to 2).
TIE = np.float32(-1 / 3)


def _grid(values):
    grid = np.zeros((1, len(values), 1, 2), np.float32)
    grid[0, :, 0, 1] = values
    return grid


def _values():
    rng = np.random.default_rng(3)
    return np.concatenate([[TIE], rng.uniform(-1.2, 1.2, 4000)]).astype(np.float32)


def _model(padding, align_corners, n):
    node = helper.make_node("GridSample", ["X", "G"], ["Y"], mode="nearest", padding_mode=padding,
                            align_corners=align_corners)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", 1, [1, 1, L, 1]),
                                        helper.make_tensor_value_info("G", 1, [1, n, 1, 2])],
                          [helper.make_tensor_value_info("Y", 1, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_onnx_ir_reads_what_onnxruntime_reads(padding, align_corners):
    import onnxruntime as ort

    vals = _values()
    m = _model(padding, align_corners, len(vals))
    (_, ir), = parse_model(m)
    x = np.arange(L, dtype=np.float32).reshape(1, 1, L, 1)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"X": x, "G": _grid(vals)})[0]
    np.testing.assert_array_equal(run(ir, x, _grid(vals)), want)
    np.testing.assert_array_equal(run(ort_semantics(ir), x, _grid(vals)), want)
    if not align_corners:
        assert run(ir, x, _grid(vals)).reshape(-1)[0] == 1.0  # the tie reads row 1


@pytest.mark.parametrize("padding", ["zeros", "border"])
def test_fp32_fused_is_what_openvino_gridsample9_reads(padding):
    ov = pytest.importorskip("openvino")
    import openvino.opset9 as ops

    vals = _values()
    (_, ir), = parse_model(_model(padding, 0, len(vals)))
    x = np.arange(L, dtype=np.float32).reshape(1, 1, L, 1)
    p, g = ops.parameter([1, 1, L, 1], np.float32), ops.parameter([1, len(vals), 1, 2], np.float32)
    model = ov.Model([ops.grid_sample(p, g, {"align_corners": False, "mode": "nearest", "padding_mode": padding})],
                     [p, g])
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x, _grid(vals)])[0]
    np.testing.assert_array_equal(got, run(dataclasses.replace(ir, arith="fp32_fused"), x, _grid(vals)))
    assert got.reshape(-1)[0] == 2.0 and run(ir, x, _grid(vals)).reshape(-1)[0] == 1.0


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_every_image_of_a_batch_is_sampled_by_its_own_grid(mode, padding):
    """The oracle samples a batch's points in one pass (``reference.planes``): three images, each with its own
    grid, against onnxruntime within the error bound (nearest equal), and the bound is per image too: image 1
    scaled by 1000 leaves the others' bounds as they were."""
    import onnxruntime as ort

    from resample_bridge.semantics.compare import against_oracle
    from resample_bridge.semantics.tolerance import float_bound

    xs, gs = (3, 2, 5, 7), (3, 4, 6, 2)
    node = helper.make_node("GridSample", ["X", "G"], ["Y"], mode=mode, padding_mode=padding)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", 1, list(xs)),
                                        helper.make_tensor_value_info("G", 1, list(gs))],
                          [helper.make_tensor_value_info("Y", 1, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    (_, ir), = parse_model(m)
    ir = ort_semantics(ir)
    rng = np.random.default_rng(4)
    x, grid = rng.standard_normal(xs).astype(np.float32), rng.uniform(-1.2, 1.2, gs).astype(np.float32)
    got = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"X": x, "G": grid})[0]
    want = run(ir, x, grid)
    assert against_oracle(ir, got, want, [x, grid]).ok
    if mode == "nearest":
        np.testing.assert_array_equal(got, want)
    big = x.copy()
    big[1] *= 1000
    before, after = float_bound(ir, x, grid), float_bound(ir, big, grid)
    np.testing.assert_array_equal(before[[0, 2]], after[[0, 2]])
    assert mode == "nearest" or (after[1] > before[1]).any()
