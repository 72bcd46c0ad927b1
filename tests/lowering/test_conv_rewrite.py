"""Rung 2's convolution form (lowering/openvino/conv_rewrite.py, issue 45): an integer-ratio upsampling as an edge
Pad and a depthwise ConvTranspose per axis, its kernels read from the oracle's tap tables where they repeat with
the ratio; an integer-ratio downsampling (antialias too) as an edge Pad and a strided depthwise Conv. Converted
with the default policy, run on OpenVINO CPU against the oracle and onnxruntime; refused (another rung takes the
node) where the taps do not repeat; the cost model keeps Interpolate where it is faster."""

import contextlib
import dataclasses

import numpy as np
import onnx
import pytest

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge.lowering.openvino import conv_rewrite, cost, cost_in_graph  # noqa: E402
from resample_bridge.lowering.openvino.prove import prove  # noqa: E402
from resample_bridge.lowering.openvino.target import convert  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.coords import bind_resize  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.semantics.taps import TapTable, axis_taps  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.models import resize_model  # noqa: E402

SHAPE = (1, 5, 12, 10)
# Every class faster in the convolution form: the forms are taken whatever the tensor's size.
FAVOUR_CONV = cost.Calibration({f"{cls}/{kind}/{aa}/{d}": rate for kind in ("nearest", "linear", "cubic")
                                for aa, d in (("plain", "up"), ("plain", "down"), ("aa", "down"))
                                for cls, rate in (("builtin", 3.0), ("conv", 1.0), ("extension", 1.0))},
                               "the test's table")
FORMS = [  # (mode, coordinate mode, ratio, extra attributes)
    ("linear", "half_pixel", 2, {}),
    ("linear", "half_pixel", 4, {}),
    ("linear", "asymmetric", 2, {}),
    ("linear", "pytorch_half_pixel", 3, {}),
    ("cubic", "half_pixel", 2, {"cubic_coeff_a": -0.75}),
    ("cubic", "pytorch_half_pixel", 4, {"cubic_coeff_a": -0.5}),
    ("cubic", "asymmetric", 2, {"cubic_coeff_a": -0.75}),
    ("nearest", "asymmetric", 2, {"nearest_mode": "floor"}),
    ("nearest", "half_pixel", 4, {"nearest_mode": "round_prefer_floor"}),
    ("nearest", "half_pixel", 3, {"nearest_mode": "round_prefer_ceil"}),
]


def _converted(tmp_path, model, table=FAVOUR_CONV, force: str | None = None):
    onnx.save(model, tmp_path / "m.onnx")
    with cost.using(table), (conv_rewrite.forcing(force) if force else contextlib.nullcontext()):
        ov_model, (rec,) = convert(str(tmp_path / "m.onnx"))  # the default policy
    return ov_model, rec


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 10


@pytest.mark.parametrize("mode, coord, r, extra", FORMS, ids=[f"{m}-{c}-x{r}" for m, c, r, _ in FORMS])
def test_each_form_computes_the_oracle_and_onnxruntime(tmp_path, mode, coord, r, extra):
    model = resize_model(SHAPE, scales=[1, 1, r, r], mode=mode, coordinate_transformation_mode=coord, **extra)
    ov_model, rec = _converted(tmp_path, model)
    assert rec.rung == 2 and rec.proof["form"] == "conv", rec.summary()
    assert rec.tried[-1][:2] == (1, "native") and "convolution form faster" in rec.tried[-1][2]
    (_, ir), = parse_model(model)
    x = _x(SHAPE)
    core = ov.Core()
    got = core.compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    want = run(ir, x)
    assert against_oracle(ir, got, want, [x]).ok
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    assert against_oracle(ir, theirs, want, [x]).ok  # onnxruntime within the same bound of the oracle
    np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=1e-4)
    if mode == "nearest":
        np.testing.assert_array_equal(got, want)  # the same element


