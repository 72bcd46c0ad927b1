"""uint8 antialias read as onnxruntime and PyTorch compute it (``semantics.fixed_point``, ``integer_rounding``
q22_per_axis): the oracle against onnxruntime itself, bit for bit, on random nodes; the reference convention and
int8 keep the spec's one exact rounding."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import TensorProto

from resample_bridge.semantics import reference
from resample_bridge.semantics.equivalence import diff
from resample_bridge.translate.onnx import parse_model
from resample_bridge.translate.onnxruntime import ort_semantics
from tests.helpers.models import resize_model

ort = pytest.importorskip("onnxruntime")

U8 = dict(dtype=TensorProto.UINT8, antialias=1)
COORDS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners", "tf_half_pixel_for_nn",
          "half_pixel_symmetric", "tf_crop_and_resize")


def onnxruntime_run(model, x):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(
        None, {"X": x})[0]


def _random_case(rng, dtype=TensorProto.UINT8):
    """A uint8 (or ``dtype``) antialias Resize onnxruntime runs: NCHW or NHWC, sizes or scales, any coordinate mode (crop boxes
    NCHW only: onnxruntime's channels-last kernel extrapolates the wrong elements,
    tests/test_differential_onnxruntime.py), exclude_outside, a few Keys coefficients, down and up."""
    nhwc = rng.random() < 0.3
    coord = str(rng.choice(COORDS[:-1] if nhwc else COORDS))
    H, W = (int(v) for v in rng.integers(1, 48, 2))
    attrs = dict(mode=str(rng.choice(["linear", "cubic"])), coordinate_transformation_mode=coord,
                 exclude_outside=int(rng.integers(0, 2)), cubic_coeff_a=float(rng.choice([-0.75, -0.5, -0.6])))
    shape, place = ([1, H, W, 3], lambda a, b, one: [one, a, b, one]) if nhwc else \
        ([1, 3, H, W], lambda a, b, one: [one, one, a, b])
    roi = None
    if coord == "tf_crop_and_resize":
        r = [float(v) for v in rng.uniform(-0.3, 1.3, 4).astype(np.float32)]
        roi = place(r[0], r[1], 0) + place(r[2], r[3], 1)
        attrs["extrapolation_value"] = float(rng.choice([0.0, 7.0, 300.6, -7.5]))
    if rng.random() < 0.5:
        h, w = (int(v) for v in rng.integers(1, 64, 2))
        return resize_model(shape, sizes=[1, h, w, 3] if nhwc else [1, 3, h, w], roi=roi, **{**U8, "dtype": dtype},
                            **attrs), shape
    s = [float(v) for v in rng.choice([0.3, 0.5, 0.37, 0.61, 0.8, 1.0, 1.3, 1.7, 2.0, 3.0], 2)]
    if int(np.float32(s[0]) * np.float32(H)) == 0 or int(np.float32(s[1]) * np.float32(W)) == 0:
        s = [1.5, 1.5]
    return resize_model(shape, scales=place(s[0], s[1], 1.0), roi=roi, **{**U8, "dtype": dtype}, **attrs), shape


@pytest.mark.parametrize("seed", range(4))
def test_the_oracle_is_onnxruntime_bit_for_bit(seed):
    """60 random uint8 antialias nodes per seed, three random images each: the oracle of the spec IR equals
    onnxruntime's output exactly (the fixed point's float32 weights, rounding, clipping and axis order)."""
    rng = np.random.default_rng(20261202 + seed)
    compared = 0
    for _ in range(60):
        model, shape = _random_case(rng)
        (_, ir), = parse_model(model)
        assert ir.integer_rounding == "q22_per_axis" and ort_semantics(ir).integer_rounding == "q22_per_axis"
        for _ in range(3):
            x = rng.integers(0, 256, shape).astype(np.uint8)
            x.reshape(-1)[: x.size // 4] = rng.choice(np.array([0, 255], np.uint8), x.size // 4)  # both ends
            want = onnxruntime_run(model, x)
            got = reference.run(ir, x, None, None, None)
            assert got.dtype == want.dtype and np.array_equal(got, want), (
                onnx.helper.printable_node(model.graph.node[0]), shape, np.abs(
                    got.astype(int) - want.astype(int)).max() if got.shape == want.shape else got.shape)
            compared += 1
    assert compared == 180


@pytest.mark.parametrize("seed", range(2))
def test_onnxruntimes_int8_is_the_same_resampler_clipped_to_uint8s_range(seed):
    """int8 antialias: the spec reading rounds the exact sum once (``once``), onnxruntime runs the uint8 resampler,
    each pass clipped to [0, 255] and cast to int8 (-120 -> 0, 129 -> -127). Its convention (``ort_semantics``)
    says so and equals onnxruntime bit for bit, so a model checked against onnxruntime is not taken for misread
    (``model_reference.ort_departure``); the spec's oracle differs wherever a value is negative."""
    rng = np.random.default_rng(20261204 + seed)
    differs = 0
    for _ in range(40):
        model, shape = _random_case(rng, TensorProto.INT8)
        (_, ir), = parse_model(model)
        theirs = ort_semantics(ir)
        assert ir.integer_rounding == "once" and theirs.integer_rounding == "q22_per_axis"
        for _ in range(2):
            x = rng.integers(-128, 128, shape).astype(np.int8)
            want = onnxruntime_run(model, x)
            got = reference.run(theirs, x, None, None, None)
            assert got.dtype == want.dtype and np.array_equal(got, want), (
                onnx.helper.printable_node(model.graph.node[0]), shape)
            differs += not np.array_equal(reference.run(ir, x, None, None, None), want)
    assert differs > 40


