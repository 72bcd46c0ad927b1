"""TensorRT -> IR: IResizeLayer / IGridSampleLayer settings and the rules they rest on, without TensorRT.

The worked examples of TensorRT's IResizeLayer operator page (the project's seed document 004, cited as "seed
004" below: two examples with expected outputs) are typed in as the external source; everything else checks the documented formulas with
hand-computed numbers. The importer's rules: test_onnx_tensorrt.py.
"""

from fractions import Fraction

import numpy as np
import pytest

from resample_bridge.semantics.errors import BridgeError
from resample_bridge.semantics.reference import run
from resample_bridge.translate import tensorrt as ttrt
from resample_bridge.translate.tensorrt import UNVERIFIED, assumptions, parse_settings, settings_from_layer

SEED_INPUT = np.array([[[[0, 1, 2], [3, 4, 5], [6, 7, 8]]]], dtype=np.float32)


# ----------------------------------------------------------------------------------------------------------
# Seed 004: the operator page's two examples, numbers typed from the page.


def test_seed_004_linear_resize_with_shape_align_corners():
    settings = {"input_shape": (1, 1, 3, 3), "dtype": "float32", "resize_mode": "LINEAR",
                "shape": (1, 1, 5, 5), "coordinate_transformation": "ALIGN_CORNERS"}
    expected = np.array([[[
        [0, 0.5, 1, 1.5, 2],
        [1.5, 2, 2.5, 3, 3.5],
        [3, 3.5, 4, 4.5, 5],
        [4.5, 5, 5.5, 6, 6.5],
        [6, 6.5, 7, 7.5, 8],
    ]]], dtype=np.float32)
    got = run(parse_settings(settings), SEED_INPUT)
    np.testing.assert_array_equal(got, expected)
    assert assumptions(settings) == []  # every rule used here is documented


def test_seed_004_nearest_resize_with_scales_align_corners():
    # nearest_rounding is not set on the page: the layer default (FLOOR) applies.
    settings = {"input_shape": (1, 1, 3, 3), "dtype": "float32", "resize_mode": "NEAREST",
                "scales": (1, 1, 2, 2), "coordinate_transformation": "ALIGN_CORNERS"}
    expected = np.array([[[
        [0.0, 0.0, 0.0, 1.0, 1.0, 2.0],
        [0.0, 0.0, 0.0, 1.0, 1.0, 2.0],
        [0.0, 0.0, 0.0, 1.0, 1.0, 2.0],
        [3.0, 3.0, 3.0, 4.0, 4.0, 5.0],
        [3.0, 3.0, 3.0, 4.0, 4.0, 5.0],
        [6.0, 6.0, 6.0, 7.0, 7.0, 8.0],
    ]]], dtype=np.float32)
    ir = parse_settings(settings)
    np.testing.assert_array_equal(run(ir, SEED_INPUT), expected)
    # Output 5 maps to 5 * 2/5 = 2 exactly, a floor boundary: the page shows TensorRT resolving it as exact
    # arithmetic. The IR reports it as a tie that rests on that.
    (tie,) = [a for a in assumptions(settings) if "rounding boundary" in a]
    assert "[5]" in tie and UNVERIFIED in tie
    # Another rounding gives other numbers: the example pins FLOOR down.
    other = run(parse_settings({**settings, "nearest_rounding": "HALF_UP"}), SEED_INPUT)
    assert not np.array_equal(other, expected)


# ----------------------------------------------------------------------------------------------------------
# Settings -> IR: the documented rules, hand-computed numbers


def _run1d(settings, x):
    n = len(x)
    s = {"input_shape": (n,), "dtype": "float32", **settings}
    return run(parse_settings(s), np.asarray(x, dtype=np.float32))


def test_layer_defaults():
    ir = parse_settings({"input_shape": (1, 4), "shape": (1, 8)})
    assert ir.sampler.kind == "nearest" and ir.sampler.nearest == "floor"  # kNEAREST, kFLOOR
    assert ir.coord == "asymmetric"  # kASYMMETRIC
    assert ir.formula_length == "integer" and ir.origin == "IResizeLayer"


@pytest.mark.parametrize("spelling", ["kLINEAR", "LINEAR", "linear", "InterpolationMode.LINEAR",
                                      type("Enum", (), {"name": "LINEAR"})()])
def test_enum_spellings(spelling):
    assert parse_settings({"input_shape": (4,), "shape": (8,), "resize_mode": spelling}).sampler.kind == "linear"


