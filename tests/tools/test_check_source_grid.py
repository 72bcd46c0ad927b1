"""``check --source`` on ``F.affine_grid`` (issue 44, ``tools/check_source_grid.py``): a spatial transformer
(affine_grid feeding grid_sample) exported by both exporters and through OpenVINO's PyTorch frontend. Each verdict
has its witness: onnxruntime on the export, or OpenVINO CPU, against PyTorch eager."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from tests.helpers.torch_forms import SpatialTransformer as STN  # noqa: E402

pytestmark = pytest.mark.torch


# (grid size, align_corners): a plain one, and a grid one row high with align_corners=True, where PyTorch puts
# the row at 0 and onnxruntime's AffineGrid at -1.
CASES = {"plain": ((1, 3, 6, 9), False), "one_row": ((1, 3, 1, 9), True)}


@pytest.fixture(scope="module", params=list(CASES))
def stn(request, tmp_path_factory):
    size, align = CASES[request.param]
    torch.manual_seed(0)
    inputs = (torch.randn(1, 3, 8, 10), torch.tensor([[[0.9, -0.3, 0.1], [0.35, 0.85, -0.2]]]))
    d = tmp_path_factory.mktemp(request.param)
    torch.export.save(torch.export.export(STN(size, align), inputs), d / "m.pt2")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(STN(size, align), inputs, str(d / "ts.onnx"), dynamo=False, opset_version=20)
    return request.param, STN(size, align), inputs, d


def _onnxruntime_agrees(path, module, inputs) -> bool:
    s = ort.InferenceSession(str(path))
    got = s.run(None, {i.name: t.numpy() for i, t in zip(s.get_inputs(), inputs)})[0]
    return bool(np.abs(got - module(*inputs).numpy()).max() < 1e-5)


def test_torchscript_affine_grid_is_judged(stn):
    name, module, inputs, d = stn
    rows = api.check(d / "ts.onnx", source=d / "m.pt2").rows
    assert [(r.onnx_op, r.verdict) for r in rows] == [("GridSample", "same"), ("AffineGrid",
                                                      "same" if name == "plain" else "differs")], rows
    grid = rows[1]
    assert grid.torch_name == "affine_grid_generator" and "F.affine_grid(theta, size=" in grid.call
    assert "torch_forms.py:" in grid.call  # the line of the module that calls it
    if name == "one_row":
        assert grid.fields == (("length1", "minus_one", "zero"),) and grid.numbers_differ
    assert _onnxruntime_agrees(d / "ts.onnx", module, inputs) is (grid.verdict == "same")


def test_dynamo_export_names_the_call_it_decomposed(stn, tmp_path):
    name, module, inputs, d = stn
    path = tmp_path / "dy.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(module, inputs, dynamo=True, opset_version=18).save(str(path))
        except Exception as e:  # noqa: BLE001 -- PyTorch's own decomposition fails at a unit-size aligned grid
            assert name == "one_row" and "detach_" in str(e)
            return
    assert name == "plain"
    rows = api.check(path, source=d / "m.pt2").rows
    assert [r.verdict for r in rows] == ["same", "missing"]
    assert rows[1].torch_name == "affine_grid_generator" and "wrote it as other ops" in rows[1].reason


def test_openvino_frontend_affine_grid(stn):
    pytest.importorskip("openvino")
    name, *_, d = stn
    rows = api.check(None, source=d / "m.pt2").rows
    grid = rows[-1]
    assert grid.torch_name == "affine_grid_generator"
    if name == "one_row":  # torch.export's decomposition fails before OpenVINO sees it
        assert grid.verdict == "refused" and "detach_" in grid.reason
        return
    assert grid.verdict == "same" and grid.measured < 1e-5, grid
    assert "No conversion rule found for operations: aten::affine_grid_generator" in grid.reason


def test_converted_spatial_transformer_keeps_its_grid_at_default_precision(tmp_path):
    """``convert model.pt2``: the grid OpenVINO computes from PyTorch's decomposition (Multiply / ReduceSum over
    the base grid) stays float32 at the CPU's default inference precision (bf16 on this CPU), so the converted
    model is eager's at both; an ONNX AffineGrid-20 converted by OpenVINO's importer is not (measured: 0.12 off
    at the default precision on this spatial transformer)."""
    ov = pytest.importorskip("openvino")
    from resample_bridge.semantics.compare import compare
    from resample_bridge.semantics.tolerance import model_tolerance

    module = STN((2, 3, 16, 16), False)
    g = torch.Generator().manual_seed(0)
    inputs = (torch.randn(2, 3, 24, 24, generator=g), torch.tensor([[[0.9, -0.3, 0.1], [0.35, 0.85, -0.2]]] * 2))
    conv = api.convert(torch.export.export(module, inputs), tmp_path / "m.xml")
    want = module(*inputs).numpy()
    core = ov.Core()
    for config in ({"INFERENCE_PRECISION_HINT": "f32"}, {}):
        got = core.compile_model(core.read_model(str(conv.output)), "CPU", config)([t.numpy() for t in inputs])[0]
        assert compare(got, want, *model_tolerance(want.dtype)).ok, (config, float(np.abs(got - want).max()))
