"""The keep-aspect window form (semantics.window_form.aspect_window: the sizes form's window with its map and
stretch read at the common scale S / I, output lengths round_half_up(in * S / I)) equals the oracle's own taps
(coords.bind_resize of the policy, as a dense [out, in] matrix with clamped taps summed) for every input length and
size of two axes in a small grid, linear and cubic, antialias or not, exclude_outside or not, every coordinate mode
it covers, both policies, as translate.onnx parses a Resize-19 with run-time sizes; and it refuses what it cannot
express, naming the field."""

import dataclasses
import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper

from resample_bridge.semantics.nearest_index import NoNearestIndex
from resample_bridge.semantics.window_form import WindowForm, aspect_window, dense, oracle_aspect_table
from resample_bridge.translate.onnx import parse_model
from tests.helpers.aspect import common_scale

COORDS = ("asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners", "tf_half_pixel_for_nn")


def _parsed(mode, coord, policy, antialias=False, exclude=False):
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode=mode, antialias=int(antialias),
                            exclude_outside=int(exclude), coordinate_transformation_mode=coord, axes=[2, 3],
                            keep_aspect_ratio_policy=policy)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, "h", "w"]),
                                            helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    ((_, ir),) = parse_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10))
    return ir


SAMPLERS = [("linear", False, False), ("linear", True, False), ("cubic", False, True), ("cubic", True, False)]
# Every mode, every sampler and both policies, spread over 10 cases (the whole product of 40, 35 s, was run once by
# hand: equal too).
SPREAD = [(c, *SAMPLERS[k % 4], ("not_larger", "not_smaller")[k % 2]) for k, c in enumerate(COORDS * 2)]


@pytest.mark.parametrize("coord,mode,antialias,exclude,policy", SPREAD)
def test_equals_oracle_taps(coord, mode, antialias, exclude, policy):
    ir = _parsed(mode, coord, policy, antialias, exclude)
    form = aspect_window(ir)
    assert isinstance(form, WindowForm) and form.map_by_scale == (coord != "align_corners"), form
    for ins in itertools.product(range(1, 5), repeat=2):
        for sizes in itertools.product(range(0, 7), repeat=2):
            I, S = common_scale(policy, ins, sizes)
            for k in range(2):
                want, _, out = oracle_aspect_table(ir, ins, sizes, k)
                assert out == (2 * S * ins[k] + I) // (2 * I)  # round_half_up(in * S / I), as the graph computes it
                if out == 0:
                    continue
                index, weight = form.table(ins[k], out, (I, S))
                got = dense(index, weight, ins[k])
                assert np.abs(got - want).max() < 1e-12, (coord, mode, policy, ins, sizes, k)


def test_refuses_with_reason():
    ir = _parsed("linear", "half_pixel", "not_larger")
    symmetric = _parsed("linear", "half_pixel_symmetric", "not_larger")  # its fractional formula length
    crop = dataclasses.replace(ir, coord="tf_crop_and_resize")
    for other, field in ((dataclasses.replace(ir, aspect_policy="stretch"), "keep_aspect_ratio_policy"),
                         (symmetric, "formula_length"), (crop, "coordinate_transformation_mode")):
        got = aspect_window(other)
        assert isinstance(got, NoNearestIndex) and got.field == field and got.reason, (field, got)
