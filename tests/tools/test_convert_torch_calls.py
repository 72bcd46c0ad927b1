"""``api.convert(module, example_inputs=...)`` on single calls, argument combination by argument combination
(issue 44): every ``F.interpolate`` mode in 1-D, 2-D and 3-D by scale (down, up, integer), size and
recompute_scale_factor, align_corners both ways; bilinear / bicubic antialias; ``F.grid_sample`` 4-D (3 modes x 3
paddings x align_corners) and 5-D; torchvision's ``deform_conv2d`` with and without a mask; a float64 call. The
written model, run on OpenVINO CPU (f32), is within the oracle's float32 bound of PyTorch eager element by element
(nearest: the same elements)."""

import itertools

import pytest

torch = pytest.importorskip("torch")
ov = pytest.importorskip("openvino")
tv = pytest.importorskip("torchvision")
F = torch.nn.functional

from resample_bridge import api  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.ir import DeformConvIR  # noqa: E402
from resample_bridge.translate.torch import calls  # noqa: E402
from tests.helpers.torch_forms import Call  # noqa: E402
from tests.tools.test_convert_torch import run_xml  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.slow]

_g = torch.Generator().manual_seed(0)
X = {3: torch.rand(1, 2, 19, generator=_g), 4: torch.rand(1, 2, 13, 17, generator=_g),
     5: torch.rand(1, 2, 5, 7, 6, generator=_g)}
GRID4 = torch.rand(1, 5, 6, 2, generator=_g) * 2.4 - 1.2
GRID5 = torch.rand(1, 3, 4, 5, 3, generator=_g) * 2.4 - 1.2
W, B = torch.randn(3, 2, 3, 3, generator=_g), torch.randn(3, generator=_g)
OFFSET, MASK = torch.randn(1, 18, 13, 17, generator=_g), torch.rand(1, 9, 13, 17, generator=_g)

_MODES = (("nearest", 3), ("nearest", 4), ("nearest", 5), ("nearest-exact", 4), ("nearest-exact", 5),
          ("linear", 3), ("bilinear", 4), ("bicubic", 4), ("trilinear", 5))
_LENGTHS = ({"scale_factor": 0.6}, {"scale_factor": 1.7}, {"scale_factor": 3.0}, {"size": "5.."},
            {"scale_factor": 0.6, "recompute_scale_factor": True})


def _interpolate_cases():
    for (mode, rank), lengths in itertools.product(_MODES, _LENGTHS):
        for align in (None,) if "nearest" in mode else (False, True):
            kw = dict(lengths, mode=mode, **({} if align is None else {"align_corners": align}))
            if kw.get("size") == "5..":
                kw["size"] = tuple(range(5, 5 + rank - 2))
            yield f"{kw}", (lambda x, kw=kw: F.interpolate(x, **kw)), (X[rank],)
    for mode, lengths in itertools.product(("bilinear", "bicubic"), ({"scale_factor": 0.4}, {"scale_factor": 0.6},
                                                                     {"size": (7, 30)}, {"scale_factor": 1.5})):
        kw = dict(lengths, mode=mode, antialias=True)
        yield f"{kw}", (lambda x, kw=kw: F.interpolate(x, **kw)), (X[4],)


def _other_cases():
    # nearest with reflection at align_corners=False is refused (PyTorch rounds after reflecting: see
    # test_convert_torch.py); at align_corners=True it converts, 4-D and 5-D
    for m, p, ac in itertools.product(("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"),
                                      (False, True)):
        if (m, p, ac) != ("nearest", "reflection", False):
            yield f"grid_sample 4-D {m} {p} align_corners={ac}", \
                (lambda x, g, m=m, p=p, ac=ac: F.grid_sample(x, g, mode=m, padding_mode=p, align_corners=ac)), \
                (X[4], GRID4)
    for m, p in itertools.product(("bilinear", "nearest"), ("zeros", "border", "reflection")):
        ac = (m, p) == ("nearest", "reflection")
        yield f"grid_sample 5-D {m} {p}", \
            (lambda x, g, m=m, p=p, ac=ac: F.grid_sample(x, g, mode=m, padding_mode=p, align_corners=ac)), \
            (X[5], GRID5)
    yield "deform_conv2d", (lambda x, o: tv.ops.deform_conv2d(x, o, W, B, padding=(1, 1))), (X[4], OFFSET)
    yield "deform_conv2d mask", (lambda x, o, m: tv.ops.deform_conv2d(x, o, W, B, padding=(1, 1), mask=m)), \
        (X[4], OFFSET, MASK)
    yield "float64 bilinear 0.6", (lambda x: F.interpolate(x, scale_factor=0.6, mode="bilinear")), (X[4].double(),)


CASES = {name: (fn, inputs) for name, fn, inputs in [*_interpolate_cases(), *_other_cases()]}


@pytest.mark.parametrize("case", list(CASES))
def test_call_converts_exactly(case, tmp_path):
    fn, inputs = CASES[case]
    conv = api.convert(Call(fn), tmp_path / "m.xml", example_inputs=inputs)
    (call,) = calls(torch.export.export(Call(fn), inputs))
    assert [r.node for r in conv.records] == [call.name]
    (got,), _ = run_xml(conv.output, inputs, extension=conv.files.get("extension"))
    arrays = [t.numpy() for t in inputs]
    if isinstance(call.ir, DeformConvIR):  # the oracle's order: X, W, offset, B[, mask]
        arrays = [arrays[0], W.numpy(), arrays[1], B.numpy(), *arrays[2:]]
    r = against_oracle(call.ir, got, fn(*inputs).numpy(), arrays)
    assert r.ok, r
