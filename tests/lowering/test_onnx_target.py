"""``convert --target onnx``: every converted node runs on onnxruntime and equals the oracle
(``semantics.reference.run`` on the source's parsed IR), or the node is refused with a reason."""

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from resample_bridge.lowering.onnx import DEFAULT_POLICY, OnnxTarget, convert, convert_to_onnx, decompose_resize, \
    format_convert_onnx, write_proven
from resample_bridge.lowering.onnx.decompose import sum_order
from resample_bridge.semantics.coords import bind_resize
from resample_bridge.semantics.errors import BridgeError
from resample_bridge.semantics.reference import run as oracle
from resample_bridge.semantics.taps import axis_taps
from resample_bridge.translate.onnx import parse_model
from tests.helpers.conformance import conformance_cases, frozen_case
from tests.helpers.models import resize_model, skip_sized_unet

CASES = conformance_cases()
TARGET = OnnxTarget()
FIELDS_OR_RUNGS = ("dtype", "scales", "sizes", "roi", "axes", "input_shape", "opset", "padding", "spatial_rank",
                   "keep_aspect_ratio_policy", "antialias", "length1", "coordinate", "arith", "op", "rung")


def run_ort(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


def lower(model):
    result = TARGET.lower_model(model)
    assert not result.refused, result.refused[0].reason
    assert TARGET.prove(result) == []
    return result


def assert_oracle(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    elif want.dtype == np.float16:
        np.testing.assert_array_max_ulp(got, want, maxulp=1)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def converted_equals_oracle(model, x, *, rung=None):
    """Convert, run the written model on onnxruntime and compare with the oracle on the source IR."""
    (_, ir), = parse_model(model)
    result = lower(model)
    if rung is not None:
        assert result.records[0].rung == rung, result.records[0].summary()
    want = oracle(ir, x)
    got = run_ort(result.model, {model.graph.input[0].name: x})
    assert_oracle(got, want)
    return result, got, want


# ----------------------------------------------------------------------------------------------------------
# The 62 ONNX conformance cases, roi/scales/sizes frozen


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_conformance(case):
    model, feeds, _ = frozen_case(case)
    (_, ir), = parse_model(model)
    result = TARGET.lower_model(model)
    rec, = result.records
    if rec.refused:  # allowed only with a reason that names a field or a rung
        assert rec.tried and all(any(w in why for w in FIELDS_OR_RUNGS) for _, _, why in rec.tried), rec.tried
        return
    assert TARGET.prove(result) == []
    got = run_ort(result.model, feeds)
    args = iter(feeds[vi.name] for vi in model.graph.input)
    consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    inputs = [None if not n else consts[n] if n in consts else next(args) for n in model.graph.node[0].input]
    assert_oracle(got, oracle(ir, *inputs))


def test_conformance_static_shapes_all_lowered():
    records = {c.name: TARGET.lower_model(frozen_case(c)[0]).records[0] for c in CASES}
    assert len(records) == 62 and not [r.node for r in records.values() if r.refused]
    assert {r.rung for r in records.values()} <= {1, 2, 3}
    # Integer-scale nearest: onnxruntime's one float32 division dst / scale is exact on every tie (issue 43: these
    # were decomposed); test_pytorch_nearest_upsample_stays_native runs onnxruntime on that form
    assert records["test_upsample_nearest"].rung == 1
    assert records["test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric"].rung == 1


# ----------------------------------------------------------------------------------------------------------
# Integer dtypes: computed in float64, rounded half to even, saturated: bit-exact against the oracle


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32])
@pytest.mark.parametrize("mode,attrs", [("linear", {"coordinate_transformation_mode": "asymmetric"}),
                                        ("cubic", {}), ("linear", {"antialias": 1})])
