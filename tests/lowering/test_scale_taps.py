"""Resize linear / cubic (antialias too) with its scales fed at run time, or a static scale on run-time lengths, on
OpenVINO: rung 3's window computed in the graph from the scale (lowering/openvino/scale_taps.py). The default
conversion writes no library and only standard opsets; the written model, run on OpenVINO CPU at several input
shapes and scales (the exact floor of L*s where float32's product rounds up to an integer, scales one ulp beside
1, length 1, up and down), equals the oracle within the float32 error bound and onnxruntime where both give the
same output length, and under the bf16 hint differs only by value rounding; its output length is the exact floor
for every (L, s) tried; the proof re-reads the window from the produced model and refuses one that computes
another map."""

import dataclasses
from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from resample_bridge.lowering.openvino import convert  # noqa: E402
from resample_bridge.lowering.openvino import scale_taps as st  # noqa: E402
from resample_bridge.lowering.openvino.scale_length import FP32_EXACT_OUT  # noqa: E402
from resample_bridge.lowering.openvino.graph import ops  # noqa: E402
from resample_bridge.lowering.openvino.prove import prove  # noqa: E402
from resample_bridge.semantics import tolerance  # noqa: E402
from resample_bridge.semantics.compare import outside  # noqa: E402
from resample_bridge.semantics.lengths import output_length  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.written import written_default  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
# (H, W) inputs and (sH, sW) scales: 10 * 0.7f is 6.99999988 (length 6; float32's product rounds to 7), one ulp
# either side of 1, down to a tenth, up 3.7x, length 1 up
CASES = [((10, 7), (0.7, 0.7)), ((10, 7), (2.0, 2.0)), ((9, 33), (1.0000001, 0.99999994)),
         ((33, 64), (0.5, 3.7)), ((33, 64), (3.0, 0.1)), ((1, 5), (4.0, 1.0)), ((20, 30), (1.5, 1 / 3))]


def scales_model(mode, coord, exclude=False, hw=("h", "w"), axes=None, antialias=False, roi=None):
    """Resize of X [1, 2, h, w] by the run-time scales S (``roi``: tf_crop_and_resize's crop box, a constant)."""
    kw = dict(axes=axes) if axes else {}
    kw.update(antialias=1) if antialias else None
    node = helper.make_node("Resize", ["X", "roi" if roi is not None else "", "S"], ["Y"], mode=mode,
                            coordinate_transformation_mode=coord, exclude_outside=int(exclude), name="r", **kw)
    n = len(axes) if axes else 4
    inits = [onnx.numpy_helper.from_array(np.array(roi, np.float32), "roi")] if roi is not None else []
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, *hw]),
                                            helper.make_tensor_value_info("S", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _written(model, tmp_path):
    return written_default(model, tmp_path, st.FORM)


@pytest.mark.parametrize("mode,coord,exclude,axes,antialias", [
    ("linear", "half_pixel", False, None, False), ("cubic", "half_pixel", False, [2, 3], False),
    ("linear", "pytorch_half_pixel", False, [2, 3], False), ("cubic", "asymmetric", True, None, False),
    ("linear", "align_corners", False, [2, 3], False), ("cubic", "align_corners", False, None, False),
    # antialias: the window's width follows the run-time scale (K = 2*ceil(R / min(s, 1)) taps)
    ("linear", "half_pixel", False, [2, 3], True), ("cubic", "half_pixel", True, None, True),
    ("linear", "asymmetric", False, None, True), ("cubic", "align_corners", False, [2, 3], True),
    # half_pixel_symmetric: its offset L/2 * (1 - out / (L*s)) from the run-time length and scale
    ("linear", "half_pixel_symmetric", False, [2, 3], False), ("cubic", "half_pixel_symmetric", True, None, True)])
def test_default_is_in_graph_and_exact(mode, coord, exclude, axes, antialias, tmp_path):
    model = scales_model(mode, coord, exclude, axes=axes, antialias=antialias)
    xml, src = _written(model, tmp_path)
    runs = [(hw, None if sc is None else np.array(([] if axes else [1.0, 1.0]) + list(sc), np.float32))
            for hw, sc in CASES]
    assert _exact_runs(xml, src, runs, seed=0) >= len(CASES) - 2


def _exact_runs(xml, src, runs, seed: int) -> int:
    """Each (H, W), scales (None: the model's own) of ``runs`` fed to the written model: within the oracle's
    float32 bound at the f32 hint, its reduced bound at bf16, and onnxruntime's numbers where its output length
    is the oracle's (the spec convention's: its float32 product, 10 * 0.7f -> 7). How many were compared."""
    (_, ir), = parse_model(src)
    core = ov.Core()
    f32 = core.compile_model(xml, "CPU", F32)
    bf16 = core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    atol, rtol = tolerance.model_tolerance(np.float32)
    compared = 0
    for hw, s in runs:
        x = rng.standard_normal((1, 2, *hw)).astype(np.float32)
        feeds = [x] if s is None else [x, s]
        want = run(ir, x, None, s, None)
        bound = tolerance.float_bound(ir, x, None, s, None)
        got = f32(feeds)[0]
        assert got.shape == want.shape and not outside(got, want, bound).any(), (hw, s, np.abs(got - want).max())
        low = bf16(feeds)[0]
        reduced = tolerance.reduced_bound(ir, want, bound, [x, None, s, None], "bf16")
        assert low.shape == want.shape and not outside(low, want, reduced).any(), (hw, s, np.abs(low - want).max())
        ref = sess.run(None, dict(zip(("X", "S"), feeds)))[0]
        assert ref.shape == want.shape, (hw, s)  # the spec convention's length is onnxruntime's float32 product
        if ref.size:
            compared += 1
            np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol * max(1.0, float(np.abs(ref).max())))
    return compared


