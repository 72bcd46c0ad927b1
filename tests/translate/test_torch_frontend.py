"""The PyTorch frontend (translate/torch.py): every call form exported with torch.export, parsed, run by the
ORACLE and judged against PyTorch eager under the one tolerance policy (float32 nearest: tie indices of the
IR's own ``diff`` excepted). What the IR cannot express is refused with the node and the field."""

import dataclasses
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from resample_bridge.semantics import reference  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.errors import BridgeError  # noqa: E402
from resample_bridge.translate.torch import (  # noqa: E402
    calls, dynamic_inputs, lengths_at, parse_program, probe_lengths)
from tests.helpers.torch_forms import export, judge, probe  # noqa: E402

pytestmark = pytest.mark.torch

# Non-integer scales (0.4 / 0.6 / 1.7 are not dyadic; 0.6 on 10 is the float64 length rule's own case),
# 1.05 leaves some lengths unchanged, odd / even / length-1 sizes.
KWARGS_2D = [dict(scale_factor=0.4), dict(scale_factor=0.6), dict(scale_factor=1.7), dict(scale_factor=(1.05, 2.7)),
             dict(scale_factor=0.6, recompute_scale_factor=True), dict(scale_factor=1.7, recompute_scale_factor=True),
             dict(size=(1, 7)), dict(size=(13, 1)), dict(size=(10, 52)), dict(size=(21, 8)), dict(size=(1, 1))]
SHAPES_2D = [(1, 3, 10, 13), (2, 2, 3, 6)]
MODES_2D = [("nearest", False, None), ("nearest-exact", False, None), ("bilinear", False, False),
            ("bilinear", False, True), ("bicubic", False, False), ("bicubic", False, True), ("bilinear", True, False),
            ("bicubic", True, False)]
# Refused on purpose (tests below): nearest 2-D where a user scale lands on twice the length, antialias to width 1.
REFUSED = {("nearest", "(1.05, 2.7)")}


def _cases_2d():
    for (mode, aa, ac), kw, shape in itertools.product(MODES_2D, KWARGS_2D, SHAPES_2D):
        if aa and kw.get("size") == (13, 1):
            continue
        if shape == (2, 2, 3, 6) and kw.get("scale_factor") in (0.4, 0.6):
            continue  # a zero length: PyTorch refuses the call itself
        yield pytest.param(mode, aa, ac, kw, shape, id=f"{mode}-aa{int(aa)}-ac{ac}-{kw}-{shape}")


def _assert_exact(fn, *inputs, **kw):
    ir, r = judge(fn, *inputs, **kw)
    assert r.ok, f"{ir}\n{r}"
    return ir


@pytest.mark.parametrize("mode, aa, ac, kw, shape", list(_cases_2d()))
def test_interpolate_2d(mode, aa, ac, kw, shape):
    _assert_exact(lambda x: F.interpolate(x, mode=mode, align_corners=ac, antialias=aa, **kw), probe(shape))


@pytest.mark.parametrize("mode, ac", [("nearest", None), ("nearest-exact", None), ("linear", False),
                                      ("linear", True)])
@pytest.mark.parametrize("kw", [dict(scale_factor=0.6), dict(scale_factor=1.7), dict(scale_factor=2.5),
                                dict(size=1), dict(size=17), dict(scale_factor=0.6, recompute_scale_factor=True)])
def test_interpolate_1d(mode, ac, kw):
    _assert_exact(lambda x: F.interpolate(x, mode=mode, align_corners=ac, **kw), probe((2, 3, 10)))


@pytest.mark.parametrize("mode, ac", [("nearest", None), ("nearest-exact", None), ("trilinear", False),
                                      ("trilinear", True)])
@pytest.mark.parametrize("kw", [dict(scale_factor=(0.6, 1.7, 1.05)), dict(size=(1, 5, 9)),
                                dict(scale_factor=0.6, recompute_scale_factor=True)])
def test_interpolate_3d(mode, ac, kw):
    _assert_exact(lambda x: F.interpolate(x, mode=mode, align_corners=ac, **kw), probe((1, 2, 5, 6, 7)))


@pytest.mark.parametrize("mode, aa, ac", MODES_2D)
def test_interpolate_float64(mode, aa, ac):
    ir = _assert_exact(lambda x: F.interpolate(x, scale_factor=(0.6, 1.7), mode=mode, align_corners=ac,
                                               antialias=aa), probe((1, 2, 10, 13), torch.float64))
    assert ir.dtype == "float64"