def test_integer_bit_exact(dtype, mode, attrs):
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    scales = [1, 1, 2, 0.5] if not attrs.get("antialias") else [1, 1, 0.4, 0.7]
    model = resize_model((1, 2, 6, 8), scales=scales, mode=mode, dtype=helper.np_dtype_to_tensor_dtype(
        np.dtype(dtype)), **attrs)
    _, _, h, w = np.indices((1, 2, 6, 8))
    steps = (h // 2 + w // 2) % 2 == 0  # 2x2 blocks of the extremes: a cubic overshoots at their edges
    probes = [rng.integers(info.min, int(info.max) + 1, (1, 2, 6, 8)).astype(dtype),
              np.where(steps, info.max, info.min).astype(dtype),
              rng.integers(0, 4, (1, 2, 6, 8)).astype(dtype)]
    if dtype == np.int32:  # float32 holds no odd integer past 2^24, nor the .5 between them
        probes.append((2**24 + rng.integers(-5, 6, (1, 2, 6, 8))).astype(dtype))
    (_, ir), = parse_model(model)
    # uint8 antialias: the spec reads it as onnxruntime's own fixed point (semantics/fixed_point.py), which the
    # native Resize computes; the other integer resizes onnxruntime truncates: decomposed
    native = dtype == np.uint8 and attrs.get("antialias")
    for x in probes:
        converted_equals_oracle(model, x, rung=1 if native else 3)
    if mode == "linear" and not attrs.get("antialias"):
        # Halfway taps make .5 ties, where half to even and half up disagree: the test sees rounding.
        exact = oracle(ir, probes[2].astype(np.float64))
        assert np.any((exact % 1 == 0.5) & (np.floor(exact + 0.5) != np.round(exact)))
    if mode == "cubic":
        # The cubic overshoot leaves the dtype's range: the test sees saturation.
        assert oracle(ir, probes[1].astype(np.float64)).max() > info.max


def test_onnxruntime_itself_truncates_integers():
    """Why integer linear/cubic never stays as it is: onnxruntime's own Resize differs from the oracle."""
    model = resize_model((1, 1, 1, 4), scales=[1, 1, 1, 2], mode="linear", coordinate_transformation_mode="asymmetric",
                         dtype=TensorProto.UINT8)
    x = np.array([[[[0, 1, 2, 3]]]], np.uint8)
    (_, ir), = parse_model(model)
    assert not np.array_equal(run_ort(model, {"X": x}), oracle(ir, x))
    converted_equals_oracle(model, x, rung=3)


def test_float16_computes_in_float32():
    # Cubic at rank 3: onnxruntime refuses it, so this is the decomposition, float16 -> float32 -> float16.
    model = resize_model((2, 5, 6), scales=[1, 0.6, 1.7], mode="cubic", dtype=TensorProto.FLOAT16)
    x = np.random.default_rng(2).uniform(-4, 4, (2, 5, 6)).astype(np.float16)
    result, _, _ = converted_equals_oracle(model, x, rung=3)
    casts = [n for n in result.model.graph.node if n.op_type == "Cast"]
    assert [onnx.helper.get_attribute_value(n.attribute[0]) for n in casts] == [TensorProto.FLOAT, TensorProto.FLOAT16]


def test_float64_has_no_onnxruntime_resize_kernel():
    model = resize_model((1, 1, 4, 5), scales=[1, 1, 0.6, 1.7], mode="cubic", dtype=TensorProto.DOUBLE)
    result, _, _ = converted_equals_oracle(model, np.random.default_rng(3).standard_normal((1, 1, 4, 5)), rung=3)
    assert "float64" in result.records[0].tried[0][2]


# ----------------------------------------------------------------------------------------------------------
# Antialias at equal lengths, tf_crop_and_resize, nearest ties


def test_antialias_identity_size_keeps_its_filter():
    # not_larger: one scale 4/5 for both axes, so H stays 2 -> 2 but is filtered with a 4-tap window.
    model = resize_model((1, 1, 2, 5), sizes=[2, 4], axes=[2, 3], keep_aspect_ratio_policy="not_larger",
                         mode="linear", antialias=1)
    (_, ir), = parse_model(model)
    bound = bind_resize(ir, (1, 1, 2, 5))
    h = next(ax for ax in bound.axes if ax.axis == 2)
    assert h.out_len == h.in_len and axis_taps(h, bound.sampler, False).index.shape[1] > 1
    x = np.random.default_rng(4).standard_normal((1, 1, 2, 5)).astype(np.float32)
    _, got, _ = converted_equals_oracle(model, x, rung=3)
    assert not np.allclose(run_ort(model, {"X": x}), got)  # onnxruntime copies that axis


def test_antialias_equal_length_upsample_is_respelled():
    # H 5 -> 5 at scale 1.1: onnxruntime copies it under antialias; antialias cannot act on an upsample, so
    # the same numbers are spelled without it.
    model = resize_model((1, 1, 5, 4), scales=[1, 1, 1.1, 2], mode="linear", antialias=1)
    x = np.random.default_rng(5).standard_normal((1, 1, 5, 4)).astype(np.float32)
    result, got, _ = converted_equals_oracle(model, x, rung=2)
    assert "antialias=0" in result.records[0].reason
    assert not np.allclose(run_ort(model, {"X": x}), got)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64])
