"""Nearest Resize with a static non-integer scale on dynamic H/W on OpenVINO (issue 42): rung 3's index form
(lowering/openvino/nearest_scale.py: the output length by the node's size rule, the source index by an int32
long division). The default conversion writes no library and only standard opsets; the written model on OpenVINO
CPU picks the elements onnxruntime picks (bit-exact) at several input shapes, and under the bf16 hint, between
two Conv layers, no index moves; the index subgraph's grid catches another map and the proof re-reads the model."""

import dataclasses
import itertools
import re
from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from resample_bridge.lowering.index_form import Verdicts  # noqa: E402
from resample_bridge.lowering.openvino import convert  # noqa: E402
from resample_bridge.lowering.openvino import index_ops  # noqa: E402
from resample_bridge.lowering.openvino import nearest_scale as ns  # noqa: E402
from resample_bridge.lowering.openvino.prove import prove  # noqa: E402
from resample_bridge.lowering.openvino.graph import ops  # noqa: E402
from resample_bridge.semantics.coords import bind_resize  # noqa: E402
from resample_bridge.semantics.lengths import output_length  # noqa: E402
from resample_bridge.semantics.nearest_scale import MAX_LEN  # noqa: E402
from resample_bridge.semantics.nearest_scale import oracle_scale_indices  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.semantics.taps import is_tie, near_tolerance  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402

COORDS = ("asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners", "tf_half_pixel_for_nn")
ROUNDINGS = ("floor", "ceil", "round_prefer_floor", "round_prefer_ceil")
SHAPES = [(1, 1), (1, 7), (5, 3), (31, 17), (97, 131), (2, 300)]
# The kinds: (coord, rounding, scale H, scale W)
KINDS = [("half_pixel", "round_prefer_ceil", 0.6, 0.6), ("pytorch_half_pixel", "round_prefer_floor", 1.7, 0.6),
         ("tf_half_pixel_for_nn", "ceil", 2.5, 1.7), ("asymmetric", "floor", 0.6, 2.5),
         ("align_corners", "round_prefer_ceil", 1.7, 0.6), ("half_pixel", "floor", 0.6, 1.7),
         ("half_pixel", "round_prefer_ceil", 0.999, 1.001),
         # half_pixel_symmetric: its offset reads in and out (``CentredIndex``), 1.001f through the long division
         ("half_pixel_symmetric", "round_prefer_floor", 1.5, 0.6), ("half_pixel_symmetric", "ceil", 0.999, 2.5),
         ("half_pixel_symmetric", "round_prefer_ceil", 1.001, 0.75), ("half_pixel_symmetric", "floor", 0.6, 1.7),
         # a whole number beside a fraction (F.interpolate(scale_factor=(2, 1.5)))
         ("half_pixel", "round_prefer_floor", 2.0, 1.5), ("tf_half_pixel_for_nn", "floor", 0.6, 3.0),
         ("half_pixel_symmetric", "round_prefer_ceil", 2.0, 0.6)]


