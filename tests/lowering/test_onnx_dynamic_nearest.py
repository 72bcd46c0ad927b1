"""Nearest Resize with run-time lengths on the portable ONNX target (and TensorRT's rung 3): the integer index
decomposition (lowering/onnx/nearest_index.py) run on onnxruntime against the oracle, exact equality, and its
proof (lowering/onnx/prove.py), including proofs that bite."""

import itertools

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from resample_bridge.lowering.onnx import OnnxTarget, convert
from resample_bridge.lowering.onnx import nearest_index as ni
from resample_bridge.lowering.passes import DECOMPOSE, PassResult, Policy
from resample_bridge.semantics.nearest_index import nearest_index, oracle_nearest_indices
from resample_bridge.semantics.reference import run as oracle
from resample_bridge.tools.cli import main
from resample_bridge.translate.onnx import parse_model

COORDS = ("asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners", "tf_half_pixel_for_nn",
          "half_pixel_symmetric")
ROUNDINGS = ("floor", "ceil", "round_prefer_floor", "round_prefer_ceil")
MODES = list(itertools.product(COORDS, ROUNDINGS))
# (x H, W), (y H, W): up, down, out == 1, in == 1, both, equal, odd ratios
SHAPES = [((3, 4), (7, 9)), ((9, 7), (4, 3)), ((5, 5), (1, 1)), ((1, 1), (6, 5)), ((1, 6), (4, 1)),
          ((6, 10), (6, 10)), ((13, 5), (17, 2)), ((7, 11), (3, 29))]
NP = {TensorProto.FLOAT: np.float32, TensorProto.UINT8: np.uint8, TensorProto.INT32: np.int32,
      TensorProto.FLOAT16: np.float16, TensorProto.INT64: np.int64, TensorProto.DOUBLE: np.float64}
TARGET = OnnxTarget()


def _model(nodes, inputs, inits=(), opset=19):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("Y", inputs[0].type.tensor_type
                                                                                 .elem_type, None)], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def fpn_model(coord, rounding, dtype=TensorProto.FLOAT, opset=19):
    """F.interpolate(x, size=y.shape[-2:]) as exporters write it: sizes = Concat(Shape(x)[:2], Shape(y)[2:]),
    dynamic H/W on both inputs (sizes from another input's shape)."""
    nodes = [helper.make_node("Shape", ["X"], ["sx"]), helper.make_node("Shape", ["Yref"], ["sy"]),
             helper.make_node("Slice", ["sx", "z", "two"], ["nc"]),
             helper.make_node("Slice", ["sy", "two", "four"], ["hw"]),
             helper.make_node("Concat", ["nc", "hw"], ["S"], axis=0),
             helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="nearest", nearest_mode=rounding,
                              coordinate_transformation_mode=coord, name="r")]
    inits = [onnx.numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("z", 0), ("two", 2), ("four", 4))]
    return _model(nodes, [helper.make_tensor_value_info("X", dtype, [1, 2, "h", "w"]),
                          helper.make_tensor_value_info("Yref", dtype, [1, 2, "h2", "w2"])], inits, opset)


def sizes_input_model(coord, rounding, dtype=TensorProto.FLOAT, axes=(2, 3), opset=19):
    """sizes fed as a graph input (for ``axes``), X with dynamic H/W."""
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="nearest", nearest_mode=rounding,
                            coordinate_transformation_mode=coord, axes=list(axes), name="r")
    return _model([node], [helper.make_tensor_value_info("X", dtype, [1, 2, "h", "w"]),
                           helper.make_tensor_value_info("S", TensorProto.INT64, [len(axes)])], opset=opset)


def static_sizes_model(coord, rounding, sizes=(1, 2, 5, 7)):
    """Static sizes, dynamic batch and H/W: out is a constant, in comes from Shape(X)."""
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="nearest", nearest_mode=rounding,
                            coordinate_transformation_mode=coord, name="r")
    init = onnx.numpy_helper.from_array(np.array(sizes, np.int64), "S")
    return _model([node], [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["n", 2, "h", "w"])], [init])


def _data(shape, dtype, rng):
    dt = np.dtype(dtype)
    if dt == np.int64:  # the oracle resamples in float64: exact within 2^53
        return rng.integers(-2**53, 2**53, shape, endpoint=True)
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
    return rng.permutation(int(np.prod(shape))).reshape(shape).astype(dt)  # distinct: a wrong tap shows