def test_tf_crop_and_resize_negative_roi_extrapolates(dtype):
    model = resize_model((1, 1, 4, 4), scales=[1, 1, 1.5, 1.5], roi=[0, 0, -0.4, -0.2, 1, 1, 1.3, 0.9],
                         coordinate_transformation_mode="tf_crop_and_resize", mode="linear",
                         extrapolation_value=-7.5, dtype=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    x = np.random.default_rng(6).integers(-50, 50, (1, 1, 4, 4)).astype(dtype)
    result, got, _ = converted_equals_oracle(model, x)
    fill = -8 if dtype == np.int8 else -7.5  # ONNX's cast rounds -7.5 half to even
    assert (got == fill).any() and (got != fill).any()
    if dtype != np.float32:
        assert result.records[0].rung == 3
        assert any(n.op_type == "Where" for n in result.model.graph.node)


def test_nearest_ties_are_decomposed():
    # 2 -> 7 half_pixel: output 3 sits exactly on .5, where float32 coordinates may pick either neighbour.
    model = resize_model((1, 1, 2, 3), sizes=[1, 1, 7, 5], mode="nearest")
    result, _, _ = converted_equals_oracle(model, np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3), rung=3)
    assert "tie" in result.records[0].tried[0][2]


def test_outer_axis_linear_is_decomposed():
    model = resize_model((3, 2, 4, 4), scales=[2, 1, 1, 0.5], mode="linear")
    converted_equals_oracle(model, np.random.default_rng(7).standard_normal((3, 2, 4, 4)).astype(np.float32), rung=3)


def test_sizes_that_keep_n_and_c_run_natively_on_dynamic_shapes():
    """TorchScript's ``F.interpolate(b, size=a.shape[-2:])`` writes sizes = Concat(Shape(b)[:2], Shape(a)[2:]):
    N and C are X's own lengths (the IR's ``same_as_input``), so onnxruntime's rank-4 linear runs it (only H and W
    resized); before, every axis of run-time sizes counted as resized and the node was refused."""
    for dtype in (TensorProto.FLOAT, TensorProto.FLOAT16):
        model = skip_sized_unet(dtype=dtype)
        result = lower(model)
        assert [r.rung for r in result.records] == [1], [r.summary() for r in result.records]
        src = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        for shape in ((1, 3, 32, 48), (1, 3, 18, 30)):
            x = np.random.default_rng(0).uniform(0, 1, shape).astype(helper.tensor_dtype_to_np_dtype(dtype))
            np.testing.assert_array_equal(run_ort(result.model, {"x": x}), src.run(None, {"x": x})[0])


# ----------------------------------------------------------------------------------------------------------
# Whole models, refusals, files


