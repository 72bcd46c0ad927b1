"""``check --source`` (issue 44): ONNX exports made here with both exporters (dynamo, opset 18; TorchScript,
opsets 16 and 17), each node diffed against the PyTorch call it came from. A faithful export is not flagged;
one whose numbers onnxruntime shows to differ from PyTorch eager is flagged at the field that causes it."""

import json
import logging
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")
F = torch.nn.functional

from resample_bridge import api  # noqa: E402
from resample_bridge.semantics.compare import compare  # noqa: E402
from resample_bridge.tools.cli import main  # noqa: E402
from tests.helpers.torch_forms import TorchvisionBlocks  # noqa: E402

pytestmark = pytest.mark.torch


class Faithful(torch.nn.Module):
    def forward(self, x, g):
        a = F.interpolate(x, size=(7, 9), mode="bilinear")
        b = F.interpolate(x, scale_factor=1.7, mode="bicubic", align_corners=True)
        c = F.interpolate(x, scale_factor=0.6, mode="nearest")
        d = F.grid_sample(x, g, mode="bilinear", padding_mode="border", align_corners=False)
        return a, b, c, d


class Scale07(torch.nn.Module):
    """0.7 is written as float32 in the ONNX scales: on 90 rows onnxruntime makes 63 of them, PyTorch 62."""

    def forward(self, x):
        return F.interpolate(x, scale_factor=0.7, mode="bilinear")


class Antialias(torch.nn.Module):
    """The dynamo exporter writes the lengths [4, 5] for scale 0.4: the map then takes 10/4 and 13/5."""

    def forward(self, x):
        return F.interpolate(x, scale_factor=0.4, mode="bilinear", antialias=True)


class NearestExact(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=0.6, mode="nearest-exact")


