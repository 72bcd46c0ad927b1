"""Resize antialias (linear, cubic) with lengths known only at run time on OpenVINO: rung 3's window computed in
the graph (lowering/openvino/antialias_taps.py). The default conversion writes no library and only standard
opsets; the written model, run on OpenVINO CPU at several input shapes (length 1, odd lengths, extreme ratios),
equals the oracle within the float32 error bound and onnxruntime within the model tolerance, and under the bf16
hint differs only by value rounding (``tolerance.reduced_bound``); the proof re-reads the window from the
produced model and refuses one that computes another map."""

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from resample_bridge.lowering.openvino import antialias_taps as at  # noqa: E402
from resample_bridge.lowering.openvino import convert  # noqa: E402
from resample_bridge.lowering.openvino.prove import prove  # noqa: E402
from resample_bridge.semantics import tolerance  # noqa: E402
from resample_bridge.semantics.compare import outside  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.semantics.window_form import window_form  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.written import written_default  # noqa: E402
from tests.helpers.precision import needs_bf16  # noqa: E402
from tests.helpers.sandwich import between_identity_convs  # noqa: E402

# (x H, W), (reference H, W): up, down, out == 1, in == 1, odd lengths, extreme ratios both ways
PAIRS = [((3, 4), (7, 9)), ((9, 7), (4, 3)), ((5, 5), (1, 1)), ((1, 1), (6, 5)), ((1, 6), (4, 1)),
         ((40, 3), (2, 30)), ((13, 5), (17, 2))]
HALVED = [(2, 3), (7, 9), (16, 31), (33, 2), (64, 48)]  # sizes = Shape(x) // 2
SCALED = [(1, 1), (2, 3), (7, 9), (16, 31), (33, 2)]


def _resize(inputs, mode, coord, exclude, **kw):
    return helper.make_node("Resize", inputs, ["Y"], mode=mode, antialias=1, exclude_outside=int(exclude),
                            coordinate_transformation_mode=coord, cubic_coeff_a=-0.5, name="r", **kw)


def _model(nodes, inputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


def _ints(**named):
    return [onnx.numpy_helper.from_array(np.array(v, np.int64), n) for n, v in named.items()]


def fpn_model(mode, coord, exclude):
    """F.interpolate(x, size=ref.shape[-2:], antialias=True): sizes = Concat(Shape(x)[:2], Shape(ref)[2:])."""
    nodes = [helper.make_node("Shape", ["X"], ["sx"]), helper.make_node("Shape", ["Ref"], ["sr"]),
             helper.make_node("Slice", ["sx", "z", "two"], ["nc"]), helper.make_node("Slice", ["sr", "two", "four"], ["hw"]),
             helper.make_node("Concat", ["nc", "hw"], ["S"], axis=0), _resize(["X", "", "", "S"], mode, coord, exclude)]
    return _model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"]),
                          helper.make_tensor_value_info("Ref", TensorProto.FLOAT, [1, 2, "h2", "w2"])],
                  _ints(z=[0], two=[2], four=[4]))


def halved_model(mode, coord, exclude):
    """torchvision's resize to half the run-time size, as exported: sizes = Concat(Shape(x)[:2], Shape(x)[2:] / 2)."""
    nodes = [helper.make_node("Shape", ["X"], ["sx"]), helper.make_node("Slice", ["sx", "z", "two"], ["nc"]),
             helper.make_node("Slice", ["sx", "two", "four"], ["hw"]), helper.make_node("Div", ["hw", "two"], ["half"]),
             helper.make_node("Concat", ["nc", "half"], ["S"], axis=0), _resize(["X", "", "", "S"], mode, coord, exclude)]
    return _model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, "h", "w"])],
                  _ints(z=[0], two=[2], four=[4]))


