"""The in-graph samplers OpenVINO's frontend reads for us (``lowering/openvino/grid_decompose.py``: the GridSample
decomposition, and the DeformConv decomposition for the ranks DeformableConvolution-8 cannot take) under OpenVINO's
default inference precision (bf16 on this CPU), followed by a Conv as in a real network, so the sampler is not the
graph's tail (which the CPU plugin keeps in f32 anyway): "reduced precision may round values, never move an index"
(issue 42). Their ops are pinned to f32 (``grid_pin.pin_form``); before, the GridSample decomposition's
unnormalisation ran in bf16 and moved nearest picks (4.0 off on values 0..4, measured), and a 1-D DeformConv's
offsets were rounded to bf16 on their way in."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from resample_bridge.semantics.compare import against_oracle  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.tools.dev.fuzz_precision import default_is_reduced  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402

pytestmark = pytest.mark.openvino
MODELS = Path(__file__).resolve().parents[1] / "models"


def _reduced_default():
    if not default_is_reduced():
        pytest.skip("this CPU's default inference precision is f32: nothing is reduced")


def _then_identity_conv(model: onnx.ModelProto, channels: int, rank: int) -> onnx.ModelProto:
    """``model`` with its one output fed through a 1x1 Conv of identity weights (bf16 keeps integers below 256)."""
    g = model.graph
    out = g.output[0].name
    for n in g.node:
        n.output[:] = [o + "_sampled" if o == out else o for o in n.output]
    w = np.eye(channels, dtype=np.float32).reshape((channels, channels) + (1,) * (rank - 2))
    g.initializer.append(numpy_helper.from_array(w, "identity_w"))
    g.node.append(helper.make_node("Conv", [out + "_sampled", "identity_w"], [out], name="after"))
    return model


def _default(model, tmp_path):
    """(compiled at the CPU's default precision, compiled at f32, records) of ``model`` converted with the
    default, after asserting that nothing but standard opsets was written."""
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    assert done.extension is None
    xml = (tmp_path / "out" / "m.xml").read_text()
    assert all(re.fullmatch(r"opset\d+", v) for v in set(re.findall(r'<layer [^>]*version="([^"]+)"', xml)))
    core = ov.Core()
    read = core.read_model(str(tmp_path / "out" / "m.xml"))  # as deployed: the marks take effect from the IR
    return core.compile_model(read, "CPU"), core.compile_model(read, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}), \
        done.records


@pytest.mark.parametrize("name", ["ts16_gridsample_nearest_border_ties", "ts20_gridsample_5d_nearest_border"])
def test_nearest_gridsample_decomposition_before_a_conv_picks_what_onnxruntime_picks(name, tmp_path):
    """Nearest on grids with .5 ties, then an identity Conv: at the bf16 default every value equals onnxruntime's
    (integer data, exact in bf16): a moved pick would be another element."""
    _reduced_default()
    case = MODELS / name
    model = onnx.load(case / "model.onnx")
    shape = [d.dim_value for d in onnx.shape_inference.infer_shapes(model).graph.output[0].type.tensor_type.shape.dim]
    model = _then_identity_conv(model, shape[1], len(shape))
    reduced, _, records = _default(model, tmp_path)
    assert [r.rung for r in records] == [3], [r.summary() for r in records]
    inputs = np.load(case / "inputs.npz")
    feeds = [inputs[k] for k in inputs.files]
    sess = ort.InferenceSession(model.SerializeToString())
    want = sess.run(None, dict(zip([i.name for i in sess.get_inputs()], feeds)))[0]
    assert np.array_equal(want, np.round(want)) and np.abs(want).max() < 256  # the claim rests on exact data
    got = reduced(feeds)[0]
    assert np.array_equal(np.asarray(got, np.float32), want), np.abs(np.asarray(got, np.float32) - want).max()


def _deformconv(D: int, *, mask: bool, bias: bool, batch=2):
    """One DeformConv of spatial rank ``D`` (X [N, 4, 5...], 3-tap kernel, 2 groups, 2 offset groups, padding 1),
    its offsets and mask graph inputs, weights and bias initializers."""
    C, M, k, L, G = 4, 4, 3, 5, 2
    S, K = [L] * D, [k] * D
    rng = np.random.default_rng(D)
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [batch, C] + S),
              helper.make_tensor_value_info("offset", TensorProto.FLOAT, [batch, G * k ** D * D] + S)]
    inits = [numpy_helper.from_array((rng.standard_normal([M, C // G] + K) / math.sqrt(C * k ** D))
                                     .astype(np.float32), "W")]
    names = ["X", "W", "offset", "B" if bias else "", "mask" if mask else ""]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(M).astype(np.float32), "B"))
    if mask:
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT, [batch, G * k ** D] + S))
    while names[-1] == "":
        names.pop()
    node = helper.make_node("DeformConv", names, ["Y"], name="dcn", group=G, offset_group=G, pads=[1] * (2 * D))
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _deform_feeds(model, batch: int, seed: int):
    rng = np.random.default_rng(seed)
    feeds = []
    for vi in model.graph.input:
        shape = [batch if d.dim_param else d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.name == "offset":
            v = rng.standard_normal(shape) * 1.5
            whole = rng.random(shape) < 0.2
            v[whole] = np.round(v[whole])  # whole pixels: taps exactly on the grid
            v.reshape(-1)[::13] = 7.5  # far outside: zero taps
        elif vi.name == "mask":
            v = rng.uniform(0, 1, shape)
        else:
            v = rng.standard_normal(shape)
        feeds.append(v.astype(np.float32))
    return feeds


@pytest.mark.parametrize("D, mask, bias", [(1, True, True), (1, False, False), (3, True, False), (3, False, True)])
def test_one_and_three_d_deformconv_are_decomposed_in_the_graph(D, mask, bias, tmp_path):
    """DeformableConvolution-8 is 2-D only: a 1-D or 3-D DeformConv took the extension library by default. Now the
    DeformConv decomposition (standard opsets), within the oracle's float32 error bound at the f32 hint; at the
    bf16 default what it computes at f32 (the pinned sampler)."""
    model = _deformconv(D, mask=mask, bias=bias)
    reduced, f32, records = _default(model, tmp_path)
    (rec,) = records
    assert rec.rung == 3 and rec.proof.get("form") == "deformconv", rec.summary()
    (_, ir), = parse_model(model)
    for seed in (0, 1):
        feeds = _deform_feeds(model, 2, seed)
        w = numpy_helper.to_array(model.graph.initializer[0])
        b = numpy_helper.to_array(model.graph.initializer[1]) if bias else None
        args = [feeds[0], w, feeds[1], b, feeds[2] if mask else None]
        with np.errstate(invalid="ignore"):
            want = run(ir, *args)
        got = f32(feeds)[0]
        c = against_oracle(ir, got, want, args)
        assert c.ok, c
        assert np.abs(np.asarray(reduced(feeds)[0], np.float64) - got).max() <= 1e-6 * np.abs(got).max()


def test_deformconv_decomposition_before_a_conv_keeps_its_offsets_in_f32(tmp_path):
    """1-D, then an identity Conv, at the bf16 default: the Conv's rounding only (its input rounded to bf16 once,
    2^-9 relative), where offsets rounded to bf16 moved samples by up to 2^-9 of their position."""
    _reduced_default()
    model = _then_identity_conv(_deformconv(1, mask=True, bias=True), 4, 3)
    reduced, f32, _ = _default(model, tmp_path)
    feeds = _deform_feeds(model, 2, 5)
    exact = f32(feeds)[0]
    got = np.asarray(reduced(feeds)[0], np.float64)
    assert np.all(np.abs(got - exact) <= 2.0 ** -8 * np.abs(exact) + 1e-30), np.abs(got - exact).max()


def test_a_dynamic_batch_is_decomposed_and_pinned_too(tmp_path):
    """With a batch known only at run time the CPU plugin runs the sampler op by op and rewrites its Subtracts
    and clips into new, unmarked ops (measured before ``grid_pin._respelled_own``: 0.7% of the output's range off
    under bf16, the sample positions rounded); respelled, the decomposition computes at the bf16 default what it
    computes at f32."""
    model = _deformconv(1, mask=True, bias=False, batch="N")
    reduced, f32, records = _default(model, tmp_path)
    assert [r.rung for r in records] == [3], [r.summary() for r in records]
    for batch, seed in ((1, 3), (3, 4)):
        feeds = _deform_feeds(model, batch, seed)
        exact = np.asarray(f32(feeds)[0], np.float64)
        got = np.asarray(reduced(feeds)[0], np.float64)
        assert got.shape[0] == batch and np.abs(got - exact).max() <= 1e-6 * np.abs(exact).max()


@pytest.mark.parametrize("dtype, x_shape, grid_shape, padding, align", [
    (np.int32, (1, 2, 3, 2, 3), (1, 3, 1, 1, 3), "border", 1),      # 5-D: GridSample-9 is 4-D only
    (np.int32, (1, 1, 3, 3), (1, 5, 4, 2), "reflection", 0),        # a run-time grid next to .5 ties
    (np.uint8, (2, 3, 5, 4), (2, 3, 3, 2), "zeros", 0),
    (np.int16, (1, 2, 4, 5), (1, 6, 2, 2), "zeros", 1),
    (np.int8, (1, 2, 3, 4, 5), (1, 2, 3, 4, 3), "zeros", 0),
])
def test_integer_nearest_gridsample_gathers_in_its_own_type(dtype, x_shape, grid_shape, padding, align, tmp_path):
    """Nearest GridSample of an integer X: a pick moves an element, so the decomposition gathers X in its own
    type (zeros padding: times an integer 0 / 1) instead of the extension library. Bit-equal to the oracle at the
    f32 hint and at the bf16 default, on the probes' grids (.5 ties, one float32 step either side, far outside)
    and values float32 does not hold (int32 2^24 + 1, the type's extremes)."""
    from resample_bridge.lowering.probes import probe_sets

    tp = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", mode="nearest", padding_mode=padding,
                            align_corners=align)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", tp, list(x_shape)),
                                            helper.make_tensor_value_info("grid", TensorProto.FLOAT,
                                                                          list(grid_shape))],
                              [helper.make_tensor_value_info("y", tp, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)
    reduced, f32, records = _default(model, tmp_path)
    assert [r.rung for r in records] == [3], [r.summary() for r in records]
    (_, ir), = parse_model(model)
    info = np.iinfo(dtype)
    x = np.random.default_rng(7).integers(info.min, info.max, x_shape, dtype=dtype, endpoint=True)
    x.reshape(-1)[:3] = info.min, info.max, (2 ** 24 + 1) if dtype == np.int32 else info.max - 1
    sets = [p.arrays[1] for p in probe_sets(ir, [x_shape, grid_shape], [np.dtype(dtype).name, "float32"],
                                            [True, True])]
    for grid in sets:
        want = run(ir, x, grid)
        for compiled in (f32, reduced):
            got = compiled([x, grid])[0]
            assert got.dtype == want.dtype and np.array_equal(got, want), (grid, got, want)

