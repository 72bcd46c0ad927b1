"""Nearest Resize with run-time lengths on OpenVINO: rung 3's integer index decomposition
(lowering/openvino/nearest_index.py), run on OpenVINO CPU against the oracle, exact equality, and its proof."""

import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

from resample_bridge import api  # noqa: E402
from resample_bridge.lowering.index_form import Verdicts  # noqa: E402
from resample_bridge.lowering.openvino import convert  # noqa: E402
from resample_bridge.lowering.openvino import index_ops, nearest_index as ni  # noqa: E402
from resample_bridge.lowering.openvino.prove import prove  # noqa: E402
from resample_bridge.semantics.reference import run  # noqa: E402
from resample_bridge.translate.onnx import parse_model  # noqa: E402
from tests.helpers.sandwich import between_identity_convs  # noqa: E402

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
COORDS = ("asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners", "tf_half_pixel_for_nn",
          "half_pixel_symmetric")
ROUNDINGS = ("floor", "ceil", "round_prefer_floor", "round_prefer_ceil")
# (x H, W), (y H, W): up, down, odd ratios, out == 1, in == 1
SHAPES = [((3, 4), (7, 9)), ((9, 7), (4, 3)), ((5, 5), (1, 1)), ((1, 1), (6, 5)), ((1, 6), (4, 1)),
          ((6, 10), (6, 10)), ((13, 5), (17, 2))]
NP = {TensorProto.FLOAT: np.float32, TensorProto.UINT8: np.uint8, TensorProto.INT32: np.int32,
      TensorProto.FLOAT16: np.float16}