def test_float64_length_rule_is_the_one_pytorch_computes():
    """10 * 0.6 is 6.0 in float64 (PyTorch's length) and 5.99... exactly: the exact floor rule gets the output
    shape wrong, the IR's floor_fp64 gets it right."""
    fn = lambda x: F.interpolate(x, scale_factor=0.6, mode="bilinear")  # noqa: E731
    x = probe((1, 1, 10, 10))
    (_, ir), = parse_program(export(fn, x))
    assert ir.size_rule == "floor_fp64" and ir.scale_source == "user"
    assert reference.run(ir, x.numpy()).shape == tuple(fn(x).shape)
    exact_floor = dataclasses.replace(ir, size_rule="floor")
    assert reference.run(exact_floor, x.numpy()).shape != tuple(fn(x).shape)


def test_user_scale_enters_the_coordinate_map():
    """scale_factor=1.75 without recompute: PyTorch maps by 1/1.75, not by 10/17; the IR says so, and the ratio
    reading computes other numbers (so the comparison can fail)."""
    fn = lambda x: F.interpolate(x, scale_factor=1.75, mode="bilinear")  # noqa: E731
    x = probe((1, 1, 10, 10))
    (_, ir), = parse_program(export(fn, x))
    ratio = dataclasses.replace(ir, scale_source="ratio")
    assert not against_oracle(ratio, fn(x).numpy(), reference.run(ratio, x.numpy()), [x.numpy()]).ok


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("mode, pad, ac", [(m, p, a) for m in ("bilinear", "nearest", "bicubic")
                                           for p in ("zeros", "border", "reflection") for a in (False, True)])
def test_grid_sample_2d(mode, pad, ac, dtype):
    x = probe((2, 3, 5, 7), dtype)
    g = torch.rand((2, 6, 4, 2), generator=torch.Generator().manual_seed(1), dtype=dtype) * 2.6 - 1.3
    g.view(-1)[:6] = torch.tensor([-1, 1, 0, 0.5, -0.5, 1.2], dtype=dtype)  # corners, a centre tie, outside
    if _rounds_last(mode, pad, ac, x, g):
        return
    ir = _assert_exact(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=ac), x, g)
    assert ir.padding == pad and ir.align_corners == ac and ir.padding_on == "taps"


def _rounds_last(mode, pad, ac, x, g) -> bool:
    """Nearest with reflection and align_corners=False, which PyTorch rounds after reflecting (ONNX before): refused
    naming the field (tests/tools/test_convert_torch.py shows the orders differ)."""
    if (mode, pad, ac) != ("nearest", "reflection", False):
        return False
    with pytest.raises(BridgeError) as e:
        parse_program(export(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=ac), x, g))
    assert e.value.field == "padding_mode"
    return True


@pytest.mark.parametrize("mode, pad, ac", [(m, p, a) for m in ("bilinear", "nearest")
                                           for p in ("zeros", "border", "reflection") for a in (False, True)])
def test_grid_sample_3d(mode, pad, ac):
    x = probe((2, 3, 4, 5, 6))
    g = torch.rand((2, 3, 4, 5, 3), generator=torch.Generator().manual_seed(1)) * 2.6 - 1.3
    if not _rounds_last(mode, pad, ac, x, g):
        _assert_exact(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=ac), x, g)


