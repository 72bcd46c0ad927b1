"""The user's own index arithmetic in what ``convert`` writes (``lowering/openvino/index_arithmetic.py``): a Divide
computed as IEEE division (``exact_division``), the cone kept in f32 under the bf16 default, Converts truncating;
our own forms and data-driven indices left as they were. Against numpy's IEEE float32 division and onnxruntime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
ort = pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from resample_bridge.lowering.openvino.exact_division import exact_quotient  # noqa: E402
from resample_bridge.lowering.openvino.index_arithmetic import INDEX_KEY  # noqa: E402
from resample_bridge.tools.cli import main  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "models"
NEAREST_EXACT = MODELS / "dy18_dynhw_nearest_exact_conv_x1_5"  # the dynamo export: no Resize node, then a Conv
# Image shapes where OpenVINO's own Divide moves a column (60 x 90, 61 x 91, 333 x 517), where a bf16 index
# arithmetic moved the output's values or its shape (224 x 224, 333 x 517), and a few others
SHAPES = [(60, 90), (61, 91), (224, 224), (333, 517), (7, 9), (2, 2), (100, 135)]


def _quotient_cases():
    """Float32 (a, b): random magnitudes and signs, lengths over scaled lengths, integers up to 2^24, quotients
    next to a power of two (the ulp below is half), zeros, infinities, NaNs, huge and tiny."""
    rng = np.random.default_rng(20261202)
    n = 20000
    a, b = [rng.random(n) * 200], [rng.random(n) * 200 + 1]
    lengths = np.arange(1, 4001, dtype=np.float32)
    for s in (1.5, 0.41, 0.6, 2 / 3, 1 / 3, 1.7):
        a.append(lengths), b.append((lengths * np.float32(s)).astype(np.float32))
    a.append(rng.integers(1, 1 << 24, n)), b.append(rng.integers(1, 1 << 24, n))
    d = rng.random(n) + 0.5
    for t in (-2.0 ** -24, -2.0 ** -25, 2.0 ** -25, -3 * 2.0 ** -26, 0):
        a.append(d * 2.0 ** rng.integers(-20, 20, n) * (1 + t)), b.append(d)
    a.append(rng.standard_normal(n) * np.exp2(rng.integers(-60, 60, n)))
    b.append(rng.standard_normal(n) * np.exp2(rng.integers(-60, 60, n)))
    a.append([0, -0.0, 1, np.inf, np.nan, 1, -1, 5, 1e30, 1e-30, 3, 3e38, 1e-44])
    b.append([1, 3, 0, 2, 1, np.inf, -0.0, np.nan, 1e-30, 1e30, 3, 0.5, 3])
    return (np.concatenate([np.asarray(v, np.float64) for v in a]).astype(np.float32),
            np.concatenate([np.asarray(v, np.float64) for v in b]).astype(np.float32))


@pytest.mark.parametrize("hint", ["f32", "bf16"])
def test_the_exact_quotient_is_ieee_division(hint):
    """Bit for bit numpy's float32 a / b wherever a, b and a / b lie within 2^+-124 (the plugin's own quotient
    elsewhere), at either precision hint (the test's model is all tail: bf16 cannot reach it)."""
    import openvino.opset13 as o

    a, b = _quotient_cases()
    pa, pb = o.parameter([-1], np.float32), o.parameter([-1], np.float32)
    model = ov.Model([exact_quotient(pa.output(0), pb.output(0)), o.divide(pa, pb).output(0)], [pa, pb])
    got, plain = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})([a, b]).values()
    with np.errstate(all="ignore"):
        want = a / b
    same = (got.view(np.int32) == want.view(np.int32)) | (np.isnan(got) & np.isnan(want))
    inside = np.ones(a.shape, bool)
    for v, limit in ((a, 2.0 ** 125), (b, 2.0 ** 125), (want, 2.0 ** 124)):
        inside &= (np.abs(v) >= 1 / limit) & (np.abs(v) <= limit)
    assert same[inside].all(), list(zip(a[inside & ~same][:5], b[inside & ~same][:5]))
    assert inside.sum() > 0.9 * len(a)
    # what it corrects: OpenVINO's Divide, a * (1 / b), is off on a quarter of these (if this fails, OpenVINO's
    # Divide became IEEE division and the respelling can go)
    assert (plain.view(np.int32) != want.view(np.int32))[inside].mean() > 0.05