DOWN = [  # (input shape, scales or sizes, attributes): odd lengths cut the last elements off (negative pads)
    ((1, 5, 13, 11), dict(scales=[1, 1, 0.5, 0.5]), dict(mode="linear")),
    ((1, 5, 13, 11), dict(scales=[1, 1, 0.5, 0.5]), dict(mode="cubic", cubic_coeff_a=-0.75,
                                                          coordinate_transformation_mode="pytorch_half_pixel")),
    ((1, 5, 16, 12), dict(scales=[1, 1, 0.25, 0.5]), dict(mode="linear", antialias=1)),
    ((1, 3, 16, 16), dict(scales=[1, 1, 0.5, 0.5]), dict(mode="cubic", antialias=1, cubic_coeff_a=-0.75)),
    ((1, 5, 12, 9), dict(sizes=[1, 5, 4, 3]), dict(mode="linear", coordinate_transformation_mode="asymmetric")),
    ((1, 5, 13, 11), dict(scales=[1, 1, 0.5, 0.5]), dict(mode="nearest", nearest_mode="floor")),
    ((1, 5, 13, 10), dict(scales=[1, 1, 0.5, 2]), dict(mode="linear")),  # one axis down, one up
]


@pytest.mark.parametrize("shape, size, attrs", DOWN, ids=[f"{a['mode']}-{i}" for i, (_, _, a) in enumerate(DOWN)])
def test_downsampling_forms_compute_the_oracle_and_onnxruntime(tmp_path, shape, size, attrs):
    model = resize_model(shape, **size, **attrs)
    ov_model, rec = _converted(tmp_path, model)
    assert rec.rung == 2 and rec.proof["form"] == "conv" and "strided depthwise Conv" in rec.reason, rec.summary()
    assert prove(ov_model, [rec]) == []
    (_, ir), = parse_model(model)
    x = _x(shape)
    compiled = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    got, want = compiled([x])[0], run(ir, x)
    assert against_oracle(ir, got, want, [x]).ok
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    assert against_oracle(ir, theirs, want, [x]).ok
    if attrs["mode"] == "nearest":
        np.testing.assert_array_equal(got, want)
    x.flat[::17] = np.inf  # the same taps as the oracle's: NaN / inf exactly where a tap reads one (no condition)
    with np.errstate(invalid="ignore"):
        assert against_oracle(ir, compiled([x])[0], run(ir, x), [x]).ok


def test_an_image_antialias_downsampling_takes_the_strided_form(tmp_path):
    """A 3-channel antialias /2 (an image's preprocessing): no Interpolate spelling is exact there, and the strided
    convolution (rung 2) takes it before the decomposition (rung 3) did."""
    model = resize_model((1, 3, 224, 224), scales=[1, 1, 0.5, 0.5], mode="linear", antialias=1)
    _, rec = _converted(tmp_path, model, cost.table_file(cost.REFERENCE))
    assert rec.rung == 2 and rec.proof.get("form") == "conv", rec.summary()
    assert rec.tried == [(1, "native", "no Interpolate-11 spelling is exact")]


@pytest.mark.parametrize("mode, r, extra", [("linear", 2, {}), ("cubic", 2, {"cubic_coeff_a": -0.75}),
                                             ("nearest", 4, {"nearest_mode": "floor"})])
def test_under_bf16_the_form_differs_by_value_rounding_only(tmp_path, mode, r, extra):
    """bf16 inference: the input and the kernel in bf16 (these kernels are exact there), so every output stays
    within a few bf16 roundings of the oracle's; a moved tap would be off by the input's spread."""
    model = resize_model(SHAPE, scales=[1, 1, r, r], mode=mode, **extra)
    ov_model, rec = _converted(tmp_path, model)
    assert rec.proof["form"] == "conv" and rec.proof["bf16_exact_weights"], rec.summary()
    (_, ir), = parse_model(model)
    x = _x(SHAPE, seed=1)
    got = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})([x])[0].astype(np.float64)
    want = run(ir, x)
    spread = 1.5 if mode == "cubic" else 1.0  # the sum of |weights| of a row
    assert np.max(np.abs(got - want)) <= 4 * 2.0 ** -8 * spread * np.max(np.abs(x))
    assert np.max(np.abs(got - want)) > 0 or mode == "nearest"  # the run was in bf16 indeed