@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("stride, pad, dil, groups, og", [(1, 1, 1, 1, 1), (2, 0, 1, 2, 1), (1, 2, 2, 1, 2)])
def test_deform_conv2d(mask, stride, pad, dil, groups, og):
    tv = pytest.importorskip("torchvision")
    x, w = probe((2, 4, 9, 8)), probe((6, 4 // groups, 3, 3), seed=2) / 10
    ho, wo = (9 + 2 * pad - dil * 2 - 1) // stride + 1, (8 + 2 * pad - dil * 2 - 1) // stride + 1
    off = torch.randn(2, og * 18, ho, wo, generator=torch.Generator().manual_seed(3)) * 2
    m = torch.rand(2, og * 9, ho, wo, generator=torch.Generator().manual_seed(4)) if mask else None
    b = torch.randn(6, generator=torch.Generator().manual_seed(5))
    args = [x, w, off, b] + ([m] if mask else [])
    fn = lambda x, w, off, b, *m: tv.ops.deform_conv2d(x, off, w, b, stride=stride, padding=pad,  # noqa: E731
                                                        dilation=dil, mask=m[0] if m else None)
    ir = _assert_exact(fn, *args, oracle_inputs=[a.numpy() for a in args])
    assert (ir.group, ir.offset_group, ir.has_mask) == (groups, og, mask)


def test_dynamic_shapes_parse_and_hold_at_other_shapes():
    """Dynamic H and W: the IR keeps them unknown and computes PyTorch's numbers at shapes other than the
    export's."""
    h, w = torch.export.Dim("h", min=4, max=64), torch.export.Dim("w", min=4, max=64)
    fns = [lambda x: F.interpolate(x, scale_factor=0.6, mode="bilinear"),
           lambda x: F.interpolate(x, size=(9, 5), mode="bicubic", align_corners=True),
           lambda x: F.interpolate(x, scale_factor=1.7, mode="nearest-exact")]
    for fn in fns:
        (_, ir), = parse_program(export(fn, probe((1, 2, 10, 12)), dynamic_shapes=(({2: h, 3: w},),)))
        assert ir.input_shape[2:] == (None, None)
        for shape in [(1, 2, 7, 23), (1, 2, 31, 5)]:
            x = probe(shape, seed=3)
            got, want = reference.run(ir, x.numpy()), fn(x).numpy()
            assert against_oracle(ir, want, got, [x.numpy()]).ok


def test_derived_lengths_step_their_symbol():
    """An input length given to torch.export as a multiple (8*h): every probe length is one the program admits,
    and a call's size in the symbol's own terms (h, w: a patch grid) is known at each of them."""
    h, w = torch.export.Dim("h", min=2, max=16), torch.export.Dim("w", min=2, max=16)
    fn = lambda x: F.interpolate(x[:, :, ::8, ::8], size=(x.shape[2] // 8, x.shape[3] // 8), mode="bicubic")  # noqa
    program = export(fn, probe((1, 2, 48, 40)), dynamic_shapes=(({2: 8 * h, 3: 8 * w},),))
    dims = dynamic_inputs(program)
    rounds = probe_lengths(dims)
    shapes = [[d if isinstance(d, int) else int(d[0].xreplace(r)) for d in dims[0]] for r in rounds]
    assert shapes == [[1, 2, 48, 40], [1, 2, 56, 48], [1, 2, 96, 80]]
    (call,) = calls(program)
    assert [lengths_at(call.sym_sizes, r) for r in rounds] == [[6, 5], [7, 6], [12, 10]]
    with pytest.raises(BridgeError) as e:
        lengths_at(call.sym_sizes, {})
    assert e.value.field == "sizes"


@pytest.mark.parametrize("args, exact", [(([7, 9], False, 0.6, 0.6), True), (([7, 9], False, None, None), True),
                                         (([7, 9], False, 0.5, 0.5), False)])
def test_default_overload_sizes_with_scales(args, exact):
    """``.default`` takes the sizes for the lengths and the scales for the map: kept where the float64 rule of
    those scales gives those sizes, refused at the scales otherwise."""
    x = probe((1, 2, 12, 15))
    fn = lambda x: torch.ops.aten.upsample_bilinear2d.default(x, *args)  # noqa: E731
    if exact:
        _assert_exact(fn, x)
    else:
        with pytest.raises(BridgeError) as e:
            parse_program(export(fn, x))
        assert e.value.field == "scales_h" and e.value.node == "upsample_bilinear2d"


@pytest.mark.parametrize("fn, field", [
    (lambda x: F.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True, align_corners=True),
     "align_corners"),
    (lambda x: F.interpolate(x, scale_factor=(1.0, 2.05), mode="nearest"), "scale_factor"),
    (lambda x: F.interpolate(x, size=(20, 1), mode="bilinear", antialias=True), "output_size"),
    (lambda x: F.interpolate(x.half(), scale_factor=2.0, mode="bilinear"), "dtype"),
])
def test_refusals_name_node_and_field(fn, field):
    found = calls(export(fn, probe((1, 3, 10, 10))))
    assert len(found) == 1 and found[0].ir is None
    assert found[0].error.field == field and found[0].error.node == found[0].name
    with pytest.raises(BridgeError):
        parse_program(export(fn, probe((1, 3, 10, 10))))


def test_refused_forms_are_really_off():
    """The two kernel quirks refused above are real: PyTorch's numbers there are not the IR's nearest reading
    of the same call (dst >> 1 for a 2.05 scale) nor a column's own antialias (width 1)."""
    x = probe((1, 1, 10, 3))
    y = F.interpolate(x, scale_factor=(2.05, 1.0), mode="nearest")
    rows = [int(torch.nonzero(x[0, 0, :, 0] == v)[0]) for v in y[0, 0, :, 0]]
    assert rows == [o >> 1 for o in range(20)] != [min(int(np.floor(o / 2.05)), 9) for o in range(20)]
    y = F.interpolate(probe((1, 3, 10, 2)), size=(20, 1), mode="bilinear", antialias=True)
    assert torch.all(y == y[:, :, :1])


class Nearest(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=0.6, mode="nearest")


def test_calls_record_the_user_source():
    (c,) = calls(torch.export.export(Nearest(), (probe((1, 1, 10, 10)),)))
    assert c.code == 'return F.interpolate(x, scale_factor=0.6, mode="nearest")'
    assert c.where.endswith(f"test_torch_frontend.py:{Nearest.forward.__code__.co_firstlineno + 1}")
    assert c.op == "aten.upsample_nearest2d.vec" and c.ir.origin == c.op and c.name == "upsample_nearest2d"
    assert c.user_call() == "F.interpolate(mode='nearest', scale_factor=(0.6, 0.6))"