def scaled_model(mode, coord, exclude, scale):
    """A constant scale on a dynamic input."""
    s = onnx.numpy_helper.from_array(np.array([1, 1, scale, scale], np.float32), "S")
    return _model([_resize(["X", "", "S"], mode, coord, exclude)],
                  [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"])], [s])


def _feeds(model, shapes, rng):
    names = [i.name for i in model.graph.input]
    return {n: rng.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}


def _oracle(ir, x, out_hw):
    return run(ir, x, None, None, np.array(list(x.shape[:2]) + list(out_hw), np.int64)) if ir.sizes is not None \
        else run(ir, x, None, np.array([1, 1] + [float(s) for s in ir.scales[-2:]], np.float32), None)


def _written(model, tmp_path):
    return written_default(model, tmp_path, at.FORM)


def _check_runs(model, tmp_path, shapes_list, out_hw_of):
    """The written model at each input shape: the oracle within the float32 bound, onnxruntime within the model
    tolerance, and under the bf16 hint the oracle within the bf16 bound (values rounded, no tap moved)."""
    xml, src = _written(model, tmp_path)
    (ir,) = [ir for _, ir in parse_model(src)]
    core = ov.Core()
    f32 = core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    bf16 = core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    atol, rtol = tolerance.model_tolerance(np.float32)
    for shapes in shapes_list:
        feeds = _feeds(model, shapes, rng)
        x = feeds["X"]
        want = _oracle(ir, x, out_hw_of(shapes))
        bound = tolerance.float_bound(ir, x, None, None, np.array(want.shape, np.int64))
        got = f32(list(feeds.values()))[0]
        assert got.shape == want.shape and not outside(got, want, bound).any(), (shapes, np.abs(got - want).max())
        ref = sess.run(None, feeds)[0]
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol * max(1.0, float(np.abs(ref).max())))
        low = bf16(list(feeds.values()))[0]
        reduced = tolerance.reduced_bound(ir, want, bound, [x, None, None, np.array(want.shape, np.int64)], "bf16")
        assert not outside(low, want, reduced).any(), (shapes, np.abs(low - want).max())


@pytest.mark.parametrize("mode,coord,exclude", [("cubic", "half_pixel", True), ("linear", "half_pixel", False),
                                                ("cubic", "pytorch_half_pixel", False),
                                                ("linear", "align_corners", True)])
def test_sizes_from_another_shape(mode, coord, exclude, tmp_path):
    shapes = [[(1, 2, *a), (1, 2, *b)] for a, b in PAIRS]
    _check_runs(fpn_model(mode, coord, exclude), tmp_path, shapes, lambda s: s[1][2:])


@pytest.mark.parametrize("mode", ("linear", "cubic"))
def test_sizes_halved_in_the_graph(mode, tmp_path):
    shapes = [[(1, 3, h, w)] for h, w in HALVED]
    _check_runs(halved_model(mode, "half_pixel", True), tmp_path, shapes, lambda s: (s[0][2] // 2, s[0][3] // 2))


@pytest.mark.parametrize("mode,scale,coord", [("cubic", 0.5, "half_pixel"), ("linear", 0.75, "asymmetric"),
                                              ("cubic", 0.25, "tf_half_pixel_for_nn")])
def test_constant_scales_on_dynamic_input(mode, scale, coord, tmp_path):
    shapes = [[(1, 2, h, w)] for h, w in SCALED if int(h * scale) and int(w * scale)]
    _check_runs(scaled_model(mode, coord, True, scale), tmp_path, shapes,
                lambda s: (int(s[0][2] * scale), int(s[0][3] * scale)))


@pytest.mark.parametrize("mode,scale,coord", [("linear", 1.5, "half_pixel"), ("cubic", 1.5, "half_pixel"),
                                              ("cubic", 1.5, "asymmetric")])
def test_constant_upscale_on_dynamic_input(mode, scale, coord, tmp_path):
    """antialias with a static scale above 1 (F.interpolate(scale_factor=1.5, antialias=True) on dynamic H / W):
    the map reads the scale, so at one element both ways (1 -> floor(1.5) = 1, which the oracle copies) it left two
    float32 weights whose normalised sum rounds below 1; the window form refused and the default wrote the
    library. Now the form copies that axis, as the oracle does."""
    shapes = [[(1, 2, h, w)] for h, w in SCALED]
    _check_runs(scaled_model(mode, coord, False, scale), tmp_path, shapes,
                lambda s: (int(s[0][2] * scale), int(s[0][3] * scale)))


def test_a_scale_without_an_int32_length_takes_the_float_window(tmp_path):
    """0.6f = 10066330 / 2^24: the integer window's floor(in*P/Q) leaves int32, so the scale window computed in
    float32 from the scale (``scale_taps``, proven over lengths at that scale) takes the node, not the extension;
    the written model computes the oracle's numbers."""
    src = tmp_path / "m.onnx"
    model = scaled_model("cubic", "half_pixel", True, 0.6)
    onnx.save(model, src)
    ov_model, (rec,) = convert(str(src), prefer="builtin")
    assert rec.rung == 3 and rec.proof["form"] == "scale_taps", rec.summary()
    (_, ir), = parse_model(str(src))
    x = np.random.default_rng(2).standard_normal((1, 2, 17, 40)).astype(np.float32)
    got = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    want = run(ir, x, None, None, None)
    assert got.shape == want.shape and not outside(got, want, tolerance.float_bound(ir, x, None, None, None)).any()


def test_proof_refuses_another_map(tmp_path):
    """The re-read window is proven against the source IR: the same model judged against another coordinate
    mode fails (the proof can fail)."""
    src = tmp_path / "m.onnx"
    onnx.save(fpn_model("cubic", "half_pixel", True), src)
    ov_model, records = convert(str(src), prefer="builtin")
    assert prove(ov_model, records) == []
    (rec,) = records
    wrong = dataclasses.replace(rec, ir=dataclasses.replace(rec.ir, coord="asymmetric"))
    assert any("tap weights differ" in f for f in prove(ov_model, [wrong]))


def _tap_sum_of(ov_model, axis):
    """The op tagged as the tap sum of ``axis`` of node "r" in ``ov_model``."""
    from resample_bridge.lowering.openvino.graph import TAG

    (op,) = [op for op in ov_model.get_ops() if TAG in op.get_rt_info() and
             str(op.get_rt_info()[TAG].astype(str)) == at.tag_of("r", axis, "sum")]
    return op


@pytest.mark.parametrize("tamper", ("weights", "layout", "last weights", "ones"))
def test_proof_reads_the_matmuls_of_the_tap_sums(tamper, tmp_path):
    """The next-to-last axis sums its taps by a MatMul of the weights [out, 1, K] by the Gather, the last by a
    MatMul of ones [1, K] by the Gather times the weights; the proof reads the weights the model multiplies by
    (doubled there: refused by the grid), the MatMul's layout (the weights unsqueezed on another axis) and the
    ones (twos: refused by structure)."""
    import openvino.opset13 as op

    src = tmp_path / "m.onnx"
    onnx.save(fpn_model("linear", "half_pixel", False), src)
    ov_model, records = convert(str(src), prefer="builtin")
    assert prove(ov_model, records) == []
    two = op.constant(np.float32(2))
    for axis in (2, 3):
        squeeze = _tap_sum_of(ov_model, axis)
        assert (squeeze.get_type_name(), squeeze.input_value(0).get_node().get_type_name()) == ("Squeeze", "MatMul")
    mm = _tap_sum_of(ov_model, 2 if tamper in ("weights", "layout") else 3).input_value(0).get_node()
    a, b = (v.get_node() for v in mm.input_values())
    if tamper == "weights":
        target, new, want = mm.input(0), op.unsqueeze(op.multiply(a.input_value(0), two), op.constant(np.int64(1))), \
            "axis 2: tap weights differ"
    elif tamper == "layout":
        target, new, want = mm.input(0), op.unsqueeze(a.input_value(0), op.constant(np.int64(0))), \
            "axis 2: the taps are not a MatMul"
    elif tamper == "last weights":
        target, new, want = b.input(1), op.multiply(b.input_value(1), two), "axis 3: tap weights differ"
    else:
        target, new, want = a.input(0), two, "axis 3: the taps are not a Multiply"
    target.replace_source_output(new.output(0))
    assert any(want in f for f in prove(ov_model, records)), prove(ov_model, records)


def test_grid_verdict_reads_the_window_in_its_layout():
    """Each layout's window passes the grid read in its own layout and fails read in the other (a window whose
    taps the MatMul would pair with the wrong outputs)."""
    (_, ir), = parse_model(fpn_model("cubic", "half_pixel", False))
    form = window_form(ir)
    for along in (0, 1):
        assert at.grid_verdict(at._standalone(form, along), ir, form, taps_axis=along) is None
        assert at.grid_verdict(at._standalone(form, along), ir, form, taps_axis=1 - along) is not None


@pytest.mark.slow
@pytest.mark.parametrize("taps_axis", (0, 1))
def test_window_grid_near_the_int32_bound(taps_axis, monkeypatch):
    """The window subgraph alone at lengths near MAX_LEN, where its int32 numerators are largest, in both
    layouts ([K, out], and [out, K] for the next-to-last axis' MatMul)."""
    monkeypatch.setattr(at, "GRID", [(at.MAX_LEN, at.MAX_LEN - 1), (at.MAX_LEN - 1, at.MAX_LEN)])
    (_, ir), = parse_model(fpn_model("cubic", "half_pixel", False))
    form = window_form(ir)
    model = at._standalone(form, taps_axis)
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
    assert at._grid_mismatch(compiled, ir, form, (None, None), taps_axis) is None


def conv_sandwich():
    """Conv -> antialias cubic halving (sizes computed from the Conv's run-time shape) -> Conv: a Resize between
    layers that OpenVINO runs in bf16 under the bf16 hint."""
    rng = np.random.default_rng(0)
    w1 = onnx.numpy_helper.from_array((rng.standard_normal((8, 3, 3, 3)) * 0.1).astype(np.float32), "w1")
    w2 = onnx.numpy_helper.from_array((rng.standard_normal((4, 8, 3, 3)) * 0.1).astype(np.float32), "w2")
    resize = _resize(["c1", "", "", "S"], "cubic", "half_pixel", True)
    resize.output[0] = "rs"
    nodes = [helper.make_node("Conv", ["X", "w1"], ["c1"], pads=[1] * 4), helper.make_node("Shape", ["c1"], ["sx"]),
             helper.make_node("Slice", ["sx", "z", "two"], ["nc"]), helper.make_node("Slice", ["sx", "two", "four"], ["hw"]),
             helper.make_node("Div", ["hw", "two"], ["half"]), helper.make_node("Concat", ["nc", "half"], ["S"], axis=0),
             resize, helper.make_node("Conv", ["rs", "w2"], ["Y"], pads=[1] * 4)]
    return _model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, "h", "w"])],
                  _ints(z=[0], two=[2], four=[4]) + [w1, w2])


