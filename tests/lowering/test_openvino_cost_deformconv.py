"""The default policy weighs DeformConv too: OpenVINO's DeformableConvolution-8 runs a group other than 1 on its
scalar reference path (20-55x the extension, measured), and is slower with few channels per offset group; the
cost model's DeformConv rates are per multiply-accumulate, by those classes (``cost_timing.DEFORM_VARIANTS``).
Fixed tables (``cost.using``) make the choices the same on every machine."""

import functools
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ov = pytest.importorskip("openvino")

from resample_bridge.lowering.openvino import cost  # noqa: E402
from resample_bridge.lowering.openvino.target import convert as _convert  # noqa: E402

# The cost model weighs the extension under --prefer fastest (the default is portable since issue 42).
convert = functools.partial(_convert, prefer="fastest")
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def _deformconv(x_shape, oc, group=1, offset_group=1, strides=(1, 1), dims=None):
    """A 3x3 DeformConv with a mask and pads 1; ``dims``: X's declared shape (names for lengths known at run
    time)."""
    n, c, h, w = x_shape
    oh, ow = [(d + 2 - 2 - 1) // s + 1 for d, s in zip((h, w), strides)]
    taps = 9 * offset_group
    shapes = {"X": [n, c, h, w], "O": [n, 2 * taps, oh, ow], "M": [n, taps, oh, ow]}
    declared = {"X": dims or shapes["X"], "O": shapes["O"] if dims is None else [n, 2 * taps, "oh", "ow"],
                "M": shapes["M"] if dims is None else [n, taps, "oh", "ow"]}
    rng = np.random.default_rng(0)
    wt = (rng.standard_normal((oc, c // group, 3, 3)) / np.sqrt(9 * c // group)).astype(np.float32)
    node = helper.make_node("DeformConv", ["X", "W", "O", "", "M"], ["Y"], name="dc", pads=[1] * 4,
                            strides=list(strides), group=group, offset_group=offset_group)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v)
                                        for k, v in declared.items()],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(wt, "W")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)
    feeds = [rng.standard_normal(shapes["X"]), 1.5 * rng.standard_normal(shapes["O"]),
             rng.uniform(0, 1, shapes["M"])]
    macs = n * oc * (c // group) * 9 * oh * ow
    x, off, mask = (f.astype(np.float32) for f in feeds)
    return model, (x, wt, off, None, mask), macs  # in the oracle's order (W, then the absent bias)


def _table(variant, builtin, extension, **more):
    return cost.Calibration({f"builtin/deformconv/{variant}": builtin, f"extension/deformconv/{variant}": extension,
                             "copy": 0.0, "layout": 0.0, **more}, "the test's table")


def _ir(model):
    (_, ir), = parse_model(model)
    return ir


@pytest.mark.compiled
@pytest.mark.parametrize("prefer, rung", [("fastest", 4), ("builtin", 2)])
def test_a_grouped_deformconv_takes_the_extension_where_estimated_faster(tmp_path, prefer, rung):
    """Group 2: the grouped rates (here 20x apart) weigh multiply-accumulates, N x OC x C/group x 9 x OH x OW;
    the extension taken is proven and exact; ``--prefer builtin`` keeps DeformableConvolution-8."""
    from resample_bridge.lowering import compiled

    model, feeds, macs = _deformconv((1, 8, 10, 12), 8, group=2)
    onnx.save(model, tmp_path / "m.onnx")
    with cost.using(_table("grouped", 1.0, 0.05)):
        ov_model, (rec,) = convert(str(tmp_path / "m.onnx"), prefer=prefer)
    assert rec.rung == rung, rec.summary()
    if rung == 4:
        assert rec.extra["cost"]["chosen_ms"] == pytest.approx(macs / 1e6)
        assert rec.extra["cost"]["extension_ms"] == pytest.approx(0.05 * macs / 1e6)
        assert "cost model: 20x faster than DeformableConvolution-8 (rung 2)" in rec.reason, rec.reason
        assert rec.tried[-1][0] == 2 and "estimates the extension faster" in rec.tried[-1][2]
    else:
        assert "cost" not in rec.extra
    core = ov.Core()
    if rung == 4:
        core.add_extension(compiled.openvino_extension())
    ir = _ir(model)
    x, _, off, _, mask = feeds
    got = core.compile_model(ov_model, "CPU", F32)([x, off, mask])[0]
    result = against_oracle(ir, got, run(ir, *feeds), feeds)
    assert result.ok, result


@pytest.mark.parametrize("channels, offset_group, variant", [
    (32, 4, "offset-groups"),  # 8 channels per offset group: the JIT's slower case
    (32, 2, "plain"),          # 16 per group: as fast as one group
    (32, 1, "plain"),
])
def test_offset_groups_read_their_rates_below_16_channels_each(channels, offset_group, variant):
    model, _, macs = _deformconv((1, channels, 6, 6), 8, offset_group=offset_group)
    est = cost.estimate(_ir(model), 2, (1, channels, 6, 6), _table(variant, 2.0, 1.0))
    assert est["chosen_ms"] == pytest.approx(2.0 * macs / 1e6)
    other = "plain" if variant != "plain" else "offset-groups"
    assert cost.estimate(_ir(model), 2, (1, channels, 6, 6), _table(other, 2.0, 1.0)) is None


def test_strides_and_reorders_count_the_convolution_s_own_sizes():
    """Stride 2 halves the output (and the multiply-accumulates); the reorders around the extension are charged
    on X's and Y's elements."""
    model, _, macs = _deformconv((2, 4, 9, 7), 6, strides=(2, 2))
    assert macs == 2 * 6 * 4 * 9 * 5 * 4
    est = cost.estimate(_ir(model), 2, (2, 4, 9, 7), _table("plain", 1.0, 1.0, copy=0.5))
    assert est["chosen_ms"] == pytest.approx(macs / 1e6)
    assert est["extension_ms"] == pytest.approx((macs + 0.5 * (2 * 4 * 9 * 7 + 2 * 6 * 5 * 4)) / 1e6)


def test_lengths_known_at_run_time_compare_per_multiply_accumulate():
    """H and W named: the rates compare per multiply-accumulate, each fixed cost spread over the reference
    outputs, each output element C/group x 9 of them."""
    model, _, _ = _deformconv((1, 8, 10, 12), 8, group=2, dims=[1, 8, "h", "w"])
    ir = _ir(model)
    table = _table("grouped", 1.0, 0.05, **{"fixed/builtin/deformconv/grouped": 9000.0})
    est = cost.estimate(ir, 2, ir.input_shape, table)
    assert est["chosen_ns"] == pytest.approx(1.0 + 9000.0 / (4 * 9) / cost.REFERENCE_OUTPUTS)
    assert est["extension_ns"] == pytest.approx(0.05)
    assert "cost model: 20x faster per multiply-accumulate than x" in cost._faster(est, 2, "x", table)


def test_the_reference_table_has_every_deformconv_class():
    from resample_bridge.lowering.openvino.cost_timing import DEFORM_VARIANTS

    rates = json.loads(cost.REFERENCE.read_text())["rates"]
    for variant in DEFORM_VARIANTS:
        for cls in ("builtin", "extension"):
            assert rates.get(f"{cls}/deformconv/{variant}", 0) > 0, (cls, variant)
    # What sent the class here: the reference path of a group other than 1, many times the extension's time.
    assert rates["builtin/deformconv/grouped"] > 5 * rates["extension/deformconv/grouped"]
