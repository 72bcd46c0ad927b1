"""``verify model.pt2`` (issue 44): the converted model of a PyTorch program (converted here, or the user's
--converted XML) on OpenVINO CPU at f32 and bf16 against the module in eager PyTorch, each resampling call against
the oracle on the converted model's own inputs of it; exit 0 / 1 / 2 as verify of an ONNX source. A converted
model of another module (nearest where the module has bilinear) and one whose Interpolate was edited to nearest
fail."""

import json

import pytest

torch = pytest.importorskip("torch")
ov = pytest.importorskip("openvino")
F = torch.nn.functional

from resample_bridge import api  # noqa: E402
from resample_bridge.semantics.errors import BridgeError  # noqa: E402
from resample_bridge.tools.cli import main  # noqa: E402
from tests.helpers.precision import ran_at  # noqa: E402

pytestmark = pytest.mark.torch

X = torch.rand(1, 3, 20, 26, generator=torch.Generator().manual_seed(0))


class Upsampler(torch.nn.Module):
    """conv -> F.interpolate(scale 1.5, ``mode``) -> conv, seeded."""

    def __init__(self, mode: str):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b, self.mode = torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.Conv2d(4, 2, 1), mode

    def forward(self, x):
        kw = {} if self.mode == "nearest" else {"align_corners": False}
        return self.b(F.interpolate(self.a(x), scale_factor=1.5, mode=self.mode, **kw))


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """{mode: (.pt2, the XML convert wrote)} for bilinear and nearest."""
    d = tmp_path_factory.mktemp("verify_torch")
    out = {}
    for mode in ("bilinear", "nearest"):
        pt2, xml = d / f"{mode}.pt2", d / mode / "m.xml"
        torch.export.save(torch.export.export(Upsampler(mode), (X,)), pt2)
        assert main(["convert", str(pt2), "--output-model", str(xml), "-q"]) == 0
        out[mode] = (str(pt2), str(xml))
    return out


@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_a_faithful_conversion_passes(converted, precision, capsys):
    pt2, xml = converted["bilinear"]
    capsys.readouterr()
    assert main(["verify", pt2, "--converted", xml, "--precision", precision, "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    ran = ran_at(precision)  # a CPU without bf16 runs the hint in f32: verify names what ran
    assert rep["verdict"] == "PASSED" and rep["precision"] == ran
    assert ("precision_note" in rep) == (ran != precision)
    assert [n["name"] for n in rep["nodes"]] == ["upsample_bilinear2d"] and rep["nodes"][0]["ok"] is True
    assert rep["outputs"][0]["max_abs"] > 0 or ran == "f32"  # bf16 rounds: the comparison ran


def test_without_converted_it_converts_first(converted, capsys):
    assert main(["verify", converted["bilinear"][0]]) == 0
    out = capsys.readouterr().out
    assert "vs the module in eager PyTorch" in out and "rung 1 (native)" in out and out.rstrip().endswith(
        "1 resampling node passed, 0 failed")


def test_the_converted_model_of_another_module_fails(converted, capsys):
    assert main(["verify", converted["bilinear"][0], "--converted", converted["nearest"][1]]) == 1
    assert "FAILED: 0 outputs passed, 1 failed" in capsys.readouterr().out


def test_a_call_converted_to_another_mode_is_named(converted, tmp_path, capsys):
    """The bilinear model's Interpolate edited to nearest: the output and the call itself fail."""
    pt2, xml = converted["bilinear"]
    text = open(xml).read()
    assert text.count('mode="linear_onnx"') == 1
    edited = tmp_path / "m.xml"
    edited.write_text(text.replace('mode="linear_onnx"', 'mode="nearest"'))
    (tmp_path / "m.bin").write_bytes(open(xml[:-4] + ".bin", "rb").read())
    assert main(["verify", pt2, "--converted", str(edited), "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    assert rep["counts"]["nodes_failed"] == 1 and rep["nodes"][0]["name"] == "upsample_bilinear2d"
    assert rep["outputs"][0]["ok"] is False


@pytest.mark.parametrize("flag", [["--atol", "1"], ["--save-results", "r.npz"], ["--target", "onnx"]])
def test_what_a_pytorch_source_cannot_take_is_refused(converted, flag, capsys):
    assert main(["verify", converted["bilinear"][0], *flag]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag[0].lstrip("-") in err


def test_api_verify_takes_a_program_and_a_module(converted):
    program = torch.export.export(Upsampler("bilinear"), (X,))
    assert api.verify(program).ok
    assert not api.verify(program, converted=converted["nearest"][1]).ok
    res = api.verify(Upsampler("bilinear"), example_inputs=(X,), precision="bf16")
    assert res.ok and res.nodes[0].ok
    with pytest.raises(BridgeError, match="atol"):
        api.verify(program, atol=1.0)


class PositionEmbedding(torch.nn.Module):
    """A call on a parameter alone (a ViT's position embedding, tokens as a grid, resized to the input): the
    conversion folds it, and the grid it read is folded away."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.pos = torch.nn.Parameter(torch.randn(1, 20, 3))

    def forward(self, x):
        grid = self.pos.reshape(1, 4, 5, 3).permute(0, 3, 1, 2)
        return x + F.interpolate(grid, size=x.shape[-2:], mode="bicubic", align_corners=False)


def test_a_folded_call_is_said_and_judged_by_the_outputs():
    res = api.verify(PositionEmbedding(), example_inputs=(X,))
    (node,) = res.nodes
    assert res.ok and node.ok is None and node.raw["note"].startswith("a call on constants alone")
    assert res.outputs[0].ok


def test_a_traced_module_is_refused_on_one_line(tmp_path, capsys):
    """A TorchScript trace has no eager module to run: verify refuses it (exit 2), naming check --source."""
    path = tmp_path / "traced.pt"
    torch.jit.trace(Upsampler("bilinear"), (X,)).save(str(path))
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "check --source" in err