def test_the_float32_product_where_it_rounds_up(tmp_path):
    """10 * 0.7f: the exact product 6.99999988 floors to 6 (onnx.reference's length, the "reference" convention);
    the spec convention's length is onnxruntime's float32 product, 7.0: the written model's shape and numbers are
    onnxruntime's, at the f32 and the bf16 hint."""
    model = scales_model("linear", "half_pixel")
    xml, _ = _written(model, tmp_path)
    x = np.random.default_rng(3).standard_normal((1, 2, 10, 10)).astype(np.float32)
    s = np.array([1, 1, 0.7, 0.7], np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"X": x, "S": s})[0]
    for precision in ("f32", "bf16"):
        got = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": precision})([x, s])[0]
        assert got.shape == want.shape == (1, 2, 7, 7)
        np.testing.assert_allclose(got, want, atol=1e-5 if precision == "f32" else 0.05)


def _length_model(rule):
    o = ops()
    pi, ps = o.parameter([], np.int64, name="in"), o.parameter([], np.float32, name="s")
    return ov.Model([st.out_length(pi.output(0), ps.output(0), rule=rule)], [pi, ps], "length")


@pytest.mark.parametrize("rule", st.LENGTH_RULES)
@pytest.mark.parametrize("precision", ("f32", "bf16"))
def test_output_length_is_the_rule_s(precision, rule):
    """The output length by each rule (the exact floor(L*s); onnxruntime's float32 product truncated) for L up to
    MAX_LEN and scales up to MAX_SCALE: random float32 scales, the scales k/L and their float32 neighbours
    (products just below and above an integer), at the f32 and the bf16 hint; against ``output_length``, and for
    floor_fp32 against numpy's own float32 product too."""
    run_ = ov.Core().compile_model(_length_model(rule), "CPU", {"INFERENCE_PRECISION_HINT": precision})
    rng = np.random.default_rng(7)
    pairs = [(int(L), float(s)) for L, s in zip(rng.integers(1, st.MAX_LEN, 300),
                                                 np.exp(rng.uniform(np.log(1e-5), np.log(st.MAX_SCALE - 1), 300)))]
    for L in (1, 7, 10, 255, 1000, 4097, st.MAX_LEN - 1):
        for k in (1, 3, L - 1, L, L + 1, 7 * L // 10, 2 * L):
            v = np.float32(max(k, 1) / L)
            pairs += [(L, float(np.nextafter(v, np.float32(0)))), (L, float(v)),
                      (L, float(np.nextafter(v, np.float32(np.inf))))]
    pairs += [(10, float(np.float32(0.7))), (5, 0.0), (5, -2.0), (3, 2.0 ** -30)]
    for L, s in pairs:
        got = int(run_([np.array(L, np.int64), np.array(s, np.float32)])[0])
        want = max(0, output_length(L, Fraction(float(np.float32(s))), rule))
        if rule == "floor_fp32":
            if L * s >= FP32_EXACT_OUT:
                continue
            assert want == max(0, int(np.float32(L) * np.float32(s)))
        assert got == want, (L, s)


@pytest.mark.parametrize("antialias", (False, True))
def test_proof_refuses_another_map(antialias, tmp_path):
    """The record's IR given another coordinate mode, or the antialias flag flipped (another window width on
    downscales): the window the produced model holds is refused."""
    src = tmp_path / "m.onnx"
    onnx.save(scales_model("cubic", "half_pixel", axes=[2, 3], antialias=antialias), src)
    ov_model, records = convert(str(src))
    assert prove(ov_model, records) == []
    (rec,) = records
    for other in (dataclasses.replace(rec.ir, coord="asymmetric"),
                  dataclasses.replace(rec.ir, sampler=dataclasses.replace(rec.ir.sampler, antialias=not antialias))):
        assert any("tap weights differ" in f for f in prove(ov_model, [dataclasses.replace(rec, ir=other)])), other


def _tap_terms(ov_model, axis):
    """The Multiply terms of the tap-by-tap sum of ``axis`` of node "r", in the taps' order."""
    from resample_bridge.lowering.openvino.graph import TAG
    from resample_bridge.lowering.openvino.index_ops import tag_of

    (total,) = [op for op in ov_model.get_ops() if TAG in op.get_rt_info() and
                str(op.get_rt_info()[TAG].astype(str)) == tag_of("r", axis, "sum")]
    terms = []
    while total.get_type_name() == "Add":
        terms.append(total.input_value(1).get_node())
        total = total.input_value(0).get_node()
    return [total] + terms[::-1]


@pytest.mark.parametrize("tamper,want", [
    ("weight", "axis 2: tap weights differ"),  # one tap's weights doubled
    ("swapped", "axis 3: tap weights differ"),  # two taps' weights exchanged
    ("axis", "axis 3: the taps are not each a Gather"),  # one tap gathered along H
    ("across", "axis 2: a tap's weights are not one per output"),  # weights [1, out] broadcast across W
    ("twice", "axis 2: tap weights differ")])  # the first tap summed twice, the second left out
def test_proof_reads_the_taps_one_by_one(tamper, want, tmp_path):
    """Linear's fixed K = 2 is summed tap by tap (``antialias_taps.tap_by_tap``): the proof reads each term's
    Gather and weights, and refuses a model that sums other weights, gathers along another axis, broadcasts the
    weights across the other axis or sums one tap twice."""
    import openvino.opset13 as op

    src = tmp_path / "m.onnx"
    onnx.save(scales_model("linear", "half_pixel", axes=[2, 3]), src)
    ov_model, records = convert(str(src))
    assert prove(ov_model, records) == []
    h, w = _tap_terms(ov_model, 2), _tap_terms(ov_model, 3)
    assert [len(h), len(w)] == [2, 2] and {t.get_type_name() for t in h + w} == {"Multiply"}
    if tamper == "weight":
        h[1].input(1).replace_source_output(op.multiply(h[1].input_value(1), op.constant(np.float32(2))).output(0))
    elif tamper == "swapped":
        a, b = w[0].input_value(1), w[1].input_value(1)
        w[0].input(1).replace_source_output(b)
        w[1].input(1).replace_source_output(a)
    elif tamper == "axis":
        g = w[1].input_value(0).get_node()  # the second tap's (the first's is the tagged one)
        g.input(2).replace_source_output(op.constant(np.int64(2)).output(0))
    elif tamper == "across":
        vector = h[0].input_value(1).get_node().input_value(0)  # the tap's [out], unsqueezed to [out, 1]
        h[0].input(1).replace_source_output(op.unsqueeze(vector, op.constant(np.int64(0))).output(0))
    else:
        total = h[1].output(0).get_target_inputs().pop().get_node()
        total.input(1).replace_source_output(h[0].output(0))
    found = prove(ov_model, records)
    assert any(want in f for f in found), found


def test_proof_refuses_a_scale_read_otherwise(tmp_path):
    """The scale the window reads doubled in the produced model: the proof, which puts its parameter in place of
    the tagged scale and the window's own ops after it, finds the window computing another map."""
    import openvino.opset13 as op

    src = tmp_path / "m.onnx"
    onnx.save(scales_model("linear", "asymmetric", axes=[2, 3]), src)
    ov_model, records = convert(str(src))
    assert prove(ov_model, records) == []
    (rec,) = records
    from resample_bridge.lowering.openvino.graph import TAG

    (scale,) = [o for o in ov_model.get_ops() if TAG in o.get_rt_info() and
                str(o.get_rt_info()[TAG].astype(str)) == st.tag_of("r", 3, "scale")]
    users = list(scale.output(0).get_target_inputs())
    doubled = op.multiply(scale.output(0), op.constant(np.float32(2)))
    for u in users:
        u.replace_source_output(doubled.output(0))
    assert any("axis 3" in f for f in prove(ov_model, records)), prove(ov_model, records)


def test_nearest_and_other_modes_keep_their_reason(tmp_path):
    """tf_crop_and_resize without a fixed crop box inside [0, 1] has no run-time scale window: the refusal names the
    roi; nearest is not this form's (``scale_nearest`` takes it)."""
    (_, ir), = parse_model(scales_model("linear", "half_pixel"))
    assert st.refusal(dataclasses.replace(ir, coord="tf_crop_and_resize"))[1] == "roi"
    (_, ir), = parse_model(scales_model("nearest", "half_pixel"))
    assert not st.applies(type("N", (), {"ir": ir}))


def concat_scales_model(mode="cubic", coord="align_corners"):
    """F.interpolate's spelling of run-time scales: Concat([1, 1], S2)."""
    node = helper.make_node("Resize", ["X", "", "S"], ["Y"], mode=mode, coordinate_transformation_mode=coord,
                            cubic_coeff_a=-0.5, name="r")
    cat = helper.make_node("Concat", ["ones", "S2"], ["S"], axis=0)
    graph = helper.make_graph([cat, node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 2, "h", "w"]),
                                                 helper.make_tensor_value_info("S2", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(np.ones(2, np.float32), "ones")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=10)


def test_axes_of_a_constant_unit_scale_are_left_as_they_are(tmp_path):
    """Concat([1, 1], S2): N and C are not gathered (their scale is the model's constant 1); the proof reads that
    constant back from the produced model and refuses a model where it is another value."""
    import openvino.opset13 as op

    src = tmp_path / "m.onnx"
    onnx.save(concat_scales_model("linear", "half_pixel"), src)
    ov_model, records = convert(str(src))
    (rec,) = records
    assert rec.proof["copied"] == [0, 1] and rec.proof["axes"] == [2, 3]
    gathered = {int(o.input_value(2).get_node().get_data()) for o in ov_model.get_ops()
                if o.get_type_name() == "Gather" and o.input_value(0).get_partial_shape().rank.get_length() == 4}
    assert gathered == {2, 3}  # the taps of H and W only
    assert prove(ov_model, records) == []
    (ones,) = [o for o in ov_model.get_ops() if o.get_type_name() == "Constant" and
               o.get_output_partial_shape(0).to_string() == "[2]" and
               np.array_equal(o.get_data(), np.ones(2, np.float32))]
    ones.output(0).replace(op.constant(np.array([1, 2], np.float32)).output(0))
    assert any("axis 1 is left as it is" in f for f in prove(ov_model, records)), prove(ov_model, records)


def test_scales_computed_in_the_model_stay_f32_under_bf16(tmp_path):
    """Scales the model concatenates itself (F.interpolate's [1, 1] + two run-time scales): under the bf16 hint
    the plugin ran that Concat in bf16 (0.8 read as 0.80078, 30 * 0.8 -> 24 became 24.02 -> 24 but 13 * 3.7692308
    -> 49 became 48: another output length) until the scales' producer was pinned too (``grid_pin.mark``)."""
    model = concat_scales_model()
    xml, src = _written(model, tmp_path)
    (_, ir), = parse_model(src)
    bf16 = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    rng = np.random.default_rng(3)
    for hw, sc in (((13, 30), (3.769230842590332, 0.800000011920929)), ((37, 9), (0.43243247270584106, 0.55037498))):
        x = rng.standard_normal((2, 2, *hw)).astype(np.float32)
        s2 = np.array(sc, np.float32)
        s = np.concatenate([np.ones(2, np.float32), s2])
        want = run(ir, x, None, s, None)
        low = bf16({"X": x, "S2": s2})[0]
        bound = tolerance.float_bound(ir, x, None, s, None)
        reduced = tolerance.reduced_bound(ir, want, bound, [x, None, s, None], "bf16")
        assert low.shape == want.shape and not outside(low, want, reduced).any(), (hw, low.shape, want.shape)


def float_sizes_model(mode: str, antialias: int):
    """The dynamo exporter's F.interpolate(scale_factor=0.41) on dynamic H / W: each output length computed in floats
    from the input's own, int64(float(L) * 0.41), concatenated after N and C."""
    nodes, lengths = [], []
    for axis in (2, 3):
        a = f"_{axis}"
        nodes += [helper.make_node("Shape", ["X"], ["shp" + a], start=axis, end=axis + 1),
                  helper.make_node("Squeeze", ["shp" + a], ["len" + a]),
                  helper.make_node("Cast", ["len" + a], ["lenf" + a], to=TensorProto.FLOAT),
                  helper.make_node("Mul", ["lenf" + a, "k"], ["scaled" + a]),
                  helper.make_node("Cast", ["scaled" + a], ["out" + a], to=TensorProto.INT64),
                  helper.make_node("Reshape", ["out" + a, "minus_one"], ["size" + a])]
        lengths.append("size" + a)
    nodes += [helper.make_node("Concat", ["nc"] + lengths, ["sizes"], axis=0),
              helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], name="r", mode=mode, antialias=antialias)]
    inits = [onnx.numpy_helper.from_array(np.array(0.41, np.float32), "k"),
             onnx.numpy_helper.from_array(np.array([1, 3], np.int64), "nc"),
             onnx.numpy_helper.from_array(np.array([-1], np.int64), "minus_one")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, "h", "w"])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