def test_bf16_between_layers_rounds_values_only(tmp_path):
    """Under the bf16 hint, the run-time window between two Conv layers is off from onnxruntime by no more than
    twice what the static conversion (OpenVINO's own op or constant tap tables) is at the same shape (before the
    weights were pinned to f32 (``antialias_taps._quotient``, ``pin_f32``): 8x). Skipped on a CPU without bf16,
    where both run in f32 and differ by float32 noise alone."""
    needs_bf16()
    model = conv_sandwich()
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    x = np.random.default_rng(1).standard_normal((1, 3, 37, 50)).astype(np.float32)
    ref = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    errs = {}
    for name, shapes in (("dynamic", None), ("static", {"X": list(x.shape)})):
        done = api.convert(str(src), str(tmp_path / name / "m.xml"), input_shapes=shapes)
        assert done.extension is None
        bf16 = ov.Core().compile_model(done.output, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
        errs[name] = float(np.abs(bf16([x])[0] - ref).max())
    assert errs["dynamic"] <= 2 * errs["static"], errs


def identity_sandwich(mode, coord, exclude):
    """``fpn_model``'s Resize between two 1x1 Conv layers with identity weights (integer data below 256 stays
    exact in bf16), where OpenVINO's CPU runs float ops in bf16 under the bf16 hint unless they are pinned."""
    return between_identity_convs(fpn_model(mode, coord, exclude))


# Large lengths: a wide downscale, 1 -> 3000, odd ratios near 1 (where bf16 weights were 14x the bound), primes.
LARGE = [((2, 4000), (3, 1500)), ((2, 1), (3, 3000)), ((1, 2424), (1, 2393)), ((2, 1009), (2, 3001)),
         ((5, 997), (4, 331)), ((1, 1906), (1, 950))]


@pytest.mark.parametrize("mode,exclude", [("linear", False), ("cubic", True)])
def test_bf16_between_conv_layers_large_lengths(mode, exclude, tmp_path):
    """Between two Conv layers under the bf16 hint, at large lengths, on dense and on sparse data (where a tap
    that moved or dropped stands out against small outputs): the oracle within the bf16 bound, values rounded
    only. Unpinned (the weights' float ops in bf16) it failed at (2, 1009) -> (2, 3001) cubic, 14x the bound."""
    src = tmp_path / "m.onnx"
    onnx.save(identity_sandwich(mode, "half_pixel", exclude), src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    assert done.records[0].rung == 3 and done.extension is None, done.records[0].summary()
    (ir,) = [ir for _, ir in parse_model(str(src))]
    bf16 = ov.Core().compile_model(done.output, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    rng = np.random.default_rng(5)
    for density in (1.0, 0.05):
        for (h, w), (h2, w2) in LARGE:
            x = (rng.integers(0, 256, (1, 2, h, w)) * (rng.random((1, 2, h, w)) < density)).astype(np.float32)
            got = bf16([x, np.zeros((1, 2, h2, w2), np.float32)])[0]
            sizes = np.array([1, 2, h2, w2], np.int64)
            want = run(ir, x, None, None, sizes)
            bound = tolerance.float_bound(ir, x, None, None, sizes)
            reduced = tolerance.reduced_bound(ir, want, bound, [x, None, None, sizes], "bf16")
            assert got.shape == want.shape and not outside(got, want, reduced).any(), \
                (density, (h, w), (h2, w2), float(np.abs(got - want).max()))


# (in, out, R) where a float quotient alone, run in bf16 between Conv layers, gave another tap half-width
# (measured: 2 for 3 at 175 -> 87 linear, 8 for 9 at 233 -> 29, 2 for 3 at 175 -> 174 cubic, 176 for 175 at 175 -> 2).
HALF_WIDTHS = [(175, 87, 1), (233, 29, 1), (253, 21, 1), (213, 71, 1), (175, 174, 2), (175, 2, 2), (175, 50, 2),
               (1, 3000, 2), (4000, 1500, 2), (16000, 1, 1)]


def test_tap_half_width_between_conv_layers_under_bf16():
    """``antialias_taps.half_width`` (the sizes form's m = ceil(R*in / min(out, in))) computed from a Conv's
    run-time shape and read out through a second Conv under the bf16 hint: exact (a float32 quotient alone fails
    here)."""
    import openvino.opset13 as op

    x = op.parameter([1, 1, -1, -1], np.float32)
    wt = op.constant(np.ones((1, 1, 1, 1), np.float32))
    conv = lambda t: op.convolution(t, wt, [1, 1], [0, 0], [0, 0], [1, 1])  # noqa: E731
    a = conv(x)
    shape = op.shape_of(a, "i64")
    in_len, out_len = (op.gather(shape, op.constant(np.int64(k)), op.constant(np.int64(0))).output(0) for k in (2, 3))
    fn = op.minimum(out_len, in_len).output(0)
    for R in (1, 2):
        m = at.half_width(in_len, fn, R)
        corner = op.slice(a, op.constant([0, 0]), op.constant([1, 1]), op.constant([1, 1]), op.constant([2, 3]))
        model = ov.Model([conv(op.multiply(corner, op.convert(m, "f32")))], [x])
        run_bf16 = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
        for i, o in [(i, o) for i, o, r in HALF_WIDTHS if r == R]:
            want = -(-R * i // min(o, i))
            got = run_bf16([np.ones((1, 1, i, o), np.float32)])[0].item()
            assert got == want, (i, o, R, got, want)  # below 256: exact in the bf16 the Conv reads