def fpn_model(coord, rounding, dtype=TensorProto.FLOAT, opset=19):
    """F.interpolate(x, size=y.shape[-2:]) as exporters write it: sizes = Concat(Shape(x)[:2], Shape(y)[2:])
    with dynamic H/W on both inputs; the output is the resized x alone."""
    nodes = [
        helper.make_node("Shape", ["X"], ["sx"]), helper.make_node("Shape", ["Yref"], ["sy"]),
        helper.make_node("Slice", ["sx", "z", "two"], ["nc"]),
        helper.make_node("Slice", ["sy", "two", "four"], ["hw"]),
        helper.make_node("Concat", ["nc", "hw"], ["S"], axis=0),
        helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="nearest", nearest_mode=rounding,
                         coordinate_transformation_mode=coord, name="r"),
    ]
    inits = [onnx.numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("z", 0), ("two", 2), ("four", 4))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", dtype, [1, 2, "h", "w"]),
                                           helper.make_tensor_value_info("Yref", dtype, [1, 2, "h2", "w2"])],
                              [helper.make_tensor_value_info("Y", dtype, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def sizes_input_model(coord, rounding, dtype=TensorProto.FLOAT, exclude_outside=0):
    """sizes fed as a graph input (axes H, W), X with dynamic H/W."""
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="nearest", nearest_mode=rounding,
                            coordinate_transformation_mode=coord, axes=[2, 3], exclude_outside=exclude_outside,
                            name="r")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", dtype, [1, 2, "h", "w"]),
                                            helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("Y", dtype, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


def _convert(model, tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    # The decomposition itself (--prefer builtin): the cost model may take the extension for a node alone.
    ov_model, records = convert(str(path), prefer="builtin")
    (ir,) = [ir for _, ir in parse_model(str(path))]
    return ov_model, records, ir


def _data(shape, dtype, rng):
    dt = np.dtype(dtype)
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
    return rng.permutation(int(np.prod(shape))).reshape(shape).astype(dt)  # distinct: a wrong tap shows


@pytest.mark.slow
@pytest.mark.parametrize("coord,rounding", list(itertools.product(COORDS, ROUNDINGS)))
def test_fpn_every_mode(coord, rounding, tmp_path):
    ov_model, records, ir = _convert(fpn_model(coord, rounding), tmp_path)
    (rec,) = records
    assert rec.rung == 3 and rec.proof.get("form") == "nearest_index", rec.summary()
    assert "index decomposition: source indices computed in int64 for every run-time size" in rec.reason
    compiled = ov.Core().compile_model(ov_model, "CPU", F32)
    rng = np.random.default_rng(0)
    for (h, w), (h2, w2) in SHAPES:
        x = _data((1, 2, h, w), np.float32, rng)
        yref = np.zeros((1, 2, h2, w2), np.float32)
        want = run(ir, x, None, None, np.array([1, 2, h2, w2], np.int64))
        got = compiled([x, yref])[0]
        assert got.shape == want.shape and np.array_equal(got, want), (coord, rounding, h, w, h2, w2)


@pytest.mark.parametrize("dtype", [TensorProto.UINT8, TensorProto.INT32, TensorProto.FLOAT16])
@pytest.mark.parametrize("coord,rounding", [("half_pixel", "round_prefer_ceil"), ("align_corners", "ceil"),
                                            ("asymmetric", "floor")])
@pytest.mark.slow
def test_sizes_input_integer_dtypes(dtype, coord, rounding, tmp_path):
    ov_model, (rec,), ir = _convert(sizes_input_model(coord, rounding, dtype), tmp_path)
    assert rec.rung == 3 and rec.proof.get("form") == "nearest_index", rec.summary()
    compiled = ov.Core().compile_model(ov_model, "CPU", F32)
    rng = np.random.default_rng(1)
    for (h, w), (h2, w2) in SHAPES:
        x = _data((1, 2, h, w), NP[dtype], rng)
        sizes = np.array([h2, w2], np.int64)
        want = run(ir, x, None, None, sizes)
        got = compiled([x, sizes])[0]
        assert got.dtype == want.dtype and np.array_equal(got, want), (h, w, h2, w2)


@pytest.fixture
def computed(monkeypatch):
    """Grid verdicts computed here, not read from a machine's cache (``index_form.Verdicts``)."""
    monkeypatch.setattr(index_ops, "VERDICTS", Verdicts())


@pytest.mark.usefixtures("computed")
def test_index_subgraph_grid_for_every_mode():
    """The index computation alone, compiled on CPU, over (in, out) in 1..48 and large pairs."""
    for coord, rounding in itertools.product(COORDS, ROUNDINGS):
        (_, ir), = parse_model(sizes_input_model(coord, rounding))
        form = ni.nearest_index(ir)
        assert ni.grid_verdict(ni._standalone(form), ir) is None, (coord, rounding)


@pytest.mark.slow
@pytest.mark.usefixtures("computed")
@pytest.mark.parametrize("length1", ("zero", "minus_half"))
@pytest.mark.parametrize("equal_copy", (False, True))
def test_pieces_left_out_on_cpu_for_both_conventions(length1, equal_copy):
    """Every form with the clamp sides and the copy its formula gives left out (``NearestIndex.needs_*``), on the
    IR fields the two ONNX conventions set (length1, equal_length_identity), over the grid on CPU."""
    from resample_bridge.semantics.ir import ResizeIR, RuntimeValue, Sampler

    for coord, rounding in itertools.product(COORDS, ROUNDINGS):
        ir = ResizeIR(rank=4, axes=(2, 3), scales=None, sizes=RuntimeValue("s"), roi=None, coord=coord,
                      sampler=Sampler("nearest", rounding), length1=length1, formula_length="integer",
                      equal_length_identity=equal_copy)
        form = ni.nearest_index(ir)
        assert ni.grid_verdict(ni._standalone(form), ir) is None, (coord, rounding)


@pytest.mark.usefixtures("computed")
def test_grid_catches_a_wrong_subgraph():
    (_, ir), = parse_model(sizes_input_model("half_pixel", "round_prefer_floor"))
    (_, other), = parse_model(sizes_input_model("half_pixel", "round_prefer_ceil"))
    verdict = ni.grid_verdict(ni._standalone(ni.nearest_index(other)), ir)
    assert verdict and "differ from the oracle's taps" in verdict


def test_proof_rereads_the_produced_model(tmp_path):
    """prove() re-reads the index subgraphs; a produced model whose Gather indices were swapped for another
    mode's fails it."""
    ov_model, records, _ = _convert(fpn_model("half_pixel", "round_prefer_floor"), tmp_path)
    assert prove(ov_model, records) == []
    from resample_bridge.lowering.openvino.graph import ops, tagged

    gather = tagged(ov_model)["r/index_2/gather"]
    o = ops()
    wrong = o.range(o.constant(np.int64(0)), o.constant(np.int64(3)), o.constant(np.int64(1)), "i64")
    gather.input(1).replace_source_output(wrong.output(0))
    failures = prove(ov_model, records)
    assert failures and "axis 2" in failures[0]


# (coordinate mode, rounding) whose picks leave the input at some lengths (half_pixel floor reads -1 at output 0
# when enlarging, asymmetric / tf_half_pixel_for_nn ceil read L at the last output), and one whose never do
OUTSIDE = [("half_pixel", "floor"), ("pytorch_half_pixel", "floor"), ("asymmetric", "ceil"),
           ("tf_half_pixel_for_nn", "ceil"), ("half_pixel_symmetric", "floor"), ("align_corners", "ceil")]


@pytest.mark.parametrize("coord,rounding", OUTSIDE)
def test_exclude_outside_zeroes_the_picks_outside_the_input(coord, rounding, tmp_path):
    """exclude_outside: a pick outside the input weighs 0 (the oracle's tap table): in the graph by default (no
    library), at the f32 and bf16 hints; the elements are 1 and above, so a zeroed pick differs from each."""
    from tests.helpers.written import written_default

    xml, src = written_default(sizes_input_model(coord, rounding, exclude_outside=1), tmp_path, "nearest_index")
    (_, ir), = parse_model(src)
    rng, zeroed = np.random.default_rng(3), 0
    for hint in ("f32", "bf16"):
        compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for (h, w), (h2, w2) in SHAPES:
            x = rng.integers(1, 200, (1, 2, h, w)).astype(np.float32)  # exact in bf16
            sizes = np.array([h2, w2], np.int64)
            got, want = compiled([x, sizes])[0], run(ir, x, None, None, sizes)
            assert got.shape == want.shape and np.array_equal(got, want), (hint, h, w, h2, w2)
            zeroed += int((want == 0).sum())
    assert zeroed or coord == "align_corners", "no case picks outside the input"


def test_exclude_outside_multiplies_as_the_oracle_does(tmp_path):
    """A zeroed pick of inf or NaN is NaN, as the oracle's product by the weight 0; the picks inside keep inf."""
    ov_model, (rec,), ir = _convert(sizes_input_model("half_pixel", "floor", exclude_outside=1), tmp_path)
    assert rec.rung == 3 and prove(ov_model, [rec]) == []
    x = np.full((1, 2, 4, 5), np.inf, np.float32)
    x[0, 1] = np.nan
    sizes = np.array([8, 9], np.int64)
    got, want = ov.Core().compile_model(ov_model, "CPU", F32)([x, sizes])[0], run(ir, x, None, None, sizes)
    assert np.isnan(want[0, 0]).any() and np.isinf(want[0, 0]).any()
    np.testing.assert_array_equal(got, want)


def test_proof_refuses_the_picks_outside_kept(tmp_path):
    """The Multiply by which picks lie inside bypassed, or fed another mask, in the produced model: the proof
    names it."""
    from resample_bridge.lowering.openvino.graph import ops, tagged

    for tamper in ("bypass", "mask"):
        ov_model, records, _ = _convert(sizes_input_model("half_pixel", "floor", exclude_outside=1), tmp_path)
        assert prove(ov_model, records) == []
        zeroed = tagged(ov_model)["r/index_3/outside"]
        if tamper == "bypass":
            zeroed.output(0).replace(zeroed.input_value(0))
            want = "no Multiply of the Gather"
        else:
            zeroed.input(1).replace_source_output(ops().constant(np.float32(1)).output(0))
            want = "picks inside the input differ"
        failures = prove(ov_model, records)
        assert any(want in f for f in failures), (tamper, failures)


def test_refused_where_no_integer_form(tmp_path):
    """Linear with run-time sizes: no index form; the rung says why (the node goes elsewhere)."""
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="linear", axes=[2, 3], name="r")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"]),
                                            helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    (_, ir), = parse_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10))
    got = ni.form_of(ir)
    assert got.field == "mode" and "no exact integer index form" in got.reason