def test_a_half_precision_quotient_is_ieee_division():
    """f16 operands: divided in f32, rounded once more to f16, numpy's float16 quotient bit for bit."""
    import openvino.opset13 as o

    a, b = (v.astype(np.float16) for v in _quotient_cases())
    pa, pb = o.parameter([-1], np.float16), o.parameter([-1], np.float16)
    model = ov.Model([exact_quotient(pa.output(0), pb.output(0))], [pa, pb])
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([a, b])[0]
    with np.errstate(all="ignore"):
        want = a / b
    assert got.dtype == np.float16
    finite = np.isfinite(a) & np.isfinite(b) & (a != 0) & (b != 0) & np.isfinite(want) & (np.abs(want) > 1e-4)
    assert np.array_equal(got[finite].view(np.int16), want[finite].view(np.int16))


def _feeds(h, w):
    return {"x": np.random.default_rng(h * 1000 + w).standard_normal((1, 3, h, w)).astype(np.float32)}


@pytest.fixture(scope="module")
def nearest_exact(tmp_path_factory):
    """The corpus's dynamo nearest-exact export converted by default: (written xml, onnxruntime session)."""
    xml = tmp_path_factory.mktemp("index") / "m.xml"
    assert main(["convert", str(NEAREST_EXACT / "model.onnx"), "-o", str(xml)]) == 0
    return xml, ort.InferenceSession(str(NEAREST_EXACT / "model.onnx"), providers=["CPUExecutionProvider"])


def _off(got, want) -> float:
    """|got - want| at most, as a share of 1 + max |want| (inf where the shapes differ)."""
    if got.shape != want.shape:
        return float("inf")
    return float(np.abs(got.astype(np.float64) - want).max()) / (1 + float(np.abs(want).max()))


@pytest.mark.parametrize("hint, within", [("f32", 1e-5), ("bf16", 2.0 ** -6)])
def test_nearest_exact_by_dynamo_computes_onnxruntimes_numbers(nearest_exact, hint, within):
    """f32: onnxruntime's numbers at every shape; bf16 (this CPU's default, where it has bf16): the Conv's value
    rounding only (a moved column is O(1) off on these inputs; the index arithmetic in bf16 gave garbage at
    224 x 224 and another output shape at 333 x 517)."""
    xml, sess = nearest_exact
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": hint})
    assert INDEX_KEY in compiled.get_runtime_model().get_rt_info() or \
        INDEX_KEY in core.read_model(str(xml)).get_rt_info()
    for h, w in SHAPES:
        feeds = _feeds(h, w)
        want = sess.run(None, feeds)[0]
        assert _off(compiled(feeds)[0], want) <= within, (h, w)


def test_the_importer_moves_those_columns(nearest_exact):
    """The hazard the shapes above exercise: OpenVINO's own import of the same file differs from onnxruntime at
    f32 (a whole column: O(1) off)."""
    _, sess = nearest_exact
    compiled = ov.Core().compile_model(ov.convert_model(str(NEAREST_EXACT / "model.onnx")), "CPU",
                                       {"INFERENCE_PRECISION_HINT": "f32"})
    feeds = _feeds(60, 90)
    assert _off(compiled(feeds)[0], sess.run(None, feeds)[0]) > 0.05


