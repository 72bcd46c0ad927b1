"""OpenVINO's own PyTorch frontend (``openvino.convert_model(module, example_input=...)``), call by call
(issue 44, item 3): the verdict from the IRs agrees with OpenVINO CPU run against PyTorch eager on every call,
and names the field where they part (input 1x3x40x52, as the issue measured)."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("openvino")
F = torch.nn.functional

from resample_bridge import api  # noqa: E402
from tests.helpers.torch_forms import TorchvisionBlocks  # noqa: E402

pytestmark = pytest.mark.torch

X = torch.randn(1, 3, 40, 52, generator=torch.Generator().manual_seed(0))
G = torch.rand(1, 5, 6, 2, generator=torch.Generator().manual_seed(1)) * 2.4 - 1.2


class Calls(torch.nn.Module):
    def forward(self, x, g):
        return (F.interpolate(x, scale_factor=0.4, mode="bilinear", antialias=True),
                F.interpolate(x, scale_factor=0.6, mode="nearest"),
                F.interpolate(x, scale_factor=0.6, mode="nearest-exact"),
                F.interpolate(x, size=(24, 31), mode="bicubic", antialias=True),
                F.interpolate(x, scale_factor=1.7, mode="bicubic", align_corners=True),
                F.interpolate(x, scale_factor=0.6, mode="bilinear", recompute_scale_factor=True),
                *[F.grid_sample(x, g, mode=m, padding_mode=p, align_corners=False)
                  for m in ("bilinear", "nearest", "bicubic") for p in ("zeros", "border", "reflection")])


@pytest.fixture(scope="module")
def rows():
    return api.check(None, source=Calls(), example_inputs=(X, G)).rows


def test_verdicts_per_call(rows):
    verdicts = [r.verdict for r in rows]
    assert verdicts[:6] == ["differs", "differs", "refused", "same", "same", "same"]
    # nearest with reflection (align_corners=False): PyTorch rounds after reflecting, which no IR here says
    assert verdicts[6:] == ["same"] * 5 + ["refused"] + ["same"] * 3


def test_verdicts_agree_with_the_cpu_run(rows):
    """Every call the IRs call the same runs on OpenVINO CPU within the policy of PyTorch eager; every call they
    call different is measurably off (the witness is the CPU, not our parser)."""
    for r in rows:
        if r.verdict == "same":
            assert r.measured is not None and r.measured < 1e-4, r
        elif r.verdict == "differs":
            assert r.measured is not None and r.measured > 1e-2, r


def test_fields_name_the_cause(rows):
    aa, nearest, exact = rows[:3]
    assert dict((f, (a, b)) for f, a, b in aa.fields)["scale_source"] == ("ratio", "user")
    assert "antialias=True" in aa.call and aa.onnx_op == "Interpolate-11"
    # nearest 0.6: the frontend writes the scale as float32; CPU reads other rows at the float32 ties.
    assert dict((f, (a, b)) for f, a, b in nearest.fields)["scales"][1] == "(0.6, 0.6)"
    assert "float32 ties" in nearest.reason
    assert "does not convert" in exact.reason and "nearest-exact" in exact.call


def test_cli_without_a_model_checks_the_frontend(tmp_path, capsys):
    from resample_bridge.tools.cli import main

    class One(torch.nn.Module):
        def forward(self, x):
            return F.interpolate(x, scale_factor=0.4, mode="bilinear", antialias=True)

    pt2 = tmp_path / "m.pt2"
    torch.export.save(torch.export.export(One(), (X,)), str(pt2))
    assert main(["check", "--source", str(pt2)]) == 1
    out = capsys.readouterr().out
    assert "fields: OpenVINO value vs PyTorch value" in out
    assert "aten::_upsample_bilinear2d_aa/Interpolate (Interpolate-11): differs from PyTorch" in out
    assert "scale_source: ratio vs user" in out and "measured: max error" in out


def test_torchvision_blocks_through_the_frontend():
    """FPN's nearest upsample and a DeformConv2d block: the frontend writes DeformableConvolution-8 plus an Add
    for the bias, which computes the call (the op alone would read as another bias rule: said, not flagged)."""
    module = TorchvisionBlocks(pytest.importorskip("torchvision")).eval()
    inputs = (torch.randn(1, 8, 20, 26), torch.randn(1, 16, 10, 13))
    rows = api.check(None, source=module, example_inputs=inputs).rows
    assert [(r.verdict, r.onnx_op) for r in rows] == [("same", "Interpolate-11"), ("same", "DeformableConvolution-8")]
    assert rows[1].measured < 1e-4 and "has_bias: False vs True" in rows[1].reason


class Signal(torch.nn.Module):
    """A 1-D signal upsampled linearly (rank 3), and the same as a rank-4 bilinear call."""

    def forward(self, s, x):
        return F.interpolate(s, scale_factor=2.5, mode="linear"), F.interpolate(x, scale_factor=2.5, mode="bilinear")


def test_rank3_linear_is_same_only_on_a_cpu_with_avx2():
    """The frontend writes F.interpolate(mode="linear") of a [N, C, L] signal as a rank-3 Interpolate, which
    OpenVINO's CPU computes wrong on SSE4.2-only CPUs (``rank_view``): the same numbers here, conditional; the
    rank-4 call carries no such condition."""
    s = torch.randn(2, 3, 7, generator=torch.Generator().manual_seed(2))
    result = api.check(None, source=Signal(), example_inputs=(s, X))
    linear, bilinear = result.rows
    assert linear.verdict == "ties" and "AVX2" in linear.reason and linear.measured < 1e-4, linear
    assert bilinear.verdict == "same", bilinear
    # the summary says it in the gate's word (--fail-on conditional), not the row's verdict key
    from resample_bridge.tools.check_source import format_summary
    assert format_summary(result).startswith("check --source: 1 conditional, 1 same;"), format_summary(result)
