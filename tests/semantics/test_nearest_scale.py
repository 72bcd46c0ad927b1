"""The nearest index form of a static non-integer scale (semantics.nearest_scale) equals the oracle's own nearest
taps, output length included, for every input length in 1..200 and many float32 scales, each coordinate mode and
rounding it covers under both length rules' sources; and it refuses what it cannot express, naming the field."""

import dataclasses
import itertools
from fractions import Fraction

import numpy as np
import pytest

from resample_bridge.semantics.ir import ResizeIR, RuntimeValue, Sampler
from resample_bridge.semantics.nearest_index import NoNearestIndex
from resample_bridge.semantics.nearest_scale import COMPACT_R, MAX_LEN, CentredIndex, ScaleIndex, compact, \
    oracle_scale_indices, scale_indices

COORDS = ("asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners", "tf_half_pixel_for_nn",
          "half_pixel_symmetric")
ROUNDINGS = ("floor", "ceil", "round_prefer_floor", "round_prefer_ceil")
F32 = [float(np.float32(v)) for v in (0.6, 1.7, 2.5, 1 / 3, 0.999, 1.001, 7.3, 0.01, 0.1, 0.75, 1.5, 3.3, 123.45,
                                      0.0625, 0.5, 2.0, 3.0)]


def _ir(coord, rounding, scales, **kw):
    base = dict(rank=4, axes=(2, 3), scales=tuple(Fraction(s) for s in scales), sizes=None, roi=None, coord=coord,
                sampler=Sampler("nearest", rounding), size_rule="floor", scale_source="user",
                formula_length="integer", length1="zero")
    base.update(kw)
    return ResizeIR(**base)


def _check(ir, lengths):
    forms = scale_indices(ir)
    assert not isinstance(forms, NoNearestIndex), forms
    for form, s in zip(forms, ir.scales):
        assert isinstance(form, ScaleIndex)
        for i in lengths:
            got, want = form.indices(i), oracle_scale_indices(ir, s, i)
            assert np.array_equal(got, want), (ir.coord, ir.sampler.nearest, float(s), i, got, want)


@pytest.mark.parametrize("rule", ("floor", "floor_fp32", "floor_eps"))
@pytest.mark.parametrize("coord,rounding", list(itertools.product(COORDS, ROUNDINGS)))
def test_equals_oracle_taps(coord, rounding, rule):
    for s in F32:
        _check(_ir(coord, rounding, (s, F32[0]), size_rule=rule), range(1, 201))


@pytest.mark.parametrize("rule", ("floor", "floor_fp32"))
def test_resize_10_simple_rounding_equals_oracle_taps(rule):
    """onnxruntime's Resize-10 / Upsample rounding "simple" (floor enlarging, ceil shrinking) took the extension on
    run-time lengths (an opset-10 export of F.interpolate(scale_factor=2.5) with dynamic H / W wrote a library by
    default): where the static scales decide it alike, it is that rule (an axis of scale 1 either)."""
    for s in F32:
        _check(_ir("asymmetric", "simple", (1.0, s), size_rule=rule, axes=(1, 2)), range(1, 201))
        _check(_ir("asymmetric", "simple", (s, s), size_rule=rule), range(1, 201))
    mixed = scale_indices(_ir("asymmetric", "simple", (0.6, 2.5)))
    assert isinstance(mixed, NoNearestIndex) and mixed.field == "nearest_mode", mixed


@pytest.mark.parametrize("rule", ("floor", "floor_fp32", "floor_eps"))
@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_centred_half_pixel_symmetric_equals_oracle_taps(rounding, rule):
    """half_pixel_symmetric at the fractional output length in*s (onnxruntime's): its offset reads in and out, and
    the two mirrored halves (``CentredIndex``) pick the oracle's taps at odd and even input lengths."""
    for s in F32:
        ir = _ir("half_pixel_symmetric", rounding, (s, F32[0]), size_rule=rule, formula_length="fractional")
        assert all(isinstance(f, CentredIndex) for f in scale_indices(ir))
        _check(ir, range(1, 201))


