"""Every way exporters write a resampling node is found and parsed: If / Loop bodies, local functions, empty
constants for roi/scales in each spelling, nameless nodes. Each parse is checked against onnxruntime."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from resample_bridge.semantics.reference import run
from resample_bridge.translate.onnx import parse_model

X = helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 2, 3, 4])
Y = helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)


def _sizes(name="sz", v=(1, 2, 6, 8)):
    return numpy_helper.from_array(np.array(v, np.int64), name)


def _ort(model, feeds):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _x():
    return np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)


def _check_single(model, n=1, runnable=None):
    """``runnable``: an equivalent model onnxruntime accepts, where ``model``'s own spelling it refuses."""
    found = parse_model(model, convention="spec")
    assert len(found) == n
    x = _x()
    want = _ort(runnable or model, {"X": x})
    name, ir = [f for f in found if not f[0].endswith("inner2")][-1]
    sizes = np.array([1, 2, 6, 8], np.int64)
    np.testing.assert_allclose(run(ir, x, None, None, sizes), want, rtol=1e-5, atol=1e-6)
    return name


@pytest.mark.parametrize("spelling", ["initializer", "constant_value", "value_floats", "identity", "cast"])
def test_empty_roi_and_scales_mean_absent(spelling):
    """PyTorch at opsets 11-13 writes Resize(X, roi=<empty>, scales=<empty>, sizes)."""
    nodes, inits = [], [_sizes()]
    empty = np.zeros(0, np.float32)
    if spelling == "initializer":
        inits += [numpy_helper.from_array(empty, "roi"), numpy_helper.from_array(empty, "sc")]
    elif spelling == "constant_value":
        nodes += [helper.make_node("Constant", [], [n], value=numpy_helper.from_array(empty)) for n in ("roi", "sc")]
    elif spelling == "value_floats":
        for n in ("roi", "sc"):
            c = helper.make_node("Constant", [], [n])
            c.attribute.append(helper.make_attribute("value_floats", [], attr_type=onnx.AttributeProto.FLOATS))
            nodes.append(c)
    elif spelling == "identity":
        nodes += [helper.make_node("Constant", [], ["e"], value=numpy_helper.from_array(empty)),
                  helper.make_node("Identity", ["e"], ["roi"]), helper.make_node("Identity", ["e"], ["sc"])]
    else:
        nodes += [helper.make_node("Constant", [], ["e"], value=numpy_helper.from_array(empty.astype(np.float64))),
                  helper.make_node("Cast", ["e"], ["roi"], to=onnx.TensorProto.FLOAT),
                  helper.make_node("Cast", ["e"], ["sc"], to=onnx.TensorProto.FLOAT)]
    nodes.append(helper.make_node("Resize", ["X", "roi", "sc", "sz"], ["Y"], mode="linear"))
    m = helper.make_model(helper.make_graph(nodes, "g", [X], [Y], inits), opset_imports=[helper.make_opsetid("", 13)])
    # onnxruntime's shape inference refuses an empty scales it cannot see as a constant (the Identity spelling)
    plain = helper.make_model(helper.make_graph(
        [helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], mode="linear")], "g", [X], [Y], [_sizes()]),
        opset_imports=[helper.make_opsetid("", 13)])
    assert _check_single(m, runnable=plain) == "Resize_" + str(len(nodes) - 1)  # nameless: type and position


def _resize_body(out="y"):
    return [helper.make_node("Resize", ["X", "", "", "sz"], [out], mode="nearest", name="inner")]


def test_resize_inside_if_branch_is_found():
    then = helper.make_graph(_resize_body(), "then", [], [helper.make_tensor_value_info("y", 1, None)], [_sizes()])
    other = helper.make_graph([helper.make_node("Resize", ["X", "", "", "sz2"], ["z"], mode="nearest", name="inner2")],
                              "else", [], [helper.make_tensor_value_info("z", 1, None)], [_sizes("sz2")])
    cond = numpy_helper.from_array(np.array(True), "c")
    node = helper.make_node("If", ["c"], ["Y"], then_branch=then, else_branch=other, name="branch")
    m = helper.make_model(helper.make_graph([node], "g", [X], [Y], [cond]), opset_imports=[helper.make_opsetid("", 13)])
    names = sorted(n for n, _ in parse_model(m))
    assert names == ["branch/else_branch/inner2", "branch/then_branch/inner"]
    _check_single(m, n=2)