# ----------------------------------------------------------------------------------------------------------
# Issue 20: axes whose length a run-time size keeps are copied (the spec convention), in every mode


def every_axis_sizes_model(coord, rounding, dtype=TensorProto.FLOAT):
    """sizes for every axis fed as a graph input: N and C are in the resize, their scale known only at run time."""
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="nearest", nearest_mode=rounding,
                            coordinate_transformation_mode=coord, name="r")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", dtype, ["n", 3, "h", "w"]),
                                            helper.make_tensor_value_info("S", TensorProto.INT64, [4])],
                              [helper.make_tensor_value_info("Y", dtype, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)


# (x shape, sizes): N, C kept and H, W changed; N, C, H kept; every length kept.
KEPT = [((1, 3, 4, 5), (1, 3, 8, 3)), ((2, 3, 4, 5), (2, 3, 4, 9)), ((2, 3, 5, 4), (2, 3, 5, 4))]


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.INT32])
@pytest.mark.parametrize("coord,rounding", list(itertools.product(COORDS, ROUNDINGS)))
def test_kept_axes_are_copied_with_run_time_sizes(coord, rounding, dtype, tmp_path):
    """tf_half_pixel_for_nn with ceil read element x+1 on N and C (up to 1.2e9 wrong on int32) before the fix;
    the oracle copies them (``equal_length_identity``), as onnxruntime does."""
    ov_model, (rec,), ir = _convert(every_axis_sizes_model(coord, rounding, dtype), tmp_path)
    assert ir.equal_length_identity and rec.rung == 3 and rec.proof.get("form") == "nearest_index", rec.summary()
    assert prove(ov_model, [rec]) == []
    compiled = ov.Core().compile_model(ov_model, "CPU", F32)
    rng = np.random.default_rng(8)
    for shape, sizes in KEPT:
        x, sizes = _data(shape, NP[dtype], rng), np.array(sizes, np.int64)
        want = run(ir, x, None, None, sizes)
        got = compiled([x, sizes])[0]
        assert got.dtype == want.dtype and np.array_equal(got, want), (shape, sizes)
        if tuple(sizes) == shape:
            assert np.array_equal(want, x)


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_integer_scales_on_a_dynamic_batch(rounding, tmp_path):
    """Static scales x2 with a dynamic batch: out = 2*in in the graph. half_pixel_symmetric has no native
    Interpolate mode: with H, W static (only the batch, which is not resized, is dynamic) Interpolate's
    half_pixel spelling is exact at those lengths (rung 2); with H, W dynamic rung 3's index form takes it."""
    init = onnx.numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")
    node = helper.make_node("Resize", ["X", "", "sc"], ["Y"], mode="nearest", nearest_mode=rounding, name="r",
                            coordinate_transformation_mode="half_pixel_symmetric")
    for shape in (["n", 3, 8, 8], ["n", 3, "h", "w"]):
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], [init])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
        ov_model, (rec,), ir = _convert(model, tmp_path)
        if shape[2] == 8:
            assert rec.rung == 2 and "spelled as half_pixel" in rec.reason, rec.summary()
        else:
            assert rec.rung == 3 and rec.proof.get("form") == "nearest_index", rec.summary()
        assert prove(ov_model, [rec]) == []
        compiled = ov.Core().compile_model(ov_model, "CPU", F32)
        rng = np.random.default_rng(9)
        for n, h, w in ((1, 8, 8), (3, 8, 8)) if shape[2] == 8 else ((2, 1, 5), (1, 7, 3)):
            x = _data((n, 3, h, w), np.float32, rng)
            want = run(ir, x)
            got = compiled([x])[0]
            assert got.shape == (n, 3, 2 * h, 2 * w) and np.array_equal(got, want), (shape, n, h, w)