def test_centred_largest_supported_lengths():
    for s in (0.6, 2.5, 0.999, 1.001):
        ir = _ir("half_pixel_symmetric", "round_prefer_ceil", (float(np.float32(s)),) * 2, formula_length="fractional")
        form = scale_indices(ir)[0]
        top = form.max_in()
        _check(ir, (top, top - 1, top - 7, 4097, 4096))


@pytest.mark.parametrize("source,flen,length1,equal", [("ratio", "integer", "zero", False),
                                                       ("user", "fractional", "minus_half", False),
                                                       ("ratio", "fractional", "zero", True),
                                                       ("user", "integer", "minus_half", True)])
def test_every_ir_field(source, flen, length1, equal):
    """scale_source, formula_length, length1 and equal_length_identity on IR values built directly."""
    for coord, rounding in itertools.product(COORDS, ROUNDINGS):
        ir = _ir(coord, rounding, F32[:2], scale_source=source, formula_length=flen, length1=length1,
                 equal_length_identity=equal)
        if flen == "fractional" and (coord == "align_corners" or
                                     coord == "half_pixel_symmetric" and source == "ratio"):
            assert scale_indices(ir).field == "formula_length"
            continue
        _check(ir, range(1, 81))


def test_largest_supported_lengths():
    for s, coord in ((0.6, "half_pixel"), (2.5, "tf_half_pixel_for_nn"), (7.3, "asymmetric"), (1.7, "align_corners")):
        ir = _ir(coord, "round_prefer_ceil", (float(np.float32(s)),) * 2)
        (form, _) = scale_indices(ir)
        top = form.max_in()
        assert form.out_len(top) <= form.max_out < MAX_LEN and \
            (form.out_len(top + 1) > form.max_out or top + 1 == MAX_LEN)
        _check(ir, (top, top - 1, 65521 if top > 65521 else top - 7))


@pytest.mark.parametrize("kw,field", [
    (dict(sampler=Sampler("linear")), "mode"),
    (dict(scales=RuntimeValue("sc")), "scales"),
    (dict(size_rule="floor_fp64"), "size_rule"),
    (dict(coord="align_corners", formula_length="fractional"), "formula_length"),
    (dict(coord="pytorch_half_pixel", formula_length="fractional", scales=(Fraction(1, 4), Fraction(1, 4))),
     "formula_length"),
    (dict(scales=(Fraction(2, 3), Fraction(2, 3))), "scales"),
    (dict(scales=(Fraction(3, 2**40), Fraction(3, 2**40))), "scales"),
    (dict(scales=(Fraction(0.6), Fraction(0.6))), "scales"),
    (dict(coord="tf_crop_and_resize", roi=RuntimeValue("r")), "coordinate_transformation_mode"),
    (dict(aspect_policy="not_larger"), "keep_aspect_ratio_policy"),
    (dict(sampler=Sampler("nearest", "simple"), scales=(Fraction(F32[0]), Fraction(5, 2))), "nearest_mode"),
    (dict(exclude_outside=True), "exclude_outside"),
])
def test_refuses_with_reason(kw, field):
    ir = dataclasses.replace(_ir("half_pixel", "round_prefer_ceil", (F32[0], F32[0])), **kw)
    got = scale_indices(ir)
    assert isinstance(got, NoNearestIndex) and got.field == field and got.reason, got


def test_compact_forms_are_short_and_equal_on_every_length():
    """The user scale's p, q, r (half_pixel, round_prefer_ceil: 4m, 2m + n, 4n for s = n/m) compact to a divisor
    below COMPACT_R for the usual float32 scales, with the same floor for every x below MAX_LEN; 0.999f has none."""
    x = np.arange(MAX_LEN, dtype=object)  # Python integers: no overflow in the reference floors
    for v, short in ((0.6, True), (1.7, True), (2.5, True), (7.3, True), (1 / 3, True), (0.999, False)):
        s = Fraction(float(np.float32(v)))
        n, m = s.numerator, s.denominator
        p, q, r = 4 * m, 2 * m + n, 4 * n
        p2, q2, r2 = compact(p, q, r)
        assert (r2 < COMPACT_R) == short, v
        assert ((p * x + q) // r == (p2 * x + q2) // r2).all(), v