@pytest.mark.parametrize("shape,out", [([2, 6, 10, 12], [2, 6, 4, 7]), ([3, 20, 20], [3, 9, 7]), ([20, 21], [9, 7])])
def test_axes_resample_from_the_last(shape, out):
    """5-D, 3-D and 2-D: the last resized axis first (onnxruntime's order; any other order is one off somewhere)."""
    model = resize_model(shape, sizes=out, mode="linear", **U8)
    (_, ir), = parse_model(model)
    x = np.random.default_rng(1).integers(0, 256, shape).astype(np.uint8)
    assert np.array_equal(reference.run(ir, x, None, None, None), onnxruntime_run(model, x))


def test_the_reference_convention_and_int8_round_once():
    """onnx.reference rounds the exact sum once: its convention keeps that (``once``), and int8 keeps it under the
    spec too (onnxruntime's int8 path clips to [0, 255], losing every negative value); diff names the field."""
    model = resize_model([1, 3, 64, 80], sizes=[1, 3, 24, 30], mode="linear", exclude_outside=1, **U8)
    (_, spec), = parse_model(model)
    (_, ref), = parse_model(model, convention="reference")
    assert spec.integer_rounding == "q22_per_axis" and ref.integer_rounding == "once"
    x = np.random.default_rng(2).integers(0, 256, [1, 3, 64, 80]).astype(np.uint8)
    from onnx.reference import ReferenceEvaluator

    assert np.array_equal(reference.run(ref, x, None, None, None), ReferenceEvaluator(model).run(None, {"X": x})[0])
    assert not np.array_equal(reference.run(spec, x, None, None, None), reference.run(ref, x, None, None, None))
    d = diff(spec, dataclasses.replace(spec, integer_rounding="once"))
    assert not d.same and [f.name for f in d.fields] == ["integer_rounding"], d
    int8 = resize_model([1, 3, 64, 80], sizes=[1, 3, 24, 30], dtype=TensorProto.INT8, mode="linear", antialias=1)
    (_, ir8), = parse_model(int8)
    assert ir8.integer_rounding == "once"
