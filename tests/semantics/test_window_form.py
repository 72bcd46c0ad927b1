"""The window form (semantics.window_form), antialias or plain, equals the oracle's own taps (``taps.axis_taps``, as a dense
[out, in] matrix with clamped taps summed) for every in, out in 1..40, linear and cubic, every coordinate mode it
takes, with and without exclude_outside, sizes and static scales; and it refuses what it cannot express, naming
the field."""

import dataclasses
import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper

from resample_bridge.semantics.ir import RuntimeValue
from resample_bridge.semantics.nearest_index import Linear, NoNearestIndex
from resample_bridge.semantics.window_form import WindowForm, dense, oracle_table, window_form
from resample_bridge.translate.onnx import onnx_convention, parse_model

COORDS = ("asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners", "tf_half_pixel_for_nn",
          "half_pixel_symmetric")


def _parsed(mode, coord, exclude, scales=None, convention="spec", antialias=True):
    """The IR translate.onnx gives an antialias (or plain) Resize-19 on dynamic H/W: run-time sizes, or static
    scales."""
    inputs = ["X", "", "S"] if scales is not None else ["X", "", "", "S"]
    node = helper.make_node("Resize", inputs, ["Y"], mode=mode, antialias=int(antialias), exclude_outside=int(exclude),
                            coordinate_transformation_mode=coord, cubic_coeff_a=-0.5)
    inits = [helper.make_tensor("S", TensorProto.FLOAT, [4], [1, 1, scales, scales])] if scales is not None else []
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, "h", "w"])]
    if scales is None:
        graph_inputs.append(helper.make_tensor_value_info("S", TensorProto.INT64, [4]))
    graph = helper.make_graph([node], "g", graph_inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    with onnx_convention(convention):
        ((_, ir),) = parse_model(model)
    return ir


def _check(ir, lengths):
    form = window_form(ir)
    assert isinstance(form, WindowForm), form
    for i, o in lengths:
        o = form.out_len(i, o)
        if o == 0:
            continue
        index, weight = form.table(i, o)
        want, _ = oracle_table(ir, i, o, form.scale)
        got = dense(index, weight, i)
        assert np.abs(got - want).max() < 1e-12, (i, o, np.abs(got - want).max())


@pytest.mark.parametrize("mode,exclude", list(itertools.product(("linear", "cubic"), (False, True))))
@pytest.mark.parametrize("coord", COORDS)
def test_sizes_equal_oracle(mode, coord, exclude):
    ir = _parsed(mode, coord, exclude)
    assert isinstance(ir.sizes, RuntimeValue)
    # every pair up to 24, and lengths up to 40 (primes, 32, 40) against all of them: the Fraction oracle costs
    # ~0.3 ms per output, and the whole 40 x 40 square made this 12 of the suite's slowest tests (10-13 s each)
    lengths = list(range(1, 25)) + [29, 31, 32, 37, 40]
    _check(ir, [(i, o) for i in lengths for o in lengths] + [(1000, 3), (3, 1000), (4097, 1)])


@pytest.mark.parametrize("mode,exclude", list(itertools.product(("linear", "cubic"), (False, True))))
@pytest.mark.parametrize("coord", COORDS)
def test_plain_sizes_equal_oracle(mode, coord, exclude):
    """Without antialias the filter is not stretched (f = 1, K = 2R) and, without exclude_outside, the weights
    are not divided by their sum (the oracle's rule; their sum is 1 in exact arithmetic only)."""
    ir = _parsed(mode, coord, exclude, antialias=False)
    form = window_form(ir)
    assert form.normalise == exclude and (form.fn(7, 3), form.fd(7, 3)) == (1, 1)
    lengths = list(range(1, 17)) + [31, 40]
    _check(ir, [(i, o) for i in lengths for o in lengths] + [(1000, 3), (3, 1000)])


@pytest.mark.parametrize("mode,exclude", list(itertools.product(("linear", "cubic"), (False, True))))
@pytest.mark.parametrize("coord", ("asymmetric", "half_pixel", "tf_half_pixel_for_nn"))
@pytest.mark.parametrize("scale", (0.5, 0.75, 0.125, 1.5, 3.0))
def test_scales_equal_oracle(mode, coord, exclude, scale):
    ir = _parsed(mode, coord, exclude, scales=scale)
    _check(ir, [(i, None) for i in range(1, 81)] + [(1001, None)])


def test_refusals_name_the_field():
    crop = dataclasses.replace(_parsed("linear", "half_pixel", False), coord="tf_crop_and_resize")
    assert window_form(crop).field == "coordinate_transformation_mode"
    assert window_form(_parsed("cubic", "half_pixel", True, scales=0.6)).field == "scales"
    assert window_form(_parsed("cubic", "align_corners", True, scales=0.5)).field == "coordinate_transformation_mode"
    ir = _parsed("cubic", "half_pixel", True)
    assert window_form(dataclasses.replace(ir, sampler=dataclasses.replace(ir.sampler, kind="nearest"))).field \
        == "mode"
    assert window_form(dataclasses.replace(ir, scales=RuntimeValue("s"), sizes=None)).field == "scales"
    assert isinstance(window_form(dataclasses.replace(ir, pads=(0,) * 8)), NoNearestIndex)


def test_a_shifted_map_is_caught():
    """The comparison can fail: a form off by half a pixel differs from the oracle."""
    ir = _parsed("cubic", "half_pixel", True)
    form = window_form(ir)
    wrong = dataclasses.replace(form, q=form.q + Linear(0, 1, 0))  # half a pixel: r = 2*out
    index, weight = wrong.table(10, 4)
    want, allow = oracle_table(ir, 10, 4)
    assert (np.abs(dense(index, weight, 10) - want) > allow + 1e-3).any()
