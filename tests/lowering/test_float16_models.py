"""float16 models as a GPU deployment exports them (``model.half()`` then ``torch.onnx.export``): every tensor
float16, the upsampling lengths computed in the graph (``F.interpolate(x, size=skip.shape[-2:])``).

Runtimes run such a model's nodes in float32 and hold the tensors between them rounded: onnxruntime runs a
float16 node next to one without a float16 kernel (its Conv) in float32 (its cast transformer), OpenVINO's CPU
runs the whole model in float32. A resampling node judged on the model's own (rounded) tensors is then off its
IR by a float16 step. Before, convert refused the model as read wrong ("onnxruntime computes node /Resize
otherwise than its IR says") and verify failed the node; the node alone on those tensors is exact, and so is
the converted model against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge.lowering.model_reference import SourceRunner, computed_alone, constants  # noqa: E402
from resample_bridge.lowering.openvino.target import convert  # noqa: E402
from resample_bridge.semantics.reference import run as oracle  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.models import computed_grid_sample, skip_sized_unet  # noqa: E402


def _feeds(shape=(1, 3, 32, 48)):
    return {"x": np.random.default_rng(0).uniform(0, 1, shape).astype(np.float16)}


def test_onnxruntime_runs_the_float16_resize_on_other_values_than_the_model_holds():
    """The condition the rest covers: in the model the Resize is off its IR on the model's own tensors (it ran on
    float32 values), alone on those tensors it is exact."""
    model = skip_sized_unet()
    irs = dict(parse_model(model))
    values = {**_feeds(), **SourceRunner(model).run(_feeds())}
    node = next(n for n in model.graph.node if n.op_type == "Resize")
    args = [None if not n else constants(model).get(n, values.get(n)) for n in node.input]
    exact = oracle(irs["/Resize"], *args)
    assert np.any(values["up"] != exact)
    alone = computed_alone(model, node, args, values["up"])
    assert alone is not values["up"] and np.array_equal(alone, exact)


@pytest.mark.parametrize("mode,coord", [("linear", "half_pixel"), ("cubic", "align_corners"),
                                        ("linear", "pytorch_half_pixel")])
@pytest.mark.parametrize("dynamic", [True, False])
def test_a_float16_model_converts_and_matches_onnxruntime(tmp_path, mode, coord, dynamic):
    model = skip_sized_unet(mode, coord, dynamic)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    written, _ = convert(str(path), prefer="builtin")
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for shape in ((1, 3, 32, 48),) + (((1, 3, 40, 24), (1, 3, 17, 30)) if dynamic else ()):
        feeds = _feeds(shape)
        want = sess.run(None, feeds)[0].astype(np.float64)
        for hint in ("f32", "bf16"):
            got = ov.Core().compile_model(written, "CPU", {"INFERENCE_PRECISION_HINT": hint})(feeds)[0]
            assert got.shape == want.shape
            tol = 2e-3 if hint == "f32" else 2e-2  # a few float16 / bfloat16 steps at values below ~4
            np.testing.assert_allclose(got.astype(np.float64), want, atol=tol, rtol=tol)


def test_verify_passes_the_float16_model_and_judges_its_resize(tmp_path):
    """verify's node row judges OpenVINO's Resize on the converted model's own float16 tensors (OpenVINO ran it
    on float32 ones): within the float32 bound plus half a float16 step of each input; onnxruntime is not reported
    as departing from the ONNX semantics there (alone it does not)."""
    from resample_bridge.tools.verify_openvino import format_verify, verify_openvino

    model = skip_sized_unet()
    src = tmp_path / "m.onnx"
    onnx.save(model, str(src))
    written, _ = convert(str(src), prefer="builtin")
    xml = tmp_path / "m.xml"
    ov.save_model(written, str(xml))
    for precision in ("f32", "bf16"):
        rep = verify_openvino(str(src), converted=str(xml), inputs=_feeds((1, 3, 64, 96)), precision=precision)
        assert rep["ok"], rep
        row = next(n for n in rep["nodes"] if n["name"] == "/Resize")
        assert row["ok"] and row["onnxruntime_vs_oracle"]["ok"], row
        assert "itself differs" not in format_verify(rep)  # a float16 step within the bound is no departure


def test_an_output_the_importer_misses_as_far_is_the_float16_networks_own():
    """A float16 network's output that onnxruntime computes apart from OpenVINO (a float16 RT-DETR's query TopK:
    0.24 off at f32, OpenVINO's importer the same bit for bit) fails verify with a note that the importer is as far
    off; one the importer computes as the reference does gets none. The reference is built here from the
    importer's own output (what such a network gives), the rest is verify's."""
    from resample_bridge.semantics.compare import compare
    from resample_bridge.tools.run_openvino import importer_outputs
    from resample_bridge.tools.verify_openvino import _beside_importer

    model, feeds = skip_sized_unet(dynamic=False), _feeds()
    theirs = importer_outputs(model, feeds, "f32")["y"]
    apart = theirs.copy()
    apart.flat[7] += np.float16(0.25)
    e = {**compare(theirs, apart).to_dict(), "name": "y"}
    assert e["ok"] is False
    noted = _beside_importer(e, apart, model, feeds, "f32", {})
    assert "as far off" in noted.get("note", "") and "float16" in noted["note"], noted
    assert noted["ok"] is False  # the verdict stays the tolerance's
    ours = theirs.copy()
    ours.flat[7] += np.float16(0.25)
    e = {**compare(ours, theirs).to_dict(), "name": "y"}
    assert "note" not in _beside_importer(e, theirs, model, feeds, "f32", {})


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_verify_judges_a_grid_sample_on_a_computed_float16_grid(tmp_path, mode):
    """OpenVINO samples the grid its Conv and Tanh computed in float32; the model holds it rounded to float16,
    which moves a coordinate by up to 2^-11 of its size (0.0006 off the oracle on the held grid, measured): the
    node row allows each grid value half a float16 step (before: MISMATCH on 288 elements)."""
    from resample_bridge.tools.verify_openvino import verify_openvino

    src = tmp_path / "m.onnx"
    onnx.save(computed_grid_sample(mode), str(src))
    written, _ = convert(str(src), prefer="builtin")
    xml = tmp_path / "m.xml"
    ov.save_model(written, str(xml))
    for precision in ("f32", "bf16"):
        rep = verify_openvino(str(src), converted=str(xml), precision=precision)
        assert rep["nodes"] and all(n["ok"] for n in rep["nodes"]), rep["nodes"]
        # at bf16 the network's own rounding moves the output as far as OpenVINO's importer does (0.79 off)
        assert all(o["ok"] or "importer" in o.get("note", "") for o in rep["outputs"]), rep["outputs"]


def test_a_float16_nearest_grid_sample_on_a_computed_grid_is_refused_with_the_reason(tmp_path):
    """Nearest on that grid: OpenVINO picks from the unrounded grid, onnxruntime and the model's semantics from the
    float16 one, and near a tie they read other elements (1.16 off). Refused, saying so."""
    from resample_bridge.semantics.errors import BridgeError

    src = tmp_path / "m.onnx"
    onnx.save(computed_grid_sample("nearest"), str(src))
    with pytest.raises(BridgeError) as e:
        convert(str(src), prefer="builtin")
    assert e.value.field == "model" and "/GridSample" in e.value.message
    assert "float16 model run in float32" in e.value.brief and "unrounded" in e.value.message
