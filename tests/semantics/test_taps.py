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
