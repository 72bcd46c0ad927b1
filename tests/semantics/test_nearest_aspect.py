"""The keep-aspect nearest index form (semantics.nearest_index.aspect_index: the sizes form read at the common
scale S / I, output lengths round_half_up(in * S / I)) equals the oracle's own taps (coords.bind_resize of the
policy) for every input length and size of two axes in a small grid, every coordinate mode and rounding it covers,
both policies, as translate.onnx parses a Resize-19 with run-time sizes; and it refuses what it cannot express."""

import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper

from resample_bridge.semantics.nearest_index import NearestIndex, NoNearestIndex, aspect_index, \
    oracle_aspect_indices
from resample_bridge.translate.onnx import parse_model
from tests.helpers.aspect import common_scale

COORDS = ("asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners", "tf_half_pixel_for_nn")
ROUNDINGS = ("floor", "ceil", "round_prefer_floor", "round_prefer_ceil")


def _parsed(coord, rounding, policy):
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="nearest", nearest_mode=rounding,
                            coordinate_transformation_mode=coord, axes=[2, 3], keep_aspect_ratio_policy=policy)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, "h", "w"]),
                                            helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    ((_, ir),) = parse_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10))
    return ir


@pytest.mark.parametrize("policy", ("not_larger", "not_smaller"))
@pytest.mark.parametrize("coord,rounding", list(itertools.product(COORDS, ROUNDINGS)))
def test_equals_oracle_taps(coord, rounding, policy):
    ir = _parsed(coord, rounding, policy)
    form = aspect_index(ir)
    assert isinstance(form, NearestIndex) and form.by_scale == (coord != "align_corners"), form
    for ins in itertools.product(range(1, 6), repeat=2):
        for sizes in itertools.product(range(0, 8), repeat=2):
            I, S = common_scale(policy, ins, sizes)
            for k in range(2):
                want = oracle_aspect_indices(ir, ins, sizes, k)
                out = (2 * S * ins[k] + I) // (2 * I)  # round_half_up(in * S / I), as the graph computes it
                got = form.indices(ins[k], out, (I, S)) if out else np.zeros(0, np.int64)
                assert np.array_equal(got, want), (coord, rounding, policy, ins, sizes, k, got, want)


def test_refuses_with_reason():
    ir = _parsed("half_pixel", "floor", "not_larger")
    symmetric = _parsed("half_pixel_symmetric", "floor", "not_larger")  # its fractional formula length
    for other, field in ((ir.__class__(**{**ir.__dict__, "aspect_policy": "stretch"}), "keep_aspect_ratio_policy"),
                         (symmetric, "formula_length"),
                         (ir.__class__(**{**ir.__dict__, "exclude_outside": True}), "exclude_outside")):
        got = aspect_index(other)
        assert isinstance(got, NoNearestIndex) and got.field == field and got.reason
