"""Exact coordinate maps, ties and equivalence, checked against values derived by hand."""

import dataclasses
from fractions import Fraction as F

import numpy as np

from resample_bridge.semantics.coords import bind_resize
from resample_bridge.semantics.equivalence import diff
from resample_bridge.semantics.ir import ResizeIR, Sampler
from resample_bridge.semantics.reference import run
from resample_bridge.semantics.taps import axis_taps, tie_indices


def nearest_20_to_6(rule="round_prefer_ceil", **kw):
    return ResizeIR(rank=2, axes=(0, 1), scales=None, sizes=(1, 6), roi=None, coord="half_pixel",
                    sampler=Sampler("nearest", nearest=rule), input_shape=(1, 20), **kw)


def test_half_pixel_sizes_20_to_6_sources_and_ties():
    # src = (o + 1/2) * 20/6 - 1/2: 7/6, 9/2, 47/6, 67/6, 29/2, 107/6 (onnx/onnx#7841)
    (ax,) = bind_resize(nearest_20_to_6(), (1, 20)).axes
    assert [ax.src(o) for o in range(6)] == [F(7, 6), F(9, 2), F(47, 6), F(67, 6), F(29, 2), F(107, 6)]
    assert tie_indices(ax, Sampler("nearest", nearest="round_prefer_ceil")) == [1, 4]


def test_nearest_rounding_at_a_tie():
    x = np.arange(20, dtype=np.float32).reshape(1, 20)
    ceil = run(nearest_20_to_6("round_prefer_ceil"), x)
    floor = run(nearest_20_to_6("round_prefer_floor"), x)
    assert ceil.tolist() == [[1, 5, 8, 11, 15, 18]]
    assert floor.tolist() == [[1, 4, 8, 11, 14, 18]]
    d = diff(nearest_20_to_6("round_prefer_ceil"), nearest_20_to_6("round_prefer_floor"))
    assert not d.same and [f.name for f in d.fields] == ["sampler.nearest"]


def test_arith_difference_reports_only_ties():
    a = nearest_20_to_6()
    d = diff(a, dataclasses.replace(a, arith="fp32"))
    assert d.same
    assert d.ties == {"axis1": [1, 4]}  # rank 2 has no NCHW names


def test_pytorch_half_pixel_equals_half_pixel_above_length_1():
    a = ResizeIR(rank=1, axes=(0,), scales=None, sizes=(7,), roi=None, coord="half_pixel",
                 sampler=Sampler("linear"), input_shape=(5,))
    d = diff(a, dataclasses.replace(a, coord="pytorch_half_pixel"))
    assert d.same and d.immaterial
    # ...and differs at length 1: -1/2 vs the half_pixel centre 2 of a 5-long input
    b = dataclasses.replace(a, sizes=(1,))
    assert not diff(b, dataclasses.replace(b, coord="pytorch_half_pixel")).same


def test_align_corners_fractional_vs_integer_length():
    # ONNX data: 4 * 0.6 = 2.4 -> a = 3/1.4 ; onnxruntime: integer length 2 -> a = 3/1
    ir = ResizeIR(rank=1, axes=(0,), scales=(F(3, 5),), sizes=None, roi=None, coord="align_corners",
                  sampler=Sampler("linear"), input_shape=(4,))
    (ax,) = bind_resize(ir, (4,)).axes
    assert ax.out_len == 2 and ax.a == F(3) / (F(12, 5) - 1)
    ort = dataclasses.replace(ir, formula_length="integer")
    assert bind_resize(ort, (4,)).axes[0].a == 3
    assert [f.name for f in diff(ir, ort).fields if f.name == "formula_length"] == ["formula_length"]