def test_multi_node_model():
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["X"], ["a"]),
             helper.make_node("Resize", ["a", "", "", "sz"], ["b"], mode="nearest"),  # .5 ties: rung 3
             helper.make_node("Add", ["b", "c"], ["d"]),
             helper.make_node("Resize", ["d", "", "s2"], ["e"], mode="nearest", nearest_mode="floor",
                              coordinate_transformation_mode="asymmetric"),  # x / 2 exact in float32: rung 1
             helper.make_node("Resize", ["e", "", "sc"], ["h"], mode="linear"),  # rung 1
             helper.make_node("GridSample", ["h", "G"], ["Y"], mode="bicubic")]  # rung 1; all unnamed
    inits = [numpy_helper.from_array(np.array([1, 1, 7, 5], np.int64), "sz"),
             numpy_helper.from_array(np.float32(0.25), "c"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s2"),
             numpy_helper.from_array(np.array([1, 1, 0.5, 0.75], np.float32), "sc")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", f, [1, 1, 2, 3]),
                                           helper.make_tensor_value_info("G", f, [1, 3, 4, 2])],
                              [helper.make_tensor_value_info("Y", f, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    result = convert(model)
    assert [r.rung for r in result.records] == [3, 1, 1, 1]
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 1, 2, 3)).astype(np.float32)
    g = rng.uniform(-1.1, 1.1, (1, 3, 4, 2)).astype(np.float32)
    r1, r2, r3, gs = [ir for _, ir in parse_model(model)]
    want = oracle(gs, oracle(r3, oracle(r2, oracle(r1, np.maximum(x, 0)) + np.float32(0.25))), g)
    assert_oracle(run_ort(result.model, {"X": x, "G": g}), want)


def test_pytorch_nearest_upsample_stays_native():
    # nn.Upsample(scale_factor=2) exports asymmetric + floor: every even output sits on an integer, which
    # onnxruntime's one float32 division x / 2 computes exactly (issue 43: it was respelled, and on dynamic
    # shapes decomposed); the probes below sit on every such integer.
    model = resize_model((1, 2, 3, 4), scales=[1, 1, 2, 2], mode="nearest", nearest_mode="floor",
                         coordinate_transformation_mode="asymmetric", opset=13)
    x = np.random.default_rng(9).standard_normal((1, 2, 3, 4)).astype(np.float32)
    result, _, _ = converted_equals_oracle(model, x, rung=1)
    assert not result.records[0].tried
    # An odd integer scale too, and the near ties of a scale that is not an integer are still refused
    model = resize_model((1, 1, 5, 5), scales=[1, 1, 3, 3], mode="nearest", nearest_mode="round_prefer_ceil",
                         coordinate_transformation_mode="asymmetric", opset=13)
    converted_equals_oracle(model, np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5), rung=1)
    model = resize_model((1, 1, 10, 10), scales=[1, 1, 0.4, 0.4], mode="nearest", nearest_mode="floor",
                         coordinate_transformation_mode="asymmetric", opset=13)
    result = lower(model)
    assert result.records[0].rung != 1 and "tie" in result.records[0].tried[0][2]


def test_nearest_antialias_attribute_is_respelled():
    model = resize_model((1, 1, 3, 4), scales=[1, 1, 2, 2], mode="nearest", antialias=1)
    with pytest.raises(Exception):
        run_ort(model, {"X": np.zeros((1, 1, 3, 4), np.float32)})  # onnxruntime refuses the node as is
    result, _, _ = converted_equals_oracle(model, np.random.default_rng(10).standard_normal((1, 1, 3, 4))
                                           .astype(np.float32), rung=2)
    assert "antialias" not in result.records[0].reason


def test_refused_dynamic_shape(tmp_path):
    # align_corners reads the run-time length: no convolution form either (half_pixel takes it:
    # test_onnx_conv_form.py).
    model = resize_model(("N", 1, "H", "W"), scales=[1, 1, 2, 2], mode="linear",
                         coordinate_transformation_mode="align_corners")
    result = TARGET.lower_model(model)
    rec, = result.records
    assert rec.refused
    assert [n for n, _, _ in rec.tried] == [1, 2, 3]
    assert "exact only if" in rec.tried[0][2] and "not static" in rec.tried[2][2]
    with pytest.raises(BridgeError) as e:
        convert(model)
    assert e.value.field == "rung"
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    with pytest.raises(BridgeError):
        convert_to_onnx(str(path), str(tmp_path / "out.onnx"))
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]  # nothing partial left behind


def test_dynamic_shape_exact_for_every_value():
    model = resize_model((1, 1, "H", "W"), sizes=[1, 1, 8, 8], mode="linear")
    rec, = convert(model).records
    assert rec.rung == 1 and not rec.conditions