def _session(model):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _assert_exact(got, want, *where):
    assert got.shape == want.shape and got.dtype == want.dtype, where
    assert np.array_equal(got, want), where


def _lowered(model):
    """The index form itself (from rung 3 up: asymmetric integer scales take onnxruntime's own Resize first,
    test_x2_on_a_dynamic_shape_through_the_cli)."""
    result = TARGET.lower_model(model, Policy(allow_conditional=False, floor=DECOMPOSE))
    (rec,) = result.records
    assert rec.rung == DECOMPOSE and rec.proof.get("form") == ni.FORM, rec.summary()
    assert TARGET.prove(result) == []
    return result, rec


# ----------------------------------------------------------------------------------------------------------
# Every mode, through the CLI and the API, on onnxruntime against the oracle


@pytest.mark.slow
@pytest.mark.parametrize("coord,rounding", MODES)
def test_fpn_every_mode_through_the_cli(coord, rounding, tmp_path):
    src, out = tmp_path / "m.onnx", tmp_path / "out.onnx"
    onnx.save(fpn_model(coord, rounding), src)
    assert main(["convert", str(src), "--target", "onnx", "-o", str(out), "-q"]) == 0
    (_, ir), = parse_model(str(src))
    written = onnx.load(str(out))
    assert not any(n.op_type == "Resize" for n in written.graph.node)
    sess = _session(written)
    rng = np.random.default_rng(0)
    for (h, w), (h2, w2) in SHAPES:
        x = _data((1, 2, h, w), np.float32, rng)
        yref = np.zeros((1, 2, h2, w2), np.float32)
        want = oracle(ir, x, None, None, np.array([1, 2, h2, w2], np.int64))
        _assert_exact(sess.run(None, {"X": x, "Yref": yref})[0], want, coord, rounding, h, w, h2, w2)


def _exact_on_every_shape(model, ir, seed):
    """The sizes-input model run on onnxruntime over ``SHAPES`` equals the oracle exactly."""
    sess = _session(model)
    rng = np.random.default_rng(seed)
    for (h, w), (h2, w2) in SHAPES:
        x = _data((1, 2, h, w), np.float32, rng)
        sizes = np.array([h2, w2], np.int64)
        _assert_exact(sess.run(None, {"X": x, "S": sizes})[0], oracle(ir, x, None, None, sizes), h, w, h2, w2)


@pytest.mark.parametrize("coord,rounding", MODES)
def test_sizes_input_every_mode_through_the_api(coord, rounding):
    model = sizes_input_model(coord, rounding)
    (_, ir), = parse_model(model)
    result = convert(model)
    (rec,) = result.records
    assert rec.rung == DECOMPOSE and rec.proof["form"] == ni.FORM and "exact for every length" in rec.reason
    _exact_on_every_shape(result.model, ir, seed=1)


@pytest.mark.parametrize("dtype", [TensorProto.UINT8, TensorProto.INT32, TensorProto.FLOAT16, TensorProto.INT64,
                                   TensorProto.DOUBLE])
@pytest.mark.parametrize("coord,rounding", [("half_pixel", "round_prefer_ceil"), ("align_corners", "ceil"),
                                            ("asymmetric", "floor"), ("pytorch_half_pixel", "round_prefer_floor")])
@pytest.mark.slow
def test_other_dtypes_are_moved_exactly(dtype, coord, rounding):
    for model, fed in ((sizes_input_model(coord, rounding, dtype), "S"), (fpn_model(coord, rounding, dtype), "Yref")):
        (_, ir), = parse_model(model)
        result, _ = _lowered(model)
        sess = _session(result.model)
        rng = np.random.default_rng(2)
        for (h, w), (h2, w2) in SHAPES:
            x = _data((1, 2, h, w), NP[dtype], rng)
            if fed == "S":
                sizes = np.array([h2, w2], np.int64)
                feeds = {"X": x, "S": sizes}
            else:
                sizes = np.array([1, 2, h2, w2], np.int64)
                feeds = {"X": x, "Yref": np.zeros((1, 2, h2, w2), NP[dtype])}
            _assert_exact(sess.run(None, feeds)[0], oracle(ir, x, None, None, sizes), dtype, h, w, h2, w2)


