"""Nearest Resize with its scales fed at run time on OpenVINO: rung 3's index form computed in integers from the
run-time scale (lowering/openvino/scale_nearest.py). The default conversion writes no library and only standard
opsets; the written model picks the oracle's elements (inputs that name their own position, so a moved index
shows) at several shapes and scales, at the f32 and the bf16 hint; it decides a float32 tie where onnxruntime,
which computes the coordinate in float32, picks the other element; Resize-10's "simple" rounding turns with the
run-time scale; the index subgraph is exact up to the stated lengths; the proof refuses another map."""

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge.lowering.openvino import convert  # noqa: E402
from resample_bridge.lowering.openvino import scale_nearest as sn  # noqa: E402
from resample_bridge.lowering.openvino.prove import prove  # noqa: E402
from resample_bridge.lowering.index_form import axis_key  # noqa: E402
from resample_bridge.semantics.nearest_scale import oracle_scale_indices  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.written import written_default  # noqa: E402

HINTS = ("f32", "bf16")
# (H, W) and (sH, sW): a float32 product just below an integer (10 * 0.7f -> 6), one ulp beside 1, the thirds
# whose half-pixel sources are float32 ties, down to a tenth and up 3.7x, length 1 up, long axes at round scales
CASES = [((10, 7), (0.7, 0.7)), ((10, 7), (2.0, 2.0)), ((9, 33), (1.0000001, 0.99999994)),
         ((3, 9), (0.33333334, 0.6)), ((33, 64), (0.5, 3.7)), ((33, 64), (3.0, 0.1)), ((1, 5), (4.0, 1.0)),
         ((20, 30), (1.5, 1 / 3)), ((250, 301), (0.333, 2.5))]


def scales_model(coord="half_pixel", rule="round_prefer_floor", opset=19, dtype=TensorProto.FLOAT, hw=("h", "w"),
                 exclude_outside=0):
    if opset == 10:
        node = helper.make_node("Resize", ["X", "S"], ["Y"], mode="nearest", name="r")
    else:
        node = helper.make_node("Resize", ["X", "", "S"], ["Y"], mode="nearest", coordinate_transformation_mode=coord,
                                nearest_mode=rule, exclude_outside=exclude_outside, name="r")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", dtype, [1, 2, *hw]),
                                            helper.make_tensor_value_info("S", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("Y", dtype, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10 if opset > 10 else 7)


def positions(h: int, w: int, dtype=np.float32):
    """[1, 2, h, w]: channel 0 holds each element's row, channel 1 its column (mod 200: exact in bf16, uint8)."""
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return (np.stack([rows % 200, cols % 200])[None]).astype(dtype)


def _oracle(ir, x, s, opset):
    return run(ir, x, s) if opset == 10 else run(ir, x, None, s, None)


def _picks_the_oracles_elements(model, tmp_path, cases, dtype=np.float32):
    xml, src = written_default(model, tmp_path, sn.FORM)
    (_, ir), = parse_model(src)
    opset = model.opset_import[0].version
    core = ov.Core()
    for hint in HINTS:
        compiled = core.compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for hw, sc in cases:
            x, s = positions(*hw, dtype), np.array([1, 1, *sc], np.float32)
            got, want = compiled([x, s])[0], _oracle(ir, x, s, opset)
            assert got.shape == want.shape and np.array_equal(got, want), (hint, hw, sc, got.shape, want.shape)
    return xml, src


@pytest.mark.parametrize("coord,rule", [
    ("half_pixel", "round_prefer_floor"), ("half_pixel", "round_prefer_ceil"), ("asymmetric", "floor"),
    ("asymmetric", "round_prefer_ceil"), ("pytorch_half_pixel", "floor"), ("pytorch_half_pixel", "ceil"),
    ("tf_half_pixel_for_nn", "round_prefer_ceil"), ("align_corners", "round_prefer_floor"), ("half_pixel", "ceil"),
    ("half_pixel_symmetric", "round_prefer_floor"), ("half_pixel_symmetric", "round_prefer_ceil"),
    ("half_pixel_symmetric", "floor"), ("half_pixel_symmetric", "ceil")])
def test_default_is_in_graph_and_picks_the_oracles_elements(coord, rule, tmp_path):
    _picks_the_oracles_elements(scales_model(coord, rule), tmp_path, CASES)


@pytest.mark.parametrize("dtype,np_dtype", [(TensorProto.UINT8, np.uint8), (TensorProto.FLOAT16, np.float16)])
def test_other_element_types(dtype, np_dtype, tmp_path):
    _picks_the_oracles_elements(scales_model("asymmetric", "floor", dtype=dtype), tmp_path, CASES[:5], np_dtype)


def test_every_axis_its_own_scale(tmp_path):
    """N, C, H and W resized at once by four different run-time scales (the index table's rows: a row that read
    another axis' scale or length picks other elements)."""
    xml, src = written_default(scales_model("asymmetric", "round_prefer_ceil"), tmp_path, sn.FORM)
    (_, ir), = parse_model(src)
    x = np.random.default_rng(2).standard_normal((1, 2, 7, 11)).astype(np.float32)
    compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    for sc in ((2.0, 1.5, 1.5, 0.33333334), (3.0, 2.5, 0.6, 3.0)):
        s = np.array(sc, np.float32)
        got, want = compiled([x, s])[0], run(ir, x, None, s, None)
        assert got.shape == want.shape and np.array_equal(got, want), sc


def test_axes_of_a_constant_unit_scale_are_left_as_they_are(tmp_path):
    """F.interpolate's Concat([1, 1], S2): N and C are not gathered; the proof reads that constant back."""
    cat = helper.make_node("Concat", ["ones", "S2"], ["S"], axis=0)
    node = helper.make_node("Resize", ["X", "", "S"], ["Y"], mode="nearest", name="r")
    graph = helper.make_graph([cat, node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"]),
                                                 helper.make_tensor_value_info("S2", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(np.ones(2, np.float32), "ones")])
    src = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), src)
    ov_model, records = convert(str(src))
    (rec,) = records
    assert rec.proof["copied"] == [0, 1] and rec.proof["axes"] == [2, 3] and prove(ov_model, records) == []
    assert sum(o.get_type_name() == "Gather" and o.input_value(0).get_partial_shape().rank.get_length() == 4
               for o in ov_model.get_ops()) == 2
    (_, ir), = parse_model(str(src))
    x, s2 = positions(9, 14), np.array([1.5, 0.6], np.float32)
    got = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})([x, s2])[0]
    assert np.array_equal(got, run(ir, x, None, np.array([1, 1, 1.5, 0.6], np.float32), None))


