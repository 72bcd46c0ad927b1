"""Real exported models with dynamic H / W (tests/models), converted by default and run at image shapes around the
saved one: the written model's outputs are onnxruntime's at every shape onnxruntime runs. The whole-model check in
``convert`` probes three shapes; a length computed in the graph can come out a pixel short at others (torchvision's
detection transform did, at 42 of 380 shapes, while its sizes producer's Divide was respelled: ``grid_pin``). Slow:
each model is converted and run at eleven shapes (make test-all)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402

pytestmark = pytest.mark.slow

MODELS = Path(__file__).parent / "models"
# Lengths off the saved ones by small odd steps, and by multiples of 32 for the strided backbones that need them
OFFSETS = [(dh, dw) for dh in (-7, 0, 11) for dw in (-5, 3, 17)] + [(32, 64), (64, 32)]


def _image_input(model):
    """(name, dims) of the model's one 4-D input whose H or W is dynamic, else None."""
    inits = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        return None
    dims = [d.dim_value or None for d in inputs[0].type.tensor_type.shape.dim]
    return (inputs[0].name, dims) if len(dims) == 4 and None in dims[2:] else None


CASES = sorted(p.name for p in MODELS.iterdir() if (p / "model.onnx").is_file()
               and _image_input(onnx.load(str(p / "model.onnx"), load_external_data=False))) \
    if MODELS.is_dir() else []


@pytest.mark.parametrize("case", CASES)
def test_default_conversion_equals_onnxruntime_around_the_saved_shape(case, tmp_path):
    src = str(MODELS / case / "model.onnx")
    name, dims = _image_input(onnx.load(src, load_external_data=False))
    saved = np.load(MODELS / case / "inputs.npz")[name]
    done = api.convert(src, str(tmp_path / "m.xml"))
    assert done.extension is None
    compiled = ov.Core().compile_model(str(tmp_path / "m.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    # OpenVINO's own import of the source, fed the same shapes in the same order: where it computes the written
    # model's numbers exactly, a difference from onnxruntime is OpenVINO's compile of the user's graph (measured,
    # AMD EPYC AVX2, OpenVINO 2026.4.1: SegFormer on dynamic H / W, 0.3 off at some lengths, right with
    # SNIPPETS_MODE=DISABLE), not the conversion's
    importer = _compiled_or_none(src)
    session = ort.InferenceSession(src)
    rng = np.random.default_rng(0)
    ran, openvinos_own = [], []
    for dh, dw in OFFSETS:
        shape = list(saved.shape)
        for axis, d in ((2, dh), (3, dw)):
            shape[axis] += d if dims[axis] is None else 0
        if min(shape[2:]) < 8:
            continue
        x = rng.uniform(0, 1, shape).astype(saved.dtype)
        try:
            want = session.run(None, {name: x})
        except Exception:  # a shape the model does not admit (a window size, a stride): nothing to compare
            continue
        got, theirs = compiled({name: x}), _run_or_none(importer, {name: x})
        for k, w in enumerate(want):
            g = np.asarray(got[k])
            assert g.shape == w.shape, f"{case} at {shape}: output {k} shape {list(g.shape)} vs {list(w.shape)}"
            scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
            if not np.allclose(g, w, rtol=1e-4, atol=1e-4 * scale) and theirs is not None and \
                    np.array_equal(g, np.asarray(theirs[k])):
                openvinos_own.append(shape)
                continue
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale, err_msg=f"{case} at {shape}")
        ran.append(shape)
    assert ran, f"{case}: onnxruntime runs none of the shapes tried"
    if openvinos_own:
        pytest.xfail(f"{case}: OpenVINO's own import computes the written model's numbers, not onnxruntime's, at "
                     f"{openvinos_own}")


def _compiled_or_none(src: str):
    """OpenVINO's own import of ``src`` compiled for CPU in f32, or None where it refuses the model."""
    try:
        return ov.Core().compile_model(src, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    except Exception:  # noqa: BLE001 -- the importer's refusal: nothing of its to compare
        return None


def _run_or_none(compiled, feeds: dict):
    try:
        return None if compiled is None else compiled(feeds)
    except Exception:  # noqa: BLE001 -- a shape the importer's model cannot run
        return None