def test_static_sizes_on_a_dynamic_shape():
    """sizes a constant, every length of X but C unknown: out is the constant, in comes from Shape(X)."""
    for coord, rounding in [("half_pixel", "round_prefer_floor"), ("align_corners", "round_prefer_ceil")]:
        model = static_sizes_model(coord, rounding)
        (_, ir), = parse_model(model)
        result, rec = _lowered(model)
        sess = _session(result.model)
        rng = np.random.default_rng(3)
        for n, ((h, w), _) in zip((1, 2, 3, 1, 2, 3, 1, 2), SHAPES):
            x = _data((n, 2, h, w), np.float32, rng)
            _assert_exact(sess.run(None, {"X": x})[0], oracle(ir, x), n, h, w)


def test_axes_in_another_order():
    """axes=[3, 2]: sizes[0] is W's length, sizes[1] H's."""
    model = sizes_input_model("half_pixel", "round_prefer_ceil", axes=(3, 2))
    (_, ir), = parse_model(model)
    assert ir.axes == (3, 2)
    result, _ = _lowered(model)
    sess = _session(result.model)
    x = _data((1, 2, 5, 3), np.float32, np.random.default_rng(4))
    sizes = np.array([7, 2], np.int64)
    got = sess.run(None, {"X": x, "S": sizes})[0]
    assert got.shape == (1, 2, 2, 7)
    _assert_exact(got, oracle(ir, x, None, None, sizes))


def test_opset_11_model():
    """Resize-11 (the first with sizes): the index form uses no op newer than Range (Min/Max/Clip on integers
    would need opset 12)."""
    node = helper.make_node("Resize", ["X", "roi", "sc", "S"], ["Y"], mode="nearest", name="r",
                            nearest_mode="round_prefer_floor", coordinate_transformation_mode="asymmetric")
    empty = [onnx.numpy_helper.from_array(np.zeros(0, np.float32), n) for n in ("roi", "sc")]
    model = _model([node], [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"]),
                            helper.make_tensor_value_info("S", TensorProto.INT64, [4])], empty, opset=11)
    model.graph.output[0].type.tensor_type.shape.dim.extend([onnx.TensorShapeProto.Dimension(dim_param=p)
                                                             for p in "nchw"])
    (_, ir), = parse_model(model)
    result, _ = _lowered(model)
    onnx.checker.check_model(result.model, full_check=True)  # every op's schema at opset 11, types inferred
    x = _data((1, 2, 4, 6), np.float32, np.random.default_rng(5))
    sizes = np.array([1, 2, 9, 3], np.int64)
    _assert_exact(_session(result.model).run(None, {"X": x, "S": sizes})[0], oracle(ir, x, None, None, sizes))


# ----------------------------------------------------------------------------------------------------------
# The index subgraph alone, and refusals


@pytest.fixture
def computed(monkeypatch):
    """Grid verdicts computed here, not read from a machine's cache (``index_form.Verdicts``)."""
    from resample_bridge.lowering.index_form import Verdicts

    monkeypatch.setattr(ni, "_VERDICTS", Verdicts())


@pytest.mark.usefixtures("computed")
def test_index_subgraph_grid_for_every_mode():
    """Each mode's index subgraph alone, on onnxruntime, over (in, out) in 1..48 and pairs past the int32 bound."""
    assert any(i * o > 2**31 // 4 for i, o in ni.GRID)
    for coord, rounding in MODES:
        (_, ir), = parse_model(sizes_input_model(coord, rounding))
        assert ni.grid_verdict(ni.index_model(nearest_index(ir)), ir) is None, (coord, rounding)


def test_int64_past_the_int32_bound():
    """At out = 30000 (r*out = 3.6e9 > 2^31 for half_pixel with rounding) the int64 indices are the oracle's."""
    (_, ir), = parse_model(sizes_input_model("half_pixel", "round_prefer_ceil"))
    sess = _session(ni.index_model(nearest_index(ir)))
    for i, o in ((30001, 30000), (29999, 40000)):
        got = sess.run(None, {"in": np.array(i, np.int64), "out": np.array(o, np.int64)})[0]
        np.testing.assert_array_equal(got, oracle_nearest_indices(ir, i, o))


@pytest.mark.usefixtures("computed")
def test_grid_catches_a_wrong_subgraph():
    (_, ir), = parse_model(sizes_input_model("half_pixel", "round_prefer_floor"))
    (_, other), = parse_model(sizes_input_model("half_pixel", "round_prefer_ceil"))
    verdict = ni.grid_verdict(ni.index_model(nearest_index(other)), ir)
    assert verdict and "differ from the oracle's taps" in verdict


def test_refused_where_no_integer_form():
    """Linear with run-time sizes (pytorch_half_pixel: onnxruntime differs at length 1), nearest with run-time
    scales: one rung 3 refusal giving both reasons."""
    linear = sizes_input_model("pytorch_half_pixel", "floor")
    for a in linear.graph.node[0].attribute:
        if a.name == "mode":
            a.s = b"linear"
    rec, = TARGET.lower_model(linear).records
    assert rec.refused and [n for n, _, _ in rec.tried] == [1, 2, 3]
    assert "the tap tables need" in rec.tried[2][2] and "linear reads more than one tap" in rec.tried[2][2]
    node = helper.make_node("Resize", ["X", "", "sc"], ["Y"], mode="nearest", name="r")
    scales = _model([node], [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, "h", "w"]),
                             helper.make_tensor_value_info("sc", TensorProto.FLOAT, [4])])
    rec, = TARGET.lower_model(scales).records
    assert rec.refused and "scales" in rec.tried[2][2] and "float32 product" in rec.tried[2][2]