def scaled_model(coord, rounding, sh, sw, around=False, exclude_outside=0):
    """Resize by constant scales [1, 1, sh, sw] of X (1, 2, h, w); ``around``: between two 1x1 Conv layers (whose
    identity weights keep small integers exact in bf16)."""
    nodes = [helper.make_node("Resize", ["A" if around else "X", "", "sc"], ["B" if around else "Y"], name="r",
                              mode="nearest", nearest_mode=rounding, coordinate_transformation_mode=coord,
                              exclude_outside=exclude_outside)]
    inits = [onnx.numpy_helper.from_array(np.array([1, 1, sh, sw], np.float32), "sc")]
    if around:
        inits.append(onnx.numpy_helper.from_array(np.eye(2, dtype=np.float32).reshape(2, 2, 1, 1), "wt"))
        nodes = [helper.make_node("Conv", ["X", "wt"], ["A"])] + nodes + [helper.make_node("Conv", ["B", "wt"], ["Y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


@pytest.fixture
def computed(monkeypatch):
    """Grid verdicts computed here, not read from a machine's cache."""
    monkeypatch.setattr(index_ops, "VERDICTS", Verdicts())


def _written(model, tmp_path):
    """The default conversion, written: (xml path, onnx path, record); no library, standard opsets only."""
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    (rec,) = done.records
    assert rec.rung == 3 and rec.proof.get("scaled"), rec.summary()
    assert done.extension is None and not [p for p in (tmp_path / "out").iterdir() if p.suffix == ".so"]
    versions = set(re.findall(r'<layer [^>]*version="([^"]+)"', (tmp_path / "out" / "m.xml").read_text()))
    assert versions and all(re.fullmatch(r"opset\d+", v) for v in versions), versions
    return str(tmp_path / "out" / "m.xml"), str(src), rec


def _near_ties(ir, shape):
    """Per resized axis, the outputs whose exact source coordinate lies within float32's reach of a boundary."""
    bound = bind_resize(ir, shape)
    masks = {a.axis: np.array([is_tie(a.src(o), a.nearest, near_tolerance(a.src(o), "fp32"))
                               for o in range(a.out_len)], bool) for a in bound.axes}
    return tuple(masks.get(ax, np.zeros(bound.out_shape[ax], bool)) for ax in (2, 3))


def _distinct(shape, rng):
    return rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)  # a wrong pick shows


@pytest.mark.parametrize("coord,rounding,sh,sw", KINDS)
def test_default_writes_no_library_and_picks_what_onnxruntime_picks(coord, rounding, sh, sw, tmp_path):
    xml, src, _ = _written(scaled_model(coord, rounding, sh, sw), tmp_path)
    (ir,) = [ir for _, ir in parse_model(src)]
    f32 = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    for h, w in SHAPES:
        x = _distinct((1, 2, h, w), rng)
        got, ref = f32([x])[0], sess.run(None, {"X": x})[0]
        assert np.array_equal(got, run(ir, x, None, np.array([1, 1, sh, sw], np.float32))), (h, w)
        assert got.shape == ref.shape, (h, w, got.shape, ref.shape)
        # onnxruntime computes the source coordinate in float32: where the exact one lies within float32's reach of
        # a rounding boundary it may pick the other neighbour (asymmetric floor, 0.6f: x=3 -> 4.9999998 -> 5.0).
        near = _near_ties(ir, (1, 2, h, w))
        assert np.array_equal(got[..., ~near[0], :][..., ~near[1]], ref[..., ~near[0], :][..., ~near[1]]), (h, w)
        if rounding.startswith("round") and coord != "half_pixel_symmetric":
            # their near ties round the same way in float32: every element equal (not half_pixel_symmetric's, whose
            # float32 offset onnxruntime rounds on its own: translate/onnxruntime.py)
            assert np.array_equal(got, ref), (h, w)


@pytest.mark.parametrize("coord,rounding,sh,sw", KINDS[:3])
def test_bf16_between_conv_layers_moves_no_index(coord, rounding, sh, sw, tmp_path):
    """Under the bf16 hint OpenVINO runs the Conv layers (and what it can between them) in bf16; integers below
    256 stay exact there, so the output equals onnxruntime's exactly unless an index moved."""
    xml, src, _ = _written(scaled_model(coord, rounding, sh, sw, around=True), tmp_path)
    bf16 = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(2)
    for h, w in SHAPES[2:] + [(240, 320)]:  # an empty output stops onnxruntime's Conv
        x = rng.integers(0, 256, (1, 2, h, w)).astype(np.float32)
        got, ref = bf16([x])[0], sess.run(None, {"X": x})[0]
        assert got.shape == ref.shape and np.array_equal(got, ref), (h, w, np.flatnonzero(got != ref)[:5])


@pytest.mark.usefixtures("computed")
@pytest.mark.parametrize("coord", COORDS + ("half_pixel_symmetric",))
def test_index_subgraph_grid_for_every_rounding(coord):
    """The axis subgraph alone, compiled on CPU, over input lengths 1..160, primes and the largest supported."""
    for rounding, s in itertools.product(ROUNDINGS, (0.6, 1.7, 0.999)):  # 0.999f: no compact form, the long division
        (_, ir), = parse_model(scaled_model(coord, rounding, s, 2.5))
        for form in ns.forms(ir):
            assert ns.grid_verdict(ns.standalone(form), ir, form) is None, (coord, rounding, s, float(form.scale))


@pytest.mark.slow
@pytest.mark.usefixtures("computed")
@pytest.mark.parametrize("rule", ("floor", "floor_fp32", "floor_eps"))
def test_every_length_rule_under_f32_and_bf16(rule):
    """Each size rule's length graph (the exact floor in int32, onnxruntime's and OpenVINO's float32 products as an
    f32 Multiply): the grid, and the same subgraph compiled under the bf16 hint moves no length and no index."""
    core = ov.Core()
    for coord, s in itertools.product(("half_pixel", "align_corners", "asymmetric"), (0.6, 0.7, 1.7, 7.3, 0.1, 0.999)):
        (_, ir), = parse_model(scaled_model(coord, "round_prefer_ceil", s, s))
        ir = dataclasses.replace(ir, size_rule=rule, input_shape=None)
        form = ns.forms(ir)[0]
        assert ns.grid_verdict(ns.standalone(form), ir, form) is None, (coord, s)
        bf16 = core.compile_model(ns.standalone(form), "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
        for i in ns.in_grid(form):
            got, want = bf16([np.array(i, np.int64)])[0], oracle_scale_indices(ir, form.scale, i)
            assert got.shape == want.shape and np.array_equal(got, want), (coord, s, i)


@pytest.mark.parametrize("rule", ("floor", "floor_fp32", "floor_eps"))
def test_length_graph_at_every_input_length(rule):
    """Each size rule's length subgraph (integers only) at every input length below 1500 and 500 more up to MAX_LEN,
    for scales whose products land just below whole lengths (the float32 ratios 37/48, 7/10 and a neighbour),
    at the bf16 hint: against ``output_length`` and, for onnxruntime's rule, numpy's own float32 product
    truncated."""
    core = ov.Core()
    scales = [np.float32(37 / 48), np.float32(0.7), np.float32(2.5), np.float32(1 / 3)]
    scales += [np.nextafter(scales[1], np.float32(0)), np.nextafter(scales[0], np.float32(9))]
    lengths = np.concatenate([np.arange(1, 1500), np.random.default_rng(5).integers(1500, MAX_LEN, 500)])
    for f in scales:
        (_, ir), = parse_model(scaled_model("half_pixel", "round_prefer_ceil", float(f), float(f)))
        form = dataclasses.replace(ns.forms(dataclasses.replace(ir, size_rule=rule, input_shape=None))[0])
        o = ops()
        p = o.parameter([], np.int64, name="in")
        run_ = core.compile_model(ov.Model([ns.length_graph(form, p.output(0))], [p], "length"), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "bf16"})
        for L in lengths[lengths * f < MAX_LEN]:
            want = output_length(int(L), Fraction(float(f)), rule)
            if rule == "floor_fp32":
                assert want == int(np.float32(L) * f)
            assert int(run_([L])[0]) == want, (rule, float(f), int(L))


@pytest.mark.usefixtures("computed")
@pytest.mark.parametrize("coord", ("half_pixel", "half_pixel_symmetric"))
def test_long_division_past_2_24_at_every_length(coord):
    """The long division's divisor passes 2^24 at 1.001f, where the CPU plugin's integer comparisons round (a
    carry compared R + d >= r in float32 moved index 500 at in = 1000, half_pixel_symmetric): every input length
    below 3000, not only the proof's grid, against the oracle's taps."""
    (_, ir), = parse_model(scaled_model(coord, "round_prefer_floor", 1.001, 1.001))
    form = ns.forms(ir)[0]
    run_ = ov.Core().compile_model(ns.standalone(form), "CPU")
    for i in range(1, 3000):
        got, want = run_([np.array(i, np.int64)])[0], oracle_scale_indices(ir, form.scale, i)
        assert got.shape == want.shape and np.array_equal(got, want), (coord, i, np.flatnonzero(got != want)[:3])


# (coord, rounding, scale H, scale W) whose picks leave the input: floor under half-pixel modes when enlarging,
# ceil at the last output; half_pixel_symmetric at a fractional length (``CentredIndex``), the long division (1.001)
OUTSIDE = [("half_pixel", "floor", 1.5, 1.7), ("asymmetric", "ceil", 2.5, 0.6), ("half_pixel_symmetric", "floor",
           1.7, 0.6), ("tf_half_pixel_for_nn", "ceil", 1.001, 1.7), ("pytorch_half_pixel", "floor", 0.6, 2.5)]


@pytest.mark.parametrize("coord,rounding,sh,sw", OUTSIDE)
def test_exclude_outside_zeroes_the_picks_outside_the_input(coord, rounding, sh, sw, tmp_path):
    """A pick outside the input weighs 0 (the oracle's tap table; onnxruntime refuses exclude_outside on nearest):
    in the graph (the library before), at the f32 and bf16 hints; the elements are 1 and above, so a zeroed pick
    differs from each; the proof fails once the Multiply by which picks lie inside is bypassed."""
    from tests.helpers.outside import bypass_fails_the_proof

    xml, src, _ = _written(scaled_model(coord, rounding, sh, sw, exclude_outside=1), tmp_path)
    (_, ir), = parse_model(src)
    rng, zeroed = np.random.default_rng(4), 0
    for hint in ("f32", "bf16"):
        compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for shape in SHAPES:
            x = rng.integers(1, 200, (1, 2, *shape)).astype(np.float32)  # exact in bf16
            got, want = compiled([x])[0], run(ir, x, None, np.array([1, 1, sh, sw], np.float32), None)
            assert got.shape == want.shape and np.array_equal(got, want), (hint, shape)
            zeroed += int((want == 0).sum())
    assert zeroed, "no case picks outside the input"
    bypass_fails_the_proof(src, "r/index_2/outside")


@pytest.mark.usefixtures("computed")
def test_grid_catches_a_wrong_subgraph():
    (_, ir), = parse_model(scaled_model("half_pixel", "round_prefer_ceil", 0.6, 0.6))
    (_, other), = parse_model(scaled_model("half_pixel", "ceil", 0.6, 0.6))
    (form, _), (wrong, _) = ns.forms(ir), ns.forms(other)
    verdict = ns.grid_verdict(ns.standalone(wrong), ir, form)
    assert verdict and "differ from the oracle's taps" in verdict


def test_proof_rereads_the_produced_model(tmp_path):
    """prove() re-reads the index subgraphs; a model whose Gather indices were swapped for a fixed vector fails."""
    from resample_bridge.lowering.openvino.graph import ops, tagged

    onnx.save(scaled_model("half_pixel", "round_prefer_ceil", 0.6, 1.7), tmp_path / "m.onnx")
    ov_model, (rec,) = convert(str(tmp_path / "m.onnx"))
    assert rec.proof.get("scaled") and prove(ov_model, [rec]) == []
    o = ops()
    wrong = o.range(o.constant(np.int64(0)), o.constant(np.int64(3)), o.constant(np.int64(1)), "i64")
    tagged(ov_model)["r/index_3/gather"].input(1).replace_source_output(wrong.output(0))
    failures = prove(ov_model, [rec])
    assert failures and "axis 3" in failures[0], failures


@pytest.mark.parametrize("shape", [["n", 2, 64, "w"], [1, 2, "h", 45], ["n", 2, 37, 45]])
def test_static_axes_fold_and_are_proven(shape, tmp_path):
    """A static resized length: OpenVINO folds that axis' index vector to a constant, which the proof compares with
    the oracle's taps at that length; the written model equals the oracle at every run-time shape."""
    model = scaled_model("half_pixel", "round_prefer_ceil", 0.6, 1.7)
    for dim, v in zip(model.graph.input[0].type.tensor_type.shape.dim, shape):
        dim.Clear()
        setattr(dim, "dim_value" if isinstance(v, int) else "dim_param", v)
    onnx.save(model, tmp_path / "m.onnx")
    ov_model, (rec,) = convert(str(tmp_path / "m.onnx"))
    assert rec.rung == 3 and rec.proof.get("scaled") and prove(ov_model, [rec]) == [], rec.summary()
    (_, ir), = parse_model(str(tmp_path / "m.onnx"))
    compiled = ov.Core().compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    rng = np.random.default_rng(3)
    for n, h, w in ((1, 64, 45), (2, 37, 45), (1, 64, 7), (1, 5, 45)):
        if any(isinstance(v, int) and v != got for v, got in zip(shape, (n, 2, h, w))):
            continue
        x = _distinct((n, 2, h, w), rng)
        assert np.array_equal(compiled([x])[0], run(ir, x)), (n, h, w)


@pytest.mark.parametrize("sh,first", [(1.7, 3), (0.6, 2)])
def test_inner_axis_is_gathered_first_where_rows_are_added(sh, first, tmp_path):
    """``nearest_index.gather_order``: an upscaled H makes rows, so W (gathered element by element) goes first, on
    the fewer rows; a downscaled H goes first. The proof follows the chain in that order and holds; a second
    Gather reading X itself (the first one then gone) breaks it."""
    from resample_bridge.lowering.openvino.graph import tagged

    onnx.save(scaled_model("half_pixel", "round_prefer_ceil", sh, 1.3), tmp_path / "m.onnx")
    ov_model, (rec,) = convert(str(tmp_path / "m.onnx"))
    assert rec.proof["axes"][0] == first and prove(ov_model, [rec]) == []
    gathers = tagged(ov_model)
    second = gathers[f"r/index_{5 - first}/gather"]
    second.input(0).replace_source_output(gathers[f"r/index_{first}/gather"].input_value(0))
    failures = prove(ov_model, [rec])
    assert failures and f"axis {first}" in " ".join(failures), failures