@pytest.mark.compiled
@pytest.mark.parametrize("shape", [[2, 3, 4, 5], ["n", "c", "h", "w"]])
def test_kept_axes_are_copied_with_run_time_scales(shape, tmp_path):
    """The run-time *scales* form of ``test_kept_axes_are_copied_with_run_time_sizes``: scale 1 on N and C under
    tf_half_pixel_for_nn with ceil copies them (onnxruntime reads element x+1 there, up to 1.2e9 off on int32);
    no index form takes run-time scales, so the node goes to the extension, which must copy them too."""
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], name="r", mode="nearest", nearest_mode="ceil",
                            coordinate_transformation_mode="tf_half_pixel_for_nn")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.INT32, shape),
                                            helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("Y", TensorProto.INT32, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=10)
    ov_model, (rec,), ir = _convert(model, tmp_path)
    core = ov.Core()
    if rec.rung == 4:
        from resample_bridge.lowering import compiled as lib

        core.add_extension(lib.openvino_extension())
    run_at = core.compile_model(ov_model, "CPU", F32)
    x = (np.arange(120, dtype=np.int64).reshape(2, 3, 4, 5) * 10**7).astype(np.int32)
    for scales in ([1, 1, 2, 1.5], [1, 1, 1, 1], [1, 1, 0.5, 3]):
        scales = np.array(scales, np.float32)
        want = run(ir, x, None, scales)
        got = run_at([x, scales])[0]
        assert got.dtype == want.dtype and np.array_equal(got, want), scales
        for n, c in itertools.product(range(2), range(3)):  # N and C copied: each slice reads its own
            assert np.isin(want[n, c], x[n, c]).all()
        if np.all(scales == 1):
            assert np.array_equal(want, x)