def test_resize_inside_loop_body_is_found():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"])] + _resize_body("scan_out"), "body",
        [helper.make_tensor_value_info("i", onnx.TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", onnx.TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", onnx.TensorProto.BOOL, []),
         helper.make_tensor_value_info("scan_out", 1, None)], [_sizes()])
    trip = numpy_helper.from_array(np.array(1, np.int64), "trip")
    cond = numpy_helper.from_array(np.array(True), "c")
    loop = helper.make_node("Loop", ["trip", "c"], ["Ys"], body=body, name="loop")
    sq = helper.make_node("Squeeze", ["Ys", "ax"], ["Y"])
    ax = numpy_helper.from_array(np.array([0], np.int64), "ax")
    m = helper.make_model(helper.make_graph([loop, sq], "g", [X], [Y], [trip, cond, ax]),
                          opset_imports=[helper.make_opsetid("", 13)])
    assert [n for n, _ in parse_model(m)] == ["loop/body/inner"]
    _check_single(m)


def test_resize_inside_local_function_is_found():
    fn = helper.make_function("local", "Up", ["a", "s"], ["b"],
                              [helper.make_node("Resize", ["a", "", "", "s"], ["b"], mode="nearest", name="inner")],
                              opset_imports=[helper.make_opsetid("", 13)])
    call = helper.make_node("Up", ["X", "sz"], ["Y"], domain="local", name="call")
    m = helper.make_model(helper.make_graph([call], "g", [X], [Y], [_sizes()]),
                          opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("local", 1)],
                          functions=[fn])
    (name, ir), = parse_model(m)
    assert "inner" in name and ir.input_shape == (1, 2, 3, 4)
    _check_single(m)


def test_sizes_from_shape_chain_fold_when_static():
    """F.interpolate(x, size=y.shape[-2:]) at opset 11-13: Shape -> Slice -> Concat -> sizes."""
    ref = helper.make_tensor_value_info("R", onnx.TensorProto.FLOAT, [1, 1, 6, 8])
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             (("st", [2]), ("en", [4]), ("nc", [1, 2]))]
    nodes = [helper.make_node("Shape", ["R"], ["rs"]), helper.make_node("Slice", ["rs", "st", "en"], ["hw"]),
             helper.make_node("Concat", ["nc", "hw"], ["sz"], axis=0),
             helper.make_node("Constant", [], ["e"], value=numpy_helper.from_array(np.zeros(0, np.float32))),
             helper.make_node("Resize", ["X", "e", "e", "sz"], ["Y"], mode="linear")]
    m = helper.make_model(helper.make_graph(nodes, "g", [X, ref], [Y], inits),
                          opset_imports=[helper.make_opsetid("", 13)])
    (_, ir), = parse_model(m)
    assert ir.sizes is not None and not hasattr(ir.sizes, "source")
    x = _x()
    want = _ort(m, {"X": x, "R": np.zeros((1, 1, 6, 8), np.float32)})
    np.testing.assert_allclose(run(ir, x, None, None, np.array([1, 2, 6, 8], np.int64)), want, rtol=1e-5, atol=1e-6)


def test_sizes_from_dynamic_shape_stay_runtime():
    ref = helper.make_tensor_value_info("R", onnx.TensorProto.FLOAT, [1, 1, "h", "w"])
    nodes = [helper.make_node("Shape", ["R"], ["sz"]),
             helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], mode="nearest")]
    m = helper.make_model(helper.make_graph(nodes, "g", [X, ref], [Y]), opset_imports=[helper.make_opsetid("", 13)])
    (_, ir), = parse_model(m)
    assert ir.sizes.source == "sz"


