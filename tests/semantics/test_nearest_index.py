"""The exact integer nearest index form (semantics.nearest_index) equals the oracle's own nearest taps
for every in, out in 1..40, every coordinate mode and nearest rounding it covers, both ONNX conventions; and it
refuses what it cannot express."""

import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper

from resample_bridge.semantics.nearest_index import NearestIndex, NoNearestIndex, nearest_index, oracle_nearest_indices
from resample_bridge.semantics.ir import ResizeIR, RuntimeValue, Sampler
from resample_bridge.translate.onnx import onnx_convention, parse_model

COORDS = ("asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners", "tf_half_pixel_for_nn",
          "half_pixel_symmetric")
ROUNDINGS = ("floor", "ceil", "round_prefer_floor", "round_prefer_ceil")


def _parsed(coord, rounding, convention):
    """The IR translate.onnx gives a Resize-19 with run-time sizes and dynamic H/W, under ``convention``."""
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="nearest", nearest_mode=rounding,
                            coordinate_transformation_mode=coord, axes=[2, 3])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, "h", "w"]),
                                            helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    with onnx_convention(convention):
        ((_, ir),) = parse_model(model)
    return ir


@pytest.mark.slow
@pytest.mark.parametrize("convention", ("spec", "reference"))
@pytest.mark.parametrize("coord,rounding", list(itertools.product(COORDS, ROUNDINGS)))
def test_equals_oracle_taps(coord, rounding, convention):
    ir = _parsed(coord, rounding, convention)
    form = nearest_index(ir)
    assert isinstance(form, NearestIndex), form
    for i in range(1, 41):
        for o in range(1, 41):
            got, want = form.indices(i, o), oracle_nearest_indices(ir, i, o)
            assert np.array_equal(got, want), (coord, rounding, convention, i, o, got, want)


@pytest.mark.parametrize("length1", ("zero", "minus_half"))
@pytest.mark.parametrize("equal_copy", (False, True))
@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_every_ir_field_the_conventions_touch(length1, equal_copy, rounding):
    """length1 (pytorch_half_pixel at out == 1), formula_length (no effect with sizes) and
    equal_length_identity (an axis of equal lengths copied) on IR values built directly."""
    for coord, flen in itertools.product(COORDS, ("integer", "fractional")):
        ir = ResizeIR(rank=4, axes=(2, 3), scales=None, sizes=RuntimeValue("s"), roi=None, coord=coord,
                      sampler=Sampler("nearest", rounding), length1=length1, formula_length=flen,
                      equal_length_identity=equal_copy)
        form = nearest_index(ir)
        for i in range(1, 17):  # the parsed IRs above cover 1..40
            for o in range(1, 17):
                assert np.array_equal(form.indices(i, o), oracle_nearest_indices(ir, i, o)), (coord, i, o)


def test_large_lengths():
    ir = _parsed("half_pixel", "round_prefer_ceil", "spec")
    form = nearest_index(ir)
    for i, o in ((1000, 2000), (4097, 3), (3, 4097), (23170, 23169)):
        assert np.array_equal(form.indices(i, o), oracle_nearest_indices(ir, i, o))


def _ir(**kw):
    base = dict(rank=4, axes=(2, 3), scales=None, sizes=RuntimeValue("s"), roi=None, coord="asymmetric",
                sampler=Sampler("nearest", "floor"))
    base.update(kw)
    return ResizeIR(**base)


@pytest.mark.parametrize("kw,field", [
    (dict(sampler=Sampler("linear")), "mode"),
    (dict(sizes=None, scales=RuntimeValue("sc")), "scales"),
    (dict(coord="tf_crop_and_resize", roi=RuntimeValue("r")), "coordinate_transformation_mode"),
    (dict(aspect_policy="not_larger"), "keep_aspect_ratio_policy"),
    (dict(sampler=Sampler("nearest", "simple")), "nearest_mode"),
    (dict(exclude_outside=True), "exclude_outside"),
    (dict(pads=(0, 0, 1, 1, 0, 0, 1, 1)), "pads"),
])
def test_refuses_with_reason(kw, field):
    got = nearest_index(_ir(**kw))
    assert isinstance(got, NoNearestIndex) and got.field == field and got.reason


@pytest.mark.parametrize("length1", ("zero", "minus_half"))
@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_pieces_left_out_are_given_by_the_formula(length1, rounding):
    """Where the form says a side of the clamp or the copy of equal lengths is not needed (what a graph then leaves
    out), the formula without it still equals the oracle's taps; and the checks do leave some out."""
    left_out = 0
    for coord, equal_copy in itertools.product(COORDS, (False, True)):
        ir = ResizeIR(rank=4, axes=(2, 3), scales=None, sizes=RuntimeValue("s"), roi=None, coord=coord,
                      sampler=Sampler("nearest", rounding), length1=length1, formula_length="integer",
                      equal_length_identity=equal_copy)
        form = nearest_index(ir)
        needs = (form.needs_low_clamp(), form.needs_high_clamp(), form.needs_copy())
        left_out += needs.count(False)
        for i in range(1, 41):
            for o in range(1, 41):
                x = np.arange(o)
                idx = (form.p(i, o) * x + form.q(i, o)) // form.r(i, o) if form.r(i, o) else x
                if form.out1 is not None and o == 1:
                    idx = np.full(1, max(form.out1, 0))
                idx = np.maximum(idx, 0) if needs[0] else idx
                idx = np.minimum(idx, i - 1) if needs[1] else idx
                idx = x if needs[2] and i == o else idx
                assert np.array_equal(idx, oracle_nearest_indices(ir, i, o)), (coord, equal_copy, i, o, needs)
    assert left_out > 0