def test_a_verdict_is_computed_once_per_machine(tmp_path, monkeypatch):
    """A grid verdict outlives the process (a new store over the same cache finds it without running the grid),
    kept per runtime version: another version computes its own."""
    from resample_bridge.lowering import index_form

    monkeypatch.setenv("RESAMPLE_BRIDGE_CACHE", str(tmp_path))
    runs = []
    mismatch = ni.grid_mismatch
    monkeypatch.setattr(ni, "grid_mismatch", lambda *a: runs.append(1) or mismatch(*a))
    (_, ir), = parse_model(sizes_input_model("half_pixel", "round_prefer_floor"))
    (_, other), = parse_model(sizes_input_model("half_pixel", "round_prefer_ceil"))
    for version, expected_runs in (("1", 2), ("1", 2), ("2", 4)):
        monkeypatch.setattr(index_ops, "VERDICTS", index_form.Verdicts(lambda v=version: f"openvino {v}"))
        assert ni.grid_verdict(ni._standalone(ni.nearest_index(ir)), ir) is None
        assert "differ from the oracle's taps" in ni.grid_verdict(ni._standalone(ni.nearest_index(other)), ir)
        assert len(runs) == expected_runs, version


def conv_sandwich(coord, rounding):
    """``fpn_model``'s Resize between two 1x1 Conv layers (identity weights: integers below 256 stay exact in bf16),
    where OpenVINO's CPU runs float ops in bf16 under the bf16 hint, the index form's float32 quotients included."""
    return between_identity_convs(fpn_model(coord, rounding))


@pytest.mark.parametrize("coord,rounding", [("half_pixel", "round_prefer_ceil"), ("asymmetric", "floor")])
def test_bf16_between_conv_layers_moves_no_index(coord, rounding, tmp_path):
    """Under the bf16 hint the float32 quotient estimates run in bf16 (8 bits): before their refinement
    (``_floor_div``) rows moved from output length 510 on. Every element equals onnxruntime's, up to the largest
    output length the form is exact for."""
    src = tmp_path / "m.onnx"
    onnx.save(conv_sandwich(coord, rounding), src)
    done = api.convert(str(src), str(tmp_path / "out" / "m.xml"))
    assert done.records[0].rung == 3 and done.extension is None, done.records[0].summary()
    bf16 = ov.Core().compile_model(done.output, "CPU", {"INFERENCE_PRECISION_HINT": "bf16"})
    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(4)
    for (h, w), (h2, w2) in (((5, 7), (9, 13)), ((2, 300), (5, 510)), ((240, 320), (500, 700)),
                             ((3, 20000), (2, ni.MAX_OUT))):
        x = rng.integers(0, 256, (1, 2, h, w)).astype(np.float32)
        ref_in = np.zeros((1, 2, h2, w2), np.float32)
        got, want = bf16([x, ref_in])[0], sess.run(None, {"X": x, "Yref": ref_in})[0]
        assert got.shape == want.shape and np.array_equal(got, want), ((h, w), (h2, w2))