def test_unknown_enum_names_the_field():
    with pytest.raises(BridgeError) as e:
        parse_settings({"input_shape": (4,), "shape": (8,), "nearest_rounding": "HALF_EVEN"})
    assert e.value.field == "nearest_rounding"


@pytest.mark.parametrize("rounding,want", [
    # 4 -> 8 ASYMMETRIC: source o/2 = 0, .5, 1, 1.5, 2, 2.5, 3, 3.5 (index 4 clamps to 3)
    ("FLOOR", [0, 0, 10, 10, 20, 20, 30, 30]),
    ("CEIL", [0, 10, 10, 20, 20, 30, 30, 30]),
    ("HALF_UP", [0, 10, 10, 20, 20, 30, 30, 30]),
    ("HALF_DOWN", [0, 0, 10, 10, 20, 20, 30, 30]),
])
def test_nearest_rounding_modes(rounding, want):
    got = _run1d({"shape": (8,), "nearest_rounding": rounding}, [0, 10, 20, 30])
    np.testing.assert_array_equal(got, want)


def test_half_pixel_ceil_differs_from_half_up():
    # 4 -> 8 HALF_PIXEL: source (o + .5)/2 - .5 = -.25, .25, .75, 1.25, ...: no ties; CEIL and HALF_UP differ.
    x = [0, 10, 20, 30]
    ceil = _run1d({"shape": (8,), "coordinate_transformation": "HALF_PIXEL", "nearest_rounding": "CEIL"}, x)
    up = _run1d({"shape": (8,), "coordinate_transformation": "HALF_PIXEL", "nearest_rounding": "HALF_UP"}, x)
    np.testing.assert_array_equal(ceil, [0, 10, 10, 20, 20, 30, 30, 30])
    np.testing.assert_array_equal(up, [0, 0, 10, 10, 20, 20, 30, 30])


def test_selector_upper_reads_the_first_pixel_at_output_length_1():
    x = [0, 10, 20, 30, 40]
    # FORMULA: (0 + .5) * 5/1 - .5 = 2 -> 20; UPPER: "Select the upper left pixel" -> 0.
    base = {"shape": (1,), "resize_mode": "LINEAR", "coordinate_transformation": "HALF_PIXEL"}
    np.testing.assert_array_equal(_run1d(base, x), [20])
    upper = {**base, "selector_for_single_pixel": "UPPER"}
    np.testing.assert_array_equal(_run1d(upper, x), [0])
    ir = parse_settings({"input_shape": (5,), **upper})
    assert (ir.coord, ir.length1) == ("pytorch_half_pixel", "zero")
    # Above length 1 the selector changes nothing: (o + .5) * 5/2 - .5 = 0.75, 3.25.
    np.testing.assert_allclose(_run1d({**upper, "shape": (2,)}, x), [7.5, 32.5])


def test_scales_enter_the_formula_and_shape_the_ratio():
    x = [0, 10, 20, 30, 40, 50, 60]
    lin = {"resize_mode": "LINEAR", "coordinate_transformation": "HALF_PIXEL"}
    # setScales 0.5: length floor(3.5) = 3; the given scale: (o + .5) * 2 - .5 = .5, 2.5, 4.5.
    np.testing.assert_allclose(_run1d({**lin, "scales": (0.5,)}, x), [5, 25, 45])
    # setOutputDimensions 3: the ratio 7/3: (o + .5) * 7/3 - .5 = 2/3, 3, 16/3.
    np.testing.assert_allclose(_run1d({**lin, "shape": (3,)}, x), [20 / 3, 30, 160 / 3], rtol=1e-6)
    with_scales = assumptions({"input_shape": (7,), **lin, "scales": (0.5,)})
    assert len(with_scales) == 1 and "setScales with a fractional input*scale" in with_scales[0]
    assert assumptions({"input_shape": (7,), **lin, "shape": (3,)}) == []
    assert assumptions({"input_shape": (8,), **lin, "scales": (0.5,)}) == []  # 8 * 0.5 is whole


