"""``convert model.pt2 --target openvino`` on whole networks (issue 44): a hand-built U-Net exported with dynamic
height and width (F.interpolate by scale_factor and by the skip connection's run-time size), torchvision's FPN into
a DeformConv2d and RAFT-small (from config, seeded weights; torchvision's DeepLabV3 is in the corpus,
``test_torch_corpus.py``, converted and verified there). Each converted through the CLI, the written XML run
on OpenVINO CPU (f32) at the example shape and, for the dynamic one, at another, and compared with eager PyTorch
within the whole-model tolerance; every resampling call of the program that OpenVINO converts has its record."""

import json

import pytest

torch = pytest.importorskip("torch")
ov = pytest.importorskip("openvino")
tv = pytest.importorskip("torchvision")
F = torch.nn.functional

from resample_bridge import api  # noqa: E402
from resample_bridge.semantics.compare import compare  # noqa: E402
from resample_bridge.semantics.tolerance import model_tolerance  # noqa: E402
from resample_bridge.lowering.openvino.torch_frontend import kept_program  # noqa: E402
from resample_bridge.tools.cli import main  # noqa: E402
from resample_bridge.translate.torch import calls  # noqa: E402
from tests.helpers.torch_forms import TorchvisionBlocks  # noqa: E402
from tests.tools.test_convert_torch import run_xml  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.slow]


class UNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)

        def block(i, o):
            return torch.nn.Sequential(torch.nn.Conv2d(i, o, 3, padding=1), torch.nn.ReLU())

        self.e1, self.e2, self.e3 = block(3, 8), block(8, 16), block(16, 16)
        self.d2, self.d1, self.out = block(32, 8), block(16, 8), torch.nn.Conv2d(8, 2, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(F.max_pool2d(a, 2))
        z = self.e3(F.max_pool2d(b, 2))
        u = self.d2(torch.cat([F.interpolate(z, scale_factor=2.0, mode="bilinear"), b], 1))
        u = self.d1(torch.cat([F.interpolate(u, size=a.shape[-2:], mode="nearest"), a], 1))
        return self.out(u)


def _convert(program, tmp_path, capsys):
    pt2, xml = tmp_path / "m.pt2", tmp_path / "m.xml"
    torch.export.save(program, pt2)
    rc = main(["convert", str(pt2), "-o", str(xml), "--json"])
    out = capsys.readouterr().out
    assert rc == 0, out
    # Every call of the program OpenVINO converts (decomposed as its frontend does: a call whose value is
    # unused is gone) has its record, in graph order.
    assert [n["node"] for n in json.loads(out)["nodes"]] == [c.name for c in calls(kept_program(program))]
    return xml


def _matches_eager(module, xml, x):
    (got, *_), _ = run_xml(xml, (x,))
    with torch.no_grad():
        want = module(x)
    want = (want["out"] if isinstance(want, dict) else want).numpy()
    r = compare(got, want, *model_tolerance(want.dtype))
    assert r.ok, (list(x.shape), r.max_abs)


def test_unet_with_dynamic_lengths(tmp_path, capsys):
    """Lengths that are multiples of 4 (derived dimensions, 4*h): the program converts from memory (api); read
    back from a .pt2, PyTorch 2.14 itself cannot decompose it (as OpenVINO's own convert_model cannot): refused
    on one line, exit 2."""
    module = UNet().eval()
    x = torch.rand(1, 3, 48, 64, generator=torch.Generator().manual_seed(0))
    h, w = torch.export.Dim("h", min=1, max=64), torch.export.Dim("w", min=1, max=64)
    program = torch.export.export(module, (x,), dynamic_shapes=({2: 4 * h, 3: 4 * w},))
    conv = api.convert(program, tmp_path / "m.xml")
    assert [r.node for r in conv.records] == [c.name for c in calls(program)]
    for shape in ((1, 3, 48, 64), (1, 3, 96, 40)):
        _matches_eager(module, conv.output, torch.rand(*shape, generator=torch.Generator().manual_seed(1)))
    torch.export.save(program, tmp_path / "m.pt2")
    rc = main(["convert", str(tmp_path / "m.pt2"), "-o", str(tmp_path / "again.xml")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "cannot decompose" in err[0], err


def test_torchvision_fpn_and_deformconv(tmp_path, capsys):
    """torchvision's FeaturePyramidNetwork (nearest upsampling to the finer level's size) into a DeformConv2d whose
    offsets a conv computes."""
    module = TorchvisionBlocks(tv).eval()
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(1, 8, 16, 20, generator=g), torch.rand(1, 16, 8, 10, generator=g)
    xml = _convert(torch.export.export(module, (a, b)), tmp_path, capsys)
    (got,), _ = run_xml(xml, (a, b))
    with torch.no_grad():
        want = module(a, b).numpy()
    assert compare(got, want, *model_tolerance(want.dtype)).ok


class RaftSmall(torch.nn.Module):
    """torchvision's RAFT-small (optical flow, seeded weights): grid_sample over its correlation pyramid on every
    flow update (two here) and the bilinear upsampling of the flow; the last flow is the output."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.raft = tv.models.optical_flow.raft_small(weights=None)

    def forward(self, a, b):
        return self.raft(a, b, num_flow_updates=2)[-1]


def test_torchvision_raft_small(tmp_path, capsys):
    module = RaftSmall().eval()
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(1, 3, 128, 128, generator=g), torch.rand(1, 3, 128, 128, generator=g)
    xml = _convert(torch.export.export(module, (a, b)), tmp_path, capsys)
    (got,), _ = run_xml(xml, (a, b))
    with torch.no_grad():
        want = module(a, b).numpy()
    assert compare(got, want, *model_tolerance(want.dtype)).ok