def test_static_shapes_keep_the_tap_tables():
    model = static_sizes_model("half_pixel", "floor")
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    for d, v in zip(model.graph.input[0].type.tensor_type.shape.dim[2:], (3, 4)):
        d.dim_value = v
    rec, = TARGET.lower_model(model).records
    assert rec.rung == DECOMPOSE and "form" not in rec.proof and "tap tables" in rec.reason


# ----------------------------------------------------------------------------------------------------------
# The proof re-reads the written model


def _tampered(result, edit):
    m = onnx.ModelProto()
    m.CopyFrom(result.model)
    edit(m)
    return TARGET.prove(PassResult(m, result.records))


def _node(m, name):
    return next(n for n in m.graph.node if n.name == name)


def test_proof_catches_a_wrong_index_subgraph():
    """The written index subgraph swapped for another rounding's: the grid says where it differs."""
    result, _ = _lowered(sizes_input_model("half_pixel", "round_prefer_floor"))
    other, _ = _lowered(sizes_input_model("half_pixel", "round_prefer_ceil"))

    def swap(m):
        del m.graph.node[:]
        m.graph.node.extend(other.model.graph.node)
        del m.graph.initializer[:]
        m.graph.initializer.extend(other.model.graph.initializer)

    failures = _tampered(result, swap)
    assert failures and "differ from the oracle's taps" in failures[0] and "axis 2" in failures[0]


def test_proof_checks_the_structure():
    result, _ = _lowered(fpn_model("align_corners", "floor"))

    def wrong_axis(m):
        g = _node(m, "r/index2/gather")
        del g.attribute[:]
        g.attribute.extend([helper.make_attribute("axis", 3)])

    assert any("the Gather reads axis 3" in f for f in _tampered(result, wrong_axis))

    def wrong_length(m):
        k = _node(m, "r/index3/in").input[1]
        init = next(i for i in m.graph.initializer if i.name == k)
        init.CopyFrom(onnx.numpy_helper.from_array(np.asarray(2, np.int64), k))

    # index3/in reads the constant 3, shared with no other axis' index; 2 is another axis.
    assert any("reads another axis" in f for f in _tampered(result, wrong_length))

    def wrong_sizes(m):
        _node(m, "r/index2/out").input[1] = _node(m, "r/index3/out").input[1]

    assert any("sizes[2]" in f for f in _tampered(result, wrong_sizes))

    def dropped_axis(m):
        g2, g3 = _node(m, "r/index2/gather"), _node(m, "r/index3/gather")
        g3.input[0] = g2.input[0]

    assert any("previous axis' result" in f for f in _tampered(result, dropped_axis))


def test_probe_reports_the_concrete_shapes():
    result, rec = _lowered(fpn_model("tf_half_pixel_for_nn", "ceil"))
    assert rec.extra["probe"].startswith("probed on") and rec.extra["probe"].endswith("bit-exact")


# ----------------------------------------------------------------------------------------------------------
# TensorRT's rung 3 reuses the form, under an assumption about its int64 arithmetic


