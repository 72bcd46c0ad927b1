"""uint8 antialias on OpenVINO: the default writes onnxruntime's 8-bit fixed point in standard integer ops
(``lowering/openvino/decompose.py``), no library, and the written model gives onnxruntime's numbers bit for bit
under the f32 and the bf16 hint (no float op), PyTorch's within its own weights' rounding; the importer's
Interpolate is named different; lengths known only at run time take the library (its kernels compute the same),
which the conversion says."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from resample_bridge.semantics import reference  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.models import resize_model, saved  # noqa: E402
from tests.helpers.written import written_default  # noqa: E402

U8 = dict(dtype=TensorProto.UINT8, antialias=1)
# torchvision's resize of a uint8 image (bilinear / bicubic a = -1/2, exclude_outside, as the exporter writes it),
# a cubic enlargement (onnxruntime clips each axis: up to 16 off a single rounding), a crop box with extrapolation.
CASES = [
    ([1, 3, 120, 160], dict(sizes=[1, 3, 56, 56], mode="linear", exclude_outside=1)),
    ([1, 3, 120, 160], dict(sizes=[1, 3, 56, 56], mode="cubic", exclude_outside=1, cubic_coeff_a=-0.5)),
    ([1, 3, 25, 30], dict(sizes=[1, 3, 50, 60], mode="cubic")),
    ([1, 2, 37, 41], dict(scales=[1, 1, 0.37, 0.61], mode="linear", coordinate_transformation_mode="align_corners")),
    ([1, 2, 20, 24], dict(sizes=[1, 2, 9, 7], roi=[0, 0, 0.1, 0.2, 1, 1, 0.9, 1.3], mode="linear",
                          coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.0)),
    ([1, 30, 20, 3], dict(sizes=[1, 11, 13, 3], mode="cubic", coordinate_transformation_mode="pytorch_half_pixel")),
]


def _images(shape, seed):
    """Random values with runs of both ends (where a cubic's lobes overshoot and the clip decides)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, shape).astype(np.uint8)
    flat = x.reshape(-1)
    flat[: flat.size // 3] = np.repeat(rng.choice(np.array([0, 255], np.uint8), flat.size // 24 + 1), 8)[
        : flat.size // 3]
    return x


@pytest.mark.parametrize("shape,attrs", CASES)
def test_default_is_onnxruntime_bit_for_bit_at_every_hint(shape, attrs, tmp_path):
    model = resize_model(shape, **U8, **attrs)
    xml, src = written_default(model, tmp_path, None)
    session = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    core = ov.Core()
    compiled = {h: core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": h}) for h in ("f32", "bf16")}
    for seed in range(3):
        x = _images(shape, seed)
        want = session.run(None, {"X": x})[0]
        for hint, c in compiled.items():
            got = c([x])[0]
            assert got.dtype == np.uint8 and np.array_equal(got, want), (hint, seed, np.abs(
                got.astype(int) - want.astype(int)).max())


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_pytorch_within_its_own_weights_rounding(mode, tmp_path):
    """F.interpolate(uint8, antialias=True) rounds its weights to its own precision: one off on a few outputs
    (measured: bilinear 1.6%, bicubic 0.4%), where the exact sum rounded once (onnx.reference's reading, the
    default before) was off on 10-24%, bicubic by up to 12 (PyTorch clips each axis too)."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    model = resize_model([1, 3, 120, 160], sizes=[1, 3, 56, 72], mode=mode[2:], exclude_outside=1,
                         cubic_coeff_a=-0.5, **U8)
    xml, _ = written_default(model, tmp_path, None)
    x = _images([1, 3, 120, 160], 4)
    got = ov.Core().compile_model(xml, "CPU")([x])[0].astype(int)
    want = F.interpolate(torch.from_numpy(x), size=(56, 72), mode=mode, antialias=True).numpy().astype(int)
    off = np.abs(got - want)
    (_, once), = parse_model(model, convention="reference")
    once_off = np.abs(reference.run(once, x, None, None, None).astype(int) - want)
    assert off.max() <= 1 and (off > 0).mean() < 0.025, (off.max(), (off > 0).mean())
    assert (once_off > 0).mean() > 4 * (off > 0).mean(), ((once_off > 0).mean(), (off > 0).mean())


@pytest.mark.compiled
def test_lengths_known_only_at_run_time_take_the_library_and_say_why(tmp_path):
    """No in-graph form computes the float32 weights from run-time lengths: the library's kernels do
    (``rb/fixed_point.hpp``), written by default with the reason, onnxruntime's numbers bit for bit at every input
    shape tried under the f32 and bf16 hints."""
    model = resize_model([1, 3, "h", "w"], sizes=[1, 3, 24, 30], mode="cubic", exclude_outside=1, **U8)
    src = saved(model, tmp_path)
    done = api.convert(src, str(tmp_path / "out" / "m.xml"))
    (rec,) = done.records
    assert rec.rung == 4 and "fixed point" in rec.reason and done.extension, rec.summary()
    core = ov.Core()
    core.add_extension(done.extension)
    session = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    compiled = [core.compile_model(str(tmp_path / "out" / "m.xml"), "CPU", {"INFERENCE_PRECISION_HINT": h})
                for h in ("f32", "bf16")]
    for seed, hw in enumerate(((64, 80), (31, 17), (240, 320))):
        x = _images([1, 3, *hw], seed)
        want = session.run(None, {"X": x})[0]
        for c in compiled:
            assert np.array_equal(c([x])[0], want), (hw, seed)


@pytest.mark.compiled
def test_the_kernels_are_onnxruntime_bit_for_bit():
    """The C ABI's resize of random uint8 antialias nodes (tests/semantics/test_fixed_point.py's) equals
    onnxruntime's output: the C++ port of the fixed point's float32 weights, sums and clips."""
    from resample_bridge.lowering import compiled
    from tests.semantics.test_fixed_point import _random_case, onnxruntime_run

    why = compiled.available()
    if why:
        pytest.skip(f"the kernels library is not available here: {why}")
    rng = np.random.default_rng(7)
    for _ in range(80):
        model, shape = _random_case(rng)
        (_, ir), = parse_model(model)
        x = _images(shape, int(rng.integers(1 << 30)))
        got, want = compiled.resize(ir, x, None, None, None), onnxruntime_run(model, x)
        assert got.shape == want.shape and np.array_equal(got, want), model.graph.node[0]


def test_the_importer_is_named_different_and_the_onnx_target_runs_onnxruntime(tmp_path):
    """OpenVINO's Interpolate resamples uint8 antialias once from float weights: check names it different with
    why; the ONNX target keeps the native Resize, which onnxruntime computes exactly."""
    model = resize_model([1, 3, 64, 80], sizes=[1, 3, 24, 30], mode="linear", **U8)
    src = saved(model, tmp_path)
    (row,) = api.check(src).rows
    assert row.outcome == "different" and "fixed point" in " ".join(row.fields) and row.rung == 3, row
    done = api.convert(src, str(tmp_path / "m_onnx.onnx"), target="onnx")
    assert done.records[0].rung == 1, done.records[0].summary()


def test_torchvision_resize_of_a_uint8_image_as_exported(tmp_path):
    """torchvision.transforms.v2.Resize(antialias=True) of a uint8 image, exported by dynamo as users ship
    preprocessing: a uint8 antialias Resize. The default's model equals onnxruntime bit for bit and PyTorch within
    one step; OpenVINO's importer was 143-164 off on 99% of the outputs (480 x 640 -> 224 x 224, measured)."""
    torch = pytest.importorskip("torch")
    T = pytest.importorskip("torchvision.transforms.v2")

    class Preprocess(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.resize = T.Resize((28, 30), interpolation=T.InterpolationMode.BICUBIC, antialias=True)

        def forward(self, x):
            return self.resize(x)

    x = torch.from_numpy(_images([1, 3, 60, 80], 9))
    src = str(tmp_path / "pre.onnx")
    torch.onnx.export(Preprocess().eval(), (x,), src, dynamo=True, opset_version=18, input_names=["X"])
    done = api.convert(src, str(tmp_path / "out" / "m.xml"))
    assert [r.rung for r in done.records] == [3] and done.extension is None
    got = ov.Core().compile_model(str(tmp_path / "out" / "m.xml"), "CPU")([x.numpy()])[0]
    assert np.array_equal(got, ort.InferenceSession(src).run(None, {"X": x.numpy()})[0])
    assert np.abs(got.astype(int) - Preprocess()(x).numpy().astype(int)).max() <= 1
    importer = ov.Core().compile_model(ov.convert_model(src), "CPU")([x.numpy()])[0]
    assert not np.array_equal(importer, got)
