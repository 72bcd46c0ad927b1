"""``coords.crop_inside_range``: the outputs of tf_crop_and_resize whose source lies inside the input, per output
length, from the map at in length 2 (what ``scale_source.crop_outside``'s proof checks its run-time decision
against on long axes): the same outputs as the oracle's own extrapolation flags (``taps.axis_taps`` of ``bind_resize``) at every
input length, for boxes past [0, 1] either way, flipped, wholly outside, and float32 ends that land a source within
an ulp of an edge."""

from fractions import Fraction

import numpy as np
import pytest

from resample_bridge.semantics.coords import bind_resize, crop_inside_range
from resample_bridge.semantics.ir import ResizeIR, Sampler
from resample_bridge.semantics.taps import axis_taps

BOXES = [(-0.1, 1.25), (-0.2, 1.2), (1.2, -0.3), (1.1, 1.5), (-0.7, -0.2), (0.25, 0.75), (0.0, 1.0), (-1e-8, 1.0),
         (0.5, 0.5), (-0.5, 2.5), (1.0 + 2 ** -23, -2 ** -24)]


def _one_axis(box, in_len: int, out_len: int) -> ResizeIR:
    return ResizeIR(rank=1, axes=(0,), sampler=Sampler("linear"), coord="tf_crop_and_resize",
                    roi=tuple(Fraction(float(np.float32(v))) for v in box), sizes=(out_len,), scales=None)


@pytest.mark.parametrize("box", BOXES)
def test_the_inside_range_is_the_oracles_at_every_length(box):
    roi = tuple(Fraction(float(np.float32(v))) for v in box)
    for n in range(0, 40):
        lo, hi = crop_inside_range(roi, n)
        mine = np.array([lo <= o <= hi for o in range(n)], bool)
        for L in (2, 3, 7, 33):
            bound = bind_resize(_one_axis(box, L, n), (L,))
            axis, = bound.axes or (None,)
            if axis is None:  # an axis the oracle copies (equal lengths): nothing extrapolated
                continue
            t = axis_taps(axis, bound.sampler, False)
            oracle = np.zeros(n, bool) if t.extrapolate is None else ~np.asarray(t.extrapolate, bool)
            assert np.array_equal(mine, oracle), (box, n, L, mine, oracle)


def test_some_outputs_lie_outside_and_some_inside():
    """The boxes above are not all inside or all outside (the test above could not tell a constant answer)."""
    roi = tuple(Fraction(float(np.float32(v))) for v in (-0.2, 1.2))
    lo, hi = crop_inside_range(roi, 30)
    assert 0 < lo <= hi < 29