def _gather_by_values():
    """Y = Gather(X, Cast(X * 3 / 7) mod 5) along axis 1: indices from the input's values, not its shape."""
    nodes = [helper.make_node("Mul", ["X", "three"], ["t"]), helper.make_node("Div", ["t", "seven"], ["q"]),
             helper.make_node("Cast", ["q"], ["i"], to=TensorProto.INT64),
             helper.make_node("Mod", ["i", "five"], ["j"]),
             helper.make_node("Gather", ["X", "j"], ["Y"], axis=1)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [helper.make_tensor("three", TensorProto.FLOAT, [], [3.0]),
         helper.make_tensor("seven", TensorProto.FLOAT, [], [7.0]),
         helper.make_tensor("five", TensorProto.INT64, [], [5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _resize_dynamic():
    """A Resize whose sizes come from the input's own shape in floats (floor(H * 1.5)): our form, not theirs."""
    shape = [helper.make_node("Shape", ["X"], ["s"]), helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["sf", "k"], ["m"]), helper.make_node("Floor", ["m"], ["f"]),
             helper.make_node("Cast", ["f"], ["sizes"], to=TensorProto.INT64),
             helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], mode="nearest")]
    graph = helper.make_graph(
        shape, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, "h", "w"])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [helper.make_tensor("k", TensorProto.FLOAT, [4], [1, 1, 1.5, 1.5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("build, touched", [(_gather_by_values, False), (_resize_dynamic, True)])
def test_only_index_arithmetic_on_shapes_is_respelled(tmp_path, build, touched):
    """Indices from the input's values stay as the user wrote them (their values are the network's; the cost
    would scale with the data); the Resize's sizes computed from its input's shape are index arithmetic of the
    user's (respelled), the Resize itself our form (stamped: left as proven). Both still compute onnxruntime's
    numbers."""
    src, xml = tmp_path / "m.onnx", tmp_path / "m.xml"
    onnx.save(build(), src)
    assert main(["convert", str(src), "-o", str(xml)]) == 0
    model = ov.Core().read_model(str(xml))
    assert (INDEX_KEY in model.get_rt_info()) is touched
    if touched:  # the floor is a Floor and a Convert, no Divide: nothing to make exact, the cone pinned
        assert str(model.get_rt_info()[INDEX_KEY].astype(str)).startswith("0 divisions")
    x = np.random.default_rng(3).standard_normal((2, 5) if not touched else (1, 1, 7, 9)).astype(np.float32)
    want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, {"X": x})[0]
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    assert got.shape == want.shape and np.array_equal(got, want)


def test_a_constant_divisor_picks_onnxruntimes_columns_at_every_width(tmp_path):
    """Gather(X, Cast(Range(0, W) / 1.7)): OpenVINO's Divide reads column 9 for i = 17 (17 * (1 / 1.7) is
    9.9999999); converted, every width 1 .. 300 reads onnxruntime's columns, at f32 and at bf16 (a Gather of
    integers-valued floats: bit-equal at either)."""
    from tests.tools.test_check_index import _halved

    src, xml = tmp_path / "m.onnx", tmp_path / "m.xml"
    onnx.save(_halved(1.7), src)
    assert main(["convert", str(src), "-o", str(xml)]) == 0
    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    core = ov.Core()
    for hint in ("f32", "bf16"):
        compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for w in range(1, 301):
            x = np.arange(2 * w, dtype=np.float32).reshape(2, w) % 97  # integers bf16 holds exactly
            assert np.array_equal(compiled([x])[0], sess.run(None, {"X": x})[0]), (hint, w)


@pytest.mark.parametrize("divisor", [2.0, 8.0])
def test_a_power_of_two_divisor_stays_openvinos_divide(tmp_path, divisor):
    """A / 2^k: OpenVINO's a * (1 / b) is then one rounding of the exact quotient, IEEE division itself, so the
    Divide is not respelled (kornia's pyramid divides lengths by 2: 4 exact quotients were 1,300 ops run on every
    inference); the note counts no division, the cone is still pinned, and every width reads onnxruntime's columns
    at f32 and bf16. 1.7 beside it is respelled (``test_a_constant_divisor_...``)."""
    from tests.tools.test_check_index import _halved

    src, xml = tmp_path / "m.onnx", tmp_path / "m.xml"
    onnx.save(_halved(divisor), src)
    assert main(["convert", str(src), "-o", str(xml)]) == 0
    model = ov.Core().read_model(str(xml))
    note = str(model.get_rt_info()[INDEX_KEY].astype(str))
    assert note.startswith("0 divisions") and not note.startswith("0 divisions correctly rounded, 0 "), note
    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    for hint in ("f32", "bf16"):
        compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for w in range(1, 130):
            x = np.arange(2 * w, dtype=np.float32).reshape(2, w) % 97
            assert np.array_equal(compiled([x])[0], sess.run(None, {"X": x})[0]), (hint, w)


def test_a_division_over_a_grid_is_left_as_openvino_computes_it(tmp_path):
    """The same Div over a [1, W] tensor (rank 2: positions of a grid, whose ~260 ops per element would cost as
    much as the image) is not respelled: the note counts no division, the cone is still pinned."""
    from tests.tools.test_check_index import _halved

    model = _halved(1.7)
    r = next(n for n in model.graph.node if n.op_type == "Range")
    unsqueeze = helper.make_node("Unsqueeze", ["r_flat", "axis0"], ["r"])
    r.output[0] = "r_flat"
    model.graph.node.insert(list(model.graph.node).index(r) + 1, unsqueeze)
    model.graph.initializer.append(helper.make_tensor("axis0", TensorProto.INT64, [1], [0]))
    src, xml = tmp_path / "m.onnx", tmp_path / "m.xml"
    onnx.save(model, src)
    assert main(["convert", str(src), "-o", str(xml)]) == 0
    note = str(ov.Core().read_model(str(xml)).get_rt_info()[INDEX_KEY].astype(str))
    assert note.startswith("0 divisions"), note


def test_two_casts_of_one_quotient_are_both_respelled(tmp_path):
    """Two integer Casts read one Div (Cast(q) and Cast(q * 0.5)): the first's cone respells the Div into the
    exact quotient, whose ops are then pinned; the second's cone reaches them and must still read as computed from
    shapes (pinned by this pass, not a form of ours). Both Casts truncate (a Select of Ceiling / Floor before
    each)."""
    from tests.tools.test_check_index import _halved

    model = _halved(1.7)
    g = model.graph
    g.node.extend([helper.make_node("Mul", ["q", "half"], ["q2"]),
                   helper.make_node("Cast", ["q2"], ["i2"], to=TensorProto.INT64),
                   helper.make_node("Gather", ["X", "i2"], ["Y2"], axis=1)])
    g.initializer.append(helper.make_tensor("half", TensorProto.FLOAT, [], [0.5]))
    g.output.append(helper.make_tensor_value_info("Y2", TensorProto.FLOAT, None))
    src, xml = tmp_path / "m.onnx", tmp_path / "m.xml"
    onnx.save(model, src)
    assert main(["convert", str(src), "-o", str(xml)]) == 0
    casts = [op for op in ov.Core().read_model(str(xml)).get_ops() if op.get_type_name() == "Convert"
             and op.input_value(0).get_element_type().is_real() and op.get_friendly_name() in ("i", "i2")]
    assert sorted(c.get_friendly_name() for c in casts) == ["i", "i2"]
    assert all(c.input_value(0).get_node().get_type_name() == "Select" for c in casts), \
        [(c.get_friendly_name(), c.input_value(0).get_node().get_type_name()) for c in casts]


def _casts_to_integers(model) -> list:
    """The written model's float-to-integer Converts (the index arithmetic's roots)."""
    return [op for op in model.get_ops() if op.get_type_name() == "Convert"
            and op.input_value(0).get_element_type().is_real() and not op.get_element_type().is_real()]


RCNN = MODELS / "ts16_tv_rcnn_transform_dynhw"  # torchvision's detection transform: 1 / min(H, W), Floors, a Conv


def test_a_reciprocal_stays_openvinos_and_an_integer_is_not_truncated(tmp_path):
    """torchvision's GeneralizedRCNNTransform scales by min(s / min(H, W), m / max(H, W)), exported as Reciprocal
    and Mul: OpenVINO's 1 / b is IEEE's, so no division is respelled (two exact quotients were 140 ops run on every
    inference); its Casts read Floors and maxima of lengths, integers already, so none is truncated first (a Select
    of Ceiling / Floor each). The numbers stay onnxruntime's at f32 and, the cone tied to the graph's tail, at the
    bf16 default too (the Conv's value rounding only; a moved length is another shape), at shapes where 1 / b
    rounds up or down."""
    xml = tmp_path / "m.xml"
    assert main(["convert", str(RCNN / "model.onnx"), "-o", str(xml)]) == 0
    core = ov.Core()
    model = core.read_model(str(xml))
    assert str(model.get_rt_info()[INDEX_KEY].astype(str)).startswith("0 divisions")
    roots = _casts_to_integers(model)
    assert roots and not any(r.input_value(0).get_node().get_type_name() == "Select" for r in roots)
    sess = ort.InferenceSession(str(RCNN / "model.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(11)
    shapes = [(int(h), int(w)) for h, w in rng.integers(33, 260, (24, 2))] + [(105, 150), (64, 64), (97, 300)]
    for hint, within in (("f32", 1e-5), ("bf16", 2.0 ** -6)):
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for h, w in shapes:
            feeds = {"image": rng.random((1, 3, h, w), dtype=np.float32)}
            assert _off(compiled(feeds)[0], sess.run(None, feeds)[0]) <= within, (hint, h, w)


def test_a_nonnegative_length_is_truncated_by_a_floor(tmp_path):
    """kornia's rescale(0.5) by dynamo: Cast(H * 0.5) to int64. H * 0.5 is nonnegative (a shape scaled), so the
    truncation OpenVINO 2023.3 needs (it rounded to nearest) is a Floor alone, not a Select of Ceiling / Floor;
    the output is onnxruntime's at odd and even lengths (x.5 truncates), at f32 and at the bf16 default."""
    src = MODELS / "dy18_kornia_rescale_half_dynhw" / "model.onnx"
    xml = tmp_path / "m.xml"
    assert main(["convert", str(src), "-o", str(xml)]) == 0
    core = ov.Core()
    model = core.read_model(str(xml))
    roots = _casts_to_integers(model)
    assert roots and all(r.input_value(0).get_node().get_type_name() == "Floor" for r in roots)
    sess = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(4)
    for hint, within in (("f32", 1e-5), ("bf16", 2.0 ** -6)):
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": hint})
        for h, w in ((9, 13), (10, 14), (33, 61), (333, 517), (2, 3)):
            feeds = {"x": rng.random((1, 3, h, w), dtype=np.float32)}
            assert _off(compiled(feeds)[0], sess.run(None, feeds)[0]) <= within, (hint, h, w)