@pytest.mark.parametrize("mode,antialias", [("cubic", 1), ("linear", 0)])
def test_sizes_computed_in_floats_keep_their_length_under_bf16(tmp_path, mode, antialias):
    """The sizes' float arithmetic is the model's own, and under the bf16 hint the plugin ran it in bf16: 90 * 0.41
    = 36.9 read as 37.0, an output 37 wide where onnxruntime and PyTorch give 36 (measured, OpenVINO's importer
    too). The sizes' producer is pinned to f32 now, as a run-time scales' is."""
    src = tmp_path / "m.onnx"
    onnx.save(float_sizes_model(mode, antialias), src)
    api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    bf16 = ov.Core().compile_model(str(tmp_path / "out" / "m.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    for hw in ((40, 90), (37, 61)):
        x = np.random.default_rng(5).standard_normal((1, 3, *hw)).astype(np.float32)
        assert bf16([x])[0].shape == sess.run(None, {"X": x})[0].shape == (1, 3, hw[0] * 41 // 100, hw[1] * 41 // 100)


@pytest.mark.compiled
def test_prefer_fastest_takes_the_extension(tmp_path):
    """--prefer fastest: the extension, measured faster than the window at every shape tried (the cost model has
    no rate for a scale known only at run time); its record says so, and it computes the oracle's numbers."""
    src = tmp_path / "m.onnx"
    onnx.save(scales_model("linear", "half_pixel", axes=[2, 3]), src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"), prefer="fastest")
    (rec,) = done.records
    assert rec.rung == 4 and "faster than the run-time scale window" in rec.reason, rec.summary()
    assert any(r == 3 and "exact" in why for r, _, why in rec.tried)
    core = ov.Core()
    core.add_extension(done.extension)
    (_, ir), = parse_model(str(src))
    x = np.random.default_rng(4).standard_normal((1, 2, 10, 7)).astype(np.float32)
    s = np.array([0.7, 2.5], np.float32)
    got = core.compile_model(str(tmp_path / "out" / "m.xml"), "CPU", F32)([x, s])[0]
    want = run(ir, x, None, s, None)
    assert got.shape == want.shape and not outside(got, want, tolerance.float_bound(ir, x, None, s, None)).any()


def static_scales_model(mode, coord, scales=(1.0, 1.0, 0.7, 1.7), roi=None):
    """F.interpolate(x, scale_factor=...) exported with dynamic H / W: the scales a constant of the model, the
    lengths known only at run time (no tap table can be built; Interpolate's scales mode adds 1e-6 to L*s)."""
    node = helper.make_node("Resize", ["X", "roi" if roi is not None else "", "S"], ["Y"], mode=mode,
                            coordinate_transformation_mode=coord, name="r")
    inits = [onnx.numpy_helper.from_array(np.array(v, np.float32), k) for k, v in (("S", scales), ("roi", roi))
             if v is not None]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=10)


@pytest.mark.parametrize("mode,coord", [("linear", "half_pixel"), ("cubic", "align_corners"),
                                        ("linear", "pytorch_half_pixel"), ("cubic", "asymmetric")])
def test_static_scale_on_run_time_lengths_is_in_graph_and_exact(mode, coord, tmp_path):
    """A static non-integer scale on dynamic H / W took the extension by default (a library beside the model); now
    the same window with the scale a constant: exact against the oracle and onnxruntime (10 * 0.7f: 7 rows, its
    float32 product), value rounding only under the bf16 hint."""
    xml, src = _written(static_scales_model(mode, coord), tmp_path)
    hws = ((10, 7), (3, 1), (33, 64), (9, 33), (20, 30))
    assert _exact_runs(xml, src, [(hw, None) for hw in hws], seed=5) >= 2
    x = np.zeros((1, 2, 10, 7), np.float32)  # 10 * 0.7f = 6.99999988, 7.0 in float32: onnxruntime's 7 rows
    assert ov.Core().compile_model(xml, "CPU", F32)([x])[0].shape == (1, 2, 7, 11)


def test_proof_of_a_static_scale_runs_the_model_s_own_constant(tmp_path):
    """OpenVINO folds the static scale into the window's constants: the proof runs the window the produced model
    holds at the source IR's scale over many lengths. The record's IR given another scale (0.7 -> 0.75), the
    same model is refused on that axis."""
    src = tmp_path / "m.onnx"
    onnx.save(static_scales_model("linear", "half_pixel"), src)
    ov_model, records = convert(str(src))
    (rec,) = records
    assert rec.rung == 3 and rec.proof["form"] == st.FORM and prove(ov_model, records) == []
    other = dataclasses.replace(rec.ir, scales=(Fraction(float(np.float32(0.75))), rec.ir.scales[1]))
    assert any("axis 2" in f for f in prove(ov_model, [dataclasses.replace(rec, ir=other)]))


# tf_crop_and_resize's crop boxes (starts of N, C, H, W, then ends): inside [0, 1], a flipped one, the whole input
CROPS = {"inside": [0, 0, 0.1, 0.2, 1, 1, 0.8, 0.9], "flipped": [0, 0, 0.9, 0.0, 1, 1, 0.05, 1.0],
         "whole": [0, 0, 0, 0, 1, 1, 1, 1]}


@pytest.mark.parametrize("mode,crop,exclude,antialias", [
    ("linear", "inside", False, False), ("cubic", "inside", False, False), ("linear", "flipped", False, False),
    ("cubic", "whole", True, False), ("linear", "inside", False, True), ("cubic", "flipped", False, True)])
def test_crop_inside_the_input_is_in_graph_and_exact(mode, crop, exclude, antialias, tmp_path):
    """tf_crop_and_resize with a fixed crop box inside [0, 1] and run-time scales took the extension by default:
    every source then lies inside the input, so the window's float32 coordinate (clamped to the input) decides no
    extrapolation; exact against the oracle and onnxruntime, value rounding only under the bf16 hint. No axis
    keeps its length: onnxruntime copies such an axis (scale exactly 1, or any scale under antialias), crop or not
    (its own convention, ``translate.onnxruntime``), where the spec crops it."""
    model = scales_model(mode, "tf_crop_and_resize", exclude, antialias=antialias, roi=CROPS[crop])
    xml, src = _written(model, tmp_path)
    runs = [(hw, np.array([1.0, 1.0, *sc], np.float32)) for hw, sc in CASES
            if all(output_length(n, Fraction(float(np.float32(v))), "floor") != n for n, v in zip(hw, sc))]
    assert _exact_runs(xml, src, runs, seed=3) >= len(runs) - 2


@pytest.mark.parametrize("mode", ("linear", "cubic"))
def test_crop_inside_with_a_static_scale_on_run_time_lengths(mode, tmp_path):
    """The same crop with the scales a constant of the model on dynamic H / W (the window's scale folded)."""
    model = static_scales_model(mode, "tf_crop_and_resize", roi=CROPS["inside"])
    xml, src = _written(model, tmp_path)
    assert _exact_runs(xml, src, [(hw, None) for hw in ((10, 7), (3, 1), (33, 64), (1, 2))], seed=6) >= 2


def proven_crop(roi, tmp_path):
    """(produced model, record) of the cubic crop of ``roi`` with run-time scales, which took this form and proves
    itself."""
    src = tmp_path / "m.onnx"
    onnx.save(scales_model("cubic", "tf_crop_and_resize", roi=roi), src)
    ov_model, records = convert(str(src))
    (rec,) = records
    assert rec.rung == 3 and rec.proof["form"] == st.FORM and prove(ov_model, records) == []
    return ov_model, rec


def refusals(ov_model, rec, axis=None, start=None, **changes) -> list[str]:
    """The proof's refusals of the produced model against the record's IR changed by ``changes`` (and the crop box's
    start on ``axis``)."""
    if axis is not None:
        roi = list(rec.ir.roi)
        roi[list(rec.ir.axes).index(axis)] = start
        changes["roi"] = tuple(roi)
    return prove(ov_model, [dataclasses.replace(rec, ir=dataclasses.replace(rec.ir, **changes))])


def test_proof_refuses_another_crop(tmp_path):
    """The proof runs the window the produced model holds against the source IR's crop box: given another box on
    W (0.2 -> 0.25), the same model is refused on that axis."""
    ov_model, rec = proven_crop(CROPS["inside"], tmp_path)
    assert any("axis 3" in f for f in refusals(ov_model, rec, 3, Fraction(1, 4)))


def sizes_crop_model(mode, roi, sizes=None, antialias=False):
    """tf_crop_and_resize of X [1, 2, h, w] to the run-time sizes Z (or the model's constant ``sizes``)."""
    inits = [onnx.numpy_helper.from_array(np.array(roi, np.float32), "roi")]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"])]
    if sizes is None:
        inputs.append(helper.make_tensor_value_info("Z", TensorProto.INT64, [4]))
    else:
        inits.append(onnx.numpy_helper.from_array(np.array(sizes, np.int64), "Z"))
    node = helper.make_node("Resize", ["X", "roi", "", "Z"], ["Y"], mode=mode, antialias=int(antialias),
                            coordinate_transformation_mode="tf_crop_and_resize", name="r")
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


@pytest.mark.parametrize("mode,crop,static,antialias", [
    ("linear", "inside", False, False), ("cubic", "flipped", False, False), ("cubic", "inside", True, False),
    ("linear", "whole", True, False), ("linear", "inside", False, True), ("cubic", "flipped", True, True)])
def test_crop_inside_given_sizes_is_in_graph_and_exact(mode, crop, static, antialias, tmp_path):
    """The same crop given its output lengths (run-time sizes, or constant sizes on dynamic H / W), which took the
    extension: the float window from the given lengths (no integer window holds the crop's product of the box and
    both lengths; antialias' stretch min(out / in, 1) a float32 quotient); the oracle within the float32 bound,
    its reduced bound under the bf16 hint, onnxruntime where no axis keeps its length (onnxruntime copies such an
    axis, crop or not)."""
    fixed = (1, 2, 7, 5) if static else None
    xml, src = written_default(sizes_crop_model(mode, CROPS[crop], fixed, antialias), tmp_path, st.FORM)
    (_, ir), = parse_model(src)
    core = ov.Core()
    f32, bf16 = (core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": h}) for h in ("f32", "bf16"))
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    atol, rtol = tolerance.model_tolerance(np.float32)
    rng = np.random.default_rng(4)
    compared = 0
    for hw, out in (((4, 5), (9, 3)), ((9, 13), (1, 20)), ((1, 7), (5, 7)), ((33, 2), (32, 1)), ((6, 6), (6, 6))):
        x = rng.standard_normal((1, 2, *hw)).astype(np.float32)
        z = np.array(fixed or (1, 2, *out), np.int64)
        feeds = [x] if static else [x, z]
        rt = None if static else z
        want, bound = run(ir, x, None, None, rt), tolerance.float_bound(ir, x, None, None, rt)
        got = f32(feeds)[0]
        assert got.shape == want.shape and not outside(got, want, bound).any(), (hw, out)
        low = bf16(feeds)[0]
        assert not outside(low, want, tolerance.reduced_bound(ir, want, bound, [x, None, None, rt], "bf16")).any()
        if all(a != b for a, b in zip(hw, z[2:])):
            compared += 1
            ref = sess.run(None, dict(zip(("X", "Z"), feeds)))[0]
            np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol * max(1.0, float(np.abs(ref).max())))
    assert compared >= 2


def test_crop_given_sizes_refuses_a_keep_aspect_policy():
    """Given sizes, the window refuses a keep-aspect policy, naming the field (a box past [0, 1]:
    test_crop_outside.py)."""
    (_, ir), = parse_model(sizes_crop_model("linear", CROPS["inside"]))
    assert st.refusal(ir) is None
    assert st.refusal(dataclasses.replace(ir, aspect_policy="not_larger"))[1] == "keep_aspect_ratio_policy"


def test_proof_of_the_sizes_window_refuses_another_crop(tmp_path):
    """The proof re-reads each axis' window (its run-time in and out lengths made parameters) against the source
    IR's crop box: given another box on H, the same model is refused on that axis."""
    src = tmp_path / "m.onnx"
    onnx.save(sizes_crop_model("linear", CROPS["inside"]), src)
    ov_model, records = convert(str(src))
    (rec,) = records
    assert rec.rung == 3 and rec.proof["given"] == "sizes" and prove(ov_model, records) == []
    roi = list(rec.ir.roi)
    roi[len(rec.ir.axes) + list(rec.ir.axes).index(2)] = Fraction(3, 4)
    other = dataclasses.replace(rec.ir, roi=tuple(roi))
    assert any("axis 2" in f for f in prove(ov_model, [dataclasses.replace(rec, ir=other)]))


def test_sizes_pinned_to_the_input_with_the_whole_box_are_left_as_they_are(tmp_path):
    """Sizes Concat(Shape(X)[:2], Shape(S)[2:]) (F.interpolate(x, size=skip.shape[2:])): N and C keep their length
    by the graph's own arithmetic and their crop box is (0, 1), the identity: no window on them; the proof reads the
    same axes from the source IR and refuses a record that claims otherwise."""
    nodes = [helper.make_node("Shape", ["X"], ["sh"]),
             helper.make_node("Slice", ["sh", "zero", "two"], ["nc"]),
             helper.make_node("Shape", ["S"], ["ssh"]),
             helper.make_node("Slice", ["ssh", "two", "four"], ["Z2"]),
             helper.make_node("Concat", ["nc", "Z2"], ["Z"], axis=0),
             helper.make_node("Resize", ["X", "roi", "", "Z"], ["Y"], mode="cubic",
                              coordinate_transformation_mode="tf_crop_and_resize", name="r")]
    inits = [onnx.numpy_helper.from_array(np.array(v, dt), k) for k, v, dt in
             (("roi", CROPS["inside"], np.float32), ("zero", [0], np.int64), ("two", [2], np.int64),
              ("four", [4], np.int64))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 2, "h", "w"]),
                                           helper.make_tensor_value_info("S", TensorProto.FLOAT, [1, 1, "a", "b"])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    ov_model, records = convert(str(src))
    (rec,) = records
    assert rec.rung == 3 and rec.proof["copied"] == [0, 1] and rec.proof["axes"] == [2, 3], rec.summary()
    assert prove(ov_model, records) == []
    claimed = dict(rec.proof, copied=[0], axes=[1, 2, 3])
    assert prove(ov_model, [dataclasses.replace(rec, proof=claimed)])
    x = np.random.default_rng(2).standard_normal((2, 2, 9, 6)).astype(np.float32)
    got = ov.Core().compile_model(ov_model, "CPU", F32)([x, np.zeros((1, 1, 5, 13), np.float32)])[0]
    (_, ir), = parse_model(model)
    want = run(ir, x, None, None, np.array([2, 2, 5, 13], np.int64))
    assert got.shape == want.shape and not outside(got, want, tolerance.float_bound(
        ir, x, None, None, np.array([2, 2, 5, 13], np.int64))).any()