def _export(module, inputs, tmp_path, dynamo: bool, opset: int):
    """(onnx path, pt2 path) of ``module`` exported both ways."""
    pt2, path = tmp_path / "m.pt2", tmp_path / f"m_{int(dynamo)}_{opset}.onnx"
    torch.export.save(torch.export.export(module, inputs), str(pt2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            if dynamo:
                torch.onnx.export(module, inputs, dynamo=True, opset_version=opset).save(str(path))
            else:
                torch.onnx.export(module, inputs, str(path), dynamo=False, opset_version=opset)
        finally:
            logging.disable(logging.NOTSET)
    return path, pt2


def _onnxruntime_agrees(path, module, inputs) -> bool:
    """Whether onnxruntime on the export computes PyTorch eager's numbers (the independent witness)."""
    s = ort.InferenceSession(str(path))
    got = s.run(None, {i.name: t.numpy() for i, t in zip(s.get_inputs(), inputs)})
    want = module(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    return all(compare(g, w.detach().numpy(), atol=1e-5, rtol=1e-5).ok for g, w in zip(got, want))


FAITHFUL_INPUTS = (torch.randn(1, 3, 10, 13), torch.rand(1, 5, 6, 2) * 2.4 - 1.2)


@pytest.mark.parametrize("dynamo, opset", [(True, 18), (False, 17), (False, 16)])
def test_faithful_export_is_not_flagged(tmp_path, dynamo, opset):
    path, pt2 = _export(Faithful(), FAITHFUL_INPUTS, tmp_path, dynamo, opset)
    assert _onnxruntime_agrees(path, Faithful(), FAITHFUL_INPUTS)
    result = api.check(str(path), source=str(pt2))
    # nearest 0.6 is written as float32: equal but at the float32 ties, which onnxruntime resolves as PyTorch.
    assert [r.verdict for r in result.rows] == ["same", "same", "ties", "same"], [r.to_dict() for r in result.rows]
    assert "float32 ties at output indices [0, 3]" in result.rows[2].reason
    assert result.passed and result.first_difference is None
    assert not api.check(str(path), source=str(pt2), fail_on=("different", "conditional")).passed
    # Matched to the right calls: by the recorded FX node (dynamo) or by order and shape (TorchScript).
    assert [r.call.split("(")[0] for r in result.rows] == ["F.interpolate"] * 3 + ["F.grid_sample"]
    assert "mode='bicubic'" in result.rows[1].call and "align_corners=True" in result.rows[1].call


@pytest.mark.parametrize("dynamo, opset", [(True, 18), (False, 17)])
def test_float32_scale_is_flagged_at_the_scales(tmp_path, dynamo, opset):
    x = torch.randn(1, 2, 90, 20)
    path, pt2 = _export(Scale07(), (x,), tmp_path, dynamo, opset)
    assert not _onnxruntime_agrees(path, Scale07(), (x,))  # 63 rows against PyTorch's 62
    (row,) = api.check(str(path), source=str(pt2)).rows
    assert row.verdict == "differs" and row.numbers_differ
    fields = {f: (a, b) for f, a, b in row.fields}
    assert fields["scales"] == ("(0.699999988079071, 0.699999988079071)", "(0.7, 0.7)")
    assert "output shape" in fields
    assert row.call.startswith("F.interpolate(mode='bilinear', scale_factor=(0.7, 0.7)")
    assert row.call.endswith("(`return F.interpolate(x, scale_factor=0.7, mode=\"bilinear\")`)")


def test_dynamo_antialias_lengths_are_flagged_at_the_coordinate_map(tmp_path):
    x = torch.randn(1, 3, 10, 13)
    path, pt2 = _export(Antialias(), (x,), tmp_path, True, 18)
    assert not _onnxruntime_agrees(path, Antialias(), (x,))
    (row,) = api.check(str(path), source=str(pt2)).rows
    assert row.verdict == "differs" and row.numbers_differ and row.max_error > 1e-3
    fields = {f: (a, b) for f, a, b in row.fields}
    assert fields["W coordinate map"] == ("src = 13/5*dst + 4/5", "src = ~2.5*dst + ~0.75")
    assert fields["sizes"] == ("(4, 5)", "None") and fields["scales"] == ("None", "(0.4, 0.4)")


def test_call_written_as_other_ops_is_missing_not_judged(tmp_path):
    x = torch.randn(1, 3, 10, 13)
    path, pt2 = _export(NearestExact(), (x,), tmp_path, True, 18)
    (row,) = api.check(str(path), source=str(pt2)).rows
    assert row.verdict == "missing" and row.onnx_name == "" and "nearest-exact" in row.call


def test_cli_gate_text_and_json(tmp_path, capsys):
    x = torch.randn(1, 3, 10, 13)
    path, pt2 = _export(Antialias(), (x,), tmp_path, True, 18)
    assert main(["check", str(path), "--source", str(pt2)]) == 1
    out = capsys.readouterr().out
    assert "node__upsample_bilinear2d_aa (Resize): differs from PyTorch" in out
    assert "W coordinate map: src = 13/5*dst + 4/5 vs src = ~2.5*dst + ~0.75" in out
    assert "first difference: node__upsample_bilinear2d_aa" in out and out.rstrip().endswith("FAILED")
    assert main(["check", str(path), "--source", str(pt2), "--json"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["passed"] is False and got["first_difference"] == "node__upsample_bilinear2d_aa"
    assert main(["check", str(path), "--source", str(pt2), "--fail-on", "refused"]) == 0
    capsys.readouterr()


def test_module_as_the_source(tmp_path):
    path, _ = _export(Faithful(), FAITHFUL_INPUTS, tmp_path, True, 18)
    result = api.check(str(path), source=Faithful(), example_inputs=FAITHFUL_INPUTS)
    assert result.passed and len(result.rows) == 4


def test_bad_source_is_one_line(tmp_path, capsys):
    path, _ = _export(Faithful(), FAITHFUL_INPUTS, tmp_path, True, 18)
    bad = tmp_path / "not.pt2"
    bad.write_bytes(b"not a program")
    assert main(["check", str(path), "--source", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "field 'source'" in err[0] and "not a torch.export program" in err[0]
    np.testing.assert_equal(main(["check", str(path), "--source", str(tmp_path / "absent.pt2")]), 2)


class DynamicSize(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, size=(x.shape[2] * 2, x.shape[3] // 2 + 3), mode="bilinear")


class FrozenSize(torch.nn.Module):
    """The same module as a trace sees it where the user wrote int(): the lengths become constants."""

    def forward(self, x):
        return F.interpolate(x, size=(int(x.shape[2]) * 2, int(x.shape[3]) // 2 + 3), mode="bilinear")


@pytest.mark.parametrize("module, frozen", [(DynamicSize(), False), (FrozenSize(), True)])
def test_sizes_frozen_by_tracing_are_flagged_at_another_shape(tmp_path, module, frozen):
    x = torch.randn(1, 3, 16, 16)
    h, w = torch.export.Dim("h", min=4, max=64), torch.export.Dim("w", min=4, max=64)
    pt2, path = tmp_path / "m.pt2", tmp_path / "m.onnx"
    torch.export.save(torch.export.export(DynamicSize(), (x,), dynamic_shapes=({2: h, 3: w},)), str(pt2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (x,), str(path), dynamo=False, opset_version=17, input_names=["x"],
                          dynamic_axes={"x": {2: "h", 3: "w"}})
    other = torch.randn(1, 3, 23, 23)
    s = ort.InferenceSession(str(path))
    assert (s.run(None, {"x": other.numpy()})[0].shape != tuple(DynamicSize()(other).shape)) == frozen
    rows = api.check(str(path), source=str(pt2)).rows
    assert rows[0].verdict == "same" and rows[0].at == ""  # the export shape: faithful either way
    if not frozen:
        assert len(rows) == 1
        return
    (again,) = rows[1:]
    assert again.verdict == "differs" and again.at == "x[1, 3, 23, 23]"
    assert dict((f, (a, b)) for f, a, b in again.fields)["sizes"] == ("(32, 11)", "(46, 14)")


@pytest.mark.parametrize("dynamo, opset", [(True, 19), (False, 17)])
def test_torchvision_blocks_are_not_flagged(tmp_path, dynamo, opset):
    inputs = (torch.randn(1, 8, 20, 26), torch.randn(1, 16, 10, 13))
    module = TorchvisionBlocks(pytest.importorskip("torchvision")).eval()
    if not dynamo:  # the TorchScript exporter has no deform_conv2d: the FPN alone
        module.forward = lambda a, b: module.fpn({"a": a, "b": b})["a"]
    path, pt2 = _export(module, inputs, tmp_path, dynamo, opset)
    assert _onnxruntime_agrees(path, module, inputs)
    rows = api.check(str(path), source=str(pt2)).rows
    assert [r.verdict for r in rows] == ["same"] * (2 if dynamo else 1), [r.to_dict() for r in rows]
    assert rows[0].call.startswith("F.interpolate(mode='nearest', size=(20, 26)) at ")


class ShapeChained(torch.nn.Module):
    """A Resize whose sizes the TorchScript export computes (recompute_scale_factor: Shape -> Mul -> Floor), then
    one sized by the first's output: ONNX shape inference cannot know that output's lengths, so the second's
    sizes are a run-time chain of Shape ops, bound by onnxruntime at the export shape (check_source_bind)."""

    def forward(self, x):
        y = F.interpolate(x, scale_factor=1.28, mode="bilinear", recompute_scale_factor=True)
        return F.interpolate(y[:, :, ::2, ::2], size=y.shape[-2:], mode="nearest")


def test_sizes_computed_from_shapes_at_run_time_are_bound(tmp_path):
    x = (torch.rand(1, 3, 50, 70),)
    path, pt2 = _export(ShapeChained(), x, tmp_path, dynamo=False, opset=17)
    rows = api.check(path, source=pt2).rows
    assert [r.verdict for r in rows] == ["same", "same"], [(r.onnx_name, r.verdict, r.reason) for r in rows]
    assert _onnxruntime_agrees(path, ShapeChained(), x)
