"""The oracle's nearest fast path (one integer computation over all outputs) picks what the definition (one
exact Fraction per output, ``_window_taps``) picks, for every rounding rule, exclude_outside, negative and
huge coordinates."""

import itertools
import random
from fractions import Fraction

import numpy as np
import pytest

from resample_bridge.semantics import taps
from resample_bridge.semantics.coords import BoundAxis
from resample_bridge.semantics.ir import Sampler

RULES = ["floor", "ceil", "round_prefer_floor", "round_prefer_ceil", "half_even"]


def _axes(seed: int, n: int):
    rng = random.Random(seed)
    for _ in range(n):
        a = Fraction(rng.randint(-50, 400), rng.randint(1, 97))
        b = Fraction(rng.randint(-300, 300), rng.randint(1, 50))
        if rng.random() < 0.1:  # beyond int64 once multiplied out
            a = Fraction(rng.randint(1, 10**19), rng.randint(1, 7))
        yield BoundAxis(0, rng.randint(1, 60), rng.randint(1, 60), a, b, Fraction(1), rng.choice(RULES), None)


@pytest.mark.parametrize("exclude_outside,exact", list(itertools.product([False, True], [False, True])))
def test_nearest_fast_path_equals_the_definition(exclude_outside, exact):
    for axis in _axes(7, 400):
        fast = taps._nearest_taps(axis, exclude_outside, exact)
        slow = taps._window_taps(axis, Sampler("nearest", axis.nearest), exclude_outside, exact)
        assert fast.index.dtype == slow.index.dtype and np.array_equal(fast.index, slow.index), axis
        if exact:
            assert fast.weight == slow.weight, axis
        else:
            assert np.array_equal(fast.weight, slow.weight), axis


def test_ties_follow_each_rule():
    # src = o/2 - 1/4 + 1/4 = o/2: every odd output is a tie between o//2 and o//2 + 1
    axis = BoundAxis(0, 10, 8, Fraction(1, 2), Fraction(0), Fraction(1), "half_even", None)
    want = {"floor": [0, 0, 1, 1, 2, 2, 3, 3], "ceil": [0, 1, 1, 2, 2, 3, 3, 4],
            "round_prefer_floor": [0, 0, 1, 1, 2, 2, 3, 3], "round_prefer_ceil": [0, 1, 1, 2, 2, 3, 3, 4],
            "half_even": [0, 0, 1, 2, 2, 2, 3, 4]}
    for rule, picks in want.items():
        assert taps.nearest_indices(axis, rule).tolist() == picks, rule


@pytest.mark.parametrize("kind", ["linear", "cubic"])
def test_antialias_to_an_empty_axis_is_empty(kind):
    """Sizes fed at run time that ask for length 0 with antialias (fuzz seed 64; static sizes of 0 are refused at
    parse): the filter's scale is 0, so its width is infinite, but the output has no element to weigh, and the
    oracle gives the empty array the sizes ask for."""
    from onnx import TensorProto, helper

    from resample_bridge.semantics.reference import run
    from resample_bridge.translate.onnx import parse_model

    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], name="r", mode=kind, antialias=1)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 7, 2]),
                                        helper.make_tensor_value_info("S", TensorProto.INT64, [4])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    (_, ir), = parse_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]))
    got = run(ir, np.ones((1, 1, 7, 2), np.float32), None, None, np.array([1, 1, 7, 0], np.int64))
    assert got.shape == (1, 1, 7, 0) and got.dtype == np.float32