def test_tensorrt_takes_the_index_form_where_it_rejects_the_node():
    """onnx-tensorrt rejects tf_half_pixel_for_nn with ceil; unless strict, the index form beats the plugin."""
    from resample_bridge.lowering.tensorrt import plan
    from resample_bridge.lowering.tensorrt.target import lower_checked

    model = sizes_input_model("tf_half_pixel_for_nn", "ceil")
    (_, ir), = parse_model(model)
    result = lower_checked(model, Policy(allow_conditional=True))
    (rec,) = result.records
    assert rec.rung == DECOMPOSE and rec.proof["form"] == ni.FORM, rec.summary()
    assert rec.assumptions == [plan.INDEX_ASSUMPTION] and f"up to {ni.INT32_MAX_OUT}" in rec.reason
    _exact_on_every_shape(result.model, ir, seed=6)
    # strict: nothing that rests on an assumption; the plugin.
    (rec,) = lower_checked(model, Policy(allow_conditional=False)).records
    assert rec.rung == 4 and any(n == 3 and why.startswith("rests on: TensorRT computes the index arithmetic")
                                 for n, _, why in rec.tried)


def test_tensorrt_index_form_refuses_uint8():
    from resample_bridge.lowering.tensorrt.target import lower_checked

    (rec,) = lower_checked(sizes_input_model("tf_half_pixel_for_nn", "ceil", TensorProto.UINT8),
                           Policy(allow_conditional=True)).records
    assert rec.rung == 4 and any(n == 3 and "does not take uint8" in why for n, _, why in rec.tried)


# ----------------------------------------------------------------------------------------------------------
# Issue 20: axes whose length a run-time size keeps are copied (the spec convention), in every mode


def every_axis_sizes_model(coord, rounding, dtype=TensorProto.FLOAT):
    """sizes for every axis fed as a graph input: N and C are in the resize, their scale known only at run time."""
    node = helper.make_node("Resize", ["X", "", "", "S"], ["Y"], mode="nearest", nearest_mode=rounding,
                            coordinate_transformation_mode=coord, name="r")
    return _model([node], [helper.make_tensor_value_info("X", dtype, ["n", 3, "h", "w"]),
                           helper.make_tensor_value_info("S", TensorProto.INT64, [4])])


# (x shape, sizes): N, C kept and H, W changed; N, C, H kept; every length kept.
KEPT = [((1, 3, 4, 5), (1, 3, 8, 3)), ((2, 3, 4, 5), (2, 3, 4, 9)), ((2, 3, 5, 4), (2, 3, 5, 4))]


def kept_axes_agree(run_model, model, dtype):
    """``run_model(x, sizes)`` equals the oracle on ``KEPT``, and an unchanged shape is copied whole. Under
    tf_half_pixel_for_nn (the mode whose map moves an axis of equal lengths) onnxruntime on the source model
    agrees too: it copies an axis of scale 1, as the convention does (elsewhere its float32 coordinates may
    break ties otherwise on the resized axes, e.g. half_pixel_symmetric floor 5 -> 3)."""
    (_, ir), = parse_model(model)
    assert ir.equal_length_identity
    source = _session(model) if ir.coord == "tf_half_pixel_for_nn" else None
    rng = np.random.default_rng(7)
    for shape, sizes in KEPT:
        x, sizes = _data(shape, NP[dtype], rng), np.array(sizes, np.int64)
        want = oracle(ir, x, None, None, sizes)
        if source is not None:
            _assert_exact(source.run(None, {"X": x, "S": sizes})[0], want, "onnxruntime", shape, sizes)
        _assert_exact(run_model(x, sizes), want, shape, sizes)
        if tuple(sizes) == shape:
            _assert_exact(want, x, "copied")


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.INT32])
@pytest.mark.parametrize("coord,rounding", MODES)
def test_kept_axes_are_copied_with_run_time_sizes(coord, rounding, dtype):
    """tf_half_pixel_for_nn with ceil read element x+1 on N and C (up to 1.2e9 wrong on int32) before the fix."""
    model = every_axis_sizes_model(coord, rounding, dtype)
    result, _ = _lowered(model)
    sess = _session(result.model)
    kept_axes_agree(lambda x, sizes: sess.run(None, {"X": x, "S": sizes})[0], model, dtype)


# ----------------------------------------------------------------------------------------------------------
# Issue 20: static integer scales on a dynamic shape (x2 with a dynamic batch) take the index form too


def scales_model(coord="asymmetric", rounding="round_prefer_floor", shape=("N", 3, 8, 8), opset=13,
                 scales=(1, 1, 2, 2), dtype=TensorProto.FLOAT):
    """Resize x2 with constant scales, as YOLO-style exports write it; roi an empty constant before opset 18."""
    inits = [onnx.numpy_helper.from_array(np.array(scales, np.float32), "sc")]
    if opset < 18:
        inits.append(onnx.numpy_helper.from_array(np.zeros(0, np.float32), "roi"))
    node = helper.make_node("Resize", ["X", "roi" if opset < 18 else "", "sc"], ["Y"], mode="nearest", name="r",
                            nearest_mode=rounding, coordinate_transformation_mode=coord)
    return _model([node], [helper.make_tensor_value_info("X", dtype, list(shape))], inits, opset)