def test_resize10_simple_rounding_turns_with_the_run_time_scale(tmp_path):
    """Resize-10 (asymmetric, "simple": ceil when downscaling, floor otherwise) with the scale read at run time."""
    _picks_the_oracles_elements(scales_model(opset=10), tmp_path, [((10, 9), (0.6, 1.5)), ((9, 10), (1.5, 0.6))])


def test_a_float32_tie_is_decided_exactly(tmp_path):
    """tf_half_pixel_for_nn, round_prefer_ceil, scale 0.33333334f: output 0's source 0.5/s = 1.49999996 picks 1;
    computed in float32 it is 1.5, which onnxruntime rounds up to 2. The default picks the oracle's element."""
    model = scales_model("tf_half_pixel_for_nn", "round_prefer_ceil")
    xml, src = _picks_the_oracles_elements(model, tmp_path, [((3, 3), (0.33333334, 1.0))])
    x, s = positions(3, 3), np.array([1, 1, 0.33333334, 1], np.float32)
    ours = ov.Core().compile_model(xml, "CPU")([x, s])[0]
    theirs = ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, {"X": x, "S": s})[0]
    assert ours[0, 0, 0, 0] == 1 and theirs[0, 0, 0, 0] == 2


def test_equals_onnxruntime_off_the_ties(tmp_path):
    """Where no source lies near a rounding boundary (power-of-two and whole scales), onnxruntime's float32
    coordinates pick the same elements."""
    model = scales_model("half_pixel", "round_prefer_floor")
    xml, src = written_default(model, tmp_path, sn.FORM)
    compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 2, 37, 64)).astype(np.float32)
    for sc in ((2.0, 0.5), (3.0, 4.0), (0.25, 1.0)):
        s = np.array([1, 1, *sc], np.float32)
        np.testing.assert_array_equal(compiled([x, s])[0], sess.run(None, {"X": x, "S": s})[0])


@pytest.mark.parametrize("hint", HINTS)
def test_index_subgraph_is_exact_up_to_the_stated_limits(hint):
    """The index subgraph alone at lengths up to MAX_LEN - 1 and scales up to MAX_SCALE: no int32 intermediate
    overflows (align_corners forms no product o*(L-1)), the estimate stays f32 under the bf16 hint."""
    for coord, rule in (("half_pixel", "round_prefer_ceil"), ("asymmetric", "floor"), ("align_corners", "ceil"),
                        ("tf_half_pixel_for_nn", "round_prefer_floor"), ("half_pixel_symmetric", "round_prefer_ceil")):
        (_, ir), = parse_model(scales_model(coord, rule))
        compiled = ov.Core().compile_model(sn.standalone(ir, 1), "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for L, s in ((sn.MAX_LEN - 1, 0.99999994), (sn.MAX_LEN - 1, 0.05000001), (200003, 20003 / 200003),
                     (100, 2047.0), (3, 2047.9), (1000, 262.1)):
            s = float(np.float32(s))
            got = compiled([np.array([L], np.int64), np.array([s], np.float32)])[0]
            want = oracle_scale_indices(axis_key(ir), s, L)
            assert got.shape == want.shape and np.array_equal(got, want), (coord, rule, L, s)


