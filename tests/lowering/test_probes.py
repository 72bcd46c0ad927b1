"""lowering/probes.py: the probe inputs that prove a candidate by numbers expose what they are meant to."""

import numpy as np
import pytest

from resample_bridge.lowering.probes import concrete_shapes, data_probes, grid_probes, probe_sets, runtime_probes
from resample_bridge.semantics.coords import unnormalize
from resample_bridge.semantics.ir import GridSampleIR, ResizeIR, RuntimeValue, Sampler


def _resize(**kw):
    base = dict(rank=4, axes=(0, 1, 2, 3), scales=None, sizes=None, roi=None, coord="half_pixel",
                sampler=Sampler("linear"), origin="Resize-19")
    base.update(kw)
    return ResizeIR(**base)


def test_int32_probes_reach_past_2_24_with_odd_values():
    arrays = dict((w, a) for a, w in data_probes((1, 1, 2, 3), "int32", np.random.default_rng(0)))
    big = arrays["values past 2^24"]
    assert big.dtype == np.int32 and (big > 2**24).all() and (big % 2 == 1).all()
    # float32 cannot hold them: a float32 path changes them.
    assert (big.astype(np.float32).astype(np.int64) != big).any()


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_small_integer_probes_hold_both_extremes(dtype):
    arrays = dict((w, a) for a, w in data_probes((1, 1, 2, 2), dtype, np.random.default_rng(0)))
    ext = arrays[f"{dtype} extremes"]
    info = np.iinfo(dtype)
    assert ext.min() == info.min and ext.max() == info.max


def test_integer_probes_have_neighbours_averaging_to_a_half():
    (a, _), = [p for p in data_probes((1, 1, 1, 8), "uint8", np.random.default_rng(0)) if "average" in p[1]]
    avg = (a[..., 1:].astype(float) + a[..., :-1]) / 2
    assert (avg % 1 == 0.5).any()


@pytest.mark.parametrize("shape", [(1, 1, 4, 4), (1, 16, 160, 200)])
def test_float16_probes_stay_finite(shape):
    """float16 tops out at 65504: a large input's distinct values turned to inf past it (a 1x16x160x200 x2
    Interpolate was refused on the NaN it computed from them, and the default took the decomposition at 1.16x
    the importer's time); they stay finite, distinct where float16 has the values."""
    for a, what in data_probes(shape, "float16", np.random.default_rng(0)):
        assert a.dtype == np.float16 and np.isfinite(a).all(), what
    (a, _), = [p for p in data_probes(shape, "float16", np.random.default_rng(0)) if p[1] == "distinct values"]
    assert np.unique(a).size >= min(a.size, 8000)  # float16 has about 15,000 values in [0.25, 60000]


@pytest.mark.parametrize("align", [False, True])
def test_grid_probes_sit_on_and_beside_the_ties(align):
    ir = GridSampleIR(spatial_rank=2, sampler=Sampler("nearest", nearest="half_even"), padding="zeros",
                      align_corners=align)
    probes = dict((w, a) for a, w in grid_probes(ir, (1, 1, 6, 5), (1, 4, 4, 2), "float32",
                                                np.random.default_rng(0)))
    on = probes["grid points on .5 ties"]
    above, below = probes["grid points one step above ties"], probes["grid points one step below ties"]
    assert (above > on).all() and (below < on).all()
    x = unnormalize(on[..., 0].astype(np.float64), 5, align)
    frac = np.abs(x - np.floor(x) - 0.5)
    assert (frac < 1e-6).all()  # within float32 rounding of an exact .5


def test_runtime_probes_conditional_take_only_the_easy_case():
    ir = _resize(scales=RuntimeValue("s"))
    easy = runtime_probes(ir, "scales", (1, 1, 4, 4), "float32", conditional=True)
    assert [a.tolist() for a, _ in easy] == [[1, 1, 2, 2]]  # x2 on the spatial axes (N, C: a condition)
    many = runtime_probes(ir, "scales", (1, 1, 4, 4), "float32", conditional=False)
    assert len(many) > 2 and any((a % 1 != 0).any() for a, _ in many)
    assert sum(a[:2].tolist() != [1.0, 1.0] for a, _ in many) == 1  # N and C resized by one probe only


def test_runtime_probes_resize_every_axis_the_graph_does_not_pin():
    """A batch or channel axis fed at run time may be resized (OpenVINO's CPU cubic read out of bounds there):
    one probe resizes them, but never one the graph pins to X's own length (F.interpolate's
    Concat(Shape(x)[:2], ...))."""
    free = _resize(sizes=RuntimeValue("s"))
    got = [a.tolist() for a, _ in runtime_probes(free, "sizes", (2, 3, 4, 5), "int64", conditional=False)]
    assert got[0] == [2, 3, 8, 10] and got[-1] == [4, 6, 4, 5] and len(got) == 6
    pinned = _resize(sizes=RuntimeValue("s", same_as_input=(0, 1)))
    got = [a.tolist() for a, _ in runtime_probes(pinned, "sizes", (2, 3, 4, 5), "int64", conditional=False)]
    assert all(a[:2] == [2, 3] for a in got) and len(got) == 5


def test_runtime_probes_never_resize_a_pinned_axis_of_the_last_two():
    """Rank 3, sizes = Concat(Shape(x)[:2], L): the channel axis is one of the last two listed but pinned; no
    probe resizes it (one did, and failed the exact index form of nearest align_corners, which reads the pin)."""
    ir = _resize(rank=3, axes=(0, 1, 2), sizes=RuntimeValue("s", same_as_input=(0, 1)))
    got = [a.tolist() for a, _ in runtime_probes(ir, "sizes", (1, 3, 5), "int64", conditional=False)]
    assert got and all(a[:2] == [1, 3] for a in got) and {a[2] for a in got} >= {10, 7, 3, 2}


def test_concrete_shapes_try_several_lengths_for_an_unknown_dimension():
    shapes = concrete_shapes((None, 3, None, 8))
    assert len(shapes) == 3 and len({s[2] for s in shapes}) == 3 and all(s[1] == 3 and s[3] == 8 for s in shapes)
    assert concrete_shapes((1, 2, 3)) == [(1, 2, 3)]


def test_probe_sets_leave_constants_to_the_caller():
    ir = _resize(scales=(1, 1, 2, 2))
    sets = probe_sets(ir, [(1, 1, 2, 2), None, (4,), None], ["float32", None, "float32", None],
                      [True, False, False, False])
    assert len(sets) >= 3
    assert all(s.arrays[2] is None and s.arrays[0].shape == (1, 1, 2, 2) for s in sets)