def test_cubic_coefficient_and_exclude_outside():
    ir = parse_settings({"input_shape": (1, 4, 4), "shape": (1, 8, 8), "resize_mode": "CUBIC", "cubic_coeff": -0.5,
                         "exclude_outside": True, "coordinate_transformation": "HALF_PIXEL"})
    assert ir.sampler.cubic_a == Fraction(-1, 2) and ir.exclude_outside
    # Without exclude_outside, taps beyond the edge rest on an assumption; with it, nothing does.
    s = {"input_shape": (1, 4, 4), "shape": (1, 8, 8), "resize_mode": "CUBIC",
         "coordinate_transformation": "HALF_PIXEL"}
    (a,) = assumptions(s)
    assert "cubic taps outside the input" in a and UNVERIFIED in a
    assert assumptions({**s, "exclude_outside": True}) == []


def test_align_corners_output_length_1_is_an_assumption():
    s = {"input_shape": (1, 5), "shape": (1, 1), "resize_mode": "LINEAR", "coordinate_transformation": "ALIGN_CORNERS"}
    (a,) = assumptions(s)
    assert "ALIGN_CORNERS at output length 1" in a
    np.testing.assert_array_equal(run(parse_settings(s), np.arange(5, dtype=np.float32)[None]), [[0]])
    assert assumptions({**s, "selector_for_single_pixel": "UPPER"}) == []  # documented: the upper left pixel


def test_resize_window_is_enforced():
    with pytest.raises(BridgeError, match="innermost 3 axes; axes \\[0\\]") as e:
        parse_settings({"input_shape": (2, 3, 4, 5), "scales": (2, 1, 2, 2), "resize_mode": "LINEAR"})
    assert e.value.field == "scales"
    with pytest.raises(BridgeError, match="innermost 2"):
        parse_settings({"input_shape": (1, 3, 4, 5), "shape": (1, 6, 4, 5), "resize_mode": "CUBIC"})
    parse_settings({"input_shape": (1, 3, 4, 5), "shape": (1, 6, 8, 10), "resize_mode": "LINEAR"})  # 3 axes: fine
    with pytest.raises(BridgeError, match="exactly one of"):
        parse_settings({"input_shape": (4,), "shape": (8,), "scales": (2,)})


# ----------------------------------------------------------------------------------------------------------
# IGridSampleLayer


def test_grid_sample_settings():
    base = {"layer": "grid_sample", "input_shape": (1, 1, 4, 4), "grid_shape": (1, 3, 3, 2)}
    ir = parse_settings(base)
    assert (ir.sampler.kind, ir.padding, ir.align_corners) == ("linear", "zeros", False)  # the layer defaults
    ir = parse_settings({**base, "interpolation_mode": "CUBIC", "sample_mode": "kREFLECT", "align_corners": True})
    assert (ir.sampler.kind, ir.sampler.cubic_a, ir.padding, ir.align_corners) == ("cubic", Fraction(-3, 4),
                                                                                  "reflection", True)
    assert parse_settings({**base, "sample_mode": "CLAMP"}).padding == "border"


def test_grid_sample_refusals():
    with pytest.raises(BridgeError, match="rank-4"):
        parse_settings({"layer": "grid_sample", "input_shape": (1, 1, 2, 3, 4), "grid_shape": (1, 2, 2, 2, 3)})
    with pytest.raises(BridgeError, match="kCLAMP, kFILL and kREFLECT") as e:
        parse_settings({"layer": "grid_sample", "input_shape": (1, 1, 4, 4), "sample_mode": "WRAP"})
    assert e.value.field == "sample_mode"


@pytest.mark.parametrize("mode,sample,want", [
    ("LINEAR", "FILL", ["fill with 0"]),
    ("LINEAR", "CLAMP", []),
    ("NEAREST", "REFLECT", ["half to even"]),
    ("CUBIC", "CLAMP", ["-0.75", "4x4 taps"]),
    ("CUBIC", "FILL", ["-0.75", "fill with 0"]),
])
def test_grid_sample_assumptions(mode, sample, want):
    got = assumptions({"layer": "grid_sample", "input_shape": (1, 1, 4, 4), "interpolation_mode": mode,
                       "sample_mode": sample})
    assert len(got) == len(want)
    for text, key in zip(got, want):
        assert key in text and text.endswith(f"({UNVERIFIED})")


def test_live_layers_need_tensorrt():
    try:
        import tensorrt  # noqa: F401
    except ImportError:
        with pytest.raises(BridgeError, match="tensorrt Python package is not installed"):
            settings_from_layer(object())
        return
    pytest.skip("tensorrt is installed: test_live_resize_layer covers settings_from_layer")