def test_proof_refuses_another_map(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(scales_model("half_pixel", "round_prefer_floor"), src)
    ov_model, records = convert(str(src))
    assert prove(ov_model, records) == []
    (rec,) = records
    other = dataclasses.replace(rec.ir.sampler, nearest="round_prefer_ceil")
    wrong = dataclasses.replace(rec, ir=dataclasses.replace(rec.ir, sampler=other))
    assert any("differ from the oracle's taps" in f for f in prove(ov_model, [wrong])), prove(ov_model, [wrong])


# (coordinate mode, rule) whose picks leave the input at some scale: half_pixel / pytorch_half_pixel floor read -1
# at output 0 when enlarging, asymmetric / tf_half_pixel_for_nn ceil read L at the last output
OUTSIDE = [("half_pixel", "floor"), ("pytorch_half_pixel", "floor"), ("asymmetric", "ceil"),
           ("tf_half_pixel_for_nn", "ceil"), ("half_pixel", "round_prefer_floor"), ("align_corners", "ceil")]


@pytest.mark.parametrize("coord,rule", OUTSIDE)
def test_exclude_outside_zeroes_the_picks_outside_the_input(coord, rule, tmp_path):
    """exclude_outside: a pick outside the input weighs 0 (the oracle's tap table). In the graph, at both hints;
    the elements name their position plus 1, so a zeroed pick differs from every element."""
    model = scales_model(coord, rule, exclude_outside=1)
    xml, src = written_default(model, tmp_path, sn.FORM)
    (_, ir), = parse_model(src)
    zeroed = 0
    for hint in HINTS:
        compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for hw, sc in CASES:
            x, s = positions(*hw) + 1, np.array([1, 1, *sc], np.float32)
            got, want = compiled([x, s])[0], run(ir, x, None, s, None)
            assert got.shape == want.shape and np.array_equal(got, want), (hint, hw, sc)
            zeroed += int((want == 0).sum())
    assert zeroed or coord in ("half_pixel", "align_corners") and rule != "floor", "no case picks outside"


def test_exclude_outside_multiplies_as_the_oracle_does(tmp_path):
    """A zeroed pick of inf or NaN is NaN, as the oracle's product by the weight 0; the picks inside keep inf."""
    xml, src = written_default(scales_model("half_pixel", "floor", exclude_outside=1), tmp_path, sn.FORM)
    (_, ir), = parse_model(src)
    x = np.full((1, 2, 4, 5), np.inf, np.float32)
    x[0, 1] = np.nan
    s = np.array([1, 1, 2.0, 1.5], np.float32)
    got, want = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x, s])[0], \
        run(ir, x, None, s, None)
    assert np.isnan(want[0, 0]).any() and np.isinf(want[0, 0]).any()
    np.testing.assert_array_equal(got, want)


def test_proof_refuses_the_picks_outside_kept(tmp_path):
    """The Multiply by which picks lie inside bypassed in the produced model: the proof names it."""
    from tests.helpers.outside import bypass_fails_the_proof

    src = tmp_path / "m.onnx"
    onnx.save(scales_model("half_pixel", "floor", exclude_outside=1), src)
    bypass_fails_the_proof(src, sn.tag_of("r", 3, "outside"))


def test_proof_refuses_a_scale_read_otherwise(tmp_path):
    """The scales the index table reads doubled in the produced model: the proof, which puts its parameter in
    place of the tagged scales, finds the table computing another map."""
    import openvino.opset13 as op
    from resample_bridge.lowering.openvino.graph import TAG

    src = tmp_path / "m.onnx"
    onnx.save(scales_model("asymmetric", "floor"), src)
    ov_model, records = convert(str(src))
    assert prove(ov_model, records) == []
    (scale,) = [o for o in ov_model.get_ops() if TAG in o.get_rt_info() and
                str(o.get_rt_info()[TAG].astype(str)) == sn.tag_of("r", sn.JOINT, "scale")]
    users = list(scale.output(0).get_target_inputs())
    doubled = op.multiply(scale.output(0), op.constant(np.float32(2)))
    for u in users:
        u.replace_source_output(doubled.output(0))
    assert any("differ from the oracle's taps" in f for f in prove(ov_model, records)), prove(ov_model, records)


def test_half_pixel_symmetric_at_every_length_and_scale_of_the_grid():
    """half_pixel_symmetric's offset reads L and out (its two mirrored halves per parity of L-1): the index subgraph
    alone against the oracle's taps over the proof's whole (L, s) grid, every rounding, at the f32 and bf16 hints."""
    for rule in ("floor", "ceil", "round_prefer_floor", "round_prefer_ceil"):
        (_, ir), = parse_model(scales_model("half_pixel_symmetric", rule))
        for hint in HINTS:
            compiled = ov.Core().compile_model(sn.standalone(ir, 1), "CPU", {"INFERENCE_PRECISION_HINT": hint})
            for L, s in sn.grid():
                got = compiled([np.array([L], np.int64), np.array([s], np.float32)])[0]
                want = oracle_scale_indices(axis_key(ir), s, L)
                assert got.shape == want.shape and np.array_equal(got, want), (rule, hint, L, s)