def test_integer_scales_map_is_the_sizes_map():
    """An integer scale k is sizes out = k*in: the oracle's own taps of the scales IR equal the form at
    (in, k*in), in every mode, both conventions, k = 1..3 (k = 1 kept by the reference convention)."""
    import dataclasses

    from resample_bridge.semantics.coords import bind_resize
    from resample_bridge.semantics.nearest_index import integer_scales
    from resample_bridge.semantics.taps import axis_taps

    for (coord, rounding), convention in itertools.product(MODES, ("spec", "reference")):
        (_, ir), = parse_model(scales_model(coord, rounding, opset=19, scales=(1, 1, 2, 3)), convention)
        assert integer_scales(ir) == ((2, 3) if convention == "spec" else (1, 1, 2, 3))
        form = nearest_index(ir)
        for k, i in itertools.product((1, 2, 3), range(1, 25)):
            one = dataclasses.replace(ir, rank=1, axes=(0,), scales=(k,), input_shape=None)
            bound = bind_resize(one, (i,))
            want = axis_taps(bound.axes[0], bound.sampler, False).index[:, 0] if bound.axes else np.arange(i)
            assert np.array_equal(form.indices(i, k * i), want), (coord, rounding, convention, k, i)


def test_non_integer_scales_keep_their_refusal():
    (_, ir), = parse_model(scales_model(scales=(1, 1, 0.5, 2)))
    assert ni.form_of(ir).field == "scales"


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("shape", [("N", 3, 8, 8), (1, 3, "H", "W")])
@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric"])
def test_x2_on_a_dynamic_shape_through_the_cli(shape, opset, coord, tmp_path):
    """Refused before (rung 3 read only sizes); now the index form, default-domain ops only, exact on onnxruntime
    for several batch sizes / lengths. Asymmetric stays onnxruntime's own Resize (issue 43: its float32 x / 2 is
    exact on every tie), exact on the same lengths."""
    src, out = tmp_path / "m.onnx", tmp_path / "out.onnx"
    onnx.save(scales_model(coord, shape=shape, opset=opset), src)
    assert main(["convert", str(src), "--target", "onnx", "-o", str(out), "-q"]) == 0
    (_, ir), = parse_model(str(src))
    written = onnx.load(str(out))
    resizes = [n for n in written.graph.node if n.op_type == "Resize"]
    assert {n.domain for n in written.graph.node} <= {""} and len(resizes) == (coord == "asymmetric")
    sess = _session(written)
    rng = np.random.default_rng(9)
    lengths = [(n, 8, 8) for n in (1, 2, 5)] if shape[0] == "N" else [(1, h, w) for h, w in ((8, 8), (1, 7), (13, 4))]
    for n, h, w in lengths:
        x = _data((n, 3, h, w), np.float32, rng)
        got = sess.run(None, {"X": x})[0]
        assert got.shape == (n, 3, 2 * h, 2 * w)
        _assert_exact(got, oracle(ir, x), n, h, w)


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.INT32])
@pytest.mark.parametrize("coord,rounding", MODES)
def test_integer_scales_every_mode(coord, rounding, dtype):
    model = scales_model(coord, rounding, shape=("N", 3, "H", "W"), opset=19, scales=(1, 1, 3, 2), dtype=dtype)
    (_, ir), = parse_model(model)
    result, rec = _lowered(model)
    assert "exact for every length" in rec.reason
    sess = _session(result.model)
    rng = np.random.default_rng(10)
    for n, h, w in ((1, 1, 1), (2, 5, 3), (3, 4, 7)):
        x = _data((n, 3, h, w), NP[dtype], rng)
        _assert_exact(sess.run(None, {"X": x})[0], oracle(ir, x), coord, rounding, n, h, w)


def test_proof_checks_the_scaled_length():
    result, _ = _lowered(scales_model())

    def wrong_scale(m):
        k = _node(m, "r/index3/out").input[1]
        init = next(i for i in m.graph.initializer if i.name == k)
        init.CopyFrom(onnx.numpy_helper.from_array(np.asarray(3, np.int64), k))

    assert any("input length times the scale" in f for f in _tampered(result, wrong_scale))