def test_trilinear_5d(tmp_path):
    shape = (1, 3, 4, 6, 5)
    model = resize_model(shape, scales=[1, 1, 2, 2, 2], mode="linear")
    ov_model, rec = _converted(tmp_path, model)
    assert rec.proof["form"] == "conv", rec.summary()
    (_, ir), = parse_model(model)
    x = _x(shape)
    got = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    assert against_oracle(ir, got, run(ir, x), [x]).ok


@pytest.mark.parametrize("attrs, scales, why", [
    (dict(mode="linear", coordinate_transformation_mode="align_corners"), [1, 1, 2, 2], "not periodic"),
    (dict(mode="linear"), [1, 1, 2.5, 2.5], "is not an integer"),
    (dict(mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1), [1, 1, 2, 2], "weights of output 0 are not periodic"),
    (dict(mode="linear"), [1, 1, 9, 9], "is not an integer from 2 to 8"),
    (dict(mode="cubic", antialias=1, exclude_outside=1, cubic_coeff_a=-0.5), [1, 1, 0.5, 0.5],
     "weights of output 0 are not periodic with stride 2"),
    (dict(mode="linear"), [1, 1, 0.75, 0.75], "the map's step 4/3"),
])
def test_refused_where_the_taps_do_not_repeat(tmp_path, attrs, scales, why):
    """Another rung takes the node (the Interpolate the ladder chose), and the record says why the convolution
    form, estimated faster, was not taken."""
    model = resize_model(SHAPE, scales=scales, **attrs)
    ov_model, rec = _converted(tmp_path, model)
    assert rec.proof.get("form") != "conv" and rec.rung in (1, 2, 3), rec.summary()
    assert why in rec.extra["conv_form"], rec.extra


def test_the_periodicity_check_rejects_a_non_periodic_table():
    """The linear x2 half_pixel table is periodic; one weight or one index changed in the middle is not."""
    (_, ir), = parse_model(resize_model(SHAPE, scales=[1, 1, 2, 2], mode="linear"))
    bound = bind_resize(ir, SHAPE)
    ax = bound.axes[0]
    table = axis_taps(ax, bound.sampler, bound.exclude_outside, exact=True)
    assert isinstance(conv_rewrite.periodic_table(table, 2, ax.in_len, 2), conv_rewrite.Periodic)
    weights = [list(w) for w in table.weight]
    weights[9] = [weights[9][1], weights[9][0]]
    got = conv_rewrite.periodic_table(TapTable(table.index, weights, None), 2, ax.in_len, 2)
    assert got == "axis 2: the weights of output 9 are not periodic with period 2"
    index = np.array(table.index)
    index[19] = index[19] + 1
    got = conv_rewrite.periodic_table(TapTable(index, table.weight, None), 2, ax.in_len, 2)
    assert got == "axis 2: the taps of output 19 are not periodic with period 2"


def test_the_cost_model_keeps_interpolate_where_it_is_faster(tmp_path):
    """The shipped reference table: a tiny tensor keeps Interpolate (the form's larger fixed cost), a large one
    takes the convolution form; both exact."""
    small = resize_model((1, 2, 4, 4), scales=[1, 1, 2, 2], mode="linear")
    large = resize_model((1, 16, 80, 80), scales=[1, 1, 2, 2], mode="linear")
    table = cost.table_file(cost.REFERENCE)
    _, rec = _converted(tmp_path, small, table)
    assert rec.rung == 1 and "conv_form" not in rec.extra, rec.summary()
    _, rec = _converted(tmp_path, large, table)
    assert rec.rung == 2 and rec.proof["form"] == "conv", rec.summary()
    est = rec.extra["in_graph_cost"]
    assert est["conv_ms"] * cost_in_graph.CONV_MARGIN <= est["chosen_ms"]