def test_antialias_linear_weights_are_a_normalised_stretched_triangle():
    # 8 -> 4 half_pixel: src(o) = 2o + 1/2, f = 1/2, m = 2: taps x0-1..x0+2 with x0 = 2o
    ir = ResizeIR(rank=1, axes=(0,), scales=None, sizes=(4,), roi=None, coord="half_pixel",
                  sampler=Sampler("linear", antialias=True), input_shape=(8,))
    (ax,) = bind_resize(ir, (8,)).axes
    t = axis_taps(ax, ir.sampler, False, exact=True)
    # distances to src = 1/2: -3/2, -1/2, 1/2, 3/2 -> triangle(d/2) = 1/4, 3/4, 3/4, 1/4 -> /2
    assert t.weight[0] == [F(1, 8), F(3, 8), F(3, 8), F(1, 8)]
    assert t.index[0].tolist() == [0, 0, 1, 2]  # tap -1 clamped to the edge


def test_exclude_outside_renormalises():
    ir = ResizeIR(rank=1, axes=(0,), scales=None, sizes=(4,), roi=None, coord="half_pixel",
                  sampler=Sampler("linear", antialias=True), exclude_outside=True, input_shape=(8,))
    (ax,) = bind_resize(ir, (8,)).axes
    t = axis_taps(ax, ir.sampler, True, exact=True)
    assert t.weight[0] == [0, F(3, 7), F(3, 7), F(1, 7)]


def test_tf_crop_and_resize_extrapolates_outside_the_input():
    ir = ResizeIR(rank=1, axes=(0,), scales=None, sizes=(3,), roi=(F(-1, 2), F(3, 2)),
                  coord="tf_crop_and_resize", sampler=Sampler("linear"), extrapolation_value=7.0,
                  input_shape=(5,))
    # src = o * 2 * 4 / 2 - 2 = 4o - 2 -> -2 (outside), 2, 6 (outside)
    y = run(ir, np.arange(5, dtype=np.float32) * 10)
    assert y.tolist() == [7.0, 20.0, 7.0]


def test_integer_output_rounds_half_to_even_and_saturates():
    ir = ResizeIR(rank=1, axes=(0,), scales=(F(2),), sizes=None, roi=None, coord="asymmetric",
                  sampler=Sampler("linear"), input_shape=(2,))
    # asymmetric x2: src = o/2 -> 0, 1/2, 1, 3/2: values 1, 2.5, 4, 4 (edge clamp)
    assert run(ir, np.array([1, 4], dtype=np.uint8)).tolist() == [1, 2, 4, 4]
    cubic = dataclasses.replace(ir, sampler=Sampler("cubic", cubic_a=F(-3, 4)))
    assert run(cubic, np.array([0, 255], dtype=np.uint8)).max() == 255  # overshoot saturates


def test_diff_of_two_sampler_kinds_names_the_kind():
    # A sampler field taken alone (kind "cubic" with the linear side's cubic_a None) is no valid sampler: diff
    # raised TypeError reading its taps; the kind is the field that changes the numbers (the oracle says so).
    x = np.random.default_rng(0).standard_normal((1, 1, 8, 8)).astype(np.float32)
    for sa, sb in ((Sampler("linear"), Sampler("cubic", cubic_a=F(-3, 4))),
                   (Sampler("nearest", nearest="floor"), Sampler("linear")),
                   (Sampler("linear", antialias=True), Sampler("cubic", cubic_a=F(-1, 2), antialias=True))):
        for s in (F(2), F(1, 2)):
            a, b = (ResizeIR(4, (2, 3), (s, s), None, None, "half_pixel", k, input_shape=(1, 1, 8, 8))
                    for k in (sa, sb))
            assert not np.array_equal(run(a, x), run(b, x))
            assert "sampler.kind" in [f.name for f in diff(a, b).fields]


def test_a_cast_past_the_largest_value_is_infinity_without_a_warning():
    """ONNX's cast of a float beyond the type's range is infinity; numpy's warning for it reached verify's stderr
    with the oracle's source path (fuzz seed 5151: float16 cubic GridSample overshooting 65504)."""
    import warnings

    from resample_bridge.semantics.reference import cast_like

    y = np.array([1e6, -1e6, 1.5, 3.5e38])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        half, bf16 = cast_like(y, np.float16), cast_like(y, "bfloat16")
    assert half.tolist() == [np.inf, -np.inf, 1.5, np.inf]
    assert bf16.astype(np.float64).tolist()[:3] == [999424.0, -999424.0, 1.5] and np.isinf(bf16[3].astype(float))