def test_sizes_with_dynamic_batch_keep_static_spatial_sizes():
    """Concat(Shape(X)[:2], [6, 8]) with a dynamic batch: N and C are X's own, H and W are constants."""
    xd = helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, ["batch", 2, 3, 4])
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             (("st", [0]), ("en", [2]), ("hw", [6, 8]))]
    nodes = [helper.make_node("Shape", ["X"], ["xs"]), helper.make_node("Slice", ["xs", "st", "en"], ["nc"]),
             helper.make_node("Concat", ["nc", "hw"], ["sz"], axis=0),
             helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], mode="nearest")]
    m = helper.make_model(helper.make_graph(nodes, "g", [xd], [Y], inits), opset_imports=[helper.make_opsetid("", 13)])
    (_, ir), = parse_model(m, convention="spec")
    assert ir.axes == (2, 3) and ir.sizes == (6, 8)
    (_, ref), = parse_model(m, convention="reference")
    assert hasattr(ref.sizes, "source")  # the reference maps N and C through the formula: left run-time
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 2, 3, 4)).astype(np.float32)
        np.testing.assert_array_equal(run(ir, x, None, None, np.array([batch, 2, 6, 8], np.int64)),
                                      _ort(m, {"X": x}))


# ----------------------------------------------------------------------------------------------------------
# The same forms as OpenVINO's frontend hands them to the parser (``lowering/openvino/frontend.py`` builds a
# NodeView from the node it converts): an empty constant arrives 0-d, an empty one through Cast as a run-time
# input of static shape () or (0,), a chain it does not fold as a run-time input.


def _frontend_view(consts, shapes, inputs=("input0:X", "", "input2:sc", "input3:sz")):
    from resample_bridge.translate.onnx import NodeView
    shapes = dict(shapes, **{"input0:X": (1, 2, 3, 4)})
    return NodeView("Resize", "r", {"mode": "linear"}, list(inputs), consts, shapes, {"input0:X": "float32"})


@pytest.mark.parametrize("empty", ["0-d constant", "run-time shape ()", "run-time shape (0,)"])
def test_empty_scales_as_openvinos_frontend_hands_it_over_is_absent(empty):
    from resample_bridge.translate.onnx import parse_view
    sz = {"input3:sz": np.array([1, 2, 6, 8], np.int64)}
    if empty == "0-d constant":
        view = _frontend_view({**sz, "input2:sc": np.zeros((), np.float32)}, {})
    else:
        view = _frontend_view(sz, {"input2:sc": () if empty.endswith("()") else (0,)})
    ir = parse_view(view, 13)
    assert ir.sizes == (6, 8) and ir.scales is None


def test_a_scalar_scales_in_the_model_itself_is_refused():
    """What lets a 0-d value from the frontend mean "empty": a real 0-d roi / scales / sizes (the spec wants
    1-D) is refused when the model is read, in every verb."""
    from resample_bridge.semantics.errors import BridgeError
    from resample_bridge.translate.onnx import load
    m = helper.make_model(helper.make_graph(
        [helper.make_node("Resize", ["X", "", "sc"], ["Y"], name="r")], "g", [X], [Y],
        [numpy_helper.from_array(np.array(2, np.float32), "sc")]), opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(Exception):
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"X": _x()})
    with pytest.raises(BridgeError) as e:
        load(m)
    assert (e.value.node, e.value.field) == ("r", "scales")


def test_model_constants_give_a_frontend_view_the_folded_sizes():
    """A Shape -> Slice -> Concat sizes chain (or a Constant value_ints) that OpenVINO's frontend passes as a
    run-time input takes the value the model fixes: ``NodeView.with_constants(model_constants(model))``."""
    from resample_bridge.semantics.ir import RuntimeValue
    from resample_bridge.translate.onnx import model_constants, parse_view
    nodes = [helper.make_node("Shape", ["X"], ["shp"]),
             helper.make_node("Constant", [], ["b"], value=numpy_helper.from_array(np.array([0], np.int64))),
             helper.make_node("Constant", [], ["e"], value=numpy_helper.from_array(np.array([2], np.int64))),
             helper.make_node("Slice", ["shp", "b", "e"], ["lead"]),
             helper.make_node("Constant", [], ["hw"], value=numpy_helper.from_array(np.array([6, 8], np.int64))),
             helper.make_node("Concat", ["lead", "hw"], ["sz"], axis=0),
             helper.make_node("Resize", ["X", "", "", "sz"], ["Y"], mode="linear")]
    m = helper.make_model(helper.make_graph(nodes, "g", [X], [Y]), opset_imports=[helper.make_opsetid("", 13)])
    view = _frontend_view({}, {"input3:sz": (4,)}, inputs=("input0:X", "", "", "input3:sz"))
    assert isinstance(parse_view(view, 13).sizes, RuntimeValue)
    ir = parse_view(view.with_constants(model_constants(m)), 13)
    assert ir.sizes == (6, 8)
    np.testing.assert_allclose(run(ir, _x(), None, None, None), _ort(m, {"X": _x()}), rtol=1e-5, atol=1e-6)