def test_gridsample_cubic_border_reference_convention_is_decomposed():
    f = TensorProto.FLOAT
    node = helper.make_node("GridSample", ["X", "G"], ["Y"], mode="cubic", padding_mode="border")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", f, [1, 1, 4, 4]),
                                            helper.make_tensor_value_info("G", f, [1, 2, 2, 2])],
                              [helper.make_tensor_value_info("Y", f, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)
    from resample_bridge.translate.onnx import onnx_convention

    with onnx_convention("reference"):   # onnx.reference pads the coordinate first: no runtime computes that,
        rec, = TARGET(model, DEFAULT_POLICY).records  # the decomposition does (proven against the oracle)
    assert rec.rung == 3 and "padding_on" in rec.tried[0][2] and "probed on onnxruntime" in rec.extra["probe"]
    rec, = TARGET.lower_model(model).records   # the spec convention pads each tap, as onnxruntime does
    assert not rec.refused and rec.rung == 1


def test_zero_length_output_refused():
    """A zero-length axis from a non-empty one (a scale of 0) is invalid (the spec and onnxruntime refuse it):
    refused when the node is read, naming sizes."""
    with pytest.raises(BridgeError) as e:
        TARGET.lower_model(resize_model((1, 1, 4, 4), sizes=[1, 1, 0, 4], mode="linear"))
    assert e.value.field == "sizes" and "zero-length" in e.value.message


def test_convert_to_onnx_writes_and_reports(tmp_path):
    src, out = tmp_path / "m.onnx", tmp_path / "out.onnx"
    onnx.save(resize_model((1, 1, 2, 3), sizes=[1, 1, 7, 5], mode="nearest"), str(src))
    report = convert_to_onnx(str(src), str(out))
    assert report["nodes"][0]["rung"] == 3 and "wrote" in format_convert_onnx(report)
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    (_, ir), = parse_model(str(src))
    assert_oracle(run_ort(onnx.load(str(out)), {"X": x}), oracle(ir, x))
    with pytest.raises(BridgeError):
        convert_to_onnx(str(src), str(out))  # exists, no force
    convert_to_onnx(str(src), str(out), force=True)
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "out.onnx"]


def test_unproven_model_is_not_written(tmp_path):
    out = tmp_path / "out.onnx"
    with pytest.raises(BridgeError, match="could not prove itself"):
        write_proven(resize_model((1, 1, 2, 2), scales=[1, 1, 2, 2]), str(out), lambda written: ["no"])
    assert os.listdir(tmp_path) == []


def test_proof_catches_a_wrong_table():
    result = lower(resize_model((1, 1, 3, 4), scales=[1, 1, 1, 1.5], mode="cubic", dtype=TensorProto.UINT8))
    weight = next(i for i in result.model.graph.initializer if i.name.endswith("/taps3/weight"))
    w = numpy_helper.to_array(weight).copy()
    w[0, 0] += 1e-9
    weight.CopyFrom(numpy_helper.from_array(w, weight.name))
    assert TARGET.prove(result)


# ----------------------------------------------------------------------------------------------------------
# The decomposition as a building block (the TensorRT target's rung 3)


def test_decompose_resize_with_a_float32_only_policy():
    import onnx_graphsurgeon as gs

    model = resize_model((1, 1, 3, 4), scales=[1, 1, 1, 1.5], mode="linear", dtype=TensorProto.UINT8)
    (_, ir), = parse_model(model)
    graph = gs.import_onnx(model)
    x, y = graph.inputs[0], graph.outputs[0]
    with pytest.raises(BridgeError) as e:
        decompose_resize(graph, ir, x, y, (1, 1, 3, 4), "r", compute={"float32": "float32"})
    assert e.value.field == "dtype"


@pytest.mark.parametrize("n,innermost", [(4, True), (8, True), (13, True), (130, True), (300, True), (13, False)])
def test_sum_order_is_numpys(n, innermost):
    a = np.random.default_rng(n).standard_normal((64, n) if innermost else (n, 3, 64)) * 1e3
    axis = 1 if innermost else 0
    terms = [np.take(a, k, axis=axis) for k in range(n)]

    def add(tree):
        return terms[tree] if isinstance(tree, int) else add(tree[0]) + add(tree[1])

    np.testing.assert_array_equal(add(sum_order(n, innermost)), a.sum(axis=axis))


def test_run_time_scales_are_not_called_a_refusal_of_onnxruntime():
    """Linear Resize whose scales are a graph input: onnxruntime runs it (N and C scales 1 at run time), so the
    ONNX target's rung 1 says what it cannot promise and what the user can do, not that onnxruntime refuses
    (issue 43: torchvision LRASPP with dynamic H/W read 'onnxruntime refuses linear resizing of axes [0, 1, 2, 3]')."""
    node = helper.make_node("Resize", ["X", "", "scales"], ["Y"], name="r", mode="linear")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 5, 5]),
                                        helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    x = np.ones((1, 1, 5, 5), np.float32)
    ran = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"X": x, "scales": np.array([1, 1, 2, 2], np.float32)})[0]
    assert ran.shape == (1, 1, 10, 10)  # onnxruntime does run it
    with pytest.raises(BridgeError) as e:
        convert(model)
    assert "onnxruntime refuses" not in e.value.message and "--input" in e.value.message
