"""The affine grid generator's oracle (``semantics/affine_grid.py``) against the ONNX reference's AffineGrid-20, and
its field diff: no torch needed (``tests/translate/test_torch_affine_grid.py`` checks it against PyTorch eager)."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from resample_bridge.semantics import affine_grid
from resample_bridge.semantics.affine_grid import AffineGridIR, base_coordinates
from resample_bridge.semantics.compare import within_bound

SIZES = [(2, 3, 7, 9), (1, 1, 64, 80), (1, 2, 3, 4, 5), (2, 1, 6, 1, 4), (1, 1, 1, 5), (1, 1, 4, 1)]


def onnx_reference(size, align: bool, theta: np.ndarray) -> np.ndarray:
    r = len(size) - 2
    graph = helper.make_graph(
        [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=int(align))], "g",
        [helper.make_tensor_value_info("theta", TensorProto.FLOAT, [size[0], r, r + 1])],
        [helper.make_tensor_value_info("grid", TensorProto.FLOAT, None)],
        [helper.make_tensor("size", TensorProto.INT64, [len(size)], list(size))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    with np.errstate(divide="ignore"):  # its step 2 / (L - 1) at L = 1
        return ReferenceEvaluator(model).run(None, {"theta": theta})[0]


def theta_for(size, seed=0) -> np.ndarray:
    r = len(size) - 2
    return np.random.default_rng(seed).uniform(-2, 2, (size[0], r, r + 1)).astype(np.float32)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", SIZES)
def test_oracle_with_onnx_length1_is_the_onnx_reference(size, align):
    theta = theta_for(size)
    ir = AffineGridIR(len(size) - 2, size, align, length1="minus_one")
    got = onnx_reference(size, align, theta)
    assert got.shape == ir.grid_shape
    assert within_bound(got, affine_grid.run(ir, theta), affine_grid.bound(ir, theta)).ok


@pytest.mark.parametrize("size", [(1, 1, 1, 5), (1, 1, 4, 1), (1, 1, 1, 4, 5)])
def test_pytorch_length1_parts_from_onnx_only_with_align_corners(size):
    theta = theta_for(size)
    torch_ir = AffineGridIR(len(size) - 2, size, True, length1="zero")
    assert not within_bound(onnx_reference(size, True, theta), affine_grid.run(torch_ir, theta),
                            affine_grid.bound(torch_ir, theta)).ok
    ((name, onnx_v, torch_v, material),) = affine_grid.field_differences(
        AffineGridIR(len(size) - 2, size, True, length1="minus_one"), torch_ir)
    assert (name, onnx_v, torch_v, material) == ("length1", "minus_one", "zero", True)
    # without align_corners both put a lone position at 0: the field is spelled otherwise, numbers the same
    (f,) = affine_grid.field_differences(AffineGridIR(len(size) - 2, size, False, length1="minus_one"),
                                         AffineGridIR(len(size) - 2, size, False))
    assert f[0] == "length1" and f[3] is False


def test_base_coordinates():
    assert base_coordinates(4, False) == [-0.75, -0.25, 0.25, 0.75]
    assert base_coordinates(5, True) == [-1, -0.5, 0, 0.5, 1]
    assert base_coordinates(1, True) == [0] and base_coordinates(1, True, "minus_one") == [-1]


def test_bound_refuses_a_grid_moved_by_a_bfloat16_step():
    size = (1, 1, 64, 80)
    theta = theta_for(size)
    ir = AffineGridIR(2, size, False)
    exact = affine_grid.run(ir, theta)
    b = affine_grid.bound(ir, theta)
    assert within_bound(exact.astype(np.float32), exact, b).ok
    assert not within_bound((exact * (1 + 2.0**-8)).astype(np.float32), exact, b).ok  # bf16's relative step