@pytest.mark.cuda
def test_live_resize_layer():
    trt = pytest.importorskip("tensorrt", reason="TensorRT is not installable from the package index here; this "
                                                 "test builds a network with add_resize where it is")
    logger = trt.Logger(trt.Logger.ERROR)
    network = trt.Builder(logger).create_network(0)
    x = network.add_input("input", trt.float32, (1, 1, 3, 3))
    layer = network.add_resize(x)
    layer.resize_mode = trt.InterpolationMode.LINEAR
    layer.shape = (1, 1, 5, 5)
    layer.coordinate_transformation = trt.ResizeCoordinateTransformation.ALIGN_CORNERS
    s = settings_from_layer(layer)
    assert s["resize_mode"] == "LINEAR" and tuple(s["shape"]) == (1, 1, 5, 5)
    np.testing.assert_array_equal(run(ttrt.parse_layer(layer), SEED_INPUT)[0, 0, 0], [0, 0.5, 1, 1.5, 2])


# ----------------------------------------------------------------------------------------------------------
# Dynamic dimensions: where IResizeLayer rests on nothing undocumented for every value of them, no caution.

RUNTIME = "shapes known only at run time"


def _resize(shape, scales, mode="NEAREST", coord="HALF_PIXEL", rounding="HALF_DOWN"):
    return {"input_shape": shape, "dtype": "float32", "resize_mode": mode, "scales": scales,
            "coordinate_transformation": coord, "nearest_rounding": rounding}


@pytest.mark.parametrize("mode,coord,rounding", [
    ("NEAREST", "HALF_PIXEL", "HALF_DOWN"), ("NEAREST", "HALF_PIXEL", "HALF_UP"), ("NEAREST", "ASYMMETRIC", "CEIL"),
    ("LINEAR", "HALF_PIXEL", "FLOOR"), ("LINEAR", "ALIGN_CORNERS", "FLOOR"), ("LINEAR", "ASYMMETRIC", "FLOOR")])
@pytest.mark.parametrize("s", [2, 3, 4])
def test_integer_scales_on_dynamic_lengths_rest_on_nothing_when_every_length_does(mode, coord, rounding, s):
    settings = _resize((None, 3, None, None), (1, 1, s, s), mode, coord, rounding)
    got = assumptions(settings)
    # The claim "for every length" checked independently, length by length, as static shapes:
    static = [assumptions({**settings, "input_shape": (2, 3, L, L + 1)}) for L in range(1, 41)]
    if any(static):
        assert any(RUNTIME in a for a in got)
    else:
        assert got == []


@pytest.mark.parametrize("settings", [
    _resize((1, 1, None, None), (1, 1, 1.5, 1.5), "LINEAR"),  # L * 1.5 is fractional for odd L
    _resize((1, 1, None, None), (1, 1, 0.5, 0.5), "LINEAR"),
    _resize((1, 1, None, None), (1, 1, 2, 2), "CUBIC"),  # taps outside the input
    _resize((1, 1, None, None), (1, 1, 2, 2), "NEAREST", "ALIGN_CORNERS"),  # boundaries move with L
])
def test_dynamic_lengths_keep_the_caution_where_some_length_rests_on_an_assumption(settings):
    assert any(RUNTIME in a for a in assumptions(settings))


def test_a_dynamic_batch_changes_nothing_on_static_resized_axes():
    for mode, scales in (("LINEAR", (1, 1, 1.5, 1.5)), ("CUBIC", (1, 1, 2, 2)), ("NEAREST", (1, 1, 2, 2))):
        dynamic = assumptions(_resize((None, 3, 8, 8), scales, mode))
        assert dynamic == assumptions(_resize((5, 3, 8, 8), scales, mode)) and not any(RUNTIME in a for a in dynamic)


def test_dynamic_nearest_x2_stays_native_even_under_strict():
    from resample_bridge.lowering import tensorrt as low
    from tests.helpers.models import resize_model

    model = resize_model(("n", 3, "h", "w"), scales=[1, 1, 2, 2], mode="nearest")
    (rec,) = low.lower(model, strict=True).records
    assert rec.rung == 1 and rec.assumptions == []
    model = resize_model(("n", 3, "h", "w"), scales=[1, 1, 1.5, 1.5], mode="linear")
    assert low.lower(model).records[0].rung == 1
    assert low.lower(model, strict=True).records[0].rung == 4  # not shown for every length: the plugin
