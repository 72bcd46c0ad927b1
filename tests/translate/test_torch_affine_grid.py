"""``F.affine_grid`` (issue 44): the oracle (``semantics/affine_grid.py``) against PyTorch eager on several sizes,
both align_corners, 2-D and 3-D, and the call read from a torch.export program and from a traced module into it
(``translate.torch.grid_generators``)."""

import dataclasses
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from resample_bridge.semantics import affine_grid  # noqa: E402
from resample_bridge.semantics.affine_grid import AffineGridIR  # noqa: E402
from resample_bridge.semantics.compare import within_bound  # noqa: E402
from resample_bridge.translate import torch as torch_frontend  # noqa: E402
from tests.helpers.torch_forms import SpatialTransformer as STN  # noqa: E402

pytestmark = pytest.mark.torch

SIZES = [(2, 3, 7, 9), (1, 1, 64, 80), (3, 1, 100, 1), (1, 1, 1, 5), (1, 1, 1, 1),
         (1, 2, 3, 4, 5), (2, 1, 6, 1, 4), (1, 1, 1, 1, 1)]


def eager(size, align: bool, theta: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns of its unit-size rule with align_corners=True
        return F.affine_grid(torch.from_numpy(theta), list(size), align_corners=align).numpy()


def theta_for(size, seed=0, dtype=np.float32) -> np.ndarray:
    r = len(size) - 2
    return np.random.default_rng(seed).uniform(-2, 2, (size[0], r, r + 1)).astype(dtype)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", SIZES)
def test_oracle_is_pytorch_eager(size, align):
    theta = theta_for(size)
    ir = AffineGridIR(len(size) - 2, size, align)
    got = eager(size, align, theta)
    assert got.shape == ir.grid_shape
    assert within_bound(got, affine_grid.run(ir, theta), affine_grid.bound(ir, theta)).ok


@pytest.mark.parametrize("size, align, field, value", [
    ((2, 3, 7, 9), False, "align_corners", True),
    ((1, 2, 3, 4, 5), True, "align_corners", False),
    ((1, 1, 1, 5), True, "length1", "minus_one"),
    ((2, 1, 6, 1, 4), True, "length1", "minus_one"),
])
def test_another_rule_is_outside_the_bound(size, align, field, value):
    """The bound is tight enough to tell each named rule from PyTorch's."""
    theta = theta_for(size, seed=1)
    ir = dataclasses.replace(AffineGridIR(len(size) - 2, size, align), **{field: value})
    assert not within_bound(eager(size, align, theta), affine_grid.run(ir, theta), affine_grid.bound(ir, theta)).ok


def test_float64_theta():
    size = (2, 3, 7, 9)
    theta = theta_for(size, dtype=np.float64)
    ir = AffineGridIR(2, size, True, dtype="float64")
    assert np.abs(eager(size, True, theta) - affine_grid.run(ir, theta)).max() < 1e-12


def stn_inputs(size):
    r = len(size) - 2
    return torch.randn(size[0], size[1], *[n + 2 for n in size[2:]]), torch.randn(size[0], r, r + 1)


@pytest.mark.parametrize("size, align", [((2, 3, 7, 9), False), ((1, 2, 3, 4, 5), True)])
def test_exported_call_reads_into_the_ir(size, align):
    program = torch.export.export(STN(size, align), stn_inputs(size))
    (call,) = torch_frontend.grid_generators(program)
    assert call.op == "aten.affine_grid_generator.default" and call.error is None
    assert call.ir == AffineGridIR(len(size) - 2, size, align, dtype="float32")
    assert "affine_grid(theta, self.size" in call.code and call.where.split(":")[0].endswith("torch_forms.py")
    assert f"size={list(size)}, align_corners={align}" in call.user_call()
    # not a resampling call: convert lowers grid_sampler alone
    assert [c.op for c in torch_frontend.calls(program)] == ["aten.grid_sampler.default"]


def test_traced_call_reads_into_the_ir():
    size = (2, 3, 7, 9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(STN(size, False), stn_inputs(size))
    (call,) = torch_frontend.grid_generators(traced)
    assert call.ir == AffineGridIR(2, size, False, dtype="float32")


def test_theta_of_the_wrong_shape_is_refused():
    from resample_bridge.translate.torch_ops import Call, Tensor, parse_call
    from resample_bridge.semantics.errors import BridgeError

    call = Call("affine_grid_generator", "aten.affine_grid_generator.default",
                {"theta": Tensor((1, 3, 4), "float32"), "size": [1, 3, 7, 9], "align_corners": False})
    with pytest.raises(BridgeError, match="theta of shape") as e:
        parse_call(call)
    assert e.value.field == "theta"