def test_input_shapes_in_trtexecs_spelling():
    """--input as trtexec spells shapes (images:1x3x320x320, several comma-separated), beside ovc's (issue 43)."""
    from resample_bridge.semantics.errors import BridgeError
    from resample_bridge.translate.onnx_shapes import parse_ovc_inputs

    assert parse_ovc_inputs("images:1x3x320x320") == {"images": [1, 3, 320, 320]}
    assert parse_ovc_inputs("a:1x3, b:2x8") == parse_ovc_inputs("a[1,3],b[2,8]")
    with pytest.raises(BridgeError) as e:
        parse_ovc_inputs("images:1x3x0")
    assert e.value.field == "input" and "'0'" in e.value.message


def test_input_shapes_in_polygraphys_spelling():
    """--input as Polygraphy spells an input shape (x:[1,3,128,128]) names the input x, not "x:"; a TensorFlow
    name that holds a colon keeps it (ovc's input_1:0[1,3])."""
    from resample_bridge.translate.onnx_shapes import parse_ovc_inputs

    assert parse_ovc_inputs("x:[1,3,128,128]") == {"x": [1, 3, 128, 128]}
    assert parse_ovc_inputs("a: [1,?], b:[2,8]") == parse_ovc_inputs("a[1,?],b[2,8]")
    assert parse_ovc_inputs("input_1:0[1,3]") == {"input_1:0": [1, 3]}


@pytest.mark.parametrize("op", ["Resize-10", "Upsample-9", "Resize-13", "Resize-19"])
def test_the_length_of_a_scale_is_onnxruntime_s_float32_product(op):
    """An export of size=(37, 53) on 48 x 64 writes the float32 scales 37/48 and 53/64 (opset 10 has no sizes):
    48 * 0.7708333f is 36.99999904 exactly, 37.0 in float32. The spec convention's output, shape and numbers,
    is onnxruntime's; the reference convention keeps onnx.reference's exact floor (36 rows). Scales below 1 for
    Resize, above for Upsample (its scales are at least 1): 0.7708333f and 48 -> 37, 1.4339623f and 53 -> 76."""
    kind, version = op.split("-")
    hw, s = ((48, 64), (37 / 48, 53 / 64)) if kind == "Resize" else ((53, 41), (76 / 53, 59 / 41))
    scales = np.array([1, 1, *s], np.float32)
    inputs = ["X", "s"] if version in ("9", "10") else ["X", "", "s"]
    node = helper.make_node(kind, inputs, ["Y"], mode="linear", name="r")
    x_info = helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [1, 2, *hw])
    model = helper.make_model(helper.make_graph([node], "g", [x_info], [Y], [numpy_helper.from_array(scales, "s")]),
                              opset_imports=[helper.make_opsetid("", int(version))], ir_version=8)
    x = np.random.default_rng(1).standard_normal((1, 2, *hw)).astype(np.float32)
    want = _ort(model, {"X": x})
    exact = [int(np.floor(float(L) * float(v))) for L, v in zip(hw, scales[2:])]
    assert list(want.shape[2:]) != exact  # the case: the float32 product rounds up to a whole length
    (_, ir), = parse_model(model, convention="spec")
    got = run(ir, x, None, scales, None)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    (_, ref), = parse_model(model, convention="reference")
    assert list(run(ref, x, None, scales, None).shape[2:]) == exact