def test_the_proof_rereads_the_kernels_against_the_source_ir(tmp_path):
    """The produced model's Pad and kernels re-read against the IR's own taps: the same model judged against a
    cubic IR (other kernels, other pads) fails, naming what differs."""
    model = resize_model(SHAPE, scales=[1, 1, 2, 2], mode="linear")
    ov_model, rec = _converted(tmp_path, model)
    assert prove(ov_model, [rec]) == []
    (_, cubic), = parse_model(resize_model(SHAPE, scales=[1, 1, 2, 2], mode="cubic"))
    failures = prove(ov_model, [dataclasses.replace(rec, ir=cubic)])
    assert any("kernel differs" in f for f in failures) and any("Pad's pads differ" in f for f in failures), failures


@pytest.mark.parametrize("mode, coord", [("linear", "half_pixel"), ("nearest", "asymmetric"),
                                         ("cubic", "pytorch_half_pixel")])
def test_run_time_lengths_take_one_form_for_every_length(tmp_path, mode, coord):
    """H and W known only at run time, scales x2 / x3: the kernels, pads and crop do not read the length, so one
    graph serves every length (compared with the oracle at lengths the proof did not pick, 1 included). The form
    asked for: the cost model keeps Interpolate on run-time lengths (next test)."""
    model = resize_model((1, 4, "H", "W"), scales=[1, 1, 2, 3], mode=mode, coordinate_transformation_mode=coord)
    ov_model, rec = _converted(tmp_path, model, force="conv")
    assert rec.proof["form"] == "conv", rec.summary()
    (_, ir), = parse_model(model)
    compiled = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for hw in ((1, 1), (2, 7), (13, 5), (40, 33)):
        x = _x((1, 4) + hw, seed=hw[0])
        got = compiled([x])[0]
        assert against_oracle(ir, got, run(ir, x), [x]).ok, hw


def test_on_run_time_lengths_the_cost_model_keeps_interpolate(tmp_path):
    """Even with rates that favour the form: on run-time H / W its per-output rate has no plane to read, and in
    two corpus runs it was never faster there (ppocrv4 1.16-1.30x the importer, the dbnet head 1.11-1.19x)."""
    model = resize_model((1, 4, "H", "W"), scales=[1, 1, 2, 2], mode="linear")
    _, rec = _converted(tmp_path, model)
    assert rec.rung == 1 and rec.proof.get("form") != "conv", rec.summary()
    _, rec = _converted(tmp_path, resize_model((1, 4, 20, 24), scales=[1, 1, 2, 2], mode="linear"))
    assert rec.proof.get("form") == "conv", rec.summary()  # the same rates at static sizes take it


def test_run_time_lengths_are_refused_where_the_map_reads_them(tmp_path):
    model = resize_model((1, 4, "H", "W"), scales=[1, 1, 2, 2], mode="linear",
                         coordinate_transformation_mode="align_corners")
    _, rec = _converted(tmp_path, model, force="conv")
    assert rec.proof.get("form") != "conv" and "has a run-time length and the map reads it" in rec.extra["conv_form"]


def test_a_kernel_scaled_per_channel_is_read_as_fused_only_where_flagged():
    """OpenVINO folds a multiply by a constant before the ConvTranspose into its kernel (a VAE decoder's x / c):
    the proof accepts the kernel times one factor per channel only there, and no other change of a tap."""
    kernel = np.array([0.25, 0.75, 0.75, 0.25], np.float32)
    scaled = np.stack([kernel * np.float32(1 / 3), kernel * np.float32(7)])
    assert conv_rewrite._same_kernel(scaled, kernel, fused=True)
    assert not conv_rewrite._same_kernel(scaled, kernel, fused=False)
    wrong = scaled.copy()
    wrong[1, 2] *= np.float32(1.001)
    assert not conv_rewrite._same_kernel(wrong, kernel, fused=True)
